/* test_selector -- label selector, node selector and toleration truth tables; name checks. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/names.h"
#include "model/object.h"
#include "model/selector.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* labels {env: prod, gpu: a100, size: 8} */
static kv_list_t labels(void)
{
    kv_list_t l = {0};

    ck_assert_int_eq(kv_list_set(&l, "size", "8"), ERR_OK);
    ck_assert_int_eq(kv_list_set(&l, "env", "prod"), ERR_OK);
    ck_assert_int_eq(kv_list_set(&l, "gpu", "a100"), ERR_OK);
    return l;
}

static selector_req_t req(const char *key, selector_op_t op, const char *v1, const char *v2)
{
    selector_req_t r = {0};

    r.key = strdup(key);
    r.op = op;
    r.nvalues = (v1 != NULL) + (v2 != NULL);
    if (r.nvalues > 0) {
        r.values = calloc(r.nvalues, sizeof(char *));
        r.values[0] = strdup(v1);
        if (v2 != NULL)
            r.values[1] = strdup(v2);
    }
    return r;
}

START_TEST(requirements)
{
    kv_list_t l = labels();
    static const struct {
        const char *key;
        selector_op_t op;
        const char *v1, *v2;
        bool want;
    } cases[] = {
        {"env", SELECTOR_OP_IN, "prod", "dev", true},
        {"env", SELECTOR_OP_IN, "dev", NULL, false},
        {"missing", SELECTOR_OP_IN, "prod", NULL, false},
        {"env", SELECTOR_OP_IN, NULL, NULL, false},
        {"env", SELECTOR_OP_NOT_IN, "dev", NULL, true},
        {"env", SELECTOR_OP_NOT_IN, "prod", NULL, false},
        {"missing", SELECTOR_OP_NOT_IN, "prod", NULL, true}, /* absent key satisfies NotIn */
        {"gpu", SELECTOR_OP_EXISTS, NULL, NULL, true},
        {"missing", SELECTOR_OP_EXISTS, NULL, NULL, false},
        {"gpu", SELECTOR_OP_DOES_NOT_EXIST, NULL, NULL, false},
        {"missing", SELECTOR_OP_DOES_NOT_EXIST, NULL, NULL, true},
        {"size", SELECTOR_OP_GT, "4", NULL, true},
        {"size", SELECTOR_OP_GT, "8", NULL, false},
        {"size", SELECTOR_OP_LT, "9", NULL, true},
        {"size", SELECTOR_OP_LT, "-1", NULL, false},
        {"size", SELECTOR_OP_GT, "4", "5", false},     /* exactly one value */
        {"size", SELECTOR_OP_GT, "four", NULL, false}, /* not an integer */
        {"gpu", SELECTOR_OP_GT, "1", NULL, false},     /* label not an integer */
        {"missing", SELECTOR_OP_LT, "100", NULL, false},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        selector_req_t r = req(cases[i].key, cases[i].op, cases[i].v1, cases[i].v2);
        ck_assert_msg(selector_req_matches(&r, &l) == cases[i].want, "case %zu", i);
        selector_req_fini(&r);
    }
    kv_list_fini(&l);
}
END_TEST

START_TEST(label_selectors)
{
    kv_list_t l = labels(), empty = {0};
    label_selector_t sel = {0};

    ck_assert(!selector_matches(&sel, &l)); /* nil selects nothing */
    sel.present = true;
    ck_assert(selector_matches(&sel, &l)); /* {} selects everything */
    ck_assert(selector_matches(&sel, &empty));
    ck_assert_int_eq(kv_list_set(&sel.match_labels, "env", "prod"), ERR_OK);
    ck_assert(selector_matches(&sel, &l));
    ck_assert(!selector_matches(&sel, &empty));
    sel.exprs = calloc(1, sizeof(*sel.exprs));
    sel.nexprs = 1;
    sel.exprs[0] = req("gpu", SELECTOR_OP_IN, "h100", NULL);
    ck_assert(!selector_matches(&sel, &l)); /* both parts must hold */
    free(sel.exprs[0].values[0]);
    sel.exprs[0].values[0] = strdup("a100");
    ck_assert(selector_matches(&sel, &l));
    ck_assert_int_eq(kv_list_set(&sel.match_labels, "env", "dev"), ERR_OK); /* replaces */
    ck_assert_uint_eq(sel.match_labels.len, 1);
    ck_assert(!selector_matches(&sel, &l));
    label_selector_fini(&sel);

    /* nodeSelector maps */
    ck_assert(selector_map_matches(&empty, &l));
    ck_assert_int_eq(kv_list_set(&empty, "gpu", "a100"), ERR_OK);
    ck_assert(selector_map_matches(&empty, &l));
    ck_assert_int_eq(kv_list_set(&empty, "zone", "a"), ERR_OK);
    ck_assert(!selector_map_matches(&empty, &l));
    kv_list_fini(&empty);
    kv_list_fini(&l);
}
END_TEST

