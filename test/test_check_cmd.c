/* test_check_cmd -- `sluice check` end to end: the built binary on fixtures and the examples. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sluice_exec.h"

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define D "test/data/check/"

/*
 * Most tests here are about which problems are found, not where: they compare output with the
 * positions taken out ("FILE:12:5: doc 2 ..." read as "FILE: doc 2 ..."); the tests of positions
 * (positions_*) compare them in full.
 */
static sluice_result_t unpos(sluice_result_t r)
{
    char *w = r.out, *p = r.out;

    while (p != NULL && *p != '\0') {
        char *eol = strchr(p, '\n'), *doc = strstr(p, ": doc ");
        char *end = eol != NULL ? eol + 1 : p + strlen(p), *cut = NULL;
        if (doc != NULL && doc < end) {
            /* Back over ":COL" and ":LINE" before ": doc". */
            char *q = doc;
            for (int k = 0; k < 2 && q != NULL; k++) {
                char *digits = q;
                while (digits > p && digits[-1] >= '0' && digits[-1] <= '9')
                    digits--;
                q = digits < q && digits > p && digits[-1] == ':' ? digits - 1 : NULL;
            }
            cut = q;
        }
        if (cut != NULL) {
            size_t head = (size_t)(cut - p), tail = (size_t)(end - doc);
            memmove(w, p, head);
            memmove(w + head, doc, tail);
            w += head + tail;
        } else {
            memmove(w, p, (size_t)(end - p));
            w += end - p;
        }
        p = end;
    }
    if (w != NULL)
        *w = '\0';
    return r;
}

#define CHECK_EXEC(...) unpos(sluice_exec(__VA_ARGS__))

START_TEST(examples_pass)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "examples/platform", NULL);

    ck_assert_msg(r.rc == 0, "examples/platform must pass:\n%s%s", r.out, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: 20 objects in 7 files: ok\n");
    sluice_result_fini(&r);

    /* The same files named one by one, quietly. */
    r = CHECK_EXEC(NULL, "check", "--quiet", "examples/platform/00-namespaces.yaml",
                   "examples/platform/10-flavors.yaml", "examples/platform/20-priorities.yaml",
                   "examples/platform/30-cohort.yaml", "examples/platform/40-clusterqueues.yaml",
                   "examples/platform/50-localqueues.yaml", "examples/platform/60-jobs.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "");
    sluice_result_fini(&r);
}
END_TEST

/* examples/idle-reclaim.yaml: the Configuration's idle-reclaim section is read as `sluice run
 * --config` reads it (docs/idle-reclaim.md). */
START_TEST(idle_reclaim_example)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "examples/idle-reclaim.yaml", NULL);

    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err);
    ck_assert_str_eq(r.err, "sluice check: 6 objects in 1 file: ok\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(invalid_lines)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", D "invalid.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(
        r.out,
        D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[0].resources[1].lendingLimit: must be nil when cohort "
          "is empty\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].resources[1].lendingLimit: must be nil when cohort "
          "is empty\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].resources[1].lendingLimit: must be less than or "
          "equal to the nominalQuota\n" D "invalid.yaml: doc 2 (ClusterQueue research): "
          "spec.resourceGroups[0].flavors[1].name: references missing ResourceFlavor \"h100\"\n" D
          "invalid.yaml: doc 3 (LocalQueue research/default): spec.clusterQueue: references "
          "missing ClusterQueue \"reserch\"\n" D "invalid.yaml: doc 4 (ClusterQueue broken): "
          "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: invalid quantity "
          "\"12x\"\n" D "invalid.yaml: doc 6 (Job research/sweep): warning: "
          "metadata.labels[kueue.x-k8s.io/priority-class]: references missing "
          "WorkloadPriorityClass \"experiments\" (Kueue will not create the Workload)\n");
    ck_assert_str_eq(r.err, "sluice check: 6 objects in 1 file: 6 errors, 1 warning\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(cohort_cycle)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "cycle.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out,
                     D "cycle.yaml: doc 1 (Cohort org): spec.parentName: cohort cycle org -> "
                       "division -> org: Kueue admits no workloads in a cohort cycle\n" D
                       "cycle.yaml: doc 2 (Cohort division): spec.parentName: cohort cycle "
                       "division -> org -> division: Kueue admits no workloads in a cohort "
                       "cycle\n" D "cycle.yaml: doc 3 (ClusterQueue team): spec.cohortName: "
                       "cohort \"org\" is in the cohort cycle org -> division -> org: Kueue "
                       "admits no workloads in a cohort cycle\n");
    ck_assert_str_eq(r.err, "");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(warnings_do_not_fail)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", D "warnings.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, D "warnings.yaml: doc 2 (LocalQueue team-a/default): warning: "
                              "spec.clusterQueue: ClusterQueue \"closed\" has no "
                              "namespaceSelector, so it admits no workloads (use "
                              "namespaceSelector: {} for every namespace)\n");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 1 file: ok, 1 warning\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(cross_file_references)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", D "queue.json", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "queue.json: doc 1 (ClusterQueue inference): "
                              "spec.resourceGroups[0].flavors[0].name: references missing "
                              "ResourceFlavor \"l4\"\n");
    sluice_result_fini(&r);
    r = CHECK_EXEC(NULL, "check", D "queue.json", D "flavors.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 2 files: ok\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(stdin_input)
{
    sluice_result_t r = CHECK_EXEC(D "queue.json", "check", "-", D "flavors.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 2 files: ok\n");
    sluice_result_fini(&r);
    r = CHECK_EXEC(D "queue.json", "check", "-", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "<stdin>: doc 1 (ClusterQueue inference): "
                            "spec.resourceGroups[0].flavors[0].name: references missing "
                            "ResourceFlavor \"l4\"\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(kubectl_lists)
{
    /* A List from kubectl, on standard input: its items are the objects (the flavor they
     * reference is among them). */
    sluice_result_t r = CHECK_EXEC(D "list.yaml", "check", "-", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "<stdin>: doc 1 items[1] (ClusterQueue gpu): spec.queueingStrategy: "
                            "Unsupported value: \"Wrong\": supported values: \"BestEffortFIFO\", "
                            "\"StrictFIFO\"\n");
    ck_assert_str_eq(r.err, "sluice check: 2 objects in 1 file: 1 error\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(scenario_updates)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "scenario.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "scenario.yaml: doc 4 (ClusterQueue cq): metadata.name: Duplicate "
                              "value: \"cq\": also defined by " D "scenario.yaml doc 2\n" D
                              "scenario.yaml: doc 5 (LocalQueue ns/q): metadata.name: Duplicate "
                              "value: \"q\": also defined by " D "scenario.yaml doc 3\n");
    sluice_result_fini(&r);
    r = CHECK_EXEC(NULL, "check", "-q", "--scenario", D "scenario.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "scenario.yaml: doc 5 (LocalQueue ns/q): spec.clusterQueue: field "
                              "is immutable\n");
    sluice_result_fini(&r);
}
END_TEST

/* Workload status updates go through Kueue's update rules (reclaimable pods, podSetUpdates of
 * a Ready check, clusterName) when --scenario reads the second document as an update. */
START_TEST(workload_status_updates)
{
    sluice_result_t r =
        CHECK_EXEC(NULL, "check", "-q", "--scenario", D "workload-status.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out,
                     D "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.reclaimablePods[workers]: Required value: cannot be removed\n" D
                       "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.admissionChecks[0].podSetUpdates: field is immutable\n" D
                       "workload-status.yaml: doc 5 (Workload ns/train): "
                       "status.clusterName: when setting clusterName it must be one of the "
                       "nominatedClusterNames\n");
    sluice_result_fini(&r);
}
END_TEST

START_TEST(io_errors)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", D "no-such-file.yaml", NULL);

    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: " D "no-such-file.yaml: No such file or directory\n"
                            "sluice check: 0 objects in 0 files: 0 errors; 1 file could not be "
                            "read\n");
    sluice_result_fini(&r);

    /* A syntax error names the file and line; the documents before it are still checked, and
     * a read error outranks invalid objects in the exit status. */
    r = CHECK_EXEC(NULL, "check", D "syntax-error.yaml", D "cycle.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, D "syntax-error.yaml:10:1: "));
    ck_assert_ptr_nonnull(strstr(r.out, D "cycle.yaml: doc 1 (Cohort org)"));
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: 4 objects in 2 files: 3 errors; 1 file "
                                        "could not be read\n"));
    sluice_result_fini(&r);
}
END_TEST

