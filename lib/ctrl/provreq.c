/* provreq -- the pure parts of the ProvisioningRequest admission check (provreq.h). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/provreq.h"

#include "ctrl/cond.h"
#include "model/quantity.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kueue: 253 minus '-' and a 5-digit hash. */
#define PREFIX_MAX (PROVREQ_NAME_MAX - 1 - 5)

static char *dup_str(const json_t *v)
{
    return json_is_string(v) ? strdup(json_string_value(v)) : NULL;
}

void provreq_config_fini(provreq_config_t *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->class_name);
    json_decref(cfg->parameters);
    for (size_t i = 0; i < cfg->nmanaged; i++)
        free(cfg->managed[i]);
    free(cfg->managed);
    json_decref(cfg->node_selector);
    free(cfg->merge_policy);
    memset(cfg, 0, sizeof(*cfg));
}

/* An optional int32 >= 0 at `field` of retryStrategy `rs` into *out (kept when absent). */
static err_t retry_int(const json_t *rs, const char *field, int32_t *out, err_msg_t *msg)
{
    const json_t *v = json_object_get(rs, field);

    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
        return err_set(msg, ERR_INVALID, "spec.retryStrategy.%s: must be an integer in 0..%d",
                       field, INT32_MAX);
    *out = (int32_t)json_integer_value(v);
    return ERR_OK;
}

static err_t config_spec(const json_t *spec, provreq_config_t *out, err_msg_t *msg)
{
    const json_t *v, *item;
    const char *k;
    size_t i;
    err_t rc;

    if (!json_is_object(spec))
        return err_set(msg, ERR_INVALID, "spec: required (an object)");
    v = json_object_get(spec, "provisioningClassName");
    if (!json_is_string(v) || json_string_length(v) == 0)
        return err_set(msg, ERR_INVALID, "spec.provisioningClassName: required (a string)");
    if (json_string_length(v) > 253)
        return err_set(msg, ERR_INVALID, "spec.provisioningClassName: longer than 253 bytes");
    out->class_name = dup_str(v);
    out->parameters = json_object();
    if (out->class_name == NULL || out->parameters == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    v = json_object_get(spec, "parameters");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_object(v))
            return err_set(msg, ERR_INVALID, "spec.parameters: must be an object of strings");
        json_object_foreach((json_t *)v, k, item)
        {
            if (!json_is_string(item))
                return err_set(msg, ERR_INVALID, "spec.parameters.%s: must be a string", k);
            if (json_object_set_new(out->parameters, k, json_string(json_string_value(item))) != 0)
                return err_set(msg, ERR_NOMEM, "out of memory");
        }
    }
    v = json_object_get(spec, "managedResources");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_array(v))
            return err_set(msg, ERR_INVALID, "spec.managedResources: must be a list of strings");
        out->managed = calloc(json_array_size(v) + 1, sizeof(char *));
        if (out->managed == NULL)
            return err_set(msg, ERR_NOMEM, "out of memory");
        json_array_foreach(v, i, item)
        {
            if (!json_is_string(item) || json_string_length(item) == 0)
                return err_set(msg, ERR_INVALID,
                               "spec.managedResources[%zu]: must be a resource name", i);
            if ((out->managed[out->nmanaged] = dup_str(item)) == NULL)
                return err_set(msg, ERR_NOMEM, "out of memory");
            out->nmanaged++;
        }
    }
    v = json_object_get(spec, "retryStrategy");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_object(v))
            return err_set(msg, ERR_INVALID, "spec.retryStrategy: must be an object");
        if ((rc = retry_int(v, "backoffLimitCount", &out->backoff_limit, msg)) != ERR_OK ||
            (rc = retry_int(v, "backoffBaseSeconds", &out->backoff_base_s, msg)) != ERR_OK ||
            (rc = retry_int(v, "backoffMaxSeconds", &out->backoff_max_s, msg)) != ERR_OK)
            return rc;
    }
    v = json_object_get(json_object_get(spec, "podSetUpdates"), "nodeSelector");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_array(v))
            return err_set(msg, ERR_INVALID, "spec.podSetUpdates.nodeSelector: must be a list");
        json_array_foreach(v, i, item)
        {
            if (!json_is_string(json_object_get(item, "key")) ||
                !json_is_string(json_object_get(item, "valueFromProvisioningClassDetail")))
                return err_set(msg, ERR_INVALID,
                               "spec.podSetUpdates.nodeSelector[%zu]: key and "
                               "valueFromProvisioningClassDetail are required strings",
                               i);
        }
        out->node_selector = json_deep_copy(v);
        if (out->node_selector == NULL)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    v = json_object_get(spec, "podSetMergePolicy");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v) ||
            (strcmp(json_string_value(v), "IdenticalPodTemplates") != 0 &&
             strcmp(json_string_value(v), "IdenticalWorkloadSchedulingRequirements") != 0))
            return err_set(msg, ERR_INVALID,
                           "spec.podSetMergePolicy: must be IdenticalPodTemplates or "
                           "IdenticalWorkloadSchedulingRequirements");
        if ((out->merge_policy = dup_str(v)) == NULL)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    return ERR_OK;
}