START_TEST(node_terms)
{
    kv_list_t l = labels();
    node_selector_term_t terms[2] = {{0}, {0}};

    ck_assert(selector_terms_match(NULL, 0, &l));     /* no affinity: no constraint */
    ck_assert(!selector_term_matches(&terms[0], &l)); /* an empty term matches nothing */
    ck_assert(!selector_terms_match(terms, 2, &l));
    terms[0].exprs = calloc(2, sizeof(selector_req_t));
    terms[0].nexprs = 2;
    terms[0].exprs[0] = req("gpu", SELECTOR_OP_IN, "a100", NULL);
    terms[0].exprs[1] = req("size", SELECTOR_OP_GT, "16", NULL);
    ck_assert(!selector_term_matches(&terms[0], &l)); /* expressions are ANDed */
    terms[1].exprs = calloc(1, sizeof(selector_req_t));
    terms[1].nexprs = 1;
    terms[1].exprs[0] = req("env", SELECTOR_OP_EXISTS, NULL, NULL);
    ck_assert(selector_terms_match(terms, 2, &l)); /* terms are ORed */
    for (int i = 0; i < 2; i++) {
        for (size_t j = 0; j < terms[i].nexprs; j++)
            selector_req_fini(&terms[i].exprs[j]);
        free(terms[i].exprs);
    }
    kv_list_fini(&l);
}
END_TEST

START_TEST(tolerations)
{
    char gpu[] = "gpu", other[] = "other", yes[] = "true", no[] = "false", empty[] = "";
    taint_t t = {gpu, yes, TAINT_EFFECT_NO_SCHEDULE};
    taint_t t_noval = {gpu, NULL, TAINT_EFFECT_NO_EXECUTE};
    taint_t t_pref = {other, NULL, TAINT_EFFECT_PREFER_NO_SCHEDULE};
    static const struct {
        int key;   /* 0 NULL, 1 gpu, 2 other, 3 "" */
        int value; /* 0 NULL, 1 true, 2 false */
        toleration_op_t op;
        taint_effect_t effect;
        bool want_t, want_noval;
    } cases[] = {
        {1, 1, TOLERATION_OP_EQUAL, TAINT_EFFECT_ANY, true, false},
        {1, 1, TOLERATION_OP_EQUAL, TAINT_EFFECT_NO_SCHEDULE, true, false},
        {1, 1, TOLERATION_OP_EQUAL, TAINT_EFFECT_NO_EXECUTE, false, false},
        {1, 2, TOLERATION_OP_EQUAL, TAINT_EFFECT_ANY, false, false},
        {1, 0, TOLERATION_OP_EQUAL, TAINT_EFFECT_ANY, false, true}, /* "" == absent */
        {1, 0, TOLERATION_OP_EXISTS, TAINT_EFFECT_ANY, true, true},
        {2, 0, TOLERATION_OP_EXISTS, TAINT_EFFECT_ANY, false, false},
        {0, 0, TOLERATION_OP_EXISTS, TAINT_EFFECT_ANY, true, true}, /* match everything */
        {3, 0, TOLERATION_OP_EXISTS, TAINT_EFFECT_NO_EXECUTE, false, true},
        {0, 1, TOLERATION_OP_EQUAL, TAINT_EFFECT_ANY, true, false}, /* empty key, Equal */
    };
    char *keys[] = {NULL, gpu, other, empty};
    char *values[] = {NULL, yes, no};

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        toleration_t tol = {
            keys[cases[i].key], values[cases[i].value], cases[i].op, cases[i].effect, false, 0};
        ck_assert_msg(selector_tolerates(&tol, &t) == cases[i].want_t, "case %zu (t)", i);
        ck_assert_msg(selector_tolerates(&tol, &t_noval) == cases[i].want_noval, "case %zu (noval)",
                      i);
    }

    {
        taint_t taints[3] = {t_pref, t, t_noval};
        toleration_t pod[1] = {{gpu, yes, TOLERATION_OP_EQUAL, TAINT_EFFECT_ANY, false, 0}};
        toleration_t flavor[1] = {
            {gpu, NULL, TOLERATION_OP_EXISTS, TAINT_EFFECT_NO_EXECUTE, false, 0}};
        /* PreferNoSchedule never blocks; NoSchedule needs the pod's, NoExecute the flavor's. */
        ck_assert_ptr_eq(selector_untolerated(taints, 3, NULL, 0, NULL, 0), &taints[1]);
        ck_assert_ptr_eq(selector_untolerated(taints, 3, pod, 1, NULL, 0), &taints[2]);
        ck_assert_ptr_null(selector_untolerated(taints, 3, pod, 1, flavor, 1));
        ck_assert(selector_tolerated(flavor, 1, &t_noval));
        ck_assert(!selector_tolerated(flavor, 1, &t));
    }
}
END_TEST