START_TEST(usage)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "--help", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sluice check [options] FILE..."));
    ck_assert_ptr_nonnull(strstr(r.out, "--quiet"));
    ck_assert_ptr_nonnull(strstr(r.out, "--scenario"));
    ck_assert_ptr_nonnull(strstr(r.out, "--help"));
    ck_assert_ptr_nonnull(strstr(r.out, "exit status"));
    sluice_result_fini(&r);

    r = CHECK_EXEC(NULL, "check", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: no FILE given"));
    sluice_result_fini(&r);

    r = CHECK_EXEC(NULL, "check", "--bogus", D "flavors.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(
        strstr(r.err, "sluice check: unknown option --bogus (see sluice check --help)\n"));
    sluice_result_fini(&r);
}
END_TEST

/* The workload kinds Kueue manages besides Job (JobSet here): jobframework's label rules, the
 * Workload built as the operator builds it (its errors at their field paths), references. */
START_TEST(integration_kinds)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", D "integrations.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(
        r.out, D
        "integrations.yaml: doc 5 (JobSet ml/bad-labels): "
        "metadata.labels[kueue.x-k8s.io/queue-name]: a lowercase RFC 1123 subdomain must consist "
        "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n" D
        "integrations.yaml: doc 5 (JobSet ml/bad-labels): "
        "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: should be greater than 0\n" D
        "integrations.yaml: doc 5 (JobSet ml/bad-labels): "
        "metadata.annotations[kueue.x-k8s.io/elastic-job]: Forbidden: elastic job is not "
        "supported for \"jobset.x-k8s.io/v1alpha2, Kind=JobSet\"\n" D
        "integrations.yaml: doc 5 (JobSet ml/bad-labels): warning: "
        "metadata.labels[kueue.x-k8s.io/queue-name]: references missing LocalQueue "
        "\"User_Queue\" in namespace \"ml\"\n" D
        "integrations.yaml: doc 6 (JobSet ml/no-jobs): spec.replicatedJobs: Required value\n" D
        "integrations.yaml: doc 7 (JobSet ml/bad-request): "
        "spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.requests.cpu:"
        " invalid quantity \"1x\"\n" D "integrations.yaml: doc 8 (JobSet ml/old-version): warning: "
        "apiVersion: jobset.x-k8s.io/v1alpha2 is the version sluice "
        "reads; jobset.x-k8s.io/v1alpha1 is read as it\n" D
        "integrations.yaml: doc 9 (JobSet ml/too-many): spec.replicatedJobs: Too many: 19: must "
        "have at most 18 items\n");
    ck_assert_str_eq(r.err, "sluice check: 9 objects in 1 file: 6 errors, 2 warnings\n");
    sluice_result_fini(&r);

    /* The objects of the integration test (Kueue's documentation examples' shapes) are valid;
     * their LocalQueue is not among them. */
    r = CHECK_EXEC(NULL, "check", "-q", "test/data/crds-integrations/examples/jobset.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "test/data/crds-integrations/examples/jobset.yaml: doc 1 (JobSet "
                            "sleep-jobset): warning: metadata.labels[kueue.x-k8s.io/queue-name]: "
                            "references missing LocalQueue \"user-queue\" in namespace "
                            "\"default\"\n");
    sluice_result_fini(&r);
}
END_TEST

