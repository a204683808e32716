/* test_ctrl_idle -- idle reclaim's pure parts: the state machine of one Workload, its samples,
 * the policy of a queue's annotations, the configuration section with its field paths, and the
 * Prometheus answer (shape, values, hostile and oversized bodies) through the real transport on
 * a loopback server. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/idle.h"

#include "ctrl/promq.h"
#include "kube_testsrv.h"

#include <check.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T0     1764680000000LL /* a Unix time in ms */
#define MINUTE 60000LL

static idle_sample_t sample(idle_sample_kind_t kind, uint32_t max_milli)
{
    idle_sample_t s = {kind, 2, 2, max_milli, false};
    return s;
}

/* ---- the state machine ------------------------------------------------------------------- */

START_TEST(step_warns_then_deactivates)
{
    idle_policy_t p = {60 * MINUTE, 15 * MINUTE, 5000, true};
    idle_state_t st = {0};
    idle_sample_t idle = sample(IDLE_SAMPLE_IDLE, 0);

    ck_assert_int_eq(idle_step(&st, &p, &idle, T0), IDLE_ACT_NONE);
    ck_assert_int_eq(st.since_ms, T0);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 44 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 45 * MINUTE), IDLE_ACT_WARN);
    ck_assert_int_eq(st.warned_ms, T0 + 45 * MINUTE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 46 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 59 * MINUTE), IDLE_ACT_NONE);
    idle.max_milli = 4000; /* still at or below 5% */
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 60 * MINUTE), IDLE_ACT_DEACTIVATE);
    ck_assert_uint_eq(st.max_milli, 4000);
}
END_TEST

START_TEST(step_busy_or_unknown_restarts_the_clock)
{
    idle_policy_t p = {60 * MINUTE, 15 * MINUTE, 0, true};
    idle_state_t st = {0};
    idle_sample_t idle = sample(IDLE_SAMPLE_IDLE, 0), busy = sample(IDLE_SAMPLE_BUSY, 37000),
                  unknown = sample(IDLE_SAMPLE_UNKNOWN, 0);

    ck_assert_int_eq(idle_step(&st, &p, &idle, T0), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 45 * MINUTE), IDLE_ACT_WARN);
    /* Metrics gone after the warning: the warning is taken back, the clock starts over. */
    ck_assert_int_eq(idle_step(&st, &p, &unknown, T0 + 50 * MINUTE), IDLE_ACT_CLEAR);
    ck_assert_int_eq(st.since_ms, 0);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 61 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 70 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &busy, T0 + 71 * MINUTE), IDLE_ACT_CLEAR);
    ck_assert_int_eq(idle_step(&st, &p, &busy, T0 + 72 * MINUTE), IDLE_ACT_NONE);
    /* Never deactivated without a full idle stretch after the last interruption. */
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 73 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 117 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 118 * MINUTE), IDLE_ACT_WARN);
}
END_TEST

START_TEST(step_warns_first_even_without_lead)
{
    idle_policy_t p = {10 * MINUTE, 0, 0, true};
    idle_state_t st = {0};
    idle_sample_t idle = sample(IDLE_SAMPLE_IDLE, 0);

    ck_assert_int_eq(idle_step(&st, &p, &idle, T0), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 10 * MINUTE), IDLE_ACT_WARN);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 10 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 11 * MINUTE), IDLE_ACT_DEACTIVATE);
    /* Default lead: a quarter of idleFor. */
    p.warn_set = false;
    ck_assert_int_eq(idle_policy_warn_ms(&p), 150000);
}
END_TEST

