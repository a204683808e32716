/* validate_workload -- rules of Workload (spec, status, updates). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/validate_int.h"

#include "model/names.h"
#include "model/tasreq.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- Workload ---------------------------------------------------------------------------- */

/* validateResourceList: the reserved "pods" key and negative quantities. */
static void check_resource_list(diags_t *d, const char *path, const resource_list_t *l)
{
    char p[VPATH];

    for (size_t i = 0; i < l->len; i++) {
        validate__pathf(p, "%s[%s]", path, l->items[i].name ? l->items[i].name : "");
        if (validate__str_eq(l->items[i].name, "pods"))
            validate__err(d, p, "the key is reserved for internal kueue use");
        validate__quantity_nonneg(d, p, l->items[i].value);
    }
}

/* Kueue's validateTASSliceSize (feature gate TASValidateWorkloadSliceSize, beta and on since
 * Kueue 0.20) on pod set i's topologyRequest `tr` (kept as annotations, decode_workload.c): the
 * single-layer slice level and size together, and every slice size above 0. */
static void check_tas_slice_size(diags_t *d, size_t i, const kv_list_t *tr)
{
    const char *sl = kv_list_get(tr, TASREQ_SLICE_LEVEL), *ss = kv_list_get(tr, TASREQ_SLICE_SIZE);
    char p[VPATH];
    tasreq_t t;

    validate__pathf(p, "spec.podSets[%zu].topologyRequest.podSetSliceSize", i);
    if (sl != NULL && ss == NULL)
        validate__err(d, p,
                      "Required value: must be set when podSetSliceRequiredTopology is "
                      "specified");
    else if (sl != NULL && (ss[0] == '-' || strcmp(ss, "0") == 0)) /* decimal, from the decoder */
        validate__err(d, p, "Invalid value: %s: must be greater than 0", ss);
    if (sl == NULL && ss != NULL)
        validate__err(d, p,
                      "Forbidden: may not be set when podSetSliceRequiredTopology is not "
                      "specified");
    if (kv_list_get(tr, TASREQ_CONSTRAINTS) == NULL)
        return;
    if (tasreq_from_annotations(tr, &t) != ERR_OK) {
        d->oom = true;
        return;
    }
    for (size_t k = 0; k < t.nlayers; k++) {
        if (t.layers[k].size > 0)
            continue;
        validate__pathf(
            p, "spec.podSets[%zu].topologyRequest.podsetSliceRequiredTopologyConstraints[%zu].size",
            i, k);
        validate__err(d, p, "Invalid value: %d: must be greater than 0", (int)t.layers[k].size);
    }
}

static void check_containers(diags_t *d, const char *path, const container_t *c, size_t n)
{
    char p[VPATH];

    for (size_t i = 0; i < n; i++) {
        validate__pathf(p, "%s[%zu].resources.requests", path, i);
        check_resource_list(d, p, &c[i].requests);
        validate__pathf(p, "%s[%zu].resources.limits", path, i);
        check_resource_list(d, p, &c[i].limits);
    }
}

static bool has_quota_reservation(const workload_t *wl)
{
    return wl->conditions.quota_reserved;
}

/* Kubernetes' ResourceValue: CPU in milli-units, everything else in units (rounded up). */
static bool resource_value(const char *name, quantity_t q, int64_t *out)
{
    if (validate__str_eq(name, "cpu"))
        return quantity_milli_value(q, out) == ERR_OK;
    return quantity_value(q, out) == ERR_OK;
}

static bool pod_set_known(const workload_t *wl, const char *name)
{
    for (size_t i = 0; i < wl->npod_sets; i++)
        if (validate__str_eq_empty(wl->pod_sets[i].name, name))
            return true;
    return false;
}

/* ---- Workload status ---------------------------------------------------------------------- */

#define REPLACEMENT_FOR_ANN "kueue.x-k8s.io/workload-slice-replacement-for"

static const char *pod_set_key(const void *items, size_t i)
{
    return ((const pod_set_t *)items)[i].name;
}

static const char *assignment_key(const void *items, size_t i)
{
    return ((const pod_set_assignment_t *)items)[i].name;
}

static const char *condition_key(const void *items, size_t i)
{
    return ((const condition_t *)items)[i].type;
}

