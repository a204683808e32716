/* test_convert_review -- the conversion webhook: ConversionReview answers (uid, order, apiVersion,
 * failures for hostile input), the HTTP handler, caBundle injection into CRDs, allocation
 * failures. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/conversion.h"
#include "model/convert.h"
#include "util/alloc.h"

/* Allocation failures: see test/convert.cmake and main(). */
#include "oom_wrap.h"
#include "squote.h"

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers --------------------------------------------------------------------------------- */

/* Post `review` (single-quoted JSON or raw bytes) and parse the answer. */
static json_t *review(const char *text, bool quote)
{
    char *body = quote ? squote(text) : strdup(text), *out = NULL;
    err_msg_t msg = {{0}};
    json_t *j;

    ck_assert_int_eq(hook_conversion_review(body, strlen(body), &out, &msg), ERR_OK);
    j = json_loads(out, 0, NULL);
    ck_assert_msg(j != NULL, "answer is not JSON: %s", out);
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "ConversionReview");
    free(body);
    free(out);
    return j;
}

static const char *status_of(const json_t *ans)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(ans, "response"), "result"), "status"));
}

static const char *message_of(const json_t *ans)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(ans, "response"), "result"), "message"));
}

static void expect_failure(const char *text, bool quote, const char *uid, const char *needle)
{
    json_t *ans = review(text, quote), *resp = json_object_get(ans, "response");

    ck_assert_str_eq(status_of(ans), "Failure");
    ck_assert_msg(message_of(ans) != NULL && strstr(message_of(ans), needle) != NULL,
                  "message \"%s\" lacks \"%s\"", message_of(ans), needle);
    ck_assert_str_eq(json_string_value(json_object_get(resp, "uid")), uid);
    ck_assert_ptr_null(json_object_get(resp, "convertedObjects"));
    json_decref(ans);
}

#define REVIEW(desired, objects)                                                                \
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'ConversionReview','request':{'uid':'u-1'," \
    "'desiredAPIVersion':'" desired "','objects':" objects "}}"
#define CQ1                                                                                \
    "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'a'," \
    "'uid':'x','resourceVersion':'9'},'spec':{'cohort':'c'}}"
#define LQ2                                                                              \
    "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'q'," \
    "'namespace':'n'},'status':{'flavorsUsage':[]}}"
#define WL1                                                                            \
    "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'w'," \
    "'namespace':'n'},'spec':{'priorityClassName':'p','priorityClassSource':"          \
    "'scheduling.k8s.io/priorityclass'}}"

/* ---- reviews -----------------------------------------------------------------------------------
 */

START_TEST(converts_in_order)
{
    json_t *ans = review(REVIEW("kueue.x-k8s.io/v1beta2", "[" CQ1 "," LQ2 "," WL1 "]"), true);
    json_t *resp = json_object_get(ans, "response"),
           *objs = json_object_get(resp, "convertedObjects");
    char *want = squote("[{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':"
                        "{'name':'a','uid':'x','resourceVersion':'9'},'spec':{'cohortName':'c'}},"
                        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':"
                        "{'name':'q','namespace':'n'},'status':{'flavorsUsage':[]}},"
                        "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload','metadata':{"
                        "'name':'w','namespace':'n'},'spec':{'priorityClassRef':{'group':"
                        "'scheduling.k8s.io','kind':'PriorityClass','name':'p'}}}]");
    char *got = json_dumps(objs, JSON_COMPACT);

    ck_assert_str_eq(json_string_value(json_object_get(ans, "apiVersion")),
                     "apiextensions.k8s.io/v1");
    ck_assert_str_eq(json_string_value(json_object_get(resp, "uid")), "u-1");
    ck_assert_str_eq(status_of(ans), "Success");
    ck_assert_str_eq(got, want);
    free(got);
    free(want);
    json_decref(ans);

    /* The same objects back to v1beta1; an empty list; a v1beta1 review. */
    ans = review(REVIEW("kueue.x-k8s.io/v1beta1", "[" LQ2 "]"), true);
    ck_assert_str_eq(status_of(ans), "Success");
    ck_assert_ptr_nonnull(json_object_get(
        json_object_get(
            json_array_get(json_object_get(json_object_get(ans, "response"), "convertedObjects"),
                           0),
            "status"),
        "flavorUsage"));
    json_decref(ans);
    ans = review(REVIEW("kueue.x-k8s.io/v1beta1", "[]"), true);
    ck_assert_str_eq(status_of(ans), "Success");
    ck_assert_uint_eq(
        json_array_size(json_object_get(json_object_get(ans, "response"), "convertedObjects")), 0);
    json_decref(ans);
    ans = review("{'apiVersion':'apiextensions.k8s.io/v1beta1','kind':'ConversionReview',"
                 "'request':{'uid':'b','desiredAPIVersion':'kueue.x-k8s.io/v1beta2','objects':[]}}",
                 true);
    ck_assert_str_eq(json_string_value(json_object_get(ans, "apiVersion")),
                     "apiextensions.k8s.io/v1beta1");
    json_decref(ans);
}
END_TEST

