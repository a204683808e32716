/* test_sim_oom -- a whole simulator run with each of its allocations failing in turn: the run
 * ends with ERR_NOMEM (no crash, no leak under ASan) or, where a failure is absorbed, with
 * exactly the outcome of the run that failed nothing (no wrong decision). */
/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* open_memstream */
#include "sim/record.h"
#include "sim/scenario.h"
#include "sim/sim.h"
#include "util/alloc.h"

#include "oom_wrap.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two ClusterQueues lending to each other in a cohort, one preempting by priority, a quota
 * change, and workloads that borrow, get reclaimed, preempted, finish and wait. */
static const char scenario[] =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\n"
    "value: 1000\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a}\n"
    "spec:\n  namespaceSelector: {}\n  cohortName: co\n  preemption: {withinClusterQueue: "
    "LowerPriority, "
    "reclaimWithinCohort: Any}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
    "    flavors:\n    - name: a100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-b}\n"
    "spec:\n  namespaceSelector: {}\n  cohortName: co\n  preemption: {reclaimWithinCohort: Any}\n  "
    "resourceGroups:\n"
    "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
    "      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: a, namespace: ns}\n"
    "spec: {clusterQueue: team-a}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: b, namespace: ns}\n"
    "spec: {clusterQueue: team-b}\n---\n"
#define JOB(name, q, gpus, at, runtime, extra)                                                   \
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " name "\n  namespace: ns\n"            \
    "  labels: {kueue.x-k8s.io/queue-name: " q extra "}\n  annotations: {sim.sluice.dev/at: " at \
    ", sim.sluice.dev/runtime: " runtime "}\nspec:\n  parallelism: 1\n  template:\n    spec:\n"  \
    "      restartPolicy: Never\n      containers:\n      - name: c\n        image: i\n"         \
    "        resources: {requests: {nvidia.com/gpu: " gpus "}}\n---\n"
    JOB("a-big", "a", "6", "0s", "2h", "") JOB("b-1", "b", "2", "10m", "1h", "")
        JOB("b-2", "b", "2", "20m", "1h", "")
            JOB("a-urgent", "a", "4", "30m", "30m", ", kueue.x-k8s.io/priority-class: high")
                JOB("a-small", "a", "1", "40m", "20m",
                    "") "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  "
                        "name: team-b\n"
                        "  annotations: {sim.sluice.dev/at: 3h}\n"
                        "spec:\n  namespaceSelector: {}\n  cohortName: co\n  preemption: "
                        "{reclaimWithinCohort: Any}\n  resourceGroups:\n"
                        "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
                        "      resources: [{name: nvidia.com/gpu, nominalQuota: 2}]\n";
#undef JOB

/* Run the loaded scenario; *made: the allocations sim_run made (counted from the caller's
 * oom_fail_at()); on ERR_OK *summary is the --summary document (caller frees). */
static err_t run(const sim_scenario_t *sc, char **summary, long *made)
{
    sim_options_t opts;
    sim_rec_t rec;
    err_msg_t msg = {{0}};
    err_t rc;

    memset(&opts, 0, sizeof(opts));
    sim_rec_init(&rec);
    *summary = NULL;
    rc = sim_run(sc, &opts, &rec, &msg);
    *made = oom_count();
    oom_fail_at(0); /* the summary writer is not under test here */
    if (rc == ERR_OK) {
        size_t len;
        FILE *f = open_memstream(summary, &len);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(sim_summary_write(&rec, f, &msg), ERR_OK);
        fclose(f);
    }
    sim_rec_fini(&rec);
    return rc;
}

START_TEST(every_allocation_of_a_run_fails_in_turn)
{
    sim_scenario_t sc;
    err_msg_t msg = {{0}};
    char *want = NULL;
    long n, total, nomem = 0, absorbed = 0;

    sim_scenario_init(&sc);
    ck_assert_msg(sim_scenario_load_string(scenario, strlen(scenario), &sc, &msg) == ERR_OK, "%s",
                  msg.text);
    oom_fail_at(0);
    ck_assert_int_eq(run(&sc, &want, &total), ERR_OK);
    {
        /* The run preempts and finishes: the failing paths cover more than queueing. */
        json_t *j = json_loads(want, 0, NULL);
        ck_assert_ptr_nonnull(j);
        ck_assert_msg(
            json_integer_value(json_object_get(json_object_get(j, "overall"), "preemptions")) > 0,
            "%s", want);
        json_decref(j);
    }
    ck_assert_int_gt(total, 100);
    for (n = 1; n <= total; n++) {
        char *got = NULL;
        err_t rc;
        long made;

        oom_fail_at(n);
        rc = run(&sc, &got, &made);
        ck_assert_msg(made >= n, "allocation %ld of %ld never made (%ld made, %s)", n, total, made,
                      err_str(rc));
        if (rc == ERR_OK) {
            /* The failure was absorbed (a cache that is rebuilt later, say): same outcome. */
            ck_assert_msg(strcmp(got, want) == 0, "allocation %ld failed: a different outcome", n);
            absorbed++;
        } else {
            ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %s", n, err_str(rc));
            nomem++;
        }
        free(got);
    }
    ck_assert_int_gt(nomem, 0);
    fprintf(stderr,
            "test_sim_oom: %ld allocations: %ld ended the run with ERR_NOMEM, %ld absorbed\n",
            total, nomem, absorbed);
    free(want);
    sim_scenario_fini(&sc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_oom");
    TCase *tc = tcase_create("oom");
    SRunner *sr;
    int failed;

    util_alloc_install();
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, every_allocation_of_a_run_fails_in_turn);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