static const char *reclaimable_key(const void *items, size_t i)
{
    return ((const reclaimable_pod_t *)items)[i].name;
}

static const char *check_state_key(const void *items, size_t i)
{
    return ((const admission_check_state_t *)items)[i].name;
}

static const pod_set_t *pod_set_find(const workload_t *wl, const char *name)
{
    for (size_t i = 0; i < wl->npod_sets; i++)
        if (validate__str_eq_empty(wl->pod_sets[i].name, name))
            return &wl->pod_sets[i];
    return NULL;
}

static const reclaimable_pod_t *reclaimable_find(const workload_t *wl, const char *name)
{
    for (size_t i = 0; i < wl->nreclaimable_pods; i++)
        if (validate__str_eq_empty(wl->reclaimable_pods[i].name, name))
            return &wl->reclaimable_pods[i];
    return NULL;
}

/* Go's time.Time{}: 0001-01-01T00:00:00Z, what an unset metav1.Time reads as. */
#define GO_ZERO_TIME INT64_C(-62135596800)

#define CONDITION_REASON_MAX  1024
#define CONDITION_MESSAGE_MAX (32 * 1024)
#define CONDITION_REASON_MSG                                                                    \
    "a condition reason must start with alphabetic character, optionally followed by a string " \
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' "  \
    "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "                 \
    "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"

/* ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ */
static bool condition_reason_ok(const char *r)
{
    size_t n = strlen(r);

    if (n == 0 || !((r[0] >= 'a' && r[0] <= 'z') || (r[0] >= 'A' && r[0] <= 'Z')))
        return false;
    for (size_t i = 1; i < n; i++) {
        unsigned char c = (unsigned char)r[i];
        if (!validate__is_alnum_byte(c) && c != '_' && ((c != ',' && c != ':') || i == n - 1))
            return false;
    }
    return true;
}

/* metav1validation.ValidateConditions on status.conditions. */
static void check_conditions(diags_t *d, const workload_t *wl)
{
    static const char *const statuses[] = {"False", "True", "Unknown"}; /* sorted, as Go */
    char p[VPATH], v[512];

    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        const condition_t *c = &wl->status_conditions[i];
        bool dup = false;

        for (size_t j = 0; j < i && !dup; j++)
            dup = validate__str_eq_empty(wl->status_conditions[j].type, c->type);
        validate__pathf(p, "status.conditions[%zu].type", i);
        if (dup)
            validate__err(d, p, "Duplicate value: %s",
                          diag_quote(c->type ? c->type : "", v, sizeof(v)));
        validate__label_name(d, p, c->type);
        if (c->status == NULL ||
            (strcmp(c->status, "True") != 0 && strcmp(c->status, "False") != 0 &&
             strcmp(c->status, "Unknown") != 0)) {
            validate__pathf(p, "status.conditions[%zu].status", i);
            validate__err_not_supported(d, p, c->status, statuses, 3);
        }
        if (c->observed_generation < 0) {
            validate__pathf(p, "status.conditions[%zu].observedGeneration", i);
            validate__err(d, p, "must be greater than or equal to zero");
        }
        if (!c->has_transition_time || c->transition_time == GO_ZERO_TIME) {
            validate__pathf(p, "status.conditions[%zu].lastTransitionTime", i);
            validate__err(d, p, "Required value: must be set");
        }
        validate__pathf(p, "status.conditions[%zu].reason", i);
        if (c->reason == NULL || c->reason[0] == '\0') {
            validate__err(d, p, "Required value: must be set");
        } else {
            if (!condition_reason_ok(c->reason))
                validate__err(d, p, CONDITION_REASON_MSG);
            if (strlen(c->reason) > CONDITION_REASON_MAX)
                validate__err(d, p, "Too long: may not be more than %d bytes",
                              CONDITION_REASON_MAX);
        }
        if (c->message != NULL && strlen(c->message) > CONDITION_MESSAGE_MAX) {
            validate__pathf(p, "status.conditions[%zu].message", i);
            validate__err(d, p, "Too long: may not be more than %d bytes", CONDITION_MESSAGE_MAX);
        }
    }
}

/* validateReclaimablePods: each entry names a podSet (NotSupported, podSets in spec order) and
 * counts at most its pods. An elastic workload may keep an unchanged count left above a podSet
 * that was scaled down (`old` non-NULL), so it can converge. */
