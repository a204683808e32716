/* sched_fixtures -- build engine objects in code for the sched tests (no YAML involved). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched_fixtures.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Every allocation of one helper call is tracked and released at the end of the call (the
 * engine copies what it keeps). */
typedef struct arena_s {
    void *p[4096];
    size_t n;
} arena_t;

static void *a_alloc(arena_t *a, size_t sz)
{
    void *p = calloc(1, sz ? sz : 1);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(a->n, 4096);
    a->p[a->n++] = p;
    return p;
}

static char *a_strndup(arena_t *a, const char *s, size_t n)
{
    char *d = a_alloc(a, n + 1);
    memcpy(d, s, n);
    return d;
}

static char *a_strdup(arena_t *a, const char *s)
{
    return a_strndup(a, s, strlen(s));
}

static void a_free(arena_t *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->p[i]);
    a->n = 0;
}

/* Split `s` on `sep` into at most `max` arena strings; returns the count. */
static size_t split(arena_t *a, const char *s, char sep, char **out, size_t max)
{
    size_t n = 0;
    if (s == NULL || *s == '\0')
        return 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == sep || *p == '\0') {
            ck_assert_uint_lt(n, max);
            out[n++] = a_strndup(a, start, (size_t)(p - start));
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    return n;
}

static quantity_t q(const char *text)
{
    quantity_t v;
    err_msg_t m;
    ck_assert_msg(quantity_parse(text, strlen(text), &v, &m) == ERR_OK, "%s", m.text);
    return v;
}

static void kv_parse(arena_t *a, const char *spec, kv_list_t *out)
{
    char *items[32];
    size_t n = split(a, spec, ',', items, 32);
    out->items = a_alloc(a, n * sizeof(kv_t));
    out->len = n;
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(items[i], '=');
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        out->items[i].key = items[i];
        out->items[i].value = eq + 1;
    }
}

static resource_group_t *groups_parse(arena_t *a, const char *spec, size_t *ngroups)
{
    char *gs[16];
    size_t ng = split(a, spec, ';', gs, 16);
    resource_group_t *groups = a_alloc(a, ng * sizeof(resource_group_t));
    for (size_t g = 0; g < ng; g++) {
        char *parts[17];
        size_t np = split(a, gs[g], '|', parts, 17);
        ck_assert_uint_ge(np, 2);
        char *res[16];
        size_t nres = split(a, parts[0], ',', res, 16);
        groups[g].covered = a_alloc(a, nres * sizeof(char *));
        for (size_t r = 0; r < nres; r++)
            groups[g].covered[r] = res[r];
        groups[g].ncovered = nres;
        groups[g].nflavors = np - 1;
        groups[g].flavors = a_alloc(a, (np - 1) * sizeof(flavor_quotas_t));
        for (size_t f = 1; f < np; f++) {
            flavor_quotas_t *fq = &groups[g].flavors[f - 1];
            char *colon = strchr(parts[f], ':');
            ck_assert_ptr_nonnull(colon);
            *colon = '\0';
            fq->name = parts[f];
            char *qs[16];
            size_t nq = split(a, colon + 1, ',', qs, 16);
            ck_assert_uint_eq(nq, nres);
            fq->resources = a_alloc(a, nq * sizeof(resource_quota_t));
            fq->nresources = nq;
            for (size_t r = 0; r < nq; r++) {
                resource_quota_t *rq = &fq->resources[r];
                char *sub[3] = {NULL, NULL, NULL};
                size_t ns = split(a, qs[r], '/', sub, 3);
                rq->name = res[r];
                rq->nominal = q(sub[0]);
                for (size_t k = 1; k < ns; k++) {
                    if (sub[k][0] == 'b') {
                        rq->has_borrowing_limit = true;
                        rq->borrowing_limit = q(sub[k] + 1);
                    } else {
                        rq->has_lending_limit = true;
                        rq->lending_limit = q(sub[k] + 1);
                    }
                }
            }
        }
    }
    *ngroups = ng;
    return groups;
}

