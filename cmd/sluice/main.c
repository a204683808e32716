/* main -- the sluice binary: dispatch to a subcommand. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "dev"
#endif

typedef struct subcommand_s {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand_t;

static const subcommand_t subcommands[] = {
    {"run", cmd_run, "run the operator against a Kubernetes API server"},
    {"sim", cmd_sim, "simulate a queue and quota design over a scenario, in virtual time"},
    {"check", cmd_check, "validate manifests offline with the webhook's rules"},
    {"audit", cmd_audit, "print the quota and priority audit log"},
    {"convert", cmd_convert, "rewrite Kueue v1beta1 manifests as v1beta2"},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sluice <command> [options]\n\n"
            "sluice is a Kueue-compatible admission controller for Kubernetes GPU clusters.\n\n"
            "commands:\n");
    for (const subcommand_t *c = subcommands; c->name != NULL; c++)
        fprintf(out, "  %-8s %s\n", c->name, c->summary);
    fprintf(out, "  %-8s %s\n", "version", "print the version");
    fprintf(out, "\n`sluice <command> --help` describes each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("sluice %s\n", SLUICE_VERSION);
        return 0;
    }
    for (const subcommand_t *c = subcommands; c->name != NULL; c++) {
        if (strcmp(argv[1], c->name) == 0)
            return c->run(argc - 1, argv + 1);
    }
    fprintf(stderr, "sluice: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
