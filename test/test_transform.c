/* test_transform -- the Configuration's `resources` section: decoding and validation (field
 * paths), quantity products, and the quota requests it derives (requests_effective). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/object.h"
#include "model/requests.h"
#include "squote.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers -----------------------------------------------------------------------------------
 */

static quantity_t q(const char *text)
{
    quantity_t v;

    ck_assert_int_eq(quantity_parse(text, strlen(text), &v, NULL), ERR_OK);
    return v;
}

/* "a=1 b=2Gi" into a sorted list (names and quantities without spaces). */
static void list_of(const char *spec, resource_list_t *out)
{
    char buf[512], *save = NULL;

    memset(out, 0, sizeof(*out));
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        resource_list_t one = {0};
        ck_assert_ptr_nonnull(eq);
        *eq = '\0';
        one.items = calloc(1, sizeof(resource_t));
        ck_assert_ptr_nonnull(one.items);
        one.items[0].name = strdup(tok);
        one.items[0].value = q(eq + 1);
        one.len = 1;
        ck_assert_int_eq(requests_add(out, &one, NULL), ERR_OK);
        resource_list_fini(&one);
    }
}

/* "cpu=1500m memory=3Gi" rendering of a list. */
static const char *render(const resource_list_t *l, char *buf, size_t size)
{
    size_t n = 0;
    char v[QUANTITY_STR_MAX];

    buf[0] = '\0';
    for (size_t i = 0; i < l->len; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", i ? " " : "", l->items[i].name,
                              quantity_format(l->items[i].value, v));
    return buf;
}

/* A Configuration whose `resources` is `resources` (single-quoted JSON), decoded. Returns the
 * decode result; the diagnostics go to `d` (initialised here). */
static err_t decode_with(const char *api, const char *resources, object_t *obj, diags_t *d)
{
    char text[4096];
    json_t *j;
    err_t rc;

    snprintf(text, sizeof(text),
             "{'apiVersion':'config.kueue.x-k8s.io/%s','kind':'Configuration','resources':%s}", api,
             resources);
    j = squote_json(text);
    diags_init(d);
    rc = object_decode(j, obj, d);
    json_decref(j);
    return rc;
}

/* All diagnostics as "E|W path: message" lines. */
static const char *diag_text(const diags_t *d, char *buf, size_t size)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < d->len && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s %s: %s\n", d->items[i].warning ? "W" : "E",
                              d->items[i].path, d->items[i].message);
    return buf;
}

/* The rules of a decoded v1beta2 Configuration with `resources`; the test fails on any
 * diagnostic. */
static void rules_from(const char *resources, object_t *obj)
{
    diags_t d;
    char buf[2048];

    ck_assert_msg(decode_with("v1beta2", resources, obj, &d) == ERR_OK && d.len == 0, "%s",
                  diag_text(&d, buf, sizeof(buf)));
    diags_fini(&d);
}

/* requests_effective(rules of `resources`, `in`) rendered. */
static void expect_effective(const char *resources, const char *in, const char *want)
{
    object_t obj;
    resource_list_t l, out = {0};
    char buf[512];

    rules_from(resources, &obj);
    list_of(in, &l);
    ck_assert_int_eq(requests_effective(&obj.u.config.resources, &l, &out, NULL), ERR_OK);
    ck_assert_str_eq(render(&out, buf, sizeof(buf)), want);
    resource_list_fini(&l);
    resource_list_fini(&out);
    object_fini(&obj);
}

/* ---- quantity products -------------------------------------------------------------------------
 */

