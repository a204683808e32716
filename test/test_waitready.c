/* test_waitready -- waitForPodsReady's configuration and rules, shared by the operator and the
 * simulator (lib/model/waitready.c). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/waitready.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static json_t *load(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s: %s", text, e.text);
    return j;
}

/* Decode `text`; the error message (or "") into `msg`. */
static err_t decode(const char *text, pods_ready_config_t *out, err_msg_t *msg)
{
    json_t *root = load(text);
    err_t rc;

    memset(msg, 0, sizeof(*msg));
    rc = waitready_decode(root, out, msg);
    json_decref(root);
    return rc;
}

START_TEST(defaults_per_api_version)
{
    pods_ready_config_t c;
    err_msg_t msg;

    /* v1beta2: on without the section, Kueue's defaults */
    ck_assert_int_eq(decode("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\"}", &c, &msg),
                     ERR_OK);
    ck_assert(c.enabled);
    ck_assert(!c.block_admission);
    ck_assert_uint_eq(c.timeout_ms, 1800000);
    ck_assert_uint_eq(c.recovery_timeout_ms, 1800000);
    ck_assert_int_eq(c.timestamp, REQUEUE_TS_EVICTION);
    ck_assert(!c.has_backoff_limit);
    ck_assert_int_eq(c.backoff_base_s, 60);
    ck_assert_int_eq(c.backoff_max_s, 3600);
    /* v1beta1: off; enable turns it on and blockAdmission follows enable */
    ck_assert_int_eq(decode("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\"}", &c, &msg),
                     ERR_OK);
    ck_assert(!c.enabled);
    ck_assert_int_eq(decode("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\","
                            "\"waitForPodsReady\":{\"enable\":true,\"timeout\":\"2m\"}}",
                            &c, &msg),
                     ERR_OK);
    ck_assert(c.enabled);
    ck_assert(c.block_admission);
    ck_assert_uint_eq(c.timeout_ms, 120000);
    ck_assert_uint_eq(c.recovery_timeout_ms, 120000); /* follows timeout */
    ck_assert(!c.recovery_set);
}
END_TEST

START_TEST(every_field)
{
    pods_ready_config_t c;
    err_msg_t msg;

    ck_assert_int_eq(decode("{\"waitForPodsReady\":{\"timeout\":\"5m\",\"blockAdmission\":true,"
                            "\"recoveryTimeout\":\"0s\",\"requeuingStrategy\":{\"timestamp\":"
                            "\"Creation\",\"backoffLimitCount\":0,\"backoffBaseSeconds\":10,"
                            "\"backoffMaxSeconds\":25}}}",
                            &c, &msg),
                     ERR_OK);
    ck_assert(c.enabled && c.block_admission);
    ck_assert_uint_eq(c.timeout_ms, 300000);
    ck_assert_uint_eq(c.recovery_timeout_ms, 0);
    ck_assert(c.recovery_set);
    ck_assert_int_eq(c.timestamp, REQUEUE_TS_CREATION);
    ck_assert(c.has_backoff_limit);
    ck_assert_int_eq(c.backoff_limit_count, 0);
    ck_assert_int_eq(c.backoff_base_s, 10);
    ck_assert_int_eq(c.backoff_max_s, 25);
}
END_TEST

