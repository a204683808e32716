/* cmd_check -- `sluice check`: validate manifests offline with the webhook's rules. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"
#include "ctrl/config.h"
#include "inventory/capacity.h"
#include "inventory/manifests.h"
#include "jobs/kindobj.h"
#include "model/crosscheck.h"
#include "model/object.h"
#include "model/validate.h"
#include "model/yaml.h"
#include "model/yamlmark.h"
#include "sim/annot.h"
#include "util/grow.h"
#include "util/str.h"
#include "util/suggest.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Flow: every file is streamed document by document (yaml_load_file_marks; JSON is YAML too),
 * each document kept with the positions of its fields. A kubectl List is unwrapped into its
 * items. A document of a kind sluice has no rules for (a Service, a Kustomization) is counted
 * and skipped; the others are decoded at once, but a TrainJob, decoded once every file is read
 * against the training runtimes among the documents (decode_deferred()). Then each object is
 * validated (validate_object, or validate_update for a --scenario update), a Configuration is
 * also read as `sluice run --config` reads it (lib/ctrl/config.c), then the whole set is
 * cross-checked, and the problems are printed in file and document order:
 *
 *   FILE:LINE:COL: doc N (Kind name): path: message
 *   FILE:LINE:COL: doc N (Kind name): warning: path: message
 *
 * LINE:COL is where the field at `path` is written (its key), or its nearest written ancestor
 * when the field is missing. N counts the YAML documents of the file from 1, empty ones included
 * (as an editor's search for "---" would), like the simulator's "doc N". Namespaced objects are
 * named namespace/name. Problems go to standard output (-o json: one JSON document there); read
 * errors, hints and the summary go to standard error.
 */

enum { EXIT_CLEAN = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

typedef struct check_doc_s {
    const char *file; /* borrowed from check_t.files */
    size_t doc;       /* 1-based */
    long item;        /* index in a List's items, or -1 */
    int line;         /* where the document starts (the fallback position) */
    char *kind;       /* owned: as written, NULL when absent */
    char *name;       /* owned: "name" or "namespace/name", NULL when absent */
    char *origin;     /* owned: "FILE doc N", for messages about other objects */
    json_t *root;     /* owned reference: the object as read (positions are looked up in it) */
    const yaml_marks_t *marks; /* borrowed from check_t.marks: positions of root's fields */
    object_t obj;              /* decoded, or a partial object (kind and name only), or zero */
    bool decoded;              /* object_decode succeeded */
    bool partial;              /* decode failed but kind and name are known */
    bool kept;     /* decode failed, but only on fields whose absence leaves a whole object:
                      validated and cross-checked anyway (one pass), see keep_decoded() */
    bool skipped;  /* a kind sluice has no rules for, or not a Kubernetes object: not checked */
    bool deferred; /* a TrainJob: decoded once every document is read (its runtime may come
                      later), by decode_deferred() */
    diags_t diags;
} check_doc_t;

typedef struct check_s {
    check_doc_t *docs; /* owned */
    size_t ndocs, cap;
    size_t nobjects, nskipped; /* documents (List items) checked / skipped */
    yaml_marks_t **marks;      /* owned: one table per document read */
    size_t nmarks, marks_cap;
    char **files; /* owned: names of the files read, for display */
    size_t nfiles;
    size_t nbad_files;    /* files that could not be read or parsed */
    size_t nskipped_dirs; /* subdirectories not read (no -R) */
    size_t nsim;          /* objects with sim.sluice.dev annotations */
    bool recursive;       /* -R */
    bool json;            /* -o json: read errors are collected, not printed */
    json_t *read_errors;  /* owned: -o json's readErrors */
    bool oom;
    const char *cur_file;
} check_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice check [options] FILE...\n"
            "\n"
            "Validate Kueue and Kubernetes manifests offline, with the rules sluice's admission\n"
            "webhooks enforce: Kueue's CRD schemas and CEL rules, Kueue's webhook rules for its\n"
            "objects and for the workloads it manages (Job, JobSet, the Kubeflow jobs, TrainJob,\n"
            "RayJob, RayCluster, ...), a Kueue Configuration as `sluice run --config` reads it,\n"
            "and checks across all the files given (a ClusterQueue naming a ResourceFlavor no\n"
            "file defines, a LocalQueue naming a missing ClusterQueue, cohort cycles,\n"
            "duplicates). Objects of other kinds (Service, RBAC, Kustomization, ...) are counted\n"
            "and skipped; a kubectl List (kubectl get -o yaml) is read item by item.\n"
            "\n"
            "FILE is a YAML file (several documents separated by ---), a JSON file, a directory\n"
            "(its *.yaml, *.yml and *.json files; subdirectories too with -R), or - for\n"
            "standard input.\n"
            "\n"
            "Each problem is one line on standard output:\n"
            "  FILE:LINE:COL: doc N (Kind name): path: message\n"
            "  FILE:LINE:COL: doc N (Kind name): warning: path: message\n"
            "where LINE:COL is where the field is written and N counts the file's YAML documents\n"
            "from 1. Warnings do not fail the check.\n"
            "\n"
            "options:\n"
            "  -R, --recursive   read directories recursively\n"
            "      --allow-empty finding no object to check is fine (else it is an error)\n"
            "  -o, --output FMT  text (default), json or yaml: one document on standard output\n"
            "                    with every problem and what was read (for machines)\n"
            "  -q, --quiet       do not print the summary line on standard error\n"
            "      --nodes FILE  Nodes (`kubectl get nodes -o yaml`; - for standard input): warn\n"
            "                    on each ResourceFlavor whose nominal quota (all ClusterQueues\n"
            "                    and Cohorts) exceeds the allocatable capacity of the nodes its\n"
            "                    nodeLabels select; a warning, never an error\n"
            "      --scenario    read the files as a `sluice sim` scenario: a later document with\n"
            "                    the same kind, namespace and name and a later\n"
            "                    sim.sluice.dev/at annotation is an update of the earlier one\n"
            "                    (checked with the update rules), not a duplicate\n"
            "  -h, --help        print this help and exit\n"
            "  --                end of options (a FILE may then start with -)\n"
            "\n"
            "exit status: 0 no errors (warnings allowed), 1 some object is invalid or no object\n"
            "was found to check (see --allow-empty), 2 usage error, or a file could not be read\n"
            "or is not well-formed YAML/JSON.\n");
}

