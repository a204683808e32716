/* test_sched_kueue_examples -- the worked examples of Kueue's concept docs, re-expressed. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Each test names the document (kubernetes-sigs/kueue site/content/en/docs/concepts/<file>) and
 * section it re-expresses, states the outcome the document promises and explains why the engine
 * reaches it. Quantities are whole cpus unless said otherwise; time is virtual milliseconds.
 */

static sched_t *s;
static sched_decisions_t out;

static void setup_with(bool fair)
{
    sched_config_t cfg = {.fair_sharing = fair};
    s = sched_new(&cfg);
    ck_assert_ptr_nonnull(s);
    sched_decisions_init(&out);
    fx_flavor(s, "default-flavor", NULL, NULL);
}

static void setup(void)
{
    setup_with(false);
}

static void setup_fair(void)
{
    setup_with(true);
}

static void teardown(void)
{
    sched_decisions_fini(&out);
    sched_free(s);
}

static size_t count_kind(sched_decision_kind_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < out.len; i++)
        n += out.items[i].kind == k;
    return n;
}

/* Two ClusterQueues of cohort "team-ab" with the given quota specs (fixtures syntax). */
static void team_ab(const char *a_spec, const char *b_spec, const fx_cq_opts_t *a_opts,
                    const fx_cq_opts_t *b_opts)
{
    fx_cq_opts_t ao = a_opts ? *a_opts : (fx_cq_opts_t){0};
    fx_cq_opts_t bo = b_opts ? *b_opts : (fx_cq_opts_t){0};
    ao.cohort = bo.cohort = "team-ab";
    fx_cq(s, "team-a-cq", a_spec, &ao);
    fx_cq(s, "team-b-cq", b_spec, &bo);
    fx_lq(s, "team-a", "q", "team-a-cq", STOP_POLICY_NONE);
    fx_lq(s, "team-b", "q", "team-b-cq", STOP_POLICY_NONE);
}

/* ---- cluster_queue.md ----------------------------------------------------------------------- */

START_TEST(borrowing_example_empty_neighbour)
{
    /* cluster_queue.md, "Borrowing example": team-a-cq has 9 cpu / 36Gi, team-b-cq 12 cpu /
     * 48Gi. "If ClusterQueue team-b-cq has no admitted Workloads, then ClusterQueue team-a-cq can
     * admit Workloads with resources adding up to 12+9=21 CPUs and 48+36=84Gi of memory."
     * Three 7-cpu / 28Gi workloads (21 cpu, 84Gi) are admitted, the last two by borrowing; a
     * fourth 1-cpu one waits: the cohort has nothing left. */
    team_ab("cpu,memory|default-flavor:9,36Gi", "cpu,memory|default-flavor:12,48Gi", NULL, NULL);
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof(key), "team-a/w%d", i);
        fx_wl(s, key, "q", 0, i, "cpu=7,memory=28Gi", NULL);
    }
    fx_wl(s, "team-a/extra", "q", 0, 10, "cpu=1,memory=1Gi", NULL);
    fx_run(s, 100, &out, true);
    ck_assert_int_eq(fx_usage(s, "team-a-cq", "default-flavor", "cpu"), 21);
    ck_assert_int_eq(fx_usage(s, "team-a-cq", "default-flavor", "memory") >> 30, 84);
    ck_assert_int_eq(fx_state(s, "team-a/extra"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "team-a/extra"), SCHED_REASON_WAITING_FOR_QUOTA);
}
END_TEST

START_TEST(borrowing_example_nominal_first)
{
    /* cluster_queue.md, "Borrowing example", second case: "If ClusterQueue team-b-cq has pending
     * Workloads and the ClusterQueue team-a-cq has all its nominalQuota quota used, Kueue will
     * admit Workloads in ClusterQueue team-b-cq before admitting any new Workloads in
     * team-a-cq." team-a-cq uses its 9; both queues then get a head in the same cycle, and only
     * 12 cpu are free. team-b's head fits in its own nominal quota (borrowing level 0), team-a's
     * would borrow (level 1): entries are ordered by borrowing level first (reference §4.5), so
     * team-b's 12 are admitted and team-a's head, older and of higher priority, waits. */
    team_ab("cpu|default-flavor:9", "cpu|default-flavor:12", NULL, NULL);
    fx_wl(s, "team-a/base", "q", 0, 0, "cpu=9", NULL);
    fx_run(s, 1, &out, true);
    fx_wl(s, "team-a/borrower", "q", 100, 2, "cpu=3", NULL);
    fx_wl(s, "team-b/own", "q", 0, 3, "cpu=12", NULL);
    sched_decisions_clear(&out);
    fx_run(s, 4, &out, true);
    ck_assert_int_eq(fx_state(s, "team-b/own"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "team-a/borrower"), SCHED_WL_PENDING);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_ADMIT, "team-b/own"), 0);
}
END_TEST

