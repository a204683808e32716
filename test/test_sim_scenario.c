/* test_sim_scenario -- loading scenarios: timing annotations, generateName, updates, and every
 * error reported as "doc N (Kind name): path: message" with nothing loaded half-way. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/annot.h"
#include "sim/scenario.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define FLAVOR \
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: default\n"

#define CQ(name, quota) CQA(name, quota, "")
#define CQA(name, quota, meta)                                                                   \
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: " name "\n" meta \
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"           \
    "    flavors:\n    - name: default\n      resources:\n      - name: cpu\n"                   \
    "        nominalQuota: " quota "\n"

#define LQ                                                                          \
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: lq\n" \
    "  namespace: team-a\nspec:\n  clusterQueue: cq-a\n"

#define JOB(meta, annotations)                                                               \
    "apiVersion: batch/v1\nkind: Job\nmetadata:\n" meta "  namespace: team-a\n  labels:\n"   \
    "    kueue.x-k8s.io/queue-name: lq\n  annotations:\n" annotations "spec:\n  template:\n" \
    "    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n"            \
    "        image: busybox\n        resources:\n          requests:\n            cpu: 1\n"

static err_t load(const char *yaml, sim_scenario_t *sc)
{
    err_msg_t msg = {{0}};
    sim_scenario_init(sc);
    return sim_scenario_load_string(yaml, strlen(yaml), sc, &msg);
}

static void dump(const sim_scenario_t *sc)
{
    for (size_t i = 0; i < sc->nerrors; i++)
        fprintf(stderr, "error: %s\n", sc->errors[i]);
}

START_TEST(test_load_valid_with_timing_and_generate_name)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" JOB(
        "  generateName: train-\n",
        "    sim.sluice.dev/at: 1.5s\n"
        "    sim.sluice.dev/runtime: 1h30m\n"
        "    sim.sluice.dev/delete-at: 2h\n") "---\n# only a comment\n---\n" JOB("  generateName: "
                                                                                 "train-\n",
                                                                                 "    "
                                                                                 "sim.sluice.dev/"
                                                                                 "at: 250ms\n") "--"
                                                                                                "-"
                                                                                                "\n" CQA(
                                                                                                    "cq-a",
                                                                                                    "4",
                                                                                                    "  annotations:\n    sim.sluice.dev/at: 2m\n");

    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 0);
    ck_assert_uint_eq(sc.ndocs, 6);          /* the comment-only document is not kept... */
    ck_assert_uint_eq(sc.docs[4].number, 6); /* ...but it is counted */
    ck_assert_str_eq(sc.docs[3].label, "doc 4 (Job team-a/train-1)");
    ck_assert_str_eq(sc.docs[3].obj.u.job.meta.name, "train-1");
    ck_assert_str_eq(sc.docs[4].obj.u.job.meta.name, "train-2");
    ck_assert_int_eq(sc.docs[3].at, 1500);
    ck_assert(sc.docs[3].has_runtime);
    ck_assert_int_eq(sc.docs[3].runtime, 5400000);
    ck_assert(sc.docs[3].has_delete_at);
    ck_assert_int_eq(sc.docs[3].delete_at, 7200000);
    ck_assert_int_eq(sc.docs[4].at, 250);
    ck_assert(!sc.docs[4].has_runtime);
    ck_assert(!sc.docs[4].has_delete_at);
    /* The second ClusterQueue document, later, is an update of the first. */
    ck_assert_uint_eq(sc.docs[5].prev, 1);
    ck_assert_int_eq(sc.docs[5].at, 120000);
    ck_assert_uint_eq(sc.docs[1].prev, SIM_DOC_NONE);
    ck_assert_ptr_null(sc.config);
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_collects_every_error_in_document_order)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ(
        "cq-a", "12x") "---\n" LQ "---\n"
                       "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\n---\n" JOB(
                           "  generateName: train-\n", "    sim.sluice.dev/at: 1.0005s\n"
                                                       "    sim.sluice.dev/runtime: forever\n");

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    ck_assert_uint_eq(sc.nerrors, 4);
    ck_assert_str_eq(sc.errors[0], "doc 2 (ClusterQueue cq-a): spec.resourceGroups[0].flavors[0]."
                                   "resources[0].nominalQuota: invalid quantity \"12x\"");
    ck_assert_ptr_nonnull(strstr(sc.errors[1], "doc 4 (CronJob nightly): kind: Unsupported value: "
                                               "\"CronJob\""));
    ck_assert_str_eq(sc.errors[2], "doc 5 (Job team-a/train-1): metadata.annotations[sim.sluice.dev"
                                   "/at]: duration \"1.0005s\": finer than a millisecond");
    ck_assert_ptr_nonnull(strstr(sc.errors[3], "doc 5 (Job team-a/train-1): metadata.annotations["
                                               "sim.sluice.dev/runtime]: duration \"forever\""));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_simulator_rules)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "  annotations:\n    sim.sluice.dev/runtime: 5m\n---\n" CQA(
        "cq-a", "10",
        "  annotations:\n    sim.sluice.dev/at: 10s\n"
        "    sim.sluice.dev/delete-at: 10s\n") "---\n" LQ "---\n"
                                               "apiVersion: "
                                               "config.kueue.x-k8s.io/v1beta2\nkind: "
                                               "Configuration\n---\n"
                                               "apiVersion: "
                                               "config.kueue.x-k8s.io/v1beta2\nkind: "
                                               "Configuration\nmetadata:\n"
                                               "  annotations:\n    sim.sluice.dev/at: "
                                               "1m\n---\n" JOB("  name: same\n",
                                                               "    sim.sluice.dev/at: "
                                                               "0s\n") "---\n"
                                                                       "apiVersion: "
                                                                       "kueue.x-k8s.io/"
                                                                       "v1beta2\nkind: "
                                                                       "Workload\nmetadata:"
                                                                       "\n  name: same\n"
                                                                       "  namespace: "
                                                                       "team-a\nspec:\n  "
                                                                       "queueName: lq\n  "
                                                                       "podSets:\n  - "
                                                                       "name: main\n    "
                                                                       "count: 1\n"
                                                                       "    template:\n    "
                                                                       "  spec:\n        "
                                                                       "containers:\n      "
                                                                       "  - name: c\n"
                                                                       "          "
                                                                       "resources:\n       "
                                                                       "     requests:\n   "
                                                                       "           cpu: "
                                                                       "1\n";

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 5);
    ck_assert_str_eq(sc.errors[0], "doc 1 (ResourceFlavor default): metadata.annotations[sim.sluice"
                                   ".dev/runtime]: only a Job or a Workload runs; a ResourceFlavor "
                                   "has no runtime");
    ck_assert_str_eq(sc.errors[1], "doc 2 (ClusterQueue cq-a): metadata.annotations[sim.sluice.dev/"
                                   "delete-at]: must be later than sim.sluice.dev/at (10s)");
    ck_assert_str_eq(sc.errors[2], "doc 5 (Configuration): a scenario has at most one "
                                   "Configuration (the first is doc 4)");
    ck_assert_str_eq(sc.errors[3], "doc 5 (Configuration): metadata.annotations[sim.sluice.dev/at]"
                                   ": a Configuration applies from the start: must be 0s");
    ck_assert_str_eq(sc.errors[4], "doc 7 (Workload team-a/same): metadata.name: workload "
                                   "team-a/same is already the workload of doc 6 (Job team-a/same) "
                                   "(a Job's workload is named after the Job)");
    sim_scenario_fini(&sc);
}
END_TEST

