/* test_ctrl_oom -- an operator reconcile pass with each of its allocations failing in turn: the
 * pass fails cleanly or goes on, never admits past the quota, leaks nothing (ASan), and once
 * memory is back the cluster ends exactly as after a pass that failed nothing. */
/* SPDX-License-Identifier: Apache-2.0 */
#define OOM_WRAP_STRDUP
#include "ctrl/ctrl.h"
#include "jobs/job_workload.h"
#include "kube/client.h"
#include "util/alloc.h"
#include "util/util.h"

#include "fakeapi.h"
#include "fakeapi_int.h"
#include "oom_wrap.h"

#include <check.h>
#include <curl/curl.h>
#include <execinfo.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/*
 * The in-memory API server runs on a thread of its own with its own loop, so that only the
 * controller's allocations fail: test/oom_wrap.h counts per thread, and the server thread never
 * arms it. Everything allocated on the controller's thread is counted and failed: sluice's code,
 * and jansson, libuv and libcurl through lib/util/alloc.h (main()).
 *
 * The pass: three suspended 1-cpu Jobs in LocalQueue lq of ClusterQueue cq with 2 cpus exist
 * when the controller starts as leader. It lists and watches everything, creates three
 * Workloads, admits two (quota reserved, Admitted, Jobs unsuspended with the flavor's node
 * selector) and explains why the third waits. With allocation n failing:
 *
 *   ctrl_new / ctrl_start -> ERR_NOMEM: closed, then started again with memory back;
 *   or the failure lands inside the running pass -> the pass goes on (a failed write or
 *   reconcile is retried with backoff, a failed watch relists).
 *
 * After every request the server checks that the admitted Workloads fit the quota (the state
 * only changes by requests, so every state is seen). The end state -- each Job's suspension and
 * Workload conditions, names and pod-set assignments -- must equal the failure-free one.
 */

#define QUOTA_CPU 2

/* ctest fails every 47th allocation (about 240 passes, a minute or two: jansson's and libcurl's
 * allocations are counted through lib/util/alloc.h, ~11,000 in a pass); SLUICE_OOM_STRIDE=7 or 1
 * fails more (docs/reliability.md). */
#define DEFAULT_STRIDE 47

/* How long a pass may take to settle: 20 s, or SLUICE_OOM_SETTLE_MS for long runs at a low
 * priority on a loaded machine (a starved process is not a failure to settle). */
static uint64_t settle_ms = 20000;

typedef struct server_s {
    uv_loop_t loop;
    uv_async_t wake;
    uv_thread_t thread;
    uv_mutex_t mu;
    uv_cond_t cv;
    fakeapi_t *fa;
    void (*call)(struct server_s *s, void *arg); /* run on the server thread by on_wake */
    void *arg;
    bool done, stop;
    int over_quota; /* requests that found more admitted than the quota */
    int max_admitted;
} server_t;

/* Workloads with quota reserved (status.admission), each a 1-cpu pod set here. */
static int admitted_count(fakeapi_t *fa)
{
    fa_type_t *t = fa__type_named(fa, "workloads");
    const char *key;
    json_t *w;
    int n = 0;

    json_object_foreach(t->objs, key, w)
    {
        if (json_object_get(json_object_get(w, "status"), "admission") != NULL)
            n++;
    }
    return n;
}

/* Before every request: the state the previous ones left. */
static void on_request(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault, void *data)
{
    server_t *s = data;
    int n = admitted_count(fa);

    (void)req;
    (void)fault;
    if (n > s->max_admitted)
        s->max_admitted = n;
    if (n > QUOTA_CPU)
        s->over_quota++;
}

static void on_wake(uv_async_t *a)
{
    server_t *s = container_of(a, server_t, wake);

    uv_mutex_lock(&s->mu);
    if (s->call != NULL) {
        s->call(s, s->arg);
        s->call = NULL;
        s->done = true;
        uv_cond_signal(&s->cv);
    }
    if (s->stop) {
        fakeapi_stop(s->fa);
        uv_close((uv_handle_t *)&s->wake, NULL);
    }
    uv_mutex_unlock(&s->mu);
}

static void server_main(void *arg)
{
    server_t *s = arg;

    uv_run(&s->loop, UV_RUN_DEFAULT);
}

