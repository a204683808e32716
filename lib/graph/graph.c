/* graph -- build the queue graph from decoded objects and node pools; find its problems. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "graph/graph.h"

#include "util/grow.h"
#include "util/str.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/*
 * Build order: cohorts (declared, named by a ClusterQueue or by a parent) -> their tree order ->
 * LocalQueues -> ClusterQueues in cohort order -> flavors (first use, then unused, then missing)
 * -> pools -> edges -> problems. A builder keeps the growth capacities and a sticky out-of-memory
 * flag, so the steps read straight and the result is checked once.
 */

typedef struct builder_s {
    graph_t *g;
    size_t ncap, ecap, ccap, pcap;
    bool oom;
    const inv_view_t *v;
    const inventory_t *inv;
} builder_t;

/* ---- small helpers ----------------------------------------------------------------------------
 */

static void problem(builder_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(builder_t *b, const char *fmt, ...)
{
    graph_t *g = b->g;
    va_list ap;
    char buf[1024];

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (b->oom ||
        util_grow((void **)&g->problems, &b->pcap, g->nproblems + 1, sizeof(*g->problems)) !=
            ERR_OK ||
        util_strdup(buf, &g->problems[g->nproblems]) != ERR_OK) {
        b->oom = true;
        return;
    }
    g->nproblems++;
}

static size_t add_node(builder_t *b, graph_kind_t kind, const char *name)
{
    graph_t *g = b->g;
    graph_node_t *n;

    if (b->oom ||
        util_grow((void **)&g->nodes, &b->ncap, g->nnodes + 1, sizeof(*g->nodes)) != ERR_OK) {
        b->oom = true;
        return GRAPH_NONE;
    }
    n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->cohort = GRAPH_NONE;
    if (util_strdup(name, &n->name) != ERR_OK) {
        b->oom = true;
        return GRAPH_NONE;
    }
    return g->nnodes++;
}

static size_t find_node(const graph_t *g, graph_kind_t kind, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == kind && strcmp(g->nodes[i].name, name) == 0)
            return i;
    return GRAPH_NONE;
}

