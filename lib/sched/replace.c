/* sched replace -- failed-node replacement for topology-aware workloads (Kueue's node hot swap). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched.h"
#include "sched/sched_int.h"
#include "sched/tas.h"
#include "util/str.h"

#include <stdlib.h>
#include <string.h>

/*
 * Kueue (feature gates TASFailedNodeReplacement, TASReplaceNodeOnPodTermination and
 * TASFailedNodeReplacementFailFast, beta and on since 0.14; site concepts/topology_aware_scheduling
 * "Hot swap support") keeps a TAS workload running when one node of its topology assignment
 * fails: its node controller records the node in the Workload's status.unhealthyNodes, and the
 * scheduler's second pass finds new nodes for the pods that were there, in the same domain the
 * pod set requires, keeping the rest of the assignment (tas_flavor_snapshot.go
 * findReplacementAssignment). No replacement, or a second failed node, evicts the workload
 * (reason NodeFailures).
 *
 * Here the driver reports the failure (sched_workload_node_failed); the next sched_cycle() makes
 * the second pass for every workload so marked, before it nominates, and answers with a REPLACE
 * decision (the admission with its new topologyAssignment) or an EVICT one. The replacement reads
 * the nodes as admission does, with what this workload already uses counted (its pods on the
 * nodes it keeps), and the pods of an earlier pod set's replacement counted for the later ones
 * (Kueue's assumedUsage): they are placed as each pod set is replaced, and taken back when the
 * plan fails.
 */

void sched__wl_unhealthy_clear(wl_t *w)
{
    wl_rare_t *r = w->rare;

    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nunhealthy; i++)
        free(r->unhealthy[i]);
    free(r->unhealthy);
    r->unhealthy = NULL;
    r->nunhealthy = 0;
    sched__wl_rare_trim(w);
}

err_t sched__wl_unhealthy_clone(wl_rare_t *c, const wl_rare_t *s)
{
    c->unhealthy = NULL;
    c->nunhealthy = 0;
    if (s->nunhealthy == 0)
        return ERR_OK;
    if ((c->unhealthy = calloc(s->nunhealthy, sizeof(char *))) == NULL)
        return ERR_NOMEM;
    for (; c->nunhealthy < s->nunhealthy; c->nunhealthy++)
        if ((c->unhealthy[c->nunhealthy] = strdup(s->unhealthy[c->nunhealthy])) == NULL)
            return ERR_NOMEM;
    return ERR_OK;
}

void sched__repl_free(sched_t *s)
{
    for (size_t i = 0; i < s->nrepl; i++)
        free(s->repl[i]);
    free(s->repl);
    s->repl = NULL;
    s->nrepl = s->crepl = 0;
}

err_t sched__repl_clone(sched_t *d, const sched_t *s)
{
    if (s->nrepl == 0)
        return ERR_OK;
    if ((d->repl = calloc(s->nrepl, sizeof(char *))) == NULL)
        return ERR_NOMEM;
    d->crepl = s->nrepl;
    for (; d->nrepl < s->nrepl; d->nrepl++)
        if ((d->repl[d->nrepl] = strdup(s->repl[d->nrepl])) == NULL)
            return ERR_NOMEM;
    return ERR_OK;
}

/* Is the lowest level of `ta` the node (kubernetes.io/hostname), and which domain is `node`? */
static bool domain_of_node(const topology_assignment_t *ta, const char *node, size_t *d)
{
    size_t nl = ta->nlevels;

    if (nl == 0 || strcmp(ta->levels[nl - 1], TAS_HOSTNAME_LABEL) != 0)
        return false;
    for (size_t k = 0; k < ta->ndomains; k++) {
        if (strcmp(ta->values[k * nl + nl - 1], node) == 0) {
            *d = k;
            return true;
        }
    }
    return false;
}

