/* record -- what happened during a run: per-workload, per-queue and per-flavor timelines. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/record.h"
#include "model/requests.h"

#include "util/grow.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * Integrals are kept lazily: each (flavor, resource) entry remembers up to which instant its
 * integrals are complete (`since`) and is brought forward only when one of its values changes,
 * or at the end. A run touches O(changes) entries, never all of them per instant.
 */

static err_t series_push(sim_series_t *s, sim_ms_t t, qnano_t v)
{
    if (s->len > 0 && s->t[s->len - 1] == t) {
        s->v[s->len - 1] = v;
        return ERR_OK;
    }
    if (s->len > 0 && s->v[s->len - 1] == v)
        return ERR_OK;
    if (s->len == s->cap) {
        /* Two arrays, one capacity: s->cap moves only once both have grown. */
        size_t tcap = s->cap, vcap = s->cap;
        if (util_grow((void **)&s->t, &tcap, s->len + 1, sizeof(*s->t)) != ERR_OK ||
            util_grow((void **)&s->v, &vcap, s->len + 1, sizeof(*s->v)) != ERR_OK)
            return ERR_NOMEM;
        s->cap = tcap;
    }
    s->t[s->len] = t;
    s->v[s->len] = v;
    s->len++;
    return ERR_OK;
}

