/* capacity -- nominal quota against allocatable capacity, per ResourceFlavor and resource. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/capacity.h"

#include "inventory/inventory.h"
#include "inventory/table.h"
#include "model/selector.h"
#include "util/grow.h"

#include <stdlib.h>
#include <string.h>

bool capacity_selects(const flavor_t *flavor, const node_t *node)
{
    return selector_map_matches(&flavor->node_labels, &node->meta.labels);
}

void capacity_fini(capacity_t *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < c->nrows; i++)
        free(c->rows[i].owners);
    free(c->rows);
    memset(c, 0, sizeof(*c));
}

bool capacity_over(const cap_row_t *row)
{
    return quantity_cmp(row->nominal, row->capacity) > 0;
}

/* GPU resources sort first, then by name. */
static int resource_rank(const char *name)
{
    if (strcmp(name, INV_RESOURCE_GPU) == 0)
        return 0;
    if (strncmp(name, INV_RESOURCE_MIG_PREFIX, strlen(INV_RESOURCE_MIG_PREFIX)) == 0)
        return 1;
    return 2;
}

static int cmp_resource(const char *a, const char *b)
{
    int ra = resource_rank(a), rb = resource_rank(b);

    return ra != rb ? ra - rb : strcmp(a, b);
}

typedef struct builder_s {
    capacity_t *c;
    size_t cap;
    const flavor_t *const *flavors;
    size_t nflavors;
    err_msg_t *msg;
} builder_t;

/* The row of (flavor, resource), created in sorted place (flavor name, then GPU resources first)
 * when absent; NULL on OOM. Sorting by name, not by input order, makes a cluster's answer the same
 * whether its objects come from files or from the API server (which lists them by name). */
static cap_row_t *row_for(builder_t *b, const flavor_t *f, const char *resource)
{
    capacity_t *c = b->c;
    size_t at;

    for (at = 0; at < c->nrows; at++) {
        int r = strcmp(c->rows[at].flavor->meta.name, f->meta.name);
        if (r == 0)
            r = cmp_resource(c->rows[at].resource, resource);
        if (r == 0 && c->rows[at].flavor == f)
            return &c->rows[at];
        if (r > 0)
            break;
    }
    if (util_grow((void **)&c->rows, &b->cap, c->nrows + 1, sizeof(*c->rows)) != ERR_OK)
        return NULL;
    memmove(&c->rows[at + 1], &c->rows[at], (c->nrows - at) * sizeof(*c->rows));
    memset(&c->rows[at], 0, sizeof(c->rows[0]));
    c->rows[at].flavor = f;
    c->rows[at].resource = resource;
    c->rows[at].nominal = quantity_zero();
    c->rows[at].capacity = quantity_zero();
    c->nrows++;
    return &c->rows[at];
}

static const flavor_t *find_flavor(const builder_t *b, const char *name)
{
    for (size_t i = 0; i < b->nflavors; i++)
        if (b->flavors[i]->meta.name != NULL && strcmp(b->flavors[i]->meta.name, name) == 0)
            return b->flavors[i];
    return NULL;
}

static err_t add_groups(builder_t *b, const char *owner, bool cohort, const resource_group_t *g,
                        size_t ng)
{
    for (size_t gi = 0; gi < ng; gi++)
        for (size_t fi = 0; fi < g[gi].nflavors; fi++) {
            const flavor_quotas_t *fq = &g[gi].flavors[fi];
            const flavor_t *f = fq->name ? find_flavor(b, fq->name) : NULL;
            for (size_t ri = 0; f != NULL && ri < fq->nresources; ri++) {
                const resource_quota_t *rq = &fq->resources[ri];
                cap_row_t *row;
                cap_owner_t *o;
                err_t e;
                if (rq->name == NULL)
                    continue;
                row = row_for(b, f, rq->name);
                if (row == NULL)
                    return ERR_NOMEM;
                o = realloc(row->owners, (row->nowners + 1) * sizeof(*o));
                if (o == NULL)
                    return ERR_NOMEM;
                row->owners = o;
                /* ClusterQueues by name, then Cohorts by name. */
                {
                    size_t at = row->nowners;
                    while (at > 0 && (row->owners[at - 1].cohort > cohort ||
                                      (row->owners[at - 1].cohort == cohort &&
                                       strcmp(row->owners[at - 1].name, owner) > 0)))
                        at--;
                    memmove(&o[at + 1], &o[at], (row->nowners - at) * sizeof(*o));
                    o[at] = (cap_owner_t){owner, cohort, rq->nominal};
                    row->nowners++;
                }
                e = quantity_add(row->nominal, rq->nominal, &row->nominal, b->msg);
                if (e != ERR_OK)
                    return err_set(b->msg, e, "flavor %s: %s: nominal quota sum out of range",
                                   f->meta.name, rq->name);
            }
        }
    return ERR_OK;
}

