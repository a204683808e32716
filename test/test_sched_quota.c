/* test_sched_quota -- cohort tree and Kueue's quota math (reference §4.4). */
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
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

static int64_t units(quantity_t v)
{
    return (int64_t)(v.nano / 1000000000);
}

/* Reference §4.4 worked example: cohort C (no own quota) with CQ A (nominal 10, lendingLimit 4)
 * and CQ B (nominal 6, borrowingLimit 5); A uses 8. */
START_TEST(worked_example)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:10/l4", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "b", "cpu|f:6/b5", &(fx_cq_opts_t){.cohort = "c"});
    fx_lq(s, "ns", "qa", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/w8", "qa", 0, 1, "cpu=8", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w8"), SCHED_WL_ADMITTED);

    sched_fr_usage_t ua, ub;
    ck_assert_int_eq(sched_cq_fr_usage(s, "a", "f", "cpu", &ua, NULL), ERR_OK);
    ck_assert_int_eq(sched_cq_fr_usage(s, "b", "f", "cpu", &ub, NULL), ERR_OK);
    ck_assert_int_eq(units(ua.usage), 8);
    /* available(A) = LocalAvailable 0 + available(C) 8 = 8 */
    ck_assert_int_eq(units(ua.available), 8);
    /* available(B) = 0 + min(8, (6-0)-0+5 = 11) = 8 */
    ck_assert_int_eq(units(ub.available), 8);
    /* potentialAvailable: A = 6 + 10 = 16; B = min(0 + 10, 6 + 5) = 10 */
    ck_assert_int_eq(units(ua.potential_available), 16);
    ck_assert_int_eq(units(ub.potential_available), 10);

    sched_usage_list_t cu;
    ck_assert_int_eq(sched_cohort_usage(s, "c", &cu, NULL), ERR_OK);
    ck_assert_uint_eq(cu.len, 1);
    /* SubtreeQuota(C) = (10-6) + (6-0) = 10; Usage(C) = max(0, 8-6) + 0 = 2 */
    ck_assert_int_eq(units(cu.items[0].subtree_quota), 10);
    ck_assert_int_eq(units(cu.items[0].usage), 2);
    sched_usage_list_fini(&cu);

    /* B can take at most 10: an 11-cpu workload exceeds its maximum capacity */
    fx_lq(s, "ns", "qb", "b", STOP_POLICY_NONE);
    fx_wl(s, "ns/b11", "qb", 0, 2, "cpu=11", NULL);
    fx_wl(s, "ns/b8", "qb", 0, 3, "cpu=8", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/b11"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/b11"), SCHED_REASON_EXCEEDS_MAX_QUOTA);
    ck_assert_int_eq(fx_state(s, "ns/b8"), SCHED_WL_ADMITTED);
    int i = fx_find(&out, SCHED_DECISION_ADMIT, "ns/b8");
    ck_assert_int_ge(i, 0);
    ck_assert(out.items[i].borrowing); /* 8 > nominal 6 */
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu") + fx_usage(s, "b", "f", "cpu"), 16);
}
END_TEST

START_TEST(no_cohort_nominal_only)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/w1", "q", 0, 1, "cpu=3", NULL);
    fx_wl(s, "ns/w2", "q", 0, 2, "cpu=3", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/w2"), SCHED_REASON_WAITING_FOR_QUOTA);
    ck_assert_str_eq(fx_message(s, "ns/w2"),
                     "couldn't assign flavors to pod set main: insufficient quota for cpu in "
                     "flavor f: requested 3, available 1 (nominal 4, used 3, borrowing limit 0)");
    /* finishing w1 frees quota and w2 gets in */
    ck_assert_int_eq(sched_workload_finish(s, "ns/w1", 10, NULL), ERR_OK);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 0);
    fx_run(s, 10, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 3);
}
END_TEST

START_TEST(memory_message_binary_suffixes)
{
    /* Kueue prints bytes with binary suffixes (resources.ResourceQuantity): "2Gi", not 2147483648
     */
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "memory|f:4Gi", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/w1", "q", 0, 1, "memory=3Gi", NULL);
    fx_wl(s, "ns/w2", "q", 0, 2, "memory=1536Mi", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_PENDING);
    ck_assert_str_eq(fx_message(s, "ns/w2"),
                     "couldn't assign flavors to pod set main: insufficient quota for memory in "
                     "flavor f: requested 1536Mi, available 1Gi (nominal 4Gi, used 3Gi, borrowing "
                     "limit 0)");
}
END_TEST