err_t provreq_config_decode(const json_t *obj, provreq_config_t *out, err_msg_t *msg)
{
    err_t rc;

    memset(out, 0, sizeof(*out));
    /* Kueue's CRD defaults: {backoffLimitCount: 3, backoffBaseSeconds: 60, backoffMaxSeconds:
     * 1800}, each field too. */
    out->backoff_limit = 3;
    out->backoff_base_s = 60;
    out->backoff_max_s = 1800;
    rc = config_spec(json_object_get(obj, "spec"), out, msg);
    if (rc != ERR_OK)
        provreq_config_fini(out);
    return rc;
}

err_t provreq_limit_name(const char *full, char *buf, size_t n, err_msg_t *msg)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = strlen(full);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    if (n < PROVREQ_NAME_MAX + 1)
        return err_set(msg, ERR_INVALID, "object name: buffer of %zu bytes", n);
    if (len <= PREFIX_MAX) {
        memcpy(buf, full, len + 1);
        return ERR_OK;
    }
    if (EVP_Digest(full, len, md, &mdlen, EVP_sha1(), NULL) != 1 || mdlen < 3)
        return err_set(msg, ERR_UNSUPPORTED, "object name: SHA-1 unavailable in OpenSSL");
    memcpy(buf, full, PREFIX_MAX);
    buf[PREFIX_MAX] = '-';
    for (int i = 0; i < 5; i++)
        buf[PREFIX_MAX + 1 + i] = hex[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
    buf[PROVREQ_NAME_MAX] = '\0';
    return ERR_OK;
}

/* "<a>-<b>-<c>" limited into buf. */
static err_t joined(const char *a, const char *b, const char *c, char *buf, size_t n,
                    err_msg_t *msg)
{
    size_t len = strlen(a) + strlen(b) + strlen(c) + 3;
    char *full = malloc(len);
    err_t rc;

    if (full == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    snprintf(full, len, "%s-%s-%s", a, b, c);
    rc = provreq_limit_name(full, buf, n, msg);
    free(full);
    return rc;
}

err_t provreq_name(const char *wl, const char *check, int32_t attempt, char *buf, size_t n,
                   err_msg_t *msg)
{
    char num[16];

    snprintf(num, sizeof(num), "%d", (int)attempt);
    return joined(wl, check, num, buf, n, msg);
}

err_t provreq_template_name(const char *pr, const char *podset, char *buf, size_t n, err_msg_t *msg)
{
    return joined("ppt", pr, podset, buf, n, msg);
}

int32_t provreq_attempt(const char *pr, const char *wl, const char *check)
{
    char prefix[PROVREQ_NAME_MAX + 1];
    size_t plen;
    int64_t v = 0;

    /* Kueue's getAttemptRegex: ^<limited "<wl>-<check>-">([0-9]+)$ */
    if (joined(wl, check, "", prefix, sizeof(prefix), NULL) != ERR_OK)
        return 0;
    plen = strlen(prefix);
    if (strncmp(pr, prefix, plen) != 0 || pr[plen] == '\0')
        return 0;
    for (const char *p = pr + plen; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX)
            return 0;
    }
    return (int32_t)v;
}

