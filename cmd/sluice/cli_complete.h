/* cli_complete -- shell completion scripts generated from the commands' option tables. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CLI_COMPLETE_H
#define SLUICE_CLI_COMPLETE_H

#include "cli.h"

/*
 * The scripts hold no knowledge of their own: every command name, option, value choice and
 * operand comes from the cli_cmd_t tables the parser reads, so completion offers exactly what
 * `sluice <command>` accepts. A value is completed from the option's `choices`, else with file
 * names when its value_name mentions FILE (directories for DIR), else not at all.
 */

/* Write the bash completion script for `prog` (the binary's name, "sluice") with the commands
 * `cmds` (NULL-terminated, borrowed) to `out`. ERR_IO when writing fails. */
err_t cli_complete_bash(FILE *out, const char *prog, const cli_cmd_t *const *cmds);

/* The same for zsh (#compdef; works from $fpath or sourced). */
err_t cli_complete_zsh(FILE *out, const char *prog, const cli_cmd_t *const *cmds);

#endif