/* ---- collecting documents ----------------------------------------------------------------- */

static const char *json_str(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* After a failed decode: keep the object's identity so references to it still resolve. */
static err_t make_partial(check_doc_t *cd, const json_t *root, const jobs_kind_t *jk)
{
    const char *kind = json_str(root, "kind");
    const json_t *md = json_is_object(root) ? json_object_get(root, "metadata") : NULL;
    const char *name = json_str(md, "name"), *ns = json_str(md, "namespace");
    object_meta_t *m;

    if (kind == NULL || name == NULL)
        return ERR_OK;
    if (jk != NULL) {
        cd->obj.kind = KIND_INTEGRATION;
        if (util_strdup(jk->kind, &cd->obj.u.integ.kind) != ERR_OK ||
            util_strdup(jk->group, &cd->obj.u.integ.group) != ERR_OK)
            return ERR_NOMEM;
    }
    for (int k = KIND_NAMESPACE; jk == NULL && k <= KIND_CONFIGURATION; k++) {
        if (strcmp(kind_name((kind_t)k), kind) == 0) {
            cd->obj.kind = (kind_t)k;
            break;
        }
    }
    m = object_meta(&cd->obj);
    if (m == NULL)
        return ERR_OK;
    cd->partial = true;
    if (util_strdup(name, &m->name) != ERR_OK || util_strdup(ns, &m->namespace) != ERR_OK)
        return ERR_NOMEM;
    return ERR_OK;
}

static check_doc_t *doc_new(check_t *c)
{
    if (util_grow((void **)&c->docs, &c->cap, c->ndocs + 1, sizeof(*c->docs)) != ERR_OK)
        return NULL;
    memset(&c->docs[c->ndocs], 0, sizeof(c->docs[0]));
    diags_init(&c->docs[c->ndocs].diags);
    return &c->docs[c->ndocs++];
}

/* Is the API group of `api_version` ("group/version", or "v1" for the core group) `group`? */
static bool group_is(const char *api_version, const char *group)
{
    const char *slash = api_version != NULL ? strchr(api_version, '/') : NULL;
    size_t n = strlen(group);

    if (slash == NULL)
        return n == 0 && api_version != NULL;
    return (size_t)(slash - api_version) == n && strncmp(api_version, group, n) == 0;
}

/* Kueue's kinds that sluice does not implement: read by Kueue, so not a mistake, but not
 * checked here either. */
static const char *const kueue_unchecked[] = {"MultiKueueCluster", "MultiKueueConfig",
                                              "ProvisioningRequestConfig", NULL};

typedef enum { CLASS_CHECK, CLASS_SKIP, CLASS_NOT_OBJECT } class_t;

/*
 * What to do with a document. Checked: Kueue's kinds (and anything claiming a Kueue API group,
 * so that a misspelt kind is an error), the core kinds sluice has rules for (Namespace,
 * PriorityClass, batch/v1 Job), every kind of lib/jobs' integration table, a document whose
 * kind is close to one of those (a typo) and anything malformed (not a mapping, kind without
 * apiVersion or the reverse). Skipped: every other kind (a Service, a ClusterRole, a
 * Kustomization). Not an object: neither apiVersion nor kind (kustomize configuration, a
 * dashboard's JSON).
 */
static class_t classify(const json_t *root)
{
    const json_t *av = json_is_object(root) ? json_object_get(root, "apiVersion") : NULL;
    const json_t *kv = json_is_object(root) ? json_object_get(root, "kind") : NULL;
    const char *kind, *api;
    const char *known[KIND_CONFIGURATION + 1];

    if (!json_is_object(root))
        return CLASS_CHECK;
    if ((av == NULL || json_is_null(av)) && (kv == NULL || json_is_null(kv)))
        return CLASS_NOT_OBJECT;
    if (!json_is_string(av) || !json_is_string(kv) || kindobj_kind(root) != NULL)
        return CLASS_CHECK;
    kind = json_string_value(kv);
    api = json_string_value(av);
    if (group_is(api, "kueue.x-k8s.io") || group_is(api, "config.kueue.x-k8s.io")) {
        for (size_t i = 0; kueue_unchecked[i] != NULL; i++)
            if (strcmp(kind, kueue_unchecked[i]) == 0)
                return CLASS_SKIP;
        return CLASS_CHECK;
    }
    for (int k = KIND_NAMESPACE; k <= KIND_CONFIGURATION; k++)
        known[k - KIND_NAMESPACE] = kind_name((kind_t)k);
    known[KIND_CONFIGURATION] = NULL;
    for (size_t i = 0; known[i] != NULL; i++)
        if (strcmp(kind, known[i]) == 0)
            return CLASS_CHECK;
    /* "ClusterQueu": decoding says "did you mean ClusterQueue". */
    return suggest_pick(kind, known) != NULL ? CLASS_CHECK : CLASS_SKIP;
}

/* Is `file` a kustomization file (kustomize allows one without apiVersion and kind)? */
static bool is_kustomization(const char *file)
{
    const char *base = strrchr(file, '/');

    base = base != NULL ? base + 1 : file;
    return strcmp(base, "kustomization.yaml") == 0 || strcmp(base, "kustomization.yml") == 0 ||
           strcmp(base, "Kustomization") == 0;
}

/*
 * A Configuration is also read the way `sluice run --config` reads it (lib/ctrl/config.c), whose
 * rules are the operator's own (durations, bind addresses, sluice.dev annotations, lease timings)
 * and stop at the first problem: "path: message", reported at that path unless decoding reported
 * the same already.
 */
static err_t check_configuration(check_doc_t *cd)
{
    ctrl_config_t cfg;
    err_msg_t msg = {{0}};
    const char *text, *colon;
    char path[256];
    err_t rc;

    if (ctrl_config_init(&cfg, &msg) != ERR_OK) {
        ctrl_config_fini(&cfg);
        return ERR_NOMEM;
    }
    rc = ctrl_config_apply(&cfg, cd->root, &msg);
    if (rc == ERR_OK)
        rc = ctrl_config_finish(&cfg, &msg);
    ctrl_config_fini(&cfg);
    if (rc == ERR_NOMEM)
        return ERR_NOMEM;
    if (rc == ERR_OK)
        return ERR_OK;
    text = msg.text;
    if (strncmp(text, "configuration: ", 15) == 0)
        text += 15;
    colon = strstr(text, ": ");
    path[0] = '\0';
    if (colon != NULL && (size_t)(colon - text) < sizeof(path) &&
        memchr(text, ' ', (size_t)(colon - text)) == NULL) {
        memcpy(path, text, (size_t)(colon - text));
        path[colon - text] = '\0';
        text = colon + 2;
    }
    for (size_t i = 0; i < cd->diags.len; i++)
        if (!cd->diags.items[i].warning && strcmp(cd->diags.items[i].path, path) == 0 &&
            strcmp(cd->diags.items[i].message, text) == 0)
            return ERR_OK;
    return diags_error(&cd->diags, path, "%s (as sluice run --config reads it)", text);
}

/*
 * Every stage in one pass: an object whose decoding failed still goes through the validators and
 * the cross-checks when object_decode_keep() kept it (its errors only dropped fields a whole
 * object can do without: an unknown field, an unsupported enum value, a malformed quantity);
 * fixing one stage's errors then brings no new ones from the next. Other decode errors (a missing
 * required field, a wrong type) leave the object partial (kind and name only), as before.
 */

/* Check one object: document `index` of the current file, or its items[item] (item >= 0). */
/* Decode document `cd` of kind `jk` (NULL: not an integration kind); `deps` (may be NULL) holds
 * the training runtimes read, for a TrainJob. ERR_NOMEM only matters. */
static err_t decode_doc(check_doc_t *cd, const jobs_kind_t *jk, kindobj_deps_t *deps)
{
    err_t e = jk != NULL
                  ? kindobj_decode_with(jk, cd->root, deps != NULL ? kindobj_deps_find : NULL, deps,
                                        false, &cd->obj, &cd->diags)
                  : object_decode_keep(cd->root, &cd->obj, &cd->diags);

    if (e == ERR_OK) {
        cd->decoded = true;
    } else if (e == ERR_INVALID && cd->obj.kind != KIND_UNKNOWN) {
        cd->decoded = cd->kept = true; /* kindobj_decode() zeroes `obj` on ERR_INVALID */
    } else if (e == ERR_INVALID && make_partial(cd, cd->root, jk) != ERR_OK) {
        e = ERR_NOMEM;
    }
    return e;
}

/* The TrainJobs, once every document is read: each resolved against the training runtimes among
 * them (kindobj_dep_kind()), which are not checked themselves. */
static err_t decode_deferred(check_t *c)
{
    kindobj_deps_t deps = {0};
    err_t e = ERR_OK;

    for (size_t i = 0; i < c->ndocs && e == ERR_OK; i++)
        if (kindobj_dep_kind(c->docs[i].root) != NULL)
            e = kindobj_deps_add(&deps, c->docs[i].root);
    for (size_t i = 0; i < c->ndocs && e == ERR_OK; i++)
        if (c->docs[i].deferred)
            e = decode_doc(&c->docs[i], kindobj_kind(c->docs[i].root), &deps);
    kindobj_deps_fini(&deps);
    return e == ERR_NOMEM ? ERR_NOMEM : ERR_OK;
}

static err_t check_object(check_t *c, size_t index, int line, long item, json_t *root,
                          const yaml_marks_t *marks)
{
    check_doc_t *cd = doc_new(c);
    const json_t *md = json_is_object(root) ? json_object_get(root, "metadata") : NULL;
    const char *name = json_str(md, "name"), *ns = json_str(md, "namespace");
    const jobs_kind_t *jk;
    class_t class;
    char buf[1024];
    size_t nsim = 0;
    err_t e;

    if (cd == NULL) {
        c->oom = true;
        return ERR_NOMEM;
    }
    cd->file = c->cur_file;
    cd->doc = index + 1;
    cd->item = item;
    cd->line = line;
    cd->marks = marks;
    cd->root = json_incref(root);
    if (name == NULL)
        name = json_str(md, "generateName");
    if (name != NULL && ns != NULL && ns[0] != '\0') {
        snprintf(buf, sizeof(buf), "%s/%s", ns, name);
        e = util_strdup(buf, &cd->name);
    } else {
        e = util_strdup(name, &cd->name);
    }
    if (item >= 0)
        snprintf(buf, sizeof(buf), "%s doc %zu items[%ld]", cd->file, cd->doc, item);
    else
        snprintf(buf, sizeof(buf), "%s doc %zu", cd->file, cd->doc);
    if (e != ERR_OK || util_strdup(json_str(root, "kind"), &cd->kind) != ERR_OK ||
        util_strdup(buf, &cd->origin) != ERR_OK) {
        c->oom = true;
        return ERR_NOMEM;
    }

    class = classify(root);
    if (class != CLASS_CHECK) {
        cd->skipped = true;
        c->nskipped++;
        if (class == CLASS_NOT_OBJECT && !is_kustomization(cd->file) &&
            diags_warn(&cd->diags, "",
                       "not a Kubernetes object (no apiVersion, no kind): not checked") != ERR_OK) {
            c->oom = true;
            return ERR_NOMEM;
        }
        return ERR_OK;
    }
    c->nobjects++;

    /* JobSet, the Kubeflow jobs, RayJob, ...: lib/jobs' kind table says how to read them. A
     * TrainJob's pod sets are in the training runtime it names, which may be a later document:
     * it waits for decode_deferred(). */
    jk = kindobj_kind(root);
    if (jk != NULL && jk->resolve != NULL)
        cd->deferred = true;
    else
        e = decode_doc(cd, jk, NULL);
    if (e != ERR_NOMEM && cd->kind != NULL && strcmp(cd->kind, "Configuration") == 0 &&
        group_is(json_str(root, "apiVersion"), "config.kueue.x-k8s.io"))
        e = check_configuration(cd) == ERR_NOMEM ? ERR_NOMEM : e;
    /* A typo in a simulator annotation would be ignored and, for a runtime, leave the workload
     * running forever: an error, with or without --scenario. */
    if (e != ERR_NOMEM && json_is_object(md) &&
        sim_annot_check(json_object_get(md, "annotations"), &cd->diags, &nsim) != ERR_OK)
        e = ERR_NOMEM;
    if (nsim > 0)
        c->nsim++;
    if (e == ERR_NOMEM || cd->diags.oom || c->oom) {
        c->oom = true;
        return ERR_NOMEM;
    }
    return ERR_OK;
}

/* A document; a kubectl List (`kubectl get ... -o yaml`) is checked item by item. */
static err_t on_doc(void *ctx, size_t index, int line, json_t *root, yaml_marks_t *marks)
{
    check_t *c = ctx;
    const json_t *items = json_object_get(root, "items");
    const char *kind = json_str(root, "kind"), *av = json_str(root, "apiVersion");
    err_t e = ERR_OK;

    if (util_grow((void **)&c->marks, &c->marks_cap, c->nmarks + 1, sizeof(*c->marks)) != ERR_OK) {
        yaml_marks_free(marks);
        c->oom = true;
        return ERR_NOMEM;
    }
    c->marks[c->nmarks++] = marks;
    if (kind == NULL || strcmp(kind, "List") != 0 || av == NULL || strcmp(av, "v1") != 0 ||
        !json_is_array(items))
        return check_object(c, index, line, -1, root, marks);
    for (size_t i = 0; i < json_array_size(items) && e == ERR_OK; i++)
        e = check_object(c, index, line, (long)i, json_array_get(items, i), marks);
    return e;
}

static const char *remember_file(check_t *c, const char *name)
{
    char **f = realloc(c->files, (c->nfiles + 1) * sizeof(*f));

    if (f == NULL)
        return NULL;
    c->files = f;
    f[c->nfiles] = strdup(name);
    if (f[c->nfiles] == NULL)
        return NULL;
    return f[c->nfiles++];
}

/* A file that could not be read or parsed: "FILE:LINE:COL: problem" when the loader placed it
 * ("line L, column C: problem"), else "sluice check: FILE: problem". */
static void read_error(check_t *c, const char *file, const char *text)
{
    unsigned long line = 0, col = 0;
    const char *p = text, *rest = text;
    char *end;

    c->nbad_files++;
    if (strncmp(p, "line ", 5) == 0) {
        line = strtoul(p + 5, &end, 10);
        if (strncmp(end, ", column ", 9) == 0) {
            col = strtoul(end + 9, &end, 10);
            if (strncmp(end, ": ", 2) == 0)
                rest = end + 2;
            else
                line = 0;
        } else {
            line = 0;
        }
    }
    if (c->json) {
        json_t *e = json_pack("{s:s,s:s}", "file", file, "message", rest);
        if (e != NULL && line > 0 &&
            (json_object_set_new(e, "line", json_integer((json_int_t)line)) ||
             json_object_set_new(e, "column", json_integer((json_int_t)col)))) {
            json_decref(e);
            e = NULL;
        }
        if (e == NULL || json_array_append_new(c->read_errors, e) != 0)
            c->oom = true;
        return;
    }
    if (line > 0)
        fprintf(stderr, "%s:%lu:%lu: %s\n", file, line, col, rest);
    else
        fprintf(stderr, "sluice check: %s: %s\n", file, text);
}

static void read_stream(check_t *c, FILE *f, const char *display)
{
    err_msg_t msg = {{0}};
    err_t e;

    c->cur_file = remember_file(c, display);
    if (c->cur_file == NULL) {
        c->oom = true;
        return;
    }
    e = yaml_load_file_marks(f, on_doc, c, &msg);
    if (e == ERR_NOMEM || c->oom)
        c->oom = true;
    else if (e != ERR_OK)
        read_error(c, display, msg.text[0] ? msg.text : err_str(e));
}

static void read_path(check_t *c, const char *path, bool top);

static bool wanted_in_dir(const char *name)
{
    size_t n = strlen(name);
    const char *ext[] = {".yaml", ".yml", ".json"};

    if (name[0] == '.')
        return false;
    for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
        size_t e = strlen(ext[i]);
        if (n > e && strcmp(name + n - e, ext[i]) == 0)
            return true;
    }
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory's manifest files in name order, like `kubectl apply -f DIR`; with -R its
 * subdirectories too (hidden ones excepted), each where its name sorts. */
static void read_dir(check_t *c, const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;

    if (dir == NULL) {
        char text[512];
        snprintf(text, sizeof(text), "%s", strerror(errno));
        read_error(c, path, text);
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        char **grown, *full;
        size_t len;
        struct stat st;
        bool subdir;
        if (de->d_name[0] == '.')
            continue;
        len = strlen(path) + 1 + strlen(de->d_name) + 1;
        full = malloc(len);
        if (full == NULL) {
            c->oom = true;
            break;
        }
        snprintf(full, len, "%s%s%s", path,
                 path[0] != '\0' && path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
        /* A symbolic link is read as a file, never followed as a directory: no loops. */
        subdir = lstat(full, &st) == 0 && S_ISDIR(st.st_mode);
        if (subdir && !c->recursive)
            c->nskipped_dirs++;
        if (subdir ? !c->recursive : !wanted_in_dir(de->d_name)) {
            free(full);
            continue;
        }
        grown = realloc(names, (n + 1) * sizeof(*names));
        if (grown == NULL) {
            free(full);
            c->oom = true;
            break;
        }
        names = grown;
        names[n++] = full;
    }
    closedir(dir);
    if (n > 0)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!c->oom)
            read_path(c, names[i], false);
        free(names[i]);
    }
    free(names);
}