START_TEST(step_late_warning_waits_its_lead)
{
    /* The first idle sample comes late (a new leader): the warning still precedes the
     * deactivation by warnBefore. */
    idle_policy_t p = {60 * MINUTE, 15 * MINUTE, 0, true};
    idle_state_t st = {0};
    idle_sample_t idle = sample(IDLE_SAMPLE_IDLE, 0);

    ck_assert_int_eq(idle_step(&st, &p, &idle, T0), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 90 * MINUTE), IDLE_ACT_WARN);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 100 * MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 + 105 * MINUTE), IDLE_ACT_DEACTIVATE);
    /* A clock that goes back starts a new stretch. */
    memset(&st, 0, sizeof(st));
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0), IDLE_ACT_NONE);
    ck_assert_int_eq(idle_step(&st, &p, &idle, T0 - MINUTE), IDLE_ACT_NONE);
    ck_assert_int_eq(st.since_ms, T0 - MINUTE);
}
END_TEST

START_TEST(samples_join_pods)
{
    idle_sample_t s = {0};

    /* Two pods of 2 GPUs each, all series there, at most 3%: idle under 5%, busy under 2%. */
    idle_sample_add(&s, 2, 2, 3000, false);
    idle_sample_add(&s, 2, 2, 1000, false);
    idle_sample_add(&s, 0, 0, 0, false); /* a launcher without GPUs */
    idle_sample_end(&s, 5000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_IDLE);
    ck_assert_uint_eq(s.gpus, 4);
    ck_assert_uint_eq(s.max_milli, 3000);
    idle_sample_end(&s, 2000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_BUSY);

    /* One pod with a GPU missing from the answer: unknown, although the totals would match. */
    memset(&s, 0, sizeof(s));
    idle_sample_add(&s, 1, 2, 0, false);
    idle_sample_add(&s, 1, 0, 0, false);
    idle_sample_end(&s, 5000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_UNKNOWN);

    /* An undecodable series: unknown; unless another GPU shows work (busy). */
    memset(&s, 0, sizeof(s));
    idle_sample_add(&s, 1, 1, 0, true);
    idle_sample_end(&s, 5000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_UNKNOWN);
    idle_sample_add(&s, 1, 1, 90000, false);
    idle_sample_end(&s, 5000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_BUSY);

    /* No GPU pod at all (pods not running yet, or MIG only): unknown. */
    memset(&s, 0, sizeof(s));
    idle_sample_end(&s, 5000);
    ck_assert_int_eq(s.kind, IDLE_SAMPLE_UNKNOWN);
}
END_TEST

/* ---- percentages, annotations, configuration ---------------------------------------------- */

START_TEST(percentages)
{
    static const struct {
        const char *in;
        uint32_t milli;
    } ok[] = {{"0", 0},        {"5", 5000},         {"2.5", 2500}, {"0.125", 125},
              {"100", 100000}, {"100.000", 100000}, {"007", 7000}, {"1.5000", 1500}};
    static const char *const bad[] = {"",   "-1",      "+1",           "1e2",    "2.",
                                      ".5", "100.001", "101",          "1.2345", "5%",
                                      " 5", "NaN",     "1000000000000"};
    char buf[16];
    uint32_t v;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_msg(idle_percent_parse(ok[i].in, &v, NULL) == ERR_OK, "%s", ok[i].in);
        ck_assert_uint_eq(v, ok[i].milli);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(idle_percent_parse(bad[i], &v, NULL) == ERR_INVALID, "%s", bad[i]);
    ck_assert_str_eq(idle_percent_format(0, buf, sizeof(buf)), "0%");
    ck_assert_str_eq(idle_percent_format(2500, buf, sizeof(buf)), "2.5%");
    ck_assert_str_eq(idle_percent_format(125, buf, sizeof(buf)), "0.125%");
    ck_assert_str_eq(idle_percent_format(12050, buf, sizeof(buf)), "12.05%");
}
END_TEST

static kv_list_t annotations(kv_t *items, size_t n)
{
    kv_list_t l = {items, n};
    return l; /* sorted by the callers */
}

