/* visibility -- Kueue's visibility API (visibility.kueue.x-k8s.io): pending workloads per
 * ClusterQueue and LocalQueue, in the engine's queue order. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/visibility.h"

#include "ctrl/cond.h"
#include "ctrl/ctrl_int.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Everything here runs on the loop, synchronously, from the engine's state: one walk over the
 * ClusterQueue's workloads (sched_cq_workloads: holders first, then the pending ones in queue
 * order), so a request costs O(workloads of that ClusterQueue) whatever limit and offset say
 * -- as Kueue's, which copies the whole queue. The body is bounded by the limit (at most
 * MAX_LIMIT items, about 400 bytes each).
 */

#define GROUP         "visibility.kueue.x-k8s.io"
#define DEFAULT_LIMIT 1000 /* Kueue's constants.DefaultPendingWorkloadsLimit */
#define MAX_LIMIT     100000

static const char *const versions[] = {"v1beta1", "v1beta2"};

const char *visibility_version(size_t i)
{
    return i < sizeof(versions) / sizeof(versions[0]) ? versions[i] : NULL;
}

/* ---- routing ------------------------------------------------------------------------------ */

/* Copy the path segment at *p (up to '/' or the end) into buf; false when empty or too long. */
static bool segment(const char **p, char *buf, size_t n)
{
    size_t len = strcspn(*p, "/");

    if (len == 0 || len >= n)
        return false;
    memcpy(buf, *p, len);
    buf[len] = '\0';
    *p += len;
    if (**p == '/')
        (*p)++;
    return true;
}

/* A non-negative decimal of at most 18 digits. */
static bool parse_count(const char *s, size_t len, int64_t *out)
{
    int64_t v = 0;

    if (len == 0 || len > 18)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static err_t parse_query(const char *q, visibility_route_t *out, err_msg_t *msg)
{
    while (q != NULL && *q != '\0') {
        size_t len = strcspn(q, "&");
        const char *eq = memchr(q, '=', len);
        size_t klen = eq ? (size_t)(eq - q) : len;
        const char *v = eq ? eq + 1 : q + len;
        size_t vlen = eq ? len - klen - 1 : 0;
        int64_t *dst = klen == 5 && memcmp(q, "limit", 5) == 0    ? &out->limit
                       : klen == 6 && memcmp(q, "offset", 6) == 0 ? &out->offset
                                                                  : NULL;
        if (dst != NULL && !parse_count(v, vlen, dst))
            return err_set(msg, ERR_INVALID, "%.*s: must be a non-negative integer, got \"%.*s\"",
                           (int)klen, q, (int)(vlen > 40 ? 40 : vlen), v);
        q += len;
        if (*q == '&')
            q++;
    }
    if (out->limit == 0)
        return err_set(msg, ERR_INVALID, "limit: must be positive");
    if (out->limit > MAX_LIMIT)
        out->limit = MAX_LIMIT;
    return ERR_OK;
}

err_t visibility_route(const char *path, const char *query, visibility_route_t *out, err_msg_t *msg)
{
    static const char prefix[] = "/apis";
    const char *p = path;
    char seg[64], kind[32];
    bool known = false;

    memset(out, 0, sizeof(*out));
    out->limit = DEFAULT_LIMIT;
    if (strncmp(p, prefix, 5) != 0)
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    p += 5;
    if (*p == '\0' || strcmp(p, "/") == 0) {
        out->discovery = true;
        return ERR_OK;
    }
    if (*p++ != '/' || !segment(&p, seg, sizeof(seg)) || strcmp(seg, GROUP) != 0)
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    if (*p == '\0') {
        out->discovery = true;
        return ERR_OK;
    }
    if (!segment(&p, out->version, sizeof(out->version)))
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
        known |= strcmp(out->version, versions[i]) == 0;
    if (!known)
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    if (*p == '\0') {
        out->discovery = true;
        return ERR_OK;
    }
    if (!segment(&p, kind, sizeof(kind)))
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    if (strcmp(kind, "namespaces") == 0) {
        if (!segment(&p, out->ns, sizeof(out->ns)) || !segment(&p, kind, sizeof(kind)) ||
            strcmp(kind, "localqueues") != 0)
            return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
        out->local_queue = true;
    } else if (strcmp(kind, "clusterqueues") != 0) {
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    }
    if (!segment(&p, out->name, sizeof(out->name)) || !segment(&p, seg, sizeof(seg)) ||
        strcmp(seg, "pendingworkloads") != 0 || *p != '\0')
        return err_set(msg, ERR_NOT_FOUND, "the server could not find the requested resource");
    return parse_query(query, out, msg);
}

/* ---- answers ------------------------------------------------------------------------------ */

/* Put `j` (consumed) as the JSON body with `status`; on OOM a 500 without a body. */
static void answer(hook_response_t *resp, int status, json_t *j)
{
    char *text = j != NULL ? util_json_dumps(j, JSON_COMPACT) : NULL;

    json_decref(j);
    resp->content_type = "application/json";
    resp->status = text != NULL ? status : 500;
    resp->owned_body = text;
    resp->body_len = text != NULL ? strlen(text) : 0;
}

/* A metav1.Status failure. */
static void failure(hook_response_t *resp, int code, const char *reason, const char *message,
                    const visibility_route_t *r)
{
    json_t *st = json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Failure", "message", message, "reason", reason,
                           "code", code);

    if (st != NULL && r != NULL && r->name[0] != '\0')
        json_object_set_new(st, "details",
                            json_pack("{s:s,s:s,s:s}", "name", r->name, "group", GROUP, "kind",
                                      r->local_queue ? "localqueue" : "clusterqueue"));
    answer(resp, code, st);
}

