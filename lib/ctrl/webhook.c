/* webhook -- sluice's admission webhooks inside `sluice run`: TLS server, certificates, caBundle.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/webhook.h"

#include "ctrl/cond.h"
#include "ctrl/ctrl_int.h"
#include "ctrl/jobparent.h"
#include "hook/admission.h"
#include "hook/audit.h"
#include "hook/cert.h"
#include "hook/conversion.h"
#include "hook/server.h"
#include "hook/tls.h"
#include "jobs/kind_serving.h"
#include "kube/bucket.h"
#include "kube/kubeconfig.h"
#include "model/object.h"
#include "model/selector.h"
#include "util/base64.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 *   cert dir:      [timer 5 s] load/reload tls.crt+tls.key -> (first time) listen
 *   self-managed:  GET Secret -(404)-> generate -> POST  -(409)-> GET again
 *                             -(200, valid)-> use; (expiring) -> generate -> PUT
 *                  -> listen / replace certificate -> patch caBundle into both webhook
 *                  configurations and the conversion webhook of the three converted CRDs
 *                  -> [timer: 10 s until all done, then hourly] -> GET Secret ...
 *   Requests to /convert go to the conversion webhook, every other path to admission.
 */

#define CERT_DAYS       365
#define CA_DAYS         3650
#define ROTATE_BEFORE_S (90LL * 24 * 3600)

static const kube_resource_t secrets_res = {"", "v1", "secrets", true};
static const kube_resource_t vwc_res = {"admissionregistration.k8s.io", "v1",
                                        "validatingwebhookconfigurations", false};
static const kube_resource_t mwc_res = {"admissionregistration.k8s.io", "v1",
                                        "mutatingwebhookconfigurations", false};

struct ctrl_webhook_s {
    uv_loop_t *loop;
    kube_client_t *client;
    ctrl_t *ctrl;
    const ctrl_config_t *cfg;
    ctrl_webhook_opts_t opts;
    ctrl_log_fn log;
    void *log_data;
    hook_admission_env_t env;
    audit_log_t *audit; /* owned: the audit trail file, NULL when not configured */
    hook_tls_t *tls;
    hook_server_t *srv;
    uv_timer_t timer;
    char *ca_b64;       /* owned: caBundle to inject (self-managed) */
    bool bundles_done;  /* both configurations carry ca_b64 */
    unsigned crds_done; /* bit i: conversion_crds[i] is current */
    bool busy;          /* a Secret or configuration request is in flight */
    size_t inflight;
    kube_bucket_t event_budget; /* audit Events: 5 per second, burst 20 */
    uint64_t events_dropped;    /* audit Events over that budget */
    bool closing;
    bool timer_closed;
    bool srv_closed;
    void (*on_closed)(void *data);
    void *on_closed_data;
};

