/* test_sched_afs -- admission fair sharing: LocalQueue usage, its decay, the queue order. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN (60 * 1000)

static sched_t *s;
static sched_decisions_t out;

/* An engine with admissionFairSharing {usageHalfLifeTime: half, usageSamplingInterval: samp}
 * when `on`, resourceWeights from `weights` (may be NULL). */
static void engine(bool on, int64_t half, int64_t samp, const resource_list_t *weights)
{
    sched_config_t cfg = {0};
    cfg.afs = on;
    cfg.afs_half_life_ms = half;
    cfg.afs_sampling_ms = samp;
    cfg.afs_weights = weights;
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    fx_flavor(s, "f", NULL, NULL);
}

static void setup(void)
{
    s = NULL;
    sched_decisions_init(&out);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

static void finish(const char *key, int64_t now)
{
    err_msg_t m;
    ck_assert_msg(sched_workload_finish(s, key, now, &m) == ERR_OK, "%s", m.text);
}

/* Index of the ADMIT decision of `key` in out (-1 when none). */
static int admitted_at_index(const char *key)
{
    return fx_find(&out, SCHED_DECISION_ADMIT, key);
}

/*
 * Issue 17's example: one ClusterQueue of 1 cpu; LocalQueue heavy runs six 10-minute jobs from
 * 0 s; h-late (heavy) arrives at 59m, l-late (light) at 59m30s. When the sixth job ends at 60m
 * the one admitted is l-late with admission fair sharing, h-late (older) without it.
 */
static const char *issue17(bool config_on, bool cq_on)
{
    engine(config_on, 10 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:1", &(fx_cq_opts_t){.afs = cq_on});
    fx_lq(s, "t", "heavy", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "light", "cq", STOP_POLICY_NONE);
    char key[32];
    for (int i = 0; i < 6; i++) {
        snprintf(key, sizeof(key), "t/job-%d", i);
        fx_wl(s, key, "heavy", 0, 0, "cpu=1", NULL);
    }
    fx_run(s, 0, &out, true);
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof(key), "t/job-%d", i);
        finish(key, (int64_t)(i + 1) * 10 * MIN);
        fx_run(s, (int64_t)(i + 1) * 10 * MIN, &out, true);
    }
    fx_wl(s, "t/h-late", "heavy", 0, 59 * MIN, "cpu=1", NULL);
    fx_run(s, 59 * MIN, &out, true);
    fx_wl(s, "t/l-late", "light", 0, 59 * MIN + 30000, "cpu=1", NULL);
    fx_run(s, 59 * MIN + 30000, &out, true);
    ck_assert_int_eq(admitted_at_index("t/h-late"), -1);
    ck_assert_int_eq(admitted_at_index("t/l-late"), -1);
    finish("t/job-5", 60 * MIN);
    size_t before = out.len;
    fx_run(s, 60 * MIN, &out, true);
    ck_assert_uint_eq(out.len, before + 1);
    return out.items[before].workload;
}

START_TEST(issue17_light_queue_first)
{
    ck_assert_str_eq(issue17(true, true), "t/l-late");
}
END_TEST

START_TEST(issue17_without_afs_older_first)
{
    ck_assert_str_eq(issue17(false, true), "t/h-late"); /* no Configuration section */
}
END_TEST

START_TEST(issue17_queue_not_usage_based)
{
    ck_assert_str_eq(issue17(true, false), "t/h-late"); /* no admissionScope on the queue */
}
END_TEST

static qnano_t consumed(const char *lq, int64_t now, const char *res, int64_t *last)
{
    resource_list_t l;
    err_msg_t m;
    ck_assert_msg(sched_lq_afs_status(s, lq, now, &l, last, &m) == ERR_OK, "%s", m.text);
    qnano_t v = 0;
    for (size_t i = 0; i < l.len; i++)
        if (strcmp(l.items[i].name, res) == 0)
            v = l.items[i].value.nano;
    resource_list_fini(&l);
    return v;
}

/*
 * The arithmetic, against values computed with 60-digit decimals (each product rounded down to
 * nano units, as Kueue's MulByFloat): half-life 10m, sampling 5m, a 4-cpu workload admitted at 0.
 *   at 0 (settled): penalty 4 x (1 - 2^-0.5)                    = 1.171572875 cpu
 *   at 5m (sample): 1.171572875 x 2^-0.5 + 4 x (1 - 2^-0.5)     = 1.999999999
 *   released at 5m; at 10m (sample): 1.999999999 x 2^-0.5      = 1.414213561
 */
