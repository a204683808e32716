/* test_sched_clone -- sched_clone(): the copy decides as the original would, owns all it holds
 * (sharing the immutable strings), and out of memory gives NULL without a leak; the engine's
 * shared strings (explanations, keys, queue names). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"
#include "sched_fixtures.h"

#define OOM_WRAP_STRDUP
#include "oom_wrap.h"

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One engine with a bit of everything a decision reads: two flavors (one tainted), a cohort
 * with its own quota, ClusterQueues that borrow and preempt, priority classes, namespaces with
 * labels, admitted workloads (one with a maximum execution time), a preemption in flight
 * (EVICTING victim, pinned preemptor), pending and parked workloads.
 */
static sched_t *build(void)
{
    sched_t *s = sched_new(NULL);
    sched_decisions_t d;
    char hi[] = "hi";
    workload_priority_class_t wpc = {.meta = {.name = hi}, .value = 100};
    fx_cq_opts_t a = {.cohort = "co",
                      .within = PREEMPT_LOWER_PRIORITY,
                      .reclaim = PREEMPT_ANY,
                      .ns_label = "team=ml"};
    fx_cq_opts_t b = {.cohort = "co", .try_next_on_borrow = true};

    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&d);
    ck_assert_int_eq(sched_wpc_upsert(s, &wpc, NULL), ERR_OK);
    fx_ns(s, "ns", "team=ml");
    fx_flavor(s, "f", "pool=a", NULL);
    fx_flavor(s, "spot", "pool=b", "spot=true:NoSchedule");
    fx_cohort(s, "co", NULL, "cpu|f:2", NULL);
    fx_pair(s, "cpu|f:4/b2|spot:2", &a, "cpu|f:2|spot:2", &b);
    fx_wl(s, "ns/a1", "qa", 1, 1, "cpu=2", NULL);
    fx_wl(s, "ns/a2", "qa", 1, 2, "cpu=2", &(fx_wl_opts_t){.max_exec_seconds = 50});
    fx_wl(s, "ns/b1", "qb", 0, 3, "cpu=2", &(fx_wl_opts_t){.tolerations = "spot:NoSchedule"});
    fx_wl(s, "ns/b2", "qb", 0, 4, "cpu=2", &(fx_wl_opts_t){.count = 2});
    fx_run(s, 0, &d, true);
    fx_wl(s, "ns/a3", "qa", 5, 10, "cpu=2", &(fx_wl_opts_t){.wpc = "hi"});
    fx_wl(s, "ns/a4", "qa", 0, 11, "cpu=6", NULL);
    fx_wl(s, "ns/b3", "qb", 0, 12, "cpu=1", &(fx_wl_opts_t){.node_selector = "pool=b"});
    fx_run(s, 1000, &d, false); /* victims stay EVICTING */
    sched_decisions_fini(&d);
    return s;
}

