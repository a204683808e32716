/* job-runner -- test stand-in for the job controller, scheduler and kubelet of the integration
 * environment (kube-apiserver 1.20 alone runs no pods). It polls the Jobs of one resource
 * (default the test CRD batch.test.sluice.dev/v1 jobs) and moves their status like a cluster with
 * room for every pod would:
 *   unsuspended, not started     -> status.startTime=now, active=ready=parallelism
 *   started, runtime elapsed     -> active=ready=0, succeeded=completions (or parallelism),
 *                                   completionTime, condition Complete=True
 *                                   (or failed=1 + Failed=True when annotation outcome=Failed)
 *   suspended while running      -> active=ready=0, startTime removed, condition Suspended=True
 * Runtime: annotation test.sluice.dev/runtime-seconds (non-negative integer, default 0).
 * Readiness: annotation test.sluice.dev/ready: "false" keeps the started pods not ready
 * (active=parallelism, ready=0: a Job stuck before PodsReady); changing it on a running Job
 * moves status.ready (pods lost and recovered).
 * Server: SLUICE_KUBE_SERVER, SLUICE_KUBE_TOKEN, SLUICE_KUBE_CA (the env file written by
 * test/kube-env/up; a kubectl-proxy URL with empty token and CA works for external clusters).
 * Usage: job-runner [--once] [--interval-ms N] [--resource GROUP/VERSION/PLURAL] [-n NAMESPACE]
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"

#define RUNTIME_ANNOTATION "test.sluice.dev/runtime-seconds"
#define OUTCOME_ANNOTATION "test.sluice.dev/outcome"
#define READY_ANNOTATION   "test.sluice.dev/ready"

typedef struct runner_s {
    CURL *curl;
    const char *server;
    const char *token;
    const char *ca;
    char base[1024];      /* <server>/apis/<group>/<version>[/namespaces/<ns>]/<plural> */
    char items_base[512]; /* same without the namespace part, for per-object URLs */
    const char *group_version;
    const char *plural;
} runner_t;

typedef struct buf_s {
    char *data;
    size_t len;
} buf_t;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static size_t on_body(char *ptr, size_t size, size_t n, void *userdata)
{
    buf_t *b = userdata;
    size_t add = size * n;
    char *p = realloc(b->data, b->len + add + 1);
    if (p == NULL)
        return 0;
    memcpy(p + b->len, ptr, add);
    b->len += add;
    p[b->len] = '\0';
    b->data = p;
    return add;
}

/* One request; the body of a 2xx answer is parsed into *out (when out != NULL). */
static err_t runner_request(runner_t *r, const char *method, const char *url, const char *body,
                            json_t **out, err_msg_t *msg)
{
    buf_t resp = {NULL, 0};
    struct curl_slist *hdrs = NULL;
    char auth[600];
    long status = 0;
    err_t rc = ERR_OK;

    curl_easy_reset(r->curl);
    curl_easy_setopt(r->curl, CURLOPT_URL, url);
    curl_easy_setopt(r->curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(r->curl, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(r->curl, CURLOPT_NOSIGNAL, 1L);
    if (r->ca != NULL && r->ca[0] != '\0')
        curl_easy_setopt(r->curl, CURLOPT_CAINFO, r->ca);
    if (r->token != NULL && r->token[0] != '\0') {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->token);
        hdrs = curl_slist_append(hdrs, auth);
    }
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    if (body != NULL) {
        hdrs = curl_slist_append(hdrs, "Content-Type: application/merge-patch+json");
        curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, hdrs);

    CURLcode cc = curl_easy_perform(r->curl);
    if (cc != CURLE_OK) {
        rc = err_set(msg, ERR_IO, "%s %s: %s", method, url, curl_easy_strerror(cc));
        goto out;
    }
    curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status > 299) {
        rc = err_set(msg,
                     status == 404   ? ERR_NOT_FOUND
                     : status == 409 ? ERR_CONFLICT
                                     : ERR_HTTP,
                     "%s %s: HTTP %ld: %.300s", method, url, status,
                     resp.data != NULL ? resp.data : "");
        goto out;
    }
    if (out != NULL) {
        json_error_t je;
        *out = json_loadb(resp.data != NULL ? resp.data : "", resp.len, 0, &je);
        if (*out == NULL)
            rc = err_set(msg, ERR_PARSE, "%s %s: bad JSON: %s", method, url, je.text);
    }
out:
    curl_slist_free_all(hdrs);
    free(resp.data);
    return rc;
}

static void time_format(time_t t, char out[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static err_t time_parse(const char *s, time_t *out, err_msg_t *msg)
{
    struct tm tm;
    int used = -1;
    memset(&tm, 0, sizeof(tm));
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec, &used) != 6 ||
        used < 0 || s[used] != '\0')
        return err_set(msg, ERR_PARSE, "time %s: not RFC 3339 UTC", s);
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    *out = timegm(&tm);
    return ERR_OK;
}