/* Run fn(s, arg) on the server thread and wait for it. */
static void server_call(server_t *s, void (*fn)(server_t *, void *), void *arg)
{
    uv_mutex_lock(&s->mu);
    s->call = fn;
    s->arg = arg;
    s->done = false;
    uv_async_send(&s->wake);
    while (!s->done)
        uv_cond_wait(&s->cv, &s->mu);
    uv_mutex_unlock(&s->mu);
}

static void put(server_t *s, const char *json)
{
    json_error_t e;
    json_t *obj = json_loads(json, 0, &e);
    err_msg_t msg = {{0}};

    ck_assert_msg(obj != NULL, "%s: %s", e.text, json);
    ck_assert_msg(fakeapi_put_object(s->fa, obj, NULL, &msg) == ERR_OK, "%s", msg.text);
    json_decref(obj);
}

/* Start the server thread with the queues and three suspended Jobs (a, b, c) stored. */
static void server_start(server_t *s)
{
    char cq[512], job[1024];

    memset(s, 0, sizeof(*s));
    ck_assert_int_eq(uv_loop_init(&s->loop), 0);
    ck_assert_int_eq(uv_async_init(&s->loop, &s->wake, on_wake), 0);
    ck_assert_int_eq(uv_mutex_init(&s->mu), 0);
    ck_assert_int_eq(uv_cond_init(&s->cv), 0);
    ck_assert_int_eq(fakeapi_start(&s->loop, &s->fa), ERR_OK);
    ck_assert_int_eq(fakeapi_register_sluice(s->fa), ERR_OK);
    fakeapi_set_now(s->fa, 1767225600); /* 2026-01-01: every timestamp alike, FIFO by name */
    put(s, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    put(s, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
           "{\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"}}}");
    snprintf(cq, sizeof(cq),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
             "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
             "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
             "\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]}]}}",
             QUOTA_CPU);
    put(s, cq);
    put(s, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
           "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    for (char n = 'a'; n <= 'c'; n++) {
        snprintf(job, sizeof(job),
                 "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%c\","
                 "\"namespace\":\"ns\",\"uid\":\"uid-%c\",\"labels\":{"
                 "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{\"suspend\":true,"
                 "\"parallelism\":1,\"completions\":1,\"template\":{\"spec\":{"
                 "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}}",
                 n, n);
        put(s, job);
    }
    fakeapi_set_fault(s->fa, on_request, s);
    ck_assert_int_eq(uv_thread_create(&s->thread, server_main, s), 0);
}

static void do_stop(server_t *s, void *arg)
{
    (void)arg;
    s->stop = true;
}

static void server_stop(server_t *s)
{
    server_call(s, do_stop, NULL);
    ck_assert_int_eq(uv_thread_join(&s->thread), 0);
    ck_assert_int_eq(uv_loop_close(&s->loop), 0);
    uv_mutex_destroy(&s->mu);
    uv_cond_destroy(&s->cv);
}

/* ---- the end state ------------------------------------------------------------------------- */

typedef struct summary_s {
    char text[2048];   /* the state of the three Jobs without their names, sorted: compared */
    char detail[2048]; /* the same with names, for messages */
    bool settled;      /* two Jobs running, the third waiting */
} summary_t;

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *cond_of(json_t *w, const char *type, const char *field)
{
    json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(w, "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return json_string_value(json_object_get(c, field));
    }
    return "-";
}

/* The flavor assigned to the first pod set's cpu, or "-". */
static const char *assigned_flavor(json_t *w)
{
    json_t *adm = json_object_get(json_object_get(w, "status"), "admission");
    json_t *psa = json_array_get(json_object_get(adm, "podSetAssignments"), 0);
    const char *f = json_string_value(json_object_get(json_object_get(psa, "flavors"), "cpu"));
    return f != NULL ? f : "-";
}

/* Each Job: suspended, node selector; its Workload: QuotaReserved and Admitted status and
 * reason, the assigned flavor, finalizers. The three Jobs are alike (same queue, priority and
 * creation time), so which two hold the quota is not part of the state: a failure that delays
 * one Job's Workload lets a later one in first, as a slow API server would. */