/* Admission check verdicts: on the AdmissionCheck (verdict) and on a workload (verdicts), each
 * parsed at load. */
START_TEST(test_load_verdicts)
{
    sim_scenario_t sc;
    const char *yaml =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: prov\n"
        "  annotations: {sim.sluice.dev/verdict: \"Maybe:1s\"}\nspec: {controllerName: c}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: ok\n"
        "  annotations: {sim.sluice.dev/verdict: \"Retry:1m,Ready\"}\n"
        "spec: {controllerName: c}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: f\n"
        "  annotations: {sim.sluice.dev/verdicts: \"prov=Ready\"}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: w\n"
        "  namespace: ns\n  annotations: {sim.sluice.dev/verdicts: \"prov=Ready:5x; ok\"}\n"
        "spec:\n  queueName: lq\n  podSets:\n  - name: main\n    count: 1\n    template:\n"
        "      spec:\n        containers:\n        - name: c\n";

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 3);
    ck_assert_str_eq(sc.errors[0], "doc 1 (AdmissionCheck prov): metadata.annotations[sim.sluice."
                                   "dev/verdict]: verdict \"Maybe:1s\": want Ready, Retry or "
                                   "Rejected, then optionally :DURATION (e.g. Ready:30s; "
                                   "Retry:30s:2m also delays the requeue by 2m)");
    ck_assert_str_eq(sc.errors[1], "doc 3 (ResourceFlavor f): metadata.annotations[sim.sluice.dev/"
                                   "verdicts]: only a Job or a Workload waits for admission "
                                   "checks; a ResourceFlavor has no verdicts");
    ck_assert_ptr_nonnull(strstr(sc.errors[2], "doc 4 (Workload ns/w): metadata.annotations[sim."
                                               "sluice.dev/verdicts]: "));
    sim_scenario_fini(&sc);
}
END_TEST

/* A Retry verdict's requeue delay (Kueue's requeueAfterSeconds): whole seconds, on Retry only;
 * every step of a sequence is checked, and a valid one parses into the step's delay. */
