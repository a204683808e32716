/* test_sched_checks -- admission checks: ClusterQueue activity, onFlavors, two-phase admission,
 * Retry and Rejected verdicts. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static sched_t *s;
static sched_decisions_t out;

static void setup(void)
{
    s = sched_new(NULL);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
    fx_flavor(s, "on-demand", NULL, NULL);
    fx_flavor(s, "spot", NULL, NULL);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

static sched_cq_status_t status(const char *cq)
{
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, cq, &st, NULL), ERR_OK);
    return st;
}

static sched_wl_info_t info(const char *key)
{
    sched_wl_info_t i;
    ck_assert_int_eq(sched_workload_info(s, key, &i, NULL), ERR_OK);
    return i;
}

/* ClusterQueue cq: 4 cpu of on-demand then 4 of spot, with admission checks `checks`, and
 * LocalQueue ns/q. */
static void queue_with(const char *checks, preempt_policy_t within)
{
    fx_cq_opts_t o = {.checks = checks, .within = within};
    fx_cq(s, "cq", "cpu|on-demand:4|spot:4", &o);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
}

/* As queue_with(), 8 cpu of on-demand alone. */
static void one_flavor_queue(const char *checks, preempt_policy_t within)
{
    fx_cq_opts_t o = {.checks = checks, .within = within};
    fx_cq(s, "cq", "cpu|on-demand:8", &o);
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
}

/* Kueue's inactiveReason: a missing check, then an inactive one, each stops admission. */
START_TEST(missing_and_inactive_checks_make_the_queue_inactive)
{
    queue_with("prov;burn-in", PREEMPT_NEVER);
    fx_wl(s, "ns/w", "q", 0, 0, "cpu=1", NULL);
    sched_cq_status_t st = status("cq");
    ck_assert(!st.active);
    ck_assert_int_eq(st.reason, SCHED_CQ_CHECK_NOT_FOUND);
    ck_assert_str_eq(sched_cq_reason_str(st.reason), "AdmissionCheckNotFound");
    ck_assert_str_eq(st.message, "Can't admit new workloads: references missing AdmissionCheck(s): "
                                 "burn-in,prov.");
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 0);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_PENDING);

    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    ck_assert_int_eq(sched_check_upsert(s, "burn-in", false, NULL), ERR_OK);
    st = status("cq");
    ck_assert(!st.active);
    ck_assert_str_eq(sched_cq_reason_str(st.reason), "AdmissionCheckInactive");
    ck_assert_str_eq(st.message,
                     "Can't admit new workloads: references inactive AdmissionCheck(s): burn-in.");
    ck_assert_uint_eq(fx_run(s, 1, &out, true), 0);

    ck_assert_int_eq(sched_check_upsert(s, "burn-in", true, NULL), ERR_OK);
    ck_assert(status("cq").active);
    ck_assert_uint_eq(fx_run(s, 2, &out, true), 1);
    ck_assert_int_eq(out.items[0].kind, SCHED_DECISION_ADMIT);
    ck_assert_uint_eq(out.items[0].nchecks, 2);
    ck_assert_str_eq(out.items[0].checks[0], "burn-in");
    ck_assert_str_eq(out.items[0].checks[1], "prov");

    /* Deleting a check the queue names makes it inactive again. */
    ck_assert_int_eq(sched_check_delete(s, "prov", NULL), ERR_OK);
    ck_assert_int_eq(status("cq").reason, SCHED_CQ_CHECK_NOT_FOUND);
    ck_assert_int_eq(sched_check_delete(s, "prov", NULL), ERR_NOT_FOUND);
}
END_TEST

/* Several problems: the first one's reason, every message joined, as Kueue. */
START_TEST(stopped_and_missing_check_joined)
{
    fx_cq_opts_t o = {.checks = "prov", .stop = STOP_POLICY_HOLD};
    fx_cq(s, "cq", "cpu|on-demand:4", &o);
    sched_cq_status_t st = status("cq");
    ck_assert_int_eq(st.reason, SCHED_CQ_STOPPED);
    ck_assert_str_eq(st.message, "Can't admit new workloads: is stopped, references missing "
                                 "AdmissionCheck(s): prov.");
}
END_TEST

