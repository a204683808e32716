/* test_sim_report -- the --report page tells each example's story: per-ClusterQueue and
 * per-LocalQueue series, the timeline with one arrow per preemption, who preempted whom, the
 * cohort tree with quotas, explanations with their numbers; self-contained and responsive.
 * Also the record the page is drawn from: admission spans, LocalQueues, cohorts, examples. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NANO ((qnano_t)1000000000)

typedef struct page_s {
    sim_scenario_t sc;
    sim_rec_t rec;
    char *html;
    size_t len;
} page_t;

static void page_load(page_t *p, FILE *in, const char *name)
{
    sim_options_t opts = {0};
    err_msg_t msg = {{0}};
    FILE *out;

    ck_assert_ptr_nonnull(in);
    sim_scenario_init(&p->sc);
    sim_rec_init(&p->rec);
    ck_assert_msg(sim_scenario_load(in, &p->sc, &msg) == ERR_OK, "%s: %s %s", name, msg.text,
                  p->sc.nerrors > 0 ? p->sc.errors[0] : "");
    ck_assert_msg(sim_run(&p->sc, &opts, &p->rec, &msg) == ERR_OK, "%s: %s", name, msg.text);
    out = open_memstream(&p->html, &p->len);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(sim_report_write(&p->rec, name, out, &msg), ERR_OK);
    fclose(out);
    fclose(in);
}

static void page_example(page_t *p, const char *name)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];

    snprintf(path, sizeof(path), "%s/examples/%s.yaml", src != NULL ? src : "..", name);
    page_load(p, fopen(path, "r"), name);
}

static void page_text(page_t *p, const char *yaml)
{
    page_load(p, fmemopen((void *)yaml, strlen(yaml), "r"), "inline");
}

static void page_free(page_t *p)
{
    free(p->html);
    sim_rec_fini(&p->rec);
    sim_scenario_fini(&p->sc);
}

/* Occurrences of `needle` in `hay`, or in hay's element whose opening tag starts with `from`
 * (up to the closing tag `to`). */
static size_t count(const char *hay, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + len, needle))
        n++;
    return n;
}

static size_t count_in(const char *hay, const char *from, const char *to, const char *needle)
{
    const char *a = strstr(hay, from);
    ck_assert_msg(a != NULL, "no %s", from);
    const char *b = strstr(a, to);
    ck_assert_msg(b != NULL, "no %s after %s", to, from);
    char *part = strndup(a, (size_t)(b - a));
    ck_assert_ptr_nonnull(part);
    size_t n = count(part, needle);
    free(part);
    return n;
}

static bool has(const char *hay, const char *needle)
{
    return strstr(hay, needle) != NULL;
}

