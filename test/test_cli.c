/* test_cli -- the option parser every sluice subcommand uses (cmd/sluice/cli.h). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_QUIET = 1, O_RECURSE, O_UNTIL, O_OUTPUT, O_EVENTS, O_FILE };

static const cli_opt_t opts[] = {
    {O_QUIET, 'q', "quiet", CLI_ARG_NONE, NULL, NULL, "quiet"},
    {O_RECURSE, 'R', NULL, CLI_ARG_NONE, NULL, NULL, "recurse"},
    {O_UNTIL, 0, "until", CLI_ARG_REQUIRED, "DURATION", NULL, "stop"},
    CLI_OPT_OUTPUT(O_OUTPUT, "json yaml csv"),
    {O_EVENTS, 0, "events", CLI_ARG_OPTIONAL, "FILE", NULL, "events"},
    {O_FILE, 'f', "file", CLI_ARG_REQUIRED, "FILE", NULL, "a file"},
};

static void test_usage(FILE *out)
{
    fputs("usage: sluice demo [options] FILE...\n", out);
}

static const cli_cmd_t demo = {"demo",    "a demo", NULL,      opts, sizeof(opts) / sizeof(opts[0]),
                               "FILE...", NULL,     test_usage};

/* ---- a tiny recorder: run the parser over a command line, keep what it returned ----------- */

typedef struct parsed_s {
    char seen[1024]; /* "id=value;" for each option, "@operand;" for each operand */
    int last;        /* CLI_DONE or CLI_STOP */
    int status;
    char err[1024]; /* standard error while parsing */
    char out[1024]; /* standard output while parsing */
} parsed_t;

/* Redirect fd `fd` to a temporary file; returns the saved fd. */
static int capture(int fd, FILE **tmp)
{
    int saved = dup(fd);

    *tmp = tmpfile();
    ck_assert_ptr_nonnull(*tmp);
    fflush(fd == 1 ? stdout : stderr);
    dup2(fileno(*tmp), fd);
    return saved;
}

static void release(int fd, int saved, FILE *tmp, char *buf, size_t n)
{
    size_t len;

    fflush(fd == 1 ? stdout : stderr);
    dup2(saved, fd);
    close(saved);
    rewind(tmp);
    len = fread(buf, 1, n - 1, tmp);
    buf[len] = '\0';
    fclose(tmp);
}

/* Parse "ARG ARG ..." (split on spaces; "''" is an empty argument). */
static parsed_t parse(const char *line)
{
    static char copy[1024];
    char *argv[64];
    int argc = 0, id;
    parsed_t r;
    FILE *te, *to;
    int se, so;
    const char *val;
    cli_t p;

    memset(&r, 0, sizeof(r));
    snprintf(copy, sizeof(copy), "%s", line);
    argv[argc++] = (char *)"demo";
    for (char *t = strtok(copy, " "); t != NULL; t = strtok(NULL, " "))
        argv[argc++] = strcmp(t, "''") == 0 ? (char *)"" : t;
    argv[argc] = NULL;

    se = capture(2, &te);
    so = capture(1, &to);
    cli_init(&p, &demo, argc, argv);
    while ((id = cli_next(&p, &val)) != CLI_DONE && id != CLI_STOP) {
        size_t len = strlen(r.seen);
        if (id == CLI_OPERAND)
            snprintf(r.seen + len, sizeof(r.seen) - len, "@%s;", val);
        else
            snprintf(r.seen + len, sizeof(r.seen) - len, "%d=%s;", id, val ? val : "(null)");
    }
    r.last = id;
    r.status = p.status;
    /* once stopped or done, it stays so */
    ck_assert_int_eq(cli_next(&p, &val), id);
    release(1, so, to, r.out, sizeof(r.out));
    release(2, se, te, r.err, sizeof(r.err));
    return r;
}

