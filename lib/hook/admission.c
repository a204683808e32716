/* admission -- AdmissionReview v1 webhooks: Kueue's validating and mutating endpoints. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"

#include "jobs/framework.h"
#include "jobs/kindobj.h"
#include "jobs/podgroup.h"
#include "model/object.h"
#include "model/validate.h"
#include "util/alloc.h"
#include "util/base64.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINALIZER      "kueue.x-k8s.io/resource-in-use"
#define LABEL_QUEUE    "kueue.x-k8s.io/queue-name"
#define LABEL_PRIORITY "kueue.x-k8s.io/priority-class"

typedef enum {
    HOOK_VALIDATE = 0,
    HOOK_MUTATE,
} hook_type_t;

typedef struct route_s {
    const char *path;
    hook_type_t type;
    kind_t kind;
    bool audited; /* quota, queue mapping or priority: recorded in the audit trail */
} route_t;

static const route_t routes[] = {
    {"/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", HOOK_MUTATE, KIND_CLUSTER_QUEUE, false},
    {"/validate-kueue-x-k8s-io-v1beta2-clusterqueue", HOOK_VALIDATE, KIND_CLUSTER_QUEUE, true},
    {"/mutate-kueue-x-k8s-io-v1beta2-resourceflavor", HOOK_MUTATE, KIND_RESOURCE_FLAVOR, false},
    {"/validate-kueue-x-k8s-io-v1beta2-resourceflavor", HOOK_VALIDATE, KIND_RESOURCE_FLAVOR, false},
    {"/validate-kueue-x-k8s-io-v1beta2-cohort", HOOK_VALIDATE, KIND_COHORT, true},
    {"/validate-kueue-x-k8s-io-v1beta2-localqueue", HOOK_VALIDATE, KIND_LOCAL_QUEUE, true},
    {"/validate-kueue-x-k8s-io-v1beta2-workloadpriorityclass", HOOK_VALIDATE,
     KIND_WORKLOAD_PRIORITY_CLASS, true},
    {"/mutate-kueue-x-k8s-io-v1beta2-workload", HOOK_MUTATE, KIND_WORKLOAD, false},
    {"/validate-kueue-x-k8s-io-v1beta2-workload", HOOK_VALIDATE, KIND_WORKLOAD, true},
    /* batch/v1 Job and every other job kind: kind_route(), from lib/jobs' table. */
};

/* The parsed request part of an AdmissionReview (borrowed from the document). */
typedef struct review_s {
    const route_t *route;
    const jobs_kind_t *jk; /* a job kind of lib/jobs' table (not batch/v1 Job), or NULL */
    const char *uid;
    const char *operation;
    const char *kind;
    const char *sub_resource;
    const char *namespace;
    const char *name;
    const char *user;
    json_t *groups;
    bool dry_run;       /* request.dryRun: nothing will be persisted */
    json_t *object;     /* NULL on DELETE */
    json_t *old_object; /* NULL on CREATE */
} review_t;

/* What one review decided. */
typedef struct verdict_s {
    bool allowed;
    int code;         /* status code when denied */
    char *message;    /* owned, denial text */
    json_t *patch;    /* owned, JSONPatch operations, NULL = none */
    json_t *warnings; /* owned, array of strings */
} verdict_t;

/* ---- helpers ----------------------------------------------------------------------------- */

