/* visibility_ca -- the visibility API's serving certificate from sluice's CA, and that CA in the
 * caBundle of its APIServices. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/visibility_ca.h"

#include "ctrl/ctrl_int.h"
#include "ctrl/visibility.h"
#include "hook/cert.h"
#include "util/base64.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CERT_DAYS       365
#define RENEW_BEFORE_S  (90LL * 24 * 3600)
#define RETRY_MS        10000
#define RECHECK_MS      3600000 /* an APIService found current is checked again after this */
#define MAX_APISERVICES 8

static const kube_resource_t apiservices = {"apiregistration.k8s.io", "v1", "apiservices", false};

struct ctrl_visibility_ca_s {
    uv_loop_t *loop;
    kube_client_t *client;         /* borrowed */
    ctrl_t *ctrl;                  /* borrowed */
    ctrl_visibility_server_t *srv; /* borrowed */
    ctrl_log_fn log;
    void *log_data;
    char *service, *ns; /* owned: the visibility Service */
    char *ca_crt;       /* owned: the CA PEM the served certificate was issued from */
    int64_t not_after;  /* the served certificate's expiry (Unix s) */
    char *ca_b64;       /* owned: the caBundle to inject */
    uint64_t gen;       /* counts changes of ca_b64 */
    unsigned done;      /* bit i: APIService of visibility_version(i) is current (or not ours) */
    unsigned busy;      /* bit i: its request is in flight */
    unsigned foreign;   /* bit i: said once that it belongs to another Service */
    uint64_t checked_ms[MAX_APISERVICES]; /* loop time each was last found current */
    size_t outstanding;                   /* requests whose callback has not run */
    uv_timer_t retry;
    bool closing, timer_closed;
};

typedef struct vreq_s {
    ctrl_visibility_ca_t *v;
    size_t i;     /* visibility_version(i) */
    uint64_t gen; /* v->gen when sent */
    bool foreign; /* the APIService names another Service */
    char other[300];
} vreq_t;

