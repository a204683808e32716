/* estimate -- when will each pending workload start: a copy of the engine run forward in virtual
 * time, with expected runtimes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"

#include "util/grow.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The loop is lib/sim/run.c's without the scenario: the only events are the ends of what runs
 * (a heap of (time, workload, generation); a preemption or deactivation bumps the workload's
 * generation, which makes its pending end stale) and the engine's own deadlines. The copy is
 * the engine, so nothing here decides who goes first.
 *
 *   ends heap  ----+
 *                  +--> next instant --> finish due ends --> sched_cycle until quiet --+
 *   deadlines  ----+          ^                                                          |
 *                             +------------ admissions push their end -------------------+
 */

typedef struct slot_s {
    uint32_t gen;    /* bumped when its run stops early: its end in the heap is stale */
    size_t tracked;  /* index into the result's entries, SIZE_MAX when it was not pending */
    int64_t runtime; /* expected (ms), -1 unknown: asked once, in the prepare phase */
} slot_t;

typedef struct end_s {
    int64_t t;
    size_t slot;
    uint32_t gen;
} end_t;

struct estimate_job_s {
    sched_t *s; /* owned: the copy */
    int64_t now, horizon_ms;
    size_t max_cycles;
    estimate_t *e;       /* owned until taken */
    util_hmap_t slot_of; /* key -> index into slots (keys borrowed from slot_keys) */
    slot_t *slots;
    size_t nslots, capslots;
    char **slot_keys; /* owned: each slot's key (the copy's own strings move with its changes) */
    size_t capkeys;
    end_t *ends; /* min-heap by (t, slot) */
    size_t nends, capends;
    sched_decisions_t dec;
    size_t left; /* tracked workloads without a start yet */
    bool ran;
};

typedef estimate_job_t run_t;

/* ---- the heap of ends ------------------------------------------------------------------------ */

static bool end_less(const end_t *a, const end_t *b)
{
    return a->t != b->t ? a->t < b->t : a->slot < b->slot;
}

static err_t end_push(run_t *r, end_t x)
{
    size_t i;

    if (util_grow((void **)&r->ends, &r->capends, r->nends + 1, sizeof(*r->ends)) != ERR_OK)
        return ERR_NOMEM;
    i = r->nends++;
    r->ends[i] = x;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!end_less(&r->ends[i], &r->ends[p]))
            break;
        end_t tmp = r->ends[p];
        r->ends[p] = r->ends[i];
        r->ends[i] = tmp;
        i = p;
    }
    return ERR_OK;
}

static void end_pop(run_t *r)
{
    size_t i = 0;

    r->ends[0] = r->ends[--r->nends];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->nends && end_less(&r->ends[l], &r->ends[m]))
            m = l;
        if (l + 1 < r->nends && end_less(&r->ends[l + 1], &r->ends[m]))
            m = l + 1;
        if (m == i)
            return;
        end_t tmp = r->ends[m];
        r->ends[m] = r->ends[i];
        r->ends[i] = tmp;
        i = m;
    }
}

static void end_skip_stale(run_t *r)
{
    while (r->nends > 0 && r->slots[r->ends[0].slot].gen != r->ends[0].gen)
        end_pop(r);
}

/* ---- workloads ------------------------------------------------------------------------------- */

static err_t slot_add(run_t *r, const char *key, size_t tracked, int64_t runtime)
{
    char *k = NULL;

    if (util_grow((void **)&r->slots, &r->capslots, r->nslots + 1, sizeof(*r->slots)) != ERR_OK ||
        util_grow((void **)&r->slot_keys, &r->capkeys, r->nslots + 1, sizeof(*r->slot_keys)) !=
            ERR_OK ||
        util_strdup(key, &k) != ERR_OK)
        return ERR_NOMEM;
    if (util_hmap_put_index(&r->slot_of, k, r->nslots) != ERR_OK) {
        free(k);
        return ERR_NOMEM;
    }
    r->slot_keys[r->nslots] = k;
    r->slots[r->nslots++] = (slot_t){0, tracked, runtime};
    return ERR_OK;
}