/* An APIResource with no verbs yet. */
static json_t *resource(const char *name, bool namespaced, const char *kind)
{
    return json_pack("{s:s,s:s,s:b,s:s,s:[]}", "name", name, "singularName", "", "namespaced",
                     namespaced, "kind", kind, "verbs");
}

static void discovery(const char *path, const visibility_route_t *r, hook_response_t *resp)
{
    json_t *gv = json_array(), *j = NULL;

    for (size_t i = 0; gv != NULL && i < sizeof(versions) / sizeof(versions[0]); i++) {
        char v[64];
        snprintf(v, sizeof(v), GROUP "/%s", versions[i]);
        json_array_append_new(gv,
                              json_pack("{s:s,s:s}", "groupVersion", v, "version", versions[i]));
    }
    if (r->version[0] != '\0') {
        char v[64];
        json_t *list = json_array();
        snprintf(v, sizeof(v), GROUP "/%s", r->version);
        if (list != NULL) {
            json_t *cq = resource("clusterqueues", false, "ClusterQueue");
            json_t *lq = resource("localqueues", true, "LocalQueue");
            json_t *cqp =
                resource("clusterqueues/pendingworkloads", false, "PendingWorkloadsSummary");
            json_t *lqp = resource("localqueues/pendingworkloads", true, "PendingWorkloadsSummary");
            /* "verbs": ["get"] on the subresources, [] on the queues (as Kueue's) */
            json_array_append_new(json_object_get(cqp, "verbs"), json_string("get"));
            json_array_append_new(json_object_get(lqp, "verbs"), json_string("get"));
            json_array_append_new(list, cq);
            json_array_append_new(list, cqp);
            json_array_append_new(list, lq);
            json_array_append_new(list, lqp);
        }
        j = json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                      "groupVersion", v, "resources", list);
        json_decref(gv);
    } else {
        json_t *group = json_pack("{s:s,s:o,s:O}", "name", GROUP, "versions", gv,
                                  "preferredVersion", json_array_get(gv, 1));
        if (strcmp(path, "/apis") == 0 || strcmp(path, "/apis/") == 0)
            j = json_pack("{s:s,s:s,s:[o]}", "kind", "APIGroupList", "apiVersion", "v1", "groups",
                          group);
        else if (group != NULL &&
                 json_object_set_new(group, "kind", json_string("APIGroup")) == 0 &&
                 json_object_set_new(group, "apiVersion", json_string("v1")) == 0)
            j = group;
        else
            json_decref(group);
    }
    answer(resp, 200, j);
}

typedef struct walk_s {
    ctrl_t *c;
    const visibility_route_t *r;
    char lq_key[330];   /* LocalQueue requests: "ns/name" */
    int64_t index;      /* position in the ClusterQueue of the next pending workload */
    int64_t lq_index;   /* LocalQueue requests: position in the LocalQueue */
    util_hmap_t lq_pos; /* ClusterQueue requests: LocalQueue key -> pending seen so far */
    json_t *items;
    bool oom;
} walk_t;

static json_t *item(walk_t *w, const sched_wl_info_t *info, int64_t pos_cq, int64_t pos_lq)
{
    const ctrl_wl_t *wl = ctrl__wl(w->c, info->key);
    const char *slash = strchr(info->key, '/');
    char ns[256], ts[32];
    int64_t start = ctrl__estimate_start(w->c, info->key);
    size_t nslen = slash ? (size_t)(slash - info->key) : 0;
    json_t *meta, *it;

    snprintf(ns, sizeof(ns), "%.*s", (int)nslen, info->key);
    meta = json_pack("{s:s,s:s,s:s}", "name", slash ? slash + 1 : info->key, "namespace", ns,
                     "creationTimestamp",
                     cond_time_str(wl != NULL ? wl->wl.meta.creation_time : 0, ts, sizeof(ts)));
    if (meta != NULL && wl != NULL && wl->owner.kind != NULL)
        json_object_set_new(meta, "ownerReferences",
                            json_pack("[{s:s?,s:s,s:s?,s:s?}]", "apiVersion", wl->owner.api_version,
                                      "kind", wl->owner.kind, "name", wl->owner.name, "uid",
                                      wl->owner.uid));
    if (meta != NULL && start >= 0) {
        /* sluice's own, in metadata.annotations (docs/observability.md: how it is made and how
         * good it is); absent when there is no estimate. The operator's last periodic run
         * (ctrl/estimate.c), never one per request. */
        char at[32];
        json_object_set_new(meta, "annotations",
                            json_pack("{s:s}", "sluice.dev/estimated-start-time",
                                      cond_time_str(start / 1000, at, sizeof(at))));
    }
    it = json_pack("{s:o,s:i,s:s,s:I,s:I}", "metadata", meta, "priority", (int)info->priority,
                   "localQueueName", info->local_queue ? info->local_queue : "",
                   "positionInClusterQueue", (json_int_t)pos_cq, "positionInLocalQueue",
                   (json_int_t)pos_lq);
    return it;
}

