/* test_crosscheck -- checks across object sets: references, cohort cycles, duplicates, updates. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/crosscheck.h"
#include "model/object.h"
#include "model/yaml.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOCS 32

typedef struct set_s {
    object_t objs[MAX_DOCS];
    const object_t *ptrs[MAX_DOCS];
    diags_t diags[MAX_DOCS];
    size_t n;
} set_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    set_t *s = ctx;
    diags_t d;

    (void)index;
    (void)line;
    ck_assert_uint_lt(s->n, MAX_DOCS);
    diags_init(&d);
    if (object_decode(doc, &s->objs[s->n], &d) != ERR_OK) {
        for (size_t i = 0; i < d.len; i++)
            fprintf(stderr, "  %s: %s\n", d.items[i].path, d.items[i].message);
        ck_abort_msg("test document %zu does not decode", s->n + 1);
    }
    diags_fini(&d);
    s->ptrs[s->n] = &s->objs[s->n];
    diags_init(&s->diags[s->n]);
    s->n++;
    return ERR_OK;
}

static void load(set_t *s, const char *yaml)
{
    err_msg_t msg = {{0}};

    memset(s, 0, sizeof(*s));
    ck_assert_msg(yaml_load_string(yaml, strlen(yaml), on_doc, s, &msg) == ERR_OK, "%s", msg.text);
}

static void set_fini(set_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        object_fini(&s->objs[i]);
        diags_fini(&s->diags[i]);
    }
}

/* "doc<N>: [warning: ]path: message\n" for every diagnostic, in object order. */
static char *render(const set_t *s)
{
    size_t cap = 1, len = 0;
    char *out;

    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->diags[i].len; k++)
            cap += strlen(s->diags[i].items[k].path) + strlen(s->diags[i].items[k].message) + 32;
    out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < s->diags[i].len; k++) {
            const diag_t *d = &s->diags[i].items[k];
            len += (size_t)snprintf(out + len, cap - len, "doc%zu: %s%s: %s\n", i + 1,
                                    d->warning ? "warning: " : "", d->path, d->message);
        }
    return out;
}

static char *run(const char *yaml, const crosscheck_opts_t *opts)
{
    set_t s;
    char *out;

    load(&s, yaml);
    crosscheck_run(s.ptrs, s.n, opts, s.diags);
    out = render(&s);
    set_fini(&s);
    return out;
}

#define EXPECT_OPTS(yaml, opts, want)                                                             \
    do {                                                                                          \
        char *got_ = run(yaml, opts);                                                             \
        ck_assert_msg(strcmp(got_, want) == 0, "for\n%s\nwant:\n%s\ngot:\n%s", yaml, want, got_); \
        free(got_);                                                                               \
    } while (0)
#define EXPECT(yaml, want) EXPECT_OPTS(yaml, NULL, want)

#define K        "apiVersion: kueue.x-k8s.io/v1beta2\n"
#define RF(name) K "kind: ResourceFlavor\nmetadata: {name: " name "}\n---\n"
#define CQ(name, extra)                                                                        \
    K "kind: ClusterQueue\nmetadata: {name: " name "}\nspec:\n  namespaceSelector: {}\n" extra \
      "---\n"
#define CQ_FLAVOR(flavor)                                                          \
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors: [{name: " flavor \
    ", resources: [{name: cpu, nominalQuota: 1}]}]\n"
#define COHORT(name, parent) \
    K "kind: Cohort\nmetadata: {name: " name "}\nspec: {parentName: " parent "}\n---\n"
#define LQ(ns, name, cq)                                                                          \
    K "kind: LocalQueue\nmetadata: {name: " name ", namespace: " ns "}\nspec: {clusterQueue: " cq \
      "}\n---\n"
#define WPC(name) K "kind: WorkloadPriorityClass\nmetadata: {name: " name "}\nvalue: 1\n---\n"
#define JOB(meta, tmpl)                                                             \
    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns" meta "}\n" \
    "spec: {template: {spec: {restartPolicy: Never" tmpl                            \
    ", containers: [{name: c, image: i}]}}}\n"                                      \
    "---\n"

/* a followed by b, in a buffer that lives until the next call */
static const char *fmt2(const char *a, const char *b)
{
    static char buf[4096];

    snprintf(buf, sizeof(buf), "%s%s", a, b);
    return buf;
}