/* QuotaReserved first: the quota is held (nothing else fits), Admitted only on Ready. */
START_TEST(quota_reserved_then_admitted)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    one_flavor_queue("prov", PREEMPT_NEVER);
    fx_wl_opts_t wo = {.max_exec_seconds = 10};
    fx_wl(s, "ns/a", "q", 0, 0, "cpu=8", &wo);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 1);
    ck_assert_uint_eq(out.items[0].nchecks, 1);
    sched_wl_info_t i = info("ns/a");
    ck_assert_int_eq(i.state, SCHED_WL_ADMITTED);
    ck_assert(i.awaiting_checks);
    ck_assert_uint_eq(i.nchecks, 1);
    ck_assert_str_eq(i.checks[0], "prov");
    sched_cq_status_t st = status("cq");
    ck_assert_uint_eq(st.reserving, 1);
    ck_assert_uint_eq(st.admitted, 0);
    ck_assert_int_eq(fx_usage(s, "cq", "on-demand", "cpu"), 8);
    fx_wl(s, "ns/b", "q", 0, 1000, "cpu=1", NULL);
    ck_assert_uint_eq(fx_run(s, 1000, &out, true), 0); /* nothing: the quota is reserved */
    /* Its maximum execution time does not run while it waits for its checks. */
    ck_assert_int_eq(sched_next_deadline(s, 5000), INT64_MAX);
    ck_assert_uint_eq(fx_run(s, 50000, &out, true), 0);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);

    ck_assert_int_eq(sched_workload_checks(s, "ns/a", CHECK_STATE_READY, 60000, NULL), ERR_OK);
    i = info("ns/a");
    ck_assert(!i.awaiting_checks);
    ck_assert_int_eq(i.admitted_at, 0); /* still ordered by its reservation time */
    ck_assert_uint_eq(status("cq").admitted, 1);
    ck_assert_int_eq(sched_next_deadline(s, 60000), 70000);
    ck_assert_int_eq(sched_workload_checks(s, "ns/a", CHECK_STATE_READY, 60000, NULL), ERR_INVALID);
    ck_assert_uint_eq(fx_run(s, 70000, &out, true), 2); /* deactivated, then b admitted */
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_DEACTIVATE, "ns/a"), 0);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/b"), 0);
}
END_TEST

/* onFlavors: a check applies only when one of its flavors is assigned. */
START_TEST(on_flavors_select_the_checks)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    ck_assert_int_eq(sched_check_upsert(s, "all", true, NULL), ERR_OK);
    queue_with("prov:on-demand;all", PREEMPT_NEVER);
    fx_wl(s, "ns/a", "q", 0, 0, "cpu=4", NULL);
    fx_wl(s, "ns/b", "q", 0, 1, "cpu=4", NULL);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 2);
    ck_assert_str_eq(fx_flavor_of(s, "ns/a", "cpu"), "on-demand");
    ck_assert_str_eq(fx_flavor_of(s, "ns/b", "cpu"), "spot");
    ck_assert_uint_eq(out.items[0].nchecks, 2);
    ck_assert_uint_eq(out.items[1].nchecks, 1);
    ck_assert_str_eq(out.items[1].checks[0], "all");
}
END_TEST

/* Retry: evicted with its quota kept until stopped, then requeued behind the others (Kueue's
 * queue-order timestamp: the eviction time). */
START_TEST(retry_evicts_and_requeues)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    one_flavor_queue("prov", PREEMPT_NEVER);
    fx_wl(s, "ns/a", "q", 0, 0, "cpu=8", NULL);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 1);
    fx_wl(s, "ns/b", "q", 0, 1000, "cpu=8", NULL);
    ck_assert_int_eq(sched_workload_checks(s, "ns/a", CHECK_STATE_RETRY, 5000, NULL), ERR_OK);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_EVICTING);
    ck_assert_int_eq(fx_usage(s, "cq", "on-demand", "cpu"), 8);
    ck_assert_int_eq(sched_evicted(s, "ns/a", 6000, NULL), ERR_OK);
    sched_wl_info_t i = info("ns/a");
    ck_assert_int_eq(i.state, SCHED_WL_PENDING);
    ck_assert_int_eq(i.created, 6000);
    ck_assert_uint_eq(i.nchecks, 0);
    sched_decisions_clear(&out);
    ck_assert_uint_eq(fx_run(s, 6000, &out, true), 1);
    ck_assert_int_eq(fx_find(&out, SCHED_DECISION_ADMIT, "ns/b"), 0); /* b first now */
}
END_TEST

/* Rejected: deactivated at once, its quota freed. */
START_TEST(rejected_deactivates)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    one_flavor_queue("prov", PREEMPT_NEVER);
    fx_wl(s, "ns/a", "q", 0, 0, "cpu=8", NULL);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 1);
    ck_assert_int_eq(sched_workload_checks(s, "ns/a", CHECK_STATE_REJECTED, 5000, NULL), ERR_OK);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_DEACTIVATED);
    ck_assert_int_eq(fx_reason(s, "ns/a"), SCHED_REASON_DEACTIVATED);
    ck_assert_int_eq(fx_usage(s, "cq", "on-demand", "cpu"), 0);
    ck_assert_int_eq(sched_workload_checks(s, "ns/a", CHECK_STATE_READY, 5000, NULL), ERR_INVALID);
    ck_assert_int_eq(sched_workload_checks(s, "ns/x", CHECK_STATE_READY, 5000, NULL),
                     ERR_NOT_FOUND);
}
END_TEST

