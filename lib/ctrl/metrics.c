/* metrics -- the operator's Prometheus metrics: Kueue's core set under Kueue's names, and sluice's.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "obs/families.h"
#include "obs/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The families -- names, types, labels, buckets, help -- are declared once in lib/obs/families.h,
 * shared with `sluice sim --metrics`. Two kinds of series (docs/observability.md lists every
 * metric):
 *
 *   counters and histograms move where things happen, through the small ctrl__metrics_*()
 *   calls in admit.c and ctrl.c (an admission written, an eviction written, a preemption
 *   decided, an engine cycle, an API write answered) and webhook.c (a request answered);
 *
 *   gauges are computed when /metrics is scraped, from the engine and the caches: every gauge
 *   family is cleared and set again, so the series of a deleted ClusterQueue vanish with it.
 *   One walk over the engine's workloads (pending split active/inadmissible, per-LocalQueue
 *   counts and usage) plus one status and usage query per ClusterQueue: a few milliseconds at
 *   1,000 ClusterQueues and 50,000 Workloads, once per scrape.
 *
 * The resource-seconds counters integrate the quota each admitted Workload holds: every TICK_MS
 * (ctrl__metrics_tick, called once a second) every Workload holding quota adds usage x elapsed,
 * counted from the latest of its admission, the previous run and its own last accrual. A
 * Workload about to release its quota (evicted, finished, deleted, deactivated) accrues up to
 * that instant first (ctrl__metrics_release, called before every engine call that may free
 * quota), so nothing between the last run and the release is lost; the instant is remembered
 * until the next run, so a release that did not happen after all is not counted twice.
 *
 * Every Kueue family carries Kueue's label replica_role: "standalone" without leader election,
 * else "leader" or "follower" (a follower serves the same gauges from its own fed engine; its
 * counters stay at zero since it decides nothing).
 */

/* The resource-seconds counters are integrated this often: 27 ms of CPU per run at 25,000
 * admitted Workloads (bench_metrics), so about 0.5% of a core. */
#define TICK_MS 5000

struct ctrl_metrics_s {
    metrics_registry_t *reg;         /* owned */
    metrics_family_t *f[FAM__COUNT]; /* borrowed from reg; NULL when switched off */
    int64_t last_tick_ms;            /* resource-seconds integrated up to here */
    sched_attempts_t attempts_seen;  /* the engine's attempt counts at the last cycle */
    util_hmap_t accrued;             /* workload key -> ms after last_tick_ms up to which its use
                                        is counted (util_hmap_put_index); emptied at each tick */
};

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "dev"
#endif

#ifdef __clang__
#define COMPILER "clang " __clang_version__
#else
#define COMPILER "gcc " __VERSION__
#endif

static const char *platform(void)
{
#if defined(__x86_64__)
    return "linux/amd64";
#elif defined(__aarch64__)
    return "linux/arm64";
#else
    return "linux/unknown";
#endif
}

static const char *role(const ctrl_t *c)
{
    if (!c->cfg->leader_elect)
        return "standalone";
    return c->leader ? "leader" : "follower";
}

err_t ctrl__metrics_init(ctrl_t *c)
{
    ctrl_metrics_t *m = calloc(1, sizeof(*m));

    if (m == NULL)
        return ERR_NOMEM;
    c->metrics = m;
    util_hmap_init(&m->accrued, 0);
    m->reg = metrics_registry_new(0);
    m->last_tick_ms = ctrl__now_ms();
    if (m->reg == NULL)
        return ERR_NOMEM;
    for (int i = 0; i < FAM__COUNT; i++) {
        families_switch_t gate = families_def((families_id_t)i)->gate;
        if ((gate == FAMILIES_LQ && !c->cfg->metrics_lq) ||
            (gate == FAMILIES_CQ_RESOURCES && !c->cfg->metrics_cq_resources) ||
            (gate == FAMILIES_FAIR_SHARING && !c->cfg->kueue.fair_sharing))
            continue;
        if (families_add(m->reg, (families_id_t)i, &m->f[i], NULL) != ERR_OK)
            return ERR_NOMEM; /* the table is fixed and valid (test_ctrl_metrics): only OOM */
    }
    return ERR_OK;
}