START_TEST(missing_flavor)
{
    EXPECT(RF("a100") CQ("cq", CQ_FLAVOR("h100")),
           "doc2: spec.resourceGroups[0].flavors[0].name: references missing ResourceFlavor "
           "\"h100\"\n");
    EXPECT(RF("h100") CQ("cq", CQ_FLAVOR("h100")), "");
    /* A Cohort's quota for a missing flavor is useless but harmless. */
    EXPECT(K "kind: Cohort\nmetadata: {name: co}\nspec:\n" CQ_FLAVOR("l4"),
           "doc1: warning: spec.resourceGroups[0].flavors[0].name: references missing "
           "ResourceFlavor \"l4\" (this quota cannot be used)\n");
}
END_TEST

START_TEST(missing_topology)
{
    const char *rf = K "kind: ResourceFlavor\nmetadata: {name: gpu}\n"
                       "spec: {nodeLabels: {pool: gpu}, topologyName: dc}\n---\n";
    const char *topo = K "kind: Topology\nmetadata: {name: dc}\n"
                         "spec: {levels: [{nodeLabel: rack}]}\n---\n";

    EXPECT(rf, "doc1: spec.topologyName: references missing Topology \"dc\" (a ClusterQueue "
               "using this flavor is inactive: TopologyNotFound)\n");
    EXPECT(topo, "");
    EXPECT(fmt2(rf, topo), "");
}
END_TEST

START_TEST(missing_admission_check)
{
    const char *checks = "  admissionChecksStrategy: {admissionChecks: [{name: prov}]}\n";
    char cq[512];
    snprintf(cq, sizeof(cq), "%s%s%s",
             RF("h100") K
             "kind: ClusterQueue\nmetadata: {name: cq}\nspec:\n  namespaceSelector: {}\n",
             CQ_FLAVOR("h100"), checks);
    EXPECT(cq, "doc2: warning: spec.admissionChecksStrategy.admissionChecks[0].name: references "
               "missing AdmissionCheck \"prov\" (the ClusterQueue stays inactive, "
               "AdmissionCheckNotFound, until it exists)\n");
    char with[1024];
    snprintf(with, sizeof(with),
             "%s---\n%skind: AdmissionCheck\nmetadata: {name: prov}\n"
             "spec: {controllerName: example.com/c}\n",
             cq, K);
    EXPECT(with, "");
}
END_TEST

START_TEST(local_queue_references)
{
    EXPECT(LQ("ns", "q", "nope"), "doc1: spec.clusterQueue: references missing ClusterQueue "
                                  "\"nope\"\n");
    EXPECT(CQ("cq", "") LQ("ns", "q", "cq"), "");
    EXPECT(K
           "kind: ClusterQueue\nmetadata: {name: closed}\nspec: {}\n---\n" LQ("ns", "q", "closed"),
           "doc2: warning: spec.clusterQueue: ClusterQueue \"closed\" has no namespaceSelector, "
           "so it admits no workloads (use namespaceSelector: {} for every namespace)\n");
}
END_TEST

#define NS(name, labels) \
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: " name ", labels: " labels "}\n---\n"
#define CQ_SEL(name, sel) \
    K "kind: ClusterQueue\nmetadata: {name: " name "}\nspec:\n  namespaceSelector: " sel "\n---\n"

START_TEST(namespace_selector_matches)
{
    /* The namespace's labels, including the automatic kubernetes.io/metadata.name. */
    EXPECT(NS("ns", "{team: a}") CQ_SEL("cq", "{matchLabels: {team: a}}") LQ("ns", "q", "cq"), "");
    EXPECT(NS("ns", "{team: b}") CQ_SEL("cq", "{matchLabels: {team: a}}") LQ("ns", "q", "cq"),
           "doc3: warning: spec.clusterQueue: the namespaceSelector of ClusterQueue \"cq\" does "
           "not select namespace \"ns\", so it admits no workloads from this LocalQueue\n");
    EXPECT(NS("ns", "{}")
               CQ_SEL("cq", "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, "
                            "values: [ns, other]}]}") LQ("ns", "q", "cq"),
           "");
    /* Without a Namespace document there is nothing to compare with. */
    EXPECT(CQ_SEL("cq", "{matchLabels: {team: a}}") LQ("ns", "q", "cq"), "");
}
END_TEST

