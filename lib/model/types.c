/* types -- lifetimes, copies and lookups of the typed objects of types.h (no JSON here). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/types.h"

#include "model/diag.h"

#include "util/str.h"

#include <stdlib.h>
#include <string.h>

/* ---- lifetimes ------------------------------------------------------------------------------- */

/*
 * Every public T_fini() is NULL-safe and leaves *p zeroed, so that a finalised struct can be
 * finalised again or reused. OBJECT_FINI(name, T, p) { body } defines name() around a body that
 * only releases what *p owns.
 */
#define OBJECT_FINI(name, type, p)       \
    static void name##_release(type *p); \
    void name(type *p)                   \
    {                                    \
        if (p == NULL)                   \
            return;                      \
        name##_release(p);               \
        memset(p, 0, sizeof(*p));        \
    }                                    \
    static void name##_release(type *p)

/* Element finalisers for TYPES_FREE_ARRAY, for element types without a public *_fini. */
static void str_fini(char **s)
{
    free(*s);
}

static void kv_fini(kv_t *kv)
{
    free(kv->key);
    free(kv->value);
}

static void resource_fini(resource_t *r)
{
    free(r->name);
}

static void resource_quota_fini(resource_quota_t *q)
{
    free(q->name);
}

static void flavor_quotas_fini(flavor_quotas_t *f)
{
    free(f->name);
    TYPES_FREE_ARRAY(f->resources, f->nresources, resource_quota_fini);
}

static void node_selector_term_fini(node_selector_term_t *t)
{
    TYPES_FREE_ARRAY(t->exprs, t->nexprs, selector_req_fini);
}

void topology_assignment_fini(topology_assignment_t *a)
{
    if (a == NULL)
        return;
    strv_free(a->levels, a->nlevels);
    strv_free(a->values, a->values != NULL ? a->ndomains * a->nlevels : 0);
    free(a->counts);
    memset(a, 0, sizeof(*a));
}

err_t topology_assignment_dup(const topology_assignment_t *a, topology_assignment_t **out)
{
    topology_assignment_t *d;
    size_t nv;

    *out = NULL;
    if (a == NULL)
        return ERR_OK;
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return ERR_NOMEM;
    nv = a->ndomains * a->nlevels;
    d->levels = calloc(a->nlevels ? a->nlevels : 1, sizeof(char *));
    d->values = calloc(nv ? nv : 1, sizeof(char *));
    d->counts = calloc(a->ndomains ? a->ndomains : 1, sizeof(int32_t));
    d->nlevels = a->nlevels;
    d->ndomains = a->ndomains;
    if (d->levels == NULL || d->values == NULL || d->counts == NULL)
        goto fail;
    for (size_t i = 0; i < a->nlevels; i++)
        if ((d->levels[i] = strdup(a->levels[i])) == NULL)
            goto fail;
    for (size_t i = 0; i < nv; i++)
        if ((d->values[i] = strdup(a->values[i])) == NULL)
            goto fail;
    if (a->ndomains > 0)
        memcpy(d->counts, a->counts, a->ndomains * sizeof(int32_t));
    *out = d;
    return ERR_OK;
fail:
    topology_assignment_fini(d);
    free(d);
    return ERR_NOMEM;
}

static void pod_set_assignment_fini(pod_set_assignment_t *a)
{
    free(a->name);
    kv_list_fini(&a->flavors);
    resource_list_fini(&a->usage);
    topology_assignment_fini(a->topology);
    free(a->topology);
}

static void reclaimable_pod_fini(reclaimable_pod_t *r)
{
    free(r->name);
}

void strv_free(char **v, size_t n)
{
    TYPES_FREE_ARRAY(v, n, str_fini);
}

OBJECT_FINI(kv_list_fini, kv_list_t, l)
{
    TYPES_FREE_ARRAY(l->items, l->len, kv_fini);
}

OBJECT_FINI(resource_list_fini, resource_list_t, l)
{
    TYPES_FREE_ARRAY(l->items, l->len, resource_fini);
}

OBJECT_FINI(selector_req_fini, selector_req_t, r)
{
    free(r->key);
    strv_free(r->values, r->nvalues);
}

OBJECT_FINI(label_selector_fini, label_selector_t, s)
{
    kv_list_fini(&s->match_labels);
    TYPES_FREE_ARRAY(s->exprs, s->nexprs, selector_req_fini);
}