static void add_edge(builder_t *b, size_t from, size_t to, char *label, size_t quota)
{
    graph_t *g = b->g;

    if (b->oom || from == GRAPH_NONE || to == GRAPH_NONE ||
        util_grow((void **)&g->edges, &b->ecap, g->nedges + 1, sizeof(*g->edges)) != ERR_OK) {
        free(label);
        b->oom = true;
        return;
    }
    g->edges[g->nedges++] = (graph_edge_t){from, to, label, quota};
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- quotas -----------------------------------------------------------------------------------
 */

static char *quota_text(const resource_quota_t *rq)
{
    char nom[QUANTITY_STR_MAX], bl[QUANTITY_STR_MAX], ll[QUANTITY_STR_MAX];

    quantity_format(rq->nominal, nom);
    if (rq->has_borrowing_limit)
        quantity_format(rq->borrowing_limit, bl);
    if (rq->has_lending_limit)
        quantity_format(rq->lending_limit, ll);
    return util_asprintf("%s %s%s%s%s%s%s%s%s", rq->name, nom,
                         rq->has_borrowing_limit || rq->has_lending_limit ? " (" : "",
                         rq->has_borrowing_limit ? "borrow ≤" : "",
                         rq->has_borrowing_limit ? bl : "",
                         rq->has_borrowing_limit && rq->has_lending_limit ? ", " : "",
                         rq->has_lending_limit ? "lend ≤" : "", rq->has_lending_limit ? ll : "",
                         rq->has_borrowing_limit || rq->has_lending_limit ? ")" : "");
}

static void add_quotas(builder_t *b, const resource_group_t *groups, size_t ngroups,
                       graph_quota_t **out, size_t *n)
{
    size_t total = 0, k = 0;

    for (size_t gi = 0; gi < ngroups; gi++)
        for (size_t fi = 0; fi < groups[gi].nflavors; fi++)
            total += groups[gi].flavors[fi].nresources;
    if (total == 0 || b->oom)
        return;
    *out = calloc(total, sizeof(**out));
    if (*out == NULL) {
        b->oom = true;
        return;
    }
    for (size_t gi = 0; gi < ngroups; gi++)
        for (size_t fi = 0; fi < groups[gi].nflavors; fi++) {
            const flavor_quotas_t *fq = &groups[gi].flavors[fi];
            /* GPU resources first, then the others as written. */
            for (size_t pass = 0; pass < 2; pass++)
                for (size_t ri = 0; ri < fq->nresources; ri++) {
                    const char *rn = fq->resources[ri].name ? fq->resources[ri].name : "";
                    bool gpu =
                        strcmp(rn, INV_RESOURCE_GPU) == 0 ||
                        strncmp(rn, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) == 0;
                    graph_quota_t *q;
                    if (gpu != (pass == 0))
                        continue;
                    q = &(*out)[k++];
                    if (util_strdup(fq->name ? fq->name : "", &q->flavor) != ERR_OK ||
                        util_strdup(fq->resources[ri].name ? fq->resources[ri].name : "",
                                    &q->resource) != ERR_OK ||
                        (q->text = quota_text(&fq->resources[ri])) == NULL)
                        b->oom = true;
                }
        }
    *n = k;
}

static void quotas_fini(graph_quota_t *q, size_t n)
{
    for (size_t i = 0; q != NULL && i < n; i++) {
        free(q[i].flavor);
        free(q[i].resource);
        free(q[i].text);
    }
    free(q);
}

/* ---- cohorts ----------------------------------------------------------------------------------
 */

static size_t find_cohort(const graph_t *g, const char *name)
{
    for (size_t i = 0; i < g->ncohorts; i++)
        if (strcmp(g->cohorts[i].name, name) == 0)
            return i;
    return GRAPH_NONE;
}

static size_t cohort_for(builder_t *b, const char *name)
{
    graph_t *g = b->g;
    size_t i = find_cohort(g, name);

    if (i != GRAPH_NONE || b->oom)
        return i;
    if (util_grow((void **)&g->cohorts, &b->ccap, g->ncohorts + 1, sizeof(*g->cohorts)) != ERR_OK) {
        b->oom = true;
        return GRAPH_NONE;
    }
    memset(&g->cohorts[g->ncohorts], 0, sizeof(g->cohorts[0]));
    g->cohorts[g->ncohorts].parent = GRAPH_NONE;
    if (util_strdup(name, &g->cohorts[g->ncohorts].name) != ERR_OK) {
        b->oom = true;
        return GRAPH_NONE;
    }
    return g->ncohorts++;
}

/* Depth-first from the roots, children by name: a parent precedes its children and a subtree is
 * contiguous. A cohort cycle (which Kueue refuses to admit in) is cut where it is found. */
static void order_cohorts(builder_t *b)
{
    graph_t *g = b->g;
    size_t n = g->ncohorts, *order = NULL, *map = NULL, no = 0;
    char **names = NULL;
    graph_cohort_t *sorted = NULL;

    if (n == 0 || b->oom)
        return;
    /* Cut cycles: walking up more than n steps means a loop. */
    for (size_t i = 0; i < n; i++) {
        size_t p = g->cohorts[i].parent, steps = 0;
        while (p != GRAPH_NONE && p != i && steps++ <= n)
            p = g->cohorts[p].parent;
        if (p == i) {
            problem(b, "cohort %s is in a cohort cycle: Kueue admits nothing there",
                    g->cohorts[i].name);
            g->cohorts[i].problem = true;
            g->cohorts[i].parent = GRAPH_NONE;
        }
    }
    order = malloc(n * sizeof(*order));
    map = malloc(n * sizeof(*map));
    names = malloc(n * sizeof(*names));
    sorted = calloc(n, sizeof(*sorted));
    if (order == NULL || map == NULL || names == NULL || sorted == NULL) {
        b->oom = true;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        names[i] = g->cohorts[i].name;
    qsort(names, n, sizeof(*names), cmp_str);
    /* Iterative DFS: repeatedly take, in name order, the first cohort not placed whose parent is
     * placed (or absent), inserting it right after its parent's subtree so far. Cohorts are few;
     * quadratic is fine. */
    while (no < n) {
        size_t pick = GRAPH_NONE, at = no;
        for (size_t k = 0; k < n && pick == GRAPH_NONE; k++) {
            size_t i = find_cohort(g, names[k]), p = g->cohorts[i].parent;
            bool placed = false, parent_placed = p == GRAPH_NONE;
            for (size_t j = 0; j < no; j++) {
                placed = placed || order[j] == i;
                parent_placed = parent_placed || order[j] == p;
            }
            if (!placed && parent_placed)
                pick = i;
        }
        if (pick == GRAPH_NONE)
            break; /* cannot happen once cycles are cut */
        if (g->cohorts[pick].parent != GRAPH_NONE) {
            /* After the parent and everything below it placed so far. */
            size_t j = 0;
            while (order[j] != g->cohorts[pick].parent)
                j++;
            for (at = j + 1; at < no; at++) {
                size_t a = order[at];
                bool below = false;
                for (size_t up = g->cohorts[a].parent; up != GRAPH_NONE && !below;
                     up = g->cohorts[up].parent)
                    below = up == g->cohorts[pick].parent;
                if (!below)
                    break;
            }
        }
        memmove(order + at + 1, order + at, (no - at) * sizeof(*order));
        order[at] = pick;
        no++;
    }
    for (size_t k = 0; k < no; k++) {
        sorted[k] = g->cohorts[order[k]];
        map[order[k]] = k;
    }
    for (size_t k = 0; k < no; k++)
        if (sorted[k].parent != GRAPH_NONE)
            sorted[k].parent = map[sorted[k].parent];
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].cohort != GRAPH_NONE)
            g->nodes[i].cohort = map[g->nodes[i].cohort];
    free(g->cohorts);
    g->cohorts = sorted;
    b->ccap = n;
    sorted = NULL;
out:
    free(order);
    free(map);
    free(names);
    free(sorted);
}

