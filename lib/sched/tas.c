/* tas -- topology-aware placement of one pod set on a flavor's nodes (Kueue's TAS algorithm). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/tas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The tree is built from the nodes sorted by their label values: a domain of level L is a run of
 * nodes with equal values on levels 0..L, so every domain is a contiguous range of that order and
 * its children are a contiguous range of the next level's domains. Counts are int64 (Kueue's are
 * int32; sums of leaves cannot overflow here).
 */

typedef struct dom_s {
    const char *const *values; /* borrowed: the first node's values (levels 0..level agree) */
    size_t level;
    size_t node0, node1;   /* range in the sorted node order */
    size_t child0, child1; /* range in the next level's domains */
    int64_t pods, slices;  /* capacity, then what the descent assigns */
    /* with a leader (tas_place_group()): the workers' capacity once the leader is
     * placed inside (lpods, lslices; equal to pods, slices without one), and whether the leader
     * fits (leaders: 0 or 1), then what the descent assigns; Kueue's *WithLeader counts */
    int64_t lpods, lslices, leaders;
} dom_t;

typedef struct tas_s {
    const tas_input_t *in;
    const tas_request_t *req;
    size_t nl;
    size_t *order; /* owned: eligible node indices, sorted by values */
    size_t nnodes;
    dom_t *doms[TAS_MAX_LEVELS]; /* owned: per level */
    size_t nd[TAS_MAX_LEVELS];
    size_t level, slice_level; /* requested level, slice level */
    int64_t count, slice_size;
    /* inner slice layers: per level, the size its domains' pods go to their parent in (and
     * its parent hands them out in, going down), 0 = none (Kueue's sliceSizeAtLevel) */
    int64_t size_at[TAS_MAX_LEVELS];
    size_t search_level;   /* the level find_fit() looks at, for the multi-layer message */
    const qnano_t *leader; /* borrowed: the leader's per-pod request; NULL = no leader */
    int64_t leader_count;  /* 1 with a leader, else 0 */
    bool unconstrained, required;
    size_t *excluded; /* owned: per resource, leaves that fit no pod because of it */
} tas_t;

/* A growable list of domain pointers. */
typedef struct dvec_s {
    dom_t **v;
    size_t n, cap;
} dvec_t;

static err_t dvec_push(dvec_t *d, dom_t *x)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        dom_t **v = realloc(d->v, cap * sizeof(*v));
        if (v == NULL)
            return ERR_NOMEM;
        d->v = v;
        d->cap = cap;
    }
    d->v[d->n++] = x;
    return ERR_OK;
}

#define SWAP_DVEC(a, b)    \
    do {                   \
        dvec_t tmp_ = (a); \
        (a) = (b);         \
        (b) = tmp_;        \
    } while (0)

/* ---- ordering ------------------------------------------------------------------------------- */

static int values_cmp(const char *const *a, const char *const *b, size_t upto)
{
    for (size_t l = 0; l <= upto; l++) {
        int r = strcmp(a[l], b[l]);
        if (r != 0)
            return r;
    }
    return 0;
}

/* Kueue's sortedDomains: slices (descending; ascending for LeastFreeCapacity), pods ascending,
 * then label values. With a leader (Kueue's sortedDomainsWithLeader, used to pick the level's
 * domains) the domains that can hold the leader come first, then the same keys with the leader
 * counted. Without one the two orders are the same. */
typedef enum { SORT_PLAIN, SORT_LEAST_FREE, SORT_LEADER, SORT_LEADER_LEAST_FREE } sort_t;

static int dom_cmp(const dom_t *a, const dom_t *b, sort_t how)
{
    bool least_free = how == SORT_LEAST_FREE || how == SORT_LEADER_LEAST_FREE;

    if (how >= SORT_LEADER) {
        if (a->leaders != b->leaders)
            return a->leaders > b->leaders ? -1 : 1;
        if (a->lslices != b->lslices)
            return (a->lslices < b->lslices) == least_free ? -1 : 1;
        if (a->lpods != b->lpods)
            return a->lpods < b->lpods ? -1 : 1;
        return values_cmp(a->values, b->values, a->level);
    }
    if (a->slices != b->slices)
        return (a->slices < b->slices) == least_free ? -1 : 1;
    if (a->pods != b->pods)
        return a->pods < b->pods ? -1 : 1;
    return values_cmp(a->values, b->values, a->level);
}