/* A workload holding quota for its checks is a preemption candidate like any other. */
START_TEST(reserved_workload_can_be_preempted)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    one_flavor_queue("prov", PREEMPT_LOWER_PRIORITY);
    fx_wl(s, "ns/low", "q", 0, 0, "cpu=8", NULL);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 1);
    fx_wl(s, "ns/high", "q", 100, 1000, "cpu=8", NULL);
    sched_decisions_clear(&out);
    fx_run(s, 1000, &out, true);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low"), 0);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "ns/high"), 0);
    ck_assert_int_eq(fx_state(s, "ns/low"), SCHED_WL_PENDING);
}
END_TEST

/* A copy keeps which workloads wait for their checks. */
START_TEST(clone_keeps_checks)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    one_flavor_queue("prov", PREEMPT_NEVER);
    fx_wl(s, "ns/a", "q", 0, 0, "cpu=8", NULL);
    ck_assert_uint_eq(fx_run(s, 0, &out, true), 1);
    sched_t *c = sched_clone(s, 0);
    ck_assert_ptr_nonnull(c);
    sched_wl_info_t i;
    ck_assert_int_eq(sched_workload_info(c, "ns/a", &i, NULL), ERR_OK);
    ck_assert(i.awaiting_checks);
    ck_assert_str_eq(i.checks[0], "prov");
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(c, "cq", &st, NULL), ERR_OK);
    ck_assert(st.active);
    ck_assert_int_eq(sched_workload_checks(c, "ns/a", CHECK_STATE_READY, 1, NULL), ERR_OK);
    ck_assert(info("ns/a").awaiting_checks); /* the original is untouched */
    sched_free(c);
}
END_TEST

/* An operator restart: a Workload with QuotaReserved but not Admitted waits for its checks. */
START_TEST(restart_rebuilds_reserved_workload)
{
    ck_assert_int_eq(sched_check_upsert(s, "prov", true, NULL), ERR_OK);
    queue_with("prov:on-demand", PREEMPT_NEVER);
    workload_t w;
    pod_set_t ps;
    resource_t r = {.name = (char *)"cpu", .value = {.nano = 2000000000}};
    pod_set_assignment_t pa;
    kv_t kv = {(char *)"cpu", (char *)"on-demand"};
    admission_t adm = {.cluster_queue = (char *)"cq", .assignments = &pa, .nassignments = 1};
    memset(&w, 0, sizeof(w));
    memset(&ps, 0, sizeof(ps));
    memset(&pa, 0, sizeof(pa));
    ps.name = pa.name = (char *)"main";
    ps.count = 1;
    ps.pod_requests = (resource_list_t){&r, 1};
    pa.flavors = (kv_list_t){&kv, 1};
    pa.usage = (resource_list_t){&r, 1};
    w.meta.namespace = (char *)"ns";
    w.meta.name = (char *)"a";
    w.queue_name = (char *)"q";
    w.active = true;
    w.pod_sets = &ps;
    w.npod_sets = 1;
    w.admission = &adm;
    w.conditions.quota_reserved = true;
    ck_assert_int_eq(sched_workload_upsert(s, &w, NULL, NULL), ERR_OK);
    ck_assert(info("ns/a").awaiting_checks);
    w.meta.name = (char *)"b";
    w.conditions.admitted = true;
    ck_assert_int_eq(sched_workload_upsert(s, &w, NULL, NULL), ERR_OK);
    ck_assert(!info("ns/b").awaiting_checks);
    ck_assert_uint_eq(status("cq").admitted, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_checks");
    TCase *tc = tcase_create("checks");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, missing_and_inactive_checks_make_the_queue_inactive);
    tcase_add_test(tc, stopped_and_missing_check_joined);
    tcase_add_test(tc, quota_reserved_then_admitted);
    tcase_add_test(tc, on_flavors_select_the_checks);
    tcase_add_test(tc, retry_evicts_and_requeues);
    tcase_add_test(tc, rejected_deactivates);
    tcase_add_test(tc, reserved_workload_can_be_preempted);
    tcase_add_test(tc, clone_keeps_checks);
    tcase_add_test(tc, restart_rebuilds_reserved_workload);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
