/* wlstatus -- the Workload objects and status patches the operator writes (pure JSON builders). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/wlstatus.h"

#include "model/convert.h"

#include "ctrl/cond.h"
#include "jobs/job_workload.h"
#include "model/jsonx.h"
#include "model/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the Workload for a Job ------------------------------------------------------------- */

/* Labels the job controller puts on pod templates; Kueue drops them from the podset. */
static bool dropped_template_label(const char *k)
{
    return strcmp(k, "job-name") == 0 || strcmp(k, "controller-uid") == 0 ||
           strcmp(k, "batch.kubernetes.io/controller-uid") == 0;
}

/* A pod set's template as the Workload keeps it: only labels (but the Job controller's) and
 * annotations in its metadata, the spec as it is. */
static json_t *podset_template(const json_t *tmpl)
{
    const json_t *meta = json_object_get(tmpl, "metadata");
    json_t *out = json_object(), *m = json_object(), *labels = json_object();
    const char *k;
    json_t *v;

    if (out == NULL || m == NULL || labels == NULL)
        goto fail;
    json_object_foreach((json_t *)json_object_get(meta, "labels"), k, v)
    {
        if (!dropped_template_label(k) && json_object_set(labels, k, v))
            goto fail;
    }
    if (json_object_size(labels) > 0 && json_object_set(m, "labels", labels))
        goto fail;
    if (json_object_size(json_object_get(meta, "annotations")) > 0 &&
        json_object_set_new(m, "annotations", json_deep_copy(json_object_get(meta, "annotations"))))
        goto fail;
    if (json_object_set(out, "metadata", m) ||
        json_object_set_new(out, "spec",
                            json_is_object(json_object_get(tmpl, "spec"))
                                ? json_deep_copy(json_object_get(tmpl, "spec"))
                                : json_object()))
        goto fail;
    json_decref(m);
    json_decref(labels);
    return out;
fail:
    json_decref(out);
    json_decref(m);
    json_decref(labels);
    return NULL;
}

/* spec.podSets[i] for pod set `p` of `wl` with template `tmpl` (consumed). */
static json_t *podset_json(const pod_set_t *p, json_t *tmpl)
{
    json_t *ps = json_pack("{s:s,s:i}", "name", p->name, "count", p->count);

    if (ps == NULL || tmpl == NULL ||
        (p->has_min_count && json_object_set_new(ps, "minCount", json_integer(p->min_count)))) {
        json_decref(ps);
        json_decref(tmpl); /* ours to release until it is set (test_ctrl_oom, ASan) */
        return NULL;
    }
    if (json_object_set_new(ps, "template", tmpl)) { /* releases tmpl on failure too */
        json_decref(ps);
        return NULL;
    }
    return ps;
}