void ctrl__metrics_free(ctrl_t *c)
{
    if (c->metrics == NULL)
        return;
    util_hmap_fini(&c->metrics->accrued);
    metrics_registry_free(c->metrics->reg);
    free(c->metrics);
    c->metrics = NULL;
}

/* The family `id`, or NULL when metrics are off or the family is switched off. */
static metrics_family_t *fam(const ctrl_t *c, families_id_t id)
{
    return c->metrics != NULL ? c->metrics->f[id] : NULL;
}

static void count(ctrl_t *c, families_id_t id, const char *const *values, double v)
{
    metrics_family_t *f = fam(c, id);

    if (f != NULL)
        metrics_counter_add(f, values, v); /* OOM: the observation is lost, nothing else */
}

static void observe(ctrl_t *c, families_id_t id, const char *const *values, double v)
{
    metrics_family_t *f = fam(c, id);

    if (f != NULL)
        metrics_histogram_observe(f, values, v);
}

static void gauge(ctrl_t *c, families_id_t id, const char *const *values, double v)
{
    metrics_family_t *f = fam(c, id);

    if (f != NULL)
        metrics_gauge_set(f, values, v);
}

static void gauge_add(ctrl_t *c, families_id_t id, const char *const *values, double v)
{
    metrics_family_t *f = fam(c, id);

    if (f != NULL)
        metrics_gauge_add(f, values, v);
}

static double qty(quantity_t q)
{
    return (double)q.nano / 1e9;
}

/* "ns/name" -> ns into buf, name returned (borrowed from key). */
static const char *split_key(const char *key, char *ns, size_t n)
{
    const char *slash = strchr(key, '/');

    size_t len = slash != NULL ? (size_t)(slash - key) : 0;

    if (len >= n)
        len = n - 1;
    memcpy(ns, key, len); /* no printf: this runs for every workload of a scrape and a tick */
    ns[len] = '\0';
    return slash != NULL ? slash + 1 : key;
}

/* ---- event hooks -------------------------------------------------------------------------- */

void ctrl__metrics_cycle(ctrl_t *c, const sched_decisions_t *ds, size_t from, uint64_t ns,
                         bool first)
{
    static const char *const kinds[] = {"admit", "preempt", "evict", "deactivate", "replace"};
    _Static_assert(sizeof(kinds) / sizeof(kinds[0]) == SCHED_DECISION_REPLACE + 1,
                   "a name for every decision kind");
    sched_attempts_t now;
    uint64_t tried, ok;
    double each;

    (void)first;
    if (c->metrics == NULL)
        return;
    for (size_t i = from; i < ds->len; i++) {
        count(c, FAM_DECISIONS, (const char *const[]){kinds[ds->items[i].kind]}, 1);
    }
    observe(c, FAM_ENGINE, NULL, (double)ns / 1e9);
    /* Kueue records one attempt per scheduling pass that had heads to try: "success" when it
     * admitted one, else "inadmissible". The engine counts those passes (sched_attempts: a
     * sched_cycle() may make several, and the repeated cycles that find every queue empty or
     * parked make none); this cycle's share is the difference since the last call. The
     * cycle's CPU time is split evenly over its attempts for the duration histogram. */
    sched_attempts(c->sched, &now);
    tried = now.tried - c->metrics->attempts_seen.tried;
    ok = now.admitted - c->metrics->attempts_seen.admitted;
    c->metrics->attempts_seen = now;
    if (tried == 0 || ok > tried)
        return;
    each = (double)ns / 1e9 / (double)tried;
    if (ok > 0)
        count(c, FAM_ATTEMPTS, (const char *const[]){"success", role(c)}, (double)ok);
    if (tried > ok)
        count(c, FAM_ATTEMPTS, (const char *const[]){"inadmissible", role(c)},
              (double)(tried - ok));
    for (uint64_t i = 0; i < tried; i++)
        observe(c, FAM_ATTEMPT_DURATION,
                (const char *const[]){i < ok ? "success" : "inadmissible", role(c)}, each);
}

