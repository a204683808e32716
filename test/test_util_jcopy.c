/* test_util_jcopy -- util_json_copy: a whole shallow copy or NULL, never a partial one. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/alloc.h"
#include "util/jcopy.h"

#include "oom_wrap.h"

#include <check.h>
#include <stdlib.h>

START_TEST(copies_share_the_members)
{
    json_t *o = json_pack("{s:i, s:{s:s}, s:[i,i]}", "a", 1, "spec", "x", "y", "list", 1, 2);
    json_t *c = util_json_copy(o), *l;

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_ne(c, o);
    ck_assert(json_equal(c, o));
    ck_assert_ptr_eq(json_object_get(c, "spec"), json_object_get(o, "spec")); /* shallow */
    l = util_json_copy(json_object_get(o, "list"));
    ck_assert_int_eq(json_array_size(l), 2);
    ck_assert_ptr_null(util_json_copy(NULL));
    json_decref(l);
    json_decref(c);
    json_decref(o);
}
END_TEST

/* Each allocation of a copy fails in turn: NULL, or the whole copy -- where json_copy() hands
 * back an object that lost a member (the failure test_ctrl_oom found: a ClusterQueue copied
 * without its spec decoded as one without quota). */
START_TEST(out_of_memory_is_null_never_partial)
{
    json_t *o = json_pack("{s:i, s:{s:s}, s:[i,i], s:s}", "a", 1, "spec", "x", "y", "list", 1, 2,
                          "kind", "ClusterQueue");
    json_t *arr = json_pack("[i,s,{}]", 1, "x");
    int partial = 0;

    for (long n = 1;; n++) {
        json_t *c, *p;
        long made;

        oom_fail_at(n);
        c = util_json_copy(o);
        made = oom_count();
        oom_fail_at(n);
        p = json_copy(o);
        oom_fail_at(0);
        if (p != NULL && json_object_size(p) != json_object_size(o))
            partial++;
        json_decref(p);
        if (made < n) {
            ck_assert(json_equal(c, o));
            json_decref(c);
            break;
        }
        ck_assert_ptr_null(c);
    }
    ck_assert_int_gt(partial, 0); /* jansson's own copy does lose members */
    for (long n = 1;; n++) {
        json_t *c;
        long made;

        oom_fail_at(n);
        c = util_json_copy(arr);
        made = oom_count();
        oom_fail_at(0);
        if (made < n) {
            ck_assert(json_equal(c, arr));
            json_decref(c);
            break;
        }
        ck_assert_ptr_null(c);
    }
    json_decref(arr);
    json_decref(o);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("util_jcopy");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    util_alloc_install();
    tcase_add_test(tc, copies_share_the_members);
    tcase_add_test(tc, out_of_memory_is_null_never_partial);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
