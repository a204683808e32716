/* estimate_accuracy -- how good the start-time estimate (lib/obs/estimate.h) is, measured in the
 * simulator: for every workload still pending at the end of the instant it was submitted, the
 * estimate made then versus the instant the simulation admitted it. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"
#include "obs/estimate.h"
#include "sched/sched.h"
#include "sim/sim.h"
#include "util/hmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/*
 * Usage: estimate_accuracy [-v] [--sample N] SCENARIO.yaml...   (docs/observability.md has the
 * figures for the shipped examples/). The estimator gets what the operator gets: each
 * workload's maximum execution time when set, else the mean runtime observed so far in its
 * LocalQueue and priority class (then its LocalQueue, then its ClusterQueue), else nothing --
 * never the scenario's true runtime. It runs at the end of each instant where a workload was
 * submitted and is still pending (--sample N: every Nth such instant, the others' workloads
 * are not counted), over the whole engine, as the operator's periodic run does. Workloads
 * admitted in the instant they were submitted never wait and are counted apart. -v lists each
 * waiting workload's submission, estimate and admission on stderr. --oracle gives the estimator
 * the scenario's true runtimes (sim.sluice.dev/runtime) where set: what error is left is the
 * forward run's own (arrivals it does not assume), not the runtime guess's. --cost instead runs one
 * estimate at the first instant that leaves a workload pending and prints its cost (copy and
 * forward run, CPU time; engine cycles), with the --max-cycles and --horizon-s given (default:
 * the operator's defaults) and every workload expected to run --runtime-ms (default 500: the
 * cost depends on how many ends and cycles there are, not on their values; --oracle: the
 * scenario's runtimes);
 * bench/estimate_cost.sh uses it at 1,000 ClusterQueues and 50,000 workloads.
 */

typedef struct track_s {
    int64_t estimate;  /* ms; -1 none; -2 not asked (admitted at submission or not sampled) */
    int64_t admitted;  /* first admission, ms; -1 never */
    int64_t submitted; /* the instant it was first seen, ms */
    bool done;         /* its runtime was counted */
    bool fresh;        /* submitted this instant, still pending */
    uint64_t seen;     /* the last walk that saw it in the engine */
    /* what estimate_means_add() reads, kept from the admission: the engine forgets a finished
     * workload, so its end is seen as its absence from the walk (owned, NULL when none) */
    char *lq_key, *priority_class, *cq;
} track_t;

static void track_free(track_t *t)
{
    if (t == NULL)
        return;
    free(t->lq_key);
    free(t->priority_class);
    free(t->cq);
    free(t);
}

static char *dup_or_null(const char *s)
{
    char *d = s != NULL ? strdup(s) : NULL;

    if (s != NULL && d == NULL)
        abort();
    return d;
}

typedef struct obs_s {
    util_hmap_t wls; /* key -> track_t * */
    uint64_t walks;  /* engine walks so far (track_t.seen) */
    estimate_means_t means;
    size_t nfresh;
    size_t sample, instants; /* estimate every `sample`th instant with fresh workloads */
    size_t runs, cycles;
    double cpu_s;
    bool cost, cost_done; /* --cost: one run at the first instant, its figures printed */
    bool oracle;          /* --oracle: the scenario's runtimes */
    int64_t max_cycles, horizon_ms;
    int64_t runtime_ms; /* --cost: every workload's expected runtime */
    util_hmap_t truth;  /* --oracle: "ns/name" -> the scenario's runtime (ms) */
} obs_t;

/* --oracle: the scenario's own runtime of the workload when it has one (what a perfect runtime
 * guess would give: what is left of the error is the forward run's), else the observed means. */
static int64_t oracle_runtime(void *ud, const sched_wl_info_t *info)
{
    obs_t *o = ud;
    size_t ms;

    if (util_hmap_get_index(&o->truth, info->key, &ms))
        return (int64_t)ms;
    return estimate_means_runtime(&o->means, info);
}