static void read_path(check_t *c, const char *path, bool top)
{
    struct stat st;
    size_t bad;
    FILE *f;

    if (top && strcmp(path, "-") == 0) {
        read_stream(c, stdin, "<stdin>");
        return;
    }
    /* A directory named on the command line may be a link; one found inside may not. */
    if ((top ? stat(path, &st) : lstat(path, &st)) == 0 && S_ISDIR(st.st_mode)) {
        read_dir(c, path);
        return;
    }
    f = fopen(path, "r");
    if (f == NULL) {
        read_error(c, path, strerror(errno));
        return;
    }
    bad = c->nbad_files;
    read_stream(c, f, path);
    if (ferror(f) && !c->oom && c->nbad_files == bad)
        read_error(c, path, "read error");
    fclose(f);
}

/* ---- checking and reporting ----------------------------------------------------------------- */

/*
 * Could validator finding `g` (at path q) merely echo decode error `e` (at path p)? An unknown
 * field is simply absent for the validators: no echo. An unsupported enum value holds the default
 * instead: a rule at the field or at the object holding it may echo it. A malformed quantity
 * holds zero: rules at the field, its object, or a sibling field compared with it ("lendingLimit
 * must be less than or equal to the nominalQuota") may echo it.
 */
static bool echoes(const diag_t *g, const diag_t *e)
{
    const char *q = g->path, *p = e->path;
    bool quantity = strncmp(e->message, "invalid quantity ", 17) == 0;
    size_t parent = 0, nq = strlen(q);

    if (e->warning || strncmp(e->message, "unknown field ", 14) == 0)
        return false;
    if (strcmp(q, p) == 0)
        return true;
    for (size_t i = 0; p[i] != '\0'; i++)
        if (p[i] == '.' || p[i] == '[')
            parent = i;
    if (nq == parent && strncmp(q, p, parent) == 0)
        return true;
    return quantity && parent > 0 && nq > parent && strncmp(q, p, parent) == 0 &&
           (q[parent] == '.' || q[parent] == '[');
}