static void check_reclaimable(diags_t *d, const workload_t *wl, const workload_t *old)
{
    const char *names[VNAMES_MAX];
    size_t nnames = 0;
    char p[VPATH];

    for (size_t i = 0; i < wl->npod_sets && nnames < VNAMES_MAX; i++)
        names[nnames++] = wl->pod_sets[i].name ? wl->pod_sets[i].name : "";
    for (size_t i = 0; i < wl->nreclaimable_pods; i++) {
        const reclaimable_pod_t *rp = &wl->reclaimable_pods[i];
        const pod_set_t *ps = pod_set_find(wl, rp->name);
        const char *name = rp->name ? rp->name : "";

        if (ps == NULL) {
            validate__pathf(p, "status.reclaimablePods[%s].name", name);
            validate__err_not_supported(d, p, name, names, nnames);
        } else if (rp->count > ps->count) {
            const reclaimable_pod_t *o = old != NULL ? reclaimable_find(old, rp->name) : NULL;
            if (o != NULL && validate__elastic_enabled(&wl->meta) && o->count == rp->count)
                continue;
            validate__pathf(p, "status.reclaimablePods[%s].count", name);
            validate__err(d, p, "should be less or equal to %d", (int)ps->count);
        }
    }
}

/* scaledDownPodSetNames: podSets of an elastic workload whose admitted count is above the
 * current count (their reclaimable counts are derived anew). */
static bool scaled_down(const workload_t *wl, const char *name)
{
    if (!validate__elastic_enabled(&wl->meta) || wl->admission == NULL)
        return false;
    for (size_t i = 0; i < wl->admission->nassignments; i++) {
        const pod_set_assignment_t *a = &wl->admission->assignments[i];
        const pod_set_t *ps = pod_set_find(wl, a->name);
        if (validate__str_eq_empty(a->name, name) && a->has_count &&
            a->count > (ps ? ps->count : 0))
            return true;
    }
    return false;
}

/* validateReclaimablePodsUpdate (both versions reserve quota): counts do not decrease and
 * entries are not removed, except for scaled-down podSets of elastic workloads. */
static void check_reclaimable_update(diags_t *d, const workload_t *wl, const workload_t *old)
{
    bool equal = wl->nreclaimable_pods == old->nreclaimable_pods;
    char p[VPATH];

    for (size_t i = 0; equal && i < wl->nreclaimable_pods; i++) {
        const reclaimable_pod_t *o = reclaimable_find(old, wl->reclaimable_pods[i].name);
        equal = o != NULL && o->count == wl->reclaimable_pods[i].count;
    }
    if (equal || old->nreclaimable_pods == 0)
        return;
    for (size_t i = 0; i < wl->nreclaimable_pods; i++) {
        const reclaimable_pod_t *rp = &wl->reclaimable_pods[i];
        const reclaimable_pod_t *o = reclaimable_find(old, rp->name);
        if (o != NULL && rp->count < o->count && !scaled_down(wl, rp->name)) {
            validate__pathf(p, "status.reclaimablePods[%s].count", rp->name ? rp->name : "");
            validate__err(d, p, "cannot be less than %d", (int)o->count);
        }
    }
    for (size_t i = 0; i < old->nreclaimable_pods; i++) {
        const char *name = old->reclaimable_pods[i].name;
        if (reclaimable_find(wl, name) == NULL && !scaled_down(wl, name)) {
            validate__pathf(p, "status.reclaimablePods[%s]", name ? name : "");
            validate__err(d, p, "Required value: cannot be removed");
        }
    }
}

/* CRD rule on every podSetUpdates[].tolerations list. */
static void check_pod_set_updates_cel(diags_t *d, const workload_t *wl)
{
    char p[VPATH];

    for (size_t i = 0; i < wl->ncheck_states; i++) {
        const admission_check_state_t *cs = &wl->check_states[i];
        for (size_t j = 0; j < cs->nupdates; j++) {
            validate__pathf(p, "status.admissionChecks[%zu].podSetUpdates[%zu].tolerations", i, j);
            validate__tolerations_cel(d, p, cs->updates[j].tolerations,
                                      cs->updates[j].ntolerations);
        }
    }
}

