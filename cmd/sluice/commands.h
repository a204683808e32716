/* commands -- the subcommands of the sluice binary; each returns the process exit code. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_COMMANDS_H
#define SLUICE_COMMANDS_H

/* `sluice check FILE...`: validate manifests offline (0 clean, 1 invalid, 2 usage/I/O). */
int cmd_check(int argc, char **argv);

/* `sluice sim SCENARIO`: run the engine over a scenario in virtual time. */
int cmd_sim(int argc, char **argv);

/* `sluice run`: the operator. */
int cmd_run(int argc, char **argv);

/* `sluice audit FILE`: print the quota/priority audit log as a table. */
int cmd_audit(int argc, char **argv);

/* `sluice convert FILE...`: rewrite kueue.x-k8s.io/v1beta1 manifests as v1beta2 (0/1/2 as check). */
int cmd_convert(int argc, char **argv);

#endif