err_t sched_workload_node_failed(sched_t *s, const char *key, const char *node, err_msg_t *msg)
{
    wl_t *w = key != NULL ? util_hmap_get(&s->wl_map, key) : NULL;
    bool named = false;
    char *copy = NULL;
    wl_rare_t *r;
    size_t d;

    if (w == NULL)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s not found", key ? key : "");
    if (node == NULL || node[0] == '\0')
        return err_set(msg, ERR_INVALID, "Workload %s: failed node: no name", key);
    if (w->state != SCHED_WL_ADMITTED || w->awaiting_checks)
        return err_set(msg, ERR_INVALID, "Workload %s is not admitted", key);
    for (size_t i = 0; i < w->adm.nassignments && !named; i++)
        named = w->adm.assignments[i].topology != NULL &&
                domain_of_node(w->adm.assignments[i].topology, node, &d);
    if (!named)
        return err_set(msg, ERR_NOT_FOUND, "Workload %s: node %s is not in its topology assignment",
                       key, node);
    for (size_t i = 0; i < sched__wl_nunhealthy(w); i++)
        if (strcmp(w->rare->unhealthy[i], node) == 0)
            return ERR_OK;
    r = sched__wl_rare(w);
    if (r == NULL || (copy = strdup(node)) == NULL ||
        util_grow((void **)&r->unhealthy, &(size_t){r->nunhealthy}, r->nunhealthy + 1,
                  sizeof(char *)) != ERR_OK)
        goto nomem;
    r->unhealthy[r->nunhealthy++] = copy;
    copy = NULL;
    if (r->nunhealthy == 1) {
        for (size_t i = 0; i < s->nrepl; i++)
            if (strcmp(s->repl[i], key) == 0)
                return ERR_OK;
        if ((copy = strdup(key)) == NULL ||
            util_grow((void **)&s->repl, &s->crepl, s->nrepl + 1, sizeof(char *)) != ERR_OK)
            goto nomem;
        s->repl[s->nrepl++] = copy;
    }
    return ERR_OK;
nomem:
    free(copy);
    sched__wl_rare_trim(w);
    return err_set(msg, ERR_NOMEM, "Workload %s: out of memory", key);
}

bool sched_workload_on_node(const sched_t *s, const char *key, const char *node, size_t *bound)
{
    const wl_t *w = key != NULL ? util_hmap_get(&s->wl_map, key) : NULL;
    bool named = false;
    size_t d;

    *bound = 0;
    if (w == NULL || w->state != SCHED_WL_ADMITTED || w->awaiting_checks || node == NULL)
        return false;
    for (size_t i = 0; i < w->adm.nassignments && !named; i++)
        named = w->adm.assignments[i].topology != NULL &&
                domain_of_node(w->adm.assignments[i].topology, node, &d);
    for (size_t i = 0; named && s->nodes != NULL && i < s->nodes->npods; i++) {
        const spod_t *p = s->nodes->pods[i];
        if (p->wl != NULL && strcmp(p->wl, key) == 0 && strcmp(p->node->name, node) == 0)
            (*bound)++;
    }
    return named;
}

typedef struct on_node_s {
    const sched_t *s;
    const char *node;
    bool pods_gone;
    char **keys; /* owned */
    size_t n, cap;
    bool oom;
} on_node_t;

static bool failed_on(const sched_wl_info_t *info, void *ud)
{
    on_node_t *o = ud;
    size_t bound;

    if (!sched_workload_on_node(o->s, info->key, o->node, &bound) || (o->pods_gone && bound > 0))
        return true;
    if (util_grow((void **)&o->keys, &o->cap, o->n + 1, sizeof(char *)) != ERR_OK ||
        (o->keys[o->n] = strdup(info->key)) == NULL) {
        o->oom = true;
        return false;
    }
    o->n++;
    return true;
}

err_t sched_node_workloads(const sched_t *s, const char *node, bool pods_gone,
                           void (*each)(void *ud, const char *key), void *ud, err_msg_t *msg)
{
    on_node_t o = {.s = s, .node = node, .pods_gone = pods_gone};
    err_t rc = ERR_OK;

    if (node == NULL)
        return err_set(msg, ERR_INVALID, "failed node: no name");
    sched_workloads(s, failed_on, &o);
    if (o.oom)
        rc = err_set(msg, ERR_NOMEM, "node %s: out of memory", node);
    for (size_t i = 0; i < o.n; i++) {
        if (rc == ERR_OK)
            each(ud, o.keys[i]); /* after the walk: `each` may mark the workload */
        free(o.keys[i]);
    }
    free(o.keys);
    return rc;
}