static void series_fini(sim_series_t *s)
{
    free(s->t);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

qnano_t sim_series_at(const sim_series_t *s, sim_ms_t t)
{
    size_t lo = 0, hi = s->len;

    /* Last point with time <= t. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->t[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : s->v[lo - 1];
}

/* ---- lifetime ------------------------------------------------------------------------------ */

void sim_rec_init(sim_rec_t *r)
{
    memset(r, 0, sizeof(*r));
    util_hmap_init(&r->wl_index, 0);
    util_hmap_init(&r->holder_index, 0);
    util_hmap_init(&r->gfr_index, 0);
    util_hmap_init(&r->reason_index, 0);
    r->end = -1;
}

void sim_rec_fini(sim_rec_t *r)
{
    if (r == NULL)
        return;
    free(r->graph_svg);
    for (size_t i = 0; i < r->nwls; i++) {
        free(r->wls[i].name);
        free(r->wls[i].ns);
        free(r->wls[i].priority_class);
        free(r->wls[i].holds);
        free(r->wls[i].lq);
    }
    free(r->wls);
    for (size_t i = 0; i < r->nholders; i++) {
        sim_holder_t *h = &r->holders[i];
        for (size_t k = 0; k < h->nfrs; k++) {
            free(h->frs[k].flavor);
            free(h->frs[k].resource);
            series_fini(&h->frs[k].usage_series);
            series_fini(&h->frs[k].nominal_series);
        }
        free(h->frs);
        free(h->name);
        free(h->cohort);
        series_fini(&h->pending_series);
    }
    free(r->holders);
    for (size_t i = 0; i < r->ngfrs; i++) {
        free(r->gfrs[i].flavor);
        free(r->gfrs[i].resource);
        series_fini(&r->gfrs[i].usage_series);
        series_fini(&r->gfrs[i].nominal_series);
    }
    free(r->gfrs);
    free(r->preemptions);
    for (size_t i = 0; i < r->nreasons; i++) {
        free(r->reasons[i].text);
        free(r->reasons[i].example);
    }
    free(r->reasons);
    free(r->spans);
    util_hmap_fini(&r->wl_index);
    util_hmap_fini(&r->holder_index);
    util_hmap_fini(&r->gfr_index);
    util_hmap_fini(&r->reason_index);
    memset(r, 0, sizeof(*r));
    r->end = -1;
}

/* ---- holders and (flavor, resource) entries -------------------------------------------------- */

err_t sim_rec_holder(sim_rec_t *r, const char *name, bool is_cohort, size_t *out)
{
    size_t len = strlen(name), idx;
    char *key = malloc(len + 8);

    if (key == NULL)
        goto oom;
    memcpy(key, is_cohort ? "cohort/" : "cq/", is_cohort ? 7 : 3);
    memcpy(key + (is_cohort ? 7 : 3), name, len + 1);
    if (util_hmap_get_index(&r->holder_index, key, &idx)) {
        free(key);
        *out = idx;
        return ERR_OK;
    }
    if (util_grow((void **)&r->holders, &r->capholders, r->nholders + 1, sizeof(sim_holder_t)) !=
        ERR_OK)
        goto oom;
    sim_holder_t *h = &r->holders[r->nholders];
    memset(h, 0, sizeof(*h));
    h->name = strdup(name);
    h->is_cohort = is_cohort;
    h->weight = 1000000000;
    if (h->name == NULL || util_hmap_put_index(&r->holder_index, key, r->nholders) != ERR_OK) {
        free(h->name);
        goto oom;
    }
    free(key);
    *out = r->nholders++;
    return ERR_OK;
oom:
    free(key);
    return ERR_NOMEM;
}

err_t sim_rec_holder_cohort(sim_rec_t *r, size_t h, const char *cohort)
{
    sim_holder_t *hd = &r->holders[h];
    char *dup = NULL;

    if (cohort != NULL && cohort[0] != '\0' && (dup = strdup(cohort)) == NULL)
        return ERR_NOMEM;
    free(hd->cohort);
    hd->cohort = dup;
    return ERR_OK;
}

static void fr_advance(sim_fr_rec_t *fr, sim_ms_t t)
{
    sim_ms_t dt = t - fr->since;
    if (dt > 0) {
        fr->usage_int += (sim_wide_t)fr->usage * dt;
        fr->nominal_int += (sim_wide_t)fr->nominal * dt;
        if (fr->usage > fr->nominal)
            fr->borrowed_int += (sim_wide_t)(fr->usage - fr->nominal) * dt;
    }
    if (t > fr->since)
        fr->since = t;
}

static void gfr_advance(sim_gfr_t *g, sim_ms_t t)
{
    sim_ms_t dt = t - g->since;
    if (dt > 0) {
        g->usage_int += (sim_wide_t)g->usage * dt;
        g->nominal_int += (sim_wide_t)g->nominal * dt;
    }
    if (t > g->since)
        g->since = t;
}

static err_t gfr_get(sim_rec_t *r, const char *flavor, const char *resource, sim_ms_t t,
                     size_t *out)
{
    size_t fl = strlen(flavor), rl = strlen(resource), idx;
    char *key = malloc(fl + rl + 2);

    if (key == NULL)
        goto oom;
    memcpy(key, flavor, fl);
    key[fl] = '\x1f';
    memcpy(key + fl + 1, resource, rl + 1);
    if (util_hmap_get_index(&r->gfr_index, key, &idx)) {
        free(key);
        *out = idx;
        return ERR_OK;
    }
    if (util_grow((void **)&r->gfrs, &r->capgfrs, r->ngfrs + 1, sizeof(sim_gfr_t)) != ERR_OK)
        goto oom;
    sim_gfr_t *g = &r->gfrs[r->ngfrs];
    memset(g, 0, sizeof(*g));
    g->flavor = strdup(flavor);
    g->resource = strdup(resource);
    g->since = t;
    if (g->flavor == NULL || g->resource == NULL ||
        util_hmap_put_index(&r->gfr_index, key, r->ngfrs) != ERR_OK) {
        free(g->flavor);
        free(g->resource);
        goto oom;
    }
    free(key);
    *out = r->ngfrs++;
    return ERR_OK;
oom:
    free(key);
    return ERR_NOMEM;
}

/* The index of holder `hi`'s entry for (flavor, resource), created on first use, into *out. */
static err_t fr_get(sim_rec_t *r, size_t hi, const char *flavor, const char *resource, sim_ms_t t,
                    size_t *out)
{
    sim_holder_t *h = &r->holders[hi];
    size_t g;

    for (size_t i = 0; i < h->nfrs; i++) {
        if (strcmp(h->frs[i].flavor, flavor) == 0 && strcmp(h->frs[i].resource, resource) == 0) {
            *out = i;
            return ERR_OK;
        }
    }
    if (gfr_get(r, flavor, resource, t, &g) != ERR_OK ||
        util_grow((void **)&h->frs, &h->cap, h->nfrs + 1, sizeof(sim_fr_rec_t)) != ERR_OK)
        return ERR_NOMEM;
    sim_fr_rec_t *fr = &h->frs[h->nfrs];
    memset(fr, 0, sizeof(*fr));
    fr->flavor = strdup(flavor);
    fr->resource = strdup(resource);
    fr->gfr = g;
    fr->since = t;
    if (fr->flavor == NULL || fr->resource == NULL) {
        free(fr->flavor);
        free(fr->resource);
        return ERR_NOMEM;
    }
    *out = h->nfrs++;
    return ERR_OK;
}

/* Change the usage of holder entry (hi, fi) by `delta` at `t`, keeping the global entry and its
 * series in step. */
static err_t usage_add(sim_rec_t *r, size_t hi, size_t fi, qnano_t delta, sim_ms_t t)
{
    sim_fr_rec_t *fr = &r->holders[hi].frs[fi];
    sim_gfr_t *g = &r->gfrs[fr->gfr];

    fr_advance(fr, t);
    gfr_advance(g, t);
    fr->usage += delta;
    if (fr->usage > fr->peak)
        fr->peak = fr->usage;
    g->usage += delta;
    if (series_push(&fr->usage_series, t, fr->usage) != ERR_OK)
        return ERR_NOMEM;
    return series_push(&g->usage_series, t, g->usage);
}

static err_t nominal_set(sim_rec_t *r, size_t hi, size_t fi, qnano_t nominal, sim_ms_t t)
{
    sim_fr_rec_t *fr = &r->holders[hi].frs[fi];
    sim_gfr_t *g = &r->gfrs[fr->gfr];

    fr_advance(fr, t);
    gfr_advance(g, t);
    g->nominal += nominal - fr->nominal;
    fr->nominal = nominal;
    /* Keep a usage point at the same instant so both series of a chart start together. */
    if (series_push(&g->nominal_series, t, g->nominal) != ERR_OK ||
        series_push(&g->usage_series, t, g->usage) != ERR_OK ||
        series_push(&fr->nominal_series, t, fr->nominal) != ERR_OK ||
        series_push(&fr->usage_series, t, fr->usage) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

err_t sim_rec_set_quotas(sim_rec_t *r, size_t hi, const resource_group_t *groups, size_t ngroups,
                         sim_ms_t t)
{
    if (hi == SIM_NONE)
        return ERR_INVALID;
    for (size_t i = 0; i < r->holders[hi].nfrs; i++) {
        r->holders[hi].frs[i].has_borrowing_limit = false;
        r->holders[hi].frs[i].has_lending_limit = false;
        if (nominal_set(r, hi, i, 0, t) != ERR_OK)
            return ERR_NOMEM;
    }
    for (size_t g = 0; g < ngroups; g++) {
        for (size_t f = 0; f < groups[g].nflavors; f++) {
            const flavor_quotas_t *fq = &groups[g].flavors[f];
            for (size_t k = 0; k < fq->nresources; k++) {
                const resource_quota_t *rq = &fq->resources[k];
                size_t fi;
                if (fr_get(r, hi, fq->name, rq->name, t, &fi) != ERR_OK ||
                    nominal_set(r, hi, fi, rq->nominal.nano, t) != ERR_OK)
                    return ERR_NOMEM;
                sim_fr_rec_t *fr = &r->holders[hi].frs[fi];
                fr->has_borrowing_limit = rq->has_borrowing_limit;
                fr->borrowing_limit = rq->has_borrowing_limit ? rq->borrowing_limit.nano : 0;
                fr->has_lending_limit = rq->has_lending_limit;
                fr->lending_limit = rq->has_lending_limit ? rq->lending_limit.nano : 0;
            }
        }
    }
    return ERR_OK;
}

/* ---- workloads --------------------------------------------------------------------------- */

static err_t pending_add(sim_rec_t *r, size_t hi, int delta, sim_ms_t t)
{
    if (hi == SIM_NONE)
        return ERR_OK;
    sim_holder_t *h = &r->holders[hi];
    h->pending += delta;
    return series_push(&h->pending_series, t, h->pending);
}

err_t sim_rec_wl_add(sim_rec_t *r, const char *name, const char *ns, const char *pclass,
                     int32_t priority, size_t cq, sim_ms_t t, size_t *out)
{
    if (util_grow((void **)&r->wls, &r->capwls, r->nwls + 1, sizeof(sim_wl_rec_t)) != ERR_OK)
        goto oom;
    sim_wl_rec_t *w = &r->wls[r->nwls];
    memset(w, 0, sizeof(*w));
    w->name = strdup(name);
    w->ns = strdup(ns != NULL ? ns : "");
    w->priority_class = strdup(pclass != NULL ? pclass : "");
    if (w->name == NULL || w->ns == NULL || w->priority_class == NULL ||
        util_hmap_put_index(&r->wl_index, name, r->nwls) != ERR_OK) {
        free(w->name);
        free(w->ns);
        free(w->priority_class);
        goto oom;
    }
    w->priority = priority;
    w->cq = cq;
    w->state = SIM_WL_PENDING;
    w->submit = t;
    w->first_admit = w->last_admit = w->finish = w->left = -1;
    w->pending_since = t;
    w->reason = SIM_NONE;
    w->span = SIM_NONE;
    *out = r->nwls++;
    return pending_add(r, cq, 1, t);
oom:
    return ERR_NOMEM;
}

err_t sim_rec_wl_queue(sim_rec_t *r, size_t wi, const char *ns, const char *queue)
{
    sim_wl_rec_t *w = &r->wls[wi];
    char *lq = NULL;

    if (queue != NULL && queue[0] != '\0') {
        size_t nl = strlen(ns != NULL ? ns : ""), ql = strlen(queue);
        if (w->lq != NULL && strncmp(w->lq, ns != NULL ? ns : "", nl) == 0 && w->lq[nl] == '/' &&
            strcmp(w->lq + nl + 1, queue) == 0)
            return ERR_OK;
        lq = malloc(nl + ql + 2);
        if (lq == NULL)
            return ERR_NOMEM;
        memcpy(lq, ns != NULL ? ns : "", nl);
        lq[nl] = '/';
        memcpy(lq + nl + 1, queue, ql + 1);
    }
    free(w->lq);
    w->lq = lq;
    return ERR_OK;
}

size_t sim_rec_wl_find(const sim_rec_t *r, const char *name)
{
    size_t idx;
    return util_hmap_get_index(&r->wl_index, name, &idx) ? idx : SIM_NONE;
}

err_t sim_rec_wl_retarget(sim_rec_t *r, size_t wi, size_t cq, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];
    size_t from = w->cq;

    if (from == cq)
        return ERR_OK;
    w->cq = cq;
    if (w->state == SIM_WL_PENDING &&
        (pending_add(r, from, -1, t) != ERR_OK || pending_add(r, cq, 1, t) != ERR_OK))
        return ERR_NOMEM;
    return ERR_OK;
}

static void reason_close(sim_rec_t *r, sim_wl_rec_t *w, sim_ms_t t)
{
    if (w->reason != SIM_NONE)
        r->reasons[w->reason].total += t - w->reason_since;
    w->reason = SIM_NONE;
}

static err_t stop_pending(sim_rec_t *r, sim_wl_rec_t *w, sim_ms_t t)
{
    w->wait += t - w->pending_since;
    reason_close(r, w, t);
    return pending_add(r, w->cq, -1, t);
}

/* The workload's quota is given back whatever happens (the bookkeeping stays whole); ERR_NOMEM
 * when a point of a usage series was lost on the way. */
static err_t stop_running(sim_rec_t *r, sim_wl_rec_t *w, sim_span_end_t how, sim_ms_t t)
{
    err_t rc = ERR_OK;

    if (w->span != SIM_NONE) {
        r->spans[w->span].end = t;
        r->spans[w->span].how = how;
        w->span = SIM_NONE;
    }
    for (size_t i = 0; i < w->nholds; i++) {
        const sim_hold_t *hd = &w->holds[i];
        if (usage_add(r, w->cq, hd->fr, -hd->amount, t) != ERR_OK)
            rc = ERR_NOMEM;
        if (hd->gpu) {
            sim_wide_t g = (sim_wide_t)hd->amount * (t - w->last_admit);
            w->gpu_nano_ms += g;
            r->holders[w->cq].gpu_nano_ms += g;
        }
    }
    free(w->holds);
    w->holds = NULL;
    w->nholds = 0;
    return rc;
}

static const char *kv_find(const kv_list_t *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++) {
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    }
    return NULL;
}

/* Open workload `wi`'s admission span at `t`, labelled with its largest GPU hold (or its first
 * hold when it holds no GPU). */
static err_t span_open(sim_rec_t *r, size_t wi, size_t cq, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];
    size_t best = SIM_NONE;

    for (size_t i = 0; i < w->nholds; i++) {
        const sim_hold_t *hd = &w->holds[i];
        if (best == SIM_NONE || (hd->gpu && !w->holds[best].gpu) ||
            (hd->gpu == w->holds[best].gpu && hd->amount > w->holds[best].amount))
            best = i;
    }
    size_t gfr = best != SIM_NONE ? w->holds[best].gfr : SIM_NONE;
    qnano_t amount = 0;
    for (size_t i = 0; gfr != SIM_NONE && i < w->nholds; i++)
        if (strcmp(r->gfrs[w->holds[i].gfr].resource, r->gfrs[gfr].resource) == 0)
            amount += w->holds[i].amount;
    if (util_grow((void **)&r->spans, &r->capspans, r->nspans + 1, sizeof(*r->spans)) != ERR_OK)
        return ERR_NOMEM;
    r->spans[r->nspans] = (sim_span_t){wi, cq, gfr, amount, t, -1, SIM_SPAN_RUNNING};
    w->span = r->nspans++;
    return ERR_OK;
}

err_t sim_rec_wl_admit(sim_rec_t *r, size_t wi, size_t cq, const admission_t *adm, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];
    size_t n = 0, cap = 0;

    if (cq == SIM_NONE)
        return ERR_INVALID;
    if (r->hook.on_admit != NULL)
        r->hook.on_admit(r->hook.ud, r, wi, adm, t);
    if (w->state == SIM_WL_PENDING && stop_pending(r, w, t) != ERR_OK)
        return ERR_NOMEM;
    w->cq = cq;
    w->state = SIM_WL_RUNNING;
    if (w->first_admit < 0)
        w->first_admit = t;
    w->last_admit = t;
    r->holders[cq].admissions++;
    for (size_t a = 0; adm != NULL && a < adm->nassignments; a++) {
        const pod_set_assignment_t *pa = &adm->assignments[a];
        for (size_t k = 0; k < pa->usage.len; k++) {
            const resource_t *res = &pa->usage.items[k];
            const char *flavor = kv_find(&pa->flavors, res->name);
            if (flavor == NULL || res->value.nano == 0)
                continue; /* not covered by the ClusterQueue: not quota-managed */
            size_t fi;
            if (fr_get(r, cq, flavor, res->name, t, &fi) != ERR_OK ||
                util_grow((void **)&w->holds, &cap, n + 1, sizeof(sim_hold_t)) != ERR_OK)
                return ERR_NOMEM;
            w->holds[n].fr = fi;
            w->holds[n].gfr = r->holders[cq].frs[fi].gfr;
            w->holds[n].amount = res->value.nano;
            w->holds[n].gpu = requests_resource_is_gpu(res->name);
            n++;
            w->nholds = n;
            if (usage_add(r, cq, fi, res->value.nano, t) != ERR_OK)
                return ERR_NOMEM;
        }
    }
    return span_open(r, wi, cq, t);
}

