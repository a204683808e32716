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

static const struct kind_info {
    kind_t kind;
    const char *name;
    const char *const *versions; /* first is current; a second one is the deprecated v1beta1 */
} kinds[] = {
    {KIND_NAMESPACE, "Namespace", (const char *const[]){"v1", NULL}},
    {KIND_RESOURCE_FLAVOR, "ResourceFlavor", kueue_versions},
    {KIND_CLUSTER_QUEUE, "ClusterQueue", kueue_versions},
    {KIND_LOCAL_QUEUE, "LocalQueue", kueue_versions},
    {KIND_COHORT, "Cohort", kueue_versions},
    {KIND_WORKLOAD_PRIORITY_CLASS, "WorkloadPriorityClass", kueue_versions},
    {KIND_WORKLOAD, "Workload", kueue_versions},
    {KIND_PRIORITY_CLASS, "PriorityClass", (const char *const[]){"scheduling.k8s.io/v1", NULL}},
    {KIND_JOB, "Job", (const char *const[]){"batch/v1", NULL}},
    {KIND_CONFIGURATION, "Configuration", config_versions},
};

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
    case KIND_NAMESPACE:
        return &obj->u.ns.meta;
    case KIND_RESOURCE_FLAVOR:
        return &obj->u.flavor.meta;
    case KIND_CLUSTER_QUEUE:
        return &obj->u.cq.meta;
    case KIND_LOCAL_QUEUE:
        return &obj->u.lq.meta;
    case KIND_COHORT:
        return &obj->u.cohort.meta;
    case KIND_WORKLOAD_PRIORITY_CLASS:
        return &obj->u.wpc.meta;
    case KIND_WORKLOAD:
        return &obj->u.wl.meta;
    case KIND_PRIORITY_CLASS:
        return &obj->u.pc.meta;
    case KIND_JOB:
        return &obj->u.job.meta;
    case KIND_CONFIGURATION:
        return &obj->u.config.meta;
    default:
        return NULL;
    }
}

const object_meta_t *object_meta_const(const object_t *obj)
{
    return object_meta((object_t *)obj);
}

static void decode_body(decode_t *d, const json_t *root, object_t *out)
{
    switch (out->kind) {
    case KIND_NAMESPACE:
        decode__namespace(d, root, &out->u.ns);
        break;
    case KIND_RESOURCE_FLAVOR:
        decode__flavor(d, root, &out->u.flavor);
        break;
    case KIND_CLUSTER_QUEUE:
        decode__cluster_queue(d, root, &out->u.cq);
        break;
    case KIND_LOCAL_QUEUE:
        decode__local_queue(d, root, &out->u.lq);
        break;
    case KIND_COHORT:
        decode__cohort(d, root, &out->u.cohort);
        break;
    case KIND_WORKLOAD_PRIORITY_CLASS:
        decode__wpc(d, root, &out->u.wpc);
        break;
    case KIND_WORKLOAD:
        decode__workload(d, root, &out->u.wl);
        break;
    case KIND_PRIORITY_CLASS:
        decode__priority_class(d, root, &out->u.pc);
        break;
    case KIND_JOB:
        decode__job(d, root, &out->u.job);
        break;
    case KIND_CONFIGURATION:
        decode__configuration(d, root, &out->u.config);
        break;
    case KIND_UNKNOWN:
        break;
    }
}

/*
 * apiVersion and kind are checked first: they choose the decoder and, for Kueue kinds, the field
 * names (v1beta1 spelled some differently). When either is unusable nothing else is decoded,
 * since every later message would be noise.
 */
err_t object_decode(json_t *root, object_t *out, diags_t *diags)
{
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
        object_fini(out);
        return ERR_INVALID;
    }
    return ERR_OK;
}

/* ---- lifetimes ----------------------------------------------------------------------------------
 */