START_TEST(test_load_verdict_requeue)
{
    sim_scenario_t sc;
    const char *yaml =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: a\n"
        "  annotations: {sim.sluice.dev/verdict: \"Ready:1m:30s\"}\nspec: {controllerName: c}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: b\n"
        "  annotations: {sim.sluice.dev/verdict: \"Retry:1s:2m,Retry:1s:1500ms\"}\n"
        "spec: {controllerName: c}\n"
        "---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata:\n  name: c\n"
        "  annotations: {sim.sluice.dev/verdict: \"Retry:0s:2m,Ready\"}\n"
        "spec: {controllerName: c}\n";
    check_state_t st;
    int64_t dl, rq;

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 2);
    ck_assert_str_eq(sc.errors[0], "doc 1 (AdmissionCheck a): metadata.annotations[sim.sluice."
                                   "dev/verdict]: verdict \"Ready:1m:30s\": only Retry takes a "
                                   "requeue delay (Retry:DURATION:REQUEUE_AFTER)");
    ck_assert_str_eq(sc.errors[1], "doc 2 (AdmissionCheck b): metadata.annotations[sim.sluice."
                                   "dev/verdict]: verdict \"Retry:1s:1500ms\": requeue delay: "
                                   "want whole seconds (Kueue's requeueAfterSeconds)");
    sim_scenario_fini(&sc);

    ck_assert_int_eq(sim_verdict_step("Retry:0s:2m,Ready", 17, 0, &st, &dl, &rq, NULL), ERR_OK);
    ck_assert_int_eq(st, CHECK_STATE_RETRY);
    ck_assert_int_eq(dl, 0);
    ck_assert_int_eq(rq, 120);
    ck_assert_int_eq(sim_verdict_step("Retry:0s:2m,Ready", 17, 1, &st, &dl, &rq, NULL), ERR_OK);
    ck_assert_int_eq(st, CHECK_STATE_READY);
    ck_assert_int_eq(rq, -1);
    ck_assert_int_eq(sim_verdict_step("Retry:5s", 8, 0, &st, &dl, &rq, NULL), ERR_OK);
    ck_assert_int_eq(dl, 5000);
    ck_assert_int_eq(rq, -1);
}
END_TEST