static long json_int_or(json_t *obj, const char *key, long dflt)
{
    json_t *v = json_object_get(obj, key);
    return json_is_integer(v) ? (long)json_integer_value(v) : dflt;
}

/* The condition of `type` with status "True" exists in status.conditions. */
static int has_condition(json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        if (json_is_string(json_object_get(c, "type")) &&
            strcmp(json_string_value(json_object_get(c, "type")), type) == 0 &&
            json_is_string(json_object_get(c, "status")) &&
            strcmp(json_string_value(json_object_get(c, "status")), "True") == 0)
            return 1;
    }
    return 0;
}

static err_t runtime_of(json_t *meta, const char *where, long *out, err_msg_t *msg)
{
    json_t *v = json_object_get(json_object_get(meta, "annotations"), RUNTIME_ANNOTATION);
    *out = 0;
    if (v == NULL)
        return ERR_OK;
    const char *s = json_string_value(v);
    char *end = NULL;
    errno = 0;
    long n = s != NULL ? strtol(s, &end, 10) : -1;
    if (s == NULL || end == s || *end != '\0' || n < 0 || errno != 0)
        return err_set(msg, ERR_INVALID, "%s: metadata.annotations[%s]: want seconds, got %s",
                       where, RUNTIME_ANNOTATION, s != NULL ? s : "(not a string)");
    *out = n;
    return ERR_OK;
}

/* The status merge patch this Job needs now, or NULL when it needs none. */
static json_t *job_next_status(json_t *job, time_t now, const char *where, err_msg_t *msg)
{
    json_t *meta = json_object_get(job, "metadata");
    json_t *spec = json_object_get(job, "spec");
    json_t *status = json_object_get(job, "status");
    char ts[32];
    int suspended = json_is_true(json_object_get(spec, "suspend"));
    json_t *start = json_object_get(status, "startTime");
    long parallelism = json_int_or(spec, "parallelism", 1);
    long completions = json_int_or(spec, "completions", parallelism);

    if (has_condition(status, "Complete") || has_condition(status, "Failed"))
        return NULL;
    time_format(now, ts);
    if (suspended) {
        if (start == NULL || json_is_null(start))
            return NULL;
        return json_pack("{s:{s:n,s:i,s:i,s:[{s:s,s:s,s:s,s:s,s:s,s:s}]}}", "status", "startTime",
                         "active", 0, "ready", 0, "conditions", "type", "Suspended", "status",
                         "True", "reason", "JobSuspended", "message", "Job suspended",
                         "lastProbeTime", ts, "lastTransitionTime", ts);
    }
    json_t *ready_ann = json_object_get(json_object_get(meta, "annotations"), READY_ANNOTATION);
    long ready = json_is_string(ready_ann) && strcmp(json_string_value(ready_ann), "false") == 0
                     ? 0
                     : parallelism;
    if (start == NULL || json_is_null(start))
        return json_pack("{s:{s:s,s:i,s:i,s:[]}}", "status", "startTime", ts, "active",
                         (json_int_t)parallelism, "ready", (json_int_t)ready, "conditions");
    if (json_int_or(status, "ready", 0) != ready)
        return json_pack("{s:{s:i}}", "status", "ready", (json_int_t)ready);

    time_t started = 0;
    long runtime = 0;
    if (!json_is_string(start)) {
        err_set(msg, ERR_PARSE, "%s: status.startTime: not a string", where);
        return NULL;
    }
    if (time_parse(json_string_value(start), &started, msg) != ERR_OK) {
        err_prefix(msg, ERR_PARSE, "%s: status.startTime: ", where);
        return NULL;
    }
    if (runtime_of(meta, where, &runtime, msg) != ERR_OK || now - started < runtime)
        return NULL;
    json_t *outcome = json_object_get(json_object_get(meta, "annotations"), OUTCOME_ANNOTATION);
    if (json_is_string(outcome) && strcmp(json_string_value(outcome), "Failed") == 0)
        return json_pack("{s:{s:i,s:i,s:i,s:[{s:s,s:s,s:s,s:s,s:s,s:s}]}}", "status", "active", 0,
                         "ready", 0, "failed", 1, "conditions", "type", "Failed", "status", "True",
                         "reason", "BackoffLimitExceeded", "message", "test job failed",
                         "lastProbeTime", ts, "lastTransitionTime", ts);
    return json_pack("{s:{s:i,s:i,s:i,s:s,s:[{s:s,s:s,s:s,s:s}]}}", "status", "active", 0, "ready",
                     0, "succeeded", (json_int_t)completions, "completionTime", ts, "conditions",
                     "type", "Complete", "status", "True", "lastProbeTime", ts,
                     "lastTransitionTime", ts);
}

