/* main -- the sluice binary: dispatch to a subcommand (commands.c lists them). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* jansson's allocator. Its parser (2.14) writes out of bounds when one of its allocations fails
 * in the middle of a string (test_ctrl_oom found it; docs/reliability.md), so a process that ran
 * out of memory there would go on with a corrupt heap: exit instead, and the pod restarts.
 * (lib/ answers ERR_NOMEM and never exits; only main() may.) */
static void *json_alloc(size_t n)
{
    static const char msg[] = "sluice: out of memory in the JSON parser: exiting\n";
    void *p = malloc(n);

    if (p == NULL) {
        ssize_t w = write(2, msg, sizeof(msg) - 1);
        (void)w;
        _exit(1);
    }
    return p;
}

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

    json_set_alloc_funcs(json_alloc, free);
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
