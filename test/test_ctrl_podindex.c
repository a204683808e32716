/* test_ctrl_podindex -- the pod-group index: members by "ns/group", moves, deletions, and a
 * group's lookup that reads its own members only, however many Pods there are. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/podindex.h"

#define OOM_WRAP_STRDUP
#include "oom_wrap.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static bool has(const podindex_t *x, const char *group, const char *pod)
{
    const char *const *keys;
    size_t n;

    podindex_members(x, group, &keys, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(keys[i], pod) == 0)
            return true;
    return false;
}

static size_t count(const podindex_t *x, const char *group)
{
    const char *const *keys;
    size_t n;

    podindex_members(x, group, &keys, &n);
    return n;
}

START_TEST(members_by_group_and_namespace)
{
    podindex_t x;

    podindex_init(&x);
    ck_assert_int_eq(podindex_move(&x, "a/p0", NULL, "a/g"), ERR_OK);
    ck_assert_int_eq(podindex_move(&x, "a/p1", NULL, "a/g"), ERR_OK);
    ck_assert_int_eq(podindex_move(&x, "b/p0", NULL, "b/g"), ERR_OK); /* same name, other ns */
    ck_assert_int_eq(podindex_move(&x, "a/p2", NULL, NULL), ERR_OK);  /* a single Pod */
    ck_assert_uint_eq(count(&x, "a/g"), 2);
    ck_assert(has(&x, "a/g", "a/p0") && has(&x, "a/g", "a/p1"));
    ck_assert_uint_eq(count(&x, "b/g"), 1);
    ck_assert_uint_eq(count(&x, "a/none"), 0);
    ck_assert_uint_eq(podindex_groups(&x), 2);
    /* An update that keeps the group, and a replayed add, change nothing. */
    ck_assert_int_eq(podindex_move(&x, "a/p0", "a/g", "a/g"), ERR_OK);
    ck_assert_int_eq(podindex_move(&x, "a/p0", NULL, "a/g"), ERR_OK);
    ck_assert_uint_eq(count(&x, "a/g"), 2);
    podindex_fini(&x);
}
END_TEST

START_TEST(moves_and_deletions)
{
    podindex_t x;
    const char *const *keys;
    size_t n;

    podindex_init(&x);
    ck_assert_int_eq(podindex_move(&x, "a/p0", NULL, "a/g"), ERR_OK);
    ck_assert_int_eq(podindex_move(&x, "a/p1", NULL, "a/g"), ERR_OK);
    /* A StatefulSet's Pod joins its group when the operator marks it: no group -> group. */
    ck_assert_int_eq(podindex_move(&x, "a/p2", NULL, NULL), ERR_OK);
    ck_assert_int_eq(podindex_move(&x, "a/p2", NULL, "a/h"), ERR_OK);
    ck_assert(has(&x, "a/h", "a/p2"));
    ck_assert_int_eq(podindex_move(&x, "a/p0", "a/g", "a/h"), ERR_OK);
    ck_assert(!has(&x, "a/g", "a/p0") && has(&x, "a/h", "a/p0"));
    /* Deleted: gone from its group; the last one takes the group with it. */
    ck_assert_int_eq(podindex_move(&x, "a/p1", "a/g", NULL), ERR_OK);
    podindex_members(&x, "a/g", &keys, &n);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(keys);
    ck_assert_uint_eq(podindex_groups(&x), 1);
    /* Deleting a Pod the index never had is harmless. */
    ck_assert_int_eq(podindex_move(&x, "a/zz", "a/h", NULL), ERR_OK);
    ck_assert_uint_eq(count(&x, "a/h"), 2);
    podindex_fini(&x);
    /* Usable after fini. */
    ck_assert_int_eq(podindex_move(&x, "a/p0", NULL, "a/g"), ERR_OK);
    podindex_fini(&x);
}
END_TEST

/* 20,000 Pods in 5,000 groups of 4: each group's lookup gives exactly its 4, and removing every
 * other Pod leaves the rest in place. */
START_TEST(many_groups)
{
    podindex_t x;
    char pod[64], grp[64];

    podindex_init(&x);
    for (int i = 0; i < 20000; i++) {
        snprintf(pod, sizeof(pod), "ns/p%d", i);
        snprintf(grp, sizeof(grp), "ns/g%d", i / 4);
        ck_assert_int_eq(podindex_move(&x, pod, NULL, grp), ERR_OK);
    }
    ck_assert_uint_eq(podindex_groups(&x), 5000);
    for (int g = 0; g < 5000; g += 997) {
        snprintf(grp, sizeof(grp), "ns/g%d", g);
        ck_assert_uint_eq(count(&x, grp), 4);
        snprintf(pod, sizeof(pod), "ns/p%d", g * 4 + 3);
        ck_assert(has(&x, grp, pod));
    }
    for (int i = 0; i < 20000; i += 2) {
        snprintf(pod, sizeof(pod), "ns/p%d", i);
        snprintf(grp, sizeof(grp), "ns/g%d", i / 4);
        ck_assert_int_eq(podindex_move(&x, pod, grp, NULL), ERR_OK);
    }
    ck_assert_uint_eq(podindex_groups(&x), 5000);
    ck_assert_uint_eq(count(&x, "ns/g7"), 2);
    ck_assert(has(&x, "ns/g7", "ns/p29") && !has(&x, "ns/g7", "ns/p28"));
    podindex_fini(&x);
}
END_TEST

/* Every allocation of a move fails in turn (a new group, a group that grows): ERR_NOMEM, the Pod
 * left out of its new group, nothing else changed, nothing leaked (ASan). */
START_TEST(out_of_memory)
{
    podindex_t x;
    char pod[32];
    long n, made;
    err_t rc;

    for (int grow = 0; grow < 2; grow++) {
        for (n = 1;; n++) {
            podindex_init(&x);
            /* grow: a group of 4 members, full, so the fifth reallocates its array. */
            for (int i = 0; grow && i < 4; i++) {
                snprintf(pod, sizeof(pod), "ns/m%d", i);
                ck_assert_int_eq(podindex_move(&x, pod, NULL, "ns/g"), ERR_OK);
            }
            oom_fail_at(n);
            rc = podindex_move(&x, "ns/p", "ns/old", "ns/g");
            made = oom_count();
            oom_fail_at(0);
            if (made < n) {
                ck_assert_int_eq(rc, ERR_OK);
                ck_assert(has(&x, "ns/g", "ns/p"));
                podindex_fini(&x);
                break;
            }
            ck_assert_int_eq(rc, ERR_NOMEM);
            ck_assert(!has(&x, "ns/g", "ns/p"));
            ck_assert_uint_eq(count(&x, "ns/g"), grow ? 4 : 0);
            ck_assert_uint_eq(podindex_groups(&x), grow ? 1 : 0);
            podindex_fini(&x);
        }
        ck_assert_int_gt(n, 1); /* at least one allocation was failed */
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_podindex");
    TCase *tc = tcase_create("podindex");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, members_by_group_and_namespace);
    tcase_add_test(tc, moves_and_deletions);
    tcase_add_test(tc, many_groups);
    tcase_add_test(tc, out_of_memory);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