int32_t provreq_backoff_s(const provreq_config_t *cfg, int32_t retry_count, uint32_t rnd)
{
    int64_t d = cfg->backoff_base_s;
    uint64_t extra;

    /* client-go's Backoff.Step, as Kueue's WaitTime steps it: the first wait is the base as
     * it is, each later one doubles, and the cap applies from the second on. */
    for (int32_t i = 0; i < retry_count && d < cfg->backoff_max_s; i++)
        d *= 2;
    if (retry_count > 0 && d > cfg->backoff_max_s)
        d = cfg->backoff_max_s;
    /* Jitter 0.0001: d * (1 + r / 10000), r = rnd / 2^32 in [0, 1), whole seconds. */
    extra = (uint64_t)rnd * (uint64_t)d / (10000ull << 32);
    return d + (int64_t)extra > INT32_MAX ? INT32_MAX : (int32_t)(d + (int64_t)extra);
}

static bool resources_use(const provreq_config_t *cfg, const json_t *res)
{
    for (size_t i = 0; i < cfg->nmanaged; i++)
        if (json_object_get(json_object_get(res, "requests"), cfg->managed[i]) != NULL ||
            json_object_get(json_object_get(res, "limits"), cfg->managed[i]) != NULL)
            return true;
    return false;
}

bool provreq_podset_uses(const provreq_config_t *cfg, const json_t *tmpl)
{
    static const char *const lists[] = {"initContainers", "containers"};
    const json_t *spec = json_object_get(tmpl, "spec"), *c;
    size_t i;

    if (cfg->nmanaged == 0)
        return true;
    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(spec, lists[l]), i,
                           c) if (resources_use(cfg, json_object_get(c, "resources"))) return true;
    return false;
}

/* Condition `type` of the request's status.conditions, or NULL. */
static const json_t *find_cond(const json_t *pr, const char *type)
{
    return cond_find(json_object_get(json_object_get(pr, "status"), "conditions"), type);
}

bool provreq_cond(const json_t *pr, const char *type, const char **msg)
{
    const json_t *c = find_cond(pr, type);
    const char *st = json_string_value(json_object_get(c, "status"));

    if (msg != NULL) {
        *msg = json_string_value(json_object_get(c, "message"));
        if (*msg == NULL)
            *msg = "";
    }
    return st != NULL && strcmp(st, "True") == 0;
}

static void set(provreq_verdict_t *v, const admission_check_state_t *cur, check_state_t st,
                const char *message)
{
    const char *had = cur->message != NULL ? cur->message : "";

    v->state = st;
    snprintf(v->message, sizeof(v->message), "%s", message);
    v->change = v->change || st != cur->state || strcmp(had, v->message) != 0;
}

