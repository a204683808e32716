/* manifests -- read Nodes and Kueue's queue objects from manifest files or API lists. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/manifests.h"

#include "model/yaml.h"
#include "util/grow.h"
#include "util/jcopy.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void inv_set_init(inv_set_t *s, FILE *errs)
{
    memset(s, 0, sizeof(*s));
    s->errs = errs;
}

void inv_set_fini(inv_set_t *s)
{
    if (s == NULL)
        return;
    TYPES_FREE_ARRAY(s->nodes, s->nnodes, node_fini);
    TYPES_FREE_ARRAY(s->objs, s->nobjs, object_fini);
    strv_free(s->paths, s->npaths);
    for (size_t i = 0; s->status != NULL && i < s->caps; i++)
        json_decref(s->status[i]);
    free(s->status);
    memset(s, 0, sizeof(*s));
}

static const char *json_str(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

    return json_is_string(v) ? json_string_value(v) : NULL;
}

static void report(inv_set_t *s, const char *origin, size_t doc, int line, const json_t *root,
                   const diags_t *d)
{
    const json_t *md = json_is_object(root) ? json_object_get(root, "metadata") : NULL;
    const char *kind = json_str(root, "kind"), *name = json_str(md, "name");

    s->ninvalid++;
    if (s->errs == NULL)
        return;
    for (size_t i = 0; i < d->len; i++)
        if (!d->items[i].warning)
            fprintf(s->errs, "%s%s%.0d: doc %zu (%s %s): %s%s%s\n", origin, line > 0 ? ":" : "",
                    line > 0 ? line : 0, doc, kind ? kind : "<no kind>", name ? name : "<no name>",
                    d->items[i].path, d->items[i].path[0] ? ": " : "", d->items[i].message);
}

static bool wanted(kind_t k)
{
    return k == KIND_RESOURCE_FLAVOR || k == KIND_CLUSTER_QUEUE || k == KIND_COHORT ||
           k == KIND_LOCAL_QUEUE;
}

static bool wanted_kind_name(const char *kind)
{
    static const char *const names[] = {"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue",
                                        NULL};

    for (size_t i = 0; kind != NULL && names[i] != NULL; i++)
        if (strcmp(kind, names[i]) == 0)
            return true;
    return false;
}

static err_t add_one(inv_set_t *s, json_t *root, const char *origin, size_t doc, int line)
{
    diags_t d;
    err_t e;

    diags_init(&d);
    if (node_is(root)) {
        node_t n;
        e = node_decode(root, &n, &d);
        if (e == ERR_OK) {
            if (util_grow((void **)&s->nodes, &s->capn, s->nnodes + 1, sizeof(*s->nodes)) !=
                ERR_OK) {
                node_fini(&n);
                e = ERR_NOMEM;
            } else {
                s->nodes[s->nnodes++] = n;
            }
        }
    } else if (wanted_kind_name(json_str(root, "kind"))) {
        object_t o;
        e = object_decode(root, &o, &d);
        if (e == ERR_OK && !wanted(o.kind)) {
            object_fini(&o);
            s->nskipped++;
        } else if (e == ERR_OK) {
            size_t caps = s->caps;
            if (util_grow((void **)&s->objs, &s->capo, s->nobjs + 1, sizeof(*s->objs)) != ERR_OK ||
                util_grow((void **)&s->status, &s->caps, s->nobjs + 1, sizeof(*s->status)) !=
                    ERR_OK) {
                object_fini(&o);
                e = ERR_NOMEM;
            } else {
                json_t *st = json_object_get(root, "status");
                for (size_t i = caps; i < s->caps; i++)
                    s->status[i] = NULL;
                /* Queue status is only kept for queues: it carries usage and pending counts. */
                s->status[s->nobjs] = json_is_object(st) && (o.kind == KIND_CLUSTER_QUEUE ||
                                                             o.kind == KIND_LOCAL_QUEUE)
                                          ? json_incref(st)
                                          : NULL;
                s->objs[s->nobjs++] = o;
            }
        }
    } else {
        s->nskipped++;
        e = ERR_OK;
    }
    if (e == ERR_INVALID) {
        report(s, origin, doc, line, root, &d);
        e = ERR_OK;
    }
    if (d.oom)
        e = ERR_NOMEM;
    diags_fini(&d);
    return e;
}

/* kubectl get ... -o yaml writes a v1 List; the API server answers a NodeList, a
 * ClusterQueueList, ...: any kind ending in "List" with an items array. */
static bool is_list(const json_t *root)
{
    const char *kind = json_str(root, "kind");
    size_t n = kind != NULL ? strlen(kind) : 0;

    return n >= 4 && strcmp(kind + n - 4, "List") == 0 &&
           json_is_array(json_object_get(root, "items"));
}

err_t inv_set_add(inv_set_t *s, json_t *root, const char *origin, size_t doc, int line)
{
    const json_t *items;
    err_t e = ERR_OK;

    if (!is_list(root))
        return add_one(s, root, origin, doc, line);
    items = json_object_get(root, "items");
    for (size_t i = 0; i < json_array_size(items) && e == ERR_OK; i++) {
        json_t *item = json_array_get(items, i), *copy;
        const char *list_kind = json_str(root, "kind"), *av = json_str(root, "apiVersion");
        if (!json_is_object(item) || json_object_get(item, "kind") != NULL ||
            strcmp(list_kind, "List") == 0 || av == NULL) {
            e = add_one(s, item, origin, doc, line);
            continue;
        }
        /* The API server's typed lists (NodeList, ClusterQueueList) leave apiVersion and kind
         * off their items: they are the list's, as kubectl reads them. A shallow copy gets
         * them; the list itself stays as the caller lent it. */
        copy = util_json_copy(item);
        if (copy == NULL ||
            json_object_set_new(copy, "kind", json_stringn(list_kind, strlen(list_kind) - 4)) !=
                0 ||
            json_object_set_new(copy, "apiVersion", json_string(av)) != 0) {
            json_decref(copy);
            return ERR_NOMEM;
        }
        e = add_one(s, copy, origin, doc, line);
        json_decref(copy);
    }
    return e;
}

