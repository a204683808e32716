/* decode_config -- the config.kueue.x-k8s.io Configuration: the fields the engine, the simulator
 * and `sluice check` act on (the operator's own fields: lib/ctrl/config.c). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/decode_int.h"
#include "util/duration.h"

#include "model/waitready.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Configuration (config.kueue.x-k8s.io) ------------------------------------------------------
 */

/* Configuration fields only `sluice run` reads (lib/ctrl/config.c): accepted silently here. */
static const char *const config_operator[] = {
    "webhook", "health",       "leaderElection", "clientConnection", "internalCertManagement",
    "metrics", "integrations", /* the simulator runs every kind of its integration table */
    NULL,
};

/* Known Configuration fields sluice accepts without acting on them (warned). */
static const char *const config_unused[] = {
    "controller",
    "objectRetentionPolicies",
    "featureGates",
    "multiKueue",
    "tls",
    "queueVisibility",
    "visibilityServer",
    "pprofBindAddress",
    "gracefulShutdownTimeout",
    "cacheSyncTimeout",
    NULL,
};

static void decode_fair_sharing(decode_t *d, const json_t *v, configuration_t *out)
{
    static const char *const strategies[] = {"LessThanOrEqualToFinalShare", "LessThanInitialShare",
                                             NULL};
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    out->fair_sharing = true; /* v1beta2: present means enabled */
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "enable") && d->v1beta1) {
            jsonx_bool(jx, val, &out->fair_sharing);
        } else if (DECODE_IS(key, "preemptionStrategies")) {
            if (jsonx_want_array_max(jx, val, 2)) {
                out->nstrategies = 0;
                for (size_t i = 0; i < json_array_size(val); i++) {
                    size_t mark = jsonx_push_index(jx, i);
                    int s;
                    if (jsonx_enum(jx, json_array_get(val, i), strategies, &s))
                        out->strategies[out->nstrategies++] = (fair_strategy_t)s;
                    jsonx_pop(jx, mark);
                }
            }
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (d->v1beta1 && json_object_get(v, "enable") == NULL)
        out->fair_sharing = false; /* v1beta1: enable defaults to false */
}

/* A Go duration (metav1.Duration) in whole milliseconds into *out. */
static void decode_duration(decode_t *d, const json_t *v, int64_t *out)
{
    jsonx_t *jx = &d->jx;
    char *s = NULL;
    err_msg_t msg;

    if (!json_is_string(v)) {
        jsonx_error(jx, "must be a duration string (\"5m\", \"168h\"), got %s", jsonx_type_name(v));
        return;
    }
    if (!jsonx_string(jx, v, &s))
        return;
    if (duration_parse_ms(s, strlen(s), DURATION_MS_MAX, out, &msg) != ERR_OK)
        jsonx_error(jx, "%s", msg.text);
    free(s);
}

/* admissionFairSharing: {usageHalfLifeTime, usageSamplingInterval, resourceWeights}. Present
 * means on, as Kueue (its feature gate AdmissionFairSharing is beta, on by default). */
static void decode_afs(decode_t *d, const json_t *v, configuration_t *out)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    out->afs = true;
    out->afs_sampling_ms = 5 * 60 * 1000; /* Kueue's default */
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "usageHalfLifeTime")) {
            decode_duration(d, val, &out->afs_half_life_ms);
        } else if (DECODE_IS(key, "usageSamplingInterval")) {
            int64_t ms = 0;
            decode_duration(d, val, &ms);
            if (ms > 0) /* Kueue defaults a zero interval to 5m before validating */
                out->afs_sampling_ms = ms;
        } else if (DECODE_IS(key, "resourceWeights")) {
            if (jsonx_resource_list(jx, val, &out->afs_weights))
                for (size_t i = 0; i < out->afs_weights.len; i++)
                    if (quantity_sign(out->afs_weights.items[i].value) < 0)
                        jsonx_error_at(jx, out->afs_weights.items[i].name,
                                       "must be greater than or equal to 0");
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

/*
 * resources: how pod requests become quota requests (requests_effective()). Kueue's validation
 * (pkg/config/validation.go): a transformation's strategy is Retain or Replace (default Retain)
 * and no two transformations share an input; excludeResourcePrefixes and quotaCheckStrategy
 * IgnoreUndeclared do not go together. sluice also requires the input (an empty one matches
 * nothing) and warns about entries that cannot have an effect, since Kueue drops excluded
 * resources before it transforms: a transformation of an excluded input, a Retain transformation
 * without outputs, an empty prefix (it excludes every resource).
 */
static void decode_transformation(decode_t *d, const json_t *v, void *item, void *ctx)
{
    static const char *const strategies[] = {"Retain", "Replace", NULL};
    resource_transformation_t *t = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "input")) {
            jsonx_string(jx, val, &t->input);
        } else if (DECODE_IS(key, "strategy")) {
            int st;
            if (jsonx_enum(jx, val, strategies, &st))
                t->strategy = (transform_strategy_t)st;
        } else if (DECODE_IS(key, "multiplyBy")) {
            jsonx_string(jx, val, &t->multiply_by);
            if (t->multiply_by != NULL && t->multiply_by[0] == '\0') {
                free(t->multiply_by); /* "" is Go's zero value: no multiplier */
                t->multiply_by = NULL;
            }
        } else if (DECODE_IS(key, "outputs")) {
            jsonx_resource_list(jx, val, &t->outputs);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    if (t->input == NULL || t->input[0] == '\0')
        jsonx_required(jx, "input");
}

