/* client -- asynchronous Kubernetes API requests on the libuv loop via libcurl's multi interface.
 */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_CLIENT_H
#define SLUICE_KUBE_CLIENT_H

#include "kube/kubeconfig.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

typedef struct kube_client_s kube_client_t;
typedef struct kube_req_s kube_req_t;

/* A resource type: ("", "v1", "configmaps", true) or ("coordination.k8s.io", "v1", "leases",
 * true). Strings are borrowed; static storage is the usual case. */
typedef struct kube_resource_s {
    const char *group; /* "" or NULL for the core group (/api/v1) */
    const char *version;
    const char *resource; /* lower-case plural */
    bool namespaced;
} kube_resource_t;

/* The outcome of one request, passed to its final callback (borrowed for the call). */
typedef struct kube_result_s {
    err_t err;          /* ERR_OK on 2xx; otherwise see kube_status_err() */
    long status;        /* HTTP status, 0 when no response arrived */
    json_t *body;       /* borrowed: decoded response (object, List or Status), may be NULL */
    const char *reason; /* borrowed: the Status reason ("Conflict", "AlreadyExists"), or "" */
    bool canceled;      /* ended by kube_req_cancel() or kube_client_close() */
    int http_version;   /* 2 for HTTP/2, 1 for HTTP/1.x, 0 when no response arrived */
    bool reused;        /* served on an existing connection (no new connect for this request) */
    err_msg_t msg;      /* on error: "<METHOD> <path>: <Status message or transport error>" */
} kube_result_t;

/* Final callback of a request: fires exactly once when the submitting call returned ERR_OK. */
typedef void (*kube_done_cb)(const kube_result_t *res, void *data);

typedef enum {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED,
    KUBE_EVENT_BOOKMARK,
    KUBE_EVENT_ERROR, /* object is a Status; code 410 means the resourceVersion is too old */
} kube_event_type_t;

/* One watch event; `object` is borrowed (json_incref to keep it). Must not call
 * kube_client_close(); may call kube_req_cancel() on its own watch. */
typedef void (*kube_event_cb)(kube_event_type_t type, json_t *object, void *data);

/* Log sink for conditions that are handled, not returned (skipped watch lines, retries). */
typedef void (*kube_log_cb)(void *data, const char *text);

typedef struct kube_client_opts_s {
    uint64_t qps_milli;    /* client-side rate, thousandths of a request/s; 0: 50 QPS */
    uint32_t burst;        /* bucket size; 0: 100 */
    uint32_t timeout_ms;   /* default per-request timeout (not watches); 0: 30000 */
    uint32_t max_retries;  /* resubmissions after 429/503 with Retry-After; 0: 10 */
    size_t body_max;       /* largest response body; 0: 256 MiB */
    size_t watch_line_max; /* largest watch event line; 0: 16 MiB */
    size_t max_requests;   /* queued + in flight (watches too); beyond: ERR_OVERFLOW; 0: 10000 */
    bool http1;            /* force HTTP/1.1 (default: HTTP/2 when TLS ALPN offers it) */
    kube_log_cb log;       /* NULL: stderr */
    void *log_data;
} kube_client_opts_t;

/* Options of a LIST (all strings borrowed, NULL = not sent). */
typedef struct kube_list_opts_s {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version;
    const char *continue_token;
    uint32_t limit; /* 0: no paging */
} kube_list_opts_t;

/* Options of a WATCH (all strings borrowed, NULL = not sent). */
typedef struct kube_watch_opts_s {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version; /* watch changes after this version */
    bool bookmarks;               /* allowWatchBookmarks=true */
    uint32_t timeout_seconds;     /* server-side end of the watch; 0: none sent */
} kube_watch_opts_t;

typedef enum {
    KUBE_PATCH_MERGE, /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,  /* application/json-patch+json (RFC 6902) */
} kube_patch_type_t;

/* Create a client on `loop` for `cfg` (borrowed; it must outlive the client, whose requests
 * re-read its token file). `opts` may be NULL. ERR_TLS/ERR_INVALID/ERR_NOMEM on failure. */
err_t kube_client_new(uv_loop_t *loop, kube_config_t *cfg, const kube_client_opts_t *opts,
                      kube_client_t **out, err_msg_t *msg);

/* Cancel every request (their callbacks fire with canceled set), close the loop handles and free
 * the client once they are closed; `on_closed` (may be NULL) fires then. NULL-safe. Must not be
 * called from a watch event callback. */
void kube_client_close(kube_client_t *c, void (*on_closed)(void *data), void *data);

/* Requests queued or in flight now (bounded by max_requests). */
size_t kube_client_queued(const kube_client_t *c);

/* The loop the client runs on. */
uv_loop_t *kube_client_loop(kube_client_t *c);

/* The configuration's namespace (borrowed). */
const char *kube_client_namespace(const kube_client_t *c);

/* The server's address ("https://host:port", borrowed). */
const char *kube_client_server(const kube_client_t *c);

