/* test_sim_duration -- duration parsing and exact time printing for the simulator. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/duration.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static sim_ms_t parse_ok(const char *s)
{
    sim_ms_t v = -42;
    err_msg_t msg = {{0}};
    err_t rc = sim_duration_parse(s, strlen(s), &v, &msg);
    ck_assert_msg(rc == ERR_OK, "%s: %s", s, msg.text);
    return v;
}

static err_t parse_err(const char *s, const char *want_substr)
{
    sim_ms_t v = -42;
    err_msg_t msg = {{0}};
    err_t rc = sim_duration_parse(s, strlen(s), &v, &msg);
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

START_TEST(test_time_format_exact)
{
    char buf[SIM_TIME_STR_MAX];

    ck_assert_str_eq(sim_time_format(0, buf), "0");
    ck_assert_str_eq(sim_time_format(1500, buf), "1.5");
    ck_assert_str_eq(sim_time_format(250, buf), "0.25");
    ck_assert_str_eq(sim_time_format(1, buf), "0.001");
    ck_assert_str_eq(sim_time_format(90000, buf), "90");
    ck_assert_str_eq(sim_time_format(1010, buf), "1.01");
    ck_assert_str_eq(sim_time_format(-1, buf), "-0.001");
    ck_assert_str_eq(sim_time_format(SIM_MS_MAX, buf), "9223372036.854");
    ck_assert_str_eq(sim_time_format(INT64_MIN, buf), "-9223372036854775.808");
}
END_TEST

START_TEST(test_duration_format_round_trips)
{
    static const sim_ms_t values[] = {0,     1,       250,     1000,    1500,    60000,
                                      90000, 3600000, 5400000, 3605250, 86400001};
    char buf[SIM_TIME_STR_MAX];

    ck_assert_str_eq(sim_duration_format(5400000, buf), "1h30m");
    ck_assert_str_eq(sim_duration_format(250, buf), "250ms");
    ck_assert_str_eq(sim_duration_format(3605250, buf), "1h5.25s");
    ck_assert_str_eq(sim_duration_format(0, buf), "0s");
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        sim_duration_format(values[i], buf);
        ck_assert_int_eq(parse_ok(buf), values[i]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sim_duration");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_duration_contract_examples);
    tcase_add_test(tc, test_duration_units_and_fractions);
    tcase_add_test(tc, test_duration_errors);
    tcase_add_test(tc, test_time_format_exact);
    tcase_add_test(tc, test_duration_format_round_trips);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