/* The index of the first prefix of `r` that `name` starts with, or -1. */
static long excluded_by(const resource_rules_t *r, const char *name)
{
    for (size_t i = 0; i < r->nexclude_prefixes; i++)
        if (strncmp(name, r->exclude_prefixes[i], strlen(r->exclude_prefixes[i])) == 0)
            return (long)i;
    return -1;
}

/* Does transformation `t` (JSON) list no outputs? (Malformed ones are reported already.) */
static bool no_outputs(const json_t *t)
{
    const json_t *o = json_object_get(t, "outputs");

    return o == NULL || json_is_null(o) || (json_is_object(o) && json_object_size(o) == 0);
}

/* The cross-field rules of `resources`, once every field is read. */
static void check_resources(decode_t *d, const resource_rules_t *r, const json_t *list,
                            bool have_strategy)
{
    jsonx_t *jx = &d->jx;
    size_t mark;

    for (size_t i = 0; i < r->nexclude_prefixes; i++) {
        if (r->exclude_prefixes[i][0] != '\0')
            continue;
        mark = jsonx_push_key(jx, "excludeResourcePrefixes");
        size_t m2 = jsonx_push_index(jx, i);
        jsonx_warn(jx, "an empty prefix excludes every resource: no request counts against quota");
        jsonx_pop(jx, m2);
        jsonx_pop(jx, mark);
    }
    for (size_t i = 0; i < r->ntransformations; i++) {
        const resource_transformation_t *t = &r->transformations[i];
        long ex;
        if (t->input == NULL || t->input[0] == '\0')
            continue;
        mark = jsonx_push_key(jx, "transformations");
        size_t m2 = jsonx_push_index(jx, i);
        for (size_t j = 0; j < i; j++) {
            if (r->transformations[j].input != NULL &&
                strcmp(r->transformations[j].input, t->input) == 0) {
                size_t m3 = jsonx_push_key(jx, "input");
                jsonx_error(jx, "Duplicate value: \"%s\"", t->input);
                jsonx_pop(jx, m3);
                break;
            }
        }
        ex = excluded_by(r, t->input);
        if (ex >= 0)
            jsonx_warn(jx,
                       "has no effect: excludeResourcePrefixes[%ld] drops %s before "
                       "transformations apply",
                       ex, t->input);
        else if (t->strategy == TRANSFORM_RETAIN && no_outputs(json_array_get(list, i)))
            jsonx_warn(jx, "has no effect: strategy Retain with no outputs keeps %s as it is",
                       t->input);
        jsonx_pop(jx, m2);
        jsonx_pop(jx, mark);
    }
    if (have_strategy && r->ignore_undeclared && r->nexclude_prefixes > 0) {
        mark = jsonx_push_key(jx, "quotaCheckStrategy");
        jsonx_error(jx,
                    "Invalid value: \"IgnoreUndeclared\": excludeResourcePrefixes is not allowed "
                    "when quotaCheckStrategy is IgnoreUndeclared");
        jsonx_pop(jx, mark);
    }
}

static void decode_resources(decode_t *d, const json_t *v, resource_rules_t *out)
{
    static const char *const checks[] = {"BlockUndeclared", "IgnoreUndeclared", NULL};
    jsonx_t *jx = &d->jx;
    bool have_strategy = false;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "excludeResourcePrefixes")) {
            jsonx_string_array(jx, val, DEC_MAX_LIST, false, &out->exclude_prefixes,
                               &out->nexclude_prefixes);
        } else if (DECODE_IS(key, "transformations")) {
            size_t n = 0;
            resource_transformation_t *t = decode__list(d, val, DEC_MAX_LIST, false, sizeof(*t),
                                                        decode_transformation, NULL, &n);
            TYPES_FREE_ARRAY(out->transformations, out->ntransformations,
                             resource_transformation_fini);
            out->transformations = t;
            out->ntransformations = t != NULL ? n : 0;
        } else if (!d->v1beta1 && DECODE_IS(key, "quotaCheckStrategy")) {
            int st;
            if (jsonx_enum(jx, val, checks, &st)) {
                out->ignore_undeclared = st == 1;
                have_strategy = true;
            }
        } else if (DECODE_IS(key, "deviceClassMappings")) {
            jsonx_unused(jx, key);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    check_resources(d, out, json_object_get(v, "transformations"), have_strategy);
}

