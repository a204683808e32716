/* bench_sched -- Kueue's large-scale scheduler shape driven through the engine in virtual time. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/*
 * Shape (reference §8, test/performance/scheduler configs/large-scale): 10 cohorts x 100
 * ClusterQueues, each nominal 20 cpu, borrowingLimit 100, reclaimWithinCohort Any,
 * withinClusterQueue LowerPriority, BestEffortFIFO; per CQ 50 workloads: 35 small (1 cpu, prio
 * 50, runtime 150 ms, one every 60 ms), 11 medium (5 cpu, prio 100, 350 ms, one every 300 ms),
 * 4 large (20 cpu, prio 200, 700 ms, one every 700 ms). Workloads finish `runtime` after their
 * admission (virtual ms); preempted ones are evicted at once and run again when readmitted.
 *
 * Usage: bench_sched [cohorts] [cqs-per-cohort] [live STRETCH WRITES PACE [LAG]]. Prints
 * admissions, preemptions, CPU time per admission decision (CLOCK_PROCESS_CPUTIME_ID around the
 * engine loop only) and peak RSS.
 *
 * `live` drives the engine the way `sluice run` meets it on a slow API server (bench/scale.sh's
 * large-scale run: 50,000 creates took 386 s, admission writes landed at about 130 a second):
 * creations come STRETCH times slower than Kueue's schedule, an admission starts its runtime only
 * once its write is out (WRITES per second, first come first served), cycles run at most every
 * PACE ms and not while the writes queued reach past the next pace tick. The backlog of pending
 * workloads this builds up is what makes a live cycle cost more than a simulated one. LAG ms
 * (default 0) is how late the operator sees a release: a finish (the runner's Finished patch
 * landed about 1.5 s after it was sent) and a preemption victim's eviction (written, then seen
 * on the watch), which stays EVICTING, holding its quota, until then.
 */

typedef struct ev_s {
    int64_t t;
    int kind; /* 0 = create, 1 = finish, 2 = pace tick, 3 = admission write out, 4 = victim
                 released */
    int wl;
    uint32_t gen;
} ev_t;

typedef struct heap_s {
    ev_t *a;
    size_t n, cap;
} heap_t;

static int ev_less(const ev_t *x, const ev_t *y)
{
    if (x->t != y->t)
        return x->t < y->t;
    if (x->kind != y->kind)
        return x->kind > y->kind; /* finishes before creations at the same instant */
    return x->wl < y->wl;
}

static void push(heap_t *h, ev_t e)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 1024;
        h->a = realloc(h->a, h->cap * sizeof(ev_t));
        if (h->a == NULL)
            abort();
    }
    size_t i = h->n++;
    while (i > 0 && ev_less(&e, &h->a[(i - 1) / 2])) {
        h->a[i] = h->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->a[i] = e;
}

static ev_t pop(heap_t *h)
{
    ev_t top = h->a[0], last = h->a[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        const ev_t *best = &last;
        if (l < h->n && ev_less(&h->a[l], best)) {
            m = l;
            best = &h->a[l];
        }
        if (l + 1 < h->n && ev_less(&h->a[l + 1], best))
            m = l + 1;
        if (m == i)
            break;
        h->a[i] = h->a[m];
        i = m;
    }
    if (h->n)
        h->a[i] = last;
    return top;
}

typedef struct wlinfo_s {
    char key[48];
    char lq[32];
    int cls;
    uint32_t gen;
} wlinfo_t;