/* validateAdmissionChecks / validatePodSetUpdates. */
static void check_pod_set_updates(diags_t *d, const workload_t *wl)
{
    const char *names[VNAMES_MAX];
    size_t nnames = 0;
    char p[VPATH], q[VPATH];

    for (size_t i = 0; i < wl->npod_sets && nnames < VNAMES_MAX; i++)
        names[nnames++] = wl->pod_sets[i].name ? wl->pod_sets[i].name : "";
    nnames = validate__sorted_set(names, nnames);
    for (size_t i = 0; i < wl->ncheck_states; i++) {
        const admission_check_state_t *cs = &wl->check_states[i];
        for (size_t j = 0; j < cs->nupdates; j++) {
            const pod_set_update_t *u = &cs->updates[j];
            validate__pathf(p, "status.admissionChecks[%zu].podSetUpdates[%zu]", i, j);
            if (pod_set_find(wl, u->name) == NULL) {
                validate__pathf(q, "%s.name", p);
                validate__err_not_supported(d, q, u->name, names, nnames);
            }
            validate__pathf(q, "%s.tolerations", p);
            validate__toleration_keys(d, q, u->tolerations, u->ntolerations);
            validate__pathf(q, "%s.annotations", p);
            validate__annotations(d, q, &u->annotations);
            validate__pathf(q, "%s.nodeSelector", p);
            validate__labels(d, q, &u->node_selector);
            validate__pathf(q, "%s.labels", p);
            validate__labels(d, q, &u->labels);
        }
    }
}

