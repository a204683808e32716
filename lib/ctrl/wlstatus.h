/* wlstatus -- the Workload objects and status patches the operator writes (pure JSON builders). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_WLSTATUS_H
#define SLUICE_CTRL_WLSTATUS_H

#include "jobs/framework.h"
#include "model/types.h"
#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Every status write is a JSON merge patch on workloads/status that carries the object's
 * metadata.resourceVersion, so the API server applies it only to the version the decision was
 * made on (409 otherwise) -- the optimistic-concurrency rule that keeps a stale cache from ever
 * writing an admission twice. Conditions are sent as the whole array (a merge patch replaces
 * lists), computed from the current object with cond_set()'s lastTransitionTime semantics.
 * Builders return a new reference, or NULL on out-of-memory; `now_s` is Unix seconds.
 */

/* The Workload for job `job` of kind `k`: `wl` from jobs_workload_build() with its priority
 * resolved, `ps[0..n)` the kind's pod sets of `job` (its templates are copied as JSON, so every
 * pod field survives, and passed through k->podset_template when the kind has one),
 * `api_version` for the controller ownerReference (the version sluice watches). NULL on
 * out-of-memory or when `wl` and `ps` disagree (msg says which). */
json_t *wlstatus_for_job(const workload_t *wl, const jobs_kind_t *k, const json_t *job,
                         const jobs_podset_t *ps, size_t n, const char *api_version,
                         err_msg_t *msg);

/* status.admission as JSON for `a`. */
json_t *wlstatus_admission_json(const admission_t *a);

/* Admission: status.admission, QuotaReserved=True "Quota reserved in ClusterQueue <cq>",
 * Admitted=True "The workload is admitted", Evicted/Preempted (when present) reset to False with
 * reason QuotaReserved and "Previously: <old message>", Requeued removed from the decision. */
json_t *wlstatus_admit_patch(const json_t *wl, const admission_t *a, int64_t now_s);

/* As wlstatus_admit_patch(); with `checks` (borrowed: a status.admissionChecks array) the quota
 * is reserved only: Admitted=False UnsatisfiedAdmissionChecks "The workload has not all checks
 * ready" and status.admissionChecks = `checks` (Kueue's two-phase admission). */
json_t *wlstatus_reserve_patch(const json_t *wl, const admission_t *a, json_t *checks,
                               int64_t now_s);

/* Failed-node replacement: status.admission and status.unhealthyNodes removed (Kueue's admit
 * clears it with the new assignment); a merge patch without a resourceVersion: the conditions
 * stay as the API has them. */
json_t *wlstatus_replace_patch(const admission_t *a);

/* status.unhealthyNodes = [{name: nodes[i]}...], or removed when `n` is 0 (a merge patch without
 * a resourceVersion, the rest of the status untouched). A new reference, NULL on OOM. */
json_t *wlstatus_unhealthy_patch(const char *const *nodes, size_t n);

/* Eviction: Evicted=True (`reason`, `message`) and, for a preemption, Preempted=True with
 * `preempt_reason` ("InClusterQueue", ...). QuotaReserved stays until the quota is released.
 * A status.unhealthyNodes in `wl` is removed (Kueue's eviction resets it). */
json_t *wlstatus_evict_patch(const json_t *wl, const char *reason, const char *preempt_reason,
                             const char *message, int64_t now_s);

/* Quota release after an eviction once the job has no active pods: status.admission removed,
 * QuotaReserved=False PendingEvaluation, Admitted=False NoReservation, Requeued=True (reason the
 * eviction's: True only for Preempted, as Kueue's requeue immediately). */
json_t *wlstatus_release_patch(const json_t *wl, int64_t now_s);

/* Kueue's UnsetQuotaReservationWithCondition: the quota reservation given back without an
 * eviction -- status.admission removed, QuotaReserved=False `reason`/`message`, an Admitted=True
 * turned False NoReservation, accumulatedPastExecutionTimeSeconds as a release adds it. A
 * StatefulSet scaled to zero: reason "OnHold" (ctrl_wl_on_hold()). NULL on out-of-memory. */
json_t *wlstatus_unreserve_patch(const json_t *wl, const char *reason, const char *message,
                                 int64_t now_s);

/* Finished=True with `reason` (Succeeded, Failed, FailedToStart, ...) and `message`. */
json_t *wlstatus_finish_patch(const json_t *wl, const char *reason, const char *message,
                              int64_t now_s);

/* Pending explanation: QuotaReserved=False with `reason`/`message`; NULL with *changed false
 * when the workload already says exactly that (so nothing is written), NULL with *changed true
 * on out-of-memory. */
json_t *wlstatus_pending_patch(const json_t *wl, const char *reason, const char *message,
                               int64_t now_s, bool *changed);

/* Condition `type` set to `status`/`reason`/`message`; NULL with *changed false when the
 * workload already has that status and reason (the message alone is not worth a write, as
 * Kueue's HasConditionWithTypeAndReason), NULL with *changed true on out-of-memory. */
json_t *wlstatus_cond_patch(const json_t *wl, const char *type, const char *status,
                            const char *reason, const char *message, int64_t now_s, bool *changed);

/* Has the Workload object status.admission and QuotaReserved=True? */
bool wlstatus_reserved(const json_t *wl);

/* Is condition `type` True on the Workload object? */
bool wlstatus_cond(const json_t *wl, const char *type);

#endif
