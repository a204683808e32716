/* decode_queue -- ResourceFlavor, ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/decode_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const root_keys[] = {"apiVersion", "kind", "metadata", NULL};
static const char *const stop_policies[] = {"None", "Hold", "HoldAndDrain", NULL};

/* ---- resource groups (ClusterQueue and Cohort) ----------------------------------------------- */

static void decode_quota(decode_t *d, const json_t *v, void *item, void *ctx)
{
    resource_quota_t *q = item;
    jsonx_t *jx = &d->jx;
    bool have_nominal = false;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name")) {
            jsonx_string(jx, val, &q->name);
        } else if (DECODE_IS(key, "nominalQuota")) {
            have_nominal = true;
            jsonx_quantity(jx, val, &q->nominal);
        } else if (DECODE_IS(key, "borrowingLimit")) {
            q->has_borrowing_limit = jsonx_quantity(jx, val, &q->borrowing_limit);
        } else if (DECODE_IS(key, "lendingLimit")) {
            q->has_lending_limit = jsonx_quantity(jx, val, &q->lending_limit);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "name");
    if (!have_nominal)
        jsonx_required(jx, "nominalQuota");
}

static void decode_flavor_quotas(decode_t *d, const json_t *v, void *item, void *ctx)
{
    flavor_quotas_t *f = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name")) {
            jsonx_string(jx, val, &f->name);
        } else if (DECODE_IS(key, "resources")) {
            f->resources = decode__list(d, val, DEC_MAX_RESOURCES, true, sizeof(*f->resources),
                                        decode_quota, NULL, &f->nresources);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "name", "resources");
}

static void decode_group(decode_t *d, const json_t *v, void *item, void *ctx)
{
    resource_group_t *g = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "coveredResources")) {
            if (decode__list_len(d, val, DEC_MAX_RESOURCES, true) > 0)
                jsonx_string_array(jx, val, DEC_MAX_RESOURCES, false, &g->covered, &g->ncovered);
        } else if (DECODE_IS(key, "flavors")) {
            g->flavors = decode__list(d, val, DEC_MAX_FLAVORS, true, sizeof(*g->flavors),
                                      decode_flavor_quotas, NULL, &g->nflavors);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "coveredResources", "flavors");
}

static void decode_groups(decode_t *d, const json_t *v, resource_group_t **out, size_t *n)
{
    *out = decode__list(d, v, DEC_MAX_RESOURCE_GROUPS, false, sizeof(**out), decode_group, NULL, n);
}

/* fairSharing: {weight}. */
static void decode_fair_weight(decode_t *d, const json_t *v, bool *has, quantity_t *weight)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "weight"))
            *has = jsonx_quantity(jx, val, weight);
        else
            jsonx_unknown(jx, key);
    }
}

/* Decode the `spec` object of a queue kind into `out` (its struct). */
typedef void (*spec_fn)(decode_t *d, const json_t *spec, void *out);

/*
 * The envelope shared by ResourceFlavor, ClusterQueue, Cohort and LocalQueue: metadata (cluster-
 * scoped unless `namespaced`; a name is required), then the members in order -- spec (an object)
 * through `spec`, status, the envelope keys -- and anything else is unknown. Kueue objects' status
 * is written by the controller; sluice recomputes it, so a status in a manifest (e.g. from
 * `kubectl get -o yaml`) is accepted and ignored.
 */
static void decode_queue_object(decode_t *d, const json_t *root, object_meta_t *meta,
                                bool namespaced, spec_fn spec, void *out)
{
    decode__meta(d, json_object_get(root, "metadata"), meta, namespaced, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "spec")) {
            if (jsonx_want_object(&d->jx, val))
                spec(d, val, out);
        } else if (DECODE_IS(key, "status")) {
            jsonx_want_object(&d->jx, val);
        } else if (!decode__in(d, key, root_keys)) {
            jsonx_unknown(&d->jx, key);
        }
    }
}

/* ---- ResourceFlavor
 * ------------------------------------------------------------------------------ */

