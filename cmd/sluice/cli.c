/* cli -- the command line of the subcommands that read manifest files (check, convert). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <string.h>

static const cli_opt_t *find(const cli_spec_t *spec, const char *arg)
{
    for (size_t i = 0; i < spec->nopts; i++) {
        const cli_opt_t *o = &spec->opts[i];
        if (strcmp(arg, o->name) == 0 || (o->alias != NULL && strcmp(arg, o->alias) == 0))
            return o;
    }
    return NULL;
}

bool cli_parse(const cli_spec_t *spec, int argc, char **argv, int *nfiles, int *status)
{
    bool end_opts = false;
    int n = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const cli_opt_t *o;

        if (end_opts || a[0] != '-' || strcmp(a, "-") == 0) {
            argv[++n] = argv[i]; /* n <= i: the slots before i are read already */
            continue;
        }
        if (strcmp(a, "--") == 0) {
            end_opts = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            spec->usage(stdout);
            *status = 0;
            return false;
        }
        o = find(spec, a);
        if (o == NULL) {
            fprintf(stderr, "sluice %s: unknown option '%s'\n\n", spec->cmd, a);
            goto usage;
        }
        if (o->value == NULL) {
            *o->flag = true;
            continue;
        }
        if (++i >= argc || argv[i][0] == '\0') {
            fprintf(stderr, "sluice %s: %s needs a %s\n\n", spec->cmd, a, o->value_name);
            goto usage;
        }
        *o->value = argv[i];
    }
    if (n == 0) {
        fprintf(stderr, "sluice %s: %s\n\n", spec->cmd, spec->no_file);
        goto usage;
    }
    *nfiles = n;
    return true;
usage:
    spec->usage(stderr);
    *status = 2;
    return false;
}