/*
 * Append the validators' findings `v` to `d`. For an object kept despite decode errors, a finding
 * that could echo one of them (echoes()) is left out: the field holds a default there, not what
 * was written.
 */
static err_t add_validation(diags_t *d, const diags_t *v, bool kept)
{
    size_t ndecode = d->len;

    for (size_t k = 0; k < v->len; k++) {
        const diag_t *g = &v->items[k];
        bool echo = false;
        for (size_t j = 0; kept && j < ndecode && !echo; j++)
            echo = echoes(g, &d->items[j]);
        if (echo)
            continue;
        if ((g->warning ? diags_warn(d, g->path, "%s", g->message)
                        : diags_error(d, g->path, "%s", g->message)) != ERR_OK)
            return ERR_NOMEM;
    }
    return v->oom ? ERR_NOMEM : ERR_OK;
}

static bool run_checks(check_t *c, bool scenario)
{
    const object_t **objs = calloc(c->ndocs ? c->ndocs : 1, sizeof(*objs));
    const char **origins = calloc(c->ndocs ? c->ndocs : 1, sizeof(*origins));
    bool *partial = calloc(c->ndocs ? c->ndocs : 1, sizeof(*partial));
    size_t *prev = calloc(c->ndocs ? c->ndocs : 1, sizeof(*prev));
    diags_t *diags = calloc(c->ndocs ? c->ndocs : 1, sizeof(*diags));
    crosscheck_opts_t opts = {.timed_updates = scenario};
    bool ok = false;

    if (objs == NULL || origins == NULL || partial == NULL || prev == NULL || diags == NULL)
        goto out;
    for (size_t i = 0; i < c->ndocs; i++) {
        check_doc_t *cd = &c->docs[i];
        objs[i] = cd->decoded || cd->partial ? &cd->obj : NULL;
        origins[i] = cd->origin;
        partial[i] = cd->partial;
        diags[i] = cd->diags; /* moved out and back below; crosscheck appends */
    }
    opts.origins = origins;
    opts.partial = partial;
    /* Out of memory: the lists are still moved back (and freed by the caller). */
    ok = crosscheck_updates(objs, c->ndocs, &opts, prev) == ERR_OK;
    for (size_t i = 0; i < c->ndocs && ok; i++) {
        diags_t v;
        if (!c->docs[i].decoded)
            continue;
        diags_init(&v);
        if (prev[i] != CROSSCHECK_NONE && c->docs[prev[i]].decoded)
            ok = validate_update(objs[prev[i]], objs[i], &v) == ERR_OK;
        else
            ok = validate_object(objs[i], &v) == ERR_OK;
        ok = ok && add_validation(&diags[i], &v, c->docs[i].kept) == ERR_OK;
        diags_fini(&v);
    }
    if (ok)
        ok = crosscheck_run(objs, c->ndocs, &opts, diags) == ERR_OK;
    for (size_t i = 0; i < c->ndocs; i++)
        c->docs[i].diags = diags[i];
out:
    free(objs);
    free(origins);
    free(partial);
    free(prev);
    free(diags);
    return ok;
}

