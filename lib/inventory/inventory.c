/* inventory -- node pools grouped by label values (GPU Feature Discovery's by default). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/inventory.h"

#include "model/requests.h"
#include "util/grow.h"
#include "util/str.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * How a pool is formed: the nodes are sorted by the values of the grouping labels (a missing
 * label sorts after every value, so the pools of GPU nodes come first and the nodes without any
 * of the labels -- CPU nodes, usually -- form the last pool), then by name; each run of equal
 * values is a pool. Sums are exact quantities. Nothing here depends on hashing or on the order
 * the API server listed the nodes in, so the same cluster always prints the same inventory.
 */

const char *const inventory_default_keys[3] = {INV_LABEL_PRODUCT, INV_LABEL_MEMORY,
                                               INV_LABEL_MIG_STRATEGY};

/* ---- node facts ------------------------------------------------------------------------------ */

bool inventory_gpu_labelled(const node_t *node, const char **why)
{
    static const char *const any_value[] = {INV_LABEL_PRODUCT, INV_LABEL_GPU_COUNT, NULL};
    static const char *const true_value[] = {INV_LABEL_GPU_PRESENT, INV_LABEL_NFD_PCI_10DE, NULL};
    const kv_list_t *l = &node->meta.labels;

    for (size_t i = 0; any_value[i] != NULL; i++)
        if (kv_list_get(l, any_value[i]) != NULL) {
            if (why != NULL)
                *why = any_value[i];
            return true;
        }
    for (size_t i = 0; true_value[i] != NULL; i++) {
        const char *v = kv_list_get(l, true_value[i]);
        if (v != NULL && strcmp(v, "true") == 0) {
            if (why != NULL)
                *why = true_value[i];
            return true;
        }
    }
    return false;
}

static bool is_gpu_resource(const char *name)
{
    return strcmp(name, INV_RESOURCE_GPU) == 0 ||
           strncmp(name, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) == 0;
}

bool inventory_gpu_exposed(const node_t *node)
{
    for (size_t i = 0; i < node->allocatable.len; i++)
        if (is_gpu_resource(node->allocatable.items[i].name) &&
            quantity_sign(node->allocatable.items[i].value) > 0)
            return true;
    return false;
}

const char *inventory_driver(const node_t *node, char *buf, size_t size)
{
    const kv_list_t *l = &node->meta.labels;
    const char *major = kv_list_get(l, INV_LABEL_DRIVER_MAJOR);
    const char *minor = kv_list_get(l, INV_LABEL_DRIVER_MINOR);
    const char *rev = kv_list_get(l, INV_LABEL_DRIVER_REV);

    if (major == NULL || size == 0)
        return NULL;
    snprintf(buf, size, "%s%s%s%s%s", major, minor ? "." : "", minor ? minor : "",
             minor && rev && rev[0] ? "." : "", minor && rev ? rev : "");
    return buf;
}

/* ---- grouping -------------------------------------------------------------------------------- */

typedef struct sort_ctx_s {
    const node_t *nodes;
    char *const *keys;
    size_t nkeys;
} sort_ctx_t;

/* Compare two optional label values: absent after every value. */
static int cmp_value(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a == NULL) - (b == NULL);
    return strcmp(a, b);
}

static int cmp_group(const sort_ctx_t *c, size_t a, size_t b)
{
    for (size_t k = 0; k < c->nkeys; k++) {
        int r = cmp_value(kv_list_get(&c->nodes[a].meta.labels, c->keys[k]),
                          kv_list_get(&c->nodes[b].meta.labels, c->keys[k]));
        if (r != 0)
            return r;
    }
    return 0;
}

/* Insertion sort keeps this free of qsort's missing context argument; inventories are a few
 * thousand nodes at most and the sort runs once. Ties by node name. */
static void sort_nodes(const sort_ctx_t *c, size_t *idx, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        size_t v = idx[i], j = i;
        while (j > 0) {
            int r = cmp_group(c, idx[j - 1], v);
            if (r == 0)
                r = cmp_value(c->nodes[idx[j - 1]].meta.name, c->nodes[v].meta.name);
            if (r <= 0)
                break;
            idx[j] = idx[j - 1];
            j--;
        }
        idx[j] = v;
    }
}

static bool taint_equal(const taint_t *a, const taint_t *b)
{
    return a->effect == b->effect && cmp_value(a->key, b->key) == 0 &&
           cmp_value(a->value ? a->value : "", b->value ? b->value : "") == 0;
}

