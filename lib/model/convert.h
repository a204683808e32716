/* convert -- Kueue's kueue.x-k8s.io v1beta1 <-> v1beta2 conversion, JSON object to JSON object. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CONVERT_H
#define SLUICE_CONVERT_H

#include "util/err.h"

#include "model/types.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * The same rules as Kueue's conversion functions (apis/kueue/v1beta1/<kind>_conversion.go,
 * summarised in kueue-reference.md section 1.11), applied to the JSON tree instead of typed
 * structs, so that every field sluice does not model stays exactly as it was (same value, same key
 * order). Only the fields the two versions spell or shape differently are touched:
 *
 *   ClusterQueue  spec.cohort <-> spec.cohortName
 *                 spec.admissionChecks [names] -> spec.admissionChecksStrategy.admissionChecks
 *                 spec.flavorFungibility whenCanBorrow Borrow / whenCanPreempt Preempt ->
 *                   MayStopSearch
 *                 v1beta1 only, dropped: status.pendingWorkloadsStatus,
 *                   status.fairSharing.admissionFairSharingStatus
 *                 v1beta2 only, dropped: spec.concurrentAdmissionPolicy
 *   LocalQueue    status.flavorUsage <-> status.flavorsUsage; v1beta1 status.flavors dropped
 *                 (status.fairSharing has the same fields in both versions)
 *   Workload      spec.priorityClassName + spec.priorityClassSource <-> spec.priorityClassRef
 *                 status.accumulatedPastExexcutionTimeSeconds (sic) <->
 *                   status.accumulatedPastExecutionTimeSeconds
 *                 status.admission.podSetAssignments[].topologyAssignment: domains <-> slices,
 *                   encoded as Kueue encodes them (hostname-prefix runs, compact slices)
 *                 v1beta2 only, dropped: spec.preemptionGates, status.preemptionGates,
 *                   podSets[].topologyRequest.podsetSliceRequiredTopologyConstraints
 *   Cohort        v1beta1 status.fairSharing.admissionFairSharingStatus dropped
 *   ResourceFlavor, WorkloadPriorityClass: apiVersion only.
 *
 * Kueue keeps no annotation to carry dropped fields over a round trip, and neither does this:
 * v1beta1 -> v1beta2 -> v1beta1 is the identity once the first conversion has dropped what
 * v1beta2 cannot hold. Every drop is reported through convert_opts_t.note.
 *
 * Fail closed: a field this code must reshape but cannot (a wrong JSON type, a topology domain
 * whose values do not match its levels, a slice whose roots do not match its domainCount, a
 * priorityClassSource outside Kueue's enum, a field of the *other* version in the source
 * object) is ERR_INVALID with "<Kind> <name>: <field path>: <problem>", never a guess.
 */

#define CONVERT_V1BETA1 "kueue.x-k8s.io/v1beta1"
#define CONVERT_V1BETA2 "kueue.x-k8s.io/v1beta2"

/* v1beta2 -> v1beta1 materialises every topology domain, so a 200-byte object could ask for
 * billions: one conversion may produce at most this many (see convert_opts_t.budget). */
#define CONVERT_MAX_DOMAINS 200000

/* Called for each field a conversion drops or rewrites beyond a rename: `path` is the field in
 * the source object ("status.pendingWorkloadsStatus"), `text` says what happened. Both are
 * borrowed for the call. */
typedef void (*convert_note_fn)(void *ctx, const char *path, const char *text);

typedef struct convert_opts_s {
    convert_note_fn note; /* may be NULL */
    void *ctx;
    /* Topology domains the conversion may still materialise, decreased by what it does; share
     * one budget between the objects of one request. NULL: CONVERT_MAX_DOMAINS per object. */
    size_t *budget;
} convert_opts_t;

/* Is `kind` of `api_version` one convert_object() converts (a kueue.x-k8s.io v1beta1 or v1beta2
 * ClusterQueue, LocalQueue, Workload, Cohort, ResourceFlavor or WorkloadPriorityClass)? */
bool convert_supported(const char *api_version, const char *kind);

/* Convert `in` (borrowed, not modified) to apiVersion `to` (CONVERT_V1BETA1 or CONVERT_V1BETA2).
 * On success *out is a new reference: a copy of `in` with the version differences above applied
 * and apiVersion `to` (when `in` already is `to`, an unchanged copy). `opts` may be NULL.
 * Errors (*out untouched): ERR_UNSUPPORTED for another group, version or kind; ERR_INVALID for
 * input it cannot convert; ERR_NOMEM. */
err_t convert_object(const json_t *in, const char *to, const convert_opts_t *opts, json_t **out,
                     err_msg_t *msg);

/* A typed topology assignment (Kueue's v1beta1 shape) as Kueue writes it in v1beta2: a new
 * {levels, slices} object in *out, encoded as convert_object() encodes v1beta1 domains (Kueue's
 * V1Beta2From). ERR_INVALID for values Kueue could not encode (a hostname over 63 characters),
 * ERR_NOMEM. */
err_t convert_topology_assignment(const topology_assignment_t *a, json_t **out, err_msg_t *msg);

/* Read a stored topologyAssignment `ta` (borrowed) into a new typed assignment *out (v1beta1's
 * domains; free with topology_assignment_fini() + free()): v1beta2's {levels, slices} when
 * `v1beta2`, else v1beta1's {levels, domains}. At most CONVERT_MAX_DOMAINS domains. ERR_INVALID
 * (the field named in `msg`) for a shape Kueue would not write, ERR_NOMEM. */
err_t convert_topology_assignment_read(const json_t *ta, bool v1beta2, topology_assignment_t **out,
                                       err_msg_t *msg);

#endif
