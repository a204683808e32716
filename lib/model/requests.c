/* requests -- effective resource requests of pods, podsets and Jobs (Kubernetes rules). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"

#include "model/types.h"

#include <stdlib.h>
#include <string.h>

/*
 * Resource lists are small (a handful of names), sorted by name. The helpers below work on a
 * scratch list and only move it into the caller's output at the end, so every public function
 * leaves its output untouched on failure.
 */

/* Position of `name` in `l`, or where it would be inserted; *found tells which. */
static size_t rl_find(const resource_list_t *l, const char *name, bool *found)
{
    size_t lo = 0, hi = l->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->items[mid].name, name);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

/* Slot for `name` in `l`, inserted as zero when absent; NULL on OOM. */
static quantity_t *rl_slot(resource_list_t *l, const char *name)
{
    bool found;
    size_t i = rl_find(l, name, &found);
    resource_t *items;
    char *copy;

    if (found)
        return &l->items[i].value;
    copy = strdup(name);
    if (copy == NULL)
        return NULL;
    items = realloc(l->items, (l->len + 1) * sizeof(*items));
    if (items == NULL) {
        free(copy);
        return NULL;
    }
    l->items = items;
    memmove(&items[i + 1], &items[i], (l->len - i) * sizeof(*items));
    items[i].name = copy;
    items[i].value = quantity_zero();
    l->len++;
    return &items[i].value;
}

static err_t nomem(err_msg_t *msg)
{
    return err_set(msg, ERR_NOMEM, "out of memory computing resource requests");
}

err_t requests_add(resource_list_t *acc, const resource_list_t *b, err_msg_t *msg)
{
    for (size_t i = 0; i < b->len; i++) {
        quantity_t *q = rl_slot(acc, b->items[i].name);
        quantity_t sum;
        if (q == NULL)
            return nomem(msg);
        if (quantity_add(*q, b->items[i].value, &sum, NULL) != ERR_OK)
            return err_set(msg, ERR_OVERFLOW, "resource %s: requests overflow", b->items[i].name);
        *q = sum;
    }
    return ERR_OK;
}

err_t requests_max(resource_list_t *acc, const resource_list_t *b, err_msg_t *msg)
{
    for (size_t i = 0; i < b->len; i++) {
        bool found;
        size_t at = rl_find(acc, b->items[i].name, &found);
        if (found) {
            if (quantity_cmp(b->items[i].value, acc->items[at].value) > 0)
                acc->items[at].value = b->items[i].value;
        } else {
            quantity_t *q = rl_slot(acc, b->items[i].name);
            if (q == NULL)
                return nomem(msg);
            *q = b->items[i].value;
        }
    }
    return ERR_OK;
}

/* requests, then limits for names without a request (Kubernetes defaulting). */
static err_t effective(const resource_list_t *requests, const resource_list_t *limits,
                       resource_list_t *out, err_msg_t *msg)
{
    err_t rc = requests_add(out, requests, msg);

    for (size_t i = 0; rc == ERR_OK && i < limits->len; i++) {
        bool found;
        rl_find(requests, limits->items[i].name, &found);
        if (!found) {
            quantity_t *q = rl_slot(out, limits->items[i].name);
            if (q == NULL)
                return nomem(msg);
            *q = limits->items[i].value;
        }
    }
    return rc;
}

err_t requests_container(const container_t *c, resource_list_t *out, err_msg_t *msg)
{
    resource_list_t tmp = {0};
    err_t rc = effective(&c->requests, &c->limits, &tmp, msg);

    if (rc != ERR_OK) {
        resource_list_fini(&tmp);
        return rc;
    }
    resource_list_fini(out);
    *out = tmp;
    return ERR_OK;
}

/* Resources a pod-level spec.resources may set (IsSupportedPodLevelResource). */
static bool pod_level_supported(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           strncmp(name, "hugepages-", 10) == 0;
}