START_TEST(cohort_cycles)
{
    EXPECT(COHORT("a", "b") COHORT("b", "a"),
           "doc1: spec.parentName: cohort cycle a -> b -> a: Kueue admits no workloads in a "
           "cohort cycle\n"
           "doc2: spec.parentName: cohort cycle b -> a -> b: Kueue admits no workloads in a "
           "cohort cycle\n");
    EXPECT(COHORT("self", "self"),
           "doc1: spec.parentName: cohort cycle self -> self: Kueue admits no workloads in a "
           "cohort cycle\n");
    /* A cohort and a ClusterQueue hanging below the loop. */
    EXPECT(COHORT("a", "b") COHORT("b", "a") COHORT("leaf", "a") CQ("cq", "  cohortName: leaf\n")
               CQ("cq2", "  cohortName: b\n"),
           "doc1: spec.parentName: cohort cycle a -> b -> a: Kueue admits no workloads in a "
           "cohort cycle\n"
           "doc2: spec.parentName: cohort cycle b -> a -> b: Kueue admits no workloads in a "
           "cohort cycle\n"
           "doc3: spec.parentName: leads into the cohort cycle a -> b -> a: Kueue admits no "
           "workloads in a cohort cycle\n"
           "doc4: spec.cohortName: cohort \"leaf\" leads into the cohort cycle a -> b -> a: "
           "Kueue admits no workloads in a cohort cycle\n"
           "doc5: spec.cohortName: cohort \"b\" is in the cohort cycle b -> a -> b: Kueue admits "
           "no workloads in a cohort cycle\n");
    /* Chains ending in an implicit cohort (no object) are fine. */
    EXPECT(COHORT("a", "b") COHORT("b", "root") CQ("cq", "  cohortName: a\n")
               CQ("cq2", "  cohortName: implicit\n"),
           "");
}
END_TEST

START_TEST(duplicates)
{
    EXPECT(RF("a") RF("a") RF("b"),
           "doc2: metadata.name: Duplicate value: \"a\": also defined by object #1\n");
    /* Same name, other kind or namespace: different objects. */
    EXPECT(RF("a") CQ("a", "") LQ("ns1", "q", "a") LQ("ns2", "q", "a"), "");
    /* An unqualified namespaced object lives in "default". */
    EXPECT(CQ("a", "") K "kind: LocalQueue\nmetadata: {name: q}\nspec: {clusterQueue: a}\n---\n" LQ(
               "default", "q", "a"),
           "doc3: metadata.name: Duplicate value: \"q\": also defined by object #2\n");
}
END_TEST

START_TEST(duplicates_name_origins)
{
    const char *origins[] = {"a.yaml doc 1", "b.yaml doc 4"};
    crosscheck_opts_t opts = {.origins = origins};

    EXPECT_OPTS(RF("x") RF("x"), &opts,
                "doc2: metadata.name: Duplicate value: \"x\": also defined by a.yaml doc 1\n");
}
END_TEST

#define AT_RF(name, at)                                                                         \
    K "kind: ResourceFlavor\nmetadata: {name: " name ", annotations: {sim.sluice.dev/at: \"" at \
      "\"}}\n---\n"

/* A fairSharing weight weighs nothing while fair sharing is off: warned when the set says so (a
 * Configuration without fairSharing; in a scenario, no Configuration either). */
START_TEST(fair_weight_without_fair_sharing)
{
    crosscheck_opts_t timed = {.timed_updates = true};
    const char *weighted = RF("f") CQ("a", "  fairSharing: {weight: 2}\n" CQ_FLAVOR("f")) K
        "kind: Cohort\nmetadata: {name: co}\nspec: {fairSharing: {weight: 3}}\n---\n";
    const char *want = "doc2: warning: spec.fairSharing: has no effect: fair sharing is off (the "
                       "Configuration has no fairSharing)\n"
                       "doc3: warning: spec.fairSharing: has no effect: fair sharing is off (the "
                       "Configuration has no fairSharing)\n";
    char y[2048];

    /* sluice check without a Configuration cannot know */
    EXPECT(weighted, "");
    /* a scenario without one runs with fair sharing off */
    EXPECT_OPTS(weighted, &timed, want);
    snprintf(y, sizeof(y), "%s%s", weighted,
             "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n---\n");
    EXPECT(y, want);
    snprintf(y, sizeof(y), "%s%s", weighted,
             "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n");
    EXPECT(y, "");
    /* the operator's own Configuration sections, in a scenario */
    EXPECT_OPTS("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n"
                "waitForPodsReady: {timeout: 5m}\nmetrics: {}\n",
                &timed,
                "doc1: warning: metrics: has no effect in the simulator: only sluice run reads "
                "it\n");
    EXPECT("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
           "waitForPodsReady: {timeout: 5m}\n",
           "");
}
END_TEST

