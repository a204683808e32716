/* podgroup -- plain Pods and pod groups as Kueue's pod integration admits them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/podgroup.h"

#include "jobs/framework_int.h"
#include "jobs/objpath.h"
#include "util/str.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How Kueue turns the Pods of a group into one Workload (pod_controller.go), and what of it this
 * file keeps:
 *
 *  - The group is the Pods labelled with one pod-group-name in one namespace; the Workload is
 *    named after the group. Every Pod says the total count; Pods that failed are not compared.
 *  - A Pod is runnable unless it failed, or it is being deleted before it was scheduled.
 *    Non-runnable Pods lose their finalizer (they will not run; a replacement may come).
 *  - Runnable Pods beyond the total count are excess: Kueue keeps those with its finalizer first,
 *    then the ungated, then the oldest, and deletes the rest (newest first to go).
 *  - Without fast admission the Workload is created only once the group has total-count runnable
 *    Pods ("'<group>' group has fewer runnable pods than expected" until then). With
 *    pod-group-fast-admission=true it is created from the first runnable Pod, one pod set of the
 *    whole total count.
 *  - Pod sets: one per role (role hash), counting the kept Pods of each role, sorted by name;
 *    the template is the first such Pod's spec.
 *  - Admission: each gated kept Pod gets the admission of its role's pod set and is ungated.
 *  - Finished: all total-count Pods succeeded; or no Pod still runs and one is unretriable
 *    (retriable-in-group=false): Kueue reports both as success with "Pods succeeded: S/T.".
 *    A serving group (pod-group-serving=true: StatefulSet, LeaderWorkerSet) never finishes.
 *
 * Not kept: the replacement bookkeeping for a Workload that already exists (Kueue's
 * FindMatchingWorkloads keeps failed Pods until replacements arrive and sets the condition
 * WaitingForReplacementPods); the caller re-reads the group on each change instead.
 */

const char *jobs_pod_group_name(const json_t *pod)
{
    const char *name = objpath_label(pod, JOBS_POD_GROUP_NAME);
    return name != NULL && name[0] != '\0' ? name : NULL;
}

err_t jobs_pod_group_total_count(const json_t *pod, int32_t *out, err_msg_t *msg)
{
    if (jobs_pod_group_name(pod) == NULL)
        return err_set(msg, ERR_INVALID, "pod doesn't have a '%s' label", JOBS_POD_GROUP_NAME);
    const char *v = objpath_annotation(pod, JOBS_POD_GROUP_TOTAL_COUNT);
    if (v == NULL)
        return err_set(msg, ERR_INVALID, "failed to extract '%s' annotation",
                       JOBS_POD_GROUP_TOTAL_COUNT);
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (v[0] == '\0' || *end != '\0' || errno != 0 || n > INT32_MAX || n < INT32_MIN ||
        v[0] == ' ' || v[0] == '\t')
        return err_set(msg, ERR_INVALID, "strconv.Atoi: parsing \"%s\": invalid syntax", v);
    if (n < 1)
        return err_set(msg, ERR_INVALID,
                       "incorrect annotation value '%s=%s': group total count should be greater "
                       "than zero",
                       JOBS_POD_GROUP_TOTAL_COUNT, v);
    *out = (int32_t)n;
    return ERR_OK;
}

static const char *phase_of(const json_t *pod)
{
    const char *p = json_string_value(JOBS_AT(pod, "status", "phase"));
    return p != NULL ? p : "";
}

static bool deleting(const json_t *pod)
{
    return JOBS_AT(pod, "metadata", "deletionTimestamp") != NULL;
}

/* Kueue's isPodRunnableOrSucceeded. */
static bool runnable(const json_t *pod)
{
    const char *node = json_string_value(JOBS_AT(pod, "spec", "nodeName"));
    if (deleting(pod) && (node == NULL || node[0] == '\0'))
        return false;
    return strcmp(phase_of(pod), "Failed") != 0;
}

