/* cli -- the one option parser of every sluice subcommand, driven by the command's option table. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CLI_H
#define SLUICE_CLI_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * A subcommand describes itself once, in a static table (cli_cmd_t + cli_opt_t[]). The same
 * table drives the parser (cli_next), `sluice completion bash|zsh` (cli_complete.h) and the
 * consistency test that checks every option against --help (test/test_cli_cmds.c), so the three
 * cannot drift apart. Every command reads the same way:
 *
 *   --name VALUE, --name=VALUE     a long option with a value (VALUE may start with '-')
 *   -o VALUE, -oVALUE, -o=VALUE    a short option with a value
 *   -q, --quiet, -qR               flags; short ones may be grouped
 *   -h, --help                     the command's usage on standard output, exit 0
 *   --                             every later argument is an operand
 *   -                              an operand: standard input (or output) where a FILE is read
 *
 * An unknown option, an option missing its value, a value for a flag, or a value outside the
 * option's `choices` is answered with ONE line on standard error and exit status 2:
 *
 *   sluice sim: unknown option --foo (see sluice sim --help)
 *
 * A command's run function parses like this:
 *
 *   cli_t p;
 *   const char *val;
 *   int id;
 *   cli_init(&p, &cmd_sim, argc, argv);             -- cmd_sim: this command's cli_cmd_t
 *   while ((id = cli_next(&p, &val)) != CLI_DONE) {
 *       switch (id) {
 *       case CLI_STOP: return p.status;                    -- --help, or a usage error
 *       case CLI_OPERAND: file = val; break;
 *       case OPT_QUIET: quiet = true; break;
 *       case OPT_UNTIL: if (bad(val)) return cli_fail(&p, "--until %s: ...", val); break;
 *       }
 *   }
 */

/* Whether an option takes a value. */
typedef enum cli_arg_e {
    CLI_ARG_NONE,     /* a flag: "--quiet"; "--quiet=x" is a usage error */
    CLI_ARG_REQUIRED, /* "--until 2h" or "--until=2h"; "-o json", "-ojson" or "-o=json" */
    CLI_ARG_OPTIONAL, /* "--events" (value NULL) or "--events=FILE"; a separate next argument is
                         never taken by the parser (the command may: cli_peek, cli_skip) */
} cli_arg_t;

/* One option of a command. Completion offers `choices` for its value when set, else file names
 * when `value_name` contains "FILE" (directories when it is "DIR"), else nothing. */
typedef struct cli_opt_s {
    int id;                 /* > 0: what cli_next returns for it */
    char short_name;        /* 'q', or 0 */
    const char *long_name;  /* "quiet" (without "--"), or NULL */
    cli_arg_t arg;          /* does it take a value */
    const char *value_name; /* "FILE", "DURATION": messages, completion (NULL for flags) */
    const char *choices;    /* "json yaml": the only values accepted, space-separated, or NULL */
    const char *help;       /* one short line (zsh completion shows it) */
} cli_opt_t;

/* A subcommand: its name, the one-line summary of `sluice --help`, its run function (argv[0] is
 * the subcommand's name; returns the exit status), its options and its usage text. */
typedef struct cli_cmd_s {
    const char *name;    /* "sim" */
    const char *summary; /* one line, lower case, no final period */
    int (*run)(int argc, char **argv);
    const cli_opt_t *opts; /* borrowed, static */
    size_t nopts;
    const char *operands;        /* "FILE...": completion offers files; NULL: no operands */
    const char *operand_choices; /* "bash zsh": completion offers these instead, or NULL */
    void (*usage)(FILE *out);    /* the whole --help text, starting "usage: sluice <name>" */
} cli_cmd_t;

/* The parser over one command line. Fields are read-only for commands except through the
 * functions below; `status` is the exit status once cli_next returned CLI_STOP. */
typedef struct cli_s {
    const cli_cmd_t *cmd; /* borrowed */
    int argc;
    char **argv;       /* borrowed; argv[0] is the subcommand */
    int i;             /* the next argument to read */
    const char *group; /* the rest of a short-option group ("-qR": "R"), or NULL */
    bool end_opts;     /* after "--" */
    bool stopped;      /* CLI_STOP returned: it is returned from now on */
    int status;        /* exit status after CLI_STOP: 0 after --help, 2 after a usage error */
    char opt[64];      /* the option last returned, as the user spelled it ("--until", "-o") */
} cli_t;

enum {
    CLI_DONE = 0,     /* every argument read */
    CLI_OPERAND = -1, /* *value is an operand (a FILE, "-", anything after "--") */
    CLI_STOP = -2,    /* stop and exit with p->status: help printed, or a usage error said */
};

/* Start reading argv[1..argc-1] of `cmd` (argv[0] is the subcommand). Borrows both. */
void cli_init(cli_t *p, const cli_cmd_t *cmd, int argc, char **argv);

/* The next option's id (its value, or NULL, in *value), CLI_OPERAND (the operand in *value),
 * CLI_DONE, or CLI_STOP after -h/--help (usage on standard output, status 0) or a usage error
 * (one line on standard error, status 2). After CLI_STOP or CLI_DONE it keeps returning that. */
int cli_next(cli_t *p, char const **value);

/* The next argument, not consumed (NULL at the end): for a CLI_ARG_OPTIONAL option whose value
 * the command takes from the next argument in some cases (`sim --events FILE`). */
const char *cli_peek(const cli_t *p);

/* Consume the argument cli_peek returned. */
void cli_skip(cli_t *p);

/* How many operands remain from the next argument on, skipping the values of options that take
 * one (the table tells which); stops counting at nothing. */
int cli_operands_left(const cli_t *p);

/* Print "sluice <cmd>: <message>" on standard error, set status 2 and return 2 (so a command can
 * `return cli_fail(...)`). For bad values and wrong operand counts. */
int cli_fail(cli_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same, with " (see sluice <cmd> --help)" at the end of the line: for usage errors. */
int cli_fail_usage(cli_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- -o FORMAT: the output format of commands whose output is data ----------------------------
 */

typedef enum cli_output_e {
    CLI_OUTPUT_TEXT, /* the default: for people */
    CLI_OUTPUT_JSON,
    CLI_OUTPUT_YAML,
    CLI_OUTPUT_CSV,
} cli_output_t;

/* The -o option of a command with id `id`; `choices` is the formats it writes, e.g. "json yaml"
 * (the parser refuses any other). */
#define CLI_OPT_OUTPUT(id, choices)                                                 \
    {                                                                               \
        (id), 'o', "output", CLI_ARG_REQUIRED, "FORMAT", (choices), "output format" \
    }

/* The format a -o value names ("json", "yaml", "csv", "text"); CLI_OUTPUT_TEXT for NULL or any
 * other word (cli_next has already refused words outside the option's choices). */
cli_output_t cli_output_parse(const char *word);

/* Write `doc` (borrowed) to `f` as JSON (two-space indent) or YAML (model/yamlw), with a final
 * newline. ERR_INVALID for CLI_OUTPUT_TEXT/CSV (the command prints those itself), ERR_IO when
 * writing fails, ERR_NOMEM. */
err_t cli_output_write(FILE *f, cli_output_t fmt, const json_t *doc, err_msg_t *msg);

#endif
