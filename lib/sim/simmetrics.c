/* simmetrics -- `sluice sim --metrics FILE`: a run in the operator's metric names (Prometheus
 * text), so a dashboard reads the simulator's numbers as it reads the cluster's. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/simmetrics.h"

#include "obs/families.h"
#include "obs/metrics.h"
#include "sched/sched.h"
#include "util/hmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Per instant the collector looks at the quota holders only (sched_cq_workloads stops at each
 * ClusterQueue's first pending workload) and at each ClusterQueue's status and usage, so a run
 * costs O(instants x (holders + ClusterQueues)) more, not O(instants x workloads):
 *
 *   a holder with a new admitted_at     -> one admission (its wait: admitted_at - queue time),
 *                                          its usage copied (flavor, resource, amount)
 *   a tracked holder no longer holding  -> usage x (now - admitted_at) into the resource-seconds
 *                                          counter, exactly (nano-units x ms)
 *   every ClusterQueue                  -> the end-of-run gauges, overwritten each instant
 *
 * Priority classes are not in the engine's view: admissions are kept as (key, cq, lq, wait) and
 * labelled from the record when written.
 */

typedef struct sm_hold_s {
    char *flavor, *resource; /* owned */
    qnano_t amount;
} hold_t;

typedef struct sm_track_s {
    char *key, *ns, *lq, *cq; /* owned */
    int64_t admitted_at;      /* the admission being held, -1 when not holding */
    hold_t *holds;            /* owned */
    size_t nholds, capholds;
    uint64_t seen; /* the instant it was last seen holding */
} track_t;

typedef struct adm_rec_s {
    char *key; /* owned */
    size_t cq; /* index into the names table */
    int64_t wait_ms;
} adm_rec_t;

typedef struct sm_fr_s {
    char *flavor, *resource; /* owned */
    qnano_t nominal, usage;
    bool has_bl, has_ll;
    qnano_t bl, ll;
} sm_fr_t;

typedef struct sm_gauges_s {
    char *cq, *cohort;
    bool active;
    size_t pending, reserving, admitted;
    struct sm_fr_s *frs; /* owned: copies (the engine's names die with it) */
    size_t nfrs;
} cq_gauges_t;

