/* decode_workload -- Workload (kueue.x-k8s.io) and batch/v1 Job. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/convert.h"
#include "model/decode_int.h"
#include "model/tasreq.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const root_keys[] = {"apiVersion", "kind", "metadata", NULL};

/* ---- Workload spec ------------------------------------------------------------------------------
 */

/* One entry of topologyRequest.podsetSliceRequiredTopologyConstraints. */
typedef struct tr_layer_s {
    char *topology; /* owned */
    int32_t size;
} tr_layer_t;

static void decode_tr_layer(decode_t *d, const json_t *v, void *item, void *ctx)
{
    tr_layer_t *l = item;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "topology"))
            jsonx_string(&d->jx, val, &l->topology);
        else if (DECODE_IS(key, "size"))
            jsonx_int32(&d->jx, val, &l->size);
        else
            jsonx_unknown(&d->jx, key);
    }
    DECODE_REQUIRED(d, v, "size", "topology");
}

/* The layers as the constraints annotation's JSON, into ps->topology_request. */
static void tr_layers_set(decode_t *d, pod_set_t *ps, const tr_layer_t *l, size_t n)
{
    json_t *arr = json_array();
    char *text = NULL;

    for (size_t i = 0; arr != NULL && i < n; i++) {
        json_t *o = json_pack("{s:s,s:i}", "topology", l[i].topology ? l[i].topology : "", "size",
                              (json_int_t)l[i].size);
        if (json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    if (arr != NULL)
        text = util_json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text == NULL || kv_list_set(&ps->topology_request, TASREQ_CONSTRAINTS, text) != ERR_OK)
        jsonx_oom(&d->jx);
    util_free(text);
    json_decref(arr);
}

/* spec.podSets[].topologyRequest into ps->topology_request (the annotations Kueue builds it
 * from: the engine and tasreq.c read both alike). podIndexLabel, subGroupIndexLabel and
 * subGroupCount order pods by index in Kueue's ungater, which sluice does not run: warned. */
static void decode_topology_request(decode_t *d, const json_t *v, pod_set_t *ps)
{
    static const struct {
        const char *field, *ann;
    } strs[] = {{"required", TASREQ_REQUIRED},
                {"preferred", TASREQ_PREFERRED},
                {"podSetGroupName", TASREQ_GROUP_NAME},
                {"podSetSliceRequiredTopology", TASREQ_SLICE_LEVEL}};
    jsonx_t *jx = &d->jx;
    kv_list_t *kv = &ps->topology_request;
    tr_layer_t *layers = NULL;
    size_t nlayers = 0;

    ps->has_topology_request = true;
    DECODE_FIELDS(d, v, key, val)
    {
        size_t k = 0;
        while (k < sizeof(strs) / sizeof(strs[0]) && !DECODE_IS(key, strs[k].field))
            k++;
        if (k < sizeof(strs) / sizeof(strs[0])) {
            char *s = NULL;
            if (jsonx_string(jx, val, &s) && kv_list_set(kv, strs[k].ann, s) != ERR_OK)
                jsonx_oom(jx);
            free(s);
        } else if (DECODE_IS(key, "unconstrained")) {
            bool b;
            if (jsonx_bool(jx, val, &b) &&
                kv_list_set(kv, TASREQ_UNCONSTRAINED, b ? "true" : "false") != ERR_OK)
                jsonx_oom(jx);
        } else if (DECODE_IS(key, "podSetSliceSize")) {
            int32_t n;
            char num[16];
            if (jsonx_int32(jx, val, &n)) {
                snprintf(num, sizeof(num), "%d", (int)n);
                if (kv_list_set(kv, TASREQ_SLICE_SIZE, num) != ERR_OK)
                    jsonx_oom(jx);
            }
        } else if (DECODE_IS(key, "podsetSliceRequiredTopologyConstraints")) {
            layers = decode__list(d, val, TASREQ_MAX_LAYERS, false, sizeof(*layers),
                                  decode_tr_layer, NULL, &nlayers);
        } else if (DECODE_IS(key, "podIndexLabel") || DECODE_IS(key, "subGroupIndexLabel") ||
                   DECODE_IS(key, "subGroupCount")) {
            jsonx_unused(jx, key);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (layers != NULL)
        tr_layers_set(d, ps, layers, nlayers);
    for (size_t i = 0; layers != NULL && i < nlayers; i++)
        free(layers[i].topology);
    free(layers);
}

static void decode_pod_set(decode_t *d, const json_t *v, void *item, void *ctx)
{
    pod_set_t *ps = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    ps->count = 1;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name")) {
            jsonx_string(jx, val, &ps->name);
        } else if (DECODE_IS(key, "template")) {
            decode__pod_template(d, val, &ps->template_labels, &ps->template_annotations,
                                 &ps->spec);
        } else if (DECODE_IS(key, "count")) {
            jsonx_int32(jx, val, &ps->count);
        } else if (DECODE_IS(key, "minCount")) {
            ps->has_min_count = jsonx_int32(jx, val, &ps->min_count);
        } else if (DECODE_IS(key, "topologyRequest")) {
            if (jsonx_want_object(jx, val))
                decode_topology_request(d, val, ps);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (ps->name == NULL) {
        ps->name = strdup("main");
        if (ps->name == NULL)
            jsonx_oom(jx);
    }
    if (decode__absent(v, "template"))
        jsonx_required(jx, "template");
    else
        decode__pod_set_requests(d, ps);
}

static void decode_priority_ref(decode_t *d, const json_t *v, workload_t *wl)
{
    static const char *const groups[] = {"kueue.x-k8s.io", "scheduling.k8s.io", NULL};
    static const char *const kinds[] = {"WorkloadPriorityClass", "PriorityClass", NULL};
    jsonx_t *jx = &d->jx;
    int group = -1, kind = -1;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "group"))
            jsonx_enum(jx, val, groups, &group);
        else if (DECODE_IS(key, "kind"))
            jsonx_enum(jx, val, kinds, &kind);
        else if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &wl->priority_class);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "group", "kind", "name");
    /* Group and kind are kept apart: the CRD's CEL rules that tie them are validate_workload.c's.
     */
    if (group >= 0)
        wl->priority_source =
            group == 0 ? PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS : PRIORITY_SOURCE_PRIORITY_CLASS;
    if (kind >= 0)
        wl->priority_kind =
            kind == 0 ? PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS : PRIORITY_SOURCE_PRIORITY_CLASS;
}