static void decode_flavor_spec(decode_t *d, const json_t *v, void *out)
{
    flavor_t *f = out;
    jsonx_t *jx = &d->jx;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "nodeLabels")) {
            jsonx_kv_map(jx, val, DEC_MAX_NODE_LABELS, &f->node_labels);
        } else if (DECODE_IS(key, "nodeTaints")) {
            decode__taints(d, val, DEC_MAX_TAINTS, &f->taints, &f->ntaints);
        } else if (DECODE_IS(key, "tolerations")) {
            decode__tolerations(d, val, DEC_MAX_TOLERATIONS, true, &f->tolerations,
                                &f->ntolerations);
        } else if (DECODE_IS(key, "topologyName")) {
            jsonx_string(jx, val, &f->topology_name); /* a TAS flavor (lib/sched/tas.c) */
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

void decode__flavor(decode_t *d, const json_t *root, flavor_t *out)
{
    decode_queue_object(d, root, &out->meta, false, decode_flavor_spec, out);
}

/* ---- ClusterQueue -------------------------------------------------------------------------------
 */

static void decode_fungibility(decode_t *d, const json_t *v, cluster_queue_t *cq)
{
    /* v1beta1 also had Borrow (whenCanBorrow) and Preempt (whenCanPreempt); both convert to
     * MayStopSearch (apis/kueue/v1beta1 conversion). */
    static const char *const borrow2[] = {"MayStopSearch", "TryNextFlavor", NULL};
    static const char *const borrow1[] = {"MayStopSearch", "TryNextFlavor", "Borrow", NULL};
    static const char *const preempt1[] = {"MayStopSearch", "TryNextFlavor", "Preempt", NULL};
    static const char *const prefs[] = {"BorrowingOverPreemption", "PreemptionOverBorrowing", NULL};
    jsonx_t *jx = &d->jx;
    int e;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "whenCanBorrow")) {
            if (jsonx_enum(jx, val, d->v1beta1 ? borrow1 : borrow2, &e))
                cq->when_can_borrow =
                    e == 1 ? FUNGIBILITY_TRY_NEXT_FLAVOR : FUNGIBILITY_MAY_STOP_SEARCH;
        } else if (DECODE_IS(key, "whenCanPreempt")) {
            if (jsonx_enum(jx, val, d->v1beta1 ? preempt1 : borrow2, &e))
                cq->when_can_preempt =
                    e == 1 ? FUNGIBILITY_TRY_NEXT_FLAVOR : FUNGIBILITY_MAY_STOP_SEARCH;
        } else if (DECODE_IS(key, "preference")) {
            if (jsonx_enum(jx, val, prefs, &e))
                cq->preference = (fungibility_pref_t)(e + 1);
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

static void decode_preemption(decode_t *d, const json_t *v, cluster_queue_t *cq)
{
    static const char *const reclaim[] = {"Never", "LowerPriority", "Any", NULL};
    static const char *const within[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority",
                                         NULL};
    static const char *const borrow[] = {"Never", "LowerPriority", NULL};
    static const preempt_policy_t reclaim_v[] = {PREEMPT_NEVER, PREEMPT_LOWER_PRIORITY,
                                                 PREEMPT_ANY};
    jsonx_t *jx = &d->jx;
    int e;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "reclaimWithinCohort")) {
            if (jsonx_enum(jx, val, reclaim, &e))
                cq->reclaim_within_cohort = reclaim_v[e];
        } else if (DECODE_IS(key, "withinClusterQueue")) {
            if (jsonx_enum(jx, val, within, &e))
                cq->within_cluster_queue = (preempt_policy_t)e;
        } else if (DECODE_IS(key, "borrowWithinCohort")) {
            if (!jsonx_want_object(jx, val))
                continue;
            DECODE_FIELDS(d, val, k2, v2)
            {
                if (DECODE_IS(k2, "policy")) {
                    if (jsonx_enum(jx, v2, borrow, &e))
                        cq->borrow_within_cohort = (preempt_policy_t)e;
                } else if (DECODE_IS(k2, "maxPriorityThreshold")) {
                    cq->has_max_priority_threshold =
                        jsonx_int32(jx, v2, &cq->max_priority_threshold);
                } else {
                    jsonx_unknown(jx, k2);
                }
            }
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

/* admissionChecksStrategy: {admissionChecks: [{name, onFlavors}]}. Names and onFlavors are kept
 * (validate_queue.c checks onFlavors against the queue's flavors); the engine makes the queue
 * wait for missing or inactive checks and reserves quota before the checks admit. */
static void decode_check_rule(decode_t *d, const json_t *v, void *item, void *ctx)
{
    admission_check_rule_t *rule = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &rule->name);
        else if (DECODE_IS(key, "onFlavors"))
            jsonx_string_array(jx, val, DEC_MAX_FLAVORS, false, &rule->on_flavors,
                               &rule->non_flavors);
        else
            jsonx_unknown(jx, key);
    }
    if (rule->name == NULL)
        jsonx_required(jx, "name");
}