/* Is cohort `c` (an index) `anc` or below it? */
static bool cohort_within(const graph_t *g, size_t c, size_t anc)
{
    for (; c != GRAPH_NONE; c = g->cohorts[c].parent)
        if (c == anc)
            return true;
    return false;
}

/* ---- building ---------------------------------------------------------------------------------
 */

/* ---- live status ------------------------------------------------------------------------------
 */

/*
 * From the API server a queue carries the status its controller wrote (sluice's or Kueue's):
 * pendingWorkloads, admittedWorkloads and flavorsUsage. It is read field by field with every type
 * checked; anything malformed is simply not shown.
 */
static bool status_int(const json_t *st, const char *key, long long *out)
{
    const json_t *v = json_object_get(st, key);

    if (!json_is_integer(v))
        return false;
    *out = (long long)json_integer_value(v);
    return true;
}

/* "pending 3, admitted 5" (the counts present), or NULL (none, or out of memory: a detail line is
 * optional). */
static char *status_detail(const json_t *st)
{
    long long pending = 0, admitted = 0;
    bool p, a;

    if (st == NULL)
        return NULL;
    p = status_int(st, "pendingWorkloads", &pending);
    a = status_int(st, "admittedWorkloads", &admitted);
    if (p && a)
        return util_asprintf("pending %lld, admitted %lld", pending, admitted);
    if (p || a)
        return util_asprintf("%s %lld", p ? "pending" : "admitted", p ? pending : admitted);
    return NULL;
}

/* flavorsUsage[flavor].resources[resource].total as a canonical quantity into buf, or NULL. */
static const char *status_usage(const json_t *st, const char *flavor, const char *resource,
                                char *buf)
{
    const json_t *flavors = json_object_get(st, "flavorsUsage");

    for (size_t i = 0; i < json_array_size(flavors); i++) {
        const json_t *f = json_array_get(flavors, i), *res = json_object_get(f, "resources");
        const json_t *name = json_object_get(f, "name");
        if (!json_is_string(name) || strcmp(json_string_value(name), flavor) != 0)
            continue;
        for (size_t k = 0; k < json_array_size(res); k++) {
            const json_t *r = json_array_get(res, k), *rn = json_object_get(r, "name");
            const json_t *total = json_object_get(r, "total");
            quantity_t q;
            if (!json_is_string(rn) || strcmp(json_string_value(rn), resource) != 0)
                continue;
            if (json_is_string(total) &&
                quantity_parse(json_string_value(total), json_string_length(total), &q, NULL) ==
                    ERR_OK)
                return quantity_format(q, buf);
            if (json_is_integer(total))
                return quantity_format(
                    quantity_from_int((int64_t)json_integer_value(total), QUANTITY_DECIMAL_SI),
                    buf);
            return NULL;
        }
    }
    return NULL;
}