typedef struct mark_s {
    sched_t *s;
    const char *node;
    err_msg_t *msg;
    err_t rc;
} mark_t;

static void mark_failed(void *ud, const char *key)
{
    mark_t *m = ud;

    /* not admitted any more, or not on a hostname domain: nothing to replace */
    if (m->rc == ERR_OK && sched_workload_node_failed(m->s, key, m->node, m->msg) == ERR_NOMEM)
        m->rc = ERR_NOMEM;
}

err_t sched_node_failed(sched_t *s, const char *node, bool pods_gone, err_msg_t *msg)
{
    mark_t m = {.s = s, .node = node, .msg = msg};
    err_t rc = sched_node_workloads(s, node, pods_gone, mark_failed, &m, msg);

    return rc != ERR_OK ? rc : m.rc;
}

/* ---- the second pass ------------------------------------------------------------------------ */

static int level_index(const topo_rec_t *t, const char *label)
{
    for (size_t l = 0; label != NULL && l < t->nlevels; l++)
        if (strcmp(t->levels[l], label) == 0)
            return (int)l;
    return -1;
}

/* Does n carry the values vals[0..=upto] on t's levels? */
static bool node_under(const snode_t *n, const topo_rec_t *t, const char *const *vals, int upto)
{
    for (int l = 0; l <= upto; l++) {
        const char *v = kv_list_get(&n->labels, t->levels[l]);
        if (v == NULL || strcmp(v, vals[l]) != 0)
            return false;
    }
    return true;
}

/* The node a hostname domain names, when it exists, is Ready and schedulable (in Kueue's TAS
 * snapshot), else NULL. */
static const snode_t *live_node(const sched_t *s, const char *name)
{
    const snode_t *n = s->nodes != NULL ? util_hmap_get(&s->nodes->map, name) : NULL;

    return n != NULL && sched__node_selectable(n) ? n : NULL;
}

/* ta without domain `drop` (a new assignment, owned). */
static err_t assignment_without(const topology_assignment_t *ta, size_t drop,
                                topology_assignment_t **out)
{
    topology_assignment_t *r;
    size_t nl = ta->nlevels, k = 0;

    if (topology_assignment_dup(ta, &r) != ERR_OK)
        return ERR_NOMEM;
    for (size_t d = 0; d < ta->ndomains; d++) {
        if (d == drop) {
            for (size_t l = 0; l < nl; l++)
                free(r->values[d * nl + l]);
            continue;
        }
        memmove(&r->values[k * nl], &r->values[d * nl], nl * sizeof(char *));
        r->counts[k++] = r->counts[d];
    }
    r->ndomains = k;
    *out = r;
    return ERR_OK;
}

static int values_cmp(const topology_assignment_t *a, size_t i, const topology_assignment_t *b,
                      size_t j)
{
    for (size_t l = 0; l < a->nlevels; l++) {
        int c = strcmp(a->values[i * a->nlevels + l], b->values[j * b->nlevels + l]);
        if (c != 0)
            return c;
    }
    return 0;
}

/* Kueue's mergeTopologyAssignments: the domains of both, sorted by values, the counts of a domain
 * in both summed. a and b have the same levels. */
static err_t assignment_merge(const topology_assignment_t *a, const topology_assignment_t *b,
                              topology_assignment_t **out)
{
    size_t nl = a->nlevels, n = a->ndomains + b->ndomains, k = 0, i = 0, j = 0;
    topology_assignment_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return ERR_NOMEM;
    r->levels = calloc(nl ? nl : 1, sizeof(char *));
    r->values = calloc(n * nl > 0 ? n * nl : 1, sizeof(char *));
    r->counts = calloc(n ? n : 1, sizeof(int32_t));
    if (r->levels == NULL || r->values == NULL || r->counts == NULL)
        goto nomem;
    for (; r->nlevels < nl; r->nlevels++)
        if ((r->levels[r->nlevels] = strdup(a->levels[r->nlevels])) == NULL)
            goto nomem;
    while (i < a->ndomains || j < b->ndomains) {
        int c = i == a->ndomains ? 1 : j == b->ndomains ? -1 : values_cmp(a, i, b, j);
        const topology_assignment_t *src = c <= 0 ? a : b;
        size_t at = c <= 0 ? i : j;
        for (size_t l = 0; l < nl; l++)
            if ((r->values[k * nl + l] = strdup(src->values[at * nl + l])) == NULL) {
                r->ndomains = k + 1;
                goto nomem;
            }
        r->counts[k] = (c <= 0 ? a->counts[i] : 0) + (c >= 0 ? b->counts[j] : 0);
        i += c <= 0;
        j += c >= 0;
        r->ndomains = ++k;
    }
    *out = r;
    return ERR_OK;
nomem:
    topology_assignment_fini(r);
    free(r);
    return ERR_NOMEM;
}

