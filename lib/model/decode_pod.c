/* decode_pod -- PodTemplateSpec, PodSpec, containers, taints and tolerations. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/decode_int.h"

#include "model/requests.h"

#include <stdlib.h>
#include <string.h>

/*
 * Pod templates are real Kubernetes PodSpecs: sluice decodes the fields admission looks at
 * (resources, node selection, tolerations, priority class) and tolerates every other field of
 * the Kubernetes API, so any Job manifest decodes. A name that is not a PodSpec/Container field
 * at all (a typo like "resurces") is still an error, as the API server's strict decoding would
 * report it. The lists follow k8s.io/api/core/v1 (v1.34).
 */
static const char *const podspec_tolerated[] = {
    "volumes",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "schedulerName",
    "hostAliases",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "hostnameOverride",
    NULL,
};

static const char *const container_tolerated[] = {
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resizePolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
    NULL,
};

static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
static const char *const tol_effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL};

/* ---- taints and tolerations ------------------------------------------------------------------ */

/* Kueue's CRDs state the enums of taint and toleration lists as CEL rules on the list (see
 * resourceflavor_types.go, workload_types.go PodSetUpdate), not as schema enums: an operator or
 * effect outside the rule's set is reported once per list, at the list's path, with the rule's
 * message. The decoder stays strict (the object does not decode), but the message is Kueue's. */
#define MSG_CEL_EFFECTS \
    "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"
#define MSG_CEL_OPERATORS "supported toleration values: 'Equal'(default), 'Exists'"

/* Index of string `v` in `values`, -1 when absent; *is_string false when `v` is no string (a
 * type error has then been reported). */
static int cel_enum(jsonx_t *jx, const json_t *v, const char *const *values, bool *is_string)
{
    const char *s;

    *is_string = json_is_string(v);
    if (!*is_string) {
        char *ignored = NULL;
        jsonx_string(jx, v, &ignored); /* reports the type error */
        free(ignored);
        return -1;
    }
    s = json_string_value(v);
    for (int i = 0; values[i] != NULL; i++)
        if (strcmp(s, values[i]) == 0)
            return i;
    return -1;
}

/* `bad_effect` (a bool *): set when an effect is outside the CEL rule's set. */
static void decode_taint(decode_t *d, const json_t *v, void *item, void *bad_effect)
{
    taint_t *t = item;
    jsonx_t *jx = &d->jx;
    bool have_effect = false;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "key")) {
            jsonx_string(jx, val, &t->key);
        } else if (DECODE_IS(key, "value")) {
            jsonx_string_conv(jx, val, &t->value);
        } else if (DECODE_IS(key, "effect")) {
            bool str;
            int e = cel_enum(jx, val, effects, &str);
            have_effect = true;
            if (e >= 0)
                t->effect = (taint_effect_t)(e + 1);
            else if (str)
                *(bool *)bad_effect = true;
        } else if (DECODE_IS(key, "timeAdded")) {
            int64_t ts;
            jsonx_time(jx, val, &ts);
        } else {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "key");
    if (!have_effect)
        jsonx_required(jx, "effect");
}

void decode__taints(decode_t *d, const json_t *v, size_t max, taint_t **out, size_t *n)
{
    bool bad_effect = false;

    *out = decode__list(d, v, max, false, sizeof(**out), decode_taint, &bad_effect, n);
    if (bad_effect)
        jsonx_error(&d->jx, MSG_CEL_EFFECTS);
}

/* What a Kueue CRD toleration list's CEL rules found (crd mode). */
typedef struct tol_cel_s {
    bool bad_operator;
    bool bad_effect;
} tol_cel_t;

/* `ctx` NULL: a core PodSpec toleration (schema enums, Kubernetes' "Unsupported value"); else
 * the tol_cel_t of a Kueue CRD list whose enum rules are CEL rules (see above). */