static const char *const keys[] = {"ns/a1", "ns/a2", "ns/a3", "ns/a4", "ns/b1", "ns/b2", "ns/b3"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Drive an engine through the same steps: victims stopped, ends, the max execution time;
 * return its decisions as text. */
static void drive(sched_t *s, char *out, size_t cap)
{
    sched_decisions_t d;
    size_t n = 0;

    sched_decisions_init(&d);
    out[0] = '\0';
    for (size_t k = 0; k < NKEYS; k++)
        if (fx_state(s, keys[k]) == SCHED_WL_EVICTING)
            ck_assert_int_eq(sched_evicted(s, keys[k], 2000, NULL), ERR_OK);
    fx_run(s, 2000, &d, true);
    for (int64_t t = 10000; t <= 100000; t += 10000) {
        for (size_t k = 0; k < NKEYS; k++)
            if (fx_state(s, keys[k]) == SCHED_WL_ADMITTED && t == 30000)
                ck_assert_int_eq(sched_workload_finish(s, keys[k], t, NULL), ERR_OK);
        fx_run(s, t, &d, true);
    }
    for (size_t i = 0; i < d.len; i++)
        n += (size_t)snprintf(out + n, cap - n, "%d %s %s %lld;", (int)d.items[i].kind,
                              d.items[i].workload, d.items[i].cluster_queue,
                              (long long)d.items[i].time);
    for (size_t k = 0; k < NKEYS; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s=%d,", keys[k], fx_state(s, keys[k]));
    n += (size_t)snprintf(out + n, cap - n, "use=%lld", (long long)fx_usage(s, "a", "f", "cpu"));
    ck_assert_uint_lt(n, cap);
    sched_decisions_fini(&d);
}

START_TEST(decides_as_the_original)
{
    sched_t *s = build(), *c = sched_clone(s, 0);
    char want[4096], got[4096];

    ck_assert_ptr_nonnull(c);
    for (size_t k = 0; k < NKEYS; k++)
        ck_assert_int_eq(fx_state(c, keys[k]), fx_state(s, keys[k]));
    ck_assert_int_eq(fx_usage(c, "a", "f", "cpu"), fx_usage(s, "a", "f", "cpu"));
    ck_assert_int_eq(sched_next_deadline(c, 1000), sched_next_deadline(s, 1000));
    ck_assert_str_eq(fx_message(c, "ns/a4"), fx_message(s, "ns/a4"));
    /* the original first, freed, then the copy: nothing of one reaches the other */
    drive(s, want, sizeof(want));
    sched_free(s);
    drive(c, got, sizeof(got));
    ck_assert_str_eq(got, want);
    ck_assert_ptr_nonnull(strstr(want, "0 ns/b2 b 30000;")); /* the run admits something new */
    sched_free(c);
}
END_TEST

/* A finished workload is forgotten by the engine, so no copy carries it, and a copy made after
 * the finish decides as the original does. */
START_TEST(finished_in_no_copy_decides_the_same)
{
    sched_t *s = build(), *c;
    const char *done = NULL;
    char got[4096], orig[4096];

    for (size_t k = 0; k < NKEYS && done == NULL; k++)
        if (fx_state(s, keys[k]) == SCHED_WL_ADMITTED)
            done = keys[k];
    ck_assert_ptr_nonnull(done);
    ck_assert_int_eq(sched_workload_finish(s, done, 1500, NULL), ERR_OK);
    ck_assert_int_eq(fx_state(s, done), -1);
    c = sched_clone(s, SCHED_CLONE_RELEASE_HOLDS);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(fx_state(c, done), -1);
    for (size_t k = 0; k < NKEYS; k++)
        ck_assert_int_eq(fx_state(c, keys[k]), fx_state(s, keys[k]));
    ck_assert_int_eq(fx_usage(c, "a", "f", "cpu"), fx_usage(s, "a", "f", "cpu"));
    drive(c, got, sizeof(got));
    ck_assert_ptr_nonnull(strstr(got, " b 30000;")); /* the run admits something new */
    drive(s, orig, sizeof(orig));
    ck_assert_str_eq(orig, got);
    sched_free(c);
    sched_free(s);
}
END_TEST

/* A change to the copy leaves the original as it was. */
START_TEST(independent)
{
    sched_t *s = build(), *c = sched_clone(s, 0);
    int before[NKEYS];

    ck_assert_ptr_nonnull(c);
    for (size_t k = 0; k < NKEYS; k++)
        before[k] = fx_state(s, keys[k]);
    ck_assert_int_eq(sched_cq_delete(c, "a", NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_delete(c, "ns/b1", 5000, NULL), ERR_OK);
    fx_wl(c, "ns/new", "qb", 0, 20, "cpu=1", NULL);
    for (size_t k = 0; k < NKEYS; k++)
        ck_assert_int_eq(fx_state(s, keys[k]), before[k]);
    ck_assert_int_eq(fx_state(s, "ns/new"), -1);
    sched_free(c);
    sched_free(s);
}
END_TEST

/* The copy takes references to the original's immutable strings instead of copies, and they
 * outlive the original (ASan: a string freed with it would be read after free below). */
START_TEST(copy_shares_strings)
{
    sched_t *s = build(), *c = sched_clone(s, 0);
    sched_wl_info_t a, b;
    char want[NKEYS][4][512];

    ck_assert_ptr_nonnull(c);
    for (size_t k = 0; k < NKEYS; k++) {
        ck_assert_int_eq(sched_workload_info(s, keys[k], &a, NULL), ERR_OK);
        ck_assert_int_eq(sched_workload_info(c, keys[k], &b, NULL), ERR_OK);
        ck_assert_ptr_eq(a.key, b.key);
        ck_assert_ptr_eq(a.local_queue, b.local_queue);
        ck_assert_ptr_eq(a.local_queue_key, b.local_queue_key);
        ck_assert_ptr_eq(a.priority_class, b.priority_class);
        if (a.message[0] != '\0')
            ck_assert_ptr_eq(a.message, b.message);
        snprintf(want[k][0], sizeof(want[k][0]), "%s", a.key);
        snprintf(want[k][1], sizeof(want[k][1]), "%s", a.local_queue_key);
        snprintf(want[k][2], sizeof(want[k][2]), "%s", a.priority_class ? a.priority_class : "-");
        snprintf(want[k][3], sizeof(want[k][3]), "%s", a.message);
    }
    ck_assert_str_ne(want[3][3], ""); /* ns/a4 waits with an explanation */
    sched_free(s);
    for (size_t k = 0; k < NKEYS; k++) {
        ck_assert_int_eq(sched_workload_info(c, keys[k], &b, NULL), ERR_OK);
        ck_assert_str_eq(b.key, want[k][0]);
        ck_assert_str_eq(b.local_queue_key, want[k][1]);
        ck_assert_str_eq(b.local_queue, strchr(want[k][1], '/') + 1);
        ck_assert_str_eq(b.priority_class ? b.priority_class : "-", want[k][2]);
        ck_assert_str_eq(b.message, want[k][3]);
    }
    sched_free(c);
}
END_TEST

/* Look-alikes parked behind a head that does not fit share its explanation (one string, not a
 * copy each); workloads of one LocalQueue share its key; the strings of queues nobody uses any
 * more are let go as the engine's table grows (ASan: no leak, nothing freed in use). */
START_TEST(workloads_share_strings)
{
    sched_t *s = sched_new(NULL);
    sched_decisions_t d;
    sched_wl_info_t h, o, p;
    char key[64], lq[32];

    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&d);
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "cq", "cpu|f:2", NULL);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "ns/w%d", i);
        fx_wl(s, key, "q", 0, i, "cpu=2", NULL);
    }
    fx_run(s, 0, &d, true); /* w0 admitted; w1 does not fit, w2 and w3 parked behind it */
    ck_assert_int_eq(fx_state(s, "ns/w0"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_workload_info(s, "ns/w1", &h, NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_info(s, "ns/w2", &o, NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_info(s, "ns/w3", &p, NULL), ERR_OK);
    ck_assert_str_ne(h.message, "");
    ck_assert_ptr_eq(o.message, h.message);
    ck_assert_ptr_eq(p.message, h.message);
    ck_assert_ptr_eq(o.local_queue_key, h.local_queue_key);
    ck_assert_str_eq(o.local_queue, "q");
    /* churn: 300 workloads in queues of their own, each deleted again */
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof(key), "ns/c%d", i);
        snprintf(lq, sizeof(lq), "q%d", i);
        fx_wl(s, key, lq, 0, 100 + i, "cpu=1", NULL);
        ck_assert_int_eq(sched_workload_delete(s, key, 200, NULL), ERR_OK);
    }
    ck_assert_uint_lt(util_hmap_len(&s->interned), 200); /* swept as it grew */
    ck_assert_int_eq(sched_workload_info(s, "ns/w3", &p, NULL), ERR_OK);
    ck_assert_str_eq(p.local_queue_key, "ns/q");
    ck_assert_int_eq(sched_workload_finish(s, "ns/w0", 300, NULL), ERR_OK);
    fx_run(s, 300, &d, true);
    ck_assert_int_eq(fx_state(s, "ns/w1"), SCHED_WL_ADMITTED);
    sched_decisions_fini(&d);
    sched_free(s);
}
END_TEST