/*
 * Kueue's requiredReplacementDomain: the domain the replacement must stay in, as values of t's
 * levels 0..*upto (*upto = -1: anywhere). rem is the assignment without the failed node (hostname
 * domains), count the pods to place. A pod set with slices whose lost pods are not whole slices
 * goes back to the slice-level domain whose pods they complete to whole slices (the first in the
 * assignment's order; Kueue's findIncompleteSliceDomain), and then asks for no slices
 * (*layers). With several slice layers (TASMultiLayerTopology) that is the domain of the
 * innermost layer whose slices the lost pods break, and the replacement keeps the innermost layer
 * whose size divides them (Kueue's findReplacementAssignment), so every layer stays whole;
 * otherwise a required pod set stays in the domain of its level that holds the first kept node.
 */
static void required_domain(const sched_t *s, const topo_rec_t *t, const wps_t *ps,
                            const topology_assignment_t *rem, int32_t count, const char **vals,
                            int *upto, int *layers)
{
    size_t nl = rem->nlevels;

    *upto = -1;
    *layers = SCHED_LAYERS_ALL;
    if (rem->ndomains == 0)
        return;
    if (ps->tas_slice_level != NULL && ps->tas_slice_size > 0 && count % ps->tas_slice_size != 0) {
        const char *level = ps->tas_slice_level;
        int32_t size = ps->tas_slice_size;
        for (size_t k = ps->tas_ninner; k-- > 0;) {
            if (count % ps->tas_inner_size[k] != 0) {
                level = ps->tas_inner_level[k];
                size = ps->tas_inner_size[k];
                break;
            }
        }
        *layers = SCHED_LAYERS_NONE;
        for (size_t k = ps->tas_ninner; k-- > 0;) {
            if (count % ps->tas_inner_size[k] == 0) {
                *layers = (int)k + 1;
                break;
            }
        }
        int sl = level_index(t, level);
        for (size_t d = 0; sl >= 0 && d < rem->ndomains; d++) {
            const snode_t *n = live_node(s, rem->values[d * nl + nl - 1]);
            int64_t sum = 0;
            if (n == NULL)
                continue;
            for (int l = 0; l <= sl; l++)
                vals[l] = kv_list_get(&n->labels, t->levels[l]);
            for (size_t e = 0; e < rem->ndomains; e++) {
                const snode_t *m = live_node(s, rem->values[e * nl + nl - 1]);
                if (m != NULL && node_under(m, t, vals, sl))
                    sum += rem->counts[e];
            }
            if ((sum + count) % size == 0) {
                *upto = sl;
                return;
            }
        }
        return;
    }
    if (ps->tas_mode == TASREQ_MODE_REQUIRED) {
        int lv = level_index(t, ps->tas_level);
        const snode_t *n = live_node(s, rem->values[nl - 1]);
        if (lv < 0 || n == NULL)
            return;
        for (int l = 0; l <= lv; l++)
            if ((vals[l] = kv_list_get(&n->labels, t->levels[l])) == NULL)
                return;
        *upto = lv;
    }
}

/* Place `count` pods of pod set pi (flavors p, TAS flavor's topology t) on the nodes of its
 * flavor in the required domain, the failed node left out. ERR_OK with *out, ERR_CONFLICT (no
 * room), ERR_NOMEM. */