static void decode_toleration(decode_t *d, const json_t *v, void *item, void *ctx)
{
    toleration_t *t = item;
    tol_cel_t *cel = ctx;
    static const char *const ops[] = {"Equal", "Exists", "", NULL};
    static const char *const cel_ops[] = {"Equal", "Exists", NULL};
    jsonx_t *jx = &d->jx;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "key")) {
            jsonx_string(jx, val, &t->key);
        } else if (DECODE_IS(key, "operator")) {
            int op;
            bool str;
            if (cel != NULL) {
                op = cel_enum(jx, val, cel_ops, &str);
                if (op < 0 && str)
                    cel->bad_operator = true;
                else if (op >= 0)
                    t->op = op == 1 ? TOLERATION_OP_EXISTS : TOLERATION_OP_EQUAL;
            } else if (jsonx_enum(jx, val, ops, &op)) {
                t->op = op == 1 ? TOLERATION_OP_EXISTS : TOLERATION_OP_EQUAL;
            }
        } else if (DECODE_IS(key, "value")) {
            jsonx_string_conv(jx, val, &t->value);
        } else if (DECODE_IS(key, "effect")) {
            int e;
            bool str;
            if (cel != NULL) {
                e = cel_enum(jx, val, effects, &str);
                if (e < 0 && str)
                    cel->bad_effect = true;
                else if (e >= 0)
                    t->effect = (taint_effect_t)(e + 1);
            } else if (jsonx_enum(jx, val, tol_effects, &e)) {
                t->effect = (taint_effect_t)e;
            }
        } else if (DECODE_IS(key, "tolerationSeconds")) {
            if (jsonx_int64(jx, val, &t->seconds))
                t->has_seconds = true;
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

void decode__tolerations(decode_t *d, const json_t *v, size_t max, bool crd, toleration_t **out,
                         size_t *n)
{
    tol_cel_t cel = {false, false};

    *out = decode__list(d, v, max, false, sizeof(**out), decode_toleration, crd ? &cel : NULL, n);
    /* In the CRD's rule order. */
    if (cel.bad_operator)
        jsonx_error(&d->jx, MSG_CEL_OPERATORS);
    if (cel.bad_effect)
        jsonx_error(&d->jx, MSG_CEL_EFFECTS);
}

/* ---- containers ---------------------------------------------------------------------------- */

static void decode_resources(decode_t *d, const json_t *v, resource_list_t *requests,
                             resource_list_t *limits)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "requests"))
            jsonx_resource_list(jx, val, requests);
        else if (DECODE_IS(key, "limits"))
            jsonx_resource_list(jx, val, limits);
        else if (DECODE_IS(key, "claims"))
            jsonx_want_array(jx, val); /* DRA claims: not quota */
        else
            jsonx_unknown(jx, key);
    }
}

/* `init` (a const bool *): an initContainers item. */
static void decode_container(decode_t *d, const json_t *v, void *item, void *init)
{
    static const char *const policies[] = {"Always", "OnFailure", "Never", NULL};
    container_t *c = item;
    jsonx_t *jx = &d->jx;

    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "name")) {
            jsonx_string(jx, val, &c->name);
        } else if (DECODE_IS(key, "resources")) {
            decode_resources(d, val, &c->requests, &c->limits);
        } else if (DECODE_IS(key, "restartPolicy")) {
            int p;
            /* Only an init container with restartPolicy Always is a sidecar. */
            if (jsonx_enum(jx, val, policies, &p))
                c->restartable = *(const bool *)init && p == 0;
        } else if (!decode__in(d, key, container_tolerated)) {
            jsonx_unknown(jx, key);
        }
    }
    DECODE_REQUIRED(d, v, "name");
}

/* ---- affinity ----------------------------------------------------------------------------------
 */

static void node_req_item(decode_t *d, const json_t *v, void *item, void *ctx)
{
    (void)ctx;
    decode__selector_req(d, v, true, item);
}

