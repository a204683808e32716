/* cmd_run -- `sluice run`: the operator (configuration, client, controller, probes, signals). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "util/alloc.h"
#include "util/util.h"

#include "ctrl/config.h"
#include "ctrl/ctrl.h"
#include "ctrl/metricsauth.h"
#include "ctrl/visibility_ca.h"
#include "ctrl/visibility_server.h"
#include "ctrl/webhook.h"
#include "hook/cert.h"
#include "hook/limits.h"
#include "hook/server.h"
#include "hook/tls.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/lease.h"
#include "obs/logfmt.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

static const char usage_text[] =
    "usage: sluice run [options]\n"
    "\n"
    "Run the operator: watch the API server, admit jobs and Workloads under the quotas of their\n"
    "ClusterQueues (Kueue's rules, the engine of `sluice sim`), start and stop the jobs, keep\n"
    "queue statuses. The job kinds are the configuration's integrations.frameworks (default\n"
    "batch/job; also JobSet, the Kubeflow jobs, RayJob, RayCluster): see docs/operator.md and\n"
    "docs/integrations.md.\n"
    "\n"
    "options (flags override the configuration file; --name VALUE and --name=VALUE alike):\n"
    "  --config FILE                 Kueue Configuration file (config.kueue.x-k8s.io, YAML;\n"
    "                                \"-\" reads standard input)\n"
    "  --kubeconfig FILE             kubeconfig (default: $KUBECONFIG, in-cluster, "
    "~/.kube/config)\n"
    "  --context NAME                kubeconfig context (default: current-context)\n"
    "  --namespace NS                sluice's namespace: its Lease, webhook Service and Secret\n"
    "                                (default: the file's, else the pod's own in a cluster,\n"
    "                                else sluice-system)\n"
    "  --job-resource G/V/PLURAL     the Job resource to manage (default batch/v1/jobs)\n"
    "  --leader-elect[=true|false]   compete for the Lease; only the leader writes (default: the\n"
    "                                file's leaderElection.leaderElect, else false)\n"
    "  --identity NAME               leader-election identity (default: hostname_pid)\n"
    "  --webhook-port N              admission webhooks over TLS (default 9443; 0: off)\n"
    "  --cert-dir DIR                serve DIR/tls.crt + DIR/tls.key (reloaded on change) instead\n"
    "                                of self-managed certificates in a Secret\n"
    "  --webhook-cert-ip IP          extra IP address in the self-managed serving certificate\n"
    "  --health-probe-bind-address A /healthz, /readyz and /metrics, e.g. :8081 (\"0\": off)\n"
    "  --metrics-bind-address A      serve /metrics there over HTTPS instead, to bearer tokens\n"
    "                                that TokenReview and SubjectAccessReview allow, e.g. :8443\n"
    "                                (default: the file's metrics.bindAddress, else \"0\")\n"
    "  --visibility-bind-address A   serve Kueue's visibility API (visibility.kueue.x-k8s.io\n"
    "                                pending workloads) there over HTTPS to the API server's\n"
    "                                front proxy (API aggregation), e.g. :8082 (default: off)\n"
    "  --qps N                       client-side request rate (default 300)\n"
    "  --burst N                     client-side burst (default 500)\n"
    "  --pods-ready-timeout D        waitForPodsReady.timeout, e.g. 5m (default: the file's,\n"
    "                                else 30m); \"false\" or 0 turns waitForPodsReady off\n"
    "  --log-level LEVEL             error, info or debug (default info)\n"
    "  --log-format FORMAT           text (default) or json: one object per line with ts,\n"
    "                                level, msg, the object named (\"workload\": {name,\n"
    "                                namespace}) and the reason (docs/observability.md)\n"
    "  --audit-log FILE              append the audit trail (who changed which quota, queue\n"
    "                                mapping or priority; rejections too) to FILE as JSON lines;\n"
    "                                read it with `sluice audit FILE` (default: Events only)\n"
    "  --audit-log-max-bytes N       rotate FILE past N bytes, keeping FILE.1..FILE.5\n"
    "                                (default 104857600)\n"
    "  --accounting-log FILE         append one JSON line per admission that ended (finished,\n"
    "                                evicted, preempted, deleted) to FILE; read it with\n"
    "                                `sluice report FILE` (default: off; docs/accounting.md)\n"
    "  --accounting-log-max-bytes N  rotate FILE past N bytes, keeping FILE.1..FILE.5\n"
    "                                (default 104857600)\n"
    "  --estimate-interval D         recompute the start-time estimates (the engine run forward\n"
    "                                from now; docs/observability.md) every D (default 60s; 0:\n"
    "                                off, no estimated-start-time annotation nor metric)\n"
    "  --estimate-horizon D          how far ahead they look (default 24h)\n"
    "  --estimate-max-cycles N       engine cycles one run may spend (default 5000)\n"
    "  --webhook-client-ca FILE      mutual TLS: refuse webhook callers (at the TLS handshake)\n"
    "                                without a client certificate signed by a CA in FILE (the\n"
    "                                API server's, see docs/webhooks.md); fails closed\n"
    "  --server-limits NAME=VALUE,...  the HTTP servers' limits: max-connections (512),\n"
    "                                max-connections-per-client (32), body-budget (64Mi),\n"
    "                                header-timeout (5s), request-timeout (10s), idle-timeout\n"
    "                                (10s), write-timeout (5s) (docs/configuration.md)\n"
    "  -h, --help                    show this help\n"
    "\n"
    "waitForPodsReady (on by default, as Kueue's v1beta2): an admitted Job whose pods are not\n"
    "all ready within the timeout is evicted (Evicted PodsReadyTimeout), stopped and requeued\n"
    "after an exponential backoff (requeuingStrategy); see docs/operator.md.\n"
    "\n"
    "SIGTERM or SIGINT: stop writing, finish the writes in flight (at most 5 s), release the\n"
    "Lease, exit 0. Losing the Lease stops all writes at once and exits 1 (restart to compete\n"
    "again). /readyz is ready once every cache has synced and, with webhooks on, a certificate is\n"
    "served.\n"
    "exit status: 0 after a signal, 1 on a runtime failure, 2 usage or configuration error.\n";

typedef struct run_s {
    uv_loop_t loop;
    ctrl_config_t cfg;
    kube_config_t kcfg;
    kube_client_t *client;       /* the controller's and the webhooks' requests */
    kube_client_t *lease_client; /* leader election only: its own connection and rate limit */
    ctrl_t *ctrl;
    kube_lease_t *lease;
    ctrl_webhook_t *webhook;
    hook_server_t *health;
    hook_server_t *metrics;               /* metrics.bindAddress: HTTPS /metrics, or NULL */
    hook_tls_t *metrics_tls;              /* its certificate (freed once the server has closed) */
    metricsauth_t *metrics_auth;          /* TokenReview + SubjectAccessReview for it */
    ctrl_visibility_server_t *visibility; /* --visibility-bind-address, or NULL */
    ctrl_visibility_ca_t *visibility_ca;  /* its certificate from the webhook Secret's CA */
    char *vis_host;                       /* owned */
    int vis_port;                         /* 0: off */
    char identity[300];
    const char *cert_ips[8];
    size_t ncert_ips;
    uv_signal_t sigterm;
    uv_signal_t sigint;
    uv_timer_t drain;
    uint64_t drain_deadline; /* loop time (ms) after which in-flight writes are abandoned */
    int exit_code;
    bool stopping;
    char lease_error[256]; /* the last failed Lease request while it fails, else "" (/readyz) */
    logfmt_t log_format;   /* --log-format */
    size_t metrics_len;    /* the last /metrics exposition's size: the next one's buffer */
} run_t;