/* The Kubeflow kinds: a prebuilt Workload is fine for a PyTorchJob, not for a JAXJob (Kueue's
 * supportedPrebuiltWlJobGVKs); their LocalQueue is defined in the other file. */
START_TEST(integration_kinds_kubeflow)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml",
                                   D "integrations-kubeflow.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-kubeflow.yaml: doc 2 (JAXJob ml/jax): "
                                          "metadata.labels[kueue.x-k8s.io/prebuilt-workload-name]"
                                          ": Forbidden: Is not supported for \"kubeflow.org/v1, "
                                          "Kind=JAXJob\"\n"));
    ck_assert_ptr_null(strstr(r.out, "PyTorchJob"));
    ck_assert_ptr_null(strstr(r.out, "integrations-kubeflow.yaml: doc 2 (JAXJob ml/jax): warning"));
    sluice_result_fini(&r);
}
END_TEST

/* The Ray kinds: Kueue's RayJob and RayCluster webhook rules (a cluster of its own, deleted
 * after the job, no autoscaling unless elastic, no worker group named head); a RayJob on an
 * existing cluster is not Kueue's; an unlabelled RayCluster is not checked by them. */
START_TEST(integration_kinds_ray)
{
    sluice_result_t r =
        CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml", D "integrations-ray.yaml", NULL);
    const char *want = D
        "integrations-ray.yaml: doc 1 (RayJob ml/rayjob): spec.shutdownAfterJobFinishes: a kueue "
        "managed job should delete the cluster after finishing\n" D
        "integrations-ray.yaml: doc 1 (RayJob ml/rayjob): "
        "spec.rayClusterSpec.enableInTreeAutoscaling: a kueue managed job should only use "
        "autoscaling when workload slicing is enabled\n" D
        "integrations-ray.yaml: doc 1 (RayJob ml/rayjob): "
        "spec.rayClusterSpec.workerGroupSpecs[0].groupName: Forbidden: \"head\" is reserved for "
        "the head group\n" D "integrations-ray.yaml: doc 2 (RayJob ml/both): spec.clusterSelector: "
        "a kueue managed job should not use an existing cluster\n" D
        "integrations-ray.yaml: doc 3 (RayJob ml/neither): spec.rayClusterSpec: Required value: "
        "rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector\n" D
        "integrations-ray.yaml: doc 4 (RayCluster ml/autoscaled): spec.enableInTreeAutoscaling: a "
        "kueue-managed RayCluster can use autoscaling only as an elastic job: enable the "
        "ElasticJobsViaWorkloadSlices feature gate and set the \"kueue.x-k8s.io/elastic-job\": "
        "\"true\" annotation\n" D
        "integrations-ray.yaml: doc 5 (RayCluster ml/unmanaged): warning: metadata.labels: no "
        "kueue.x-k8s.io/queue-name label and no LocalQueue \"default\" in namespace \"ml\": Kueue "
        "does not manage this RayCluster\n";

    ck_assert_int_eq(r.rc, 1);
    ck_assert_msg(strstr(r.out, want) != NULL, "want:\n%s\ngot:\n%s", want, r.out);
    ck_assert_str_eq(strstr(r.out, D "integrations-ray.yaml"), want);
    sluice_result_fini(&r);
}
END_TEST

/* Slice layers (podset-slice-required-topology-constraints): a Job's are checked with Kueue's
 * rules; a Workload's or another kind's template that the engine cannot read is warned, never
 * passed in silence. */
