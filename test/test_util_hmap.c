/* test_util_hmap -- the string-keyed map: put, get, replace, delete, iterate, grow; SipHash. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hmap.h"

#include "oom_wrap.h"

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

/* Indices as values (the simulator's name -> document/record index maps): 0 is a value. */
START_TEST(index_values)
{
    util_hmap_t m;
    size_t idx = 77;

    util_hmap_init(&m, 7);
    ck_assert(!util_hmap_get_index(&m, "cq/a", &idx));
    ck_assert_uint_eq(idx, 77); /* untouched */
    ck_assert_int_eq(util_hmap_put_index(&m, "cq/a", 0), ERR_OK);
    ck_assert_int_eq(util_hmap_put_index(&m, "cohort/a", 41), ERR_OK);
    ck_assert(util_hmap_get_index(&m, "cq/a", &idx));
    ck_assert_uint_eq(idx, 0);
    ck_assert(util_hmap_get_index(&m, "cohort/a", &idx));
    ck_assert_uint_eq(idx, 41);
    ck_assert_int_eq(util_hmap_put_index(&m, "cq/a", 5), ERR_OK);
    ck_assert(util_hmap_get_index(&m, "cq/a", &idx));
    ck_assert_uint_eq(idx, 5);
    ck_assert_uint_eq(util_hmap_len(&m), 2);
    /* Presence alone (no index wanted): provctl asked so with NULL for a request whose DELETE
     * was in flight, and the write through NULL killed `sluice run` (integration_ctrl_provreq's
     * silent minute after attempt 2). */
    ck_assert(util_hmap_get_index(&m, "cq/a", NULL));
    ck_assert(!util_hmap_get_index(&m, "cq/b", NULL));
    util_hmap_fini(&m);
}
END_TEST

/* Keys are copied: the caller's buffer may change after the put. */
START_TEST(keys_are_copied)
{
    util_hmap_t m;
    char key[16];
    int a = 1;

    util_hmap_init(&m, 0);
    snprintf(key, sizeof(key), "team-a");
    ck_assert_int_eq(util_hmap_put(&m, key, &a, NULL), ERR_OK);
    snprintf(key, sizeof(key), "team-b");
    ck_assert_ptr_eq(util_hmap_get(&m, "team-a"), &a);
    ck_assert_ptr_null(util_hmap_get(&m, "team-b"));
    util_hmap_fini(&m);
}
END_TEST

/* Borrowed keys: the map stores the caller's pointer (no copy), a replacing put keeps the new
 * key (the old one may be freed with the old value), and deletes and fini free no key. Under
 * ASan a freed key still read, or a key freed twice, fails the test. */
START_TEST(borrowed_keys_are_the_callers)
{
    util_hmap_t m;
    char *k1 = strdup("team-a"), *k2 = strdup("team-a"), *k3 = strdup("team-b");
    const char *got = NULL;
    void *old = NULL, *v = NULL;
    size_t pos = 0;
    int a = 1, b = 2, c = 3;

    ck_assert(k1 != NULL && k2 != NULL && k3 != NULL);
    util_hmap_init_borrowed(&m, 5);
    ck_assert_int_eq(util_hmap_put(&m, k1, &a, NULL), ERR_OK);
    ck_assert(util_hmap_next(&m, &pos, &got, &v));
    ck_assert_ptr_eq(got, k1); /* the caller's pointer */
    ck_assert_int_eq(util_hmap_put(&m, k2, &b, &old), ERR_OK);
    ck_assert_ptr_eq(old, &a);
    free(k1); /* went with the replaced value */
    pos = 0;
    ck_assert(util_hmap_next(&m, &pos, &got, &v));
    ck_assert_ptr_eq(got, k2);
    ck_assert_ptr_eq(util_hmap_get(&m, "team-a"), &b);
    for (int i = 0; i < 100; i++) { /* growth moves slots, not keys */
        static char names[100][8];
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        ck_assert_int_eq(util_hmap_put(&m, names[i], &c, NULL), ERR_OK);
    }
    ck_assert_int_eq(util_hmap_put(&m, k3, &c, NULL), ERR_OK);
    ck_assert_ptr_eq(util_hmap_del(&m, "team-b"), &c);
    free(k3);
    ck_assert_ptr_null(util_hmap_get(&m, "team-b"));
    ck_assert_ptr_eq(util_hmap_get(&m, "team-a"), &b);
    ck_assert_uint_eq(util_hmap_len(&m), 101);
    util_hmap_fini(&m);
    free(k2);
}
END_TEST

/* Each allocation of a put fails in turn: ERR_NOMEM, and every entry stays as it was. */
START_TEST(put_failures_leave_the_map)
{
    static char names[64][16];
    util_hmap_t m;
    size_t idx;
    long failures = 0;

    util_hmap_init(&m, 3);
    for (size_t i = 0; i < 64; i++) {
        snprintf(names[i], sizeof(names[i]), "k%zu", i);
        for (long n = 1;; n++) {
            err_t rc;
            oom_fail_at(n);
            rc = util_hmap_put_index(&m, names[i], i);
            oom_fail_at(0);
            if (rc == ERR_OK)
                break;
            ck_assert_int_eq(rc, ERR_NOMEM);
            failures++;
            ck_assert_uint_eq(util_hmap_len(&m), i);
            ck_assert(!util_hmap_get_index(&m, names[i], &idx));
        }
        for (size_t j = 0; j <= i; j++) {
            ck_assert(util_hmap_get_index(&m, names[j], &idx));
            ck_assert_uint_eq(idx, j);
        }
    }
    ck_assert_int_gt(failures, 64); /* a key copy per put, and the table's growths */
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
    tcase_add_test(tc, index_values);
    tcase_add_test(tc, keys_are_copied);
    tcase_add_test(tc, borrowed_keys_are_the_callers);
    tcase_add_test(tc, put_failures_leave_the_map);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