static bool node_has_taint(const node_t *n, const taint_t *t)
{
    for (size_t i = 0; i < n->ntaints; i++)
        if (taint_equal(&n->taints[i], t))
            return true;
    return false;
}

/* The taints of the pool's first node that every other node carries too. */
static err_t pool_taints(const inventory_t *inv, inv_pool_t *p)
{
    const node_t *first = &inv->nodes[p->nodes[0]];

    if (first->ntaints == 0)
        return ERR_OK;
    p->taints = calloc(first->ntaints, sizeof(*p->taints));
    if (p->taints == NULL)
        return ERR_NOMEM;
    for (size_t t = 0; t < first->ntaints; t++) {
        bool all = true;
        taint_t *dst;
        for (size_t i = 1; i < p->nnodes && all; i++)
            all = node_has_taint(&inv->nodes[p->nodes[i]], &first->taints[t]);
        if (!all)
            continue;
        dst = &p->taints[p->ntaints++];
        dst->effect = first->taints[t].effect;
        if (util_strdup(first->taints[t].key, &dst->key) != ERR_OK ||
            util_strdup(first->taints[t].value, &dst->value) != ERR_OK)
            return ERR_NOMEM;
    }
    return ERR_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static err_t pool_drivers(const inventory_t *inv, inv_pool_t *p)
{
    size_t cap = 0;

    for (size_t i = 0; i < p->nnodes; i++) {
        char buf[128];
        const char *d = inventory_driver(&inv->nodes[p->nodes[i]], buf, sizeof(buf));
        bool seen = false;
        if (d == NULL)
            continue;
        for (size_t k = 0; k < p->ndrivers && !seen; k++)
            seen = strcmp(p->drivers[k], d) == 0;
        if (seen)
            continue;
        if (util_grow((void **)&p->drivers, &cap, p->ndrivers + 1, sizeof(*p->drivers)) != ERR_OK)
            return ERR_NOMEM;
        if (util_strdup(d, &p->drivers[p->ndrivers]) != ERR_OK)
            return ERR_NOMEM;
        p->ndrivers++;
    }
    if (p->ndrivers > 1)
        qsort(p->drivers, p->ndrivers, sizeof(*p->drivers), cmp_str);
    return ERR_OK;
}

/* ---- suggested flavor names ------------------------------------------------------------------ */

/* "NVIDIA-A100-SXM4-80GB" -> "a100-sxm4-80gb": lower case, each run of other characters as one
 * '-', NVIDIA's prefix dropped, at most 48 characters (room for "-mig" and a "-NN" suffix). */
static void name_from(const char *text, char *buf, size_t size)
{
    size_t n = 0;
    bool dash = false;

    if (strlen(text) > 7 && strncmp(text, "NVIDIA", 6) == 0 && !(text[6] >= '0' && text[6] <= '9'))
        text += 7;
    for (const char *s = text; *s != '\0' && n + 2 < size && n < 48; s++) {
        char c = *s;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
            if (dash && n > 0)
                buf[n++] = '-';
            dash = false;
            buf[n++] = c;
        } else {
            dash = true;
        }
    }
    buf[n] = '\0';
}

/* Has the pool any grouping label? (Without one a flavor's nodeLabels would select every node.) */
static bool pool_labelled(const inventory_t *inv, const inv_pool_t *p)
{
    for (size_t k = 0; k < inv->nkeys; k++)
        if (p->values[k] != NULL)
            return true;
    return false;
}

static bool name_taken(const inventory_t *inv, size_t upto, const char *name)
{
    for (size_t i = 0; i < upto; i++)
        if (inv->pools[i].flavor != NULL && strcmp(inv->pools[i].flavor, name) == 0)
            return true;
    return false;
}

/* The product names the flavor when it is a grouping key, else the values joined; the mixed MIG
 * strategy adds "-mig" (its pods request nvidia.com/mig-* instead of nvidia.com/gpu). Names are
 * made unique with -2, -3, ... in pool order. */