START_TEST(timed_updates)
{
    crosscheck_opts_t timed = {.timed_updates = true};
    const char *y = AT_RF("a", "0s") AT_RF("a", "1m") AT_RF("a", "30s") AT_RF("a", "2m") RF("b");
    set_t s;
    size_t prev[MAX_DOCS];

    /* Without the option every repeat is a duplicate. */
    EXPECT(y, "doc2: metadata.name: Duplicate value: \"a\": also defined by object #1\n"
              "doc3: metadata.name: Duplicate value: \"a\": also defined by object #1\n"
              "doc4: metadata.name: Duplicate value: \"a\": also defined by object #1\n");
    /* With it, a later `at` is an update of the latest version; an earlier one is not. */
    EXPECT_OPTS(y, &timed,
                "doc3: metadata.name: Duplicate value: \"a\": also defined by object #2 with an "
                "earlier or equal sim.sluice.dev/at\n");
    load(&s, y);
    crosscheck_updates(s.ptrs, s.n, &timed, prev);
    ck_assert_uint_eq(prev[0], CROSSCHECK_NONE);
    ck_assert_uint_eq(prev[1], 0);
    ck_assert_uint_eq(prev[2], CROSSCHECK_NONE);
    ck_assert_uint_eq(prev[3], 1);
    ck_assert_uint_eq(prev[4], CROSSCHECK_NONE);
    crosscheck_updates(s.ptrs, s.n, NULL, prev);
    for (size_t i = 0; i < s.n; i++)
        ck_assert_uint_eq(prev[i], CROSSCHECK_NONE);
    set_fini(&s);

    /* No `at` means 0s: two of them collide. */
    EXPECT_OPTS(RF("c") RF("c"), &timed,
                "doc2: metadata.name: Duplicate value: \"c\": also defined by object #1 with an "
                "earlier or equal sim.sluice.dev/at\n");
    EXPECT_OPTS(AT_RF("d", "soon"), &timed,
                "doc1: metadata.annotations[sim.sluice.dev/at]: invalid duration \"soon\" (want "
                "a Go duration such as 0s, 1.5s, 250ms, 2m, 1h30m)\n");
}
END_TEST

START_TEST(job_references)
{
    EXPECT(CQ("cq", "") LQ("ns", "q", "cq") WPC("high") JOB(
               ", labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: high}", ""),
           "");
    EXPECT(JOB(", labels: {kueue.x-k8s.io/queue-name: q, kueue.x-k8s.io/priority-class: high}", ""),
           "doc1: warning: metadata.labels[kueue.x-k8s.io/queue-name]: references missing "
           "LocalQueue \"q\" in namespace \"ns\"\n"
           "doc1: warning: metadata.labels[kueue.x-k8s.io/priority-class]: references missing "
           "WorkloadPriorityClass \"high\" (Kueue will not create the Workload)\n");
    /* No queue label: fine where a "default" LocalQueue exists or Kueue manages all Jobs. */
    EXPECT(JOB("", ""), "doc1: warning: metadata.labels: no kueue.x-k8s.io/queue-name label and "
                        "no LocalQueue \"default\" in namespace \"ns\": Kueue does not manage "
                        "this Job\n");
    EXPECT(CQ("cq", "") LQ("ns", "default", "cq") JOB("", ""), "");
    EXPECT("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
           "manageJobsWithoutQueueName: true\n---\n" JOB("", ""),
           "");
    /* The pod template's PriorityClass, when no WorkloadPriorityClass is named. */
    EXPECT(CQ("cq", "") LQ("ns", "default", "cq") JOB("", ", priorityClassName: batch-high"),
           "doc3: warning: spec.template.spec.priorityClassName: references missing "
           "PriorityClass \"batch-high\"\n");
    EXPECT(CQ("cq", "") LQ("ns", "default", "cq")
               JOB("", ", priorityClassName: system-cluster-critical"),
           "");
    EXPECT(CQ("cq", "")
               LQ("ns", "default",
                  "cq") "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: "
                        "batch-high}\nvalue: 10\n---\n" JOB("", ", priorityClassName: batch-high"),
           "");
}
END_TEST