static bool has_finalizer(const json_t *pod)
{
    size_t i;
    json_t *f;
    json_array_foreach(JOBS_AT(pod, "metadata", "finalizers"), i, f)
    {
        if (json_string_value(f) != NULL && strcmp(json_string_value(f), JOBS_POD_MANAGED) == 0)
            return true;
    }
    return false;
}

static const char *queue_of(const json_t *pod)
{
    const char *q = objpath_label(pod, "kueue.x-k8s.io/queue-name");
    return q != NULL ? q : "";
}

/* A runnable pod's sort key for Kueue's choice of the excess ones (sortActivePods): pods with
 * the managed finalizer first, then the ungated, then the oldest; ties keep the given order. */
typedef struct active_key_s {
    bool finalizer, gated;
    const char *created; /* borrowed; RFC 3339 in UTC sorts as text */
    size_t index;
} active_key_t;

static int cmp_active(const void *a, const void *b)
{
    const active_key_t *x = a, *y = b;
    if (x->finalizer != y->finalizer)
        return x->finalizer ? -1 : 1;
    if (x->gated != y->gated)
        return x->gated ? 1 : -1;
    int c = strcmp(x->created, y->created);
    if (c != 0)
        return c;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

static int cmp_sets(const void *a, const void *b)
{
    return strcmp(((const jobs_podset_t *)a)->name, ((const jobs_podset_t *)b)->name);
}

void jobs_pod_group_fini(jobs_pod_group_t *g)
{
    if (g == NULL)
        return;
    free(g->verdict);
    g->verdict = NULL;
}

err_t jobs_pod_group_read(json_t *const *pods, size_t n, jobs_pod_group_t *g, err_msg_t *msg)
{
    memset(g, 0, sizeof(*g));
    if (n == 0)
        return err_set(msg, ERR_INVALID, "a pod group has at least one pod");
    g->pods = pods;
    g->npods = n;
    g->name = jobs_pod_group_name(pods[0]);
    g->namespace = json_string_value(JOBS_AT(pods[0], "metadata", "namespace"));
    err_t e = jobs_pod_group_total_count(pods[0], &g->total_count, msg);
    if (e != ERR_OK)
        return e;
    const char *fast = objpath_annotation(pods[0], JOBS_POD_GROUP_FAST);
    const char *serving = objpath_annotation(pods[0], JOBS_POD_GROUP_SERVING);
    g->fast_admission = fast != NULL && strcmp(fast, "true") == 0;
    g->serving = serving != NULL && strcmp(serving, "true") == 0;

    /* Kueue's validatePodGroupMetadata, against the first pod. */
    const char *first = json_string_value(JOBS_AT(pods[0], "metadata", "name"));
    for (size_t i = 0; i < n; i++) {
        const json_t *p = pods[i];
        const char *name = json_string_value(JOBS_AT(p, "metadata", "name"));
        const char *gname = jobs_pod_group_name(p);
        const char *retriable = objpath_annotation(p, JOBS_POD_RETRIABLE_IN_GROUP);
        if (retriable != NULL && strcmp(retriable, "false") == 0)
            g->unretriable = true;
        if (gname == NULL || strcmp(gname, g->name) != 0)
            return err_set(msg, ERR_INVALID, "pod '%s' is not in group '%s'", name ? name : "",
                           g->name);
        if (strcmp(phase_of(p), "Failed") == 0)
            continue;
        if (strcmp(queue_of(p), queue_of(pods[0])) != 0)
            return err_set(msg, ERR_INVALID, "pods '%s' and '%s' has different queue names: %s!=%s",
                           first ? first : "", name ? name : "", queue_of(pods[0]), queue_of(p));
        int32_t tc;
        err_msg_t m;
        if (jobs_pod_group_total_count(p, &tc, &m) != ERR_OK)
            return err_set(msg, ERR_INVALID,
                           "failed to extract '%s' annotation from the pod '%s': "
                           "%s",
                           JOBS_POD_GROUP_TOTAL_COUNT, name ? name : "", m.text);
        if (tc != g->total_count)
            return err_set(msg, ERR_INVALID, "pods '%s' and '%s' has different '%s' values: %d!=%d",
                           first ? first : "", name ? name : "", JOBS_POD_GROUP_TOTAL_COUNT,
                           g->total_count, tc);
    }

    g->verdict = calloc(n, sizeof(*g->verdict));
    active_key_t *active = malloc(n * sizeof(*active));
    if (g->verdict == NULL || active == NULL) {
        free(active);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    size_t na = 0;
    for (size_t i = 0; i < n; i++) {
        if (runnable(pods[i])) {
            const char *created =
                json_string_value(JOBS_AT(pods[i], "metadata", "creationTimestamp"));
            active[na++] = (active_key_t){has_finalizer(pods[i]), jobs_pod_gated(pods[i]),
                                          created != NULL ? created : "", i};
        } else
            g->verdict[i] = JOBS_POD_INACTIVE;
    }
    g->nrunnable = na;
    qsort(active, na, sizeof(*active), cmp_active);
    for (size_t k = (size_t)g->total_count; k < na; k++)
        g->verdict[active[k].index] = JOBS_POD_EXCESS;

    g->complete = g->fast_admission ? na > 0 : na >= (size_t)g->total_count;
    if (!g->complete)
        snprintf(g->why, sizeof(g->why),
                 g->fast_admission ? "failed to find a runnable pod in "
                                     "the group"
                                   : "'%s' group has fewer runnable pods than expected",
                 g->name);

    /* The pod sets, over the kept pods in their given order (Kueue lists them unordered and
     * sorts the result by name). */
    e = ERR_OK;
    for (size_t i = 0; i < n && e == ERR_OK; i++) {
        if (g->verdict[i] != JOBS_POD_KEEP)
            continue;
        char role[JOBS_POD_ROLE_MAX + 1];
        if ((e = jobs_pod_role_hash(pods[i], role, msg)) != ERR_OK)
            break;
        size_t s;
        for (s = 0; s < g->nsets && strcmp(g->sets[s].name, role) != 0; s++)
            ;
        if (s < g->nsets) {
            g->sets[s].count++;
            continue;
        }
        if (g->nsets == JOBS_PODSETS_MAX) {
            e = err_set(msg, ERR_INVALID,
                        "the pod group has more roles than a Workload holds pod "
                        "sets (%d)",
                        JOBS_PODSETS_MAX);
            break;
        }
        jobs_podset_t *ps = &g->sets[g->nsets++];
        snprintf(ps->name, sizeof(ps->name), "%s", role);
        ps->tmpl = pods[i];
        ps->count = 1;
        if (g->fast_admission) { /* one pod set of the whole group, from the first pod */
            ps->count = g->total_count;
            break;
        }
    }
    free(active);
    if (e != ERR_OK)
        return e;
    qsort(g->sets, g->nsets, sizeof(g->sets[0]), cmp_sets);
    return ERR_OK;
}

/* ---- the Workload ------------------------------------------------------------------------- */

/*
 * jobs_workload_build() reads one object; a group's Workload is read from a view of it: the first
 * kept pod's metadata and, in "podSets", the group's pod sets whose templates are the member Pods
 * themselves (shared references). The view's kind reads them back.
 */
static err_t view_pod_sets(json_t *obj, jobs_podset_t *out, size_t *n, err_msg_t *msg)
{
    json_t *sets = json_object_get(obj, "podSets");
    size_t i;
    json_t *s;
    if (json_array_size(sets) == 0 || json_array_size(sets) > JOBS_PODSETS_MAX)
        return err_set(msg, ERR_INVALID, "podSets: the group has no pod set");
    json_array_foreach(sets, i, s)
    {
        memset(&out[i], 0, sizeof(out[i]));
        snprintf(out[i].name, sizeof(out[i].name), "%s",
                 json_string_value(json_object_get(s, "name")));
        out[i].tmpl = json_object_get(s, "template");
        out[i].count = (int32_t)json_integer_value(json_object_get(s, "count"));
    }
    *n = json_array_size(sets);
    return ERR_OK;
}

/* The template of each set is a member Pod: keep its spec only, as for a single Pod. */
static err_t view_template(const json_t *obj, size_t i, json_t *tmpl, err_msg_t *msg)
{
    return jobs_kind_pod.podset_template(obj, i, tmpl, msg);
}

static const jobs_kind_t kind_group_view = {
    .framework = "pod",
    .group = "",
    .version = "v1",
    .kind = "Pod",
    .resource = "pods",
    .pod_sets = view_pod_sets,
    .podset_template = view_template,
    .admit = JOBS_ADMIT_POD,
};

static void label_del(kv_list_t *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++) {
        if (strcmp(l->items[i].key, key) != 0)
            continue;
        free(l->items[i].key);
        free(l->items[i].value);
        memmove(&l->items[i], &l->items[i + 1], (l->len - i - 1) * sizeof(l->items[0]));
        l->len--;
        return;
    }
}

static err_t check_copied_labels(const jobs_pod_group_t *g, const char *const *copy_labels,
                                 err_msg_t *msg)
{
    for (size_t k = 0; copy_labels != NULL && copy_labels[k] != NULL; k++) {
        const char *seen = NULL;
        for (size_t i = 0; i < g->npods; i++) {
            const char *v = objpath_label(g->pods[i], copy_labels[k]);
            if (v == NULL)
                continue;
            if (seen != NULL && strcmp(seen, v) != 0)
                return err_set(msg, ERR_INVALID,
                               "constructing workload: pods have different label "
                               "values");
            seen = v;
        }
    }
    return ERR_OK;
}

err_t jobs_pod_group_workload(const jobs_pod_group_t *g, const char *const *copy_labels,
                              workload_t *out, err_msg_t *msg)
{
    if (!g->complete)
        return err_set(msg, ERR_INVALID, "%s", g->why);
    err_t e = check_copied_labels(g, copy_labels, msg);
    if (e != ERR_OK)
        return e;
    const json_t *first = NULL;
    for (size_t i = 0; i < g->npods && first == NULL; i++)
        if (g->verdict[i] == JOBS_POD_KEEP)
            first = g->pods[i];

    /* The _new setters take their value even when they fail (or it is NULL). */
    json_t *view = json_object(), *meta, *sets;
    if (view == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    meta = json_deep_copy(json_object_get(first, "metadata"));
    if (json_object_set_new(view, "metadata", meta))
        goto nomem;
    sets = json_array();
    if (json_object_set_new(view, "podSets", sets))
        goto nomem;
    /* Named after the group; no uid: the group has no single owner. */
    json_object_del(meta, "uid");
    if (json_object_set_new(meta, "name", json_string(g->name)) ||
        json_object_set_new(view, "apiVersion", json_string("v1")) ||
        json_object_set_new(view, "kind", json_string("Pod")))
        goto nomem;
    for (size_t s = 0; s < g->nsets; s++) {
        json_t *item = json_pack("{s:s,s:i,s:O}", "name", g->sets[s].name, "count",
                                 (json_int_t)g->sets[s].count, "template", g->sets[s].tmpl);
        if (item == NULL || json_array_append_new(sets, item))
            goto nomem;
    }

    workload_t wl = {0};
    e = jobs_workload_build(&kind_group_view, view, copy_labels, &wl, msg);
    json_decref(view);
    if (e != ERR_OK)
        return e;
    char *name = NULL;
    if ((e = util_strdup(g->name, &name)) != ERR_OK ||
        (e = kv_list_set(&wl.meta.annotations, JOBS_POD_IS_GROUP_WORKLOAD, "true")) != ERR_OK) {
        free(name);
        workload_fini(&wl);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    free(wl.meta.name);
    wl.meta.name = name;
    label_del(&wl.meta.labels, "kueue.x-k8s.io/job-uid");
    *out = wl;
    return ERR_OK;
nomem:
    json_decref(view);
    return err_set(msg, ERR_NOMEM, "out of memory");
}

/* ---- admission and status ----------------------------------------------------------------- */

err_t jobs_pod_group_start_pod(json_t *pod, const jobs_start_info_t *info, size_t n, bool *changed,
                               err_msg_t *msg)
{
    *changed = false;
    if (!jobs_pod_gated(pod))
        return ERR_OK;
    char role[JOBS_POD_ROLE_MAX + 1];
    err_t e = jobs_pod_role_hash(pod, role, msg);
    if (e != ERR_OK)
        return e;
    for (size_t i = 0; i < n; i++) {
        if (info[i].name == NULL || strcmp(info[i].name, role) != 0)
            continue;
        jobs_start_info_t one = info[i];
        one.name = "main"; /* the pod set of a single Pod */
        if ((e = jobs_start(&jobs_kind_pod, pod, &one, 1, msg)) != ERR_OK)
            return e;
        *changed = true;
        return ERR_OK;
    }
    return err_set(msg, ERR_INVALID, "podSetInfo with the name '%s' is not found", role);
}

jobs_phase_t jobs_pod_group_phase(const jobs_pod_group_t *g, char *message, size_t size)
{
    if (g->serving)
        return JOBS_RUNNING;
    int succeeded = 0;
    bool active = false;
    for (size_t i = 0; i < g->npods; i++) {
        const char *ph = phase_of(g->pods[i]);
        if (strcmp(ph, "Succeeded") == 0)
            succeeded++;
        else if (strcmp(ph, "Failed") != 0)
            active = true;
    }
    if (succeeded != g->total_count && (active || !g->unretriable))
        return JOBS_RUNNING;
    if (message != NULL && size > 0)
        snprintf(message, size, "Pods succeeded: %d/%d.", succeeded, (int)g->total_count);
    return JOBS_SUCCEEDED;
}

bool jobs_pod_group_active(const jobs_pod_group_t *g)
{
    for (size_t i = 0; i < g->npods; i++)
        if (strcmp(phase_of(g->pods[i]), "Running") == 0 && !deleting(g->pods[i]))
            return true;
    return false;
}

bool jobs_pod_group_pods_ready(const jobs_pod_group_t *g)
{
    size_t kept = 0;
    for (size_t i = 0; i < g->npods; i++) {
        if (g->verdict[i] != JOBS_POD_KEEP)
            continue;
        kept++;
        if (!jobs_kind_pod.pods_ready(g->pods[i]))
            return false;
    }
    return kept >= (size_t)g->total_count;
}

err_t jobs_pod_group_reclaimable(const jobs_pod_group_t *g, jobs_reclaimable_t *out, size_t *n,
                                 err_msg_t *msg)
{
    *n = 0;
    if (g->serving)
        return ERR_OK;
    for (size_t i = 0; i < g->npods; i++) {
        if (g->verdict[i] != JOBS_POD_KEEP || strcmp(phase_of(g->pods[i]), "Succeeded") != 0)
            continue;
        char role[JOBS_POD_ROLE_MAX + 1];
        err_t e = jobs_pod_role_hash(g->pods[i], role, msg);
        if (e != ERR_OK)
            return e;
        size_t r;
        for (r = 0; r < *n && strcmp(out[r].name, role) != 0; r++)
            ;
        if (r == *n) {
            if (*n == JOBS_PODSETS_MAX) /* more roles than pod sets: not a pod set of g */
                continue;
            snprintf(out[r].name, sizeof(out[r].name), "%s", role);
            out[r].count = 0;
            (*n)++;
        }
        out[r].count++;
    }
    return ERR_OK;
}