static void decode_wl_spec(decode_t *d, const json_t *v, workload_t *wl)
{
    static const char *const sources[] = {"kueue.x-k8s.io/workloadpriorityclass",
                                          "scheduling.k8s.io/priorityclass", "", NULL};
    jsonx_t *jx = &d->jx;
    int e;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "podSets")) {
            wl->pod_sets = decode__list(d, val, DEC_MAX_POD_SETS, true, sizeof(*wl->pod_sets),
                                        decode_pod_set, NULL, &wl->npod_sets);
        } else if (DECODE_IS(key, "queueName")) {
            jsonx_string(jx, val, &wl->queue_name);
        } else if (DECODE_IS(key, "priorityClassRef") && !d->v1beta1) {
            decode_priority_ref(d, val, wl);
        } else if (DECODE_IS(key, "priorityClassName") && d->v1beta1) {
            jsonx_string(jx, val, &wl->priority_class);
        } else if (DECODE_IS(key, "priorityClassSource") && d->v1beta1) {
            if (jsonx_enum(jx, val, sources, &e)) {
                wl->priority_source = e == 0   ? PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS
                                      : e == 1 ? PRIORITY_SOURCE_PRIORITY_CLASS
                                               : PRIORITY_SOURCE_NONE;
                wl->priority_kind = wl->priority_source;
            }
        } else if (DECODE_IS(key, "priority")) {
            wl->has_priority = jsonx_int32(jx, val, &wl->priority);
        } else if (DECODE_IS(key, "active")) {
            jsonx_bool(jx, val, &wl->active);
        } else if (DECODE_IS(key, "maximumExecutionTimeSeconds")) {
            wl->has_max_exec_seconds = jsonx_int32(jx, val, &wl->max_exec_seconds);
        } else if (DECODE_IS(key, "preemptionGates") && !d->v1beta1) {
            if (jsonx_want_array(jx, val))
                jsonx_unused(jx, key);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "podSets");
    /* v1beta1: an empty name means no priority class, whatever the source says. */
    if (wl->priority_class != NULL && wl->priority_class[0] == '\0') {
        free(wl->priority_class);
        wl->priority_class = NULL;
        wl->priority_source = PRIORITY_SOURCE_NONE;
        wl->priority_kind = PRIORITY_SOURCE_NONE;
    }
}