/* `old` is NULL on create. */
void validate__workload(const workload_t *wl, const workload_t *old, diags_t *d)
{
    char p[VPATH], q[VPATH];
    int min_count_sets = 0;

    /* Structural schema: list-map keys (after defaulting: a podSet without a name is "main"). */
    validate__list_map(d, "spec.podSets", "name", wl->npod_sets, pod_set_key, wl->pod_sets);
    validate__list_map(d, "status.conditions", "type", wl->nstatus_conditions, condition_key,
                       wl->status_conditions);
    if (wl->admission != NULL)
        validate__list_map(d, "status.admission.podSetAssignments", "name",
                           wl->admission->nassignments, assignment_key, wl->admission->assignments);
    validate__list_map(d, "status.reclaimablePods", "name", wl->nreclaimable_pods, reclaimable_key,
                       wl->reclaimable_pods);
    validate__list_map(d, "status.admissionChecks", "name", wl->ncheck_states, check_state_key,
                       wl->check_states);

    /* CRD rules: root, spec, spec.priorityClassRef, spec.podSets[i], status, podSetUpdates. */
    if (has_quota_reservation(wl) && wl->admission != NULL &&
        wl->npod_sets != wl->admission->nassignments)
        validate__err(d, "", "podSetAssignments must have the same number of podSets as the spec");
    if (wl->priority_source != PRIORITY_SOURCE_NONE && !wl->has_priority)
        validate__err(d, "spec", "priority should not be nil when priorityClassRef is set");
    if (wl->priority_source == PRIORITY_SOURCE_PRIORITY_CLASS &&
        wl->priority_kind != PRIORITY_SOURCE_PRIORITY_CLASS)
        validate__err(d, "spec.priorityClassRef",
                      "only the PriorityClass kind is allowed for the scheduling.k8s.io group");
    if (wl->priority_source == PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS &&
        wl->priority_kind != PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS)
        validate__err(
            d, "spec.priorityClassRef",
            "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group");
    for (size_t i = 0; i < wl->npod_sets; i++) {
        const pod_set_t *ps = &wl->pod_sets[i];
        if (ps->has_min_count && ps->min_count > ps->count) {
            validate__pathf(p, "spec.podSets[%zu]", i);
            validate__err(d, p, "minCount should be positive and less or equal to count");
        }
    }
    if (wl->cluster_name != NULL && wl->nnominated_clusters > 0)
        validate__err(d, "status", "clusterName and nominatedClusterNames are mutually exclusive");
    check_pod_set_updates_cel(d, wl);

    /* Webhook: ValidateWorkload. */
    for (size_t i = 0; i < wl->npod_sets; i++) {
        const pod_set_t *ps = &wl->pod_sets[i];
        validate__pathf(p, "spec.podSets[%zu].template.metadata.labels", i);
        validate__labels(d, p, &ps->template_labels);
        validate__pathf(p, "spec.podSets[%zu].template.metadata.annotations", i);
        validate__annotations(d, p, &ps->template_annotations);
        validate__pathf(p, "spec.podSets[%zu].template.spec.initContainers", i);
        check_containers(d, p, ps->spec.init_containers, ps->spec.ninit_containers);
        validate__pathf(p, "spec.podSets[%zu].template.spec.containers", i);
        check_containers(d, p, ps->spec.containers, ps->spec.ncontainers);
        validate__pathf(p, "spec.podSets[%zu].template.spec.resources.requests", i);
        check_resource_list(d, p, &ps->spec.pod_level_requests);
        validate__pathf(p, "spec.podSets[%zu].template.spec.resources.limits", i);
        check_resource_list(d, p, &ps->spec.pod_level_limits);
        if (ps->has_topology_request)
            check_tas_slice_size(d, i, &ps->topology_request);
        if (ps->has_min_count)
            min_count_sets++;
    }
    if (min_count_sets > 1)
        validate__err(d, "spec.podSets", "at most one podSet can use minCount");
    if (min_count_sets > 0 && validate__elastic_enabled(&wl->meta))
        validate__err(d, "spec.podSets",
                      "partial admission and elastic job cannot be used together");

    if (has_quota_reservation(wl)) {
        const admission_t *a = wl->admission;
        if (a == NULL) {
            /* An update of a Workload that was already in this state goes through, so it can
             * converge (Kueue's reservesQuotaWithoutAdmission). */
            if (old == NULL || !has_quota_reservation(old) || old->admission != NULL)
                validate__err(
                    d, "status.admission",
                    "Required value: must be set while the QuotaReserved condition is true");
        } else {
            for (size_t i = 0; i < a->nassignments; i++) {
                const pod_set_assignment_t *psa = &a->assignments[i];
                if (!pod_set_known(wl, psa->name)) {
                    char v[512];
                    validate__pathf(p, "status.admission.podSetAssignments[%zu].name", i);
                    validate__err(d, p, "Not found: %s",
                                  diag_quote(psa->name ? psa->name : "", v, sizeof(v)));
                }
                if (!psa->has_count || psa->count <= 0)
                    continue;
                for (size_t k = 0; k < psa->usage.len; k++) {
                    int64_t v;
                    const resource_t *r = &psa->usage.items[k];
                    if (!resource_value(r->name, r->value, &v) || v % psa->count == 0)
                        continue;
                    snprintf(q, sizeof(q),
                             "status.admission.podSetAssignments[%zu].resourceUsage[%s]", i,
                             r->name ? r->name : "");
                    /* Kueue formats the *int32 count with %d, printing an address; the count
                     * itself is what was meant. */
                    validate__err(d, q, "is not a multiple of %d", (int)psa->count);
                }
            }
        }
    }
    check_conditions(d, wl);
    check_reclaimable(d, wl, old);
    check_pod_set_updates(d, wl);
    validate__gated_by_format(d, validate__meta_annotation(&wl->meta, GATED_BY_ANN));
}

static bool resource_list_eq(const resource_list_t *a, const resource_list_t *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (!validate__str_eq(a->items[i].name, b->items[i].name) ||
            quantity_cmp(a->items[i].value, b->items[i].value) != 0)
            return false;
    return true;
}

static bool kv_list_eq(const kv_list_t *a, const kv_list_t *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (!validate__str_eq(a->items[i].key, b->items[i].key) ||
            !validate__str_eq(a->items[i].value, b->items[i].value))
            return false;
    return true;
}

static bool containers_eq(const container_t *a, size_t na, const container_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!validate__str_eq(a[i].name, b[i].name) || a[i].restartable != b[i].restartable ||
            !resource_list_eq(&a[i].requests, &b[i].requests) ||
            !resource_list_eq(&a[i].limits, &b[i].limits))
            return false;
    return true;
}

static bool tolerations_eq(const toleration_t *a, size_t na, const toleration_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!validate__str_eq(a[i].key, b[i].key) || !validate__str_eq(a[i].value, b[i].value) ||
            a[i].op != b[i].op || a[i].effect != b[i].effect ||
            a[i].has_seconds != b[i].has_seconds ||
            (a[i].has_seconds && a[i].seconds != b[i].seconds))
            return false;
    return true;
}