json_t *wlstatus_for_job(const workload_t *wl, const jobs_kind_t *k, const json_t *job,
                         const jobs_podset_t *pss, size_t n, const char *api_version,
                         err_msg_t *msg)
{
    const json_t *jmeta = json_object_get(job, "metadata");
    json_t *out = NULL, *meta = NULL, *spec = NULL, *sets = NULL;
    const char *uid;

    if (wl->npod_sets != n || n == 0) {
        err_set(msg, ERR_INVALID, "%zu pod sets read, %zu built", n, wl->npod_sets);
        return NULL;
    }
    uid = json_string_value(json_object_get(jmeta, "uid"));
    out = json_pack("{s:s,s:s}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload");
    meta = json_pack("{s:s,s:s,s:[s],s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}", "name", wl->meta.name,
                     "namespace", wl->meta.namespace, "finalizers", JOB_FINALIZER_RESOURCE_IN_USE,
                     "ownerReferences", "apiVersion", api_version, "kind", k->kind, "name",
                     json_string_value(json_object_get(jmeta, "name")), "uid", uid ? uid : "",
                     "controller", 1, "blockOwnerDeletion", 1);
    spec = json_object();
    sets = json_array();
    if (out == NULL || meta == NULL || spec == NULL || sets == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        json_t *tmpl = podset_template(pss[i].tmpl);
        if (tmpl != NULL && k->podset_template != NULL &&
            k->podset_template(job, i, tmpl, msg) != ERR_OK) {
            json_decref(tmpl);
            goto fail;
        }
        if (json_array_append_new(sets, podset_json(&wl->pod_sets[i], tmpl)))
            goto fail;
    }
    if (wl->meta.labels.len > 0) {
        json_t *labels = json_object();
        if (labels == NULL || json_object_set_new(meta, "labels", labels))
            goto fail;
        for (size_t i = 0; i < wl->meta.labels.len; i++)
            if (json_object_set_new(labels, wl->meta.labels.items[i].key,
                                    json_string(wl->meta.labels.items[i].value)))
                goto fail;
    }
    if (json_object_set(spec, "podSets", sets))
        goto fail;
    if (wl->queue_name != NULL &&
        json_object_set_new(spec, "queueName", json_string(wl->queue_name)))
        goto fail;
    if (wl->priority_source != PRIORITY_SOURCE_NONE && wl->priority_class != NULL) {
        bool wpc = wl->priority_source == PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
        if (json_object_set_new(spec, "priorityClassRef",
                                json_pack("{s:s,s:s,s:s}", "group",
                                          wpc ? "kueue.x-k8s.io" : "scheduling.k8s.io", "kind",
                                          wpc ? "WorkloadPriorityClass" : "PriorityClass", "name",
                                          wl->priority_class)))
            goto fail;
    }
    if (wl->has_priority && json_object_set_new(spec, "priority", json_integer(wl->priority)))
        goto fail;
    if (wl->has_max_exec_seconds && json_object_set_new(spec, "maximumExecutionTimeSeconds",
                                                        json_integer(wl->max_exec_seconds)))
        goto fail;
    if (json_object_set(out, "metadata", meta) || json_object_set(out, "spec", spec))
        goto fail;
    json_decref(meta);
    json_decref(spec);
    json_decref(sets);
    return out;
fail:
    json_decref(out);
    json_decref(meta);
    json_decref(spec);
    json_decref(sets);
    return NULL;
}

/* ---- status.admission ------------------------------------------------------------------- */

static json_t *resources_json(const resource_list_t *l)
{
    json_t *o = json_object();
    char buf[QUANTITY_STR_MAX];

    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < l->len; i++) {
        if (json_object_set_new(o, l->items[i].name,
                                json_string(quantity_format(l->items[i].value, buf)))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *wlstatus_admission_json(const admission_t *a)
{
    json_t *out = json_pack("{s:s,s:[]}", "clusterQueue", a->cluster_queue, "podSetAssignments");
    json_t *arr = json_object_get(out, "podSetAssignments");

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < a->nassignments; i++) {
        const pod_set_assignment_t *p = &a->assignments[i];
        json_t *psa = json_pack("{s:s}", "name", p->name ? p->name : "main");
        json_t *flavors = json_object();
        if (psa == NULL || flavors == NULL) {
            json_decref(psa); /* not in arr yet */
            json_decref(flavors);
            goto fail;
        }
        if (json_array_append_new(arr, psa)) {
            json_decref(flavors);
            goto fail;
        }
        if (json_object_set_new(psa, "flavors", flavors))
            goto fail;
        for (size_t j = 0; j < p->flavors.len; j++)
            if (json_object_set_new(flavors, p->flavors.items[j].key,
                                    json_string(p->flavors.items[j].value)))
                goto fail;
        if (json_object_set_new(psa, "resourceUsage", resources_json(&p->usage)))
            goto fail;
        if (p->has_count && json_object_set_new(psa, "count", json_integer(p->count)))
            goto fail;
        if (p->topology != NULL) { /* v1beta2: slices, encoded as Kueue encodes them */
            json_t *ta = NULL;
            if (convert_topology_assignment(p->topology, &ta, NULL) != ERR_OK ||
                json_object_set_new(psa, "topologyAssignment", ta))
                goto fail;
        }
    }
    return out;
fail:
    json_decref(out);
    return NULL;
}

/* ---- status patches --------------------------------------------------------------------- */

/* {"metadata":{"resourceVersion":rv},"status":{"conditions":[copy]}}; *conds = the copy. */
static json_t *patch_start(const json_t *wl, json_t **conds)
{
    const json_t *meta = json_object_get(wl, "metadata");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const json_t *cur = json_object_get(json_object_get(wl, "status"), "conditions");
    json_t *c = json_is_array(cur) ? json_deep_copy(cur) : json_array();
    json_t *p = json_pack("{s:{},s:{}}", "metadata", "status");

    if (c == NULL || p == NULL ||
        (rv != NULL &&
         json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string(rv))) ||
        json_object_set(json_object_get(p, "status"), "conditions", c)) {
        json_decref(c);
        json_decref(p);
        return NULL;
    }
    json_decref(c); /* the patch holds it */
    *conds = c;
    return p;
}

