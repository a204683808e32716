/* verify -- an invariant checker for a run's history, independent of the engine. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "verify/verify.h"

#include "model/quantity.h"
#include "util/grow.h"
#include "util/hmap.h"
#include "util/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64 /* deeper cohort chains (or a loop) count as their first 64 levels */

/* A quota of a node for one (flavor, resource). */
typedef struct vquota_s {
    char *flavor, *res;
    qnano_t nominal;
    bool has_bl, has_ll;
    qnano_t bl, ll;
} vquota_t;

/* What is held of one (flavor, resource). */
typedef struct vuse_s {
    char *flavor, *res;
    qnano_t v;
} vuse_t;

/* subtree() and guaranteed() of a node for one (flavor, resource), kept until the structure
 * changes: they depend on quotas only, and the cohort sums ask for them on every admission. */
typedef struct vcache_s {
    char *flavor, *res; /* owned */
    qnano_t subtree, guaranteed;
} vcache_t;

typedef struct vnode_s vnode_t;
struct vnode_s {
    char *name;
    bool is_cq;
    char *parent; /* cohort name, NULL = a root */
    vquota_t *q;
    size_t nq;
    vuse_t *use; /* ClusterQueues: what their workloads hold */
    size_t nuse, capuse;
    vnode_t **children; /* rebuilt when the structure changes */
    size_t nchildren, capchildren;
    vnode_t *up; /* resolved parent */
    vcache_t *cache;
    size_t ncache, capcache;
};

typedef struct vhold_s {
    vnode_t *cq; /* NULL: holds nothing */
    vuse_t *use; /* owned names */
    size_t nuse;
    bool finished;
} vhold_t;

struct verify_s {
    util_hmap_t by_name; /* "cq:<name>" / "co:<name>" -> vnode_t */
    vnode_t **nodes;
    size_t nnodes, capnodes;
    util_hmap_t wls; /* key -> vhold_t */
    bool dirty;      /* children and parents to resolve again */
    uint64_t admissions;
};

verify_t *verify_new(void)
{
    verify_t *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return NULL;
    util_hmap_init(&v->by_name, 1);
    util_hmap_init(&v->wls, 2);
    return v;
}

static void uses_free(vuse_t *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(u[i].flavor);
        free(u[i].res);
    }
    free(u);
}

static void cache_clear(vnode_t *n)
{
    for (size_t i = 0; i < n->ncache; i++) {
        free(n->cache[i].flavor);
        free(n->cache[i].res);
    }
    n->ncache = 0;
}

static void quotas_free(vnode_t *n)
{
    for (size_t i = 0; i < n->nq; i++) {
        free(n->q[i].flavor);
        free(n->q[i].res);
    }
    free(n->q);
    n->q = NULL;
    n->nq = 0;
}

void verify_free(verify_t *v)
{
    const char *key;
    void *val;

    if (v == NULL)
        return;
    for (size_t i = 0; i < v->nnodes; i++) {
        vnode_t *n = v->nodes[i];
        quotas_free(n);
        uses_free(n->use, n->nuse);
        free(n->children);
        cache_clear(n);
        free(n->cache);
        free(n->name);
        free(n->parent);
        free(n);
    }
    free(v->nodes);
    for (size_t pos = 0; util_hmap_next(&v->wls, &pos, &key, &val);) {
        vhold_t *h = val;
        uses_free(h->use, h->nuse);
        free(h);
    }
    util_hmap_fini(&v->wls);
    util_hmap_fini(&v->by_name);
    free(v);
}

/* The node `name` (a ClusterQueue when `cq`), created empty when absent; NULL on OOM. */
static vnode_t *node_get(verify_t *v, const char *name, bool cq)
{
    char key[512];
    vnode_t *n;

    snprintf(key, sizeof(key), "%s:%s", cq ? "cq" : "co", name);
    n = util_hmap_get(&v->by_name, key);
    if (n != NULL)
        return n;
    n = calloc(1, sizeof(*n));
    if (n == NULL || (n->name = strdup(name)) == NULL ||
        util_grow((void **)&v->nodes, &v->capnodes, v->nnodes + 1, sizeof(vnode_t *)) != ERR_OK ||
        util_hmap_put(&v->by_name, key, n, NULL) != ERR_OK) {
        if (n != NULL)
            free(n->name);
        free(n);
        return NULL;
    }
    n->is_cq = cq;
    v->nodes[v->nnodes++] = n;
    v->dirty = true;
    return n;
}

