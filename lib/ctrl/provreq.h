/* provreq -- the pure parts of the ProvisioningRequest admission check (Kueue's
 * pkg/controller/admissionchecks/provisioning): names, the ProvisioningRequestConfig, the
 * requests and pod templates built for a Workload, and a request's conditions as a check state. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PROVREQ_H
#define SLUICE_CTRL_PROVREQ_H

#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROVREQ_CONTROLLER   "kueue.x-k8s.io/provisioning-request"
#define PROVREQ_CONFIG_KIND  "ProvisioningRequestConfig"
#define PROVREQ_CONFIG_GROUP "kueue.x-k8s.io"
#define PROVREQ_CONSUMES     "autoscaling.x-k8s.io/consume-provisioning-request"
#define PROVREQ_CLASS        "autoscaling.x-k8s.io/provisioning-class-name"
/* Workload annotations with this prefix become parameters of its requests. */
#define PROVREQ_PARAM_PREFIX "provreq.kueue.x-k8s.io/"
/* Kueue's check messages. */
#define PROVREQ_MSG_INACTIVE   "the check is not active"
#define PROVREQ_MSG_NOT_NEEDED "the provisioning request is not needed"
/* Object names: at most 253 bytes (Kueue's limitObjectName). */
#define PROVREQ_NAME_MAX 253

/* A decoded ProvisioningRequestConfig. */
typedef struct provreq_config_s {
    char *class_name;   /* owned: spec.provisioningClassName */
    json_t *parameters; /* owned: spec.parameters (object of strings), never NULL once decoded */
    char **managed;     /* owned: spec.managedResources */
    size_t nmanaged;
    int32_t backoff_limit;  /* retryStrategy.backoffLimitCount, default 3 */
    int32_t backoff_base_s; /* retryStrategy.backoffBaseSeconds, default 60 */
    int32_t backoff_max_s;  /* retryStrategy.backoffMaxSeconds, default 1800 */
    json_t *node_selector;  /* owned: podSetUpdates.nodeSelector ([{key, valueFrom...}]), or NULL */
    char *merge_policy;     /* owned: spec.podSetMergePolicy, or NULL */
} provreq_config_t;

/* Decode ProvisioningRequestConfig `obj` (the server's JSON) into `out` (zeroed first). A bad
 * field is ERR_INVALID naming its path ("spec.retryStrategy.backoffLimitCount: must be an
 * integer >= 0"); `out` is then released. */
err_t provreq_config_decode(const json_t *obj, provreq_config_t *out, err_msg_t *msg);

/* Release what `cfg` owns; NULL-safe. */
void provreq_config_fini(provreq_config_t *cfg);

/* Kueue's limitObjectName: `full` as is when at most 247 bytes, else its first 247 bytes, '-'
 * and the first 5 hex digits of its SHA-1. `buf` holds PROVREQ_NAME_MAX + 1. ERR_UNSUPPORTED when
 * SHA-1 is unavailable. */
err_t provreq_limit_name(const char *full, char *buf, size_t n, err_msg_t *msg);

/* The ProvisioningRequest of Workload `wl`, check `check`, attempt `attempt` (from 1):
 * "<wl>-<check>-<attempt>", limited. */
err_t provreq_name(const char *wl, const char *check, int32_t attempt, char *buf, size_t n,
                   err_msg_t *msg);

/* The PodTemplate of pod set `podset` of request `pr`: "ppt-<pr>-<podset>", limited. */
err_t provreq_template_name(const char *pr, const char *podset, char *buf, size_t n,
                            err_msg_t *msg);

/* The attempt of request `pr` when it is one of Workload `wl`'s for check `check` (its name is
 * the limited "<wl>-<check>-" followed by digits only), else 0. */
int32_t provreq_attempt(const char *pr, const char *wl, const char *check);