void ctrl__metrics_decision(ctrl_t *c, const sched_decision_t *d)
{
    sched_wl_info_t pi;
    const char *cq = d->cluster_queue ? d->cluster_queue : "";

    if (d->kind != SCHED_DECISION_PREEMPT)
        return;
    if (d->preemptor != NULL && sched_workload_info(c->sched, d->preemptor, &pi, NULL) == ERR_OK &&
        pi.cluster_queue != NULL)
        cq = pi.cluster_queue;
    count(c, FAM_PREEMPTED, (const char *const[]){cq, sched_preempt_reason_str(d->reason), role(c)},
          1);
}

/* Kueue's "created or requeued": the Requeued condition's transition, else creation. */
static int64_t queued_since_s(const ctrl_wl_t *w)
{
    const condition_t *rq = ctrl_wl_cond(w, "Requeued");

    if (rq != NULL && rq->has_transition_time && rq->transition_time > w->wl.meta.creation_time)
        return rq->transition_time;
    return w->wl.meta.creation_time;
}

void ctrl__metrics_admitted(ctrl_t *c, const char *key, const char *cq)
{
    const ctrl_wl_t *w = ctrl__wl(c, key);
    const char *pc = w != NULL && w->wl.priority_class ? w->wl.priority_class : "";
    const char *lq = w != NULL && w->wl.queue_name ? w->wl.queue_name : "";
    char ns[256];
    double wait = 0;

    if (cq == NULL)
        return;
    split_key(key, ns, sizeof(ns));
    if (w != NULL && w->wl.meta.creation_time > 0) {
        wait = (double)ctrl__now_ms() / 1000.0 - (double)queued_since_s(w);
        if (wait < 0)
            wait = 0;
    }
    count(c, FAM_QR_TOTAL, (const char *const[]){cq, pc, role(c)}, 1);
    count(c, FAM_ADM_TOTAL, (const char *const[]){cq, pc, role(c)}, 1);
    observe(c, FAM_QR_WAIT, (const char *const[]){cq, pc, role(c)}, wait);
    observe(c, FAM_ADM_WAIT, (const char *const[]){cq, pc, role(c)}, wait);
    count(c, FAM_LQ_QR_TOTAL, (const char *const[]){lq, ns, pc, role(c)}, 1);
    count(c, FAM_LQ_ADM_TOTAL, (const char *const[]){lq, ns, pc, role(c)}, 1);
    observe(c, FAM_LQ_QR_WAIT, (const char *const[]){lq, ns, pc, role(c)}, wait);
    observe(c, FAM_LQ_ADM_WAIT, (const char *const[]){lq, ns, pc, role(c)}, wait);
}

void ctrl__metrics_evicted(ctrl_t *c, const char *key, const char *reason)
{
    static const char deact[] = "DeactivatedDueTo";
    const ctrl_wl_t *w = ctrl__wl(c, key);
    const char *pc = w != NULL && w->wl.priority_class ? w->wl.priority_class : "";
    const char *lq = w != NULL && w->wl.queue_name ? w->wl.queue_name : "";
    const char *cause = "";
    sched_wl_info_t info;
    const char *cq = "";
    char ns[256];

    if (reason == NULL)
        reason = "";
    /* Kueue: reason Deactivated with the cause apart ("DeactivatedDueToMaximumExecution..."). */
    if (strncmp(reason, deact, sizeof(deact) - 1) == 0) {
        cause = reason + sizeof(deact) - 1;
        reason = "Deactivated";
    }
    if (sched_workload_info(c->sched, key, &info, NULL) == ERR_OK && info.cluster_queue != NULL)
        cq = info.cluster_queue;
    split_key(key, ns, sizeof(ns));
    count(c, FAM_EVICTED, (const char *const[]){cq, reason, cause, pc, role(c)}, 1);
    count(c, FAM_LQ_EVICTED, (const char *const[]){lq, ns, reason, cause, pc, role(c)}, 1);
}

