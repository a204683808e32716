/* cmd_verify -- `sluice verify`: replay a watch of Workloads against the queues' quotas. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli.h"
#include "model/yaml.h"
#include "util/alloc.h"
#include "util/grow.h"
#include "util/util.h"
#include "verify/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The invariant checker (lib/verify) over what the API server recorded: every FILE is read as a
 * stream of JSON values (kubectl get -w --output-watch-events -o json prints them one after the
 * other) or as YAML documents. ClusterQueues and Cohorts (or Lists of them) from every file are
 * taken first; then the Workload records and watch events are replayed in the order read.
 */

enum { EXIT_CLEAN = 0, EXIT_VIOLATION = 1, EXIT_USAGE = 2 };

typedef struct vdoc_s {
    const char *file; /* borrowed from argv */
    size_t index;     /* 1-based within the file */
    json_t *json;     /* owned */
} vdoc_t;

typedef struct vrun_s {
    vdoc_t *docs; /* owned */
    size_t ndocs, cap;
    const char *cur_file;
} vrun_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice verify [options] FILE...\n"
            "\n"
            "Check a history of Workloads, as the API server recorded it, against the quotas of\n"
            "the ClusterQueues and Cohorts: no ClusterQueue or cohort above its nominal quota\n"
            "and borrowing limits after any admission, no Workload admitted twice without a\n"
            "release in between or after it finished, and at the end every Workload finished,\n"
            "admitted, deleted, or pending with a reason (QuotaReserved=False and its message).\n"
            "The quota arithmetic is Kueue's, written apart from sluice's engine.\n"
            "\n"
            "FILE holds JSON values one after the other, or YAML documents: ClusterQueues,\n"
            "Cohorts and Lists of them (all files' are taken first), and Workloads or watch\n"
            "events {type, object} (replayed in the order read; DELETED gives quota back). - is\n"
            "standard input. Record a history with:\n"
            "  kubectl get clusterqueues,cohorts -o json > queues.json\n"
            "  kubectl get workloads -A -w --output-watch-events -o json > workloads.json\n"
            "  sluice verify queues.json workloads.json\n"
            "\n"
            "exit status: 0 nothing found, 1 a violation (each on standard error, named by its\n"
            "record and Workload), 2 usage or unreadable input.\n"
            "\n"
            "options:\n"
            "  -q, --quiet  no summary line on standard error\n"
            "  -h, --help   print this help and exit\n"
            "  --           end of options (a FILE may then start with -)\n");
}

static err_t add_doc(vrun_t *r, json_t *doc)
{
    if (util_grow((void **)&r->docs, &r->cap, r->ndocs + 1, sizeof(*r->docs)) != ERR_OK) {
        json_decref(doc);
        return ERR_NOMEM;
    }
    r->docs[r->ndocs].file = r->cur_file;
    r->docs[r->ndocs].index = r->ndocs + 1;
    r->docs[r->ndocs++].json = doc;
    return ERR_OK;
}

static err_t on_yaml_doc(void *ctx, size_t index, int line, json_t *doc)
{
    (void)index;
    (void)line;
    return add_doc(ctx, json_incref(doc));
}

/* The whole of `f` (NUL-terminated) into *buf, its length into *len; false on a read error or
 * out of memory (errno says which). */
