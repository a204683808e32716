/* sched tree -- interning, the cohort forest and Kueue's hierarchical quota math. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- interning ------------------------------------------------------------------------------ */

int sched__find_res(const sched_t *s, const char *name)
{
    size_t id;
    return util_hmap_get_index(&s->res_map, name, &id) ? (int)id : SCHED__NONE;
}

err_t sched__intern_res(sched_t *s, const char *name, int *out)
{
    int id = sched__find_res(s, name);
    if (id != SCHED__NONE) {
        *out = id;
        return ERR_OK;
    }
    if (util_grow((void **)&s->res_names, &s->cres, s->nres + 1, sizeof(char *)) != ERR_OK)
        return ERR_NOMEM;
    char *copy = strdup(name);
    if (copy == NULL)
        return ERR_NOMEM;
    if (util_hmap_put_index(&s->res_map, copy, s->nres) != ERR_OK) {
        free(copy);
        return ERR_NOMEM;
    }
    s->res_names[s->nres] = copy;
    *out = (int)s->nres++;
    return ERR_OK;
}

err_t sched__intern_flavor(sched_t *s, const char *name, flavor_rec_t **out)
{
    flavor_rec_t *f = util_hmap_get(&s->flavor_map, name);
    if (f != NULL) {
        *out = f;
        return ERR_OK;
    }
    if (util_grow((void **)&s->flavors, &s->cflavors, s->nflavors + 1, sizeof(void *)) != ERR_OK)
        return ERR_NOMEM;
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return ERR_NOMEM;
    f->name = strdup(name);
    if (f->name == NULL || util_hmap_put(&s->flavor_map, f->name, f, NULL) != ERR_OK) {
        free(f->name);
        free(f);
        return ERR_NOMEM;
    }
    f->id = (int)s->nflavors;
    s->flavors[s->nflavors++] = f;
    *out = f;
    return ERR_OK;
}

int sched__find_fr(const sched_t *s, int flavor, int res)
{
    if (flavor < 0 || res < 0 || (size_t)flavor >= s->nflavors)
        return SCHED__NONE;
    const flavor_rec_t *f = s->flavors[flavor];
    if ((size_t)res >= f->nfr_by_res)
        return SCHED__NONE;
    return f->fr_by_res[res];
}

err_t sched__intern_fr(sched_t *s, int flavor, int res, int *out)
{
    int id = sched__find_fr(s, flavor, res);
    if (id != SCHED__NONE) {
        *out = id;
        return ERR_OK;
    }
    flavor_rec_t *f = s->flavors[flavor];
    if ((size_t)res >= f->nfr_by_res) {
        size_t n = (size_t)res + 1;
        int *p = realloc(f->fr_by_res, n * sizeof(int));
        if (p == NULL)
            return ERR_NOMEM;
        for (size_t i = f->nfr_by_res; i < n; i++)
            p[i] = SCHED__NONE;
        f->fr_by_res = p;
        f->nfr_by_res = n;
    }
    if (util_grow((void **)&s->frs, &s->cfr, s->nfr + 1, sizeof(fr_rec_t)) != ERR_OK)
        return ERR_NOMEM;
    s->frs[s->nfr].flavor = flavor;
    s->frs[s->nfr].res = res;
    f->fr_by_res[res] = (int)s->nfr;
    *out = (int)s->nfr++;
    s->tree_dirty = true; /* node arrays grow at the next rebuild */
    return ERR_OK;
}

/* ---- node arrays ------------------------------------------------------------------------------
 */

err_t sched__node_reserve(sched_t *s, node_t *n)
{
    if (n->nfr >= s->nfr)
        return ERR_OK;
    qfr_t *p = realloc(n->fr, s->nfr * sizeof(qfr_t));
    if (p == NULL)
        return ERR_NOMEM;
    memset(p + n->nfr, 0, (s->nfr - n->nfr) * sizeof(qfr_t));
    n->fr = p;
    n->nfr = s->nfr;
    return ERR_OK;
}