/* Workload `slot` (re)starts running at `t`: its end joins the heap, unless its runtime is
 * unknown (it then runs past any horizon). */
static err_t run_from(run_t *r, size_t slot, int64_t start, int64_t at)
{
    int64_t rt = r->slots[slot].runtime, end;

    if (rt < 0)
        return ERR_OK;
    end = rt > INT64_MAX - start ? INT64_MAX : start + rt;
    if (end < at)
        end = at; /* overdue: expected any moment */
    return end_push(r, (end_t){end, slot, r->slots[slot].gen});
}

typedef struct seed_s {
    run_t *r;
    const estimate_opts_t *o;
    err_t rc;
} seed_t;

/* The result's one copy of ClusterQueue name `name` (NULL: none) into *out: thousands of entries
 * name the same few queues. */
static err_t cq_name(estimate_t *e, const char *name, char **out)
{
    char *c;

    *out = NULL;
    if (name == NULL)
        return ERR_OK;
    if ((c = util_hmap_get(&e->cqs, name)) == NULL) {
        if (util_strdup(name, &c) != ERR_OK)
            return ERR_NOMEM;
        if (util_hmap_put(&e->cqs, c, c, NULL) != ERR_OK) {
            free(c);
            return ERR_NOMEM;
        }
    }
    *out = c;
    return ERR_OK;
}

/* First pass over the copy: an entry per pending workload, a slot per workload that can run. */
static bool on_seed(const sched_wl_info_t *info, void *ud)
{
    seed_t *sd = ud;
    run_t *r = sd->r;
    estimate_t *e = r->e;
    size_t tracked = SIZE_MAX;
    int64_t runtime;

    if (info->state != SCHED_WL_PENDING && info->state != SCHED_WL_ADMITTED &&
        info->state != SCHED_WL_EVICTING)
        return true;
    runtime = sd->o->runtime != NULL ? sd->o->runtime(sd->o->ud, info) : -1;
    if (info->state == SCHED_WL_PENDING) {
        estimate_entry_t *en = &e->entries[e->len];
        en->start = -1;
        if (util_strdup(info->key, &en->key) != ERR_OK ||
            cq_name(e, info->cluster_queue, &en->cq) != ERR_OK) {
            free(en->key);
            sd->rc = ERR_NOMEM;
            return false;
        }
        if (util_hmap_put_index(&e->index, en->key, e->len) != ERR_OK) {
            free(en->key);
            sd->rc = ERR_NOMEM;
            return false;
        }
        tracked = e->len++;
    }
    if (slot_add(r, info->key, tracked, runtime) != ERR_OK) {
        sd->rc = ERR_NOMEM;
        return false;
    }
    return true;
}

typedef struct count_s {
    size_t wls;
} count_t;

static bool on_count(const sched_wl_info_t *info, void *ud)
{
    if (info->state == SCHED_WL_PENDING)
        ((count_t *)ud)->wls++; /* on_seed's entries */
    return true;
}

/* After the seed: what runs gets its end, what is being evicted stops now. */
static err_t start_running(run_t *r, int64_t now, err_msg_t *msg)
{
    for (size_t i = 0; i < r->nslots; i++) {
        sched_wl_info_t info;
        err_t rc;
        if (r->slots[i].tracked != SIZE_MAX ||
            sched_workload_info(r->s, r->slot_keys[i], &info, NULL) != ERR_OK)
            continue;
        if (info.state == SCHED_WL_EVICTING) {
            rc = sched_evicted(r->s, r->slot_keys[i], now, msg);
            if (rc != ERR_OK)
                return rc;
            continue;
        }
        rc = run_from(r, i, info.admitted_at, now);
        if (rc != ERR_OK)
            return err_set(msg, rc, "start-time estimate: out of memory");
    }
    return ERR_OK;
}