/* ---- Workload status
 * ------------------------------------------------------------------------------ */

/* Where topology-aware scheduling put the pod set (the engine counts its pods on those nodes
 * when the Workload is read back after a restart): v1beta2 slices or v1beta1 domains. */
static void decode_topology_assignment(decode_t *d, const char *key, const json_t *val,
                                       pod_set_assignment_t *a)
{
    err_msg_t msg = {{0}};
    err_t rc;

    if (json_is_null(val))
        return;
    topology_assignment_fini(a->topology);
    free(a->topology);
    a->topology = NULL;
    rc = convert_topology_assignment_read(val, !d->v1beta1, &a->topology, &msg);
    if (rc == ERR_NOMEM)
        jsonx_oom(&d->jx);
    else if (rc != ERR_OK)
        jsonx_error_at(&d->jx, key, "%s", msg.text);
}

static void decode_assignment(decode_t *d, const json_t *v, void *item, void *ctx)
{
    pod_set_assignment_t *a = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &a->name);
        else if (DECODE_IS(key, "flavors"))
            jsonx_kv_map(jx, val, DEC_MAX_RESOURCES, &a->flavors);
        else if (DECODE_IS(key, "resourceUsage"))
            jsonx_resource_list(jx, val, &a->usage);
        else if (DECODE_IS(key, "count"))
            a->has_count = jsonx_int32(jx, val, &a->count);
        else if (DECODE_IS(key, "topologyAssignment"))
            decode_topology_assignment(d, key, val, a);
        else if (DECODE_IS(key, "delayedTopologyRequest"))
            jsonx_unused(jx, key);
        else
            jsonx_unknown(jx, key);
    }
    if (a->name == NULL) {
        a->name = strdup("main");
        if (a->name == NULL)
            jsonx_oom(jx);
    }
}

static void decode_admission(decode_t *d, const json_t *v, workload_t *wl)
{
    jsonx_t *jx = &d->jx;
    admission_t *adm;

    if (!jsonx_want_object(jx, v))
        return;
    adm = calloc(1, sizeof(*adm));
    if (adm == NULL) {
        jsonx_oom(jx);
        return;
    }
    wl->admission = adm;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "clusterQueue")) {
            jsonx_string(jx, val, &adm->cluster_queue);
        } else if (DECODE_IS(key, "podSetAssignments")) {
            adm->assignments =
                decode__list(d, val, DEC_MAX_POD_SETS, false, sizeof(*adm->assignments),
                             decode_assignment, NULL, &adm->nassignments);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "clusterQueue", "podSetAssignments");
}

/* One metav1.Condition; sets *is_true when status is "True" and *when to lastTransitionTime. */
static void decode_condition(decode_t *d, const json_t *v, char **type, bool *is_true,
                             int64_t *when)
{
    static const char *const statuses[] = {"True", "False", "Unknown", NULL};
    jsonx_t *jx = &d->jx;
    int st = -1;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "type")) {
            jsonx_string(jx, val, type);
        } else if (DECODE_IS(key, "status")) {
            jsonx_enum(jx, val, statuses, &st);
        } else if (DECODE_IS(key, "lastTransitionTime")) {
            jsonx_time(jx, val, when);
        } else if (DECODE_IS(key, "reason") || DECODE_IS(key, "message")) {
            char *s = NULL;
            jsonx_string(jx, val, &s);
            free(s);
        } else if (DECODE_IS(key, "observedGeneration") || DECODE_IS(key, "lastProbeTime") ||
                   DECODE_IS(key, "lastHeartbeatTime")) {
            /* observedGeneration (metav1.Condition), probe times (batch JobCondition) */
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "type", "status");
    *is_true = st == 0;
}