OBJECT_FINI(taint_fini, taint_t, t)
{
    free(t->key);
    free(t->value);
}

OBJECT_FINI(toleration_fini, toleration_t, t)
{
    free(t->key);
    free(t->value);
}

OBJECT_FINI(container_fini, container_t, c)
{
    free(c->name);
    resource_list_fini(&c->requests);
    resource_list_fini(&c->limits);
}

OBJECT_FINI(pod_spec_fini, pod_spec_t, s)
{
    TYPES_FREE_ARRAY(s->containers, s->ncontainers, container_fini);
    TYPES_FREE_ARRAY(s->init_containers, s->ninit_containers, container_fini);
    resource_list_fini(&s->overhead);
    kv_list_fini(&s->node_selector);
    TYPES_FREE_ARRAY(s->tolerations, s->ntolerations, toleration_fini);
    TYPES_FREE_ARRAY(s->affinity_terms, s->naffinity_terms, node_selector_term_fini);
    free(s->priority_class_name);
    resource_list_fini(&s->pod_level_requests);
    resource_list_fini(&s->pod_level_limits);
}

OBJECT_FINI(object_meta_fini, object_meta_t, m)
{
    free(m->name);
    free(m->namespace);
    free(m->generate_name);
    free(m->uid);
    free(m->resource_version);
    kv_list_fini(&m->labels);
    kv_list_fini(&m->annotations);
    strv_free(m->finalizers, m->nfinalizers);
}

OBJECT_FINI(resource_group_fini, resource_group_t, g)
{
    strv_free(g->covered, g->ncovered);
    TYPES_FREE_ARRAY(g->flavors, g->nflavors, flavor_quotas_fini);
}

OBJECT_FINI(pod_set_fini, pod_set_t, p)
{
    free(p->name);
    kv_list_fini(&p->topology_request);
    kv_list_fini(&p->template_labels);
    kv_list_fini(&p->template_annotations);
    pod_spec_fini(&p->spec);
    resource_list_fini(&p->pod_requests);
}

OBJECT_FINI(admission_fini, admission_t, a)
{
    free(a->cluster_queue);
    TYPES_FREE_ARRAY(a->assignments, a->nassignments, pod_set_assignment_fini);
}

OBJECT_FINI(admission_check_rule_fini, admission_check_rule_t, r)
{
    free(r->name);
    strv_free(r->on_flavors, r->non_flavors);
}

OBJECT_FINI(condition_fini, condition_t, c)
{
    free(c->type);
    free(c->status);
    free(c->reason);
    free(c->message);
}

OBJECT_FINI(pod_set_update_fini, pod_set_update_t, u)
{
    free(u->name);
    kv_list_fini(&u->labels);
    kv_list_fini(&u->annotations);
    kv_list_fini(&u->node_selector);
    TYPES_FREE_ARRAY(u->tolerations, u->ntolerations, toleration_fini);
}

OBJECT_FINI(admission_check_state_fini, admission_check_state_t, s)
{
    free(s->name);
    free(s->message);
    TYPES_FREE_ARRAY(s->updates, s->nupdates, pod_set_update_fini);
}

OBJECT_FINI(namespace_fini, namespace_t, n)
{
    object_meta_fini(&n->meta);
}

OBJECT_FINI(flavor_fini, flavor_t, f)
{
    object_meta_fini(&f->meta);
    kv_list_fini(&f->node_labels);
    TYPES_FREE_ARRAY(f->taints, f->ntaints, taint_fini);
    TYPES_FREE_ARRAY(f->tolerations, f->ntolerations, toleration_fini);
    free(f->topology_name);
}

OBJECT_FINI(cluster_queue_fini, cluster_queue_t, cq)
{
    object_meta_fini(&cq->meta);
    TYPES_FREE_ARRAY(cq->groups, cq->ngroups, resource_group_fini);
    free(cq->cohort);
    label_selector_fini(&cq->namespace_selector);
    strv_free(cq->admission_checks, cq->nadmission_checks);
    TYPES_FREE_ARRAY(cq->check_rules, cq->ncheck_rules, admission_check_rule_fini);
}

OBJECT_FINI(cohort_fini, cohort_t, c)
{
    object_meta_fini(&c->meta);
    free(c->parent);
    TYPES_FREE_ARRAY(c->groups, c->ngroups, resource_group_fini);
}