/* Where diagnostic `dg` of `cd` points: its field, or the nearest written ancestor, or the
 * document's first line. */
static yaml_pos_t diag_pos(const check_doc_t *cd, const diag_t *dg)
{
    yaml_pos_t pos = {cd->line, 1};

    if (!yaml_marks_find(cd->marks, cd->root, dg->path, &pos)) {
        pos.line = cd->line;
        pos.col = 1;
    }
    return pos;
}

static void print_doc(const check_doc_t *cd)
{
    char item[32] = "";

    if (cd->item >= 0)
        snprintf(item, sizeof(item), " items[%ld]", cd->item);
    for (size_t k = 0; k < cd->diags.len; k++) {
        const diag_t *dg = &cd->diags.items[k];
        yaml_pos_t pos = diag_pos(cd, dg);
        printf("%s:%d:%d: doc %zu%s (%s %s): %s%s%s%s\n", cd->file, pos.line, pos.col, cd->doc,
               item, cd->kind ? cd->kind : "<no kind>", cd->name ? cd->name : "<no name>",
               dg->warning ? "warning: " : "", dg->path[0] ? dg->path : "", dg->path[0] ? ": " : "",
               dg->message);
    }
}

/* Set `key` of `o` to a string, or to null for NULL; false when out of memory. */
static bool set_str(json_t *o, const char *key, const char *v)
{
    return json_object_set_new(o, key, v != NULL ? json_string(v) : json_null()) == 0;
}