/* Replace n's quotas and parent with those of `groups` and `parent`. */
static err_t node_set(verify_t *v, vnode_t *n, const resource_group_t *groups, size_t ngroups,
                      const char *parent)
{
    size_t total = 0, k = 0;
    char *p = NULL;
    vquota_t *q;

    for (size_t g = 0; g < ngroups; g++)
        for (size_t f = 0; f < groups[g].nflavors; f++)
            total += groups[g].flavors[f].nresources;
    q = calloc(total ? total : 1, sizeof(*q));
    if (q == NULL || (parent != NULL && (p = strdup(parent)) == NULL))
        goto nomem;
    for (size_t g = 0; g < ngroups; g++)
        for (size_t f = 0; f < groups[g].nflavors; f++)
            for (size_t r = 0; r < groups[g].flavors[f].nresources; r++, k++) {
                const resource_quota_t *rq = &groups[g].flavors[f].resources[r];
                q[k] = (vquota_t){.nominal = rq->nominal.nano,
                                  .has_bl = rq->has_borrowing_limit,
                                  .bl = rq->borrowing_limit.nano,
                                  .has_ll = rq->has_lending_limit,
                                  .ll = rq->lending_limit.nano};
                q[k].flavor = strdup(groups[g].flavors[f].name);
                q[k].res = strdup(rq->name);
                if (q[k].flavor == NULL || q[k].res == NULL) {
                    k++;
                    goto nomem;
                }
            }
    quotas_free(n);
    free(n->parent);
    n->q = q;
    n->nq = total;
    n->parent = p;
    v->dirty = true;
    return ERR_OK;
nomem:
    for (size_t i = 0; i < k; i++) {
        free(q[i].flavor);
        free(q[i].res);
    }
    free(q);
    free(p);
    return ERR_NOMEM;
}

err_t verify_cluster_queue(verify_t *v, const cluster_queue_t *cq, err_msg_t *msg)
{
    vnode_t *n = node_get(v, cq->meta.name, true);
    if (n == NULL || node_set(v, n, cq->groups, cq->ngroups, cq->cohort) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "verify: ClusterQueue %s: out of memory", cq->meta.name);
    return ERR_OK;
}

err_t verify_cohort(verify_t *v, const cohort_t *co, err_msg_t *msg)
{
    vnode_t *n = node_get(v, co->meta.name, false);
    if (n == NULL || node_set(v, n, co->groups, co->ngroups, co->parent) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "verify: Cohort %s: out of memory", co->meta.name);
    return ERR_OK;
}

/* Resolve parents (creating the implicit cohorts ClusterQueues name) and children lists. */
static err_t resolve(verify_t *v)
{
    if (!v->dirty)
        return ERR_OK;
    for (size_t i = 0; i < v->nnodes; i++) {
        v->nodes[i]->nchildren = 0;
        cache_clear(v->nodes[i]);
    }
    for (size_t i = 0; i < v->nnodes; i++) { /* nnodes may grow: implicit cohorts */
        vnode_t *n = v->nodes[i], *p;
        n->up = NULL;
        if (n->parent == NULL)
            continue;
        p = node_get(v, n->parent, false);
        if (p == NULL || util_grow((void **)&p->children, &p->capchildren, p->nchildren + 1,
                                   sizeof(vnode_t *)) != ERR_OK)
            return ERR_NOMEM;
        p->children[p->nchildren++] = n;
        n->up = p;
    }
    v->dirty = false;
    return ERR_OK;
}

static const vquota_t *quota_of(const vnode_t *n, const char *fl, const char *res)
{
    for (size_t i = 0; i < n->nq; i++)
        if (strcmp(n->q[i].flavor, fl) == 0 && strcmp(n->q[i].res, res) == 0)
            return &n->q[i];
    return NULL;
}

static qnano_t subtree(vnode_t *n, const char *fl, const char *res, int depth);

static qnano_t guaranteed_of(vnode_t *n, const char *fl, const char *res, qnano_t sub)
{
    const vquota_t *q = quota_of(n, fl, res);
    if (q == NULL || !q->has_ll)
        return 0;
    return sub > q->ll ? sub - q->ll : 0;
}

/* The cache entry of (fl, res) in `n`, computed when missing; NULL when memory ran out (the
 * callers then compute without it). */