void sched__node_fini(node_t *n)
{
    free(n->fr);
    free(n->children);
    n->fr = NULL;
    n->children = NULL;
    n->nfr = n->nchildren = n->cchildren = 0;
}

static const qfr_t zero_qfr;

const qfr_t *sched__qfr(const node_t *n, int fr)
{
    if (fr < 0 || (size_t)fr >= n->nfr)
        return &zero_qfr;
    return &n->fr[fr];
}

qnano_t sched__fr_get_usage(const node_t *n, int fr)
{
    return sched__qfr(n, fr)->usage;
}

node_t *sched__root(node_t *n)
{
    while (n->parent != NULL)
        n = n->parent;
    return n;
}

/* ---- quota math (reference §4.4, Kueue pkg/cache/scheduler/resource_node.go) ------------------
 */

static qnano_t qmax(qnano_t a, qnano_t b)
{
    return a > b ? a : b;
}

static qnano_t qmin(qnano_t a, qnano_t b)
{
    return a < b ? a : b;
}

/* The part of a node's quota it keeps for itself: SubtreeQuota - lendingLimit (0 without one). */
qnano_t sched__local_quota(const node_t *n, int fr)
{
    const qfr_t *q = sched__qfr(n, fr);
    if (!q->has_lending_limit)
        return 0;
    return qmax(0, q->subtree - q->lending_limit);
}

static qnano_t local_available(const node_t *n, int fr)
{
    return qmax(0, sched__local_quota(n, fr) - sched__qfr(n, fr)->usage);
}

static qnano_t available_rec(const node_t *n, int fr)
{
    const qfr_t *q = sched__qfr(n, fr);
    if (n->parent == NULL)
        return q->subtree - q->usage;
    qnano_t local = sched__local_quota(n, fr);
    qnano_t parent_avail = available_rec(n->parent, fr);
    if (q->has_borrowing_limit) {
        qnano_t stored_in_parent = q->subtree - local;
        qnano_t used_in_parent = qmax(0, q->usage - local);
        parent_avail = qmin(stored_in_parent - used_in_parent + q->borrowing_limit, parent_avail);
    }
    return qmax(0, local - q->usage) + parent_avail;
}

qnano_t sched__available(const node_t *n, int fr)
{
    return qmax(0, available_rec(n, fr));
}

qnano_t sched__potential_available(const node_t *n, int fr)
{
    const qfr_t *q = sched__qfr(n, fr);
    if (n->parent == NULL)
        return q->subtree;
    qnano_t v = sched__local_quota(n, fr) + sched__potential_available(n->parent, fr);
    if (q->has_borrowing_limit)
        v = qmin(v, q->subtree + q->borrowing_limit);
    return v;
}

bool sched__borrowing_with(const node_t *n, int fr, qnano_t val)
{
    const qfr_t *q = sched__qfr(n, fr);
    return q->subtree < q->usage + val;
}

bool sched__within_nominal(const node_t *n, int fr)
{
    const qfr_t *q = sched__qfr(n, fr);
    return q->usage <= q->subtree;
}

/* Adding usage to a node stores in its parent whatever exceeds the node's private quota. */
void sched__usage_add(node_t *n, int fr, qnano_t val)
{
    while (n != NULL && val > 0) {
        qnano_t la = local_available(n, fr);
        n->fr[fr].usage += val;
        if (n->parent == NULL || val <= la)
            return;
        val -= la;
        n = n->parent;
    }
}

void sched__usage_remove(node_t *n, int fr, qnano_t val)
{
    while (n != NULL && val > 0) {
        qnano_t stored = n->fr[fr].usage - sched__local_quota(n, fr);
        n->fr[fr].usage -= val;
        if (stored <= 0 || n->parent == NULL)
            return;
        val = qmin(val, stored);
        n = n->parent;
    }
}