/* waitForPodsReady's annotations (issue 17): a duration or "never", on what runs only. */
START_TEST(test_load_pods_ready_annotations)
{
    sim_scenario_t sc;
    const char *ok = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" JOB(
        "  name: j\n", "    sim.sluice.dev/pods-ready-after: never\n"
                       "    sim.sluice.dev/pods-unready-after: 90s\n"
                       "    sim.sluice.dev/pods-recover-after: never\n");
    const char *bad = FLAVOR "  annotations:\n    sim.sluice.dev/pods-ready-after: 1m\n---\n" JOB(
        "  name: j\n", "    sim.sluice.dev/pods-ready-after: soon\n"
                       "    sim.sluice.dev/pods-recover-afer: 1m\n");

    ck_assert_int_eq(load(ok, &sc), ERR_OK);
    ck_assert(sc.docs[3].has_pods_ready && sc.docs[3].pods_ready_after == SIM_NEVER);
    ck_assert(sc.docs[3].has_pods_unready && sc.docs[3].pods_unready_after == 90000);
    ck_assert(sc.docs[3].has_pods_recover && sc.docs[3].pods_recover_after == SIM_NEVER);
    ck_assert(!sc.docs[2].has_pods_ready && !sc.docs[2].has_pods_unready);
    sim_scenario_fini(&sc);

    ck_assert_int_eq(load(bad, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 3);
    ck_assert_str_eq(sc.errors[0], "doc 1 (ResourceFlavor default): metadata.annotations: "
                                   "sim.sluice.dev/pods-* annotations go on what runs (a Job, a "
                                   "Workload, ...); a ResourceFlavor has no pods");
    ck_assert_ptr_nonnull(strstr(sc.errors[1], "doc 2 (Job team-a/j): metadata.annotations["
                                               "sim.sluice.dev/pods-ready-after]: duration "
                                               "\"soon\""));
    ck_assert_str_eq(sc.errors[2], "doc 2 (Job team-a/j): metadata.annotations[sim.sluice.dev/"
                                   "pods-recover-afer]: unknown simulator annotation; did you "
                                   "mean \"sim.sluice.dev/pods-recover-after\"?");
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_syntax_error_and_non_objects)
{
    sim_scenario_t sc;

    ck_assert_int_eq(load(FLAVOR "---\n- a list\n---\nkind: [unclosed\n", &sc), ERR_INVALID);
    ck_assert_uint_eq(sc.nerrors, 2);
    ck_assert_str_eq(sc.errors[0], "doc 2: a document must be a Kubernetes object (a mapping), "
                                   "got a list");
    ck_assert_ptr_nonnull(strstr(sc.errors[1], "doc 3: line "));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_dangling_reference_and_duplicate)
{
    sim_scenario_t sc;

    /* No ResourceFlavor "default"; the same ClusterQueue twice at the same time. */
    ck_assert_int_eq(load(CQ("cq-a", "10") "---\n" CQ("cq-a", "10"), &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_ge(sc.nerrors, 2);
    for (size_t i = 0; i < sc.nerrors; i++)
        ck_assert_ptr_nonnull(strstr(sc.errors[i], "(ClusterQueue cq-a): "));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_warnings_once)
{
    sim_scenario_t sc;
    const char *v1 = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n"
                     "  name: a\n---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                     "metadata:\n  name: b\n";

    ck_assert_int_eq(load(v1, &sc), ERR_OK);
    ck_assert_uint_eq(sc.nwarnings, 1);
    ck_assert_ptr_nonnull(strstr(sc.warnings[0], "doc 1 (ResourceFlavor a): apiVersion: "));
    sim_scenario_fini(&sc);
}
END_TEST

/* Settings that have no effect in a run are warned: the operator's own Configuration sections
 * (not waitForPodsReady, which the simulator models),
 * a fairSharing weight while fair sharing is off (no Configuration: Kueue's default, off), a
 * LocalQueue's fairSharing while admission fair sharing is off, or its ClusterQueue is not
 * UsageBasedAdmissionFairSharing. */
START_TEST(test_load_no_effect_warnings)
{
    sim_scenario_t sc;
    const char *yaml = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
                       "waitForPodsReady:\n  timeout: 5m\nwebhook:\n  port: 9443\n---\n" FLAVOR
                       "---\n" CQA("cq-a", "10", "") "  fairSharing:\n    weight: 2\n---\n" LQ
                                                     "  fairSharing:\n    weight: 3\n";

    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    dump(&sc);
    /* waitForPodsReady is read by the simulator too (issue 17): no warning for it */
    ck_assert_uint_eq(sc.nwarnings, 3);
    ck_assert_ptr_nonnull(strstr(sc.warnings[0], "doc 1 (Configuration): webhook: "
                                                 "has no effect in the simulator: only sluice "
                                                 "run reads it"));
    ck_assert_ptr_nonnull(strstr(sc.warnings[1], "doc 3 (ClusterQueue cq-a): spec.fairSharing: "
                                                 "has no effect: fair sharing is off"));
    ck_assert_ptr_nonnull(strstr(sc.warnings[2], "doc 4 (LocalQueue team-a/lq): "
                                                 "spec.fairSharing: has no effect: admission "
                                                 "fair sharing is off"));
    sim_scenario_fini(&sc);
    /* with fair sharing on, the ClusterQueue's weight counts */
    yaml = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n"
           "---\n" FLAVOR "---\n" CQA("cq-a", "10", "") "  fairSharing:\n    weight: 2\n";
    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    ck_assert_uint_eq(sc.nwarnings, 0);
    sim_scenario_fini(&sc);
    /* admission fair sharing on: the weight counts in a UsageBased queue, not in another */
    yaml =
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "admissionFairSharing:\n  usageHalfLifeTime: 1h\n---\n" FLAVOR
        "---\n" CQA("cq-a", "10", "") "  admissionScope:\n"
                                      "    admissionMode: UsageBasedAdmissionFairSharing\n---\n" LQ
                                      "  fairSharing:\n    weight: 3\n";
    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    dump(&sc);
    ck_assert_uint_eq(sc.nwarnings, 0);
    ck_assert(sc.config != NULL && sc.config->afs && sc.config->afs_half_life_ms == 3600000 &&
              sc.config->afs_sampling_ms == 300000);
    sim_scenario_fini(&sc);
    yaml = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
           "admissionFairSharing:\n  usageHalfLifeTime: 1h\n---\n" FLAVOR
           "---\n" CQA("cq-a", "10", "") "---\n" LQ "  fairSharing:\n    weight: 3\n";
    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    ck_assert_uint_eq(sc.nwarnings, 1);
    ck_assert_ptr_nonnull(strstr(sc.warnings[0], "doc 4 (LocalQueue team-a/lq): spec.fairSharing: "
                                                 "has no effect: ClusterQueue \"cq-a\" has no "
                                                 "admissionScope UsageBasedAdmissionFairSharing"));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_empty)
{
    sim_scenario_t sc;

    ck_assert_int_eq(load("", &sc), ERR_OK);
    ck_assert_uint_eq(sc.ndocs, 0);
    sim_scenario_fini(&sc);
}
END_TEST

/* Each allocation of loading a scenario with generated names, updates, a warning and an error
 * fails in turn: ERR_NOMEM, and nothing leaks (ASan); with none failing, the error is reported. */
/* Load `yaml` with its n-th allocation failing, for n = 1, 2, ... until it needs fewer: each
 * such load is ERR_NOMEM, the last one `want` with `nerrors` errors; more than 20 allocations. */
static void load_failing_each_allocation(const char *yaml, err_t want, size_t nerrors)
{
    long n;

    for (n = 1;; n++) {
        sim_scenario_t sc;
        err_msg_t msg = {{0}};
        long made;
        err_t rc;

        sim_scenario_init(&sc);
        oom_fail_at(n);
        rc = sim_scenario_load_string(yaml, strlen(yaml), &sc, &msg);
        made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_int_eq(rc, want);
            ck_assert_uint_eq(sc.nerrors, nerrors);
            sim_scenario_fini(&sc);
            break;
        }
        ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %s (%s)", n, err_str(rc), msg.text);
        sim_scenario_fini(&sc);
    }
    ck_assert_int_gt(n, 20);
}

START_TEST(test_load_allocation_failures)
{
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" JOB(
        "  generateName: train-\n",
        "    sim.sluice.dev/runtime: "
        "1m\n") "---\n" JOB("  "
                            "generateName: "
                            "train-\n",
                            "    "
                            "sim.sluice.dev/"
                            "at: 2s\n") "--"
                                        "-\n" CQA("cq-a", "4",
                                                  "  annotations:\n    sim.sluice.dev/at: 1m\n   "
                                                  " sim.sluice.dev/runtime: 1s\n");
    /* a ClusterQueue has no runtime: one error once nothing fails */
    load_failing_each_allocation(yaml, ERR_INVALID, 1);
}
END_TEST

