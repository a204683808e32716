/* cmd_audit -- `sluice audit FILE`: print the quota and priority audit trail as a table. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "util/util.h"

#include "hook/audit.h"
#include "util/duration.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static void audit_usage(FILE *out)
{
    fprintf(out,
            "usage: sluice audit [--since DURATION] [--object KIND/NAME] [-o json|yaml] FILE\n"
            "       sluice audit --verify [-o json|yaml] FILE...\n\n"
            "Print the audit trail `sluice run` writes (one JSON line per accepted or rejected\n"
            "change of a ClusterQueue or Cohort quota, a LocalQueue mapping, a\n"
            "WorkloadPriorityClass value, or a Job/Workload priority label) as a table: time,\n"
            "user, operation, object, result, then each changed field as before -> after.\n\n"
            "options:\n"
            "  --since DURATION     only records from the last DURATION (e.g. 30m, 2h, 1h30m)\n"
            "  --object KIND/NAME   only records of one object; namespaced objects as\n"
            "                       KIND/NAMESPACE/NAME (KIND is case-insensitive)\n"
            "  --verify             check the hash chain of the FILEs, oldest first (FILE.5 ...\n"
            "                       FILE.1 FILE): prints the records checked and their seq range,\n"
            "                       or the first broken link (file:line, seq, what is wrong)\n"
            "  -o, --output FORMAT  json or yaml: the matching records as they are in the log,\n"
            "                       in one array (with --verify: ok, records, firstSeq, lastSeq,\n"
            "                       anchored, broken)\n"
            "  -h, --help           show this help\n\n"
            "FILE is the audit log path (`-` reads standard input, also with --verify). Rotated\n"
            "files (FILE.1, ...) are separate files: pass the one you want.\n\n"
            "exit status: 0 printed (possibly nothing) or chain intact, 1 chain broken,\n"
            "2 usage or I/O error\n");
}

/* --verify -o json|yaml: {"ok", "records", "firstSeq", "lastSeq", "anchored", "broken"}. */
static int verify_data(cli_t *p, const audit_verify_t *v, cli_output_t fmt)
{
    json_t *doc = json_pack("{s:b, s:I, s:I, s:I, s:b}", "ok", v->ok, "records",
                            (json_int_t)v->records, "firstSeq", (json_int_t)v->first_seq, "lastSeq",
                            (json_int_t)v->last_seq, "anchored", v->anchored);
    err_msg_t msg;
    err_t rc;

    if (doc != NULL && !v->ok && json_object_set_new(doc, "broken", json_string(v->where)) != 0) {
        json_decref(doc);
        doc = NULL;
    }
    if (doc == NULL)
        return cli_fail(p, "out of memory");
    rc = cli_output_write(stdout, fmt, doc, &msg);
    json_decref(doc);
    if (rc != ERR_OK)
        return cli_fail(p, "standard output: %s", msg.text);
    return v->ok ? 0 : 1;
}

/* `sluice audit --verify FILE...` */
static int verify(cli_t *p, size_t n, char **files, cli_output_t fmt)
{
    audit_verify_t v;
    err_msg_t msg;

    if (n == 0)
        return cli_fail_usage(p, "--verify: no FILE given");
    if (audit_verify((const char *const *)files, n, &v, &msg) != ERR_OK) {
        fprintf(stderr, "sluice audit: %s\n", msg.text);
        return 2;
    }
    if (fmt != CLI_OUTPUT_TEXT)
        return verify_data(p, &v, fmt);
    if (!v.ok) {
        printf("BROKEN after %llu intact records: %s\n", (unsigned long long)v.records, v.where);
        return 1;
    }
    printf("ok: %llu records, seq %llu..%llu%s\n", (unsigned long long)v.records,
           (unsigned long long)v.first_seq, (unsigned long long)v.last_seq,
           v.records == 0 ? ""
           : v.anchored
               ? " (from the first record ever)"
               : " (earlier records are not in these files: rotated away, or older files not "
                 "given)");
    return 0;
}

