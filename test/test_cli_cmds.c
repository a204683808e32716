/* test_cli_cmds -- every sluice command reads its command line the same way (the built binary,
 * driven by the commands' own option tables: a command added later is covered by itself). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "cli_complete.h"
#include "commands.h"
#include "sluice_exec.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* `s` is exactly one line: text, then one final newline. */
static void assert_one_line(const char *s, const char *what)
{
    size_t n = strlen(s);

    ck_assert_msg(n > 1 && s[n - 1] == '\n' && strchr(s, '\n') == s + n - 1,
                  "%s: want one line on standard error, got \"%s\"", what, s);
}

/* `sluice <cmd> ARG` fails with exit status 2 and one line containing `want`. */
static void assert_usage_error(const char *cmd, const char *arg, const char *want)
{
    sluice_result_t r = sluice_exec(NULL, cmd, arg, NULL);

    ck_assert_msg(r.rc == 2, "sluice %s %s: exit %d, want 2", cmd, arg, r.rc);
    assert_one_line(r.err, arg);
    ck_assert_msg(strstr(r.err, want) != NULL, "sluice %s %s: \"%s\" lacks \"%s\"", cmd, arg, r.err,
                  want);
    ck_assert_str_eq(r.out, "");
    sluice_result_fini(&r);
}

START_TEST(every_command_unknown_option_is_one_line)
{
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++) {
        char want[256];
        snprintf(want, sizeof(want),
                 "sluice %s: unknown option --no-such-flag (see sluice %s --help)\n", (*c)->name,
                 (*c)->name);
        sluice_result_t r = sluice_exec(NULL, (*c)->name, "--no-such-flag", "x", NULL);
        ck_assert_msg(r.rc == 2, "sluice %s --no-such-flag: exit %d", (*c)->name, r.rc);
        ck_assert_str_eq(r.err, want);
        ck_assert_str_eq(r.out, "");
        sluice_result_fini(&r);
        /* the same in the = form, and a short one */
        r = sluice_exec(NULL, (*c)->name, "--no-such-flag=1", NULL);
        ck_assert_int_eq(r.rc, 2);
        ck_assert_str_eq(r.err, want);
        sluice_result_fini(&r);
        assert_usage_error((*c)->name, "-Z", "unknown option -Z (see sluice");
    }
}
END_TEST

START_TEST(every_command_help_tells_every_option)
{
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++) {
        char head[128];
        snprintf(head, sizeof(head), "usage: sluice %s", (*c)->name);
        for (int h = 0; h < 2; h++) {
            sluice_result_t r = sluice_exec(NULL, (*c)->name, h ? "--help" : "-h", NULL);
            ck_assert_msg(r.rc == 0, "sluice %s -h: exit %d", (*c)->name, r.rc);
            ck_assert_msg(strncmp(r.out, head, strlen(head)) == 0, "sluice %s -h: \"%.80s\"",
                          (*c)->name, r.out);
            ck_assert_str_eq(r.err, "");
            ck_assert_ptr_nonnull(strstr(r.out, "-h, --help"));
            ck_assert_msg(strstr(r.out, "exit status") != NULL,
                          "sluice %s --help does not tell its exit status", (*c)->name);
            for (size_t i = 0; i < (*c)->nopts; i++) {
                const cli_opt_t *o = &(*c)->opts[i];
                char flag[96];
                if (o->long_name != NULL)
                    snprintf(flag, sizeof(flag), "--%s", o->long_name);
                else
                    snprintf(flag, sizeof(flag), "-%c", o->short_name);
                ck_assert_msg(strstr(r.out, flag) != NULL, "sluice %s --help does not tell %s",
                              (*c)->name, flag);
                if (o->short_name != 0 && o->long_name != NULL) {
                    snprintf(flag, sizeof(flag), "-%c, --%s", o->short_name, o->long_name);
                    ck_assert_msg(strstr(r.out, flag) != NULL,
                                  "sluice %s --help does not tell \"%s\"", (*c)->name, flag);
                }
                /* every value the parser accepts is named */
                for (const char *w = o->choices; w != NULL && *w != '\0';) {
                    size_t n = strcspn(w, " ");
                    char word[64];
                    snprintf(word, sizeof(word), "%.*s", (int)n, w);
                    ck_assert_msg(strstr(r.out, word) != NULL,
                                  "sluice %s --help does not name %s's value %s", (*c)->name, flag,
                                  word);
                    w += n + (w[n] == ' ');
                }
            }
            sluice_result_fini(&r);
        }
        /* `sluice help CMD` is the same text */
        sluice_result_t a = sluice_exec(NULL, "help", (*c)->name, NULL);
        sluice_result_t b = sluice_exec(NULL, (*c)->name, "--help", NULL);
        ck_assert_int_eq(a.rc, 0);
        ck_assert_str_eq(a.out, b.out);
        sluice_result_fini(&a);
        sluice_result_fini(&b);
    }
}
END_TEST

