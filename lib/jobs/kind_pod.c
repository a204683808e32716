/* kind_pod -- a plain Pod as Kueue's pod integration admits it: held by a scheduling gate. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/podgroup.h"

#include "jobs/framework_int.h"
#include "jobs/objpath.h"

#include <string.h>

/*
 * A single Pod is its own pod set "main" of one pod; the Workload's template is a copy of its
 * spec alone (Kueue builds the pod set from pod.Spec, with empty metadata), so podset_template()
 * drops the copy's apiVersion, kind, metadata and status.
 *
 *   created gated --jobs_start: merge, ungate--> released --(stop)--> TerminationTarget, deleted
 *
 * Held means gated by kueue.x-k8s.io/admission, or terminated (Succeeded / Failed): a finished
 * Pod runs no more, which is what Kueue's IsSuspended() says for Pods. Releasing removes the gate
 * and, since sluice places no pod by topology, Kueue's topology gate as well (Kueue removes it
 * whenever the admission has no topology assignment). Holding again is refused for a Pod that
 * exists (it has a uid): the API server lets gates be removed, never added, so such a Pod is
 * stopped by deletion (podgroup.h). A Pod being created (a webhook request: no uid yet) can be
 * gated.
 */

static bool has_gate(const json_t *pod, const char *name)
{
    size_t i;
    json_t *g;
    json_array_foreach(JOBS_AT(pod, "spec", "schedulingGates"), i, g)
    {
        const char *n = json_string_value(json_object_get(g, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return true;
    }
    return false;
}

bool jobs_pod_gated(const json_t *pod)
{
    return has_gate(pod, JOBS_POD_GATE);
}

static const char *phase_of(const json_t *pod)
{
    const char *p = json_string_value(JOBS_AT(pod, "status", "phase"));
    return p != NULL ? p : "";
}

static bool terminated(const json_t *pod)
{
    const char *p = phase_of(pod);
    return strcmp(p, "Succeeded") == 0 || strcmp(p, "Failed") == 0;
}

static err_t pod_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    if (!json_is_object(JOBS_AT(obj, "spec")))
        return err_set(msg, ERR_INVALID, "spec: Required value");
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "main");
    out->path[0] = '\0'; /* the Pod itself */
    out->tmpl = obj;
    out->count = 1;
    *n = 1;
    return ERR_OK;
}

/* Keep only the spec: Kueue's pod set template is {spec: pod.spec}. */
static err_t pod_podset_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    (void)obj;
    (void)i;
    (void)msg;
    const char *drop[] = {"apiVersion", "kind", "metadata", "status"};
    for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
        json_object_del(tmpl, drop[k]);
    return ERR_OK;
}

static bool pod_suspended(const json_t *obj)
{
    return jobs_pod_gated(obj) || terminated(obj);
}

static err_t remove_gate(json_t *pod, const char *name)
{
    json_t *gates = JOBS_AT(pod, "spec", "schedulingGates");
    for (size_t i = 0; i < json_array_size(gates);) {
        const char *n = json_string_value(json_object_get(json_array_get(gates, i), "name"));
        if (n != NULL && strcmp(n, name) == 0)
            json_array_remove(gates, i);
        else
            i++;
    }
    if (json_is_array(gates) && json_array_size(gates) == 0)
        json_object_del(json_object_get(pod, "spec"), "schedulingGates");
    return ERR_OK;
}

static err_t pod_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    if (!suspend) {
        remove_gate(obj, JOBS_POD_GATE);
        remove_gate(obj, JOBS_POD_TOPOLOGY_GATE);
        return ERR_OK;
    }
    if (jobs_pod_gated(obj))
        return ERR_OK;
    const char *uid = json_string_value(JOBS_AT(obj, "metadata", "uid"));
    if (uid != NULL && uid[0] != '\0')
        return err_set(msg, ERR_UNSUPPORTED,
                       "a Pod cannot be gated again once released: it is stopped by deletion");
    json_t *spec = objpath_ensure(obj, "spec", (char *)NULL);
    json_t *gates = json_object_get(spec, "schedulingGates");
    if (spec == NULL || (gates != NULL && !json_is_array(gates)))
        return err_set(msg, ERR_INVALID, "spec.schedulingGates: must be of type array");
    if (gates == NULL) {
        gates = json_array();
        if (json_object_set_new(spec, "schedulingGates", gates))
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (json_array_append_new(gates, json_pack("{s:s}", "name", JOBS_POD_GATE)))
        return err_set(msg, ERR_NOMEM, "out of memory");
    return ERR_OK;
}

