/* fakeapi -- an in-memory Kubernetes API server on loopback for unit tests of the reconcilers. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_FAKEAPI_H
#define SLUICE_TEST_FAKEAPI_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <uv.h>

/*
 * A Kubernetes API server for the resource types a test registers, kept in memory and served
 * over HTTP/1.1 on 127.0.0.1 (built on kube_testsrv) to sluice's real lib/kube client:
 *
 *   GET/LIST/WATCH, POST, PUT, PATCH (merge patch), DELETE on /api/v1/... and /apis/G/V/...,
 *   one global resourceVersion counter (like etcd's revision), optimistic concurrency (409),
 *   the status subresource, finalizers and deletionTimestamp, generateName, label and field
 *   (metadata.name, metadata.namespace) selectors, paged LISTs, watches resumed from a
 *   resourceVersion with a replayed history, 410 Gone after fakeapi_compact(), bookmarks,
 *   timeoutSeconds, Status bodies as the real server writes them, and API discovery (GET
 *   /api/v1, /apis/G/V: an APIResourceList of the registered types, their status subresources).
 *
 * Tests also read and write the store directly (no HTTP), assert on a request log, and inject
 * faults per request (fail with a status, apply but drop the response, lose the request, delay
 * it, cut a watch). Not implemented: admission, defaulting, validation beyond well-formed JSON
 * and names, garbage collection, namespace lifecycle, JSON patch, strategic merge patch,
 * server-side apply, deletecollection, snapshot reads of later LIST pages. See docs/testing.md.
 *
 * Everything runs on the loop thread. Out of memory aborts the test (like kube_testsrv).
 * Objects handed out are borrowed and valid until the next write to the same object; the
 * store never changes an object in place, it replaces it.
 */

typedef struct fakeapi_s fakeapi_t;

/* Start a server on `loop` (127.0.0.1, a free port); `*out` is valid until fakeapi_stop(). */
err_t fakeapi_start(uv_loop_t *loop, fakeapi_t **out);

/* The server's URL, "http://127.0.0.1:PORT" (borrowed), for kube_config_t.server. */
const char *fakeapi_url(const fakeapi_t *fa);

/* Serve a resource type: ("", "v1", "configmaps", "ConfigMap", true, false) or ("kueue.x-k8s.io",
 * "v1beta2", "workloads", "Workload", true, true). Strings are copied. ERR_EXISTS when the
 * group/version/plural is registered already, ERR_INVALID for a NULL or empty version, plural
 * or kind. */
err_t fakeapi_register(fakeapi_t *fa, const char *group, const char *version, const char *plural,
                       const char *kind, bool namespaced, bool has_status_subresource);

/* Stop serving `plural` of `group` (as a cluster without that CRD), before any of its objects
 * was stored: ERR_NOT_FOUND when not registered, ERR_CONFLICT when it has history. */
err_t fakeapi_unregister(fakeapi_t *fa, const char *group, const char *plural);

/* Register every type `sluice run` reads or writes, scoped and with status subresources as on a
 * cluster with Kueue's CRDs: namespaces, events, secrets (core/v1), batch/v1 jobs, leases,
 * priorityclasses, the kueue.x-k8s.io/v1beta2 kinds (resourceflavors, cohorts, clusterqueues,
 * localqueues, workloadpriorityclasses, workloads, admissionchecks, topologies),
 * customresourcedefinitions and the two
 * webhook configurations. ERR_EXISTS when one of them is registered already. */
err_t fakeapi_register_sluice(fakeapi_t *fa);

/* Close the listener, every connection and timer; `fa` is freed once the loop has run the close
 * callbacks (run it until it has no more work, then uv_loop_close()). NULL-safe. */
void fakeapi_stop(fakeapi_t *fa);

/* Fix the clock used for creationTimestamp/deletionTimestamp (0: the wall clock). */
void fakeapi_set_now(fakeapi_t *fa, time_t now);

/* ---- direct access (no HTTP) ----------------------------------------------------------------- */

/* Create or replace `obj` (borrowed, copied) as a test fixture would: the type comes from its
 * apiVersion and kind; metadata.name (and namespace for namespaced types) are required. A new
 * resourceVersion is assigned and uid/creationTimestamp/generation filled in when absent; status
 * and deletionTimestamp are taken as given (no subresource rules). Watches see ADDED or
 * MODIFIED (nothing when the object is unchanged); an object with deletionTimestamp and no
 * finalizers is removed (DELETED). `stored` (may be NULL) receives the stored object (borrowed,
 * NULL when removed). ERR_NOT_FOUND for an unregistered kind, ERR_INVALID for a malformed
 * object. */
err_t fakeapi_put_object(fakeapi_t *fa, json_t *obj, json_t **stored, err_msg_t *msg);

/* The stored object (borrowed) or NULL. `resource` is the plural ("workloads") or
 * "plural.group" when two groups share a plural; `ns` is NULL for cluster-scoped objects. */
json_t *fakeapi_get_object(const fakeapi_t *fa, const char *resource, const char *ns,
                           const char *name);

/* Delete as a DELETE request would (finalizers: set deletionTimestamp; otherwise remove).
 * ERR_NOT_FOUND when absent or the resource is unknown. */
err_t fakeapi_delete_object(fakeapi_t *fa, const char *resource, const char *ns, const char *name,
                            err_msg_t *msg);

/* Objects stored for `resource` (NULL: all types). */
size_t fakeapi_object_count(const fakeapi_t *fa, const char *resource);

/* The current global resourceVersion (that of the last write). */
uint64_t fakeapi_resource_version(const fakeapi_t *fa);

