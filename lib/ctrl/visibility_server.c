/* visibility_server -- the visibility API's HTTPS server behind API aggregation: the front
 * proxy's client certificate, the requestheader user, SubjectAccessReview. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/visibility_server.h"

#include "ctrl/visibility.h"
#include "hook/cert.h"
#include "hook/server.h"
#include "hook/tls.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/util.h"

#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define RETRY_MS          10000 /* the requestheader ConfigMap is read again after a failure */
#define VERDICT_TTL_MS    10000 /* delegated authorization's cache: allowed and denied */
#define MAX_VERDICTS      1024
#define MAX_REVIEWS       16
#define MAX_WAITERS       64
#define REVIEW_TIMEOUT_MS 4000
#define MAX_HEADERS       4 /* requestheader username / group header names kept */
#define MAX_GROUPS        32

typedef enum { V_REVIEWING = 0, V_ALLOWED, V_DENIED } verdict_state_t;

typedef struct waiter_s waiter_t;
struct waiter_s {
    hook_deferred_t *d; /* the request's deferred answer */
    char *path;         /* owned: the request, served once allowed */
    char *query;        /* owned */
    waiter_t *next;
};

typedef struct verdict_s {
    verdict_state_t state;
    uint64_t expires; /* loop ms; 0 while reviewing */
    char why[256];    /* denied: the reason */
    waiter_t *waiters;
    size_t nwaiters;
} verdict_t;

typedef struct review_s {
    ctrl_visibility_server_t *s;
    char key[65];
} review_t;

struct ctrl_visibility_server_s {
    uv_loop_t *loop;
    kube_client_t *client; /* borrowed */
    ctrl_t *ctrl;          /* borrowed */
    ctrl_log_fn log;
    void *log_data;
    char *host, *cert_path, *key_path, *dns_name; /* owned */
    hook_pem_t given; /* owned: the certificate of ctrl_visibility_server_set_cert() not served
                         yet (the server listens once the ConfigMap is read), else empty */
    int port;
    hook_limits_t limits;
    char dir[256];     /* private temporary directory holding the requestheader CA, or "" */
    char ca_path[300]; /* dir/requestheader-ca.crt */
    char *allowed[16]; /* owned: requestheader-allowed-names (none: any CN the CA signed) */
    size_t nallowed;
    char user_hdr[MAX_HEADERS][64]; /* lower-cased */
    size_t nuser;
    char group_hdr[MAX_HEADERS][64];
    size_t ngroup;
    hook_tls_t *tls;    /* owned */
    hook_server_t *srv; /* owned until closed */
    uv_timer_t retry;   /* reads the ConfigMap again */
    util_hmap_t cache;  /* key -> verdict_t * (owned) */
    size_t reviews;     /* SubjectAccessReviews in flight */
    size_t outstanding; /* API requests whose callback has not run yet */
    bool closing, srv_closed, timer_closed;
    void (*on_closed)(void *data);
    void *on_closed_data;
};

static const kube_resource_t configmaps = {"", "v1", "configmaps", true};
static const kube_resource_t access_reviews = {"authorization.k8s.io", "v1", "subjectaccessreviews",
                                               false};