static int64_t generation(const json_t *wl)
{
    json_t *g = json_object_get(json_object_get(wl, "metadata"), "generation");
    return json_is_integer(g) ? json_integer_value(g) : -1;
}

bool wlstatus_cond(const json_t *wl, const char *type)
{
    return cond_is_true(json_object_get(json_object_get(wl, "status"), "conditions"), type);
}

bool wlstatus_reserved(const json_t *wl)
{
    const json_t *adm = json_object_get(json_object_get(wl, "status"), "admission");
    return json_is_object(adm) && wlstatus_cond(wl, "QuotaReserved");
}

/* Reset a True condition `type` to False/QuotaReserved "Previously: <message>". */
static err_t reset_previous(json_t *conds, const char *type, int64_t gen, int64_t now_s)
{
    json_t *c = cond_find(conds, type);
    const char *s, *m;
    char *text;
    err_t rc;
    size_t n;

    if (c == NULL)
        return ERR_OK;
    s = json_string_value(json_object_get(c, "status"));
    if (s == NULL || strcmp(s, "True") != 0)
        return ERR_OK;
    m = json_string_value(json_object_get(c, "message"));
    n = strlen(m ? m : "") + 16;
    text = malloc(n);
    if (text == NULL)
        return ERR_NOMEM;
    snprintf(text, n, "Previously: %s", m ? m : "");
    rc = cond_set(conds, type, "False", "QuotaReserved", text, gen, now_s, NULL);
    free(text);
    return rc;
}

json_t *wlstatus_admit_patch(const json_t *wl, const admission_t *a, int64_t now_s)
{
    return wlstatus_reserve_patch(wl, a, NULL, now_s);
}

json_t *wlstatus_reserve_patch(const json_t *wl, const admission_t *a, json_t *checks,
                               int64_t now_s)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds), *adm = wlstatus_admission_json(a);
    int64_t gen = generation(wl);
    char msg[512];

    if (p == NULL || adm == NULL)
        goto fail;
    snprintf(msg, sizeof(msg), "Quota reserved in ClusterQueue %s", a->cluster_queue);
    if (json_object_set_new(json_object_get(p, "status"), "admission", adm)) {
        adm = NULL;
        goto fail;
    }
    adm = NULL;
    if (cond_set(conds, "QuotaReserved", "True", "QuotaReserved", msg, gen, now_s, NULL) !=
            ERR_OK ||
        (checks == NULL
             ? cond_set(conds, "Admitted", "True", "Admitted", "The workload is admitted", gen,
                        now_s, NULL)
             : cond_set(conds, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                        "The workload has not all checks ready", gen, now_s, NULL)) != ERR_OK ||
        (checks != NULL &&
         json_object_set(json_object_get(p, "status"), "admissionChecks", checks) != 0) ||
        reset_previous(conds, "Evicted", gen, now_s) != ERR_OK ||
        reset_previous(conds, "Preempted", gen, now_s) != ERR_OK)
        goto fail;
    return p;
fail:
    json_decref(adm);
    json_decref(p);
    return NULL;
}