/* Append ", used X" to each quota line the status has usage for. */
static void add_usage(builder_t *b, graph_node_t *n, const json_t *st)
{
    for (size_t q = 0; st != NULL && q < n->nquotas && !b->oom; q++) {
        char buf[QUANTITY_STR_MAX], *text;
        const char *used = status_usage(st, n->quotas[q].flavor, n->quotas[q].resource, buf);
        if (used == NULL)
            continue;
        text = util_asprintf("%s, used %s", n->quotas[q].text, used);
        if (text == NULL) {
            b->oom = true;
            return;
        }
        free(n->quotas[q].text);
        n->quotas[q].text = text;
    }
}

static int cmp_lq(const void *a, const void *b)
{
    const local_queue_t *x = *(const local_queue_t *const *)a,
                        *y = *(const local_queue_t *const *)b;
    int r = strcmp(x->meta.namespace ? x->meta.namespace : "",
                   y->meta.namespace ? y->meta.namespace : "");

    return r != 0 ? r : strcmp(x->meta.name ? x->meta.name : "", y->meta.name ? y->meta.name : "");
}

static void build_queues(builder_t *b)
{
    const inv_view_t *v = b->v;
    graph_t *g = b->g;
    const cluster_queue_t **cqs = NULL;
    const local_queue_t **lqs = NULL;

    /* Cohorts: declared, then named by ClusterQueues, then parents. */
    for (size_t i = 0; i < v->ncohorts; i++) {
        size_t c = cohort_for(b, v->cohorts[i]->meta.name ? v->cohorts[i]->meta.name : "");
        if (c == GRAPH_NONE)
            return;
        g->cohorts[c].declared = true;
        add_quotas(b, v->cohorts[i]->groups, v->cohorts[i]->ngroups, &g->cohorts[c].quotas,
                   &g->cohorts[c].nquotas);
    }
    for (size_t i = 0; i < v->ncohorts; i++)
        if (v->cohorts[i]->parent != NULL) {
            size_t p = cohort_for(b, v->cohorts[i]->parent);
            size_t c = find_cohort(g, v->cohorts[i]->meta.name ? v->cohorts[i]->meta.name : "");
            if (p != GRAPH_NONE && c != GRAPH_NONE)
                g->cohorts[c].parent = p;
        }
    for (size_t i = 0; i < v->ncqs; i++)
        if (v->cqs[i]->cohort != NULL)
            cohort_for(b, v->cqs[i]->cohort);

    /* LocalQueues by namespace and name. */
    lqs = malloc((v->nlqs ? v->nlqs : 1) * sizeof(*lqs));
    cqs = malloc((v->ncqs ? v->ncqs : 1) * sizeof(*cqs));
    if (lqs == NULL || cqs == NULL) {
        b->oom = true;
        goto out;
    }
    memcpy(lqs, v->lqs, v->nlqs * sizeof(*lqs));
    qsort(lqs, v->nlqs, sizeof(*lqs), cmp_lq);
    for (size_t i = 0; i < v->nlqs; i++) {
        char *name = util_asprintf("%s/%s", lqs[i]->meta.namespace ? lqs[i]->meta.namespace : "",
                                   lqs[i]->meta.name ? lqs[i]->meta.name : "");
        size_t n = GRAPH_NONE;
        if (name == NULL)
            b->oom = true;
        else
            n = add_node(b, GRAPH_LQ, name);
        free(name);
        for (size_t j = 0; n != GRAPH_NONE && v->lq_status != NULL && j < v->nlqs; j++)
            if (v->lqs[j] == lqs[i])
                g->nodes[n].detail = status_detail(v->lq_status[j]);
    }
    /* ClusterQueues, with their cohort; the order is fixed once cohorts are ordered. */
    memcpy(cqs, v->cqs, v->ncqs * sizeof(*cqs));
    for (size_t i = 0; i < v->ncqs; i++) {
        size_t n = add_node(b, GRAPH_CQ, cqs[i]->meta.name ? cqs[i]->meta.name : "");
        if (n == GRAPH_NONE)
            goto out;
        if (cqs[i]->cohort != NULL)
            g->nodes[n].cohort = find_cohort(g, cqs[i]->cohort);
        add_quotas(b, cqs[i]->groups, cqs[i]->ngroups, &g->nodes[n].quotas, &g->nodes[n].nquotas);
        if (v->cq_status != NULL && v->cq_status[i] != NULL) {
            g->nodes[n].detail = status_detail(v->cq_status[i]);
            add_usage(b, &g->nodes[n], v->cq_status[i]);
        }
    }
    /* A LocalQueue's ClusterQueue may be missing: drawn, and said. */
    for (size_t i = 0; i < v->nlqs && !b->oom; i++) {
        const char *cq = lqs[i]->cluster_queue ? lqs[i]->cluster_queue : "";
        size_t to = find_node(g, GRAPH_CQ, cq);
        if (to == GRAPH_NONE) {
            to = add_node(b, GRAPH_CQ, cq);
            if (to != GRAPH_NONE)
                g->nodes[to].missing = g->nodes[to].problem = true;
            g->nodes[i].problem = true;
            problem(b, "LocalQueue %s points to ClusterQueue %s, which does not exist",
                    g->nodes[i].name, cq);
        }
        add_edge(b, i, to, NULL, GRAPH_NONE);
    }
out:
    free(lqs);
    free(cqs);
}