START_TEST(failures)
{
    /* One bad object fails the whole review, naming it. */
    expect_failure(REVIEW("kueue.x-k8s.io/v1beta2",
                          "[" CQ1 ",{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload',"
                          "'metadata':{'name':'w','namespace':'n'},'spec':{"
                          "'priorityClassSource':'bogus'}}]"),
                   true, "u-1",
                   "request.objects[1]: Workload n/w: spec.priorityClassSource: Unsupported "
                   "value: \"bogus\"");
    expect_failure(REVIEW("kueue.x-k8s.io/v1beta2", "[{'apiVersion':'v1','kind':'Pod'}]"), true,
                   "u-1", "request.objects[0]: apiVersion \"v1\" is not converted");
    expect_failure(REVIEW("kueue.x-k8s.io/v1", "[]"), true, "u-1",
                   "request.desiredAPIVersion: must be kueue.x-k8s.io/v1beta1 or "
                   "kueue.x-k8s.io/v1beta2, got kueue.x-k8s.io/v1");
    expect_failure(REVIEW("kueue.x-k8s.io/v1beta1", "{}"), true, "u-1",
                   "request.objects: must be an array");
    expect_failure("{'kind':'ConversionReview','request':{'desiredAPIVersion':'x','objects':[]}}",
                   true, "", "request.uid: must be a non-empty string");
    expect_failure("{'kind':'ConversionReview','request':{'uid':7}}", true, "",
                   "request.uid: must be a non-empty string");
    expect_failure("{'kind':'ConversionReview'}", true, "", "ConversionReview without a request");
    expect_failure("{'kind':'AdmissionReview','request':{}}", true, "", "not a ConversionReview");
    expect_failure("[]", false, "", "not a ConversionReview");
    expect_failure("", false, "", "malformed ConversionReview");
    expect_failure("{\"kind\":\"ConversionReview\",", false, "", "malformed ConversionReview");
    expect_failure("\xff\xfe garbage", false, "", "malformed ConversionReview");
    /* Names in the message are cut at a byte limit: the answer stays valid UTF-8. */
    {
        char big[1200], *p = big;
        p += sprintf(p, REVIEW("kueue.x-k8s.io/v1beta2",
                               "[{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload',"
                               "'metadata':{'name':'"));
        for (int i = 0; i < 150; i++)
            p += sprintf(p, "\xc3\xa9"); /* é, two bytes */
        sprintf(p, "'},'spec':{'priorityClassSource':'x'}}]}}");
        expect_failure(big, true, "u-1", "request.objects[0]: Workload ");
    }
}
END_TEST

START_TEST(shared_domain_budget)
{
    /* Two objects of 150,000 domains each: together over the per-review budget. */
    static const char *const wl = "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
                                  "'metadata':{'name':'w'},'status':{'admission':{"
                                  "'podSetAssignments':[{'topologyAssignment':{'levels':['a'],"
                                  "'slices':[{'domainCount':150000,'valuesPerLevel':[{"
                                  "'universal':'x'}],'podCounts':{'universal':1}}]}}]}}}";
    char text[2048];

    snprintf(text, sizeof(text), REVIEW("kueue.x-k8s.io/v1beta1", "[%s,%s]"), wl, wl);
    expect_failure(text, true, "u-1", "request.objects[1]: Workload w: status.admission.");
}
END_TEST