void ctrl__metrics_write(ctrl_t *c, const ctrl_op_t *op, const kube_result_t *res)
{
    const char *result = res->err == ERR_OK                                   ? "success"
                         : res->err == ERR_CONFLICT || res->err == ERR_EXISTS ? "conflict"
                         : res->err == ERR_NOT_FOUND                          ? "not_found"
                                                                              : "error";
    const char *resource = op->op == CTRL_OP_EVENT ? "events"
                           : op->res != NULL       ? op->res->resource
                                                   : c->res[op->kind].resource;

    if (res->canceled || op->op == CTRL_OP_WL_VERIFY || op->op == CTRL_OP_POD_OWNER ||
        op->op == CTRL_OP_EXT_OWNER || (op->op == CTRL_OP_PROV && op->verb == NULL))
        return; /* a verification, a serving owner's or an external owner's GET are reads */
    count(c, FAM_WRITES, (const char *const[]){resource ? resource : "", result}, 1);
}

/* Does body[0..len) contain `needle`? */
static bool contains(const char *body, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++)
        if (body[i] == needle[0] && memcmp(body + i, needle, n) == 0)
            return true;
    return false;
}

void ctrl_metrics_webhook(ctrl_t *c, const char *path, int status, const char *body, size_t len)
{
    const char *result = "allowed";

    if (status == 404) {
        path = "other"; /* the path is the caller's choice: never a label value */
        result = "error";
    } else if (status >= 400 || body == NULL) {
        result = "error";
    } else if (contains(body, len, "\"allowed\":false") ||
               contains(body, len, "\"allowed\": false")) {
        result = "denied";
    } else if (contains(body, len, "\"status\":\"Failure\"")) {
        result = "error"; /* a ConversionReview that failed */
    }
    count(c, FAM_WEBHOOK, (const char *const[]){path, result}, 1);
}

/* ---- resource-seconds --------------------------------------------------------------------- */

/* Add workload `info`'s quota x (now - start) to its series (ClusterQueue `cq`). */
static void accrue(ctrl_t *c, const sched_wl_info_t *info, const char *cq, int64_t start,
                   int64_t now)
{
    metrics_family_t *f = fam(c, FAM_RSECONDS);
    char ns[256];

    if (f == NULL || info->admission == NULL || now <= start)
        return;
    split_key(info->key, ns, sizeof(ns));
    for (size_t a = 0; a < info->admission->nassignments; a++) {
        const pod_set_assignment_t *psa = &info->admission->assignments[a];
        for (size_t r = 0; r < psa->usage.len; r++) {
            const char *res = psa->usage.items[r].name, *flavor = "";
            for (size_t k = 0; k < psa->flavors.len; k++)
                if (strcmp(psa->flavors.items[k].key, res) == 0)
                    flavor = psa->flavors.items[k].value;
            qnano_t used = psa->usage.items[r].value.nano;
            if (used <= 0)
                continue;
            /* OOM: this share of the series is lost, nothing else */
            metrics_counter_add_exact(
                f,
                (const char *const[]){ns, info->local_queue ? info->local_queue : "", cq, flavor,
                                      res},
                (metrics_exact_t)used * (metrics_exact_t)(now - start));
        }
    }
}

/* Where workload `info`'s uncounted use starts: its admission, the last tick or its own last
 * accrual (ctrl__metrics_release), whichever is latest. */
static int64_t uncounted_since(const ctrl_metrics_t *m, const sched_wl_info_t *info)
{
    int64_t start = info->admitted_at > m->last_tick_ms ? info->admitted_at : m->last_tick_ms;
    size_t off;

    if (util_hmap_get_index(&m->accrued, info->key, &off) && m->last_tick_ms + (int64_t)off > start)
        start = m->last_tick_ms + (int64_t)off;
    return start;
}

typedef struct tick_ctx_s {
    ctrl_t *c;
    const char *cq;
    int64_t now;
} tick_ctx_t;

