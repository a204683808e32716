/* inventory_out -- the inventory as data (JSON/YAML trees) and as a table. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/inventory.h"

#include "inventory/table.h"

#include <stdlib.h>
#include <string.h>

static const char *effect_name(taint_effect_t e)
{
    switch (e) {
    case TAINT_EFFECT_NO_SCHEDULE:
        return "NoSchedule";
    case TAINT_EFFECT_PREFER_NO_SCHEDULE:
        return "PreferNoSchedule";
    case TAINT_EFFECT_NO_EXECUTE:
        return "NoExecute";
    case TAINT_EFFECT_ANY:
        break;
    }
    return "";
}

/* Set o[key] = v, consuming v; false (and o unchanged) on failure or a NULL v. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v) == 0;
}

static bool append(json_t *a, json_t *v)
{
    return json_array_append_new(a, v) == 0;
}

static json_t *qjson(quantity_t q)
{
    char buf[QUANTITY_STR_MAX];

    return json_string(quantity_format(q, buf));
}

/* ---- suggested ResourceFlavor ---------------------------------------------------------------- */

/*
 * The flavor pins admitted pods to the pool (its nodeLabels become their nodeSelector) and
 * carries tolerations for the pool's hard taints, so that work admitted to it can run there. A
 * taint without a value is tolerated with Exists, one with a value with Equal (as written).
 * PreferNoSchedule never blocks a pod and gets no toleration, nor do the node.kubernetes.io/
 * condition taints.
 */
json_t *inventory_flavor_json(const inventory_t *inv, const inv_pool_t *pool)
{
    json_t *f, *md = NULL, *spec = NULL, *labels = NULL, *tols = NULL;
    bool ok;

    if (pool->flavor == NULL)
        return NULL;
    f = json_object();
    md = json_object();
    spec = json_object();
    labels = json_object();
    tols = json_array();
    ok = f && md && spec && labels && tols;
    for (size_t k = 0; ok && k < inv->nkeys; k++)
        if (pool->values[k] != NULL)
            ok = put(labels, inv->keys[k], json_string(pool->values[k]));
    for (size_t i = 0; ok && i < pool->ntaints; i++) {
        const taint_t *t = &pool->taints[i];
        json_t *tol;
        if (t->effect != TAINT_EFFECT_NO_SCHEDULE && t->effect != TAINT_EFFECT_NO_EXECUTE)
            continue;
        /* Taints Kubernetes itself manages from node conditions (not-ready, unreachable,
         * unschedulable, pressure) say nothing about the pool: a flavor must not tolerate them. */
        if (strncmp(t->key, "node.kubernetes.io/", 19) == 0 ||
            strncmp(t->key, "node.cloudprovider.kubernetes.io/", 33) == 0)
            continue;
        tol = json_object();
        ok = tol != NULL && put(tol, "key", json_string(t->key));
        if (ok && t->value != NULL && t->value[0] != '\0')
            ok = put(tol, "operator", json_string("Equal")) &&
                 put(tol, "value", json_string(t->value));
        else if (ok)
            ok = put(tol, "operator", json_string("Exists"));
        ok = ok && put(tol, "effect", json_string(effect_name(t->effect)));
        if (!ok || !append(tols, tol)) {
            json_decref(tol);
            ok = false;
        }
    }
    ok = ok && put(f, "apiVersion", json_string("kueue.x-k8s.io/v1beta2")) &&
         put(f, "kind", json_string("ResourceFlavor")) &&
         put(md, "name", json_string(pool->flavor));
    if (ok && put(f, "metadata", md)) {
        md = NULL;
        ok = put(spec, "nodeLabels", labels);
        labels = NULL;
        if (ok && json_array_size(tols) > 0) {
            ok = put(spec, "tolerations", tols);
            tols = NULL;
        }
        if (ok) {
            ok = put(f, "spec", spec);
            spec = NULL;
        }
    } else {
        ok = false;
    }
    json_decref(md);
    json_decref(spec);
    json_decref(labels);
    json_decref(tols);
    if (!ok) {
        json_decref(f);
        return NULL;
    }
    return f;
}

/* ---- data ------------------------------------------------------------------------------------ */

static bool shown_resource(const char *name)
{
    return strcmp(name, INV_RESOURCE_GPU) == 0 || strcmp(name, "cpu") == 0 ||
           strcmp(name, "memory") == 0 ||
           strncmp(name, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) == 0;
}