/* Stable merge sort of v[0..n) with tmp[0..n) as scratch. */
static void dom_sort(dom_t **v, dom_t **tmp, size_t n, sort_t least_free)
{
    size_t mid = n / 2, i = 0, j = mid, k = 0;

    if (n < 2)
        return;
    dom_sort(v, tmp, mid, least_free);
    dom_sort(v + mid, tmp, n - mid, least_free);
    while (i < mid && j < n)
        tmp[k++] = dom_cmp(v[j], v[i], least_free) < 0 ? v[j++] : v[i++];
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

static err_t sorted_by(dom_t **v, size_t n, sort_t how)
{
    dom_t **tmp = malloc((n ? n : 1) * sizeof(*tmp));

    if (tmp == NULL)
        return ERR_NOMEM;
    dom_sort(v, tmp, n, how);
    free(tmp);
    return ERR_OK;
}

static err_t sorted(dvec_t *d, bool least_free)
{
    dom_t **tmp = malloc((d->n ? d->n : 1) * sizeof(*tmp));

    if (tmp == NULL)
        return ERR_NOMEM;
    dom_sort(d->v, tmp, d->n, least_free ? SORT_LEAST_FREE : SORT_PLAIN);
    free(tmp);
    return ERR_OK;
}

/* Node indices by values, merge-sorted. */
static void node_sort(const tas_input_t *in, size_t nl, size_t *v, size_t *tmp, size_t n)
{
    size_t mid = n / 2, i = 0, j = mid, k = 0;

    if (n < 2)
        return;
    node_sort(in, nl, v, tmp, mid);
    node_sort(in, nl, v + mid, tmp, n - mid);
    while (i < mid && j < n)
        tmp[k++] = values_cmp(in->nodes[v[j]].values, in->nodes[v[i]].values, nl - 1) < 0 ? v[j++]
                                                                                          : v[i++];
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof(*v));
}

/* ---- the tree and its capacities ------------------------------------------------------------ */

static bool has_all_labels(const tas_node_t *n, size_t nl)
{
    if (n->values == NULL)
        return false;
    for (size_t l = 0; l < nl; l++)
        if (n->values[l] == NULL)
            return false;
    return true;
}

/* How many pods of request `per_pod` fit in `free`; *limit = the resource that limits it most
 * (first on ties). */
static int64_t pods_in(const tas_t *t, const qnano_t *per_pod, const qnano_t *free, size_t *limit)
{
    int64_t best = INT32_MAX;

    *limit = t->in->nres;
    for (size_t r = 0; r < t->in->nres; r++) {
        qnano_t per = per_pod[r], f = free[r], n;
        if (per <= 0)
            continue;
        n = f <= 0 ? 0 : f / per;
        if (n < best) {
            best = (int64_t)n;
            *limit = r;
        }
    }
    return best;
}

static err_t leaf_capacity(tas_t *t, dom_t *d)
{
    size_t nres = t->in->nres, limit;
    qnano_t *sum = calloc(nres ? nres : 1, sizeof(*sum));

    if (sum == NULL)
        return ERR_NOMEM;
    for (size_t i = d->node0; i < d->node1; i++) {
        const qnano_t *f = t->in->nodes[t->order[i]].free;
        for (size_t r = 0; r < nres; r++)
            sum[r] += f[r];
    }
    d->pods = pods_in(t, t->req->per_pod, sum, &limit);
    if (d->pods == 0 && limit < nres)
        t->excluded[limit]++;
    d->lpods = d->pods;
    d->leaders = 0;
    if (t->leader_count > 0 && pods_in(t, t->leader, sum, &limit) > 0) {
        /* Kueue's fillLeafCounts: the leader first, then the workers in what is left */
        d->leaders = 1;
        for (size_t r = 0; r < nres; r++)
            sum[r] -= t->leader[r];
        d->lpods = pods_in(t, t->req->per_pod, sum, &limit);
    }
    free(sum);
    return ERR_OK;
}

