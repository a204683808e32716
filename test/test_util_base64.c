/* test_util_base64 -- base64 text from bytes and back (RFC 4648 vectors, Kubernetes' leniency). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* RFC 4648 section 10. */
static const char *const vectors[][2] = {
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
};

START_TEST(test_base64_rfc4648_vectors)
{
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        unsigned char *bytes = NULL;
        size_t n = 99;
        char *text = NULL;

        ck_assert_int_eq(base64_encode(vectors[i][0], strlen(vectors[i][0]), &text), ERR_OK);
        ck_assert_str_eq(text, vectors[i][1]);
        ck_assert_int_eq(base64_decode(text, strlen(text), &bytes, &n, NULL), ERR_OK);
        ck_assert_uint_eq(n, strlen(vectors[i][0]));
        ck_assert_str_eq((char *)bytes, vectors[i][0]); /* NUL-terminated */
        free(text);
        free(bytes);
    }
}
END_TEST

START_TEST(test_base64_every_byte_round_trips)
{
    unsigned char data[256], *back = NULL;
    size_t n = 0;
    char *text = NULL;

    for (int i = 0; i < 256; i++)
        data[i] = (unsigned char)(255 - i);
    for (size_t len = 0; len <= sizeof(data); len += 37) {
        ck_assert_int_eq(base64_encode(data, len, &text), ERR_OK);
        ck_assert_uint_eq(strlen(text), (len + 2) / 3 * 4);
        ck_assert_int_eq(base64_decode(text, strlen(text), &back, &n, NULL), ERR_OK);
        ck_assert_uint_eq(n, len);
        ck_assert_int_eq(memcmp(back, data, len), 0);
        free(text);
        free(back);
    }
    /* "+" and "/" appear. */
    ck_assert_int_eq(base64_encode("\xfb\xff", 2, &text), ERR_OK);
    ck_assert_str_eq(text, "+/8=");
    free(text);
}
END_TEST

/* kubeconfig and Secret data as people write them: no padding, wrapped lines. */
START_TEST(test_base64_decode_leniency)
{
    unsigned char *b = NULL;
    size_t n = 0;

    ck_assert_int_eq(base64_decode("aGVsbG8", 7, &b, &n, NULL), ERR_OK);
    ck_assert_uint_eq(n, 5);
    ck_assert_str_eq((char *)b, "hello");
    free(b);
    ck_assert_int_eq(base64_decode(" aGVs\r\nbG8=\n\t", 13, &b, &n, NULL), ERR_OK);
    ck_assert_str_eq((char *)b, "hello");
    free(b);
    /* Only `len` bytes are read. */
    ck_assert_int_eq(base64_decode("aGk=garbage!", 4, &b, &n, NULL), ERR_OK);
    ck_assert_str_eq((char *)b, "hi");
    free(b);
}
END_TEST

START_TEST(test_base64_decode_errors)
{
    unsigned char *b = (unsigned char *)"sentinel";
    size_t n = 99;
    err_msg_t msg;

    ck_assert_int_eq(base64_decode("a", 1, &b, &n, &msg), ERR_PARSE);
    ck_assert_str_eq(msg.text, "bad base64 length");
    ck_assert_int_eq(base64_decode("aGk=x", 5, &b, &n, &msg), ERR_PARSE);
    ck_assert_str_eq(msg.text, "bad base64 character at offset 4");
    ck_assert_int_eq(base64_decode("aG==k", 5, &b, &n, &msg), ERR_PARSE);
    ck_assert_int_eq(base64_decode("a===", 4, &b, &n, &msg), ERR_PARSE);
    ck_assert_int_eq(base64_decode("aGk==", 5, &b, &n, &msg), ERR_PARSE);
    ck_assert_str_eq(msg.text, "bad base64 padding");
    ck_assert_int_eq(base64_decode("aG-k", 4, &b, &n, &msg), ERR_PARSE); /* URL alphabet */
    ck_assert_str_eq(msg.text, "bad base64 character at offset 2");
    ck_assert_int_eq(base64_decode("aGk", 3, &b, &n, NULL), ERR_OK); /* msg may be NULL */
    free(b);
    b = (unsigned char *)"sentinel";
    ck_assert_int_eq(base64_decode("@", 1, &b, &n, NULL), ERR_PARSE);
    ck_assert_str_eq((char *)b, "sentinel"); /* untouched on failure */
    ck_assert_uint_eq(n, 2);
}
END_TEST

START_TEST(test_base64_out_of_memory)
{
    char *text = (char *)"sentinel";
    unsigned char *b = (unsigned char *)"sentinel";
    size_t n = 99;
    err_msg_t msg;

    oom_fail_at(1);
    ck_assert_int_eq(base64_encode("abc", 3, &text), ERR_NOMEM);
    oom_fail_at(1);
    ck_assert_int_eq(base64_decode("YWJj", 4, &b, &n, &msg), ERR_NOMEM);
    oom_fail_at(0);
    ck_assert_str_eq(text, "sentinel");
    ck_assert_str_eq((char *)b, "sentinel");
    ck_assert_uint_eq(n, 99);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_base64");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_base64_rfc4648_vectors);
    tcase_add_test(tc, test_base64_every_byte_round_trips);
    tcase_add_test(tc, test_base64_decode_leniency);
    tcase_add_test(tc, test_base64_decode_errors);
    tcase_add_test(tc, test_base64_out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
