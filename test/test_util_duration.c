/* test_util_duration -- Go duration text as exact milliseconds or nanoseconds, and printing. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/duration.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int64_t parse_ok(const char *s)
{
    int64_t v = -42;
    err_msg_t msg = {{0}};
    err_t rc = duration_parse_ms(s, strlen(s), DURATION_MS_MAX, &v, &msg);
    ck_assert_msg(rc == ERR_OK, "%s: %s", s, msg.text);
    return v;
}

static err_t parse_err(const char *s, const char *want_substr)
{
    int64_t v = -42;
    err_msg_t msg = {{0}};
    err_t rc = duration_parse_ms(s, strlen(s), DURATION_MS_MAX, &v, &msg);
    ck_assert_msg(rc != ERR_OK, "%s parsed as %lld", s, (long long)v);
    ck_assert_int_eq(v, -42); /* untouched on failure */
    ck_assert_msg(strstr(msg.text, want_substr) != NULL, "%s: %s", s, msg.text);
    return rc;
}

START_TEST(test_duration_contract_examples)
{
    ck_assert_int_eq(parse_ok("0s"), 0);
    ck_assert_int_eq(parse_ok("0"), 0);
    ck_assert_int_eq(parse_ok("1.5s"), 1500);
    ck_assert_int_eq(parse_ok("250ms"), 250);
    ck_assert_int_eq(parse_ok("2m"), 120000);
    ck_assert_int_eq(parse_ok("1h30m"), 5400000);
}
END_TEST

START_TEST(test_duration_units_and_fractions)
{
    ck_assert_int_eq(parse_ok("1h0m5.25s"), 3605250);
    ck_assert_int_eq(parse_ok("0.5h"), 1800000);
    ck_assert_int_eq(parse_ok("1.001s"), 1001);
    ck_assert_int_eq(parse_ok("1000us"), 1);
    ck_assert_int_eq(parse_ok("2000000ns"), 2);
    ck_assert_int_eq(parse_ok("3000\xc2\xb5s"), 3);
    ck_assert_int_eq(parse_ok("+10s"), 10000);
    ck_assert_int_eq(parse_ok("1.500000000000000000000s"), 1500);
    ck_assert_int_eq(parse_ok(".5s"), 500);
    ck_assert_int_eq(parse_ok("5.s"), 5000);
    ck_assert_int_eq(parse_ok("1m1ms"), 60001);
    ck_assert_int_eq(parse_ok("2562047h"), 2562047LL * 3600000);
}
END_TEST

START_TEST(test_duration_errors)
{
    parse_err("", "empty");
    parse_err("5", "unit");
    parse_err("5x", "unit");
    parse_err("s", "number");
    parse_err("-1s", "negative");
    parse_err("1.0005s", "finer than a millisecond");
    parse_err("1ns", "finer than a millisecond");
    parse_err("1.5", "unit");
    parse_err("1s ", "offset 2");
    ck_assert_int_eq(parse_err("99999999999999999999h", "longer than"), ERR_OVERFLOW);
    ck_assert_int_eq(parse_err("2562048h", "longer than"), ERR_OVERFLOW);
    parse_err("+", "number");
}
END_TEST

START_TEST(test_duration_messages_exact)
{
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "duration \"\": empty"},
        {"-1s", "duration \"-1s\": must not be negative"},
        {"1.0005s", "duration \"1.0005s\": finer than a millisecond"},
        {"1s ", "duration \"1s \": expected a number at offset 2"},
        {"5x", "duration \"5x\": missing or unknown unit at offset 1 (use ns, us, ms, s, m or h)"},
        {"1s.", "duration \"1s.\": expected a number at offset 3"},
        {"+", "duration \"+\": expected a number"},
        {"2562048h", "duration \"2562048h\": longer than 2562047 hours"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t v = -42;
        err_msg_t msg = {{0}};
        ck_assert_int_ne(
            duration_parse_ms(cases[i].text, strlen(cases[i].text), DURATION_MS_MAX, &v, &msg),
            ERR_OK);
        ck_assert_str_eq(msg.text, cases[i].msg);
        ck_assert_int_eq(v, -42);
    }
}
END_TEST

/* The length is explicit: the text need not be NUL-terminated, and bytes after it are not read. */
START_TEST(test_duration_explicit_length)
{
    int64_t v = -1;

    ck_assert_int_eq(duration_parse_ms("90sGARBAGE", 3, DURATION_MS_MAX, &v, NULL), ERR_OK);
    ck_assert_int_eq(v, 90000);
    ck_assert_int_eq(duration_parse_ms("1h", 1, DURATION_MS_MAX, &v, NULL), ERR_PARSE);
}
END_TEST