/* Count workload `info`'s use up to `now`, when it holds quota, and remember that it is counted. */
static void release_info(ctrl_t *c, const sched_wl_info_t *info, int64_t now)
{
    ctrl_metrics_t *m = c->metrics;
    int64_t start;

    if ((info->state != SCHED_WL_ADMITTED && info->state != SCHED_WL_EVICTING) ||
        info->cluster_queue == NULL || now < m->last_tick_ms)
        return;
    start = uncounted_since(m, info);
    if (now <= start)
        return;
    /* Remembered first: should the map be out of memory, nothing is counted rather than counted
     * twice (by the next tick, if the quota turns out not to be released). */
    if (util_hmap_put_index(&m->accrued, info->key, (size_t)(now - m->last_tick_ms)) != ERR_OK)
        return;
    accrue(c, info, info->cluster_queue, start, now);
}

void ctrl__metrics_release(ctrl_t *c, const char *key, int64_t now)
{
    sched_wl_info_t info;

    if (c->metrics != NULL && !c->closing &&
        sched_workload_info(c->sched, key, &info, NULL) == ERR_OK)
        release_info(c, &info, now);
}

static bool on_due_wl(const sched_wl_info_t *info, void *ud)
{
    tick_ctx_t *t = ud;

    /* Every workload with a maximum execution time: counting one that is not due yet only moves
     * its start, never counts anything twice. */
    if (info->state == SCHED_WL_ADMITTED && info->max_exec_ms > 0)
        release_info(t->c, info, t->now);
    return true;
}

void ctrl__metrics_release_due(ctrl_t *c, int64_t now)
{
    tick_ctx_t t = {c, NULL, now};

    if (c->metrics == NULL || c->closing || sched_next_deadline(c->sched, now - 1) > now)
        return; /* nobody reaches its maximum execution time in this cycle */
    sched_workloads_unordered(c->sched, on_due_wl, &t);
}

static bool on_tick_wl(const sched_wl_info_t *info, void *ud)
{
    tick_ctx_t *t = ud;

    if (info->state != SCHED_WL_ADMITTED && info->state != SCHED_WL_EVICTING)
        return false; /* holders come first, then the pending: done */
    accrue(t->c, info, t->cq, uncounted_since(t->c->metrics, info), t->now);
    return true;
}

void ctrl__metrics_tick(ctrl_t *c)
{
    const char *stack[64], **names = stack;
    size_t n;
    tick_ctx_t t;

    if (c->metrics == NULL || !c->fed || c->closing)
        return;
    t.now = ctrl__now_ms();
    if (t.now - c->metrics->last_tick_ms < TICK_MS && t.now >= c->metrics->last_tick_ms)
        return;
    t.c = c;
    n = sched_cq_names(c->sched, stack, 64);
    if (n > 64) {
        names = malloc(n * sizeof(*names));
        if (names == NULL) {
            /* this interval is lost; the next tick counts from now */
            c->metrics->last_tick_ms = t.now;
            util_hmap_fini(&c->metrics->accrued);
            return;
        }
        sched_cq_names(c->sched, names, n);
    }
    for (size_t i = 0; i < n; i++) {
        t.cq = names[i];
        sched_cq_workloads(c->sched, names[i], on_tick_wl, &t, NULL);
    }
    if (names != stack)
        free(names);
    /* Everything up to now is counted: the per-workload accruals are behind the new start. */
    c->metrics->last_tick_ms = t.now;
    util_hmap_fini(&c->metrics->accrued);
}

/* ---- scrape ------------------------------------------------------------------------------- */

typedef struct scrape_ctx_s {
    ctrl_t *c;
    const char *role;
} scrape_ctx_t;

static const char *pending_status(const sched_wl_info_t *info)
{
    return info->reason == SCHED_REASON_NONE || info->reason == SCHED_REASON_PENDING_EVALUATION
               ? "active"
               : "inadmissible";
}