err_t capacity_compare(const flavor_t *const *flavors, size_t nflavors,
                       const cluster_queue_t *const *cqs, size_t ncqs,
                       const cohort_t *const *cohorts, size_t ncohorts, const node_t *nodes,
                       size_t nnodes, capacity_t *out, err_msg_t *msg)
{
    capacity_t c = {0};
    builder_t b = {&c, 0, flavors, nflavors, msg};
    err_t e = ERR_OK;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < ncqs && e == ERR_OK; i++)
        e = add_groups(&b, cqs[i]->meta.name ? cqs[i]->meta.name : "", false, cqs[i]->groups,
                       cqs[i]->ngroups);
    for (size_t i = 0; i < ncohorts && e == ERR_OK; i++)
        e = add_groups(&b, cohorts[i]->meta.name ? cohorts[i]->meta.name : "", true,
                       cohorts[i]->groups, cohorts[i]->ngroups);
    for (size_t r = 0; r < c.nrows && e == ERR_OK; r++) {
        cap_row_t *row = &c.rows[r];
        for (size_t n = 0; n < nnodes && e == ERR_OK; n++) {
            const quantity_t *q;
            if (!capacity_selects(row->flavor, &nodes[n]))
                continue;
            row->nnodes++;
            q = resource_list_get(&nodes[n].allocatable, row->resource);
            if (q != NULL && quantity_add(row->capacity, *q, &row->capacity, NULL) != ERR_OK)
                e = err_set(msg, ERR_OVERFLOW, "flavor %s: %s: allocatable sum out of range",
                            row->flavor->meta.name, row->resource);
        }
    }
    if (e != ERR_OK) {
        if (e == ERR_NOMEM)
            err_set(msg, ERR_NOMEM, "out of memory");
        capacity_fini(&c);
        return e;
    }
    *out = c;
    return ERR_OK;
}