/* ---- HTTP handler ------------------------------------------------------------------------------
 */

START_TEST(handler)
{
    hook_request_t req = {.method = "GET", .path = HOOK_CONVERSION_PATH, .query = ""};
    hook_response_t resp = {0};
    char *body = squote(REVIEW("kueue.x-k8s.io/v1beta2", "[" CQ1 "]"));
    json_t *ans;

    hook_conversion_handler(NULL, &req, &resp);
    ck_assert_int_eq(resp.status, 405);
    memset(&resp, 0, sizeof(resp));
    req.method = "POST";
    req.headers[0] = (hook_header_t){"content-type", "text/plain"};
    req.nheaders = 1;
    hook_conversion_handler(NULL, &req, &resp);
    ck_assert_int_eq(resp.status, 415);
    memset(&resp, 0, sizeof(resp));
    req.headers[0] = (hook_header_t){"content-type", "application/json; charset=utf-8"};
    req.body = body;
    req.body_len = strlen(body);
    hook_conversion_handler(NULL, &req, &resp);
    ck_assert_int_eq(resp.status, 200);
    ck_assert_str_eq(resp.content_type, "application/json");
    ck_assert_ptr_nonnull(resp.owned_body);
    ans = json_loadb(resp.owned_body, resp.body_len, 0, NULL);
    ck_assert_str_eq(status_of(ans), "Success");
    json_decref(ans);
    free(resp.owned_body);
    /* Garbage is a 200 with a Failure result, not an HTTP error. */
    memset(&resp, 0, sizeof(resp));
    req.body = "{{{";
    req.body_len = 3;
    hook_conversion_handler(NULL, &req, &resp);
    ck_assert_int_eq(resp.status, 200);
    ans = json_loadb(resp.owned_body, resp.body_len, 0, NULL);
    ck_assert_str_eq(status_of(ans), "Failure");
    json_decref(ans);
    free(resp.owned_body);
    free(body);
}
END_TEST

/* ---- caBundle ----------------------------------------------------------------------------------
 */

static bool inject(const char *crd_text, const char *want_bundle)
{
    static const char *const hosts[] = {"127.0.0.1", "::1", "sluice.example.com"};
    hook_conversion_target_t t = {.ca_bundle = "Q0E=",
                                  .service = "sluice-webhook-service",
                                  .namespace = "sluice-system",
                                  .port = 9443,
                                  .hosts = hosts,
                                  .nhosts = 3};
    char *s = squote(crd_text);
    json_t *crd = json_loads(s, 0, NULL), *before = json_deep_copy(crd);
    bool changed = true;
    const char *got;

    ck_assert_ptr_nonnull(crd);
    ck_assert_int_eq(hook_conversion_inject_ca(crd, &t, &changed, NULL), ERR_OK);
    got = json_string_value(json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(crd, "spec"), "conversion"), "webhook"),
            "clientConfig"),
        "caBundle"));
    if (want_bundle == NULL)
        ck_assert(json_equal(crd, before));
    else
        ck_assert_str_eq(got, want_bundle);
    free(s);
    json_decref(crd);
    json_decref(before);
    return changed;
}

#define CRD(cc)                                                                        \
    "{'spec':{'group':'kueue.x-k8s.io','conversion':{'strategy':'Webhook','webhook':{" \
    "'conversionReviewVersions':['v1'],'clientConfig':" cc "}}}}"