OBJECT_FINI(admission_check_fini, admission_check_t, ac)
{
    object_meta_fini(&ac->meta);
    free(ac->controller_name);
    free(ac->param_group);
    free(ac->param_kind);
    free(ac->param_name);
    free(ac->active_reason);
    free(ac->active_message);
}

OBJECT_FINI(local_queue_fini, local_queue_t, lq)
{
    object_meta_fini(&lq->meta);
    free(lq->cluster_queue);
}

OBJECT_FINI(workload_priority_class_fini, workload_priority_class_t, w)
{
    object_meta_fini(&w->meta);
    free(w->description);
}

OBJECT_FINI(topology_fini, topology_t, t)
{
    object_meta_fini(&t->meta);
    strv_free(t->levels, t->nlevels);
}

OBJECT_FINI(priority_class_fini, priority_class_t, p)
{
    object_meta_fini(&p->meta);
}

OBJECT_FINI(workload_fini, workload_t, w)
{
    object_meta_fini(&w->meta);
    free(w->queue_name);
    free(w->priority_class);
    TYPES_FREE_ARRAY(w->pod_sets, w->npod_sets, pod_set_fini);
    admission_fini(w->admission);
    free(w->admission);
    TYPES_FREE_ARRAY(w->status_conditions, w->nstatus_conditions, condition_fini);
    TYPES_FREE_ARRAY(w->reclaimable_pods, w->nreclaimable_pods, reclaimable_pod_fini);
    TYPES_FREE_ARRAY(w->check_states, w->ncheck_states, admission_check_state_fini);
    free(w->cluster_name);
    strv_free(w->nominated_clusters, w->nnominated_clusters);
    strv_free(w->unhealthy_nodes, w->nunhealthy_nodes);
}

OBJECT_FINI(job_fini, job_t, j)
{
    object_meta_fini(&j->meta);
    kv_list_fini(&j->template_labels);
    kv_list_fini(&j->template_annotations);
    pod_spec_fini(&j->spec);
}

OBJECT_FINI(integration_fini, integration_t, o)
{
    object_meta_fini(&o->meta);
    free(o->kind);
    free(o->group);
    workload_fini(&o->wl);
    free(o->priority_class_name);
    diags_fini(o->unlabelled_rules);
    free(o->unlabelled_rules);
}

OBJECT_FINI(resource_transformation_fini, resource_transformation_t, t)
{
    free(t->input);
    free(t->multiply_by);
    resource_list_fini(&t->outputs);
}

OBJECT_FINI(resource_rules_fini, resource_rules_t, r)
{
    strv_free(r->exclude_prefixes, r->nexclude_prefixes);
    TYPES_FREE_ARRAY(r->transformations, r->ntransformations, resource_transformation_fini);
}

OBJECT_FINI(configuration_fini, configuration_t, c)
{
    object_meta_fini(&c->meta);
    label_selector_fini(&c->managed_jobs_namespace_selector);
    resource_rules_fini(&c->resources);
    resource_list_fini(&c->afs_weights);
    strv_free(c->run_only, c->nrun_only);
}

/* ---- copies and lookups ------------------------------------------------------------------------
 */

err_t kv_list_copy(kv_list_t *dst, const kv_list_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->len == 0)
        return ERR_OK;
    dst->items = calloc(src->len, sizeof(*dst->items));
    if (dst->items == NULL)
        return ERR_NOMEM;
    dst->len = src->len;
    for (size_t i = 0; i < src->len; i++) {
        if (util_strdup(src->items[i].key, &dst->items[i].key) != ERR_OK ||
            util_strdup(src->items[i].value, &dst->items[i].value) != ERR_OK) {
            kv_list_fini(dst);
            return ERR_NOMEM;
        }
    }
    return ERR_OK;
}

err_t resource_list_copy(resource_list_t *dst, const resource_list_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->len == 0)
        return ERR_OK;
    dst->items = calloc(src->len, sizeof(*dst->items));
    if (dst->items == NULL)
        return ERR_NOMEM;
    dst->len = src->len;
    for (size_t i = 0; i < src->len; i++) {
        dst->items[i].value = src->items[i].value;
        if (util_strdup(src->items[i].name, &dst->items[i].name) != ERR_OK) {
            resource_list_fini(dst);
            return ERR_NOMEM;
        }
    }
    return ERR_OK;
}