static err_t back_to_pending(sim_rec_t *r, sim_wl_rec_t *w, sim_span_end_t how, sim_ms_t t)
{
    err_t rc = stop_running(r, w, how, t);

    w->state = SIM_WL_PENDING;
    w->pending_since = t;
    if (pending_add(r, w->cq, 1, t) != ERR_OK)
        rc = ERR_NOMEM;
    return rc;
}

err_t sim_rec_wl_preempt(sim_rec_t *r, size_t wi, size_t preemptor, const char *reason, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];

    if (w->state != SIM_WL_RUNNING)
        return ERR_INVALID;
    err_t rc = back_to_pending(r, w, SIM_SPAN_PREEMPTED, t);
    if (r->hook.on_release != NULL)
        r->hook.on_release(r->hook.ud, r, wi, SIM_WL_PENDING, reason, NULL, t);
    w->preemptions++;
    r->holders[w->cq].preemptions++;
    if (util_grow((void **)&r->preemptions, &r->cappreemptions, r->npreemptions + 1,
                  sizeof(sim_preemption_t)) != ERR_OK)
        return ERR_NOMEM;
    r->preemptions[r->npreemptions++] = (sim_preemption_t){t, wi, preemptor, w->cq, reason};
    return rc;
}

err_t sim_rec_wl_evict(sim_rec_t *r, size_t wi, const char *reason, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];

    if (w->state != SIM_WL_RUNNING)
        return ERR_OK;
    err_t rc = back_to_pending(r, w, SIM_SPAN_EVICTED, t);
    if (r->hook.on_release != NULL)
        r->hook.on_release(r->hook.ud, r, wi, SIM_WL_PENDING, NULL, reason, t);
    w->evictions++;
    r->holders[w->cq].evictions++;
    return rc;
}