static void decode_checks_strategy(decode_t *d, const json_t *v, cluster_queue_t *cq)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        admission_check_rule_t *rules;
        size_t n = 0;

        if (!DECODE_IS(key, "admissionChecks")) {
            jsonx_unknown(jx, key);
            continue;
        }
        rules = decode__list(d, val, DEC_MAX_ADMISSION_CHECKS, false, sizeof(*rules),
                             decode_check_rule, NULL, &n);
        if (rules == NULL)
            continue;
        /* Replaces v1beta1 spec.admissionChecks; the names are kept apart for the engine. */
        strv_free(cq->admission_checks, cq->nadmission_checks);
        TYPES_FREE_ARRAY(cq->check_rules, cq->ncheck_rules, admission_check_rule_fini);
        cq->check_rules = rules;
        cq->ncheck_rules = n;
        cq->nadmission_checks = 0;
        cq->admission_checks = calloc(n, sizeof(char *));
        if (cq->admission_checks == NULL) {
            jsonx_oom(jx);
            continue;
        }
        cq->nadmission_checks = n;
        for (size_t i = 0; i < n; i++) {
            if (rules[i].name == NULL)
                continue;
            cq->admission_checks[i] = strdup(rules[i].name);
            if (cq->admission_checks[i] == NULL)
                jsonx_oom(jx);
        }
    }
}

/* admissionScope: {admissionMode} (required in it; Kueue's CRD enum). */
static void decode_admission_scope(decode_t *d, const json_t *v, cluster_queue_t *cq)
{
    static const char *const modes[] = {"UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing",
                                        NULL};
    jsonx_t *jx = &d->jx;
    int e;

    if (!jsonx_want_object(jx, v))
        return;
    cq->has_admission_scope = true;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "admissionMode")) {
            if (jsonx_enum(jx, val, modes, &e))
                cq->afs_usage_based = e == 0;
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (decode__absent(v, "admissionMode"))
        jsonx_required(jx, "admissionMode");
}

static void decode_cq_spec(decode_t *d, const json_t *v, void *out)
{
    static const char *const queueing[] = {"BestEffortFIFO", "StrictFIFO", NULL};
    cluster_queue_t *cq = out;
    jsonx_t *jx = &d->jx;
    int e;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "resourceGroups")) {
            decode_groups(d, val, &cq->groups, &cq->ngroups);
        } else if (DECODE_IS(key, d->v1beta1 ? "cohort" : "cohortName")) {
            jsonx_string(jx, val, &cq->cohort);
        } else if (DECODE_IS(key, "queueingStrategy")) {
            if (jsonx_enum(jx, val, queueing, &e))
                cq->queueing = (queueing_strategy_t)e;
        } else if (DECODE_IS(key, "namespaceSelector")) {
            decode__label_selector(d, val, &cq->namespace_selector);
        } else if (DECODE_IS(key, "flavorFungibility")) {
            decode_fungibility(d, val, cq);
        } else if (DECODE_IS(key, "preemption")) {
            decode_preemption(d, val, cq);
        } else if (DECODE_IS(key, "stopPolicy")) {
            if (jsonx_enum(jx, val, stop_policies, &e))
                cq->stop_policy = (stop_policy_t)e;
        } else if (DECODE_IS(key, "fairSharing")) {
            decode_fair_weight(d, val, &cq->has_fair_weight, &cq->fair_weight);
        } else if (DECODE_IS(key, "admissionChecksStrategy")) {
            decode_checks_strategy(d, val, cq);
        } else if (DECODE_IS(key, "admissionChecks") && d->v1beta1) {
            /* v1beta1 []string, converted to admissionChecksStrategy in v1beta2. */
            jsonx_string_array(jx, val, DEC_MAX_ADMISSION_CHECKS, false, &cq->admission_checks,
                               &cq->nadmission_checks);
        } else if (DECODE_IS(key, "admissionScope")) {
            decode_admission_scope(d, val, cq);
        } else if (DECODE_IS(key, "concurrentAdmissionPolicy") && !d->v1beta1) {
            if (jsonx_want_object(jx, val))
                jsonx_unused(jx, key);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    /* An empty cohort name means "no cohort". */
    if (cq->cohort != NULL && cq->cohort[0] == '\0') {
        free(cq->cohort);
        cq->cohort = NULL;
    }
}