static int cq_key_cmp(const graph_t *g, const graph_node_t *a, const graph_node_t *b)
{
    /* Cohort members in cohort order (the cohorts are ordered by now), the cohortless last. */
    if (a->cohort != b->cohort) {
        if (a->cohort == GRAPH_NONE || b->cohort == GRAPH_NONE)
            return a->cohort == GRAPH_NONE ? 1 : -1;
        return a->cohort < b->cohort ? -1 : 1;
    }
    (void)g;
    return strcmp(a->name, b->name);
}

/* Reorder the ClusterQueue nodes (a contiguous run after the LocalQueues) by cohort, then name,
 * and fix the LocalQueue edges that point at them. */
static void sort_cqs(builder_t *b)
{
    graph_t *g = b->g;
    size_t first = 0, last, n, *map;

    while (first < g->nnodes && g->nodes[first].kind == GRAPH_LQ)
        first++;
    for (last = first; last < g->nnodes && g->nodes[last].kind == GRAPH_CQ; last++)
        ;
    n = last - first;
    if (n < 2 || b->oom)
        return;
    map = malloc(g->nnodes * sizeof(*map));
    if (map == NULL) {
        b->oom = true;
        return;
    }
    /* Insertion sort of the run, tracking where each node went. */
    for (size_t i = 0; i < g->nnodes; i++)
        map[i] = i;
    for (size_t i = first + 1; i < last; i++) {
        graph_node_t v = g->nodes[i];
        size_t vi = map[i], j = i;
        while (j > first && cq_key_cmp(g, &g->nodes[j - 1], &v) > 0) {
            g->nodes[j] = g->nodes[j - 1];
            map[j] = map[j - 1];
            j--;
        }
        g->nodes[j] = v;
        map[j] = vi;
    }
    /* map[new] = old; edges hold old indices. */
    for (size_t e = 0; e < g->nedges; e++)
        for (size_t i = first; i < last; i++)
            if (map[i] == g->edges[e].to) {
                g->edges[e].to = i;
                break;
            }
    free(map);
}