START_TEST(borrowing_limit_example)
{
    /* cluster_queue.md, "BorrowingLimit": team-a-cq nominal 9, borrowingLimit 1; team-b-cq
     * nominal 12, no limit. "if ClusterQueue team-b-cq has no admitted Workloads, then
     * ClusterQueue team-a-cq can admit Workloads with resources adding up to 9+1=10 CPUs" and
     * "team-b-cq can use up to 12+9 CPUs". A 10-cpu workload fits team-a-cq, an 11-cpu one never
     * does (ExceedsMaxQuota: beyond nominal + borrowingLimit); team-b-cq admits 21. */
    team_ab("cpu|default-flavor:9/b1", "cpu|default-flavor:12", NULL, NULL);
    fx_wl(s, "team-a/eleven", "q", 0, 0, "cpu=11", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_int_eq(fx_state(s, "team-a/eleven"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "team-a/eleven"), SCHED_REASON_EXCEEDS_MAX_QUOTA);
    fx_wl(s, "team-a/ten", "q", 0, 2, "cpu=10", NULL);
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_state(s, "team-a/ten"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_workload_finish(s, "team-a/ten", 4, NULL), ERR_OK);
    ck_assert_int_eq(sched_workload_delete(s, "team-a/eleven", 4, NULL), ERR_OK);
    fx_wl(s, "team-b/all", "q", 0, 5, "cpu=21", NULL);
    fx_run(s, 6, &out, true);
    ck_assert_int_eq(fx_state(s, "team-b/all"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(lending_limit_example)
{
    /* cluster_queue.md, "LendingLimit": team-a-cq nominal 9; team-b-cq nominal 12 with
     * lendingLimit 1. "if all admitted workloads in the ClusterQueue team-b-cq have their total
     * quota usage below the nominalQuota (less or equal 12-1=11 CPUs), then ClusterQueue
     * team-a-cq can admit Workloads with resources adding up to 9+1=10 CPUs." and "If the
     * lendingLimit field is not specified, a ClusterQueue can lend out all of its resources. In
     * this case, team-b-cq can use up to 9+12 CPUs." team-b-cq keeps 11 of its 12 cpu for itself
     * and lends 1, so team-a-cq reaches 9 + 1 = 10 and an 11-cpu workload exceeds what it could
     * ever get (ExceedsMaxQuota); team-a-cq lends everything, so team-b-cq admits 21. */
    team_ab("cpu|default-flavor:9", "cpu|default-flavor:12/l1", NULL, NULL);
    fx_wl(s, "team-a/eleven", "q", 0, 0, "cpu=11", NULL);
    fx_wl(s, "team-a/ten", "q", 0, 1, "cpu=10", NULL);
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(fx_state(s, "team-a/eleven"), SCHED_WL_PENDING);
    ck_assert_int_eq(fx_reason(s, "team-a/eleven"), SCHED_REASON_EXCEEDS_MAX_QUOTA);
    ck_assert_int_eq(fx_state(s, "team-a/ten"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(sched_workload_finish(s, "team-a/ten", 3, NULL), ERR_OK);
    fx_wl(s, "team-b/all", "q", 0, 4, "cpu=21", NULL);
    fx_run(s, 5, &out, true);
    ck_assert_int_eq(fx_state(s, "team-b/all"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(fungibility_when_can_borrow)
{
    /* cluster_queue.md, "FlavorFungibility": "whenCanBorrow ... MayStopSearch (default): Kueue
     * stops looking for a better assignment. TryNextFlavor: Kueue tries the next
     * ResourceFlavor." and "If during the search, Kueue finds some ResourceFlavor in which it
     * can fit without preemption or borrowing, such ResourceFlavor is immediately selected".
     * Flavor "on-demand" (nominal 2, the cohort lends 8 more) comes before "spot" (nominal 4):
     * a 4-cpu workload borrows in on-demand by default, but with TryNextFlavor it goes to spot,
     * where it fits without borrowing. */
    fx_flavor(s, "on-demand", NULL, NULL);
    fx_flavor(s, "spot", NULL, NULL);
    fx_cq(s, "lender", "cpu|on-demand:8|spot:0", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "stop", "cpu|on-demand:2|spot:4", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "next", "cpu|on-demand:2|spot:4",
          &(fx_cq_opts_t){.cohort = "c", .try_next_on_borrow = true});
    fx_lq(s, "ns", "stop", "stop", STOP_POLICY_NONE);
    fx_lq(s, "ns", "next", "next", STOP_POLICY_NONE);
    fx_wl(s, "ns/a", "stop", 0, 0, "cpu=4", NULL);
    fx_wl(s, "ns/b", "next", 0, 0, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_str_eq(fx_flavor_of(s, "ns/a", "cpu"), "on-demand");
    ck_assert_str_eq(fx_flavor_of(s, "ns/b", "cpu"), "spot");
    int a = fx_find(&out, SCHED_DECISION_ADMIT, "ns/a");
    ck_assert_int_ge(a, 0);
    ck_assert(out.items[a].borrowing);
}
END_TEST

START_TEST(fungibility_preference)
{
    /* cluster_queue.md, "FlavorFungibility", preference: with both policies TryNextFlavor,
     * "BorrowingOverPreemption (default) ... (Fit, NoBorrow) -> (Fit, Borrow) -> (Preempt,
     * NoBorrow) -> (Preempt, Borrow)" and "PreemptionOverBorrowing reverses the tie-breaker ...
     * (Fit, NoBorrow) -> (Preempt, NoBorrow) -> (Fit, Borrow)". Flavor "a" is full of the
     * queue's own low-priority work (a new workload must preempt, but stays within nominal);
     * flavor "b" has no nominal quota but the cohort lends it (fits by borrowing). Default:
     * flavor b, no preemption. PreemptionOverBorrowing: flavor a, preempting the low one. */
    fx_flavor(s, "a", NULL, NULL);
    fx_flavor(s, "b", NULL, NULL);
    fx_cq(s, "lender", "cpu|a:0|b:8", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "borrow", "cpu|a:4|b:0",
          &(fx_cq_opts_t){
              .cohort = "c", .within = PREEMPT_LOWER_PRIORITY, .try_next_on_borrow = true});
    fx_cq(s, "preempt", "cpu|a:4|b:0",
          &(fx_cq_opts_t){.cohort = "c",
                          .within = PREEMPT_LOWER_PRIORITY,
                          .try_next_on_borrow = true,
                          .preference = FUNGIBILITY_PREF_PREEMPTION_OVER_BORROWING});
    fx_lq(s, "ns", "borrow", "borrow", STOP_POLICY_NONE);
    fx_lq(s, "ns", "preempt", "preempt", STOP_POLICY_NONE);
    fx_wl(s, "ns/low-b", "borrow", 0, 0, "cpu=4", NULL);
    fx_wl(s, "ns/low-p", "preempt", 0, 0, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    ck_assert_str_eq(fx_flavor_of(s, "ns/low-b", "cpu"), "a");
    ck_assert_str_eq(fx_flavor_of(s, "ns/low-p", "cpu"), "a");
    sched_decisions_clear(&out);
    fx_wl(s, "ns/high-b", "borrow", 10, 2, "cpu=2", NULL);
    fx_wl(s, "ns/high-p", "preempt", 10, 2, "cpu=2", NULL);
    fx_run(s, 3, &out, true);
    ck_assert_str_eq(fx_flavor_of(s, "ns/high-b", "cpu"), "b");
    ck_assert_int_eq(fx_state(s, "ns/low-b"), SCHED_WL_ADMITTED);
    ck_assert_str_eq(fx_flavor_of(s, "ns/high-p", "cpu"), "a");
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low-p");
    ck_assert_int_ge(p, 0);
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_CLUSTER_QUEUE);
}
END_TEST

/* ---- preemption.md: classic preemption ----------------------------------------------------- */

START_TEST(reasons_within_cluster_queue)
{
    /* preemption.md, "Reasons for preemption": "The preemptee belongs to the same ClusterQueue as
     * the preemptor and the preemptee has a lower priority." The Preempted condition reason is
     * InClusterQueue and the message says "due to prioritization in the ClusterQueue". */
    fx_cq(s, "cq", "cpu|default-flavor:4", &(fx_cq_opts_t){.within = PREEMPT_LOWER_PRIORITY});
    fx_lq(s, "ns", "q", "cq", STOP_POLICY_NONE);
    fx_wl(s, "ns/low", "q", 1, 0, "cpu=4", NULL);
    fx_run(s, 1, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/high", "q", 2, 2, "cpu=4", NULL);
    fx_run(s, 3, &out, true);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/low");
    ck_assert_int_ge(p, 0);
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_CLUSTER_QUEUE);
    ck_assert_ptr_nonnull(
        strstr(out.items[p].message, "due to prioritization in the ClusterQueue"));
    ck_assert_int_eq(fx_state(s, "ns/high"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(targets_reclaim_minimal)
{
    /* preemption.md, "Targets", heuristic 3 and the last step: "If the current usage of the
     * target queue is below nominal quota, then Kueue greedily qualifies the candidates, until
     * the preemptor Workload can fit, disallowing for borrowing", then "greedily traverses the
     * list of initial targets in reverse and removes a Workload from the list of targets if the
     * preemptor Workload still can be admitted". a (nominal 6, idle) lent everything to b, which
     * runs 1+2+3 cpu (admitted in that order). a's 5-cpu workload reclaims: candidates are
     * taken most recently admitted first; removing the 3 leaves 3 free (< 5), removing the 2 as
     * well leaves 5: it fits. The fill-back tries to put the 3 back (2 free: no), so both are
     * preempted (InCohortReclamation) and the 1-cpu workload keeps running. */
    fx_pair(s, "cpu|default-flavor:6", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY},
            "cpu|default-flavor:0", &(fx_cq_opts_t){.cohort = "c"});
    fx_wl(s, "ns/b1", "qb", 0, 0, "cpu=1", NULL);
    fx_run(s, 1, &out, true);
    fx_wl(s, "ns/b2", "qb", 0, 1, "cpu=2", NULL);
    fx_run(s, 2, &out, true);
    fx_wl(s, "ns/b3", "qb", 0, 2, "cpu=3", NULL);
    fx_run(s, 3, &out, true);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/a5", "qa", 0, 4, "cpu=5", NULL);
    fx_run(s, 5, &out, true);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 2);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b3"), 0);
    ck_assert_int_ge(fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b2"), 0);
    int p = fx_find(&out, SCHED_DECISION_PREEMPT, "ns/b2");
    ck_assert_int_eq(out.items[p].reason, SCHED_PREEMPT_IN_COHORT_RECLAMATION);
    ck_assert_int_eq(fx_state(s, "ns/b1"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a5"), SCHED_WL_ADMITTED);
}
END_TEST

START_TEST(borrow_within_cohort_threshold)
{
    /* cluster_queue.md, "Preemption": borrowWithinCohort LowerPriority "if the pending Workload
     * requires borrowing, only preempt Workloads in the cohort that have lower priority than the
     * pending Workload ... only workloads up to the priority indicated by maxPriorityThreshold
     * can be preempted in that scenario" (preemption.md, "Targets", heuristic 2). a (nominal 2)
     * needs 4, so it must borrow;
     * and b runs three 2-cpu workloads (priorities 150, 50, 50) of the cohort's 6. With
     * threshold 100 only the two priority-50 ones may go: both are preempted (reason
     * InCohortReclaimWhileBorrowing), a is admitted borrowing 2, the priority-150 one keeps
     * running. */
    fx_cq(s, "a", "cpu|default-flavor:2",
          &(fx_cq_opts_t){.cohort = "c",
                          .reclaim = PREEMPT_ANY,
                          .borrow = PREEMPT_LOWER_PRIORITY,
                          .has_threshold = true,
                          .threshold = 100});
    fx_cq(s, "b", "cpu|default-flavor:2", &(fx_cq_opts_t){.cohort = "c"});
    fx_cq(s, "lender", "cpu|default-flavor:2", &(fx_cq_opts_t){.cohort = "c"});
    fx_lq(s, "ns", "qa", "a", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qb", "b", STOP_POLICY_NONE);
    fx_wl(s, "ns/b-150", "qb", 150, 0, "cpu=2", NULL);
    fx_wl(s, "ns/b-50", "qb", 50, 1, "cpu=2", NULL);
    fx_wl(s, "ns/b-50b", "qb", 50, 2, "cpu=2", NULL);
    fx_run(s, 3, &out, true);
    ck_assert_int_eq(fx_usage(s, "b", "default-flavor", "cpu"), 6);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/a", "qa", 200, 4, "cpu=4", NULL);
    fx_run(s, 5, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/b-150"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 2);
    for (size_t i = 0; i < out.len; i++)
        if (out.items[i].kind == SCHED_DECISION_PREEMPT)
            ck_assert_int_eq(out.items[i].reason, SCHED_PREEMPT_IN_COHORT_RECLAIM_WHILE_BORROWING);
}
END_TEST

/* ---- cohort.md ------------------------------------------------------------------------------ */

START_TEST(cohort_shared_pool)
{
    /* cohort.md, "Configuring Quotas": "nominalQuota defined at the Cohort level represents
     * additional resources on top of those defined by ClusterQueues within the Cohort" and "the
     * ClusterQueue may access the 12 shared CPUs defined by its Cohort" with nominalQuota 0.
     * my-cluster-queue admits 12 cpu from hello-cohort's pool, and not one more. */
    fx_cohort(s, "hello-cohort", NULL, "cpu|default-flavor:12", NULL);
    fx_cq(s, "my-cluster-queue", "cpu|default-flavor:0", &(fx_cq_opts_t){.cohort = "hello-cohort"});
    fx_lq(s, "ns", "q", "my-cluster-queue", STOP_POLICY_NONE);
    fx_wl(s, "ns/twelve", "q", 0, 0, "cpu=12", NULL);
    fx_wl(s, "ns/one", "q", 0, 1, "cpu=1", NULL);
    fx_run(s, 2, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/twelve"), SCHED_WL_ADMITTED);
    ck_assert_int_eq(fx_state(s, "ns/one"), SCHED_WL_PENDING);
}
END_TEST

START_TEST(hierarchical_weights)
{
    /* cohort.md, "Hierarchical Cohorts": root-cohort with important-org (weight 0.75) and
     * regular-org (0.25); "the important org will trend towards using 75% of common resources,
     * while the regular org towards using 25%". The 8 common cpus belong to the root; each org
     * has one ClusterQueue without quota (reclaimWithinCohort Any) and a long queue of 1-cpu
     * workloads, all submitted at once. With free capacity each cycle admits one head per
     * ClusterQueue, so the orgs first reach 4 + 4. Then important-org's head preempts by fair
     * sharing while its share with the workload is not above regular-org's without its victim
     * (LessThanOrEqualToFinalShare): 5/8/0.75 <= 3/8/0.25, then 6/8/0.75 <= 2/8/0.25 (both 1000
     * per mille); at 7 (1167) it stops, and regular-org's head never passes either strategy.
     * The instant settles at 6 cpu for important-org and 2 for regular-org: 75% and 25%. */
    fx_cohort(s, "root-cohort", NULL, "cpu|default-flavor:8", NULL);
    fx_cohort(s, "important-org", "root-cohort", NULL, "0.75");
    fx_cohort(s, "regular-org", "root-cohort", NULL, "0.25");
    fx_cq(s, "important", "cpu|default-flavor:0",
          &(fx_cq_opts_t){.cohort = "important-org", .reclaim = PREEMPT_ANY});
    fx_cq(s, "regular", "cpu|default-flavor:0",
          &(fx_cq_opts_t){.cohort = "regular-org", .reclaim = PREEMPT_ANY});
    fx_lq(s, "ns", "imp", "important", STOP_POLICY_NONE);
    fx_lq(s, "ns", "reg", "regular", STOP_POLICY_NONE);
    for (int i = 0; i < 8; i++) {
        char key[32];
        snprintf(key, sizeof(key), "ns/imp%d", i);
        fx_wl(s, key, "imp", 0, i, "cpu=1", NULL);
        snprintf(key, sizeof(key), "ns/reg%d", i);
        fx_wl(s, key, "reg", 0, i, "cpu=1", NULL);
    }
    fx_run(s, 10, &out, true);
    ck_assert_int_eq(fx_usage(s, "important", "default-flavor", "cpu"), 6);
    ck_assert_int_eq(fx_usage(s, "regular", "default-flavor", "cpu"), 2);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 2);
}
END_TEST

/* ---- fair_sharing.md ------------------------------------------------------------------------ */

START_TEST(fair_no_preempt_back)
{
    /* fair_sharing.md, "Proof that two workloads won't preempt each other": "if workload A
     * preempts workload B, then workload B will not be able to preempt Workload A afterwards".
     * The cohort lends 8 cpu; b took all 8 while a was idle. a's 4-cpu workload preempts by fair
     * sharing (a's share after admission, 4/8, is not above b's after losing 4 cpu, 4/8), and
     * the evicted b workloads, back in b's queue, cannot preempt a's in return: the instant
     * settles with a and b at 4 cpu each. */
    fx_cohort(s, "c", NULL, "cpu|default-flavor:8", NULL);
    fx_pair(s, "cpu|default-flavor:0", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY},
            "cpu|default-flavor:0", &(fx_cq_opts_t){.cohort = "c", .reclaim = PREEMPT_ANY});
    for (int i = 0; i < 4; i++) {
        char key[32];
        snprintf(key, sizeof(key), "ns/b%d", i);
        fx_wl(s, key, "qb", 0, i, "cpu=2", NULL);
    }
    fx_run(s, 5, &out, true);
    ck_assert_int_eq(fx_usage(s, "b", "default-flavor", "cpu"), 8);
    sched_decisions_clear(&out);
    fx_wl(s, "ns/a", "qa", 0, 6, "cpu=4", NULL);
    fx_run(s, 7, &out, true);
    ck_assert_int_eq(fx_state(s, "ns/a"), SCHED_WL_ADMITTED);
    ck_assert_uint_eq(count_kind(SCHED_DECISION_PREEMPT), 2);
    for (size_t i = 0; i < out.len; i++)
        if (out.items[i].kind == SCHED_DECISION_PREEMPT) {
            ck_assert_int_eq(out.items[i].reason, SCHED_PREEMPT_IN_COHORT_FAIR_SHARING);
            ck_assert_str_eq(out.items[i].preemptor, "ns/a");
        }
    ck_assert_int_eq(fx_usage(s, "a", "default-flavor", "cpu"), 4);
    ck_assert_int_eq(fx_usage(s, "b", "default-flavor", "cpu"), 4);
    /* nothing more happens later either */
    sched_decisions_clear(&out);
    ck_assert_uint_eq(fx_run(s, 8, &out, true), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("sched_kueue_examples");
    TCase *tc = tcase_create("classic");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, borrowing_example_empty_neighbour);
    tcase_add_test(tc, borrowing_example_nominal_first);
    tcase_add_test(tc, borrowing_limit_example);
    tcase_add_test(tc, lending_limit_example);
    tcase_add_test(tc, fungibility_when_can_borrow);
    tcase_add_test(tc, fungibility_preference);
    tcase_add_test(tc, reasons_within_cluster_queue);
    tcase_add_test(tc, targets_reclaim_minimal);
    tcase_add_test(tc, borrow_within_cohort_threshold);
    tcase_add_test(tc, cohort_shared_pool);
    suite_add_tcase(su, tc);
    TCase *fair = tcase_create("fair");
    tcase_add_checked_fixture(fair, setup_fair, teardown);
    tcase_add_test(fair, hierarchical_weights);
    tcase_add_test(fair, fair_no_preempt_back);
    suite_add_tcase(su, fair);
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