static void count_request(void *ud, const char *resource, qnano_t total)
{
    (void)resource;
    (void)total;
    (*(int *)ud)++;
}

/* A finished workload is forgotten: not found, not walked, its quota given back; an upsert of it
 * (finished, as the API keeps it) does nothing, nor does one of a finished workload the engine
 * never knew (an operator restart lists it finished); its delete answers ERR_NOT_FOUND (ASan:
 * no leak, nothing freed twice). */
static bool count_wl(const sched_wl_info_t *info, void *ud)
{
    (void)info;
    (*(int *)ud)++;
    return true;
}

START_TEST(finished_is_forgotten)
{
    sched_t *s = build();
    sched_wl_info_t info;
    int n = 0, before = 0, after = 0;
    int64_t use = fx_usage(s, "a", "f", "cpu");

    ck_assert_int_eq(fx_state(s, "ns/a1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_workload_requests(s, "ns/a1", count_request, &n, NULL), ERR_OK);
    ck_assert_int_eq(n, 1);
    sched_workloads_unordered(s, count_wl, &before);
    ck_assert_int_eq(sched_workload_finish(s, "ns/a1", 2000, NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_info(s, "ns/a1", &info, NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_workload_requests(s, "ns/a1", count_request, &n, NULL), ERR_NOT_FOUND);
    sched_workloads_unordered(s, count_wl, &after);
    ck_assert_int_eq(after, before - 1);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), use - 2);
    /* its finished view again: nothing */
    fx_wl(s, "ns/a1", "qa", 1, 1, "cpu=2", &(fx_wl_opts_t){.finished = true});
    ck_assert_int_eq(fx_state(s, "ns/a1"), -1);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), use - 2);
    /* a finished workload never seen: nothing */
    fx_wl(s, "ns/old", "qa", 0, 0, "cpu=1", &(fx_wl_opts_t){.finished = true});
    ck_assert_int_eq(fx_state(s, "ns/old"), -1);
    after = 0;
    sched_workloads_unordered(s, count_wl, &after);
    ck_assert_int_eq(after, before - 1);
    ck_assert_int_eq(sched_workload_delete(s, "ns/a1", 3000, NULL), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_workload_finish(s, "ns/a1", 3000, NULL), ERR_NOT_FOUND);
    /* a pending workload finished by an upsert (finished before it ran) is forgotten too */
    ck_assert_int_eq(fx_state(s, "ns/a4"), SCHED_WL_PENDING);
    fx_wl(s, "ns/a4", "qa", 0, 11, "cpu=6", &(fx_wl_opts_t){.finished = true});
    ck_assert_int_eq(fx_state(s, "ns/a4"), -1);
    sched_free(s);
}
END_TEST