static void build_flavors(builder_t *b)
{
    const inv_view_t *v = b->v;
    graph_t *g = b->g;
    size_t ncq_end = g->nnodes;

    /* In order of first use by the ClusterQueues as drawn, then unused ones by name. */
    for (size_t i = 0; i < ncq_end; i++)
        for (size_t q = 0; q < g->nodes[i].nquotas; q++) {
            const char *f = g->nodes[i].quotas[q].flavor;
            if (find_node(g, GRAPH_FLAVOR, f) == GRAPH_NONE) {
                bool defined = false;
                for (size_t k = 0; k < v->nflavors && !defined; k++)
                    defined = v->flavors[k]->meta.name && strcmp(v->flavors[k]->meta.name, f) == 0;
                size_t n = add_node(b, GRAPH_FLAVOR, f);
                if (n != GRAPH_NONE && !defined) {
                    g->nodes[n].missing = g->nodes[n].problem = true;
                }
            }
        }
    for (size_t c = 0; c < g->ncohorts; c++)
        for (size_t q = 0; q < g->cohorts[c].nquotas; q++)
            if (find_node(g, GRAPH_FLAVOR, g->cohorts[c].quotas[q].flavor) == GRAPH_NONE)
                add_node(b, GRAPH_FLAVOR, g->cohorts[c].quotas[q].flavor);
    {
        size_t start = g->nnodes;
        for (size_t k = 0; k < v->nflavors; k++) {
            const char *f = v->flavors[k]->meta.name ? v->flavors[k]->meta.name : "";
            if (find_node(g, GRAPH_FLAVOR, f) == GRAPH_NONE) {
                size_t n = add_node(b, GRAPH_FLAVOR, f);
                if (n != GRAPH_NONE)
                    g->nodes[n].problem = true;
                problem(b, "ResourceFlavor %s: no ClusterQueue or Cohort has quota on it", f);
            }
        }
        (void)start;
    }
    /* CQ -> flavor edges, labelled with that flavor's quota lines. */
    for (size_t i = 0; i < ncq_end && !b->oom; i++) {
        graph_node_t *cq = &g->nodes[i];
        if (cq->kind != GRAPH_CQ)
            continue;
        for (size_t q = 0; q < cq->nquotas; q++) {
            size_t first = q, len = 0, f;
            char *label;
            bool seen = false;
            for (size_t k = 0; k < q && !seen; k++)
                seen = strcmp(cq->quotas[k].flavor, cq->quotas[q].flavor) == 0;
            if (seen)
                continue;
            for (size_t k = q; k < cq->nquotas; k++)
                if (strcmp(cq->quotas[k].flavor, cq->quotas[q].flavor) == 0)
                    len += strlen(cq->quotas[k].text) + 1;
            label = malloc(len + 1);
            if (label == NULL) {
                b->oom = true;
                return;
            }
            label[0] = '\0';
            for (size_t k = q; k < cq->nquotas; k++)
                if (strcmp(cq->quotas[k].flavor, cq->quotas[q].flavor) == 0) {
                    if (label[0] != '\0')
                        strcat(label, "\n");
                    strcat(label, cq->quotas[k].text);
                }
            f = find_node(g, GRAPH_FLAVOR, cq->quotas[q].flavor);
            if (f != GRAPH_NONE && g->nodes[f].missing)
                problem(b, "ClusterQueue %s has quota on ResourceFlavor %s, which does not exist",
                        cq->name, cq->quotas[q].flavor);
            add_edge(b, i, f, label, first);
        }
    }
}

static const flavor_t *flavor_object(const builder_t *b, const char *name)
{
    for (size_t k = 0; k < b->v->nflavors; k++)
        if (b->v->flavors[k]->meta.name && strcmp(b->v->flavors[k]->meta.name, name) == 0)
            return b->v->flavors[k];
    return NULL;
}

static char *pool_name(const inventory_t *inv, const inv_pool_t *p)
{
    char buf[512] = "";
    size_t n = 0;

    for (size_t k = 0; k < inv->nkeys; k++) {
        if (p->values[k] == NULL)
            continue;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", p->values[k]);
        if (n >= sizeof(buf))
            break;
    }
    return util_asprintf("%s", buf[0] ? buf : "(no GPU labels)");
}