static bool selector_reqs_eq(const selector_req_t *a, size_t na, const selector_req_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!validate__str_eq(a[i].key, b[i].key) || a[i].op != b[i].op ||
            a[i].nvalues != b[i].nvalues)
            return false;
        for (size_t j = 0; j < a[i].nvalues; j++)
            if (!validate__str_eq(a[i].values[j], b[i].values[j]))
                return false;
    }
    return true;
}

static bool pod_spec_eq(const pod_spec_t *a, const pod_spec_t *b)
{
    if (!containers_eq(a->containers, a->ncontainers, b->containers, b->ncontainers) ||
        !containers_eq(a->init_containers, a->ninit_containers, b->init_containers,
                       b->ninit_containers) ||
        !resource_list_eq(&a->overhead, &b->overhead) ||
        !kv_list_eq(&a->node_selector, &b->node_selector) ||
        !tolerations_eq(a->tolerations, a->ntolerations, b->tolerations, b->ntolerations) ||
        !validate__str_eq(a->priority_class_name, b->priority_class_name) ||
        a->naffinity_terms != b->naffinity_terms)
        return false;
    for (size_t i = 0; i < a->naffinity_terms; i++)
        if (!selector_reqs_eq(a->affinity_terms[i].exprs, a->affinity_terms[i].nexprs,
                              b->affinity_terms[i].exprs, b->affinity_terms[i].nexprs))
            return false;
    return true;
}

/* The fields of a PodSet sluice decodes; a change to any of them changes the PodSet. */
static bool pod_set_eq(const pod_set_t *a, const pod_set_t *b)
{
    return validate__str_eq_empty(a->name, b->name) && a->count == b->count &&
           a->has_min_count == b->has_min_count &&
           (!a->has_min_count || a->min_count == b->min_count) &&
           kv_list_eq(&a->template_labels, &b->template_labels) &&
           kv_list_eq(&a->template_annotations, &b->template_annotations) &&
           pod_spec_eq(&a->spec, &b->spec);
}

static bool admission_eq(const admission_t *a, const admission_t *b)
{
    if (!validate__str_eq_empty(a->cluster_queue, b->cluster_queue) ||
        a->nassignments != b->nassignments)
        return false;
    for (size_t i = 0; i < a->nassignments; i++) {
        const pod_set_assignment_t *x = &a->assignments[i], *y = &b->assignments[i];
        if (!validate__str_eq_empty(x->name, y->name) || !kv_list_eq(&x->flavors, &y->flavors) ||
            !resource_list_eq(&x->usage, &y->usage) || x->has_count != y->has_count ||
            (x->has_count && x->count != y->count))
            return false;
    }
    return true;
}

static bool pod_set_updates_eq(const admission_check_state_t *a, const admission_check_state_t *b)
{
    if (a->nupdates != b->nupdates)
        return false;
    for (size_t i = 0; i < a->nupdates; i++) {
        const pod_set_update_t *x = &a->updates[i], *y = &b->updates[i];
        if (!validate__str_eq_empty(x->name, y->name) || !kv_list_eq(&x->labels, &y->labels) ||
            !kv_list_eq(&x->annotations, &y->annotations) ||
            !kv_list_eq(&x->node_selector, &y->node_selector) ||
            !tolerations_eq(x->tolerations, x->ntolerations, y->tolerations, y->ntolerations))
            return false;
    }
    return true;
}

/* validateImmutablePodSetUpdates: a check that stays Ready keeps its podSetUpdates. The path
 * indexes the old list, as Kueue's does. */
static void check_pod_set_updates_update(diags_t *d, const workload_t *wl, const workload_t *old)
{
    char p[VPATH];

    for (size_t i = 0; i < old->ncheck_states; i++) {
        const admission_check_state_t *o = &old->check_states[i], *n = NULL;
        for (size_t j = 0; j < wl->ncheck_states && n == NULL; j++)
            if (validate__str_eq_empty(wl->check_states[j].name, o->name))
                n = &wl->check_states[j];
        if (n == NULL || o->state != CHECK_STATE_READY || n->state != CHECK_STATE_READY ||
            pod_set_updates_eq(o, n))
            continue;
        validate__pathf(p, "status.admissionChecks[%zu].podSetUpdates", i);
        validate__err(d, p, MSG_IMMUTABLE);
    }
}