static err_t build(tas_t *t)
{
    const tas_input_t *in = t->in;
    size_t nl = t->nl, *tmp, *diff;
    err_t rc = ERR_NOMEM;

    t->order = malloc((in->nnodes ? in->nnodes : 1) * sizeof(size_t));
    tmp = malloc((in->nnodes ? in->nnodes : 1) * sizeof(size_t));
    diff = malloc((in->nnodes ? in->nnodes : 1) * sizeof(size_t));
    t->excluded = calloc(in->nres ? in->nres : 1, sizeof(size_t));
    if (t->order == NULL || tmp == NULL || diff == NULL || t->excluded == NULL)
        goto out;
    for (size_t i = 0; i < in->nnodes; i++)
        if (has_all_labels(&in->nodes[i], nl))
            t->order[t->nnodes++] = i;
    node_sort(in, nl, t->order, tmp, t->nnodes);
    /* diff[i]: the first level where node i differs from node i-1 (nl: identical) */
    for (size_t i = 0; i < t->nnodes; i++) {
        size_t l = 0;
        if (i > 0)
            while (l < nl && strcmp(in->nodes[t->order[i]].values[l],
                                    in->nodes[t->order[i - 1]].values[l]) == 0)
                l++;
        diff[i] = l;
    }
    for (size_t l = 0; l < nl; l++) {
        t->doms[l] = calloc(t->nnodes ? t->nnodes : 1, sizeof(dom_t));
        if (t->doms[l] == NULL)
            goto out;
        for (size_t i = 0; i < t->nnodes; i++) {
            dom_t *d;
            if (i > 0 && diff[i] > l) {
                t->doms[l][t->nd[l] - 1].node1 = i + 1;
                continue;
            }
            d = &t->doms[l][t->nd[l]++];
            d->values = in->nodes[t->order[i]].values;
            d->level = l;
            d->node0 = i;
            d->node1 = i + 1;
        }
    }
    /* children ranges, then capacities bottom-up */
    for (size_t l = 0; l + 1 < nl; l++) {
        size_t c = 0;
        for (size_t k = 0; k < t->nd[l]; k++) {
            dom_t *d = &t->doms[l][k];
            d->child0 = c;
            while (c < t->nd[l + 1] && t->doms[l + 1][c].node0 < d->node1)
                c++;
            d->child1 = c;
        }
    }
    /* Kueue's fillInCountsHelper: with a leader, a parent's capacity with it inside is its
     * children's total less the smallest loss among the children that can hold it (none: 0) */
    for (size_t l = nl; l-- > 0;) {
        for (size_t k = 0; k < t->nd[l]; k++) {
            dom_t *d = &t->doms[l][k];
            int64_t slices = 0, lslices = 0, dpods = INT64_MAX, dslices = INT64_MAX;
            if (l == nl - 1) {
                if ((rc = leaf_capacity(t, d)) != ERR_OK)
                    goto out;
                slices = lslices = 0;
            } else {
                d->pods = d->leaders = 0;
                for (size_t c = d->child0; c < d->child1; c++) {
                    const dom_t *ch = &t->doms[l + 1][c];
                    /* under an inner slice layer a child gives only whole inner slices */
                    int64_t whole = t->size_at[l + 1] > 0 ? t->size_at[l + 1] : 1;
                    int64_t cp = ch->pods / whole * whole, clp = ch->lpods / whole * whole;
                    d->pods += cp;
                    slices += ch->slices;
                    if (t->leader_count == 0 || ch->leaders > 0) {
                        if (cp - clp < dpods)
                            dpods = cp - clp;
                        if (ch->slices - ch->lslices < dslices)
                            dslices = ch->slices - ch->lslices;
                    }
                    if (ch->leaders > d->leaders)
                        d->leaders = ch->leaders;
                }
                d->lpods = dpods == INT64_MAX ? 0 : d->pods - dpods;
                lslices = dslices == INT64_MAX ? 0 : slices - dslices;
            }
            d->slices = l == t->slice_level ? d->pods / t->slice_size : slices;
            d->lslices = l == t->slice_level ? d->lpods / t->slice_size : lslices;
        }
    }
    rc = ERR_OK;
out:
    free(tmp);
    free(diff);
    return rc;
}

