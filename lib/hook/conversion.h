/* conversion -- the CRD conversion webhook: ConversionReview v1 over model/convert, and the CRD
 * caBundle it needs. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_CONVERSION_H
#define SLUICE_HOOK_CONVERSION_H

#include "hook/server.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The API server POSTs a ConversionReview (apiextensions.k8s.io/v1) to the CRD's
 * spec.conversion.webhook.clientConfig whenever it reads or writes a ClusterQueue, LocalQueue or
 * Workload in a version other than the stored one:
 *
 *   {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
 *    "request": {"uid": "...", "desiredAPIVersion": "kueue.x-k8s.io/v1beta1", "objects": [...]}}
 *
 * and expects the same uid back with every object converted, in order, or a failure:
 *
 *   {"apiVersion": ..., "kind": "ConversionReview", "response": {"uid": "...",
 *    "convertedObjects": [...], "result": {"status": "Success"}}}
 *   ... "response": {"uid": "...", "result": {"status": "Failure", "message": "..."}}
 *
 * Everything that is not a well-formed review of convertible objects is answered with a Failure
 * result naming the problem (HTTP 200, as the API server reads the result), never a crash; the
 * body size is bounded by the server (hook_server_config_t.max_body_bytes). The objects of one
 * review share one topology-domain budget (CONVERT_MAX_DOMAINS).
 */

#define HOOK_CONVERSION_PATH "/convert"

/* Answer the ConversionReview in `body`: *response is a new NUL-terminated ConversionReview
 * (caller frees), with result Success or Failure. ERR_NOMEM is the only error. */
err_t hook_conversion_review(const char *body, size_t len, char **response, err_msg_t *msg);

/* The same for a review already parsed (`review` borrowed; NULL or any JSON value is answered
 * with a Failure). */
err_t hook_conversion_answer(const json_t *review, char **response, err_msg_t *msg);

/* A hook_server handler for HOOK_CONVERSION_PATH (`ud` unused): POST only (405), JSON only (415),
 * otherwise 200 with the ConversionReview answer. */
void hook_conversion_handler(void *ud, const hook_request_t *req, hook_response_t *resp);

/* Who "sluice" is, for deciding whether a CRD's conversion webhook calls it. */
typedef struct hook_conversion_target_s {
    const char *ca_bundle;    /* base64 PEM to set */
    const char *service;      /* sluice's webhook Service name ... */
    const char *namespace;    /* ... and namespace */
    int port;                 /* the webhook port, for url clientConfigs */
    const char *const *hosts; /* IPs and DNS names in the serving certificate besides the
                               * Service's, for url clientConfigs (e.g. 127.0.0.1) */
    size_t nhosts;
} hook_conversion_target_t;

/* Set spec.conversion.webhook.clientConfig.caBundle of the CustomResourceDefinition `crd` (in
 * place) when its conversion strategy is Webhook and the clientConfig calls sluice: a service
 * with `service` and `namespace`, or a url https://HOST[:PORT]/... with HOST one of `hosts` and
 * PORT (443 when absent) equal to `port`. *changed says whether anything was set. ERR_NOMEM. */
err_t hook_conversion_inject_ca(json_t *crd, const hook_conversion_target_t *t, bool *changed,
                                err_msg_t *msg);

#endif