int sched__lowest_fit_height(const node_t *cq, int fr, qnano_t val, bool *may_reclaim)
{
    if (!(sched__borrowing_with(cq, fr, val) && cq->parent != NULL)) {
        *may_reclaim = cq->parent != NULL;
        return 0;
    }
    qnano_t remaining = val - local_available(cq, fr);
    const node_t *node = cq->parent;
    for (;;) {
        if (!sched__borrowing_with(node, fr, remaining) || node->parent == NULL) {
            *may_reclaim = node->parent != NULL;
            return node->height;
        }
        remaining -= local_available(node, fr);
        node = node->parent;
    }
}

/* ---- structure ------------------------------------------------------------------------------- */

cohort_rec_t *sched__cohort_get(sched_t *s, const char *name, bool create)
{
    cohort_rec_t *c = util_hmap_get(&s->cohort_map, name);
    if (c != NULL || !create)
        return c;
    if (util_grow((void **)&s->cohorts, &s->ccohorts, s->ncohorts + 1, sizeof(void *)) != ERR_OK)
        return NULL;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->name = strdup(name);
    if (c->name == NULL || util_hmap_put(&s->cohort_map, c->name, c, NULL) != ERR_OK) {
        free(c->name);
        free(c);
        return NULL;
    }
    c->node.name = c->name;
    c->node.weight = 1000000000;
    /* sorted insert */
    size_t i = s->ncohorts;
    while (i > 0 && strcmp(s->cohorts[i - 1]->name, name) > 0) {
        s->cohorts[i] = s->cohorts[i - 1];
        i--;
    }
    s->cohorts[i] = c;
    s->ncohorts++;
    s->tree_dirty = true;
    return c;
}

static void cohort_free(cohort_rec_t *c)
{
    sched__node_fini(&c->node);
    free(c->name);
    free(c->parent_name);
    free(c->quotas);
    free(c);
}

static err_t add_child(node_t *parent, node_t *child)
{
    if (util_grow((void **)&parent->children, &parent->cchildren, parent->nchildren + 1,
                  sizeof(node_t *)) != ERR_OK)
        return ERR_NOMEM;
    parent->children[parent->nchildren++] = child;
    child->parent = parent;
    return ERR_OK;
}

static void apply_decls(node_t *n, const quota_decl_t *d, size_t nd)
{
    for (size_t i = 0; i < n->nfr; i++) {
        qfr_t *q = &n->fr[i];
        q->nominal = q->borrowing_limit = q->lending_limit = 0;
        q->has_borrowing_limit = q->has_lending_limit = q->declared = false;
    }
    for (size_t i = 0; i < nd; i++) {
        qfr_t *q = &n->fr[d[i].fr];
        q->nominal = d[i].nominal;
        q->has_borrowing_limit = d[i].has_bl && n->parent != NULL;
        q->borrowing_limit = d[i].borrowing_limit;
        q->has_lending_limit = d[i].has_ll && n->parent != NULL;
        q->lending_limit = d[i].lending_limit;
        q->declared = true;
    }
}

/* Post-order: heights, SubtreeQuota, and cohort usage from the CQs' usage. */
static void compute_subtree(node_t *n)
{
    if (n->is_cq) {
        n->height = 0;
        for (size_t f = 0; f < n->nfr; f++)
            n->fr[f].subtree = n->fr[f].nominal;
        return;
    }
    n->height = n->nchildren > 0 ? 1 : 0;
    for (size_t f = 0; f < n->nfr; f++) {
        n->fr[f].subtree = n->fr[f].nominal;
        n->fr[f].usage = 0;
    }
    for (size_t i = 0; i < n->nchildren; i++) {
        node_t *c = n->children[i];
        compute_subtree(c);
        if (!c->is_cq && c->height + 1 > n->height)
            n->height = c->height + 1;
        for (size_t f = 0; f < n->nfr; f++) {
            qnano_t local = sched__local_quota(c, (int)f);
            n->fr[f].subtree += c->fr[f].subtree - local;
            qnano_t above = c->fr[f].usage - local;
            if (above > 0)
                n->fr[f].usage += above;
        }
    }
}