/* One walk over every Workload: pending per ClusterQueue; LocalQueue counts and usage. */
static bool on_scrape_wl(const sched_wl_info_t *info, void *ud)
{
    scrape_ctx_t *s = ud;
    ctrl_t *c = s->c;
    char ns[256];
    const char *lq = info->local_queue ? info->local_queue : "";

    split_key(info->key, ns, sizeof(ns));
    if (info->state == SCHED_WL_PENDING) {
        if (info->cluster_queue != NULL)
            gauge_add(c, FAM_PENDING,
                      (const char *const[]){info->cluster_queue, pending_status(info), s->role}, 1);
        gauge_add(c, FAM_LQ_PENDING, (const char *const[]){lq, ns, pending_status(info), s->role},
                  1);
        return true;
    }
    if (info->state != SCHED_WL_ADMITTED && info->state != SCHED_WL_EVICTING)
        return true;
    gauge_add(c, FAM_LQ_RESERVING, (const char *const[]){lq, ns, s->role}, 1);
    gauge_add(c, FAM_LQ_ADMITTED_ACTIVE, (const char *const[]){lq, ns, s->role}, 1);
    if (fam(c, FAM_LQ_RESV) == NULL || info->admission == NULL)
        return true;
    for (size_t a = 0; a < info->admission->nassignments; a++) {
        const pod_set_assignment_t *psa = &info->admission->assignments[a];
        for (size_t r = 0; r < psa->usage.len; r++) {
            const char *res = psa->usage.items[r].name, *flavor = "";
            double v = qty(psa->usage.items[r].value);
            for (size_t k = 0; k < psa->flavors.len; k++)
                if (strcmp(psa->flavors.items[k].key, res) == 0)
                    flavor = psa->flavors.items[k].value;
            gauge_add(c, FAM_LQ_RESV, (const char *const[]){lq, ns, flavor, res, s->role}, v);
            gauge_add(c, FAM_LQ_USAGE, (const char *const[]){lq, ns, flavor, res, s->role}, v);
        }
    }
    return true;
}

static void scrape_cq(ctrl_t *c, const char *name, const char *r)
{
    static const char *const statuses[] = {"pending", "active", "terminating"};
    const ctrl_qobj_t *q = ctrl__qrec(c, CTRL_CQ, name);
    sched_cq_status_t st;
    sched_usage_list_t usage = {0};
    const char *now;

    if (sched_cq_status(c->sched, name, &st, NULL) != ERR_OK)
        return;
    /* Zeros first, so a ClusterQueue with nothing pending still shows its series. */
    gauge_add(c, FAM_PENDING, (const char *const[]){name, "active", r}, 0);
    gauge_add(c, FAM_PENDING, (const char *const[]){name, "inadmissible", r}, 0);
    gauge(c, FAM_RESERVING, (const char *const[]){name, r}, (double)st.reserving);
    gauge(c, FAM_ADMITTED_ACTIVE, (const char *const[]){name, r}, (double)st.admitted);
    now = q != NULL && q->valid && q->obj.u.cq.meta.deleting ? "terminating"
          : st.active                                        ? "active"
                                                             : "pending";
    for (size_t i = 0; i < 3; i++)
        gauge(c, FAM_CQ_STATUS, (const char *const[]){name, statuses[i], r},
              strcmp(statuses[i], now) == 0);
    gauge(c, FAM_CQ_SHARE, (const char *const[]){name, st.cohort ? st.cohort : "", r},
          st.weighted_share == INT64_MAX ? NAN : (double)st.weighted_share);
    if (sched_cq_usage(c->sched, name, &usage, NULL) != ERR_OK)
        return;
    for (size_t i = 0; i < usage.len; i++) {
        const sched_fr_usage_t *u = &usage.items[i];
        const char *cohort = st.cohort ? st.cohort : "";
        const char *const fr[] = {cohort, name, u->flavor, u->resource, r};
        const char *const idle[] = {name, u->flavor, u->resource};
        double nominal = qty(u->nominal), used = qty(u->usage);
        gauge(c, FAM_CQ_RESV, fr, used);
        gauge(c, FAM_CQ_USAGE, fr, used); /* no admission checks: reserved is admitted */
        gauge(c, FAM_CQ_NOMINAL, fr, nominal);
        gauge(c, FAM_CQ_BORROW, fr, u->has_borrowing_limit ? qty(u->borrowing_limit) : INFINITY);
        gauge(c, FAM_CQ_LEND, fr, u->has_lending_limit ? qty(u->lending_limit) : INFINITY);
        gauge(c, FAM_IDLE, idle, nominal > used ? nominal - used : 0);
    }
    sched_usage_list_fini(&usage);
}