START_TEST(errors_name_the_field)
{
    static const struct {
        const char *doc, *want;
    } cases[] = {
        {"{\"waitForPodsReady\":[]}", "waitForPodsReady: must be an object"},
        {"{\"waitForPodsReady\":{\"timeot\":\"1m\"}}", "waitForPodsReady.timeot: unknown field"},
        {"{\"waitForPodsReady\":{\"timeout\":\"0s\"}}",
         "waitForPodsReady.timeout: must be greater than 0"},
        {"{\"waitForPodsReady\":{\"timeout\":5}}",
         "waitForPodsReady.timeout: must be a duration string"},
        {"{\"waitForPodsReady\":{\"blockAdmission\":\"yes\"}}",
         "waitForPodsReady.blockAdmission: must be a boolean"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"timestamp\":\"Later\"}}}",
         "waitForPodsReady.requeuingStrategy.timestamp: must be Eviction or Creation"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"backoffBaseSeconds\":0}}}",
         "waitForPodsReady.requeuingStrategy.backoffBaseSeconds: must be an integer >= 1"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"backoffLimitCount\":-1}}}",
         "waitForPodsReady.requeuingStrategy.backoffLimitCount: must be an integer >= 0"},
    };
    pods_ready_config_t c, before;
    err_msg_t msg;

    waitready_defaults(&c, false);
    c.timeout_ms = 1234;
    before = c;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ck_assert_int_ne(decode(cases[i].doc, &c, &msg), ERR_OK);
        ck_assert_msg(strncmp(msg.text, cases[i].want, strlen(cases[i].want)) == 0, "%s: %s",
                      cases[i].doc, msg.text);
        ck_assert_mem_eq(&c, &before, sizeof(c)); /* untouched on failure */
    }
}
END_TEST

START_TEST(deadlines)
{
    pods_ready_config_t c;
    int64_t dl = -1;

    waitready_defaults(&c, false);
    c.timeout_ms = 3000;
    c.recovery_timeout_ms = 5000;
    ck_assert_int_eq(waitready_deadline(&c, WAITREADY_NOT_READY, 1000, 0, &dl),
                     WAITREADY_WAIT_FOR_START);
    ck_assert_int_eq(dl, 4000);
    ck_assert_int_eq(waitready_deadline(&c, WAITREADY_RECOVERING, 1000, 9000, &dl),
                     WAITREADY_WAIT_FOR_RECOVERY);
    ck_assert_int_eq(dl, 14000);
    ck_assert_int_eq(waitready_deadline(&c, WAITREADY_READY, 1000, 0, &dl), WAITREADY_NONE);
    c.recovery_timeout_ms = 0; /* no recovery timeout */
    ck_assert_int_eq(waitready_deadline(&c, WAITREADY_RECOVERING, 1000, 9000, &dl), WAITREADY_NONE);
    c.enabled = false;
    ck_assert_int_eq(waitready_deadline(&c, WAITREADY_NOT_READY, 1000, 0, &dl), WAITREADY_NONE);
}
END_TEST

START_TEST(backoff_limit_and_order)
{
    pods_ready_config_t c;

    waitready_defaults(&c, false);
    /* base 60 doubling up to the 3600 cap: 60, 120, 240, ... 3840 -> 3600 */
    ck_assert_int_eq(waitready_backoff_s(&c, 1), 60);
    ck_assert_int_eq(waitready_backoff_s(&c, 2), 120);
    ck_assert_int_eq(waitready_backoff_s(&c, 6), 1920);
    ck_assert_int_eq(waitready_backoff_s(&c, 7), 3600);
    ck_assert_int_eq(waitready_backoff_s(&c, INT32_MAX), 3600);
    /* no limit: requeued forever */
    ck_assert(!waitready_limit_exceeded(&c, 1000));
    c.has_backoff_limit = true;
    c.backoff_limit_count = 2;
    ck_assert(!waitready_limit_exceeded(&c, 0));
    ck_assert(!waitready_limit_exceeded(&c, 1));
    ck_assert(waitready_limit_exceeded(&c, 2));
    c.backoff_limit_count = 0; /* the first timeout deactivates */
    ck_assert(waitready_limit_exceeded(&c, 0));
    ck_assert_int_eq(waitready_queue_ts(&c, 9000, 1000), 9000);
    c.timestamp = REQUEUE_TS_CREATION;
    ck_assert_int_eq(waitready_queue_ts(&c, 9000, 1000), 1000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("waitready");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, defaults_per_api_version);
    tcase_add_test(tc, every_field);
    tcase_add_test(tc, errors_name_the_field);
    tcase_add_test(tc, deadlines);
    tcase_add_test(tc, backoff_limit_and_order);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