static err_t pool_flavor_name(inventory_t *inv, size_t pi)
{
    inv_pool_t *p = &inv->pools[pi];
    char base[128] = "", part[64], name[160];
    const char *mig = NULL;

    for (size_t k = 0; k < inv->nkeys; k++) {
        if (strcmp(inv->keys[k], INV_LABEL_PRODUCT) == 0 && p->values[k] != NULL)
            name_from(p->values[k], base, sizeof(base));
        if (strcmp(inv->keys[k], INV_LABEL_MIG_STRATEGY) == 0)
            mig = p->values[k];
    }
    if (base[0] == '\0') {
        size_t n = 0;
        for (size_t k = 0; k < inv->nkeys && n < 48; k++) {
            if (p->values[k] == NULL)
                continue;
            name_from(p->values[k], part, sizeof(part));
            if (part[0] == '\0')
                continue;
            n += (size_t)snprintf(base + n, sizeof(base) - n, "%s%s", n ? "-" : "", part);
        }
        if (n > 48)
            base[48] = '\0';
        while (n > 0 && base[strlen(base) - 1] == '-')
            base[strlen(base) - 1] = '\0', n--;
    }
    if (base[0] == '\0')
        snprintf(base, sizeof(base), "gpu");
    if (mig != NULL && strcmp(mig, "mixed") == 0)
        strncat(base, "-mig", sizeof(base) - strlen(base) - 1);
    snprintf(name, sizeof(name), "%s", base);
    for (unsigned n = 2; name_taken(inv, pi, name); n++)
        snprintf(name, sizeof(name), "%s-%u", base, n);
    return util_strdup(name, &p->flavor);
}

/* ---- problems -------------------------------------------------------------------------------- */

static err_t add_problem(inventory_t *inv, size_t *cap, size_t node, char *text)
{
    if (text == NULL || util_grow((void **)&inv->problems, cap, inv->nproblems + 1,
                                  sizeof(*inv->problems)) != ERR_OK) {
        free(text);
        return ERR_NOMEM;
    }
    inv->problems[inv->nproblems].node = node;
    inv->problems[inv->nproblems++].text = text;
    return ERR_OK;
}

/*
 * The seeds' "resource invisible": a node GPU Feature Discovery (or NFD) labelled as a GPU node
 * whose allocatable has no GPU resource -- the device plugin is not running, crashed, or cannot
 * see the driver, so no pod can request its cards while quotas count them. Also a node whose
 * gpu.count label says more GPUs than it exposes (an unhealthy card the plugin withdrew).
 */
static err_t node_problems(inventory_t *inv, size_t i, size_t *cap)
{
    const node_t *n = &inv->nodes[i];
    const char *why = NULL, *count, *mig;
    const quantity_t *gpu;

    if (!inventory_gpu_labelled(n, &why))
        return ERR_OK;
    if (!inventory_gpu_exposed(n))
        return add_problem(inv, cap, i,
                           util_asprintf("labelled as a GPU node (%s=%s) but exposes no %s or "
                                         "%s* resource: is the NVIDIA device plugin running?",
                                         why, kv_list_get(&n->meta.labels, why), INV_RESOURCE_GPU,
                                         INV_RESOURCE_MIG_PREFIX));
    count = kv_list_get(&n->meta.labels, INV_LABEL_GPU_COUNT);
    mig = kv_list_get(&n->meta.labels, INV_LABEL_MIG_STRATEGY);
    gpu = resource_list_get(&n->allocatable, INV_RESOURCE_GPU);
    if (count != NULL && gpu != NULL && (mig == NULL || strcmp(mig, "mixed") != 0)) {
        quantity_t want;
        char a[QUANTITY_STR_MAX];
        if (quantity_parse(count, strlen(count), &want, NULL) == ERR_OK &&
            quantity_cmp(*gpu, want) < 0)
            return add_problem(inv, cap, i,
                               util_asprintf("%s=%s but allocatable %s is %s: a GPU is unhealthy "
                                             "or withheld by the device plugin",
                                             INV_LABEL_GPU_COUNT, count, INV_RESOURCE_GPU,
                                             quantity_format(*gpu, a)));
    }
    if (n->has_ready && !n->ready)
        return add_problem(inv, cap, i, util_asprintf("GPU node is not Ready"));
    return ERR_OK;
}

/* ---- build ----------------------------------------------------------------------------------- */