/* What every page must be: one file, nothing fetched, charts sized by the window. */
static void self_contained(const char *html)
{
    ck_assert(!has(html, "<script"));
    ck_assert(!has(html, " src="));
    ck_assert(!has(html, "href=\"http"));
    ck_assert(!has(html, "url(http"));
    ck_assert(!has(html, "@import"));
    /* The only URL is the SVG namespace. */
    ck_assert_uint_eq(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
    ck_assert(has(html, "@media print{"));
    /* No chart has a fixed size: a viewBox, width from CSS. */
    for (const char *p = strstr(html, "<svg id="); p != NULL; p = strstr(p + 1, "<svg id=")) {
        size_t tag = strcspn(p, ">");
        char *open = strndup(p, tag);
        ck_assert_msg(!has(open, " width=") && has(open, " viewBox="), "fixed size: %s", open);
        free(open);
    }
    ck_assert(has(html, "svg.chart{display:block;width:100%;height:auto"));
}

START_TEST(test_report_fair_sharing)
{
    page_t p;
    char buf[512];

    page_example(&p, "03-fair-sharing");
    self_contained(p.html);
    /* The cohort tree: lab's 48 GPUs, four queues with their weights. */
    ck_assert(has(p.html, "<span class=\"kind\">Cohort</span> <b>lab</b>"));
    ck_assert(has(p.html, "h100 \xc2\xb7 nvidia.com/gpu <b>48</b>"));
    ck_assert_uint_eq(count_in(p.html, "id=\"cohort-tree\"", "</section>", "<li class=\"cq\">"), 4);
    ck_assert(has(p.html, "weight 1</span>"));
    ck_assert(has(p.html, "weight 2</span>"));
    ck_assert(has(p.html, "weight 4</span>"));
    /* Usage per ClusterQueue: one band per queue across the cluster, one chart per queue. */
    ck_assert_uint_eq(count_in(p.html, "<svg id=\"chart-cluster-0\"", "</svg>", "<g class=\"cq\">"),
                      4);
    static const char *const cqs[] = {"alpha", "beta", "delta", "gamma"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(buf, sizeof(buf), "<g class=\"cq\"><title>%s</title>", cqs[i]);
        ck_assert_msg(has(p.html, buf), "%s", buf);
        snprintf(buf, sizeof(buf), "role=\"img\" data-cq=\"%s\" data-resource=\"nvidia.com/gpu\"",
                 cqs[i]);
        ck_assert_msg(has(p.html, buf), "%s", buf);
    }
    /* They borrow everything (nominal 0): every queue's chart is hatched. */
    ck_assert_uint_eq(count(p.html, "class=\"band borrowed\""), 4);
    /* Waits per ClusterQueue and per LocalQueue, not one bar per priority class. */
    ck_assert_uint_eq(count_in(p.html, "id=\"chart-waits-cq\"", "</svg>", "<g class=\"box\">"), 4);
    ck_assert_uint_eq(count_in(p.html, "id=\"chart-waits-lq\"", "</svg>", "<g class=\"box\">"), 4);
    ck_assert(has(p.html, ">team-delta/default</text>"));
    ck_assert(!has(p.html, "id=\"chart-waits-pc\"")); /* one class: no chart for it */
    /* One dot per workload in the waits (48 workloads, twice: ClusterQueue and LocalQueue). */
    ck_assert_uint_eq(count(p.html, "<circle class=\"wait\""), 2 * p.rec.nwls);
    /* The timeline: a bar per admission, an arrow per preemption (all workloads shown). */
    ck_assert_uint_gt(p.rec.npreemptions, 0);
    ck_assert_uint_eq(count(p.html, "<rect class=\"span\""), p.rec.nspans);
    ck_assert_uint_eq(count(p.html, "<path class=\"arrow\""), p.rec.npreemptions);
    ck_assert_uint_eq(count(p.html, "<path class=\"cross\""), p.rec.npreemptions);
    /* Preemptions: counted per bucket, each one in the table with both sides. */
    ck_assert(has(p.html, "<svg id=\"chart-preemptions\" class=\"chart chart-buckets\""));
    ck_assert_uint_eq(count(p.html, "<tr class=\"preemption\">"), p.rec.npreemptions);
    snprintf(buf, sizeof(buf), "<p>%zu preemptions.</p>", p.rec.npreemptions);
    ck_assert(has(p.html, buf));
    const sim_preemption_t *first = &p.rec.preemptions[0];
    snprintf(buf, sizeof(buf), "<td>%s</td><td>%s</td><td>%s</td>", p.rec.wls[first->victim].name,
             p.rec.holders[first->cq].name, p.rec.wls[first->preemptor].name);
    ck_assert_msg(has(p.html, buf), "%s", buf);
    ck_assert(has(p.html, "<table id=\"preemptions-by-queue\""));
    ck_assert(has(p.html, "<td>InCohortFairSharing</td>"));
    /* Explanations keep their numbers and name their workload. */
    ck_assert_uint_gt(p.rec.nreasons, 0);
    ck_assert(has(p.html, "insufficient quota for nvidia.com/gpu in flavor h100: requested 4"));
    snprintf(buf, sizeof(buf), "</td><td>%s</td></tr>",
             p.rec.wls[p.rec.reasons[0].example_wl].name);
    ck_assert_msg(has(p.html, buf), "%s", buf);
    /* GPUs only: no CPU or memory quota in this scenario, nothing folded. */
    ck_assert(!has(p.html, "<details class=\"fold\"><summary>cpu"));
    page_free(&p);
}
END_TEST

START_TEST(test_report_platform)
{
    page_t p;

    page_example(&p, "01-gpu-platform");
    self_contained(p.html);
    /* Three flavors stacked per queue; CPU and memory folded (GPUs were the constraint). */
    ck_assert(has(p.html, "data-cq=\"research\" data-resource=\"nvidia.com/gpu\""));
    ck_assert_uint_eq(count(p.html, "<details class=\"fold\"><summary>cpu per ClusterQueue"), 1);
    ck_assert_uint_eq(count(p.html, "<details class=\"fold\"><summary>memory per ClusterQueue"), 1);
    /* GPU charts come first: the first chart-usage is a GPU one. */
    const char *first = strstr(p.html, "class=\"chart chart-usage\"");
    ck_assert_ptr_nonnull(first);
    ck_assert(strncmp(strstr(first, "data-resource=\"") + 15, "nvidia.com/gpu", 14) == 0);
    /* Lending and borrowing limits in the tree. */
    ck_assert(has(p.html, "lend \xe2\x89\xa4 4</small>"));
    ck_assert(has(p.html, "borrow \xe2\x89\xa4 8</small>"));
    /* The forgotten notebook is deactivated: a black cap ends its bar. */
    ck_assert_uint_eq(count(p.html, "class=\"cap deactivated\""), 1);
    /* Three flavors: the timeline colors bars by flavor. */
    ck_assert(has(p.html, "colored by the flavor of its largest GPU request"));
    /* Priority classes differ: a chart per class too. */
    ck_assert(has(p.html, "id=\"chart-waits-pc\""));
    page_free(&p);
}
END_TEST

/* The scenario's queue graph, as `sluice graph` draws it, is a section of the page: one inline
 * <svg> element (no XML declaration inside HTML) naming every LocalQueue, ClusterQueue, the
 * cohort and the flavors of the scenario, its problems under it; the page's chart styles do not
 * reach into it. */
START_TEST(test_report_queue_graph)
{
    static const char *const names[] = {">team-inference/default<",
                                        ">team-research/default<",
                                        ">team-training/default<",
                                        ">team-training/nightly<",
                                        ">inference<",
                                        ">research<",
                                        ">training<",
                                        ">gpu-platform<",
                                        ">h100<",
                                        ">a100<",
                                        ">l4<"};
    static const char problem[] =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: used}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: spare}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: solo}\n"
        "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
        "    flavors:\n    - name: used\n      resources: [{name: cpu, nominalQuota: 4}]\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: "
        "ns}\nspec: {clusterQueue: solo}\n";
    page_t p;

    page_example(&p, "01-gpu-platform");
    ck_assert(has(p.html, "<a href=\"#queue-graph\">queue graph</a>"));
    ck_assert_uint_eq(count_in(p.html, "<section id=\"queue-graph\">", "</section>",
                               "<svg xmlns=\"http://www.w3.org/2000/svg\""),
                      1);
    ck_assert(!has(p.html, "<?xml"));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        ck_assert_msg(count_in(p.html, "<section id=\"queue-graph\">", "</section>", names[i]) >= 1,
                      "%s not in the queue graph", names[i]);
    ck_assert(
        count_in(p.html, "<section id=\"queue-graph\">", "</section>", "No problems found.") == 1);
    /* After the quotas, before the usage charts. */
    ck_assert(strstr(p.html, "id=\"cohorts\"") < strstr(p.html, "id=\"queue-graph\""));
    ck_assert(strstr(p.html, "id=\"queue-graph\"") < strstr(p.html, "id=\"usage-cluster\""));
    ck_assert(has(p.html, "svg.chart text{font-size:11px;fill:#333}"));
    ck_assert(!has(p.html, "svg text{"));
    self_contained(p.html);
    page_free(&p);

    /* A flavor no queue uses: drawn, and the problem listed under the drawing. */
    page_text(&p, problem);
    ck_assert(count_in(p.html, "<section id=\"queue-graph\">", "</section>", ">spare<") >= 1);
    ck_assert(count_in(p.html, "<section id=\"queue-graph\">", "</section>", ">Problems<") == 1);
    ck_assert(count_in(p.html, "<section id=\"queue-graph\">", "</section>",
                       "ResourceFlavor spare: no ClusterQueue or Cohort has quota on it") == 1);
    page_free(&p);
}
END_TEST