static void summarize(server_t *s, void *arg)
{
    summary_t *out = arg;
    char lines[3][256], *sorted[3];
    size_t len = 0, dlen = 0;
    int running = 0, waiting = 0;

    out->text[0] = out->detail[0] = '\0';
    for (char n = 'a'; n <= 'c'; n++) {
        char jn[2] = {n, '\0'}, wn[JOB_WORKLOAD_NAME_MAX + 1], uid[8];
        json_t *j = fakeapi_get_object(s->fa, "jobs", "ns", jn), *w;
        json_t *spec = json_object_get(j, "spec");
        const char *pool = json_string_value(json_object_get(
            json_object_get(json_object_get(json_object_get(spec, "template"), "spec"),
                            "nodeSelector"),
            "pool"));
        bool susp = json_is_true(json_object_get(spec, "suspend"));
        const char *qr;

        snprintf(uid, sizeof(uid), "uid-%c", n);
        ck_assert_int_eq(job_workload_name(jn, uid, JOB_WORKLOAD_NAME_MAX, wn, sizeof(wn), NULL),
                         ERR_OK);
        w = fakeapi_get_object(s->fa, "workloads", "ns", wn);
        qr = cond_of(w, "QuotaReserved", "status");
        /* A waiting Workload's explanation (QuotaReserved=False) is written by the once-a-second
         * status pass: "not yet" and "False" are the same state here. */
        if (strcmp(qr, "True") != 0)
            qr = "not-reserved";
        snprintf(lines[n - 'a'], sizeof(lines[0]),
                 "suspend=%d pool=%s workload=%s QuotaReserved=%s Admitted=%s/%s flavor=%s "
                 "finalizers=%zu\n",
                 susp, pool ? pool : "-", w ? "yes" : "-", qr, cond_of(w, "Admitted", "status"),
                 cond_of(w, "Admitted", "reason"), assigned_flavor(w),
                 json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")));
        dlen += (size_t)snprintf(out->detail + dlen, sizeof(out->detail) - dlen, "job %s (%s): %s",
                                 jn, wn, lines[n - 'a']);
        sorted[n - 'a'] = lines[n - 'a'];
        if (!susp && strcmp(cond_of(w, "Admitted", "status"), "True") == 0)
            running++;
        if (susp && w != NULL && strcmp(qr, "not-reserved") == 0 &&
            json_array_size(json_object_get(json_object_get(w, "metadata"), "finalizers")) == 1)
            waiting++;
    }
    qsort(sorted, 3, sizeof(sorted[0]), cmp_line);
    for (int i = 0; i < 3; i++)
        len += (size_t)snprintf(out->text + len, sizeof(out->text) - len, "%s", sorted[i]);
    out->settled = running == QUOTA_CPU && waiting == 3 - QUOTA_CPU;
}

/* ---- the controller ------------------------------------------------------------------------ */

typedef struct op_s {
    uv_loop_t loop;
    uv_timer_t tick; /* wakes uv_run(UV_RUN_ONCE) so the conditions are polled */
    kube_config_t kcfg;
    kube_client_t *client;
    ctrl_config_t cfg;
    ctrl_t *ctrl;
    int closed;
    char why[256]; /* op_start()'s error */
} op_t;

/* SLUICE_OOM_CURL=only: libcurl's allocations alone are counted and failed (its own counter), the
 * rest allocate freely -- a pass makes a few hundred of them instead of ~10,000 in all. */
static bool curl_only;
static _Thread_local long curl_count, curl_fail_at;

static bool curl_fails(void)
{
    if (++curl_count != curl_fail_at)
        return false;
    if (oom_on_fail != NULL)
        oom_on_fail();
    return true;
}

static void *curl_malloc(size_t n)
{
    return curl_fails() ? NULL : __real_malloc(n);
}

static void *curl_calloc(size_t n, size_t size)
{
    return curl_fails() ? NULL : __real_calloc(n, size);
}

static void *curl_realloc(void *p, size_t n)
{
    return curl_fails() ? NULL : __real_realloc(p, n);
}

static char *curl_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = curl_malloc(n);

    return d == NULL ? NULL : memcpy(d, s, n);
}

/* Arm the failure of allocation n (0: none) of what this run counts; how many were made since. */
static void arm(long n)
{
    if (curl_only) {
        curl_count = 0;
        curl_fail_at = n;
    } else
        oom_fail_at(n);
}

static long armed_count(void)
{
    return curl_only ? curl_count : oom_count();
}

/* SLUICE_OOM_BACKTRACE=1: where the failing allocation was made (symbols need -rdynamic or
 * addr2line). */