void provreq_decide(const json_t *pr, int32_t attempt, const admission_check_state_t *cur,
                    const provreq_config_t *cfg, bool admitted, bool running, uint32_t rnd,
                    provreq_verdict_t *out)
{
    int32_t retries = cur->has_retry_count ? cur->retry_count : 0;
    const char *m;
    char buf[1024];

    memset(out, 0, sizeof(*out));
    out->state = cur->state;
    snprintf(out->message, sizeof(out->message), "%s", cur->message ? cur->message : "");
    /* The order of Kueue's switch: Failed, CapacityRevoked, BookingExpired, Provisioned,
     * Accepted, anything else. */
    if (provreq_cond(pr, "Failed", &m) || (!provreq_cond(pr, "CapacityRevoked", NULL) &&
                                           provreq_cond(pr, "BookingExpired", &m) && !admitted)) {
        bool failed = provreq_cond(pr, "Failed", NULL);
        if (attempt <= cfg->backoff_limit) {
            snprintf(buf, sizeof(buf), "Retrying after %s: %s",
                     failed ? "failure" : "booking expired", m);
            /* Only a request newer than the retries counted so far moves the check to Retry
             * (an old one is not retried twice). */
            if (attempt > retries && cur->state != CHECK_STATE_RETRY) {
                set(out, cur, CHECK_STATE_RETRY, buf);
                out->set_requeue = true;
                out->requeue_after_s = provreq_backoff_s(cfg, retries, rnd);
            } else {
                set(out, cur, cur->state, buf);
            }
        } else {
            set(out, cur, CHECK_STATE_REJECTED, m);
        }
    } else if (provreq_cond(pr, "CapacityRevoked", &m)) {
        /* The nodes are gone: Rejected deactivates the Workload, so that replacement pods do
         * not wait forever. */
        if (running)
            set(out, cur, CHECK_STATE_REJECTED, m);
    } else if (provreq_cond(pr, "BookingExpired", NULL)) {
        /* admitted: the pods consumed the booking; nothing to do */
    } else if (provreq_cond(pr, "Provisioned", &m)) {
        if (cur->state != CHECK_STATE_READY) {
            set(out, cur, CHECK_STATE_READY, m);
            out->podset_updates = true;
        }
    } else if (provreq_cond(pr, "Accepted", NULL)) {
        const json_t *pc = find_cond(pr, "Provisioned");
        if (pc != NULL) {
            const char *pm = json_string_value(json_object_get(pc, "message"));
            set(out, cur, CHECK_STATE_PENDING, pm != NULL ? pm : "");
        }
    } else {
        set(out, cur, CHECK_STATE_PENDING, "");
    }
}