START_TEST(hierarchical_cohorts)
{
    /* root (own quota 4) -> mid -> {a (2), b (2)}; a can borrow from b and from root's quota */
    fx_flavor(s, "f", NULL, NULL);
    fx_cohort(s, "root", NULL, "cpu|f:4", NULL);
    fx_cohort(s, "mid", "root", NULL, NULL);
    fx_cq(s, "a", "cpu|f:2", &(fx_cq_opts_t){.cohort = "mid"});
    fx_cq(s, "b", "cpu|f:2", &(fx_cq_opts_t){.cohort = "mid"});
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/big", "q", 0, 1, "cpu=8", NULL);
    fx_wl(s, "ns/one", "q", 0, 2, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/big"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/one"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "ns/one"), SCHED_REASON_WAITING_FOR_QUOTA);
    sched_usage_list_t cu;
    ck_assert_int_eq(sched_cohort_usage(s, "root", &cu, NULL), ERR_OK);
    ck_assert_int_eq(units(cu.items[0].subtree_quota), 8);
    ck_assert_int_eq(units(cu.items[0].usage), 8);
    sched_usage_list_fini(&cu);
    /* deleting the Cohort object "root" leaves "mid" with an implicit parent without quota:
     * 8 used > 4 available, nothing else fits; the running workload keeps its quota */
    ck_assert_int_eq(sched_cohort_delete(s, "root", NULL), ERR_OK);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 8);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/one"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(cohort_cycle_disables)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cohort(s, "x", "y", NULL, NULL);
    fx_cohort(s, "y", "x", NULL, NULL);
    fx_cq(s, "a", "cpu|f:2", &(fx_cq_opts_t){.cohort = "x"});
    fx_cq(s, "solo", "cpu|f:2", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_lq(s, "ns", "q2", "solo", STOP_POLICY_NONE);
    fx_wl(s, "ns/w", "q", 0, 1, "cpu=1", NULL);
    fx_wl(s, "ns/w2", "q2", 0, 1, "cpu=1", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_ADMITTED);
    sched_cq_status_t st;
    ck_assert_int_eq(sched_cq_status(s, "a", &st, NULL), ERR_OK);
    ck_assert(!st.active);
    ck_assert_int_eq(st.reason, SCHED_CQ_COHORT_CYCLE);
    ck_assert_int_eq(st.pending, 1);
    /* breaking the cycle activates the queue and the workload is admitted */
    fx_cohort(s, "y", NULL, NULL, NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(quota_shrink_keeps_running)
{
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:10", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/w", "q", 0, 1, "cpu=8", NULL);
    fx_run(s, 0, &out, true);
    fx_cq(s, "a", "cpu|f:2", NULL);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 8);
    fx_wl(s, "ns/w2", "q", 0, 2, "cpu=1", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_PENDING);
    /* growing the quota again lets w2 in at once */
    fx_cq(s, "a", "cpu|f:9", NULL);
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w2"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(restart_rebuilds_admitted)
{
    /* a workload that arrives already admitted (operator restart) counts at once, even before
     * its ClusterQueue object is known */
    workload_t w;
    memset(&w, 0, sizeof(w));
    w.meta.name = (char *)"old";
    w.meta.namespace = (char *)"ns";
    w.queue_name = (char *)"q";
    w.active = true;
    pod_set_t ps;
    memset(&ps, 0, sizeof(ps));
    ps.name = (char *)"main";
    ps.count = 1;
    resource_t req = {.name = (char *)"cpu", .value = quantity_from_int(3, QUANTITY_DECIMAL_SI)};
    ps.pod_requests.items = &req;
    ps.pod_requests.len = 1;
    w.pod_sets = &ps;
    w.npod_sets = 1;
    kv_t fl = {.key = (char *)"cpu", .value = (char *)"f"};
    pod_set_assignment_t psa;
    memset(&psa, 0, sizeof(psa));
    psa.name = (char *)"main";
    psa.flavors.items = &fl;
    psa.flavors.len = 1;
    psa.usage.items = &req;
    psa.usage.len = 1;
    admission_t adm = {.cluster_queue = (char *)"a", .assignments = &psa, .nassignments = 1};
    w.admission = &adm;
    w.conditions.quota_reserved = true;
    w.conditions.admitted = true;
    sched_wl_opts_t o = {.created = 1, .admitted_at = 5};
    ck_assert_int_eq(sched_workload_upsert(s, &w, &o, NULL), ERR_OK);
    ck_assert_int_eq(fx_state(s, "ns/old"), SCHED_WL_ADMITTED);
    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 3);
    fx_wl(s, "ns/new", "q", 0, 2, "cpu=2", NULL);
    fx_run(s, 10, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/new"), SCHED_WL_PENDING);
    ck_assert_int_eq(sched_workload_finish(s, "ns/old", 20, NULL), ERR_OK);
    fx_run(s, 20, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/new"), SCHED_WL_ADMITTED);
}
END_TEST

/* Kueue's ReclaimablePods: the pods a workload reports done (status.reclaimablePods) need no
 * quota. An admitted one's usage shrinks and the freed quota admits the next; a pending one asks
 * for the rest only; a partial admission below what remains keeps its usage. */
START_TEST(reclaimable_pods_release_quota)
{
    fx_wl_opts_t four = {.count = 4}, done2 = {.count = 4, .reclaimable = "main:2"};
    fx_wl_opts_t done3 = {.count = 4, .reclaimable = "main:3,other:1"};

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &four);
    fx_wl(s, "ns/next", "q", 0, 2, "cpu=2", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/job"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/next"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 4);
    /* Two of the Job's four pods succeeded: 2 cpu back, and the next one fits. */
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &done2);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 2);
    ck_assert_int_eq(fx_state(s, "ns/job"), SCHED_WL_ADMITTED);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/next"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 4);
    /* The same report again changes nothing; a name that is no pod set is ignored. */
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &done2);
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &done3);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 3);
    /* Finished: nothing held. */
    ck_assert_int_eq(sched_workload_finish(s, "ns/job", 2, NULL), ERR_OK);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 2);

    /* Pending with 3 of 4 pods done: asks for one pod's cpu only. */
    fx_wl(s, "ns/rest", "q", 0, 3, "cpu=1", &done3);
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/rest"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 3);
}
END_TEST