/* One metav1.Condition of a Workload, kept as written: the schema's type and status checks here,
 * Kubernetes' ValidateConditions rules (reason format, lengths, lastTransitionTime set) in
 * validate_workload.c, which reports them with the webhook's messages. */
static void decode_wl_condition(decode_t *d, const json_t *v, void *item, void *ctx)
{
    static const char *const statuses[] = {"True", "False", "Unknown", NULL};
    condition_t *c = item;
    jsonx_t *jx = &d->jx;
    int st;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "type")) {
            jsonx_string(jx, val, &c->type);
        } else if (DECODE_IS(key, "status")) {
            if (jsonx_enum(jx, val, statuses, &st)) {
                c->status = strdup(statuses[st]);
                if (c->status == NULL)
                    jsonx_oom(jx);
            }
        } else if (DECODE_IS(key, "lastTransitionTime")) {
            c->has_transition_time = jsonx_time(jx, val, &c->transition_time);
        } else if (DECODE_IS(key, "reason")) {
            jsonx_string(jx, val, &c->reason);
        } else if (DECODE_IS(key, "message")) {
            jsonx_string(jx, val, &c->message);
        } else if (DECODE_IS(key, "observedGeneration")) {
            jsonx_int64(jx, val, &c->observed_generation);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "type", "status");
}

static void decode_wl_conditions(decode_t *d, const json_t *v, workload_t *wl)
{
    workload_conditions_t *c = &wl->conditions;

    wl->status_conditions =
        decode__list(d, v, DEC_MAX_CONDITIONS, false, sizeof(*wl->status_conditions),
                     decode_wl_condition, NULL, &wl->nstatus_conditions);
    for (size_t i = 0; i < wl->nstatus_conditions; i++) {
        const condition_t *cond = &wl->status_conditions[i];
        bool is_true;

        is_true = cond->status != NULL && strcmp(cond->status, "True") == 0;
        /* Kueue reads the first condition of a type (apimeta.FindStatusCondition); a repeated
         * type is a validation error, and must not override it here. */
        for (size_t j = 0; j < i && cond != NULL && cond->type != NULL; j++)
            if (wl->status_conditions[j].type != NULL &&
                strcmp(wl->status_conditions[j].type, cond->type) == 0)
                cond = NULL;
        if (cond != NULL && cond->type != NULL) {
            if (strcmp(cond->type, "QuotaReserved") == 0) {
                c->quota_reserved = is_true;
            } else if (strcmp(cond->type, "Admitted") == 0) {
                c->admitted = is_true;
                c->admitted_time = cond->transition_time;
            } else if (strcmp(cond->type, "Finished") == 0) {
                c->finished = is_true;
            } else if (strcmp(cond->type, "Evicted") == 0) {
                c->evicted = is_true;
            } else if (strcmp(cond->type, "Preempted") == 0) {
                c->preempted = is_true;
            }
        }
    }
}

/* A count with the CRD's Minimum=0, reported as the API server's schema validation words it. */
static bool decode_count(decode_t *d, const json_t *v, int32_t *out)
{
    int32_t n;

    if (!jsonx_int32(&d->jx, v, &n))
        return false;
    if (n < 0) {
        jsonx_error(&d->jx, "%s in body should be greater than or equal to 0", d->jx.path);
        return false;
    }
    *out = n;
    return true;
}

static void decode_reclaimable_pod(decode_t *d, const json_t *v, void *item, void *ctx)
{
    reclaimable_pod_t *rp = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &rp->name);
        else if (DECODE_IS(key, "count"))
            decode_count(d, val, &rp->count);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "name", "count");
}

static void decode_pod_set_update(decode_t *d, const json_t *v, void *item, void *ctx)
{
    pod_set_update_t *u = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(jx, val, &u->name);
        else if (DECODE_IS(key, "labels"))
            jsonx_kv_map(jx, val, 0, &u->labels);
        else if (DECODE_IS(key, "annotations"))
            jsonx_kv_map(jx, val, 0, &u->annotations);
        else if (DECODE_IS(key, "nodeSelector"))
            jsonx_kv_map(jx, val, 0, &u->node_selector);
        else if (DECODE_IS(key, "tolerations"))
            decode__tolerations(d, val, DEC_MAX_TOLERATIONS, true, &u->tolerations,
                                &u->ntolerations);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "name");
}

