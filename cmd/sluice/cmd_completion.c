/* cmd_completion -- `sluice completion bash|zsh`: the shell completion script. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "commands.h"

#include "cli_complete.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("usage: sluice completion bash|zsh\n"
          "\n"
          "Print the shell completion script for bash or zsh on standard output. It is generated\n"
          "from the option tables the commands parse with, so it completes exactly the commands,\n"
          "options and option values (-o json|yaml, --log-level ...) this binary accepts, and\n"
          "file names where a command reads a file.\n"
          "\n"
          "  bash:  source <(sluice completion bash)        # this shell\n"
          "         sluice completion bash > /etc/bash_completion.d/sluice\n"
          "  zsh:   source <(sluice completion zsh)         # this shell (after compinit)\n"
          "         sluice completion zsh > \"${fpath[1]}/_sluice\"\n"
          "\n"
          "options:\n"
          "  -h, --help  show this help\n"
          "\n"
          "exit status: 0 printed, 2 usage or write error.\n",
          out);
}

static int completion_run(int argc, char **argv)
{
    const char *shell = NULL, *val;
    err_t rc;
    cli_t p;
    int id;

    cli_init(&p, &cmd_completion, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE) {
        if (id == CLI_STOP)
            return p.status;
        if (shell != NULL)
            return cli_fail_usage(&p, "one shell at a time");
        shell = val;
    }
    if (shell == NULL)
        return cli_fail_usage(&p, "which shell? bash or zsh");
    if (strcmp(shell, "bash") == 0)
        rc = cli_complete_bash(stdout, "sluice", commands);
    else if (strcmp(shell, "zsh") == 0)
        rc = cli_complete_zsh(stdout, "sluice", commands);
    else
        return cli_fail_usage(&p, "unknown shell '%s': want bash or zsh", shell);
    if (rc != ERR_OK)
        return cli_fail(&p, "standard output: %s", strerror(errno));
    return 0;
}

const cli_cmd_t cmd_completion = {"completion",
                                  "print the shell completion script (bash, zsh)",
                                  completion_run,
                                  NULL,
                                  0,
                                  "SHELL",
                                  "bash zsh",
                                  usage};
