/* test_hook_limits -- the servers' configurable limits: syntax, bounds, errors, defaults. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/limits.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* Parse `text` over the defaults; the error text, or NULL when accepted. */
static const char *parse_error(const char *text, err_msg_t *msg)
{
    hook_limits_t l, before;

    hook_limits_default(&l);
    before = l;
    if (hook_limits_parse(&l, text, msg) == ERR_OK)
        return NULL;
    ck_assert_mem_eq(&l, &before, sizeof(l)); /* untouched on error */
    return msg->text;
}

START_TEST(defaults_are_the_servers)
{
    hook_limits_t l;
    hook_server_config_t sc;
    char buf[256];

    hook_limits_default(&l);
    memset(&sc, 0, sizeof(sc));
    hook_limits_apply(&l, &sc);
    ck_assert_uint_eq(sc.max_connections, 512);
    ck_assert_uint_eq(sc.max_connections_per_client, 32);
    ck_assert_uint_eq(sc.max_buffered_bytes, 64u << 20);
    ck_assert_uint_eq(sc.header_timeout_ms, 5000);
    ck_assert_uint_eq(sc.request_timeout_ms, 10000);
    ck_assert_uint_eq(sc.idle_timeout_ms, 10000);
    ck_assert_uint_eq(sc.write_timeout_ms, 5000);
    /* the other fields keep their own defaults (0) */
    ck_assert_uint_eq(sc.max_body_bytes, 0);
    ck_assert_uint_eq(sc.max_header_bytes, 0);
    ck_assert_str_eq(hook_limits_format(&l, buf, sizeof(buf)),
                     "max-connections=512,max-connections-per-client=32,body-budget=67108864,"
                     "header-timeout=5s,request-timeout=10s,idle-timeout=10s,write-timeout=5s");
}
END_TEST

START_TEST(every_limit_is_set)
{
    hook_limits_t l, back;
    err_msg_t msg = {{0}};
    char buf[256];

    hook_limits_default(&l);
    ck_assert_int_eq(hook_limits_parse(&l,
                                       "max-connections=4096,max-connections-per-client=4096, "
                                       "body-budget=1Gi,header-timeout=2500ms,request-timeout=1m,"
                                       "idle-timeout=90s,write-timeout=1h",
                                       &msg),
                     ERR_OK);
    ck_assert_uint_eq(l.max_connections, 4096);
    ck_assert_uint_eq(l.max_connections_per_client, 4096);
    ck_assert_uint_eq(l.body_budget, 1u << 30);
    ck_assert_uint_eq(l.header_timeout_ms, 2500);
    ck_assert_uint_eq(l.request_timeout_ms, 60000);
    ck_assert_uint_eq(l.idle_timeout_ms, 90000);
    ck_assert_uint_eq(l.write_timeout_ms, 3600000);
    /* later entries win; the rest stays */
    ck_assert_int_eq(hook_limits_parse(&l, "idle-timeout=1s,idle-timeout=2s", &msg), ERR_OK);
    ck_assert_uint_eq(l.idle_timeout_ms, 2000);
    ck_assert_uint_eq(l.write_timeout_ms, 3600000);
    /* bytes as a plain number or a decimal quantity */
    ck_assert_int_eq(hook_limits_parse(&l, "body-budget=20000000", &msg), ERR_OK);
    ck_assert_uint_eq(l.body_budget, 20000000);
    ck_assert_int_eq(hook_limits_parse(&l, "body-budget=1G", &msg), ERR_OK);
    ck_assert_uint_eq(l.body_budget, 1000000000);
    /* the format reads back */
    hook_limits_default(&back);
    ck_assert_int_eq(hook_limits_parse(&back, hook_limits_format(&l, buf, sizeof(buf)), &msg),
                     ERR_OK);
    ck_assert_mem_eq(&back, &l, sizeof(l));
}
END_TEST

START_TEST(errors_name_the_entry)
{
    err_msg_t msg = {{0}};

    ck_assert_str_eq(parse_error("max-connections=0", &msg),
                     "max-connections=0: must be at least 1");
    ck_assert_str_eq(parse_error("max-connections=1000001", &msg),
                     "max-connections=1000001: must be at most 1000000");
    ck_assert_str_eq(parse_error("max-connections=99999999999999999999999", &msg),
                     "max-connections=99999999999999999999999: must be at most 1000000");
    ck_assert_str_eq(parse_error("max-connections=12k", &msg),
                     "max-connections=12k: want a whole number");
    ck_assert_str_eq(parse_error("max-connections=", &msg),
                     "max-connections=: want a whole number");
    ck_assert_str_eq(parse_error("max-connections-per-client=-1", &msg),
                     "max-connections-per-client=-1: want a whole number");
    ck_assert_str_eq(parse_error("body-budget=8Mi", &msg),
                     "body-budget=8Mi: want a whole number of bytes from 16Mi to 4Gi");
    ck_assert_str_eq(parse_error("body-budget=5Gi", &msg),
                     "body-budget=5Gi: want a whole number of bytes from 16Mi to 4Gi");
    ck_assert_str_eq(parse_error("body-budget=20000000500m", &msg),
                     "body-budget=20000000500m: want a whole number of bytes from 16Mi to 4Gi");
    ck_assert_ptr_nonnull(strstr(parse_error("body-budget=lots", &msg), "body-budget=lots: "));
    ck_assert_str_eq(parse_error("idle-timeout=0s", &msg), "idle-timeout=0s: must be at least 1ms");
    ck_assert_str_eq(parse_error("write-timeout=2h", &msg),
                     "write-timeout=2h: duration \"2h\": longer than 1 hours");
    ck_assert_str_eq(parse_error("header-timeout=1.5ms", &msg),
                     "header-timeout=1.5ms: duration \"1.5ms\": finer than a millisecond");
    ck_assert_str_eq(parse_error("idle-timeout=-1s", &msg),
                     "idle-timeout=-1s: duration \"-1s\": must not be negative");
    ck_assert_str_eq(parse_error("max-conns=4", &msg),
                     "\"max-conns\": unknown limit (known: max-connections, "
                     "max-connections-per-client, body-budget, header-timeout, request-timeout, "
                     "idle-timeout, write-timeout)");
    ck_assert_str_eq(parse_error("idle-timeout", &msg), "\"idle-timeout\": want NAME=VALUE");
    ck_assert_str_eq(parse_error("", &msg), "an empty entry: want NAME=VALUE[,NAME=VALUE...]");
    ck_assert_str_eq(parse_error("idle-timeout=1s,", &msg),
                     "an empty entry: want NAME=VALUE[,NAME=VALUE...]");
    /* against each other, after every entry (the order of entries does not matter) */
    ck_assert_str_eq(parse_error("max-connections-per-client=600", &msg),
                     "max-connections-per-client (600) must not exceed max-connections (512)");
    ck_assert_ptr_null(parse_error("max-connections-per-client=600,max-connections=600", &msg));
    ck_assert_str_eq(parse_error("header-timeout=11s", &msg),
                     "header-timeout (11000ms) must not exceed request-timeout (10000ms): the "
                     "headers are part of the request");
    ck_assert_ptr_null(parse_error("header-timeout=20s,request-timeout=20s", &msg));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hook_limits");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, defaults_are_the_servers);
    tcase_add_test(tc, every_limit_is_set);
    tcase_add_test(tc, errors_name_the_entry);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
