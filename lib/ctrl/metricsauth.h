/* metricsauth -- who may read /metrics: bearer tokens through TokenReview, SubjectAccessReview. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_METRICSAUTH_H
#define SLUICE_CTRL_METRICSAUTH_H

#include "kube/client.h"

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
 * The probe/metrics server answers synchronously, so a token not yet reviewed gets 503 ("being
 * reviewed, retry") while the reviews run; the next request with it is answered from the cache:
 *
 *   unknown token -> 503, reviews start -> allowed: 200 for 10 minutes, reviewed again in the
 *   background once a minute while in use (a revoked token stops within about a minute);
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

/* Release; reviews in flight are detached and their answers dropped. NULL-safe. */
void metricsauth_free(metricsauth_t *a);

#endif