static err_t place_lost(const sched_t *s, const wl_t *w, size_t pi, const ps_assign_t *p,
                        const topo_rec_t *t, const char *failed, int32_t count,
                        const char *const *vals, int upto, int layers, topology_assignment_t **out)
{
    const wps_t *ps = &w->ps[pi];
    const sched_nodes_t *ns = s->nodes;
    int pods = sched__find_res(s, "pods");
    size_t nres = 0, nn = 0, nl = t->nlevels, nlive = ns != NULL ? ns->nlive : 0;
    const char **res = calloc(ps->nreqs + 1, sizeof(*res));
    int *rid = calloc(ps->nreqs + 1, sizeof(*rid));
    qnano_t *per = calloc(ps->nreqs + 1, sizeof(*per));
    tas_node_t *nodes = calloc(nlive ? nlive : 1, sizeof(*nodes));
    const char **nv = calloc(nlive * nl > 0 ? nlive * nl : 1, sizeof(*nv));
    qnano_t *fv = calloc(nlive > 0 ? nlive * (ps->nreqs + 1) : 1, sizeof(*fv));
    topology_assignment_t *a = calloc(1, sizeof(*a));
    err_msg_t msg = {{0}};
    err_t rc = ERR_NOMEM;

    *out = NULL;
    if (res == NULL || rid == NULL || per == NULL || nodes == NULL || nv == NULL || fv == NULL ||
        a == NULL)
        goto done;
    nres = sched__tas_resources(s, ps, NULL, res, rid, per);
    for (size_t k = 0; k < nlive; k++) {
        const snode_t *n = ns->live[k];
        if (strcmp(n->name, failed) == 0 || !sched__node_for(s, n, ps, p) ||
            (upto >= 0 && !node_under(n, t, vals, upto)))
            continue;
        for (size_t l = 0; l < nl; l++)
            nv[nn * nl + l] = kv_list_get(&n->labels, t->levels[l]);
        sched__node_tas_free(n, rid, nres, pods, &fv[nn * nres]);
        nodes[nn].values = &nv[nn * nl];
        nodes[nn].free = &fv[nn * nres];
        nn++;
    }
    tas_input_t in = {.topology = t->name,
                      .levels = (const char *const *)t->levels,
                      .nlevels = nl,
                      .resources = res,
                      .nres = nres,
                      .nodes = nodes,
                      .nnodes = nn};
    tas_request_t req = sched__tas_request(ps, count, per, layers);
    rc = tas_place(&in, &req, a, &msg);
    if (rc == ERR_OK && a->ndomains == 0)
        rc = ERR_CONFLICT;
    if (rc == ERR_OK) {
        *out = a;
        a = NULL;
    } else if (rc != ERR_NOMEM) {
        rc = ERR_CONFLICT;
    }
done:
    topology_assignment_fini(a);
    free(a);
    free(res);
    free(rid);
    free(per);
    free(nodes);
    free(nv);
    free(fv);
    return rc;
}

/* One pod set assignment pa holding the failed node: its merged assignment into *merged (NULL
 * when pa does not hold it). ERR_CONFLICT: no replacement. */
