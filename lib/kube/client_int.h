/* client_int -- pieces of the request engine shared with tests; no other module includes this. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_CLIENT_INT_H
#define SLUICE_KUBE_CLIENT_INT_H

#include "kube/client.h"

#include <stddef.h>

/* A growable string with a ceiling (URLs, query strings). */
typedef struct kube__str_s {
    char *p; /* owned, NUL-terminated when non-NULL */
    size_t len, cap, max;
    bool failed; /* an append hit the ceiling or ran out of memory */
} kube__str_t;

/* Empty string that will refuse to grow beyond `max` bytes. */
void kube__str_init(kube__str_t *s, size_t max);

/* Append `n` bytes; on failure sets `failed` and leaves the text as it was. */
void kube__str_add(kube__str_t *s, const char *p, size_t n);

/* Append a NUL-terminated string. */
void kube__str_adds(kube__str_t *s, const char *p);

/* Append `p` percent-encoded for a URL query value (RFC 3986 unreserved kept). */
void kube__str_add_escaped(kube__str_t *s, const char *p);

/* Free the buffer. */
void kube__str_fini(kube__str_t *s);

/* Append the API path of `res` ("/api/v1/namespaces/<ns>/configmaps/<name>/<sub>") to `s`;
 * `ns` is used only for namespaced resources and may be NULL (all namespaces); `name`, `sub`
 * may be NULL. */
void kube__path(kube__str_t *s, const kube_resource_t *res, const char *ns, const char *name,
                const char *sub);

/* Seconds from a Retry-After header value (delta-seconds only; HTTP dates are not sent by the
 * API server), or -1 when absent or malformed. Values are capped at 3600. */
long kube__retry_after(const char *value, size_t len);

/* Did a jansson load that returned NULL fail for memory rather than on the text? */
bool kube__json_oom(const json_error_t *e);

/* Parse one watch line ({"type":..., "object":{...}}) into its type and a new reference to the
 * object. ERR_PARSE (with the reason) for malformed JSON, a missing or unknown type, or a
 * missing object; ERR_NOMEM when out of memory (the line is fine: the event must not be
 * skipped). */
err_t kube__event_parse(const char *line, size_t len, kube_event_type_t *type, json_t **object,
                        err_msg_t *msg);

/* Fill err/status/reason/msg of `res` from an HTTP `status` and the decoded `body` (borrowed, may
 * be NULL): a Status body supplies reason and message. `what` ("GET /api/v1/...") prefixes the
 * message. */
void kube__result_from_http(kube_result_t *res, long status, json_t *body, const char *what);

#endif