static void print_backtrace(void)
{
    void *frames[32];
    int n = backtrace(frames, 32);

    backtrace_symbols_fd(frames, n, 2);
}

static void on_tick(uv_timer_t *t)
{
    (void)t;
}

static void quiet(void *data, int level, const char *text)
{
    (void)data;
    if (getenv("SLUICE_TEST_VERBOSE") != NULL)
        fprintf(stderr, "ctrl: %.3f %d %s\n", (double)uv_hrtime() / 1e9, level, text);
}

static void on_closed(void *data)
{
    ((op_t *)data)->closed++;
}

/* Close what was made of the controller and the client; the loop stays. */
static void op_close(op_t *op)
{
    int want = 0;

    if (op->ctrl != NULL) {
        ctrl_close(op->ctrl, on_closed, op);
        want++;
    }
    if (op->client != NULL) {
        kube_client_close(op->client, on_closed, op);
        want++;
    }
    while (op->closed < want)
        uv_run(&op->loop, UV_RUN_ONCE);
    op->ctrl = NULL;
    op->client = NULL;
    op->closed = 0;
    ctrl_config_fini(&op->cfg);
    kube_config_fini(&op->kcfg);
}

/* Create and start the client and the controller as leader; ERR_NOMEM leaves nothing open. */
static err_t op_start(op_t *op, const char *url)
{
    kube_client_opts_t co;
    err_msg_t msg = {{0}};
    err_t rc;

    kube_config_init(&op->kcfg);
    memset(&op->cfg, 0, sizeof(op->cfg));
    op->kcfg.server = strdup(url);
    if (op->kcfg.server == NULL)
        rc = ERR_NOMEM;
    else {
        memset(&co, 0, sizeof(co));
        co.http1 = true;
        co.qps_milli = 1000000;
        co.burst = 1000;
        rc = kube_client_new(&op->loop, &op->kcfg, &co, &op->client, &msg);
    }
    if (rc == ERR_OK && (rc = ctrl_config_init(&op->cfg, &msg)) == ERR_OK) {
        op->cfg.pods_ready.enabled = false;
        if (getenv("SLUICE_TEST_VERBOSE") != NULL)
            op->cfg.log_level = CTRL_LOG_DEBUG;
        rc = ctrl_config_finish(&op->cfg, &msg);
    }
    if (rc == ERR_OK)
        rc = ctrl_new(op->client, &op->cfg, quiet, NULL, &op->ctrl, &msg);
    if (rc == ERR_OK)
        rc = ctrl_start(op->ctrl, &msg);
    if (rc == ERR_OK) {
        ctrl_set_leader(op->ctrl, true);
        return ERR_OK;
    }
    /* no assertion here: Check allocates, and the failure may still be armed */
    snprintf(op->why, sizeof(op->why), "%s", msg.text);
    op_close(op);
    return rc;
}

/* Run the loop until the cluster settled and no write is in flight, at most `ms`. */
static bool op_settle(op_t *op, server_t *s, summary_t *sum, uint64_t ms)
{
    uint64_t end = uv_now(&op->loop) + ms;

    while (uv_now(&op->loop) < end) {
        uv_run(&op->loop, UV_RUN_ONCE);
        if (op->ctrl == NULL || !ctrl_synced(op->ctrl) || ctrl_inflight(op->ctrl) != 0)
            continue;
        server_call(s, summarize, sum);
        if (sum->settled) {
            if (getenv("SLUICE_TEST_VERBOSE") != NULL)
                fprintf(stderr, "settled: %.3f\n%s", (double)uv_hrtime() / 1e9, sum->detail);
            return true;
        }
    }
    server_call(s, summarize, sum);
    return false;
}

/* One pass with allocation `fail_at` failing (0: none). Returns how many allocations the
 * controller's thread made while armed; *out: the end state. */