static err_t replace_one(sched_t *s, wl_t *w, const pod_set_assignment_t *pa, const char *failed,
                         topology_assignment_t **merged)
{
    const topology_assignment_t *ta = pa->topology;
    topology_assignment_t *rem = NULL, *repl = NULL;
    const char *vals[TAS_MAX_LEVELS];
    int ids[64], upto, f;
    ps_assign_t p = {.flavor = ids};
    const topo_rec_t *t;
    size_t pi = 0, d;
    int layers;
    err_t rc;

    *merged = NULL;
    if (ta == NULL || pa->name == NULL || !domain_of_node(ta, failed, &d))
        return ERR_OK;
    while (pi < w->nps && strcmp(w->ps[pi].name, pa->name) != 0)
        pi++;
    for (size_t k = 0; k < pa->flavors.len && p.nreqs < 64; k++) {
        const flavor_rec_t *fr = util_hmap_get(&s->flavor_map, pa->flavors.items[k].value);
        if (fr != NULL)
            ids[p.nreqs++] = fr->id;
    }
    if (pi == w->nps || (f = sched__tas_flavor(s, &p)) == SCHED__NONE ||
        (t = sched__topo_find(s, s->flavors[f]->topology)) == NULL || t->nlevels > TAS_MAX_LEVELS)
        return ERR_CONFLICT;
    if (assignment_without(ta, d, &rem) != ERR_OK)
        return ERR_NOMEM;
    rc = ERR_OK;
    /* Kueue's IsTopologyAssignmentStale: a kept node that is gone or not Ready */
    for (size_t k = 0; k < rem->ndomains && rc == ERR_OK; k++)
        if (live_node(s, rem->values[k * rem->nlevels + rem->nlevels - 1]) == NULL)
            rc = ERR_CONFLICT;
    if (rc == ERR_OK) {
        required_domain(s, t, &w->ps[pi], rem, ta->counts[d], vals, &upto, &layers);
        rc = place_lost(s, w, pi, &p, t, failed, ta->counts[d], vals, upto, layers, &repl);
    }
    /* the replacement's pods count at once: a later pod set's replacement sees them */
    if (rc == ERR_OK && repl->nlevels != rem->nlevels)
        rc = ERR_CONFLICT; /* both list the hostname level alone (tas.h): not expected */
    if (rc == ERR_OK && (rc = sched__nodes_place_topology(s, w, pi, &p, repl)) == ERR_OK &&
        assignment_merge(rem, repl, merged) != ERR_OK)
        rc = ERR_NOMEM;
    topology_assignment_fini(rem);
    free(rem);
    topology_assignment_fini(repl);
    free(repl);
    return rc;
}

err_t sched__replace_plan(sched_t *s, wl_t *w, bool *ok, admission_t *next, size_t *base,
                          char **message)
{
    err_t rc = ERR_OK;

    *ok = false;
    *message = NULL;
    *base = w->nplace;
    memset(next, 0, sizeof(*next));
    if (w->rare->nunhealthy > 1) {
        /* Kueue's node controller: a second failed node evicts at once */
        size_t len = 0;
        for (size_t i = 0; i < w->rare->nunhealthy; i++)
            len += strlen(w->rare->unhealthy[i]) + 2;
        char *list = calloc(1, len + 1);
        if (list == NULL)
            return ERR_NOMEM;
        for (size_t i = 0; i < w->rare->nunhealthy; i++) {
            if (i > 0)
                strcat(list, ", ");
            strcat(list, w->rare->unhealthy[i]);
        }
        *message = util_asprintf("Workload eviction triggered due to multiple TAS assigned node "
                                 "failures, including: %s",
                                 list);
        free(list);
        return *message == NULL ? ERR_NOMEM : ERR_OK;
    }
    if (sched__admission_copy(next, &w->adm) != ERR_OK)
        return ERR_NOMEM;
    for (size_t i = 0; i < next->nassignments && rc == ERR_OK; i++) {
        pod_set_assignment_t *pa = &next->assignments[i];
        topology_assignment_t *m;
        rc = replace_one(s, w, pa, w->rare->unhealthy[0], &m);
        if (rc == ERR_OK && m != NULL) {
            topology_assignment_fini(pa->topology);
            free(pa->topology);
            pa->topology = m;
        }
    }
    if (rc == ERR_OK) {
        *ok = true;
        return ERR_OK;
    }
    sched__replace_undo(s, w, next, *base);
    if (rc == ERR_NOMEM)
        return ERR_NOMEM;
    /* Kueue's scheduler with TASFailedNodeReplacementFailFast: evict after one try */
    *message = util_asprintf("Workload was evicted as there was no replacement for unhealthy "
                             "node(s): %s",
                             w->rare->unhealthy[0]);
    return *message == NULL ? ERR_NOMEM : ERR_OK;
}

void sched__replace_commit(sched_t *s, wl_t *w, admission_t *next)
{
    const snode_t *n =
        s->nodes != NULL ? util_hmap_get(&s->nodes->map, w->rare->unhealthy[0]) : NULL;

    if (n != NULL)
        sched__nodes_unplace_on(s, w, n); /* its pods there are gone */
    sched__admission_fini(&w->adm);
    w->adm = *next;
    memset(next, 0, sizeof(*next));
    sched__wl_unhealthy_clear(w);
}

void sched__replace_undo(sched_t *s, wl_t *w, admission_t *next, size_t base)
{
    sched__nodes_unplace_from(s, w, base);
    sched__admission_fini(next);
}