static const char *str_at(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static bool counts(const diag_t *it)
{
    return !it->warning;
}

/* Join the error diagnostics the way controller-runtime prints a field.ErrorList aggregate:
 * one error as "path: detail", several as "[p1: d1, p2: d2]", into *message (NULL when there is
 * none). ERR_NOMEM: a failed allocation must not read as "no errors", which would admit. */
static err_t join_errors(const diags_t *d, char **message)
{
    size_t n = 0, len = 0, cap = 3;
    char *out;

    for (size_t i = 0; i < d->len; i++) {
        if (counts(&d->items[i])) {
            n++;
            cap += strlen(d->items[i].path) + strlen(d->items[i].message) + 4;
        }
    }
    *message = NULL;
    if (n == 0)
        return ERR_OK;
    out = malloc(cap);
    if (out == NULL)
        return ERR_NOMEM;
    if (n > 1)
        out[len++] = '[';
    for (size_t i = 0; i < d->len; i++) {
        const diag_t *it = &d->items[i];
        if (!counts(it))
            continue;
        len +=
            (size_t)snprintf(out + len, cap - len, "%s%s%s%s", len > (n > 1 ? 1u : 0u) ? ", " : "",
                             it->path, it->path[0] ? ": " : "", it->message);
    }
    if (n > 1)
        out[len++] = ']';
    out[len] = '\0';
    *message = out;
    return ERR_OK;
}

/* Append {"op":"add","path":path,"value":value} to `patch`; `value` is consumed. ERR_NOMEM. */
static err_t patch_add(json_t *patch, const char *path, json_t *value)
{
    json_t *op = json_pack("{s:s, s:s, s:o}", "op", "add", "path", path, "value", value);
    return op == NULL || json_array_append_new(patch, op) != 0 ? ERR_NOMEM : ERR_OK;
}

/* Escape a map key for a JSON Pointer (RFC 6901): "~" -> "~0", "/" -> "~1". */
static void pointer_escape(const char *key, char *out, size_t cap)
{
    size_t o = 0;

    for (const char *p = key; *p && o + 3 < cap; p++) {
        if (*p == '~') {
            out[o++] = '~';
            out[o++] = '0';
        } else if (*p == '/') {
            out[o++] = '~';
            out[o++] = '1';
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

/* Add the label key=value to `obj` at "/metadata/labels". `have_labels` tracks whether the map
 * exists (in the object or through an earlier operation of the same patch). */
static err_t patch_label(json_t *patch, bool *have_labels, const char *key, const char *value)
{
    char esc[320], path[400];

    if (!*have_labels) {
        *have_labels = true;
        return patch_add(patch, "/metadata/labels", json_pack("{s:s}", key, value));
    }
    pointer_escape(key, esc, sizeof(esc));
    snprintf(path, sizeof(path), "/metadata/labels/%s", esc);
    return patch_add(patch, path, json_string(value));
}

/* ---- mutating webhooks ---------------------------------------------------------------------- */

/* ClusterQueue and ResourceFlavor: add Kueue's finalizer so deletion waits for their users. */
static err_t mutate_finalizer(const review_t *r, verdict_t *v)
{
    json_t *fins = json_object_get(json_object_get(r->object, "metadata"), "finalizers");
    size_t i;
    json_t *f;

    json_array_foreach(fins, i, f)
    {
        if (json_is_string(f) && strcmp(json_string_value(f), FINALIZER) == 0)
            return ERR_OK;
    }
    if (json_is_array(fins))
        return patch_add(v->patch, "/metadata/finalizers/-", json_string(FINALIZER));
    return patch_add(v->patch, "/metadata/finalizers", json_pack("[s]", FINALIZER));
}

/* Append to `patch` the operations that turn `a` into `b` where `b` adds or changes members
 * (what set_suspended() does: nothing is removed), at JSON Pointer `path`. ERR_NOMEM. */
static err_t patch_diff(json_t *patch, const char *path, const json_t *a, json_t *b)
{
    const char *key;
    json_t *v;

    if (!json_is_object(a) || !json_is_object(b))
        return patch_add(patch, path[0] ? path : "/", json_incref(b));
    json_object_foreach(b, key, v)
    {
        const json_t *old = json_object_get(a, key);
        char esc[320], sub[1024];
        err_t rc;
        if (old != NULL && json_equal(old, v))
            continue;
        pointer_escape(key, esc, sizeof(esc));
        snprintf(sub, sizeof(sub), "%s/%s", path, esc);
        rc = old != NULL ? patch_diff(patch, sub, old, v) : patch_add(patch, sub, json_incref(v));
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Hold `obj` of kind `jk`: the patch of what the kind's set_suspended() changes (for a JobSet,
 * /spec/suspend). An object the kind cannot hold (no spec) is left to its validation. */
static err_t patch_hold(const jobs_kind_t *jk, const json_t *obj, verdict_t *v)
{
    json_t *held = json_deep_copy(obj);
    err_t rc = ERR_OK;

    if (held == NULL)
        return ERR_NOMEM;
    if (jk->set_suspended(held, true, NULL) == ERR_OK)
        rc = patch_diff(v->patch, "", obj, held);
    json_decref(held);
    return rc;
}

/* A kind whose webhook writes more than the hold (its create_defaults(): a TrainJob's own
 * runtimePatches entry, which Kueue's webhook adds to every new TrainJob): the patch of that and,
 * when `hold`, of the hold. An object it cannot default is left to its validation. */
static err_t patch_defaults(const jobs_kind_t *jk, const json_t *obj, bool hold, verdict_t *v)
{
    json_t *done = json_deep_copy(obj);
    err_t rc;

    if (done == NULL)
        return ERR_NOMEM;
    rc = jk->create_defaults(done, NULL);
    if (rc == ERR_OK && hold)
        rc = jk->set_suspended(done, true, NULL);
    if (rc == ERR_OK)
        rc = patch_diff(v->patch, "", obj, done);
    else if (rc != ERR_NOMEM)
        rc = ERR_OK;
    json_decref(done);
    return rc;
}

/* A Pod sluice is to manage (Kueue's pod webhook, podgroup.h jobs_pod_default()): the label
 * and finalizer kueue.x-k8s.io/managed, the scheduling gate kueue.x-k8s.io/admission, the
 * role-hash annotation; the patch of what it adds. */
static err_t patch_pod(const json_t *obj, verdict_t *v)
{
    json_t *held = json_deep_copy(obj);
    err_t rc = ERR_OK;

    if (held == NULL)
        return ERR_NOMEM;
    rc = jobs_pod_default(held, NULL);
    if (rc == ERR_OK)
        rc = patch_diff(v->patch, "", obj, held);
    else if (rc != ERR_NOMEM)
        rc = ERR_OK; /* a Pod it cannot mark (no spec) is left to the API server's validation */
    json_decref(held);
    return rc;
}

/* A queued job (Kueue's jobframework defaults, reference §3.2): default LocalQueue, default
 * WorkloadPriorityClass, and held (spec.suspend=true) when managed -- a batch/v1 Job, or an
 * object of job kind r->jk held through its table entry. A child of a managed owner is left as
 * it is (WorkloadShouldBeSuspended: its parent's admission covers it). */
static err_t mutate_job(const hook_admission_env_t *env, const review_t *r, verdict_t *v)
{
    json_t *meta = json_object_get(r->object, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    json_t *spec = json_object_get(r->object, "spec");
    const char *ns = r->namespace ? r->namespace : str_at(meta, "namespace");
    bool have_labels = json_is_object(labels);
    const char *queue = str_at(labels, LABEL_QUEUE);
    bool managed, held;

    if (strcmp(r->operation, "CREATE") != 0)
        return ERR_OK;
    /* A Pod a serving owner marked (pod-suspending-parent: a StatefulSet's, whose owner is a
     * managed kind) is held all the same: the owner is admitted through its Pods. */
    if (env->owner_managed != NULL && env->owner_managed(env->ctx, r->object) &&
        !(r->jk != NULL && r->jk->admit == JOBS_ADMIT_POD &&
          str_at(json_object_get(meta, "annotations"), JOBS_POD_SUSPENDING_PARENT) != NULL))
        return ERR_OK;
    if ((queue == NULL || queue[0] == '\0') && ns != NULL && env->local_queue_exists &&
        env->local_queue_exists(env->ctx, ns, "default")) {
        if (patch_label(v->patch, &have_labels, LABEL_QUEUE, "default") != ERR_OK)
            return ERR_NOMEM;
        queue = "default";
    }
    managed =
        (queue != NULL && queue[0] != '\0') || (ns != NULL && env->manage_without_queue_name &&
                                                env->manage_without_queue_name(env->ctx, ns));
    if (managed && str_at(labels, LABEL_PRIORITY) == NULL && env->wpc_exists &&
        env->wpc_exists(env->ctx, "default")) {
        if (patch_label(v->patch, &have_labels, LABEL_PRIORITY, "default") != ERR_OK)
            return ERR_NOMEM;
    }
    if (r->jk != NULL && r->jk->admit == JOBS_ADMIT_POD) {
        /* A Pod a serving owner marked (pod-suspending-parent) is managed through its owner. */
        json_t *ann = json_object_get(meta, "annotations");
        if (managed || str_at(ann, JOBS_POD_SUSPENDING_PARENT) != NULL)
            return patch_pod(r->object, v);
        return ERR_OK;
    }
    held = r->jk != NULL ? r->jk->suspended(r->object)
                         : json_is_true(json_object_get(spec, "suspend"));
    if (r->jk != NULL && r->jk->create_defaults != NULL)
        return patch_defaults(r->jk, r->object, managed && !held, v);
    if (!managed || held)
        return ERR_OK;
    if (r->jk != NULL)
        return patch_hold(r->jk, r->object, v);
    return patch_add(v->patch, "/spec/suspend", json_true());
}

/* ---- validating webhooks ------------------------------------------------------------------- */

static bool default_queue_exists(void *ctx, const char *ns)
{
    const hook_admission_env_t *env = ctx;
    return env->local_queue_exists && env->local_queue_exists(env->ctx, ns, "default");
}

static bool serving_workload_left(void *ctx, const char *ns, const char *name, const char *uid)
{
    const hook_admission_env_t *env = ctx;
    return env->serving_workload_left != NULL &&
           env->serving_workload_left(env->ctx, ns, name, uid);
}

static const flavor_quotas_t *find_flavor(const cluster_queue_t *cq, const char *name)
{
    for (size_t g = 0; g < cq->ngroups; g++)
        for (size_t f = 0; f < cq->groups[g].nflavors; f++)
            if (strcmp(cq->groups[g].flavors[f].name, name) == 0)
                return &cq->groups[g].flavors[f];
    return NULL;
}

/* Settings Kueue acts on and sluice does not (a ClusterQueue's concurrentAdmissionPolicy, a
 * pod template's podset-group-name) are accepted, and the person applying them is told, as `sluice
 * check` tells: one AdmissionReview warning "path: message" per decode warning saying so. */
static err_t no_effect_warnings(const diags_t *d, json_t *warnings)
{
    char text[700];

    for (size_t i = 0; i < d->len; i++) {
        if (!d->items[i].warning || strstr(d->items[i].message, "has no effect") == NULL)
            continue;
        snprintf(text, sizeof(text), "%s: %s", d->items[i].path, d->items[i].message);
        if (json_array_append_new(warnings, json_string(text)) != 0)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

/* Admission fair sharing's settings where they have no effect (Kueue accepts them silently):
 * a UsageBased ClusterQueue or a LocalQueue weight while the Configuration has no
 * admissionFairSharing, a LocalQueue weight whose ClusterQueue is not UsageBased. */
static err_t afs_warnings(const hook_admission_env_t *env, const object_t *o, json_t *warnings)
{
    static const char off[] = "has no effect: admission fair sharing is off (the Configuration "
                              "has no admissionFairSharing)";
    char text[700];
    const char *path = NULL;

    if (env->afs_enabled == NULL)
        return ERR_OK;
    if (o->kind == KIND_CLUSTER_QUEUE && o->u.cq.afs_usage_based && !env->afs_enabled(env->ctx))
        path = "spec.admissionScope";
    else if (o->kind == KIND_LOCAL_QUEUE && o->u.lq.has_fair_weight)
        path = "spec.fairSharing";
    if (path == NULL)
        return ERR_OK;
    if (!env->afs_enabled(env->ctx))
        snprintf(text, sizeof(text), "%s: %s", path, off);
    else if (o->kind == KIND_LOCAL_QUEUE && o->u.lq.cluster_queue != NULL &&
             env->cq_usage_based != NULL &&
             env->cq_usage_based(env->ctx, o->u.lq.cluster_queue) == 0)
        snprintf(text, sizeof(text),
                 "%s: has no effect: ClusterQueue \"%s\" has no admissionScope "
                 "UsageBasedAdmissionFairSharing",
                 path, o->u.lq.cluster_queue);
    else
        return ERR_OK;
    return json_array_append_new(warnings, json_string(text)) != 0 ? ERR_NOMEM : ERR_OK;
}

/* A quota decrease below what admitted workloads use is allowed (they keep running, as in
 * Kueue) but the person making it is told, naming the ClusterQueue and resource. */
static err_t quota_warnings(const hook_admission_env_t *env, const cluster_queue_t *old,
                            const cluster_queue_t *cq, json_t *warnings)
{
    if (env->cq_usage == NULL)
        return ERR_OK;
    for (size_t g = 0; g < cq->ngroups; g++) {
        for (size_t f = 0; f < cq->groups[g].nflavors; f++) {
            const flavor_quotas_t *fq = &cq->groups[g].flavors[f];
            const flavor_quotas_t *ofq = old ? find_flavor(old, fq->name) : NULL;
            for (size_t r = 0; r < fq->nresources; r++) {
                const resource_quota_t *rq = &fq->resources[r];
                quantity_t used;
                char u[QUANTITY_STR_MAX], n[QUANTITY_STR_MAX], text[700];

                if (ofq != NULL) {
                    bool decreased = true;
                    for (size_t o = 0; o < ofq->nresources; o++)
                        if (strcmp(ofq->resources[o].name, rq->name) == 0)
                            decreased = quantity_cmp(rq->nominal, ofq->resources[o].nominal) < 0;
                    if (!decreased)
                        continue;
                }
                if (!env->cq_usage(env->ctx, cq->meta.name, fq->name, rq->name, &used) ||
                    quantity_cmp(used, rq->nominal) <= 0)
                    continue;
                snprintf(text, sizeof(text),
                         "ClusterQueue %s: admitted workloads use %s of %s in flavor %s, more "
                         "than the new nominalQuota %s; they keep running, and new workloads "
                         "wait until usage falls below it",
                         cq->meta.name, quantity_format(used, u), rq->name, fq->name,
                         quantity_format(rq->nominal, n));
                if (json_array_append_new(warnings, json_string(text)) != 0)
                    return ERR_NOMEM;
            }
        }
    }
    return ERR_OK;
}

/* ---- decoding that never skips validation --------------------------------------------------
 *
 * A Job (or an object of a job kind) may carry a field newer than sluice's list of PodSpec
 * fields: the API server already dropped the fields *it* does not know, so such a field is only
 * unknown to sluice, never a reason to refuse the object. It must not be a reason to skip the
 * rules either (the queue name of an admitted Job could then be changed by adding any new
 * field). So an object that fails to decode only because of unknown fields has exactly those
 * members removed from a copy, and the copy is decoded again: the rules then run on everything
 * sluice knows. A path that cannot be followed back into the document (a key with a dot in it,
 * a truncated path) is not guessed at: the object is refused.
 *
 *   decode -(ERR_OK)-> validate
 *          -(only "unknown field" errors, may drop)-> drop those paths in a copy -> decode again
 *          -(other errors)-> refused with them
 * The old object of an UPDATE that still cannot be decoded fails closed (refused): the update
 * rules (immutable queue name, priority class) cannot be checked without it.
 */

typedef err_t (*decode_fn)(const jobs_kind_t *jk, json_t *root, object_t *out, diags_t *d);

static err_t decode_builtin(const jobs_kind_t *jk, json_t *root, object_t *out, diags_t *d)
{
    (void)jk;
    return object_decode(root, out, d);
}

static bool is_unknown_field(const diag_t *it)
{
    return !it->warning && strncmp(it->message, "unknown field \"", 15) == 0;
}

/* The member named by diagnostic `it` (path "parent.key", message `unknown field "key"`) removed
 * from `root`; false when the path cannot be followed exactly. */
static bool drop_unknown(json_t *root, const diag_t *it)
{
    /* The key ends at the first quote: a "did you mean" suggestion may follow. */
    const char *key = it->message + 15, *end = strchr(key, '"');
    char name[256], field[256], parent[512];
    size_t flen, plen = strlen(it->path);
    const char *p = parent;
    json_t *at = root;

    if (end == NULL || (size_t)(end - key) >= sizeof(field) || strstr(it->path, "...") != NULL)
        return false;
    flen = (size_t)(end - key);
    memcpy(field, key, flen);
    field[flen] = '\0';
    /* The path ends in the key itself: the parent is what comes before ".key". */
    if (plen < flen || strcmp(it->path + plen - flen, field) != 0 ||
        (plen > flen && it->path[plen - flen - 1] != '.') || plen - flen >= sizeof(parent))
        return false;
    memcpy(parent, it->path, plen > flen ? plen - flen - 1 : 0);
    parent[plen > flen ? plen - flen - 1 : 0] = '\0';
    while (*p != '\0') {
        size_t n = strcspn(p, ".[");
        if (n > 0) {
            if (n >= sizeof(name))
                return false;
            memcpy(name, p, n);
            name[n] = '\0';
            at = json_object_get(at, name);
            p += n;
        }
        while (*p == '[') {
            char *stop;
            unsigned long i = strtoul(p + 1, &stop, 10);
            if (stop == p + 1 || *stop != ']')
                return false;
            at = json_array_get(at, i);
            p = stop + 1;
        }
        if (*p == '.')
            p++;
        else if (*p != '\0' && n == 0)
            return false;
        if (at == NULL)
            return false;
    }
    return json_is_object(at) && json_object_del(at, field) == 0;
}

/* Copy the diagnostics of `from` into `to`, unknown-field errors as warnings when `soft`. */
static err_t diags_copy(diags_t *to, const diags_t *from, bool soft)
{
    for (size_t i = 0; i < from->len; i++) {
        const diag_t *it = &from->items[i];
        err_t rc = it->warning || (soft && is_unknown_field(it))
                       ? diags_warn(to, it->path, "%s", it->message)
                       : diags_error(to, it->path, "%s", it->message);
        if (rc != ERR_OK)
            return rc;
    }
    return from->oom ? ERR_NOMEM : ERR_OK;
}

/* Decode `root` into `out` (ERR_OK: *have set, the caller finis `out`). With `may_drop`, an
 * object whose only errors are unknown fields is decoded again without them (see above); the
 * dropped fields stay in `d` as warnings. Other problems are errors in `d`, *have false. */
static err_t decode_or_drop(decode_fn decode, const jobs_kind_t *jk, json_t *root, bool may_drop,
                            object_t *out, bool *have, diags_t *d)
{
    diags_t first;
    json_t *copy = NULL;
    bool only_unknown;
    err_t rc;

    *have = false;
    diags_init(&first);
    rc = decode(jk, root, out, &first);
    if (rc == ERR_NOMEM || first.oom) {
        if (rc == ERR_OK)
            object_fini(out);
        diags_fini(&first);
        return ERR_NOMEM;
    }
    if (rc == ERR_OK) {
        *have = true;
        rc = diags_copy(d, &first, may_drop);
        goto out;
    }
    only_unknown = first.nerrors > 0;
    for (size_t i = 0; i < first.len && only_unknown; i++)
        only_unknown = first.items[i].warning || is_unknown_field(&first.items[i]);
    if (!may_drop || !only_unknown) {
        rc = diags_copy(d, &first, false);
        goto out;
    }
    copy = json_deep_copy(root);
    if (copy == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < first.len; i++) {
        if (!is_unknown_field(&first.items[i]) || drop_unknown(copy, &first.items[i]))
            continue;
        /* Not found again where the decoder saw it: refuse rather than guess. */
        rc = diags_copy(d, &first, false);
        goto out;
    }
    rc = diags_copy(d, &first, true); /* what was dropped, as warnings */
    if (rc != ERR_OK)
        goto out;
    rc = decode(jk, copy, out, d);
    if (rc == ERR_OK)
        *have = true;
    rc = rc == ERR_NOMEM || d->oom ? ERR_NOMEM : ERR_OK;
    if (rc != ERR_OK && *have) {
        object_fini(out);
        *have = false;
    }
out:
    json_decref(copy);
    diags_fini(&first);
    return rc;
}

/* The old object of an UPDATE: decoded (unknown fields dropped as above), or the update is
 * refused (`d` gets "oldObject: ..." errors) since its rules cannot be checked. */
static err_t decode_old(decode_fn decode, const jobs_kind_t *jk, json_t *root, bool may_drop,
                        object_t *out, bool *have, diags_t *d)
{
    diags_t od;
    err_t rc;

    diags_init(&od);
    rc = decode_or_drop(decode, jk, root, may_drop, out, have, &od);
    if (rc == ERR_OK && !*have) {
        for (size_t i = 0; i < od.len && rc == ERR_OK; i++) {
            const diag_t *it = &od.items[i];
            if (!it->warning)
                rc = diags_error(d, "oldObject",
                                 "the stored object cannot be decoded (%s%s%s), "
                                 "so the update cannot be checked against it",
                                 it->path, it->path[0] ? ": " : "", it->message);
        }
        if (rc == ERR_OK && od.nerrors == 0)
            rc = diags_error(d, "oldObject",
                             "the stored object cannot be decoded, so the "
                             "update cannot be checked against it");
    }
    diags_fini(&od);
    return rc;
}

/* The verdict on r->object into `v`. ERR_NOMEM when it could not be reached (the caller answers
 * 500: a refusal for lack of memory would be a wrong answer, and so would an approval). */
static err_t validate(const hook_admission_env_t *env, const review_t *r, verdict_t *v)
{
    object_t obj, old;
    diags_t d;
    bool have_obj = false, have_old = false;
    validate_env_t venv = {.default_queue_exists = default_queue_exists,
                           .serving_workload_left = serving_workload_left,
                           .ctx = (void *)env};
    err_t rc;

    if (strcmp(r->operation, "DELETE") == 0 || strcmp(r->operation, "CONNECT") == 0)
        return ERR_OK; /* registered for DELETE only to audit it */
    memset(&obj, 0, sizeof(obj));
    memset(&old, 0, sizeof(old));
    diags_init(&d);
    /* Only a Job's unknown fields are newer than sluice (see decode_or_drop); Kueue's own kinds
     * are sluice's, and a field unknown there is an error. */
    rc = decode_or_drop(decode_builtin, NULL, r->object, r->route->kind == KIND_JOB, &obj,
                        &have_obj, &d);
    if (rc != ERR_OK)
        goto out;
    if (have_obj && r->old_object != NULL && strcmp(r->operation, "UPDATE") == 0) {
        rc = decode_old(decode_builtin, NULL, r->old_object, r->route->kind == KIND_JOB, &old,
                        &have_old, &d);
        if (rc != ERR_OK)
            goto out;
    }
    if (have_obj && obj.kind != r->route->kind) {
        v->allowed = false;
        v->code = 400;
        v->message = malloc(128);
        if (v->message == NULL) {
            rc = ERR_NOMEM;
            goto out;
        }
        snprintf(v->message, 128, "expected a %s, got a %s", kind_name(r->route->kind),
                 kind_name(obj.kind));
        goto out;
    }
    if (have_obj && have_old)
        rc = validate_update_env(&old, &obj, &venv, &d);
    else if (have_obj && !(r->old_object != NULL && strcmp(r->operation, "UPDATE") == 0))
        rc = validate_object(&obj, &d); /* (an UPDATE without its old object is refused) */
    if (rc == ERR_OK && d.oom)          /* the decoder's list of problems is incomplete */
        rc = ERR_NOMEM;
    if (rc != ERR_OK)
        goto out;
    rc = join_errors(&d, &v->message);
    if (rc != ERR_OK)
        goto out;
    if (v->message != NULL) {
        v->allowed = false;
        v->code = 403;
    } else {
        rc = no_effect_warnings(&d, v->warnings);
        if (rc == ERR_OK && have_obj)
            rc = afs_warnings(env, &obj, v->warnings);
        if (rc == ERR_OK && have_obj && obj.kind == KIND_CLUSTER_QUEUE)
            rc = quota_warnings(env, have_old ? &old.u.cq : NULL, &obj.u.cq, v->warnings);
    }
out:
    if (have_obj)
        object_fini(&obj);
    if (have_old)
        object_fini(&old);
    diags_fini(&d);
    return rc;
}

/* ---- job kinds of the framework table -------------------------------------------------- */

/* The kind's own rules on an object without a queue name (kindobj_decode() keeps them aside):
 * Kueue's webhook applies them when it manages such objects in the object's namespace
 * (manageJobsWithoutQueueName). */
static void unlabelled_kind_rules(const hook_admission_env_t *env, const object_t *obj, diags_t *d)
{
    const struct diags_s *later = obj->u.integ.unlabelled_rules;
    const char *ns = obj->u.integ.meta.namespace;

    if (later == NULL || ns == NULL || env->manage_without_queue_name == NULL ||
        !env->manage_without_queue_name(env->ctx, ns))
        return;
    for (size_t i = 0; i < later->len; i++)
        diags_error(d, later->items[i].path, "%s", later->items[i].message);
}

/* An object of job kind r->jk: Kueue's webhook rules for it, the same code as `sluice check`
 * (jobs/kindobj.h: its envelope and metadata, its pod sets, the kind's own rules; then
 * jobframework's label rules of validate_object(), and on UPDATE validate_update_env()'s: a
 * queue name or maximum execution time that cannot change while it runs, a
 * WorkloadPriorityClass neither added to a running object nor removed). */
static err_t validate_kind(const hook_admission_env_t *env, const review_t *r, verdict_t *v)
{
    object_t obj, old;
    diags_t d;
    bool have_obj = false, have_old = false;
    validate_env_t venv = {.default_queue_exists = default_queue_exists,
                           .serving_workload_left = serving_workload_left,
                           .ctx = (void *)env};
    err_t rc;

    if (r->object == NULL || strcmp(r->operation, "CONNECT") == 0)
        return ERR_OK; /* DELETE: registered only to audit it */
    memset(&obj, 0, sizeof(obj));
    memset(&old, 0, sizeof(old));
    diags_init(&d);
    /* A job kind's fields sluice does not know are newer than sluice: dropped, then decoded
     * again (decode_or_drop); the rules always run. */
    rc = decode_or_drop(kindobj_decode, r->jk, r->object, true, &obj, &have_obj, &d);
    if (rc != ERR_OK)
        goto out;
    if (have_obj && r->old_object != NULL && strcmp(r->operation, "UPDATE") == 0) {
        rc = decode_old(kindobj_decode, r->jk, r->old_object, true, &old, &have_old, &d);
        if (rc != ERR_OK)
            goto out;
    }
    if (have_obj && have_old)
        rc = validate_update_env(&old, &obj, &venv, &d);
    else if (have_obj && !(r->old_object != NULL && strcmp(r->operation, "UPDATE") == 0))
        rc = validate_object(&obj, &d);
    if (rc == ERR_OK && have_obj)
        unlabelled_kind_rules(env, &obj, &d);
    if (rc == ERR_OK && d.oom)
        rc = ERR_NOMEM;
    if (rc == ERR_OK)
        rc = join_errors(&d, &v->message);
    if (rc == ERR_OK && v->message != NULL) {
        v->allowed = false;
        v->code = 403;
    }
out:
    if (have_obj)
        object_fini(&obj);
    if (have_old)
        object_fini(&old);
    diags_fini(&d);
    return rc;
}

/* The webhook paths of the kinds of the framework table held by their own field, in Kueue's
 * (kubebuilder's) spelling: /mutate-<group, dots as dashes>-<version>-<kind in lower case>;
 * batch/v1 Job's are /mutate-batch-v1-job and /validate-batch-v1-job. */
static const jobs_kind_t *kind_route(const char *path, hook_type_t *type)
{
    const jobs_kind_t *k;

    for (size_t i = 0; (k = jobs_kind_at(i)) != NULL; i++) {
        char suffix[256], want[300];
        size_t n = 0;
        /* Every kind of the table routes here: batch/v1 Job (its rules are lib/model's, see
         * hook_admission_review()), plain Pods (/mutate--v1-pod: gated, see patch_pod()) and the
         * serving owners (their templates marked so that each Pod is created gated: a
         * Deployment's as a plain Pod, a StatefulSet's or LeaderWorkerSet's for the operator to
         * group into a pod group). */
        for (const char *p = k->group; *p && n + 1 < sizeof(suffix); p++)
            suffix[n++] = *p == '.' ? '-' : *p;
        n += (size_t)snprintf(suffix + n, sizeof(suffix) - n, "-%s-", k->version);
        for (const char *p = k->kind; *p && n + 1 < sizeof(suffix); p++)
            suffix[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        suffix[n] = '\0';
        snprintf(want, sizeof(want), "/mutate-%s", suffix);
        if (strcmp(path, want) == 0) {
            *type = HOOK_MUTATE;
            return k;
        }
        snprintf(want, sizeof(want), "/validate-%s", suffix);
        if (strcmp(path, want) == 0) {
            *type = HOOK_VALIDATE;
            return k;
        }
    }
    return NULL;
}

/* Is the framework of the review's kind enabled (integrations.frameworks)? */
static bool kind_enabled(const hook_admission_env_t *env, const review_t *r)
{
    const char *fw = r->jk != NULL ? r->jk->framework : "batch/job";

    if (env->framework_enabled == NULL)
        return strcmp(fw, "batch/job") == 0;
    return env->framework_enabled(env->ctx, fw);
}

/* ---- the review -------------------------------------------------------------------------------
 */

static json_t *response_json(const review_t *r, const verdict_t *v)
{
    json_t *resp = json_pack("{s:s, s:b}", "uid", r->uid, "allowed", v->allowed);
    json_t *review;

    if (resp == NULL)
        return NULL;
    if (!v->allowed &&
        json_object_set_new(resp, "status",
                            json_pack("{s:i, s:s, s:s}", "code", v->code, "reason",
                                      v->code == 400 ? "BadRequest" : "Forbidden", "message",
                                      v->message ? v->message : "denied")) != 0)
        goto fail;
    if (v->allowed && v->patch != NULL && json_array_size(v->patch) > 0) {
        char *text = util_json_dumps(v->patch, JSON_COMPACT);
        char *b64 = NULL;
        int bad = text == NULL || base64_encode(text, strlen(text), &b64) != ERR_OK ||
                  json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
                  json_object_set_new(resp, "patch", json_string(b64));
        free(text);
        free(b64);
        if (bad)
            goto fail;
    }
    if (json_array_size(v->warnings) > 0 && json_object_set(resp, "warnings", v->warnings) != 0)
        goto fail;
    review = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                       "AdmissionReview", "response", resp);
    return review;
fail:
    json_decref(resp);
    return NULL;
}

static const route_t *route_find(const char *path)
{
    for (size_t i = 0; i < ARRAY_SIZE(routes); i++)
        if (strcmp(routes[i].path, path) == 0)
            return &routes[i];
    return NULL;
}

/* Fill `r` from the AdmissionReview `doc`; ERR_PARSE names what is wrong. */
static err_t review_parse(json_t *doc, review_t *r, err_msg_t *msg)
{
    json_t *req = json_object_get(doc, "request");
    json_t *user;
    const char *api = str_at(doc, "apiVersion");

    if (!json_is_object(doc))
        return err_set(msg, ERR_PARSE, "malformed AdmissionReview: not a JSON object");
    if (api == NULL || strcmp(api, "admission.k8s.io/v1") != 0 ||
        strcmp(str_at(doc, "kind") ? str_at(doc, "kind") : "", "AdmissionReview") != 0)
        return err_set(msg, ERR_PARSE,
                       "malformed AdmissionReview: apiVersion must be admission.k8s.io/v1 and "
                       "kind AdmissionReview");
    if (!json_is_object(req))
        return err_set(msg, ERR_PARSE, "malformed AdmissionReview: request: Required value");
    r->uid = str_at(req, "uid");
    r->operation = str_at(req, "operation");
    if (r->uid == NULL || r->uid[0] == '\0')
        return err_set(msg, ERR_PARSE, "malformed AdmissionReview: request.uid: Required value");
    if (r->operation == NULL ||
        (strcmp(r->operation, "CREATE") != 0 && strcmp(r->operation, "UPDATE") != 0 &&
         strcmp(r->operation, "DELETE") != 0 && strcmp(r->operation, "CONNECT") != 0))
        return err_set(msg, ERR_PARSE,
                       "malformed AdmissionReview: request.operation: must be CREATE, UPDATE, "
                       "DELETE or CONNECT");
    r->kind = str_at(json_object_get(req, "kind"), "kind");
    r->sub_resource = str_at(req, "subResource");
    r->namespace = str_at(req, "namespace");
    r->name = str_at(req, "name");
    user = json_object_get(req, "userInfo");
    r->user = str_at(user, "username");
    r->groups = json_object_get(user, "groups");
    r->dry_run = json_is_true(json_object_get(req, "dryRun"));
    r->object = json_object_get(req, "object");
    r->old_object = json_object_get(req, "oldObject");
    if (json_is_null(r->object))
        r->object = NULL;
    if (json_is_null(r->old_object))
        r->old_object = NULL;
    if (r->object == NULL && strcmp(r->operation, "DELETE") != 0)
        return err_set(msg, ERR_PARSE, "malformed AdmissionReview: request.object: Required value");
    if (r->object != NULL && !json_is_object(r->object))
        return err_set(msg, ERR_PARSE,
                       "malformed AdmissionReview: request.object: must be an object");
    if (r->old_object != NULL && !json_is_object(r->old_object))
        return err_set(msg, ERR_PARSE,
                       "malformed AdmissionReview: request.oldObject: must be an object");
    return ERR_OK;
}

static void audit(const hook_admission_env_t *env, const review_t *r, const verdict_t *v)
{
    hook_audit_event_t ev;
    json_t *any = r->object ? r->object : r->old_object;
    json_t *meta = json_object_get(any, "metadata");

    if (env->audit == NULL || !r->route->audited || r->dry_run)
        return;
    memset(&ev, 0, sizeof(ev));
    ev.operation = r->operation;
    ev.kind = r->jk != NULL ? r->jk->kind : kind_name(r->route->kind);
    ev.namespace = r->namespace ? r->namespace : str_at(meta, "namespace");
    ev.name = r->name ? r->name : str_at(meta, "name");
    ev.user = r->user ? r->user : "";
    ev.authenticated = env->callers_authenticated;
    ev.groups = r->groups;
    ev.old_object = r->old_object;
    ev.object = r->object;
    ev.allowed = v->allowed;
    ev.reason = v->allowed ? NULL : v->message;
    ev.warnings = v->warnings;
    env->audit(env->ctx, &ev);
}

err_t hook_admission_review(const hook_admission_env_t *env, const char *path, const char *body,
                            size_t len, int *status, char **response, err_msg_t *msg)
{
    static const hook_admission_env_t no_env;
    route_t kroute;
    review_t r;
    verdict_t v;
    json_error_t jerr;
    json_t *doc = NULL, *out = NULL;
    err_t rc = ERR_OK;
    err_t bad;

    if (env == NULL)
        env = &no_env;
    memset(&r, 0, sizeof(r));
    memset(&v, 0, sizeof(v));
    r.route = route_find(path);
    if (r.route == NULL) {
        /* A job kind of the framework table: a route of its own, audited like Jobs. */
        kroute.path = path;
        kroute.kind = KIND_UNKNOWN;
        kroute.audited = true;
        r.jk = kind_route(path, &kroute.type);
        if (r.jk != NULL)
            r.route = &kroute;
        if (r.jk != NULL && strcmp(r.jk->framework, "batch/job") == 0) {
            /* batch/v1 Job: lib/model's Job rules (validate()), its spec.suspend held. */
            kroute.kind = KIND_JOB;
            r.jk = NULL;
        }
    }
    if (r.route == NULL) {
        *status = 404;
        return err_set(msg, ERR_NOT_FOUND, "no webhook at %s", path);
    }
    doc = util_json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (doc == NULL && util_json_nomem(&jerr)) {
        /* Not the caller's fault: 500, so that the API server applies the failurePolicy. */
        *status = 500;
        return err_set(msg, ERR_NOMEM, "out of memory decoding the AdmissionReview");
    }
    if (doc == NULL) {
        *status = 400;
        return err_set(msg, ERR_PARSE, "malformed AdmissionReview: invalid JSON at line %d: %s",
                       jerr.line, jerr.text);
    }
    rc = review_parse(doc, &r, msg);
    if (rc != ERR_OK) {
        *status = rc == ERR_NOMEM ? 500 : 400;
        goto out;
    }
    v.allowed = true;
    v.warnings = json_array();
    v.patch = r.route->type == HOOK_MUTATE ? json_array() : NULL;
    if (v.warnings == NULL || (r.route->type == HOOK_MUTATE && v.patch == NULL)) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        *status = 500;
        goto out;
    }
    if ((r.jk != NULL || r.route->kind == KIND_JOB) && !kind_enabled(env, &r)) {
        /* The kind's framework is not enabled: Kueue's no-op webhook, everything allowed. */
        bad = ERR_OK;
    } else if (r.route->type == HOOK_MUTATE) {
        bad = ERR_OK;
        if (r.object != NULL && strcmp(r.operation, "CREATE") == 0) {
            if (r.route->kind == KIND_JOB || r.jk != NULL)
                bad = mutate_job(env, &r, &v);
            else if (r.route->kind == KIND_CLUSTER_QUEUE || r.route->kind == KIND_RESOURCE_FLAVOR)
                bad = mutate_finalizer(&r, &v);
        }
    } else {
        bad = r.jk != NULL ? validate_kind(env, &r, &v) : validate(env, &r, &v);
        audit(env, &r, &v);
    }
    if (bad != ERR_OK) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        *status = 500;
        goto out;
    }
    out = response_json(&r, &v);
    *response = out ? util_json_dumps(out, JSON_COMPACT) : NULL;
    if (*response == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        *status = 500;
        goto out;
    }
    *status = 200;
out:
    json_decref(out);
    json_decref(doc);
    json_decref(v.patch);
    json_decref(v.warnings);
    free(v.message);
    return rc;
}

void hook_admission_handler(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    const char *ct = NULL;
    err_msg_t msg;
    char *body = NULL;
    int status = 500;

    if (strcmp(req->method, "POST") != 0) {
        resp->status = 405;
        resp->content_type = "text/plain; charset=utf-8";
        resp->body = "admission webhooks accept POST only\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcmp(req->headers[i].name, "content-type") == 0)
            ct = req->headers[i].value;
    if (ct == NULL || strncmp(ct, "application/json", 16) != 0) {
        resp->status = 415;
        resp->content_type = "text/plain; charset=utf-8";
        resp->body = "admission webhooks accept Content-Type: application/json only\n";
        resp->body_len = strlen(resp->body);
        return;
    }
    if (hook_admission_review(ud, req->path, req->body, req->body_len, &status, &body, &msg) !=
        ERR_OK) {
        size_t n = strlen(msg.text);
        resp->status = status;
        resp->content_type = "text/plain; charset=utf-8";
        resp->owned_body = malloc(n + 2);
        if (resp->owned_body != NULL) {
            memcpy(resp->owned_body, msg.text, n);
            resp->owned_body[n] = '\n';
            resp->owned_body[n + 1] = '\0';
            resp->body_len = n + 1;
        }
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->owned_body = body;
    resp->body_len = strlen(body);
}