json_t *provreq_updates(const json_t *pr, char *const *podsets, const bool *included,
                        size_t npodsets, const provreq_config_t *cfg)
{
    const char *name = json_string_value(json_object_get(json_object_get(pr, "metadata"), "name"));
    const json_t *spec = json_object_get(pr, "spec"), *ps;
    const char *cls = json_string_value(json_object_get(spec, "provisioningClassName"));
    const json_t *details =
        json_object_get(json_object_get(pr, "status"), "provisioningClassDetails");
    json_t *out = json_array();
    size_t i;

    if (name == NULL || cls == NULL)
        return out;
    json_array_foreach(json_object_get(spec, "podSets"), i, ps)
    {
        const char *ref =
            json_string_value(json_object_get(json_object_get(ps, "podTemplateRef"), "name"));
        const char *psname = "";
        char tn[PROVREQ_NAME_MAX + 1];
        json_t *u, *sel = NULL;
        for (size_t p = 0; ref != NULL && p < npodsets; p++)
            if (provreq_template_name(name, podsets[p], tn, sizeof(tn), NULL) == ERR_OK &&
                strcmp(tn, ref) == 0)
                psname = podsets[p];
        u = json_pack("{s:s,s:{s:s,s:s}}", "name", psname, "annotations", PROVREQ_CONSUMES, name,
                      PROVREQ_CLASS, cls);
        if (u != NULL && cfg->node_selector != NULL) {
            const json_t *e;
            size_t k;
            sel = json_object();
            json_array_foreach(cfg->node_selector, k, e)
            {
                const json_t *val = json_object_get(
                    details,
                    json_string_value(json_object_get(e, "valueFromProvisioningClassDetail")));
                if (json_is_string(val) && sel != NULL)
                    json_object_set_new(sel, json_string_value(json_object_get(e, "key")),
                                        json_string(json_string_value(val)));
            }
            if (sel != NULL && json_object_size(sel) > 0)
                json_object_set(u, "nodeSelector", sel);
            json_decref(sel);
        }
        if (out == NULL || u == NULL || json_array_append_new(out, u) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    /* The pod sets merged into another one's request pod set (podSetMergePolicy) get the same
     * update under their own name: what it says (the request, its class, the nodes' selector)
     * is the request's, whatever pod set it is for. Kueue's podSetUpdates leaves them out (their
     * pods then ignore the capacity; kubernetes-sigs/kueue#14408). */
    for (size_t p = 0; included != NULL && json_array_size(out) > 0 && p < npodsets; p++) {
        bool named = false;
        json_t *u;
        json_array_foreach(out, i, u)
        {
            const char *n = json_string_value(json_object_get(u, "name"));
            named = named || (n != NULL && strcmp(n, podsets[p]) == 0);
        }
        if (!included[p] || named)
            continue;
        u = json_deep_copy(json_array_get(out, 0));
        if (u == NULL || json_object_set_new(u, "name", json_string(podsets[p])) != 0 ||
            json_array_append_new(out, u) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

/* Kueue's UseLimitsAsMissingRequestsInPod: a limit without a request becomes the request too, in
 * every container and init container of template `tmpl` (modified). False on out-of-memory. */
static bool limits_as_requests(json_t *tmpl)
{
    static const char *const lists[] = {"initContainers", "containers"};
    json_t *spec = json_object_get(tmpl, "spec"), *c, *lim, *req, *v;
    const char *k;
    size_t i;

    for (int l = 0; l < 2; l++)
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            json_t *res = json_object_get(c, "resources");
            lim = json_object_get(res, "limits");
            if (json_object_size(lim) == 0)
                continue;
            req = json_object_get(res, "requests");
            if (!json_is_object(req) &&
                json_object_set_new(res, "requests", req = json_object()) != 0)
                return false;
            json_object_foreach(lim, k, v) if (json_object_get(req, k) == NULL &&
                                               json_object_set(req, k, v) != 0) return false;
        }
    return true;
}

/* Is `v` what Go leaves out of JSON: absent, null, "", 0, false, {} or [] (Kubernetes'
 * semantic equality treats a nil and an empty map or slice alike)? */
static bool empty_value(const json_t *v)
{
    return v == NULL || json_is_null(v) || json_is_false(v) ||
           (json_is_string(v) && json_string_length(v) == 0) ||
           (json_is_integer(v) && json_integer_value(v) == 0) ||
           (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

/* Kueue's equality.Semantic.DeepEqual on the JSON of two API values: a field left out equals its
 * zero value, and inside `requests`, `limits` and `overhead` maps (or everywhere below when
 * `quantities`) two quantities are equal by value ("1" and "1000m"). */
static bool sem_equal(const json_t *a, const json_t *b, bool quantities)
{
    const char *k;
    const json_t *v;
    size_t i;

    if (empty_value(a) || empty_value(b))
        return empty_value(a) && empty_value(b);
    if (json_is_object(a) && json_is_object(b)) {
        json_object_foreach((json_t *)a, k, v)
        {
            bool q = quantities || strcmp(k, "requests") == 0 || strcmp(k, "limits") == 0 ||
                     strcmp(k, "overhead") == 0;
            if (!sem_equal(v, json_object_get(b, k), q))
                return false;
        }
        json_object_foreach((json_t *)b, k,
                            v) if (json_object_get(a, k) == NULL && !empty_value(v)) return false;
        return true;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        json_array_foreach(a, i, v) if (!sem_equal(v, json_array_get(b, i), false)) return false;
        return true;
    }
    if (quantities && json_is_string(a) && json_is_string(b)) {
        quantity_t qa, qb;
        if (quantity_parse(json_string_value(a), json_string_length(a), &qa, NULL) == ERR_OK &&
            quantity_parse(json_string_value(b), json_string_length(b), &qb, NULL) == ERR_OK)
            return quantity_cmp(qa, qb) == 0;
    }
    return json_equal((json_t *)a, (json_t *)b);
}

/* Kueue's areContainersEqual: as many containers in list `field` of pod specs `a` and `b`, each
 * pair with equal resource requests. */
static bool same_requests(const json_t *a, const json_t *b, const char *field)
{
    const json_t *la = json_object_get(a, field), *lb = json_object_get(b, field), *c;
    size_t i;

    if (json_array_size(la) != json_array_size(lb))
        return false;
    json_array_foreach(la, i, c)
    {
        if (!sem_equal(
                json_object_get(json_object_get(c, "resources"), "requests"),
                json_object_get(json_object_get(json_array_get(lb, i), "resources"), "requests"),
                true))
            return false;
    }
    return true;
}

bool provreq_can_merge(const char *policy, const json_t *t1, const json_t *t2)
{
    static const char *const fields[] = {"resources", "nodeSelector", "tolerations", "affinity",
                                         "resourceClaims"};
    const json_t *s1 = json_object_get(t1, "spec"), *s2 = json_object_get(t2, "spec");

    if (policy == NULL)
        return false;
    if (strcmp(policy, "IdenticalPodTemplates") == 0)
        return sem_equal(t1, t2, false);
    if (strcmp(policy, "IdenticalWorkloadSchedulingRequirements") != 0)
        return false;
    if (!same_requests(s1, s2, "containers") || !same_requests(s1, s2, "initContainers"))
        return false;
    for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
        if (!sem_equal(json_object_get(s1, fields[f]), json_object_get(s2, fields[f]),
                       f == 0 /* spec.resources: pod-level requests and limits */))
            return false;
    return true;
}

/* The admission's pod set assignment named `name`, or NULL. */
static const json_t *assignment(const json_t *wl, const char *name)
{
    const json_t *a;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(json_object_get(wl, "status"), "admission"),
                                       "podSetAssignments"),
                       i, a)
    {
        const char *n = json_string_value(json_object_get(a, "name"));
        if (n != NULL && strcmp(n, name) == 0)
            return a;
    }
    return NULL;
}

err_t provreq_build(const json_t *wl, const char *check, int32_t attempt,
                    const provreq_config_t *cfg, json_t **pr, json_t **templates, err_msg_t *msg)
{
    const json_t *md = json_object_get(wl, "metadata"), *ps, *v;
    const char *wname = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    const char *uid = json_string_value(json_object_get(md, "uid"));
    const char *api = json_string_value(json_object_get(wl, "apiVersion"));
    const char *k;
    char name[PROVREQ_NAME_MAX + 1], tn[PROVREQ_NAME_MAX + 1];
    json_t *params = NULL, *owner = NULL, *sets = NULL, *tmpls = NULL;
    const json_t *firsts[64]; /* the template of each request pod set's first pod set */
    size_t i, nfirst = 0;
    err_t rc;

    *pr = *templates = NULL;
    if (wname == NULL || ns == NULL || uid == NULL)
        return err_set(msg, ERR_INVALID, "workload: metadata name, namespace and uid required");
    if ((rc = provreq_name(wname, check, attempt, name, sizeof(name), msg)) != ERR_OK)
        return rc;
    owner = json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion",
                      api != NULL ? api : "kueue.x-k8s.io/v1beta2", "kind", "Workload", "name",
                      wname, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
    params = json_deep_copy(cfg->parameters);
    sets = json_array();
    tmpls = json_array();
    if (owner == NULL || params == NULL || sets == NULL || tmpls == NULL)
        goto oom;
    /* Kueue's passProvReqParams: annotations provreq.kueue.x-k8s.io/<param> of the Workload. */
    json_object_foreach(json_object_get(md, "annotations"), k, v)
    {
        if (strncmp(k, PROVREQ_PARAM_PREFIX, strlen(PROVREQ_PARAM_PREFIX)) == 0 &&
            json_is_string(v) &&
            json_object_set_new(params, k + strlen(PROVREQ_PARAM_PREFIX),
                                json_string(json_string_value(v))) != 0)
            goto oom;
    }
    json_array_foreach(json_object_get(json_object_get(wl, "spec"), "podSets"), i, ps)
    {
        const char *psname = json_string_value(json_object_get(ps, "name"));
        const json_t *tmpl = json_object_get(ps, "template"), *a;
        json_int_t count = json_integer_value(json_object_get(ps, "count"));
        json_t *pt, *tcopy;
        if (psname == NULL || count <= 0 || !provreq_podset_uses(cfg, tmpl))
            continue;
        a = assignment(wl, psname);
        if (a == NULL) {
            rc = err_set(msg, ERR_INVALID,
                         "inconsistent podSet assignments: missing assignment for PodSet \"%s\"",
                         psname);
            goto fail;
        }
        if (json_is_integer(json_object_get(a, "count")))
            count = json_integer_value(json_object_get(a, "count"));
        if (count <= 0)
            continue;
        /* Kueue's mergePodSets: under a podSetMergePolicy, a pod set that can merge with the
         * first pod set of a request pod set adds its count there (the first one's template and
         * name stay). */
        {
            size_t m = 0;
            while (m < nfirst && !provreq_can_merge(cfg->merge_policy, firsts[m], tmpl))
                m++;
            if (m < nfirst) {
                json_t *e = json_array_get(sets, m);
                if (json_object_set_new(
                        e, "count",
                        json_integer(json_integer_value(json_object_get(e, "count")) + count)) != 0)
                    goto oom;
                continue;
            }
            if (nfirst < sizeof(firsts) / sizeof(firsts[0]))
                firsts[nfirst++] = tmpl;
        }
        if ((rc = provreq_template_name(name, psname, tn, sizeof(tn), msg)) != ERR_OK)
            goto fail;
        tcopy = tmpl != NULL ? json_deep_copy(tmpl) : json_object();
        if (tcopy != NULL && !limits_as_requests(tcopy)) {
            json_decref(tcopy);
            tcopy = NULL;
        }
        pt = json_pack("{s:s,s:s,s:{s:s,s:s,s:O,s:{s:s}},s:o}", "apiVersion", "v1", "kind",
                       "PodTemplate", "metadata", "name", tn, "namespace", ns, "ownerReferences",
                       owner, "labels", "app.kubernetes.io/managed-by", "kueue", "template", tcopy);
        if (pt == NULL ||
            json_array_append_new(tmpls, json_pack("{s:s,s:o}", "podset", psname, "object", pt)) !=
                0 ||
            json_array_append_new(sets, json_pack("{s:{s:s},s:I}", "podTemplateRef", "name", tn,
                                                  "count", count)) != 0)
            goto oom;
    }
    if (json_array_size(sets) == 0) {
        json_decref(owner);
        json_decref(params);
        json_decref(sets);
        json_decref(tmpls);
        return ERR_OK;
    }
    *pr = json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:{s:s}},s:{s:s,s:o,s:o}}", "apiVersion",
                    "autoscaling.x-k8s.io/v1", "kind", "ProvisioningRequest", "metadata", "name",
                    name, "namespace", ns, "ownerReferences", owner, "labels",
                    "app.kubernetes.io/managed-by", "kueue", "spec", "provisioningClassName",
                    cfg->class_name, "parameters", params, "podSets", sets);
    if (*pr == NULL) {
        json_decref(tmpls);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    *templates = tmpls;
    return ERR_OK;
oom:
    rc = err_set(msg, ERR_NOMEM, "out of memory");
fail:
    json_decref(owner);
    json_decref(params);
    json_decref(sets);
    json_decref(tmpls);
    return rc;
}
