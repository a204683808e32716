/* validate -- Kueue's validation rules (CRD CEL rules and webhook rules) over typed objects. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_VALIDATE_H
#define SLUICE_VALIDATE_H

#include "model/diag.h"
#include "model/object.h"

#include <stdbool.h>

/*
 * These run after object_decode() has done the schema-level checks (types, required fields,
 * enums, quantities, unknown fields). They add what the API server would enforce through the
 * CRDs' x-kubernetes-validations (CEL, which Kubernetes before 1.25 ignores, so sluice's webhook
 * enforces them) and what Kueue's validating webhooks enforce, with Kueue's messages. Every
 * violation is appended to `d` with its full field path; nothing stops at the first one.
 *
 * Messages follow Kubernetes' field.Error: an Invalid error is just its detail
 * ("must be less than or equal to the nominalQuota"); other types keep their type text
 * ("Duplicate value: \"cpu\"", "Required value: ...", "Forbidden: ...", "Not found: \"x\"").
 * A CEL rule reports at the path of the object that carries it (e.g. "spec" or
 * "spec.resourceGroups[0]"), the root being the empty path "".
 *
 * No I/O, no global state: the webhooks and `sluice check` share this code.
 */

/* What the update rules may need to know about the rest of the cluster. Every member is
 * optional; a rule whose answer is missing is skipped. */
typedef struct validate_env_s {
    /* Does namespace `ns` have a LocalQueue named "default"? (Job: removing the queue-name label
     * is refused there.) */
    bool (*default_queue_exists)(void *ctx, const char *ns);
    /* Does StatefulSet ns/name (of `uid`) still have a Workload that is not on hold (Kueue's
     * findWorkload + !workload.IsOnHold: the Workload of a former scale-down not yet put on hold
     * or gone)? (StatefulSet: a scale-up from 0 is refused while it does.) */
    bool (*serving_workload_left)(void *ctx, const char *ns, const char *name, const char *uid);
    void *ctx;
} validate_env_t;

/* Validate `obj` as it would be created. Appends every violation to `d`; violations are the
 * result, not errors of the call. Returns ERR_NOMEM when `d` ran out of memory (d->oom: the list
 * is incomplete, so the object must not be taken as valid), ERR_OK otherwise. */
err_t validate_object(const object_t *obj, diags_t *d);

/* Only validate_object()'s checks of `obj`'s pod templates (a Job's TAS annotations, a Workload's
 * or job kind's podset groups, whose warnings say when a group has no effect), for a reader that
 * takes objects as stored (the operator). ERR_NOMEM as validate_object(). */
err_t validate_no_effect(const object_t *obj, diags_t *d);

/* Validate an update of `old` to `obj` (same kind). This is the whole check Kueue runs on an
 * update: the create rules on `obj`, with Kueue's update relaxations, plus the rules that compare
 * old and new (immutable fields). Call it instead of, not after, validate_object(). Returns as
 * validate_object(). */
err_t validate_update(const object_t *old, const object_t *obj, diags_t *d);

/* As validate_update(), with cluster knowledge for the rules that need it (`env` may be NULL). */
err_t validate_update_env(const object_t *old, const object_t *obj, const validate_env_t *env,
                          diags_t *d);

#endif