static long pass(long fail_at, summary_t *out, int *over_quota, bool *restarted)
{
    server_t s;
    op_t op;
    long made;
    bool ok;
    err_t rc;
    char url[128];

    server_start(&s);
    memset(&op, 0, sizeof(op));
    ck_assert_int_eq(uv_loop_init(&op.loop), 0);
    uv_timer_init(&op.loop, &op.tick);
    uv_timer_start(&op.tick, on_tick, 5, 5);
    snprintf(url, sizeof(url), "%s", fakeapi_url(s.fa));
    *restarted = false;
    arm(fail_at);
    rc = op_start(&op, url);
    if (rc != ERR_OK) {
        made = armed_count();
        arm(0);
        ck_assert_msg(rc == ERR_NOMEM, "start: %s (%s)", err_str(rc), op.why);
        *restarted = true;
        ck_assert_int_eq(op_start(&op, url), ERR_OK);
        ok = op_settle(&op, &s, out, settle_ms);
    } else {
        /* armed through the pass: until it settled, whatever failed meanwhile */
        ok = op_settle(&op, &s, out, settle_ms);
        made = armed_count();
        arm(0);
    }
    ck_assert_msg(ok, "allocation %ld failed: the cluster did not settle in %llu ms:\n%s", fail_at,
                  (unsigned long long)settle_ms, out->detail);
    op_close(&op);
    uv_close((uv_handle_t *)&op.tick, NULL);
    uv_run(&op.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&op.loop), 0);
    server_stop(&s);
    *over_quota = s.over_quota;
    ck_assert_int_le(s.max_admitted, QUOTA_CPU);
    return made;
}

START_TEST(every_allocation_of_a_pass_fails_in_turn)
{
    summary_t want, got;
    long total, n, made, restarts = 0, inside = 0, stride = DEFAULT_STRIDE, first = 1;
    int over;
    bool restarted;
    const char *env = getenv("SLUICE_OOM_STRIDE");

    if (env != NULL && atol(env) > 0)
        stride = atol(env);
    env = getenv("SLUICE_OOM_SETTLE_MS");
    if (env != NULL && atol(env) > 0)
        settle_ms = (uint64_t)atol(env);
    env = getenv("SLUICE_OOM_FIRST"); /* to replay one failure: its number, and a large stride */
    if (env != NULL && atol(env) > 0)
        first = atol(env);
    total = pass(0, &want, &over, &restarted);
    ck_assert_int_eq(over, 0);
    ck_assert_msg(want.settled, "%s", want.text);
    ck_assert_int_gt(total, 100);
    for (n = first; n <= total; n += stride) {
        if (getenv("SLUICE_OOM_PROGRESS") != NULL)
            fprintf(stderr, "test_ctrl_oom: failing allocation %ld of %ld\n", n, total);
        made = pass(n, &got, &over, &restarted);
        ck_assert_msg(over == 0, "allocation %ld failed: %d requests saw more admitted than quota",
                      n, over);
        ck_assert_msg(strcmp(got.text, want.text) == 0,
                      "allocation %ld failed: the end state differs:\n%s\nwant:\n%s", n, got.detail,
                      want.detail);
        if (restarted)
            restarts++;
        else if (made >= n)
            inside++;
    }
    fprintf(stderr,
            "test_ctrl_oom: %ld allocations in a pass (every %ld-th failed): %ld failed the start "
            "(ERR_NOMEM, started again), %ld inside the running pass, all settled as without "
            "failure\n",
            total, stride, restarts, inside);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_oom");
    TCase *tc = tcase_create("oom");
    SRunner *sr;
    const char *env;
    int failed;

    /* The controller closes connections mid-answer when a failure ends a request: the API
     * server's write must see EPIPE, not kill the test. */
    signal(SIGPIPE, SIG_IGN);
    if (getenv("SLUICE_OOM_BACKTRACE") != NULL)
        oom_on_fail = print_backtrace;
    /* Every library through the one allocator (lib/util/alloc.h), as `sluice run` wires it:
     * jansson (routed before main()), libuv and libcurl; util_malloc is counted and failed by
     * test/oom_wrap.h like sluice's own allocations. SLUICE_OOM_CURL=only counts and fails
     * libcurl's alone (ctest ctrl_oom_curl; reset_transport() in lib/kube/client.c is why). */
    uv_replace_allocator(util_malloc, util_realloc, util_calloc, util_free);
    env = getenv("SLUICE_OOM_CURL");
    curl_only = env != NULL && strcmp(env, "only") == 0;
    if (curl_only)
        curl_global_init_mem(CURL_GLOBAL_DEFAULT, curl_malloc, free, curl_realloc, curl_strdup,
                             curl_calloc);
    else
        curl_global_init_mem(CURL_GLOBAL_DEFAULT, util_malloc, util_free, util_realloc,
                             util_alloc_strdup, util_calloc);
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, every_allocation_of_a_pass_fails_in_turn);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
