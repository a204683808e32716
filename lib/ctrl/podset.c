/* podset -- start and stop a Job's pod template as Kueue does: merge the admission in, restore. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podset.h"

#include <string.h>

/*
 * Kueue's RunWithPodSetsInfo / RestorePodSetsInfo on a batch Job are the framework's
 * (lib/jobs/framework.c) over the Job kind's entry: these are the controller's names for them,
 * over the JSON object so that every pod field sluice does not model survives untouched. The
 * flavors' node labels and tolerations an admission brings are gathered here.
 */

static const jobs_kind_t *job_kind(void)
{
    return jobs_kind_named("batch/job");
}

/* The value of level `key` for domain `d` of `a`: its own, or its node's label (the assignment's
 * lowest level is the hostname); NULL when unknown. */
static const char *domain_value(const topology_assignment_t *a, size_t d, const char *key,
                                podset_node_label_fn label, void *ctx)
{
    for (size_t l = 0; l < a->nlevels; l++)
        if (strcmp(a->levels[l], key) == 0)
            return a->values[d * a->nlevels + l];
    if (label == NULL || a->nlevels == 0 ||
        strcmp(a->levels[a->nlevels - 1], PODSET_LABEL_HOSTNAME) != 0)
        return NULL;
    return label(ctx, a->values[d * a->nlevels + a->nlevels - 1], key);
}

err_t podset_topology_selector(const topology_assignment_t *a, char *const *levels, size_t nlevels,
                               podset_node_label_fn label, void *ctx, json_t *nodes, size_t *pinned,
                               err_msg_t *msg)
{
    size_t n = 0;

    if (pinned != NULL)
        *pinned = 0;
    if (a == NULL || a->ndomains == 0)
        return ERR_OK;
    if (levels == NULL) { /* the Topology unknown: the assignment's own levels */
        levels = a->levels;
        nlevels = a->nlevels;
    }
    for (; n < nlevels; n++) {
        const char *v = domain_value(a, 0, levels[n], label, ctx), *have;
        for (size_t d = 1; d < a->ndomains && v != NULL; d++) {
            const char *o = domain_value(a, d, levels[n], label, ctx);
            if (o == NULL || strcmp(o, v) != 0)
                v = NULL;
        }
        if (v == NULL)
            break;
        have = json_string_value(json_object_get(nodes, levels[n]));
        if (have != NULL && strcmp(have, v) != 0)
            return err_set(msg, ERR_CONFLICT,
                           "invalid nodeSelector: conflict for key=%s, value1=%s, value2=%s",
                           levels[n], have, v);
        if (json_object_set_new(nodes, levels[n], json_string(v)) != 0)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (pinned != NULL)
        *pinned = n;
    return ERR_OK;
}

err_t podset_flavor_info(const json_t *assignment, json_t *(*flavor)(void *ctx, const char *name),
                         void *ctx, json_t **nodes, json_t **tols, err_msg_t *msg)
{
    json_t *n = json_object(), *t = json_array(), *seen = json_object();
    json_t *flavors = json_object_get(assignment, "flavors");
    const char *res;
    json_t *fname;
    err_t rc = ERR_OK;

    if (n == NULL || t == NULL || seen == NULL) {
        rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
        goto out;
    }
    json_object_foreach(flavors, res, fname)
    {
        const char *name = json_string_value(fname);
        json_t *f, *labels, *ftols, *v;
        const char *k;
        size_t i;

        if (name == NULL || json_object_get(seen, name) != NULL)
            continue;
        if (json_object_set_new(seen, name, json_true())) {
            rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
            goto out;
        }
        f = flavor(ctx, name);
        if (f == NULL) {
            rc = err_set(msg, ERR_NOT_FOUND, "ResourceFlavor %s not found", name);
            goto out;
        }
        labels = json_object_get(json_object_get(f, "spec"), "nodeLabels");
        json_object_foreach(labels, k, v)
        {
            json_t *old = json_object_get(n, k);
            if (old != NULL && !json_equal(old, v)) {
                rc = err_set(msg, ERR_CONFLICT,
                             "ResourceFlavor %s: nodeLabels[%s] conflicts with "
                             "another assigned flavor",
                             name, k);
                goto out;
            }
            if (json_object_set(n, k, v)) {
                rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
                goto out;
            }
        }
        ftols = json_object_get(json_object_get(f, "spec"), "tolerations");
        json_array_foreach(ftols, i, v)
        {
            if (json_array_append(t, v)) {
                rc = err_set(msg, ERR_NOMEM, "flavor info: out of memory");
                goto out;
            }
        }
    }
    *nodes = n;
    *tols = t;
    n = t = NULL;
out:
    json_decref(n);
    json_decref(t);
    json_decref(seen);
    return rc;
}

err_t podset_start(json_t *job, const podset_info_t *info, err_msg_t *msg)
{
    return jobs_start(job_kind(), job, info, 1, msg);
}

err_t podset_stop(json_t *job, const json_t *pod_set, bool *changed)
{
    json_t *pod_sets = json_array();
    err_t rc = ERR_NOMEM;

    if (pod_sets != NULL && json_array_append(pod_sets, (json_t *)pod_set) == 0)
        rc = jobs_stop(job_kind(), job, pod_sets, changed, NULL);
    json_decref(pod_sets);
    return rc;
}

bool podset_is_restored(const json_t *job, const json_t *pod_set)
{
    json_t *copy = json_deep_copy(job);
    bool changed = true;

    if (copy != NULL && podset_stop(copy, pod_set, &changed) != ERR_OK)
        changed = true;
    json_decref(copy);
    return !changed;
}

uint64_t podset_digest(const json_t *tmpl)
{
    return jobs_template_digest(tmpl);
}