START_TEST(tas_slice_layers)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "tas-layers.yaml", NULL);
    const char *ann = "template.metadata.annotations[kueue.x-k8s.io/"
                      "podset-slice-required-topology-constraints]";
    char want[1024];

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_null(strstr(r.out, "ml/good): spec"));
    snprintf(want, sizeof(want),
             D "tas-layers.yaml: doc 2 (Job ml/uneven): spec.%s[1].size: Invalid value: 3: "
               "must evenly divide the parent layer size 4\n",
             ann);
    ck_assert_ptr_nonnull(strstr(r.out, want));
    snprintf(want, sizeof(want),
             D "tas-layers.yaml: doc 3 (Workload ml/broken): warning: spec.podSets[0].%s: "
               "Invalid value: \"[{\\\"topology\\\": \\\"rack\\\", \\\"size\\\": 2}\": must be a "
               "valid JSON array: ']' expected near end of file; the annotation has no effect\n",
             ann);
    ck_assert_ptr_nonnull(strstr(r.out, want));
    snprintf(want, sizeof(want),
             "doc 4 (LeaderWorkerSet ml/vllm): warning: pod set main: %s: Invalid value: ", ann);
    ck_assert_ptr_nonnull(strstr(r.out, want));
    ck_assert_ptr_nonnull(strstr(r.out, "topology constraints must contain between 1 and 3 "
                                        "entries; the annotation has no effect\n"));
    sluice_result_fini(&r);
}
END_TEST

/* The serving kinds: LeaderWorkerSet's replica bound; a Deployment's labels
 * other than the queue name are not checked (Kueue's serving webhooks check only that). */
START_TEST(integration_kinds_serving)
{
    sluice_result_t r =
        CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml", D "integrations-serving.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(strstr(r.out, D "integrations-serving.yaml"),
                     D "integrations-serving.yaml: doc 1 (LeaderWorkerSet ml/vllm): spec.replicas: "
                       "invalid LeaderWorkerSet replicas: must be >= 0, got -1\n");
    sluice_result_fini(&r);
}
END_TEST

/* Topology-aware podset groups: a LeaderWorkerSet's leader and workers in group g asking for the
 * same rack pass; a group of one pod set, and one whose topologies differ, are refused in Kueue's
 * words (ValidatePodSetGroupingTopology), naming the pod set. */
START_TEST(integration_kinds_groups)
{
    sluice_result_t r =
        CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml", D "integrations-groups.yaml", NULL);
    const char *topo = "Invalid value: must specify 'kueue.x-k8s.io/podset-required-topology' or "
                       "'kueue.x-k8s.io/podset-preferred-topology' topology consistent with ";

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-groups.yaml"));
    ck_assert_ptr_null(strstr(r.out, "ml/good"));
    static char want[2048];
    ck_assert_int_lt(
        snprintf(want, sizeof(want),
                 D "integrations-groups.yaml: doc 2 (LeaderWorkerSet ml/alone): spec: pod set "
                   "worker: annotation kueue.x-k8s.io/podset-group-name: Invalid value: \"g\": "
                   "can only define groups of exactly 2 pod sets, got: 1 pod set(s)\n" D
                   "integrations-groups.yaml: doc 3 (LeaderWorkerSet ml/mixed): spec: pod set "
                   "leader: annotation kueue.x-k8s.io/podset-group-name: %s'pod set worker' in "
                   "group 'g'\n" D "integrations-groups.yaml: doc 3 (LeaderWorkerSet "
                   "ml/mixed): spec: pod set worker: annotation kueue.x-k8s.io/podset-group-name: "
                   "%s'pod set leader' in group 'g'\n",
                 topo, topo),
        (int)sizeof(want));
    ck_assert_str_eq(strstr(r.out, D "integrations-groups.yaml"), want);
    sluice_result_fini(&r);
}
END_TEST

/* Plain Pods: Kueue's pod webhook -- the managed label's value, the pod-group label and total
 * count go together, the total count is a positive integer; on update the group name is
 * immutable and an unretriable Pod stays so. */