static void decode_check_state(decode_t *d, const json_t *v, void *item, void *ctx)
{
    static const char *const states[] = {"Pending", "Ready", "Retry", "Rejected", NULL};
    admission_check_state_t *cs = item;
    jsonx_t *jx = &d->jx;
    int e;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name")) {
            jsonx_string(jx, val, &cs->name);
        } else if (DECODE_IS(key, "state")) {
            if (jsonx_enum(jx, val, states, &e))
                cs->state = (check_state_t)e;
        } else if (DECODE_IS(key, "lastTransitionTime")) {
            jsonx_time(jx, val, &cs->transition_time);
        } else if (DECODE_IS(key, "message")) {
            jsonx_string(jx, val, &cs->message);
        } else if (DECODE_IS(key, "requeueAfterSeconds")) {
            cs->has_requeue_after = decode_count(d, val, &cs->requeue_after_s);
        } else if (DECODE_IS(key, "retryCount")) {
            cs->has_retry_count = decode_count(d, val, &cs->retry_count);
        } else if (DECODE_IS(key, "podSetUpdates")) {
            cs->updates = decode__list(d, val, DEC_MAX_POD_SETS, false, sizeof(*cs->updates),
                                       decode_pod_set_update, NULL, &cs->nupdates);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "name", "state");
}

/* Status fields the controller owns that neither admission nor validation reads back. */
static const char *const wl_status_ignored[] = {
    "requeueState", "resourceRequests", "schedulingStats", "preemptionGates", NULL,
};

/* status.unhealthyNodes[i]: {name} into a char * (the array decode__list builds). */
static void decode_unhealthy_node(decode_t *d, const json_t *v, void *item, void *ctx)
{
    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name"))
            jsonx_string(&d->jx, val, (char **)item);
        else
            jsonx_unknown(&d->jx, key);
    }
    DECODE_REQUIRED(d, v, "name");
}

static void decode_wl_status(decode_t *d, const json_t *v, workload_t *wl)
{
    jsonx_t *jx = &d->jx;
    const char *accumulated =
        d->v1beta1 ? "accumulatedPastExexcutionTimeSeconds" : "accumulatedPastExecutionTimeSeconds";

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "admission"))
            decode_admission(d, val, wl);
        else if (DECODE_IS(key, "conditions"))
            decode_wl_conditions(d, val, wl);
        else if (DECODE_IS(key, accumulated))
            jsonx_int32(jx, val, &wl->accumulated_exec_seconds);
        else if (DECODE_IS(key, "reclaimablePods"))
            wl->reclaimable_pods =
                decode__list(d, val, DEC_MAX_POD_SETS, false, sizeof(*wl->reclaimable_pods),
                             decode_reclaimable_pod, NULL, &wl->nreclaimable_pods);
        else if (DECODE_IS(key, "admissionChecks"))
            wl->check_states =
                decode__list(d, val, DEC_MAX_WL_ADMISSION_CHECKS, false, sizeof(*wl->check_states),
                             decode_check_state, NULL, &wl->ncheck_states);
        else if (DECODE_IS(key, "clusterName"))
            jsonx_string(jx, val, &wl->cluster_name);
        else if (DECODE_IS(key, "nominatedClusterNames"))
            jsonx_string_array(jx, val, DEC_MAX_NOMINATED_CLUSTERS, false, &wl->nominated_clusters,
                               &wl->nnominated_clusters);
        else if (DECODE_IS(key, "unhealthyNodes"))
            wl->unhealthy_nodes =
                decode__list(d, val, DEC_MAX_UNHEALTHY_NODES, false, sizeof(char *),
                             decode_unhealthy_node, NULL, &wl->nunhealthy_nodes);
        else if (!decode__in(d, key, wl_status_ignored))
            jsonx_unknown(jx, key);
    }
}

