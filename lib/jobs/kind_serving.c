/* kind_serving -- Deployment, StatefulSet and LeaderWorkerSet, admitted through their Pods. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/kind_serving.h"

#include "jobs/framework_int.h"
#include "jobs/objpath.h"
#include "jobs/podgroup.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Kueue never suspends a serving object: a Deployment, StatefulSet or LeaderWorkerSet keeps its
 * replicas, and Kueue holds their Pods instead. Its webhook on the owner marks the pod template
 * (jobs_serving_default()); every Pod created from it reaches the pod webhook marked
 * pod-suspending-parent and is created gated (jobs_pod_default()). Then:
 *
 *   Deployment       each Pod is a plain Pod: its own Workload ("pod-<pod>-<hash>"), admitted
 *                    and released alone; a Deployment of 3 replicas is 3 Workloads of 1 pod.
 *   StatefulSet      Kueue's StatefulSet reconciler creates one Workload for the set
 *                    ("statefulset-<name>-<hash>", pod set main x replicas) and its pod
 *                    reconciler writes into each Pod the group it belongs to (that Workload's
 *                    name, as a prebuilt Workload), the total count and role "main", fast
 *                    admission (the Workload is whole before its Pods exist) and serving.
 *   LeaderWorkerSet  one Workload per replica group ("leaderworkerset-<name>-<i>-<hash>"),
 *                    with pod sets leader (1) + worker (size - 1), or main (size) without a
 *                    leader template; its reconciler marks each Pod with its replica's group
 *                    once LeaderWorkerSet has labelled the Pod with its group index, and with
 *                    role leader or worker (worker Pods carry the leader's name).
 *
 * The Pods are then started and stopped as plain Pods (kind_pod.c, podgroup.c); the owner's
 * table entry serves the Workload's shape (pod_sets of one of its Workloads), the webhook
 * mutation (set_suspended(true)), and the owner's status (active: some replica ready; pods ready:
 * all replicas ready). A serving Workload never finishes.
 */

#define FW_DEPLOYMENT       "deployment"
#define FW_STATEFULSET      "statefulset"
#define FW_LWS              "leaderworkerset.x-k8s.io/leaderworkerset"
#define LWS_PREFIX          "leaderworkerset.sigs.k8s.io"
#define LABEL_QUEUE         "kueue.x-k8s.io/queue-name"
#define LABEL_PRIORITY      "kueue.x-k8s.io/priority-class"
#define ANN_OWNER_GVK       "kueue.x-k8s.io/job-owner-gvk"
#define ANN_OWNER_NAME      "kueue.x-k8s.io/job-owner-name"
#define ANN_COMPONENT_INDEX "kueue.x-k8s.io/component-workload-index"
#define ANN_POD_INDEX_LABEL "kueue.x-k8s.io/pod-group-pod-index-label"
#define STS_POD_INDEX_LABEL "apps.kubernetes.io/pod-index"

static bool is_lws(const jobs_kind_t *k)
{
    return k == &jobs_kind_leaderworkerset;
}

/* ---- pod sets ---------------------------------------------------------------------------------
 */

static err_t one_set(jobs_podset_t *out, const char *name, json_t *tmpl, const char *path,
                     int32_t count, err_msg_t *msg)
{
    if (!json_is_object(tmpl))
        return err_set(msg, ERR_INVALID, "%s: Required value", path);
    if (count < 0)
        return err_set(msg, ERR_INVALID, "%s: count %d: must be greater than or equal to 0", path,
                       count);
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->path, sizeof(out->path), "%s", path);
    out->tmpl = tmpl;
    out->count = count;
    return ERR_OK;
}

static err_t deployment_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    err_t e = one_set(out, "main", JOBS_AT(obj, "spec", "template"), "spec.template", 1, msg);
    if (e == ERR_OK)
        *n = 1;
    return e;
}

static err_t statefulset_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    err_t e = one_set(out, "main", JOBS_AT(obj, "spec", "template"), "spec.template",
                      jobs__int32(JOBS_AT(obj, "spec", "replicas"), 1), msg);
    if (e == ERR_OK)
        *n = 1;
    return e;
}