START_TEST(integration_kinds_pods)
{
    sluice_result_t r =
        CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml", D "integrations-pods.yaml", NULL);
    const char *want =
        D "integrations-pods.yaml: doc 2 (Pod ml/managed): metadata.labels[kueue.x-k8s.io/"
          "managed]: Forbidden: managed label value can only be 'true'\n" D
          "integrations-pods.yaml: doc 3 (Pod ml/no-group): metadata.labels[kueue.x-k8s.io/"
          "pod-group-name]: Required value: both the 'kueue.x-k8s.io/pod-group-total-count' "
          "annotation and the 'kueue.x-k8s.io/pod-group-name' label should be set\n" D
          "integrations-pods.yaml: doc 4 (Pod ml/no-count): metadata.labels[kueue.x-k8s.io/"
          "pod-group-name]: a lowercase RFC 1123 subdomain must consist of lower case "
          "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
          "character (e.g. 'example.com', regex used for validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n" D
          "integrations-pods.yaml: doc 4 (Pod ml/no-count): metadata.annotations[kueue.x-k8s.io/"
          "pod-group-total-count]: Required value: both the 'kueue.x-k8s.io/"
          "pod-group-total-count' annotation and the 'kueue.x-k8s.io/pod-group-name' label "
          "should be set\n" D
          "integrations-pods.yaml: doc 5 (Pod ml/bad-count): metadata.annotations[kueue.x-k8s.io/"
          "pod-group-total-count]: strconv.Atoi: parsing \"two\": invalid syntax\n" D
          "integrations-pods.yaml: doc 6 (Pod ml/zero-count): metadata.annotations[kueue.x-k8s.io/"
          "pod-group-total-count]: incorrect annotation value 'kueue.x-k8s.io/"
          "pod-group-total-count=0': group total count should be greater than zero\n";

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-pods.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-pods.yaml"), want);
    sluice_result_fini(&r);

    r = CHECK_EXEC(NULL, "check", "-q", "--scenario", D "integrations.yaml",
                   D "integrations-pods-updates.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-pods-updates.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-pods-updates.yaml"),
                     D "integrations-pods-updates.yaml: doc 2 (Pod ml/member): metadata.labels["
                       "kueue.x-k8s.io/pod-group-name]: field is immutable\n" D
                       "integrations-pods-updates.yaml: doc 2 (Pod ml/member): "
                       "metadata.annotations[kueue.x-k8s.io/retriable-in-group]: Forbidden: "
                       "unretriable pod group can't be converted to retriable\n");
    sluice_result_fini(&r);
}
END_TEST

/* A managed LeaderWorkerSet's group size and templates' pod-spec shape are immutable (Kueue
 * never recomputes its Workloads' pod sets; an image change is not part of the shape); a managed
 * StatefulSet's shape too, and its replicas but to or from 0, not from 0 while Pods remain. */
START_TEST(integration_kinds_lws_updates)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", "--scenario", D "integrations.yaml",
                                   D "integrations-serving-updates.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-serving-updates.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-serving-updates.yaml"), D
                     "integrations-serving-updates.yaml: doc 2 (LeaderWorkerSet ml/vllm): "
                     "spec.leaderWorkerTemplate.size: field is immutable\n" D
                     "integrations-serving-updates.yaml: doc 2 (LeaderWorkerSet ml/vllm): "
                     "spec.leaderWorkerTemplate.workerTemplate.spec: field is immutable\n" D
                     "integrations-serving-updates.yaml: doc 3 (LeaderWorkerSet ml/vllm): "
                     "spec.leaderWorkerTemplate.leaderTemplate: field is immutable\n" D
                     "integrations-serving-updates.yaml: doc 6 (StatefulSet ml/db): spec.replicas: "
                     "field is immutable\n" D
                     "integrations-serving-updates.yaml: doc 6 (StatefulSet ml/db): "
                     "spec.template.spec: field is immutable\n" D
                     "integrations-serving-updates.yaml: doc 8 (StatefulSet ml/db): spec.replicas: "
                     "Forbidden: scaling down is still in progress\n");
    sluice_result_fini(&r);
}
END_TEST

/* A Ray object without a queue name is checked with the Ray rules only when a Configuration
 * manages such objects (manageJobsWithoutQueueName), as Kueue's webhooks do. */
START_TEST(integration_kinds_ray_unlabelled)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml",
                                   D "integrations-ray-unlabelled.yaml", NULL);

    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-ray-unlabelled.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-ray-unlabelled.yaml"),
                     D "integrations-ray-unlabelled.yaml: doc 1 (RayJob ml/unlabelled): warning: "
                       "metadata.labels: no kueue.x-k8s.io/queue-name label and no LocalQueue "
                       "\"default\" in namespace \"ml\": Kueue does not manage this RayJob\n");
    sluice_result_fini(&r);
    r = CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml", D "integrations-ray-unlabelled.yaml",
                   D "integrations-config.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-ray-unlabelled.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-ray-unlabelled.yaml"),
                     D "integrations-ray-unlabelled.yaml: doc 1 (RayJob ml/unlabelled): "
                       "spec.shutdownAfterJobFinishes: a kueue managed job should delete the "
                       "cluster after finishing\n");
    sluice_result_fini(&r);
}
END_TEST

/* The shapes of Kueue's documentation examples for every kind in the table (the objects of
 * the crds_integrations test) pass; their LocalQueue is not among them, hence one warning each,
 * and the TrainJob's runtime neither, one more. */
START_TEST(integration_kinds_documentation_examples)
{
#define E "test/data/crds-integrations/examples/"
    sluice_result_t r = CHECK_EXEC(
        NULL, "check", E "jobset.yaml", E "pytorchjob.yaml", E "tfjob.yaml", E "xgboostjob.yaml",
        E "paddlejob.yaml", E "jaxjob.yaml", E "mpijob.yaml", E "rayjob.yaml", E "raycluster.yaml",
        E "leaderworkerset.yaml", E "trainjob.yaml", NULL);

    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err);
    ck_assert_str_eq(r.err, "sluice check: 11 objects in 11 files: ok, 12 warnings\n");
    ck_assert_ptr_nonnull(strstr(r.out, E "trainjob.yaml: doc 1 (TrainJob pytorch-distributed): "
                                          "warning: spec.runtimeRef: runtime "
                                          "'torch-distributed' not found among the documents"));