/* --cost: what the workloads are expected to run does not matter, that they end does. */
static int64_t fixed_runtime(void *ud, const sched_wl_info_t *info)
{
    (void)info;
    return ((const obs_t *)ud)->runtime_ms;
}

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --cost: bytes of heap in use (glibc's count of allocated chunks, their headers included), 0
 * where the C library does not say. */
static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
#else
    return 0;
#endif
}

/* --cost: the estimator's cost over the whole engine as the first instant left it. */
static void cost_run(obs_t *o, int64_t now, const sched_t *s)
{
    estimate_opts_t eo = {.runtime = o->oracle ? oracle_runtime : fixed_runtime,
                          .ud = o,
                          .max_cycles = (size_t)o->max_cycles,
                          .horizon_ms = o->horizon_ms};
    estimate_job_t *j = NULL;
    estimate_t *e;
    err_msg_t msg = {{0}};
    size_t admitted = 0, total = 0;
    double t0 = cpu_now(), t1, t2;
    size_t h0 = heap_in_use(), h1, h2;

    for (size_t i = 0; i < sched_cq_names(s, NULL, 0); i++)
        ;
    if (estimate_prepare(s, now, &eo, &j, &msg) != ERR_OK) {
        fprintf(stderr, "estimate: %s\n", msg.text);
        exit(1);
    }
    t1 = cpu_now();
    h1 = heap_in_use();
    if (estimate_job_run(j, &msg) != ERR_OK) {
        fprintf(stderr, "estimate: %s\n", msg.text);
        exit(1);
    }
    t2 = cpu_now();
    h2 = heap_in_use();
    e = estimate_job_take(j);
    estimate_job_free(j);
    {
        void *v;
        size_t pos = 0;
        while (util_hmap_next(&o->wls, &pos, NULL, &v)) {
            total++;
            admitted += ((track_t *)v)->admitted >= 0;
        }
    }
    printf("ClusterQueues %zu, workloads %zu (%zu admitted, %zu pending)\n",
           sched_cq_names(s, NULL, 0), total, admitted, e->stats.pending);
    printf("estimated %zu of %zu; %zu engine cycles over %zu instants (virtual %.1f s)%s\n",
           e->stats.estimated, e->stats.pending, e->stats.cycles, e->stats.instants,
           (double)(e->stats.reached - now) / 1000.0,
           e->stats.truncated ? ", cycle budget spent" : "");
    printf("CPU: copy and runtimes %.0f ms, forward run %.0f ms (%.3f ms per cycle)\n",
           (t1 - t0) * 1000, (t2 - t1) * 1000,
           e->stats.cycles ? (t2 - t1) * 1000 / (double)e->stats.cycles : 0.0);
    if (h0 > 0) /* the copy: what the job holds once prepared, and after its run */
        printf("heap: engine copy %zu bytes (%zu per pending workload), %zu after the run; in use "
               "before the copy (the simulator and its engine) %zu\n",
               h1 - h0, e->stats.pending ? (h1 - h0) / e->stats.pending : 0, h2 - h0, h0);
    estimate_free(e);
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
        t->estimate = -2;
        t->admitted = -1;
        t->submitted = w->now;
        t->fresh = info->state == SCHED_WL_PENDING && info->cluster_queue != NULL;
        o->nfresh += t->fresh;
    }
    t->seen = o->walks;
    if ((info->state == SCHED_WL_ADMITTED || info->state == SCHED_WL_EVICTING) && t->admitted < 0) {
        t->admitted = info->admitted_at;
        t->lq_key = dup_or_null(info->local_queue_key);
        t->priority_class = dup_or_null(info->priority_class);
        t->cq = dup_or_null(info->cluster_queue);
    }
    return true;
}

/* Admitted workloads the walk did not see have finished (the engine forgets them): their
 * runtime is learnt at this instant, as when the engine reported them FINISHED. */