static bool flavors_missing(sched_t *s, cq_t *cq, char *buf, size_t cap)
{
    size_t off = 0;
    bool missing = false;
    buf[0] = '\0';
    for (size_t g = 0; g < cq->ngroups; g++) {
        for (size_t k = 0; k < cq->groups[g].nflavors; k++) {
            flavor_rec_t *f = s->flavors[cq->groups[g].flavors[k]];
            if (f->exists)
                continue;
            int n = snprintf(buf + off, cap - off, "%s%s", missing ? "," : "", f->name);
            if (n > 0 && (size_t)n < cap - off)
                off += (size_t)n;
            missing = true;
        }
    }
    return missing;
}

/* The admission checks of cq that are missing (active == false) or inactive (active == true),
 * comma-separated into buf as Kueue lists them (sorted: cq->acs is in name order). */
static bool checks_listed(const sched_t *s, const cq_t *cq, bool inactive, char *buf, size_t cap)
{
    size_t off = 0;
    bool any = false;
    buf[0] = '\0';
    for (size_t i = 0; i < cq->nacs; i++) {
        const check_rec_t *c = util_hmap_get(&s->check_map, cq->acs[i].name);
        if (inactive ? (c == NULL || c->active) : c != NULL)
            continue;
        int n = snprintf(buf + off, cap - off, "%s%s", any ? "," : "", cq->acs[i].name);
        if (n > 0 && (size_t)n < cap - off)
            off += (size_t)n;
        any = true;
    }
    return any;
}

/* The TAS flavors of cq (existing ResourceFlavors with a topologyName) whose Topology does not
 * exist, as Kueue words them ("there is no Topology \"t\" for TAS flavor \"f\"", joined by ", "),
 * in the order of cq's resource groups. */
static bool topologies_missing(const sched_t *s, const cq_t *cq, char *buf, size_t cap)
{
    size_t off = 0;
    bool any = false;
    buf[0] = '\0';
    for (size_t g = 0; g < cq->ngroups; g++) {
        for (size_t k = 0; k < cq->groups[g].nflavors; k++) {
            const flavor_rec_t *f = s->flavors[cq->groups[g].flavors[k]];
            bool seen = false;
            if (!f->exists || f->topology == NULL || sched__topo_find(s, f->topology) != NULL)
                continue;
            for (size_t h = 0; h <= g && !seen; h++)
                for (size_t j = 0; j < (h < g ? cq->groups[h].nflavors : k) && !seen; j++)
                    seen = cq->groups[h].flavors[j] == f->id;
            if (seen)
                continue;
            int n = snprintf(buf + off, cap - off,
                             "%sthere is no Topology \"%s\" for TAS flavor \"%s\"", any ? ", " : "",
                             f->topology, f->name);
            if (n > 0 && (size_t)n < cap - off)
                off += (size_t)n;
            any = true;
        }
    }
    return any;
}

/*
 * Kueue's inactiveReason (pkg/cache/scheduler/clusterqueue.go): terminating first; otherwise the
 * reason of the first problem among stopped, missing flavors, missing admission checks,
 * inactive admission checks and TAS flavors without their Topology, with every problem's message
 * joined ("Can't admit new workloads: is stopped, references missing AdmissionCheck(s): a."). A
 * cohort cycle is ours.
 */