START_TEST(every_option_value_rules)
{
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++) {
        for (size_t i = 0; i < (*c)->nopts; i++) {
            const cli_opt_t *o = &(*c)->opts[i];
            char arg[96], want[160];
            if (o->long_name == NULL)
                continue;
            if (o->arg == CLI_ARG_NONE) {
                snprintf(arg, sizeof(arg), "--%s=x", o->long_name);
                snprintf(want, sizeof(want), "sluice %s: --%s takes no value", (*c)->name,
                         o->long_name);
                assert_usage_error((*c)->name, arg, want);
                continue;
            }
            /* "--name=" and "--name" at the end: no value */
            snprintf(arg, sizeof(arg), "--%s=", o->long_name);
            snprintf(want, sizeof(want), "sluice %s: --%s needs a %s", (*c)->name, o->long_name,
                     o->value_name);
            assert_usage_error((*c)->name, arg, want);
            if (o->arg == CLI_ARG_REQUIRED) {
                snprintf(arg, sizeof(arg), "--%s", o->long_name);
                assert_usage_error((*c)->name, arg, want);
            }
            if (o->choices != NULL) {
                snprintf(arg, sizeof(arg), "--%s=no-such-value", o->long_name);
                snprintf(want, sizeof(want), "--%s no-such-value: want ", o->long_name);
                assert_usage_error((*c)->name, arg, want);
            }
        }
    }
}
END_TEST

START_TEST(top_level)
{
    sluice_result_t r = sluice_exec(NULL, "--bogus", NULL);

    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "sluice: unknown option --bogus (see sluice --help)\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "bogus", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_str_eq(r.err, "sluice: unknown command bogus (see sluice --help)\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "--help", NULL);
    ck_assert_int_eq(r.rc, 0);
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++) {
        char line[256];
        snprintf(line, sizeof(line), "  %-10s %s\n", (*c)->name, (*c)->summary);
        ck_assert_msg(strstr(r.out, line) != NULL, "sluice --help lacks %s", (*c)->name);
    }
    sluice_result_fini(&r);
}
END_TEST

/* ---- the = form reaches each command as the separate form does ---------------------------- */

START_TEST(equals_form_sim)
{
    sluice_result_t a =
        sluice_exec(NULL, "sim", "--summary=-", "--until=1h", "test/data/sim/basic.yaml", NULL);
    sluice_result_t b = sluice_exec(NULL, "sim", "--summary", "-", "--until", "1h",
                                    "test/data/sim/basic.yaml", NULL);

    ck_assert_int_eq(a.rc, 0);
    ck_assert_str_eq(a.out, b.out);
    ck_assert_ptr_nonnull(strstr(a.out, "\"makespan\""));
    sluice_result_fini(&a);
    sluice_result_fini(&b);
    /* a bad value reaches the command's own check */
    a = sluice_exec(NULL, "sim", "--until=soon", "test/data/sim/basic.yaml", NULL);
    ck_assert_int_eq(a.rc, 2);
    assert_one_line(a.err, "--until=soon");
    ck_assert_ptr_nonnull(strstr(a.err, "sluice sim: --until soon: "));
    sluice_result_fini(&a);
    /* sim - reads standard input; -o json is --summary -, -o yaml the same document */
    a = sluice_exec("test/data/sim/basic.yaml", "sim", "-o", "json", "-", NULL);
    b = sluice_exec(NULL, "sim", "--summary=-", "test/data/sim/basic.yaml", NULL);
    ck_assert_int_eq(a.rc, 0);
    ck_assert_str_eq(a.out, b.out);
    sluice_result_fini(&a);
    a = sluice_exec("test/data/sim/basic.yaml", "sim", "--output=yaml", "-", NULL);
    ck_assert_int_eq(a.rc, 0);
    ck_assert_ptr_nonnull(strstr(a.out, "makespan: 1200\n"));
    sluice_result_fini(&a);
    sluice_result_fini(&b);
    /* only one thing on standard output */
    a = sluice_exec(NULL, "sim", "-ojson", "--events", "-", "test/data/sim/basic.yaml", NULL);
    ck_assert_int_eq(a.rc, 2);
    assert_one_line(a.err, "-ojson --events -");
    sluice_result_fini(&a);
}
END_TEST