static char *pool_detail(const inv_pool_t *p)
{
    char buf[512], q[QUANTITY_STR_MAX];
    size_t n =
        (size_t)snprintf(buf, sizeof(buf), "%zu node%s", p->nnodes, p->nnodes == 1 ? "" : "s");

    for (size_t i = 0; i < p->allocatable.len && n < sizeof(buf); i++) {
        const resource_t *r = &p->allocatable.items[i];
        if (strcmp(r->name, INV_RESOURCE_GPU) != 0 &&
            strncmp(r->name, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) != 0)
            continue;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, ", %s %s", quantity_format(r->value, q),
                              r->name);
    }
    for (size_t k = 0; k < 2 && n < sizeof(buf); k++) {
        const quantity_t *v = resource_list_get(&p->allocatable, k == 0 ? "cpu" : "memory");
        if (v != NULL)
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, ", %s %s", quantity_format(*v, q),
                                  k == 0 ? "cpu" : "memory");
    }
    return util_asprintf("%s", buf);
}

static void build_pools(builder_t *b)
{
    const inventory_t *inv = b->inv;
    graph_t *g = b->g;
    size_t flavors_end = g->nnodes;

    if (inv == NULL)
        return;
    for (size_t pi = 0; pi < inv->npools && !b->oom; pi++) {
        const inv_pool_t *p = &inv->pools[pi];
        size_t node = GRAPH_NONE;
        for (size_t f = 0; f < flavors_end; f++) {
            const flavor_t *fo;
            size_t k = 0;
            if (g->nodes[f].kind != GRAPH_FLAVOR || g->nodes[f].missing)
                continue;
            fo = flavor_object(b, g->nodes[f].name);
            for (size_t i = 0; fo != NULL && i < p->nnodes; i++)
                k += capacity_selects(fo, &inv->nodes[p->nodes[i]]);
            if (k == 0)
                continue;
            if (node == GRAPH_NONE) {
                char *name = pool_name(inv, p);
                node = name ? add_node(b, GRAPH_POOL, name) : GRAPH_NONE;
                free(name);
                if (node == GRAPH_NONE) {
                    b->oom = true;
                    return;
                }
            }
            add_edge(b, f, node,
                     k < p->nnodes ? util_asprintf("%zu of %zu nodes", k, p->nnodes) : NULL,
                     GRAPH_NONE);
        }
        if (node == GRAPH_NONE && p->gpu) {
            char *name = pool_name(inv, p);
            node = name ? add_node(b, GRAPH_POOL, name) : GRAPH_NONE;
            free(name);
        }
        if (node != GRAPH_NONE && (g->nodes[node].detail = pool_detail(p)) == NULL)
            b->oom = true;
    }
}

/* ---- problems ---------------------------------------------------------------------------------
 */

static void flavor_problems(builder_t *b, const capacity_t *cap)
{
    graph_t *g = b->g;

    for (size_t f = 0; f < g->nnodes && b->inv != NULL; f++) {
        const flavor_t *fo;
        bool served = false;
        if (g->nodes[f].kind != GRAPH_FLAVOR || g->nodes[f].missing)
            continue;
        fo = flavor_object(b, g->nodes[f].name);
        for (size_t i = 0; fo != NULL && i < b->inv->nnodes && !served; i++)
            served = capacity_selects(fo, &b->inv->nodes[i]);
        if (!served) {
            g->nodes[f].problem = true;
            problem(b, "ResourceFlavor %s selects no node: no node has all its nodeLabels",
                    g->nodes[f].name);
        }
    }
    for (size_t r = 0; cap != NULL && r < cap->nrows; r++) {
        char buf[1024];
        size_t f;
        if (!capacity_over(&cap->rows[r]) || cap->rows[r].nnodes == 0)
            continue;
        f = find_node(g, GRAPH_FLAVOR, cap->rows[r].flavor->meta.name);
        if (f != GRAPH_NONE)
            g->nodes[f].problem = true;
        problem(b, "flavor %s: %s", cap->rows[r].flavor->meta.name,
                capacity_message(&cap->rows[r], buf, sizeof(buf)));
    }
}

/* Lendable quota of one line: its lendingLimit when set, else all of its nominal quota. */
static bool lends(const resource_group_t *groups, size_t ngroups)
{
    for (size_t gi = 0; gi < ngroups; gi++)
        for (size_t fi = 0; fi < groups[gi].nflavors; fi++)
            for (size_t ri = 0; ri < groups[gi].flavors[fi].nresources; ri++) {
                const resource_quota_t *rq = &groups[gi].flavors[fi].resources[ri];
                if (quantity_sign(rq->has_lending_limit ? rq->lending_limit : rq->nominal) > 0)
                    return true;
            }
    return false;
}

