/* test_sched_oom -- a scheduling cycle that runs out of memory leaves only whole decisions. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#define OOM_WRAP_STRDUP
#include "oom_wrap.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/*
 * The cycle under test makes every kind of decision: a workload past its maximum execution time
 * is deactivated (a), a high-priority one preempts in its ClusterQueue (b), the freed quota of the
 * deactivated one admits another (c). Each allocation of that cycle fails in turn; every decision
 * the failed cycle returned must be whole and match the engine's state (the operator applies
 * them), every state change must have its decision, and cycles without failure afterwards must
 * reach the outcome of a run that never failed.
 */
static const char *const keys[] = {"ns/expiring", "ns/low-1", "ns/low-2", "ns/high", "ns/waiting"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static sched_t *build(sched_decisions_t *out)
{
    sched_t *s = sched_new(NULL);
    ck_assert_ptr_nonnull(s);
    fx_flavor(s, "f", NULL, NULL);
    fx_pair(s, "cpu|f:4", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY}, "cpu|f:2", NULL);
    fx_wl(s, "ns/expiring", "qb", 1, 1, "cpu=2", &(fx_wl_opts_t){.max_exec_seconds = 1});
    fx_wl(s, "ns/low-1", "qa", 1, 2, "cpu=2", NULL);
    fx_wl(s, "ns/low-2", "qa", 1, 3, "cpu=2", NULL);
    fx_run(s, 0, out, true);
    ck_assert_int_eq(fx_state(s, "ns/expiring"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/low-2"), SCHED_WL_ADMITTED);
    fx_wl(s, "ns/high", "qa", 9, 4, "cpu=2", NULL);
    fx_wl(s, "ns/waiting", "qb", 1, 5, "cpu=2", NULL);
    sched_decisions_clear(out);
    return s;
}

static void check_whole(const sched_decision_t *d)
{
    ck_assert_ptr_nonnull(d->workload);
    ck_assert_ptr_nonnull(d->cluster_queue);
    ck_assert_ptr_nonnull(d->reason_str);
    ck_assert_ptr_nonnull(d->message);
    if (d->kind == SCHED_DECISION_ADMIT) {
        ck_assert_ptr_nonnull(d->admission.cluster_queue);
        ck_assert_uint_eq(d->admission.nassignments, 1);
        ck_assert_ptr_nonnull(d->admission.assignments[0].name);
    }
    if (d->kind == SCHED_DECISION_PREEMPT)
        ck_assert_ptr_nonnull(d->preemptor);
}

/* The state a decision of `kind` leaves its workload in. */
static int state_after(sched_decision_kind_t kind)
{
    switch (kind) {
    case SCHED_DECISION_ADMIT:
        return SCHED_WL_ADMITTED;
    case SCHED_DECISION_PREEMPT:
    case SCHED_DECISION_EVICT:
        return SCHED_WL_EVICTING;
    case SCHED_DECISION_DEACTIVATE:
        return SCHED_WL_DEACTIVATED;
    case SCHED_DECISION_REPLACE:
        return SCHED_WL_ADMITTED;
    }
    return -1;
}

/* Finish what the cycle at 5 s started: victims evicted, cycles until quiet; final states. */
static void settle(sched_t *s, sched_decisions_t *out, int final[NKEYS])
{
    err_msg_t m;
    for (size_t i = 0; i < out->len; i++)
        if (out->items[i].kind == SCHED_DECISION_PREEMPT)
            ck_assert(sched_evicted(s, out->items[i].workload, 5000, &m) == ERR_OK);
    fx_run(s, 5000, out, true);
    for (size_t k = 0; k < NKEYS; k++)
        final[k] = fx_state(s, keys[k]);
    ck_assert_int_le(fx_usage(s, "a", "f", "cpu"), 4);
    ck_assert_int_le(fx_usage(s, "b", "f", "cpu"), 2);
}

START_TEST(failed_cycle_leaves_whole_decisions)
{
    sched_decisions_t out;
    int want[NKEYS], got[NKEYS], before[NKEYS];
    sched_decisions_init(&out);

    sched_t *s = build(&out);
    ck_assert_int_eq(sched_cycle(s, 5000, &out, NULL), ERR_OK);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_DEACTIVATE, "ns/expiring"), 0);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low-1"), 0); /* both admitted at 0 */
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/waiting"), 0);
    settle(s, &out, want);
    ck_assert_int_eq(want[3], SCHED_WL_ADMITTED); /* high */
    ck_assert_int_eq(want[4], SCHED_WL_ADMITTED); /* waiting */
    sched_free(s);

    long failures = 0;
    for (long n = 1;; n++) {
        sched_decisions_clear(&out);
        s = build(&out);
        for (size_t k = 0; k < NKEYS; k++)
            before[k] = fx_state(s, keys[k]);
        err_msg_t m = {{0}};
        oom_fail_at(n);
        err_t rc = sched_cycle(s, 5000, &out, &m);
        long made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_int_eq(rc, ERR_OK);
            sched_free(s);
            break;
        }
        failures++;
        /* either the cycle failed, or the failure hit a path that degrades without one */
        if (rc != ERR_OK)
            ck_assert_int_eq(rc, ERR_NOMEM);
        for (size_t i = 0; i < out.len; i++) {
            check_whole(&out.items[i]);
            ck_assert_int_eq(fx_state(s, out.items[i].workload), state_after(out.items[i].kind));
        }
        for (size_t k = 0; k < NKEYS; k++) {
            int now = fx_state(s, keys[k]);
            if (now != before[k] && now != SCHED_WL_PENDING)
                ck_assert_msg(fx_find(&out, SCHED_DECISION_ADMIT, keys[k]) >= 0 ||
                                  fx_find(&out, SCHED_DECISION_PREEMPT, keys[k]) >= 0 ||
                                  fx_find(&out, SCHED_DECISION_DEACTIVATE, keys[k]) >= 0,
                              "allocation %ld: %s changed state without a decision", n, keys[k]);
        }
        settle(s, &out, got);
        for (size_t k = 0; k < NKEYS; k++)
            ck_assert_msg(got[k] == want[k], "allocation %ld: %s ends in state %d, want %d", n,
                          keys[k], got[k], want[k]);
        sched_free(s);
    }
    ck_assert_int_gt(failures, 20); /* the cycle allocates: the loop really failed something */
    sched_decisions_fini(&out);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("sched_oom");
    TCase *tc = tcase_create("cycle");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, failed_cycle_leaves_whole_decisions);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