static err_t lws_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    json_t *lwt = JOBS_AT(obj, "spec", "leaderWorkerTemplate");
    int32_t size = jobs__int32(json_object_get(lwt, "size"), 1);
    json_t *leader = json_object_get(lwt, "leaderTemplate");
    json_t *worker = json_object_get(lwt, "workerTemplate");
    const char *wpath = "spec.leaderWorkerTemplate.workerTemplate";
    jobs_podset_t sets[2];
    err_t e;
    if (size < 1)
        return err_set(msg, ERR_INVALID,
                       "spec.leaderWorkerTemplate.size: Invalid value: %d: "
                       "must be greater than or equal to 1",
                       size);
    if (leader == NULL) {
        if ((e = one_set(&sets[0], "main", worker, wpath, size, msg)) != ERR_OK)
            return e;
        memcpy(out, sets, sizeof(sets[0]));
        *n = 1;
        return ERR_OK;
    }
    if ((e = one_set(&sets[0], "leader", leader, "spec.leaderWorkerTemplate.leaderTemplate", 1,
                     msg)) != ERR_OK ||
        (e = one_set(&sets[1], "worker", worker, wpath, size - 1, msg)) != ERR_OK)
        return e;
    memcpy(out, sets, sizeof(sets));
    *n = 2;
    return ERR_OK;
}

/* The Workload's copy: the Pod's spec only (Kueue builds Deployment Pods' and StatefulSets' pod
 * sets from a pod spec with empty metadata). */
static err_t spec_only_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    (void)obj;
    (void)i;
    (void)msg;
    json_object_del(tmpl, "metadata");
    return ERR_OK;
}

/* LeaderWorkerSet: the template without LeaderWorkerSet's own labels and annotations, but for
 * its name label (Kueue's dropLWSPrefixedKeys). */
static void drop_lws_keys(json_t *map)
{
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(map, tmp, key, val)
    {
        (void)val;
        if (strncmp(key, LWS_PREFIX, strlen(LWS_PREFIX)) == 0 && strcmp(key, JOBS_LWS_NAME) != 0)
            json_object_del(map, key);
    }
}

static err_t lws_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    (void)obj;
    (void)i;
    (void)msg;
    drop_lws_keys(JOBS_AT(tmpl, "metadata", "labels"));
    drop_lws_keys(JOBS_AT(tmpl, "metadata", "annotations"));
    return ERR_OK;
}

/* ---- the webhook's mark --------------------------------------------------------------------- */

/* Mark one pod template as the webhook does. */
static err_t mark_template(const jobs_kind_t *k, const json_t *obj, json_t *tmpl)
{
    err_t e;
    if ((e = objpath_set_str(tmpl, JOBS_POD_SUSPENDING_PARENT, k->framework, "metadata",
                             "annotations", (char *)NULL)) != ERR_OK)
        return e;
    if (k == &jobs_kind_statefulset)
        return ERR_OK;
    if (k == &jobs_kind_deployment &&
        (e = objpath_set_str(tmpl, JOBS_POD_MANAGED, "true", "metadata", "labels", (char *)NULL)) !=
            ERR_OK)
        return e;
    if (is_lws(k) && (e = objpath_set_str(tmpl, JOBS_POD_GROUP_SERVING, "true", "metadata",
                                          "annotations", (char *)NULL)) != ERR_OK)
        return e;
    const char *copy[] = {LABEL_QUEUE, LABEL_PRIORITY};
    for (size_t c = 0; c < 2; c++) {
        const char *v = objpath_label(obj, copy[c]);
        if (v != NULL && v[0] != '\0' &&
            (e = objpath_set_str(tmpl, copy[c], v, "metadata", "labels", (char *)NULL)) != ERR_OK)
            return e;
    }
    return ERR_OK;
}

err_t jobs_serving_default(const jobs_kind_t *k, json_t *obj, err_msg_t *msg)
{
    if (k != &jobs_kind_deployment && k != &jobs_kind_statefulset && !is_lws(k))
        return err_set(msg, ERR_INVALID, "%s is not a serving kind", k->kind);
    json_t *tmpls[2] = {NULL, NULL};
    const char *path = "spec.template";
    if (is_lws(k)) {
        path = "spec.leaderWorkerTemplate.workerTemplate";
        tmpls[0] = JOBS_AT(obj, "spec", "leaderWorkerTemplate", "workerTemplate");
        tmpls[1] = JOBS_AT(obj, "spec", "leaderWorkerTemplate", "leaderTemplate");
    } else {
        tmpls[0] = JOBS_AT(obj, "spec", "template");
    }
    if (!json_is_object(tmpls[0]))
        return err_set(msg, ERR_INVALID, "%s: Required value", path);
    for (size_t t = 0; t < 2; t++) {
        err_t e = tmpls[t] != NULL ? mark_template(k, obj, tmpls[t]) : ERR_OK;
        if (e != ERR_OK)
            return err_set(msg, e, "%s: cannot mark the pod template", path);
    }
    return ERR_OK;
}