/* ---- the other workload kinds (JobSet, ...): built by lib/jobs as the operator builds them -- */

#define JOBSET(meta, annotations)                                                          \
    "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n" meta                 \
    "  namespace: team-a\n  labels:\n    kueue.x-k8s.io/queue-name: lq\n  "                \
    "annotations:\n" annotations                                                           \
    "spec:\n  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template:\n"        \
    "      spec:\n        parallelism: 4\n        template:\n          spec:\n"            \
    "            containers:\n            - name: c\n              resources:\n"           \
    "                requests: {cpu: 1}\n  - name: driver\n    template:\n      spec:\n"   \
    "        template:\n          spec:\n            containers:\n            - name: c\n" \
    "              resources:\n                requests: {cpu: 2}\n"

START_TEST(test_load_jobset)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" JOBSET(
        "  name: js\n", "    sim.sluice.dev/runtime: 10m\n") "---\n" JOBSET("  generateName: "
                                                                            "js-\n",
                                                                            "    sim.sluice."
                                                                            "dev/at: 1s\n");
    const integration_t *it;

    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    ck_assert_uint_eq(sc.ndocs, 5);
    ck_assert_int_eq(sc.docs[3].obj.kind, KIND_INTEGRATION);
    it = &sc.docs[3].obj.u.integ;
    ck_assert_str_eq(it->kind, "JobSet");
    ck_assert_str_eq(it->meta.name, "js");
    ck_assert(it->built);
    ck_assert(sc.docs[3].has_runtime);
    ck_assert_int_eq(sc.docs[3].runtime, 600000);
    /* One pod set per replicated Job, named after it: replicas x parallelism pods. */
    ck_assert_uint_eq(it->wl.npod_sets, 2);
    ck_assert_str_eq(it->wl.pod_sets[0].name, "workers");
    ck_assert_int_eq(it->wl.pod_sets[0].count, 8);
    ck_assert_str_eq(it->wl.pod_sets[1].name, "driver");
    ck_assert_int_eq(it->wl.pod_sets[1].count, 1);
    ck_assert_str_eq(it->wl.queue_name, "lq");
    /* generateName counts per generateName, as for Jobs. */
    ck_assert_str_eq(sc.docs[4].obj.u.integ.meta.name, "js-1");
    ck_assert_int_eq(sc.docs[4].at, 1000);
    sim_scenario_fini(&sc);
}
END_TEST

/* A PyTorchJob: one pod set per replica type, lower-cased, in Kueue's order; the PriorityClass
 * of runPolicy.schedulingPolicy before the templates'. */
START_TEST(test_load_pytorchjob)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ(
        "cq-a", "10") "---\n" LQ
                      "---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: pt\n"
                      "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: lq}\n"
                      "  annotations: {sim.sluice.dev/runtime: 1m}\nspec:\n  runPolicy:\n"
                      "    schedulingPolicy: {priorityClass: urgent}\n  pytorchReplicaSpecs:\n"
                      "    Worker:\n      replicas: 3\n      template:\n        spec:\n"
                      "          priorityClassName: low\n"
                      "          containers: [{name: c, resources: {requests: {cpu: 1}}}]\n"
                      "    Master:\n      replicas: 1\n      template:\n        spec:\n"
                      "          containers: [{name: c, resources: {requests: {cpu: 1}}}]\n";
    const integration_t *it;

    ck_assert_int_eq(load(yaml, &sc), ERR_OK);
    it = &sc.docs[3].obj.u.integ;
    ck_assert_str_eq(it->kind, "PyTorchJob");
    ck_assert(it->built);
    ck_assert_uint_eq(it->wl.npod_sets, 2);
    ck_assert_str_eq(it->wl.pod_sets[0].name, "master");
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    ck_assert_str_eq(it->wl.pod_sets[1].name, "worker");
    ck_assert_int_eq(it->wl.pod_sets[1].count, 3);
    ck_assert_str_eq(it->priority_class_name, "urgent");
    ck_assert(!it->suspended);
    sim_scenario_fini(&sc);
}
END_TEST

/* A single plain Pod (a notebook) and a StatefulSet are a workload each; a Deployment and a
 * LeaderWorkerSet are one per replica (per_replica, with one replica's pod sets); a Pod of a pod
 * group is not modelled. */