/* Kueue's UpdateAdmissionCheckRequeueState: the delay before retry number `retry_count` + 1,
 * backoffBaseSeconds * 2^retry_count capped at backoffMaxSeconds (the first one the base
 * uncapped, as client-go's Backoff), plus Kueue's jitter of 0.0001 times that drawn from `rnd`
 * (uniform in 0..2^32-1), truncated to whole seconds: the jitter adds a second or more only to
 * delays of 10000 s and more. */
int32_t provreq_backoff_s(const provreq_config_t *cfg, int32_t retry_count, uint32_t rnd);

/* Does pod template `tmpl` (a core/v1 PodTemplateSpec) request or limit one of `cfg`'s managed
 * resources in a container or init container? True when the config manages every resource. */
bool provreq_podset_uses(const provreq_config_t *cfg, const json_t *tmpl);

/* What the request's status says, as the check's next state (Kueue's syncCheckStates). */
typedef struct provreq_verdict_s {
    bool change;         /* the check entry changes (state, message or requeue) */
    check_state_t state; /* the new state */
    char message[1024];  /* the new message */
    bool set_requeue;    /* requeueAfterSeconds := requeue_after_s (entering Retry) */
    int32_t requeue_after_s;
    bool podset_updates; /* entering Ready: podSetUpdates from the request (provreq_updates) */
} provreq_verdict_t;

/* The next state of check `cur` whose last request is `pr` (the server's JSON; its attempt
 * `attempt`) under `cfg`; `admitted`: the Workload is Admitted; `running`: active and not
 * finished; `rnd`: the random draw for a Retry's backoff jitter (provreq_backoff_s). */
void provreq_decide(const json_t *pr, int32_t attempt, const admission_check_state_t *cur,
                    const provreq_config_t *cfg, bool admitted, bool running, uint32_t rnd,
                    provreq_verdict_t *out);

/* The podSetUpdates of a provisioned request `pr` for a Workload's pod sets `podsets` (names):
 * one per request pod set, named after the pod set whose template it names, with the two
 * annotations and the config's node selectors from the request's provisioningClassDetails; then
 * the same for every pod set with `included[i]` (may be NULL) that no request pod set names (one
 * merged into another's by podSetMergePolicy). New array, NULL on out-of-memory. */
json_t *provreq_updates(const json_t *pr, char *const *podsets, const bool *included,
                        size_t npodsets, const provreq_config_t *cfg);

/* Kueue's canMergePodSets: may pod templates `t1` and `t2` (core/v1 PodTemplateSpecs) share one
 * request pod set under podSetMergePolicy `policy` (NULL: never)? IdenticalPodTemplates: equal
 * templates; IdenticalWorkloadSchedulingRequirements: containers and init containers pairwise
 * with equal requests, and equal pod resources, nodeSelector, tolerations, affinity and
 * resourceClaims. Equal as Kubernetes' semantic equality: an omitted field equals its zero
 * value, quantities compare by value. */
bool provreq_can_merge(const char *policy, const json_t *t1, const json_t *t2);

/* The request's spec (provisioningClassName, parameters, podSets) and its pod templates for
 * Workload `wl` (the server's JSON: spec.podSets[].template, status.admission), check `check`,
 * attempt `attempt`: the pod sets with a positive count (the admission's count first) that use a
 * managed resource, those `cfg`'s podSetMergePolicy lets merge in one request pod set (named after
 * the first, counts added). `*pr` is the whole ProvisioningRequest object (owner: the Workload),
 * and
 * `*templates` an array of {podset, object} with each PodTemplate (owner: the Workload, template
 * as the pod set's). Both NULL (ERR_OK) when no pod set needs provisioning. ERR_INVALID when the
 * admission lacks a pod set, ERR_NOMEM. */
err_t provreq_build(const json_t *wl, const char *check, int32_t attempt,
                    const provreq_config_t *cfg, json_t **pr, json_t **templates, err_msg_t *msg);

/* Is condition `type` of the request's status "True"? Its message in *msg (may be NULL). */
bool provreq_cond(const json_t *pr, const char *type, const char **msg);

#endif