START_TEST(test_report_quota_change)
{
    page_t p;

    page_example(&p, "02-quota-change");
    /* The cut shows in the tree, and vision's chart has its borrowed (over nominal) part. */
    ck_assert(has(p.html, "<b>16</b> \xe2\x86\x92 <b>8</b> at 3h"));
    ck_assert_uint_eq(count(p.html, "class=\"band borrowed\""),
                      /* vision's GPU; cpu and memory are cut alike */ 3);
    /* Every explanation names the GPUs too: CPU and memory stay folded. */
    ck_assert(has(p.html, "<details class=\"fold\"><summary>cpu"));
    ck_assert(has(p.html, "No preemptions") || has(p.html, "<p>0 preemptions.</p>"));
    ck_assert(!has(p.html, "<svg id=\"chart-preemptions\""));
    page_free(&p);
}
END_TEST

START_TEST(test_report_local_queues)
{
    page_t p;

    page_example(&p, "04-jobset-pytorch");
    /* One ClusterQueue, two teams' LocalQueues: usage per LocalQueue instead. */
    ck_assert(has(p.html, "<svg id=\"chart-lq-0\" class=\"chart chart-lq\""));
    ck_assert(!has(p.html, "id=\"chart-cluster-0\""));
    ck_assert(has(p.html, "<g class=\"lq\"><title>llm/training</title>"));
    ck_assert(has(p.html, "<g class=\"lq\"><title>research/training</title>"));
    ck_assert(has(p.html, "colored by its LocalQueue"));
    ck_assert(has(p.html, "pod set trials: insufficient quota for nvidia.com/gpu in flavor h100: "
                          "requested 8"));
    page_free(&p);
}
END_TEST