/* ---- messages -------------------------------------------------------------------------------- */

/* The slices of `size` pods that fit in domain d's subtree at level `target` (Kueue's
 * countSlicesInSubtree, over the capacities counted up the tree). */
static int64_t slices_below(const tas_t *t, const dom_t *d, size_t target, int64_t size)
{
    int64_t n = 0;

    if (d->level == target)
        return d->pods / size;
    if (d->level + 1 >= t->nl)
        return 0;
    for (size_t c = d->child0; c < d->child1; c++)
        n += slices_below(t, &t->doms[d->level + 1][c], target, size);
    return n;
}

/* Kueue's multiLayerNotFitMessage: for each layer, the slices that fit in the domain of the
 * searched level with the most slices (first by values on ties) against those asked for. */
static void layers_not_fit(const tas_t *t, char *buf, size_t cap)
{
    const dom_t *best = NULL;
    size_t len, lv = t->search_level;

    len = (size_t)snprintf(buf, cap, "topology \"%s\" doesn't allow to fit", t->in->topology);
    for (size_t k = 0; k < t->nd[lv]; k++) {
        const dom_t *d = &t->doms[lv][k];
        if (best == NULL || d->slices > best->slices) /* in values order: the first wins ties */
            best = d;
    }
    for (size_t i = 0; best != NULL && i <= t->req->ninner && len < cap; i++) {
        const char *key = i == 0 ? t->req->slice_level : t->req->inner[i - 1].level;
        int64_t size = i == 0 ? t->slice_size : t->req->inner[i - 1].size;
        size_t target = 0;
        while (target < t->nl && strcmp(t->in->levels[target], key) != 0)
            target++;
        len += (size_t)snprintf(buf + len, cap - len, "; %lld/%lld slice(s) fit on level %s",
                                (long long)slices_below(t, best, target, size),
                                (long long)(t->count / size), key);
    }
}

/* Kueue's notFitMessage, with its node exclusion statistics (resources only: the caller filters
 * nodes by everything else); with inner slice layers its multi-layer message. */
static err_t not_fit(const tas_t *t, int64_t fit, int64_t total, err_msg_t *msg)
{
    const char *unit = t->slice_size == 1 ? "pod" : "slice";
    char reasons[160] = "", ex[200] = "", layers[200];
    size_t len = 0;

    for (size_t r = 0; r < t->in->nres && len < sizeof(reasons); r++) {
        if (t->excluded[r] == 0)
            continue;
        len += (size_t)snprintf(reasons + len, sizeof(reasons) - len, "%sresource \"%s\": %zu",
                                len ? ", " : "", t->in->resources[r], t->excluded[r]);
    }
    if (len > 0)
        snprintf(ex, sizeof(ex), ". Total nodes: %zu; excluded: %s", t->nnodes, reasons);
    if (t->req->ninner > 0) {
        layers_not_fit(t, layers, sizeof(layers));
        return err_set(msg, ERR_CONFLICT, "%s%s", layers, ex);
    }
    if (fit == 0)
        return err_set(msg, ERR_CONFLICT,
                       "topology \"%s\" doesn't allow to fit any of %lld %s(s)%s", t->in->topology,
                       (long long)total, unit, ex);
    return err_set(msg, ERR_CONFLICT, "topology \"%s\" allows to fit only %lld out of %lld %s(s)%s",
                   t->in->topology, (long long)fit, (long long)total, unit, ex);
}

/* ---- Kueue's placement ----------------------------------------------------------------------- */

/* A domain's capacity in slices or pods; with `leaders` > 0 still to place, its capacity with
 * the leader inside. */
static int64_t cap_of(const dom_t *d, bool by_slices, int64_t leaders)
{
    if (leaders > 0)
        return by_slices ? d->lslices : d->lpods;
    return by_slices ? d->slices : d->pods;
}

/* findBestFitDomain: the first domain with the smallest capacity >= need among those that can
 * hold `leaders` leaders, else v[0]. */