static void wlog(ctrl_webhook_t *w, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void wlog(ctrl_webhook_t *w, int level, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    if (level > (int)w->cfg->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (w->log != NULL)
        w->log(w->log_data, level, text);
    else
        fprintf(stderr, "%s\n", text);
}

/* The webhook certificate cannot be served (or renewed): a problem, said once and loudly, that
 * also keeps /readyz at 503 while nothing is served. */
static void cert_problem(ctrl_webhook_t *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void cert_problem(ctrl_webhook_t *w, const char *fmt, ...)
{
    char text[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    problems_set(ctrl_problems(w->ctrl), "webhook-cert", (uint64_t)ctrl__now_ms(), "%s%s",
                 w->srv == NULL ? "webhook certificate not ready, webhooks not served: "
                                : "webhook certificate not renewed (the current one is still "
                                  "served): ",
                 text);
}

/* The base64 text of `len` bytes (caller frees), NULL on out-of-memory. */
static char *to_base64(const void *data, size_t len)
{
    char *out = NULL;

    return base64_encode(data, len, &out) == ERR_OK ? out : NULL;
}

/* ---- what the admission handler asks about the cluster ------------------------------------ */

static bool env_lq_exists(void *ctx, const char *ns, const char *name)
{
    ctrl_webhook_t *w = ctx;
    return ctrl_get(w->ctrl, CTRL_LQ, ns, name) != NULL;
}

static bool env_wpc_exists(void *ctx, const char *name)
{
    ctrl_webhook_t *w = ctx;
    return ctrl_get(w->ctrl, CTRL_WPC, NULL, name) != NULL;
}

static bool env_afs(void *ctx)
{
    const ctrl_webhook_t *w = ctx;
    return w->cfg->kueue.afs;
}

static int env_cq_usage_based(void *ctx, const char *cq)
{
    ctrl_webhook_t *w = ctx;
    const object_t *o = ctrl_get(w->ctrl, CTRL_CQ, NULL, cq);
    return o == NULL ? -1 : o->u.cq.afs_usage_based;
}

static bool env_manage(void *ctx, const char *ns)
{
    ctrl_webhook_t *w = ctx;
    const object_t *o = ctrl_get(w->ctrl, CTRL_NAMESPACE, NULL, ns);
    kv_list_t kv = {0};
    bool ok;

    if (!w->cfg->kueue.manage_jobs_without_queue_name)
        return false;
    if (o != NULL)
        return selector_matches(&w->cfg->kueue.managed_jobs_namespace_selector,
                                &o->u.ns.meta.labels); /* the name label is added at decode */
    /* Not seen yet (created a moment ago): judged by its name alone. */
    ok = kv_list_set(&kv, "kubernetes.io/metadata.name", ns) == ERR_OK &&
         selector_matches(&w->cfg->kueue.managed_jobs_namespace_selector, &kv);
    kv_list_fini(&kv);
    return ok;
}

static bool env_framework(void *ctx, const char *framework)
{
    ctrl_webhook_t *w = ctx;
    return ctrl_framework_enabled(w->cfg, framework);
}

static bool env_owner_managed(void *ctx, const json_t *obj)
{
    ctrl_webhook_t *w = ctx;
    return jobparent_managed(w->cfg, obj, NULL, NULL);
}

/* Kueue's StatefulSet webhook on a scale-up from 0: the StatefulSet's Workload (its name from
 * the StatefulSet's name and uid) exists and is not on hold. */
static bool env_serving_workload_left(void *ctx, const char *ns, const char *name, const char *uid)
{
    ctrl_webhook_t *w = ctx;
    char wname[JOBS_SERVING_NAME_BUF], key[CTRL_KEY_MAX];
    const ctrl_wl_t *wl;
    json_t *sts = json_pack("{s:{s:s,s:s?}}", "metadata", "name", name, "uid", uid);
    err_t rc = sts != NULL ? jobs_serving_workload_name(&jobs_kind_statefulset, sts, 0, wname,
                                                        sizeof(wname), NULL)
                           : ERR_NOMEM;

    json_decref(sts);
    if (rc != ERR_OK || ns == NULL)
        return false;
    snprintf(key, sizeof(key), "%s/%s", ns, wname);
    wl = ctrl__wl(w->ctrl, key);
    return wl != NULL && !ctrl_wl_on_hold(wl);
}

static bool env_cq_usage(void *ctx, const char *cq, const char *flavor, const char *resource,
                         quantity_t *out)
{
    ctrl_webhook_t *w = ctx;
    sched_fr_usage_t u;

    if (sched_cq_fr_usage(ctrl_engine(w->ctrl), cq, flavor, resource, &u, NULL) != ERR_OK)
        return false;
    *out = u.usage;
    return true;
}

/* ---- serving ------------------------------------------------------------------------------ */

/* /convert is the CRD conversion webhook; every other path is an admission webhook. */
static void on_request(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    ctrl_webhook_t *w = ud;

    if (strcmp(req->path, HOOK_CONVERSION_PATH) == 0)
        hook_conversion_handler(NULL, req, resp);
    else
        hook_admission_handler(&w->env, req, resp);
    ctrl_metrics_webhook(w->ctrl, req->path, resp->status ? resp->status : 200,
                         resp->owned_body ? resp->owned_body : resp->body, resp->body_len);
}

static err_t listen_now(ctrl_webhook_t *w, err_msg_t *msg)
{
    hook_server_config_t sc = {0};

    if (w->srv != NULL)
        return ERR_OK;
    sc.host = w->cfg->webhook_host[0] ? w->cfg->webhook_host : "0.0.0.0";
    sc.port = w->cfg->webhook_port;
    sc.tls = w->tls;
    sc.handler = on_request;
    sc.ud = w;
    hook_limits_apply(&w->cfg->server_limits, &sc);
    if (hook_server_start(w->loop, &sc, &w->srv, msg) != ERR_OK)
        return err_prefix(msg, ERR_IO, "webhook server on %s:%d: ", sc.host, sc.port);
    wlog(w, CTRL_LOG_INFO, "webhooks: serving TLS on %s:%d", sc.host, hook_server_port(w->srv));
    problems_clear(ctrl_problems(w->ctrl), "webhook-cert", (uint64_t)ctrl__now_ms());
    return ERR_OK;
}

/* Serve `cert`/`key` PEM (new context or hot replacement). */
static err_t use_pem(ctrl_webhook_t *w, const char *cert, size_t clen, const char *key, size_t klen,
                     err_msg_t *msg)
{
    err_t rc = w->tls == NULL ? hook_tls_new_pem_ca(cert, clen, key, klen,
                                                    w->cfg->webhook_client_ca, &w->tls, msg)
                              : hook_tls_replace_pem(w->tls, cert, clen, key, klen, msg);
    return rc != ERR_OK ? rc : listen_now(w, msg);
}

/* ---- cert dir ----------------------------------------------------------------------------- */

static void cert_dir_tick(ctrl_webhook_t *w)
{
    char crt[1024], key[1024];
    err_msg_t msg = {{0}};
    int changed = 0;

    if (w->tls == NULL) {
        snprintf(crt, sizeof(crt), "%s/tls.crt", w->cfg->cert_dir);
        snprintf(key, sizeof(key), "%s/tls.key", w->cfg->cert_dir);
        if (hook_tls_new_files_ca(crt, key, w->cfg->webhook_client_ca, &w->tls, &msg) != ERR_OK) {
            cert_problem(w, "waiting for tls.crt and tls.key in %s (--cert-dir): %s",
                         w->cfg->cert_dir, msg.text);
            return;
        }
        if (listen_now(w, &msg) != ERR_OK)
            cert_problem(w, "%s", msg.text);
        return;
    }
    if (hook_tls_reload_files(w->tls, &changed, &msg) != ERR_OK) {
        cert_problem(w, "reloading the certificates in %s: %s", w->cfg->cert_dir, msg.text);
    } else {
        problems_clear(ctrl_problems(w->ctrl), "webhook-cert", (uint64_t)ctrl__now_ms());
        if (changed)
            wlog(w, CTRL_LOG_INFO, "webhooks: certificates in %s reloaded", w->cfg->cert_dir);
    }
}

/* ---- self-managed: the Secret ------------------------------------------------------------- */

static void secret_sync(ctrl_webhook_t *w);

typedef struct wreq_s {
    ctrl_webhook_t *w;
    int what; /* 0 GET secret, 1 create/update secret, 2 validating, 3 mutating, 4 audit event,
               * WHAT_CRD + i conversion caBundle of conversion_crds[i] */
} wreq_t;

static wreq_t *wreq(ctrl_webhook_t *w, int what)
{
    wreq_t *r = calloc(1, sizeof(*r));

    if (r != NULL) {
        r->w = w;
        r->what = what;
        w->inflight++;
    }
    return r;
}

static void maybe_free(ctrl_webhook_t *w);

static void wreq_free(wreq_t *r)
{
    ctrl_webhook_t *w = r->w;

    w->inflight--;
    free(r);
    if (w->closing)
        maybe_free(w);
}

/* ---- audit trail -------------------------------------------------------------------------- */

static void on_audit_event_done(const kube_result_t *res, void *data);

/* Post a core/v1 Event on the audited object (cluster-scoped objects: namespace "default", as
 * Kubernetes does). The object may not exist yet (CREATE): the Event names it anyway. */
static void audit_event(ctrl_webhook_t *w, const hook_audit_event_t *ev, json_t *rec)
{
    static const kube_resource_t events = {"", "v1", "events", true};
    json_t *obj = ev->object ? ev->object : ev->old_object;
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    const char *uid = json_string_value(json_object_get(json_object_get(obj, "metadata"), "uid"));
    const char *ns = ev->namespace ? ev->namespace : "default";
    char *text = NULL;
    char gen[300], ts[32];
    json_t *body;
    wreq_t *r;

    /* The Events are a courtesy beside the audit log: a flood of audited requests (every
     * replica serves webhooks) must not turn into a flood of writes. Beyond the budget they
     * are dropped and counted; the audit log itself keeps every record. */
    if (kube_bucket_take(&w->event_budget, uv_now(w->loop)) != 0) {
        w->events_dropped++;
        return;
    }
    text = audit_event_message(rec);
    if (text == NULL || ev->name == NULL)
        goto out;
    snprintf(gen, sizeof(gen), "%.240s.", ev->name);
    cond_time_str(ctrl__now_ms() / 1000, ts, sizeof(ts));
    body = json_pack(
        "{s:{s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s},s:s,s:s,s:s,s:{s:s},s:s,s:s,s:i,s:s}", "metadata",
        "generateName", gen, "namespace", ns, "involvedObject", "apiVersion", api ? api : "",
        "kind", ev->kind, "name", ev->name, "namespace", ev->namespace ? ev->namespace : "", "uid",
        uid ? uid : "", "reason", ev->allowed ? "AuditedChange" : "AuditedRejection", "message",
        text, "type", ev->allowed ? "Normal" : "Warning", "source", "component", "sluice",
        "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent", "sluice");
    r = body ? wreq(w, 4) : NULL;
    if (r != NULL &&
        kube_create(w->client, &events, ns, body, on_audit_event_done, r, NULL, NULL) != ERR_OK)
        wreq_free(r);
    json_decref(body);
out:
    free(text);
}

static void on_audit_event_done(const kube_result_t *res, void *data)
{
    wreq_t *r = data;

    if (res->err != ERR_OK && !res->canceled)
        wlog(r->w, CTRL_LOG_INFO, "audit event: %s", res->msg.text);
    wreq_free(r);
}

/* The admission handler's audit sink: one JSON line in the audit log and an Event. */
static void env_audit(void *ctx, const hook_audit_event_t *ev)
{
    ctrl_webhook_t *w = ctx;
    json_t *rec = NULL;
    err_msg_t msg;

    if (audit_record_build(ev, ctrl__now_ms(), &rec) != ERR_OK) {
        wlog(w, CTRL_LOG_ERROR, "audit: out of memory: %s %s/%s not recorded", ev->operation,
             ev->kind, ev->name ? ev->name : "");
        return;
    }
    if (rec == NULL)
        return; /* nothing audited changed */
    if (w->audit != NULL && audit_log_write(w->audit, rec, &msg) != ERR_OK)
        wlog(w, CTRL_LOG_ERROR, "audit: %s", msg.text);
    if (!w->closing)
        audit_event(w, ev, rec);
    json_decref(rec);
}

/* A data[key] PEM of a Secret, decoded (owned by the caller), or an empty blob. */
static kube_blob_t secret_pem(json_t *secret, const char *key)
{
    kube_blob_t b = {0};
    const char *v = json_string_value(json_object_get(json_object_get(secret, "data"), key));

    if (v != NULL && kube_base64_decode(v, strlen(v), &b, NULL) != ERR_OK)
        memset(&b, 0, sizeof(b));
    return b;
}

static void on_bundle(const kube_result_t *res, void *data);
static void patch_crd_bundles(ctrl_webhook_t *w);

static err_t bundle_mutate(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    wreq_t *r = data;
    json_t *hook;
    size_t i;

    (void)msg;
    *changed = false;
    json_array_foreach(json_object_get(obj, "webhooks"), i, hook)
    {
        json_t *cc = json_object_get(hook, "clientConfig");
        const char *have = json_string_value(json_object_get(cc, "caBundle"));
        if (!json_is_object(cc) || (have != NULL && strcmp(have, r->w->ca_b64) == 0))
            continue;
        if (json_object_set_new(cc, "caBundle", json_string(r->w->ca_b64)))
            return err_set(msg, ERR_NOMEM, "caBundle: out of memory");
        *changed = true;
    }
    return ERR_OK;
}

static void patch_bundles(ctrl_webhook_t *w)
{
    char name[512];
    err_msg_t msg = {{0}};

    for (int what = 2; what <= 3; what++) {
        wreq_t *r = wreq(w, what);
        if (r == NULL)
            return;
        snprintf(name, sizeof(name), "%s-%s-webhook-configuration", w->cfg->webhook_config_prefix,
                 what == 2 ? "validating" : "mutating");
        if (kube_update_retry(w->client, what == 2 ? &vwc_res : &mwc_res, NULL, name, NULL,
                              bundle_mutate, 0, on_bundle, r, &msg) != ERR_OK) {
            wlog(w, CTRL_LOG_ERROR, "webhooks: caBundle of %s: %s", name, msg.text);
            wreq_free(r);
        }
    }
    patch_crd_bundles(w);
}

static void on_bundle(const kube_result_t *res, void *data)
{
    wreq_t *r = data;
    ctrl_webhook_t *w = r->w;
    const char *kind = r->what == 2 ? "validating" : "mutating";
    char key[64];

    /* One problem per configuration: the two fail and recover independently. */
    snprintf(key, sizeof(key), "webhook-cabundle:%s", kind);
    if (!res->canceled) {
        ctrl_note_result(w->ctrl, res, "update", r->what == 2 ? &vwc_res : &mwc_res, NULL);
        if (res->err == ERR_OK) {
            wlog(w, CTRL_LOG_DEBUG, "webhooks: caBundle in the %s configuration is current", kind);
            problems_clear(ctrl_problems(w->ctrl), key, (uint64_t)ctrl__now_ms());
            if (r->what == 3)
                w->bundles_done = true;
        } else {
            w->bundles_done = false;
            problems_set(ctrl_problems(w->ctrl), key, (uint64_t)ctrl__now_ms(),
                         "the caBundle of the %s webhook configuration is not up to date, so the "
                         "API server cannot verify sluice's webhooks: %s",
                         kind, res->msg.text);
        }
    }
    wreq_free(r);
}

/* ---- self-managed: the conversion webhook's caBundle in the CRDs --------------------------- */

/* The CRDs whose v1beta1 sluice converts (spec.conversion.webhook.clientConfig -> /convert).
 * Only a clientConfig that calls sluice is touched (hook_conversion_inject_ca): its Service, or
 * a url naming one of the certificate's extra IPs/DNS names and the webhook port (a test or
 * out-of-cluster set-up). A CRD that is absent or converts elsewhere needs nothing. */
static const kube_resource_t crd_res = {"apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                        false};
static const char *const conversion_crds[] = {
    "clusterqueues.kueue.x-k8s.io", "localqueues.kueue.x-k8s.io", "workloads.kueue.x-k8s.io"};
#define CRDS_ALL ((1u << ARRAY_SIZE(conversion_crds)) - 1)
#define WHAT_CRD 5 /* wreq_t.what of conversion_crds[i] is WHAT_CRD + i */

static err_t crd_bundle_mutate(json_t *obj, void *data, bool *changed, err_msg_t *msg)
{
    ctrl_webhook_t *w = ((wreq_t *)data)->w;
    const char *hosts[32];
    hook_conversion_target_t t = {.ca_bundle = w->ca_b64,
                                  .service = w->cfg->webhook_service,
                                  .namespace = w->cfg->namespace,
                                  .port = w->srv != NULL ? hook_server_port(w->srv)
                                                         : w->cfg->webhook_port,
                                  .hosts = hosts};

    for (size_t i = 0; i < w->opts.nips && t.nhosts < ARRAY_SIZE(hosts); i++)
        hosts[t.nhosts++] = w->opts.ips[i];
    for (size_t i = 0; i < w->opts.ndns && t.nhosts < ARRAY_SIZE(hosts); i++)
        hosts[t.nhosts++] = w->opts.dns[i];
    return hook_conversion_inject_ca(obj, &t, changed, msg);
}

static void on_crd_bundle(const kube_result_t *res, void *data)
{
    wreq_t *r = data;
    ctrl_webhook_t *w = r->w;
    unsigned bit = 1u << (r->what - WHAT_CRD);
    const char *crd = conversion_crds[r->what - WHAT_CRD];

    if (!res->canceled) {
        char key[96];
        snprintf(key, sizeof(key), "conversion-cabundle:%s", crd);
        ctrl_note_result(w->ctrl, res, "update", &crd_res, NULL);
        if (res->err == ERR_OK || res->err == ERR_NOT_FOUND) {
            wlog(w, CTRL_LOG_DEBUG, "webhooks: conversion caBundle of CRD %s is current%s", crd,
                 res->err == ERR_NOT_FOUND ? " (CRD absent)" : "");
            w->crds_done |= bit;
            problems_clear(ctrl_problems(w->ctrl), key, (uint64_t)ctrl__now_ms());
        } else {
            w->crds_done &= ~bit;
            problems_set(ctrl_problems(w->ctrl), key, (uint64_t)ctrl__now_ms(),
                         "the caBundle of the conversion webhook in CRD %s is not up to date, so "
                         "the API server cannot convert v1beta1 reads and writes: %s",
                         crd, res->msg.text);
        }
    }
    wreq_free(r);
}

static void patch_crd_bundles(ctrl_webhook_t *w)
{
    err_msg_t msg = {{0}};

    for (size_t i = 0; i < ARRAY_SIZE(conversion_crds); i++) {
        wreq_t *r = wreq(w, WHAT_CRD + (int)i);
        if (r == NULL)
            return;
        if (kube_update_retry(w->client, &crd_res, NULL, conversion_crds[i], NULL,
                              crd_bundle_mutate, 0, on_crd_bundle, r, &msg) != ERR_OK) {
            wlog(w, CTRL_LOG_ERROR, "webhooks: caBundle of CRD %s: %s", conversion_crds[i],
                 msg.text);
            wreq_free(r);
        }
    }
}

/* Generate CA (unless `ca` holds a usable one) and serving certificate into a Secret body. */
static json_t *generate(ctrl_webhook_t *w, const hook_pem_t *ca_in, const char *old_bundle,
                        err_msg_t *msg)
{
    hook_pem_t ca = {0}, srv = {0};
    const char *dns[16];
    char names[4][512];
    size_t ndns = 0;
    json_t *secret = NULL;
    char *b[4] = {0};
    const char *svc = w->cfg->webhook_service, *ns = w->cfg->namespace;

    snprintf(names[0], sizeof(names[0]), "%s", svc);
    snprintf(names[1], sizeof(names[1]), "%s.%s", svc, ns);
    snprintf(names[2], sizeof(names[2]), "%s.%s.svc", svc, ns);
    snprintf(names[3], sizeof(names[3]), "%s.%s.svc.cluster.local", svc, ns);
    dns[ndns++] = names[2]; /* the subject CN: what the API server dials */
    dns[ndns++] = names[0];
    dns[ndns++] = names[1];
    dns[ndns++] = names[3];
    for (size_t i = 0; i < w->opts.ndns && ndns < 16; i++)
        dns[ndns++] = w->opts.dns[i];
    if (ca_in != NULL && ca_in->cert != NULL) {
        ca.cert = strdup(ca_in->cert);
        ca.cert_len = ca_in->cert_len;
        ca.key = strdup(ca_in->key);
        ca.key_len = ca_in->key_len;
        if (ca.cert == NULL || ca.key == NULL) {
            err_set(msg, ERR_NOMEM, "webhooks: out of memory");
            goto out;
        }
    } else if (hook_cert_ca("sluice-ca", CA_DAYS, &ca, msg) != ERR_OK) {
        goto out;
    } else if (old_bundle != NULL) {
        /* A new CA: ca.crt (hence the caBundle) keeps the old CA beside it, so the other
         * replica's serving certificate, signed by the old CA, verifies until it re-reads the
         * Secret (hourly) -- and beyond, until the old CA expires or the next rotation. */
        char *bundle = NULL;
        if (hook_cert_bundle(ca.cert, old_bundle, (int64_t)time(NULL), &bundle, msg) != ERR_OK)
            goto out;
        free(ca.cert);
        ca.cert = bundle;
        ca.cert_len = strlen(bundle);
    }
    if (hook_cert_serving(&ca, dns, ndns, w->opts.ips, w->opts.nips, CERT_DAYS, &srv, msg) !=
        ERR_OK)
        goto out;
    b[0] = to_base64((const unsigned char *)ca.cert, ca.cert_len);
    b[1] = to_base64((const unsigned char *)ca.key, ca.key_len);
    b[2] = to_base64((const unsigned char *)srv.cert, srv.cert_len);
    b[3] = to_base64((const unsigned char *)srv.key, srv.key_len);
    if (b[0] && b[1] && b[2] && b[3])
        secret = json_pack("{s:s,s:s,s:{s:s,s:s},s:s,s:{s:s,s:s,s:s,s:s}}", "apiVersion", "v1",
                           "kind", "Secret", "metadata", "name", w->cfg->webhook_secret,
                           "namespace", ns, "type", "kubernetes.io/tls", "data", "ca.crt", b[0],
                           "ca.key", b[1], "tls.crt", b[2], "tls.key", b[3]);
    if (secret == NULL)
        err_set(msg, ERR_NOMEM, "webhooks: out of memory");
out:
    for (int i = 0; i < 4; i++)
        free(b[i]);
    hook_pem_fini(&ca);
    hook_pem_fini(&srv);
    return secret;
}

/* Serve the certificates of `secret` and publish its CA; ERR_INVALID when incomplete. */
static err_t adopt(ctrl_webhook_t *w, json_t *secret, err_msg_t *msg)
{
    kube_blob_t ca = secret_pem(secret, "ca.crt"), crt = secret_pem(secret, "tls.crt");
    kube_blob_t key = secret_pem(secret, "tls.key"), cakey = secret_pem(secret, "ca.key");
    err_t rc = ERR_OK;
    char *b64 = NULL;

    if (ca.data == NULL || crt.data == NULL || key.data == NULL) {
        rc = err_set(msg, ERR_INVALID, "Secret %s/%s: ca.crt, tls.crt or tls.key missing",
                     w->cfg->namespace, w->cfg->webhook_secret);
        goto out;
    }
    rc = use_pem(w, (const char *)crt.data, crt.len, (const char *)key.data, key.len, msg);
    if (rc != ERR_OK)
        goto out;
    problems_clear(ctrl_problems(w->ctrl), "webhook-cert", (uint64_t)ctrl__now_ms());
    b64 = to_base64(ca.data, ca.len);
    if (b64 == NULL) {
        rc = err_set(msg, ERR_NOMEM, "webhooks: out of memory");
        goto out;
    }
    if (w->ca_b64 == NULL || strcmp(w->ca_b64, b64) != 0) {
        free(w->ca_b64);
        w->ca_b64 = b64;
        b64 = NULL;
        w->bundles_done = false;
        w->crds_done = 0;
    }
    if (w->opts.on_ca != NULL && cakey.data != NULL)
        w->opts.on_ca(w->opts.on_ca_data, (const char *)ca.data, ca.len, (const char *)cakey.data,
                      cakey.len);
out:
    free(b64);
    free(cakey.data);
    free(ca.data);
    free(crt.data);
    free(key.data);
    return rc;
}

static void on_secret_written(const kube_result_t *res, void *data)
{
    wreq_t *r = data;
    ctrl_webhook_t *w = r->w;
    err_msg_t msg = {{0}};

    w->busy = false;
    if (!res->canceled && !w->closing) {
        if (res->err == ERR_OK) {
            wlog(w, CTRL_LOG_INFO, "webhooks: certificates written to Secret %s/%s",
                 w->cfg->namespace, w->cfg->webhook_secret);
            if (adopt(w, res->body, &msg) != ERR_OK)
                cert_problem(w, "%s", msg.text);
            else
                patch_bundles(w);
        } else if (res->err == ERR_EXISTS || res->err == ERR_CONFLICT) {
            /* Another replica wrote it first: use theirs. */
            secret_sync(w);
        } else {
            ctrl_note_result(w->ctrl, res, "create or update", &secrets_res, NULL);
            cert_problem(w, "writing Secret %s/%s: %s", w->cfg->namespace, w->cfg->webhook_secret,
                         res->msg.text);
        }
    }
    wreq_free(r);
}

static void on_secret(const kube_result_t *res, void *data)
{
    wreq_t *r = data;
    ctrl_webhook_t *w = r->w;
    err_msg_t msg = {{0}};
    json_t *body = NULL;
    hook_pem_t ca = {0};
    char *old_bundle = NULL; /* owned: the Secret's ca.crt before a rotation */
    bool create = res->err == ERR_NOT_FOUND;

    w->busy = false;
    if (res->canceled || w->closing || (res->err != ERR_OK && !create)) {
        if (!res->canceled && !w->closing) {
            ctrl_note_result(w->ctrl, res, "get", &secrets_res, NULL);
            cert_problem(w, "reading Secret %s/%s: %s", w->cfg->namespace, w->cfg->webhook_secret,
                         res->msg.text);
        }
        wreq_free(r);
        return;
    }
    if (!create) {
        kube_blob_t crt = secret_pem(res->body, "tls.crt");
        int64_t not_after = 0;
        bool fresh =
            crt.data != NULL &&
            hook_cert_not_after((const char *)crt.data, crt.len, &not_after, NULL) == ERR_OK &&
            not_after - (int64_t)time(NULL) > ROTATE_BEFORE_S;
        free(crt.data);
        if (fresh && adopt(w, res->body, &msg) == ERR_OK) {
            if (!w->bundles_done || w->crds_done != CRDS_ALL)
                patch_bundles(w);
            wreq_free(r);
            return;
        }
        /* Expiring or unusable: rotate, keeping a CA that still has a long life. */
        {
            kube_blob_t cac = secret_pem(res->body, "ca.crt"),
                        cak = secret_pem(res->body, "ca.key");
            old_bundle = cac.data != NULL ? strdup((const char *)cac.data) : NULL;
            int64_t ca_after = 0;
            if (cac.data != NULL && cak.data != NULL &&
                hook_cert_not_after((const char *)cac.data, cac.len, &ca_after, NULL) == ERR_OK &&
                ca_after - (int64_t)time(NULL) > 2 * CERT_DAYS * 24LL * 3600) {
                ca.cert = (char *)cac.data;
                ca.cert_len = cac.len;
                ca.key = (char *)cak.data;
                ca.key_len = cak.len;
            } else {
                free(cac.data);
                free(cak.data);
            }
        }
        wlog(w, CTRL_LOG_INFO, "webhooks: rotating the serving certificate in Secret %s/%s",
             w->cfg->namespace, w->cfg->webhook_secret);
    }
    body = generate(w, &ca, old_bundle, &msg);
    hook_pem_fini(&ca);
    free(old_bundle);
    if (body == NULL) {
        cert_problem(w, "%s", msg.text);
        wreq_free(r);
        return;
    }
    r->what = 1;
    w->busy = true;
    if (!create)
        json_object_set(json_object_get(body, "metadata"), "resourceVersion",
                        json_object_get(json_object_get(res->body, "metadata"), "resourceVersion"));
    if ((create ? kube_create(w->client, &secrets_res, w->cfg->namespace, body, on_secret_written,
                              r, NULL, &msg)
                : kube_update(w->client, &secrets_res, w->cfg->namespace, w->cfg->webhook_secret,
                              NULL, body, on_secret_written, r, NULL, &msg)) != ERR_OK) {
        w->busy = false;
        wlog(w, CTRL_LOG_ERROR, "webhooks: %s", msg.text);
        wreq_free(r);
    }
    json_decref(body);
}

static void secret_sync(ctrl_webhook_t *w)
{
    wreq_t *r;
    err_msg_t msg = {{0}};

    if (w->busy || w->closing)
        return;
    r = wreq(w, 0);
    if (r == NULL)
        return;
    w->busy = true;
    if (kube_get(w->client, &secrets_res, w->cfg->namespace, w->cfg->webhook_secret, NULL,
                 on_secret, r, NULL, &msg) != ERR_OK) {
        w->busy = false;
        wlog(w, CTRL_LOG_ERROR, "webhooks: %s", msg.text);
        wreq_free(r);
    }
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t)
{
    ctrl_webhook_t *w = container_of(t, ctrl_webhook_t, timer);
    err_msg_t camsg = {{0}};

    /* Mutual TLS fails closed: nothing is served before the client CA can be read (and a
     * Secret is never rotated because of it). */
    if (w->tls == NULL && w->cfg->webhook_client_ca != NULL &&
        hook_tls_client_ca_check(w->cfg->webhook_client_ca, &camsg) != ERR_OK) {
        cert_problem(w, "webhook client CA %s (--webhook-client-ca): %s", w->cfg->webhook_client_ca,
                     camsg.text);
        uv_timer_start(&w->timer, on_timer, 5000, 0);
        return;
    }
    if (w->cfg->cert_dir != NULL) {
        cert_dir_tick(w);
        uv_timer_start(&w->timer, on_timer, 5000, 0);
        return;
    }
    secret_sync(w);
    if (w->tls != NULL) {
        /* Mutual TLS: a rotated client CA file is picked up here (with --cert-dir, by the
         * reload of the files). A broken one keeps the context in use, which still checks. */
        err_msg_t msg = {{0}};
        int changed = 0;
        if (hook_tls_reload_client_ca(w->tls, &changed, &msg) != ERR_OK)
            cert_problem(w, "webhook client CA %s: %s", w->cfg->webhook_client_ca, msg.text);
        else if (changed)
            wlog(w, CTRL_LOG_INFO, "webhooks: client CA %s reloaded", w->cfg->webhook_client_ca);
    }
    uv_timer_start(&w->timer, on_timer,
                   w->srv != NULL && w->bundles_done && w->crds_done == CRDS_ALL ? 3600000 : 10000,
                   0);
}

err_t ctrl_webhook_start(kube_client_t *client, ctrl_t *ctrl, const ctrl_config_t *cfg,
                         const ctrl_webhook_opts_t *opts, ctrl_log_fn log, void *log_data,
                         ctrl_webhook_t **out, err_msg_t *msg)
{
    ctrl_webhook_t *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return err_set(msg, ERR_NOMEM, "webhooks: out of memory");
    if (cfg->cert_dir == NULL && !cfg->internal_certs) {
        free(w);
        return err_set(msg, ERR_INVALID,
                       "webhooks: no certificate directory and "
                       "internalCertManagement disabled");
    }
    w->loop = kube_client_loop(client);
    w->client = client;
    w->ctrl = ctrl;
    w->cfg = cfg;
    if (opts != NULL)
        w->opts = *opts;
    w->log = log;
    w->log_data = log_data;
    w->env.local_queue_exists = env_lq_exists;
    w->env.wpc_exists = env_wpc_exists;
    w->env.manage_without_queue_name = env_manage;
    w->env.afs_enabled = env_afs;
    w->env.cq_usage_based = env_cq_usage_based;
    w->env.cq_usage = env_cq_usage;
    w->env.framework_enabled = env_framework;
    w->env.owner_managed = env_owner_managed;
    w->env.serving_workload_left = env_serving_workload_left;
    w->env.audit = env_audit;
    w->env.callers_authenticated = cfg->webhook_client_ca != NULL; /* mutual TLS */
    w->env.ctx = w;
    if (cfg->audit_log != NULL &&
        audit_log_open(cfg->audit_log, cfg->audit_max_bytes, 5, &w->audit, msg) != ERR_OK) {
        free(w);
        return ERR_IO;
    }
    kube_bucket_init(&w->event_budget, 5000, 20, uv_now(w->loop));
    uv_timer_init(w->loop, &w->timer);
    uv_timer_start(&w->timer, on_timer, 0, 0);
    *out = w;
    return ERR_OK;
}

bool ctrl_webhook_ready(const ctrl_webhook_t *w)
{
    return w != NULL && w->srv != NULL;
}

bool ctrl_webhook_accepting(const ctrl_webhook_t *w)
{
    return w == NULL || w->srv == NULL || hook_server_accepting(w->srv);
}

int ctrl_webhook_port(const ctrl_webhook_t *w)
{
    return w != NULL && w->srv != NULL ? hook_server_port(w->srv) : 0;
}

static void maybe_free(ctrl_webhook_t *w)
{
    if (!w->timer_closed || !w->srv_closed || w->inflight > 0)
        return;
    hook_tls_free(w->tls);
    audit_log_close(w->audit);
    free(w->ca_b64);
    if (w->on_closed != NULL)
        w->on_closed(w->on_closed_data);
    free(w);
}

static void on_timer_closed(uv_handle_t *h)
{
    ctrl_webhook_t *w = container_of((uv_timer_t *)h, ctrl_webhook_t, timer);

    w->timer_closed = true;
    maybe_free(w);
}

static void on_srv_closed(void *ud)
{
    ctrl_webhook_t *w = ud;

    w->srv_closed = true;
    maybe_free(w);
}

void ctrl_webhook_close(ctrl_webhook_t *w, void (*on_closed)(void *data), void *data)
{
    if (w == NULL)
        return;
    w->closing = true;
    w->on_closed = on_closed;
    w->on_closed_data = data;
    uv_close((uv_handle_t *)&w->timer, on_timer_closed);
    if (w->srv != NULL)
        hook_server_close(w->srv, on_srv_closed, w);
    else
        w->srv_closed = true;
}
