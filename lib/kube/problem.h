/* problem -- what a failed API request means for the person running sluice, in one line. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_PROBLEM_H
#define SLUICE_KUBE_PROBLEM_H

#include "kube/client.h"

#include <stddef.h>

/*
 * A request failed; the client retries, the informer backs off, but somebody has to fix the
 * cluster: install a CRD, grant a verb, renew a token, open a route. kube_problem_explain() turns
 * a kube_result_t into that diagnosis, with a key that names the cause, not the request, so nine
 * informers failing for one reason make one log line:
 *
 *   KUBE_PROBLEM_UNREACHABLE, _TLS, _UNAUTHORIZED   key "api"          (the server as a whole)
 *   KUBE_PROBLEM_NOT_INSTALLED                      key "crd:<res>"    (404 on a list or watch)
 *   KUBE_PROBLEM_FORBIDDEN                          key "rbac:<verb>:<res>"
 *   KUBE_PROBLEM_SERVER                             key "server:<res>" (5xx, 429 after retries)
 *   KUBE_PROBLEM_OTHER                              key "request:<verb>:<res>"
 *
 * where <res> is "resource.group" ("clusterqueues.kueue.x-k8s.io"), with "/subresource"
 * appended when there is one, or just "resource" for the core group.
 */

typedef enum {
    KUBE_PROBLEM_NONE = 0,      /* the request succeeded, or was canceled */
    KUBE_PROBLEM_UNREACHABLE,   /* no HTTP answer: connection refused, DNS, timeout */
    KUBE_PROBLEM_TLS,           /* the TLS handshake failed (CA, server name, client cert) */
    KUBE_PROBLEM_UNAUTHORIZED,  /* 401: our credentials were refused */
    KUBE_PROBLEM_FORBIDDEN,     /* 403: RBAC denies the verb */
    KUBE_PROBLEM_NOT_INSTALLED, /* 404 on a collection: the CRD (or this version) is absent */
    KUBE_PROBLEM_SERVER,        /* 5xx or 429: the server is failing or overloaded */
    KUBE_PROBLEM_OTHER,         /* anything else (400, 409, 422, ...): the caller's business */
} kube_problem_t;

/* The class of `res` for request `verb` ("list", "watch", "patch", ...) on `res_type` (may be
 * NULL) with subresource `sub` (NULL for none). `key` (at least 160 bytes advised) receives the
 * cause key described above; `text` receives one line for people: what failed, the server's
 * own words, and what to check. Both may be NULL. A 404 counts as NOT_INSTALLED only for list
 * and watch (a 404 on one object is an ordinary "not found": OTHER). */
kube_problem_t kube_problem_explain(const kube_result_t *res, const char *verb,
                                    const kube_resource_t *res_type, const char *sub,
                                    const char *server, char *key, size_t key_len, err_msg_t *text);

/* "resource.group" (or "resource" for the core group), "/sub" appended when `sub` is set. */
void kube_problem_resource_name(const kube_resource_t *res_type, const char *sub, char *buf,
                                size_t n);

#endif