START_TEST(test_duration_max)
{
    int64_t v = -1;
    err_msg_t msg = {{0}};

    /* A 32-bit millisecond setting (the operator's configuration durations). */
    ck_assert_int_eq(duration_parse_ms("1h2m3s4ms", 9, UINT32_MAX, &v, &msg), ERR_OK);
    ck_assert_int_eq(v, 3723004);
    ck_assert_int_eq(duration_parse_ms("1193h2m47.295s", 14, UINT32_MAX, &v, &msg), ERR_OK);
    ck_assert_int_eq(v, UINT32_MAX);
    ck_assert_int_eq(duration_parse_ms("1193h2m47.296s", 14, UINT32_MAX, &v, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "duration \"1193h2m47.296s\": longer than 1193 hours");
    ck_assert_int_eq(duration_parse_ms("2000h", 5, UINT32_MAX, &v, &msg), ERR_OVERFLOW);
    /* Below an hour the limit is named in the result's unit. */
    ck_assert_int_eq(duration_parse_ms("1s", 2, 1000, &v, &msg), ERR_OK);
    ck_assert_int_eq(v, 1000);
    ck_assert_int_eq(duration_parse_ms("1001ms", 6, 1000, &v, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "duration \"1001ms\": longer than 1000ms");
    ck_assert_int_eq(duration_parse_ns("2us", 3, 1999, &v, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "duration \"2us\": longer than 1999ns");
    ck_assert_int_eq(duration_parse_ms("0", 1, 0, &v, &msg), ERR_OK);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(duration_parse_ms("1ms", 3, 0, &v, &msg), ERR_OVERFLOW);
}
END_TEST

START_TEST(test_duration_nanoseconds)
{
    static const struct {
        const char *text;
        err_t rc;
        int64_t ns;
    } cases[] = {
        {"0", ERR_OK, 0},
        {"0s", ERR_OK, 0},
        {"1.5s", ERR_OK, 1500000000},
        {"250ms", ERR_OK, 250000000},
        {"1h30m", ERR_OK, 5400000000000},
        {"+5s", ERR_OK, 5000000000},
        {"3ns", ERR_OK, 3},
        {"1us", ERR_OK, 1000},
        {"1\xce\xbcs", ERR_OK, 1000},
        {"1.0005s", ERR_OK, 1000500000},
        {"0.5us", ERR_OK, 500},
        {"1.s", ERR_OK, 1000000000},
        {"2562047h47m16.854775807s", ERR_OK, INT64_MAX},
        {"2562047h47m16.854775808s", ERR_OVERFLOW, 0},
        {"9223372036854775808ns", ERR_OVERFLOW, 0},
        {"0.5ns", ERR_PARSE, 0},
        {"1.0000000001s", ERR_PARSE, 0},
        {"-1s", ERR_PARSE, 0},
        {"5", ERR_PARSE, 0},
        {".s", ERR_PARSE, 0},
        {"1h 2m", ERR_PARSE, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ns = -42;
        err_msg_t msg = {{0}};
        err_t rc = duration_parse_ns(cases[i].text, strlen(cases[i].text), INT64_MAX, &ns, &msg);
        ck_assert_msg(rc == cases[i].rc, "%s: %d %s", cases[i].text, rc, msg.text);
        ck_assert_int_eq(ns, rc == ERR_OK ? cases[i].ns : -42);
    }
    {
        int64_t ns;
        err_msg_t msg;
        duration_parse_ns("0.5ns", 5, INT64_MAX, &ns, &msg);
        ck_assert_str_eq(msg.text, "duration \"0.5ns\": finer than a nanosecond");
    }
}
END_TEST

START_TEST(test_time_format_exact)
{
    char buf[DURATION_STR_MAX];

    ck_assert_str_eq(duration_format_secs(0, buf), "0");
    ck_assert_str_eq(duration_format_secs(1500, buf), "1.5");
    ck_assert_str_eq(duration_format_secs(250, buf), "0.25");
    ck_assert_str_eq(duration_format_secs(1, buf), "0.001");
    ck_assert_str_eq(duration_format_secs(90000, buf), "90");
    ck_assert_str_eq(duration_format_secs(1010, buf), "1.01");
    ck_assert_str_eq(duration_format_secs(-1, buf), "-0.001");
    ck_assert_str_eq(duration_format_secs(DURATION_MS_MAX, buf), "9223372036.854");
    ck_assert_str_eq(duration_format_secs(INT64_MIN, buf), "-9223372036854775.808");
}
END_TEST

START_TEST(test_duration_format_round_trips)
{
    static const int64_t values[] = {0,     1,       250,     1000,    1500,    60000,
                                     90000, 3600000, 5400000, 3605250, 86400001};
    char buf[DURATION_STR_MAX];

    ck_assert_str_eq(duration_format(5400000, buf), "1h30m");
    ck_assert_str_eq(duration_format(250, buf), "250ms");
    ck_assert_str_eq(duration_format(3605250, buf), "1h5.25s");
    ck_assert_str_eq(duration_format(0, buf), "0s");
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        duration_format(values[i], buf);
        ck_assert_int_eq(parse_ok(buf), values[i]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_duration");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_duration_contract_examples);
    tcase_add_test(tc, test_duration_units_and_fractions);
    tcase_add_test(tc, test_duration_errors);
    tcase_add_test(tc, test_duration_messages_exact);
    tcase_add_test(tc, test_duration_explicit_length);
    tcase_add_test(tc, test_duration_max);
    tcase_add_test(tc, test_duration_nanoseconds);
    tcase_add_test(tc, test_time_format_exact);
    tcase_add_test(tc, test_duration_format_round_trips);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