START_TEST(queue_annotations)
{
    idle_policy_t defaults = {3600000, 0, 1000, false}, p = {0};
#define KV(k, v) {(char *)(k), (char *)(v)}
    kv_t a[] = {KV(IDLE_ANN_FOR, "2h"), KV(IDLE_ANN_THRESHOLD, "2.5"), KV(IDLE_ANN_WARN, "10m")};
    kv_t only_thr[] = {KV(IDLE_ANN_THRESHOLD, "2.5")};
    kv_t bad_for[] = {KV(IDLE_ANN_FOR, "30s")};
    kv_t bad_warn[] = {KV(IDLE_ANN_FOR, "10m"), KV(IDLE_ANN_WARN, "10m")};
    kv_t bad_thr[] = {KV(IDLE_ANN_FOR, "10m"), KV(IDLE_ANN_THRESHOLD, "2,5")};
    kv_list_t l = annotations(a, 3);
    err_msg_t msg = {{0}};
    bool found = false;

    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_OK);
    ck_assert(found);
    ck_assert_int_eq(p.idle_ms, 7200000);
    ck_assert_int_eq(p.warn_ms, 600000);
    ck_assert_uint_eq(p.threshold_milli, 2500);
    /* The threshold alone does not turn the policy on. */
    l = annotations(only_thr, 1);
    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_OK);
    ck_assert(!found);
    l = annotations(bad_for, 1);
    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "sluice.dev/idle-for: 30s: must be at least 1m") != NULL, "%s",
                  msg.text);
    l = annotations(bad_warn, 2);
    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "sluice.dev/idle-warn-before: must be shorter") != NULL, "%s",
                  msg.text);
    l = annotations(bad_thr, 2);
    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_INVALID);
    ck_assert_msg(strstr(msg.text, "sluice.dev/idle-threshold: 2,5") != NULL, "%s", msg.text);
    /* The configuration's default lead does not break a shorter queue idleFor. */
    defaults.warn_ms = 1800000;
    defaults.warn_set = true;
    l = annotations(bad_for, 1);
    bad_for[0].value = (char *)"20m";
    ck_assert_int_eq(idle_policy_from_annotations(&l, &defaults, &p, &found, &msg), ERR_OK);
    ck_assert(!p.warn_set);
    ck_assert_int_eq(idle_policy_warn_ms(&p), 300000);
}
END_TEST