/* A preemptor waiting for its victims (its queue's sticky head) that finishes or is deleted is
 * no longer its queue's head: the queue goes on without it (ASan: the freed workload is never
 * read), and the victim, released, is admitted again. */
START_TEST(sticky_preemptor_forgotten)
{
    for (int del = 0; del < 2; del++) {
        sched_t *s = sched_new(NULL);
        sched_decisions_t d;
        cq_t *cq;

        ck_assert_ptr_nonnull(s);
        sched_decisions_init(&d);
        fx_flavor(s, "f", NULL, NULL);
        fx_cq(s, "cq", "cpu|f:2", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
        fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
        fx_wl(s, "ns/low", "q", 1, 1, "cpu=2", NULL);
        fx_run(s, 0, &d, true);
        ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
        fx_wl(s, "ns/high", "q", 10, 2, "cpu=2", NULL);
        ck_assert_int_eq(sched_cycle(s, 10, &d, NULL), ERR_OK);
        ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_EVICTING);
        cq = util_hmap_get(&s->cq_map, "cq");
        ck_assert_ptr_eq(cq->sticky, util_hmap_get(&s->wl_map, "ns/high"));
        if (del)
            ck_assert_int_eq(sched_workload_delete(s, "ns/high", 20, NULL), ERR_OK);
        else
            ck_assert_int_eq(sched_workload_finish(s, "ns/high", 20, NULL), ERR_OK);
        ck_assert_ptr_null(cq->sticky);
        ck_assert_int_eq(sched_evicted(s, "ns/low", 20, NULL), ERR_OK);
        fx_run(s, 30, &d, true);
        ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_ADMITTED);
        sched_decisions_fini(&d);
        sched_free(s);
    }
}
END_TEST

/* ---- pod sets shared by the engine and its copies (wps_block_t) ---------------------------- */

#define COPY_FLAGS (SCHED_CLONE_RELEASE_HOLDS)

static wl_t *wl_of(const sched_t *s, const char *key)
{
    return util_hmap_get(&s->wl_map, key);
}