static const vcache_t *cached(vnode_t *n, const char *fl, const char *res, int depth)
{
    qnano_t s;
    for (size_t i = 0; i < n->ncache; i++)
        if (strcmp(n->cache[i].flavor, fl) == 0 && strcmp(n->cache[i].res, res) == 0)
            return &n->cache[i];
    s = subtree(n, fl, res, depth);
    if (util_grow((void **)&n->cache, &n->capcache, n->ncache + 1, sizeof(vcache_t)) != ERR_OK)
        return NULL;
    n->cache[n->ncache] = (vcache_t){strdup(fl), strdup(res), s, guaranteed_of(n, fl, res, s)};
    if (n->cache[n->ncache].flavor == NULL || n->cache[n->ncache].res == NULL) {
        free(n->cache[n->ncache].flavor);
        free(n->cache[n->ncache].res);
        return NULL;
    }
    return &n->cache[n->ncache++];
}

static qnano_t guaranteed(vnode_t *n, const char *fl, const char *res, int depth)
{
    const vcache_t *c = cached(n, fl, res, depth);
    return c != NULL ? c->guaranteed : guaranteed_of(n, fl, res, subtree(n, fl, res, depth));
}

static qnano_t subtree(vnode_t *n, const char *fl, const char *res, int depth)
{
    const vquota_t *q = quota_of(n, fl, res);
    qnano_t s = q != NULL ? q->nominal : 0;

    if (depth >= MAX_DEPTH)
        return s;
    for (size_t i = 0; i < n->nchildren; i++) {
        const vcache_t *c = cached(n->children[i], fl, res, depth + 1);
        s += c != NULL ? c->subtree - c->guaranteed
                       : subtree(n->children[i], fl, res, depth + 1) -
                             guaranteed(n->children[i], fl, res, depth + 1);
    }
    return s;
}

static qnano_t usage(vnode_t *n, const char *fl, const char *res, int depth)
{
    qnano_t u = 0;

    if (n->is_cq) {
        for (size_t i = 0; i < n->nuse; i++)
            if (strcmp(n->use[i].flavor, fl) == 0 && strcmp(n->use[i].res, res) == 0)
                u += n->use[i].v;
        return u;
    }
    if (depth >= MAX_DEPTH)
        return 0;
    for (size_t i = 0; i < n->nchildren; i++) {
        qnano_t c = usage(n->children[i], fl, res, depth + 1) -
                    guaranteed(n->children[i], fl, res, depth + 1);
        if (c > 0)
            u += c;
    }
    return u;
}

/* Add (sign +1) or take away (-1) `use` from ClusterQueue node `cq`. */
static err_t cq_add(vnode_t *cq, const vuse_t *use, size_t n, int sign)
{
    for (size_t k = 0; k < n; k++) {
        size_t i;
        for (i = 0; i < cq->nuse; i++)
            if (strcmp(cq->use[i].flavor, use[k].flavor) == 0 &&
                strcmp(cq->use[i].res, use[k].res) == 0)
                break;
        if (i == cq->nuse) {
            if (util_grow((void **)&cq->use, &cq->capuse, cq->nuse + 1, sizeof(vuse_t)) != ERR_OK)
                return ERR_NOMEM;
            cq->use[i] = (vuse_t){strdup(use[k].flavor), strdup(use[k].res), 0};
            if (cq->use[i].flavor == NULL || cq->use[i].res == NULL) {
                free(cq->use[i].flavor);
                free(cq->use[i].res);
                return ERR_NOMEM;
            }
            cq->nuse++;
        }
        cq->use[i].v += sign * use[k].v;
    }
    return ERR_OK;
}

/* `v`, the usage of admitted pod set `p` of `wl` (NULL: none), scaled to the pods its spec still
 * needs after status.reclaimablePods when fewer than admitted (Kueue's
 * totalRequestsFromAdmission). */
static qnano_t after_reclaim(const workload_t *wl, const pod_set_assignment_t *p, qnano_t v)
{
    int32_t spec = -1, reclaim = 0, admitted, after;

    for (size_t i = 0; wl != NULL && p->name != NULL && i < wl->npod_sets; i++)
        if (wl->pod_sets[i].name != NULL && strcmp(wl->pod_sets[i].name, p->name) == 0)
            spec = wl->pod_sets[i].count;
    for (size_t i = 0; wl != NULL && p->name != NULL && i < wl->nreclaimable_pods; i++)
        if (wl->reclaimable_pods[i].name != NULL &&
            strcmp(wl->reclaimable_pods[i].name, p->name) == 0)
            reclaim = wl->reclaimable_pods[i].count;
    if (spec < 0 || reclaim <= 0)
        return v;
    after = reclaim < spec ? spec - reclaim : 0;
    admitted = p->has_count ? p->count : spec;
    return admitted > 0 && after < admitted ? v / admitted * after : v;
}