static void slog(const ctrl_visibility_server_t *s, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void slog(const ctrl_visibility_server_t *s, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (s->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    s->log(s->log_data, level, text);
}

/* ---- answers ------------------------------------------------------------------------------ */

/* A metav1.Status failure as the body of `resp`. */
static void status_failure(hook_response_t *resp, int code, const char *reason, const char *msg)
{
    json_t *st =
        json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                  "metadata", "status", "Failure", "message", msg, "reason", reason, "code", code);
    char *text = st != NULL ? util_json_dumps(st, JSON_COMPACT) : NULL;

    json_decref(st);
    resp->status = code;
    resp->content_type = "application/json";
    resp->owned_body = text;
    resp->body_len = text != NULL ? strlen(text) : 0;
}

/* Answer waiter `w` (freed) with the verdict: the API's answer, 403, or 503. */
static void waiter_answer(ctrl_visibility_server_t *s, waiter_t *w, verdict_state_t st,
                          const char *why)
{
    hook_response_t resp = {.status = 200, .content_type = "application/json"};

    if (st == V_ALLOWED && !s->closing) {
        hook_request_t req = {.method = "GET", .path = w->path, .query = w->query};
        ctrl_visibility_serve(s->ctrl, &req, &resp);
    } else if (st == V_DENIED) {
        status_failure(&resp, 403, "Forbidden", why);
    } else {
        status_failure(&resp, 503, "ServiceUnavailable", why);
    }
    hook_deferred_answer(w->d, &resp);
    free(w->path);
    free(w->query);
    free(w);
}

static void notify(ctrl_visibility_server_t *s, verdict_t *v, verdict_state_t st, const char *why)
{
    waiter_t *w = v->waiters;

    v->waiters = NULL;
    v->nwaiters = 0;
    while (w != NULL) {
        waiter_t *next = w->next;
        waiter_answer(s, w, st, why);
        w = next;
    }
}

/* ---- lifetime ----------------------------------------------------------------------------- */

static void maybe_free(ctrl_visibility_server_t *s)
{
    if (!s->closing || !s->srv_closed || !s->timer_closed || s->outstanding > 0)
        return;
    if (s->on_closed != NULL)
        s->on_closed(s->on_closed_data);
    hook_tls_free(s->tls);
    for (size_t i = 0; i < s->nallowed; i++)
        free(s->allowed[i]);
    if (s->dir[0] != '\0') {
        unlink(s->ca_path);
        rmdir(s->dir);
    }
    free(s->host);
    free(s->cert_path);
    free(s->key_path);
    free(s->dns_name);
    hook_pem_fini(&s->given);
    free(s);
}

static void on_srv_closed(void *data)
{
    ctrl_visibility_server_t *s = data;

    s->srv_closed = true;
    maybe_free(s);
}

static void on_timer_closed(uv_handle_t *h)
{
    ctrl_visibility_server_t *s = container_of((uv_timer_t *)h, ctrl_visibility_server_t, retry);

    s->timer_closed = true;
    maybe_free(s);
}

void ctrl_visibility_server_close(ctrl_visibility_server_t *s, void (*on_closed)(void *data),
                                  void *data)
{
    size_t pos = 0;
    void *v;

    if (s == NULL || s->closing)
        return;
    s->closing = true;
    s->on_closed = on_closed;
    s->on_closed_data = data;
    while (util_hmap_next(&s->cache, &pos, NULL, &v)) {
        notify(s, v, V_REVIEWING, "shutting down");
        free(v);
    }
    util_hmap_fini(&s->cache);
    if (s->srv != NULL)
        hook_server_close(s->srv, on_srv_closed, s);
    else
        s->srv_closed = true;
    s->srv = NULL;
    uv_close((uv_handle_t *)&s->retry, on_timer_closed);
}

err_t ctrl_visibility_server_set_cert(ctrl_visibility_server_t *s, const char *cert,
                                      size_t cert_len, const char *key, size_t key_len,
                                      err_msg_t *msg)
{
    hook_pem_t p = {0};

    if (s->closing || s->cert_path != NULL)
        return err_set(msg, ERR_INVALID, "visibility API: the certificate comes from %s",
                       s->closing ? "nowhere (shutting down)" : s->cert_path);
    if (s->tls != NULL)
        return hook_tls_replace_pem(s->tls, cert, cert_len, key, key_len, msg);
    p.cert = strndup(cert, cert_len);
    p.key = strndup(key, key_len);
    if (p.cert == NULL || p.key == NULL) {
        hook_pem_fini(&p);
        return err_set(msg, ERR_NOMEM, "visibility API: out of memory");
    }
    p.cert_len = cert_len;
    p.key_len = key_len;
    hook_pem_fini(&s->given);
    s->given = p;
    return ERR_OK;
}

int ctrl_visibility_server_port(const ctrl_visibility_server_t *s)
{
    return s != NULL && s->srv != NULL ? hook_server_port(s->srv) : 0;
}

/* ---- authorization ------------------------------------------------------------------------ */

/* The verdict of review `r` for its key; its waiters are answered. */
static void on_review(const kube_result_t *res, void *data)
{
    review_t *r = data;
    ctrl_visibility_server_t *s = r->s;
    const json_t *status = json_object_get(res->body, "status");
    verdict_t *v;

    s->outstanding--;
    s->reviews--;
    v = s->closing ? NULL : util_hmap_get(&s->cache, r->key);
    if (v != NULL) {
        if (res->err != ERR_OK || res->canceled) {
            char why[400];
            snprintf(why, sizeof(why), "the SubjectAccessReview failed (%s): retry",
                     res->msg.text[0] ? res->msg.text : "no answer");
            v = util_hmap_del(&s->cache, r->key);
            notify(s, v, V_REVIEWING, why);
            free(v);
        } else {
            const char *reason = json_string_value(json_object_get(status, "reason"));
            bool ok = json_is_true(json_object_get(status, "allowed"));
            v->state = ok ? V_ALLOWED : V_DENIED;
            v->expires = uv_now(s->loop) + VERDICT_TTL_MS;
            snprintf(v->why, sizeof(v->why), "forbidden: the user may not get this%s%s",
                     reason && *reason ? ": " : "", reason ? reason : "");
            notify(s, v, v->state, v->why);
        }
    }
    free(r);
    maybe_free(s);
}

static bool send_review(ctrl_visibility_server_t *s, const char *key, const char *user,
                        const char *const *groups, size_t ngroups, const visibility_route_t *rt)
{
    json_t *g = json_array(), *sar;
    review_t *r = calloc(1, sizeof(*r));
    kube_req_t *req = NULL;
    bool ok = false;

    for (size_t i = 0; g != NULL && i < ngroups; i++)
        json_array_append_new(g, json_string(groups[i]));
    sar = json_pack("{s:s,s:s,s:{s:s,s:o,s:{s:s,s:s,s:s,s:s,s:s,s:s,s:s}}}", "apiVersion",
                    "authorization.k8s.io/v1", "kind", "SubjectAccessReview", "spec", "user", user,
                    "groups", g, "resourceAttributes", "group", "visibility.kueue.x-k8s.io",
                    "version", rt->version, "resource",
                    rt->local_queue ? "localqueues" : "clusterqueues", "subresource",
                    "pendingworkloads", "verb", "get", "name", rt->name, "namespace", rt->ns);
    if (r != NULL && sar != NULL) {
        r->s = s;
        snprintf(r->key, sizeof(r->key), "%s", key);
        if (kube_create(s->client, &access_reviews, NULL, sar, on_review, r, &req, NULL) ==
            ERR_OK) {
            kube_req_set_timeout(req, REVIEW_TIMEOUT_MS);
            s->outstanding++;
            s->reviews++;
            ok = true;
        }
    }
    json_decref(sar);
    if (!ok)
        free(r);
    return ok;
}

/* The cache key of (user, groups, the request's attributes): a SHA-256, so a long or hostile
 * user name costs a fixed 65 bytes. Each part length-prefixed: no value can fake a split. */
static void review_key(const char *user, const char *const *groups, size_t ngroups,
                       const visibility_route_t *rt, char hex[65])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    const char *parts[4] = {user, rt->local_queue ? "lq" : "cq", rt->ns, rt->name};

    hex[0] = '\0';
    if (md == NULL || EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return;
    }
    for (size_t i = 0; i < 4 + ngroups; i++) {
        const char *p = i < 4 ? parts[i] : groups[i - 4];
        size_t n = strlen(p);
        EVP_DigestUpdate(md, &n, sizeof(n));
        EVP_DigestUpdate(md, p, n);
    }
    EVP_DigestUpdate(md, rt->version, strlen(rt->version));
    EVP_DigestFinal_ex(md, out, &len);
    EVP_MD_CTX_free(md);
    for (unsigned int i = 0; i < len && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", out[i]);
}

/* Room for one more verdict: drop the expired ones no review is working on. */
static bool room(ctrl_visibility_server_t *s, uint64_t now)
{
    const char *key;
    void *v;

    if (util_hmap_len(&s->cache) < MAX_VERDICTS)
        return true;
    for (size_t pos = 0; util_hmap_next(&s->cache, &pos, &key, &v);) {
        verdict_t *e = v;
        if (e->state != V_REVIEWING && e->expires <= now)
            free(util_hmap_del(&s->cache, key));
    }
    return util_hmap_len(&s->cache) < MAX_VERDICTS;
}

/* Authorize the pending-workloads request and answer it, now (cached verdict) or deferred. */
static void authorize(ctrl_visibility_server_t *s, const hook_request_t *req,
                      const visibility_route_t *rt, const char *user, const char *const *groups,
                      size_t ngroups, hook_response_t *resp)
{
    uint64_t now = uv_now(s->loop);
    char key[65];
    verdict_t *v;
    waiter_t *w;

    review_key(user, groups, ngroups, rt, key);
    v = key[0] ? util_hmap_get(&s->cache, key) : NULL;
    if (v != NULL && v->state != V_REVIEWING && now >= v->expires) {
        free(util_hmap_del(&s->cache, key));
        v = NULL;
    }
    if (v != NULL && v->state == V_ALLOWED) {
        ctrl_visibility_serve(s->ctrl, req, resp);
        return;
    }
    if (v != NULL && v->state == V_DENIED) {
        status_failure(resp, 403, "Forbidden", v->why);
        return;
    }
    if (v == NULL) {
        if (key[0] == '\0' || s->reviews >= MAX_REVIEWS || !room(s, now)) {
            status_failure(resp, 503, "ServiceUnavailable",
                           "too many authorization reviews in flight: retry");
            return;
        }
        v = calloc(1, sizeof(*v));
        if (v == NULL || util_hmap_put(&s->cache, key, v, NULL) != ERR_OK) {
            free(v);
            status_failure(resp, 503, "ServiceUnavailable", "out of memory");
            return;
        }
        if (!send_review(s, key, user, groups, ngroups, rt)) {
            free(util_hmap_del(&s->cache, key));
            status_failure(resp, 503, "ServiceUnavailable",
                           "the SubjectAccessReview could not be sent: retry");
            return;
        }
    }
    if (v->nwaiters >= MAX_WAITERS) {
        status_failure(resp, 503, "ServiceUnavailable", "too many requests waiting: retry");
        return;
    }
    w = calloc(1, sizeof(*w));
    if (w != NULL) {
        w->path = strdup(req->path);
        w->query = strdup(req->query);
        w->d = w->path && w->query ? hook_request_defer(req) : NULL;
    }
    if (w == NULL || w->d == NULL) {
        if (w != NULL) {
            free(w->path);
            free(w->query);
        }
        free(w);
        status_failure(resp, 503, "ServiceUnavailable", "out of memory");
        return;
    }
    w->next = v->waiters;
    v->waiters = w;
    v->nwaiters++;
}

/* ---- requests ----------------------------------------------------------------------------- */

static bool cn_allowed(const ctrl_visibility_server_t *s, const char *cn)
{
    if (cn == NULL || cn[0] == '\0')
        return false;
    if (s->nallowed == 0)
        return true; /* any certificate the requestheader CA signed (Kubernetes' rule) */
    for (size_t i = 0; i < s->nallowed; i++)
        if (strcmp(s->allowed[i], cn) == 0)
            return true;
    return false;
}

static void on_request(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    ctrl_visibility_server_t *s = ud;
    const char *user = NULL, *groups[MAX_GROUPS];
    size_t ngroups = 0;
    visibility_route_t rt;
    err_msg_t msg = {{0}};

    if (!cn_allowed(s, req->client_cn)) {
        status_failure(resp, 401, "Unauthorized",
                       "the client certificate's common name is not in "
                       "requestheader-allowed-names");
        return;
    }
    if (strcmp(req->method, "GET") != 0 ||
        visibility_route(req->path, req->query, &rt, &msg) != ERR_OK || rt.discovery) {
        /* discovery, health, and every error answer need no user */
        ctrl_visibility_serve(s->ctrl, req, resp);
        return;
    }
    for (size_t i = 0; i < req->nheaders; i++) {
        for (size_t h = 0; h < s->nuser && user == NULL; h++)
            if (strcmp(req->headers[i].name, s->user_hdr[h]) == 0 && req->headers[i].value[0])
                user = req->headers[i].value;
        for (size_t h = 0; h < s->ngroup; h++)
            if (strcmp(req->headers[i].name, s->group_hdr[h]) == 0 && ngroups < MAX_GROUPS)
                groups[ngroups++] = req->headers[i].value;
    }
    if (user == NULL) {
        status_failure(resp, 401, "Unauthorized", "no user in the request headers");
        return;
    }
    authorize(s, req, &rt, user, groups, ngroups, resp);
}

/* ---- the requestheader configuration ------------------------------------------------------ */

/* Header names of a ConfigMap value (a JSON array of strings), lower-cased. */
static size_t header_names(const json_t *data, const char *key, char out[][64], size_t max)
{
    const char *text = json_string_value(json_object_get(data, key));
    json_t *arr = text ? util_json_loads(text, 0, NULL) : NULL;
    size_t n = 0, i;
    json_t *v;

    json_array_foreach(arr, i, v)
    {
        const char *h = json_string_value(v);
        if (h == NULL || strlen(h) >= 64 || n == max)
            continue;
        for (size_t k = 0; h[k]; k++)
            out[n][k] = (char)((h[k] >= 'A' && h[k] <= 'Z') ? h[k] + 32 : h[k]);
        out[n][strlen(h)] = '\0';
        n++;
    }
    json_decref(arr);
    return n;
}

static err_t listen_now(ctrl_visibility_server_t *s, const json_t *data, err_msg_t *msg)
{
    const char *ca = json_string_value(json_object_get(data, "requestheader-client-ca-file"));
    const char *names = json_string_value(json_object_get(data, "requestheader-allowed-names"));
    const char *tmp = getenv("TMPDIR");
    json_t *arr;
    hook_server_config_t hc = {0};
    FILE *f;
    err_t rc;
    size_t i;
    json_t *v;

    if (ca == NULL || ca[0] == '\0')
        return err_set(msg, ERR_NOT_FOUND,
                       "configmap kube-system/extension-apiserver-authentication has no "
                       "requestheader-client-ca-file: the API server runs without "
                       "--requestheader-client-ca-file, so API aggregation is off");
    snprintf(s->dir, sizeof(s->dir), "%s/sluice-visibility-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(s->dir) == NULL) {
        s->dir[0] = '\0';
        return err_set(msg, ERR_IO, "a temporary directory for the requestheader CA: %m");
    }
    snprintf(s->ca_path, sizeof(s->ca_path), "%s/requestheader-ca.crt", s->dir);
    f = fopen(s->ca_path, "w");
    if (f == NULL || fputs(ca, f) < 0 || fclose(f) != 0)
        return err_set(msg, ERR_IO, "%s: %m", s->ca_path);
    arr = names ? util_json_loads(names, 0, NULL) : NULL;
    json_array_foreach(arr, i, v)
    {
        if (json_string_value(v) != NULL && s->nallowed < 16 &&
            (s->allowed[s->nallowed] = strdup(json_string_value(v))) != NULL)
            s->nallowed++;
    }
    json_decref(arr);
    s->nuser = header_names(data, "requestheader-username-headers", s->user_hdr, MAX_HEADERS);
    s->ngroup = header_names(data, "requestheader-group-headers", s->group_hdr, MAX_HEADERS);
    if (s->cert_path != NULL) {
        rc = hook_tls_new_files_ca(s->cert_path, s->key_path, s->ca_path, &s->tls, msg);
    } else if (s->given.cert != NULL) {
        rc = hook_tls_new_pem_ca(s->given.cert, s->given.cert_len, s->given.key, s->given.key_len,
                                 s->ca_path, &s->tls, msg);
        hook_pem_fini(&s->given);
    } else {
        hook_pem_t cca = {0}, srv = {0};
        const char *dns[] = {s->dns_name, "localhost"}, *ips[] = {"127.0.0.1"};
        rc = hook_cert_ca("sluice-visibility-ca", 3650, &cca, msg);
        if (rc == ERR_OK)
            rc = hook_cert_serving(&cca, dns, 2, ips, 1, 365, &srv, msg);
        if (rc == ERR_OK)
            rc = hook_tls_new_pem_ca(srv.cert, srv.cert_len, srv.key, srv.key_len, s->ca_path,
                                     &s->tls, msg);
        hook_pem_fini(&cca);
        hook_pem_fini(&srv);
    }
    if (rc != ERR_OK)
        return rc;
    hc.host = s->host;
    hc.port = s->port;
    hc.tls = s->tls;
    hc.handler = on_request;
    hc.ud = s;
    hook_limits_apply(&s->limits, &hc);
    hc.max_body_bytes = 4096; /* GETs: no body */
    return hook_server_start(s->loop, &hc, &s->srv, msg);
}

static void read_config(ctrl_visibility_server_t *s);

static void on_retry(uv_timer_t *t)
{
    read_config(container_of(t, ctrl_visibility_server_t, retry));
}

static void on_config(const kube_result_t *res, void *data)
{
    ctrl_visibility_server_t *s = data;
    err_msg_t msg = {{0}};
    err_t rc;

    s->outstanding--;
    if (s->closing) {
        maybe_free(s);
        return;
    }
    if (res->err != ERR_OK) {
        slog(s, CTRL_LOG_ERROR,
             "visibility API: cannot read configmap kube-system/extension-apiserver-"
             "authentication (%s); grant it with a RoleBinding to "
             "extension-apiserver-authentication-reader (manifests/rbac.yaml); retrying in 10 s",
             res->msg.text);
        uv_timer_start(&s->retry, on_retry, RETRY_MS, 0);
        return;
    }
    rc = listen_now(s, json_object_get(res->body, "data"), &msg);
    if (rc != ERR_OK) {
        slog(s, CTRL_LOG_ERROR, "visibility API: %s; retrying in 10 s", msg.text);
        hook_tls_free(s->tls);
        s->tls = NULL;
        for (size_t i = 0; i < s->nallowed; i++)
            free(s->allowed[i]);
        s->nallowed = 0;
        if (s->dir[0] != '\0') {
            unlink(s->ca_path);
            rmdir(s->dir);
            s->dir[0] = '\0';
        }
        uv_timer_start(&s->retry, on_retry, RETRY_MS, 0);
        return;
    }
    slog(s, CTRL_LOG_INFO,
         "visibility API: serving visibility.kueue.x-k8s.io over HTTPS on %s:%d to the front "
         "proxy (%zu allowed names)",
         s->host, hook_server_port(s->srv), s->nallowed);
}

static void read_config(ctrl_visibility_server_t *s)
{
    err_msg_t msg = {{0}};

    if (kube_get(s->client, &configmaps, "kube-system", "extension-apiserver-authentication", NULL,
                 on_config, s, NULL, &msg) != ERR_OK) {
        slog(s, CTRL_LOG_ERROR, "visibility API: %s; retrying in 10 s", msg.text);
        uv_timer_start(&s->retry, on_retry, RETRY_MS, 0);
        return;
    }
    s->outstanding++;
}

err_t ctrl_visibility_server_start(kube_client_t *client, ctrl_t *ctrl,
                                   const ctrl_visibility_opts_t *opts, ctrl_log_fn log,
                                   void *log_data, ctrl_visibility_server_t **out, err_msg_t *msg)
{
    ctrl_visibility_server_t *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    s->loop = kube_client_loop(client);
    s->client = client;
    s->ctrl = ctrl;
    s->log = log;
    s->log_data = log_data;
    s->port = opts->port;
    if (opts->limits != NULL)
        s->limits = *opts->limits;
    else
        hook_limits_default(&s->limits);
    s->host = strdup(opts->host && opts->host[0] ? opts->host : "0.0.0.0");
    s->dns_name = strdup(opts->dns_name ? opts->dns_name : "localhost");
    s->cert_path = opts->cert_path ? strdup(opts->cert_path) : NULL;
    s->key_path = opts->key_path ? strdup(opts->key_path) : NULL;
    if (s->host == NULL || s->dns_name == NULL || (opts->cert_path && !s->cert_path) ||
        (opts->key_path && !s->key_path)) {
        free(s->host);
        free(s->dns_name);
        free(s->cert_path);
        free(s->key_path);
        free(s);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    util_hmap_init(&s->cache, 0);
    uv_timer_init(s->loop, &s->retry); /* cannot fail */
    read_config(s);
    *out = s;
    return ERR_OK;
}