enum { OPT_SINCE = 1, OPT_OBJECT, OPT_VERIFY, OPT_OUTPUT };

static const cli_opt_t audit_opts[] = {
    {OPT_SINCE, 0, "since", CLI_ARG_REQUIRED, "DURATION", NULL, "only the last DURATION"},
    {OPT_OBJECT, 0, "object", CLI_ARG_REQUIRED, "KIND/NAME", NULL, "only one object's records"},
    {OPT_VERIFY, 0, "verify", CLI_ARG_NONE, NULL, NULL, "check the hash chain of the FILEs"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "json yaml"),
};

/* -o json|yaml: the matching records, as they are in the log, in one array. */
static int print_data(cli_t *p, FILE *in, const char *path, const audit_filter_t *filter,
                      cli_output_t fmt)
{
    json_t *all = NULL;
    err_msg_t msg;
    err_t rc;

    rc = audit_collect(in, stderr, filter, &all, &msg);
    if (rc != ERR_OK)
        return cli_fail(p, "%s: %s", path, msg.text);
    rc = cli_output_write(stdout, fmt, all, &msg);
    json_decref(all);
    if (rc != ERR_OK)
        return cli_fail(p, "standard output: %s", msg.text);
    return 0;
}

static int audit_run(int argc, char **argv)
{
    audit_filter_t filter = {0};
    const char *path = NULL, *val;
    bool do_verify = false, filtered = false;
    cli_output_t fmt = CLI_OUTPUT_TEXT;
    size_t nfiles = 0, count = 0;
    FILE *in;
    err_msg_t msg;
    err_t rc;
    cli_t p;
    int id;

    cli_init(&p, &cmd_audit, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        switch (id) {
        case CLI_STOP:
            return p.status;
        case CLI_OPERAND:
            argv[++nfiles] = (char *)val; /* nfiles < p.i: read already */
            break;
        case OPT_VERIFY:
            do_verify = true;
            break;
        case OPT_OUTPUT:
            fmt = cli_output_parse(val);
            break;
        case OPT_SINCE: {
            int64_t ms;
            struct timeval tv;
            if (duration_parse_ms(val, strlen(val), DURATION_MS_MAX, &ms, &msg) != ERR_OK)
                return cli_fail(&p, "--since %s: %s", val, msg.text);
            gettimeofday(&tv, NULL);
            filter.since_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000 - (int64_t)ms;
            filtered = true;
            break;
        }
        case OPT_OBJECT:
            if (strchr(val, '/') == NULL)
                return cli_fail(&p, "--object: want KIND/NAME, got \"%s\"", val);
            filter.object = val;
            filtered = true;
            break;
        }
    }
    if (do_verify && filtered)
        return cli_fail_usage(&p, "--verify checks whole files: no --since or --object");
    if (do_verify)
        return verify(&p, nfiles, argv + 1, fmt);
    if (nfiles == 0)
        return cli_fail_usage(&p, "no FILE given (- reads standard input)");
    if (nfiles > 1)
        return cli_fail_usage(&p, "one FILE only (several with --verify)");
    path = argv[1];
    in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (in == NULL) {
        fprintf(stderr, "sluice audit: %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (fmt != CLI_OUTPUT_TEXT) {
        id = print_data(&p, in, path, &filter, fmt);
        if (in != stdin)
            fclose(in);
        return id;
    }
    rc = audit_print(in, stdout, stderr, &filter, &count, &msg);
    if (in != stdin)
        fclose(in);
    if (rc != ERR_OK) {
        fprintf(stderr, "sluice audit: %s: %s\n", path, msg.text);
        return 2;
    }
    if (count == 0)
        fprintf(stderr, "sluice audit: no matching records in %s\n", path);
    return 0;
}

const cli_cmd_t cmd_audit = {"audit",
                             "print the quota and priority audit log",
                             audit_run,
                             audit_opts,
                             ARRAY_SIZE(audit_opts),
                             "FILE...",
                             NULL,
                             audit_usage};