static jobs_phase_t pod_phase(const json_t *obj, const char **message)
{
    const char *p = phase_of(obj);
    if (strcmp(p, "Succeeded") != 0 && strcmp(p, "Failed") != 0)
        return JOBS_RUNNING;
    if (message != NULL)
        *message = json_string_value(JOBS_AT(obj, "status", "message"));
    return p[0] == 'S' ? JOBS_SUCCEEDED : JOBS_FAILED;
}

/* Kueue: a single Pod is never "active" -- once stopped (deleted) its quota is released at once,
 * without waiting for the Pod to be gone. */
static bool pod_active(const json_t *obj)
{
    (void)obj;
    return false;
}

static bool ready_true(const json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(JOBS_AT(pod, "status", "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type != NULL && strcmp(type, "Ready") == 0) {
            const char *st = json_string_value(json_object_get(c, "status"));
            return st != NULL && strcmp(st, "True") == 0;
        }
    }
    return false;
}

static bool pod_pods_ready(const json_t *obj)
{
    return ready_true(obj);
}

/* Kueue's Skip: a Pod without kueue.x-k8s.io/managed=true is not its (the webhook did not take
 * it, or it belongs to a Kueue-managed owner). */
static bool pod_skip(const json_t *obj)
{
    const char *v = objpath_label(obj, JOBS_POD_MANAGED);
    return v == NULL || strcmp(v, "true") != 0;
}

const jobs_kind_t jobs_kind_pod = {
    .framework = "pod",
    .group = "",
    .version = "v1",
    .kind = "Pod",
    .resource = "pods",
    .pod_sets = pod_pod_sets,
    .suspended = pod_suspended,
    .set_suspended = pod_set_suspended,
    .set_count = NULL,
    .phase = pod_phase,
    .active = pod_active,
    .pods_ready = pod_pods_ready,
    .skip = pod_skip,
    .podset_template = pod_podset_template,
    .admit = JOBS_ADMIT_POD,
};

/* ---- webhook and stop --------------------------------------------------------------------------
 */

static err_t add_finalizer(json_t *pod, const char *name)
{
    json_t *meta = objpath_ensure(pod, "metadata", (char *)NULL);
    if (meta == NULL)
        return ERR_INVALID;
    json_t *fins = json_object_get(meta, "finalizers");
    size_t i;
    json_t *f;
    json_array_foreach(fins, i, f)
    {
        if (json_string_value(f) != NULL && strcmp(json_string_value(f), name) == 0)
            return ERR_OK;
    }
    if (fins == NULL) {
        fins = json_array();
        if (json_object_set_new(meta, "finalizers", fins))
            return ERR_NOMEM;
    } else if (!json_is_array(fins)) {
        return ERR_INVALID;
    }
    return json_array_append_new(fins, json_string(name)) ? ERR_NOMEM : ERR_OK;
}

err_t jobs_pod_default(json_t *pod, err_msg_t *msg)
{
    bool by_parent = json_object_get(JOBS_AT(pod, "metadata", "annotations"),
                                     JOBS_POD_SUSPENDING_PARENT) != NULL;
    err_t e;
    if (!by_parent) {
        if ((e = objpath_set_str(pod, JOBS_POD_MANAGED, "true", "metadata", "labels",
                                 (char *)NULL)) != ERR_OK ||
            (e = add_finalizer(pod, JOBS_POD_MANAGED)) != ERR_OK)
            return err_set(msg, e, "metadata: cannot mark the Pod managed");
    }
    if ((e = pod_set_suspended(pod, true, msg)) != ERR_OK)
        return e;
    char role[JOBS_POD_ROLE_MAX + 1];
    if ((e = jobs_pod_role_hash(pod, role, msg)) != ERR_OK)
        return e;
    if ((e = objpath_set_str(pod, JOBS_POD_ROLE_HASH, role, "metadata", "annotations",
                             (char *)NULL)) != ERR_OK)
        return err_set(msg, e, "metadata.annotations: cannot set the role hash");
    return ERR_OK;
}

bool jobs_pod_stop_needed(const json_t *pod, bool workload_deleted)
{
    if (JOBS_AT(pod, "metadata", "deletionTimestamp") != NULL)
        return false;
    return workload_deleted || !pod_suspended(pod);
}

json_t *jobs_pod_termination_condition(const char *reason, const char *message, const char *now)
{
    return json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                     JOBS_POD_TERMINATION_TARGET, "status", "True", "reason", reason, "message",
                     message != NULL ? message : "", "lastTransitionTime", now);
}