static const struct {
    const char *name;
    int count, interval, runtime, prio, cpu;
} classes[3] = {{"small", 35, 60, 150, 50, 1},
                {"medium", 11, 300, 350, 100, 5},
                {"large", 4, 700, 700, 200, 20}};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(err_t rc, const err_msg_t *m)
{
    if (rc != ERR_OK) {
        fprintf(stderr, "bench_sched: %s\n", m->text);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int ncohorts = argc > 1 ? atoi(argv[1]) : 10;
    int ncq = argc > 2 ? atoi(argv[2]) : 100;
    bool live = argc > 6 && strcmp(argv[3], "live") == 0;
    int64_t stretch = live ? atoll(argv[4]) : 1, writes = live ? atoll(argv[5]) : 0;
    int64_t pace = live ? atoll(argv[6]) : 0, writes_out = 0; /* when the queued writes are out */
    int64_t lag = live && argc > 7 ? atoll(argv[7]) : 0;
    if (live && (stretch < 1 || writes < 1 || pace < 1 || lag < 0)) {
        fprintf(stderr, "bench_sched: live needs STRETCH >= 1, WRITES >= 1, PACE >= 1, LAG >= 0\n");
        return 2;
    }
    sched_t *s = sched_new(NULL);
    err_msg_t m;
    char name[64], cohort[32];
    flavor_t f;
    memset(&f, 0, sizeof(f));
    f.meta.name = (char *)"rf";
    check(sched_flavor_upsert(s, &f, &m), &m);
    size_t nwl = (size_t)ncohorts * (size_t)ncq * 50;
    wlinfo_t *wls = calloc(nwl, sizeof(wlinfo_t));
    heap_t h = {0};
    size_t w = 0;
    for (int c = 0; c < ncohorts; c++) {
        snprintf(cohort, sizeof(cohort), "cohort-%d", c);
        for (int q = 0; q < ncq; q++) {
            snprintf(name, sizeof(name), "cq-0-%d-%s", q, cohort);
            char *cov[1] = {(char *)"cpu"};
            resource_quota_t rq = {.name = (char *)"cpu",
                                   .nominal = quantity_from_int(20, QUANTITY_DECIMAL_SI),
                                   .has_borrowing_limit = true,
                                   .borrowing_limit = quantity_from_int(100, QUANTITY_DECIMAL_SI)};
            flavor_quotas_t fq = {.name = (char *)"rf", .resources = &rq, .nresources = 1};
            resource_group_t rg = {.covered = cov, .ncovered = 1, .flavors = &fq, .nflavors = 1};
            cluster_queue_t cq;
            memset(&cq, 0, sizeof(cq));
            cq.meta.name = name;
            cq.groups = &rg;
            cq.ngroups = 1;
            cq.cohort = cohort;
            cq.namespace_selector.present = true;
            cq.when_can_preempt = FUNGIBILITY_TRY_NEXT_FLAVOR;
            cq.reclaim_within_cohort = PREEMPT_ANY;
            cq.within_cluster_queue = PREEMPT_LOWER_PRIORITY;
            check(sched_cq_upsert(s, &cq, &m), &m);
            local_queue_t lq;
            memset(&lq, 0, sizeof(lq));
            lq.meta.name = name;
            lq.meta.namespace = (char *)"bench";
            lq.cluster_queue = name;
            check(sched_lq_upsert(s, &lq, &m), &m);
            for (int k = 0; k < 3; k++) {
                for (int i = 0; i < classes[k].count; i++, w++) {
                    snprintf(wls[w].key, sizeof(wls[w].key), "%s-%d-%d-%d", classes[k].name, q, c,
                             i);
                    snprintf(wls[w].lq, sizeof(wls[w].lq), "%s", name);
                    wls[w].cls = k;
                    push(&h,
                         (ev_t){(int64_t)(i + 1) * classes[k].interval * stretch, 0, (int)w, 0});
                }
            }
        }
    }
    sched_decisions_t out;
    sched_decisions_init(&out);
    size_t admissions = 0, preemptions = 0, cycles = 0, finished = 0;
    char key[96];
    double t0 = cpu_now();
    if (live)
        push(&h, (ev_t){pace, 2, 0, 0});
    while (h.n > 0 && (!live || finished < nwl)) {
        int64_t now = h.a[0].t;
        bool tick = !live;
        while (h.n > 0 && h.a[0].t == now) {
            ev_t e = pop(&h);
            wlinfo_t *wi = &wls[e.wl];
            snprintf(key, sizeof(key), "bench/%s", wi->key);
            if (e.kind == 2) {
                tick = writes_out <= now + pace; /* sluice run: no cycle behind a write backlog */
                push(&h, (ev_t){now + pace, 2, 0, 0});
                continue;
            }
            if (e.kind == 3) {
                if (e.gen == wi->gen)
                    push(&h, (ev_t){now + classes[wi->cls].runtime + lag, 1, e.wl, wi->gen});
                continue;
            }
            if (e.kind == 4) {
                check(sched_evicted(s, key, now, &m), &m); /* the victim's release seen */
                continue;
            }
            if (e.kind == 1) {
                if (e.gen != wi->gen)
                    continue; /* stale: preempted since */
                check(sched_workload_finish(s, key, now, &m), &m);
                finished++;
                continue;
            }
            resource_t req = {.name = (char *)"cpu",
                              .value =
                                  quantity_from_int(classes[wi->cls].cpu, QUANTITY_DECIMAL_SI)};
            pod_set_t ps;
            memset(&ps, 0, sizeof(ps));
            ps.name = (char *)"main";
            ps.count = 1;
            ps.pod_requests.items = &req;
            ps.pod_requests.len = 1;
            workload_t wl;
            memset(&wl, 0, sizeof(wl));
            wl.meta.name = wi->key;
            wl.meta.namespace = (char *)"bench";
            wl.queue_name = wi->lq;
            wl.has_priority = true;
            wl.priority = classes[wi->cls].prio;
            wl.active = true;
            wl.pod_sets = &ps;
            wl.npod_sets = 1;
            sched_wl_opts_t o = {.created = now};
            check(sched_workload_upsert(s, &wl, &o, &m), &m);
        }
        for (; tick;) {
            size_t before = out.len;
            check(sched_cycle(s, now, &out, &m), &m);
            cycles++;
            if (out.len == before)
                break;
            for (size_t i = before; i < out.len; i++) {
                sched_decision_t *d = &out.items[i];
                if (d->kind == SCHED_DECISION_ADMIT)
                    admissions++;
                else if (d->kind == SCHED_DECISION_PREEMPT) {
                    preemptions++;
                    if (lag == 0)
                        check(sched_evicted(s, d->workload, now, &m), &m);
                }
            }
            /* schedule finishes for this batch's admissions */
            for (size_t i = before; i < out.len; i++) {
                sched_decision_t *d = &out.items[i];
                if (d->kind != SCHED_DECISION_ADMIT && d->kind != SCHED_DECISION_PREEMPT)
                    continue;
                /* workload index from its key: class-q-c-i */
                const char *base = d->workload + strlen("bench/");
                int k = base[0] == 's' ? 0 : base[0] == 'm' ? 1 : 2;
                int q, c, ii;
                if (sscanf(strchr(base, '-') + 1, "%d-%d-%d", &q, &c, &ii) != 3)
                    abort();
                size_t widx = ((size_t)c * (size_t)ncq + (size_t)q) * 50 +
                              (k == 0   ? 0
                               : k == 1 ? 35
                                        : 46) +
                              (size_t)ii;
                wlinfo_t *wi = &wls[widx];
                wi->gen++;
                if (d->kind == SCHED_DECISION_ADMIT && !live)
                    push(&h, (ev_t){now + classes[k].runtime, 1, (int)widx, wi->gen});
                if (d->kind == SCHED_DECISION_PREEMPT && lag > 0)
                    push(&h, (ev_t){now + lag, 4, (int)widx, wi->gen});
                if (d->kind == SCHED_DECISION_ADMIT && live) {
                    writes_out = (writes_out > now ? writes_out : now) + 1000 / writes;
                    push(&h, (ev_t){writes_out, 3, (int)widx, wi->gen});
                }
            }
            sched_decisions_clear(&out);
        }
    }
    double t1 = cpu_now();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("shape: %d cohorts x %d CQs, %zu workloads\n", ncohorts, ncq, nwl);
    printf("admissions: %zu, preemptions: %zu, finished: %zu, cycles: %zu\n", admissions,
           preemptions, finished, cycles);
    printf("cpu: %.3f s total, %.2f us per admission decision, %.3f ms per cycle\n", t1 - t0,
           (t1 - t0) * 1e6 / (double)(admissions ? admissions : 1),
           (t1 - t0) * 1e3 / (double)(cycles ? cycles : 1));
    printf("peak rss: %ld KiB\n", ru.ru_maxrss);
    sched_decisions_fini(&out);
    sched_free(s);
    free(wls);
    free(h.a);
    return finished == nwl ? 0 : 1;
}