/* CPU is short while GPUs are free: the CPU charts are shown unfolded. */
START_TEST(test_report_cpu_constraint)
{
    static const char yaml[] =
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: a100\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
        "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
        "  - coveredResources: [cpu, nvidia.com/gpu]\n    flavors:\n    - name: a100\n"
        "      resources:\n      - name: cpu\n        nominalQuota: 4\n"
        "      - name: nvidia.com/gpu\n        nominalQuota: 8\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n"
        "  namespace: default\nspec:\n  clusterQueue: cq\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: a\n  namespace: default\n"
        "  labels:\n    kueue.x-k8s.io/queue-name: q\n  annotations:\n"
        "    sim.sluice.dev/runtime: 1h\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: main\n        image: x\n"
        "        resources:\n          requests:\n            cpu: 3\n"
        "            nvidia.com/gpu: 1\n---\n"
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: b\n  namespace: default\n"
        "  labels:\n    kueue.x-k8s.io/queue-name: q\n  annotations:\n"
        "    sim.sluice.dev/runtime: 1h\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n      containers:\n      - name: main\n        image: x\n"
        "        resources:\n          requests:\n            cpu: 3\n"
        "            nvidia.com/gpu: 1\n";
    page_t p;

    page_text(&p, yaml);
    ck_assert(has(p.html, "<details class=\"fold\" open><summary>cpu per ClusterQueue"));
    ck_assert(has(p.html, "data-cq=\"cq\" data-resource=\"cpu\""));
    ck_assert(has(p.html, "insufficient quota for cpu in flavor a100: requested 3"));
    ck_assert(has(p.html, "</td><td>default/b</td></tr>"));
    page_free(&p);
}
END_TEST

