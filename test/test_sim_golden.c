/* test_sim_golden -- end-to-end scenarios: the JSON Lines events (and for one scenario the
 * summary document and the human summary) must match the checked-in files byte for byte, and
 * every output must be identical across two runs.
 *
 * To regenerate after an intended change: SLUICE_UPDATE_GOLDEN=1 ./test_sim_golden, then review
 * the diff of test/data/sim/ like code. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct outputs_s {
    char *events, *summary, *human, *report;
    size_t nevents, nsummary, nhuman, nreport;
} outputs_t;

static char *path_of(const char *dir, const char *name, const char *ext)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    static char buf[1024];
    snprintf(buf, sizeof(buf), "%s/%s/%s%s", src != NULL ? src : "..", dir, name, ext);
    return buf;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    ck_assert_msg(f != NULL, "cannot open %s", path);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap + 4096) * 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void spill(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Load and run `file` (under dir) with `until` (< 0: none), capturing every output. */
static void run(const char *dir, const char *name, sim_ms_t until, outputs_t *o)
{
    sim_scenario_t sc;
    sim_rec_t rec;
    sim_options_t opts = {0};
    err_msg_t msg = {{0}};
    FILE *in = fopen(path_of(dir, name, ".yaml"), "r");
    FILE *ev = open_memstream(&o->events, &o->nevents);
    FILE *sum = open_memstream(&o->summary, &o->nsummary);
    FILE *hum = open_memstream(&o->human, &o->nhuman);
    FILE *rep = open_memstream(&o->report, &o->nreport);

    ck_assert_ptr_nonnull(in);
    sim_scenario_init(&sc);
    sim_rec_init(&rec);
    ck_assert_msg(sim_scenario_load(in, &sc, &msg) == ERR_OK, "%s: %s %s", name, msg.text,
                  sc.nerrors > 0 ? sc.errors[0] : "");
    opts.events = ev;
    opts.has_until = until >= 0;
    opts.until = until;
    ck_assert_msg(sim_run(&sc, &opts, &rec, &msg) == ERR_OK, "%s: %s", name, msg.text);
    ck_assert_int_eq(sim_summary_write(&rec, sum, &msg), ERR_OK);
    ck_assert_int_eq(sim_human_write(&rec, hum, &msg), ERR_OK);
    ck_assert_int_eq(sim_report_write(&rec, name, rep, &msg), ERR_OK);
    fclose(ev);
    fclose(sum);
    fclose(hum);
    fclose(rep);
    fclose(in);
    sim_rec_fini(&rec);
    sim_scenario_fini(&sc);
}

static void outputs_free(outputs_t *o)
{
    free(o->events);
    free(o->summary);
    free(o->human);
    free(o->report);
}

static void expect_file(const char *dir, const char *name, const char *ext, const char *got,
                        size_t len)
{
    const char *path = path_of(dir, name, ext);
    size_t want_len;
    char *want;

    if (getenv("SLUICE_UPDATE_GOLDEN") != NULL) {
        spill(path, got, len);
        return;
    }
    want = slurp(path, &want_len);
    if (want_len != len || memcmp(want, got, len) != 0) {
        /* Show the first differing line. */
        size_t i = 0, line = 1, start = 0;
        while (i < len && i < want_len && got[i] == want[i]) {
            if (got[i] == '\n') {
                line++;
                start = i + 1;
            }
            i++;
        }
        const char *g = got + start, *w = want + start;
        ck_abort_msg("%s%s differs at line %zu:\n  want: %.*s\n  got:  %.*s", name, ext, line,
                     (int)strcspn(w, "\n"), w, (int)strcspn(g, "\n"), g);
    }
    free(want);
}

/* Run twice: the second run must give the same bytes on every output. */
static void golden(const char *dir, const char *name, const char *out_name, sim_ms_t until,
                   bool all_outputs)
{
    outputs_t a = {0}, b = {0};

    run(dir, name, until, &a);
    run(dir, name, until, &b);
    ck_assert_uint_eq(a.nevents, b.nevents);
    ck_assert(memcmp(a.events, b.events, a.nevents) == 0);
    ck_assert_uint_eq(a.nsummary, b.nsummary);
    ck_assert(memcmp(a.summary, b.summary, a.nsummary) == 0);
    ck_assert_uint_eq(a.nhuman, b.nhuman);
    ck_assert(memcmp(a.human, b.human, a.nhuman) == 0);
    ck_assert_uint_eq(a.nreport, b.nreport);
    ck_assert(memcmp(a.report, b.report, a.nreport) == 0);
    expect_file("test/data/sim", out_name, ".jsonl", a.events, a.nevents);
    if (all_outputs) {
        expect_file("test/data/sim", out_name, ".summary.json", a.summary, a.nsummary);
        expect_file("test/data/sim", out_name, ".txt", a.human, a.nhuman);
    }
    outputs_free(&a);
    outputs_free(&b);
}