START_TEST(config_section)
{
    static const char text[] = "prometheus:\n"
                               "  url: https://prom.monitoring.svc:9090/prefix/\n"
                               "  caFile: /etc/ca.crt\n"
                               "  timeout: 5s\n"
                               "  maxResponseBytes: 65536\n"
                               "interval: 30s\n"
                               "podLabel: exported_pod\n"
                               "namespaceLabel: exported_namespace\n"
                               "threshold: 3\n"
                               "policies:\n"
                               "- clusterQueue: team-a\n"
                               "  idleFor: 2h\n"
                               "- localQueue: ml/notebooks\n"
                               "  idleFor: 30m\n"
                               "  threshold: \"0.5\"\n"
                               "  warnBefore: 5m\n";
    idle_config_t *cfg = NULL;
    const idle_policy_t *p;
    err_msg_t msg = {{0}};
    char q[512];

    ck_assert_msg(idle_config_parse(text, strlen(text), &cfg, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(cfg->url, "https://prom.monitoring.svc:9090/prefix");
    ck_assert_str_eq(cfg->ca_file, "/etc/ca.crt");
    ck_assert_uint_eq(cfg->timeout_ms, 5000);
    ck_assert_uint_eq(cfg->max_bytes, 65536);
    ck_assert_int_eq(cfg->interval_ms, 30000);
    ck_assert_int_eq(cfg->window_ms, 60000); /* at least a minute by default */
    ck_assert_str_eq(cfg->metric, "DCGM_FI_DEV_GPU_UTIL");
    ck_assert_str_eq(cfg->gpu_label, "gpu");
    ck_assert_str_eq(cfg->resource, "nvidia.com/gpu");
    ck_assert_int_eq(cfg->defaults.idle_ms, 3600000);
    ck_assert_uint_eq(cfg->defaults.threshold_milli, 3000);
    ck_assert_uint_eq(cfg->nrules, 2);
    p = idle_config_rule(cfg, "ml/notebooks", "team-a");
    ck_assert_ptr_eq(p, &cfg->rules[1].policy);
    ck_assert_int_eq(p->idle_ms, 1800000);
    ck_assert_uint_eq(p->threshold_milli, 500);
    ck_assert_int_eq(idle_policy_warn_ms(p), 300000);
    p = idle_config_rule(cfg, "ml/other", "team-a");
    ck_assert_ptr_eq(p, &cfg->rules[0].policy);
    ck_assert_uint_eq(p->threshold_milli, 3000); /* the section's default */
    ck_assert_ptr_null(idle_config_rule(cfg, "ml/other", "team-b"));
    ck_assert_int_eq(promq_idle_query(cfg, q, sizeof(q), &msg), ERR_OK);
    ck_assert_str_eq(q, "max by (exported_namespace, exported_pod, gpu) "
                        "(max_over_time(DCGM_FI_DEV_GPU_UTIL{exported_pod!=\"\"}[60s]))");
    ck_assert_int_eq(promq_idle_query(cfg, q, 20, &msg), ERR_OVERFLOW);
    idle_config_free(cfg);
}
END_TEST

START_TEST(config_errors_name_the_field)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"interval: 1m\n", "prometheus.url: required"},
        {"", "prometheus.url: required"},
        {"prometheus: {url: ftp://x}\n", "prometheus.url: ftp://x: must start with http"},
        {"prometheus: {url: \"http://x/?q=1\"}\n", "no spaces, query or fragment"},
        {"prometheus: {url: http://x, tls: true}\n", "prometheus.tls: unknown field"},
        {"prometheus: {url: http://x, timeout: 10}\n", "prometheus.timeout: must be a duration"},
        {"prometheus: {url: http://x, maxResponseBytes: 10}\n", "prometheus.maxResponseBytes"},
        {"prometheus: {url: http://x}\ninterval: 1s\n", "interval: 1s: must be at least 10s"},
        {"prometheus: {url: http://x}\ninterval: 2m\nwindow: 1m\n",
         "window: must be at least interval"},
        {"prometheus: {url: http://x}\nmetric: 'up or vector(1)'\n",
         "metric: up or vector(1): not a Prometheus metric name"},
        {"prometheus: {url: http://x}\npodLabel: 'pod\"}'\n", "not a Prometheus label name"},
        {"prometheus: {url: http://x}\npodLabel: namespace\n", "must differ"},
        {"prometheus: {url: http://x}\nthreshold: 2.5\n", "threshold: must be a percentage"},
        {"prometheus: {url: http://x}\nthreshold: 101\n", "threshold: must be a percentage"},
        {"prometheus: {url: http://x}\npolicies: [{idleFor: 1h}]\n",
         "policies[0]: exactly one of clusterQueue and localQueue"},
        {"prometheus: {url: http://x}\npolicies: [{clusterQueue: a}, {localQueue: b}]\n",
         "policies[1].localQueue: b: must be namespace/name"},
        {"prometheus: {url: http://x}\npolicies: [{clusterQueue: a}, {clusterQueue: a}]\n",
         "the same queue as policies[0]"},
        {"prometheus: {url: http://x}\npolicies: [{clusterQueue: a, idleFor: 1h, warnBefore: "
         "1h}]\n",
         "policies[0].warnBefore: must be shorter than idleFor"},
        {"prometheus: {url: http://x}\npolicies: [{clusterQueue: a, idle: 1h}]\n",
         "policies[0].idle: unknown field"},
        {"prometheus: {url: http://x}\nidleFor: 10s\n", "idleFor: 10s: must be at least 1m"},
        {"prometheus: {url: http://x}\n---\nb: 1\n", "one YAML document only"},
        {"prometheus: [\n", "line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        idle_config_t *cfg = NULL;
        err_msg_t msg = {{0}};
        err_t rc = idle_config_parse(cases[i].text, strlen(cases[i].text), &cfg, &msg);
        ck_assert_msg(rc != ERR_OK, "accepted: %s", cases[i].text);
        ck_assert_ptr_null(cfg);
        ck_assert_msg(strstr(msg.text, cases[i].want) != NULL, "%s: got '%s', want '%s'",
                      cases[i].text, msg.text, cases[i].want);
    }
}
END_TEST