err_t resource_rules_copy(resource_rules_t *dst, const resource_rules_t *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->ignore_undeclared = src->ignore_undeclared;
    if (src->nexclude_prefixes > 0) {
        dst->exclude_prefixes = calloc(src->nexclude_prefixes, sizeof(char *));
        if (dst->exclude_prefixes == NULL)
            goto oom;
        dst->nexclude_prefixes = src->nexclude_prefixes;
        for (size_t i = 0; i < src->nexclude_prefixes; i++)
            if (util_strdup(src->exclude_prefixes[i], &dst->exclude_prefixes[i]) != ERR_OK)
                goto oom;
    }
    if (src->ntransformations > 0) {
        dst->transformations = calloc(src->ntransformations, sizeof(resource_transformation_t));
        if (dst->transformations == NULL)
            goto oom;
        dst->ntransformations = src->ntransformations;
        for (size_t i = 0; i < src->ntransformations; i++) {
            const resource_transformation_t *s = &src->transformations[i];
            resource_transformation_t *d = &dst->transformations[i];
            d->strategy = s->strategy;
            if (util_strdup(s->input, &d->input) != ERR_OK ||
                (s->multiply_by != NULL &&
                 util_strdup(s->multiply_by, &d->multiply_by) != ERR_OK) ||
                resource_list_copy(&d->outputs, &s->outputs) != ERR_OK)
                goto oom;
        }
    }
    return ERR_OK;
oom:
    resource_rules_fini(dst);
    return ERR_NOMEM;
}

/* Into zeroed `dst`; on ERR_NOMEM what was copied stays in `dst` for the caller's fini. */
static err_t req_copy(selector_req_t *dst, const selector_req_t *src)
{
    dst->op = src->op;
    if (util_strdup(src->key, &dst->key) != ERR_OK)
        return ERR_NOMEM;
    if (src->nvalues > 0) {
        dst->values = calloc(src->nvalues, sizeof(char *));
        if (dst->values == NULL)
            return ERR_NOMEM;
        dst->nvalues = src->nvalues;
        for (size_t i = 0; i < src->nvalues; i++)
            if (util_strdup(src->values[i], &dst->values[i]) != ERR_OK)
                return ERR_NOMEM;
    }
    return ERR_OK;
}

/* As req_copy(). */
static err_t containers_copy(container_t **dst, size_t *n, const container_t *src, size_t len)
{
    if (len == 0)
        return ERR_OK;
    *dst = calloc(len, sizeof(**dst));
    if (*dst == NULL)
        return ERR_NOMEM;
    *n = len;
    for (size_t i = 0; i < len; i++) {
        (*dst)[i].restartable = src[i].restartable;
        if (util_strdup(src[i].name, &(*dst)[i].name) != ERR_OK ||
            resource_list_copy(&(*dst)[i].requests, &src[i].requests) != ERR_OK ||
            resource_list_copy(&(*dst)[i].limits, &src[i].limits) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

err_t pod_spec_copy(pod_spec_t *dst, const pod_spec_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (containers_copy(&dst->containers, &dst->ncontainers, src->containers, src->ncontainers) !=
            ERR_OK ||
        containers_copy(&dst->init_containers, &dst->ninit_containers, src->init_containers,
                        src->ninit_containers) != ERR_OK ||
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
            dst->tolerations[i].key = NULL;
            dst->tolerations[i].value = NULL;
            if (util_strdup(src->tolerations[i].key, &dst->tolerations[i].key) != ERR_OK ||
                util_strdup(src->tolerations[i].value, &dst->tolerations[i].value) != ERR_OK)
                goto fail;
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
                if (req_copy(&dst->affinity_terms[i].exprs[j], &t->exprs[j]) != ERR_OK)
                    goto fail;
        }
    }
    if (util_strdup(src->priority_class_name, &dst->priority_class_name) == ERR_OK)
        return ERR_OK;
fail:
    pod_spec_fini(dst);
    return ERR_NOMEM;
}

bool kv_list_equal(const kv_list_t *a, const kv_list_t *b)
{
    if (a->len != b->len)
        return false;
    for (size_t i = 0; i < a->len; i++)
        if (strcmp(a->items[i].key, b->items[i].key) != 0 ||
            strcmp(a->items[i].value, b->items[i].value) != 0)
            return false;
    return true;
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