static bool serving_suspended(const json_t *obj, const char *framework, const char *a,
                              const char *b)
{
    const char *v = b != NULL
                        ? json_string_value(JOBS_AT(obj, "spec", a, b, "metadata", "annotations",
                                                    JOBS_POD_SUSPENDING_PARENT))
                        : json_string_value(JOBS_AT(obj, "spec", a, "metadata", "annotations",
                                                    JOBS_POD_SUSPENDING_PARENT));
    return v != NULL && strcmp(v, framework) == 0;
}

static bool deployment_suspended(const json_t *obj)
{
    return serving_suspended(obj, FW_DEPLOYMENT, "template", NULL);
}

static bool statefulset_suspended(const json_t *obj)
{
    return serving_suspended(obj, FW_STATEFULSET, "template", NULL);
}

static bool lws_suspended(const json_t *obj)
{
    return serving_suspended(obj, FW_LWS, "leaderWorkerTemplate", "workerTemplate");
}

static err_t released_by_pods(const jobs_kind_t *k, json_t *obj, bool suspend, err_msg_t *msg)
{
    if (suspend)
        return jobs_serving_default(k, obj, msg);
    return err_set(msg, ERR_UNSUPPORTED,
                   "a %s is never suspended: its Pods are released one by one", k->kind);
}

static err_t deployment_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return released_by_pods(&jobs_kind_deployment, obj, suspend, msg);
}

static err_t statefulset_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return released_by_pods(&jobs_kind_statefulset, obj, suspend, msg);
}

static err_t lws_set_suspended(json_t *obj, bool suspend, err_msg_t *msg)
{
    return released_by_pods(&jobs_kind_leaderworkerset, obj, suspend, msg);
}

/* ---- status ---------------------------------------------------------------------------------- */

static jobs_phase_t never_finished(const json_t *obj, const char **message)
{
    (void)obj;
    (void)message;
    return JOBS_RUNNING;
}

/* Kueue's webhooks treat a serving object with no ready replica as not running yet. */
static bool some_ready(const json_t *obj)
{
    return jobs__int32(JOBS_AT(obj, "status", "readyReplicas"), 0) > 0;
}

static bool all_ready(const json_t *obj)
{
    return jobs__int32(JOBS_AT(obj, "status", "readyReplicas"), 0) >=
           jobs__int32(JOBS_AT(obj, "spec", "replicas"), 1);
}

/* A StatefulSet another integration marks (LeaderWorkerSet creates StatefulSets) is not this
 * one's. */
static bool statefulset_skip(const json_t *obj)
{
    const char *v = json_string_value(
        JOBS_AT(obj, "spec", "template", "metadata", "annotations", JOBS_POD_SUSPENDING_PARENT));
    return v != NULL && strcmp(v, FW_STATEFULSET) != 0;
}

const jobs_kind_t jobs_kind_deployment = {
    .framework = FW_DEPLOYMENT,
    .group = "apps",
    .version = "v1",
    .kind = "Deployment",
    .resource = "deployments",
    .pod_sets = deployment_pod_sets,
    .suspended = deployment_suspended,
    .set_suspended = deployment_set_suspended,
    .phase = never_finished,
    .active = some_ready,
    .pods_ready = all_ready,
    .podset_template = spec_only_template,
    .admit = JOBS_ADMIT_PODS,
};

const jobs_kind_t jobs_kind_statefulset = {
    .framework = FW_STATEFULSET,
    .group = "apps",
    .version = "v1",
    .kind = "StatefulSet",
    .resource = "statefulsets",
    .pod_sets = statefulset_pod_sets,
    .suspended = statefulset_suspended,
    .set_suspended = statefulset_set_suspended,
    .phase = never_finished,
    .active = some_ready,
    .pods_ready = all_ready,
    .skip = statefulset_skip,
    .podset_template = spec_only_template,
    .admit = JOBS_ADMIT_PODS,
};

const jobs_kind_t jobs_kind_leaderworkerset = {
    .framework = FW_LWS,
    .group = "leaderworkerset.x-k8s.io",
    .version = "v1",
    .kind = "LeaderWorkerSet",
    .resource = "leaderworkersets",
    .pod_sets = lws_pod_sets,
    .suspended = lws_suspended,
    .set_suspended = lws_set_suspended,
    .phase = never_finished,
    .active = some_ready,
    .pods_ready = all_ready,
    .podset_template = lws_template,
    .admit = JOBS_ADMIT_PODS,
};