START_TEST(long_options_take_values_both_ways)
{
    parsed_t r = parse("--until 2h --until=3h --output=json a.yaml");

    ck_assert_int_eq(r.last, CLI_DONE);
    ck_assert_str_eq(r.seen, "3=2h;3=3h;4=json;@a.yaml;");
    ck_assert_str_eq(r.err, "");
    /* a value may start with '-' and may contain '=' */
    r = parse("--until -1h --file=a=b --file -");
    ck_assert_str_eq(r.seen, "3=-1h;6=a=b;6=-;");
}
END_TEST

START_TEST(short_options_attached_grouped)
{
    parsed_t r = parse("-o json -oyaml -o=csv -qR -qf x.yaml -Rfy.yaml");

    ck_assert_int_eq(r.last, CLI_DONE);
    ck_assert_str_eq(r.seen, "4=json;4=yaml;4=csv;1=(null);2=(null);1=(null);6=x.yaml;2=(null);"
                             "6=y.yaml;");
}
END_TEST

START_TEST(operands_dash_and_double_dash)
{
    parsed_t r = parse("a - b -- -q --until c");

    ck_assert_int_eq(r.last, CLI_DONE);
    ck_assert_str_eq(r.seen, "@a;@-;@b;@-q;@--until;@c;");
}
END_TEST

START_TEST(unknown_option_is_one_line)
{
    parsed_t r = parse("a --foo b");

    ck_assert_int_eq(r.last, CLI_STOP);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.seen, "@a;");
    ck_assert_str_eq(r.err, "sluice demo: unknown option --foo (see sluice demo --help)\n");
    ck_assert_str_eq(r.out, "");
    r = parse("--foo=bar");
    ck_assert_str_eq(r.err, "sluice demo: unknown option --foo (see sluice demo --help)\n");
    r = parse("-qx");
    ck_assert_str_eq(r.seen, "1=(null);");
    ck_assert_str_eq(r.err, "sluice demo: unknown option -x (see sluice demo --help)\n");
}
END_TEST

START_TEST(missing_and_unwanted_values)
{
    parsed_t r = parse("--until");

    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "sluice demo: --until needs a DURATION (see sluice demo --help)\n");
    r = parse("--until=");
    ck_assert_str_eq(r.err, "sluice demo: --until needs a DURATION (see sluice demo --help)\n");
    r = parse("--until ''");
    ck_assert_int_eq(r.status, 2);
    r = parse("a -o");
    ck_assert_str_eq(r.err, "sluice demo: -o needs a FORMAT (see sluice demo --help)\n");
    r = parse("--quiet=yes");
    ck_assert_str_eq(r.err, "sluice demo: --quiet takes no value (see sluice demo --help)\n");
    r = parse("--events=");
    ck_assert_int_eq(r.status, 2);
    r = parse("--help=x");
    ck_assert_str_eq(r.err, "sluice demo: --help takes no value (see sluice demo --help)\n");
}
END_TEST

START_TEST(choices_are_enforced)
{
    parsed_t r = parse("-o xml");

    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err,
                     "sluice demo: -o xml: want json, yaml or csv (see sluice demo --help)\n");
    r = parse("--output=JSON");
    ck_assert_int_eq(r.status, 2);
    r = parse("--output=jso");
    ck_assert_int_eq(r.status, 2);
}
END_TEST

START_TEST(help_prints_usage_on_stdout)
{
    parsed_t r = parse("a --help --foo");

    ck_assert_int_eq(r.last, CLI_STOP);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "usage: sluice demo [options] FILE...\n");
    ck_assert_str_eq(r.err, "");
    r = parse("-qh");
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "usage: sluice demo [options] FILE...\n");
    /* after "--", -h is an operand */
    r = parse("-- -h");
    ck_assert_int_eq(r.last, CLI_DONE);
    ck_assert_str_eq(r.seen, "@-h;");
}
END_TEST

