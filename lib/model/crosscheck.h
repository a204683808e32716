/* crosscheck -- checks across a set of objects: dangling references, cohort cycles, duplicates. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CROSSCHECK_H
#define SLUICE_CROSSCHECK_H

#include "model/diag.h"
#include "model/object.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The set is what a user would apply together (the files given to `sluice check`, or a
 * simulator scenario). Each problem is appended to the diags of the object it is about:
 *
 *   errors   ClusterQueue naming a ResourceFlavor no object defines; ResourceFlavor naming a
 *            Topology no object defines (its ClusterQueues are inactive); LocalQueue naming a
 *            missing ClusterQueue; Cohorts whose parentName chain loops, and ClusterQueues and
 *            Cohorts whose chain runs into such a loop (Kueue admits nothing there); the same
 *            kind/namespace/name defined twice.
 *   warnings Job or Workload naming a missing LocalQueue, WorkloadPriorityClass or PriorityClass;
 *            Job with no queue-name label where no "default" LocalQueue exists (Kueue ignores
 *            it); LocalQueue whose ClusterQueue has no namespaceSelector (admits nothing) or
 *            one that does not select the LocalQueue's Namespace (when the set defines it);
 *            ClusterQueue or Cohort with spec.fairSharing.weight while fair sharing is off (a
 *            Configuration in the set without fairSharing; in a scenario, also none at all);
 *            ClusterQueue with admissionScope UsageBasedAdmissionFairSharing, or LocalQueue with
 *            spec.fairSharing.weight, while admission fair sharing is off (the same rule for
 *            admissionFairSharing); LocalQueue with a weight whose ClusterQueue is not
 *            UsageBasedAdmissionFairSharing;
 *            in a scenario, a Configuration's sections only `sluice run` reads.
 *
 * A cohortName or parentName naming no Cohort object is not a problem: Kueue creates the cohort
 * implicitly. Entries of `objs` may be NULL (documents that failed to decode); an object whose
 * spec was not decoded but whose kind and name are known should still be passed (with an empty
 * spec) so that references to it are not reported as missing.
 */

#define CROSSCHECK_NONE ((size_t)-1)

/* Annotation of `sluice sim` scenarios: when the object is created (a Go duration). */
#define CROSSCHECK_AT_ANNOTATION "sim.sluice.dev/at"

typedef struct crosscheck_opts_s {
    /* Scenario semantics: a later object with the same kind, namespace and name whose
     * sim.sluice.dev/at is later than the previous definition's is an update of it, not a
     * duplicate (see design/scenario-format.md). */
    bool timed_updates;
    /* Per object, how to name it in messages about another object ("a.yaml doc 3"); NULL, or
     * a NULL entry, names it "object #<index+1>". Borrowed. */
    const char *const *origins;
    /* Per object, true when only its kind and name are known (its document failed to decode):
     * it satisfies references but is not itself checked. NULL = all complete. Borrowed. */
    const bool *partial;
} crosscheck_opts_t;

/* For each object, the index of the earlier object it updates under opts->timed_updates, or
 * CROSSCHECK_NONE (always NONE without timed_updates). `prev` has `n` entries. An update's
 * validation is validate_update(objs[prev[i]], objs[i]) instead of validate_object(objs[i]).
 * ERR_NOMEM leaves every entry NONE. */
err_t crosscheck_updates(const object_t *const *objs, size_t n, const crosscheck_opts_t *opts,
                         size_t *prev);

/* Run every cross-object check over objs[0..n) and append each problem to diags[i] of the
 * object concerned (`diags` has `n` lists). ERR_NOMEM when a list is incomplete (its `oom` is
 * set), ERR_OK otherwise; problems are the result, not errors of the call. */
err_t crosscheck_run(const object_t *const *objs, size_t n, const crosscheck_opts_t *opts,
                     diags_t *diags);

/* Parse a Go duration ("0s", "1.5s", "250ms", "1h30m") into nanoseconds with
 * duration_parse_ns() (util/duration.h); false when malformed, negative, finer than a nanosecond
 * or beyond int64. */
bool crosscheck_parse_duration(const char *s, int64_t *out_ns);

#endif