static void decode_term(decode_t *d, const json_t *v, void *item, void *ctx)
{
    node_selector_term_t *t = item;
    jsonx_t *jx = &d->jx;

    (void)ctx;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "matchExpressions")) {
            t->exprs = decode__list(d, val, DEC_MAX_LIST, false, sizeof(*t->exprs), node_req_item,
                                    NULL, &t->nexprs);
        } else if (DECODE_IS(key, "matchFields")) {
            if (jsonx_want_array(jx, val) && json_array_size(val) > 0)
                jsonx_warn(jx, "matchFields (node fields) are not evaluated by sluice");
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

static void decode_node_affinity(decode_t *d, const json_t *v, pod_spec_t *spec)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "requiredDuringSchedulingIgnoredDuringExecution")) {
            if (!jsonx_want_object(jx, val))
                continue;
            DECODE_FIELDS(d, val, k2, v2)
            {
                if (DECODE_IS(k2, "nodeSelectorTerms"))
                    spec->affinity_terms = decode__list(d, v2, DEC_MAX_SELECTOR_TERMS, false,
                                                        sizeof(*spec->affinity_terms), decode_term,
                                                        NULL, &spec->naffinity_terms);
                else
                    jsonx_unknown(jx, k2);
            }
        } else if (DECODE_IS(key, "preferredDuringSchedulingIgnoredDuringExecution")) {
            jsonx_want_array(jx, val); /* preferences do not restrict flavors */
        } else {
            jsonx_unknown(jx, key);
        }
    }
}

static void decode_affinity(decode_t *d, const json_t *v, pod_spec_t *spec)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "nodeAffinity"))
            decode_node_affinity(d, val, spec);
        else if (DECODE_IS(key, "podAffinity") || DECODE_IS(key, "podAntiAffinity"))
            jsonx_want_object(jx, val);
        else
            jsonx_unknown(jx, key);
    }
}

/* ---- PodSpec / PodTemplateSpec
 * ------------------------------------------------------------------- */

void decode__pod_spec(decode_t *d, const json_t *v, pod_spec_t *spec)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "containers"))
            spec->containers = decode__list(d, val, DEC_MAX_LIST, false, sizeof(*spec->containers),
                                            decode_container, &(bool){false}, &spec->ncontainers);
        else if (DECODE_IS(key, "initContainers"))
            spec->init_containers =
                decode__list(d, val, DEC_MAX_LIST, false, sizeof(*spec->init_containers),
                             decode_container, &(bool){true}, &spec->ninit_containers);
        else if (DECODE_IS(key, "overhead"))
            jsonx_resource_list(jx, val, &spec->overhead);
        else if (DECODE_IS(key, "nodeSelector"))
            jsonx_kv_map(jx, val, 0, &spec->node_selector);
        else if (DECODE_IS(key, "tolerations"))
            decode__tolerations(d, val, DEC_MAX_LIST, false, &spec->tolerations,
                                &spec->ntolerations);
        else if (DECODE_IS(key, "affinity"))
            decode_affinity(d, val, spec);
        else if (DECODE_IS(key, "priorityClassName"))
            jsonx_string(jx, val, &spec->priority_class_name);
        else if (DECODE_IS(key, "resources"))
            decode_resources(d, val, &spec->pod_level_requests, &spec->pod_level_limits);
        else if (!decode__in(d, key, podspec_tolerated))
            jsonx_unknown(jx, key);
    }
    if (spec->ncontainers == 0 && decode__absent(v, "containers"))
        jsonx_required(jx, "containers");
}

void decode__pod_template(decode_t *d, const json_t *v, kv_list_t *labels, kv_list_t *annotations,
                          pod_spec_t *spec)
{
    jsonx_t *jx = &d->jx;

    if (!jsonx_want_object(jx, v))
        return;
    DECODE_FIELDS(d, v, key, val)
    {
        if (DECODE_IS(key, "metadata"))
            decode__template_meta(d, val, labels, annotations);
        else if (DECODE_IS(key, "spec"))
            decode__pod_spec(d, val, spec);
        else
            jsonx_unknown(jx, key);
    }
    DECODE_REQUIRED(d, v, "spec");
}

void decode__pod_set_requests(decode_t *d, pod_set_t *ps)
{
    err_msg_t msg;
    err_t rc = requests_pod(&ps->spec, &ps->pod_requests, &msg);

    if (rc == ERR_NOMEM)
        jsonx_oom(&d->jx);
    else if (rc != ERR_OK)
        jsonx_error(&d->jx, "%s", msg.text);
}