void decode__cluster_queue(decode_t *d, const json_t *root, cluster_queue_t *out)
{
    out->when_can_borrow = FUNGIBILITY_MAY_STOP_SEARCH;
    out->when_can_preempt = FUNGIBILITY_TRY_NEXT_FLAVOR;
    decode_queue_object(d, root, &out->meta, false, decode_cq_spec, out);
}

/* ---- Cohort
 * ----------------------------------------------------------------------------------------- */

static void decode_cohort_spec(decode_t *d, const json_t *v, void *out)
{
    cohort_t *c = out;
    jsonx_t *jx = &d->jx;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "parentName"))
            jsonx_string(jx, val, &c->parent);
        else if (DECODE_IS(key, "resourceGroups"))
            decode_groups(d, val, &c->groups, &c->ngroups);
        else if (DECODE_IS(key, "fairSharing"))
            decode_fair_weight(d, val, &c->has_fair_weight, &c->fair_weight);
        else
            jsonx_unknown(jx, key);
    }
    if (c->parent != NULL && c->parent[0] == '\0') {
        free(c->parent);
        c->parent = NULL;
    }
}

void decode__cohort(decode_t *d, const json_t *root, cohort_t *out)
{
    decode_queue_object(d, root, &out->meta, false, decode_cohort_spec, out);
}

/* ---- LocalQueue
 * ------------------------------------------------------------------------------------- */

static void decode_lq_spec(decode_t *d, const json_t *v, void *out)
{
    local_queue_t *lq = out;
    jsonx_t *jx = &d->jx;
    int e;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "clusterQueue")) {
            jsonx_string(jx, val, &lq->cluster_queue);
        } else if (DECODE_IS(key, "stopPolicy")) {
            if (jsonx_enum(jx, val, stop_policies, &e))
                lq->stop_policy = (stop_policy_t)e;
        } else if (DECODE_IS(key, "fairSharing")) {
            /* admission fair sharing's weight (crosscheck warns where it has no effect) */
            decode_fair_weight(d, val, &lq->has_fair_weight, &lq->fair_weight);
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

void decode__local_queue(decode_t *d, const json_t *root, local_queue_t *out)
{
    jsonx_t *jx = &d->jx;
    const json_t *spec = json_object_get(root, "spec");

    decode_queue_object(d, root, &out->meta, true, decode_lq_spec, out);
    if (json_is_object(spec) && decode__absent(spec, "clusterQueue")) {
        size_t mark = jsonx_push_key(jx, "spec");
        jsonx_required(jx, "clusterQueue");
        jsonx_pop(jx, mark);
    } else if (spec == NULL || json_is_null(spec)) {
        jsonx_required(jx, "spec");
    }
}

/* ---- WorkloadPriorityClass
 * ----------------------------------------------------------------------------- */

void decode__wpc(decode_t *d, const json_t *root, workload_priority_class_t *out)
{
    jsonx_t *jx = &d->jx;

    decode__meta(d, json_object_get(root, "metadata"), &out->meta, false, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "value"))
            jsonx_int32(jx, val, &out->value);
        else if (DECODE_IS(key, "description"))
            jsonx_string(jx, val, &out->description);
        else if (!decode__in(d, key, root_keys))
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, root, "value");
}

/* ---- Topology ------------------------------------------------------------------------------ */

/* One spec.levels item: {nodeLabel} (required). */
static void decode_topology_level(decode_t *d, const json_t *v, void *item, void *ctx)
{
    char **label = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "nodeLabel"))
            jsonx_string(jx, val, label);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "nodeLabel");
}