void fx_cq(sched_t *s, const char *name, const char *quotas, const fx_cq_opts_t *o)
{
    static const fx_cq_opts_t defaults;
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    if (o == NULL)
        o = &defaults;
    cluster_queue_t cq;
    memset(&cq, 0, sizeof(cq));
    cq.meta.name = a_strdup(a, name);
    cq.groups = groups_parse(a, quotas, &cq.ngroups);
    cq.cohort = o->cohort ? a_strdup(a, o->cohort) : NULL;
    cq.queueing = o->queueing;
    cq.namespace_selector.present = true;
    if (o->ns_label)
        kv_parse(a, o->ns_label, &cq.namespace_selector.match_labels);
    cq.when_can_borrow =
        o->try_next_on_borrow ? FUNGIBILITY_TRY_NEXT_FLAVOR : FUNGIBILITY_MAY_STOP_SEARCH;
    cq.when_can_preempt =
        o->stop_on_preempt ? FUNGIBILITY_MAY_STOP_SEARCH : FUNGIBILITY_TRY_NEXT_FLAVOR;
    cq.preference = o->preference;
    cq.within_cluster_queue = o->within;
    cq.reclaim_within_cohort = o->reclaim;
    cq.borrow_within_cohort = o->borrow;
    cq.has_max_priority_threshold = o->has_threshold;
    cq.max_priority_threshold = o->threshold;
    cq.stop_policy = o->stop;
    cq.has_admission_scope = o->afs;
    cq.afs_usage_based = o->afs;
    if (o->weight) {
        cq.has_fair_weight = true;
        cq.fair_weight = q(o->weight);
    }
    admission_check_rule_t rules[8];
    char *flv[8][8];
    memset(rules, 0, sizeof(rules));
    for (const char *p = o->checks; p != NULL && *p != '\0' && cq.ncheck_rules < 8;) {
        size_t n = strcspn(p, ";");
        char *item = a_strdup(a, p);
        item[n] = '\0';
        admission_check_rule_t *r = &rules[cq.ncheck_rules];
        char *colon = strchr(item, ':');
        if (colon != NULL) {
            *colon = '\0';
            for (char *f = colon + 1; *f != '\0' && r->non_flavors < 8;) {
                size_t fl = strcspn(f, ",");
                flv[cq.ncheck_rules][r->non_flavors++] = f;
                if (f[fl] == '\0')
                    break;
                f[fl] = '\0';
                f += fl + 1;
            }
            r->on_flavors = flv[cq.ncheck_rules];
        }
        r->name = item;
        cq.ncheck_rules++;
        p += n;
        if (*p == ';')
            p++;
    }
    cq.check_rules = cq.ncheck_rules > 0 ? rules : NULL;
    err_msg_t m;
    ck_assert_msg(sched_cq_upsert(s, &cq, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

void fx_cohort(sched_t *s, const char *name, const char *parent, const char *quotas,
               const char *weight)
{
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    cohort_t c;
    memset(&c, 0, sizeof(c));
    c.meta.name = a_strdup(a, name);
    c.parent = parent ? a_strdup(a, parent) : NULL;
    if (quotas)
        c.groups = groups_parse(a, quotas, &c.ngroups);
    if (weight) {
        c.has_fair_weight = true;
        c.fair_weight = q(weight);
    }
    err_msg_t m;
    ck_assert_msg(sched_cohort_upsert(s, &c, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

/* "k=v:NoSchedule,k2:NoExecute" */
static taint_t *taints_parse(arena_t *a, const char *spec, size_t *n_out)
{
    char *ts[8];
    size_t n = split(a, spec, ',', ts, 8);
    taint_t *taints = a_alloc(a, (n ? n : 1) * sizeof(taint_t));
    for (size_t i = 0; i < n; i++) {
        char *colon = strchr(ts[i], ':');
        ck_assert_ptr_nonnull(colon);
        *colon = '\0';
        taints[i].effect = strcmp(colon + 1, "NoExecute") == 0 ? TAINT_EFFECT_NO_EXECUTE
                           : strcmp(colon + 1, "PreferNoSchedule") == 0
                               ? TAINT_EFFECT_PREFER_NO_SCHEDULE
                               : TAINT_EFFECT_NO_SCHEDULE;
        char *eq = strchr(ts[i], '=');
        if (eq) {
            *eq = '\0';
            taints[i].value = eq + 1;
        }
        taints[i].key = ts[i];
    }
    *n_out = n;
    return taints;
}

void fx_flavor(sched_t *s, const char *name, const char *labels, const char *taints)
{
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    flavor_t f;
    memset(&f, 0, sizeof(f));
    f.meta.name = a_strdup(a, name);
    if (labels)
        kv_parse(a, labels, &f.node_labels);
    if (taints)
        f.taints = taints_parse(a, taints, &f.ntaints);
    err_msg_t m;
    ck_assert_msg(sched_flavor_upsert(s, &f, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

void fx_lq(sched_t *s, const char *ns, const char *name, const char *cq, stop_policy_t stop)
{
    local_queue_t lq;
    memset(&lq, 0, sizeof(lq));
    lq.meta.name = (char *)name;
    lq.meta.namespace = (char *)ns;
    lq.cluster_queue = (char *)cq;
    lq.stop_policy = stop;
    err_msg_t m;
    ck_assert_msg(sched_lq_upsert(s, &lq, &m) == ERR_OK, "%s", m.text);
}

void fx_lq_weight(sched_t *s, const char *ns, const char *name, const char *cq, const char *weight)
{
    local_queue_t lq;
    memset(&lq, 0, sizeof(lq));
    lq.meta.name = (char *)name;
    lq.meta.namespace = (char *)ns;
    lq.cluster_queue = (char *)cq;
    if (weight != NULL) {
        lq.has_fair_weight = true;
        lq.fair_weight = q(weight);
    }
    err_msg_t m;
    ck_assert_msg(sched_lq_upsert(s, &lq, &m) == ERR_OK, "%s", m.text);
}

void fx_ns(sched_t *s, const char *name, const char *labels)
{
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    namespace_t ns;
    memset(&ns, 0, sizeof(ns));
    ns.meta.name = a_strdup(a, name);
    if (labels)
        kv_parse(a, labels, &ns.meta.labels);
    err_msg_t m;
    ck_assert_msg(sched_namespace_upsert(s, &ns, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

static void requests_parse(arena_t *a, const char *spec, resource_list_t *out)
{
    kv_list_t kv;
    kv_parse(a, spec, &kv);
    out->items = a_alloc(a, kv.len * sizeof(resource_t));
    out->len = kv.len;
    for (size_t i = 0; i < kv.len; i++) {
        out->items[i].name = kv.items[i].key;
        out->items[i].value = q(kv.items[i].value);
    }
}

void fx_node(sched_t *s, const char *name, const char *labels, const char *taints,
             const char *allocatable)
{
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    kv_list_t l = {0};
    resource_list_t alloc = {0};
    sched_node_spec_t n = {.name = name, .ready = true};
    if (labels) {
        kv_parse(a, labels, &l);
        n.labels = &l;
    }
    if (taints)
        n.taints = taints_parse(a, taints, &n.ntaints);
    if (allocatable) {
        requests_parse(a, allocatable, &alloc);
        n.allocatable = &alloc;
    }
    err_msg_t m;
    ck_assert_msg(sched_node_upsert(s, &n, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

void fx_pod(sched_t *s, const char *key, const char *node, const char *workload,
            const char *requests)
{
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    resource_list_t r = {0};
    requests_parse(a, requests, &r);
    err_msg_t m;
    ck_assert_msg(sched_pod_bound(s, key, node, workload, &r, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

void fx_wl(sched_t *s, const char *key, const char *lq, int32_t prio, int64_t created,
           const char *requests, const fx_wl_opts_t *o)
{
    static const fx_wl_opts_t defaults;
    arena_t *a = calloc(1, sizeof(*a));
    ck_assert_ptr_nonnull(a);
    if (o == NULL)
        o = &defaults;
    workload_t w;
    memset(&w, 0, sizeof(w));
    const char *slash = strchr(key, '/');
    ck_assert_ptr_nonnull(slash);
    w.meta.namespace = a_strndup(a, key, (size_t)(slash - key));
    w.meta.name = a_strdup(a, slash + 1);
    w.queue_name = a_strdup(a, lq);
    if (o->annotations)
        kv_parse(a, o->annotations, &w.meta.annotations);
    w.has_priority = true;
    w.priority = prio;
    w.active = true;
    w.conditions.finished = o->finished;
    if (o->wpc) {
        w.priority_source = PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
        w.priority_class = a_strdup(a, o->wpc);
    }
    if (o->max_exec_seconds) {
        w.has_max_exec_seconds = true;
        w.max_exec_seconds = o->max_exec_seconds;
    }
    char *extra[8];
    size_t nextra = o->podsets ? split(a, o->podsets, ';', extra, 8) : 0;
    w.npod_sets = 1 + nextra;
    w.pod_sets = a_alloc(a, w.npod_sets * sizeof(pod_set_t));
    pod_set_t *ps = &w.pod_sets[0];
    ps->name = a_strdup(a, "main");
    ps->count = o->count ? o->count : 1;
    if (o->min_count) {
        ps->has_min_count = true;
        ps->min_count = o->min_count;
    }
    requests_parse(a, requests, &ps->pod_requests);
    if (o->template_annotations)
        kv_parse(a, o->template_annotations, &ps->template_annotations);
    if (o->node_selector)
        kv_parse(a, o->node_selector, &ps->spec.node_selector);
    if (o->tolerations) {
        char *ts[8];
        size_t n = split(a, o->tolerations, ',', ts, 8);
        ps->spec.tolerations = a_alloc(a, n * sizeof(toleration_t));
        ps->spec.ntolerations = n;
        for (size_t i = 0; i < n; i++) {
            toleration_t *t = &ps->spec.tolerations[i];
            char *colon = strchr(ts[i], ':');
            if (colon) {
                *colon = '\0';
                t->effect = strcmp(colon + 1, "NoExecute") == 0 ? TAINT_EFFECT_NO_EXECUTE
                                                                : TAINT_EFFECT_NO_SCHEDULE;
            }
            char *eq = strchr(ts[i], '=');
            if (eq) {
                *eq = '\0';
                t->value = eq + 1;
                t->op = TOLERATION_OP_EQUAL;
            } else {
                t->op = TOLERATION_OP_EXISTS;
            }
            t->key = ts[i];
        }
    }
    for (size_t i = 0; i < nextra; i++) {
        char *parts[3];
        ck_assert_uint_eq(split(a, extra[i], ':', parts, 3), 3);
        pod_set_t *p = &w.pod_sets[1 + i];
        p->name = parts[0];
        p->count = atoi(parts[1]);
        requests_parse(a, parts[2], &p->pod_requests);
        if (o->extra_annotations)
            kv_parse(a, o->extra_annotations, &p->template_annotations);
    }
    if (o->reclaimable) {
        char *rs[8];
        size_t n = split(a, o->reclaimable, ',', rs, 8);
        w.reclaimable_pods = a_alloc(a, n * sizeof(reclaimable_pod_t));
        w.nreclaimable_pods = n;
        for (size_t i = 0; i < n; i++) {
            char *colon = strchr(rs[i], ':');
            ck_assert_ptr_nonnull(colon);
            *colon = '\0';
            w.reclaimable_pods[i].name = rs[i];
            w.reclaimable_pods[i].count = atoi(colon + 1);
        }
    }
    sched_wl_opts_t wo = {.created = created};
    err_msg_t m;
    ck_assert_msg(sched_workload_upsert(s, &w, &wo, &m) == ERR_OK, "%s", m.text);
    a_free(a);
    free(a);
}

void fx_pair(sched_t *s, const char *a_quotas, const fx_cq_opts_t *a, const char *b_quotas,
             const fx_cq_opts_t *b)
{
    fx_cq(s, "a", a_quotas, a);
    fx_cq(s, "b", b_quotas, b);
    fx_lq(s, "ns", "qa", "a", STOP_POLICY_NONE);
    fx_lq(s, "ns", "qb", "b", STOP_POLICY_NONE);
}

size_t fx_run(sched_t *s, int64_t now, sched_decisions_t *out, bool auto_evict)
{
    size_t start = out->len;
    for (int guard = 0; guard < 100000; guard++) {
        size_t before = out->len;
        err_msg_t m;
        ck_assert_msg(sched_cycle(s, now, out, &m) == ERR_OK, "%s", m.text);
        if (out->len == before)
            return out->len - start;
        if (auto_evict) {
            for (size_t i = before; i < out->len; i++) {
                sched_decision_kind_t k = out->items[i].kind;
                if (k == SCHED_DECISION_PREEMPT || k == SCHED_DECISION_EVICT)
                    ck_assert(sched_evicted(s, out->items[i].workload, now, &m) == ERR_OK);
            }
        }
    }
    ck_abort_msg("cycles did not reach quiescence");
    return 0;
}

int64_t fx_usage_milli(const sched_t *s, const char *cq, const char *flavor, const char *res)
{
    sched_fr_usage_t u;
    if (sched_cq_fr_usage(s, cq, flavor, res, &u, NULL) != ERR_OK)
        return 0;
    return (int64_t)(u.usage.nano / 1000000);
}

int64_t fx_usage(const sched_t *s, const char *cq, const char *flavor, const char *res)
{
    return fx_usage_milli(s, cq, flavor, res) / 1000;
}

int fx_state(const sched_t *s, const char *key)
{
    sched_wl_info_t info;
    if (sched_workload_info(s, key, &info, NULL) != ERR_OK)
        return -1;
    return (int)info.state;
}

const char *fx_flavor_of(const sched_t *s, const char *key, const char *res)
{
    sched_wl_info_t info;
    if (sched_workload_info(s, key, &info, NULL) != ERR_OK || info.admission == NULL ||
        info.admission->nassignments == 0)
        return "";
    const kv_list_t *f = &info.admission->assignments[0].flavors;
    for (size_t i = 0; i < f->len; i++)
        if (strcmp(f->items[i].key, res) == 0)
            return f->items[i].value;
    return "";
}

const char *fx_message(const sched_t *s, const char *key)
{
    sched_wl_info_t info;
    if (sched_workload_info(s, key, &info, NULL) != ERR_OK)
        return "";
    return info.message;
}

sched_reason_t fx_reason(const sched_t *s, const char *key)
{
    sched_wl_info_t info;
    if (sched_workload_info(s, key, &info, NULL) != ERR_OK)
        return SCHED_REASON_NONE;
    return info.reason;
}

int fx_find(const sched_decisions_t *out, sched_decision_kind_t kind, const char *key)
{
    for (size_t i = 0; i < out->len; i++)
        if (out->items[i].kind == kind && strcmp(out->items[i].workload, key) == 0)
            return (int)i;
    return -1;
}