static void learn_finished(obs_t *o, int64_t now)
{
    size_t pos = 0;
    void *v;

    while (util_hmap_next(&o->wls, &pos, NULL, &v)) {
        track_t *t = v;
        sched_wl_info_t info = {0};
        if (t->seen == o->walks || t->done || t->admitted < 0)
            continue;
        t->done = true;
        info.local_queue_key = t->lq_key;
        info.priority_class = t->priority_class;
        info.cluster_queue = t->cq;
        if (estimate_means_add(&o->means, &info, now - t->admitted) != ERR_OK)
            abort();
    }
}

static void on_instant(void *ud, sim_ms_t now, const sched_t *s)
{
    obs_t *o = ud;
    walk_t w = {o, (int64_t)now};
    estimate_opts_t eo = {.runtime = estimate_means_runtime, .ud = &o->means};

    if (o->oracle) {
        eo.runtime = oracle_runtime;
        eo.ud = o;
    }
    estimate_t *e = NULL;
    err_msg_t msg = {{0}};
    size_t pos = 0;
    void *v;
    bool sampled;
    clock_t c0;

    if (o->cost_done)
        return;
    o->nfresh = 0;
    o->walks++;
    sched_workloads_unordered(s, on_wl, &w);
    learn_finished(o, (int64_t)now);
    if (o->nfresh == 0)
        return;
    if (o->cost) {
        cost_run(o, (int64_t)now, s);
        o->cost_done = true;
        return;
    }
    sampled = o->instants++ % o->sample == 0;
    if (sampled) {
        c0 = clock();
        if (estimate_run(s, (int64_t)now, &eo, &e, &msg) != ERR_OK) {
            fprintf(stderr, "estimate at %lld ms: %s\n", (long long)now, msg.text);
            exit(1);
        }
        o->cpu_s += (double)(clock() - c0) / CLOCKS_PER_SEC;
        o->runs++;
        o->cycles += e->stats.cycles;
    }
    while (util_hmap_next(&o->wls, &pos, NULL, &v)) {
        track_t *t = v;
        if (!t->fresh)
            continue;
        t->fresh = false;
        if (sampled)
            t->estimate = -1;
    }
    for (size_t i = 0; e != NULL && i < e->len; i++) {
        track_t *t = util_hmap_get(&o->wls, e->entries[i].key);
        if (t != NULL && t->submitted == (int64_t)now && t->estimate == -1)
            t->estimate = e->entries[i].start;
    }
    estimate_free(e);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The p-quantile (nearest rank) in seconds, or -1 when there is nothing. */
static double pct(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return -1;
    qsort(v, n, sizeof(*v), cmp_i64);
    return (double)v[(size_t)(p * (double)(n - 1) + 0.5)] / 1000.0;
}

static void cell(double x)
{
    if (x == -1)
        printf(" %9s", "-");
    else
        printf(" %9.0f", x);
}

int main(int argc, char **argv)
{
    size_t sample = 1;
    bool verbose = false, cost = false, oracle = false;
    int64_t max_cycles = 0, horizon_ms = 0, runtime_ms = 500;
    int a = 1;

    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "-v") == 0) {
            verbose = true;
        } else if (strcmp(argv[a], "--oracle") == 0) {
            oracle = true;
        } else if (strcmp(argv[a], "--cost") == 0) {
            cost = true;
        } else if (strcmp(argv[a], "--max-cycles") == 0 && a + 1 < argc) {
            max_cycles = strtoll(argv[++a], NULL, 10);
        } else if (strcmp(argv[a], "--runtime-ms") == 0 && a + 1 < argc) {
            runtime_ms = strtoll(argv[++a], NULL, 10);
        } else if (strcmp(argv[a], "--horizon-s") == 0 && a + 1 < argc) {
            horizon_ms = strtoll(argv[++a], NULL, 10) * 1000;
        } else if (strcmp(argv[a], "--sample") == 0 && a + 1 < argc) {
            sample = (size_t)strtoul(argv[++a], NULL, 10);
            if (sample == 0)
                sample = 1;
        } else {
            fprintf(
                stderr,
                "usage: estimate_accuracy [-v] [--oracle] [--sample N] [--cost [--max-cycles N] "
                "[--horizon-s S] [--runtime-ms MS]] SCENARIO.yaml...\n");
            return 2;
        }
    }
    /* seconds: the wait of those that waited, the estimate's absolute error, its signed
     * median (negative: the estimate was too early) */
    if (!cost)
        printf("%-28s %6s %6s %7s %8s %9s %9s %9s %9s %6s %8s %8s\n", "scenario", "wls", "waited",
               "no-est", "at-sub", "wait p50", "|err| p50", "|err| p90", "bias p50", "runs",
               "cycles", "cpu s");
    for (; a < argc; a++) {
        sim_scenario_t sc;
        sim_rec_t rec;
        sim_options_t opts = {0};
        err_msg_t msg = {{0}};
        obs_t o = {.sample = sample,
                   .cost = cost,
                   .max_cycles = max_cycles,
                   .horizon_ms = horizon_ms,
                   .runtime_ms = runtime_ms,
                   .oracle = oracle};
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
        util_hmap_init(&o.truth, 0);
        estimate_means_init(&o.means, 0);
        for (size_t i = 0; oracle && i < sc.ndocs; i++) {
            const sim_doc_t *d = &sc.docs[i];
            const object_meta_t *m = object_meta_const(&d->obj);
            char key[600];
            if (!d->has_runtime || m == NULL || m->name == NULL || d->runtime < 0)
                continue;
            snprintf(key, sizeof(key), "%s/%s", m->namespace ? m->namespace : "default", m->name);
            if (util_hmap_put_index(&o.truth, key, (size_t)d->runtime) != ERR_OK)
                abort();
        }
        sim_rec_init(&rec);
        opts.on_instant = on_instant;
        opts.instant_ud = &o;
        if (sim_run(&sc, &opts, &rec, &msg) != ERR_OK) {
            fprintf(stderr, "%s: %s\n", argv[a], msg.text);
            return 1;
        }
        if (cost) { /* its figures are printed: no accuracy table */
            void *tv;
            size_t tp = 0;
            while (util_hmap_next(&o.wls, &tp, NULL, &tv))
                track_free(tv);
            estimate_means_fini(&o.means);
            util_hmap_fini(&o.truth);
            util_hmap_fini(&o.wls);
            sim_rec_fini(&rec);
            sim_scenario_fini(&sc);
            continue;
        }
        err = calloc(util_hmap_len(&o.wls) + 1, sizeof(*err));
        bias = calloc(util_hmap_len(&o.wls) + 1, sizeof(*bias));
        wait = calloc(util_hmap_len(&o.wls) + 1, sizeof(*wait));
        if (err == NULL || bias == NULL || wait == NULL)
            abort();
        while (util_hmap_next(&o.wls, &pos, &k, &v)) {
            track_t *t = v;
            total++;
            if (verbose && t->estimate != -2)
                fprintf(stderr, "%s: submitted %lld s, estimate %lld s, admitted %lld s\n", k,
                        (long long)t->submitted / 1000,
                        t->estimate < 0 ? -1LL : (long long)t->estimate / 1000,
                        t->admitted < 0 ? -1LL : (long long)t->admitted / 1000);
            if (t->estimate == -2) {
                at_sub += t->admitted == t->submitted;
                track_free(t);
                continue;
            }
            if (t->admitted < 0) { /* never admitted in the run */
                track_free(t);
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
            track_free(t);
        }
        {
            const char *base = strrchr(argv[a], '/');
            printf("%-28s %6zu %6zu %7zu %8zu", base ? base + 1 : argv[a], total, nwait, none,
                   at_sub);
            cell(pct(wait, nwait, 0.5));
            cell(pct(err, n, 0.5));
            cell(pct(err, n, 0.9));
            cell(pct(bias, n, 0.5));
            printf(" %6zu %8zu %8.1f\n", o.runs, o.cycles, o.cpu_s);
        }
        free(err);
        free(bias);
        free(wait);
        estimate_means_fini(&o.means);
        util_hmap_fini(&o.truth);
        util_hmap_fini(&o.wls);
        sim_rec_fini(&rec);
        sim_scenario_fini(&sc);
    }
    return 0;
}
