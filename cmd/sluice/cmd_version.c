/* cmd_version -- `sluice version`: the version of this binary. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include <stdio.h>

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "dev"
#endif

static void usage(FILE *out)
{
    fputs("usage: sluice version\n\nPrint the version of sluice.\n\n"
          "options:\n  -h, --help  show this help\n",
          out);
}

static int version_run(int argc, char **argv)
{
    const char *val;
    cli_t p;
    int id;

    cli_init(&p, &cmd_version, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        if (id == CLI_STOP)
            return p.status;
        return cli_fail_usage(&p, "unexpected argument '%s'", val);
    }
    printf("sluice %s\n", SLUICE_VERSION);
    return 0;
}

const cli_cmd_t cmd_version = {"version", "print the version", version_run, NULL, 0, NULL, NULL,
                               usage};