/* Quota against capacity (lib/inventory/capacity.c) and the engine's free node capacity, per
 * flavor and resource the quotas name; nothing when Nodes are not watched. */
static err_t scrape_capacity(ctrl_t *c)
{
    ctrl_capacity_t cap;
    err_t rc = ctrl__capacity(c, &cap);

    if (rc == ERR_NOT_FOUND)
        return ERR_OK;
    if (rc != ERR_OK)
        return rc;
    for (size_t i = 0; i < cap.c.nrows; i++) {
        const cap_row_t *row = &cap.c.rows[i];
        const char *const l[] = {row->flavor->meta.name, row->resource};
        sched_flavor_nodes_t fn;
        gauge(c, FAM_FLAVOR_NODES, l, (double)row->nnodes);
        gauge(c, FAM_FLAVOR_ALLOCATABLE, l, qty(row->capacity));
        gauge(c, FAM_FLAVOR_NOMINAL, l, qty(row->nominal));
        gauge(c, FAM_FLAVOR_OVER, l, capacity_over(row));
        if (sched_flavor_nodes(c->sched, row->flavor->meta.name, row->resource, &fn) == ERR_OK) {
            gauge(c, FAM_FLAVOR_FREE, l, (double)fn.free / 1e9);
            gauge(c, FAM_FLAVOR_LARGEST, l, (double)fn.largest_free / 1e9);
        }
    }
    ctrl__capacity_fini(&cap);
    return ERR_OK;
}

static void scrape_lqs(ctrl_t *c, const char *r)
{
    const char *key;
    const ctrl_qobj_t *q;

    if (fam(c, FAM_LQ_STATUS) == NULL)
        return;
    CTRL_FOREACH(c, CTRL_LQ, key, q)
    {
        char ns[256];
        const char *name = split_key(key, ns, sizeof(ns)), *active = "Unknown";
        sched_cq_status_t st;
        if (q->valid)
            active =
                q->obj.u.lq.cluster_queue != NULL &&
                        sched_cq_status(c->sched, q->obj.u.lq.cluster_queue, &st, NULL) == ERR_OK &&
                        st.active
                    ? "True"
                    : "False";
        gauge_add(c, FAM_LQ_PENDING, (const char *const[]){name, ns, "active", r}, 0);
        gauge_add(c, FAM_LQ_PENDING, (const char *const[]){name, ns, "inadmissible", r}, 0);
        gauge_add(c, FAM_LQ_RESERVING, (const char *const[]){name, ns, r}, 0);
        gauge_add(c, FAM_LQ_ADMITTED_ACTIVE, (const char *const[]){name, ns, r}, 0);
        gauge(c, FAM_LQ_STATUS, (const char *const[]){name, ns, "True", r},
              strcmp(active, "True") == 0);
        gauge(c, FAM_LQ_STATUS, (const char *const[]){name, ns, "False", r},
              strcmp(active, "False") == 0);
        gauge(c, FAM_LQ_STATUS, (const char *const[]){name, ns, "Unknown", r},
              strcmp(active, "Unknown") == 0);
    }
}

/* ---- start-time estimates -------------------------------------------------------------------- */

typedef struct est_row_s {
    const char *cq; /* borrowed from the estimate */
    int64_t wait;   /* ms, -1 none */
} est_row_t;

static int est_row_cmp(const void *a, const void *b)
{
    const est_row_t *x = a, *y = b;
    int d = strcmp(x->cq, y->cq);

    if (d != 0)
        return d;
    return x->wait < y->wait ? -1 : x->wait > y->wait;
}

/* The last estimate (estimate.c) per ClusterQueue: how many pending have one, and the p50, p90
 * and max of their estimated waits. One sort of the pending workloads per scrape. */