START_TEST(equals_form_audit_convert_run_version)
{
    char out[] = "/tmp/sluice-cli-cmds-XXXXXX";
    int fd = mkstemp(out);
    char arg[128];
    sluice_result_t r;

    ck_assert_int_ge(fd, 0);
    close(fd);
    /* audit --since=1h reads standard input (nothing: no records) */
    r = sluice_exec(NULL, "audit", "--since=1h", "--object=ClusterQueue/a", "-", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "no matching records"));
    sluice_result_fini(&r);
    /* audit -o json: the records in one array; --verify - reads standard input */
    FILE *log = fopen(out, "w");
    ck_assert_ptr_nonnull(log);
    fputs("{\"time\":\"2026-12-02T08:00:00Z\",\"user\":\"alice\",\"operation\":\"UPDATE\","
          "\"kind\":\"ClusterQueue\",\"name\":\"a\",\"allowed\":true,\"changes\":[]}\n",
          log);
    fclose(log);
    r = sluice_exec(NULL, "audit", "--output=json", out, NULL);
    ck_assert_int_eq(r.rc, 0);
    json_t *recs = json_loads(r.out, 0, NULL);
    ck_assert_uint_eq(json_array_size(recs), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(recs, 0), "user")), "alice");
    json_decref(recs);
    sluice_result_fini(&r);
    r = sluice_exec(out, "audit", "--verify", "-o", "yaml", "-", NULL);
    ck_assert_int_eq(r.rc, 1); /* not a chained record */
    ck_assert_ptr_nonnull(strstr(r.out, "ok: false\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "broken: '-:1: not a chained audit record"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "audit", "--verify", "-", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "ok: 0 records, seq 0..0\n");
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "audit", "--since=soon", "-", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice audit: --since soon: "));
    sluice_result_fini(&r);
    /* convert --output=FILE writes FILE */
    snprintf(arg, sizeof(arg), "--output=%s", out);
    r = sluice_exec(NULL, "convert", "-q", arg, "test/data/convert/kueue-v1beta1.yaml", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(r.out, "");
    sluice_result_fini(&r);
    char *text = sluice_read_file(out);
    ck_assert_ptr_nonnull(strstr(text, "kueue.x-k8s.io/v1beta2"));
    free(text);
    unlink(out);
    /* run: the value reaches the configuration (refused before any connection is made) */
    r = sluice_exec(NULL, "run", "--audit-log-max-bytes=lots", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "sluice run: --audit-log-max-bytes: "));
    sluice_result_fini(&r);
    /* run --config=- reads the Configuration from standard input */
    log = fopen(out, "w");
    ck_assert_ptr_nonnull(log);
    fputs("apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
          "waitForPodsReady:\n  timeout: 5 minutes\n",
          log);
    fclose(log);
    r = sluice_exec(out, "run", "--config=-", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(strstr(r.err, "sluice run: -: waitForPodsReady.timeout") != NULL, "%s", r.err);
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "run", "--qps=0", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--qps 0: want an integer"));
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "run", "--server-limits", "max-connections=64,idle-timeout=0s", NULL);
    ck_assert_int_eq(r.rc, 2);
    ck_assert_msg(strstr(r.err, "sluice run: --server-limits: idle-timeout=0s: must be at least "
                                "1ms") != NULL,
                  "%s", r.err);
    sluice_result_fini(&r);
    /* version -o json / --output=yaml */
    r = sluice_exec(NULL, "version", "--output=json", NULL);
    ck_assert_int_eq(r.rc, 0);
    json_error_t jerr;
    json_t *doc = json_loads(r.out, 0, &jerr);
    ck_assert_msg(doc != NULL, "version -o json: %s", jerr.text);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(doc, "version")));
    ck_assert_ptr_nonnull(json_string_value(json_object_get(doc, "commit")));
    ck_assert_ptr_nonnull(json_string_value(json_object_get(doc, "buildDate")));
    static const char *const libs[] = {"libcurl", "libyaml", "jansson", "openssl", "libuv"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
        const char *v =
            json_string_value(json_object_get(json_object_get(doc, "libraries"), libs[i]));
        ck_assert_msg(v != NULL && v[0] >= '0' && v[0] <= '9', "version: %s: %s", libs[i],
                      v ? v : "(none)");
    }
    json_decref(doc);
    sluice_result_fini(&r);
    r = sluice_exec(NULL, "version", NULL);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\ncommit "));
    ck_assert_ptr_nonnull(strstr(r.out, "\nlibcurl "));
    sluice_result_fini(&r);
}
END_TEST

/* ---- completion ------------------------------------------------------------------------------ */

/* Complete the words `line` (the last word is the one being completed; "" when it ends in a
 * space) with the bash script; returns COMPREPLY joined by spaces (static). */