START_TEST(test_load_pods)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ(
        "cq-a",
        "10") "---\n" LQ "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: notebook\n"
              "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: lq}\n"
              "  annotations: {sim.sluice.dev/runtime: 2h}\n"
              "spec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: 2}}}]\n"
              "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: member\n"
              "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: lq, "
              "kueue.x-k8s.io/pod-group-name: g}\n"
              "  annotations: {kueue.x-k8s.io/pod-group-total-count: \"1\"}\n"
              "spec:\n  containers: [{name: c, image: i}]\n"
              "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
              "  namespace: team-a\nspec:\n  template:\n    spec:\n"
              "      containers: [{name: c, image: i}]\n"
              "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n"
              "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: lq}\n"
              "spec:\n  replicas: 3\n  template:\n    spec:\n"
              "      containers: [{name: c, image: i, resources: {requests: {cpu: 1}}}]\n"
              "---\napiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n"
              "metadata:\n  name: llm\n  namespace: team-a\n"
              "  labels: {kueue.x-k8s.io/queue-name: lq}\n"
              "spec:\n  replicas: 2\n  leaderWorkerTemplate:\n    size: 4\n"
              "    leaderTemplate:\n      spec:\n        containers: [{name: c, image: i}]\n"
              "    workerTemplate:\n      spec:\n        containers: [{name: c, image: i}]\n"
              /* Job web-0 takes the name of the Deployment's first replica's workload. */
              "---\n" JOB(
                  "  name: web-0\n",
                  "") "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: huge\n"
                      "  namespace: team-a\nspec:\n  replicas: 100001\n  template:\n    spec:\n"
                      "      containers: [{name: c, image: i}]\n";
    const integration_t *it;

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 2);
    ck_assert_str_eq(sc.errors[1], "doc 10 (Deployment team-a/huge): spec.replicas: the "
                                   "simulator runs at most 100000 workloads per object (one per "
                                   "replica), got 100001");
    ck_assert_str_eq(sc.errors[0], "doc 9 (Job team-a/web-0): metadata.name: workload "
                                   "team-a/web-0 is already the workload of doc 6 (Deployment "
                                   "team-a/web) (a Deployment's workload is named after the "
                                   "Deployment)");
    it = &sc.docs[3].obj.u.integ;
    ck_assert_int_eq(sc.docs[3].obj.kind, KIND_INTEGRATION);
    ck_assert_str_eq(it->kind, "Pod");
    ck_assert(it->built);
    ck_assert(!it->per_replica);
    ck_assert_uint_eq(it->wl.npod_sets, 1);
    ck_assert_str_eq(it->wl.pod_sets[0].name, "main");
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    ck_assert_ptr_null(sc.docs[3].group);
    /* A pod group of one: its workload is the group's, named after it. */
    it = &sc.docs[4].obj.u.integ;
    ck_assert(it->built);
    ck_assert_str_eq(sc.docs[4].group, "g");
    ck_assert_uint_eq(it->wl.npod_sets, 1);
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    /* A Deployment: one workload per replica (default 1), each one Pod. */
    it = &sc.docs[5].obj.u.integ;
    ck_assert_str_eq(it->kind, "Deployment");
    ck_assert(it->built);
    ck_assert(it->per_replica);
    ck_assert_int_eq(it->replicas, 1);
    ck_assert_uint_eq(it->wl.npod_sets, 1);
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    /* A StatefulSet is one Workload: all its replicas in one pod set. */
    it = &sc.docs[6].obj.u.integ;
    ck_assert_str_eq(it->kind, "StatefulSet");
    ck_assert(it->built);
    ck_assert(it->serving);
    ck_assert(!it->per_replica);
    ck_assert_uint_eq(it->wl.npod_sets, 1);
    ck_assert_int_eq(it->wl.pod_sets[0].count, 3);
    /* A LeaderWorkerSet: one workload per replica, leader 1 + worker size-1. */
    it = &sc.docs[7].obj.u.integ;
    ck_assert_str_eq(it->kind, "LeaderWorkerSet");
    ck_assert(it->per_replica);
    ck_assert_int_eq(it->replicas, 2);
    ck_assert_uint_eq(it->wl.npod_sets, 2);
    ck_assert_str_eq(it->wl.pod_sets[0].name, "leader");
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    ck_assert_str_eq(it->wl.pod_sets[1].name, "worker");
    ck_assert_int_eq(it->wl.pod_sets[1].count, 3);
    sim_scenario_fini(&sc);
}
END_TEST

/* ---- pod groups: one Workload per group, when its last Pod arrives ------------------------ */

#define GPOD(name, group, total, at, cpu)                                                         \
    "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\n  namespace: team-a\n"          \
    "  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/pod-group-name: " group "}\n"       \
    "  annotations: {kueue.x-k8s.io/pod-group-total-count: \"" total "\", sim.sluice.dev/at: " at \
    "}\nspec:\n  containers: [{name: c, image: i, resources: {requests: {cpu: " cpu "}}}]\n"

