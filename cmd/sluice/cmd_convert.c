/* cmd_convert -- `sluice convert`: rewrite Kueue v1beta1 manifests as v1beta2, offline. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"
#include "model/convert.h"
#include "model/yaml.h"
#include "model/yamlw.h"
#include "util/grow.h"
#include "util/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The same conversion as the webhook (model/convert), applied to manifests: every document of
 * every FILE is read (yaml_load_file; JSON is YAML too), converted in memory, and only when all
 * of them converted is the result written -- to standard output or, with -o, to a temporary file
 * renamed over FILE at the end (so `-o` may name one of the inputs). Documents:
 *
 *   kueue.x-k8s.io/v1beta1 ClusterQueue, LocalQueue, Workload     reshaped (convert.h)
 *   kueue.x-k8s.io/v1beta1 ResourceFlavor, Cohort, WorkloadPriorityClass    apiVersion only
 *   kind: List (kubectl get -o yaml)                             each item as above
 *   other kueue.x-k8s.io/v1beta1 kinds, Configuration v1beta1     kept, with a warning
 *   anything else                                                kept unchanged
 *
 * Comments and the YAML layout of the input are not kept (model/yamlw writes block style);
 * values are. Messages go to standard error as "FILE: doc N: ...", like `sluice check`.
 */

enum { EXIT_CLEAN = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

typedef struct conv_doc_s {
    const char *file; /* borrowed from argv */
    size_t doc;       /* 1-based */
    json_t *json;     /* owned: as read, then as converted */
} conv_doc_t;

typedef struct conv_run_s {
    conv_doc_t *docs; /* owned */
    size_t ndocs, cap;
    const char *cur_file;
    size_t nconverted, nwarnings, nerrors, nbad_files;
    bool oom;
} conv_run_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice convert [options] FILE...\n"
            "\n"
            "Rewrite Kueue manifests written for kueue.x-k8s.io/v1beta1 as v1beta2, with the\n"
            "conversion sluice's webhook applies to stored objects (Kueue's rules):\n"
            "  ClusterQueue  spec.cohort -> cohortName, spec.admissionChecks ->\n"
            "                admissionChecksStrategy, flavorFungibility Borrow/Preempt ->\n"
            "                MayStopSearch\n"
            "  LocalQueue    status.flavorUsage -> flavorsUsage\n"
            "  Workload      spec.priorityClassName + priorityClassSource -> priorityClassRef,\n"
            "                status.accumulatedPastExexcutionTimeSeconds -> ...Execution...,\n"
            "                topology assignments domains -> slices\n"
            "  ResourceFlavor, Cohort, WorkloadPriorityClass: the apiVersion only.\n"
            "Items of a List (kubectl get -o yaml) are converted one by one; every other document\n"
            "is written unchanged. Fields v1beta2 has no place for are dropped with a warning.\n"
            "\n"
            "FILE is a YAML or JSON file (several documents separated by ---), or - for standard\n"
            "input. The result is YAML on standard output; nothing is written unless every\n"
            "document converted. Warnings and errors go to standard error as\n"
            "  FILE: doc N: [warning: ]message\n"
            "\n"
            "options:\n"
            "  -o, --output FILE  write to FILE instead (replaced at the end; may be an input)\n"
            "  -q, --quiet        do not print the summary line on standard error\n"
            "  -h, --help         print this help and exit\n"
            "  --                 end of options (a FILE may then start with -)\n"
            "\n"
            "exit status: 0 converted (warnings allowed), 1 some document cannot be converted,\n"
            "2 usage error, or a file could not be read or is not well-formed YAML/JSON.\n");
}

/* ---- reading ------------------------------------------------------------------------------- */

static err_t on_doc(void *ctx, size_t index, int line, json_t *root)
{
    conv_run_t *r = ctx;

    (void)line;
    if (util_grow((void **)&r->docs, &r->cap, r->ndocs + 1, sizeof(*r->docs)) != ERR_OK) {
        r->oom = true;
        return ERR_NOMEM;
    }
    r->docs[r->ndocs].file = r->cur_file;
    r->docs[r->ndocs].doc = index + 1;
    r->docs[r->ndocs].json = json_incref(root);
    r->ndocs++;
    return ERR_OK;
}