void decode__workload(decode_t *d, const json_t *root, workload_t *out)
{
    jsonx_t *jx = &d->jx;

    out->active = true;
    decode__meta(d, json_object_get(root, "metadata"), &out->meta, true, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "spec"))
            decode_wl_spec(d, val, out);
        else if (DECODE_IS(key, "status"))
            decode_wl_status(d, val, out);
        else if (!decode__in(d, key, root_keys))
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, root, "spec");
}

/* ---- batch/v1 Job
 * ------------------------------------------------------------------------------------ */

/* JobSpec / JobStatus fields of batch/v1 (v1.34) that admission does not read. */
static const char *const job_spec_tolerated[] = {
    "activeDeadlineSeconds",   "podFailurePolicy",     "successPolicy", "backoffLimit",
    "backoffLimitPerIndex",    "maxFailedIndexes",     "selector",      "manualSelector",
    "ttlSecondsAfterFinished", "podReplacementPolicy", "managedBy",     NULL,
};
static const char *const job_status_tolerated[] = {
    "startTime",     "completionTime",          "ready", "terminating", "completedIndexes",
    "failedIndexes", "uncountedTerminatedPods", NULL,
};

static void decode_job_spec(decode_t *d, const json_t *v, job_t *job)
{
    jsonx_t *jx = &d->jx;
    bool have_par = false;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "parallelism")) {
            have_par = true;
            jsonx_int32(jx, val, &job->parallelism);
        } else if (DECODE_IS(key, "completions")) {
            job->has_completions = jsonx_int32(jx, val, &job->completions);
        } else if (DECODE_IS(key, "suspend")) {
            jsonx_bool(jx, val, &job->suspend);
        } else if (DECODE_IS(key, "completionMode")) {
            int m;
            if (jsonx_enum(jx, val, (const char *const[]){"NonIndexed", "Indexed", NULL}, &m))
                job->indexed = m == 1;
        } else if (DECODE_IS(key, "template")) {
            decode__pod_template(d, val, &job->template_labels, &job->template_annotations,
                                 &job->spec);
        } else if (!decode__in(d, key, job_spec_tolerated)) {
            jsonx_unknown(jx, key);
        }
    }
    /* Kubernetes SetDefaults_Job: both unset -> both 1; parallelism unset -> 1. */
    if (!have_par && decode__absent(v, "completions")) {
        job->has_completions = true;
        job->completions = 1;
    }
    if (!have_par)
        job->parallelism = 1;
    DECODE_REQUIRED(d, v, "template");
}

static void decode_job_status(decode_t *d, const json_t *v, job_t *job)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "active")) {
            jsonx_int32(jx, val, &job->active);
        } else if (DECODE_IS(key, "succeeded")) {
            jsonx_int32(jx, val, &job->succeeded);
        } else if (DECODE_IS(key, "failed")) {
            jsonx_int32(jx, val, &job->failed);
        } else if (DECODE_IS(key, "conditions")) {
            if (!jsonx_want_array_max(jx, val, DEC_MAX_LIST))
                continue;
            for (size_t i = 0; i < json_array_size(val); i++) {
                size_t mark = jsonx_push_index(jx, i);
                char *type = NULL;
                bool is_true = false;
                int64_t when = 0;
                decode_condition(d, json_array_get(val, i), &type, &is_true, &when);
                if (type != NULL && strcmp(type, "Complete") == 0)
                    job->complete = is_true;
                else if (type != NULL && strcmp(type, "Failed") == 0)
                    job->failed_cond = is_true;
                free(type);
                jsonx_pop(jx, mark);
            }
        } else if (!decode__in(d, key, job_status_tolerated)) {
            jsonx_unknown(jx, key);
        }
    }
}

void decode__job(decode_t *d, const json_t *root, job_t *out)
{
    jsonx_t *jx = &d->jx;

    out->parallelism = 1;
    decode__meta(d, json_object_get(root, "metadata"), &out->meta, true, true);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "spec"))
            decode_job_spec(d, val, out);
        else if (DECODE_IS(key, "status"))
            decode_job_status(d, val, out);
        else if (!decode__in(d, key, root_keys))
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, root, "spec");
}