START_TEST(names)
{
    names_msgs_t m;
    diags_t d;
    char long_name[300];

    ck_assert(names_is_label_key("app"));
    ck_assert(names_is_label_key("example.com/My_name-1.x"));
    ck_assert(!names_is_label_key("-app"));
    ck_assert(!names_is_label_key("a/b/c"));
    ck_assert(!names_is_label_key("Example.com/x"));
    ck_assert(names_is_label_value(""));
    ck_assert(names_is_label_value("v1.2_3"));
    ck_assert(!names_is_label_value("v "));
    ck_assert(names_is_dns1123_subdomain("a.b-c.d"));
    ck_assert(!names_is_dns1123_subdomain("a..b"));
    ck_assert(!names_is_dns1123_subdomain("A"));
    ck_assert(!names_is_dns1123_subdomain(""));
    ck_assert(names_is_dns1123_label("main"));
    ck_assert(!names_is_dns1123_label("a.b"));

    names_label_key("/x", &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0], "prefix part must be non-empty");
    names_label_key("a/b/c", &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0],
                     "a valid label key must consist of alphanumeric characters, '-', '_' or '.', "
                     "and must start and end with an alphanumeric character (e.g. 'MyName',  or "
                     "'my.name',  or '123-abc', regex used for validation is "
                     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                     "prefix and '/' (e.g. 'example.com/MyName')");
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    names_label_key(long_name, &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0], "name part must be no more than 63 bytes");
    names_label_value(long_name, &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0], "must be no more than 63 bytes");
    names_dns1123_label("a.b", &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0], "must not contain dots");
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    names_dns1123_subdomain(long_name, &m);
    ck_assert_int_eq(m.n, 1);
    ck_assert_str_eq(m.text[0], "must be no more than 253 bytes");

    diags_init(&d);
    names_dns1123_subdomain("Bad_Name", &m);
    names_report(&d, "metadata.name", "Bad_Name", &m);
    ck_assert_uint_eq(d.nerrors, 1);
    ck_assert_str_eq(d.items[0].path, "metadata.name");
    ck_assert_str_eq(d.items[0].message,
                     "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of "
                     "lower case alphanumeric characters, '-' or '.', and must start and end with "
                     "an alphanumeric character (e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    diags_fini(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("selector");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, requirements);
    tcase_add_test(tc, label_selectors);
    tcase_add_test(tc, node_terms);
    tcase_add_test(tc, tolerations);
    tcase_add_test(tc, names);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