static void cq_status(sched_t *s, cq_t *cq)
{
    char missing[256], checks_missing[256], checks_inactive[256], topos[512], msg[1536];
    free(cq->inactive_msg);
    cq->inactive_msg = NULL;
    cq->active = false;
    if (!cq->exists) {
        cq->reason = SCHED_CQ_NOT_FOUND;
        cq->inactive_msg = util_asprintf("ClusterQueue %s not found", cq->name);
        return;
    }
    if (cq->deleting) {
        cq->reason = SCHED_CQ_TERMINATING;
        cq->inactive_msg = strdup("Can't admit new workloads; clusterQueue is terminating");
        return;
    }
    bool stopped = cq->stop_policy != STOP_POLICY_NONE;
    bool fl = flavors_missing(s, cq, missing, sizeof(missing));
    bool cm = checks_listed(s, cq, false, checks_missing, sizeof(checks_missing));
    bool ci = checks_listed(s, cq, true, checks_inactive, sizeof(checks_inactive));
    bool tn = topologies_missing(s, cq, topos, sizeof(topos));
    if (stopped || fl || cm || ci || tn) {
        cq->reason = stopped ? SCHED_CQ_STOPPED
                     : fl    ? SCHED_CQ_FLAVOR_NOT_FOUND
                     : cm    ? SCHED_CQ_CHECK_NOT_FOUND
                     : ci    ? SCHED_CQ_CHECK_INACTIVE
                             : SCHED_CQ_TOPOLOGY_NOT_FOUND;
        snprintf(msg, sizeof(msg), "Can't admit new workloads: %s%s%s%s%s%s%s%s%s%s%s%s.",
                 stopped ? "is stopped" : "", stopped && (fl || cm || ci || tn) ? ", " : "",
                 fl ? "references missing ResourceFlavor(s): " : "", fl ? missing : "",
                 fl && (cm || ci || tn) ? ", " : "",
                 cm ? "references missing AdmissionCheck(s): " : "", cm ? checks_missing : "",
                 cm && (ci || tn) ? ", " : "", ci ? "references inactive AdmissionCheck(s): " : "",
                 ci ? checks_inactive : "", ci && tn ? ", " : "", tn ? topos : "");
        cq->inactive_msg = strdup(msg);
    } else if (cq->node.disabled) {
        cq->reason = SCHED_CQ_COHORT_CYCLE;
        cq->inactive_msg = util_asprintf("Can't admit new workloads: cohort %s is part of a cycle.",
                                         cq->cohort_name);
    } else {
        cq->reason = SCHED_CQ_READY;
        cq->active = true;
    }
}

/*
 * Rebuild the forest from the object records. Called after any object change that may alter
 * structure or quotas (never per admission). Usage of ClusterQueues is kept; cohort usage is
 * recomputed from it, which is exactly what the incremental updates maintain.
 */