typedef struct read_ctx_s {
    inv_set_t *s;
    const char *display;
} read_ctx_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    read_ctx_t *r = ctx;

    return inv_set_add(r->s, doc, r->display, index + 1, line);
}

err_t inv_set_read(inv_set_t *s, FILE *f, const char *display, err_msg_t *msg)
{
    read_ctx_t r = {s, display};
    err_t e;

    s->file = display;
    e = yaml_load_file(f, on_doc, &r, msg);
    if (e == ERR_NOMEM)
        err_set(msg, ERR_NOMEM, "out of memory");
    return e;
}

void inv_view_fini(inv_view_t *v)
{
    if (v == NULL)
        return;
    free(v->flavors);
    free(v->cqs);
    free(v->cohorts);
    free(v->lqs);
    free(v->cq_status);
    free(v->lq_status);
    memset(v, 0, sizeof(*v));
}

err_t inv_set_view(const inv_set_t *s, inv_view_t *out)
{
    size_t n = s->nobjs ? s->nobjs : 1;

    memset(out, 0, sizeof(*out));
    out->flavors = calloc(n, sizeof(*out->flavors));
    out->cqs = calloc(n, sizeof(*out->cqs));
    out->cohorts = calloc(n, sizeof(*out->cohorts));
    out->lqs = calloc(n, sizeof(*out->lqs));
    out->cq_status = calloc(n, sizeof(*out->cq_status));
    out->lq_status = calloc(n, sizeof(*out->lq_status));
    if (out->flavors == NULL || out->cqs == NULL || out->cohorts == NULL || out->lqs == NULL ||
        out->cq_status == NULL || out->lq_status == NULL) {
        inv_view_fini(out);
        return ERR_NOMEM;
    }
    for (size_t i = 0; i < s->nobjs; i++) {
        const object_t *o = &s->objs[i];
        switch (o->kind) {
        case KIND_RESOURCE_FLAVOR:
            out->flavors[out->nflavors++] = &o->u.flavor;
            break;
        case KIND_CLUSTER_QUEUE:
            out->cq_status[out->ncqs] = s->status[i];
            out->cqs[out->ncqs++] = &o->u.cq;
            break;
        case KIND_COHORT:
            out->cohorts[out->ncohorts++] = &o->u.cohort;
            break;
        case KIND_LOCAL_QUEUE:
            out->lq_status[out->nlqs] = s->status[i];
            out->lqs[out->nlqs++] = &o->u.lq;
            break;
        default:
            break;
        }
    }
    return ERR_OK;
}

static err_t read_file(inv_set_t *s, const char *path, err_msg_t *msg);

static bool manifest_name(const char *name)
{
    static const char *const ext[] = {".yaml", ".yml", ".json"};
    size_t n = strlen(name);

    if (name[0] == '.')
        return false;
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
        if (n > strlen(ext[i]) && strcmp(name + n - strlen(ext[i]), ext[i]) == 0)
            return true;
    return false;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory: its *.yaml, *.yml and *.json files in name order, not recursive (as sluice check
 * and kubectl apply -f DIR read one). The paths are kept in the set: messages name them. */
static err_t read_dir(inv_set_t *s, const char *path, err_msg_t *msg)
{
    DIR *dir = opendir(path);
    struct dirent *de;
    size_t n = 0, cap = 0, first;
    err_t e = ERR_OK;

    if (dir == NULL)
        return err_set(msg, ERR_IO, "%s: %s", path, strerror(errno));
    first = s->npaths;
    while ((de = readdir(dir)) != NULL && e == ERR_OK) {
        char *full;
        if (!manifest_name(de->d_name))
            continue;
        full = util_asprintf("%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
        if (full == NULL ||
            util_grow((void **)&s->paths, &cap, s->npaths + 1, sizeof(*s->paths)) != ERR_OK) {
            free(full);
            e = err_set(msg, ERR_NOMEM, "out of memory");
            break;
        }
        s->paths[s->npaths++] = full;
        n++;
    }
    closedir(dir);
    qsort(s->paths + first, n, sizeof(*s->paths), cmp_names);
    for (size_t i = first; i < first + n && e == ERR_OK; i++)
        e = inv_set_read_path(s, s->paths[i], msg);
    return e;
}

err_t inv_set_read_path(inv_set_t *s, const char *path, err_msg_t *msg)
{
    struct stat st;

    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return read_dir(s, path, msg);
    return read_file(s, path, msg);
}

static err_t read_file(inv_set_t *s, const char *path, err_msg_t *msg)
{
    const char *display = strcmp(path, "-") == 0 ? "<stdin>" : path;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    err_msg_t inner = {{0}};
    err_t e;

    if (f == NULL)
        return err_set(msg, ERR_IO, "%s: %s", path, strerror(errno));
    e = inv_set_read(s, f, display, &inner);
    if (e == ERR_OK && ferror(f))
        e = err_set(&inner, ERR_IO, "read error");
    if (f != stdin)
        fclose(f);
    if (e != ERR_OK)
        err_set(msg, e, "%s: %s", display, inner.text[0] ? inner.text : err_str(e));
    return e;
}