/* Report `text` through the client's log sink. */
void kube_client_log(kube_client_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Requests below: `ns` is ignored for cluster-scoped resources; on ERR_OK the request is queued
 * (rate limit) and `cb` fires exactly once; `*out` (may be NULL) receives a handle valid until
 * then. On error nothing fires. Bodies (`obj`, `patch`) are borrowed and serialised at once. */

/* GET one object (`subresource` may be NULL, e.g. "status"). */
err_t kube_get(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
               const char *subresource, kube_done_cb cb, void *data, kube_req_t **out,
               err_msg_t *msg);

/* GET `path` (absolute, e.g. "/api/v1/query") on the client's server with the query parameters
 * `params` (NULL-terminated key, value pairs, percent-encoded here; NULL: none), as `kubectl get
 * --raw` does: for an HTTP JSON API other than Kubernetes' behind the same transport, TLS, token
 * and limits (the Prometheus query API of lib/ctrl/promq.c). The result body is the decoded JSON
 * of any status (a 2xx body that is not JSON is ERR_PARSE, one beyond body_max ERR_OVERFLOW);
 * ERR_INVALID when `path` does not start with '/'. */
err_t kube_get_raw(kube_client_t *c, const char *path, const char *const *params, kube_done_cb cb,
                   void *data, kube_req_t **out, err_msg_t *msg);

/* LIST one page; the result body is the List with metadata.continue/resourceVersion. `ns` NULL
 * lists across all namespaces. */
err_t kube_list(kube_client_t *c, const kube_resource_t *res, const char *ns,
                const kube_list_opts_t *opts, kube_done_cb cb, void *data, kube_req_t **out,
                err_msg_t *msg);

/* POST `obj` to the collection. */
err_t kube_create(kube_client_t *c, const kube_resource_t *res, const char *ns, json_t *obj,
                  kube_done_cb cb, void *data, kube_req_t **out, err_msg_t *msg);

/* PUT `obj` (which carries metadata.resourceVersion for optimistic concurrency: a stale one ends
 * in ERR_CONFLICT). `subresource` may be NULL or "status". */
err_t kube_update(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                  const char *subresource, json_t *obj, kube_done_cb cb, void *data,
                  kube_req_t **out, err_msg_t *msg);

/* PATCH with the content type of `type`; `subresource` may be NULL or "status". */
err_t kube_patch(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                 const char *subresource, kube_patch_type_t type, json_t *patch, kube_done_cb cb,
                 void *data, kube_req_t **out, err_msg_t *msg);

/* DELETE; `precondition_rv` (may be NULL) makes it conditional on that resourceVersion. */
err_t kube_delete(kube_client_t *c, const kube_resource_t *res, const char *ns, const char *name,
                  const char *precondition_rv, kube_done_cb cb, void *data, kube_req_t **out,
                  err_msg_t *msg);

/* Start a WATCH: `on_event` fires per event line (malformed lines are logged and skipped, lines
 * longer than watch_line_max dropped), then `cb` once when the stream ends (ERR_OK when the
 * server closed it normally, e.g. after timeoutSeconds). */
err_t kube_watch(kube_client_t *c, const kube_resource_t *res, const char *ns,
                 const kube_watch_opts_t *opts, kube_event_cb on_event, kube_done_cb cb, void *data,
                 kube_req_t **out, err_msg_t *msg);

/* Give `req` its own timeout instead of opts.timeout_ms (0: none). Call right after submitting:
 * it applies when the request starts, which is never before the loop runs again. */
void kube_req_set_timeout(kube_req_t *req, uint32_t timeout_ms);

/* End `req` early; its final callback fires with canceled set, synchronously unless called
 * from the request's own event callback (then once the current chunk has been handled). */
void kube_req_cancel(kube_req_t *req);

/* Change `obj` (an owned deep copy of the current object) for an update; set `*changed` false to
 * finish without writing. A non-OK return ends the operation with that error. */
typedef err_t (*kube_mutate_fn)(json_t *obj, void *data, bool *changed, err_msg_t *msg);

/* Read-modify-write with optimistic concurrency: GET, `fn`, PUT (to `subresource` if non-NULL),
 * and on 409 Conflict start over from a fresh GET, up to `attempts` times (0: 5). `cb` fires once
 * with the written object as body (or the unchanged one when fn reported no change). */
err_t kube_update_retry(kube_client_t *c, const kube_resource_t *res, const char *ns,
                        const char *name, const char *subresource, kube_mutate_fn fn,
                        uint32_t attempts, kube_done_cb cb, void *data, err_msg_t *msg);

/* The err_t for HTTP `status` (404 NOT_FOUND, 409 CONFLICT or, with reason "AlreadyExists",
 * EXISTS, 410 GONE, 400/422 INVALID, 408/504 TIMEOUT, 401/403/429/5xx HTTP; 2xx OK). */
err_t kube_status_err(long status, const char *reason);

#endif
