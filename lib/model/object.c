/* object -- decode any supported Kubernetes object; lifetimes of the typed structs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"

#include "model/decode_int.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

/* ---- kinds and API versions ------------------------------------------------------------------ */

static const char *const kueue_versions[] = {"kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1",
                                             NULL};
static const char *const config_versions[] = {"config.kueue.x-k8s.io/v1beta2",
                                              "config.kueue.x-k8s.io/v1beta1", NULL};

/*
 * Every kind once: its kind_t, Kueue's name, accepted apiVersions (first is current; a second one
 * is the deprecated v1beta1), its member of object_t.u (each kind's struct starts with
 * `object_meta_t meta`), its decoder and its finaliser. The tables and switches below are built
 * from this list.
 */
#define OBJECT_KINDS(XX)                                                                          \
    XX(KIND_NAMESPACE, "Namespace", core_versions, ns, decode__namespace, namespace_fini)         \
    XX(KIND_RESOURCE_FLAVOR, "ResourceFlavor", kueue_versions, flavor, decode__flavor,            \
       flavor_fini)                                                                               \
    XX(KIND_CLUSTER_QUEUE, "ClusterQueue", kueue_versions, cq, decode__cluster_queue,             \
       cluster_queue_fini)                                                                        \
    XX(KIND_LOCAL_QUEUE, "LocalQueue", kueue_versions, lq, decode__local_queue, local_queue_fini) \
    XX(KIND_COHORT, "Cohort", kueue_versions, cohort, decode__cohort, cohort_fini)                \
    XX(KIND_WORKLOAD_PRIORITY_CLASS, "WorkloadPriorityClass", kueue_versions, wpc, decode__wpc,   \
       workload_priority_class_fini)                                                              \
    XX(KIND_WORKLOAD, "Workload", kueue_versions, wl, decode__workload, workload_fini)            \
    XX(KIND_TOPOLOGY, "Topology", kueue_versions, topology, decode__topology, topology_fini)      \
    XX(KIND_PRIORITY_CLASS, "PriorityClass", scheduling_versions, pc, decode__priority_class,     \
       priority_class_fini)                                                                       \
    XX(KIND_JOB, "Job", batch_versions, job, decode__job, job_fini)                               \
    XX(KIND_ADMISSION_CHECK, "AdmissionCheck", kueue_versions, ac, decode__admission_check,       \
       admission_check_fini)                                                                      \
    XX(KIND_CONFIGURATION, "Configuration", config_versions, config, decode__configuration,       \
       configuration_fini)

static const char *const core_versions[] = {"v1", NULL};
static const char *const scheduling_versions[] = {"scheduling.k8s.io/v1", NULL};
static const char *const batch_versions[] = {"batch/v1", NULL};

static const struct kind_info {
    kind_t kind;
    const char *name;
    const char *const *versions;
} kinds[] = {
#define XX(kind, name, versions, member, decode, fini) {kind, name, versions},
    OBJECT_KINDS(XX)
#undef XX
};

const char *object_kind_name(const object_t *obj)
{
    if (obj->kind == KIND_INTEGRATION)
        return obj->u.integ.kind != NULL ? obj->u.integ.kind : "";
    return kind_name(obj->kind);
}

const char *kind_name(kind_t kind)
{
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (kinds[i].kind == kind)
            return kinds[i].name;
    return "";
}

object_meta_t *object_meta(object_t *obj)
{
    switch (obj->kind) {
#define XX(kind, name, versions, member, decode, fini) \
    case kind:                                         \
        return &obj->u.member.meta;
        OBJECT_KINDS(XX)
#undef XX
    case KIND_INTEGRATION:
        return &obj->u.integ.meta;
    case KIND_UNKNOWN:
        break;
    }
    return NULL;
}

const object_meta_t *object_meta_const(const object_t *obj)
{
    return object_meta((object_t *)obj);
}

static void decode_body(decode_t *d, const json_t *root, object_t *out)
{
    switch (out->kind) {
#define XX(kind, name, versions, member, decode, fini) \
    case kind:                                         \
        decode(d, root, &out->u.member);               \
        break;
        OBJECT_KINDS(XX)
#undef XX
    case KIND_INTEGRATION:
    case KIND_UNKNOWN:
        break;
    }
}

/*
 * apiVersion and kind are checked first: they choose the decoder and, for Kueue kinds, the field
 * names (v1beta1 spelled some differently). When either is unusable nothing else is decoded,
 * since every later message would be noise.
 */
static err_t decode_object(json_t *root, object_t *out, diags_t *diags, bool keep);

/*
 * Is the object still whole with the fields of errors diags[first..] dropped? An unknown field is
 * not in the struct at all; an unsupported enum value and a malformed quantity leave their field
 * at its default, as if absent. Any other error (a missing required field, a wrong type, a list
 * too long) may leave a hole (a NULL name) that code reading decoded objects never expects.
 */
static bool whole_without(const diags_t *diags, size_t first)
{
    static const char *const fine[] = {"unknown field ", "Unsupported value: ", "invalid quantity ",
                                       NULL};

    for (size_t i = first; i < diags->len; i++) {
        bool ok = diags->items[i].warning;
        for (size_t k = 0; fine[k] != NULL && !ok; k++)
            ok = strncmp(diags->items[i].message, fine[k], strlen(fine[k])) == 0;
        if (!ok)
            return false;
    }
    return true;
}