/* ---- Workloads and Pods ------------------------------------------------------------------------
 */

int32_t jobs_serving_workloads(const jobs_kind_t *k, const json_t *obj)
{
    int32_t replicas = jobs__int32(JOBS_AT(obj, "spec", "replicas"), 1);
    if (replicas < 0)
        replicas = 0;
    if (k == &jobs_kind_statefulset)
        return replicas > 0 ? 1 : 0;
    return replicas;
}

/* The name of Workload `index` of `obj` into buf (NAME_BUF bytes). */
#define NAME_BUF 254
static err_t workload_name(const jobs_kind_t *k, const json_t *obj, int32_t index, char *buf,
                           err_msg_t *msg)
{
    const char *name = json_string_value(JOBS_AT(obj, "metadata", "name"));
    const char *uid = json_string_value(JOBS_AT(obj, "metadata", "uid"));
    if (name == NULL)
        return err_set(msg, ERR_INVALID, "metadata.name: Required value");
    char owner[NAME_BUF + 16];
    if (is_lws(k))
        snprintf(owner, sizeof(owner), "%s-%d", name, (int)index);
    else
        snprintf(owner, sizeof(owner), "%s", name);
    return jobs_workload_name(k, owner, uid, NAME_BUF - 1, buf, NAME_BUF, msg);
}

err_t jobs_serving_workload_name(const jobs_kind_t *k, const json_t *obj, int32_t index, char *buf,
                                 size_t size, err_msg_t *msg)
{
    if (size < NAME_BUF)
        return err_set(msg, ERR_INVALID, "name buffer of %zu bytes: too small", size);
    return workload_name(k, obj, index, buf, msg);
}

err_t jobs_serving_workload(const jobs_kind_t *k, json_t *obj, int32_t index,
                            const char *const *copy_labels, workload_t *out, err_msg_t *msg)
{
    if (k != &jobs_kind_statefulset && !is_lws(k))
        return err_set(msg, ERR_INVALID, "a %s's Workloads are its Pods'", k->kind);
    if (index < 0 || index >= jobs_serving_workloads(k, obj))
        return err_set(msg, ERR_INVALID, "%s has no Workload %d", k->kind, (int)index);
    char name[NAME_BUF], idx[16], gvk[128];
    err_t e = workload_name(k, obj, index, name, msg);
    if (e != ERR_OK)
        return e;
    workload_t wl = {0};
    if ((e = jobs_workload_build(k, obj, copy_labels, &wl, msg)) != ERR_OK)
        return e;
    char *dup = NULL;
    snprintf(gvk, sizeof(gvk), "%s%s%s, Kind=%s", k->group, k->group[0] ? "/" : "", k->version,
             k->kind);
    snprintf(idx, sizeof(idx), "%d", (int)index);
    const char *owner = json_string_value(JOBS_AT(obj, "metadata", "name"));
    if ((e = util_strdup(name, &dup)) != ERR_OK ||
        (e = kv_list_set(&wl.meta.annotations, JOBS_POD_IS_GROUP_WORKLOAD, "true")) != ERR_OK ||
        (e = kv_list_set(&wl.meta.annotations, ANN_OWNER_GVK, gvk)) != ERR_OK ||
        (e = kv_list_set(&wl.meta.annotations, ANN_OWNER_NAME, owner)) != ERR_OK ||
        (is_lws(k) &&
         (e = kv_list_set(&wl.meta.annotations, ANN_COMPONENT_INDEX, idx)) != ERR_OK)) {
        free(dup);
        workload_fini(&wl);
        return err_set(msg, e, "out of memory");
    }
    free(wl.meta.name);
    wl.meta.name = dup;
    *out = wl;
    return ERR_OK;
}

static err_t set_label(json_t *pod, const char *key, const char *value)
{
    return objpath_set_str(pod, key, value, "metadata", "labels", (char *)NULL);
}

static err_t set_annotation(json_t *pod, const char *key, const char *value)
{
    return objpath_set_str(pod, key, value, "metadata", "annotations", (char *)NULL);
}