/* "research 16, training 32, cohort org 8" */
static void owners_text(const cap_row_t *row, char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < row->nowners && n < size; i++) {
        char q[QUANTITY_STR_MAX];
        int w = snprintf(buf + n, size - n, "%s%s%s %s", i ? ", " : "",
                         row->owners[i].cohort ? "cohort " : "", row->owners[i].name,
                         quantity_format(row->owners[i].nominal, q));
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

const char *capacity_message(const cap_row_t *row, char *buf, size_t size)
{
    char nom[QUANTITY_STR_MAX], cap[QUANTITY_STR_MAX], owners[512];

    owners_text(row, owners, sizeof(owners));
    if (row->nnodes == 0)
        snprintf(buf, size,
                 "nominal quota of %s is %s (%s), but flavor %s selects no node: its nodeLabels "
                 "match no node given",
                 row->resource, quantity_format(row->nominal, nom), owners, row->flavor->meta.name);
    else
        snprintf(buf, size,
                 "nominal quota of %s is %s (%s), above the %s allocatable on the %zu node%s "
                 "flavor %s selects: admitted workloads may not fit",
                 row->resource, quantity_format(row->nominal, nom), owners,
                 quantity_format(row->capacity, cap), row->nnodes, row->nnodes == 1 ? "" : "s",
                 row->flavor->meta.name);
    return buf;
}

json_t *capacity_json(const capacity_t *c)
{
    json_t *a = json_array();

    for (size_t i = 0; a != NULL && i < c->nrows; i++) {
        const cap_row_t *r = &c->rows[i];
        char nom[QUANTITY_STR_MAX], cap[QUANTITY_STR_MAX], q[QUANTITY_STR_MAX];
        json_t *o = json_object(), *quotas = json_object();
        bool ok = o && quotas;
        for (size_t k = 0; ok && k < r->nowners; k++) {
            char key[300];
            snprintf(key, sizeof(key), "%s%s", r->owners[k].cohort ? "cohort/" : "",
                     r->owners[k].name);
            ok = json_object_set_new(quotas, key,
                                     json_string(quantity_format(r->owners[k].nominal, q))) == 0;
        }
        ok =
            ok && json_object_set_new(o, "flavor", json_string(r->flavor->meta.name)) == 0 &&
            json_object_set_new(o, "resource", json_string(r->resource)) == 0 &&
            json_object_set_new(o, "nominal", json_string(quantity_format(r->nominal, nom))) == 0 &&
            json_object_set_new(o, "allocatable", json_string(quantity_format(r->capacity, cap))) ==
                0 &&
            json_object_set_new(o, "nodes", json_integer((json_int_t)r->nnodes)) == 0 &&
            json_object_set_new(o, "over", json_boolean(capacity_over(r))) == 0;
        if (ok) {
            ok = json_object_set_new(o, "quotas", quotas) == 0;
            quotas = NULL;
        }
        json_decref(quotas);
        if (!ok || json_array_append_new(a, o) != 0) {
            if (!ok)
                json_decref(o);
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

err_t capacity_write_table(const capacity_t *c, FILE *out)
{
    inv_table_t t;
    err_t e;

    inv_table_init(&t, 6);
    inv_table_cell(&t, "FLAVOR");
    inv_table_cell(&t, "RESOURCE");
    inv_table_cell(&t, "NOMINAL");
    inv_table_cell(&t, "ALLOCATABLE");
    inv_table_cell(&t, "NODES");
    inv_table_cell(&t, "STATUS");
    for (size_t i = 0; i < c->nrows; i++) {
        const cap_row_t *r = &c->rows[i];
        char nom[QUANTITY_STR_MAX], cap[QUANTITY_STR_MAX];
        inv_table_cell(&t, r->flavor->meta.name);
        inv_table_cell(&t, r->resource);
        inv_table_cell(&t, quantity_format(r->nominal, nom));
        inv_table_cell(&t, quantity_format(r->capacity, cap));
        inv_table_cellf(&t, "%zu", r->nnodes);
        inv_table_cell(&t, capacity_over(r) ? "OVER" : "ok");
    }
    e = inv_table_write(&t, 0, out);
    inv_table_fini(&t);
    for (size_t i = 0; e == ERR_OK && i < c->nrows; i++) {
        char buf[1024];
        if (capacity_over(&c->rows[i]))
            fprintf(out, "warning: flavor %s: %s\n", c->rows[i].flavor->meta.name,
                    capacity_message(&c->rows[i], buf, sizeof(buf)));
    }
    return e == ERR_OK && ferror(out) ? ERR_IO : e;
}

err_t capacity_warn_objects(const object_t *const *objs, size_t n, const node_t *nodes,
                            size_t nnodes, diags_t *diags, err_msg_t *msg)
{
    const flavor_t **flavors = calloc(n ? n : 1, sizeof(*flavors));
    const cluster_queue_t **cqs = calloc(n ? n : 1, sizeof(*cqs));
    const cohort_t **cohorts = calloc(n ? n : 1, sizeof(*cohorts));
    size_t nf = 0, ncq = 0, nco = 0;
    capacity_t c = {0};
    err_t e = ERR_NOMEM;

    if (flavors == NULL || cqs == NULL || cohorts == NULL) {
        err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (objs[i] == NULL)
            continue;
        if (objs[i]->kind == KIND_RESOURCE_FLAVOR && objs[i]->u.flavor.meta.name != NULL)
            flavors[nf++] = &objs[i]->u.flavor;
        else if (objs[i]->kind == KIND_CLUSTER_QUEUE)
            cqs[ncq++] = &objs[i]->u.cq;
        else if (objs[i]->kind == KIND_COHORT)
            cohorts[nco++] = &objs[i]->u.cohort;
    }
    e = capacity_compare(flavors, nf, cqs, ncq, cohorts, nco, nodes, nnodes, &c, msg);
    for (size_t r = 0; e == ERR_OK && r < c.nrows; r++) {
        char buf[1024];
        if (!capacity_over(&c.rows[r]))
            continue;
        for (size_t i = 0; i < n; i++)
            if (objs[i] != NULL && objs[i]->kind == KIND_RESOURCE_FLAVOR &&
                &objs[i]->u.flavor == c.rows[r].flavor &&
                diags_warn(&diags[i], "spec.nodeLabels", "%s",
                           capacity_message(&c.rows[r], buf, sizeof(buf))) != ERR_OK)
                e = err_set(msg, ERR_NOMEM, "out of memory");
    }
out:
    capacity_fini(&c);
    free(flavors);
    free(cqs);
    free(cohorts);
    return e;
}
