/* test_kube_problem -- failed requests classified, keyed by cause and explained for people. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/problem.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

static const kube_resource_t cqs = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
static const kube_resource_t nss = {"", "v1", "namespaces", false};

/* A result with HTTP `status`, error `err`, the client's text and an optional Status message. */
static kube_result_t result(long status, err_t err, const char *text, const char *status_msg)
{
    kube_result_t r;

    memset(&r, 0, sizeof(r));
    r.status = status;
    r.err = err;
    r.reason = "";
    snprintf(r.msg.text, sizeof(r.msg.text), "%s", text);
    if (status_msg != NULL)
        r.body = json_pack("{s:s,s:s,s:I}", "kind", "Status", "message", status_msg, "code",
                           (json_int_t)status);
    return r;
}

START_TEST(classes_keys_and_texts)
{
    char key[200];
    err_msg_t t;
    kube_result_t r;

    r = result(404, ERR_NOT_FOUND, "GET /apis/kueue.x-k8s.io/v1beta2/clusterqueues: not found",
               "the server could not find the requested resource");
    ck_assert_int_eq(
        kube_problem_explain(&r, "list", &cqs, NULL, "https://k:6443", key, sizeof(key), &t),
        KUBE_PROBLEM_NOT_INSTALLED);
    ck_assert_str_eq(key, "crd:clusterqueues.kueue.x-k8s.io");
    ck_assert_ptr_nonnull(strstr(t.text, "CustomResourceDefinition clusterqueues.kueue.x-k8s.io "
                                         "is not installed or does not serve version v1beta2"));
    /* A 404 on one object is an ordinary "not found". */
    ck_assert_int_eq(kube_problem_explain(&r, "get", &cqs, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_OTHER);
    json_decref(r.body);

    r = result(403, ERR_HTTP, "GET /api/v1/namespaces: forbidden",
               "namespaces is forbidden: User \"system:serviceaccount:s:x\" cannot list "
               "resource \"namespaces\" in API group \"\" at the cluster scope");
    ck_assert_int_eq(kube_problem_explain(&r, "watch", &nss, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_FORBIDDEN);
    ck_assert_str_eq(key, "rbac:watch:namespaces");
    ck_assert_ptr_nonnull(strstr(t.text, "RBAC forbids watch namespaces: namespaces is forbidden: "
                                         "User \"system:serviceaccount:s:x\""));
    json_decref(r.body);

    r = result(403, ERR_HTTP, "PATCH ...",
               "clusterqueues.kueue.x-k8s.io \"a\" is forbidden: User \"u\" cannot patch resource "
               "\"clusterqueues/status\" in API group \"kueue.x-k8s.io\" at the cluster scope");
    ck_assert_int_eq(kube_problem_explain(&r, "patch", &cqs, "status", NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_FORBIDDEN);
    ck_assert_str_eq(key, "rbac:patch:clusterqueues.kueue.x-k8s.io/status");
    json_decref(r.body);
    /* A 403 that is not RBAC's (the namespace is being deleted) is the request's business. */
    r = result(403, ERR_HTTP, "POST ...",
               "events \"x.\" is forbidden: unable to create new content in namespace a because "
               "it is being terminated");
    ck_assert_int_eq(kube_problem_explain(&r, "create", &nss, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_OTHER);
    json_decref(r.body);

    /* The server as a whole: one key, whatever the resource. */
    r = result(0, ERR_IO, "GET /api/v1/namespaces: Couldn't connect to server", NULL);
    ck_assert_int_eq(
        kube_problem_explain(&r, "list", &nss, NULL, "https://10.0.0.1:443", key, sizeof(key), &t),
        KUBE_PROBLEM_UNREACHABLE);
    ck_assert_str_eq(key, "api");
    ck_assert_ptr_nonnull(strstr(t.text, "API server https://10.0.0.1:443 unreachable: "
                                         "Couldn't connect to server; sluice keeps retrying"));
    r = result(0, ERR_TLS, "GET /x: SSL certificate problem: unable to get local issuer", NULL);
    ck_assert_int_eq(kube_problem_explain(&r, "list", &cqs, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_TLS);
    ck_assert_str_eq(key, "api");
    ck_assert_msg(strstr(t.text, "TLS with the API server failed: SSL "
                                 "certificate problem") != NULL,
                  "%s", t.text);
    r = result(401, ERR_HTTP, "GET /x: Unauthorized", NULL);
    ck_assert_int_eq(kube_problem_explain(&r, "list", &cqs, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_UNAUTHORIZED);
    ck_assert_str_eq(key, "api");
    r = result(503, ERR_HTTP, "GET /x: unavailable", NULL);
    ck_assert_int_eq(kube_problem_explain(&r, "list", &cqs, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_SERVER);
    ck_assert_str_eq(key, "server:clusterqueues.kueue.x-k8s.io");
    r = result(422, ERR_INVALID, "PATCH /x: invalid", NULL);
    ck_assert_int_eq(kube_problem_explain(&r, "patch", &cqs, NULL, NULL, key, sizeof(key), &t),
                     KUBE_PROBLEM_OTHER);
    /* Success and cancellation are no problem; key and text may be NULL. */
    r = result(200, ERR_OK, "", NULL);
    ck_assert_int_eq(kube_problem_explain(&r, "list", &cqs, NULL, NULL, NULL, 0, NULL),
                     KUBE_PROBLEM_NONE);
    r = result(0, ERR_IO, "canceled", NULL);
    r.canceled = true;
    ck_assert_int_eq(kube_problem_explain(&r, "list", &cqs, NULL, NULL, key, sizeof(key), NULL),
                     KUBE_PROBLEM_NONE);
    ck_assert_str_eq(key, "");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_problem");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, classes_keys_and_texts);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