/* One JSON object describing a document (problem or skipped document): file, line, doc, item,
 * kind, name. NULL when out of memory. */
static json_t *doc_json(const check_doc_t *cd, yaml_pos_t pos)
{
    json_t *o = json_pack("{s:s,s:i,s:i,s:I}", "file", cd->file, "line", pos.line, "column",
                          pos.col, "doc", (json_int_t)cd->doc);

    if (o == NULL || (cd->item >= 0 && json_object_set_new(o, "item", json_integer(cd->item))) ||
        !set_str(o, "kind", cd->kind) || !set_str(o, "name", cd->name)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The -o json document: every problem with its position, what was read and skipped, the
 * counts. NULL when out of memory. */
static json_t *report_json(const check_t *c, size_t nerr, size_t nwarn, int rc)
{
    json_t *files = json_array(), *problems = json_array(), *skipped = json_array();
    json_t *out = NULL;

    if (files == NULL || problems == NULL || skipped == NULL)
        goto fail;
    for (size_t i = 0; i < c->nfiles; i++)
        if (json_array_append_new(files, json_string(c->files[i])))
            goto fail;
    for (size_t i = 0; i < c->ndocs; i++) {
        const check_doc_t *cd = &c->docs[i];
        if (cd->skipped) {
            yaml_pos_t pos = {cd->line, 1};
            json_t *o = doc_json(cd, pos);
            if (o == NULL ||
                json_object_set_new(o, "apiVersion",
                                    json_str(cd->root, "apiVersion")
                                        ? json_string(json_str(cd->root, "apiVersion"))
                                        : json_null()) ||
                json_array_append_new(skipped, o))
                goto fail;
        }
        for (size_t k = 0; k < cd->diags.len; k++) {
            const diag_t *dg = &cd->diags.items[k];
            json_t *o = doc_json(cd, diag_pos(cd, dg));
            if (o == NULL || !set_str(o, "severity", dg->warning ? "warning" : "error") ||
                !set_str(o, "path", dg->path) || !set_str(o, "message", dg->message) ||
                json_array_append_new(problems, o))
                goto fail;
        }
    }
    out = json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:O,s:i}", "files", files, "objects",
                    (json_int_t)c->nobjects, "skipped", (json_int_t)c->nskipped, "errors",
                    (json_int_t)nerr, "warnings", (json_int_t)nwarn, "unreadableFiles",
                    (json_int_t)c->nbad_files, "problems", problems, "skippedDocuments", skipped,
                    "readErrors", c->read_errors, "exitStatus", rc);
    return out; /* "o" took files, problems and skipped, even on failure */
fail:
    json_decref(files);
    json_decref(problems);
    json_decref(skipped);
    return NULL;
}