static json_t *pool_json(const inventory_t *inv, const inv_pool_t *p)
{
    json_t *o = json_object(), *labels = json_object(), *nodes = json_array();
    json_t *alloc = json_object(), *taints = json_array(), *drivers = json_array();
    bool ok = o && labels && nodes && alloc && taints && drivers;

    for (size_t k = 0; ok && k < inv->nkeys; k++)
        if (p->values[k] != NULL)
            ok = put(labels, inv->keys[k], json_string(p->values[k]));
    for (size_t i = 0; ok && i < p->nnodes; i++)
        ok = append(nodes, json_string(inv->nodes[p->nodes[i]].meta.name));
    /* GPUs first, then MIG slices, then cpu and memory. */
    if (ok && resource_list_get(&p->allocatable, INV_RESOURCE_GPU) != NULL)
        ok = put(alloc, INV_RESOURCE_GPU,
                 qjson(*resource_list_get(&p->allocatable, INV_RESOURCE_GPU)));
    for (size_t i = 0; ok && i < p->allocatable.len; i++) {
        const resource_t *r = &p->allocatable.items[i];
        if (shown_resource(r->name) && strcmp(r->name, INV_RESOURCE_GPU) != 0 &&
            strcmp(r->name, "cpu") != 0 && strcmp(r->name, "memory") != 0)
            ok = put(alloc, r->name, qjson(r->value));
    }
    for (size_t i = 0; ok && i < 2; i++) {
        const char *name = i == 0 ? "cpu" : "memory";
        const quantity_t *q = resource_list_get(&p->allocatable, name);
        if (q != NULL)
            ok = put(alloc, name, qjson(*q));
    }
    for (size_t i = 0; ok && i < p->ntaints; i++) {
        json_t *t = json_object();
        ok = t != NULL && put(t, "key", json_string(p->taints[i].key)) &&
             (p->taints[i].value == NULL || put(t, "value", json_string(p->taints[i].value))) &&
             put(t, "effect", json_string(effect_name(p->taints[i].effect)));
        if (!ok || !append(taints, t)) {
            json_decref(t);
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < p->ndrivers; i++)
        ok = append(drivers, json_string(p->drivers[i]));
    ok = ok && put(o, "labels", labels);
    labels = NULL;
    ok = ok && put(o, "nodes", nodes);
    nodes = NULL;
    ok = ok && put(o, "ready", json_integer((json_int_t)p->nready)) &&
         put(o, "cordoned", json_integer((json_int_t)p->ncordoned)) && put(o, "allocatable", alloc);
    alloc = NULL;
    ok = ok && put(o, "taints", taints);
    taints = NULL;
    ok = ok && put(o, "drivers", drivers);
    drivers = NULL;
    ok = ok && (p->flavor == NULL || put(o, "flavor", json_string(p->flavor)));
    json_decref(labels);
    json_decref(nodes);
    json_decref(alloc);
    json_decref(taints);
    json_decref(drivers);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *inventory_json(const inventory_t *inv)
{
    json_t *o = json_object(), *keys = json_array(), *pools = json_array();
    json_t *problems = json_array(), *flavors = json_array();
    bool ok = o && keys && pools && problems && flavors;

    for (size_t k = 0; ok && k < inv->nkeys; k++)
        ok = append(keys, json_string(inv->keys[k]));
    for (size_t i = 0; ok && i < inv->npools; i++) {
        ok = append(pools, pool_json(inv, &inv->pools[i]));
        if (ok && inv->pools[i].flavor != NULL)
            ok = append(flavors, inventory_flavor_json(inv, &inv->pools[i]));
    }
    for (size_t i = 0; ok && i < inv->nproblems; i++) {
        json_t *p = json_object();
        ok = p != NULL &&
             put(p, "node", json_string(inv->nodes[inv->problems[i].node].meta.name)) &&
             put(p, "message", json_string(inv->problems[i].text));
        if (!ok || !append(problems, p)) {
            json_decref(p);
            ok = false;
        }
    }
    ok = ok && put(o, "groupBy", keys);
    keys = NULL;
    ok = ok && put(o, "pools", pools);
    pools = NULL;
    ok = ok && put(o, "problems", problems);
    problems = NULL;
    ok = ok && put(o, "flavors", flavors);
    flavors = NULL;
    json_decref(keys);
    json_decref(pools);
    json_decref(problems);
    json_decref(flavors);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- table ----------------------------------------------------------------------------------- */

/* A column header for a label key: GPU Feature Discovery's prefix dropped ("gpu.product"). */
static const char *key_header(const char *key)
{
    static const char prefix[] = "nvidia.com/";

    return strncmp(key, prefix, sizeof(prefix) - 1) == 0 && key[sizeof(prefix) - 1] != '\0'
               ? key + sizeof(prefix) - 1
               : key;
}

/* Append `s` to the growing cell text `buf` (truncated at its size, which a table never
 * reaches: names are at most 253 bytes and lists short). */
static void cat(char *buf, size_t size, const char *sep, const char *s)
{
    size_t n = strlen(buf);

    snprintf(buf + n, size - n, "%s%s", n ? sep : "", s);
}

static void pool_row(const inventory_t *inv, const inv_pool_t *p, inv_table_t *t)
{
    char buf[1024], q[QUANTITY_STR_MAX];
    const quantity_t *v;

    inv_table_cell(t, p->flavor ? p->flavor : p->gpu ? "(unlabelled GPUs)" : "(no GPU)");
    for (size_t k = 0; k < inv->nkeys; k++)
        inv_table_cell(t, p->values[k] ? p->values[k] : "<none>");
    if (p->nready == p->nnodes && p->ncordoned == 0)
        inv_table_cellf(t, "%zu", p->nnodes);
    else if (p->ncordoned == 0)
        inv_table_cellf(t, "%zu (%zu ready)", p->nnodes, p->nready);
    else
        inv_table_cellf(t, "%zu (%zu ready, %zu cordoned)", p->nnodes, p->nready, p->ncordoned);
    v = resource_list_get(&p->allocatable, INV_RESOURCE_GPU);
    inv_table_cell(t, v ? quantity_format(*v, q) : NULL);
    buf[0] = '\0';
    for (size_t i = 0; i < p->allocatable.len; i++) {
        const resource_t *r = &p->allocatable.items[i];
        char item[320];
        if (strncmp(r->name, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) != 0)
            continue;
        snprintf(item, sizeof(item), "%s=%s", r->name + strlen(INV_RESOURCE_MIG_PREFIX),
                 quantity_format(r->value, q));
        cat(buf, sizeof(buf), " ", item);
    }
    inv_table_cell(t, buf[0] ? buf : NULL);
    v = resource_list_get(&p->allocatable, "cpu");
    inv_table_cell(t, v ? quantity_format(*v, q) : NULL);
    v = resource_list_get(&p->allocatable, "memory");
    inv_table_cell(t, v ? quantity_format(*v, q) : NULL);
    buf[0] = '\0';
    for (size_t i = 0; i < p->ndrivers; i++)
        cat(buf, sizeof(buf), ",", p->drivers[i]);
    inv_table_cell(t, buf[0] ? buf : NULL);
    buf[0] = '\0';
    for (size_t i = 0; i < p->ntaints; i++) {
        char item[600];
        snprintf(item, sizeof(item), "%s%s%s:%s", p->taints[i].key, p->taints[i].value ? "=" : "",
                 p->taints[i].value ? p->taints[i].value : "", effect_name(p->taints[i].effect));
        cat(buf, sizeof(buf), ",", item);
    }
    inv_table_cell(t, buf[0] ? buf : NULL);
}

err_t inventory_write_table(const inventory_t *inv, FILE *out)
{
    static const char *const cols[] = {"NODES", "GPU", "MIG", "CPU", "MEMORY", "DRIVER", "TAINTS"};
    inv_table_t t;
    err_t e;

    inv_table_init(&t, 1 + inv->nkeys + sizeof(cols) / sizeof(cols[0]));
    inv_table_cell(&t, "POOL");
    for (size_t k = 0; k < inv->nkeys; k++) {
        char h[256];
        size_t i;
        snprintf(h, sizeof(h), "%s", key_header(inv->keys[k]));
        for (i = 0; h[i] != '\0'; i++)
            if (h[i] >= 'a' && h[i] <= 'z')
                h[i] = (char)(h[i] - 'a' + 'A');
        inv_table_cell(&t, h);
    }
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
        inv_table_cell(&t, cols[i]);
    for (size_t i = 0; i < inv->npools; i++)
        pool_row(inv, &inv->pools[i], &t);
    e = inv_table_write(&t, 0, out);
    inv_table_fini(&t);
    if (e != ERR_OK)
        return e;
    if (inv->nproblems > 0) {
        fprintf(out, "\nproblems:\n");
        for (size_t i = 0; i < inv->nproblems; i++)
            fprintf(out, "  node %s: %s\n", inv->nodes[inv->problems[i].node].meta.name,
                    inv->problems[i].text);
    }
    return ferror(out) ? ERR_IO : ERR_OK;
}
