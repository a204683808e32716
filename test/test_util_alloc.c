/* test_util_alloc -- the one allocator, and util_json_loadb(): a JSON parse whose allocations fail
 * in turn is the value or "out of memory", never a different value and never a crash. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/alloc.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jansson 2.14 itself (issue #362): when growing the buffer its lexer saves a token in fails,
 * the byte is dropped and the parse goes on. With this input that is harmless to memory but
 * returns an object whose key lost a letter; other inputs fail an assertion (a number) or write
 * past a string's end (its closing quote dropped), which this test cannot show and survive. */
START_TEST(jansson_alone_returns_a_changed_value)
{
    static const char text[] = "{\"a-rather-long-key-name\": 1}";
    json_t *want = json_loads(text, 0, NULL), *v;
    int changed = 0;

    ck_assert_ptr_nonnull(want);
    json_set_alloc_funcs(oom_malloc, free);
    for (long n = 1;; n++) {
        oom_fail_at(n);
        v = json_loadb(text, strlen(text), 0, NULL);
        long made = oom_count();
        oom_fail_at(0);
        if (v != NULL && !json_equal(v, want))
            changed++;
        json_decref(v);
        if (made < n)
            break;
    }
    util_alloc_install();
    ck_assert_int_ge(changed, 1);
    json_decref(want);
}
END_TEST

/* Every allocation of util_json_loadb() fails in turn: NULL with "out of memory", or -- once the
 * parse makes fewer allocations than the one failed -- exactly the value. */
static void every_allocation(const char *text, size_t len, size_t flags)
{
    json_error_t e;
    json_t *want = util_json_loadb(text, len, flags, &e), *v;

    ck_assert_msg(want != NULL, "%s: %s", text, e.text);
    for (long n = 1;; n++) {
        oom_fail_at(n);
        v = util_json_loadb(text, len, flags, &e);
        long made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_msg(v != NULL && json_equal(v, want), "%s: nothing failed", text);
            json_decref(v);
            break;
        }
        ck_assert_msg(v == NULL, "allocation %ld of %ld failed but %s parsed", n, made, text);
        ck_assert_msg(util_json_nomem(&e), "%s: allocation %ld: %s", text, n, e.text);
        ck_assert_str_eq(e.text, "out of memory");
    }
    json_decref(want);
}

/* Tokens of every length around the lexer's buffer sizes (16, 32, 64, 128 bytes): strings with
 * plain bytes, escapes, \u escapes, surrogate pairs and multi-byte UTF-8; keys; integers and
 * reals; identifiers. Each length puts a different byte at the growth -- the closing quote, the
 * byte after a backslash, a UTF-8 continuation byte, the delimiter after a number. */
START_TEST(every_allocation_of_every_token_length)
{
    static const char *pieces[] = {
        "a", "\\n", "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xf0\x9f\x98\x80", "\\\"", "\\\\"};
    char tok[1024], text[2200];

    for (size_t p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++) {
        for (size_t len = 0; len < 140; len++) {
            size_t at = 0;

            while (at < len) {
                size_t k = strlen(pieces[(at + p) % 2 == 0 ? p : 0]);
                memcpy(tok + at, pieces[(at + p) % 2 == 0 ? p : 0], k);
                at += k;
            }
            tok[at] = '\0';
            snprintf(text, sizeof(text), "{\"%s\": [\"%s\", {\"k\": \"%s\"}]}", tok, tok, tok);
            every_allocation(text, strlen(text), JSON_REJECT_DUPLICATES);
        }
    }
    for (size_t len = 1; len < 70; len++) {
        char digits[80];

        for (size_t i = 0; i < len; i++)
            digits[i] = (char)('1' + i % 9);
        digits[len] = '\0';
        snprintf(text, sizeof(text), "[%.18s, %s.5, %se3, -%.17s,%.*s]", digits, digits, digits,
                 digits, (int)(len < 18 ? len : 18), "123456789012345678");
        every_allocation(text, strlen(text), 0);
        snprintf(text, sizeof(text), "{\"n\":%.18s}", digits);
        every_allocation(text, strlen(text), 0);
    }
    every_allocation("[true, false, null, 1, 2.5, \"x\", {}, []]", 40, 0);
    every_allocation("\"just a string longer than sixteen\"", 35, JSON_DECODE_ANY);
}
END_TEST