struct sim_metrics_s {
    util_hmap_t tracks; /* key -> track_t * (owned) */
    track_t **holding;  /* borrowed from tracks: those holding quota now */
    size_t nholding, capholding;
    adm_rec_t *adm; /* owned */
    size_t nadm, capadm;
    char **names; /* owned: ClusterQueue names of admissions */
    size_t nnames, capnames;
    util_hmap_t name_index;
    metrics_registry_t *reg;
    metrics_family_t *rsec;
    sched_attempts_t attempts;
    uint64_t instant;
    /* the end-of-run gauges: the last instant's */
    cq_gauges_t *g;
    size_t ng;
    bool oom;
};

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    size_t nc;
    void *q;

    if (need <= *cap)
        return true;
    nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    q = realloc(*p, nc * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

static void gauges_clear(sim_metrics_t *m)
{
    for (size_t i = 0; i < m->ng; i++) {
        free(m->g[i].cq);
        free(m->g[i].cohort);
        for (size_t k = 0; k < m->g[i].nfrs; k++) {
            free(m->g[i].frs[k].flavor);
            free(m->g[i].frs[k].resource);
        }
        free(m->g[i].frs);
    }
    free(m->g);
    m->g = NULL;
    m->ng = 0;
}

static void track_free(track_t *t)
{
    for (size_t i = 0; i < t->nholds; i++) {
        free(t->holds[i].flavor);
        free(t->holds[i].resource);
    }
    free(t->holds);
    free(t->key);
    free(t->ns);
    free(t->lq);
    free(t->cq);
    free(t);
}

sim_metrics_t *sim_metrics_new(void)
{
    sim_metrics_t *m = calloc(1, sizeof(*m));

    if (m == NULL)
        return NULL;
    util_hmap_init(&m->tracks, 0);
    util_hmap_init(&m->name_index, 0);
    m->reg = metrics_registry_new(0);
    if (m->reg == NULL || families_add(m->reg, FAM_RSECONDS, &m->rsec, NULL) != ERR_OK) {
        sim_metrics_free(m);
        return NULL;
    }
    return m;
}

void sim_metrics_free(sim_metrics_t *m)
{
    size_t pos = 0;
    void *v;

    if (m == NULL)
        return;
    while (util_hmap_next(&m->tracks, &pos, NULL, &v))
        track_free(v);
    util_hmap_fini(&m->tracks);
    free(m->holding);
    for (size_t i = 0; i < m->nadm; i++)
        free(m->adm[i].key);
    free(m->adm);
    for (size_t i = 0; i < m->nnames; i++)
        free(m->names[i]);
    free(m->names);
    util_hmap_fini(&m->name_index);
    gauges_clear(m);
    metrics_registry_free(m->reg);
    free(m);
}

/* ---- observation -------------------------------------------------------------------------- */

/* The resource-seconds of `t`'s current admission up to `now`; it no longer holds. */
static void release(sim_metrics_t *m, track_t *t, int64_t now)
{
    for (size_t i = 0; i < t->nholds && now > t->admitted_at; i++) {
        const char *const labels[] = {t->ns, t->lq, t->cq, t->holds[i].flavor,
                                      t->holds[i].resource};
        if (t->holds[i].amount > 0 &&
            metrics_counter_add_exact(m->rsec, labels,
                                      (metrics_exact_t)t->holds[i].amount *
                                          (metrics_exact_t)(now - t->admitted_at)) != ERR_OK)
            m->oom = true;
        free(t->holds[i].flavor);
        free(t->holds[i].resource);
    }
    t->nholds = 0;
    t->admitted_at = -1;
}

static size_t name_id(sim_metrics_t *m, const char *name)
{
    size_t i;

    if (util_hmap_get_index(&m->name_index, name, &i))
        return i;
    if (!grow((void **)&m->names, &m->capnames, m->nnames + 1, sizeof(*m->names)) ||
        (m->names[m->nnames] = strdup(name)) == NULL ||
        util_hmap_put_index(&m->name_index, name, m->nnames) != ERR_OK) {
        m->oom = true;
        return SIZE_MAX;
    }
    return m->nnames++;
}

/* A new admission of `info` into `t`: counted, its usage copied. */
static void admitted(sim_metrics_t *m, track_t *t, const sched_wl_info_t *info)
{
    const admission_t *a = info->admission;
    size_t cq = name_id(m, info->cluster_queue ? info->cluster_queue : "");

    if (cq != SIZE_MAX && grow((void **)&m->adm, &m->capadm, m->nadm + 1, sizeof(*m->adm)) &&
        (m->adm[m->nadm].key = strdup(info->key)) != NULL) {
        m->adm[m->nadm].cq = cq;
        m->adm[m->nadm].wait_ms =
            info->admitted_at > info->created ? info->admitted_at - info->created : 0;
        m->nadm++;
    } else {
        m->oom = true;
    }
    t->admitted_at = info->admitted_at;
    for (size_t p = 0; a != NULL && p < a->nassignments; p++) {
        const pod_set_assignment_t *psa = &a->assignments[p];
        for (size_t r = 0; r < psa->usage.len; r++) {
            const char *res = psa->usage.items[r].name, *flavor = "";
            hold_t *h;
            for (size_t k = 0; k < psa->flavors.len; k++)
                if (strcmp(psa->flavors.items[k].key, res) == 0)
                    flavor = psa->flavors.items[k].value;
            if (!grow((void **)&t->holds, &t->capholds, t->nholds + 1, sizeof(*h))) {
                m->oom = true;
                return;
            }
            h = &t->holds[t->nholds];
            h->flavor = strdup(flavor);
            h->resource = strdup(res);
            h->amount = psa->usage.items[r].value.nano;
            if (h->flavor == NULL || h->resource == NULL) {
                free(h->flavor);
                free(h->resource);
                m->oom = true;
                return;
            }
            t->nholds++;
        }
    }
}

typedef struct sm_walk_s {
    sim_metrics_t *m;
    int64_t now;
} walk_t;

static track_t *track_of(sim_metrics_t *m, const sched_wl_info_t *info)
{
    track_t *t = util_hmap_get(&m->tracks, info->key);
    const char *slash;

    if (t != NULL)
        return t;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    slash = strchr(info->key, '/');
    t->key = strdup(info->key);
    t->ns = slash ? strndup(info->key, (size_t)(slash - info->key)) : strdup("");
    t->lq = strdup(info->local_queue ? info->local_queue : "");
    t->cq = strdup(info->cluster_queue ? info->cluster_queue : "");
    t->admitted_at = -1;
    if (t->key == NULL || t->ns == NULL || t->lq == NULL || t->cq == NULL ||
        util_hmap_put(&m->tracks, info->key, t, NULL) != ERR_OK) {
        track_free(t);
        return NULL;
    }
    return t;
}

static bool on_holder(const sched_wl_info_t *info, void *ud)
{
    walk_t *w = ud;
    sim_metrics_t *m = w->m;
    track_t *t;

    if (info->state != SCHED_WL_ADMITTED && info->state != SCHED_WL_EVICTING)
        return false; /* the holders come first: the rest is pending */
    t = track_of(m, info);
    if (t == NULL) {
        m->oom = true;
        return true;
    }
    if (t->admitted_at != info->admitted_at) {
        if (t->admitted_at >= 0)
            release(m, t, w->now); /* evicted and admitted again within one instant */
        else if (!grow((void **)&m->holding, &m->capholding, m->nholding + 1, sizeof(*m->holding)))
            m->oom = true;
        else
            m->holding[m->nholding++] = t;
        free(t->cq);
        t->cq = strdup(info->cluster_queue ? info->cluster_queue : "");
        if (t->cq == NULL)
            m->oom = true;
        admitted(m, t, info);
    }
    t->seen = m->instant;
    return true;
}

void sim_metrics_on_instant(void *ud, sim_ms_t now, const struct sched_s *s)
{
    sim_metrics_t *m = ud;
    const char *stack[64], **names = stack;
    size_t n, keep = 0;
    walk_t w = {m, (int64_t)now};

    m->instant++;
    sched_attempts(s, &m->attempts);
    n = sched_cq_names(s, stack, 64);
    if (n > 64) {
        names = malloc(n * sizeof(*names));
        if (names == NULL) {
            m->oom = true;
            return;
        }
        sched_cq_names(s, names, n);
    }
    for (size_t i = 0; i < n; i++)
        sched_cq_workloads(s, names[i], on_holder, &w, NULL);
    /* whoever held quota and was not seen holding now has released it now */
    for (size_t i = 0; i < m->nholding; i++) {
        track_t *t = m->holding[i];
        if (t->seen == m->instant && t->admitted_at >= 0)
            m->holding[keep++] = t;
        else
            release(m, t, (int64_t)now);
    }
    m->nholding = keep;
    /* the gauges of the end of the run: this instant's, until a later one */
    gauges_clear(m);
    m->g = calloc(n ? n : 1, sizeof(*m->g));
    if (m->g == NULL)
        m->oom = true;
    for (size_t i = 0; m->g != NULL && i < n; i++) {
        sched_cq_status_t st;
        sched_usage_list_t u = {0};
        cq_gauges_t *g = &m->g[m->ng];
        if (sched_cq_status(s, names[i], &st, NULL) != ERR_OK)
            continue;
        g->cq = strdup(names[i]);
        g->cohort = strdup(st.cohort ? st.cohort : "");
        g->active = st.active;
        g->pending = st.pending;
        g->reserving = st.reserving;
        g->admitted = st.admitted;
        m->ng++;
        if (g->cq == NULL || g->cohort == NULL || sched_cq_usage(s, names[i], &u, NULL) != ERR_OK) {
            m->oom = true;
            continue;
        }
        g->frs = calloc(u.len ? u.len : 1, sizeof(*g->frs));
        for (size_t k = 0; g->frs != NULL && k < u.len; k++) {
            sm_fr_t *f = &g->frs[g->nfrs++];
            f->flavor = strdup(u.items[k].flavor);
            f->resource = strdup(u.items[k].resource);
            f->nominal = u.items[k].nominal.nano;
            f->usage = u.items[k].usage.nano;
            f->has_bl = u.items[k].has_borrowing_limit;
            f->bl = u.items[k].borrowing_limit.nano;
            f->has_ll = u.items[k].has_lending_limit;
            f->ll = u.items[k].lending_limit.nano;
            if (f->flavor == NULL || f->resource == NULL)
                m->oom = true;
        }
        if (g->frs == NULL)
            m->oom = true;
        sched_usage_list_fini(&u);
    }
    if (names != stack)
        free(names);
}

/* ---- exposition --------------------------------------------------------------------------- */

static double qty(qnano_t q)
{
    return (double)q / 1e9;
}

/* Registers family `id` (lib/obs/families.h: the operator's declaration); NULL on failure (then
 * the write fails with ERR_NOMEM). */
static metrics_family_t *family(sim_metrics_t *m, families_id_t id)
{
    metrics_family_t *f = NULL;

    if (families_add(m->reg, id, &f, NULL) != ERR_OK)
        m->oom = true;
    return f;
}

static void add(sim_metrics_t *m, metrics_family_t *f, const char *const *v, double d)
{
    if (f != NULL && metrics_counter_add(f, v, d) != ERR_OK)
        m->oom = true;
}

static void set(sim_metrics_t *m, metrics_family_t *f, const char *const *v, double d)
{
    if (f != NULL && metrics_gauge_set(f, v, d) != ERR_OK)
        m->oom = true;
}

static void observe(sim_metrics_t *m, metrics_family_t *f, const char *const *v, double d)
{
    if (f != NULL && metrics_histogram_observe(f, v, d) != ERR_OK)
        m->oom = true;
}

err_t sim_metrics_write(sim_metrics_t *m, const sim_rec_t *rec, FILE *out, err_msg_t *msg)
{
    static const char *const statuses[] = {"pending", "active", "terminating"};
    const char *r = "standalone";
    metrics_buf_t b = {0};
    metrics_family_t *att, *qr, *adm, *qrw, *admw, *lqadm, *ev, *pre, *pend, *resv, *admact, *cqst,
        *cqres, *cqusage, *cqnom, *cqbl, *cqll, *idle;
    err_t rc = ERR_OK;

    /* The operator's families (lib/obs/families.h), in the order this output has always had. */
    att = family(m, FAM_ATTEMPTS);
    qr = family(m, FAM_QR_TOTAL);
    adm = family(m, FAM_ADM_TOTAL);
    qrw = family(m, FAM_QR_WAIT);
    admw = family(m, FAM_ADM_WAIT);
    ev = family(m, FAM_EVICTED);
    pre = family(m, FAM_PREEMPTED);
    lqadm = family(m, FAM_LQ_ADM_TOTAL);
    pend = family(m, FAM_PENDING);
    resv = family(m, FAM_RESERVING);
    admact = family(m, FAM_ADMITTED_ACTIVE);
    cqst = family(m, FAM_CQ_STATUS);
    cqres = family(m, FAM_CQ_RESV);
    cqusage = family(m, FAM_CQ_USAGE);
    cqnom = family(m, FAM_CQ_NOMINAL);
    cqbl = family(m, FAM_CQ_BORROW);
    cqll = family(m, FAM_CQ_LEND);
    idle = family(m, FAM_IDLE);

    add(m, att, (const char *const[]){"success", r}, (double)m->attempts.admitted);
    add(m, att, (const char *const[]){"inadmissible", r},
        (double)(m->attempts.tried - m->attempts.admitted));
    for (size_t i = 0; i < m->nadm; i++) {
        size_t wi = sim_rec_wl_find(rec, m->adm[i].key);
        const sim_wl_rec_t *w = wi != SIM_NONE ? &rec->wls[wi] : NULL;
        const char *pc = w && w->priority_class ? w->priority_class : "";
        const char *cq = m->names[m->adm[i].cq];
        const track_t *t = util_hmap_get(&m->tracks, m->adm[i].key);
        double wait = (double)m->adm[i].wait_ms / 1000.0;
        add(m, qr, (const char *const[]){cq, pc, r}, 1);
        add(m, adm, (const char *const[]){cq, pc, r}, 1);
        observe(m, qrw, (const char *const[]){cq, pc, r}, wait);
        observe(m, admw, (const char *const[]){cq, pc, r}, wait);
        if (t != NULL)
            add(m, lqadm, (const char *const[]){t->lq, t->ns, pc, r}, 1);
    }
    for (size_t i = 0; i < rec->npreemptions; i++) {
        const sim_preemption_t *p = &rec->preemptions[i];
        const sim_wl_rec_t *v = &rec->wls[p->victim];
        const char *by = p->preemptor != SIM_NONE && rec->wls[p->preemptor].cq != SIM_NONE
                             ? rec->holders[rec->wls[p->preemptor].cq].name
                             : "";
        add(m, ev,
            (const char *const[]){p->cq != SIM_NONE ? rec->holders[p->cq].name : "", "Preempted",
                                  "", v->priority_class ? v->priority_class : "", r},
            1);
        add(m, pre, (const char *const[]){by, p->reason ? p->reason : "", r}, 1);
    }
    /* still holding at the end: their resource-seconds up to the end of the run */
    for (size_t i = 0; i < m->nholding; i++)
        release(m, m->holding[i], (int64_t)rec->end);
    m->nholding = 0;
    for (size_t i = 0; i < m->ng; i++) {
        const cq_gauges_t *g = &m->g[i];
        set(m, pend, (const char *const[]){g->cq, "active", r}, 0);
        /* at the end of an instant every pending workload has been tried */
        set(m, pend, (const char *const[]){g->cq, "inadmissible", r}, (double)g->pending);
        set(m, resv, (const char *const[]){g->cq, r}, (double)g->reserving);
        set(m, admact, (const char *const[]){g->cq, r}, (double)g->admitted);
        for (size_t k = 0; k < 3; k++)
            set(m, cqst, (const char *const[]){g->cq, statuses[k], r},
                strcmp(statuses[k], g->active ? "active" : "pending") == 0);
        for (size_t k = 0; k < g->nfrs; k++) {
            const sm_fr_t *u = &g->frs[k];
            const char *const fr[] = {g->cohort, g->cq, u->flavor, u->resource, r};
            const char *const fr3[] = {g->cq, u->flavor, u->resource};
            double nominal = qty(u->nominal), used = qty(u->usage);
            set(m, cqres, fr, used);
            set(m, cqusage, fr, used);
            set(m, cqnom, fr, nominal);
            set(m, cqbl, fr, u->has_bl ? qty(u->bl) : INFINITY);
            set(m, cqll, fr, u->has_ll ? qty(u->ll) : INFINITY);
            set(m, idle, fr3, nominal > used ? nominal - used : 0);
        }
    }
    if (m->oom || metrics_render(m->reg, &b) != ERR_OK)
        rc = err_set(msg, ERR_NOMEM, "--metrics: out of memory");
    else if (fwrite(b.data, 1, b.len, out) != b.len)
        rc = err_set(msg, ERR_IO, "--metrics: write failed");
    metrics_buf_fini(&b);
    return rc;
}
