/* cmd_report -- `sluice report LOG...`: resource-hours, waits and preemptions per team. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "acct/report.h"
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("usage: sluice report [options] LOG...\n"
          "\n"
          "Read accounting logs (one JSON line per admission that ended, written by\n"
          "`sluice run --accounting-log FILE` or `sluice sim --accounting FILE`; \"-\" reads\n"
          "standard input) and print, per group: admissions, resource-hours (GPU-hours first;\n"
          "GiB-hours for memory), wait until admission (p50, p90, p99) and how the admissions\n"
          "ended (finished, preempted, evicted, deleted). Rotated files can be given together,\n"
          "oldest first: LOG.2 LOG.1 LOG. See docs/accounting.md.\n"
          "\n"
          "options:\n"
          "  --since TIME       count from TIME (RFC 3339 UTC: 2026-12-01T00:00:00Z, or a date\n"
          "                     2026-12-01); usage is cut at the range's edges\n"
          "  --until TIME       count up to TIME (exclusive)\n"
          "  --by GROUP         namespace (default), localqueue, clusterqueue or flavor\n"
          "  -o, --output FORMAT  table (default), csv or json\n"
          "  --verify           first check the hash chain across the LOGs (in the order given)\n"
          "  -h, --help         show this help\n"
          "\n"
          "exit status: 0 report printed, 1 a LOG has lines that are not accounting records\n"
          "(each named FILE:LINE on standard error, then skipped) or --verify found a broken\n"
          "chain, 2 usage or I/O error.\n",
          out);
}

/* TIME as Unix ms: RFC 3339 UTC, or a date (midnight UTC). -1 when malformed. */
static int64_t parse_when(const char *s)
{
    char buf[40];

    if (strlen(s) == 10) {
        snprintf(buf, sizeof(buf), "%sT00:00:00Z", s);
        return chainlog_parse_time(buf);
    }
    return chainlog_parse_time(s);
}

enum { OPT_SINCE = 1, OPT_UNTIL, OPT_BY, OPT_OUTPUT, OPT_VERIFY };

static const cli_opt_t report_opts[] = {
    {OPT_SINCE, 0, "since", CLI_ARG_REQUIRED, "TIME", NULL, "count from TIME"},
    {OPT_UNTIL, 0, "until", CLI_ARG_REQUIRED, "TIME", NULL, "count up to TIME (exclusive)"},
    {OPT_BY, 0, "by", CLI_ARG_REQUIRED, "GROUP", "namespace localqueue clusterqueue flavor",
     "group by"},
    CLI_OPT_OUTPUT(OPT_OUTPUT, "table csv json"),
    {OPT_VERIFY, 0, "verify", CLI_ARG_NONE, NULL, NULL, "check the hash chain first"},
};

static int report_run(int argc, char **argv)
{
    const char *since = NULL, *until = NULL, *by = NULL, *format = NULL, *val;
    const char **files = calloc((size_t)argc + 1, sizeof(*files));
    bool verify = false;
    int nfiles = 0, status = 2, id;
    int64_t since_ms = -1, until_ms = -1;
    acct_by_t group = ACCT_BY_NAMESPACE;
    acct_out_t fmt = ACCT_OUT_TABLE;
    acct_report_t *r = NULL;
    size_t skipped = 0;
    err_msg_t msg = {{0}};
    bool broken = false;
    cli_t p;

    if (files == NULL) {
        fprintf(stderr, "sluice report: out of memory\n");
        return 2;
    }
    cli_init(&p, &cmd_report, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        switch (id) {
        case CLI_STOP:
            free(files);
            return p.status;
        case CLI_OPERAND:
            files[nfiles++] = val;
            break;
        case OPT_SINCE:
            since = val;
            break;
        case OPT_UNTIL:
            until = val;
            break;
        case OPT_BY:
            by = val;
            break;
        case OPT_OUTPUT:
            format = val;
            break;
        case OPT_VERIFY:
            verify = true;
            break;
        }
    }
    if (nfiles == 0) {
        free(files);
        return cli_fail_usage(&p, "no accounting LOG given (- reads standard input)");
    }
    if (since != NULL && (since_ms = parse_when(since)) < 0) {
        cli_fail(&p, "--since %s: not a time (2026-12-01T00:00:00Z or 2026-12-01)", since);
        goto out;
    }
    if (until != NULL && (until_ms = parse_when(until)) < 0) {
        cli_fail(&p, "--until %s: not a time (2026-12-01T00:00:00Z or 2026-12-01)", until);
        goto out;
    }
    if (since_ms >= 0 && until_ms >= 0 && until_ms <= since_ms) {
        cli_fail(&p, "--until must be after --since");
        goto out;
    }
    if (by != NULL)
        acct_by_parse(by, &group); /* the parser let only the listed choices through */
    if (format != NULL && strcmp(format, "csv") == 0)
        fmt = ACCT_OUT_CSV;
    else if (format != NULL && strcmp(format, "json") == 0)
        fmt = ACCT_OUT_JSON;
    if (verify) {
        chainlog_verify_t v;
        for (int i = 0; i < nfiles; i++) {
            if (strcmp(files[i], "-") == 0) {
                cli_fail(&p, "--verify reads files, not standard input");
                goto out;
            }
        }
        if (chainlog_verify(files, (size_t)nfiles, "accounting", &v, &msg) != ERR_OK) {
            fprintf(stderr, "sluice report: %s\n", msg.text);
            goto out;
        }
        if (!v.ok) {
            fprintf(stderr, "sluice report: chain broken: %s\n", v.where);
            broken = true;
        } else {
            fprintf(stderr, "sluice report: chain intact: %llu records, seq %llu..%llu%s\n",
                    (unsigned long long)v.records, (unsigned long long)v.first_seq,
                    (unsigned long long)v.last_seq,
                    v.anchored || v.records == 0 ? "" : " (older records rotated away)");
        }
    }
    r = acct_report_new(group, since_ms, until_ms);
    if (r == NULL) {
        fprintf(stderr, "sluice report: out of memory\n");
        goto out;
    }
    for (int i = 0; i < nfiles; i++) {
        bool is_stdin = strcmp(files[i], "-") == 0;
        FILE *in = is_stdin ? stdin : fopen(files[i], "r");
        err_t rc;

        if (in == NULL) {
            fprintf(stderr, "sluice report: %s: %s\n", files[i], strerror(errno));
            goto out;
        }
        rc = acct_report_read(r, in, is_stdin ? "<stdin>" : files[i], stderr, &skipped, &msg);
        if (!is_stdin)
            fclose(in);
        if (rc != ERR_OK) {
            fprintf(stderr, "sluice report: %s\n", msg.text);
            goto out;
        }
    }
    if (acct_report_write(r, fmt, stdout, &msg) != ERR_OK) {
        fprintf(stderr, "sluice report: %s\n", msg.text);
        goto out;
    }
    if (skipped > 0)
        fprintf(stderr, "sluice report: %zu line%s skipped (not accounting records)\n", skipped,
                skipped == 1 ? "" : "s");
    status = skipped > 0 || broken ? 1 : 0;
out:
    acct_report_free(r);
    free(files);
    return status;
}

const cli_cmd_t cmd_report = {
    "report",
    "resource-hours, waits and preemptions from accounting logs",
    report_run,
    report_opts,
    sizeof(report_opts) / sizeof(*report_opts),
    "LOG...",
    NULL,
    usage,
};