err_t object_decode(json_t *root, object_t *out, diags_t *diags)
{
    return decode_object(root, out, diags, false);
}

err_t object_decode_keep(json_t *root, object_t *out, diags_t *diags)
{
    return decode_object(root, out, diags, true);
}

static err_t decode_object(json_t *root, object_t *out, diags_t *diags, bool keep)
{
    size_t first = diags->len;
    const char *kind_names[ARRAY_SIZE(kinds) + 1];
    decode_t d;
    const struct kind_info *info = NULL;
    const json_t *av, *kv;
    size_t errs = diags->nerrors;
    int vi = -1, ki = -1;

    memset(out, 0, sizeof(*out));
    memset(&d, 0, sizeof(d));
    jsonx_init(&d.jx, diags);
    if (!jsonx_want_object(&d.jx, root))
        return diags->oom ? ERR_NOMEM : ERR_INVALID;

    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        kind_names[i] = kinds[i].name;
    kind_names[ARRAY_SIZE(kinds)] = NULL;
    av = json_object_get(root, "apiVersion");
    kv = json_object_get(root, "kind");
    if (kv == NULL || json_is_null(kv)) {
        jsonx_required(&d.jx, "kind");
    } else {
        size_t mark = jsonx_push_key(&d.jx, "kind");
        if (jsonx_enum(&d.jx, kv, kind_names, &ki))
            info = &kinds[ki];
        jsonx_pop(&d.jx, mark);
    }
    if (av == NULL || json_is_null(av)) {
        jsonx_required(&d.jx, "apiVersion");
        info = NULL;
    } else if (info != NULL) {
        size_t mark = jsonx_push_key(&d.jx, "apiVersion");
        if (!jsonx_enum(&d.jx, av, info->versions, &vi))
            info = NULL;
        else if (vi == 1)
            jsonx_warn(&d.jx, "%s is deprecated; use %s", info->versions[1], info->versions[0]);
        jsonx_pop(&d.jx, mark);
    } else if (!json_is_string(av)) {
        jsonx_error_at(&d.jx, "apiVersion", "must be of type string, got %s", jsonx_type_name(av));
    }

    if (info != NULL) {
        out->kind = info->kind;
        d.v1beta1 = vi == 1;
        out->api_version = strdup(info->versions[vi]);
        if (out->api_version == NULL)
            jsonx_oom(&d.jx);
        else
            decode_body(&d, root, out);
    }
    if (d.jx.nomem || diags->oom) {
        object_fini(out);
        return ERR_NOMEM;
    }
    if (diags->nerrors > errs) {
        if (!keep || out->kind == KIND_UNKNOWN || !whole_without(diags, first))
            object_fini(out);
        return ERR_INVALID;
    }
    return ERR_OK;
}

/*
 * An integration object's spec belongs to its kind's API, not Kueue's: only the envelope and the
 * metadata are Kueue's business here (the queue-name label and the other jobframework labels live
 * there). Unknown top-level fields are the kind's own and are not reported.
 */
err_t object_decode_integration(json_t *root, const char *group, const char *kind, object_t *out,
                                diags_t *diags)
{
    decode_t d;
    const json_t *av, *kv;
    size_t errs = diags->nerrors;

    memset(out, 0, sizeof(*out));
    memset(&d, 0, sizeof(d));
    jsonx_init(&d.jx, diags);
    if (!jsonx_want_object(&d.jx, root))
        return diags->oom ? ERR_NOMEM : ERR_INVALID;
    av = json_object_get(root, "apiVersion");
    kv = json_object_get(root, "kind");
    if (!json_is_string(av) || !json_is_string(kv)) {
        if (!json_is_string(kv))
            jsonx_error_at(&d.jx, "kind", "must be of type string, got %s", jsonx_type_name(kv));
        if (!json_is_string(av))
            jsonx_error_at(&d.jx, "apiVersion", "must be of type string, got %s",
                           jsonx_type_name(av));
        return diags->oom ? ERR_NOMEM : ERR_INVALID;
    }
    out->kind = KIND_INTEGRATION;
    out->api_version = strdup(json_string_value(av));
    out->u.integ.kind = strdup(kind);
    out->u.integ.group = strdup(group);
    if (out->api_version == NULL || out->u.integ.kind == NULL || out->u.integ.group == NULL)
        jsonx_oom(&d.jx);
    else
        decode__meta(&d, json_object_get(root, "metadata"), &out->u.integ.meta, true, true);
    if (d.jx.nomem || diags->oom) {
        object_fini(out);
        return ERR_NOMEM;
    }
    if (diags->nerrors > errs) {
        object_fini(out);
        return ERR_INVALID;
    }
    return ERR_OK;
}

void object_fini(object_t *obj)
{
    if (obj == NULL)
        return;
    switch (obj->kind) {
#define XX(kind, name, versions, member, decode, fini) \
    case kind:                                         \
        fini(&obj->u.member);                          \
        break;
        OBJECT_KINDS(XX)
#undef XX
    case KIND_INTEGRATION:
        integration_fini(&obj->u.integ);
        break;
    case KIND_UNKNOWN:
        break;
    }
    free(obj->api_version);
    memset(obj, 0, sizeof(*obj));
}