START_TEST(ca_bundle)
{
    ck_assert(inject(CRD("{'service':{'name':'sluice-webhook-service','namespace':"
                         "'sluice-system','path':'/convert','port':443}}"),
                     "Q0E="));
    /* Already current: nothing to write. */
    ck_assert(!inject(CRD("{'service':{'name':'sluice-webhook-service','namespace':"
                          "'sluice-system'},'caBundle':'Q0E='}"),
                      "Q0E="));
    /* Another service, namespace or strategy: not ours. */
    ck_assert(!inject(CRD("{'service':{'name':'kueue-webhook-service','namespace':"
                          "'sluice-system'}}"),
                      NULL));
    ck_assert(
        !inject(CRD("{'service':{'name':'sluice-webhook-service','namespace':'other'}}"), NULL));
    ck_assert(!inject("{'spec':{'conversion':{'strategy':'None'}}}", NULL));
    ck_assert(!inject("{'spec':{}}", NULL));
    ck_assert(!inject("{'spec':{'conversion':{'strategy':'Webhook','webhook':{}}}}", NULL));
    /* url clientConfigs: one of the certificate's hosts, on the webhook port. */
    ck_assert(inject(CRD("{'url':'https://127.0.0.1:9443/convert'}"), "Q0E="));
    ck_assert(inject(CRD("{'url':'https://[::1]:9443/convert'}"), "Q0E="));
    ck_assert(
        inject(CRD("{'url':'https://SLUICE.example.com:9443/convert','caBundle':'old'}"), "Q0E="));
    ck_assert(!inject(CRD("{'url':'https://127.0.0.1:9444/convert'}"), NULL));
    ck_assert(!inject(CRD("{'url':'https://127.0.0.1/convert'}"), NULL)); /* 443 */
    ck_assert(!inject(CRD("{'url':'https://127.0.0.2:9443/convert'}"), NULL));
    ck_assert(!inject(CRD("{'url':'http://127.0.0.1:9443/convert'}"), NULL));
    ck_assert(!inject(CRD("{'url':'https://127.0.0.1:9443x/convert'}"), NULL));
    ck_assert(!inject(CRD("{'url':'https://127.0.0.1.evil:9443/convert'}"), NULL));
    ck_assert(!inject(CRD("{'url':'https://[::1/convert'}"), NULL));
}
END_TEST

/* ---- allocation failures -----------------------------------------------------------------------
 */

/* Allocation failures are injected after parsing: jansson 2.14's lexer drops bytes when its
 * buffer cannot grow (lex_save ignores the error), so a failure inside json_loadb() may hand
 * back a different document; hook_conversion_review() is hook_conversion_answer() after it. */
START_TEST(allocation_failures)
{
    static const char *const texts[] = {
        REVIEW("kueue.x-k8s.io/v1beta2", "[" CQ1 "," WL1 "]"),
        REVIEW("kueue.x-k8s.io/v1beta1", "[" LQ2 "]"),
        REVIEW("kueue.x-k8s.io/v1beta2", "[{'kind':'Bad'}]"),
        "{'kind':'ConversionReview'}",
    };

    for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
        char *body = squote(texts[t]), *ref = NULL;
        json_t *doc = json_loads(body, 0, NULL);
        err_msg_t rmsg;
        long n;

        ck_assert_int_eq(hook_conversion_answer(doc, &ref, &rmsg), ERR_OK);
        for (n = 1;; n++) {
            char *out = NULL;
            err_msg_t msg = {{0}};
            err_t rc;
            long made;

            oom_fail_at(n);
            rc = hook_conversion_answer(doc, &out, &msg);
            made = oom_count();
            oom_fail_at(0);
            if (made < n) {
                ck_assert_int_eq(rc, ERR_OK);
                ck_assert_str_eq(out, ref);
                free(out);
                break;
            }
            ck_assert_msg(rc == ERR_NOMEM, "allocation %ld: %s", n, err_str(rc));
            ck_assert_ptr_null(out);
        }
        ck_assert_int_gt(n, 3);
        free(ref);
        json_decref(doc);
        free(body);
    }
    /* A failure while parsing is out of memory or a Failure answer, never a crash. */
    for (long n = 1; n < 40; n++) {
        char *body = squote(texts[0]), *out = NULL;
        err_msg_t msg;
        err_t rc;

        oom_fail_at(n);
        rc = hook_conversion_review(body, strlen(body), &out, &msg);
        oom_fail_at(0);
        ck_assert(rc == ERR_OK || (rc == ERR_NOMEM && out == NULL));
        free(out);
        free(body);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("convert_review");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    util_alloc_install();
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, converts_in_order);
    tcase_add_test(tc, failures);
    tcase_add_test(tc, shared_domain_budget);
    tcase_add_test(tc, handler);
    tcase_add_test(tc, ca_bundle);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