#undef E
    sluice_result_fini(&r);
}
END_TEST

/* TrainJobs: each resolved against the training runtime it names among the documents, a later
 * one too; one whose runtime is not there is a warning (it may be installed in the cluster),
 * one whose runtime cannot be read an error naming the runtime's field. */
START_TEST(integration_kinds_trainjob)
{
    sluice_result_t r = CHECK_EXEC(NULL, "check", "-q", D "integrations.yaml",
                                   D "integrations-trainjob.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations-trainjob.yaml"));
    ck_assert_str_eq(strstr(r.out, D "integrations-trainjob.yaml"),
                     D "integrations-trainjob.yaml: doc 2 (TrainJob ml/orphan): warning: "
                       "spec.runtimeRef: runtime 'nope' not found among the documents: its pod "
                       "sets are not checked\n" D
                       "integrations-trainjob.yaml: doc 4 (TrainJob ml/broken): runtime 'empty': "
                       "spec.template.spec.replicatedJobs: Required value\n");
    sluice_result_fini(&r);
}
END_TEST

/* Every problem points at its line and column: the field's key, a list item's dash, or the
 * nearest written ancestor of a missing field; in YAML, in JSON, in a List's items. */
START_TEST(positions)
{
    sluice_result_t r = sluice_exec(NULL, "check", "-q", D "invalid.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "invalid.yaml:32:9: doc 2 (ClusterQueue research): "
                                          "spec.resourceGroups[0].flavors[1].resources[1]."
                                          "lendingLimit: must be less than or equal to the "
                                          "nominalQuota\n"));
    ck_assert_ptr_nonnull(strstr(r.out, D "invalid.yaml:26:7: doc 2 (ClusterQueue research): "
                                          "spec.resourceGroups[0].flavors[1].name: references "
                                          "missing ResourceFlavor \"h100\"\n"));
    ck_assert_ptr_nonnull(strstr(r.out, D "invalid.yaml:40:3: doc 3 (LocalQueue "
                                          "research/default): spec.clusterQueue: "));
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", "-q", D "queue.json", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "queue.json:9:20: doc 1 (ClusterQueue inference): "
                              "spec.resourceGroups[0].flavors[0].name: references missing "
                              "ResourceFlavor \"l4\"\n");
    sluice_result_fini(&r);

    r = sluice_exec(D "list.yaml", "check", "-q", "-", NULL);
    ck_assert_str_eq(r.out, "<stdin>:12:5: doc 1 items[1] (ClusterQueue gpu): "
                            "spec.queueingStrategy: Unsupported value: \"Wrong\": supported "
                            "values: \"BestEffortFIFO\", \"StrictFIFO\"\n");
    sluice_result_fini(&r);

    /* A missing required field: at the mapping that should hold it. */
    r = sluice_exec(NULL, "check", "-q", D "integrations.yaml", NULL);
    ck_assert_ptr_nonnull(strstr(r.out, D "integrations.yaml:"));
    ck_assert_ptr_nonnull(strstr(r.out, ": doc 6 (JobSet ml/no-jobs): spec.replicatedJobs: "
                                        "Required value\n"));
    sluice_result_fini(&r);
}
END_TEST

/* Decode errors, a Kueue rule and a cross-object problem of one object, all in one run. */
START_TEST(every_stage_in_one_pass)
{
    sluice_result_t r = sluice_exec(NULL, "check", D "stages.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out,
                     D "stages.yaml:10:3: doc 1 (ClusterQueue stages): spec.queueingStrategy: "
                       "Unsupported value: \"StrictFifo\": supported values: \"BestEffortFIFO\", "
                       "\"StrictFIFO\"; did you mean \"StrictFIFO\"?\n" D
                       "stages.yaml:11:3: doc 1 (ClusterQueue stages): spec.cohortname: unknown "
                       "field \"cohortname\"; did you mean \"cohortName\"?\n" D
                       "stages.yaml:19:9: doc 1 (ClusterQueue stages): "
                       "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: must be nil "
                       "when cohort is empty\n" D "stages.yaml:15:7: doc 1 (ClusterQueue stages): "
                       "spec.resourceGroups[0].flavors[0].name: references missing ResourceFlavor "
                       "\"missing\"\n");
    ck_assert_str_eq(r.err, "sluice check: 1 object in 1 file: 4 errors\n");
    sluice_result_fini(&r);

    /* A malformed quantity holds zero for the validators: the rule comparing a sibling with it
     * is not reported on top of it. */
    r = CHECK_EXEC(NULL, "check", "-q", D "invalid.yaml", NULL);
    ck_assert_ptr_nonnull(strstr(r.out, "nominalQuota: invalid quantity \"12x\"\n"));
    ck_assert_ptr_null(strstr(r.out, "(ClusterQueue broken): spec.resourceGroups[0].flavors[0]"
                                     ".resources[0].lendingLimit"));
    sluice_result_fini(&r);
}
END_TEST

/* Directories: one level without -R (subdirectories counted and named in a note), all with -R;
 * kinds sluice has no rules for are skipped and counted; nothing to check is an error. */