static err_t scrape_estimate(ctrl_t *c)
{
    const estimate_t *e = c->est.last;
    est_row_t *rows;
    size_t n = 0;

    if (e == NULL || fam(c, FAM_EST_WLS) == NULL)
        return ERR_OK;
    gauge(c, FAM_EST_SECONDS, NULL, c->est.last_seconds);
    gauge(c, FAM_EST_CYCLES, NULL, (double)e->stats.cycles);
    gauge(c, FAM_EST_AGE, NULL, (double)e->now / 1000.0);
    rows = malloc((e->len + 1) * sizeof(*rows));
    if (rows == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < e->len; i++)
        if (e->entries[i].cq != NULL)
            rows[n++] = (est_row_t){e->entries[i].cq,
                                    e->entries[i].start < 0 ? -1 : e->entries[i].start - e->now};
    qsort(rows, n, sizeof(*rows), est_row_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i, first = i;
        while (j < n && strcmp(rows[j].cq, rows[i].cq) == 0)
            j++;
        while (first < j && rows[first].wait < 0)
            first++; /* the unknown sort first */
        size_t known = j - first;
        gauge(c, FAM_EST_WLS, (const char *const[]){rows[i].cq, "known"}, (double)known);
        gauge(c, FAM_EST_WLS, (const char *const[]){rows[i].cq, "unknown"}, (double)(first - i));
        if (known > 0) {
            static const struct {
                const char *name;
                double q;
            } stats[] = {{"p50", 0.5}, {"p90", 0.9}, {"max", 1.0}};
            for (size_t k = 0; k < 3; k++) {
                size_t at = first + (size_t)(stats[k].q * (double)(known - 1) + 0.5);
                gauge(c, FAM_EST_WAIT, (const char *const[]){rows[i].cq, stats[k].name},
                      (double)rows[at].wait / 1000.0);
            }
        }
        i = j;
    }
    free(rows);
    return ERR_OK;
}

err_t ctrl_metrics_render(ctrl_t *c, metrics_buf_t *out)
{
    ctrl_metrics_t *m = c->metrics;
    scrape_ctx_t s = {c, role(c)};
    const char *stack[64], **names = stack;
    size_t n;

    if (m == NULL)
        return ERR_NOMEM;
    /* Every gauge is computed here (the counters and histograms move where things happen). */
    for (int i = 0; i < FAM__COUNT; i++)
        if (m->f[i] != NULL && families_def((families_id_t)i)->type == METRICS_GAUGE)
            metrics_family_clear(m->f[i]);
    gauge(c, FAM_BUILD, (const char *const[]){"v" SLUICE_VERSION, "", "", "", COMPILER, platform()},
          1);
    gauge(c, FAM_LEADER, NULL, c->leader);
    for (int k = 0; k < c->nkinds; k++)
        if (c->inf[k] != NULL)
            gauge(c, FAM_CACHE, (const char *const[]){c->res[k].resource},
                  (double)kube_informer_len(c->inf[k]));
    gauge(c, FAM_QUEUED, NULL, (double)kube_client_queued(c->client));
    if (c->fed) {
        /* Before the caches are synced the engine is partial: its gauges would lie. */
        n = sched_cq_names(c->sched, stack, 64);
        if (n > 64) {
            names = malloc(n * sizeof(*names));
            if (names == NULL)
                return ERR_NOMEM;
            sched_cq_names(c->sched, names, n);
        }
        for (size_t i = 0; i < n; i++)
            scrape_cq(c, names[i], s.role);
        if (names != stack)
            free(names);
        scrape_lqs(c, s.role);
        if (scrape_estimate(c) != ERR_OK)
            return ERR_NOMEM;
        sched_workloads(c->sched, on_scrape_wl, &s);
        if (scrape_capacity(c) != ERR_OK)
            return ERR_NOMEM;
    }
    return metrics_render(m->reg, out) == ERR_OK ? ctrl__idle_metrics_render(c, out) : ERR_NOMEM;
}