static err_t build_pool(inventory_t *inv, inv_pool_t *p, const size_t *idx, size_t n,
                        err_msg_t *msg)
{
    const node_t *first = &inv->nodes[idx[0]];
    err_t e;

    p->values = calloc(inv->nkeys, sizeof(*p->values));
    p->nodes = malloc(n * sizeof(*p->nodes));
    if (p->values == NULL || p->nodes == NULL)
        return ERR_NOMEM;
    memcpy(p->nodes, idx, n * sizeof(*idx));
    p->nnodes = n;
    for (size_t k = 0; k < inv->nkeys; k++) {
        if (util_strdup(kv_list_get(&first->meta.labels, inv->keys[k]), &p->values[k]) != ERR_OK)
            return ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const node_t *node = &inv->nodes[idx[i]];
        if (node->has_ready && node->ready)
            p->nready++;
        if (node->unschedulable)
            p->ncordoned++;
        if (inventory_gpu_labelled(node, NULL) || inventory_gpu_exposed(node))
            p->gpu = true;
        e = requests_add(&p->allocatable, &node->allocatable, msg);
        if (e != ERR_OK) {
            if (e == ERR_OVERFLOW && msg != NULL) {
                err_msg_t inner = *msg;
                snprintf(msg->text, sizeof(msg->text), "node %s: allocatable: %s",
                         node->meta.name ? node->meta.name : "", inner.text);
            }
            return e;
        }
    }
    e = pool_taints(inv, p);
    if (e == ERR_OK)
        e = pool_drivers(inv, p);
    return e;
}

static void pool_fini(inv_pool_t *p, size_t nkeys)
{
    strv_free(p->values, p->values ? nkeys : 0);
    free(p->nodes);
    resource_list_fini(&p->allocatable);
    TYPES_FREE_ARRAY(p->taints, p->ntaints, taint_fini);
    strv_free(p->drivers, p->ndrivers);
    free(p->flavor);
    memset(p, 0, sizeof(*p));
}

void inventory_fini(inventory_t *inv)
{
    if (inv == NULL)
        return;
    for (size_t i = 0; i < inv->npools; i++)
        pool_fini(&inv->pools[i], inv->nkeys);
    free(inv->pools);
    for (size_t i = 0; i < inv->nproblems; i++)
        free(inv->problems[i].text);
    free(inv->problems);
    strv_free(inv->keys, inv->nkeys);
    memset(inv, 0, sizeof(*inv));
}

err_t inventory_build(const node_t *nodes, size_t nnodes, const char *const *keys, size_t nkeys,
                      inventory_t *out, err_msg_t *msg)
{
    inventory_t inv;
    sort_ctx_t sc;
    size_t *idx = NULL, pcap = 0;
    err_t e = ERR_NOMEM;

    memset(out, 0, sizeof(*out));
    memset(&inv, 0, sizeof(inv));
    if (nkeys == 0 || nkeys > INV_MAX_KEYS)
        return err_set(msg, ERR_INVALID, "between 1 and %d label keys to group by", INV_MAX_KEYS);
    inv.nodes = nodes;
    inv.nnodes = nnodes;
    inv.keys = calloc(nkeys, sizeof(*inv.keys));
    if (inv.keys == NULL)
        goto fail;
    for (size_t k = 0; k < nkeys; k++) {
        if (util_strdup(keys[k], &inv.keys[k]) != ERR_OK)
            goto fail;
        inv.nkeys = k + 1;
    }
    idx = malloc((nnodes ? nnodes : 1) * sizeof(*idx));
    if (idx == NULL)
        goto fail;
    for (size_t i = 0; i < nnodes; i++)
        idx[i] = i;
    sc = (sort_ctx_t){nodes, inv.keys, inv.nkeys};
    sort_nodes(&sc, idx, nnodes);
    for (size_t start = 0, end; start < nnodes; start = end) {
        for (end = start + 1; end < nnodes && cmp_group(&sc, idx[start], idx[end]) == 0; end++)
            ;
        if (util_grow((void **)&inv.pools, &pcap, inv.npools + 1, sizeof(*inv.pools)) != ERR_OK)
            goto fail;
        memset(&inv.pools[inv.npools], 0, sizeof(inv.pools[0]));
        inv.npools++;
        e = build_pool(&inv, &inv.pools[inv.npools - 1], idx + start, end - start, msg);
        if (e != ERR_OK)
            goto fail;
        e = ERR_NOMEM;
    }
    for (size_t i = 0; i < inv.npools; i++)
        if (inv.pools[i].gpu && pool_labelled(&inv, &inv.pools[i]) &&
            pool_flavor_name(&inv, i) != ERR_OK)
            goto fail;
    pcap = 0;
    for (size_t i = 0; i < nnodes; i++)
        if (node_problems(&inv, i, &pcap) != ERR_OK)
            goto fail;
    free(idx);
    *out = inv;
    return ERR_OK;
fail:
    free(idx);
    inventory_fini(&inv);
    if (e == ERR_NOMEM)
        err_set(msg, ERR_NOMEM, "out of memory");
    return e;
}
