/* admission -- AdmissionReview v1 webhooks: Kueue's validating and mutating endpoints. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_ADMISSION_H
#define SLUICE_HOOK_ADMISSION_H

#include "hook/server.h"
#include "model/quantity.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Paths are Kueue's (kubebuilder's `/validate-<group with dashes>-<version>-<kind>`), so Kueue's
 * webhook configurations work unchanged:
 *
 *   /mutate-kueue-x-k8s-io-v1beta2-clusterqueue     finalizer kueue.x-k8s.io/resource-in-use
 *   /validate-kueue-x-k8s-io-v1beta2-clusterqueue   rules + quota-decrease warnings
 *   /mutate-kueue-x-k8s-io-v1beta2-resourceflavor   finalizer
 *   /validate-kueue-x-k8s-io-v1beta2-resourceflavor
 *   /validate-kueue-x-k8s-io-v1beta2-cohort
 *   /validate-kueue-x-k8s-io-v1beta2-localqueue     (sluice: spec.clusterQueue immutable)
 *   /validate-kueue-x-k8s-io-v1beta2-workloadpriorityclass (sluice: audit of value changes)
 *   /mutate-kueue-x-k8s-io-v1beta2-workload         (no change: partial admission is on)
 *   /validate-kueue-x-k8s-io-v1beta2-workload       workloads and workloads/status
 *   /mutate-batch-v1-job                            default queue, default priority, suspend
 *   /validate-batch-v1-job
 *   /mutate-<group>-<version>-<kind>                the same for each kind of lib/jobs' table
 *   /validate-<group>-<version>-<kind>              held by its suspend field, e.g.
 *                                                   /mutate-jobset-x-k8s-io-v1alpha2-jobset
 *
 * A job kind's webhooks act only when its framework is enabled (integrations.frameworks) and
 * allow everything unchanged otherwise, as Kueue's no-op webhooks do, so a configuration that
 * lists a kind sluice is told not to manage never blocks its objects. An object whose controller
 * owner is a managed kind (a JobSet's Jobs) is left as it is: its parent's Workload covers it.
 *
 * Validation is lib/model's validate_object()/validate_update_env(): the same code as
 * `sluice check`. A denial is answered like controller-runtime answers Kueue's webhooks:
 * allowed=false, status code 403, message "path: detail" (several joined as "[a, b]").
 */

/* One audited admission decision (see audit.h for the record written). Borrowed pointers, valid
 * during the callback only. */
typedef struct hook_audit_event_s {
    const char *operation; /* CREATE, UPDATE, DELETE */
    const char *kind;      /* ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Job, ... */
    const char *namespace; /* NULL for cluster-scoped */
    const char *name;
    const char *user;   /* request.userInfo.username as sent by the caller */
    bool authenticated; /* the caller was authenticated (mutual TLS): `user` can be believed */
    json_t *groups;     /* array of strings (borrowed) */
    json_t *old_object; /* borrowed, NULL on CREATE */
    json_t *object;     /* borrowed, NULL on DELETE */
    bool allowed;
    const char *reason; /* denial message, NULL when allowed */
    json_t *warnings;   /* array of strings (borrowed) */
} hook_audit_event_t;

/* What the webhooks need to know about the cluster; every member is optional. */
typedef struct hook_admission_env_s {
    /* Does LocalQueue ns/name exist? (Job defaulting: LocalQueue "default".) */
    bool (*local_queue_exists)(void *ctx, const char *ns, const char *name);
    /* Does WorkloadPriorityClass `name` exist? (Job defaulting: "default".) */
    bool (*wpc_exists)(void *ctx, const char *name);
    /* Should Jobs without a queue-name in namespace `ns` be managed
     * (manageJobsWithoutQueueName and managedJobsNamespaceSelector)? */
    bool (*manage_without_queue_name)(void *ctx, const char *ns);
    /* Usage reserved by admitted workloads of ClusterQueue `cq` on (flavor, resource); false
     * when unknown (then no quota-decrease warning can be given). */
    bool (*cq_usage)(void *ctx, const char *cq, const char *flavor, const char *resource,
                     quantity_t *out);
    /* Is integrations.frameworks enabling `framework` ("jobset.x-k8s.io/jobset")? NULL: only
     * "batch/job" is. */
    bool (*framework_enabled)(void *ctx, const char *framework);
    /* Is the controller owner of `obj` of a kind Kueue manages (an enabled integration's or an
     * external framework's)? NULL: never. */
    bool (*owner_managed)(void *ctx, const json_t *obj);
    /* Does StatefulSet ns/name (of `uid`) still have a Workload that is not on hold? (Its
     * scale-up from 0 is refused meanwhile, as Kueue's webhook refuses it.) NULL: never. */
    bool (*serving_workload_left)(void *ctx, const char *ns, const char *name, const char *uid);
    /* Is the Configuration's admissionFairSharing present? NULL: unknown (no warning). */
    bool (*afs_enabled)(void *ctx);
    /* Is ClusterQueue `cq` UsageBasedAdmissionFairSharing: 1 yes, 0 no, -1 unknown (not seen).
     * NULL: always unknown. */
    int (*cq_usage_based)(void *ctx, const char *cq);
    /* Called for every decision on an audited object (quotas, queue mappings, priorities),
     * except dry runs (request.dryRun: nothing is changed, so nothing is recorded; the
     * configurations declare sideEffects: NoneOnDryRun). */
    void (*audit)(void *ctx, const hook_audit_event_t *ev);
    /* Every caller has been authenticated before its request arrives (the server requires a
     * client certificate from the API server's CA). Only then is request.userInfo recorded as
     * the user of an audit record; otherwise the record says the name is a claim. */
    bool callers_authenticated;
    void *ctx;
} hook_admission_env_t;

/* Answer one AdmissionReview posted to `path`. On success *status is 200 and *response is the
 * AdmissionReview JSON (malloc'ed, caller frees). Bad requests (unknown path, malformed JSON or
 * AdmissionReview) return ERR_NOT_FOUND / ERR_PARSE with *status 404 / 400 and the reason in
 * `msg`. */
err_t hook_admission_review(const hook_admission_env_t *env, const char *path, const char *body,
                            size_t len, int *status, char **response, err_msg_t *msg);

/* A hook_server handler: `ud` is a hook_admission_env_t. POST only (405), JSON only (415). */
void hook_admission_handler(void *ud, const hook_request_t *req, hook_response_t *resp);

#endif