START_TEST(recursion_skips_and_empty)
{
    sluice_result_t r = sluice_exec(NULL, "check", D "nest", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "sluice check: 1 subdirectory not read (-R reads them)\n"
                            "sluice check: no object to check in 1 file (only kinds sluice has "
                            "no rules for): an error unless --allow-empty\n");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", "-R", D "nest", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "nest/sub/queue.yaml:8:3: doc 1 (ClusterQueue nested): "
                              "spec.queueingStrategy: Unsupported value: \"Wrong\": supported "
                              "values: \"BestEffortFIFO\", \"StrictFIFO\"\n");
    ck_assert_str_eq(r.err, "sluice check: 1 object in 2 files (1 other document skipped: kinds "
                            "sluice has no rules for): 1 error\n");
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", "--recursive=x", D "nest", NULL);
    ck_assert_int_eq(r.rc, 2);
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", D "empty.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.err, "sluice check: no object to check in 1 file: an error unless "
                            "--allow-empty\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", "--allow-empty", D "empty.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.err, "sluice check: 0 objects in 1 file: ok\n");
    sluice_result_fini(&r);

    /* sluice's own manifests: RBAC, Service, webhooks, Kustomization skipped; the Namespace,
     * the PriorityClass and the Configuration (read as sluice run reads it) pass. */
    r = sluice_exec(NULL, "check", "manifests", NULL);
    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "other documents skipped"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", "manifests/config/controller_manager_config.yaml", NULL);
    ck_assert_msg(r.rc == 0, "%s%s", r.out, r.err);
    ck_assert_str_eq(r.out, "");
    sluice_result_fini(&r);
}
END_TEST

/* A Configuration is read as `sluice run --config` reads it: what run refuses, check refuses.
 * waitForPodsReady is decoded by the code both run and sim use (model/waitready.h), so its
 * problem is reported once, by decoding; a section only run reads is reported as run reads it. */
START_TEST(configuration_as_run_reads_it)
{
    sluice_result_t r = sluice_exec(NULL, "check", "-q", D "config-bad.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "config-bad.yaml:5:3: doc 1 (Configuration <no name>): "
                              "waitForPodsReady.timeout: duration \"5 minutes\": missing or "
                              "unknown unit at offset 1 (use ns, us, ms, s, m or h)\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", "-q", D "config-bad-run.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "config-bad-run.yaml:5:3: doc 1 (Configuration <no name>): "
                              "leaderElection.leaseDuration: duration \"5 minutes\": missing or "
                              "unknown unit at offset 1 (use ns, us, ms, s, m or h) (as sluice "
                              "run --config reads it)\n");
    sluice_result_fini(&r);
}
END_TEST

/* Issue 17: settings that have no effect never pass silently. `integrations` is read by sluice
 * run (no warning), not by the simulator (warned with --scenario, as `sluice sim` warns);
 * waitForPodsReady is read by both (never warned). */
START_TEST(configuration_no_effect_in_scenario)
{
    sluice_result_t r = sluice_exec(NULL, "check", "-q", D "config-run-only.yaml", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "check", "-q", "--scenario", D "config-run-only.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, D "config-run-only.yaml:3:1: doc 1 (Configuration <no name>): "
                              "warning: integrations: has no effect in the simulator: only "
                              "sluice run reads it\n");
    sluice_result_fini(&r);
}
END_TEST

/* Issue 17: the Configuration's resources section, with Kueue's rules at their field paths and
 * a transformation that cannot have an effect warned. */
START_TEST(configuration_resources)
{
    sluice_result_t r = sluice_exec(NULL, "check", D "config-resources.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_str_eq(r.out, D "config-resources.yaml:13:5: doc 1 (Configuration <no name>): "
                              "resources.transformations[1].outputs: must be of type object, got "
                              "array\n" D "config-resources.yaml:12:5: doc 1 (Configuration <no "
                              "name>): resources.transformations[1].input: Duplicate value: "
                              "\"nvidia.com/mig-1g.10gb\"\n" D "config-resources.yaml:14:5: doc 1 "
                              "(Configuration <no name>): warning: resources.transformations[2]: "
                              "has no effect: excludeResourcePrefixes[0] drops example.com/nic "
                              "before transformations apply\n");
    ck_assert_str_eq(r.err, "sluice check: 1 object in 1 file: 2 errors, 1 warning\n");
    sluice_result_fini(&r);
}
END_TEST

/* Simulator annotations: a misspelt one is an error; without --scenario, a hint. */
START_TEST(simulator_annotations)
{
    sluice_result_t r = sluice_exec(NULL, "check", D "sim-annotations.yaml", NULL);

    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, D "sim-annotations.yaml:16:5: doc 2 (Job default/sweep): "
                                          "metadata.annotations[sim.sluice.dev/runtim]: unknown "
                                          "simulator annotation; did you mean "
                                          "\"sim.sluice.dev/runtime\"?\n"));
    ck_assert_ptr_nonnull(strstr(r.err, "sluice check: hint: 2 objects carry sim.sluice.dev "
                                        "annotations: for a `sluice sim` scenario use "
                                        "--scenario"));
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", "--scenario", D "sim-annotations.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "unknown simulator annotation"));
    ck_assert_ptr_null(strstr(r.err, "hint"));
    sluice_result_fini(&r);

    /* The simulator refuses it too. */
    r = sluice_exec(NULL, "sim", D "sim-annotations.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "metadata.annotations[sim.sluice.dev/runtim]: unknown "
                                        "simulator annotation; did you mean "
                                        "\"sim.sluice.dev/runtime\"?"));
    sluice_result_fini(&r);
}
END_TEST

