/* test_util_hmap -- the string-keyed map: put, get, replace, delete, iterate, grow; SipHash. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hmap.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(siphash_reference_vector)
{
    /* The SipHash-2-4 paper's vector: key 00..0f, message 00..0e. */
    unsigned char msg[15];
    uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;

    for (int i = 0; i < 15; i++)
        msg[i] = (unsigned char)i;
    ck_assert_uint_eq(util_siphash(2, 4, k0, k1, msg, sizeof(msg)), 0xa129ca6149be45e5ULL);
    /* The empty message of the same key. */
    ck_assert_uint_eq(util_siphash(2, 4, k0, k1, msg, 0), 0x726fdb47dd0e0e31ULL);
}
END_TEST

START_TEST(put_get_replace_delete)
{
    util_hmap_t m;
    int a = 1, b = 2, c = 3;
    void *old = &a;

    util_hmap_init(&m, 42);
    ck_assert_ptr_null(util_hmap_get(&m, "x"));
    ck_assert_ptr_null(util_hmap_del(&m, "x"));
    ck_assert_int_eq(util_hmap_put(&m, "ns/a", &a, &old), ERR_OK);
    ck_assert_ptr_null(old);
    ck_assert_int_eq(util_hmap_put(&m, "ns/b", &b, NULL), ERR_OK);
    ck_assert_ptr_eq(util_hmap_get(&m, "ns/a"), &a);
    ck_assert_int_eq(util_hmap_put(&m, "ns/a", &c, &old), ERR_OK);
    ck_assert_ptr_eq(old, &a);
    ck_assert_ptr_eq(util_hmap_get(&m, "ns/a"), &c);
    ck_assert_uint_eq(util_hmap_len(&m), 2);
    ck_assert_ptr_eq(util_hmap_del(&m, "ns/a"), &c);
    ck_assert_ptr_null(util_hmap_get(&m, "ns/a"));
    ck_assert_ptr_eq(util_hmap_get(&m, "ns/b"), &b);
    ck_assert_uint_eq(util_hmap_len(&m), 1);
    util_hmap_fini(&m);
    ck_assert_uint_eq(util_hmap_len(&m), 0);
    util_hmap_fini(&m); /* twice is fine */
}
END_TEST

START_TEST(grows_survives_churn_and_iterates)
{
    util_hmap_t m;
    static int vals[5000];
    char key[32];
    size_t pos = 0, n = 0;
    const char *k;
    void *v;

    util_hmap_init(&m, 0);
    /* Many puts and deletes: tombstones never fill the table, everything stays findable. */
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 5000; i++) {
            snprintf(key, sizeof(key), "k%d", i);
            ck_assert_int_eq(util_hmap_put(&m, key, &vals[i], NULL), ERR_OK);
        }
        for (int i = 0; i < 5000; i += 2) {
            snprintf(key, sizeof(key), "k%d", i);
            ck_assert_ptr_eq(util_hmap_del(&m, key), &vals[i]);
        }
    }
    ck_assert_uint_eq(util_hmap_len(&m), 2500);
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        ck_assert_ptr_eq(util_hmap_get(&m, key), i % 2 ? &vals[i] : NULL);
    }
    ck_assert_uint_le(m.cap, 16384);
    /* Iteration sees each entry once; deleting the current one is allowed. */
    while (util_hmap_next(&m, &pos, &k, &v)) {
        ck_assert_ptr_eq(v, &vals[atoi(k + 1)]);
        ck_assert_ptr_eq(util_hmap_del(&m, k), v);
        n++;
    }
    ck_assert_uint_eq(n, 2500);
    ck_assert_uint_eq(util_hmap_len(&m), 0);
    util_hmap_fini(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_hmap");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, siphash_reference_vector);
    tcase_add_test(tc, put_get_replace_delete);
    tcase_add_test(tc, grows_survives_churn_and_iterates);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