#define GROUPS                                                                      \
    FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ GPOD("w0", "train", "4", "1s", "2")  \
        GPOD("driver", "train", "4", "0s", "1") GPOD("w2", "train", "4", "5s", "2") \
            GPOD("w1", "train", "4", "3s", "2") GPOD("w1", "train", "4", "4s", "2") \
                GPOD("h0", "half", "3", "0s", "1") GPOD("h1", "half", "3", "0s", "1")

START_TEST(test_load_pod_groups)
{
    sim_scenario_t sc;
    const integration_t *it;

    ck_assert_int_eq(load(GROUPS, &sc), ERR_OK);
    /* train: driver, w0, w1 (its second document is an update), w2: complete with w2 at 5s
     * (doc 6), which carries the group's one workload. */
    for (size_t i = 3; i < sc.ndocs; i++) {
        if (i == 5)
            continue;
        ck_assert_msg(!sc.docs[i].obj.u.integ.built && sc.docs[i].group == NULL, "doc %zu", i + 1);
    }
    ck_assert_str_eq(sc.docs[5].group, "train");
    it = &sc.docs[5].obj.u.integ;
    ck_assert(it->built);
    ck_assert_str_eq(it->wl.queue_name, "lq");
    ck_assert_str_eq(kv_list_get(&it->wl.meta.annotations, "kueue.x-k8s.io/is-group-workload"),
                     "true");
    /* Two roles (Kueue's role hashes), sorted by name: the driver (1 cpu) and 3 workers. */
    ck_assert_uint_eq(it->wl.npod_sets, 2);
    int32_t c0 = it->wl.pod_sets[0].count, c1 = it->wl.pod_sets[1].count;
    ck_assert(strcmp(it->wl.pod_sets[0].name, it->wl.pod_sets[1].name) < 0);
    ck_assert((c0 == 1 && c1 == 3) || (c0 == 3 && c1 == 1));
    /* half: 2 of 3 Pods, no workload, and a warning saying why. */
    ck_assert_uint_eq(sc.nwarnings, 1);
    ck_assert_str_eq(sc.warnings[0],
                     "doc 10 (Pod team-a/h1): metadata.labels[kueue.x-k8s.io/pod-group-name]: "
                     "'half' group has fewer runnable pods than expected (2 of 3 pods in the "
                     "scenario): Kueue creates no Workload for an incomplete group, so it never "
                     "runs");
    sim_scenario_fini(&sc);

    /* Pods that disagree on the total count: an error, on the document that completes it. */
    const char *bad = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ GPOD("a", "g", "2", "0s", "1")
        GPOD("b", "g", "3", "0s", "1");
    ck_assert_int_eq(load(bad, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 1);
    ck_assert_ptr_nonnull(strstr(sc.errors[0], "doc 5 (Pod team-a/b): metadata.labels["
                                               "kueue.x-k8s.io/pod-group-name]: pod group 'g': "));
    sim_scenario_fini(&sc);

    /* A group's workload takes its name: a Job of that name is another workload. */
    const char *clash = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ GPOD(
        "a", "web", "1", "0s", "1") "---\n" JOB("  name: web\n", "");
    ck_assert_int_eq(load(clash, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 1);
    ck_assert_ptr_nonnull(strstr(sc.errors[0], "doc 5 (Job team-a/web): metadata.name: workload "
                                               "team-a/web is already the workload of doc 4 (Pod "
                                               "team-a/a) (a pod group's workload is named after "
                                               "the group)"));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_pod_groups_allocation_failures)
{
    /* Small (every allocation fails once under ASan too): a group of 2, an incomplete one. */
    load_failing_each_allocation(FLAVOR "---\n" LQ GPOD("a", "g", "2", "0s", "1")
                                     GPOD("b", "g", "2", "1s", "1") GPOD("h", "h", "2", "0s", "1"),
                                 ERR_INVALID, 1);
}
END_TEST

START_TEST(test_load_jobset_errors)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ(
        "cq-a",
        "10") "---\n" LQ
              "---\n" JOB("  name: same\n", "    sim.sluice.dev/runtime: 1m\n") "---\n" JOBSET(
                  "  name: same\n",
                  "    sim.sluice."
                  "dev/at: 1s\n") "---\napiVersion: jobset.x-k8s.io/v1alpha2\nkind: "
                                  "JobSet\nmetadata:\n  name: bad\n"
                                  "  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: "
                                  "Not_A_Queue}\n"
                                  "spec:\n  replicatedJobs: []\n";

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    dump(&sc);
    ck_assert_uint_eq(sc.nerrors, 3);
    ck_assert_str_eq(sc.errors[0],
                     "doc 5 (JobSet team-a/same): metadata.name: workload team-a/same is already "
                     "the workload of doc 4 (Job team-a/same) (a JobSet's workload is named after "
                     "the JobSet)");
    ck_assert_ptr_nonnull(strstr(sc.errors[1], "doc 6 (JobSet team-a/bad): "));
    ck_assert_ptr_nonnull(strstr(sc.errors[2], "doc 6 (JobSet team-a/bad): metadata.labels["
                                               "kueue.x-k8s.io/queue-name]: a lowercase RFC 1123 "
                                               "subdomain"));
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_jobset_allocation_failures)
{
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" JOBSET(
        "  generateName: js-\n", "    sim.sluice.dev/runtime: 1m\n");
    load_failing_each_allocation(yaml, ERR_OK, 0);
}
END_TEST