static void log_line(void *data, int level, const char *text)
{
    static const char *const names[] = {"error", "info", "debug"};
    const run_t *r = data;
    char line[4096];
    struct timespec now;
    size_t n;

    clock_gettime(CLOCK_REALTIME, &now);
    n = logfmt_line(r != NULL ? r->log_format : LOGFMT_TEXT,
                    (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
                    level >= 0 && level <= 2 ? names[level] : "?", text, line, sizeof(line));
    fwrite(line, 1, n, stderr);
}

static void run_log(const run_t *r, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_log(const run_t *r, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    log_line((void *)r, level, text);
}

static void client_log(void *data, const char *text)
{
    run_t *r = data;

    if (r->cfg.log_level >= CTRL_LOG_DEBUG)
        log_line(r, CTRL_LOG_DEBUG, text);
}

/* ---- probes ------------------------------------------------------------------------------ */

/* /metrics: the Prometheus text format (docs/observability.md), rendered on the loop. */
static void on_metrics(run_t *r, hook_response_t *resp)
{
    metrics_buf_t b = {0};

    /* Sized from the last one (an eighth more): at 1,000 ClusterQueues the exposition is about
     * 13 MB, and growing to it by doubling copied it several times over. */
    if (r->ctrl == NULL || metrics_buf_reserve(&b, r->metrics_len + r->metrics_len / 8) != ERR_OK ||
        ctrl_metrics_render(r->ctrl, &b) != ERR_OK) {
        metrics_buf_fini(&b);
        resp->status = 503;
        resp->body = "metrics unavailable\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    r->metrics_len = b.len;
    resp->content_type = METRICS_CONTENT_TYPE;
    resp->owned_body = b.data; /* the server frees it */
    resp->body_len = b.len;
}

/* The answer to a secure /metrics request with its verdict (`why`: the body when not allowed). */
static void secure_answer(run_t *r, metricsauth_result_t res, const char *why,
                          hook_response_t *resp)
{
    static const int status[] = {[METRICSAUTH_ALLOW] = 200,
                                 [METRICSAUTH_UNAUTHENTICATED] = 401,
                                 [METRICSAUTH_FORBIDDEN] = 403,
                                 [METRICSAUTH_PENDING] = 503};

    if (res == METRICSAUTH_ALLOW) {
        on_metrics(r, resp);
        return;
    }
    resp->status = status[res];
    resp->content_type = "text/plain";
    /* Owned: the caller's `why` is gone when the server copies the body. */
    resp->owned_body = strdup(why);
    resp->body_len = resp->owned_body ? strlen(why) : 0;
}

typedef struct secure_wait_s {
    run_t *r;
    hook_deferred_t *d;
} secure_wait_t;

/* The reviews of a new token ended: answer the request that waited for them. */
static void on_secure_verdict(void *ud, metricsauth_result_t res, const char *why)
{
    secure_wait_t *w = ud;
    hook_response_t resp = {.status = 200, .content_type = "text/plain"};

    if (w->d == NULL) { /* the request could not be deferred and was answered 503 */
        free(w);
        return;
    }
    secure_answer(w->r, res, why, &resp);
    hook_deferred_answer(w->d, &resp);
    free(w);
}

/* HTTPS /metrics on metrics.bindAddress: a bearer token that TokenReview authenticates and
 * SubjectAccessReview allows "get /metrics" (lib/ctrl/metricsauth.h). The first request with a
 * new token waits for its reviews (a deferred answer) instead of getting 503. */
static void on_secure_metrics(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    run_t *r = ud;
    const char *authz = NULL;
    char why[512];
    secure_wait_t *w;
    metricsauth_result_t res;
    bool waiting = false;

    resp->content_type = "text/plain";
    if (strcmp(req->path, "/metrics") != 0 || strcmp(req->method, "GET") != 0) {
        resp->status = 404;
        resp->body = "not found\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcmp(req->headers[i].name, "authorization") == 0)
            authz = req->headers[i].value;
    w = calloc(1, sizeof(*w));
    res = metricsauth_check_wait(r->metrics_auth, authz, why, sizeof(why),
                                 w ? on_secure_verdict : NULL, w, &waiting);
    if (waiting) {
        w->r = r;
        w->d = hook_request_defer(req);
        if (w->d != NULL)
            return; /* on_secure_verdict answers */
        /* cannot defer (out of memory): the verdict will come to a detached request */
        w->d = NULL;
        snprintf(why, sizeof(why), "the bearer token is being reviewed: retry in a moment\n");
    }
    if (!waiting)
        free(w);
    secure_answer(r, res, why, resp);
}

static void on_metrics_closed(void *ud)
{
    run_t *r = ud;

    hook_tls_free(r->metrics_tls);
    r->metrics_tls = NULL;
}

/* A certificate for the metrics server: the cert dir's (webhook.certDir), else a self-signed one
 * made now, as controller-runtime's secure serving does without one. */
static err_t metrics_certificate(run_t *r, err_msg_t *msg)
{
    hook_pem_t ca = {0}, srv = {0};
    char dns[2][320];
    const char *names[2] = {dns[0], dns[1]}, *ips[] = {"127.0.0.1"};
    err_t rc;

    if (r->cfg.cert_dir != NULL) {
        char crt[1024], key[1024];
        snprintf(crt, sizeof(crt), "%s/tls.crt", r->cfg.cert_dir);
        snprintf(key, sizeof(key), "%s/tls.key", r->cfg.cert_dir);
        return hook_tls_new_files(crt, key, &r->metrics_tls, msg);
    }
    snprintf(dns[0], sizeof(dns[0]), "sluice-controller-manager-metrics-service.%s.svc",
             r->cfg.namespace);
    snprintf(dns[1], sizeof(dns[1]), "localhost");
    rc = hook_cert_ca("sluice-metrics-ca", 3650, &ca, msg);
    if (rc == ERR_OK)
        rc = hook_cert_serving(&ca, names, 2, ips, 1, 365, &srv, msg);
    if (rc == ERR_OK)
        rc = hook_tls_new_pem(srv.cert, srv.cert_len, srv.key, srv.key_len, &r->metrics_tls, msg);
    hook_pem_fini(&ca);
    hook_pem_fini(&srv);
    return rc;
}

/* The body of a ready /readyz: "ok", then each check that passed. */
static void ready_body(const run_t *r, char *body, size_t n)
{
    size_t used;

    snprintf(body, n, "ok\ncaches synced\n");
    used = strlen(body);
    if (r->cfg.webhook_port > 0)
        snprintf(body + used, n - used, "webhook certificate served\n");
    used = strlen(body);
    if (!r->cfg.leader_elect)
        snprintf(body + used, n - used, "no leader election: this replica writes\n");
    else if (r->lease != NULL && kube_lease_is_leader(r->lease))
        snprintf(body + used, n - used, "leader\n");
    else
        snprintf(body + used, n - used, "standby: the Lease is held by \"%s\"\n",
                 r->lease ? kube_lease_holder(r->lease) : "");
}

/* /readyz: 200 "ok" once every cache has synced, with webhooks on a certificate is served, and
 * with leader election this replica leads or is a standby that can read the Lease; otherwise
 * 503 naming each thing missing; either way followed by the open problems. */
static void on_probe(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    run_t *r = ud;
    char body[8192] = "", *p = body;
    size_t n = sizeof(body);
    bool ready = true;

    resp->content_type = "text/plain";
    if (strcmp(req->path, "/metrics") == 0 && r->cfg.metrics_port > 0) {
        resp->status = 404;
        resp->body = "/metrics is served over HTTPS on metrics.bindAddress\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    if (strcmp(req->path, "/metrics") == 0) {
        on_metrics(r, resp);
        return;
    }
    if (strcmp(req->path, "/healthz") == 0 || strcmp(req->path, "/livez") == 0) {
        resp->body = "ok\n";
        resp->body_len = 3;
        return;
    }
    if (strcmp(req->path, "/readyz") != 0) {
        resp->status = 404;
        resp->body = "not found\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    if (r->stopping) {
        ready = false;
        snprintf(p, n, "shutting down\n");
    } else if (r->ctrl == NULL || !ctrl_readiness(r->ctrl, p, n)) {
        ready = false;
    }
    if (r->cfg.webhook_port > 0 && !ctrl_webhook_ready(r->webhook)) {
        ready = false;
        snprintf(body + strlen(body), sizeof(body) - strlen(body),
                 "webhook certificate not served yet\n");
    }
    if (r->cfg.leader_elect && r->lease_error[0] != '\0' &&
        !(r->lease != NULL && kube_lease_is_leader(r->lease))) {
        /* A standby that cannot see the Lease could not take over: not a healthy standby. */
        ready = false;
        snprintf(body + strlen(body), sizeof(body) - strlen(body),
                 "leader election: not leader, and the Lease cannot be read: %s\n", r->lease_error);
    }
    /* An accept that failed for memory is retried with backoff (lib/hook/server.c). */
    if (!ctrl_webhook_accepting(r->webhook) || !hook_server_accepting(r->health)) {
        ready = false;
        snprintf(body + strlen(body), sizeof(body) - strlen(body),
                 "%s server not accepting connections (out of memory at accept; retrying)\n",
                 ctrl_webhook_accepting(r->webhook) ? "probe" : "webhook");
    }
    if (ready)
        ready_body(r, body, sizeof(body));
    /* Ready or not, the open problems are said: when ready, those that do not stop sluice
     * (an enabled integration whose CRD is not installed, skipped as Kueue skips it). */
    if (r->ctrl != NULL && problems_count(ctrl_problems(r->ctrl)) > 0) {
        snprintf(body + strlen(body), sizeof(body) - strlen(body), "problems:\n");
        problems_describe(ctrl_problems(r->ctrl), "  ", body, sizeof(body));
    }
    resp->status = ready ? 200 : 503;
    /* Owned: `body` is on this stack, which is gone when the server copies the response. */
    resp->owned_body = strdup(body);
    resp->body_len = resp->owned_body ? strlen(body) : 0;
}

/* ---- shutdown ---------------------------------------------------------------------------- */

static void on_walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void on_ctrl_closed(void *data)
{
    run_t *r = data;

    r->ctrl = NULL;
}

static void finish(run_t *r)
{
    if (r->ctrl != NULL)
        ctrl_close(r->ctrl, on_ctrl_closed, r);
    ctrl_webhook_close(r->webhook, NULL, NULL); /* first: it hands the CA to visibility_ca */
    r->webhook = NULL;
    ctrl_visibility_ca_close(r->visibility_ca);
    r->visibility_ca = NULL;
    hook_server_close(r->health, NULL, NULL);
    r->health = NULL;
    if (r->metrics != NULL)
        hook_server_close(r->metrics, on_metrics_closed, r);
    else
        on_metrics_closed(r);
    r->metrics = NULL;
    ctrl_visibility_server_close(r->visibility, NULL, NULL); /* freed once its requests end */
    r->visibility = NULL;
    metricsauth_free(r->metrics_auth); /* reviews in flight end with the client, below */
    r->metrics_auth = NULL;
    kube_client_close(r->client, NULL, NULL);
    r->client = NULL;
    kube_client_close(r->lease_client, NULL, NULL);
    r->lease_client = NULL;
    uv_close((uv_handle_t *)&r->sigterm, NULL);
    uv_close((uv_handle_t *)&r->sigint, NULL);
    uv_close((uv_handle_t *)&r->drain, NULL);
}

static void on_lease_closed(void *data)
{
    run_t *r = data;

    run_log(r, CTRL_LOG_INFO, "lease released");
    finish(r);
}

static void on_drain(uv_timer_t *t)
{
    run_t *r = t->data;
    static const uint64_t step_ms = 50;

    /* Wait for in-flight writes (an admission half-written is still consistent, but a Job
     * start that completes is better than one cut off), at most 5 s. */
    if (r->ctrl != NULL && ctrl_inflight(r->ctrl) > 0 && uv_now(&r->loop) < r->drain_deadline) {
        uv_timer_start(t, on_drain, step_ms, 0);
        return;
    }
    if (r->ctrl != NULL) {
        ctrl_stats_t st = ctrl_stats(r->ctrl);
        run_log(r, CTRL_LOG_INFO,
                "stopped: %llu admitted, %llu evicted, %llu finished; %llu passes, %llu engine "
                "cycles (%.1f s CPU), %llu decisions; writes: %llu admission, %llu status, %llu "
                "explanation, %llu event (%llu events dropped), %llu failed (%llu of them "
                "conflicts, decided again)",
                (unsigned long long)st.admitted, (unsigned long long)st.evicted,
                (unsigned long long)st.finished, (unsigned long long)st.passes,
                (unsigned long long)st.cycles, (double)st.engine_ns / 1e9,
                (unsigned long long)st.decisions, (unsigned long long)st.writes[0],
                (unsigned long long)st.writes[1], (unsigned long long)st.writes[2],
                (unsigned long long)st.writes[3], (unsigned long long)st.events_dropped,
                (unsigned long long)st.write_errors, (unsigned long long)st.write_conflicts);
    } else {
        run_log(r, CTRL_LOG_INFO, "stopped");
    }
    if (r->lease != NULL) {
        kube_lease_t *l = r->lease;
        r->lease = NULL;
        kube_lease_close(l, on_lease_closed, r); /* releases the Lease if held */
        return;
    }
    finish(r);
}

static void on_signal(uv_signal_t *s, int signum)
{
    run_t *r = s->data;

    if (r->stopping)
        return;
    r->stopping = true;
    run_log(r, CTRL_LOG_INFO, "signal %d: stop admitting", signum);
    if (r->ctrl != NULL)
        ctrl_stop_writes(r->ctrl);
    r->drain.data = r;
    r->drain_deadline = uv_now(&r->loop) + 5000;
    uv_timer_start(&r->drain, on_drain, 0, 0);
}

/* ---- leader election --------------------------------------------------------------------- */

static void on_started_leading(kube_lease_t *l, void *data)
{
    run_t *r = data;

    (void)l;
    run_log(r, CTRL_LOG_INFO, "leader election: %s acquired the lease", r->identity);
    if (r->ctrl != NULL && !r->stopping)
        ctrl_set_leader(r->ctrl, true);
}

static void on_stopped_leading(kube_lease_t *l, void *data)
{
    run_t *r = data;

    (void)l;
    if (r->ctrl != NULL)
        ctrl_stop_writes(r->ctrl); /* at once: the next leader may already be writing */
    if (r->stopping)
        return; /* our own release at shutdown */
    run_log(r, CTRL_LOG_ERROR, "leader election: lost the lease (holder now \"%s\"): exiting",
            kube_lease_holder(l));
    r->exit_code = 1;
    r->stopping = true;
    r->drain.data = r;
    r->drain_deadline = uv_now(&r->loop); /* no draining: our writes must stop now */
    uv_timer_start(&r->drain, on_drain, 0, 0);
}

static void on_lease_error(kube_lease_t *l, const kube_result_t *res, const char *verb, void *data)
{
    static const kube_resource_t leases = {"coordination.k8s.io", "v1", "leases", true};
    run_t *r = data;
    kube_result_t ok;

    (void)l;
    if (res == NULL)
        r->lease_error[0] = '\0';
    else
        snprintf(r->lease_error, sizeof(r->lease_error), "%s %s", verb, res->msg.text);
    if (r->ctrl == NULL)
        return;
    if (res == NULL) {
        memset(&ok, 0, sizeof(ok));
        res = &ok;
    }
    ctrl_note_result(r->ctrl, res, verb, &leases, NULL);
}

/* ---- flags ------------------------------------------------------------------------------- */

typedef struct run_args_s {
    const char *config;
    const char *kubeconfig;
    const char *context;
    const char *ns;
    const char *job_resource;
    const char *health;
    const char *metrics;
    const char *visibility;
    const char *qps;
    const char *burst;
    const char *log_level;
    const char *log_format;
    const char *leader_elect;
    const char *identity;
    const char *webhook_port;
    const char *cert_dir;
    const char *audit_log;
    const char *audit_max;
    const char *acct_log;
    const char *accounting_max;
    const char *webhook_client_ca;
    const char *pods_ready_timeout;
    const char *est_interval;
    const char *est_horizon;
    const char *est_cycles;
    const char *server_limits;
    const char *cert_ips[8];
    size_t ncert_ips;
} run_args_t;

enum {
    OPT_CONFIG = 1,
    OPT_KUBECONFIG,
    OPT_CONTEXT,
    OPT_NAMESPACE,
    OPT_JOB_RESOURCE,
    OPT_LEADER_ELECT,
    OPT_IDENTITY,
    OPT_WEBHOOK_PORT,
    OPT_CERT_DIR,
    OPT_WEBHOOK_CERT_IP,
    OPT_HEALTH,
    OPT_METRICS,
    OPT_VISIBILITY,
    OPT_QPS,
    OPT_BURST,
    OPT_PODS_READY_TIMEOUT,
    OPT_LOG_LEVEL,
    OPT_LOG_FORMAT,
    OPT_AUDIT_LOG,
    OPT_AUDIT_MAX,
    OPT_ACCT_LOG,
    OPT_ACCT_MAX,
    OPT_WEBHOOK_CLIENT_CA,
    OPT_EST_INTERVAL,
    OPT_EST_HORIZON,
    OPT_EST_CYCLES,
    OPT_SERVER_LIMITS,
};

#define VALUE(id, name, value_name, choices, help)                         \
    {                                                                      \
        (id), 0, (name), CLI_ARG_REQUIRED, (value_name), (choices), (help) \
    }

static const cli_opt_t run_opts[] = {
    VALUE(OPT_CONFIG, "config", "FILE", NULL, "Kueue Configuration file"),
    VALUE(OPT_KUBECONFIG, "kubeconfig", "FILE", NULL, "kubeconfig"),
    VALUE(OPT_CONTEXT, "context", "NAME", NULL, "kubeconfig context"),
    VALUE(OPT_NAMESPACE, "namespace", "NS", NULL, "sluice's namespace"),
    VALUE(OPT_JOB_RESOURCE, "job-resource", "G/V/PLURAL", NULL, "the Job resource to manage"),
    {OPT_LEADER_ELECT, 0, "leader-elect", CLI_ARG_OPTIONAL, "BOOL", "true false",
     "compete for the Lease"},
    VALUE(OPT_IDENTITY, "identity", "NAME", NULL, "leader-election identity"),
    VALUE(OPT_WEBHOOK_PORT, "webhook-port", "N", NULL, "admission webhooks port (0: off)"),
    VALUE(OPT_CERT_DIR, "cert-dir", "DIR", NULL, "serve DIR/tls.crt and DIR/tls.key"),
    VALUE(OPT_WEBHOOK_CERT_IP, "webhook-cert-ip", "IP", NULL, "extra IP in the certificate"),
    VALUE(OPT_HEALTH, "health-probe-bind-address", "ADDRESS", NULL, "probes and /metrics"),
    VALUE(OPT_METRICS, "metrics-bind-address", "ADDRESS", NULL, "HTTPS /metrics"),
    VALUE(OPT_VISIBILITY, "visibility-bind-address", "ADDRESS", NULL,
          "the visibility API over HTTPS (API aggregation)"),
    VALUE(OPT_QPS, "qps", "N", NULL, "client-side request rate"),
    VALUE(OPT_BURST, "burst", "N", NULL, "client-side burst"),
    VALUE(OPT_PODS_READY_TIMEOUT, "pods-ready-timeout", "DURATION", NULL,
          "waitForPodsReady.timeout"),
    VALUE(OPT_LOG_LEVEL, "log-level", "LEVEL", "error info debug", "log level"),
    VALUE(OPT_LOG_FORMAT, "log-format", "FORMAT", "text json", "log format"),
    VALUE(OPT_AUDIT_LOG, "audit-log", "FILE", NULL, "append the audit trail to FILE"),
    VALUE(OPT_AUDIT_MAX, "audit-log-max-bytes", "N", NULL, "rotate the audit log past N bytes"),
    VALUE(OPT_ACCT_LOG, "accounting-log", "FILE", NULL, "append the accounting log to FILE"),
    VALUE(OPT_ACCT_MAX, "accounting-log-max-bytes", "N", NULL,
          "rotate the accounting log past N bytes"),
    VALUE(OPT_WEBHOOK_CLIENT_CA, "webhook-client-ca", "FILE", NULL, "mutual TLS for webhooks"),
    VALUE(OPT_EST_INTERVAL, "estimate-interval", "DURATION", NULL, "start-time estimate interval"),
    VALUE(OPT_EST_HORIZON, "estimate-horizon", "DURATION", NULL, "start-time estimate horizon"),
    VALUE(OPT_EST_CYCLES, "estimate-max-cycles", "N", NULL, "start-time estimate cycle budget"),
    VALUE(OPT_SERVER_LIMITS, "server-limits", "NAME=VALUE,...", NULL,
          "the HTTP servers' connection, body and timeout limits"),
};

static int parse_args(int argc, char **argv, run_args_t *a)
{
    /* Where each option that only stores its value goes. */
    static const struct {
        int id;
        size_t off;
    } store[] = {
        {OPT_CONFIG, offsetof(run_args_t, config)},
        {OPT_KUBECONFIG, offsetof(run_args_t, kubeconfig)},
        {OPT_CONTEXT, offsetof(run_args_t, context)},
        {OPT_NAMESPACE, offsetof(run_args_t, ns)},
        {OPT_JOB_RESOURCE, offsetof(run_args_t, job_resource)},
        {OPT_HEALTH, offsetof(run_args_t, health)},
        {OPT_METRICS, offsetof(run_args_t, metrics)},
        {OPT_VISIBILITY, offsetof(run_args_t, visibility)},
        {OPT_QPS, offsetof(run_args_t, qps)},
        {OPT_BURST, offsetof(run_args_t, burst)},
        {OPT_LOG_LEVEL, offsetof(run_args_t, log_level)},
        {OPT_LOG_FORMAT, offsetof(run_args_t, log_format)},
        {OPT_IDENTITY, offsetof(run_args_t, identity)},
        {OPT_WEBHOOK_PORT, offsetof(run_args_t, webhook_port)},
        {OPT_CERT_DIR, offsetof(run_args_t, cert_dir)},
        {OPT_AUDIT_LOG, offsetof(run_args_t, audit_log)},
        {OPT_AUDIT_MAX, offsetof(run_args_t, audit_max)},
        {OPT_ACCT_LOG, offsetof(run_args_t, acct_log)},
        {OPT_ACCT_MAX, offsetof(run_args_t, accounting_max)},
        {OPT_WEBHOOK_CLIENT_CA, offsetof(run_args_t, webhook_client_ca)},
        {OPT_PODS_READY_TIMEOUT, offsetof(run_args_t, pods_ready_timeout)},
        {OPT_EST_INTERVAL, offsetof(run_args_t, est_interval)},
        {OPT_EST_HORIZON, offsetof(run_args_t, est_horizon)},
        {OPT_EST_CYCLES, offsetof(run_args_t, est_cycles)},
        {OPT_SERVER_LIMITS, offsetof(run_args_t, server_limits)},
    };
    const char *val;
    cli_t p;
    int id;

    cli_init(&p, &cmd_run, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        if (id == CLI_STOP)
            return p.status;
        if (id == CLI_OPERAND)
            return cli_fail_usage(&p, "unexpected argument '%s'", val);
        if (id == OPT_LEADER_ELECT) {
            a->leader_elect = val != NULL ? val : "true"; /* never the next argument */
            continue;
        }
        if (id == OPT_WEBHOOK_CERT_IP) {
            if (a->ncert_ips == ARRAY_SIZE(a->cert_ips))
                return cli_fail(&p, "--webhook-cert-ip: at most %zu", ARRAY_SIZE(a->cert_ips));
            a->cert_ips[a->ncert_ips++] = val;
            continue;
        }
        for (size_t f = 0; f < ARRAY_SIZE(store); f++)
            if (store[f].id == id)
                *(const char **)((char *)a + store[f].off) = val;
    }
    return -1;
}

static int apply_flags(run_t *r, const run_args_t *a)
{
    err_msg_t msg = {{0}};
    err_t rc = ERR_OK;

    if (a->config != NULL)
        rc = ctrl_config_load(&r->cfg, a->config, &msg);
    if (rc == ERR_OK && a->ns != NULL) {
        free(r->cfg.namespace);
        r->cfg.namespace = strdup(a->ns);
        r->cfg.namespace_set = true;
        rc = r->cfg.namespace ? ERR_OK : err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK && a->job_resource != NULL)
        rc = ctrl_config_set_job_resource(&r->cfg, a->job_resource, &msg);
    if (rc == ERR_OK && a->health != NULL)
        rc = ctrl_bind_address(a->health, &r->cfg.health_host, &r->cfg.health_port, &msg);
    if (rc == ERR_OK && a->metrics != NULL &&
        (rc = ctrl_bind_address(a->metrics, &r->cfg.metrics_host, &r->cfg.metrics_port, &msg)) !=
            ERR_OK)
        err_prefix(&msg, rc, "--metrics-bind-address: ");
    if (rc == ERR_OK && a->visibility != NULL &&
        (rc = ctrl_bind_address(a->visibility, &r->vis_host, &r->vis_port, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--visibility-bind-address: ");
    if (rc == ERR_OK && a->leader_elect != NULL) {
        if (strcmp(a->leader_elect, "true") == 0)
            r->cfg.leader_elect = true;
        else if (strcmp(a->leader_elect, "false") == 0)
            r->cfg.leader_elect = false;
        else
            rc = err_set(&msg, ERR_INVALID, "--leader-elect=%s: want true or false",
                         a->leader_elect);
    }
    if (rc == ERR_OK && a->cert_dir != NULL) {
        free(r->cfg.cert_dir);
        r->cfg.cert_dir = strdup(a->cert_dir);
        rc = r->cfg.cert_dir ? ERR_OK : err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK && a->webhook_port != NULL) {
        char *end = NULL;
        unsigned long v = strtoul(a->webhook_port, &end, 10);
        if (end == a->webhook_port || *end != '\0' || v > 65535)
            rc = err_set(&msg, ERR_INVALID, "--webhook-port %s: want 0..65535", a->webhook_port);
        else
            r->cfg.webhook_port = (int)v;
    }
    for (size_t i = 0; i < a->ncert_ips; i++)
        r->cert_ips[r->ncert_ips++] = a->cert_ips[i];
    if (a->identity != NULL) {
        snprintf(r->identity, sizeof(r->identity), "%s", a->identity);
    } else {
        char host[256] = "sluice";
        gethostname(host, sizeof(host) - 1);
        snprintf(r->identity, sizeof(r->identity), "%s_%ld", host, (long)getpid());
    }
    if (rc == ERR_OK && a->log_level != NULL)
        rc = ctrl_log_level_parse(a->log_level, &r->cfg.log_level, &msg);
    if (rc == ERR_OK && a->log_format != NULL &&
        (rc = logfmt_parse(a->log_format, &r->log_format, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--log-format: ");
    if (rc == ERR_OK && a->audit_max != NULL &&
        (rc = ctrl_config_set_audit_max(&r->cfg, a->audit_max, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--audit-log-max-bytes: ");
    if (rc == ERR_OK && a->audit_log != NULL) {
        free(r->cfg.audit_log);
        r->cfg.audit_log = strdup(a->audit_log);
        if (r->cfg.audit_log == NULL)
            rc = err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK && a->accounting_max != NULL &&
        (rc = ctrl_config_set_accounting_max(&r->cfg, a->accounting_max, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--accounting-log-max-bytes: ");
    if (rc == ERR_OK && a->acct_log != NULL) {
        free(r->cfg.acct_log);
        r->cfg.acct_log = strdup(a->acct_log);
        if (r->cfg.acct_log == NULL)
            rc = err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK && a->webhook_client_ca != NULL) {
        free(r->cfg.webhook_client_ca);
        r->cfg.webhook_client_ca = strdup(a->webhook_client_ca);
        if (r->cfg.webhook_client_ca == NULL)
            rc = err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK && a->est_interval != NULL &&
        (rc = ctrl_config_set_estimate_interval(&r->cfg, a->est_interval, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--estimate-interval: ");
    if (rc == ERR_OK && a->est_horizon != NULL &&
        (rc = ctrl_config_set_estimate_horizon(&r->cfg, a->est_horizon, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--estimate-horizon: ");
    if (rc == ERR_OK && a->est_cycles != NULL &&
        (rc = ctrl_config_set_estimate_max_cycles(&r->cfg, a->est_cycles, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--estimate-max-cycles: ");
    if (rc == ERR_OK && a->pods_ready_timeout != NULL &&
        (rc = ctrl_config_set_pods_ready_timeout(&r->cfg, a->pods_ready_timeout, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--pods-ready-timeout: ");
    if (rc == ERR_OK && a->server_limits != NULL &&
        (rc = hook_limits_parse(&r->cfg.server_limits, a->server_limits, &msg)) != ERR_OK)
        err_prefix(&msg, rc, "--server-limits: ");
    if (rc == ERR_OK && a->qps != NULL) {
        char *end = NULL;
        unsigned long v = strtoul(a->qps, &end, 10);
        if (end == a->qps || *end != '\0' || v == 0 || v > 1000000)
            rc = err_set(&msg, ERR_INVALID, "--qps %s: want an integer in 1..1000000", a->qps);
        else
            r->cfg.qps_milli = (uint64_t)v * 1000;
    }
    if (rc == ERR_OK && a->burst != NULL) {
        char *end = NULL;
        unsigned long v = strtoul(a->burst, &end, 10);
        if (end == a->burst || *end != '\0' || v == 0 || v > 1000000)
            rc = err_set(&msg, ERR_INVALID, "--burst %s: want an integer in 1..1000000", a->burst);
        else
            r->cfg.burst = (uint32_t)v;
    }
    if (rc == ERR_OK && kube_config_load(a->kubeconfig, a->context, &r->kcfg, &msg) != ERR_OK)
        rc = ERR_INVALID;
    /* In a pod without a namespace in the file or on the command line, sluice's namespace is
     * the pod's own: a kustomize `namespace:` then needs no second edit in the configuration. */
    if (rc == ERR_OK && !r->cfg.namespace_set && r->kcfg.in_cluster &&
        r->kcfg.namespace_name != NULL) {
        free(r->cfg.namespace);
        r->cfg.namespace = strdup(r->kcfg.namespace_name);
        rc = r->cfg.namespace ? ERR_OK : err_set(&msg, ERR_NOMEM, "out of memory");
    }
    if (rc == ERR_OK)
        rc = ctrl_config_finish(&r->cfg, &msg);
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice run: %s\n", msg.text);
        return 2;
    }
    return -1;
}

/* Say at startup what the configuration sets that has no effect, so nobody relies on it. */
static void log_config_warnings(const run_t *r)
{
    const char *w = r->cfg.warnings;

    if (r->cfg.no_effect != NULL)
        run_log(r, CTRL_LOG_ERROR,
                "configuration: these fields have no effect in sluice run and are ignored: %s "
                "(docs/configuration.md)",
                r->cfg.no_effect);
    while (w != NULL && *w != '\0') {
        size_t n = strcspn(w, "\n");
        run_log(r, CTRL_LOG_ERROR, "configuration: %.*s", (int)n, w);
        w += n + (w[n] == '\n');
    }
}

/* ---- main -------------------------------------------------------------------------------- */

static int start(run_t *r)
{
    err_msg_t msg = {{0}};
    kube_client_opts_t copts = {0};

    copts.qps_milli = r->cfg.qps_milli;
    copts.burst = r->cfg.burst;
    copts.log = client_log;
    copts.log_data = r;
    if (kube_client_new(&r->loop, &r->kcfg, &copts, &r->client, &msg) != ERR_OK ||
        ctrl_new(r->client, &r->cfg, log_line, r, &r->ctrl, &msg) != ERR_OK) {
        run_log(r, CTRL_LOG_ERROR, "%s", msg.text);
        return 1;
    }
    if (r->cfg.health_port > 0) {
        hook_server_config_t hc = {0};
        hc.host = r->cfg.health_host[0] ? r->cfg.health_host : "0.0.0.0";
        hc.port = r->cfg.health_port;
        hc.handler = on_probe;
        hc.ud = r;
        hook_limits_apply(&r->cfg.server_limits, &hc);
        hc.max_body_bytes = 4096; /* probes and scrapes send no body */
        if (hook_server_start(&r->loop, &hc, &r->health, &msg) != ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "health probes on %s:%d: %s", hc.host, hc.port, msg.text);
            return 1;
        }
    }
    if (r->cfg.metrics_port > 0) {
        hook_server_config_t mc = {0};
        mc.host = r->cfg.metrics_host[0] ? r->cfg.metrics_host : "0.0.0.0";
        mc.port = r->cfg.metrics_port;
        mc.handler = on_secure_metrics;
        mc.ud = r;
        hook_limits_apply(&r->cfg.server_limits, &mc);
        r->metrics_auth = metricsauth_new(r->client, "/metrics");
        if (r->metrics_auth == NULL || metrics_certificate(r, &msg) != ERR_OK ||
            (mc.tls = r->metrics_tls, hook_server_start(&r->loop, &mc, &r->metrics, &msg)) !=
                ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "metrics on %s:%d (HTTPS): %s", mc.host, mc.port,
                    r->metrics_auth ? msg.text : "out of memory");
            return 1;
        }
        run_log(r, CTRL_LOG_INFO,
                "metrics: serving HTTPS on %s:%d (bearer tokens: TokenReview, "
                "SubjectAccessReview)",
                mc.host, hook_server_port(r->metrics));
    }
    if (ctrl_start(r->ctrl, &msg) != ERR_OK) {
        run_log(r, CTRL_LOG_ERROR, "%s", msg.text);
        return 1;
    }
    if (r->vis_port > 0) {
        char crt[1024], key[1024], dns[320], svc[256];
        ctrl_visibility_opts_t vo = {r->vis_host, r->vis_port, NULL,
                                     NULL,        dns,         &r->cfg.server_limits};
        /* The serving certificate: of webhook.certDir when set (cert-manager injects the CA
         * into the APIServices), else issued from the webhook Secret's CA, which is injected
         * into the APIServices (lib/ctrl/visibility_ca.h); self-signed until then. Kueue's
         * naming: "<base>-webhook-service" -> Service "<base>-visibility-server". */
        snprintf(svc, sizeof(svc), "%s-visibility-server", r->cfg.webhook_config_prefix);
        snprintf(dns, sizeof(dns), "%s.%s.svc", svc, r->cfg.namespace);
        if (r->cfg.cert_dir != NULL) {
            snprintf(crt, sizeof(crt), "%s/tls.crt", r->cfg.cert_dir);
            snprintf(key, sizeof(key), "%s/tls.key", r->cfg.cert_dir);
            vo.cert_path = crt;
            vo.key_path = key;
        }
        if (ctrl_visibility_server_start(r->client, r->ctrl, &vo, log_line, r, &r->visibility,
                                         &msg) != ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "visibility API: %s", msg.text);
            return 1;
        }
        if (r->cfg.cert_dir == NULL && r->cfg.internal_certs && r->cfg.webhook_port > 0) {
            r->visibility_ca = ctrl_visibility_ca_new(r->client, r->ctrl, r->visibility, svc,
                                                      r->cfg.namespace, log_line, r);
            if (r->visibility_ca == NULL) {
                run_log(r, CTRL_LOG_ERROR, "visibility API: out of memory");
                return 1;
            }
        } else if (r->cfg.cert_dir == NULL) {
            run_log(r, CTRL_LOG_INFO,
                    "visibility API: self-signed certificate (no webhook Secret to take a CA "
                    "from): the APIServices need a caBundle of their own");
        }
    }
    if (r->cfg.webhook_port > 0) {
        ctrl_webhook_opts_t wo = {r->cert_ips, r->ncert_ips, NULL, 0, NULL, NULL};
        if (r->visibility_ca != NULL) {
            wo.on_ca = ctrl_visibility_ca_use;
            wo.on_ca_data = r->visibility_ca;
        }
        if (ctrl_webhook_start(r->client, r->ctrl, &r->cfg, &wo, log_line, r, &r->webhook, &msg) !=
            ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "%s", msg.text);
            return 1;
        }
    }
    if (r->cfg.leader_elect) {
        /* The Lease has a client of its own, as controller-runtime gives it: a burst of
         * controller writes (or of audited webhook requests) must never delay a renewal past
         * the deadline. One request per retry period needs little: 5/s, burst 10. */
        kube_client_opts_t lopts = {0};
        kube_lease_opts_t lo = {0};
        kube_lease_handlers_t lh = {on_started_leading, on_stopped_leading, on_lease_error};
        lo.ns = r->cfg.lease_namespace ? r->cfg.lease_namespace : r->cfg.namespace;
        lo.name = r->cfg.lease_name;
        lo.identity = r->identity;
        lo.lease_ms = r->cfg.lease_ms;
        lo.deadline_ms = r->cfg.renew_ms;
        lo.retry_ms = r->cfg.retry_ms;
        lopts.qps_milli = 5000;
        lopts.burst = 10;
        lopts.timeout_ms = r->cfg.renew_ms; /* a request that outlives the deadline is moot */
        lopts.log = client_log;
        lopts.log_data = r;
        if (kube_client_new(&r->loop, &r->kcfg, &lopts, &r->lease_client, &msg) != ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "leader election: %s", msg.text);
            return 1;
        }
        r->lease = kube_lease_new(r->lease_client, &lo, &lh, r);
        if (r->lease == NULL || kube_lease_start(r->lease, &msg) != ERR_OK) {
            run_log(r, CTRL_LOG_ERROR, "leader election: %s",
                    r->lease ? msg.text : "out of memory");
            return 1;
        }
        run_log(r, CTRL_LOG_INFO, "leader election: %s competing for lease %s/%s", r->identity,
                lo.ns, r->cfg.lease_name);
    } else {
        /* Without leader election this process is the only writer. */
        ctrl_set_leader(r->ctrl, true);
    }
    run_log(r, CTRL_LOG_INFO, "sluice run: server %s, jobs %s/%s/%s, namespace %s", r->kcfg.server,
            r->cfg.job_group, r->cfg.job_version, r->cfg.job_resource, r->cfg.namespace);
    log_config_warnings(r);
    return -1;
}

static int run_cmd(int argc, char **argv)
{
    run_t r;
    run_args_t a = {0};
    err_msg_t msg = {{0}};
    int rc;

    rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    memset(&r, 0, sizeof(r));
    kube_config_init(&r.kcfg);
    if (ctrl_config_init(&r.cfg, &msg) != ERR_OK) {
        fprintf(stderr, "sluice run: %s\n", msg.text);
        return 1;
    }
    rc = apply_flags(&r, &a);
    if (rc >= 0) {
        free(r.vis_host);
        ctrl_config_fini(&r.cfg);
        return rc;
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init_mem(CURL_GLOBAL_DEFAULT, util_malloc, util_free, util_realloc,
                         util_alloc_strdup, util_calloc); /* lib/util/alloc.h */
    uv_loop_init(&r.loop);
    r.loop.data = &r;
    uv_signal_init(&r.loop, &r.sigterm);
    uv_signal_init(&r.loop, &r.sigint);
    uv_timer_init(&r.loop, &r.drain);
    r.sigterm.data = r.sigint.data = &r;
    uv_signal_start(&r.sigterm, on_signal, SIGTERM);
    uv_signal_start(&r.sigint, on_signal, SIGINT);
    rc = start(&r);
    if (rc >= 0) {
        r.exit_code = rc;
        finish(&r);
    }
    uv_run(&r.loop, UV_RUN_DEFAULT);
    uv_walk(&r.loop, on_walk_close, NULL);
    uv_run(&r.loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&r.loop) != 0)
        run_log(&r, CTRL_LOG_ERROR, "loop not closed cleanly");
    kube_config_fini(&r.kcfg);
    ctrl_config_fini(&r.cfg);
    free(r.vis_host);
    curl_global_cleanup();
    return r.exit_code;
}

static void usage(FILE *out)
{
    fputs(usage_text, out);
}

const cli_cmd_t cmd_run = {"run",
                           "run the operator against a Kubernetes API server",
                           run_cmd,
                           run_opts,
                           ARRAY_SIZE(run_opts),
                           NULL,
                           NULL,
                           usage};
