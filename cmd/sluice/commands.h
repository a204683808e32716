/* commands -- the subcommands of the sluice binary, each described by its cli table. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_COMMANDS_H
#define SLUICE_COMMANDS_H

#include "cli.h"

/*
 * A new subcommand: cmd/sluice/cmd_<name>.c defines `const cli_cmd_t cmd_<name>` (its options,
 * usage and run function; see cli.h), plus one line here, one in commands.c and one in
 * CMakeLists.txt. Its options then parse, complete (`sluice completion`) and are checked against
 * its --help (test/test_cli_cmds.c) like every other command's.
 */

/* `sluice run`: the operator. */
extern const cli_cmd_t cmd_run;

/* `sluice sim SCENARIO`: run the engine over a scenario in virtual time. */
extern const cli_cmd_t cmd_sim;

/* `sluice check FILE...`: validate manifests offline (0 clean, 1 invalid, 2 usage/I/O). */
extern const cli_cmd_t cmd_check;

/* `sluice audit FILE`: print the quota/priority audit log as a table. */
extern const cli_cmd_t cmd_audit;

/* `sluice convert FILE...`: rewrite kueue.x-k8s.io/v1beta1 manifests as v1beta2 (0/1/2 as check).
 */
extern const cli_cmd_t cmd_convert;

/* `sluice report LOG...`: resource-hours, waits and preemptions from accounting logs. */
extern const cli_cmd_t cmd_report;

/* `sluice inventory [FILE...]`: node pools, their GPUs, quota against capacity. */
extern const cli_cmd_t cmd_inventory;

/* `sluice graph FILE...`: the queue graph as DOT, Mermaid or SVG, with its problems. */
extern const cli_cmd_t cmd_graph;

/* `sluice verify FILE...`: replay a watch of Workloads against the queues' quotas (0 ok, 1 a
 * violation, 2 usage/I/O). */
extern const cli_cmd_t cmd_verify;

/* `sluice completion bash|zsh`: the shell completion script, generated from the tables below. */
extern const cli_cmd_t cmd_completion;

/* `sluice version`: version, commit, build date, library versions. */
extern const cli_cmd_t cmd_version;

/* Every subcommand, in the order `sluice --help` lists them; NULL-terminated. */
extern const cli_cmd_t *const commands[];

/* The subcommand named `name`, or NULL. */
const cli_cmd_t *commands_find(const char *name);

#endif
