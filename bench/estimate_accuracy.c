/* estimate_accuracy -- how good the start-time estimate (lib/obs/estimate.h) is, measured in the
 * simulator: for every workload still pending at the end of the instant it was submitted, the
 * estimate made then versus the instant the simulation admitted it. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/estimate.h"
#include "sched/sched.h"
#include "sim/sim.h"
#include "util/hmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Usage: estimate_accuracy SCENARIO.yaml...   (docs/observability.md has the figures for the
 * shipped examples/). The estimator gets what the operator gets: each workload's maximum
 * execution time when set, else the mean runtime observed so far of the workloads that finished
 * in its LocalQueue (then its ClusterQueue), else nothing -- never the scenario's true runtime.
 * Workloads admitted in the instant they were submitted never wait and are counted apart.
 */

typedef struct track_s {
    char lq[320], cq[256];
    int64_t estimate;  /* ms; -1 none; -2 not asked (admitted at submission) */
    int64_t admitted;  /* first admission, ms; -1 never */
    int64_t submitted; /* the instant it was first seen, ms */
    bool done;         /* its runtime was counted */
} track_t;

typedef struct mean_s {
    int64_t sum_ms;
    int64_t n;
} mean_t;

typedef struct obs_s {
    util_hmap_t wls;    /* key -> track_t * */
    util_hmap_t means;  /* "lq:<key>" / "cq:<name>" -> mean_t * */
    char (*fresh)[512]; /* keys submitted this instant, still pending */
    size_t nfresh, cap;
} obs_t;

static mean_t *mean_of(obs_t *o, const char *prefix, const char *name, bool add)
{
    char k[600];
    mean_t *m;

    snprintf(k, sizeof(k), "%s:%s", prefix, name);
    m = util_hmap_get(&o->means, k);
    if (m == NULL && add) {
        m = calloc(1, sizeof(*m));
        if (m == NULL || util_hmap_put(&o->means, k, m, NULL) != ERR_OK)
            abort();
    }
    return m;
}

static int64_t runtime(void *ud, const sched_wl_info_t *info)
{
    obs_t *o = ud;
    const mean_t *m;

    if (info->max_exec_ms > 0)
        return info->max_exec_ms;
    m = info->local_queue_key ? mean_of(o, "lq", info->local_queue_key, false) : NULL;
    if ((m == NULL || m->n == 0) && info->cluster_queue)
        m = mean_of(o, "cq", info->cluster_queue, false);
    return m != NULL && m->n > 0 ? m->sum_ms / m->n : -1;
}

typedef struct walk_s {
    obs_t *o;
    int64_t now;
} walk_t;

static bool on_wl(const sched_wl_info_t *info, void *ud)
{
    walk_t *w = ud;
    obs_t *o = w->o;
    track_t *t = util_hmap_get(&o->wls, info->key);

    if (t == NULL) {
        t = calloc(1, sizeof(*t));
        if (t == NULL || util_hmap_put(&o->wls, info->key, t, NULL) != ERR_OK)
            abort();
        snprintf(t->lq, sizeof(t->lq), "%s", info->local_queue_key ? info->local_queue_key : "");
        snprintf(t->cq, sizeof(t->cq), "%s", info->cluster_queue ? info->cluster_queue : "");
        t->estimate = -2;
        t->admitted = -1;
        t->submitted = w->now;
        if (info->state == SCHED_WL_PENDING && info->cluster_queue != NULL) {
            if (o->nfresh == o->cap) {
                o->cap = o->cap ? o->cap * 2 : 64;
                o->fresh = realloc(o->fresh, o->cap * sizeof(*o->fresh));
                if (o->fresh == NULL)
                    abort();
            }
            snprintf(o->fresh[o->nfresh++], 512, "%s", info->key);
        }
    }
    if ((info->state == SCHED_WL_ADMITTED || info->state == SCHED_WL_EVICTING) && t->admitted < 0)
        t->admitted = info->admitted_at;
    if (info->state == SCHED_WL_FINISHED && !t->done && t->admitted >= 0) {
        t->done = true;
        mean_t *m = mean_of(o, "lq", t->lq, true);
        m->sum_ms += w->now - t->admitted;
        m->n++;
        m = mean_of(o, "cq", t->cq, true);
        m->sum_ms += w->now - t->admitted;
        m->n++;
    }
    return true;
}