START_TEST(decay_arithmetic)
{
    engine(true, 10 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:8", &(fx_cq_opts_t){.afs = true});
    fx_lq(s, "t", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "t/w", "q", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    int64_t last = -1;
    ck_assert(consumed("t/q", 0, "cpu", &last) == 1171572875);
    ck_assert_int_eq(last, 0);
    ck_assert(consumed("t/q", 5 * MIN - 1, "cpu", &last) == 1171572875); /* not sampled yet */
    ck_assert_int_eq(last, 0);
    finish("t/w", 5 * MIN); /* the sample at 5m sees the workload still running */
    ck_assert(consumed("t/q", 5 * MIN, "cpu", &last) == 1999999999);
    ck_assert_int_eq(last, 5 * MIN);
    ck_assert(consumed("t/q", 10 * MIN + 1, "cpu", &last) == 1414213561);
    ck_assert_int_eq(last, 10 * MIN);
    /* a query changes nothing: the same answer again, and from a cycle's point of view */
    ck_assert(consumed("t/q", 10 * MIN + 1, "cpu", &last) == 1414213561);
    fx_run(s, 10 * MIN + 1, &out, true);
    ck_assert(consumed("t/q", 10 * MIN + 1, "cpu", &last) == 1414213561);
    /* long idle: 2^-k of it, down to 0 */
    ck_assert(consumed("t/q", 1000 * MIN, "cpu", &last) == 0);
}
END_TEST

START_TEST(half_life_zero_resets)
{
    /* usageHalfLifeTime 0: no penalty, the usage is reset to 0 at every sample: plain order */
    engine(true, 0, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:1", &(fx_cq_opts_t){.afs = true});
    fx_lq(s, "t", "a", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "b", "cq", STOP_POLICY_NONE);
    fx_wl(s, "t/a1", "a", 0, 0, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    int64_t last;
    ck_assert(consumed("t/a", 0, "cpu", &last) == 0);
    fx_wl(s, "t/a2", "a", 0, 1, "cpu=1", NULL);
    fx_wl(s, "t/b1", "b", 0, 2, "cpu=1", NULL);
    fx_run(s, 2, &out, true);
    finish("t/a1", 20 * MIN);
    fx_run(s, 20 * MIN, &out, true);
    ck_assert_int_ge(admitted_at_index("t/a2"), 0);
    ck_assert(consumed("t/a", 20 * MIN, "cpu", &last) == 0);
}
END_TEST

/* usage / weight: a LocalQueue of weight 4 that used twice as much as one of weight 1 goes
 * first; weight 0 always goes last, even unused. */
START_TEST(local_queue_weight)
{
    engine(true, 60 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:4", &(fx_cq_opts_t){.afs = true});
    fx_lq_weight(s, "t", "big", "cq", "4");
    fx_lq_weight(s, "t", "small", "cq", NULL);
    fx_lq_weight(s, "t", "zero", "cq", "0");
    fx_wl(s, "t/big-1", "big", 0, 0, "cpu=2", NULL);
    fx_wl(s, "t/small-1", "small", 0, 0, "cpu=1", NULL);
    fx_wl(s, "t/small-2", "small", 0, 0, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    /* all admitted; now the quota is full and three wait */
    fx_wl(s, "t/zero-1", "zero", 0, 1000, "cpu=4", NULL);
    fx_wl(s, "t/small-3", "small", 0, 2000, "cpu=4", NULL);
    fx_wl(s, "t/big-2", "big", 0, 3000, "cpu=4", NULL);
    fx_run(s, 3000, &out, true);
    finish("t/big-1", 4000);
    finish("t/small-1", 4000);
    finish("t/small-2", 4000);
    size_t before = out.len;
    fx_run(s, 4000, &out, true);
    ck_assert_uint_eq(out.len, before + 1);
    ck_assert_str_eq(out.items[before].workload, "t/big-2"); /* usage 2 / 4 < 2 / 1 */
    finish("t/big-2", 5000);
    before = out.len;
    fx_run(s, 5000, &out, true);
    ck_assert_uint_eq(out.len, before + 1);
    ck_assert_str_eq(out.items[before].workload, "t/small-3"); /* zero-1: weight 0 last */
}
END_TEST

/* resourceWeights: cpu weighs 0, so only gpu counts; the cpu-heavy queue goes first. */
START_TEST(resource_weights)
{
    resource_t items[1] = {{.name = (char *)"cpu", .value = {.nano = 0}}};
    resource_list_t weights = {items, 1};
    engine(true, 60 * MIN, 5 * MIN, &weights);
    fx_cq(s, "cq", "cpu,gpu|f:100,1", &(fx_cq_opts_t){.afs = true});
    fx_lq(s, "t", "cpus", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "gpus", "cq", STOP_POLICY_NONE);
    fx_wl(s, "t/c1", "cpus", 0, 0, "cpu=99", NULL);
    fx_wl(s, "t/g1", "gpus", 0, 0, "cpu=1,gpu=1", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "t/g2", "gpus", 0, 1000, "cpu=1,gpu=1", NULL);
    fx_wl(s, "t/c2", "cpus", 0, 2000, "cpu=1,gpu=1", NULL);
    fx_run(s, 2000, &out, true);
    finish("t/g1", 3000);
    size_t before = out.len;
    fx_run(s, 3000, &out, true);
    ck_assert_uint_eq(out.len, before + 1);
    ck_assert_str_eq(out.items[before].workload, "t/c2");
}
END_TEST

/* An operator restart: the usage persisted in the LocalQueue's status orders the queue before
 * any admission of this process; a seed after history is ignored. */
START_TEST(seed_from_status)
{
    engine(true, 60 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:1", &(fx_cq_opts_t){.afs = true});
    fx_lq(s, "t", "a", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "b", "cq", STOP_POLICY_NONE);
    resource_t items[1] = {{.name = (char *)"cpu", .value = {.nano = 5000000000}}};
    resource_list_t seed = {items, 1};
    err_msg_t m;
    ck_assert_int_eq(sched_lq_afs_seed(s, "t/a", &seed, &m), ERR_OK);
    ck_assert_int_eq(sched_lq_afs_seed(s, "t/nope", &seed, &m), ERR_NOT_FOUND);
    fx_wl(s, "t/a1", "a", 0, 0, "cpu=1", NULL);
    fx_wl(s, "t/b1", "b", 0, 1, "cpu=1", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(admitted_at_index("t/b1"), 0);
    ck_assert_int_eq(admitted_at_index("t/a1"), -1);
    int64_t last;
    ck_assert(consumed("t/a", 1, "cpu", &last) == 5000000000);
    ck_assert_int_eq(last, 1); /* the clock starts at the first time seen */
    items[0].value.nano = 1;
    ck_assert_int_eq(sched_lq_afs_seed(s, "t/a", &seed, &m), ERR_OK);
    ck_assert(consumed("t/a", 1, "cpu", &last) == 5000000000);
}
END_TEST

/* Off: no status, and the LocalQueue state of a clone answers as the original. */
START_TEST(status_off_and_clone)
{
    engine(false, 60 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:1", NULL);
    fx_lq(s, "t", "a", "cq", STOP_POLICY_NONE);
    fx_run(s, 0, &out, true);
    resource_list_t l;
    int64_t last = 7;
    err_msg_t m;
    ck_assert_int_eq(sched_lq_afs_status(s, "t/a", 0, &l, &last, &m), ERR_INVALID);
    ck_assert_int_eq(last, 7);
    sched_free(s);
    engine(true, 10 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:8", &(fx_cq_opts_t){.afs = true});
    fx_lq(s, "t", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "t/w", "q", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    sched_t *orig = s;
    s = sched_clone(orig, 0);
    ck_assert_ptr_nonnull(s);
    ck_assert(consumed("t/q", 5 * MIN, "cpu", &last) == 1999999999);
    sched_free(s);
    s = orig;
    ck_assert(consumed("t/q", 5 * MIN, "cpu", &last) == 1999999999);
}
END_TEST

/* Preemption inside a UsageBased queue (Kueue CandidatesOrdering): the victim comes from the
 * LocalQueue that used more, before the most recently admitted one. */
static const char *victim(bool on)
{
    engine(on, 60 * MIN, 5 * MIN, NULL);
    fx_cq(s, "cq", "cpu|f:3", &(fx_cq_opts_t){.afs = true, .within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "t", "a", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "b", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "c", "cq", STOP_POLICY_NONE);
    fx_wl(s, "t/a1", "a", 0, 0, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "t/a2", "a", 0, 1000, "cpu=1", NULL);
    fx_run(s, 1000, &out, true);
    fx_wl(s, "t/b1", "b", 0, 2000, "cpu=1", NULL);
    fx_run(s, 2000, &out, true);
    fx_wl(s, "t/h", "c", 10, 3000, "cpu=1", NULL);
    size_t before = out.len;
    fx_run(s, 3000, &out, true);
    ck_assert_uint_ge(out.len, before + 1);
    ck_assert_int_eq(out.items[before].kind, SCHED_DECISION_PREEMPT);
    return out.items[before].workload;
}

START_TEST(preemption_victim_by_usage)
{
    ck_assert_str_eq(victim(true), "t/a2");
}
END_TEST

START_TEST(preemption_victim_without_afs)
{
    ck_assert_str_eq(victim(false), "t/b1"); /* most recently admitted */
}
END_TEST

/* A ClusterQueue of `cpu` cpu using admission fair sharing with admission check prov. */
static void checked_queue(const char *cpu)
{
    char quota[32];
    engine(true, 10 * MIN, 5 * MIN, NULL);
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    snprintf(quota, sizeof(quota), "cpu|f:%s", cpu);
    fx_cq(s, "cq", quota, &(fx_cq_opts_t){.afs = true, .checks = "prov"});
    fx_lq(s, "t", "a", "cq", STOP_POLICY_NONE);
    fx_lq(s, "t", "b", "cq", STOP_POLICY_NONE);
}

static void verdict(const char *key, check_state_t v, int64_t now)
{
    err_msg_t m;
    ck_assert_msg(sched_workload_checks(s, key, v, now, &m) == ERR_OK, "%s", m.text);
}

/*
 * Kueue pushes the entry penalty when quota is reserved and settles it into the consumed usage
 * at the Admitted transition (workload_controller updateAfsConsumedUsage): with an admission
 * check the two differ in time. Until Admitted the LocalQueue's consumed usage (its status)
 * holds nothing, and a reserved workload is not in its admitted usage; at Admitted (5m) the
 * usage decays to then and the penalty 4 x (1 - 0.5^(5/10)) is added; the sample at 10m then
 * sees it running: the numbers of decay_arithmetic, 5 minutes later.
 */
START_TEST(entry_penalty_settles_at_admitted)
{
    int64_t last = -1;
    checked_queue("8");
    fx_wl(s, "t/w", "a", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_ge(admitted_at_index("t/w"), 0);
    ck_assert(consumed("t/a", 0, "cpu", &last) == 0); /* pending, not consumed */
    ck_assert_int_eq(last, 0);
    ck_assert(consumed("t/a", 5 * MIN, "cpu", &last) == 0); /* reserved is not admitted */
    verdict("t/w", CHECK_STATE_READY, 5 * MIN);
    ck_assert(consumed("t/a", 5 * MIN, "cpu", &last) == 1171572875);
    ck_assert_int_eq(last, 5 * MIN);
    ck_assert(consumed("t/a", 10 * MIN, "cpu", &last) == 1999999999);
    ck_assert_int_eq(last, 10 * MIN);
    /* settled once: a later cycle and the finish add nothing more */
    fx_run(s, 10 * MIN, &out, true);
    finish("t/w", 10 * MIN);
    ck_assert(consumed("t/a", 10 * MIN, "cpu", &last) == 1999999999);
}
END_TEST

/*
 * A pending penalty counts in the queue order (Kueue's usage = consumed + pending penalty). A
 * workload evicted by a Retry check keeps its record (it stays active on its LocalQueue), so
 * b1 goes before the older a2; one deactivated by a Rejected check drops it, and a2 (older)
 * goes first. a1 holds 4 of 8 cpu; a2 and b1 need 8.
 */
static const char *after_verdict(check_state_t v)
{
    checked_queue("8");
    fx_wl(s, "t/a1", "a", 0, 0, "cpu=4", NULL);
    fx_run(s, 0, &out, true);
    fx_wl(s, "t/a2", "a", 0, 1, "cpu=8", NULL);
    fx_wl(s, "t/b1", "b", 0, 2, "cpu=8", NULL);
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(admitted_at_index("t/a2"), -1);
    ck_assert_int_eq(admitted_at_index("t/b1"), -1);
    verdict("t/a1", v, 3);
    if (v == CHECK_STATE_RETRY) {
        err_msg_t m;
        ck_assert_msg(sched_evicted(s, "t/a1", 3, &m) == ERR_OK, "%s", m.text);
    }
    size_t before = out.len;
    fx_run(s, 3, &out, true);
    ck_assert_uint_ge(out.len, before + 1);
    ck_assert_int_eq(out.items[before].kind, SCHED_DECISION_ADMIT);
    return out.items[before].workload;
}

START_TEST(entry_penalty_pending_counts_in_order)
{
    ck_assert_str_eq(after_verdict(CHECK_STATE_RETRY), "t/b1");
}
END_TEST

START_TEST(entry_penalty_dropped_when_deactivated)
{
    ck_assert_str_eq(after_verdict(CHECK_STATE_REJECTED), "t/a2");
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_afs");
    TCase *tc = tcase_create("afs");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, issue17_light_queue_first);
    tcase_add_test(tc, issue17_without_afs_older_first);
    tcase_add_test(tc, issue17_queue_not_usage_based);
    tcase_add_test(tc, decay_arithmetic);
    tcase_add_test(tc, half_life_zero_resets);
    tcase_add_test(tc, local_queue_weight);
    tcase_add_test(tc, resource_weights);
    tcase_add_test(tc, seed_from_status);
    tcase_add_test(tc, status_off_and_clone);
    tcase_add_test(tc, preemption_victim_by_usage);
    tcase_add_test(tc, preemption_victim_without_afs);
    tcase_add_test(tc, entry_penalty_settles_at_admitted);
    tcase_add_test(tc, entry_penalty_pending_counts_in_order);
    tcase_add_test(tc, entry_penalty_dropped_when_deactivated);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