/* A tab in the indentation is named as such, at its line and column. */
START_TEST(tab_indentation)
{
    sluice_result_t r = sluice_exec(NULL, "check", D "tabs.yaml", NULL);

    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, D "tabs.yaml:4:1: a tab character indents this line: YAML indents "
                              "with spaces only\n"
                              "sluice check: 0 objects in 1 file: 0 errors; 1 file could not be "
                              "read\n");
    sluice_result_fini(&r);
}
END_TEST

/* -o json: one document on standard output with every problem and what was read. */
START_TEST(json_output)
{
    sluice_result_t r =
        sluice_exec(NULL, "check", "-o", "json", D "stages.yaml", D "nest", D "tabs.yaml", NULL);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr), *p;

    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(doc != NULL, "not JSON: %s\n%s", jerr.text, r.out);
    ck_assert_str_eq(r.err, "sluice check: 1 subdirectory not read (-R reads them)\n");
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "objects")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "skipped")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "errors")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "warnings")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "unreadableFiles")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "exitStatus")), 2);
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "files")), 3);
    ck_assert_uint_eq(json_array_size(json_object_get(doc, "problems")), 4);
    p = json_array_get(json_object_get(doc, "problems"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(p, "file")), D "stages.yaml");
    ck_assert_int_eq(json_integer_value(json_object_get(p, "line")), 11);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "column")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(p, "doc")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(p, "kind")), "ClusterQueue");
    ck_assert_str_eq(json_string_value(json_object_get(p, "name")), "stages");
    ck_assert_str_eq(json_string_value(json_object_get(p, "severity")), "error");
    ck_assert_str_eq(json_string_value(json_object_get(p, "path")), "spec.cohortname");
    ck_assert_str_eq(json_string_value(json_object_get(p, "message")),
                     "unknown field \"cohortname\"; did you mean \"cohortName\"?");
    p = json_array_get(json_object_get(doc, "skippedDocuments"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(p, "kind")), "ServiceAccount");
    ck_assert_str_eq(json_string_value(json_object_get(p, "apiVersion")), "v1");
    p = json_array_get(json_object_get(doc, "readErrors"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(p, "file")), D "tabs.yaml");
    ck_assert_int_eq(json_integer_value(json_object_get(p, "line")), 4);
    json_decref(doc);
    sluice_result_fini(&r);

    r = sluice_exec(NULL, "check", "-o", "xml", D "stages.yaml", NULL);
    ck_assert_int_eq(r.rc, 2);
    sluice_result_fini(&r);

    /* The same document as YAML. */
    r = sluice_exec(NULL, "check", "--output=yaml", D "stages.yaml", NULL);
    ck_assert_int_eq(r.rc, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "files:\n- test/data/check/stages.yaml\nobjects: 1\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "  path: spec.cohortname\n"));
    sluice_result_fini(&r);
}
END_TEST

static Suite *check_cmd_suite(void)
{
    Suite *s = suite_create("check_cmd");
    TCase *tc = tcase_create("check_cmd");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, examples_pass);
    tcase_add_test(tc, idle_reclaim_example);
    tcase_add_test(tc, integration_kinds_pods);
    tcase_add_test(tc, integration_kinds_ray_unlabelled);
    tcase_add_test(tc, integration_kinds_lws_updates);
    tcase_add_test(tc, invalid_lines);
    tcase_add_test(tc, cohort_cycle);
    tcase_add_test(tc, warnings_do_not_fail);
    tcase_add_test(tc, cross_file_references);
    tcase_add_test(tc, stdin_input);
    tcase_add_test(tc, kubectl_lists);
    tcase_add_test(tc, scenario_updates);
    tcase_add_test(tc, workload_status_updates);
    tcase_add_test(tc, io_errors);
    tcase_add_test(tc, usage);
    tcase_add_test(tc, integration_kinds);
    tcase_add_test(tc, integration_kinds_kubeflow);
    tcase_add_test(tc, integration_kinds_ray);
    tcase_add_test(tc, integration_kinds_serving);
    tcase_add_test(tc, integration_kinds_groups);
    tcase_add_test(tc, tas_slice_layers);
    tcase_add_test(tc, integration_kinds_documentation_examples);
    tcase_add_test(tc, integration_kinds_trainjob);
    tcase_add_test(tc, positions);
    tcase_add_test(tc, every_stage_in_one_pass);
    tcase_add_test(tc, recursion_skips_and_empty);
    tcase_add_test(tc, configuration_as_run_reads_it);
    tcase_add_test(tc, configuration_no_effect_in_scenario);
    tcase_add_test(tc, configuration_resources);
    tcase_add_test(tc, simulator_annotations);
    tcase_add_test(tc, tab_indentation);
    tcase_add_test(tc, json_output);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(check_cmd_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
