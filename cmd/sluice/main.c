/* main -- the sluice binary: dispatch to a subcommand (commands.c lists them). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice <command> [options]\n\n"
            "sluice is a Kueue-compatible admission controller for Kubernetes GPU clusters.\n\n"
            "commands:\n");
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++)
        fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fprintf(out, "\n`sluice <command> --help` describes each command's options; every command\n"
                 "takes --name VALUE and --name=VALUE alike, and - for standard input where it\n"
                 "reads a file. `sluice help <command>` is `sluice <command> --help`.\n");
}

int main(int argc, char **argv)
{
    const cli_cmd_t *cmd;

    /* One allocator for every library (lib/util/alloc.h): jansson's is routed before main(),
     * with the guard that keeps its parser whole when an allocation fails; libcurl's by
     * `sluice run` (curl_global_init_mem, cmd_run.c: its TLS set-up is not for every command). */
    uv_replace_allocator(util_malloc, util_realloc, util_calloc, util_free);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0) {
        cmd = commands_find(argv[2]);
        if (cmd == NULL) {
            fprintf(stderr, "sluice: unknown command %s (see sluice --help)\n", argv[2]);
            return 2;
        }
        cmd->usage(stdout);
        return 0;
    }
    cmd = strcmp(argv[1], "--version") == 0 ? &cmd_version : commands_find(argv[1]);
    if (cmd == NULL) {
        fprintf(stderr, "sluice: unknown %s %s (see sluice --help)\n",
                argv[1][0] == '-' ? "option" : "command", argv[1]);
        return 2;
    }
    return cmd->run(argc - 1, argv + 1);
}