static dom_t *best_fit(dom_t *const *v, size_t n, int64_t need, bool by_slices, int64_t leaders)
{
    dom_t *best = v[0];
    int64_t best_cap = INT64_MAX;

    for (size_t i = 0; i < n; i++) {
        int64_t c = cap_of(v[i], by_slices, leaders);
        if (v[i]->leaders < leaders)
            continue;
        if (c >= need && c < best_cap) {
            best = v[i];
            best_cap = c;
        }
    }
    return best;
}

/* Kueue's prioritizeLeaderDomain: with a leader to place, move to the front of v the first
 * domain that can hold it and whose loss of capacity with it inside still leaves room for the
 * request in the whole of v (the capacity a parent reported assumed such a child). */
static void leader_first(dom_t **v, size_t n, int64_t count, int64_t leaders, int64_t ss,
                         bool by_slices)
{
    int64_t need = by_slices ? count / ss : count, avail = 0;

    if (leaders == 0 || n < 2)
        return;
    for (size_t i = 0; i < n; i++)
        avail += cap_of(v[i], by_slices, 0);
    for (size_t i = 0; i < n; i++) {
        dom_t *d = v[i];
        if (d->leaders < leaders ||
            avail - (cap_of(d, by_slices, 0) - cap_of(d, by_slices, leaders)) < need)
            continue;
        memmove(v + 1, v, i * sizeof(*v));
        v[0] = d;
        return;
    }
}

/* findLevelWithFitDomains: the domains of `level` (or, preferred, a higher one) to place in. */
static err_t find_fit(tas_t *t, size_t level, dvec_t *out, size_t *fit_level, err_msg_t *msg)
{
    bool lfc = t->unconstrained;
    int64_t need = t->count / t->slice_size, remaining, lead = t->leader_count;
    dvec_t all = {0};
    dom_t *top;
    size_t i = 0;
    err_t rc = ERR_NOMEM;

    t->search_level = level;
    if (t->nd[level] == 0)
        return err_set(msg, ERR_CONFLICT, "no topology domains at level: %s", t->in->levels[level]);
    for (size_t k = 0; k < t->nd[level]; k++)
        if (dvec_push(&all, &t->doms[level][k]) != ERR_OK)
            goto out;
    if (sorted_by(all.v, all.n,
                  lead > 0 ? (lfc ? SORT_LEADER_LEAST_FREE : SORT_LEADER)
                           : (lfc ? SORT_LEAST_FREE : SORT_PLAIN)) != ERR_OK)
        goto out;
    top = all.v[0];
    if (!lfc && top->lslices >= need && top->leaders >= lead)
        top = best_fit(all.v, all.n, need, true, lead);
    if (lfc) {
        for (i = 0; i < all.n; i++) {
            if (all.v[i]->leaders >= lead && cap_of(all.v[i], true, lead) >= need) {
                *fit_level = level;
                rc = dvec_push(out, all.v[i]);
                goto out;
            }
        }
    }
    if (top->lslices >= need && top->leaders >= lead) {
        *fit_level = level;
        rc = dvec_push(out, top);
        goto out;
    }
    if (t->required) {
        rc = not_fit(t, top->slices, need, msg);
        goto out;
    }
    if (level > 0 && !t->unconstrained) {
        rc = find_fit(t, level - 1, out, fit_level, msg);
        goto out;
    }
    /* the highest level (preferred) or the lowest (unconstrained): as many domains as needed,
     * with a leader the one to hold it first (Kueue's leader loop), then the rest for workers */
    remaining = need;
    i = 0;
    if (lead > 0) {
        int64_t left = lead;
        leader_first(all.v, all.n, t->count, lead, t->slice_size, true);
        for (i = 0; left > 0 && i < all.n && all.v[i]->leaders > 0; i++) {
            dom_t *d = all.v[i];
            if (!lfc && d->lslices >= remaining)
                d = best_fit(all.v + i, all.n - i, remaining, true, left);
            if (dvec_push(out, d) != ERR_OK)
                goto out;
            left -= d->leaders;
            remaining -= d->lslices;
        }
        if (left > 0) {
            rc = not_fit(t, lead - left, need, msg);
            goto out;
        }
        if (sorted_by(all.v + i, all.n - i, lfc ? SORT_LEAST_FREE : SORT_PLAIN) != ERR_OK)
            goto out;
    }
    for (; remaining > 0 && i < all.n; i++) {
        dom_t *d = all.v[i];
        if (!lfc && d->slices >= remaining)
            d = best_fit(all.v + i, all.n - i, remaining, true, 0);
        if (dvec_push(out, d) != ERR_OK)
            goto out;
        remaining -= d->slices;
    }
    if (remaining > 0) {
        rc = not_fit(t, need - remaining, need, msg);
        goto out;
    }
    *fit_level = level;
    rc = ERR_OK;
out:
    free(all.v);
    return rc;
}