static bool on_wl(const sched_wl_info_t *info, void *ud)
{
    walk_t *w = ud;
    const visibility_route_t *r = w->r;
    int64_t pos_cq, pos_lq;
    json_t *it;

    if (info->state != SCHED_WL_PENDING)
        return true; /* the holders come first */
    pos_cq = w->index++;
    if (r->local_queue) {
        if (info->local_queue_key == NULL || strcmp(info->local_queue_key, w->lq_key) != 0)
            return true;
        pos_lq = w->lq_index++;
        if (pos_lq < r->offset)
            return true;
    } else {
        size_t seen = 0;
        const char *lk = info->local_queue_key ? info->local_queue_key : "";
        util_hmap_get_index(&w->lq_pos, lk, &seen);
        pos_lq = (int64_t)seen;
        if (util_hmap_put_index(&w->lq_pos, lk, seen + 1) != ERR_OK) {
            w->oom = true;
            return false;
        }
        if (pos_cq < r->offset)
            return true;
    }
    it = item(w, info, pos_cq, pos_lq);
    if (it == NULL || json_array_append_new(w->items, it) != 0) {
        w->oom = true;
        return false;
    }
    return (int64_t)json_array_size(w->items) < r->limit;
}

static void pending(ctrl_t *c, const visibility_route_t *r, hook_response_t *resp)
{
    walk_t w = {.c = c, .r = r};
    const char *cq = r->name;
    char msg[400], v[64];
    json_t *j;

    if (r->local_queue) {
        const ctrl_qobj_t *q;
        snprintf(w.lq_key, sizeof(w.lq_key), "%s/%s", r->ns, r->name);
        q = ctrl__qrec(c, CTRL_LQ, w.lq_key);
        if (q == NULL || !q->valid || q->obj.u.lq.cluster_queue == NULL) {
            snprintf(msg, sizeof(msg), "localqueue.%s \"%s\" not found", GROUP, r->name);
            failure(resp, 404, "NotFound", msg, r);
            return;
        }
        cq = q->obj.u.lq.cluster_queue;
    }
    w.items = json_array();
    util_hmap_init(&w.lq_pos, 0);
    if (w.items == NULL || sched_cq_workloads(c->sched, cq, on_wl, &w, NULL) == ERR_NOT_FOUND) {
        util_hmap_fini(&w.lq_pos);
        json_decref(w.items);
        snprintf(msg, sizeof(msg), "%s.%s \"%s\" not found",
                 r->local_queue ? "localqueue" : "clusterqueue", GROUP, r->name);
        failure(resp, w.items == NULL ? 500 : 404, w.items == NULL ? "InternalError" : "NotFound",
                msg, r);
        return;
    }
    util_hmap_fini(&w.lq_pos);
    if (w.oom) {
        json_decref(w.items);
        failure(resp, 500, "InternalError", "out of memory", r);
        return;
    }
    snprintf(v, sizeof(v), GROUP "/%s", r->version);
    j = json_pack("{s:s,s:s,s:{s:n},s:o}", "kind", "PendingWorkloadsSummary", "apiVersion", v,
                  "metadata", "creationTimestamp", "items", w.items);
    answer(resp, 200, j);
}

void ctrl_visibility_serve(ctrl_t *c, const hook_request_t *req, hook_response_t *resp)
{
    visibility_route_t r;
    err_msg_t msg = {{0}};
    err_t rc;

    if (strcmp(req->path, "/healthz") == 0 || strcmp(req->path, "/livez") == 0 ||
        strcmp(req->path, "/readyz") == 0) {
        resp->content_type = "text/plain";
        resp->body = "ok";
        resp->body_len = 2;
        return;
    }
    rc = visibility_route(req->path, req->query, &r, &msg);
    if (rc == ERR_NOT_FOUND) {
        failure(resp, 404, "NotFound", msg.text, NULL);
        return;
    }
    if (strcmp(req->method, "GET") != 0) {
        failure(resp, 405, "MethodNotAllowed", "the server does not allow this method", NULL);
        return;
    }
    if (rc != ERR_OK) {
        failure(resp, 400, "BadRequest", msg.text, NULL);
        return;
    }
    if (r.discovery) {
        discovery(req->path, &r, resp);
        return;
    }
    if (!c->fed) {
        failure(resp, 503, "ServiceUnavailable",
                "sluice's caches have not synced yet: the queues are not known", &r);
        return;
    }
    pending(c, &r, resp);
}