/* What a copy of a fresh build() decides when driven: the reference every copy must match. */
static void reference(char *out, size_t cap)
{
    sched_t *s = build(), *c = sched_clone(s, COPY_FLAGS);

    ck_assert_ptr_nonnull(c);
    sched_free(s);
    drive(c, out, cap);
    sched_free(c);
}

/* The engine changes what the copy shares: the reclaimable pods of admitted ns/a3 (in place,
 * after its own copy), the spec of pending ns/a4 (a new block), ns/b3 deleted, ns/a1 finished
 * (their blocks dropped), then every workload finished or deleted and the engine freed. */
static void change_engine(sched_t *s)
{
    fx_wl(s, "ns/a3", "qa", 5, 10, "cpu=2", &(fx_wl_opts_t){.wpc = "hi", .reclaimable = "main:1"});
    fx_wl(s, "ns/a4", "qa", 0, 11, "cpu=1", NULL);
    ck_assert_int_eq(sched_workload_delete(s, "ns/b3", 1500, NULL), ERR_OK);
    sched_workload_finish(s, "ns/a1", 1500, NULL);
    for (size_t k = 0; k < NKEYS; k++)
        sched_workload_delete(s, keys[k], 1600, NULL);
    sched_free(s);
}

/* A copy shares each workload's pod sets with the engine (one block, two references) instead of
 * copying them. The engine changing them in place (reclaimable pods) first takes a copy of its
 * own, and a block outlives the engine's workload -- updated, deleted, finished, the engine
 * freed -- while the copy holds it; the copy then decides as a copy of the untouched original
 * (ASan: nothing read after it is freed, no leak). The other way round too: a copy changing
 * them leaves the engine's. */