void strv_free(char **v, size_t n)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void kv_list_fini(kv_list_t *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

void resource_list_fini(resource_list_t *l)
{
    if (l == NULL)
        return;
    for (size_t i = 0; i < l->len; i++)
        free(l->items[i].name);
    free(l->items);
    memset(l, 0, sizeof(*l));
}

void selector_req_fini(selector_req_t *r)
{
    if (r == NULL)
        return;
    free(r->key);
    strv_free(r->values, r->nvalues);
    memset(r, 0, sizeof(*r));
}

void label_selector_fini(label_selector_t *s)
{
    if (s == NULL)
        return;
    kv_list_fini(&s->match_labels);
    for (size_t i = 0; i < s->nexprs; i++)
        selector_req_fini(&s->exprs[i]);
    free(s->exprs);
    memset(s, 0, sizeof(*s));
}

void taint_fini(taint_t *t)
{
    if (t == NULL)
        return;
    free(t->key);
    free(t->value);
    memset(t, 0, sizeof(*t));
}

void toleration_fini(toleration_t *t)
{
    if (t == NULL)
        return;
    free(t->key);
    free(t->value);
    memset(t, 0, sizeof(*t));
}

void container_fini(container_t *c)
{
    if (c == NULL)
        return;
    free(c->name);
    resource_list_fini(&c->requests);
    resource_list_fini(&c->limits);
    memset(c, 0, sizeof(*c));
}

static void terms_free(node_selector_term_t *t, size_t n)
{
    for (size_t i = 0; t != NULL && i < n; i++) {
        for (size_t j = 0; j < t[i].nexprs; j++)
            selector_req_fini(&t[i].exprs[j]);
        free(t[i].exprs);
    }
    free(t);
}

void pod_spec_fini(pod_spec_t *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->ncontainers; i++)
        container_fini(&s->containers[i]);
    free(s->containers);
    for (size_t i = 0; i < s->ninit_containers; i++)
        container_fini(&s->init_containers[i]);
    free(s->init_containers);
    resource_list_fini(&s->overhead);
    kv_list_fini(&s->node_selector);
    for (size_t i = 0; i < s->ntolerations; i++)
        toleration_fini(&s->tolerations[i]);
    free(s->tolerations);
    terms_free(s->affinity_terms, s->naffinity_terms);
    free(s->priority_class_name);
    resource_list_fini(&s->pod_level_requests);
    resource_list_fini(&s->pod_level_limits);
    memset(s, 0, sizeof(*s));
}

void object_meta_fini(object_meta_t *m)
{
    if (m == NULL)
        return;
    free(m->name);
    free(m->namespace);
    free(m->generate_name);
    free(m->uid);
    free(m->resource_version);
    kv_list_fini(&m->labels);
    kv_list_fini(&m->annotations);
    strv_free(m->finalizers, m->nfinalizers);
    memset(m, 0, sizeof(*m));
}

void resource_group_fini(resource_group_t *g)
{
    if (g == NULL)
        return;
    strv_free(g->covered, g->ncovered);
    for (size_t i = 0; i < g->nflavors; i++) {
        flavor_quotas_t *f = &g->flavors[i];
        for (size_t j = 0; j < f->nresources; j++)
            free(f->resources[j].name);
        free(f->resources);
        free(f->name);
    }
    free(g->flavors);
    memset(g, 0, sizeof(*g));
}

static void groups_free(resource_group_t *g, size_t n)
{
    for (size_t i = 0; g != NULL && i < n; i++)
        resource_group_fini(&g[i]);
    free(g);
}

void pod_set_fini(pod_set_t *p)
{
    if (p == NULL)
        return;
    free(p->name);
    kv_list_fini(&p->template_labels);
    kv_list_fini(&p->template_annotations);
    pod_spec_fini(&p->spec);
    resource_list_fini(&p->pod_requests);
    memset(p, 0, sizeof(*p));
}

void admission_fini(admission_t *a)
{
    if (a == NULL)
        return;
    free(a->cluster_queue);
    for (size_t i = 0; i < a->nassignments; i++) {
        free(a->assignments[i].name);
        kv_list_fini(&a->assignments[i].flavors);
        resource_list_fini(&a->assignments[i].usage);
    }
    free(a->assignments);
    memset(a, 0, sizeof(*a));
}

void admission_check_rule_fini(admission_check_rule_t *r)
{
    if (r == NULL)
        return;
    free(r->name);
    strv_free(r->on_flavors, r->non_flavors);
    memset(r, 0, sizeof(*r));
}

