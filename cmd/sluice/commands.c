/* commands -- the table of sluice's subcommands (main dispatches through it, completion reads it).
 */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include <string.h>

/* One command per line, so that adding one touches one line. */
/* clang-format off */
const cli_cmd_t *const commands[] = {
    &cmd_run,
    &cmd_sim,
    &cmd_check,
    &cmd_audit,
    &cmd_convert,
    &cmd_report,
    &cmd_inventory,
    &cmd_graph,
    &cmd_verify,
    &cmd_completion,
    &cmd_version,
    NULL,
};
/* clang-format on */

const cli_cmd_t *commands_find(const char *name)
{
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++)
        if (strcmp((*c)->name, name) == 0)
            return *c;
    return NULL;
}