json_t *wlstatus_replace_patch(const admission_t *a)
{
    json_t *adm = wlstatus_admission_json(a);

    return adm != NULL ? json_pack("{s:{s:o,s:n}}", "status", "admission", adm, "unhealthyNodes")
                       : NULL;
}

json_t *wlstatus_unhealthy_patch(const char *const *nodes, size_t n)
{
    json_t *list = n > 0 ? json_array() : json_null();

    for (size_t i = 0; list != NULL && i < n; i++) {
        if (json_array_append_new(list, json_pack("{s:s}", "name", nodes[i]))) {
            json_decref(list);
            list = NULL;
        }
    }
    return list != NULL ? json_pack("{s:{s:o}}", "status", "unhealthyNodes", list) : NULL;
}

json_t *wlstatus_evict_patch(const json_t *wl, const char *reason, const char *preempt_reason,
                             const char *message, int64_t now_s)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds);
    int64_t gen = generation(wl);

    if (p == NULL)
        return NULL;
    if (cond_set(conds, "Evicted", "True", reason, message, gen, now_s, NULL) != ERR_OK ||
        (preempt_reason != NULL && preempt_reason[0] != '\0' &&
         cond_set(conds, "Preempted", "True", preempt_reason, message, gen, now_s, NULL) !=
             ERR_OK) ||
        /* Kueue's prepareForEviction resets status.unhealthyNodes */
        (json_object_get(json_object_get(wl, "status"), "unhealthyNodes") != NULL &&
         json_object_set_new(json_object_get(p, "status"), "unhealthyNodes", json_null()))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* status.accumulatedPastExecutionTimeSeconds once the admission ends at `now_s` (a new
 * reference: an integer, or JSON null to clear it; NULL on OOM). */
static json_t *accumulated_after(const json_t *wl, const json_t *conds, const char *evict_reason,
                                 int64_t now_s)
{
    const json_t *cur =
        json_object_get(json_object_get(wl, "status"), "accumulatedPastExecutionTimeSeconds");
    json_int_t acc = json_is_integer(cur) ? json_integer_value(cur) : 0;
    const json_t *adm = cond_find((json_t *)conds, "Admitted");
    const char *st = json_string_value(json_object_get(adm, "status"));
    const char *ltt = json_string_value(json_object_get(adm, "lastTransitionTime"));
    int64_t since;

    if (strstr(evict_reason, "MaximumExecutionTimeExceeded") != NULL)
        return json_null();
    if (st != NULL && strcmp(st, "True") == 0 && ltt != NULL && jsonx_parse_time(ltt, &since) &&
        now_s > since)
        acc += now_s - since;
    if (acc > INT32_MAX)
        acc = INT32_MAX; /* an int32 field in Kueue's API */
    if (acc <= 0 && !json_is_integer(cur))
        return json_null(); /* nothing accumulated: leave the field unset */
    return json_integer(acc);
}

json_t *wlstatus_release_patch(const json_t *wl, int64_t now_s)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds), *ev;
    int64_t gen = generation(wl);
    const char *reason = "Preempted", *message = "";
    bool retry_later;

    if (p == NULL)
        return NULL;
    /* A Retry check's delay (requeueState.requeueAt, checks.c) still to come: Requeued=False
     * AdmissionCheck until then (the backoff's end is written by readiness.c). */
    {
        const char *at = json_string_value(json_object_get(
            json_object_get(json_object_get(wl, "status"), "requeueState"), "requeueAt"));
        int64_t at_s;
        retry_later = at != NULL && jsonx_parse_time(at, &at_s) && at_s > now_s;
    }
    ev = cond_find(conds, "Evicted");
    if (ev != NULL) {
        const char *r = json_string_value(json_object_get(ev, "reason"));
        const char *m = json_string_value(json_object_get(ev, "message"));
        reason = r ? r : reason;
        message = m ? m : message;
    }
    /* Kueue (workload.SyncAdmittedCondition): when Admitted turns False, the time it was True
     * is added to status.accumulatedPastExecutionTimeSeconds, so that maximumExecutionTimeSeconds
     * counts every admission, across restarts of the operator too (the engine reads it back);
     * a deactivation for exceeding it resets it. */
    json_t *acc = accumulated_after(wl, conds, reason, now_s);
    if (acc == NULL || json_object_set_new(json_object_get(p, "status"),
                                           "accumulatedPastExecutionTimeSeconds", acc)) {
        json_decref(p);
        return NULL;
    }
    if (json_object_set_new(json_object_get(p, "status"), "admission", json_null()) ||
        cond_set(conds, "QuotaReserved", "False", "PendingEvaluation", message, gen, now_s, NULL) !=
            ERR_OK ||
        cond_set(conds, "Admitted", "False", "NoReservation", "The workload has no reservation",
                 gen, now_s, NULL) != ERR_OK ||
        (strcmp(reason, "AdmissionCheck") == 0 && !retry_later
             /* Kueue: Requeued=False AdmissionCheck, then at once (no requeueAt) True */
             ? cond_set(conds, "Requeued", "True", "BackoffFinished",
                        "The workload backoff was finished", gen, now_s, NULL)
             : cond_set(conds, "Requeued",
                        strcmp(reason, "Preempted") == 0 || strcmp(reason, "NodeFailures") == 0
                            ? "True"
                            : "False",
                        reason, message, gen, now_s, NULL)) != ERR_OK) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *wlstatus_unreserve_patch(const json_t *wl, const char *reason, const char *message,
                                 int64_t now_s)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds), *acc;
    const json_t *adm;
    const char *st;
    int64_t gen = generation(wl);

    if (p == NULL)
        return NULL;
    acc = accumulated_after(wl, conds, reason, now_s);
    adm = cond_find(conds, "Admitted");
    st = json_string_value(json_object_get(adm, "status"));
    if (acc == NULL ||
        json_object_set_new(json_object_get(p, "status"), "accumulatedPastExecutionTimeSeconds",
                            acc) ||
        json_object_set_new(json_object_get(p, "status"), "admission", json_null()) ||
        cond_set(conds, "QuotaReserved", "False", reason, message, gen, now_s, NULL) != ERR_OK ||
        /* Kueue's SyncAdmittedCondition: only an Admitted=True turns False. */
        (st != NULL && strcmp(st, "True") == 0 &&
         cond_set(conds, "Admitted", "False", "NoReservation", "The workload has no reservation",
                  gen, now_s, NULL) != ERR_OK)) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *wlstatus_finish_patch(const json_t *wl, const char *reason, const char *message,
                              int64_t now_s)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds);

    if (p == NULL)
        return NULL;
    if (cond_set(conds, "Finished", "True", reason, message, generation(wl), now_s, NULL) !=
        ERR_OK) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *wlstatus_pending_patch(const json_t *wl, const char *reason, const char *message,
                               int64_t now_s, bool *changed)
{
    json_t *conds = NULL, *p = patch_start(wl, &conds);

    *changed = true;
    if (p == NULL)
        return NULL;
    /* On failure *changed stays true: unknown, so the caller tries again. */
    if (cond_set(conds, "QuotaReserved", "False", reason, message, generation(wl), now_s,
                 changed) != ERR_OK ||
        !*changed) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *wlstatus_cond_patch(const json_t *wl, const char *type, const char *status,
                            const char *reason, const char *message, int64_t now_s, bool *changed)
{
    const json_t *cur =
        cond_find(json_object_get(json_object_get(wl, "status"), "conditions"), type);
    const char *s = json_string_value(json_object_get(cur, "status"));
    const char *r = json_string_value(json_object_get(cur, "reason"));
    json_t *conds = NULL, *p;

    *changed = false;
    if (s != NULL && r != NULL && strcmp(s, status) == 0 && strcmp(r, reason) == 0)
        return NULL;
    *changed = true;
    p = patch_start(wl, &conds);
    if (p == NULL)
        return NULL;
    if (cond_set(conds, type, status, reason, message, generation(wl), now_s, NULL) != ERR_OK) {
        json_decref(p);
        return NULL;
    }
    return p;
}