err_t sched__tree_rebuild(sched_t *s)
{
    /* 1. make sure every referenced cohort name has a record (implicit cohorts), then count
     * references; records that are neither objects nor referenced are dropped */
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        cq->in_tree = cq->exists || cq->admitted.len > 0;
        cq->rebuild_cohort = NULL;
        if (cq->in_tree && cq->cohort_name != NULL) {
            /* Records are stable (the array holds pointers) and a named one is never dropped
             * below, so the later passes reuse this lookup. */
            cq->rebuild_cohort = sched__cohort_get(s, cq->cohort_name, true);
            if (cq->rebuild_cohort == NULL)
                return ERR_NOMEM;
        }
    }
    bool created;
    do {
        created = false;
        for (size_t i = 0; i < s->ncohorts && !created; i++) {
            cohort_rec_t *c = s->cohorts[i];
            if (c->exists && c->parent_name != NULL &&
                sched__cohort_get(s, c->parent_name, false) == NULL) {
                if (sched__cohort_get(s, c->parent_name, true) == NULL)
                    return ERR_NOMEM;
                created = true; /* the sorted array shifted: scan again */
            }
        }
    } while (created);
    for (size_t i = 0; i < s->ncohorts; i++)
        s->cohorts[i]->refs = s->cohorts[i]->exists ? 1 : 0;
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        if (cq->rebuild_cohort != NULL)
            cq->rebuild_cohort->refs++;
    }
    for (size_t i = 0; i < s->ncohorts; i++) {
        cohort_rec_t *c = s->cohorts[i];
        if (c->exists && c->parent_name != NULL)
            sched__cohort_get(s, c->parent_name, false)->refs++;
    }
    /* 2. drop implicit cohorts nobody names */
    size_t w = 0;
    for (size_t i = 0; i < s->ncohorts; i++) {
        cohort_rec_t *c = s->cohorts[i];
        if (c->refs == 0) {
            util_hmap_del(&s->cohort_map, c->name);
            cohort_free(c);
            continue;
        }
        s->cohorts[w++] = c;
    }
    s->ncohorts = w;
    /* 3. reset links and arrays */
    for (size_t i = 0; i < s->ncohorts; i++) {
        node_t *n = &s->cohorts[i]->node;
        n->parent = NULL;
        n->nchildren = 0;
        n->disabled = false;
        if (sched__node_reserve(s, n) != ERR_OK)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->ncqs; i++) {
        node_t *n = &s->cqs[i]->node;
        n->parent = NULL;
        n->nchildren = 0;
        n->disabled = false;
        if (sched__node_reserve(s, n) != ERR_OK)
            return ERR_NOMEM;
    }
    /* 4. cohort parents, with cycle detection: a cohort whose parent chain does not reach a
     * root within ncohorts steps is in or under a cycle and is disabled, with its members. */
    for (size_t i = 0; i < s->ncohorts; i++) {
        cohort_rec_t *c = s->cohorts[i];
        if (!c->exists || c->parent_name == NULL)
            continue;
        const cohort_rec_t *cur = c;
        size_t steps = 0;
        while (cur != NULL && cur->exists && cur->parent_name != NULL && steps <= s->ncohorts) {
            cur = sched__cohort_get(s, cur->parent_name, false);
            steps++;
        }
        if (steps > s->ncohorts)
            c->node.disabled = true;
    }
    for (size_t i = 0; i < s->ncohorts; i++) {
        cohort_rec_t *c = s->cohorts[i];
        if (c->node.disabled || !c->exists || c->parent_name == NULL)
            continue;
        if (add_child(&sched__cohort_get(s, c->parent_name, false)->node, &c->node) != ERR_OK)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        if (cq->rebuild_cohort == NULL)
            continue;
        cohort_rec_t *c = cq->rebuild_cohort;
        if (add_child(&c->node, &cq->node) != ERR_OK)
            return ERR_NOMEM;
        cq->node.disabled = c->node.disabled;
    }
    /* 5. quotas, heights, subtree quotas and cohort usage, root by root */
    for (size_t i = 0; i < s->ncohorts; i++)
        apply_decls(&s->cohorts[i]->node, s->cohorts[i]->quotas, s->cohorts[i]->nquotas);
    for (size_t i = 0; i < s->ncqs; i++)
        apply_decls(&s->cqs[i]->node, s->cqs[i]->quotas, s->cqs[i]->nquotas);
    s->nroots = 0;
    for (size_t i = 0; i < s->ncohorts; i++) {
        node_t *n = &s->cohorts[i]->node;
        if (n->parent != NULL)
            continue;
        compute_subtree(n);
        if (util_grow((void **)&s->roots, &s->croots, s->nroots + 1, sizeof(void *)) != ERR_OK)
            return ERR_NOMEM;
        s->roots[s->nroots++] = n;
    }
    for (size_t i = 0; i < s->ncqs; i++) {
        cq_t *cq = s->cqs[i];
        if (cq->node.parent == NULL)
            compute_subtree(&cq->node);
        cq_status(s, cq);
        cq->alloc_gen++;
    }
    s->tree_dirty = false;
    s->nrequeue = 0;
    s->requeue_all = true;
    return ERR_OK;
}

/* Something freed capacity in n's tree: its parked workloads get another chance. */
void sched__mark_requeue(sched_t *s, node_t *n)
{
    node_t *root = sched__root(n);
    for (size_t i = 0; i < s->nrequeue; i++)
        if (s->requeue_roots[i] == root)
            return;
    if (util_grow((void **)&s->requeue_roots, &s->crequeue, s->nrequeue + 1, sizeof(void *)) !=
        ERR_OK) {
        s->requeue_all = true; /* degrade to a full requeue rather than lose the event */
        return;
    }
    s->requeue_roots[s->nrequeue++] = root;
}