void condition_fini(condition_t *c)
{
    if (c == NULL)
        return;
    free(c->type);
    free(c->status);
    free(c->reason);
    free(c->message);
    memset(c, 0, sizeof(*c));
}

void pod_set_update_fini(pod_set_update_t *u)
{
    if (u == NULL)
        return;
    free(u->name);
    kv_list_fini(&u->labels);
    kv_list_fini(&u->annotations);
    kv_list_fini(&u->node_selector);
    for (size_t i = 0; i < u->ntolerations; i++)
        toleration_fini(&u->tolerations[i]);
    free(u->tolerations);
    memset(u, 0, sizeof(*u));
}

void admission_check_state_fini(admission_check_state_t *s)
{
    if (s == NULL)
        return;
    free(s->name);
    free(s->message);
    for (size_t i = 0; i < s->nupdates; i++)
        pod_set_update_fini(&s->updates[i]);
    free(s->updates);
    memset(s, 0, sizeof(*s));
}

void namespace_fini(namespace_t *n)
{
    if (n == NULL)
        return;
    object_meta_fini(&n->meta);
}

void flavor_fini(flavor_t *f)
{
    if (f == NULL)
        return;
    object_meta_fini(&f->meta);
    kv_list_fini(&f->node_labels);
    for (size_t i = 0; i < f->ntaints; i++)
        taint_fini(&f->taints[i]);
    free(f->taints);
    for (size_t i = 0; i < f->ntolerations; i++)
        toleration_fini(&f->tolerations[i]);
    free(f->tolerations);
    free(f->topology_name);
    memset(f, 0, sizeof(*f));
}

void cluster_queue_fini(cluster_queue_t *cq)
{
    if (cq == NULL)
        return;
    object_meta_fini(&cq->meta);
    groups_free(cq->groups, cq->ngroups);
    free(cq->cohort);
    label_selector_fini(&cq->namespace_selector);
    strv_free(cq->admission_checks, cq->nadmission_checks);
    for (size_t i = 0; i < cq->ncheck_rules; i++)
        admission_check_rule_fini(&cq->check_rules[i]);
    free(cq->check_rules);
    memset(cq, 0, sizeof(*cq));
}

void cohort_fini(cohort_t *c)
{
    if (c == NULL)
        return;
    object_meta_fini(&c->meta);
    free(c->parent);
    groups_free(c->groups, c->ngroups);
    memset(c, 0, sizeof(*c));
}

void local_queue_fini(local_queue_t *lq)
{
    if (lq == NULL)
        return;
    object_meta_fini(&lq->meta);
    free(lq->cluster_queue);
    memset(lq, 0, sizeof(*lq));
}

void workload_priority_class_fini(workload_priority_class_t *w)
{
    if (w == NULL)
        return;
    object_meta_fini(&w->meta);
    free(w->description);
    memset(w, 0, sizeof(*w));
}

void priority_class_fini(priority_class_t *p)
{
    if (p == NULL)
        return;
    object_meta_fini(&p->meta);
    memset(p, 0, sizeof(*p));
}

void workload_fini(workload_t *w)
{
    if (w == NULL)
        return;
    object_meta_fini(&w->meta);
    free(w->queue_name);
    free(w->priority_class);
    for (size_t i = 0; i < w->npod_sets; i++)
        pod_set_fini(&w->pod_sets[i]);
    free(w->pod_sets);
    admission_fini(w->admission);
    free(w->admission);
    for (size_t i = 0; i < w->nstatus_conditions; i++)
        condition_fini(&w->status_conditions[i]);
    free(w->status_conditions);
    for (size_t i = 0; i < w->nreclaimable_pods; i++)
        free(w->reclaimable_pods[i].name);
    free(w->reclaimable_pods);
    for (size_t i = 0; i < w->ncheck_states; i++)
        admission_check_state_fini(&w->check_states[i]);
    free(w->check_states);
    free(w->cluster_name);
    strv_free(w->nominated_clusters, w->nnominated_clusters);
    memset(w, 0, sizeof(*w));
}

