/* cli -- the command line of the subcommands that read manifest files (check, convert). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An option besides -h/--help and "--", which every such subcommand has. */
typedef struct cli_opt_s {
    const char *name;       /* "-q" */
    const char *alias;      /* "--quiet", or NULL */
    bool *flag;             /* an option without a value: set to true when given */
    const char **value;     /* else (flag NULL): set to the next argument, which must not be "" */
    const char *value_name; /* "FILE": how the message for a missing value names it */
} cli_opt_t;

typedef struct cli_spec_s {
    const char *cmd;       /* "convert": messages start "sluice convert: " */
    const cli_opt_t *opts; /* borrowed */
    size_t nopts;
    const char *no_file; /* the message when no FILE is given */
    void (*usage)(FILE *out);
} cli_spec_t;

/*
 * Read `sluice <cmd> [options] FILE...` from argv[1..argc-1] (argv[0] is the subcommand): set the
 * options and move the FILE operands, in order, to argv[1..*nfiles] -- "-", every argument not
 * starting with '-', and every argument after "--". Returns true when the subcommand goes on,
 * with at least one FILE. Returns false when it stops with exit status *status: 0 after -h or
 * --help (usage on standard output); 2 after an unknown option, an option without its value, or
 * no FILE (a message, then usage, on standard error). Options are read left to right, and the
 * first of these ends the reading.
 */
bool cli_parse(const cli_spec_t *spec, int argc, char **argv, int *nfiles, int *status);

#endif