/* ---- one instant ----------------------------------------------------------------------------- */

static err_t finish_due(run_t *r, int64_t t, err_msg_t *msg)
{
    for (;;) {
        end_skip_stale(r);
        if (r->nends == 0 || r->ends[0].t > t)
            return ERR_OK;
        size_t slot = r->ends[0].slot;
        end_pop(r);
        r->slots[slot].gen++;
        err_t rc = sched_workload_finish(r->s, r->slot_keys[slot], t, msg);
        if (rc != ERR_OK)
            return rc;
    }
}

static err_t apply(run_t *r, const sched_decision_t *d, int64_t t, err_msg_t *msg)
{
    size_t slot;

    if (!util_hmap_get_index(&r->slot_of, d->workload, &slot))
        return err_set(msg, ERR_INVALID,
                       "start-time estimate: the engine decided about %s, "
                       "which it did not hold",
                       d->workload);
    r->slots[slot].gen++;
    switch (d->kind) {
    case SCHED_DECISION_ADMIT: {
        size_t tr = r->slots[slot].tracked;
        if (tr != SIZE_MAX && r->e->entries[tr].start < 0) {
            r->e->entries[tr].start = t;
            r->left--;
        }
        return run_from(r, slot, t, t) != ERR_OK
                   ? err_set(msg, ERR_NOMEM, "start-time estimate: out of memory")
                   : ERR_OK;
    }
    case SCHED_DECISION_PREEMPT:
    case SCHED_DECISION_EVICT:
        /* the job stops at once and the workload goes back to its queue, as in the simulator */
        return sched_evicted(r->s, d->workload, t, msg);
    case SCHED_DECISION_DEACTIVATE:
    case SCHED_DECISION_REPLACE: /* the same quota, the job runs on */
        return ERR_OK;
    }
    return ERR_OK;
}

/* Cycles until the engine decides nothing; *spent when the cycle budget ran out first. */
static err_t settle(run_t *r, int64_t t, bool *spent, err_msg_t *msg)
{
    size_t max = r->max_cycles;

    for (;;) {
        err_t rc;
        if (r->e->stats.cycles >= max) {
            *spent = true;
            return ERR_OK;
        }
        sched_decisions_clear(&r->dec);
        rc = sched_cycle(r->s, t, &r->dec, msg);
        r->e->stats.cycles++;
        if (rc != ERR_OK)
            return rc;
        if (r->dec.len == 0)
            return ERR_OK;
        for (size_t i = 0; i < r->dec.len; i++) {
            rc = apply(r, &r->dec.items[i], t, msg);
            if (rc != ERR_OK)
                return rc;
        }
    }
}

/* ---- the run -----------------------------------------------------------------------------------
 */

static err_t forward(run_t *r, int64_t now, err_msg_t *msg)
{
    estimate_stats_t *st = &r->e->stats;
    int64_t limit = r->horizon_ms > INT64_MAX - now ? INT64_MAX : now + r->horizon_ms;
    int64_t t = now;
    err_t rc = start_running(r, now, msg);

    while (rc == ERR_OK) {
        bool spent = false;
        int64_t next;

        st->instants++;
        st->reached = t;
        rc = finish_due(r, t, msg);
        if (rc == ERR_OK)
            rc = settle(r, t, &spent, msg);
        if (rc != ERR_OK || r->left == 0)
            break;
        if (spent) {
            st->truncated = true;
            break;
        }
        end_skip_stale(r);
        next = r->nends > 0 ? r->ends[0].t : INT64_MAX;
        int64_t dl = sched_next_deadline(r->s, t);
        if (dl < next)
            next = dl;
        if (next == INT64_MAX || next > limit)
            break; /* nothing ever frees quota again, or not within the horizon */
        t = next;
    }
    return rc;
}