/* Set d's assignment to n slices (by_slices) or pods, and its leaders to `leaders`. */
static void assign_to(dom_t *d, int64_t n, int64_t ss, bool by_slices, int64_t leaders)
{
    d->pods = by_slices ? n * ss : n;
    if (by_slices)
        d->slices = d->lslices = n;
    else
        d->lpods = n;
    d->leaders = leaders;
}

/* updateCountsToMinimum: take from `v` (in order; with `leaders` to place, the domain for the
 * leader moved first) until `count` pods (by_slices: count / slice size slices) and the leaders
 * are covered, the last domain chosen by BestFit; each chosen domain's pods and leaders become
 * what it takes (while a leader is still to place, a domain takes its capacity with the leader
 * inside). Appends the chosen domains to `out`. */
static err_t take(tas_t *t, dvec_t *v, int64_t count, int64_t leaders, int64_t ss, bool by_slices,
                  dvec_t *out, err_msg_t *msg)
{
    bool lfc = t->unconstrained;
    int64_t remaining = by_slices ? count / ss : count;

    leader_first(v->v, v->n, count, leaders, ss, by_slices);
    for (size_t i = 0; i < v->n; i++) {
        dom_t *d = v->v[i];
        int64_t c, l;
        if (!lfc && cap_of(d, by_slices, leaders) >= remaining && d->leaders >= leaders)
            d = best_fit(v->v + i, v->n - i, remaining, by_slices, leaders);
        if (dvec_push(out, d) != ERR_OK)
            return ERR_NOMEM;
        c = cap_of(d, by_slices, leaders);
        if (c >= remaining && d->leaders >= leaders) {
            assign_to(d, remaining, ss, by_slices, leaders);
            return ERR_OK;
        }
        c = c < remaining ? c : remaining;
        l = d->leaders < leaders ? d->leaders : leaders;
        assign_to(d, c, ss, by_slices, l);
        remaining -= c;
        leaders -= l;
    }
    /* cannot happen: a parent's capacity is the sum of its children's */
    return remaining > 0 || leaders > 0
               ? err_set(msg, ERR_CONFLICT,
                         "topology \"%s\": %lld pod(s) left over descending the tree",
                         t->in->topology, (long long)remaining)
               : ERR_OK;
}

/* The children of every domain of `parents`, in a new list. */
static err_t children_of(tas_t *t, dom_t *const *parents, size_t n, dvec_t *out)
{
    for (size_t i = 0; i < n; i++) {
        const dom_t *p = parents[i];
        for (size_t c = p->child0; c < p->child1; c++)
            if (dvec_push(out, &t->doms[p->level + 1][c]) != ERR_OK)
                return ERR_NOMEM;
    }
    return ERR_OK;
}

static int leaf_cmp(const void *a, const void *b)
{
    const dom_t *x = *(dom_t *const *)a, *y = *(dom_t *const *)b;

    return values_cmp(x->values, y->values, x->level);
}