/* A cohort exists for sharing: when nothing in it can be lent (every member's lendingLimit is 0
 * or its quota is 0, and the cohort itself holds none), no member can ever borrow. */
static void cohort_problems(builder_t *b)
{
    const inv_view_t *v = b->v;
    graph_t *g = b->g;

    for (size_t c = 0; c < g->ncohorts; c++) {
        size_t members = 0;
        bool lend = false;
        for (size_t i = 0; i < v->ncqs; i++) {
            size_t ci = v->cqs[i]->cohort ? find_cohort(g, v->cqs[i]->cohort) : GRAPH_NONE;
            if (ci == GRAPH_NONE || !cohort_within(g, ci, c))
                continue;
            members++;
            lend = lend || lends(v->cqs[i]->groups, v->cqs[i]->ngroups);
        }
        for (size_t i = 0; i < v->ncohorts; i++) {
            size_t ci =
                v->cohorts[i]->meta.name ? find_cohort(g, v->cohorts[i]->meta.name) : GRAPH_NONE;
            if (ci != GRAPH_NONE && cohort_within(g, ci, c))
                lend = lend || lends(v->cohorts[i]->groups, v->cohorts[i]->ngroups);
        }
        if (members >= 2 && !lend) {
            g->cohorts[c].problem = true;
            problem(b,
                    "cohort %s: its %zu ClusterQueues lend nothing (every lendingLimit or quota "
                    "is 0): none of them can borrow",
                    g->cohorts[c].name, members);
        }
    }
}

static void queue_problems(builder_t *b)
{
    graph_t *g = b->g;

    if (b->v->nlqs == 0)
        return;
    for (size_t i = 0; i < g->nnodes; i++) {
        bool fed = false;
        if (g->nodes[i].kind != GRAPH_CQ || g->nodes[i].missing)
            continue;
        for (size_t e = 0; e < g->nedges && !fed; e++)
            fed = g->edges[e].to == i && g->nodes[g->edges[e].from].kind == GRAPH_LQ;
        if (!fed) {
            g->nodes[i].problem = true;
            problem(
                b, "ClusterQueue %s: no LocalQueue points to it, so nothing can be submitted to it",
                g->nodes[i].name);
        }
    }
}

/* ---- entry points -----------------------------------------------------------------------------
 */

void graph_fini(graph_t *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->nnodes; i++) {
        free(g->nodes[i].name);
        free(g->nodes[i].detail);
        quotas_fini(g->nodes[i].quotas, g->nodes[i].nquotas);
    }
    free(g->nodes);
    for (size_t i = 0; i < g->nedges; i++)
        free(g->edges[i].label);
    free(g->edges);
    for (size_t i = 0; i < g->ncohorts; i++) {
        free(g->cohorts[i].name);
        quotas_fini(g->cohorts[i].quotas, g->cohorts[i].nquotas);
    }
    free(g->cohorts);
    strv_free(g->problems, g->nproblems);
    memset(g, 0, sizeof(*g));
}

err_t graph_build(const inv_view_t *view, const inventory_t *inv, const capacity_t *cap,
                  graph_t *out, err_msg_t *msg)
{
    graph_t g = {0};
    builder_t b = {.g = &g, .v = view, .inv = inv};

    memset(out, 0, sizeof(*out));
    g.have_nodes = inv != NULL;
    /* Each step reads what the ones before built: none runs on a half-built graph (a quota
     * whose flavor name could not be copied, say) once an allocation has failed. */
    build_queues(&b);
    if (!b.oom)
        order_cohorts(&b);
    if (!b.oom)
        sort_cqs(&b);
    if (!b.oom)
        build_flavors(&b);
    if (!b.oom)
        build_pools(&b);
    if (!b.oom) {
        flavor_problems(&b, cap);
        cohort_problems(&b);
        queue_problems(&b);
    }
    if (b.oom) {
        graph_fini(&g);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    *out = g;
    return ERR_OK;
}