/* Kueue's default managedJobsNamespaceSelector: kubernetes.io/metadata.name NotIn
 * [kube-system, <kueue namespace>]. */
static void default_managed_selector(decode_t *d, label_selector_t *s, const char *ns)
{
    selector_req_t *r = calloc(1, sizeof(*r));
    char **values = calloc(2, sizeof(*values));

    if (r == NULL || values == NULL)
        goto oom;
    r->key = strdup("kubernetes.io/metadata.name");
    values[0] = strdup("kube-system");
    values[1] = strdup(ns);
    r->values = values;
    r->nvalues = 2;
    values = NULL;
    r->op = SELECTOR_OP_NOT_IN;
    if (r->key == NULL || r->values[0] == NULL || r->values[1] == NULL)
        goto oom;
    s->present = true;
    s->exprs = r;
    s->nexprs = 1;
    return;
oom:
    if (r != NULL)
        selector_req_fini(r);
    free(r);
    free(values);
    jsonx_oom(&d->jx);
}

/* waitForPodsReady: decoded by the code the operator uses (model/waitready.h), so `sluice run`
 * and `sluice sim` read a file alike; its first problem is reported at its path. */
static void decode_pods_ready(decode_t *d, const json_t *root, configuration_t *out)
{
    err_msg_t msg = {{0}};
    const char *sep;
    err_t rc = waitready_decode(root, &out->pods_ready, &msg);

    if (rc == ERR_OK)
        return;
    sep = strstr(msg.text, ": ");
    if (sep == NULL) {
        jsonx_error(&d->jx, "%s", msg.text);
        return;
    }
    char path[128];
    snprintf(path, sizeof(path), "%.*s", (int)(sep - msg.text), msg.text);
    size_t mark = jsonx_push_key(&d->jx, path);
    jsonx_error(&d->jx, "%s", sep + 2);
    jsonx_pop(&d->jx, mark);
}

/* Append a copy of `key` to out->run_only. */
static void add_run_only(decode_t *d, configuration_t *out, const char *key)
{
    char **v = realloc(out->run_only, (out->nrun_only + 1) * sizeof(*v));

    if (v == NULL) {
        jsonx_oom(&d->jx);
        return;
    }
    out->run_only = v;
    v[out->nrun_only] = strdup(key);
    if (v[out->nrun_only] == NULL)
        jsonx_oom(&d->jx);
    else
        out->nrun_only++;
}

void decode__configuration(decode_t *d, const json_t *root, configuration_t *out)
{
    jsonx_t *jx = &d->jx;
    char *ns = NULL;

    decode__meta(d, json_object_get(root, "metadata"), &out->meta, false, false);
    DECODE_FIELDS(d, root, key, val)
    {
        if (DECODE_IS(key, "apiVersion") || DECODE_IS(key, "kind") || DECODE_IS(key, "metadata")) {
            /* checked by object_decode / above */
        } else if (DECODE_IS(key, "namespace")) {
            jsonx_string(jx, val, &ns);
        } else if (DECODE_IS(key, "manageJobsWithoutQueueName")) {
            jsonx_bool(jx, val, &out->manage_jobs_without_queue_name);
        } else if (DECODE_IS(key, "managedJobsNamespaceSelector")) {
            decode__label_selector(d, val, &out->managed_jobs_namespace_selector);
        } else if (DECODE_IS(key, "fairSharing")) {
            decode_fair_sharing(d, val, out);
        } else if (DECODE_IS(key, "resources")) {
            decode_resources(d, val, &out->resources);
        } else if (DECODE_IS(key, "admissionFairSharing")) {
            decode_afs(d, val, out);
        } else if (DECODE_IS(key, "waitForPodsReady")) {
            /* decoded below, with the apiVersion's defaults */
        } else if (decode__in(d, key, config_operator)) {
            /* decoded by the operator's own configuration reader; remembered for the
             * simulator, where they have no effect */
            add_run_only(d, out, key);
        } else if (decode__in(d, key, config_unused)) {
            jsonx_unused(jx, key);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    waitready_defaults(&out->pods_ready, d->v1beta1);
    decode_pods_ready(d, root, out);
    if (!out->managed_jobs_namespace_selector.present)
        default_managed_selector(d, &out->managed_jobs_namespace_selector,
                                 ns ? ns : "sluice-system");
    free(ns);
}