/* ---- TrainJob: pod sets from the training runtime it names, wherever it is in the file ---- */

#define TRAINJOB(name, runtime, annotations)                                                     \
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: " name        \
    "\n  namespace: team-a\n  labels: {kueue.x-k8s.io/queue-name: lq}\n  annotations: "          \
    "{" annotations "}\nspec:\n  runtimeRef: {name: " runtime "}\n  trainer:\n    numNodes: 3\n" \
    "    resourcesPerNode: {requests: {cpu: 2}}\n"
#define RUNTIME(name)                                                                         \
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata:\n"    \
    "  name: " name "\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n" \
    "      replicatedJobs:\n      - name: dataset-initializer\n        template:\n"           \
    "          metadata:\n            labels:\n"                                              \
    "              trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer\n"        \
    "          spec:\n            template:\n              spec:\n"                           \
    "                containers: [{name: dataset-initializer, image: i}]\n"                   \
    "      - name: node\n        template:\n          metadata:\n            labels:\n"       \
    "              trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"                    \
    "          spec:\n            template:\n              spec:\n"                           \
    "                priorityClassName: research\n"                                           \
    "                containers: [{name: node, image: i}]\n"

START_TEST(test_load_trainjob)
{
    sim_scenario_t sc;
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" TRAINJOB(
        "bert", "torch",
        "sim.sluice.dev/runtime: 5m") "---\n" TRAINJOB("orphan", "nope",
                                                       "") "---\n" RUNTIME("torch");
    const integration_t *it;

    ck_assert_int_eq(load(yaml, &sc), ERR_INVALID);
    ck_assert_uint_eq(sc.ndocs, 6);
    /* The runtime comes after the TrainJob: resolved all the same. */
    ck_assert_int_eq(sc.docs[3].obj.kind, KIND_INTEGRATION);
    it = &sc.docs[3].obj.u.integ;
    ck_assert_str_eq(it->kind, "TrainJob");
    ck_assert(it->built);
    ck_assert_int_eq(sc.docs[3].runtime, 300000);
    ck_assert_uint_eq(it->wl.npod_sets, 2);
    ck_assert_str_eq(it->wl.pod_sets[0].name, "dataset-initializer");
    ck_assert_int_eq(it->wl.pod_sets[0].count, 1);
    ck_assert_str_eq(it->wl.pod_sets[1].name, "node");
    ck_assert_int_eq(it->wl.pod_sets[1].count, 3);
    ck_assert_str_eq(it->priority_class_name, "research");
    /* The runtime is no object of the run; a missing one is an error: nothing to simulate. */
    ck_assert_int_eq(sc.docs[5].obj.kind, KIND_UNKNOWN);
    ck_assert_uint_eq(sc.nerrors, 1);
    ck_assert_str_eq(sc.errors[0],
                     "doc 5 (TrainJob team-a/orphan): spec.runtimeRef: runtime 'nope' not found");
    sim_scenario_fini(&sc);
}
END_TEST

START_TEST(test_load_trainjob_allocation_failures)
{
    const char *yaml = FLAVOR "---\n" CQ("cq-a", "10") "---\n" LQ "---\n" TRAINJOB(
        "bert", "torch", "sim.sluice.dev/runtime: 5m") "---\n" RUNTIME("torch");
    load_failing_each_allocation(yaml, ERR_OK, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_scenario");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_load_valid_with_timing_and_generate_name);
    tcase_add_test(tc, test_load_collects_every_error_in_document_order);
    tcase_add_test(tc, test_load_simulator_rules);
    tcase_add_test(tc, test_load_syntax_error_and_non_objects);
    tcase_add_test(tc, test_load_verdicts);
    tcase_add_test(tc, test_load_verdict_requeue);
    tcase_add_test(tc, test_load_dangling_reference_and_duplicate);
    tcase_add_test(tc, test_load_warnings_once);
    tcase_add_test(tc, test_load_empty);
    tcase_add_test(tc, test_load_allocation_failures);
    tcase_add_test(tc, test_load_jobset);
    tcase_add_test(tc, test_load_jobset_errors);
    tcase_add_test(tc, test_load_pytorchjob);
    tcase_add_test(tc, test_load_pods);
    tcase_add_test(tc, test_load_pod_groups);
    tcase_add_test(tc, test_load_pod_groups_allocation_failures);
    tcase_add_test(tc, test_load_no_effect_warnings);
    tcase_add_test(tc, test_load_jobset_allocation_failures);
    tcase_add_test(tc, test_load_trainjob);
    tcase_add_test(tc, test_load_pods_ready_annotations);
    tcase_add_test(tc, test_load_trainjob_allocation_failures);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
