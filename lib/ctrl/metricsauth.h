/* metricsauth -- who may read /metrics: bearer tokens through TokenReview, SubjectAccessReview. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_METRICSAUTH_H
#define SLUICE_CTRL_METRICSAUTH_H

#include "kube/client.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The filter controller-runtime's secure metrics serving applies
 * (WithAuthenticationAndAuthorization): the request's "Authorization: Bearer <token>" is
 * authenticated with an authentication.k8s.io/v1 TokenReview, and the user it names must be allowed
 * "get" on the non-resource URL (e.g. /metrics) by an authorization.k8s.io/v1 SubjectAccessReview
 * -- RBAC such as the shipped ClusterRole sluice-metrics-reader. sluice's ServiceAccount needs
 * create on both (manifests/rbac.yaml).
 *
 * A request with a token not reviewed yet waits for the reviews (metricsauth_check_wait: the
 * server defers its answer, lib/hook/server.h), at most about 8 s (each review request has a 4 s
 * timeout); the next requests with it are answered from the cache:
 *
 *   unknown token -> reviews start, the request waits -> allowed: 200 for 10 minutes, reviewed
 *   again in the background once a minute while in use (a revoked token stops within about a
 *   minute);
 *   not authenticated: 401, not authorized: 403, each for 30 seconds, then reviewed again.
 *
 * Tokens are kept only as SHA-256 digests. Bounded: at most 256 tokens cached and 8 reviews in
 * flight; beyond that a new token gets 503 without a review (a flood of random tokens costs the
 * API server at most 8 concurrent reviews). A review that fails (API unreachable) is forgotten
 * and retried by the next request; an allowed token keeps its entry until it expires.
 */

typedef struct metricsauth_s metricsauth_t;

typedef enum {
    METRICSAUTH_ALLOW = 0,
    METRICSAUTH_UNAUTHENTICATED, /* 401: no bearer token, or TokenReview says not authenticated */
    METRICSAUTH_FORBIDDEN,       /* 403: SubjectAccessReview denies get on the path */
    METRICSAUTH_PENDING,         /* 503: being reviewed (or too many reviews): retry shortly */
} metricsauth_result_t;

/* A filter making its reviews on `client` (borrowed, must outlive it) for "get" on `path`
 * (copied, e.g. "/metrics"). NULL on out-of-memory. */
metricsauth_t *metricsauth_new(kube_client_t *client, const char *path);

/* Decide for a request whose Authorization header is `authorization` (NULL when absent). `why`
 * (size n) gets a line for the response body. */
metricsauth_result_t metricsauth_check(metricsauth_t *a, const char *authorization, char *why,
                                       size_t n);

/* Called once with the verdict for a request that waited (`why`: a line for the body, "" when
 * allowed): ALLOW, UNAUTHENTICATED, FORBIDDEN, or PENDING when the review failed or the filter
 * is being freed. */
typedef void (*metricsauth_cb)(void *ud, metricsauth_result_t res, const char *why);

/* metricsauth_check(), except that a token whose first review is under way is waited for:
 * then *waiting is true, the result is PENDING and `cb` is called once later (never from within
 * this call) with the verdict. At most 64 requests wait per token; beyond that, or when no
 * review could start (8 in flight, 256 tokens), PENDING with *waiting false: answer 503 now. */
metricsauth_result_t metricsauth_check_wait(metricsauth_t *a, const char *authorization, char *why,
                                            size_t n, metricsauth_cb cb, void *ud, bool *waiting);

/* Release; reviews in flight are detached and their answers dropped; requests still waiting
 * get PENDING ("shutting down") from within this call. NULL-safe. */
void metricsauth_free(metricsauth_t *a);

#endif