/* What the guard must leave as it was: syntax errors are errors, not "out of memory"; with
 * JSON_DISABLE_EOF_CHECK the position after the value; NUL bytes where allowed. */
START_TEST(errors_and_positions_as_jansson_says)
{
    json_error_t e, je;
    json_t *v, *jv;

    v = util_json_loads("{\"a\": }", 0, &e);
    ck_assert_ptr_null(v);
    ck_assert(!util_json_nomem(&e));
    ck_assert_ptr_null(json_loads("{\"a\": }", 0, &je));
    ck_assert_str_eq(e.text, je.text);
    ck_assert_int_eq(e.position, je.position);

    v = util_json_loadb("{\"a\":1} {\"b\":2}", 15, JSON_DISABLE_EOF_CHECK, &e);
    jv = json_loadb("{\"a\":1} {\"b\":2}", 15, JSON_DISABLE_EOF_CHECK, &je);
    ck_assert_ptr_nonnull(v);
    ck_assert(json_equal(v, jv));
    ck_assert_int_eq(e.position, je.position);
    json_decref(v);
    json_decref(jv);

    v = util_json_loadb("\"a\\u0000b\"", 10, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(json_string_length(v), 3);
    json_decref(v);
    ck_assert_ptr_null(util_json_loadb("", 0, 0, &e));
    ck_assert(!util_json_nomem(&e));
}
END_TEST

/* The library routes: util_malloc and friends are what the wrappers count. */
/* jansson 2.14's json_dumps() ignores the answer of the piece that writes an object's key: when
 * an allocation fails there it returns a text with the key left out (found by
 * test_hook_admission: an AdmissionReview without its "response" key). util_json_dumps()
 * returns NULL or exactly the text, whichever allocation fails, for keys and strings of every
 * length around the buffer's growth. */
START_TEST(dumps_exact_or_null)
{
    json_t *doc = json_object();
    char *want, *text, key[300];
    int jansson_wrong = 0;

    for (int len = 1; len < 280; len += 7) {
        memset(key, 'k', (size_t)len);
        key[len] = '\0';
        json_object_set_new(doc, key, json_pack("{s:[s,i]}", "v", key + len / 2, len));
    }
    want = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_ptr_nonnull(want);
    for (long n = 1;; n++) {
        oom_fail_at(n);
        text = util_json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
        long made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert_ptr_nonnull(text);
            ck_assert_str_eq(text, want);
            free(text);
            break;
        }
        ck_assert_msg(text == NULL, "allocation %ld failed, yet: %.80s", n, text);
    }
    /* and jansson alone, for the record */
    for (long n = 1;; n++) {
        oom_fail_at(n);
        text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
        long made = oom_count();
        oom_fail_at(0);
        if (text != NULL && strcmp(text, want) != 0)
            jansson_wrong++;
        free(text);
        if (made < n)
            break;
    }
    ck_assert_int_ge(jansson_wrong, 1);
    free(want);
    json_decref(doc);
}
END_TEST

START_TEST(the_allocator_is_counted)
{
    void *m, *c, *d, *p, *r, *j;
    char *s;

    /* nothing is asserted while a failure is armed: Check allocates */
    oom_fail_at(1);
    m = util_malloc(8);
    oom_fail_at(1);
    c = util_calloc(2, 8);
    oom_fail_at(1);
    d = util_alloc_strdup("x");
    oom_fail_at(2);
    p = util_malloc(8);
    r = util_realloc(p, 64);
    oom_fail_at(1);
    j = json_object(); /* jansson's allocations are sluice's */
    oom_fail_at(0);
    ck_assert_ptr_null(m);
    ck_assert_ptr_null(c);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(j);
    s = util_alloc_strdup("abc");
    ck_assert_str_eq(s, "abc");
    util_free(s);
    util_free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_alloc");
    TCase *tc = tcase_create("alloc");
    SRunner *sr;
    int failed;

    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, jansson_alone_returns_a_changed_value);
    tcase_add_test(tc, every_allocation_of_every_token_length);
    tcase_add_test(tc, errors_and_positions_as_jansson_says);
    tcase_add_test(tc, the_allocator_is_counted);
    tcase_add_test(tc, dumps_exact_or_null);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