static void on_est(void *ud, const char *key, int64_t start)
{
    obs_t *o = ud;
    track_t *t = util_hmap_get(&o->wls, key);

    for (size_t i = 0; t != NULL && i < o->nfresh; i++)
        if (strcmp(o->fresh[i], key) == 0) {
            t->estimate = start;
            return;
        }
}

static void on_instant(void *ud, sim_ms_t now, const sched_t *s)
{
    obs_t *o = ud;
    walk_t w = {o, (int64_t)now};
    estimate_opts_t eo = {.runtime = runtime, .ud = o};

    o->nfresh = 0;
    sched_workloads_unordered(s, on_wl, &w);
    /* one estimate per ClusterQueue that had a new pending workload this instant */
    for (size_t i = 0; i < o->nfresh; i++) {
        track_t *t = util_hmap_get(&o->wls, o->fresh[i]);
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(((track_t *)util_hmap_get(&o->wls, o->fresh[j]))->cq, t->cq) == 0;
        if (!seen)
            estimate_cq(s, t->cq, (int64_t)now, &eo, on_est, o, NULL);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double pct(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    return (double)v[(size_t)(p * (double)(n - 1) + 0.5)] / 1000.0;
}

int main(int argc, char **argv)
{
    /* seconds: the wait of those that waited, the estimate's absolute error, its signed
     * median (negative: the estimate was too early) */
    printf("%-28s %6s %6s %7s %8s %9s %9s %9s %9s\n", "scenario", "wls", "waited", "no-est",
           "at-sub", "wait p50", "|err| p50", "|err| p90", "bias p50");
    for (int a = 1; a < argc; a++) {
        sim_scenario_t sc;
        sim_rec_t rec;
        sim_options_t opts = {0};
        err_msg_t msg = {{0}};
        obs_t o = {0};
        FILE *f = fopen(argv[a], "r");
        int64_t *err = NULL, *bias = NULL, *wait = NULL;
        size_t n = 0, nwait = 0, none = 0, at_sub = 0, total = 0, pos = 0;
        const char *k;
        void *v;

        if (f == NULL) {
            perror(argv[a]);
            return 1;
        }
        sim_scenario_init(&sc);
        if (sim_scenario_load(f, &sc, &msg) != ERR_OK) {
            fprintf(stderr, "%s: %s\n", argv[a], msg.text);
            return 1;
        }
        fclose(f);
        util_hmap_init(&o.wls, 0);
        util_hmap_init(&o.means, 0);
        sim_rec_init(&rec);
        opts.on_instant = on_instant;
        opts.instant_ud = &o;
        if (sim_run(&sc, &opts, &rec, &msg) != ERR_OK) {
            fprintf(stderr, "%s: %s\n", argv[a], msg.text);
            return 1;
        }
        err = calloc(util_hmap_len(&o.wls) + 1, sizeof(*err));
        bias = calloc(util_hmap_len(&o.wls) + 1, sizeof(*bias));
        wait = calloc(util_hmap_len(&o.wls) + 1, sizeof(*wait));
        while (util_hmap_next(&o.wls, &pos, &k, &v)) {
            track_t *t = v;
            total++;
            if (t->estimate == -2) {
                at_sub += t->admitted >= 0;
                free(t);
                continue;
            }
            if (t->admitted < 0) { /* never admitted in the run */
                free(t);
                continue;
            }
            wait[nwait++] = t->admitted - t->submitted;
            if (t->estimate < 0) {
                none++;
            } else {
                int64_t d = t->estimate - t->admitted;
                bias[n] = d;
                err[n++] = d < 0 ? -d : d;
            }
            free(t);
        }
        {
            const char *base = strrchr(argv[a], '/');
            printf("%-28s %6zu %6zu %7zu %8zu %9.0f %9.0f %9.0f %9.0f\n", base ? base + 1 : argv[a],
                   total, nwait, none, at_sub, pct(wait, nwait, 0.5), pct(err, n, 0.5),
                   pct(err, n, 0.9), pct(bias, n, 0.5));
        }
        free(err);
        free(bias);
        free(wait);
        free(o.fresh);
        pos = 0;
        while (util_hmap_next(&o.means, &pos, NULL, &v))
            free(v);
        util_hmap_fini(&o.means);
        util_hmap_fini(&o.wls);
        sim_rec_fini(&rec);
        sim_scenario_fini(&sc);
    }
    return 0;
}