/* ---- the answer --------------------------------------------------------------------------- */

START_TEST(values)
{
    static const struct {
        const char *in;
        uint32_t milli;
    } ok[] = {{"0", 0},        {"37", 37000},       {"12.5", 12500},
              {"0.0001", 1},   {"0.001", 1},        {"0.0010", 1},
              {"100", 100000}, {"99.9999", 100000}, {"5000000000", UINT32_MAX}};
    static const char *const bad[] = {"",   "NaN", "+Inf", "-Inf", "-1", "1e-05", "1.5e2",
                                      ".5", "1.",  "0x10", " 1",   "1 ", "1\x00"};
    uint32_t v;

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_msg(promq_value_milli(ok[i].in, strlen(ok[i].in), &v) == ERR_OK, "%s", ok[i].in);
        ck_assert_uint_eq(v, ok[i].milli);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(promq_value_milli(bad[i], strlen(bad[i]) + (i == 12), &v) == ERR_PARSE, "%s",
                      bad[i]);
}
END_TEST

typedef struct collect_s {
    char text[4096];
    size_t n;
} collect_t;

static void on_collect(const promq_series_t *s, void *ud)
{
    collect_t *c = ud;
    size_t len = strlen(c->text);

    snprintf(c->text + len, sizeof(c->text) - len, "%s/%s=%s%u;", s->ns ? s->ns : "-",
             s->pod ? s->pod : "-", s->valid ? "" : "bad:", s->milli);
    c->n++;
}

static err_t parse(const char *json, collect_t *c, err_msg_t *msg)
{
    json_t *body = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    err_t rc;

    memset(c, 0, sizeof(*c));
    ck_assert_msg(body != NULL, "%s", json);
    rc = promq_parse(body, "namespace", "pod", on_collect, c, NULL, msg);
    json_decref(body);
    return rc;
}

START_TEST(answers)
{
    collect_t c;
    err_msg_t msg = {{0}};

    ck_assert_int_eq(
        parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
              "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"p-0\",\"gpu\":\"0\"},"
              "\"value\":[1764680000.5,\"0\"]},"
              "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"p-0\",\"gpu\":\"1\"},"
              "\"value\":[1764680000.5,\"12.5\"]},"
              "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"p-1\"},\"value\":[1,\"NaN\"]},"
              "{\"metric\":{\"namespace\":\"ns\",\"pod\":7},\"value\":[1,\"3\"]},"
              "{\"metric\":{\"pod\":\"x\"},\"value\":[1,5]}]}}",
              &c, &msg),
        ERR_OK);
    ck_assert_str_eq(c.text, "ns/p-0=0;ns/p-0=12500;ns/p-1=bad:0;ns/-=3000;-/x=bad:0;");
    ck_assert_int_eq(parse("{\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                           "\"result\":[]}}",
                           &c, &msg),
                     ERR_OK);
    ck_assert_uint_eq(c.n, 0);
}
END_TEST

