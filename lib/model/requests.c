/* requests -- effective resource requests of pods, podsets and Jobs (Kubernetes rules). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/requests.h"

#include "model/types.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* ---- Configuration `resources` ----------------------------------------------------------------
 */

static bool excluded(const resource_rules_t *r, const char *name)
{
    for (size_t i = 0; i < r->nexclude_prefixes; i++)
        if (strncmp(name, r->exclude_prefixes[i], strlen(r->exclude_prefixes[i])) == 0)
            return true;
    return false;
}

static const resource_transformation_t *transformation_of(const resource_rules_t *r,
                                                          const char *name)
{
    for (size_t i = 0; i < r->ntransformations; i++)
        if (r->transformations[i].input != NULL && strcmp(r->transformations[i].input, name) == 0)
            return &r->transformations[i];
    return NULL;
}

/* acc[name] += q; the name is quoted in the overflow message. */
static err_t rl_add_one(resource_list_t *acc, const char *name, quantity_t q, err_msg_t *msg)
{
    quantity_t *slot = rl_slot(acc, name);
    quantity_t sum;

    if (slot == NULL)
        return nomem(msg);
    if (quantity_add(*slot, q, &sum, NULL) != ERR_OK)
        return err_set(msg, ERR_OVERFLOW, "resource %s: requests overflow", name);
    *slot = sum;
    return ERR_OK;
}

/* The outputs of transformation `t` for a request `q` of its input into `generated`; `kept` is
 * the pod's request list after exclusion (where multiplyBy is looked up). */
static err_t transform_one(const resource_transformation_t *t, quantity_t q,
                           const resource_list_t *kept, resource_list_t *generated, err_msg_t *msg)
{
    quantity_t base = q, out;

    if (t->multiply_by != NULL) {
        const quantity_t *m = resource_list_get(kept, t->multiply_by);
        if (m != NULL && quantity_mul_quantity(q, *m, &base, NULL) != ERR_OK)
            return err_set(msg, ERR_OVERFLOW, "resource %s times %s: requests overflow", t->input,
                           t->multiply_by);
    }
    for (size_t o = 0; o < t->outputs.len; o++) {
        const resource_t *r = &t->outputs.items[o];
        if (quantity_mul_quantity(base, r->value, &out, NULL) != ERR_OK)
            return err_set(msg, ERR_OVERFLOW, "resource %s from %s: requests overflow", r->name,
                           t->input);
        err_t rc = rl_add_one(generated, r->name, out, msg);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/*
 * Kueue's order (pkg/workload totalRequestsFromPodSets): excluded resources go first, so a
 * transformation never sees them; each transformed input adds its outputs to a separate
 * "generated" list (a negative amount per unit is an allowance that offsets other outputs, but
 * a negative total stops at zero and never reduces a request the pod made itself); Retain keeps
 * the input as requested (multiplyBy scales the outputs only); then retained + generated, with
 * every total floored at zero.
 */
err_t requests_effective(const resource_rules_t *rules, const resource_list_t *in,
                         resource_list_t *out, err_msg_t *msg)
{
    resource_list_t kept = {0}, result = {0}, generated = {0};
    err_t rc = ERR_OK;

    for (size_t i = 0; rc == ERR_OK && i < in->len; i++)
        if (rules == NULL || !excluded(rules, in->items[i].name))
            rc = rl_add_one(&kept, in->items[i].name, in->items[i].value, msg);
    for (size_t i = 0; rc == ERR_OK && i < kept.len; i++) {
        const resource_t *r = &kept.items[i];
        const resource_transformation_t *t = rules ? transformation_of(rules, r->name) : NULL;
        if (t != NULL)
            rc = transform_one(t, r->value, &kept, &generated, msg);
        if (rc == ERR_OK && (t == NULL || t->strategy == TRANSFORM_RETAIN))
            rc = rl_add_one(&result, r->name, r->value, msg);
    }
    for (size_t i = 0; rc == ERR_OK && i < generated.len; i++)
        rc = rl_add_one(&result, generated.items[i].name,
                        quantity_sign(generated.items[i].value) < 0 ? quantity_zero()
                                                                    : generated.items[i].value,
                        msg);
    for (size_t i = 0; rc == ERR_OK && i < result.len; i++)
        if (quantity_sign(result.items[i].value) < 0)
            result.items[i].value = quantity_zero();
    resource_list_fini(&kept);
    resource_list_fini(&generated);
    if (rc != ERR_OK) {
        resource_list_fini(&result);
        return rc;
    }
    resource_list_fini(out);
    *out = result;
    return ERR_OK;
}

bool requests_resource_is_gpu(const char *name)
{
    bool gpu = false;

    for (const char *p = name; *p != '\0'; p++) {
        if (strncasecmp(p, "mem", 3) == 0)
            return false;
        if (strncasecmp(p, "gpu", 3) == 0)
            gpu = true;
    }
    return gpu;
}