/* The assignment of the leaves' pods (`leader`: of their leaders) into out. */
static err_t assignment(tas_t *t, dvec_t *leaves, bool leader, tas_assignment_t *out)
{
    size_t nl = t->nl, first = 0, n = 0;
    tas_assignment_t a = {0};

    if (strcmp(t->in->levels[nl - 1], TAS_HOSTNAME_LABEL) == 0)
        first = nl - 1;
    qsort(leaves->v, leaves->n, sizeof(*leaves->v), leaf_cmp);
    a.nlevels = nl - first;
    a.levels = calloc(a.nlevels, sizeof(char *));
    a.values = calloc((leaves->n ? leaves->n : 1) * a.nlevels, sizeof(char *));
    a.counts = calloc(leaves->n ? leaves->n : 1, sizeof(int32_t));
    if (a.levels == NULL || a.values == NULL || a.counts == NULL)
        goto fail;
    for (size_t l = 0; l < a.nlevels; l++)
        if ((a.levels[l] = strdup(t->in->levels[first + l])) == NULL)
            goto fail;
    for (size_t i = 0; i < leaves->n; i++) {
        const dom_t *d = leaves->v[i];
        int64_t c = leader ? d->leaders : d->pods;
        if (c <= 0)
            continue;
        a.ndomains = n + 1;
        for (size_t l = 0; l < a.nlevels; l++)
            if ((a.values[n * a.nlevels + l] = strdup(d->values[first + l])) == NULL)
                goto fail;
        a.counts[n++] = (int32_t)c;
    }
    *out = a;
    return ERR_OK;
fail:
    tas_assignment_fini(&a);
    return ERR_NOMEM;
}

static err_t level_index(const tas_input_t *in, const char *key, size_t *out)
{
    for (size_t l = 0; l < in->nlevels; l++) {
        if (strcmp(in->levels[l], key) == 0) {
            *out = l;
            return ERR_OK;
        }
    }
    return ERR_NOT_FOUND;
}

/* The request's levels and flags, Kueue's levelKey / isUnconstrained / slice defaults. */
static err_t resolve(tas_t *t, err_msg_t *msg)
{
    const tas_request_t *r = t->req;
    const char *key;

    if (r->count < 0)
        return err_set(msg, ERR_INVALID, "negative pod count %d", (int)r->count);
    t->count = r->count;
    t->leader_count = t->leader != NULL ? 1 : 0;
    t->required = r->mode == TAS_MODE_REQUIRED;
    t->unconstrained = r->mode == TAS_MODE_UNCONSTRAINED;
    t->slice_size = 1;
    t->slice_level = t->nl - 1;
    if (t->unconstrained) {
        key = r->slice_level != NULL ? t->in->levels[0] : t->in->levels[t->nl - 1];
    } else {
        key = r->level;
        if (key == NULL)
            return err_set(msg, ERR_INVALID, "topology level not specified");
    }
    if (level_index(t->in, key, &t->level) != ERR_OK)
        return err_set(msg, ERR_INVALID, "no requested topology level: %s", key);
    if (r->slice_level != NULL) {
        if (r->slice_size <= 0)
            return err_set(msg, ERR_INVALID,
                           "slice topology requested, but slice size not provided");
        t->slice_size = r->slice_size;
        if (level_index(t->in, r->slice_level, &t->slice_level) != ERR_OK)
            return err_set(msg, ERR_INVALID, "no requested topology level for slices: %s",
                           r->slice_level);
        if (t->level > t->slice_level)
            return err_set(msg, ERR_INVALID,
                           "podset slice topology %s is above the podset "
                           "topology %s",
                           r->slice_level, key);
    }
    /* Kueue's buildSliceSizeAtLevel: each inner layer below the previous one, its size dividing
     * the previous size; the levels from just below the previous layer down to its own go in
     * its size */
    size_t prev = t->slice_level;
    int64_t prev_size = t->slice_size;
    if (r->ninner > TAS_MAX_INNER || (r->ninner > 0 && r->slice_level == NULL))
        return err_set(msg, ERR_INVALID, "inner slice layers without an outer one");
    for (size_t i = 0; i < r->ninner; i++) {
        const tas_layer_t *ly = &r->inner[i];
        size_t lv;
        if (level_index(t->in, ly->level, &lv) != ERR_OK)
            return err_set(msg, ERR_INVALID,
                           "no requested topology level for additional slice layer: %s", ly->level);
        if (lv <= prev)
            return err_set(msg, ERR_INVALID,
                           "additional slice layer topology %s must be at a lower level than %s",
                           ly->level, t->in->levels[prev]);
        if (ly->size <= 0 || prev_size % ly->size != 0)
            return err_set(msg, ERR_INVALID,
                           "additional slice layer size %d must evenly divide parent layer "
                           "size %lld",
                           (int)ly->size, (long long)prev_size);
        for (size_t l = prev + 1; l <= lv; l++)
            t->size_at[l] = ly->size;
        prev = lv;
        prev_size = ly->size;
    }
    return ERR_OK;
}