static void check_fini(check_t *c)
{
    for (size_t i = 0; i < c->ndocs; i++) {
        free(c->docs[i].kind);
        free(c->docs[i].name);
        free(c->docs[i].origin);
        json_decref(c->docs[i].root);
        object_fini(&c->docs[i].obj);
        diags_fini(&c->docs[i].diags);
    }
    free(c->docs);
    for (size_t i = 0; i < c->nmarks; i++)
        yaml_marks_free(c->marks[i]);
    free(c->marks);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i]);
    free(c->files);
    json_decref(c->read_errors);
}

static void print_summary(const check_t *c, size_t nerr, size_t nwarn)
{
    fprintf(stderr, "sluice check: %zu object%s in %zu file%s", c->nobjects,
            c->nobjects == 1 ? "" : "s", c->nfiles, c->nfiles == 1 ? "" : "s");
    if (c->nskipped)
        fprintf(stderr, " (%zu other document%s skipped: kinds sluice has no rules for)",
                c->nskipped, c->nskipped == 1 ? "" : "s");
    fprintf(stderr, ": ");
    if (nerr || c->nbad_files)
        fprintf(stderr, "%zu error%s", nerr, nerr == 1 ? "" : "s");
    else
        fprintf(stderr, "ok");
    if (nwarn)
        fprintf(stderr, ", %zu warning%s", nwarn, nwarn == 1 ? "" : "s");
    if (c->nbad_files)
        fprintf(stderr, "; %zu file%s could not be read", c->nbad_files,
                c->nbad_files == 1 ? "" : "s");
    fputc('\n', stderr);
}

/* ---- --nodes FILE: quota against capacity (lib/inventory/capacity.h) ------------------------- */

/* Compare the quotas read with the capacity of the Nodes in `path` (`kubectl get nodes -o yaml`)
 * and add a warning to each ResourceFlavor whose nominal quota exceeds what its nodes hold. A
 * Nodes file that cannot be read counts as a file that could not be read; false on OOM. */
static bool check_nodes(check_t *c, const char *path)
{
    const object_t **objs = calloc(c->ndocs ? c->ndocs : 1, sizeof(*objs));
    diags_t *diags = calloc(c->ndocs ? c->ndocs : 1, sizeof(*diags));
    inv_set_t nodes;
    err_msg_t msg = {{0}};
    err_t e = ERR_NOMEM;

    inv_set_init(&nodes, stderr);
    if (objs != NULL && diags != NULL) {
        e = inv_set_read_path(&nodes, path, &msg);
        if (e == ERR_IO || e == ERR_PARSE || nodes.ninvalid > 0) {
            fprintf(stderr, "sluice check: --nodes %s\n",
                    e == ERR_OK ? "holds an invalid Node" : msg.text);
            c->nbad_files++;
            e = ERR_OK;
        } else if (e == ERR_OK) {
            for (size_t i = 0; i < c->ndocs; i++) {
                objs[i] = c->docs[i].decoded ? &c->docs[i].obj : NULL;
                diags[i] = c->docs[i].diags; /* moved out and back: warnings are appended */
            }
            e = capacity_warn_objects(objs, c->ndocs, nodes.nodes, nodes.nnodes, diags, &msg);
            for (size_t i = 0; i < c->ndocs; i++)
                c->docs[i].diags = diags[i];
        }
    }
    inv_set_fini(&nodes);
    free(objs);
    free(diags);
    return e != ERR_NOMEM;
}