void job_fini(job_t *j)
{
    if (j == NULL)
        return;
    object_meta_fini(&j->meta);
    kv_list_fini(&j->template_labels);
    kv_list_fini(&j->template_annotations);
    pod_spec_fini(&j->spec);
    memset(j, 0, sizeof(*j));
}

void configuration_fini(configuration_t *c)
{
    if (c == NULL)
        return;
    object_meta_fini(&c->meta);
    label_selector_fini(&c->managed_jobs_namespace_selector);
    memset(c, 0, sizeof(*c));
}

void object_fini(object_t *obj)
{
    if (obj == NULL)
        return;
    switch (obj->kind) {
    case KIND_NAMESPACE:
        namespace_fini(&obj->u.ns);
        break;
    case KIND_RESOURCE_FLAVOR:
        flavor_fini(&obj->u.flavor);
        break;
    case KIND_CLUSTER_QUEUE:
        cluster_queue_fini(&obj->u.cq);
        break;
    case KIND_LOCAL_QUEUE:
        local_queue_fini(&obj->u.lq);
        break;
    case KIND_COHORT:
        cohort_fini(&obj->u.cohort);
        break;
    case KIND_WORKLOAD_PRIORITY_CLASS:
        workload_priority_class_fini(&obj->u.wpc);
        break;
    case KIND_WORKLOAD:
        workload_fini(&obj->u.wl);
        break;
    case KIND_PRIORITY_CLASS:
        priority_class_fini(&obj->u.pc);
        break;
    case KIND_JOB:
        job_fini(&obj->u.job);
        break;
    case KIND_CONFIGURATION:
        configuration_fini(&obj->u.config);
        break;
    case KIND_UNKNOWN:
        break;
    }
    free(obj->api_version);
    memset(obj, 0, sizeof(*obj));
}

/* ---- copies and lookups
 * -------------------------------------------------------------------------- */

static char *dup_or_null(const char *s, bool *fail)
{
    char *c;

    if (s == NULL)
        return NULL;
    c = strdup(s);
    if (c == NULL)
        *fail = true;
    return c;
}