err_t sim_rec_wl_leave(sim_rec_t *r, size_t wi, sim_wl_state_t state, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];
    bool held = w->state == SIM_WL_RUNNING;
    err_t rc;

    if (held)
        rc = stop_running(r, w,
                          state == SIM_WL_FINISHED      ? SIM_SPAN_FINISHED
                          : state == SIM_WL_DEACTIVATED ? SIM_SPAN_DEACTIVATED
                                                        : SIM_SPAN_DELETED,
                          t);
    else if (w->state == SIM_WL_PENDING)
        rc = stop_pending(r, w, t);
    else
        return ERR_OK; /* already gone */
    w->state = state;
    w->left = t;
    if (state == SIM_WL_FINISHED)
        w->finish = t;
    if (w->cq != SIM_NONE) {
        sim_holder_t *h = &r->holders[w->cq];
        if (state == SIM_WL_FINISHED)
            h->finished++;
        else if (state == SIM_WL_DEACTIVATED)
            h->deactivated++;
        else if (state == SIM_WL_DELETED)
            h->deleted++;
    }
    if (held && r->hook.on_release != NULL)
        r->hook.on_release(r->hook.ud, r, wi, state, NULL, NULL, t);
    return rc;
}

err_t sim_rec_wl_reason(sim_rec_t *r, size_t wi, const char *message, sim_ms_t t)
{
    sim_wl_rec_t *w = &r->wls[wi];
    size_t idx;
    char *norm, *example = NULL;

    if (w->state != SIM_WL_PENDING || message == NULL || message[0] == '\0')
        return ERR_OK;
    norm = sim_reason_normalize(message);
    if (norm == NULL)
        goto oom;
    if (!util_hmap_get_index(&r->reason_index, norm, &idx)) {
        example = strdup(message);
        if (example == NULL ||
            util_grow((void **)&r->reasons, &r->capreasons, r->nreasons + 1,
                      sizeof(sim_reason_t)) != ERR_OK ||
            util_hmap_put_index(&r->reason_index, norm, r->nreasons) != ERR_OK)
            goto oom;
        r->reasons[r->nreasons] = (sim_reason_t){norm, 0, 0, example, wi};
        example = NULL;
        norm = NULL;
        idx = r->nreasons++;
    }
    free(norm);
    if (w->reason == idx)
        return ERR_OK;
    reason_close(r, w, t);
    w->reason = idx;
    w->reason_since = t;
    r->reasons[idx].waits++;
    return ERR_OK;
oom:
    free(norm);
    free(example);
    return ERR_NOMEM;
}