err_t jobs_serving_pod_default(const jobs_kind_t *k, const json_t *owner, json_t *pod,
                               bool unqueued, bool *changed, err_msg_t *msg)
{
    *changed = false;
    if (k == &jobs_kind_deployment)
        return ERR_OK;
    if (k != &jobs_kind_statefulset && !is_lws(k))
        return err_set(msg, ERR_INVALID, "%s is not a serving kind", k->kind);
    const char *queue = objpath_label(owner, LABEL_QUEUE);
    const char *prio = objpath_label(owner, LABEL_PRIORITY);
    bool gated = jobs_pod_gated(pod);
    err_t e = ERR_OK;
    char name[NAME_BUF], count[16];
    int32_t index = 0;

    if (is_lws(k)) {
        if (objpath_label(pod, JOBS_POD_MANAGED) != NULL) {
            /* Already marked: only a queue name still missing on a gated Pod. */
            const char *have = objpath_label(pod, LABEL_QUEUE);
            if (queue != NULL && gated && (have == NULL || strcmp(have, queue) != 0)) {
                if ((e = set_label(pod, LABEL_QUEUE, queue)) != ERR_OK)
                    return err_set(msg, e, "metadata.labels: cannot set the queue name");
                *changed = true;
            }
            return ERR_OK;
        }
        const char *gi = objpath_label(pod, JOBS_LWS_GROUP_INDEX);
        char *end;
        if (gi == NULL)
            return ERR_OK; /* LeaderWorkerSet has not placed it in a group yet */
        long v = strtol(gi, &end, 10);
        if (gi[0] == '\0' || *end != '\0' || v < 0 || v > INT32_MAX)
            return err_set(msg, ERR_INVALID, "metadata.labels[%s]: invalid group index \"%s\"",
                           JOBS_LWS_GROUP_INDEX, gi);
        index = (int32_t)v;
    }
    if ((e = workload_name(k, owner, index, name, msg)) != ERR_OK)
        return e;

    if (!is_lws(k)) {
        const char *group = jobs_pod_group_name(pod);
        if (group != NULL && strcmp(group, name) == 0) {
            const char *have = objpath_label(pod, LABEL_QUEUE);
            if (queue != NULL && (have == NULL || strcmp(have, queue) != 0)) {
                if ((e = set_label(pod, LABEL_QUEUE, queue)) != ERR_OK)
                    return err_set(msg, e, "metadata.labels: cannot set the queue name");
                *changed = true;
            }
            return ERR_OK;
        }
        if ((queue == NULL || queue[0] == '\0') && !unqueued)
            return ERR_OK; /* not Kueue's (manageJobsWithoutQueueName aside) */
    }

    int32_t total = is_lws(k)
                        ? jobs__int32(JOBS_AT(owner, "spec", "leaderWorkerTemplate", "size"), 1)
                        : jobs__int32(JOBS_AT(owner, "spec", "replicas"), 1);
    snprintf(count, sizeof(count), "%d", (int)total);
    const char *role = "main";
    if (is_lws(k) && JOBS_AT(owner, "spec", "leaderWorkerTemplate", "leaderTemplate") != NULL)
        role = objpath_annotation(pod, JOBS_LWS_LEADER_NAME) != NULL ? "worker" : "leader";

    if ((e = set_label(pod, JOBS_POD_MANAGED, "true")) != ERR_OK)
        goto fail;
    if (queue != NULL && queue[0] != '\0' && (!is_lws(k) || gated) &&
        (e = set_label(pod, LABEL_QUEUE, queue)) != ERR_OK)
        goto fail;
    if (!is_lws(k) && prio != NULL && prio[0] != '\0' &&
        (e = set_label(pod, LABEL_PRIORITY, prio)) != ERR_OK)
        goto fail;
    if ((e = set_label(pod, JOBS_POD_PREBUILT_WORKLOAD, name)) != ERR_OK ||
        (e = set_label(pod, JOBS_POD_GROUP_NAME, name)) != ERR_OK ||
        (e = set_annotation(pod, JOBS_POD_GROUP_TOTAL_COUNT, count)) != ERR_OK ||
        (e = set_annotation(pod, JOBS_POD_ROLE_HASH, role)) != ERR_OK)
        goto fail;
    if (!is_lws(k) &&
        ((e = set_annotation(pod, JOBS_POD_GROUP_FAST, "true")) != ERR_OK ||
         (e = set_annotation(pod, JOBS_POD_GROUP_SERVING, "true")) != ERR_OK ||
         (e = set_annotation(pod, ANN_POD_INDEX_LABEL, STS_POD_INDEX_LABEL)) != ERR_OK))
        goto fail;
    *changed = true;
    return ERR_OK;
fail:
    *changed = true; /* partly written */
    return err_set(msg, e, "metadata: cannot mark the Pod as a member of %s", name);
}
