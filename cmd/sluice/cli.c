/* cli -- the one option parser of every sluice subcommand, driven by the command's option table. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include "model/yamlw.h"

#include <stdarg.h>
#include <string.h>

/*
 * One argument is read per step, left to right, so a command sees its options in the order
 * given (later ones win, repeated ones accumulate: the command decides). The states:
 *
 *   argument ----"--"-----------------------------> end_opts: everything is an operand
 *      |-------"-" or no leading '-'-------------> CLI_OPERAND
 *      |-------"--name[=value]"------------------> long option (value: "=..." or next argument)
 *      '-------"-abc"----> group "abc": 'a', then "bc" ... (a short option with a value takes
 *                          the rest of the group, after an optional '=', or the next argument)
 *
 * Messages go out here, once, in one format, so that no command can answer differently.
 */

void cli_init(cli_t *p, const cli_cmd_t *cmd, int argc, char **argv)
{
    memset(p, 0, sizeof(*p));
    p->cmd = cmd;
    p->argc = argc;
    p->argv = argv;
    p->i = 1;
}

__attribute__((format(printf, 3, 0))) static int vfail(cli_t *p, bool hint, const char *fmt,
                                                       va_list ap)
{
    fprintf(stderr, "sluice %s: ", p->cmd->name);
    vfprintf(stderr, fmt, ap);
    if (hint)
        fprintf(stderr, " (see sluice %s --help)", p->cmd->name);
    fputc('\n', stderr);
    p->status = 2;
    p->stopped = true;
    return 2;
}

int cli_fail(cli_t *p, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(p, false, fmt, ap);
    va_end(ap);
    return 2;
}

int cli_fail_usage(cli_t *p, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(p, true, fmt, ap);
    va_end(ap);
    return 2;
}