void sim_rec_end(sim_rec_t *r, sim_ms_t t)
{
    if (r->end >= 0)
        return;
    r->end = t;
    for (size_t i = 0; i < r->nwls; i++) {
        sim_wl_rec_t *w = &r->wls[i];
        if (w->state == SIM_WL_PENDING) {
            w->wait += t - w->pending_since;
            w->pending_since = t;
            reason_close(r, w, t);
        } else if (w->state == SIM_WL_RUNNING) {
            for (size_t k = 0; k < w->nholds; k++) {
                if (!w->holds[k].gpu)
                    continue;
                sim_wide_t g = (sim_wide_t)w->holds[k].amount * (t - w->last_admit);
                w->gpu_nano_ms += g;
                r->holders[w->cq].gpu_nano_ms += g;
            }
        }
    }
    for (size_t h = 0; h < r->nholders; h++) {
        for (size_t k = 0; k < r->holders[h].nfrs; k++)
            fr_advance(&r->holders[h].frs[k], t);
    }
    for (size_t g = 0; g < r->ngfrs; g++)
        gfr_advance(&r->gfrs[g], t);
}

/* ---- text helpers -------------------------------------------------------------------------- */

/* A character that can be part of a name, so digits after it belong to the name ("h100"). */
static bool namechar(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '/' || c == '-';
}

char *sim_reason_normalize(const char *msg)
{
    size_t len = strlen(msg), o = 0;
    char *out = malloc(len + 1);

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len;) {
        bool start = i == 0 || !namechar(msg[i - 1]);
        size_t j = i;
        if (start && (msg[j] == '-' || msg[j] == '+') && j + 1 < len &&
            isdigit((unsigned char)msg[j + 1]))
            j++;
        if (start && isdigit((unsigned char)msg[j])) {
            while (j < len &&
                   (isdigit((unsigned char)msg[j]) ||
                    (msg[j] == '.' && j + 1 < len && isdigit((unsigned char)msg[j + 1]))))
                j++;
            while (j < len && isalpha((unsigned char)msg[j]))
                j++; /* a suffix: m, Ki, Gi, k, e */
            while (j < len && isdigit((unsigned char)msg[j]))
                j++; /* an exponent: 1e3 */
            out[o++] = 'N';
            i = j;
            continue;
        }
        out[o++] = msg[i++];
    }
    out[o] = '\0';
    return out;
}
