/* selector -- label selectors, node selector terms and taint tolerations (Kubernetes semantics). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SELECTOR_H
#define SLUICE_SELECTOR_H

#include "model/types.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Pure functions over decoded structs; no allocation. Name/label validation helpers live in
 * model/names.h.
 */

/* One requirement against `labels`: In (key present, value listed), NotIn (key absent or value
 * not listed), Exists, DoesNotExist, Gt/Lt (key present, both sides base-10 int64, compared;
 * exactly one requirement value, else no match). */
bool selector_req_matches(const selector_req_t *r, const kv_list_t *labels);

/* metav1.LabelSelector: a nil selector (present == false) matches nothing, an empty one
 * everything; otherwise matchLabels and every matchExpression must hold. */
bool selector_matches(const label_selector_t *sel, const kv_list_t *labels);

/* A node selector map (pod nodeSelector): every key present with an equal value. */
bool selector_map_matches(const kv_list_t *sel, const kv_list_t *labels);

/* One NodeSelectorTerm: all expressions hold; a term without expressions matches nothing. */
bool selector_term_matches(const node_selector_term_t *t, const kv_list_t *labels);

/* requiredDuringSchedulingIgnoredDuringExecution: terms are ORed; no terms = no constraint. */
bool selector_terms_match(const node_selector_term_t *terms, size_t n, const kv_list_t *labels);

/* Kubernetes Toleration.ToleratesTaint: effect (empty = any), key (empty = any, Exists only),
 * then Exists matches any value and Equal needs equal values (absent = ""). */
bool selector_tolerates(const toleration_t *tol, const taint_t *taint);

/* Is `taint` tolerated by any of `tols`? */
bool selector_tolerated(const toleration_t *tols, size_t ntols, const taint_t *taint);

/* The first taint with effect NoSchedule or NoExecute that none of the tolerations in `a` or `b`
 * tolerates (how Kueue matches a podset against a flavor's nodeTaints, with the flavor's own
 * tolerations in `b`); NULL when all are tolerated. PreferNoSchedule never blocks. */
const taint_t *selector_untolerated(const taint_t *taints, size_t ntaints, const toleration_t *a,
                                    size_t na, const toleration_t *b, size_t nb);

#endif