static void decode_topology_spec(decode_t *d, const json_t *v, void *out)
{
    topology_t *t = out;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "levels"))
            t->levels = decode__list(d, val, DEC_MAX_TOPOLOGY_LEVELS, true, sizeof(char *),
                                     decode_topology_level, NULL, &t->nlevels);
        else
            jsonx_unknown(&d->jx, key);
    }
    DECODE_REQUIRED(d, v, "levels");
}

/* spec itself is not required: Kueue's CRD does not require it (its Go clients always send one,
 * whose levels are). */
void decode__topology(decode_t *d, const json_t *root, topology_t *out)
{
    decode_queue_object(d, root, &out->meta, false, decode_topology_spec, out);
}

/* ---- AdmissionCheck
 * ------------------------------------------------------------------------------ */

/* spec.parameters: {apiGroup, kind, name}, all three required by the CRD. */
static void decode_check_params(decode_t *d, const json_t *v, admission_check_t *ac)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    ac->has_parameters = true;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "apiGroup"))
            jsonx_string(jx, val, &ac->param_group);
        else if (DECODE_IS(key, "kind"))
            jsonx_string(jx, val, &ac->param_kind);
        else if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &ac->param_name);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "apiGroup", "kind", "name");
}

static void decode_check_spec(decode_t *d, const json_t *v, void *out)
{
    admission_check_t *ac = out;
    jsonx_t *jx = &d->jx;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "controllerName")) {
            jsonx_string(jx, val, &ac->controller_name);
        } else if (DECODE_IS(key, "parameters")) {
            decode_check_params(d, val, ac);
        } else if (d->v1beta1 && DECODE_IS(key, "retryDelayMinutes")) {
            int64_t minutes;
            if (jsonx_int64(jx, val, &minutes))
                jsonx_unused(jx, key); /* deprecated in v1beta1, removed in v1beta2 */
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "controllerName");
}

/* status.conditions: the Active condition its controller writes (the others are kept by the API
 * server, not read). */
static void decode_check_status(decode_t *d, const json_t *v, admission_check_t *ac)
{
    static const char *const statuses[] = {"True", "False", "Unknown", NULL};
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (!DECODE_IS(key, "conditions")) {
            jsonx_unknown(jx, key);
            continue;
        }
        if (!jsonx_want_array_max(jx, val, 16))
            continue;
        for (size_t i = 0; i < json_array_size(val); i++) {
            const json_t *c = json_array_get(val, i);
            size_t mark = jsonx_push_index(jx, i);
            char *type = NULL, *reason = NULL, *message = NULL;
            int st = -1;
            int64_t when = 0, gen = 0;
            if (jsonx_want_object(jx, c)) {
                DECODE_FIELDS(d, c, k2, v2)
                {
                    if (DECODE_IS(k2, "type"))
                        jsonx_string(jx, v2, &type);
                    else if (DECODE_IS(k2, "status"))
                        jsonx_enum(jx, v2, statuses, &st);
                    else if (DECODE_IS(k2, "reason"))
                        jsonx_string(jx, v2, &reason);
                    else if (DECODE_IS(k2, "message"))
                        jsonx_string(jx, v2, &message);
                    else if (DECODE_IS(k2, "lastTransitionTime"))
                        jsonx_time(jx, v2, &when);
                    else if (DECODE_IS(k2, "observedGeneration"))
                        jsonx_int64(jx, v2, &gen);
                    else
                        jsonx_unknown(jx, k2);
                }
                DECODE_REQUIRED(d, c, "type", "status");
            }
            if (type != NULL && strcmp(type, "Active") == 0 && st >= 0) {
                ac->active = st == 0 ? CHECK_ACTIVE_TRUE : CHECK_ACTIVE_FALSE;
                free(ac->active_reason);
                free(ac->active_message);
                ac->active_reason = reason;
                ac->active_message = message;
                reason = message = NULL;
            }
            free(type);
            free(reason);
            free(message);
            jsonx_pop(jx, mark);
        }
    }
}

void decode__admission_check(decode_t *d, const json_t *root, admission_check_t *out)
{
    jsonx_t *jx = &d->jx;

    decode__meta(d, json_object_get(root, "metadata"), &out->meta, false, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "spec")) {
            if (jsonx_want_object(jx, val))
                decode_check_spec(d, val, out);
        } else if (DECODE_IS(key, "status")) {
            decode_check_status(d, val, out);
        } else if (!decode__in(d, key, root_keys)) {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, root, "spec");
}