START_TEST(test_golden_basic)
{
    golden("test/data/sim", "basic", "basic", -1, false);
}
END_TEST

START_TEST(test_golden_preemption)
{
    golden("test/data/sim", "preemption", "preemption", -1, false);
}
END_TEST

START_TEST(test_golden_cohort)
{
    golden("test/data/sim", "cohort", "cohort", -1, true);
}
END_TEST

START_TEST(test_golden_lifecycle)
{
    golden("test/data/sim", "lifecycle", "lifecycle", -1, false);
}
END_TEST

/* The shipped examples: valid, deterministic, and their stories pinned down. */
START_TEST(test_golden_examples)
{
    golden("examples", "01-gpu-platform", "example-01-gpu-platform", -1, false);
    golden("examples", "02-quota-change", "example-02-quota-change", -1, false);
    golden("examples", "03-fair-sharing", "example-03-fair-sharing", -1, false);
    golden("examples", "04-jobset-pytorch", "example-04-jobset-pytorch", -1, false);
}
END_TEST

START_TEST(test_golden_unlabelled_jobs)
{
    golden("test/data/sim", "unlabelled", "unlabelled", -1, true);
}
END_TEST

/* JobSets: pod sets per replicated Job, queue defaulting, priority from the template's
 * PriorityClass, preemption and deletion, as for Jobs. */
START_TEST(test_golden_integrations)
{
    golden("test/data/sim", "integrations", "integrations", -1, true);
}
END_TEST

/* A RayJob (head, worker group, KubeRay's default submitter) and a plain Pod; a RayJob on an
 * existing cluster is not Kueue's. */
START_TEST(test_golden_ray_pod)
{
    golden("test/data/sim", "ray-pod", "ray-pod", -1, true);
}
END_TEST

/* Pod groups: a driver and 3 workers admitted as one workload (a pod set per role) when the
 * last Pod arrives; an incomplete group never runs; a plain Pod waits for the quota. */
START_TEST(test_golden_pod_group)
{
    golden("test/data/sim", "pod-group", "pod-group", -1, false);
}
END_TEST

/* TrainJobs: pod sets from the training runtime each names (a ClusterTrainingRuntime given
 * after it, a TrainingRuntime of its namespace), Trainer's numNodes and resourcesPerNode. */
START_TEST(test_golden_trainjob)
{
    golden("test/data/sim", "trainjob", "trainjob", -1, true);
}
END_TEST

/* The serving kinds: a Deployment's and a LeaderWorkerSet's workload per replica (<name>-<i>),
 * a scale-down deleting the replicas past the new count, a StatefulSet as one workload. */
START_TEST(test_golden_serving)
{
    golden("test/data/sim", "serving", "serving", -1, false);
}
END_TEST

/* Issue 17: Kueue's preemption victim in a borrowing ClusterQueue (the default), and the victim
 * with the opt-in loop guard own-queue-borrowing. */
START_TEST(test_golden_issue17_victim)
{
    golden("test/data/sim", "issue17-victim", "issue17-victim", -1, false);
    golden("test/data/sim", "issue17-victim-guarded", "issue17-victim-guarded", -1, false);
    golden("test/data/sim", "loop-own-queue-borrowing", "loop-own-queue-borrowing", -1, false);
}
END_TEST

/* Issue 17: resource transformations (MIG slices counted as GPU memory) and an excluded resource
 * (a Job requesting it besides cpu admits on cpu). */
START_TEST(test_golden_issue17_mig)
{
    golden("test/data/sim", "issue17-mig", "issue17-mig", -1, false);
}
END_TEST

/* Issue 18: Nodes in a scenario; fragmentation-aware admission waits for a node that fits
 * (NoFittingNode in the summary's explanations), and the same cluster without the switch admits
 * on quota alone, as Kueue does. */
START_TEST(test_golden_fragmentation)
{
    golden("test/data/sim", "fragmentation", "fragmentation", -1, true);
    golden("test/data/sim", "fragmentation-kueue", "fragmentation-kueue", -1, false);
}
END_TEST

/* Issue 17: admission fair sharing. heavy's six jobs leave it a decayed usage, so at 60m the
 * newer l-late (light) is admitted before h-late (heavy); without the Configuration's
 * admissionFairSharing the older h-late goes first. */