void estimate_job_free(estimate_job_t *r)
{
    if (r == NULL)
        return;
    sched_decisions_fini(&r->dec);
    sched_free(r->s);
    for (size_t i = 0; i < r->nslots; i++)
        free(r->slot_keys[i]);
    free(r->slot_keys);
    free(r->slots);
    free(r->ends);
    util_hmap_fini(&r->slot_of);
    estimate_free(r->e);
    free(r);
}

err_t estimate_prepare(const sched_t *s, int64_t now, const estimate_opts_t *opts,
                       estimate_job_t **out, err_msg_t *msg)
{
    run_t *r = calloc(1, sizeof(*r));
    count_t cnt = {0};
    seed_t sd = {r, opts, ERR_OK};
    estimate_t *e;

    if (r == NULL)
        return err_set(msg, ERR_NOMEM, "start-time estimate: out of memory");
    util_hmap_init_borrowed(&r->slot_of, 0); /* keys: slot_keys */
    sched_decisions_init(&r->dec);
    r->now = now;
    r->horizon_ms = opts->horizon_ms > 0 ? opts->horizon_ms : ESTIMATE_DEFAULT_HORIZON_MS;
    r->max_cycles = opts->max_cycles ? opts->max_cycles : ESTIMATE_DEFAULT_MAX_CYCLES;
    e = r->e = calloc(1, sizeof(*e));
    if (e == NULL)
        goto nomem;
    util_hmap_init_borrowed(&e->index, 0); /* keys: the entries' */
    util_hmap_init_borrowed(&e->cqs, 0);   /* keys: the values */
    e->now = now;
    r->s = sched_clone(s, SCHED_CLONE_RELEASE_HOLDS);
    if (r->s == NULL)
        goto nomem;
    sched_workloads_unordered(r->s, on_count, &cnt);
    e->entries = calloc(cnt.wls + 1, sizeof(*e->entries));
    if (e->entries == NULL)
        goto nomem;
    sched_workloads(r->s, on_seed, &sd); /* key order: the entries come out sorted */
    if (sd.rc != ERR_OK)
        goto nomem;
    e->stats.pending = r->left = e->len;
    *out = r;
    return ERR_OK;
nomem:
    estimate_job_free(r);
    return err_set(msg, ERR_NOMEM, "start-time estimate: out of memory");
}

err_t estimate_job_run(estimate_job_t *r, err_msg_t *msg)
{
    estimate_t *e = r->e;
    err_t rc;

    if (r->ran || e == NULL)
        return err_set(msg, ERR_INVALID, "start-time estimate: the job has already run");
    r->ran = true;
    rc = forward(r, r->now, msg);
    for (size_t i = 0; i < e->len; i++)
        e->stats.estimated += e->entries[i].start >= 0;
    return rc;
}

estimate_t *estimate_job_take(estimate_job_t *r)
{
    estimate_t *e = r->ran ? r->e : NULL;

    if (e != NULL)
        r->e = NULL;
    return e;
}

err_t estimate_run(const sched_t *s, int64_t now, const estimate_opts_t *opts, estimate_t **out,
                   err_msg_t *msg)
{
    estimate_job_t *j = NULL;
    err_t rc = estimate_prepare(s, now, opts, &j, msg);

    if (rc == ERR_OK)
        rc = estimate_job_run(j, msg);
    if (rc == ERR_OK)
        *out = estimate_job_take(j);
    estimate_job_free(j);
    return rc;
}

int64_t estimate_start(const estimate_t *e, const char *key)
{
    size_t i;

    if (e == NULL || !util_hmap_get_index(&e->index, key, &i) || i >= e->len)
        return -1;
    return e->entries[i].start;
}

void estimate_free(estimate_t *e)
{
    if (e == NULL)
        return;
    size_t pos = 0;
    void *cq;

    for (size_t i = 0; i < e->len; i++)
        free(e->entries[i].key);
    free(e->entries);
    util_hmap_fini(&e->index);
    while (util_hmap_next(&e->cqs, &pos, NULL, &cq))
        free(cq);
    util_hmap_fini(&e->cqs);
    free(e);
}