START_TEST(optional_value_and_lookahead)
{
    char a0[] = "demo", a1[] = "--events", a2[] = "out.jsonl", a3[] = "--until", a4[] = "1h",
         a5[] = "x.yaml", a6[] = "--", a7[] = "-y";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, NULL};
    const char *val;
    cli_t p;

    cli_init(&p, &demo, 8, argv);
    ck_assert_int_eq(cli_next(&p, &val), O_EVENTS);
    ck_assert_ptr_null(val); /* never the next argument by itself */
    ck_assert_str_eq(cli_peek(&p), "out.jsonl");
    /* out.jsonl, x.yaml and -y: "1h" is --until's value */
    ck_assert_int_eq(cli_operands_left(&p), 3);
    cli_skip(&p);
    ck_assert_int_eq(cli_next(&p, &val), O_UNTIL);
    ck_assert_str_eq(val, "1h");
    ck_assert_int_eq(cli_operands_left(&p), 2);
    ck_assert_int_eq(cli_next(&p, &val), CLI_OPERAND);
    ck_assert_int_eq(cli_next(&p, &val), CLI_OPERAND);
    ck_assert_str_eq(val, "-y");
    ck_assert_ptr_null(cli_peek(&p));
    ck_assert_int_eq(cli_next(&p, &val), CLI_DONE);

    parsed_t r = parse("--events=e.jsonl --events");
    ck_assert_str_eq(r.seen, "5=e.jsonl;5=(null);");
}
END_TEST

START_TEST(fail_messages)
{
    char a0[] = "demo";
    char *argv[] = {a0, NULL};
    cli_t p;
    FILE *te;
    char err[512];
    int se;

    cli_init(&p, &demo, 1, argv);
    se = capture(2, &te);
    ck_assert_int_eq(cli_fail(&p, "--until %s: bad", "soon"), 2);
    ck_assert_int_eq(cli_fail_usage(&p, "no FILE given"), 2);
    release(2, se, te, err, sizeof(err));
    ck_assert_str_eq(err, "sluice demo: --until soon: bad\n"
                          "sluice demo: no FILE given (see sluice demo --help)\n");
    ck_assert_int_eq(p.status, 2);
    const char *val;
    ck_assert_int_eq(cli_next(&p, &val), CLI_STOP);
}
END_TEST

START_TEST(output_formats)
{
    json_t *doc = json_pack("{s:i, s:[s, s], s:s}", "count", 3, "l", "a", "true", "s", "x y");
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    err_msg_t msg;

    ck_assert_int_eq(cli_output_parse(NULL), CLI_OUTPUT_TEXT);
    ck_assert_int_eq(cli_output_parse("json"), CLI_OUTPUT_JSON);
    ck_assert_int_eq(cli_output_parse("yaml"), CLI_OUTPUT_YAML);
    ck_assert_int_eq(cli_output_parse("csv"), CLI_OUTPUT_CSV);
    ck_assert_int_eq(cli_output_parse("text"), CLI_OUTPUT_TEXT);

    f = open_memstream(&buf, &len);
    ck_assert_int_eq(cli_output_write(f, CLI_OUTPUT_JSON, doc, &msg), ERR_OK);
    fclose(f);
    ck_assert_str_eq(buf, "{\n  \"count\": 3,\n  \"l\": [\n    \"a\",\n    \"true\"\n  ],\n"
                          "  \"s\": \"x y\"\n}\n");
    free(buf);
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(cli_output_write(f, CLI_OUTPUT_YAML, doc, &msg), ERR_OK);
    fclose(f);
    ck_assert_str_eq(buf, "count: 3\nl:\n- a\n- 'true'\ns: x y\n");
    free(buf);
    f = open_memstream(&buf, &len);
    ck_assert_int_eq(cli_output_write(f, CLI_OUTPUT_TEXT, doc, &msg), ERR_INVALID);
    fclose(f);
    free(buf);
    json_decref(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("parser");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, long_options_take_values_both_ways);
    tcase_add_test(tc, short_options_attached_grouped);
    tcase_add_test(tc, operands_dash_and_double_dash);
    tcase_add_test(tc, unknown_option_is_one_line);
    tcase_add_test(tc, missing_and_unwanted_values);
    tcase_add_test(tc, choices_are_enforced);
    tcase_add_test(tc, help_prints_usage_on_stdout);
    tcase_add_test(tc, optional_value_and_lookahead);
    tcase_add_test(tc, fail_messages);
    tcase_add_test(tc, output_formats);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