/* An admission's usage summed per (flavor, resource), names copied; resources without a flavor
 * hold no quota and are left out. With `wl`, reclaimable pods' usage is left out too. */
static err_t admission_use(const admission_t *adm, const workload_t *wl, vuse_t **out, size_t *nout)
{
    size_t n = 0, cap = 0;
    vuse_t *u = NULL;

    for (size_t a = 0; a < adm->nassignments; a++) {
        const pod_set_assignment_t *p = &adm->assignments[a];
        for (size_t r = 0; r < p->usage.len; r++) {
            const char *res = p->usage.items[r].name, *fl = kv_list_get(&p->flavors, res);
            size_t i;
            if (fl == NULL)
                continue;
            for (i = 0; i < n; i++)
                if (strcmp(u[i].flavor, fl) == 0 && strcmp(u[i].res, res) == 0)
                    break;
            if (i == n) {
                if (util_grow((void **)&u, &cap, n + 1, sizeof(vuse_t)) != ERR_OK)
                    goto nomem;
                u[n] = (vuse_t){strdup(fl), strdup(res), 0};
                n++;
                if (u[i].flavor == NULL || u[i].res == NULL)
                    goto nomem;
            }
            u[i].v += after_reclaim(wl, p, p->usage.items[r].value.nano);
        }
    }
    *out = u;
    *nout = n;
    return ERR_OK;
nomem:
    uses_free(u, n);
    return ERR_NOMEM;
}

static const char *fmt_q(qnano_t v, char *buf)
{
    return quantity_format((quantity_t){v, QUANTITY_DECIMAL_SI}, buf);
}

/* "t=S.MMMs: " for messages, or "" when `t_ms` < 0 (the caller names the instant itself). */
static const char *when(int64_t t_ms, char *buf, size_t n)
{
    if (t_ms < 0)
        return "";
    snprintf(buf, n, "t=%lld.%03llds: ", (long long)(t_ms / 1000), (long long)(t_ms % 1000));
    return buf;
}

/* The first node on cq's path to its root that the admission (already added) pushed above its
 * limit, described into `msg`; ERR_OK when none. `before` holds each path node's usage of
 * (fl, res) before the admission. */
static err_t check_path(vnode_t *cq, const char *fl, const char *res, const qnano_t *before,
                        int64_t t_ms, const char *key, err_msg_t *msg)
{
    int d = 0;
    for (vnode_t *n = cq; n != NULL && d < MAX_DEPTH; n = n->up, d++) {
        const vquota_t *q = quota_of(n, fl, res);
        const vcache_t *c = cached(n, fl, res, 0);
        qnano_t u = usage(n, fl, res, 0), s = c ? c->subtree : subtree(n, fl, res, 0), limit;
        char b1[QUANTITY_STR_MAX], b2[QUANTITY_STR_MAX], at[48];
        const char *rule;
        if (q != NULL && q->has_bl && n->up != NULL) {
            limit = s + q->bl;
            rule = "subtree quota + borrowingLimit";
        } else if (n->up == NULL) {
            limit = s;
            rule = n->is_cq && cq->parent == NULL ? "nominalQuota" : "the cohort tree's quota";
        } else {
            continue;
        }
        if (u > limit && u > before[d])
            return err_set(msg, ERR_INVALID,
                           "%sadmitting Workload %s into ClusterQueue %s puts %s %s %s/%s at %s, "
                           "above %s (%s)",
                           when(t_ms, at, sizeof(at)), key, cq->name,
                           n->is_cq ? "ClusterQueue" : "Cohort", n->name, fl, res, fmt_q(u, b1),
                           rule, fmt_q(limit, b2));
    }
    return ERR_OK;
}

