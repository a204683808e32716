/* engine_cost -- what the engine (lib/sched) holds per Workload, and what the start-time
 * estimate's copy of it (sched_clone) costs, measured by the heap's own count.
 *
 *   engine_cost [N]
 *
 * Builds Kueue's large-scale shape (10 cohorts x 100 ClusterQueues, each with its namespace and
 * LocalQueue, as bench/bench_sched) and feeds it N Workloads (default 50,000) named and sized as
 * bench/scale_runner creates them (35 small : 11 medium : 4 large per ClusterQueue, one pod set
 * of one pod asking for cpu), as the operator feeds them: pending (a new Workload), admitted (a
 * Workload read back with status.admission and QuotaReserved, as at a restart) and finished
 * (pending ones, then each finished). For each it prints the heap bytes per Workload (glibc
 * mallinfo2(): the allocator's own chunk sizes, so malloc's overhead and rounding are counted)
 * held by the engine, and by sched_clone(SCHED_CLONE_RELEASE_HOLDS)
 * of that engine (the start-time estimate's copy, lib/obs/estimate.c) while both live.
 * docs/performance.md (stop 31). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOHORTS 10
#define NCQS     100 /* per cohort */

static size_t heap_used(void)
{
    struct mallinfo2 mi = mallinfo2();

    return mi.uordblks + mi.hblkhd;
}

static void check(err_t rc, const err_msg_t *m)
{
    if (rc != ERR_OK) {
        fprintf(stderr, "engine_cost: %s\n", m->text);
        exit(1);
    }
}

/* ClusterQueue (also namespace and LocalQueue) `q` of the shape, as scale_runner names it. */
static void cq_name(size_t q, char *buf, size_t cap)
{
    snprintf(buf, cap, "cq-0-%zu-cohort-%zu", q % NCQS, q / NCQS);
}

static sched_t *engine(void)
{
    sched_t *s = sched_new(NULL);
    err_msg_t m;
    flavor_t f;
    char name[64], cohort[32], ns[64];

    if (s == NULL)
        exit(1);
    memset(&f, 0, sizeof(f));
    f.meta.name = (char *)"rf";
    check(sched_flavor_upsert(s, &f, &m), &m);
    for (size_t q = 0; q < NCOHORTS * NCQS; q++) {
        char *cov[1] = {(char *)"cpu"};
        resource_quota_t rq = {.name = (char *)"cpu",
                               .nominal = quantity_from_int(20, QUANTITY_DECIMAL_SI),
                               .has_borrowing_limit = true,
                               .borrowing_limit = quantity_from_int(100, QUANTITY_DECIMAL_SI)};
        flavor_quotas_t fq = {.name = (char *)"rf", .resources = &rq, .nresources = 1};
        resource_group_t rg = {.covered = cov, .ncovered = 1, .flavors = &fq, .nflavors = 1};
        cluster_queue_t cq;
        local_queue_t lq;
        namespace_t nso;

        cq_name(q, name, sizeof(name));
        snprintf(cohort, sizeof(cohort), "cohort-%zu", q / NCQS);
        snprintf(ns, sizeof(ns), "%s", name);
        memset(&nso, 0, sizeof(nso));
        nso.meta.name = ns;
        check(sched_namespace_upsert(s, &nso, &m), &m);
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
        memset(&lq, 0, sizeof(lq));
        lq.meta.name = name;
        lq.meta.namespace = ns;
        lq.cluster_queue = name;
        check(sched_lq_upsert(s, &lq, &m), &m);
    }
    return s;
}

typedef enum { ST_PENDING, ST_ADMITTED, ST_FINISHED } state_t;

/* Workload `i` of the shape into the engine, pending or (ST_ADMITTED) read back admitted. */
static void feed(sched_t *s, size_t i, state_t st)
{
    static const struct {
        const char *name;
        int prio, cpu;
    } cls[3] = {{"small", 50, 1}, {"medium", 100, 5}, {"large", 200, 20}};
    size_t q = i % (NCOHORTS * NCQS), r = i / (NCOHORTS * NCQS), k = r % 50;
    int c = k < 35 ? 0 : k < 46 ? 1 : 2;
    char ns[64], name[96];
    resource_t req = {.name = (char *)"cpu",
                      .value = quantity_from_int(cls[c].cpu, QUANTITY_DECIMAL_SI)};
    kv_t flv = {(char *)"cpu", (char *)"rf"};
    pod_set_assignment_t psa = {.name = (char *)"main",
                                .flavors = {&flv, 1},
                                .usage = {&req, 1},
                                .has_count = true,
                                .count = 1};
    admission_t adm = {.cluster_queue = ns, .assignments = &psa, .nassignments = 1};
    pod_set_t ps;
    workload_t wl;
    sched_wl_opts_t o = {.created = (int64_t)i, .seq = i, .admitted_at = (int64_t)i};
    err_msg_t m;

    cq_name(q, ns, sizeof(ns));
    snprintf(name, sizeof(name), "%s-0-%zu-0", cls[c].name, r);
    memset(&ps, 0, sizeof(ps));
    ps.name = (char *)"main";
    ps.count = 1;
    ps.pod_requests.items = &req;
    ps.pod_requests.len = 1;
    memset(&wl, 0, sizeof(wl));
    wl.meta.name = name;
    wl.meta.namespace = ns;
    wl.queue_name = ns;
    wl.has_priority = true;
    wl.priority = cls[c].prio;
    wl.active = true;
    wl.pod_sets = &ps;
    wl.npod_sets = 1;
    if (st == ST_ADMITTED) {
        wl.admission = &adm;
        wl.conditions.quota_reserved = true;
        wl.conditions.admitted = true;
    }
    check(sched_workload_upsert(s, &wl, &o, &m), &m);
    if (st == ST_FINISHED) {
        char key[160];
        snprintf(key, sizeof(key), "%s/%s", ns, name);
        check(sched_workload_finish(s, key, (int64_t)i, &m), &m);
    }
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 50000;
    static const char *names[] = {"pending", "admitted", "finished"};

    if (n == 0) {
        fprintf(stderr, "usage: engine_cost [N > 0]\n");
        return 2;
    }
    printf("sizeof wl_t %zu, wps_t %zu, req_t %zu; %d ClusterQueues, %zu Workloads\n", sizeof(wl_t),
           sizeof(wps_t), sizeof(req_t), NCOHORTS * NCQS, n);
    printf("%-9s %14s %14s\n", "state", "engine B/wl", "copy B/wl");
    for (int st = ST_PENDING; st <= ST_FINISHED; st++) {
        sched_t *s = engine(), *c;
        size_t before, mid, after, empty;

        malloc_trim(0);
        before = heap_used();
        for (size_t i = 0; i < n; i++)
            feed(s, i, (state_t)st);
        mid = heap_used();
        c = sched_clone(s, SCHED_CLONE_RELEASE_HOLDS);
        if (c == NULL)
            return 1;
        after = heap_used();
        /* The copy without the engine's objects: a copy of an engine without Workloads. */
        {
            sched_t *e = engine(), *ec;
            size_t e0 = heap_used(), e1;
            ec = sched_clone(e, SCHED_CLONE_RELEASE_HOLDS);
            if (ec == NULL)
                return 1;
            e1 = heap_used();
            sched_free(ec);
            sched_free(e);
            empty = e1 - e0;
        }
        printf("%-9s %14.1f %14.1f\n", names[st], ((double)mid - (double)before) / (double)n,
               ((double)after - (double)mid - (double)empty) / (double)n);
        sched_free(c);
        sched_free(s);
    }
    return 0;
}
