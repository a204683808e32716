/* cmd_check -- `sluice check`: validate manifests offline with the webhook's rules. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"
#include "inventory/capacity.h"
#include "inventory/manifests.h"
#include "jobs/kindobj.h"
#include "model/crosscheck.h"
#include "model/object.h"
#include "model/validate.h"
#include "model/yaml.h"
#include "util/grow.h"
#include "util/str.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * Flow: every file is streamed document by document (yaml_load_file; JSON is YAML too); each
 * document is decoded at once and kept. Once every file is read, each object is validated
 * (validate_object, or validate_update for a --scenario update), then the whole set is
 * cross-checked, and the problems are printed in file and document order:
 *
 *   FILE: doc N (Kind name): path: message
 *   FILE: doc N (Kind name): warning: path: message
 *
 * N counts the YAML documents of the file from 1, empty ones included (as an editor's search
 * for "---" would), like the simulator's "doc N". Namespaced objects are named namespace/name.
 * Problems go to standard output; read errors and the summary go to standard error.
 */

enum { EXIT_CLEAN = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

typedef struct check_doc_s {
    const char *file; /* borrowed from check_t.files */
    size_t doc;       /* 1-based */
    char *kind;       /* owned: as written, NULL when absent */
    char *name;       /* owned: "name" or "namespace/name", NULL when absent */
    char *origin;     /* owned: "FILE doc N", for messages about other objects */
    object_t obj;     /* decoded, or a partial object (kind and name only), or zero */
    bool decoded;     /* object_decode succeeded */
    bool partial;     /* decode failed but kind and name are known */
    diags_t diags;
} check_doc_t;

typedef struct check_s {
    check_doc_t *docs; /* owned */
    size_t ndocs, cap;
    char **files; /* owned: names of the files read, for display */
    size_t nfiles;
    size_t nbad_files; /* files that could not be read or parsed */
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
            "RayJob, RayCluster, ...), and checks across all the files given (a ClusterQueue\n"
            "naming a ResourceFlavor no file defines, a LocalQueue naming a missing ClusterQueue,\n"
            "cohort cycles, duplicates).\n"
            "\n"
            "FILE is a YAML file (several documents separated by ---), a JSON file, a directory\n"
            "(its *.yaml, *.yml and *.json files, not recursive), or - for standard input.\n"
            "\n"
            "Each problem is one line on standard output:\n"
            "  FILE: doc N (Kind name): path: message\n"
            "  FILE: doc N (Kind name): warning: path: message\n"
            "where N counts the file's YAML documents from 1. Warnings do not fail the check.\n"
            "\n"
            "options:\n"
            "  -q, --quiet     do not print the summary line on standard error\n"
            "      --nodes FILE\n"
            "                  Nodes (`kubectl get nodes -o yaml`; - for standard input): warn\n"
            "                  on each ResourceFlavor whose nominal quota (all ClusterQueues and\n"
            "                  Cohorts) exceeds the allocatable capacity of the nodes its\n"
            "                  nodeLabels select; a warning, never an error\n"
            "      --scenario  read the files as a `sluice sim` scenario: a later document with\n"
            "                  the same kind, namespace and name and a later\n"
            "                  sim.sluice.dev/at annotation is an update of the earlier one\n"
            "                  (checked with the update rules), not a duplicate\n"
            "  -h, --help      print this help and exit\n"
            "  --              end of options (a FILE may then start with -)\n"
            "\n"
            "exit status: 0 no errors (warnings allowed), 1 some object is invalid,\n"
            "2 usage error, or a file could not be read or is not well-formed YAML/JSON.\n");
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

/* Check one object: document `index` of the current file, or its items[item] (item >= 0). */
static err_t check_object(check_t *c, size_t index, long item, json_t *root)
{
    check_doc_t *cd = doc_new(c);
    const json_t *md = json_is_object(root) ? json_object_get(root, "metadata") : NULL;
    const char *name = json_str(md, "name"), *ns = json_str(md, "namespace");
    const jobs_kind_t *jk;
    char buf[1024];
    err_t e;

    if (cd == NULL) {
        c->oom = true;
        return ERR_NOMEM;
    }
    cd->file = c->cur_file;
    cd->doc = index + 1;
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

    /* JobSet, the Kubeflow jobs, RayJob, ...: lib/jobs' kind table says how to read them. */
    jk = kindobj_kind(root);
    e = jk != NULL ? kindobj_decode(jk, root, &cd->obj, &cd->diags)
                   : object_decode(root, &cd->obj, &cd->diags);
    if (e == ERR_OK)
        cd->decoded = true;
    else if (e == ERR_INVALID && make_partial(cd, root, jk) != ERR_OK)
        e = ERR_NOMEM;
    if (e == ERR_NOMEM || cd->diags.oom || c->oom) {
        c->oom = true;
        return ERR_NOMEM;
    }
    return ERR_OK;
}

/* A document; a kubectl List (`kubectl get ... -o yaml`) is checked item by item. */
static err_t on_doc(void *ctx, size_t index, int line, json_t *root)
{
    check_t *c = ctx;
    const json_t *items = json_object_get(root, "items");
    const char *kind = json_str(root, "kind"), *av = json_str(root, "apiVersion");
    err_t e = ERR_OK;

    (void)line;
    if (kind == NULL || strcmp(kind, "List") != 0 || av == NULL || strcmp(av, "v1") != 0 ||
        !json_is_array(items))
        return check_object(c, index, -1, root);
    for (size_t i = 0; i < json_array_size(items) && e == ERR_OK; i++)
        e = check_object(c, index, (long)i, json_array_get(items, i));
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

static void read_stream(check_t *c, FILE *f, const char *display)
{
    err_msg_t msg = {{0}};
    err_t e;

    c->cur_file = remember_file(c, display);
    if (c->cur_file == NULL) {
        c->oom = true;
        return;
    }
    e = yaml_load_file(f, on_doc, c, &msg);
    if (e == ERR_NOMEM || c->oom) {
        c->oom = true;
    } else if (e != ERR_OK) {
        fprintf(stderr, "sluice check: %s: %s\n", display, msg.text[0] ? msg.text : err_str(e));
        c->nbad_files++;
    }
}

static void read_path(check_t *c, const char *path);

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

/* The directory's manifest files, in name order, like `kubectl apply -f DIR`. */
static void read_dir(check_t *c, const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;

    if (dir == NULL) {
        fprintf(stderr, "sluice check: %s: %s\n", path, strerror(errno));
        c->nbad_files++;
        return;
    }
    while ((de = readdir(dir)) != NULL) {
        char **grown;
        size_t len;
        if (!wanted_in_dir(de->d_name))
            continue;
        grown = realloc(names, (n + 1) * sizeof(*names));
        if (grown == NULL) {
            c->oom = true;
            break;
        }
        names = grown;
        len = strlen(path) + 1 + strlen(de->d_name) + 1;
        names[n] = malloc(len);
        if (names[n] == NULL) {
            c->oom = true;
            break;
        }
        snprintf(names[n], len, "%s%s%s", path,
                 path[0] != '\0' && path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
        n++;
    }
    closedir(dir);
    qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!c->oom)
            read_path(c, names[i]);
        free(names[i]);
    }
    free(names);
}

static void read_path(check_t *c, const char *path)
{
    struct stat st;
    FILE *f;

    if (strcmp(path, "-") == 0) {
        read_stream(c, stdin, "<stdin>");
        return;
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        read_dir(c, path);
        return;
    }
    f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "sluice check: %s: %s\n", path, strerror(errno));
        c->nbad_files++;
        return;
    }
    read_stream(c, f, path);
    if (ferror(f) && !c->oom) {
        fprintf(stderr, "sluice check: %s: read error\n", path);
        c->nbad_files++;
    }
    fclose(f);
}