/* Many ClusterQueues: the cluster chart stacks their root cohorts, the tree folds. */
START_TEST(test_report_many_queues)
{
    size_t cap = 64 * 1024, n = 0;
    char *yaml = malloc(cap);
    page_t p;

    ck_assert_ptr_nonnull(yaml);
    n += (size_t)snprintf(yaml + n, cap - n,
                          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
                          "metadata:\n  name: f\n");
    for (int i = 0; i < 42; i++)
        n += (size_t)snprintf(
            yaml + n, cap - n,
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n"
            "  name: cq-%02d\nspec:\n  cohortName: %s\n  namespaceSelector: {}\n"
            "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
            "    - name: f\n      resources:\n      - name: nvidia.com/gpu\n"
            "        nominalQuota: 1\n---\napiVersion: kueue.x-k8s.io/v1beta2\n"
            "kind: LocalQueue\nmetadata:\n  name: q%02d\n  namespace: default\n"
            "spec:\n  clusterQueue: cq-%02d\n---\napiVersion: batch/v1\nkind: Job\n"
            "metadata:\n  name: j%02d\n  namespace: default\n  labels:\n"
            "    kueue.x-k8s.io/queue-name: q%02d\n  annotations:\n"
            "    sim.sluice.dev/runtime: 1h\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n      - name: main\n"
            "        image: x\n        resources:\n          requests:\n"
            "            nvidia.com/gpu: 1\n",
            i, i % 2 == 0 ? "even" : "odd", i, i, i, i);
    ck_assert_uint_lt(n, cap);
    page_text(&p, yaml);
    ck_assert(has(p.html, "<svg id=\"chart-cohorts-0\" class=\"chart chart-cohorts\""));
    ck_assert_uint_eq(count(p.html, "<g class=\"cohort\">"), 2);
    ck_assert(has(p.html, "<g class=\"cohort\"><title>even</title>"));
    ck_assert(!has(p.html, "id=\"chart-cluster-0\""));
    ck_assert_uint_eq(count(p.html, "<summary>18 more ClusterQueues</summary>"), 2);
    /* The small charts: the 24 largest users, said so. */
    ck_assert_uint_eq(count(p.html, "class=\"chart chart-usage\""), 24);
    ck_assert(has(p.html, "<p>The 24 ClusterQueues using the most, of 42.</p>"));
    /* Waits: the 40 busiest rows, said so. */
    ck_assert(has(p.html, "<p>The 40 with the most workloads, of 42.</p>"));
    page_free(&p);
    free(yaml);
}
END_TEST

/* ---- the record behind the page ----------------------------------------------------------- */

static admission_t *one_gpu_admission(const char *flavor, qnano_t gpus)
{
    static resource_t res;
    static kv_t kv;
    static pod_set_assignment_t pa;
    static admission_t adm;
    static char gpu[] = "nvidia.com/gpu";

    res = (resource_t){.name = gpu, .value = {gpus, QUANTITY_DECIMAL_SI}};
    kv = (kv_t){.key = gpu, .value = (char *)flavor};
    memset(&pa, 0, sizeof(pa));
    pa.usage.items = &res;
    pa.usage.len = 1;
    pa.flavors.items = &kv;
    pa.flavors.len = 1;
    adm = (admission_t){.assignments = &pa, .nassignments = 1};
    return &adm;
}

