/* test_acct -- accounting: the record, its chained log, the report, the simulator's log; and
 * `sluice sim --compare` (lib/sim/compare.c). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "acct/acct.h"
#include "acct/report.h"
#include "sim/compare.h"
#include "sim/sim.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define H  (3600 * 1000LL) /* an hour in ms */
#define T0 1764633600000LL /* 2025-12-02T00:00:00Z */

static char *temp_path(void)
{
    char *p = strdup("/tmp/sluice-test-acct-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return p;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;

    ck_assert_ptr_nonnull(f);
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(f);
    fclose(m);
    return buf;
}

/* An admission of `gpus` GPUs (flavor h100) and 8 CPUs (flavor cpu) in two podsets. */
static void make_adm(admission_t *adm, pod_set_assignment_t psa[2], kv_t fl[2][1],
                     resource_t res[2][1], const char *gpus)
{
    memset(adm, 0, sizeof(*adm));
    fl[0][0] = (kv_t){(char *)"nvidia.com/gpu", (char *)"h100"};
    fl[1][0] = (kv_t){(char *)"cpu", (char *)"cpu"};
    ck_assert_int_eq(quantity_parse(gpus, strlen(gpus), &res[0][0].value, NULL), ERR_OK);
    res[0][0].name = (char *)"nvidia.com/gpu";
    ck_assert_int_eq(quantity_parse("8", 1, &res[1][0].value, NULL), ERR_OK);
    res[1][0].name = (char *)"cpu";
    psa[0] = (pod_set_assignment_t){(char *)"workers", {fl[0], 1}, {res[0], 1}, true, 4, NULL};
    psa[1] = (pod_set_assignment_t){(char *)"launcher", {fl[1], 1}, {res[1], 1}, true, 1, NULL};
    adm->cluster_queue = (char *)"cq-a";
    adm->assignments = psa;
    adm->nassignments = 2;
}

static acct_end_t end_of(const admission_t *adm, const char *ns, acct_outcome_t o, int64_t q,
                         int64_t a, int64_t e)
{
    return (acct_end_t){.source = "operator",
                        .workload = "train",
                        .ns = ns,
                        .uid = "u-1",
                        .local_queue = "lq",
                        .adm = adm,
                        .priority_class = NULL,
                        .priority = 7,
                        .outcome = o,
                        .reason = o == ACCT_PREEMPTED ? "InCohortReclamation" : NULL,
                        .queued_ms = q,
                        .admitted_ms = a,
                        .ended_ms = e};
}

START_TEST(test_record_round_trip)
{
    admission_t adm;
    pod_set_assignment_t psa[2];
    kv_t fl[2][1];
    resource_t res[2][1];
    acct_end_t e;
    json_t *j;
    acct_rec_t r;
    char *text;

    make_adm(&adm, psa, fl, res, "32");
    e = end_of(&adm, "team-a", ACCT_PREEMPTED, T0, T0 + 1500, T0 + 2 * H);
    ck_assert_int_eq(acct_record_build(&e, &j, NULL), ERR_OK);
    text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    /* The fixed key order and exact quantities of docs/accounting.md. */
    ck_assert_str_eq(
        text,
        "{\"time\":\"2025-12-02T02:00:00.000Z\",\"source\":\"operator\",\"workload\":\"train\","
        "\"namespace\":\"team-a\",\"uid\":\"u-1\",\"localQueue\":\"lq\",\"clusterQueue\":\"cq-a\","
        "\"priorityClass\":null,\"priority\":7,\"outcome\":\"preempted\",\"reason\":"
        "\"InCohortReclamation\",\"queuedAt\":\"2025-12-02T00:00:00.000Z\",\"admittedAt\":"
        "\"2025-12-02T00:00:01.500Z\",\"endedAt\":\"2025-12-02T02:00:00.000Z\",\"flavors\":["
        "\"cpu\",\"h100\"],\"podSets\":[{\"name\":\"workers\",\"count\":4,\"flavors\":{"
        "\"nvidia.com/gpu\":\"h100\"},\"resources\":{\"nvidia.com/gpu\":\"32\"}},{\"name\":"
        "\"launcher\",\"count\":1,\"flavors\":{\"cpu\":\"cpu\"},\"resources\":{\"cpu\":\"8\"}}]}");
    free(text);
    ck_assert_int_eq(acct_record_parse(j, &r, NULL), ERR_OK);
    ck_assert_str_eq(r.ns, "team-a");
    ck_assert_str_eq(r.local_queue, "lq");
    ck_assert_str_eq(r.cluster_queue, "cq-a");
    ck_assert_str_eq(r.priority_class, "");
    ck_assert_int_eq(r.outcome, ACCT_PREEMPTED);
    ck_assert_int_eq(r.admitted_ms - r.queued_ms, 1500);
    ck_assert_uint_eq(r.nuse, 2);
    ck_assert_str_eq(r.use[0].flavor, "h100");
    ck_assert(r.use[0].amount == (qnano_t)32 * 1000000000);
    acct_rec_fini(&r);
    json_decref(j);
}
END_TEST

START_TEST(test_parse_rejects_with_field_path)
{
    static const struct {
        const char *line, *want;
    } cases[] = {
        {"[]", "not a JSON object"},
        {"{\"workload\":1}", "workload: not a string"},
        {"{\"workload\":\"w\",\"namespace\":\"n\",\"clusterQueue\":\"c\",\"queuedAt\":"
         "\"yesterday\"}",
         "queuedAt: not a UTC time"},
        {"{\"workload\":\"w\",\"namespace\":\"n\",\"clusterQueue\":\"c\",\"queuedAt\":"
         "\"2025-12-02T00:00:00Z\",\"admittedAt\":\"2025-12-02T00:00:00Z\",\"endedAt\":"
         "\"2025-12-02T00:00:00Z\",\"outcome\":\"won\"}",
         "outcome: not one of"},
        {"{\"workload\":\"w\",\"namespace\":\"n\",\"clusterQueue\":\"c\",\"queuedAt\":"
         "\"2025-12-02T00:00:00Z\",\"admittedAt\":\"2025-12-01T00:00:00Z\",\"endedAt\":"
         "\"2025-12-02T00:00:00Z\",\"outcome\":\"finished\"}",
         "times out of order"},
        {"{\"workload\":\"w\",\"namespace\":\"n\",\"clusterQueue\":\"c\",\"queuedAt\":"
         "\"2025-12-02T00:00:00Z\",\"admittedAt\":\"2025-12-02T00:00:00Z\",\"endedAt\":"
         "\"2025-12-02T00:00:00Z\",\"outcome\":\"finished\",\"podSets\":[{\"flavors\":{},"
         "\"resources\":{\"cpu\":\"-1\"}}]}",
         "podSets[0].resources[cpu]: not a quantity >= 0"},
        {"{\"workload\":\"w\",\"namespace\":\"n\",\"clusterQueue\":\"c\",\"queuedAt\":"
         "\"2025-12-02T00:00:00Z\",\"admittedAt\":\"2025-12-02T00:00:00Z\",\"endedAt\":"
         "\"2025-12-02T00:00:00Z\",\"outcome\":\"finished\",\"podSets\":[{\"flavors\":{},"
         "\"resources\":{\"cpu\":\"9e26\"}},{\"flavors\":{},\"resources\":{\"cpu\":\"9e26\"}}]}",
         "total out of range"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        json_t *j = json_loads(cases[i].line, 0, NULL);
        acct_rec_t r;
        err_msg_t msg = {{0}};
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(acct_record_parse(j, &r, &msg), ERR_PARSE);
        ck_assert_msg(strstr(msg.text, cases[i].want) != NULL, "case %zu: %s", i, msg.text);
        acct_rec_fini(&r);
        json_decref(j);
    }
    /* The sink's own records are not admissions. */
    json_t *j = json_loads("{\"type\":\"rotated\"}", 0, NULL);
    acct_rec_t r;
    ck_assert_int_eq(acct_record_parse(j, &r, NULL), ERR_NOT_FOUND);
    json_decref(j);
}
END_TEST

START_TEST(test_log_is_chained_and_resumes)
{
    char *path = temp_path();
    const char *files[] = {path};
    admission_t adm;
    pod_set_assignment_t psa[2];
    kv_t fl[2][1];
    resource_t res[2][1];
    acct_log_t *log;
    chainlog_verify_t v;
    acct_end_t e;
    err_msg_t msg;

    make_adm(&adm, psa, fl, res, "8");
    e = end_of(&adm, "team-a", ACCT_FINISHED, T0, T0, T0 + H);
    ck_assert_int_eq(acct_log_open(path, false, 0, 0, &log, &msg), ERR_OK);
    ck_assert_int_eq(acct_log_write(log, &e, &msg), ERR_OK);
    ck_assert_int_eq(acct_log_close(log, &msg), ERR_OK);
    /* The operator resumes the chain after a restart. */
    ck_assert_int_eq(acct_log_open(path, false, 0, 0, &log, &msg), ERR_OK);
    ck_assert_int_eq(acct_log_write(log, &e, &msg), ERR_OK);
    ck_assert_uint_eq(acct_log_count(log), 1);
    ck_assert_int_eq(acct_log_close(log, &msg), ERR_OK);
    ck_assert_int_eq(chainlog_verify(files, 1, "accounting", &v, &msg), ERR_OK);
    ck_assert_msg(v.ok, "%s", v.where);
    ck_assert(v.anchored);
    ck_assert_uint_eq(v.last_seq, 2);
    /* The simulator starts a new history. */
    ck_assert_int_eq(acct_log_open(path, true, 0, 0, &log, &msg), ERR_OK);
    ck_assert_int_eq(acct_log_write(log, &e, &msg), ERR_OK);
    ck_assert_int_eq(acct_log_close(log, &msg), ERR_OK);
    ck_assert_int_eq(chainlog_verify(files, 1, "accounting", &v, &msg), ERR_OK);
    ck_assert(v.ok && v.anchored);
    ck_assert_uint_eq(v.records, 1);
    unlink(path);
    free(path);
    ck_assert_int_eq(acct_log_open("/nonexistent-dir/acct.log", false, 0, 0, &log, &msg), ERR_IO);
    ck_assert_ptr_nonnull(strstr(msg.text, "accounting log /nonexistent-dir/acct.log"));
}
END_TEST

/* Write records to a temporary log and read them into a report of `by` over [since, until). */
static acct_report_t *report_of(const acct_end_t *ends, size_t n, acct_by_t by, int64_t since,
                                int64_t until, size_t *skipped, const char *extra)
{
    char *path = temp_path();
    acct_log_t *log;
    acct_report_t *r = acct_report_new(by, since, until);
    FILE *f;
    err_msg_t msg;

    ck_assert_int_eq(acct_log_open(path, true, 0, 0, &log, &msg), ERR_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(acct_log_write(log, &ends[i], &msg), ERR_OK);
    ck_assert_int_eq(acct_log_close(log, &msg), ERR_OK);
    if (extra != NULL) {
        f = fopen(path, "a");
        fputs(extra, f);
        fclose(f);
    }
    f = fopen(path, "r");
    FILE *err = fopen("/dev/null", "w");
    *skipped = 0;
    ck_assert_int_eq(acct_report_read(r, f, path, err, skipped, &msg), ERR_OK);
    fclose(err);
    fclose(f);
    unlink(path);
    free(path);
    return r;
}

static char *report_text(const acct_report_t *r, acct_out_t fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_int_eq(acct_report_write(r, fmt, f, NULL), ERR_OK);
    fclose(f);
    return buf;
}

START_TEST(test_report_hours_waits_outcomes)
{
    admission_t a8, a2;
    pod_set_assignment_t p8[2], p2[2];
    kv_t f8[2][1], f2[2][1];
    resource_t r8[2][1], r2[2][1];
    size_t skipped;

    make_adm(&a8, p8, f8, r8, "8");
    make_adm(&a2, p2, f2, r2, "500m");
    acct_end_t ends[] = {
        /* team-a: 8 GPUs for 2 h (16), then preempted after 1 h (8); waits 0 and 3 h */
        end_of(&a8, "team-a", ACCT_FINISHED, T0, T0, T0 + 2 * H),
        end_of(&a8, "team-a", ACCT_PREEMPTED, T0, T0 + 3 * H, T0 + 4 * H),
        /* team-b: 0.5 GPU for 3 h = 1.5 GPU-hours; wait 1 h */
        end_of(&a2, "team-b", ACCT_EVICTED, T0, T0 + H, T0 + 4 * H),
    };
    acct_report_t *r = report_of(ends, 3, ACCT_BY_NAMESPACE, -1, -1, &skipped,
                                 "not json\n{\"type\":\"rotated\",\"dropped\":\"x.5\"}\n"
                                 "{\"workload\":\"w\"}\n");
    char *t;

    ck_assert_uint_eq(skipped, 2);
    t = report_text(r, ACCT_OUT_CSV);
    ck_assert_str_eq(t, "NAMESPACE,ADMITTED,nvidia.com/gpu-H,cpu-H,WAIT-P50,WAIT-P90,WAIT-P99,"
                        "FINISHED,PREEMPTED,EVICTED,DELETED\n"
                        "team-a,2,24,24,0,10800,10800,1,1,0,0\n"
                        "team-b,1,1.5,24,3600,3600,3600,0,0,1,0\n"
                        "TOTAL,3,25.5,48,3600,10800,10800,1,1,1,0\n");
    free(t);
    t = report_text(r, ACCT_OUT_TABLE);
    ck_assert_ptr_nonnull(strstr(t, "team-b            1             1.500"));
    ck_assert_ptr_nonnull(strstr(t, "3h"));
    free(t);
    t = report_text(r, ACCT_OUT_JSON);
    json_t *j = json_loads(t, 0, NULL);
    ck_assert_ptr_nonnull(j);
    json_t *tot = json_object_get(j, "total");
    ck_assert_str_eq(json_string_value(json_object_get(j, "by")), "namespace");
    ck_assert_int_eq(json_integer_value(json_object_get(tot, "preempted")), 1);
    json_t *gpu = json_array_get(json_object_get(tot, "resources"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(gpu, "resource")), "nvidia.com/gpu");
    ck_assert(json_real_value(json_object_get(gpu, "hours")) == 25.5);
    ck_assert_int_eq(json_integer_value(json_object_get(gpu, "resourceSeconds")), 91800);
    json_decref(j);
    free(t);
    acct_report_free(r);

    /* [T0+1h, T0+3h): usage is cut at the edges; waits count admissions inside the range,
     * outcomes the ends inside it. */
    r = report_of(ends, 3, ACCT_BY_NAMESPACE, T0 + H, T0 + 3 * H, &skipped, NULL);
    t = report_text(r, ACCT_OUT_CSV);
    ck_assert_str_eq(t, "NAMESPACE,ADMITTED,nvidia.com/gpu-H,cpu-H,WAIT-P50,WAIT-P90,WAIT-P99,"
                        "FINISHED,PREEMPTED,EVICTED,DELETED\n"
                        "team-a,0,8,8,,,,1,0,0,0\n"
                        "team-b,1,1,16,3600,3600,3600,0,0,0,0\n"
                        "TOTAL,1,9,24,3600,3600,3600,1,0,0,0\n");
    free(t);
    acct_report_free(r);

    /* By flavor: each record in each flavor it used. */
    r = report_of(ends, 3, ACCT_BY_FLAVOR, -1, -1, &skipped, NULL);
    t = report_text(r, ACCT_OUT_CSV);
    ck_assert_str_eq(t, "FLAVOR,ADMITTED,nvidia.com/gpu-H,cpu-H,WAIT-P50,WAIT-P90,WAIT-P99,"
                        "FINISHED,PREEMPTED,EVICTED,DELETED\n"
                        "cpu,3,0,48,3600,10800,10800,1,1,1,0\n"
                        "h100,3,25.5,0,3600,10800,10800,1,1,1,0\n"
                        "TOTAL,3,25.5,48,3600,10800,10800,1,1,1,0\n");
    free(t);
    acct_report_free(r);
}
END_TEST

START_TEST(test_by_parse)
{
    acct_by_t by;
    ck_assert(acct_by_parse("LocalQueue", &by) && by == ACCT_BY_LOCALQUEUE);
    ck_assert(acct_by_parse("cq", &by) && by == ACCT_BY_CLUSTERQUEUE);
    ck_assert(!acct_by_parse("team", &by));
}
END_TEST

/* ---- the simulator's log ------------------------------------------------------------------- */

static const char scenario[] =
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
    "  namespaceSelector: {}\n  preemption: {withinClusterQueue: LowerPriority}\n"
    "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
    "    - name: h100\n      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ml}\n"
    "spec: {clusterQueue: cq}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\n"
    "value: 100\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: low\n"
    "  namespace: ml\n  annotations: {sim.sluice.dev/runtime: 2h}\nspec:\n  queueName: lq\n"
    "  podSets:\n  - name: main\n    count: 2\n    template:\n      spec:\n        containers:\n"
    "        - name: c\n          resources: {requests: {nvidia.com/gpu: 4}}\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata:\n  name: urgent\n"
    "  namespace: ml\n  annotations: {sim.sluice.dev/at: 30m, sim.sluice.dev/runtime: 1h}\n"
    "spec:\n  queueName: lq\n  priorityClassRef: {group: kueue.x-k8s.io, kind: "
    "WorkloadPriorityClass, name: high}\n  priority: 100\n  podSets:\n  - name: main\n    count: "
    "1\n"
    "    template:\n      spec:\n        containers:\n        - name: c\n"
    "          resources: {requests: {nvidia.com/gpu: 8}}\n";

static char *sim_log(int64_t epoch)
{
    sim_scenario_t sc;
    sim_rec_t rec;
    sim_options_t opts;
    acct_log_t *log;
    err_msg_t msg = {{0}};
    char *path = temp_path(), *text;

    sim_scenario_init(&sc);
    sim_rec_init(&rec);
    ck_assert_msg(sim_scenario_load_string(scenario, strlen(scenario), &sc, &msg) == ERR_OK, "%s",
                  sc.nerrors ? sc.errors[0] : msg.text);
    ck_assert_int_eq(acct_log_open(path, true, 0, 0, &log, &msg), ERR_OK);
    memset(&opts, 0, sizeof(opts));
    opts.accounting = log;
    opts.accounting_epoch_ms = epoch;
    ck_assert_msg(sim_run(&sc, &opts, &rec, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(acct_log_close(log, &msg), ERR_OK);
    sim_rec_fini(&rec);
    sim_scenario_fini(&sc);
    text = slurp(path);
    unlink(path);
    free(path);
    return text;
}

START_TEST(test_sim_writes_each_ended_admission)
{
    char *a = sim_log(T0), *b = sim_log(T0);
    char *lines[8];
    size_t n = 0;

    ck_assert_str_eq(a, b); /* the same scenario gives the same bytes */
    for (char *p = a; *p && n < 8; n++) {
        lines[n] = p;
        p = strchr(p, '\n');
        ck_assert_ptr_nonnull(p);
        *p++ = '\0';
    }
    /* low preempted at 30m by urgent, urgent finished at 1h30m, low again until 3h30m. */
    ck_assert_uint_eq(n, 3);
    ck_assert_ptr_nonnull(strstr(lines[0], "\"workload\":\"low\",\"namespace\":\"ml\",\"uid\":null,"
                                           "\"localQueue\":\"lq\",\"clusterQueue\":\"cq\""));
    ck_assert_ptr_nonnull(strstr(lines[0], "\"outcome\":\"preempted\",\"reason\":"
                                           "\"InClusterQueue\",\"queuedAt\":\"2025-12-02T00:00:"
                                           "00.000Z\",\"admittedAt\":\"2025-12-02T00:00:00.000Z\","
                                           "\"endedAt\":\"2025-12-02T00:30:00.000Z\""));
    ck_assert_ptr_nonnull(strstr(lines[0], "{\"name\":\"main\",\"count\":2,\"flavors\":{\"nvidia."
                                           "com/gpu\":\"h100\"},\"resources\":{\"nvidia.com/gpu\":"
                                           "\"8\"}}"));
    ck_assert_ptr_nonnull(strstr(lines[1], "\"workload\":\"urgent\""));
    ck_assert_ptr_nonnull(strstr(lines[1], "\"priorityClass\":\"high\",\"priority\":100,"
                                           "\"outcome\":\"finished\",\"reason\":\"Succeeded\""));
    ck_assert_ptr_nonnull(strstr(lines[2], "\"workload\":\"low\""));
    /* The second admission waited from the preemption (30m) to 1h30m. */
    ck_assert_ptr_nonnull(strstr(lines[2], "\"queuedAt\":\"2025-12-02T00:30:00.000Z\","
                                           "\"admittedAt\":\"2025-12-02T01:30:00.000Z\","
                                           "\"endedAt\":\"2025-12-02T03:30:00.000Z\""));
    free(a);
    free(b);
}
END_TEST

/* ---- sluice sim --compare ------------------------------------------------------------------ */

static void load_file(const char *rel, sim_scenario_t *sc)
{
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[1024];
    FILE *f;
    err_msg_t msg = {{0}};

    snprintf(path, sizeof(path), "%s/%s", src != NULL ? src : "..", rel);
    f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    sim_scenario_init(sc);
    ck_assert_msg(sim_scenario_load(f, sc, &msg) == ERR_OK, "%s: %s", rel, msg.text);
    fclose(f);
}

START_TEST(test_compare_same_stream_two_designs)
{
    sim_scenario_t a, b, mixed;
    sim_rec_t ra, rb;
    sim_options_t opts;
    err_msg_t msg = {{0}};
    size_t ignored = 99, nwl = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    json_t *j, *sa, *sb;

    load_file("examples/03-fair-sharing.yaml", &a);
    load_file("examples/designs/static-quotas.yaml", &b);
    sim_scenario_init(&mixed);
    /* B's design first, then A's stream: 9 design documents, then A's 53 others. */
    ck_assert_int_eq(sim_compare_scenario(&a, &b, &mixed, &ignored, &msg), ERR_OK);
    ck_assert_uint_eq(ignored, 0);
    for (size_t i = 0; i < mixed.ndocs; i++) {
        ck_assert_int_eq(sim_compare_is_design(mixed.docs[i].obj.kind), i < b.ndocs);
        nwl += mixed.docs[i].obj.kind == KIND_JOB;
    }
    ck_assert_uint_eq(nwl, 48);
    ck_assert_ptr_null(mixed.config); /* B has no Configuration: no fair sharing */
    /* A's own stream documents of B would be ignored: compare A with itself. */
    {
        sim_scenario_t self;
        sim_scenario_init(&self);
        ck_assert_int_eq(sim_compare_scenario(&a, &a, &self, &ignored, &msg), ERR_OK);
        ck_assert_uint_eq(ignored, a.ndocs - 11); /* all but its 11 design documents */
        ck_assert_ptr_eq(self.config, a.config);
        sim_compare_scenario_fini(&self);
    }
    memset(&opts, 0, sizeof(opts));
    sim_rec_init(&ra);
    sim_rec_init(&rb);
    ck_assert_int_eq(sim_run(&a, &opts, &ra, &msg), ERR_OK);
    ck_assert_int_eq(sim_run(&mixed, &opts, &rb, &msg), ERR_OK);
    out = open_memstream(&text, &len);
    ck_assert_int_eq(sim_compare_write(&ra, "A", &rb, "B", true, out, &msg), ERR_OK);
    fclose(out);
    j = json_loads(text, 0, NULL);
    ck_assert_msg(j != NULL, "%s", text);
    sa = json_object_get(j, "a");
    sb = json_object_get(j, "b");
    /* The same 48 jobs on both sides; B (fixed quotas, no cohort) preempts nobody and leaves
     * delta's 12 GPUs idle until it arrives; A lends them and preempts 14 times. */
    ck_assert_int_eq(json_integer_value(json_object_get(sa, "workloads")), 48);
    ck_assert_int_eq(json_integer_value(json_object_get(sb, "workloads")), 48);
    ck_assert_int_eq(json_integer_value(json_object_get(sa, "preemptions")), 14);
    ck_assert_int_eq(json_integer_value(json_object_get(sb, "preemptions")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(sa, "idleGpuQuotaHours")), 20);
    ck_assert_int_eq(json_integer_value(json_object_get(sb, "idleGpuQuotaHours")), 48);
    ck_assert(json_real_value(json_object_get(sb, "jainFairnessIndex")) == 0 &&
              json_integer_value(json_object_get(sb, "jainFairnessIndex")) == 1);
    json_t *delta_a = json_array_get(json_object_get(sa, "teams"), 2);
    json_t *delta_b = json_array_get(json_object_get(sb, "teams"), 2);
    ck_assert_str_eq(json_string_value(json_object_get(delta_a, "namespace")), "team-delta");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(delta_a, "waitSeconds"), "p50")), 0);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(delta_b, "waitSeconds"), "p50")), 7200);
    /* GPU-hours per team on A agree with the accounting of the same run (test above) and the
     * summary: 104, 104, 96, 108. */
    ck_assert_int_eq(json_integer_value(json_object_get(delta_a, "gpuHours")), 96);
    json_decref(j);
    free(text);
    /* The table names both sides and every team. */
    text = NULL;
    out = open_memstream(&text, &len);
    ck_assert_int_eq(sim_compare_write(&ra, "a.yaml", &rb, "b.yaml", false, out, &msg), ERR_OK);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(text, "B: b.yaml (its quota design, A's workloads)"));
    ck_assert_ptr_nonnull(strstr(text, "team-gamma"));
    ck_assert_ptr_nonnull(strstr(text, "idle GPU quota (GPU-hours)"));
    free(text);
    /* --report: the table, then both runs' own reports side by side, escaped into srcdoc. */
    text = NULL;
    out = open_memstream(&text, &len);
    ck_assert_int_eq(sim_compare_html(&ra, "a.yaml", &rb, "b.yaml", out, &msg), ERR_OK);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(text, "<pre id=\"compare-table\">A: a.yaml\nB: b.yaml"));
    ck_assert_ptr_nonnull(strstr(text, "<iframe title=\"A\" srcdoc=\"&lt;!DOCTYPE html&gt;"));
    ck_assert_ptr_nonnull(strstr(text, "<iframe title=\"B\" srcdoc=\"&lt;!DOCTYPE html&gt;"));
    ck_assert_ptr_nonnull(strstr(text, "design with a.yaml")); /* B's report says what it ran */
    ck_assert_ptr_null(strstr(text, "<script"));
    free(text);
    sim_rec_fini(&ra);
    sim_rec_fini(&rb);
    sim_compare_scenario_fini(&mixed);
    sim_scenario_fini(&a);
    sim_scenario_fini(&b);
}
END_TEST

static Suite *acct_suite(void)
{
    Suite *s = suite_create("acct");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_record_round_trip);
    tcase_add_test(tc, test_parse_rejects_with_field_path);
    tcase_add_test(tc, test_log_is_chained_and_resumes);
    tcase_add_test(tc, test_report_hours_waits_outcomes);
    tcase_add_test(tc, test_by_parse);
    tcase_add_test(tc, test_sim_writes_each_ended_admission);
    tcase_add_test(tc, test_compare_same_stream_two_designs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(acct_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