/* Forget the event history up to now, as etcd compaction does: a watch from an older
 * resourceVersion gets an ERROR event with a 410 Expired Status, a continue token from before
 * gets 410 too. Open watches are not affected. */
void fakeapi_compact(fakeapi_t *fa);

/* Send a BOOKMARK with the current resourceVersion to every open watch that allowed them. */
void fakeapi_bookmark(fakeapi_t *fa);

/* Open watches on `resource` (NULL: all). */
size_t fakeapi_watch_count(const fakeapi_t *fa, const char *resource);

/* End the open watches on `resource` (NULL: all): `abrupt` closes the connection in the middle
 * of the chunked response (the client sees a transfer error, as when a connection breaks),
 * otherwise the stream ends cleanly as after timeoutSeconds. Returns how many were ended. */
size_t fakeapi_close_watches(fakeapi_t *fa, const char *resource, bool abrupt);

/* Hold back the watch events about one object (`resource` plural, `ns` "" when cluster-scoped)
 * until fakeapi_release_object(), which sends them in order: a watch that lags behind the
 * writes, as a real one can, so a client sees the answer to its write long before the event.
 * One object at a time, and not across fakeapi_compact(). */
void fakeapi_hold_object(fakeapi_t *fa, const char *resource, const char *ns, const char *name);

/* Send the held events (in order) and hold nothing any more. Returns how many were sent on. */
size_t fakeapi_release_object(fakeapi_t *fa);

/* ---- the request log ------------------------------------------------------------------------- */

/* One request as received (strings owned by the log). */
typedef struct fakeapi_logent_s {
    unsigned seq;      /* 1-based, counts every request since start */
    char *method;      /* "GET", "PATCH", ... */
    char *path;        /* without the query */
    char *query;       /* "" when none */
    const char *verb;  /* get list watch create update patch delete discover, "" when not
                          routed */
    char *resource;    /* "workloads" or "workloads/status", "" when not routed */
    int status;        /* HTTP status answered; 0 while pending or when no answer was sent */
    const char *fault; /* "" or the injected fault: fail, fail-applied, drop, lose, cut */
    uint32_t delay_ms; /* injected delay */
} fakeapi_logent_t;

/* Number of entries since start or the last fakeapi_log_clear(). */
size_t fakeapi_log_len(const fakeapi_t *fa);

/* Entry `i` (borrowed until the log is cleared or the server stopped), NULL when out of range. */
const fakeapi_logent_t *fakeapi_log_at(const fakeapi_t *fa, size_t i);

/* Requests with `verb` (NULL: any) on `resource` ("workloads", "workloads/status"; NULL: any)
 * in the log. */
size_t fakeapi_count(const fakeapi_t *fa, const char *verb, const char *resource);

/* The log as text, one "METHOD path?query -> status" line per request (malloc'd; free it). */
char *fakeapi_log_text(const fakeapi_t *fa);

/* Forget the log (counters start again from zero; seq numbers go on). */
void fakeapi_log_clear(fakeapi_t *fa);

/* ---- fault injection ------------------------------------------------------------------------- */

typedef enum {
    FAKEAPI_SERVE = 0,    /* serve normally */
    FAKEAPI_FAIL,         /* answer `status` with a Status body; the request is not applied */
    FAKEAPI_FAIL_APPLIED, /* apply the request, then answer `status` (a 504 or 500 after commit) */
    FAKEAPI_DROP,         /* apply the request, close the connection without answering */
    FAKEAPI_LOSE,         /* close the connection without applying or answering */
    FAKEAPI_CUT,          /* WATCH: serve, then cut the stream after `cut_after` events */
} fakeapi_action_t;

/* What to do with one request; all zero serves it normally. */
typedef struct fakeapi_fault_s {
    fakeapi_action_t action;
    int status;              /* FAIL, FAIL_APPLIED: the HTTP status (400..599; 0: 500) */
    const char *retry_after; /* FAIL, FAIL_APPLIED: Retry-After value (copied), NULL: none */
    const char *message;     /* FAIL, FAIL_APPLIED: Status message (copied), NULL: the usual */
    uint32_t delay_ms;       /* act this much later (applied then, even if the client left) */
    uint32_t cut_after;      /* CUT: events sent before the connection is cut */
    bool reset;              /* DROP, LOSE, CUT: close with a TCP RST instead of a FIN */
} fakeapi_fault_t;

/* The request the fault hook decides about (all borrowed for the call). */
typedef struct fakeapi_req_s {
    unsigned seq;
    const char *method, *path, *query; /* query "" when none */
    const char *verb;                  /* as in the log; "" when not routed */
    const char *resource;              /* plural, "" when not routed */
    const char *subresource;           /* "" or "status" */
    const char *ns, *name;             /* "" when absent */
    const char *body;
    size_t body_len;
} fakeapi_req_t;

/* Fill `fault` (zeroed on entry) for `req`. May call fakeapi_compact(), fakeapi_bookmark(),
 * fakeapi_close_watches() and the direct-access functions, not fakeapi_stop(). */
typedef void (*fakeapi_fault_fn)(fakeapi_t *fa, const fakeapi_req_t *req, fakeapi_fault_t *fault,
                                 void *data);

/* Install (or with NULL remove) the per-request fault hook. */
void fakeapi_set_fault(fakeapi_t *fa, fakeapi_fault_fn fn, void *data);

/* Give the next `times` requests with `verb` (NULL: any) on `resource` (NULL: any; "x/status"
 * for the subresource) `fault` (copied). Rules are tried in the order added, before the hook. */
void fakeapi_fault_next(fakeapi_t *fa, const char *verb, const char *resource,
                        const fakeapi_fault_t *fault, unsigned times);

#endif