static const char *bash_complete(const char *script, const char *line)
{
    static char buf[8192];
    char cmd[4096];
    FILE *p;
    size_t n;

    snprintf(cmd, sizeof(cmd),
             "cd \"$SLUICE_SOURCE_DIR\" && bash -c 'source %s; read -ra COMP_WORDS <<<\"$1\"; "
             "[[ $1 == *\" \" ]] && COMP_WORDS+=(\"\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
             "_sluice; echo \"${COMPREPLY[*]}\"' _ '%s'",
             script, line);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    if (n > 0 && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return buf;
}

START_TEST(completion_bash_from_the_tables)
{
    char script[] = "/tmp/sluice-completion-XXXXXX";
    int fd = mkstemp(script);
    sluice_result_t r = sluice_exec(NULL, "completion", "bash", NULL);

    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, r.out, strlen(r.out)), (ssize_t)strlen(r.out));
    close(fd);
    sluice_result_fini(&r);

    /* commands, then each command's every option */
    const char *got = bash_complete(script, "sluice ");
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++)
        ck_assert_msg(strstr(got, (*c)->name) != NULL, "completion lacks %s", (*c)->name);
    for (const cli_cmd_t *const *c = commands; *c != NULL; c++) {
        char line[128], words[8192];
        snprintf(line, sizeof(line), "sluice %s -", (*c)->name);
        snprintf(words, sizeof(words), "%s ", bash_complete(script, line));
        for (size_t i = 0; i < (*c)->nopts; i++) {
            char flag[96];
            const cli_opt_t *o = &(*c)->opts[i];
            if (o->long_name != NULL)
                snprintf(flag, sizeof(flag), "--%s ", o->long_name);
            else
                snprintf(flag, sizeof(flag), "-%c ", o->short_name);
            ck_assert_msg(strstr(words, flag) != NULL, "completion of '%s' lacks %s: %s", line,
                          flag, words);
        }
    }
    /* values from the choices, = form too; files where a FILE is read */
    ck_assert_str_eq(bash_complete(script, "sluice sim -o "), "json yaml");
    ck_assert_str_eq(bash_complete(script, "sluice version --output y"), "yaml");
    ck_assert_str_eq(bash_complete(script, "sluice run --log-level = d"), "debug");
    ck_assert_str_eq(bash_complete(script, "sluice run --log-level = "), "error info debug");
    ck_assert_str_eq(bash_complete(script, "sluice completion "), "bash zsh");
    ck_assert_str_eq(bash_complete(script, "sluice sim test/data/sim/basic.y"),
                     "test/data/sim/basic.yaml");
    ck_assert_str_eq(bash_complete(script, "sluice sim --summary test/data/sim/basic.y"),
                     "test/data/sim/basic.yaml");
    ck_assert_str_eq(bash_complete(script, "sluice sim --until "), "");
    ck_assert_str_eq(bash_complete(script, "sluice help si"), "sim");
    unlink(script);
}
END_TEST

START_TEST(completion_zsh_from_the_tables)
{
    char script[] = "/tmp/sluice-completion-XXXXXX";
    int fd = mkstemp(script);
    sluice_result_t r = sluice_exec(NULL, "completion", "zsh", NULL);
    char cmd[4096], buf[16384];
    FILE *p;
    size_t n;

    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "#compdef sluice\n"));
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, r.out, strlen(r.out)), (ssize_t)strlen(r.out));
    close(fd);
    sluice_result_fini(&r);
    if (system("command -v zsh >/dev/null 2>&1") != 0) {
        fprintf(stderr, "completion_zsh: no zsh here: the script's syntax is not checked\n");
        unlink(script);
        return;
    }
    /* Syntax, then what the script hands _arguments for `sluice sim`: the completion system's
     * functions stubbed to print their arguments, one per line. */
    snprintf(cmd, sizeof(cmd), "zsh -n %s", script);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd),
             "zsh -fc 'compdef() { :; }; _arguments() { print -l -- \"$@\"; }; "
             "_describe() { print -l -- \"$@\"; }; source %s; "
             "words=(sluice sim \"\"); CURRENT=3; _sluice'",
             script);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_ptr_nonnull(strstr(buf, "\n--summary=[the summary JSON document]:FILE:_files\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n(-o --output)-o+[output format]:FORMAT:(json yaml)\n"));
    ck_assert_ptr_nonnull(
        strstr(buf, "\n(-o --output)--output=[output format]:FORMAT:(json yaml)\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n--events=-[one JSON event per line]::FILE:_files\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\n*:SCENARIO.yaml:_files"));
    unlink(script);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_cmds");
    TCase *tc = tcase_create("commands");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_command_unknown_option_is_one_line);
    tcase_add_test(tc, every_command_help_tells_every_option);
    tcase_add_test(tc, every_option_value_rules);
    tcase_add_test(tc, top_level);
    tcase_add_test(tc, equals_form_sim);
    tcase_add_test(tc, equals_form_audit_convert_run_version);
    tcase_add_test(tc, completion_bash_from_the_tables);
    tcase_add_test(tc, completion_zsh_from_the_tables);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
