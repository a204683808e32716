/* estimate -- when a pending workload will start: its ClusterQueue's queue played forward over
 * the quota it can use now, with expected runtimes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_HORIZON_MS (7LL * 24 * 3600 * 1000)
#define DEFAULT_MAX        1000
#define MAX_RES            32 /* distinct resources of one ClusterQueue considered */
#define NEVER              INT64_MAX

typedef struct est_job_s {
    const char *key; /* borrowed from the engine for the call */
    qnano_t need[MAX_RES];
    bool fits_ever;  /* every resource it asks for is in the capacity */
    int64_t runtime; /* ms, -1 unknown */
    int64_t end;     /* running: when it frees its quota (NEVER: unknown) */
    int64_t start;   /* pending: the estimate, -1 none yet */
} est_job_t;

typedef struct est_s {
    const sched_t *s;
    const estimate_opts_t *o;
    int64_t now;
    const char *res[MAX_RES]; /* borrowed resource names */
    size_t nres;
    qnano_t free_[MAX_RES];
    est_job_t *run, *pend;
    size_t nrun, npend, cap_run, cap_pend;
    size_t max_pending;
    bool oom;
} est_t;

static int res_index(est_t *e, const char *name, bool add)
{
    for (size_t i = 0; i < e->nres; i++)
        if (strcmp(e->res[i], name) == 0)
            return (int)i;
    if (!add || e->nres == MAX_RES)
        return -1;
    e->res[e->nres] = name;
    e->free_[e->nres] = 0;
    return (int)e->nres++;
}

static est_job_t *push(est_job_t **v, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        est_job_t *p = realloc(*v, nc * sizeof(*p));
        if (p == NULL)
            return NULL;
        *v = p;
        *cap = nc;
    }
    memset(&(*v)[*n], 0, sizeof(est_job_t));
    return &(*v)[(*n)++];
}

typedef struct req_ctx_s {
    est_t *e;
    est_job_t *j;
} req_ctx_t;

static void on_request(void *ud, const char *resource, qnano_t total)
{
    req_ctx_t *r = ud;
    int i = res_index(r->e, resource, false);

    if (total <= 0)
        return;
    if (i < 0)
        r->j->fits_ever = false; /* the ClusterQueue has no quota for it */
    else
        r->j->need[i] += total;
}

static bool on_wl(const sched_wl_info_t *info, void *ud)
{
    est_t *e = ud;
    est_job_t *j;

    if (info->state == SCHED_WL_ADMITTED || info->state == SCHED_WL_EVICTING) {
        j = push(&e->run, &e->nrun, &e->cap_run);
        if (j == NULL) {
            e->oom = true;
            return false;
        }
        j->key = info->key;
        j->runtime = e->o->runtime ? e->o->runtime(e->o->ud, info) : -1;
        /* an evicting workload frees its quota as soon as it has stopped: count it as now */
        j->end = info->state == SCHED_WL_EVICTING ? e->now
                 : j->runtime < 0                 ? NEVER
                                                  : info->admitted_at + j->runtime;
        if (j->end != NEVER && j->end < e->now)
            j->end = e->now; /* overdue: expected any moment */
        for (size_t a = 0; info->admission != NULL && a < info->admission->nassignments; a++) {
            const pod_set_assignment_t *psa = &info->admission->assignments[a];
            for (size_t r = 0; r < psa->usage.len; r++) {
                int i = res_index(e, psa->usage.items[r].name, false);
                if (i >= 0)
                    j->need[i] += psa->usage.items[r].value.nano;
            }
        }
        return true;
    }
    if (info->state != SCHED_WL_PENDING || e->npend >= e->max_pending)
        return true;
    j = push(&e->pend, &e->npend, &e->cap_pend);
    if (j == NULL) {
        e->oom = true;
        return false;
    }
    j->key = info->key;
    j->fits_ever = true;
    j->start = -1;
    j->runtime = e->o->runtime ? e->o->runtime(e->o->ud, info) : -1;
    {
        req_ctx_t rc = {e, j};
        sched_workload_requests(e->s, info->key, on_request, &rc, NULL);
    }
    return true;
}

static bool fits(const est_t *e, const est_job_t *j)
{
    for (size_t i = 0; i < e->nres; i++)
        if (j->need[i] > e->free_[i])
            return false;
    return j->fits_ever;
}

/* Play the queue forward: start what fits at t, then move t to the next end. */
static void play(est_t *e)
{
    int64_t t = e->now, limit = e->now + e->o->horizon_ms;
    size_t left = e->npend;

    if (e->o->horizon_ms <= 0)
        limit = e->now + DEFAULT_HORIZON_MS;
    while (left > 0 && t <= limit) {
        int64_t next = NEVER;
        for (size_t p = 0; p < e->npend; p++) {
            est_job_t *j = &e->pend[p];
            if (j->start >= 0 || !fits(e, j))
                continue;
            j->start = t;
            left--;
            for (size_t i = 0; i < e->nres; i++)
                e->free_[i] -= j->need[i];
            j->end = j->runtime < 0 ? NEVER : t + j->runtime;
        }
        /* the next instant anything (running, or started now) frees its quota */
        for (size_t r = 0; r < e->nrun; r++)
            if (e->run[r].end > t && e->run[r].end < next)
                next = e->run[r].end;
        for (size_t p = 0; p < e->npend; p++)
            if (e->pend[p].start >= 0 && e->pend[p].end > t && e->pend[p].end < next)
                next = e->pend[p].end;
        if (next == NEVER)
            break;
        t = next;
        for (size_t r = 0; r < e->nrun; r++)
            if (e->run[r].end == t)
                for (size_t i = 0; i < e->nres; i++)
                    e->free_[i] += e->run[r].need[i];
        for (size_t p = 0; p < e->npend; p++)
            if (e->pend[p].start >= 0 && e->pend[p].end == t)
                for (size_t i = 0; i < e->nres; i++)
                    e->free_[i] += e->pend[p].need[i];
    }
    for (size_t p = 0; p < e->npend; p++)
        if (e->pend[p].start > limit)
            e->pend[p].start = -1;
}

err_t estimate_cq(const sched_t *s, const char *cq, int64_t now, const estimate_opts_t *opts,
                  estimate_cb cb, void *ud, err_msg_t *msg)
{
    est_t e = {.s = s, .o = opts, .now = now};
    sched_usage_list_t usage = {0};
    err_t rc;

    e.max_pending = opts->max_pending ? opts->max_pending : DEFAULT_MAX;
    rc = sched_cq_usage(s, cq, &usage, msg);
    if (rc != ERR_OK)
        return rc;
    /* Capacity left now per resource: Kueue's Available (nominal, plus what the cohort would
     * lend now, minus what is used), over every flavor. */
    for (size_t i = 0; i < usage.len; i++) {
        int r = res_index(&e, usage.items[i].resource, true);
        if (r >= 0 && usage.items[i].available.nano > 0)
            e.free_[r] += usage.items[i].available.nano;
    }
    rc = sched_cq_workloads(s, cq, on_wl, &e, msg);
    if (rc == ERR_OK && e.oom)
        rc = err_set(msg, ERR_NOMEM, "estimate of ClusterQueue %s: out of memory", cq);
    if (rc == ERR_OK) {
        play(&e);
        for (size_t p = 0; p < e.npend; p++)
            cb(ud, e.pend[p].key, e.pend[p].start);
    }
    free(e.run);
    free(e.pend);
    sched_usage_list_fini(&usage);
    return rc;
}