/* validateClusterNameUpdate: a clusterName being set must be one the old status nominated
 * (elastic replacements, with ElasticJobsViaWorkloadSlices on by default, are exempt). */
static void check_cluster_name_update(diags_t *d, const workload_t *wl, const workload_t *old)
{
    if (validate__meta_annotation(&wl->meta, REPLACEMENT_FOR_ANN) != NULL)
        return;
    if (old->cluster_name == NULL && wl->cluster_name != NULL &&
        !validate__strv_has((const char *const *)old->nominated_clusters, old->nnominated_clusters,
                            wl->cluster_name))
        validate__err(d, "status.clusterName",
                      "when setting clusterName it must be one of the nominatedClusterNames");
}

void validate__workload_update(const workload_t *old, const workload_t *wl, diags_t *d)
{
    bool old_reserved = has_quota_reservation(old), new_reserved = has_quota_reservation(wl);
    char p[VPATH];

    validate__workload(wl, old, d);

    /* CRD transition rules on the root: what may not change while quota is reserved. */
    if (old_reserved) {
        bool old_has = old->priority_source != PRIORITY_SOURCE_NONE;
        bool new_has = wl->priority_source != PRIORITY_SOURCE_NONE;
        if (old_has != new_has)
            validate__err(d, "", "priorityClassRef is immutable while workload quota reserved");
        if (old_has && new_has) {
            if (old->priority_source != wl->priority_source)
                validate__err(d, "",
                              "priorityClassRef.group is immutable while workload quota reserved");
            if (old->priority_kind != wl->priority_kind)
                validate__err(d, "",
                              "priorityClassRef.kind is immutable while workload quota reserved");
            if (wl->priority_source == PRIORITY_SOURCE_PRIORITY_CLASS &&
                wl->priority_kind == PRIORITY_SOURCE_PRIORITY_CLASS &&
                !validate__str_eq_empty(old->priority_class, wl->priority_class))
                validate__err(
                    d, "",
                    "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass "
                    "while workload quota reserved");
        }
    }
    if (old_reserved && new_reserved && !validate__str_eq(old->queue_name, wl->queue_name))
        validate__err(d, "", "queueName is immutable while workload quota reserved");
    if (old->conditions.admitted && wl->conditions.admitted &&
        (old->has_max_exec_seconds ? old->max_exec_seconds : 0) !=
            (wl->has_max_exec_seconds ? wl->max_exec_seconds : 0))
        validate__err(d, "",
                      "maximumExecutionTimeSeconds is immutable while workload quota reserved");
    /* CRD transition rule on status. */
    if (old->cluster_name != NULL && wl->cluster_name != NULL &&
        strcmp(old->cluster_name, wl->cluster_name) != 0)
        validate__err(d, "status", "clusterName is immutable once set");

    /* Webhook: ValidateWorkloadUpdate. PodSets are immutable while the old object reserves
     * quota; Kueue names each one with a dotted index ("spec.podSets.0"), kept here. */
    if (old_reserved) {
        if (old->npod_sets != wl->npod_sets) {
            validate__err(d, "spec.podSets", MSG_IMMUTABLE);
        } else {
            for (size_t i = 0; i < wl->npod_sets; i++) {
                pod_set_t cur = wl->pod_sets[i];
                /* Elastic jobs may scale down. */
                if (validate__elastic_enabled(&wl->meta) && cur.count < old->pod_sets[i].count)
                    cur.count = old->pod_sets[i].count;
                if (!pod_set_eq(&cur, &old->pod_sets[i])) {
                    validate__pathf(p, "spec.podSets.%zu", i);
                    validate__err(d, p, MSG_IMMUTABLE);
                }
            }
        }
    }
    if (old_reserved && new_reserved)
        check_reclaimable_update(d, wl, old);
    if (old->admission != NULL && wl->admission != NULL &&
        !admission_eq(old->admission, wl->admission))
        validate__err(d, "status.admission", MSG_IMMUTABLE);
    check_pod_set_updates_update(d, wl, old);
    check_cluster_name_update(d, wl, old);
    validate__gated_by_update(d, &old->meta, &wl->meta);
}