static void read_path(conv_run_t *r, const char *path)
{
    err_msg_t msg = {{0}};
    struct stat st;
    FILE *f;
    err_t e;

    if (strcmp(path, "-") == 0) {
        r->cur_file = "<stdin>";
        f = stdin;
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "sluice convert: %s: is a directory (give its files)\n", path);
        r->nbad_files++;
        return;
    } else {
        r->cur_file = path;
        f = fopen(path, "r");
        if (f == NULL) {
            fprintf(stderr, "sluice convert: %s: %s\n", path, strerror(errno));
            r->nbad_files++;
            return;
        }
    }
    e = yaml_load_file(f, on_doc, r, &msg);
    if (e == ERR_NOMEM || r->oom) {
        r->oom = true;
    } else if (e != ERR_OK) {
        fprintf(stderr, "sluice convert: %s: %s\n", r->cur_file,
                msg.text[0] ? msg.text : err_str(e));
        r->nbad_files++;
    } else if (ferror(f)) {
        fprintf(stderr, "sluice convert: %s: read error\n", r->cur_file);
        r->nbad_files++;
    }
    if (f != stdin)
        fclose(f);
}

/* ---- converting ---------------------------------------------------------------------------- */

typedef struct note_ctx_s {
    conv_run_t *run;
    const conv_doc_t *doc;
    const char *prefix; /* "items[3]." inside a List, else "" */
} note_ctx_t;

static void on_note(void *ctx, const char *path, const char *text)
{
    note_ctx_t *n = ctx;

    fprintf(stderr, "%s: doc %zu: warning: %s%s: %s\n", n->doc->file, n->doc->doc, n->prefix, path,
            text);
    n->run->nwarnings++;
}

static void warn(conv_run_t *r, const conv_doc_t *d, const char *prefix, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void warn(conv_run_t *r, const conv_doc_t *d, const char *prefix, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: doc %zu: warning: %s", d->file, d->doc, prefix);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    r->nwarnings++;
}

/* Convert one object `in` (borrowed); *out is a new reference (maybe `in` itself). */
static err_t convert_one(conv_run_t *r, const conv_doc_t *d, const char *prefix, json_t *in,
                         json_t **out)
{
    const char *api = json_string_value(json_object_get(in, "apiVersion"));
    const char *kind = json_string_value(json_object_get(in, "kind"));
    note_ctx_t nc = {r, d, prefix};
    convert_opts_t opts = {.note = on_note, .ctx = &nc};
    err_msg_t msg = {{0}};
    err_t rc;

    *out = json_incref(in);
    if (api == NULL || kind == NULL)
        return ERR_OK;
    if (strcmp(api, "config.kueue.x-k8s.io/v1beta1") == 0 && strcmp(kind, "Configuration") == 0) {
        warn(r, d, prefix,
             "Configuration config.kueue.x-k8s.io/v1beta1 is left as it is: sluice run and sluice "
             "check read v1beta1; Kueue's own conversion to v1beta2 also changes defaults "
             "(fairSharing, waitForPodsReady, ...), which sluice convert does not guess");
        return ERR_OK;
    }
    if (strcmp(api, CONVERT_V1BETA1) != 0)
        return ERR_OK;
    if (!convert_supported(api, kind)) {
        warn(r, d, prefix,
             "%s %s is left as it is: sluice converts ClusterQueue, LocalQueue, Workload, "
             "ResourceFlavor, Cohort and WorkloadPriorityClass only",
             kind, api);
        return ERR_OK;
    }
    json_decref(*out);
    *out = NULL;
    rc = convert_object(in, CONVERT_V1BETA2, &opts, out, &msg);
    if (rc == ERR_NOMEM) {
        r->oom = true;
    } else if (rc != ERR_OK) {
        fprintf(stderr, "%s: doc %zu: %s%s\n", d->file, d->doc, prefix, msg.text);
        r->nerrors++;
    } else {
        r->nconverted++;
    }
    return rc;
}

/* A document: one object, or a List whose items are converted one by one. */
static void convert_doc(conv_run_t *r, conv_doc_t *d)
{
    json_t *items = json_object_get(d->json, "items"), *item, *out = NULL, *list = NULL;
    const char *kind = json_string_value(json_object_get(d->json, "kind"));
    char prefix[48];
    size_t i;

    if (kind == NULL || strcmp(kind, "List") != 0 || !json_is_array(items)) {
        if (convert_one(r, d, "", d->json, &out) == ERR_OK) {
            json_decref(d->json);
            d->json = out;
        }
        return;
    }
    list = json_deep_copy(d->json);
    if (list == NULL) {
        r->oom = true;
        return;
    }
    items = json_object_get(list, "items");
    json_array_foreach(items, i, item)
    {
        snprintf(prefix, sizeof(prefix), "items[%zu]: ", i);
        if (convert_one(r, d, prefix, item, &out) != ERR_OK)
            continue;
        if (json_array_set_new(items, i, out) != 0)
            r->oom = true;
    }
    json_decref(d->json);
    d->json = list;
}

/* ---- writing ------------------------------------------------------------------------------- */

static int write_out(conv_run_t *r, const char *output)
{
    const json_t **docs = calloc(r->ndocs ? r->ndocs : 1, sizeof(*docs));
    char tmp[4096];
    err_msg_t msg = {{0}};
    FILE *f = stdout;
    err_t rc;

    if (docs == NULL) {
        fprintf(stderr, "sluice convert: out of memory\n");
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < r->ndocs; i++)
        docs[i] = r->docs[i].json;
    if (output != NULL) {
        int fd;
        snprintf(tmp, sizeof(tmp), "%s.XXXXXX", output);
        fd = mkstemp(tmp);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f == NULL) {
            fprintf(stderr, "sluice convert: %s: %s\n", output, strerror(errno));
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            free(docs);
            return EXIT_USAGE;
        }
    }
    rc = yamlw_file(f, docs, r->ndocs, &msg);
    free(docs);
    if (rc == ERR_OK && fflush(f) != 0)
        rc = err_set(&msg, ERR_IO, "write error: %s", strerror(errno));
    if (output == NULL) {
        if (rc != ERR_OK)
            fprintf(stderr, "sluice convert: <stdout>: %s\n", msg.text);
        return rc == ERR_OK ? EXIT_CLEAN : EXIT_USAGE;
    }
    if (fclose(f) != 0 && rc == ERR_OK)
        rc = err_set(&msg, ERR_IO, "write error: %s", strerror(errno));
    if (rc == ERR_OK && rename(tmp, output) != 0)
        rc = err_set(&msg, ERR_IO, "rename: %s", strerror(errno));
    if (rc != ERR_OK) {
        unlink(tmp);
        fprintf(stderr, "sluice convert: %s: %s\n", output, msg.text);
        return EXIT_USAGE;
    }
    return EXIT_CLEAN;
}