err_t verify_admit(verify_t *v, int64_t t_ms, const char *key, const admission_t *adm,
                   err_msg_t *msg)
{
    vhold_t *h = util_hmap_get(&v->wls, key);
    vnode_t *cq;
    vuse_t *use = NULL;
    size_t nuse = 0;
    qnano_t before[MAX_DEPTH];
    char at[48];
    err_t rc = ERR_OK;

    if (h != NULL && h->finished)
        return err_set(msg, ERR_INVALID, "%sWorkload %s admitted after it finished",
                       when(t_ms, at, sizeof(at)), key);
    if (h != NULL && h->cq != NULL)
        return err_set(msg, ERR_INVALID,
                       "%sWorkload %s admitted into ClusterQueue %s while it still holds quota in "
                       "%s (no eviction in between)",
                       when(t_ms, at, sizeof(at)), key,
                       adm->cluster_queue ? adm->cluster_queue : "", h->cq->name);
    cq = node_get(v, adm->cluster_queue ? adm->cluster_queue : "", true);
    if (cq == NULL || resolve(v) != ERR_OK || admission_use(adm, NULL, &use, &nuse) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "verify: Workload %s: out of memory", key);
    if (h == NULL) {
        h = calloc(1, sizeof(*h));
        if (h == NULL || util_hmap_put(&v->wls, key, h, NULL) != ERR_OK) {
            free(h);
            uses_free(use, nuse);
            return err_set(msg, ERR_NOMEM, "verify: Workload %s: out of memory", key);
        }
    }
    for (size_t k = 0; k < nuse && rc == ERR_OK; k++) {
        int d = 0;
        for (vnode_t *n = cq; n != NULL && d < MAX_DEPTH; n = n->up, d++)
            before[d] = usage(n, use[k].flavor, use[k].res, 0);
        if (cq_add(cq, &use[k], 1, +1) != ERR_OK)
            rc = err_set(msg, ERR_NOMEM, "verify: Workload %s: out of memory", key);
        else if ((rc = check_path(cq, use[k].flavor, use[k].res, before, t_ms, key, msg)) != ERR_OK)
            k++; /* this one was added too: take it back below */
        if (rc != ERR_OK) {
            cq_add(cq, use, k, -1); /* a refused admission is not recorded */
            uses_free(use, nuse);
            return rc;
        }
    }
    h->cq = cq;
    h->use = use;
    h->nuse = nuse;
    v->admissions++;
    return ERR_OK;
}

err_t verify_release(verify_t *v, int64_t t_ms, const char *key, bool finished, err_msg_t *msg)
{
    vhold_t *h = util_hmap_get(&v->wls, key);

    (void)t_ms;
    if (h == NULL) {
        if (!finished)
            return ERR_OK;
        h = calloc(1, sizeof(*h));
        if (h == NULL || util_hmap_put(&v->wls, key, h, NULL) != ERR_OK) {
            free(h);
            return err_set(msg, ERR_NOMEM, "verify: Workload %s: out of memory", key);
        }
    }
    if (h->cq != NULL)
        cq_add(h->cq, h->use, h->nuse, -1); /* the entries exist: cannot fail */
    uses_free(h->use, h->nuse);
    h->cq = NULL;
    h->use = NULL;
    h->nuse = 0;
    h->finished = h->finished || finished;
    return ERR_OK;
}

err_t verify_reclaim(verify_t *v, const char *key, const workload_t *wl, err_msg_t *msg)
{
    vhold_t *h = util_hmap_get(&v->wls, key);
    vuse_t *use = NULL;
    size_t nuse = 0;

    if (h == NULL || h->cq == NULL || wl->admission == NULL || wl->nreclaimable_pods == 0)
        return ERR_OK;
    if (admission_use(wl->admission, wl, &use, &nuse) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "verify: Workload %s: out of memory", key);
    /* Only ever less: each held (flavor, resource) goes down to its new value (entries of the
     * new use are a subset of the held ones: the same admission). */
    for (size_t i = 0; i < h->nuse; i++) {
        qnano_t now = 0;
        for (size_t k = 0; k < nuse; k++)
            if (strcmp(use[k].flavor, h->use[i].flavor) == 0 &&
                strcmp(use[k].res, h->use[i].res) == 0)
                now = use[k].v;
        if (now < h->use[i].v) {
            vuse_t d = {h->use[i].flavor, h->use[i].res, h->use[i].v - now};
            cq_add(h->cq, &d, 1, -1); /* the entry exists: cannot fail */
            h->use[i].v = now;
        }
    }
    uses_free(use, nuse);
    return ERR_OK;
}

bool verify_holds(const verify_t *v, const char *key)
{
    const vhold_t *h = util_hmap_get(&v->wls, key);
    return h != NULL && h->cq != NULL;
}

uint64_t verify_admissions(const verify_t *v)
{
    return v->admissions;
}