START_TEST(test_record_spans)
{
    sim_rec_t r;
    size_t cq, a, b;

    sim_rec_init(&r);
    ck_assert_int_eq(sim_rec_holder(&r, "cq", false, &cq), ERR_OK);
    ck_assert_int_eq(sim_rec_holder_cohort(&r, cq, "lab"), ERR_OK);
    ck_assert_str_eq(r.holders[cq].cohort, "lab");
    ck_assert_int_eq(sim_rec_wl_add(&r, "ns/a", "ns", "", 0, cq, 0, &a), ERR_OK);
    ck_assert_int_eq(sim_rec_wl_add(&r, "ns/b", "ns", "", 0, cq, 0, &b), ERR_OK);
    ck_assert_int_eq(sim_rec_wl_queue(&r, a, "ns", "q"), ERR_OK);
    ck_assert_str_eq(r.wls[a].lq, "ns/q");
    ck_assert_ptr_null(r.wls[b].lq);
    ck_assert_int_eq(sim_rec_wl_reason(&r, b, "insufficient quota: requested 4", 0), ERR_OK);
    ck_assert_str_eq(r.reasons[0].text, "insufficient quota: requested N");
    ck_assert_str_eq(r.reasons[0].example, "insufficient quota: requested 4");
    ck_assert_uint_eq(r.reasons[0].example_wl, b);

    ck_assert_int_eq(sim_rec_wl_admit(&r, a, cq, one_gpu_admission("h100", 4 * NANO), 1000),
                     ERR_OK);
    ck_assert_int_eq(sim_rec_wl_preempt(&r, a, b, "InClusterQueue", 2000), ERR_OK);
    ck_assert_int_eq(sim_rec_wl_admit(&r, b, cq, one_gpu_admission("h100", 2 * NANO), 2000),
                     ERR_OK);
    ck_assert_int_eq(sim_rec_wl_admit(&r, a, cq, one_gpu_admission("a100", 4 * NANO), 3000),
                     ERR_OK);
    ck_assert_int_eq(sim_rec_wl_leave(&r, a, SIM_WL_FINISHED, 5000), ERR_OK);
    sim_rec_end(&r, 6000);

    ck_assert_uint_eq(r.nspans, 3);
    ck_assert_uint_eq(r.spans[0].wl, a);
    ck_assert_int_eq(r.spans[0].start, 1000);
    ck_assert_int_eq(r.spans[0].end, 2000);
    ck_assert_int_eq(r.spans[0].how, SIM_SPAN_PREEMPTED);
    ck_assert(r.spans[0].amount == 4 * NANO);
    ck_assert_str_eq(r.gfrs[r.spans[0].gfr].flavor, "h100");
    ck_assert_int_eq(r.spans[1].how, SIM_SPAN_RUNNING); /* b still runs at the end */
    ck_assert_int_eq(r.spans[1].end, -1);
    ck_assert_int_eq(r.spans[2].how, SIM_SPAN_FINISHED);
    ck_assert_str_eq(r.gfrs[r.spans[2].gfr].flavor, "a100");
    /* Per-ClusterQueue usage series, per flavor. */
    const sim_fr_rec_t *h100 = &r.holders[cq].frs[0];
    ck_assert_str_eq(h100->flavor, "h100");
    ck_assert(sim_series_at(&h100->usage_series, 1500) == 4 * NANO);
    ck_assert(sim_series_at(&h100->usage_series, 2500) == 2 * NANO);
    sim_rec_fini(&r);
}
END_TEST

START_TEST(test_record_quota_limits)
{
    sim_rec_t r;
    size_t h;
    char gpu[] = "nvidia.com/gpu", h100[] = "h100";
    resource_quota_t rq = {.name = gpu,
                           .nominal = {8 * NANO, QUANTITY_DECIMAL_SI},
                           .has_borrowing_limit = true,
                           .borrowing_limit = {2 * NANO, QUANTITY_DECIMAL_SI}};
    flavor_quotas_t fq = {.name = h100, .resources = &rq, .nresources = 1};
    resource_group_t g = {.flavors = &fq, .nflavors = 1};

    sim_rec_init(&r);
    ck_assert_int_eq(sim_rec_holder(&r, "cq", false, &h), ERR_OK);
    ck_assert_int_eq(sim_rec_set_quotas(&r, h, &g, 1, 0), ERR_OK);
    ck_assert(r.holders[h].frs[0].has_borrowing_limit);
    ck_assert(r.holders[h].frs[0].borrowing_limit == 2 * NANO);
    ck_assert(!r.holders[h].frs[0].has_lending_limit);
    rq.nominal.nano = 4 * NANO;
    rq.has_borrowing_limit = false;
    ck_assert_int_eq(sim_rec_set_quotas(&r, h, &g, 1, 1000), ERR_OK);
    ck_assert(!r.holders[h].frs[0].has_borrowing_limit);
    /* The quota's history, for the tree's "16 -> 8 at 3h". */
    ck_assert_uint_eq(r.holders[h].frs[0].nominal_series.len, 2);
    ck_assert(sim_series_at(&r.holders[h].frs[0].nominal_series, 500) == 8 * NANO);
    ck_assert(sim_series_at(&r.holders[h].frs[0].nominal_series, 1000) == 4 * NANO);
    sim_rec_fini(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sim_report");
    TCase *tc = tcase_create("report");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_report_fair_sharing);
    tcase_add_test(tc, test_report_platform);
    tcase_add_test(tc, test_report_queue_graph);
    tcase_add_test(tc, test_report_quota_change);
    tcase_add_test(tc, test_report_local_queues);
    tcase_add_test(tc, test_report_cpu_constraint);
    tcase_add_test(tc, test_report_many_queues);
    tcase_add_test(tc, test_record_spans);
    tcase_add_test(tc, test_record_quota_limits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