enum { OPT_QUIET = 1, OPT_SCENARIO, OPT_RECURSIVE, OPT_ALLOW_EMPTY, OPT_OUTPUT, OPT_NODES };

static const cli_opt_t check_opts[] = {
    {OPT_RECURSIVE, 'R', "recursive", CLI_ARG_NONE, NULL, NULL, "read directories recursively"},
    {OPT_ALLOW_EMPTY, 0, "allow-empty", CLI_ARG_NONE, NULL, NULL,
     "finding no object to check is fine"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "text json yaml"),
    {OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "no summary line"},
    {OPT_SCENARIO, 0, "scenario", CLI_ARG_NONE, NULL, NULL, "read the files as a sim scenario"},
    {OPT_NODES, 0, "nodes", CLI_ARG_REQUIRED, "FILE", NULL, "compare quota with these Nodes"},
};

static int check_run(int argc, char **argv)
{
    check_t c = {0};
    bool quiet = false, scenario = false, allow_empty = false;
    cli_output_t output = CLI_OUTPUT_TEXT;
    size_t nerr = 0, nwarn = 0, nargs = 0;
    const char *val, *nodes_file = NULL;
    bool empty;
    cli_t p;
    int rc;

    cli_init(&p, &cmd_check, argc, argv);
    while ((rc = cli_next(&p, &val)) != CLI_DONE) {
        if (rc == CLI_STOP)
            return p.status;
        if (rc == OPT_QUIET)
            quiet = true;
        else if (rc == OPT_SCENARIO)
            scenario = true;
        else if (rc == OPT_RECURSIVE)
            c.recursive = true;
        else if (rc == OPT_ALLOW_EMPTY)
            allow_empty = true;
        else if (rc == OPT_OUTPUT)
            output = cli_output_parse(val);
        else if (rc == OPT_NODES)
            nodes_file = val;
        else
            argv[++nargs] = (char *)val; /* an operand: nargs < p.i, read already */
    }
    if (nargs == 0)
        return cli_fail_usage(&p, "no FILE given");
    c.json = output != CLI_OUTPUT_TEXT;
    c.read_errors = json_array();
    if (c.read_errors == NULL)
        c.oom = true;
    for (size_t i = 1; i <= nargs && !c.oom; i++)
        read_path(&c, argv[i], true);
    if (c.oom || decode_deferred(&c) != ERR_OK || !run_checks(&c, scenario) ||
        (nodes_file != NULL && !check_nodes(&c, nodes_file))) {
        fprintf(stderr, "sluice check: out of memory\n");
        check_fini(&c);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < c.ndocs; i++)
        for (size_t k = 0; k < c.docs[i].diags.len; k++)
            (*(c.docs[i].diags.items[k].warning ? &nwarn : &nerr))++;
    empty = c.nobjects == 0 && !allow_empty && c.nbad_files == 0;
    rc = c.nbad_files ? EXIT_USAGE : nerr || empty ? EXIT_INVALID : EXIT_CLEAN;

    if (c.json) {
        json_t *doc = report_json(&c, nerr, nwarn, rc);
        err_msg_t msg = {{0}};
        if (doc == NULL || cli_output_write(stdout, output, doc, &msg) != ERR_OK) {
            json_decref(doc);
            fprintf(stderr, "sluice check: %s\n", msg.text[0] ? msg.text : "out of memory");
            check_fini(&c);
            return EXIT_USAGE;
        }
        json_decref(doc);
    } else {
        for (size_t i = 0; i < c.ndocs; i++)
            print_doc(&c.docs[i]);
    }
    fflush(stdout);

    if (c.nskipped_dirs > 0 && !quiet)
        fprintf(stderr, "sluice check: %zu subdirector%s not read (-R reads them)\n",
                c.nskipped_dirs, c.nskipped_dirs == 1 ? "y" : "ies");
    if (c.nsim > 0 && !scenario && !quiet)
        fprintf(stderr,
                "sluice check: hint: %zu object%s carr%s sim.sluice.dev annotations: for a "
                "`sluice sim` scenario use --scenario (a later document with a later "
                "sim.sluice.dev/at is then an update, not a duplicate)\n",
                c.nsim, c.nsim == 1 ? "" : "s", c.nsim == 1 ? "ies" : "y");
    if (empty)
        fprintf(stderr,
                "sluice check: no object to check in %zu file%s%s: an error unless "
                "--allow-empty\n",
                c.nfiles, c.nfiles == 1 ? "" : "s",
                c.nskipped ? " (only kinds sluice has no rules for)" : "");
    else if (!quiet && !c.json)
        print_summary(&c, nerr, nwarn);
    check_fini(&c);
    return rc;
}

const cli_cmd_t cmd_check = {"check",
                             "validate manifests offline with the webhook's rules",
                             check_run,
                             check_opts,
                             ARRAY_SIZE(check_opts),
                             "FILE...",
                             NULL,
                             usage};