START_TEST(test_golden_issue17_afs)
{
    golden("test/data/sim", "issue17-afs", "issue17-afs", -1, false);
    golden("test/data/sim", "issue17-afs-off", "issue17-afs-off", -1, false);
}
END_TEST

/* Issue 17: admission checks -- a missing check holds the queue, QuotaReserved then Admitted
 * after the check's verdict delay, onFlavors, Retry (evicted, requeued; with a requeue delay,
 * held until then), Rejected (deactivated), a reserved workload preempted. */
START_TEST(test_golden_admission_checks)
{
    golden("test/data/sim", "admission-checks", "admission-checks", -1, true);
    /* a Retry with a requeue delay (requeueAfterSeconds): held, then Requeued BackoffFinished;
     * two checks in Retry at once: the later requeueAt */
    golden("test/data/sim", "check-retry-delay", "check-retry-delay", -1, true);
}
END_TEST

/* Stop policies: HoldAndDrain evicts (event Evicted), Hold lets the running finish. */
START_TEST(test_golden_stop_policy)
{
    golden("test/data/sim", "stop-policy", "stop-policy", -1, false);
}
END_TEST

/* Issue 17: waitForPodsReady -- PodsReady timeouts (Evicted PodsReadyTimeout), requeue backoff
 * (Requeued BackoffFinished), backoffLimitCount (Deactivated RequeuingLimitExceeded),
 * recoveryTimeout, runtimes from the pods' readiness, and blockAdmission. */
START_TEST(test_golden_pods_ready)
{
    golden("test/data/sim", "pods-ready", "pods-ready", -1, false);
    golden("test/data/sim", "pods-ready-block", "pods-ready-block", -1, false);
    /* with admission checks the timers start at Admitted, not at QuotaReserved */
    golden("test/data/sim", "pods-ready-checks", "pods-ready-checks", -1, false);
}
END_TEST

/* Issue 17: topology-aware scheduling -- the rack example end to end (a Topology, Nodes, a TAS
 * flavor): 5 pods that fit no rack wait with Kueue's reason, 4 go to rack-2. Topology-aware
 * preemption: a high-priority 2-pod job that fits the quota but not the rack's two busy nodes
 * preempts the two low-priority jobs on them. Failed-node replacement. Pod-set groups: a
 * LeaderWorkerSet's leader and workers admitted into one rack together; a second one waits with
 * the group's reason, on its leader pod set. Slice layers. */
START_TEST(test_golden_tas)
{
    golden("test/data/sim", "issue17-tas", "issue17-tas", -1, true);
    golden("test/data/sim", "issue17-tas-preempt", "issue17-tas-preempt", -1, true);
    /* failed-node replacement: a deleted node replaced inside the rack (NodeReplaced), then a
     * NotReady one with no room left evicts (Evicted NodeFailures) */
    golden("test/data/sim", "issue17-tas-replace", "issue17-tas-replace", -1, true);
    golden("test/data/sim", "issue17-tas-group", "issue17-tas-group", -1, true);
    /* slice layers (TASMultiLayerTopology): 16 pods in racks of 8 fit, in racks of 8 made of
     * hosts of 4 they never do (Kueue's per-layer message); 8 such pods wait for the rack */
    golden("test/data/sim", "issue17-tas-layers", "issue17-tas-layers", -1, true);
}
END_TEST

START_TEST(test_golden_until)
{
    golden("test/data/sim", "lifecycle", "lifecycle-until", 600000, false);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_golden");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_golden_basic);
    tcase_add_test(tc, test_golden_preemption);
    tcase_add_test(tc, test_golden_cohort);
    tcase_add_test(tc, test_golden_lifecycle);
    tcase_add_test(tc, test_golden_until);
    tcase_add_test(tc, test_golden_tas);
    tcase_add_test(tc, test_golden_serving);
    tcase_add_test(tc, test_golden_examples);
    tcase_add_test(tc, test_golden_unlabelled_jobs);
    tcase_add_test(tc, test_golden_integrations);
    tcase_add_test(tc, test_golden_trainjob);
    tcase_add_test(tc, test_golden_ray_pod);
    tcase_add_test(tc, test_golden_pod_group);
    tcase_add_test(tc, test_golden_issue17_mig);
    tcase_add_test(tc, test_golden_issue17_afs);
    tcase_add_test(tc, test_golden_admission_checks);
    tcase_add_test(tc, test_golden_issue17_victim);
    tcase_add_test(tc, test_golden_fragmentation);
    tcase_add_test(tc, test_golden_stop_policy);
    tcase_add_test(tc, test_golden_pods_ready);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