err_t kv_list_copy(kv_list_t *dst, const kv_list_t *src)
{
    bool fail = false;

    memset(dst, 0, sizeof(*dst));
    if (src->len == 0)
        return ERR_OK;
    dst->items = calloc(src->len, sizeof(*dst->items));
    if (dst->items == NULL)
        return ERR_NOMEM;
    dst->len = src->len;
    for (size_t i = 0; i < src->len; i++) {
        dst->items[i].key = dup_or_null(src->items[i].key, &fail);
        dst->items[i].value = dup_or_null(src->items[i].value, &fail);
    }
    if (fail) {
        kv_list_fini(dst);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

err_t resource_list_copy(resource_list_t *dst, const resource_list_t *src)
{
    bool fail = false;

    memset(dst, 0, sizeof(*dst));
    if (src->len == 0)
        return ERR_OK;
    dst->items = calloc(src->len, sizeof(*dst->items));
    if (dst->items == NULL)
        return ERR_NOMEM;
    dst->len = src->len;
    for (size_t i = 0; i < src->len; i++) {
        dst->items[i].name = dup_or_null(src->items[i].name, &fail);
        dst->items[i].value = src->items[i].value;
    }
    if (fail) {
        resource_list_fini(dst);
        return ERR_NOMEM;
    }
    return ERR_OK;
}

static bool req_copy(selector_req_t *dst, const selector_req_t *src)
{
    bool fail = false;

    dst->key = dup_or_null(src->key, &fail);
    dst->op = src->op;
    if (src->nvalues > 0) {
        dst->values = calloc(src->nvalues, sizeof(char *));
        if (dst->values == NULL)
            return false;
        dst->nvalues = src->nvalues;
        for (size_t i = 0; i < src->nvalues; i++)
            dst->values[i] = dup_or_null(src->values[i], &fail);
    }
    return !fail;
}

static bool containers_copy(container_t **dst, size_t *n, const container_t *src, size_t len)
{
    bool fail = false;

    if (len == 0)
        return true;
    *dst = calloc(len, sizeof(**dst));
    if (*dst == NULL)
        return false;
    *n = len;
    for (size_t i = 0; i < len; i++) {
        (*dst)[i].name = dup_or_null(src[i].name, &fail);
        (*dst)[i].restartable = src[i].restartable;
        if (resource_list_copy(&(*dst)[i].requests, &src[i].requests) != ERR_OK ||
            resource_list_copy(&(*dst)[i].limits, &src[i].limits) != ERR_OK)
            fail = true;
    }
    return !fail;
}

err_t pod_spec_copy(pod_spec_t *dst, const pod_spec_t *src)
{
    bool fail = false;

    memset(dst, 0, sizeof(*dst));
    if (!containers_copy(&dst->containers, &dst->ncontainers, src->containers, src->ncontainers) ||
        !containers_copy(&dst->init_containers, &dst->ninit_containers, src->init_containers,
                         src->ninit_containers) ||
        resource_list_copy(&dst->overhead, &src->overhead) != ERR_OK ||
        kv_list_copy(&dst->node_selector, &src->node_selector) != ERR_OK ||
        resource_list_copy(&dst->pod_level_requests, &src->pod_level_requests) != ERR_OK ||
        resource_list_copy(&dst->pod_level_limits, &src->pod_level_limits) != ERR_OK)
        goto fail;
    if (src->ntolerations > 0) {
        dst->tolerations = calloc(src->ntolerations, sizeof(*dst->tolerations));
        if (dst->tolerations == NULL)
            goto fail;
        dst->ntolerations = src->ntolerations;
        for (size_t i = 0; i < src->ntolerations; i++) {
            dst->tolerations[i] = src->tolerations[i];
            dst->tolerations[i].key = dup_or_null(src->tolerations[i].key, &fail);
            dst->tolerations[i].value = dup_or_null(src->tolerations[i].value, &fail);
        }
    }
    if (src->naffinity_terms > 0) {
        dst->affinity_terms = calloc(src->naffinity_terms, sizeof(*dst->affinity_terms));
        if (dst->affinity_terms == NULL)
            goto fail;
        dst->naffinity_terms = src->naffinity_terms;
        for (size_t i = 0; i < src->naffinity_terms; i++) {
            const node_selector_term_t *t = &src->affinity_terms[i];
            if (t->nexprs == 0)
                continue;
            dst->affinity_terms[i].exprs = calloc(t->nexprs, sizeof(*t->exprs));
            if (dst->affinity_terms[i].exprs == NULL)
                goto fail;
            dst->affinity_terms[i].nexprs = t->nexprs;
            for (size_t j = 0; j < t->nexprs; j++)
                if (!req_copy(&dst->affinity_terms[i].exprs[j], &t->exprs[j]))
                    fail = true;
        }
    }
    dst->priority_class_name = dup_or_null(src->priority_class_name, &fail);
    if (!fail)
        return ERR_OK;
fail:
    pod_spec_fini(dst);
    return ERR_NOMEM;
}

const char *kv_list_get(const kv_list_t *l, const char *key)
{
    size_t lo = 0, hi = l->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->items[mid].key, key);
        if (c == 0)
            return l->items[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

err_t kv_list_set(kv_list_t *l, const char *key, const char *value)
{
    size_t at = 0;
    char *v = strdup(value), *k;
    kv_t *items;

    if (v == NULL)
        return ERR_NOMEM;
    while (at < l->len && strcmp(l->items[at].key, key) < 0)
        at++;
    if (at < l->len && strcmp(l->items[at].key, key) == 0) {
        free(l->items[at].value);
        l->items[at].value = v;
        return ERR_OK;
    }
    k = strdup(key);
    items = k ? realloc(l->items, (l->len + 1) * sizeof(*items)) : NULL;
    if (items == NULL) {
        free(k);
        free(v);
        return ERR_NOMEM;
    }
    l->items = items;
    memmove(&items[at + 1], &items[at], (l->len - at) * sizeof(*items));
    items[at].key = k;
    items[at].value = v;
    l->len++;
    return ERR_OK;
}

const quantity_t *resource_list_get(const resource_list_t *l, const char *name)
{
    size_t lo = 0, hi = l->len;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(l->items[mid].name, name);
        if (c == 0)
            return &l->items[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