static bool slurp(FILE *f, char **buf, size_t *len)
{
    size_t cap = 0, n = 0;
    char *b = NULL;

    for (;;) {
        size_t got;
        if (util_grow((void **)&b, &cap, n + 65536 + 1, 1) != ERR_OK) {
            free(b);
            errno = ENOMEM;
            return false;
        }
        got = fread(b + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return false;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return true;
}

/* Read `path` ("-": standard input) into r->docs; false (a message printed) when unreadable. */
static bool read_file(vrun_t *r, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    const char *name = strcmp(path, "-") == 0 ? "(standard input)" : path;
    err_msg_t msg = {{0}};
    char *buf = NULL;
    size_t len = 0, off = 0;
    bool ok;

    if (f == NULL) {
        fprintf(stderr, "sluice verify: %s: %s\n", name, strerror(errno));
        return false;
    }
    ok = slurp(f, &buf, &len);
    if (f != stdin)
        fclose(f);
    if (!ok) {
        fprintf(stderr, "sluice verify: %s: %s\n", name, strerror(errno));
        return false;
    }
    r->cur_file = path;
    while (off < len && strchr(" \t\r\n", buf[off]) != NULL)
        off++;
    if (off < len && (buf[off] == '{' || buf[off] == '[')) {
        /* A stream of JSON values. */
        while (off < len) {
            json_error_t je;
            json_t *v = util_json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
            if (v == NULL) {
                fprintf(stderr, "sluice verify: %s: JSON value %zu: %s (line %d)\n", name,
                        r->ndocs + 1, je.text, je.line);
                free(buf);
                return false;
            }
            if (add_doc(r, v) != ERR_OK) {
                fprintf(stderr, "sluice verify: %s: out of memory\n", name);
                free(buf);
                return false;
            }
            off += je.position;
            while (off < len && strchr(" \t\r\n", buf[off]) != NULL)
                off++;
        }
    } else if (yaml_load_string(buf, len, on_yaml_doc, r, &msg) != ERR_OK) {
        fprintf(stderr, "sluice verify: %s: %s\n", name, msg.text);
        free(buf);
        return false;
    }
    free(buf);
    return true;
}

enum { OPT_QUIET = 1 };

static const cli_opt_t verify_opts[] = {
    {OPT_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "no summary line"},
};

static int verify_run(int argc, char **argv)
{
    bool quiet = false;
    int nfiles = 0, status = EXIT_CLEAN, id;
    verify_replay_t *rp = NULL;
    vrun_t r = {0};
    err_msg_t msg = {{0}};
    verify_replay_stats_t st;
    size_t unexplained;
    const char *val;
    cli_t p;

    cli_init(&p, &cmd_verify, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        if (id == CLI_STOP)
            return p.status;
        if (id == OPT_QUIET)
            quiet = true;
        else
            argv[++nfiles] = (char *)val; /* an operand: nfiles < p.i, read already */
    }
    if (nfiles == 0)
        return cli_fail_usage(&p, "no FILE given (- reads standard input)");
    for (int i = 1; i <= nfiles; i++) {
        if (!read_file(&r, argv[i])) {
            status = EXIT_USAGE;
            goto out;
        }
    }
    if ((rp = verify_replay_new()) == NULL) {
        fprintf(stderr, "sluice verify: out of memory\n");
        status = EXIT_USAGE;
        goto out;
    }
    for (size_t i = 0; i < r.ndocs; i++) {
        if (verify_replay_queues(rp, r.docs[i].json, &msg) != ERR_OK) {
            fprintf(stderr, "sluice verify: %s: %s\n", r.docs[i].file, msg.text);
            status = EXIT_USAGE;
            goto out;
        }
    }
    for (size_t i = 0; i < r.ndocs; i++) {
        err_t rc = verify_replay_record(rp, r.docs[i].json, &msg);
        if (rc == ERR_INVALID) {
            fprintf(stderr, "sluice verify: %s: %s\n", r.docs[i].file, msg.text);
            status = EXIT_VIOLATION;
        } else if (rc != ERR_OK) {
            fprintf(stderr, "sluice verify: %s\n", msg.text);
            status = EXIT_USAGE;
            goto out;
        }
    }
    unexplained = verify_replay_end(rp, &msg);
    if (unexplained > 0) {
        fprintf(stderr, "sluice verify: %s%s\n", msg.text,
                unexplained > 1 ? " (and more: see the count below)" : "");
        status = EXIT_VIOLATION;
    }
    st = verify_replay_stats(rp);
    if (!quiet)
        fprintf(stderr,
                "sluice verify: %zu Workload records of %zu Workloads: %zu admissions, %zu "
                "releases checked; %zu violations, %zu ending unexplained, %zu records skipped "
                "(not a Workload sluice can read): %s\n",
                st.records, st.workloads, st.admissions, st.releases, st.violations, st.unexplained,
                st.undecodable, status == EXIT_CLEAN ? "ok" : "FAILED");
out:
    verify_replay_free(rp);
    for (size_t i = 0; i < r.ndocs; i++)
        json_decref(r.docs[i].json);
    free(r.docs);
    return status;
}

const cli_cmd_t cmd_verify = {"verify",
                              "check a recorded watch of Workloads against the queues' quotas",
                              verify_run,
                              verify_opts,
                              ARRAY_SIZE(verify_opts),
                              "FILE...",
                              NULL,
                              usage};