START_TEST(pod_sets_shared_with_copy)
{
    sched_t *s = build(), *c = sched_clone(s, COPY_FLAGS);
    wps_t *a3, *a4;
    char want[4096], got[4096];
    int n = 0;

    ck_assert_ptr_nonnull(c);
    reference(want, sizeof(want));
    for (size_t k = 0; k < NKEYS; k++) {
        ck_assert_ptr_nonnull(wl_of(s, keys[k])->ps);
        ck_assert_ptr_eq(wl_of(c, keys[k])->ps, wl_of(s, keys[k])->ps);
        ck_assert(sched__ps_shared(wl_of(s, keys[k])->ps));
    }
    ck_assert_int_eq(fx_state(s, "ns/a3"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a4"), SCHED_WL_PENDING);
    a3 = wl_of(c, "ns/a3")->ps;
    a4 = wl_of(c, "ns/a4")->ps;
    /* reclaimable pods: the engine's pod set changes, the copy's does not */
    fx_wl(s, "ns/a3", "qa", 5, 10, "cpu=2", &(fx_wl_opts_t){.wpc = "hi", .reclaimable = "main:1"});
    ck_assert_ptr_ne(wl_of(s, "ns/a3")->ps, a3);
    ck_assert_int_eq(wl_of(s, "ns/a3")->ps[0].count, 0);
    ck_assert_int_eq(wl_of(s, "ns/a3")->ps[0].reclaim, 1);
    ck_assert_ptr_eq(wl_of(c, "ns/a3")->ps, a3);
    ck_assert_int_eq(a3[0].count, 1);
    ck_assert_int_eq(a3[0].reclaim, 0);
    ck_assert(!sched__ps_shared(a3));
    ck_assert(!sched__ps_shared(wl_of(s, "ns/a3")->ps));
    /* a new spec: a new block for the engine */
    fx_wl(s, "ns/a4", "qa", 0, 11, "cpu=1", NULL);
    ck_assert_ptr_ne(wl_of(s, "ns/a4")->ps, a4);
    ck_assert_ptr_eq(wl_of(c, "ns/a4")->ps, a4);
    ck_assert_int_eq(sched_workload_requests(c, "ns/a4", count_request, &n, NULL), ERR_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(a4[0].nreqs, 1);
    ck_assert_int_eq(a4[0].reqs[0].per_pod, (qnano_t)6 * 1000000000);
    change_engine(s);
    drive(c, got, sizeof(got));
    ck_assert_str_eq(got, want);
    sched_free(c);

    /* the copy changes them (its reclaimable pods), the engine keeps its own */
    s = build();
    c = sched_clone(s, COPY_FLAGS);
    ck_assert_ptr_nonnull(c);
    a3 = wl_of(s, "ns/a3")->ps;
    fx_wl(c, "ns/a3", "qa", 5, 10, "cpu=2", &(fx_wl_opts_t){.wpc = "hi", .reclaimable = "main:1"});
    ck_assert_ptr_ne(wl_of(c, "ns/a3")->ps, a3);
    ck_assert_int_eq(wl_of(c, "ns/a3")->ps[0].count, 0);
    ck_assert_ptr_eq(wl_of(s, "ns/a3")->ps, a3);
    ck_assert_int_eq(a3[0].count, 1);
    sched_free(c);
    reference(want, sizeof(want));
    c = sched_clone(s, COPY_FLAGS);
    ck_assert_ptr_nonnull(c);
    sched_free(s);
    drive(c, got, sizeof(got));
    ck_assert_str_eq(got, want);
    sched_free(c);
}
END_TEST

typedef struct copy_run_s {
    sched_t *c;
    char out[4096];
} copy_run_t;

static void *run_copy(void *ud)
{
    copy_run_t *r = ud;

    drive(r->c, r->out, sizeof(r->out));
    sched_free(r->c); /* the last references to some blocks go on this thread */
    return NULL;
}

/* As the start-time estimate runs it: the copy driven forward and freed on another thread while
 * the engine changes and frees the workloads it shares pod sets with (ASan: no block freed
 * while read, none leaked, whichever thread drops the last reference). */
START_TEST(pod_sets_shared_across_threads)
{
    char want[4096];

    reference(want, sizeof(want));
    for (int round = 0; round < 20; round++) {
        sched_t *s = build();
        copy_run_t r = {.c = sched_clone(s, COPY_FLAGS)};
        pthread_t th;

        ck_assert_ptr_nonnull(r.c);
        ck_assert_int_eq(pthread_create(&th, NULL, run_copy, &r), 0);
        change_engine(s);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
        ck_assert_str_eq(r.out, want);
    }
}
END_TEST

/* Copy on write out of memory: each allocation of the engine's own copy fails in turn; the
 * workload keeps the shared block, unchanged, and nothing leaks (ASan). */
START_TEST(pod_sets_copy_on_write_out_of_memory)
{
    sched_t *s = build(), *c = sched_clone(s, COPY_FLAGS);
    wl_t *w = wl_of(s, "ns/a3");
    wps_t *shared = w->ps;

    ck_assert_ptr_nonnull(c);
    for (long n = 1;; n++) {
        oom_fail_at(n);
        err_t rc = sched__wl_ps_own(w);
        long made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_int_eq(rc, ERR_OK);
            break;
        }
        ck_assert_int_eq(rc, ERR_NOMEM);
        ck_assert_ptr_eq(w->ps, shared);
        ck_assert(sched__ps_shared(shared));
    }
    ck_assert_ptr_ne(w->ps, shared);
    ck_assert_str_eq(w->ps[0].name, shared[0].name);
    ck_assert_int_eq(w->ps[0].count, shared[0].count);
    ck_assert_int_eq(sched__wl_ps_own(w), ERR_OK); /* its own now: kept */
    sched_free(c);
    ck_assert(!sched__ps_shared(w->ps));
    sched_free(s);
}
END_TEST

/* Each allocation of the copy fails in turn: NULL, and (under ASan) no leak. */
START_TEST(out_of_memory)
{
    sched_t *s = build();

    for (long n = 1;; n++) {
        oom_fail_at(n);
        sched_t *c = sched_clone(s, 0);
        long made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_ptr_nonnull(c);
            sched_free(c);
            break;
        }
        ck_assert_ptr_null(c);
    }
    sched_free(s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sched_clone");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, decides_as_the_original);
    tcase_add_test(tc, finished_in_no_copy_decides_the_same);
    tcase_add_test(tc, independent);
    tcase_add_test(tc, out_of_memory);
    tcase_add_test(tc, copy_shares_strings);
    tcase_add_test(tc, workloads_share_strings);
    tcase_add_test(tc, finished_is_forgotten);
    tcase_add_test(tc, sticky_preemptor_forgotten);
    tcase_add_test(tc, pod_sets_shared_with_copy);
    tcase_add_test(tc, pod_sets_shared_across_threads);
    tcase_add_test(tc, pod_sets_copy_on_write_out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