err_t requests_pod(const pod_spec_t *spec, resource_list_t *out, err_msg_t *msg)
{
    resource_list_t reqs = {0}, sidecars = {0}, init = {0}, one = {0}, level = {0};
    err_t rc = ERR_OK;

    /* Regular containers run together: sum. */
    for (size_t i = 0; rc == ERR_OK && i < spec->ncontainers; i++) {
        rc = requests_container(&spec->containers[i], &one, msg);
        if (rc == ERR_OK)
            rc = requests_add(&reqs, &one, msg);
    }
    /* Init containers run one at a time, each alongside the sidecars started before it;
     * sidecars keep running, so they also add to the regular containers' sum. */
    for (size_t i = 0; rc == ERR_OK && i < spec->ninit_containers; i++) {
        const container_t *c = &spec->init_containers[i];
        rc = requests_container(c, &one, msg);
        if (rc != ERR_OK)
            break;
        if (c->restartable) {
            rc = requests_add(&reqs, &one, msg);
            if (rc == ERR_OK)
                rc = requests_add(&sidecars, &one, msg);
            if (rc == ERR_OK)
                rc = requests_max(&init, &sidecars, msg);
        } else {
            rc = requests_add(&one, &sidecars, msg);
            if (rc == ERR_OK)
                rc = requests_max(&init, &one, msg);
        }
    }
    if (rc == ERR_OK)
        rc = requests_max(&reqs, &init, msg);
    /* Pod-level resources override the aggregate for the resources they support. */
    if (rc == ERR_OK)
        rc = effective(&spec->pod_level_requests, &spec->pod_level_limits, &level, msg);
    for (size_t i = 0; rc == ERR_OK && i < level.len; i++) {
        if (!pod_level_supported(level.items[i].name))
            continue;
        quantity_t *q = rl_slot(&reqs, level.items[i].name);
        if (q == NULL)
            rc = nomem(msg);
        else
            *q = level.items[i].value;
    }
    if (rc == ERR_OK)
        rc = requests_add(&reqs, &spec->overhead, msg);

    resource_list_fini(&sidecars);
    resource_list_fini(&init);
    resource_list_fini(&one);
    resource_list_fini(&level);
    if (rc != ERR_OK) {
        resource_list_fini(&reqs);
        return rc;
    }
    resource_list_fini(out);
    *out = reqs;
    return ERR_OK;
}

err_t requests_total(const resource_list_t *per_pod, int64_t count, resource_list_t *out,
                     err_msg_t *msg)
{
    resource_list_t tmp = {0};

    if (count < 0)
        return err_set(msg, ERR_INVALID, "negative pod count %lld", (long long)count);
    for (size_t i = 0; i < per_pod->len; i++) {
        quantity_t *q = rl_slot(&tmp, per_pod->items[i].name);
        if (q == NULL) {
            resource_list_fini(&tmp);
            return nomem(msg);
        }
        if (quantity_mul(per_pod->items[i].value, count, q, NULL) != ERR_OK) {
            resource_list_fini(&tmp);
            return err_set(msg, ERR_OVERFLOW, "resource %s: requests overflow for %lld pods",
                           per_pod->items[i].name, (long long)count);
        }
    }
    resource_list_fini(out);
    *out = tmp;
    return ERR_OK;
}

int32_t requests_job_count(const job_t *job)
{
    int32_t n = job->parallelism;

    if (job->has_completions && job->completions < n)
        n = job->completions;
    return n < 0 ? 0 : n;
}

err_t requests_job(const job_t *job, resource_list_t *per_pod, resource_list_t *total,
                   err_msg_t *msg)
{
    resource_list_t pod = {0}, sum = {0};
    err_t rc = requests_pod(&job->spec, &pod, msg);

    if (rc == ERR_OK && total != NULL)
        rc = requests_total(&pod, requests_job_count(job), &sum, msg);
    if (rc != ERR_OK) {
        resource_list_fini(&pod);
        return rc;
    }
    if (total != NULL) {
        resource_list_fini(total);
        *total = sum;
    }
    if (per_pod != NULL) {
        resource_list_fini(per_pod);
        *per_pod = pod;
    } else {
        resource_list_fini(&pod);
    }
    return ERR_OK;
}