err_t tas_place(const tas_input_t *in, const tas_request_t *req, tas_assignment_t *out,
                err_msg_t *msg)
{
    return tas_place_group(in, req, NULL, out, NULL, msg);
}

err_t tas_place_group(const tas_input_t *in, const tas_request_t *req, const qnano_t *leader,
                      tas_assignment_t *out, tas_assignment_t *leader_out, err_msg_t *msg)
{
    tas_t t = {.in = in, .req = req, .nl = in->nlevels, .leader = leader};
    dvec_t cur = {0}, next = {0}, kids = {0};
    size_t level = 0;
    err_t rc;

    if (in->nlevels == 0 || in->nlevels > TAS_MAX_LEVELS)
        return err_set(msg, ERR_INVALID, "topology \"%s\" has %zu levels (1 to %d)", in->topology,
                       in->nlevels, TAS_MAX_LEVELS);
    if (leader != NULL && leader_out == NULL)
        return err_set(msg, ERR_INVALID, "a leader needs an assignment to go to");
    if ((rc = resolve(&t, msg)) != ERR_OK || (rc = build(&t)) != ERR_OK)
        goto out;
    /* phase 2a: the level and domains that hold the request */
    if ((rc = find_fit(&t, t.level, &next, &level, msg)) != ERR_OK)
        goto out;
    /* phase 2b: down the tree, all at once above the slice level, per parent below it */
    if ((rc = take(&t, &next, t.count, t.leader_count, t.slice_size, true, &cur, msg)) != ERR_OK)
        goto out;
    for (; level < t.nl - 1 && level < t.slice_level; level++) {
        kids.n = next.n = 0;
        if ((rc = children_of(&t, cur.v, cur.n, &kids)) != ERR_OK ||
            (rc = sorted(&kids, t.unconstrained)) != ERR_OK ||
            (rc = take(&t, &kids, t.count, t.leader_count, t.slice_size, true, &next, msg)) !=
                ERR_OK)
            goto out;
        SWAP_DVEC(cur, next);
    }
    for (; level < t.nl - 1; level++) {
        /* in whole inner slices down to the innermost layer's level, then pod by pod */
        int64_t ss = t.size_at[level + 1] > 0 ? t.size_at[level + 1] : 1;
        next.n = 0;
        for (size_t i = 0; i < cur.n; i++) {
            kids.n = 0;
            if ((rc = children_of(&t, &cur.v[i], 1, &kids)) != ERR_OK ||
                (rc = sorted(&kids, t.unconstrained)) != ERR_OK)
                goto out;
            /* sorted by the counts from the way up, then counted in this layer's slices */
            for (size_t k = 0; ss > 1 && k < kids.n; k++) {
                kids.v[k]->slices = kids.v[k]->pods / ss;
                kids.v[k]->lslices = kids.v[k]->lpods / ss;
            }
            if ((rc = take(&t, &kids, cur.v[i]->pods, cur.v[i]->leaders, ss, ss > 1, &next, msg)) !=
                ERR_OK)
                goto out;
        }
        SWAP_DVEC(cur, next);
    }
    if (leader == NULL) {
        rc = assignment(&t, &cur, false, out);
    } else {
        tas_assignment_t w = {0};
        if ((rc = assignment(&t, &cur, false, &w)) == ERR_OK &&
            (rc = assignment(&t, &cur, true, leader_out)) == ERR_OK)
            *out = w;
        else
            tas_assignment_fini(&w);
    }
out:
    free(cur.v);
    free(next.v);
    free(kids.v);
    free(t.order);
    free(t.excluded);
    for (size_t l = 0; l < TAS_MAX_LEVELS; l++)
        free(t.doms[l]);
    return rc;
}