START_TEST(quantity_products)
{
    quantity_t out;
    char buf[QUANTITY_STR_MAX];
    err_msg_t msg = {{0}};

    ck_assert_int_eq(quantity_mul_quantity(q("2"), q("10Gi"), &out, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), "20Gi");
    ck_assert_int_eq(quantity_mul_quantity(q("500m"), q("3"), &out, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), "1500m");
    ck_assert_int_eq(quantity_mul_quantity(q("-2"), q("250m"), &out, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), "-500m");
    ck_assert_int_eq(quantity_mul_quantity(q("-2"), q("-2"), &out, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), "4");
    ck_assert_int_eq(quantity_mul_quantity(q("7"), q("0"), &out, NULL), ERR_OK);
    ck_assert(out.nano == 0);
    /* below one nano-unit: rounded away from zero, as parsing does */
    ck_assert_int_eq(quantity_mul_quantity(q("1n"), q("1n"), &out, NULL), ERR_OK);
    ck_assert(out.nano == 1);
    ck_assert_int_eq(quantity_mul_quantity(q("-1n"), q("500m"), &out, NULL), ERR_OK);
    ck_assert(out.nano == -1);
    /* exact far beyond int64 nano-units: 10^12 * 10^12 = 10^24 units */
    ck_assert_int_eq(quantity_mul_quantity(q("1T"), q("1T"), &out, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), "1e24");
    /* the ceiling is 10^27 units */
    ck_assert_int_eq(quantity_mul_quantity(q("1e14"), q("1e13"), &out, NULL), ERR_OK);
    ck_assert_int_eq(quantity_mul_quantity(q("1e14"), q("1e14"), &out, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "quantity 100e12 times 100e12 is out of range");
    ck_assert_int_eq(quantity_mul_quantity(q("1e18"), q("1e18"), &out, NULL), ERR_OVERFLOW);
    ck_assert_int_eq(quantity_mul_quantity(q("1e27"), q("1"), &out, NULL), ERR_OK);
    ck_assert_int_eq(quantity_mul_quantity(q("1e27"), q("1000000001n"), &out, NULL), ERR_OVERFLOW);
}
END_TEST

/* ---- requests_effective ------------------------------------------------------------------------
 */

START_TEST(no_rules)
{
    resource_list_t l, out = {0};
    char buf[256];

    list_of("cpu=2 nvidia.com/gpu=1", &l);
    ck_assert_int_eq(requests_effective(NULL, &l, &out, NULL), ERR_OK);
    ck_assert_str_eq(render(&out, buf, sizeof(buf)), "cpu=2 nvidia.com/gpu=1");
    resource_list_fini(&l);
    resource_list_fini(&out);
    expect_effective("{}", "cpu=2", "cpu=2");
}
END_TEST

/* Issue 17's example: a MIG slice replaced by 10Gi of a GPU-memory resource. */
START_TEST(replace_and_retain)
{
    const char *mig = "{'transformations':[{'input':'nvidia.com/mig-1g.10gb','strategy':'Replace',"
                      "'outputs':{'example.com/gpu-memory':'10Gi'}}]}";
    expect_effective(mig, "cpu=1 nvidia.com/mig-1g.10gb=2", "cpu=1 example.com/gpu-memory=20Gi");
    /* no strategy: Retain, Kueue's default -- the input stays beside its outputs */
    expect_effective("{'transformations':[{'input':'nvidia.com/mig-1g.10gb',"
                     "'outputs':{'example.com/gpu-memory':'10Gi'}}]}",
                     "nvidia.com/mig-1g.10gb=2",
                     "example.com/gpu-memory=20Gi nvidia.com/mig-1g.10gb=2");
    /* a pod that does not request the input is unchanged */
    expect_effective(mig, "cpu=1 memory=1Gi", "cpu=1 memory=1Gi");
    /* Replace without outputs: the input is ignored */
    expect_effective("{'transformations':[{'input':'example.com/nic','strategy':'Replace'}]}",
                     "cpu=1 example.com/nic=4", "cpu=1");
}
END_TEST

/* Several outputs, and outputs of several inputs adding up (also onto a request of the pod). */
START_TEST(multiple_outputs)
{
    const char *two = "{'transformations':["
                      "{'input':'nvidia.com/mig-1g.10gb','strategy':'Replace',"
                      "'outputs':{'example.com/gpu-memory':'10Gi','example.com/slices':'1'}},"
                      "{'input':'nvidia.com/mig-3g.40gb','strategy':'Replace',"
                      "'outputs':{'example.com/gpu-memory':'40Gi','example.com/slices':'3',"
                      "'cpu':'500m'}}]}";
    expect_effective(two, "cpu=1 nvidia.com/mig-1g.10gb=2 nvidia.com/mig-3g.40gb=1",
                     "cpu=1500m example.com/gpu-memory=60Gi example.com/slices=5");
}
END_TEST

/* A negative amount per unit is an allowance against other outputs, never below zero and never
 * against what the pod asked for itself. */
START_TEST(negative_outputs)
{
    const char *allow = "{'transformations':["
                        "{'input':'a.com/x','strategy':'Replace','outputs':{'a.com/credit':'3'}},"
                        "{'input':'a.com/y','strategy':'Replace','outputs':{'a.com/credit':'-1',"
                        "'cpu':'-1'}}]}";
    /* credit: 2*3 - 1*1 = 5; cpu: the generated -1 floors at 0 and leaves the pod's 2 alone */
    expect_effective(allow, "a.com/x=2 a.com/y=1 cpu=2", "a.com/credit=5 cpu=2");
    /* credit alone negative: 0 */
    expect_effective(allow, "a.com/y=4", "a.com/credit=0 cpu=0");
}
END_TEST

/* multiplyBy scales the outputs by the request of another resource; Retain keeps the input as
 * requested; a multiplier the pod does not request leaves the outputs unscaled. */
START_TEST(multiply_by)
{
    const char *mul =
        "{'transformations':[{'input':'example.com/gpu-fraction',"
        "'multiplyBy':'example.com/gpus','outputs':{'example.com/gpu-memory':'8Gi'}}]}";
    expect_effective(
        mul, "example.com/gpu-fraction=500m example.com/gpus=4",
        "example.com/gpu-fraction=500m example.com/gpu-memory=16Gi example.com/gpus=4");
    expect_effective(mul, "example.com/gpu-fraction=2",
                     "example.com/gpu-fraction=2 example.com/gpu-memory=16Gi");
}
END_TEST

/* Excluded prefixes go first: an excluded input is never transformed, and a workload requesting
 * only excluded resources and cpu counts cpu alone. */
START_TEST(excluded_prefixes)
{
    expect_effective("{'excludeResourcePrefixes':['example.com/rdma','networking.']}",
                     "cpu=2 example.com/rdma-0=1 example.com/rdma=1 networking.k8s.io/x=3",
                     "cpu=2");
    expect_effective("{'excludeResourcePrefixes':['ephemeral-storage']}",
                     "cpu=2 ephemeral-storage=10Gi", "cpu=2");
    /* prefixes are prefixes, not substrings */
    expect_effective("{'excludeResourcePrefixes':['rdma']}", "cpu=1 example.com/rdma=1",
                     "cpu=1 example.com/rdma=1");
}
END_TEST

START_TEST(overflow_names_resource)
{
    object_t obj;
    resource_list_t l, out = {0};
    err_msg_t msg = {{0}};

    rules_from("{'transformations':[{'input':'a.com/x','outputs':{'a.com/mem':'1Ei'}}]}", &obj);
    list_of("a.com/x=1e12", &l);
    ck_assert_int_eq(requests_effective(&obj.u.config.resources, &l, &out, &msg), ERR_OVERFLOW);
    ck_assert_str_eq(msg.text, "resource a.com/mem from a.com/x: requests overflow");
    ck_assert_uint_eq(out.len, 0);
    resource_list_fini(&l);
    object_fini(&obj);
}
END_TEST

/* ---- decoding and validation -------------------------------------------------------------------
 */

static void expect_diags(const char *api, const char *resources, err_t want_rc, const char *want)
{
    object_t obj;
    diags_t d;
    char buf[2048];
    err_t rc = decode_with(api, resources, &obj, &d);

    ck_assert_str_eq(diag_text(&d, buf, sizeof(buf)), want);
    ck_assert_int_eq(rc, want_rc);
    if (rc == ERR_OK)
        object_fini(&obj);
    diags_fini(&d);
}

START_TEST(validation_errors)
{
    /* Kueue's rules: strategy Retain or Replace, inputs unique */
    expect_diags("v1beta2",
                 "{'transformations':[{'input':'a.com/x','outputs':{'cpu':'1'}},"
                 "{'input':'a.com/x','strategy':'Keep','outputs':{'cpu':'1'}}]}",
                 ERR_INVALID,
                 "E resources.transformations[1].strategy: Unsupported value: \"Keep\": supported "
                 "values: \"Retain\", \"Replace\"\n"
                 "E resources.transformations[1].input: Duplicate value: \"a.com/x\"\n");
    /* outputs: a ResourceList */
    expect_diags("v1beta2",
                 "{'transformations':[{'input':'a.com/x','outputs':{'cpu':'1'}},"
                 "{'input':'a.com/y','outputs':['cpu']}]}",
                 ERR_INVALID,
                 "E resources.transformations[1].outputs: must be of type object, got array\n");
    expect_diags("v1beta2", "{'transformations':[{'input':'a.com/x','outputs':{'cpu':'1x'}}]}",
                 ERR_INVALID,
                 "E resources.transformations[0].outputs.cpu: invalid quantity \"1x\"\n");
    /* sluice: an input is required (an empty one matches nothing) */
    expect_diags("v1beta2", "{'transformations':[{'outputs':{'cpu':'1'}}]}", ERR_INVALID,
                 "E resources.transformations[0].input: Required value\n");
    expect_diags("v1beta2", "{'transformations':[{'input':'a','outputz':{}}]}", ERR_INVALID,
                 "E resources.transformations[0].outputz: unknown field \"outputz\"; did you mean "
                 "\"outputs\"?\n"
                 "W resources.transformations[0]: has no effect: strategy Retain with no outputs "
                 "keeps a as it is\n");
    expect_diags("v1beta2", "{'excludeResourcePrefixes':'example.com/'}", ERR_INVALID,
                 "E resources.excludeResourcePrefixes: must be of type array, got string\n");
    /* quotaCheckStrategy (v1beta2): an enum, and IgnoreUndeclared excludes nothing */
    expect_diags(
        "v1beta2", "{'quotaCheckStrategy':'IgnoreUndeclare'}", ERR_INVALID,
        "E resources.quotaCheckStrategy: Unsupported value: \"IgnoreUndeclare\": supported "
        "values: \"BlockUndeclared\", \"IgnoreUndeclared\"; did you mean "
        "\"IgnoreUndeclared\"?\n");
    expect_diags("v1beta2",
                 "{'quotaCheckStrategy':'IgnoreUndeclared','excludeResourcePrefixes':['a.com/']}",
                 ERR_INVALID,
                 "E resources.quotaCheckStrategy: Invalid value: \"IgnoreUndeclared\": "
                 "excludeResourcePrefixes is not allowed when quotaCheckStrategy is "
                 "IgnoreUndeclared\n");
    expect_diags("v1beta1", "{'quotaCheckStrategy':'IgnoreUndeclared'}", ERR_INVALID,
                 "W apiVersion: config.kueue.x-k8s.io/v1beta1 is deprecated; use "
                 "config.kueue.x-k8s.io/v1beta2\n"
                 "E resources.quotaCheckStrategy: unknown field \"quotaCheckStrategy\"\n");
}
END_TEST

/* Settings that cannot have an effect are warned, never silently accepted. */
START_TEST(no_effect_warnings)
{
    expect_diags("v1beta2",
                 "{'excludeResourcePrefixes':['example.com/'],'transformations':["
                 "{'input':'example.com/mig','strategy':'Replace','outputs':{'cpu':'1'}}]}",
                 ERR_OK,
                 "W resources.transformations[0]: has no effect: excludeResourcePrefixes[0] drops "
                 "example.com/mig before transformations apply\n");
    expect_diags("v1beta2", "{'excludeResourcePrefixes':['']}", ERR_OK,
                 "W resources.excludeResourcePrefixes[0]: an empty prefix excludes every resource: "
                 "no request counts against quota\n");
    expect_diags("v1beta2", "{'deviceClassMappings':[]}", ERR_OK,
                 "W resources.deviceClassMappings: field \"deviceClassMappings\" is accepted but "
                 "not supported by sluice; it has no effect\n");
    /* Replace without outputs is how Kueue ignores a resource: no warning */
    expect_diags("v1beta2", "{'transformations':[{'input':'a.com/x','strategy':'Replace'}]}",
                 ERR_OK, "");
}
END_TEST

/* What the decoder keeps: strategies, multiplyBy, outputs, prefixes, quotaCheckStrategy; and a
 * deep copy of it. */
START_TEST(decoded_rules_and_copy)
{
    object_t obj;
    resource_rules_t copy;
    char buf[256];

    rules_from(
        "{'quotaCheckStrategy':'IgnoreUndeclared','transformations':["
        "{'input':'a.com/x','strategy':'Replace','multiplyBy':'a.com/n',"
        "'outputs':{'m':'1Gi','c':'2'}},{'input':'a.com/y','multiplyBy':'','outputs':{'c':'1'}}]}",
        &obj);
    const resource_rules_t *r = &obj.u.config.resources;
    ck_assert(r->ignore_undeclared);
    ck_assert_uint_eq(r->ntransformations, 2);
    ck_assert_str_eq(r->transformations[0].input, "a.com/x");
    ck_assert_int_eq(r->transformations[0].strategy, TRANSFORM_REPLACE);
    ck_assert_str_eq(r->transformations[0].multiply_by, "a.com/n");
    ck_assert_str_eq(render(&r->transformations[0].outputs, buf, sizeof(buf)), "c=2 m=1Gi");
    ck_assert_int_eq(r->transformations[1].strategy, TRANSFORM_RETAIN);
    ck_assert_ptr_null(r->transformations[1].multiply_by);
    ck_assert_int_eq(resource_rules_copy(&copy, r), ERR_OK);
    ck_assert_uint_eq(copy.ntransformations, 2);
    ck_assert_str_eq(copy.transformations[0].multiply_by, "a.com/n");
    ck_assert_str_eq(render(&copy.transformations[0].outputs, buf, sizeof(buf)), "c=2 m=1Gi");
    ck_assert(copy.ignore_undeclared);
    resource_rules_fini(&copy);
    object_fini(&obj);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transform");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, quantity_products);
    tcase_add_test(tc, no_rules);
    tcase_add_test(tc, replace_and_retain);
    tcase_add_test(tc, multiple_outputs);
    tcase_add_test(tc, negative_outputs);
    tcase_add_test(tc, multiply_by);
    tcase_add_test(tc, excluded_prefixes);
    tcase_add_test(tc, overflow_names_resource);
    tcase_add_test(tc, validation_errors);
    tcase_add_test(tc, no_effect_warnings);
    tcase_add_test(tc, decoded_rules_and_copy);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