/* One pass over every Job: list, then patch the status of those that move. */
static err_t runner_pass(runner_t *r, int *patched, err_msg_t *msg)
{
    json_t *list = NULL;
    size_t i;
    json_t *job;
    err_t rc = runner_request(r, "GET", r->base, NULL, &list, msg);
    *patched = 0;
    if (rc != ERR_OK)
        return rc;
    json_array_foreach(json_object_get(list, "items"), i, job)
    {
        json_t *meta = json_object_get(job, "metadata");
        const char *ns = json_string_value(json_object_get(meta, "namespace"));
        const char *name = json_string_value(json_object_get(meta, "name"));
        char where[300], url[2048];
        err_msg_t jmsg = {{0}};
        if (ns == NULL || name == NULL)
            continue;
        snprintf(where, sizeof(where), "%s/%s", ns, name);
        json_t *patch = job_next_status(job, time(NULL), where, &jmsg);
        if (patch == NULL) {
            if (jmsg.text[0] != '\0')
                fprintf(stderr, "job-runner: %s\n", jmsg.text);
            continue;
        }
        char *body = json_dumps(patch, JSON_COMPACT);
        json_decref(patch);
        if (body == NULL) {
            rc = err_set(msg, ERR_NOMEM, "%s: status patch", where);
            break;
        }
        snprintf(url, sizeof(url), "%s/namespaces/%s/%s/%s/status", r->items_base, ns, r->plural,
                 name);
        err_t prc = runner_request(r, "PATCH", url, body, NULL, &jmsg);
        if (prc == ERR_OK) {
            printf("job-runner: %s: %s\n", where, body);
            fflush(stdout);
            (*patched)++;
        } else if (prc != ERR_NOT_FOUND) {
            fprintf(stderr, "job-runner: %s\n", jmsg.text);
        }
        free(body);
    }
    json_decref(list);
    return rc;
}

static void usage(void)
{
    fprintf(stderr, "usage: job-runner [--once] [--interval-ms N] "
                    "[--resource GROUP/VERSION/PLURAL] [-n NAMESPACE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    runner_t r;
    int once = 0;
    long interval_ms = 200;
    const char *resource = "batch.test.sluice.dev/v1/jobs";
    const char *ns = NULL;
    char gv[256];
    err_msg_t msg = {{0}};

    memset(&r, 0, sizeof(r));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--once") == 0)
            once = 1;
        else if (strcmp(argv[i], "--interval-ms") == 0 && i + 1 < argc)
            interval_ms = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--resource") == 0 && i + 1 < argc)
            resource = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            ns = argv[++i];
        else
            usage();
    }
    const char *slash = strrchr(resource, '/');
    if (slash == NULL || slash == resource || (size_t)(slash - resource) >= sizeof(gv) ||
        interval_ms <= 0)
        usage();
    memcpy(gv, resource, (size_t)(slash - resource));
    gv[slash - resource] = '\0';
    r.plural = slash + 1;
    r.server = getenv("SLUICE_KUBE_SERVER");
    r.token = getenv("SLUICE_KUBE_TOKEN");
    r.ca = getenv("SLUICE_KUBE_CA");
    if (r.server == NULL || r.server[0] == '\0') {
        fprintf(stderr, "job-runner: SLUICE_KUBE_SERVER is not set (source the env file of "
                        "test/kube-env/up)\n");
        return 2;
    }
    /* core group "v1" lives under /api, every other group under /apis */
    const char *prefix = strchr(gv, '/') != NULL ? "apis" : "api";
    int n1 = snprintf(r.items_base, sizeof(r.items_base), "%s/%s/%s", r.server, prefix, gv);
    int n2 = ns != NULL ? snprintf(r.base, sizeof(r.base), "%s/namespaces/%s/%s", r.items_base, ns,
                                   r.plural)
                        : snprintf(r.base, sizeof(r.base), "%s/%s", r.items_base, r.plural);
    if (n1 < 0 || (size_t)n1 >= sizeof(r.items_base) || n2 < 0 || (size_t)n2 >= sizeof(r.base)) {
        fprintf(stderr, "job-runner: server URL or resource too long\n");
        return 2;
    }

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
        return 1;
    r.curl = curl_easy_init();
    if (r.curl == NULL)
        return 1;
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    int status = 0;
    do {
        int patched = 0;
        if (runner_pass(&r, &patched, &msg) != ERR_OK) {
            fprintf(stderr, "job-runner: %s\n", msg.text);
            status = 1;
        } else {
            status = 0;
        }
        if (once || stop_requested)
            break;
        struct timespec ts = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    } while (!stop_requested);

    curl_easy_cleanup(r.curl);
    curl_global_cleanup();
    return once ? status : 0;
}