#define WL_REF(ref)                                                                         \
    K "kind: Workload\nmetadata: {name: w, namespace: ns}\nspec:\n  queueName: q\n" ref     \
      "  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, image: " \
      "i}]}}}]\n---\n"

START_TEST(workload_references)
{
    EXPECT(WL_REF("  priority: 1\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                  "WorkloadPriorityClass, name: high}\n"),
           "doc1: warning: spec.queueName: references missing LocalQueue \"q\" in namespace "
           "\"ns\"\n"
           "doc1: warning: spec.priorityClassRef.name: references missing WorkloadPriorityClass "
           "\"high\"\n");
    EXPECT(WL_REF("  priority: 1\n  priorityClassRef: {group: scheduling.k8s.io, kind: "
                  "PriorityClass, name: high}\n") CQ("cq", "") LQ("ns", "q", "cq"),
           "doc1: warning: spec.priorityClassRef.name: references missing PriorityClass "
           "\"high\"\n");
    EXPECT(WL_REF("  priority: 1\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
                  "WorkloadPriorityClass, name: high}\n") CQ("cq", "") LQ("ns", "q", "cq")
               WPC("high"),
           "");
}
END_TEST

START_TEST(partial_and_missing_objects)
{
    set_t s;
    char *out;
    bool partial[MAX_DOCS] = {false};
    crosscheck_opts_t opts = {.partial = partial};

    /* doc1 stands for a ClusterQueue whose document did not decode: it still satisfies the
     * LocalQueue's reference, and is not itself checked (no namespaceSelector warning). */
    load(&s, K "kind: ClusterQueue\nmetadata: {name: cq}\nspec: {}\n---\n" LQ("ns", "q", "cq")
                 LQ("ns", "r", "gone"));
    partial[0] = true;
    s.ptrs[2] = NULL; /* and a document that decoded to nothing at all */
    crosscheck_run(s.ptrs, s.n, &opts, s.diags);
    out = render(&s);
    ck_assert_str_eq(out, "");
    free(out);
    set_fini(&s);
}
END_TEST

START_TEST(durations)
{
    static const struct {
        const char *text;
        bool ok;
        int64_t ns;
    } cases[] = {
        {"0", true, 0},
        {"0s", true, 0},
        {"1.5s", true, 1500000000},
        {"250ms", true, 250000000},
        {"2m", true, 120000000000},
        {"1h30m", true, 5400000000000},
        {"+5s", true, 5000000000},
        {"1us", true, 1000},
        {"1\xc2\xb5s", true, 1000},
        {"3ns", true, 3},
        {".5s", true, 500000000},
        {"1.s", true, 1000000000},
        {"2562047h47m16.854775807s", true, INT64_MAX},
        {"2562047h47m16.854775808s", false, 0},
        {"", false, 0},
        {"5", false, 0},
        {"-1s", false, 0},
        {"1x", false, 0},
        {"s", false, 0},
        {".s", false, 0},
        {"1h 2m", false, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ns = -1;
        bool ok = crosscheck_parse_duration(cases[i].text, &ns);
        ck_assert_msg(ok == cases[i].ok, "%s: ok=%d", cases[i].text, ok);
        if (ok)
            ck_assert_msg(ns == cases[i].ns, "%s: %lld", cases[i].text, (long long)ns);
    }
}
END_TEST

static Suite *crosscheck_suite(void)
{
    Suite *s = suite_create("crosscheck");
    TCase *tc = tcase_create("crosscheck");

    tcase_add_test(tc, missing_flavor);
    tcase_add_test(tc, missing_topology);
    tcase_add_test(tc, missing_admission_check);
    tcase_add_test(tc, local_queue_references);
    tcase_add_test(tc, namespace_selector_matches);
    tcase_add_test(tc, cohort_cycles);
    tcase_add_test(tc, duplicates);
    tcase_add_test(tc, duplicates_name_origins);
    tcase_add_test(tc, timed_updates);
    tcase_add_test(tc, fair_weight_without_fair_sharing);
    tcase_add_test(tc, job_references);
    tcase_add_test(tc, workload_references);
    tcase_add_test(tc, partial_and_missing_objects);
    tcase_add_test(tc, durations);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(crosscheck_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