START_TEST(hostile_answers)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"[]", "answer: not a JSON object"},
        {"\"success\"", "answer: not a JSON object"},
        {"{}", "status: missing"},
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\\u0007\\n at "
         "char 4\"}",
         "status error: bad_data: parse error?? at char 4"},
        {"{\"status\":\"success\"}", "data: missing"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
         "data.resultType: matrix: want vector"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":{}}}",
         "data.result: missing or not a list"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[1]}}",
         "data.result[0].metric"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":"
         "{},\"value\":[1]}]}}",
         "data.result[0].value: want [time, \"value\"]"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[{\"metric\":"
         "{},\"value\":[\"1\",\"0\"]}]}}",
         "data.result[0].value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        collect_t c;
        err_msg_t msg = {{0}};
        ck_assert_msg(parse(cases[i].json, &c, &msg) == ERR_PARSE, "accepted %s", cases[i].json);
        ck_assert_msg(strstr(msg.text, cases[i].want) != NULL, "%s: got '%s'", cases[i].json,
                      msg.text);
    }
    /* A label value longer than any pod name, or with a NUL inside: not a pod. */
    {
        char json[2048], big[400];
        collect_t c;
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        snprintf(json, sizeof(json),
                 "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
                 "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"%s\"},\"value\":[1,\"0\"]},"
                 "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"a\\u0000b\"},\"value\":[1,\"0\"]}]}}",
                 big);
        ck_assert_int_eq(parse(json, &c, NULL), ERR_OK);
        ck_assert_str_eq(c.text, "ns/-=0;ns/-=0;");
    }
}
END_TEST

/* ---- the transport on loopback ------------------------------------------------------------ */

typedef struct srv_s {
    testsrv_t srv;
    int status;
    const char *body;
    char target[2048];
    char auth[256];
} srv_t;

static void on_request(testsrv_t *t, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    srv_t *s = t->data;

    snprintf(s->target, sizeof(s->target), "%s", req->target);
    if (!testsrv_header(req, "Authorization", s->auth, sizeof(s->auth)))
        s->auth[0] = '\0';
    testsrv_reply(conn, s->status, "Content-Type: application/json\r\n", s->body);
}

typedef struct result_s {
    int done;
    err_t err;
    char why[512];
    collect_t c;
} result_t;

static void on_result(promq_t *q, err_t err, const json_t *body, const char *why, void *ud)
{
    result_t *r = ud;

    (void)q;
    r->done++;
    r->err = err;
    snprintf(r->why, sizeof(r->why), "%s", why);
    memset(&r->c, 0, sizeof(r->c));
    if (err == ERR_OK)
        r->err = promq_parse(body, "namespace", "pod", on_collect, &r->c, NULL, NULL);
}

static void closed(void *data)
{
    (*(int *)data)++;
}

