/* cmd_audit -- `sluice audit FILE`: print the quota and priority audit trail as a table. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "hook/audit.h"
#include "util/duration.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static void audit_usage(FILE *out)
{
    fprintf(out,
            "usage: sluice audit [--since DURATION] [--object KIND/NAME] FILE\n"
            "       sluice audit --verify FILE...\n\n"
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
            "  -h, --help           show this help\n\n"
            "FILE is the audit log path (`-` reads standard input). Rotated files (FILE.1, ...)\n"
            "are separate files: pass the one you want.\n\n"
            "exit status: 0 printed (possibly nothing) or chain intact, 1 chain broken,\n"
            "2 usage or I/O error\n");
}

/* `sluice audit --verify FILE...` */
static int verify(int n, char **files)
{
    audit_verify_t v;
    err_msg_t msg;

    if (n == 0) {
        audit_usage(stderr);
        return 2;
    }
    if (audit_verify((const char *const *)files, (size_t)n, &v, &msg) != ERR_OK) {
        fprintf(stderr, "sluice audit: %s\n", msg.text);
        return 2;
    }
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

int cmd_audit(int argc, char **argv)
{
    audit_filter_t filter = {0};
    const char *path = NULL;
    FILE *in;
    size_t count = 0;
    err_msg_t msg;
    err_t rc;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verify") == 0) {
            return verify(argc - i - 1, argv + i + 1);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            audit_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc) {
            int64_t ms;
            struct timeval tv;
            if (duration_parse_ms(argv[i + 1], strlen(argv[i + 1]), DURATION_MS_MAX, &ms, &msg) !=
                ERR_OK) {
                fprintf(stderr, "sluice audit: --since: %s\n", msg.text);
                return 2;
            }
            gettimeofday(&tv, NULL);
            filter.since_ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000 - (int64_t)ms;
            i++;
        } else if (strcmp(argv[i], "--object") == 0 && i + 1 < argc) {
            if (strchr(argv[i + 1], '/') == NULL) {
                fprintf(stderr, "sluice audit: --object: want KIND/NAME, got \"%s\"\n",
                        argv[i + 1]);
                return 2;
            }
            filter.object = argv[++i];
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "sluice audit: unknown or incomplete option %s\n\n", argv[i]);
            audit_usage(stderr);
            return 2;
        } else if (path == NULL) {
            path = argv[i];
        } else {
            fprintf(stderr, "sluice audit: one FILE only\n");
            return 2;
        }
    }
    if (path == NULL) {
        audit_usage(stderr);
        return 2;
    }
    in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (in == NULL) {
        fprintf(stderr, "sluice audit: %s: %s\n", path, strerror(errno));
        return 2;
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
