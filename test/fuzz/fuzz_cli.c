/* fuzz_cli -- the option parser (cmd/sluice/cli.h) over arbitrary command lines: every call ends,
 * every value and operand is inside an argument, no argument is read twice as an operand, and
 * CLI_STOP or CLI_DONE stay once returned. Input: arguments separated by NUL bytes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include "fuzz_check.h"

#include <string.h>

enum { O_FLAG = 1, O_SHORT, O_VALUE, O_OUTPUT, O_OPTIONAL, O_CHOICE };

static const cli_opt_t opts[] = {
    {O_FLAG, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "a flag"},
    {O_SHORT, 'R', NULL, CLI_ARG_NONE, NULL, NULL, "a short flag"},
    {O_VALUE, 'f', "file", CLI_ARG_REQUIRED, "FILE", NULL, "a value"},
    CLI_OPT_OUTPUT(O_OUTPUT, "json yaml csv"),
    {O_OPTIONAL, 0, "events", CLI_ARG_OPTIONAL, "FILE", NULL, "an optional value"},
    {O_CHOICE, 0, "level", CLI_ARG_REQUIRED, "LEVEL", "a bb ccc", "choices"},
};

static void usage(FILE *out)
{
    (void)out; /* the fuzzer's output stays quiet */
}

static const cli_cmd_t cmd = {"fuzz",   "fuzz", NULL, opts, sizeof(opts) / sizeof(opts[0]),
                              "ARG...", NULL,   usage};

/* Is `p` inside one of argv[1..argc-1]'s strings? */
static int inside(char **argv, int argc, const char *p)
{
    for (int i = 1; i < argc; i++)
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf, *argv[34];
    int argc = 0, id, steps = 0, operands = 0;
    const char *val;
    cli_t p;

    /* Usage errors are one line each on standard error: fuzz with -close_fd_mask=2, which
     * sends them to /dev/null and keeps libFuzzer's own statistics (docs/reliability.md). */
    if (size > 4096)
        return 0;
    buf = malloc(size + 1);
    CHECK(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = (char *)"fuzz";
    for (size_t i = 0; i <= size && argc < 33;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;

    cli_init(&p, &cmd, argc, argv);
    CHECK(cli_operands_left(&p) <= argc - 1);
    while ((id = cli_next(&p, &val)) != CLI_DONE && id != CLI_STOP) {
        CHECK(++steps <= 8 * 4096); /* each step reads at least one character */
        CHECK(id == CLI_OPERAND || (id >= O_FLAG && id <= O_CHOICE));
        if (id == CLI_OPERAND) {
            CHECK(val != NULL && inside(argv, argc, val));
            CHECK(++operands <= argc - 1);
        } else if (opts[id - 1].arg == CLI_ARG_NONE) {
            CHECK(val == NULL);
        } else if (opts[id - 1].arg == CLI_ARG_REQUIRED) {
            CHECK(val != NULL && val[0] != '\0' && inside(argv, argc, val));
        } else if (val != NULL) {
            CHECK(val[0] != '\0' && inside(argv, argc, val));
        }
        if (id == O_CHOICE)
            CHECK(strcmp(val, "a") == 0 || strcmp(val, "bb") == 0 || strcmp(val, "ccc") == 0);
        if (id == O_OPTIONAL && val == NULL && cli_peek(&p) != NULL)
            cli_skip(&p);
        CHECK(cli_operands_left(&p) <= argc - 1);
    }
    CHECK(id == CLI_STOP ? (p.status == 0 || p.status == 2) : p.status == 0);
    CHECK(cli_next(&p, &val) == id && val == NULL);
    free(buf);
    return 0;
}