static int stop_usage(cli_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int stop_usage(cli_t *p, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(p, true, fmt, ap);
    va_end(ap);
    return CLI_STOP;
}

static int stop_help(cli_t *p)
{
    p->cmd->usage(stdout);
    p->status = 0;
    p->stopped = true;
    return CLI_STOP;
}

static const cli_opt_t *find_long(const cli_cmd_t *cmd, const char *name, size_t len)
{
    for (size_t i = 0; i < cmd->nopts; i++) {
        const char *l = cmd->opts[i].long_name;
        if (l != NULL && strlen(l) == len && strncmp(l, name, len) == 0)
            return &cmd->opts[i];
    }
    return NULL;
}

static const cli_opt_t *find_short(const cli_cmd_t *cmd, char c)
{
    for (size_t i = 0; i < cmd->nopts; i++)
        if (cmd->opts[i].short_name != 0 && cmd->opts[i].short_name == c)
            return &cmd->opts[i];
    return NULL;
}

/* Is `word` one of the space-separated `choices`? */
static bool is_choice(const char *choices, const char *word)
{
    size_t n = strlen(word);

    for (const char *c = choices; *c != '\0';) {
        size_t len = strcspn(c, " ");
        if (len == n && n > 0 && strncmp(c, word, n) == 0)
            return true;
        c += len;
        c += strspn(c, " ");
    }
    return false;
}

/* Return option `o` with `value` (NULL for a flag), after checking the value. */
static int give(cli_t *p, const cli_opt_t *o, const char *value, const char **out)
{
    if ((o->arg == CLI_ARG_REQUIRED && value == NULL) || (value != NULL && value[0] == '\0'))
        return stop_usage(p, "%s needs a %s", p->opt, o->value_name ? o->value_name : "value");
    if (value != NULL && o->choices != NULL && !is_choice(o->choices, value)) {
        char want[256];
        size_t k = 0;
        /* "json yaml" -> "json or yaml", "a b c" -> "a, b or c" */
        for (const char *c = o->choices; *c != '\0' && k + 1 < sizeof(want);) {
            size_t len = strcspn(c, " ");
            const char *rest = c + len + strspn(c + len, " ");
            const char *sep = *rest == '\0' ? "" : strchr(rest, ' ') == NULL ? " or " : ", ";
            k += (size_t)snprintf(want + k, sizeof(want) - k, "%.*s%s", (int)len, c, sep);
            c = rest;
        }
        return stop_usage(p, "%s %s: want %s", p->opt, value, want);
    }
    *out = value;
    return o->id;
}

/* The rest of a short-option group: "-qR" gives 'q', then this gives 'R'. */
static int next_short(cli_t *p, const char **value)
{
    char c = p->group[0];
    const cli_opt_t *o = find_short(p->cmd, c);

    snprintf(p->opt, sizeof(p->opt), "-%c", c);
    p->group = p->group[1] != '\0' ? p->group + 1 : NULL;
    if (c == 'h' && o == NULL)
        return stop_help(p);
    if (o == NULL)
        return stop_usage(p, "unknown option -%c", c);
    if (o->arg == CLI_ARG_NONE)
        return give(p, o, NULL, value);
    if (p->group != NULL) { /* -ojson, -o=json */
        const char *v = p->group[0] == '=' ? p->group + 1 : p->group;
        p->group = NULL;
        return give(p, o, v, value);
    }
    if (o->arg == CLI_ARG_OPTIONAL)
        return give(p, o, NULL, value);
    if (p->i >= p->argc)
        return give(p, o, NULL, value);
    return give(p, o, p->argv[p->i++], value);
}

int cli_next(cli_t *p, const char **value)
{
    const char *a, *eq;
    const cli_opt_t *o;
    size_t len;

    *value = NULL;
    if (p->stopped)
        return CLI_STOP;
    if (p->i >= p->argc && p->group == NULL)
        return CLI_DONE;
    if (p->group != NULL)
        return next_short(p, value);
    a = p->argv[p->i++];
    if (p->end_opts || a[0] != '-' || a[1] == '\0') {
        *value = a;
        return CLI_OPERAND;
    }
    if (strcmp(a, "--") == 0) {
        p->end_opts = true;
        return cli_next(p, value);
    }
    if (a[1] != '-') {
        p->group = a + 1;
        return next_short(p, value);
    }
    /* --name or --name=value */
    eq = strchr(a, '=');
    len = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
    snprintf(p->opt, sizeof(p->opt), "--%.*s", (int)(len < 40 ? len : 40), a + 2);
    o = find_long(p->cmd, a + 2, len);
    if (o == NULL && len == 4 && strncmp(a + 2, "help", 4) == 0)
        return eq == NULL ? stop_help(p) : stop_usage(p, "--help takes no value");
    if (o == NULL)
        return stop_usage(p, "unknown option %s", p->opt);
    if (o->arg == CLI_ARG_NONE && eq != NULL)
        return stop_usage(p, "%s takes no value", p->opt);
    if (eq != NULL)
        return give(p, o, eq + 1, value);
    if (o->arg == CLI_ARG_REQUIRED)
        return give(p, o, p->i < p->argc ? p->argv[p->i++] : NULL, value);
    return give(p, o, NULL, value);
}

const char *cli_peek(const cli_t *p)
{
    if (p->stopped || p->group != NULL || p->i >= p->argc)
        return NULL;
    return p->argv[p->i];
}

void cli_skip(cli_t *p)
{
    if (cli_peek(p) != NULL)
        p->i++;
}

int cli_operands_left(const cli_t *p)
{
    bool end = p->end_opts;
    int n = 0;

    for (int i = p->i; i < p->argc; i++) {
        const char *a = p->argv[i];
        const cli_opt_t *o = NULL;

        if (end || a[0] != '-' || a[1] == '\0') {
            n++;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            end = true;
            continue;
        }
        if (a[1] == '-' && strchr(a, '=') == NULL)
            o = find_long(p->cmd, a + 2, strlen(a + 2));
        else if (a[1] != '-' && a[2] == '\0')
            o = find_short(p->cmd, a[1]);
        if (o != NULL && o->arg == CLI_ARG_REQUIRED)
            i++; /* its value */
    }
    return n;
}

/* ---- -o FORMAT ------------------------------------------------------------------------------ */

cli_output_t cli_output_parse(const char *word)
{
    if (word == NULL)
        return CLI_OUTPUT_TEXT;
    if (strcmp(word, "json") == 0)
        return CLI_OUTPUT_JSON;
    if (strcmp(word, "yaml") == 0)
        return CLI_OUTPUT_YAML;
    if (strcmp(word, "csv") == 0)
        return CLI_OUTPUT_CSV;
    return CLI_OUTPUT_TEXT;
}

err_t cli_output_write(FILE *f, cli_output_t fmt, const json_t *doc, err_msg_t *msg)
{
    if (fmt == CLI_OUTPUT_YAML)
        return yamlw_file(f, &doc, 1, msg);
    if (fmt != CLI_OUTPUT_JSON)
        return err_set(msg, ERR_INVALID, "not a JSON or YAML output format");
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', f) == EOF)
        return err_set(msg, ERR_IO, "write failed");
    return ERR_OK;
}