/* Query the server answering `status` with `body` through a client of `max_bytes`. */
static result_t query(int status, const char *body, size_t max_bytes, srv_t *s)
{
    uv_loop_t loop;
    idle_config_t *cfg = NULL;
    promq_t *q = NULL;
    result_t r = {0};
    char text[256], path[] = "/tmp/sluice-idle-token-XXXXXX";
    err_msg_t msg = {{0}};
    int fd = mkstemp(path), nclosed = 0;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "s3cret\n", 7), 7);
    close(fd);
    ck_assert_int_eq(uv_loop_init(&loop), 0);
    memset(s, 0, sizeof(*s));
    s->status = status;
    s->body = body;
    testsrv_start(&s->srv, &loop, on_request, s);
    snprintf(text, sizeof(text),
             "{\"prometheus\":{\"url\":\"http://127.0.0.1:%d/\",\"bearerTokenFile\":\"%s\","
             "\"maxResponseBytes\":%zu}}",
             s->srv.port, path, max_bytes);
    ck_assert_msg(idle_config_parse(text, strlen(text), &cfg, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(promq_new(&loop, cfg, &q, &msg), ERR_OK);
    ck_assert_int_eq(promq_query(q, "up{a=\"b c\"}", on_result, &r, &msg), ERR_OK);
    ck_assert_int_eq(promq_query(q, "up", on_result, &r, &msg), ERR_CONFLICT);
    while (r.done == 0)
        uv_run(&loop, UV_RUN_ONCE);
    promq_close(q, closed, &nclosed);
    testsrv_stop(&s->srv);
    uv_run(&loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(nclosed, 1);
    ck_assert_int_eq(uv_loop_close(&loop), 0);
    ck_assert_int_eq(r.done, 1);
    idle_config_free(cfg);
    unlink(path);
    return r;
}

START_TEST(transport)
{
    srv_t s;
    result_t r;
    char big[70000];

    r = query(200,
              "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
              "{\"metric\":{\"namespace\":\"ns\",\"pod\":\"p\"},\"value\":[1,\"4\"]}]}}",
              4096, &s);
    ck_assert_int_eq(r.err, ERR_OK);
    ck_assert_str_eq(r.c.text, "ns/p=4000;");
    ck_assert_str_eq(s.target, "/api/v1/query?query=up%7Ba%3D%22b%20c%22%7D");
    ck_assert_str_eq(s.auth, "Bearer s3cret");

    /* Prometheus' own error answer is quoted. */
    r = query(400,
              "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"1:3: parse error\"}",
              4096, &s);
    ck_assert_int_eq(r.err, ERR_INVALID);
    ck_assert_msg(strstr(r.why, "1:3: parse error") != NULL, "%s", r.why);

    /* Not JSON, with a 200. */
    r = query(200, "<html>proxy login</html>", 4096, &s);
    ck_assert_int_eq(r.err, ERR_PARSE);

    /* Larger than maxResponseBytes: the transfer is cut, nothing is decoded. */
    memset(big, ' ', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    memcpy(big, "{\"status\":\"success\"", 19);
    big[sizeof(big) - 2] = '}';
    r = query(200, big, 65536, &s);
    ck_assert_int_eq(r.err, ERR_OVERFLOW);

    /* Nobody listening. */
    {
        uv_loop_t loop;
        idle_config_t *cfg = NULL;
        promq_t *q = NULL;
        result_t rr = {0};
        err_msg_t msg = {{0}};
        int nclosed = 0;
        static const char text[] = "{\"prometheus\":{\"url\":\"http://127.0.0.1:1\"}}";

        ck_assert_int_eq(uv_loop_init(&loop), 0);
        ck_assert_int_eq(idle_config_parse(text, strlen(text), &cfg, &msg), ERR_OK);
        ck_assert_int_eq(promq_new(&loop, cfg, &q, &msg), ERR_OK);
        ck_assert_int_eq(promq_query(q, "up", on_result, &rr, &msg), ERR_OK);
        while (rr.done == 0)
            uv_run(&loop, UV_RUN_ONCE);
        ck_assert_int_eq(rr.err, ERR_IO);
        /* Closing with a query in flight: its callback fires (canceled), then the close. */
        ck_assert_int_eq(promq_query(q, "up", on_result, &rr, &msg), ERR_OK);
        promq_close(q, closed, &nclosed);
        uv_run(&loop, UV_RUN_DEFAULT);
        ck_assert_int_eq(rr.done, 2);
        ck_assert_int_eq(nclosed, 1);
        ck_assert_int_eq(uv_loop_close(&loop), 0);
        idle_config_free(cfg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ctrl_idle");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, step_warns_then_deactivates);
    tcase_add_test(tc, step_busy_or_unknown_restarts_the_clock);
    tcase_add_test(tc, step_warns_first_even_without_lead);
    tcase_add_test(tc, step_late_warning_waits_its_lead);
    tcase_add_test(tc, samples_join_pods);
    tcase_add_test(tc, percentages);
    tcase_add_test(tc, queue_annotations);
    tcase_add_test(tc, config_section);
    tcase_add_test(tc, config_errors_name_the_field);
    tcase_add_test(tc, values);
    tcase_add_test(tc, answers);
    tcase_add_test(tc, hostile_answers);
    tcase_add_test(tc, transport);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    curl_global_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