START_TEST(reclaimable_pods_partial_admission_keeps_usage)
{
    fx_wl_opts_t partial = {.count = 4, .min_count = 1};
    fx_wl_opts_t done1 = {.count = 4, .min_count = 1, .reclaimable = "main:1"};
    fx_wl_opts_t done3 = {.count = 4, .min_count = 1, .reclaimable = "main:3"};

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:2", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &partial);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/job"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 2); /* 2 of 4 pods admitted */
    /* One done: 3 still to run, more than the 2 admitted: usage kept (Kueue). */
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &done1);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 2);
    /* Three done: one to run, below the admitted 2: one pod's usage. */
    fx_wl(s, "ns/job", "q", 0, 1, "cpu=1", &done3);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 1);
}
END_TEST

/* Issue 17: the Configuration's `resources` rules turn pod requests into quota requests inside
 * the engine (so operator and simulator agree). Rules built in code: a MIG slice replaced by 10Gi
 * of gpu-memory, example.com/rdma excluded. The engine keeps its own copy of the rules. */
START_TEST(resource_transformations)
{
    resource_t gpu_mem = {.name = strdup("example.com/gpu-memory"),
                          .value = quantity_from_int(10LL << 30, QUANTITY_BINARY_SI)};
    resource_transformation_t *t = calloc(1, sizeof(*t));
    resource_rules_t rules = {0};
    ck_assert_ptr_nonnull(t);
    t->input = strdup("nvidia.com/mig-1g.10gb");
    t->strategy = TRANSFORM_REPLACE;
    t->outputs.items = calloc(1, sizeof(resource_t));
    t->outputs.items[0] = gpu_mem;
    t->outputs.len = 1;
    rules.transformations = t;
    rules.ntransformations = 1;
    rules.exclude_prefixes = calloc(1, sizeof(char *));
    rules.exclude_prefixes[0] = strdup("example.com/rdma");
    rules.nexclude_prefixes = 1;
    sched_config_t cfg = {.resources = &rules};
    ck_assert_int_eq(sched_set_config(s, &cfg), ERR_OK);
    resource_rules_fini(&rules); /* copied */

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu,example.com/gpu-memory|f:8,40Gi", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/m1", "q", 0, 1, "cpu=1,nvidia.com/mig-1g.10gb=2", &(fx_wl_opts_t){.count = 1});
    fx_wl(s, "ns/m2", "q", 0, 2, "cpu=1,nvidia.com/mig-1g.10gb=1", &(fx_wl_opts_t){.count = 2});
    fx_wl(s, "ns/m3", "q", 0, 3, "cpu=1,nvidia.com/mig-1g.10gb=1", NULL);
    /* only excluded resources besides cpu: admits on cpu */
    fx_wl(s, "ns/nic", "q", 0, 4, "cpu=2,example.com/rdma=1", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/m1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/m2"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/m3"), SCHED_WL_PENDING); /* 20 + 20 + 10 > 40Gi */
    ck_assert_int_eq(fx_state(s, "ns/nic"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "example.com/gpu-memory"), 40LL << 30);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 5);
    ck_assert_str_eq(fx_flavor_of(s, "ns/nic", "cpu"), "f");
    ck_assert_str_eq(fx_flavor_of(s, "ns/nic", "example.com/rdma"), "");
    /* the admission's resourceUsage is in the transformed resources */
    int i = fx_find(&out, SCHED_DECISION_ADMIT, "ns/m2");
    ck_assert_int_ge(i, 0);
    const resource_list_t *u = &out.items[i].admission.assignments[0].usage;
    const quantity_t *gm = resource_list_get(u, "example.com/gpu-memory");
    ck_assert_ptr_nonnull(gm);
    ck_assert(gm->nano == (qnano_t)(20LL << 30) * 1000000000);
    ck_assert_ptr_null(resource_list_get(u, "nvidia.com/mig-1g.10gb"));

    /* a clone (what-if runs) counts with the same rules */
    sched_t *copy = sched_clone(s, 0);
    ck_assert_ptr_nonnull(copy);
    ck_assert_int_eq(sched_workload_finish(copy, "ns/m1", 1, NULL), ERR_OK);
    fx_wl(copy, "ns/m4", "q", 0, 6, "cpu=1,nvidia.com/mig-1g.10gb=1", NULL);
    sched_decisions_t cout;
    sched_decisions_init(&cout);
    fx_run(copy, 1, &cout, true);
    ck_assert_int_eq(fx_state(copy, "ns/m3"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(copy, "ns/m4"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(copy, "a", "f", "example.com/gpu-memory"), 40LL << 30);
    sched_decisions_fini(&cout);
    sched_free(copy);

    /* without the rules, the same workloads ask for resources the ClusterQueue does not cover */
    sched_config_t none = {0};
    ck_assert_int_eq(sched_set_config(s, &none), ERR_OK);
    fx_wl(s, "ns/plain", "q", 0, 5, "cpu=1,example.com/rdma=1", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/plain"), SCHED_WL_PENDING);
    ck_assert_str_eq(fx_message(s, "ns/plain"),
                     "couldn't assign flavors to pod set main: resource example.com/rdma "
                     "unavailable in ClusterQueue");
}
END_TEST

/* quotaCheckStrategy IgnoreUndeclared: a resource the ClusterQueue does not cover is not
 * checked (nor counted); BlockUndeclared (the default) leaves the workload pending. */
START_TEST(ignore_undeclared)
{
    resource_rules_t rules = {.ignore_undeclared = true};
    sched_config_t cfg = {.resources = &rules};

    fx_flavor(s, "f", NULL, NULL);
    fx_cq(s, "a", "cpu|f:4", NULL);
    fx_lq(s, "ns", "q", "a", STOP_POLICY_NONE);
    fx_wl(s, "ns/w", "q", 0, 1, "cpu=1,example.com/fpga=1", NULL);
    fx_run(s, 0, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_PENDING);
    ck_assert_int_eq(sched_set_config(s, &cfg), ERR_OK);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/w"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_usage(s, "a", "f", "cpu"), 1);
}
END_TEST

/* A transformation that overflows is an error naming the workload, podset and resource. */
START_TEST(transformation_overflow)
{
    resource_t o = {.name = (char *)"m", .value = quantity_from_int(1LL << 60, QUANTITY_BINARY_SI)};
    resource_transformation_t t = {.input = (char *)"x", .outputs = {.items = &o, .len = 1}};
    resource_rules_t rules = {.transformations = &t, .ntransformations = 1};
    sched_config_t cfg = {.resources = &rules};
    ck_assert_int_eq(sched_set_config(s, &cfg), ERR_OK);

    workload_t w;
    pod_set_t ps;
    resource_t req = {.name = (char *)"x", .value = quantity_from_int(INT64_MAX, 0)};
    err_msg_t msg = {{0}};
    memset(&w, 0, sizeof(w));
    memset(&ps, 0, sizeof(ps));
    w.meta.name = (char *)"big";
    w.meta.namespace = (char *)"ns";
    w.queue_name = (char *)"q";
    w.active = true;
    ps.name = (char *)"main";
    ps.count = 1;
    ps.pod_requests.items = &req;
    ps.pod_requests.len = 1;
    w.pod_sets = &ps;
    w.npod_sets = 1;
    ck_assert_int_eq(sched_workload_upsert(s, &w, NULL, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text,
                     "Workload ns/big: podset main: resource m from x: requests overflow");
    ck_assert_int_eq(fx_state(s, "ns/big"), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_quota");
    TCase *tc = tcase_create("quota");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, worked_example);
    tcase_add_test(tc, no_cohort_nominal_only);
    tcase_add_test(tc, memory_message_binary_suffixes);
    tcase_add_test(tc, hierarchical_cohorts);
    tcase_add_test(tc, cohort_cycle_disables);
    tcase_add_test(tc, quota_shrink_keeps_running);
    tcase_add_test(tc, restart_rebuilds_admitted);
    tcase_add_test(tc, resource_transformations);
    tcase_add_test(tc, ignore_undeclared);
    tcase_add_test(tc, transformation_overflow);
    tcase_add_test(tc, reclaimable_pods_release_quota);
    tcase_add_test(tc, reclaimable_pods_partial_admission_keeps_usage);
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