/* ---- checking and reporting ----------------------------------------------------------------- */

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
        if (!c->docs[i].decoded)
            continue;
        if (prev[i] != CROSSCHECK_NONE && c->docs[prev[i]].decoded)
            ok = validate_update(objs[prev[i]], objs[i], &diags[i]) == ERR_OK;
        else
            ok = validate_object(objs[i], &diags[i]) == ERR_OK;
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

static void print_doc(const check_doc_t *cd, size_t *nerr, size_t *nwarn)
{
    for (size_t k = 0; k < cd->diags.len; k++) {
        const diag_t *dg = &cd->diags.items[k];
        printf("%s: doc %zu (%s %s): %s%s%s%s\n", cd->file, cd->doc,
               cd->kind ? cd->kind : "<no kind>", cd->name ? cd->name : "<no name>",
               dg->warning ? "warning: " : "", dg->path[0] ? dg->path : "", dg->path[0] ? ": " : "",
               dg->message);
        if (dg->warning)
            (*nwarn)++;
        else
            (*nerr)++;
    }
}

static void check_fini(check_t *c)
{
    for (size_t i = 0; i < c->ndocs; i++) {
        free(c->docs[i].kind);
        free(c->docs[i].name);
        free(c->docs[i].origin);
        object_fini(&c->docs[i].obj);
        diags_fini(&c->docs[i].diags);
    }
    free(c->docs);
    for (size_t i = 0; i < c->nfiles; i++)
        free(c->files[i]);
    free(c->files);
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

enum { OPT_QUIET = 1, OPT_SCENARIO, OPT_NODES };

static const cli_opt_t check_opts[] = {
    {OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "no summary line"},
    {OPT_SCENARIO, 0, "scenario", CLI_ARG_NONE, NULL, NULL, "read the files as a sim scenario"},
    {OPT_NODES, 0, "nodes", CLI_ARG_REQUIRED, "FILE", NULL, "compare quota with these Nodes"},
};

static int check_run(int argc, char **argv)
{
    check_t c = {0};
    bool quiet = false, scenario = false;
    size_t nerr = 0, nwarn = 0, nargs = 0;
    const char *val, *nodes_file = NULL;
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
        else if (rc == OPT_NODES)
            nodes_file = val;
        else
            argv[++nargs] = (char *)val; /* an operand: nargs < p.i, read already */
    }
    if (nargs == 0)
        return cli_fail_usage(&p, "no FILE given");
    for (size_t i = 1; i <= nargs && !c.oom; i++)
        read_path(&c, argv[i]);
    if (c.oom || !run_checks(&c, scenario) ||
        (nodes_file != NULL && !check_nodes(&c, nodes_file))) {
        fprintf(stderr, "sluice check: out of memory\n");
        check_fini(&c);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < c.ndocs; i++)
        print_doc(&c.docs[i], &nerr, &nwarn);
    fflush(stdout);

    rc = c.nbad_files ? EXIT_USAGE : nerr ? EXIT_INVALID : EXIT_CLEAN;
    if (!quiet) {
        fprintf(stderr, "sluice check: %zu object%s in %zu file%s: ", c.ndocs,
                c.ndocs == 1 ? "" : "s", c.nfiles, c.nfiles == 1 ? "" : "s");
        if (nerr || c.nbad_files)
            fprintf(stderr, "%zu error%s", nerr, nerr == 1 ? "" : "s");
        else
            fprintf(stderr, "ok");
        if (nwarn)
            fprintf(stderr, ", %zu warning%s", nwarn, nwarn == 1 ? "" : "s");
        if (c.nbad_files)
            fprintf(stderr, "; %zu file%s could not be read", c.nbad_files,
                    c.nbad_files == 1 ? "" : "s");
        fputc('\n', stderr);
    }
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