enum { OPT_QUIET = 1, OPT_OUTPUT };

static const cli_opt_t convert_opts[] = {
    {OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "no summary line"},
    /* Not the -o FORMAT of other commands: the output is always YAML manifests. */
    {OPT_OUTPUT, 'o', "output", CLI_ARG_REQUIRED, "FILE", NULL, "write to FILE"},
};

static int convert_run(int argc, char **argv)
{
    conv_run_t r = {0};
    const char *output = NULL, *val;
    bool quiet = false;
    size_t nfiles = 0;
    cli_t p;
    int rc;

    cli_init(&p, &cmd_convert, argc, argv);
    while ((rc = cli_next(&p, &val)) != CLI_DONE) {
        if (rc == CLI_STOP)
            return p.status;
        if (rc == OPT_QUIET)
            quiet = true;
        else if (rc == OPT_OUTPUT)
            output = val;
        else
            argv[++nfiles] = (char *)val; /* an operand: nfiles < p.i, read already */
    }
    if (nfiles == 0)
        return cli_fail_usage(&p, "no FILE given (- reads standard input)");
    for (size_t i = 1; i <= nfiles && !r.oom; i++)
        read_path(&r, argv[i]);
    for (size_t i = 0; i < r.ndocs && !r.oom && r.nbad_files == 0; i++)
        convert_doc(&r, &r.docs[i]);

    if (r.oom) {
        fprintf(stderr, "sluice convert: out of memory\n");
        rc = EXIT_USAGE;
    } else if (r.nbad_files > 0) {
        rc = EXIT_USAGE;
    } else if (r.nerrors > 0) {
        rc = EXIT_INVALID;
    } else {
        rc = write_out(&r, output);
    }
    if (!quiet) {
        fprintf(stderr, "sluice convert: %zu document%s in %zu file%s: %zu converted", r.ndocs,
                r.ndocs == 1 ? "" : "s", nfiles, nfiles == 1 ? "" : "s", r.nconverted);
        if (r.nwarnings)
            fprintf(stderr, ", %zu warning%s", r.nwarnings, r.nwarnings == 1 ? "" : "s");
        if (r.nerrors)
            fprintf(stderr, ", %zu error%s (nothing written)", r.nerrors,
                    r.nerrors == 1 ? "" : "s");
        if (r.nbad_files)
            fprintf(stderr, "; %zu file%s could not be read (nothing written)", r.nbad_files,
                    r.nbad_files == 1 ? "" : "s");
        fputc('\n', stderr);
    }
    for (size_t i = 0; i < r.ndocs; i++)
        json_decref(r.docs[i].json);
    free(r.docs);
    return rc;
}

const cli_cmd_t cmd_convert = {"convert",
                               "rewrite Kueue v1beta1 manifests as v1beta2",
                               convert_run,
                               convert_opts,
                               ARRAY_SIZE(convert_opts),
                               "FILE...",
                               NULL,
                               usage};