static void vlog(const ctrl_visibility_ca_t *v, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void vlog(const ctrl_visibility_ca_t *v, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (v->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    v->log(v->log_data, level, text);
}

static void apiservice_name(size_t i, char *buf, size_t n)
{
    snprintf(buf, n, "%s.visibility.kueue.x-k8s.io", visibility_version(i));
}

static size_t nversions(void)
{
    size_t n = 0;

    while (visibility_version(n) != NULL && n < MAX_APISERVICES)
        n++;
    return n;
}

static void maybe_free(ctrl_visibility_ca_t *v)
{
    if (!v->closing || !v->timer_closed || v->outstanding > 0)
        return;
    free(v->service);
    free(v->ns);
    free(v->ca_crt);
    free(v->ca_b64);
    free(v);
}

/* ---- the caBundle in the APIServices ------------------------------------------------------ */

static void inject(ctrl_visibility_ca_t *v);

static err_t apiservice_mutate(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    vreq_t *r = data;
    ctrl_visibility_ca_t *v = r->v;
    json_t *spec = json_object_get(obj, "spec");
    json_t *svc = json_object_get(spec, "service");
    const char *name = json_string_value(json_object_get(svc, "name"));
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    const char *have = json_string_value(json_object_get(spec, "caBundle"));

    *changed = false;
    if (!json_is_object(spec) || name == NULL || ns == NULL || strcmp(name, v->service) != 0 ||
        strcmp(ns, v->ns) != 0) {
        r->foreign = true;
        snprintf(r->other, sizeof(r->other), "%s/%s", ns ? ns : "", name ? name : "(none)");
        return ERR_OK;
    }
    if (have != NULL && strcmp(have, v->ca_b64) == 0 &&
        !json_is_true(json_object_get(spec, "insecureSkipTLSVerify")))
        return ERR_OK;
    /* The API server refuses insecureSkipTLSVerify beside a caBundle. */
    json_object_del(spec, "insecureSkipTLSVerify");
    if (json_object_set_new(spec, "caBundle", json_string(v->ca_b64)))
        return err_set(msg, ERR_NOMEM, "caBundle: out of memory");
    *changed = true;
    return ERR_OK;
}

static void on_retry(uv_timer_t *t)
{
    inject(container_of(t, ctrl_visibility_ca_t, retry));
}

static void on_apiservice(const kube_result_t *res, void *data)
{
    vreq_t *r = data;
    ctrl_visibility_ca_t *v = r->v;
    unsigned bit = 1u << r->i;
    char name[96], key[128];

    v->outstanding--;
    v->busy &= ~bit;
    if (v->closing || res->canceled) {
        free(r);
        maybe_free(v);
        return;
    }
    apiservice_name(r->i, name, sizeof(name));
    snprintf(key, sizeof(key), "visibility-cabundle:%s", name);
    ctrl_note_result(v->ctrl, res, "update", &apiservices, NULL);
    if (res->err == ERR_OK) {
        problems_clear(ctrl_problems(v->ctrl), key, (uint64_t)ctrl__now_ms());
        if (r->foreign && !(v->foreign & bit)) {
            v->foreign |= bit;
            vlog(v, CTRL_LOG_INFO,
                 "visibility API: APIService %s routes to Service %s, not %s/%s: its caBundle "
                 "is left alone",
                 name, r->other, v->ns, v->service);
        } else if (!r->foreign) {
            v->foreign &= ~bit;
            vlog(v, CTRL_LOG_DEBUG, "visibility API: caBundle of APIService %s is current", name);
        }
        if (r->gen == v->gen) {
            v->done |= bit;
            v->checked_ms[r->i] = uv_now(v->loop);
        } else {
            inject(v); /* the CA changed meanwhile */
        }
    } else if (res->err == ERR_NOT_FOUND) {
        /* Not installed (yet): looked for again at the next use of the CA (hourly). */
        problems_clear(ctrl_problems(v->ctrl), key, (uint64_t)ctrl__now_ms());
        vlog(v, CTRL_LOG_DEBUG, "visibility API: no APIService %s", name);
    } else {
        problems_set(ctrl_problems(v->ctrl), key, (uint64_t)ctrl__now_ms(),
                     "the caBundle of APIService %s is not up to date, so the API server cannot "
                     "verify sluice's visibility server (kubectl get --raw "
                     "/apis/visibility.kueue.x-k8s.io/... fails): %s",
                     name, res->msg.text);
        if (!uv_is_active((uv_handle_t *)&v->retry))
            uv_timer_start(&v->retry, on_retry, RETRY_MS, 0);
    }
    free(r);
}

/* Write the caBundle into every APIService not known to carry it (or not checked for an hour). */
static void inject(ctrl_visibility_ca_t *v)
{
    uint64_t now = uv_now(v->loop);
    size_t n = nversions();

    if (v->closing || v->ca_b64 == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned bit = 1u << i;
        char name[96];
        err_msg_t msg = {{0}};
        vreq_t *r;
        if (v->busy & bit)
            continue;
        if ((v->done & bit) && now - v->checked_ms[i] < RECHECK_MS)
            continue;
        r = calloc(1, sizeof(*r));
        if (r == NULL)
            break; /* again at the next use */
        r->v = v;
        r->i = i;
        r->gen = v->gen;
        apiservice_name(i, name, sizeof(name));
        if (kube_update_retry(v->client, &apiservices, NULL, name, NULL, apiservice_mutate, 0,
                              on_apiservice, r, &msg) != ERR_OK) {
            vlog(v, CTRL_LOG_ERROR, "visibility API: caBundle of APIService %s: %s", name,
                 msg.text);
            free(r);
            continue;
        }
        v->busy |= bit;
        v->outstanding++;
    }
}

/* ---- the serving certificate -------------------------------------------------------------- */

/* A serving certificate of CA (`crt`, `key`) for the visibility Service, given to the server. */
static err_t issue(ctrl_visibility_ca_t *v, const char *crt, size_t crt_len, const char *key,
                   size_t key_len, err_msg_t *msg)
{
    hook_pem_t ca = {0}, out = {0};
    char names[4][512];
    const char *dns[5], *ips[] = {"127.0.0.1"};
    int64_t not_after = 0;
    err_t rc;

    snprintf(names[0], sizeof(names[0]), "%s.%s.svc", v->service, v->ns); /* what is verified */
    snprintf(names[1], sizeof(names[1]), "%s.%s.svc.cluster.local", v->service, v->ns);
    snprintf(names[2], sizeof(names[2]), "%s.%s", v->service, v->ns);
    snprintf(names[3], sizeof(names[3]), "%s", v->service);
    dns[0] = names[0];
    dns[1] = names[1];
    dns[2] = names[2];
    dns[3] = names[3];
    dns[4] = "localhost";
    ca.cert = strndup(crt, crt_len);
    ca.key = strndup(key, key_len);
    if (ca.cert == NULL || ca.key == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    ca.cert_len = strlen(ca.cert);
    ca.key_len = strlen(ca.key);
    rc = hook_cert_serving(&ca, dns, ARRAY_SIZE(dns), ips, ARRAY_SIZE(ips), CERT_DAYS, &out, msg);
    if (rc == ERR_OK)
        rc = hook_cert_not_after(out.cert, out.cert_len, &not_after, msg);
    if (rc == ERR_OK)
        rc = ctrl_visibility_server_set_cert(v->srv, out.cert, out.cert_len, out.key, out.key_len,
                                             msg);
    if (rc == ERR_OK) {
        free(v->ca_crt);
        v->ca_crt = ca.cert;
        ca.cert = NULL;
        v->not_after = not_after;
    }
out:
    hook_pem_fini(&ca);
    hook_pem_fini(&out);
    return rc;
}

void ctrl_visibility_ca_use(void *data, const char *ca_crt, size_t crt_len, const char *ca_key,
                            size_t key_len)
{
    ctrl_visibility_ca_t *v = data;
    err_msg_t msg = {{0}};
    char *b64 = NULL;

    if (v->closing)
        return;
    if (v->ca_crt == NULL || strlen(v->ca_crt) != crt_len ||
        memcmp(v->ca_crt, ca_crt, crt_len) != 0 ||
        v->not_after - (int64_t)time(NULL) < RENEW_BEFORE_S) {
        if (issue(v, ca_crt, crt_len, ca_key, key_len, &msg) != ERR_OK) {
            problems_set(ctrl_problems(v->ctrl), "visibility-cert", (uint64_t)ctrl__now_ms(),
                         "the visibility API's serving certificate cannot be issued from sluice's "
                         "CA (the API server will not verify it): %s",
                         msg.text);
            return; /* again at the next use: the caBundle would not match what is served */
        }
        problems_clear(ctrl_problems(v->ctrl), "visibility-cert", (uint64_t)ctrl__now_ms());
        vlog(v, CTRL_LOG_INFO,
             "visibility API: serving a certificate of sluice's CA for %s.%s.svc (until %lld)",
             v->service, v->ns, (long long)v->not_after);
    }
    if (base64_encode(ca_crt, crt_len, &b64) != ERR_OK)
        return; /* out of memory: again at the next use */
    if (v->ca_b64 == NULL || strcmp(v->ca_b64, b64) != 0) {
        free(v->ca_b64);
        v->ca_b64 = b64;
        b64 = NULL;
        v->gen++;
        v->done = 0;
    }
    free(b64);
    inject(v);
}

bool ctrl_visibility_ca_done(const ctrl_visibility_ca_t *v)
{
    size_t n = nversions();

    return v != NULL && v->done == (1u << n) - 1;
}

/* ---- lifetime ----------------------------------------------------------------------------- */

ctrl_visibility_ca_t *ctrl_visibility_ca_new(kube_client_t *client, ctrl_t *ctrl,
                                             ctrl_visibility_server_t *srv, const char *service,
                                             const char *ns, ctrl_log_fn log, void *log_data)
{
    ctrl_visibility_ca_t *v = calloc(1, sizeof(*v));

    if (v == NULL)
        return NULL;
    v->service = strdup(service);
    v->ns = strdup(ns);
    if (v->service == NULL || v->ns == NULL) {
        free(v->service);
        free(v->ns);
        free(v);
        return NULL;
    }
    v->loop = kube_client_loop(client);
    v->client = client;
    v->ctrl = ctrl;
    v->srv = srv;
    v->log = log;
    v->log_data = log_data;
    uv_timer_init(v->loop, &v->retry); /* cannot fail */
    return v;
}

static void on_timer_closed(uv_handle_t *h)
{
    ctrl_visibility_ca_t *v = container_of((uv_timer_t *)h, ctrl_visibility_ca_t, retry);

    v->timer_closed = true;
    maybe_free(v);
}

void ctrl_visibility_ca_close(ctrl_visibility_ca_t *v)
{
    if (v == NULL || v->closing)
        return;
    v->closing = true;
    uv_close((uv_handle_t *)&v->retry, on_timer_closed);
}
