/* test_hook_admission -- AdmissionReview handling: validation, mutation patches, warnings. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/admission.h"
#include "jobs/kind_serving.h"
#include "oom_wrap.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fake cluster: LocalQueue ns1/default and WPC default exist; cq-a uses 14 nvidia.com/gpu of
 * flavor h100; audit events are counted and the last one kept. */
typedef struct cluster_s {
    int audits;
    char last_user[64];
    char last_op[16];
    bool last_allowed;
    char last_reason[512];
} cluster_t;

static bool lq_exists(void *ctx, const char *ns, const char *name)
{
    (void)ctx;
    return strcmp(ns, "ns1") == 0 && strcmp(name, "default") == 0;
}

static bool wpc_exists(void *ctx, const char *name)
{
    (void)ctx;
    return strcmp(name, "default") == 0;
}

static bool cq_usage(void *ctx, const char *cq, const char *flavor, const char *resource,
                     quantity_t *out)
{
    (void)ctx;
    if (strcmp(cq, "cq-a") == 0 && strcmp(flavor, "h100") == 0 &&
        strcmp(resource, "nvidia.com/gpu") == 0) {
        *out = quantity_from_int(14, QUANTITY_DECIMAL_SI);
        return true;
    }
    return false;
}

static void on_audit(void *ctx, const hook_audit_event_t *ev)
{
    cluster_t *c = ctx;

    c->audits++;
    snprintf(c->last_user, sizeof(c->last_user), "%s", ev->user);
    snprintf(c->last_op, sizeof(c->last_op), "%s", ev->operation);
    c->last_allowed = ev->allowed;
    snprintf(c->last_reason, sizeof(c->last_reason), "%s", ev->reason ? ev->reason : "");
}

/* integrations.frameworks: batch/job, JobSet, pod and deployment. */
static bool framework_enabled(void *ctx, const char *framework)
{
    (void)ctx;
    return strcmp(framework, "batch/job") == 0 ||
           strcmp(framework, "jobset.x-k8s.io/jobset") == 0 || strcmp(framework, "pod") == 0 ||
           strcmp(framework, "deployment") == 0 ||
           strcmp(framework, "trainer.kubeflow.org/trainjob") == 0;
}

/* Owned by a JobSet (controller). */
static bool owner_managed(void *ctx, const json_t *obj)
{
    const json_t *ref =
        json_array_get(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), 0);
    const char *kind = json_string_value(json_object_get(ref, "kind"));

    (void)ctx;
    return json_is_true(json_object_get(ref, "controller")) && kind != NULL &&
           strcmp(kind, "JobSet") == 0;
}

/* Admission fair sharing as the operator's Configuration and ClusterQueue cq-a say. */
static bool test_afs_on;
static int test_cq_usage_based;

static bool afs_enabled(void *ctx)
{
    (void)ctx;
    return test_afs_on;
}

static int cq_usage_based(void *ctx, const char *cq)
{
    (void)ctx;
    return strcmp(cq, "cq-a") == 0 ? test_cq_usage_based : -1;
}

static cluster_t cluster;
static const hook_admission_env_t env = {
    .afs_enabled = afs_enabled,
    .cq_usage_based = cq_usage_based,
    .local_queue_exists = lq_exists,
    .wpc_exists = wpc_exists,
    .cq_usage = cq_usage,
    .framework_enabled = framework_enabled,
    .owner_managed = owner_managed,
    .audit = on_audit,
    .ctx = &cluster,
};

static const char cq_valid[] =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":"
    "\"cq-a\"},\"spec\":{\"cohortName\":\"all\",\"namespaceSelector\":{},\"resourceGroups\":[{"
    "\"coveredResources\":[\"nvidia.com/gpu\"],\"flavors\":[{\"name\":\"h100\",\"resources\":[{"
    "\"name\":\"nvidia.com/gpu\",\"nominalQuota\":\"%s\"}]}]}]}}";

static const char cq_bad[] =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":"
    "\"cq-b\"},\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"nvidia.com/gpu\"],"
    "\"flavors\":[{\"name\":\"h100\",\"resources\":[{\"name\":\"nvidia.com/gpu\","
    "\"nominalQuota\":\"4\",\"lendingLimit\":\"8\"}]}]}]}}";

/* An AdmissionReview for `op` on `object` (and `old`, may be NULL) into buf. */
static void review(char *buf, size_t cap, const char *op, const char *kind, const char *object,
                   const char *old)
{
    snprintf(buf, cap,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\",\"kind\":{\"group\":\"g\","
             "\"version\":\"v\",\"kind\":\"%s\"},\"operation\":\"%s\",\"userInfo\":{\"username\":"
             "\"alice@example.com\",\"groups\":[\"platform-admins\"]},\"object\":%s,"
             "\"oldObject\":%s}}",
             kind, op, object ? object : "null", old ? old : "null");
}

/* Run a review; returns the parsed "response" member (caller decrefs the returned root). */
static json_t *run(const char *path, const char *body, json_t **response)
{
    char *out = NULL;
    int status = 0;
    err_msg_t msg;
    json_t *root;

    ck_assert_msg(hook_admission_review(&env, path, body, strlen(body), &status, &out, &msg) ==
                      ERR_OK,
                  "%s", msg.text);
    ck_assert_int_eq(status, 200);
    root = json_loads(out, 0, NULL);
    free(out);
    ck_assert_ptr_nonnull(root);
    ck_assert_str_eq(json_string_value(json_object_get(root, "kind")), "AdmissionReview");
    *response = json_object_get(root, "response");
    ck_assert_str_eq(json_string_value(json_object_get(*response, "uid")),
                     "705ab4f5-6393-11e8-b7cc-42010a800002");
    return root;
}

/* The decoded JSONPatch of a response. */
static json_t *patch_of(json_t *response)
{
    const char *b64 = json_string_value(json_object_get(response, "patch"));
    unsigned char raw[4096];
    int n;

    ck_assert_ptr_nonnull(b64);
    ck_assert_str_eq(json_string_value(json_object_get(response, "patchType")), "JSONPatch");
    n = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)strlen(b64));
    ck_assert_int_gt(n, 0);
    while (n > 0 && raw[n - 1] == '\0') /* EVP_DecodeBlock pads */
        n--;
    return json_loadb((const char *)raw, (size_t)n, 0, NULL);
}

START_TEST(test_invalid_cluster_queue_denied_with_paths)
{
    char body[4096];
    json_t *root, *resp, *status;
    const char *message;

    memset(&cluster, 0, sizeof(cluster));
    review(body, sizeof(body), "CREATE", "ClusterQueue", cq_bad, NULL);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    status = json_object_get(resp, "status");
    ck_assert_int_eq(json_integer_value(json_object_get(status, "code")), 403);
    message = json_string_value(json_object_get(status, "message"));
    ck_assert_ptr_nonnull(strstr(message,
                                 "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: "
                                 "must be less than or equal to the nominalQuota"));
    ck_assert_ptr_nonnull(strstr(message, "must be nil when cohort is empty"));
    ck_assert_int_eq(message[0], '['); /* several errors: an aggregate */
    /* rejections are audited with the reason */
    ck_assert_int_eq(cluster.audits, 1);
    ck_assert(!cluster.last_allowed);
    ck_assert_str_eq(cluster.last_user, "alice@example.com");
    ck_assert_ptr_nonnull(strstr(cluster.last_reason, "lendingLimit"));
    json_decref(root);
}
END_TEST

START_TEST(test_valid_cluster_queue_allowed_and_audited)
{
    char body[4096], obj[2048];
    json_t *root, *resp;

    memset(&cluster, 0, sizeof(cluster));
    snprintf(obj, sizeof(obj), cq_valid, "16");
    review(body, sizeof(body), "CREATE", "ClusterQueue", obj, NULL);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_ptr_null(json_object_get(resp, "status"));
    ck_assert_ptr_null(json_object_get(resp, "warnings")); /* 16 > 14 used */
    ck_assert_int_eq(cluster.audits, 1);
    ck_assert(cluster.last_allowed);
    ck_assert_str_eq(cluster.last_op, "CREATE");
    json_decref(root);
}
END_TEST

START_TEST(test_dry_run_is_judged_but_not_audited)
{
    char body[4096], obj[2048], *dry;
    json_t *root, *resp;

    /* kubectl apply --dry-run=server: the same verdict, but nothing was changed, so nothing is
     * recorded (the configurations declare sideEffects: NoneOnDryRun). */
    memset(&cluster, 0, sizeof(cluster));
    review(body, sizeof(body), "CREATE", "ClusterQueue", cq_bad, NULL);
    dry = strstr(body, "\"object\":");
    ck_assert_ptr_nonnull(dry);
    memmove(dry + 14, dry, strlen(dry) + 1);
    memcpy(dry, "\"dryRun\":true,", 14);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    ck_assert_int_eq(cluster.audits, 0);
    json_decref(root);
    snprintf(obj, sizeof(obj), cq_valid, "16");
    review(body, sizeof(body), "CREATE", "ClusterQueue", obj, NULL);
    dry = strstr(body, "\"object\":");
    memmove(dry + 14, dry, strlen(dry) + 1);
    memcpy(dry, "\"dryRun\":true,", 14);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_int_eq(cluster.audits, 0);
    json_decref(root);
    /* The same request for real is recorded. */
    review(body, sizeof(body), "CREATE", "ClusterQueue", obj, NULL);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert_int_eq(cluster.audits, 1);
    json_decref(root);
}
END_TEST

START_TEST(test_quota_decrease_below_usage_warns)
{
    char body[8192], obj[2048], old[2048];
    json_t *root, *resp, *warnings;
    const char *w;

    snprintf(old, sizeof(old), cq_valid, "16");
    snprintf(obj, sizeof(obj), cq_valid, "8");
    review(body, sizeof(body), "UPDATE", "ClusterQueue", obj, old);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    warnings = json_object_get(resp, "warnings");
    ck_assert_uint_eq(json_array_size(warnings), 1);
    w = json_string_value(json_array_get(warnings, 0));
    ck_assert_ptr_nonnull(strstr(w, "ClusterQueue cq-a"));
    ck_assert_ptr_nonnull(strstr(w, "14 of nvidia.com/gpu in flavor h100"));
    ck_assert_ptr_nonnull(strstr(w, "nominalQuota 8"));
    json_decref(root);
    /* an increase never warns, even while usage is above it */
    snprintf(old, sizeof(old), cq_valid, "4");
    snprintf(obj, sizeof(obj), cq_valid, "8");
    review(body, sizeof(body), "UPDATE", "ClusterQueue", obj, old);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert_ptr_null(json_object_get(resp, "warnings"));
    json_decref(root);
}
END_TEST

/* Settings sluice accepts but does not act on are allowed with a warning naming them, as
 * `sluice check` says: a LocalQueue's fairSharing. An admission check on a ClusterQueue is acted
 * on: no warning. */
START_TEST(test_no_effect_settings_warn)
{
    static const char cq_checks[] =
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
        "{\"name\":\"cq-c\"},\"spec\":{\"namespaceSelector\":{},\"admissionChecksStrategy\":"
        "{\"admissionChecks\":[{\"name\":\"prov\"}]},\"resourceGroups\":[{\"coveredResources\":"
        "[\"cpu\"],\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\","
        "\"nominalQuota\":\"4\"}]}]}]}}";
    static const char lq_weight[] =
        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
        "{\"name\":\"heavy\",\"namespace\":\"ns1\"},\"spec\":{\"clusterQueue\":\"cq-a\","
        "\"fairSharing\":{\"weight\":\"2\"}}}";
    char body[8192];
    json_t *root, *resp, *warnings;

    review(body, sizeof(body), "CREATE", "ClusterQueue", cq_checks, NULL);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    warnings = json_object_get(resp, "warnings");
    ck_assert_uint_eq(json_array_size(warnings), 0);
    json_decref(root);
    /* a LocalQueue weight: no effect while the Configuration has no admissionFairSharing, or in
     * a ClusterQueue that is not UsageBasedAdmissionFairSharing */
    review(body, sizeof(body), "CREATE", "LocalQueue", lq_weight, NULL);
    test_afs_on = false;
    root = run("/validate-kueue-x-k8s-io-v1beta2-localqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    warnings = json_object_get(resp, "warnings");
    ck_assert_uint_eq(json_array_size(warnings), 1);
    ck_assert_str_eq(json_string_value(json_array_get(warnings, 0)),
                     "spec.fairSharing: has no effect: admission fair sharing is off (the "
                     "Configuration has no admissionFairSharing)");
    json_decref(root);
    test_afs_on = true;
    root = run("/validate-kueue-x-k8s-io-v1beta2-localqueue", body, &resp);
    warnings = json_object_get(resp, "warnings");
    ck_assert_uint_eq(json_array_size(warnings), 1);
    ck_assert_str_eq(json_string_value(json_array_get(warnings, 0)),
                     "spec.fairSharing: has no effect: ClusterQueue \"cq-a\" has no "
                     "admissionScope UsageBasedAdmissionFairSharing");
    json_decref(root);
    test_cq_usage_based = 1;
    root = run("/validate-kueue-x-k8s-io-v1beta2-localqueue", body, &resp);
    ck_assert_uint_eq(json_array_size(json_object_get(resp, "warnings")), 0);
    json_decref(root);
    test_cq_usage_based = 0;
    test_afs_on = false;
}
END_TEST

START_TEST(test_cluster_queue_finalizer_patch)
{
    char body[4096], obj[2048];
    json_t *root, *resp, *patch, *op;

    snprintf(obj, sizeof(obj), cq_valid, "16");
    review(body, sizeof(body), "CREATE", "ClusterQueue", obj, NULL);
    root = run("/mutate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 1);
    op = json_array_get(patch, 0);
    ck_assert_str_eq(json_string_value(json_object_get(op, "op")), "add");
    ck_assert_str_eq(json_string_value(json_object_get(op, "path")), "/metadata/finalizers");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(op, "value"), 0)),
                     "kueue.x-k8s.io/resource-in-use");
    json_decref(patch);
    json_decref(root);
}
END_TEST

START_TEST(test_job_defaults_queue_priority_and_suspend)
{
    char body[4096];
    json_t *root, *resp, *patch;
    const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                      "\"namespace\":\"ns1\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
                      "\"name\":\"c\",\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}}}";

    review(body, sizeof(body), "CREATE", "Job", job, NULL);
    root = run("/mutate-batch-v1-job", body, &resp);
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 3);
    /* no labels yet: the first add creates the map, the second adds a key to it */
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
                     "/metadata/labels");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(json_array_get(patch, 0), "value"),
                                          "kueue.x-k8s.io/queue-name")),
        "default");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 1), "path")),
                     "/metadata/labels/kueue.x-k8s.io~1priority-class");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 2), "path")),
                     "/spec/suspend");
    ck_assert(json_is_true(json_object_get(json_array_get(patch, 2), "value")));
    json_decref(patch);
    json_decref(root);
}
END_TEST

START_TEST(test_unmanaged_job_left_alone)
{
    char body[4096];
    json_t *root, *resp;
    const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                      "\"namespace\":\"ns2\"},\"spec\":{\"template\":{\"spec\":{\"containers\":[{"
                      "\"name\":\"c\",\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}}}";

    review(body, sizeof(body), "CREATE", "Job", job, NULL);
    root = run("/mutate-batch-v1-job", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
}
END_TEST

/* A JobSet (the framework table's kind, webhook at Kueue's path) in `ns` with `labels` (JSON
 * object members), suspend `suspend`. */
static void jobset(char *buf, size_t cap, const char *ns, const char *labels, const char *suspend)
{
    snprintf(buf, cap,
             "{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"metadata\":{"
             "\"name\":\"js\",\"namespace\":\"%s\",\"labels\":{%s}},\"spec\":{%s"
             "\"replicatedJobs\":[{\"name\":\"w\",\"template\":{\"spec\":{\"template\":{"
             "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}}]}}",
             ns, labels, suspend);
}

START_TEST(test_jobset_held_and_defaulted)
{
    char js[2048], body[4096];
    json_t *root, *resp, *patch;

    /* Queued, running: held through its kind (spec.suspend), defaulted like a Job. */
    jobset(js, sizeof(js), "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"", "");
    review(body, sizeof(body), "CREATE", "JobSet", js, NULL);
    root = run("/mutate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
                     "/metadata/labels/kueue.x-k8s.io~1priority-class");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 1), "path")),
                     "/spec/suspend");
    ck_assert(json_is_true(json_object_get(json_array_get(patch, 1), "value")));
    json_decref(patch);
    json_decref(root);

    /* No queue name in a namespace with LocalQueue "default": it is queued there. */
    jobset(js, sizeof(js), "ns1", "", "\"suspend\":false,");
    review(body, sizeof(body), "CREATE", "JobSet", js, NULL);
    root = run("/mutate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
                     "/metadata/labels/kueue.x-k8s.io~1queue-name");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 2), "path")),
                     "/spec/suspend");
    json_decref(patch);
    json_decref(root);

    /* Not queued (no default LocalQueue in ns2): left alone. */
    jobset(js, sizeof(js), "ns2", "", "");
    review(body, sizeof(body), "CREATE", "JobSet", js, NULL);
    root = run("/mutate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
}
END_TEST

/* A TrainJob: held (spec.suspend) and given Kueue's own empty runtimePatches entry, which the
 * operator fills on start; an entry of another manager is kept. Unqueued: the entry only, as
 * Kueue's webhook adds it to every TrainJob. */
START_TEST(test_trainjob_held_with_runtime_patch)
{
    static const char *const fmt =
        "{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":\"TrainJob\",\"metadata\":{"
        "\"name\":\"tj\",\"namespace\":\"%s\",\"labels\":{%s}},\"spec\":{\"runtimeRef\":{"
        "\"name\":\"torch\"}%s}}";
    char tj[2048], body[4096];
    json_t *root, *resp, *patch, *op;

    snprintf(tj, sizeof(tj), fmt, "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
             ",\"runtimePatches\":[{\"manager\":\"example.com/tool\"}]");
    review(body, sizeof(body), "CREATE", "TrainJob", tj, NULL);
    root = run("/mutate-trainer-kubeflow-org-v1alpha1-trainjob", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 3);
    op = json_array_get(patch, 1);
    ck_assert_str_eq(json_string_value(json_object_get(op, "path")), "/spec/runtimePatches");
    ck_assert_uint_eq(json_array_size(json_object_get(op, "value")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(op, "value"), 0), "manager")),
                     "example.com/tool");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(op, "value"), 1), "manager")),
                     "kueue.x-k8s.io/manager");
    op = json_array_get(patch, 2);
    ck_assert_str_eq(json_string_value(json_object_get(op, "path")), "/spec/suspend");
    ck_assert(json_is_true(json_object_get(op, "value")));
    json_decref(patch);
    json_decref(root);

    /* Not queued: the entry, no hold. */
    snprintf(tj, sizeof(tj), fmt, "ns2", "", "");
    review(body, sizeof(body), "CREATE", "TrainJob", tj, NULL);
    root = run("/mutate-trainer-kubeflow-org-v1alpha1-trainjob", body, &resp);
    patch = patch_of(resp);
    ck_assert_uint_eq(json_array_size(patch), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(patch, 0), "path")),
                     "/spec/runtimePatches");
    json_decref(patch);
    json_decref(root);
}
END_TEST

START_TEST(test_child_job_and_disabled_kind_left_alone)
{
    char body[4096];
    json_t *root, *resp;
    const char *child =
        "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"js-w-0\","
        "\"namespace\":\"ns1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\","
        "\"name\":\"js\",\"uid\":\"u\",\"controller\":true}]},\"spec\":{\"template\":{\"spec\":{"
        "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}}}";
    const char *pytorch =
        "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"PyTorchJob\",\"metadata\":{\"name\":\"p\","
        "\"namespace\":\"ns1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}";

    /* A JobSet's Job: the JobSet's admission covers it, it must not be held (it would never be
     * released). */
    review(body, sizeof(body), "CREATE", "Job", child, NULL);
    root = run("/mutate-batch-v1-job", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
    /* A kind whose framework is not enabled: Kueue's no-op webhook, nothing held. */
    review(body, sizeof(body), "CREATE", "PyTorchJob", pytorch, NULL);
    root = run("/mutate-kubeflow-org-v1-pytorchjob", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
}
END_TEST

/* Every kind held by its own field has Kueue's path: a RayJob (framework off here: no-op). */
START_TEST(test_kind_paths)
{
    static const char *const paths[] = {
        "/mutate-kubeflow-org-v2beta1-mpijob",
        "/validate-kubeflow-org-v1-tfjob",
        "/mutate-ray-io-v1-rayjob",
        "/validate-ray-io-v1-raycluster",
    };
    char body[4096];
    const char *obj = "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\",\"metadata\":{"
                      "\"name\":\"r\",\"namespace\":\"ns1\",\"labels\":{"
                      "\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{}}";

    review(body, sizeof(body), "CREATE", "RayJob", obj, NULL);
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        json_t *resp, *root = run(paths[i], body, &resp);
        ck_assert_msg(json_is_true(json_object_get(resp, "allowed")), "%s", paths[i]);
        ck_assert_ptr_null(json_object_get(resp, "patch"));
        json_decref(root);
    }
    /* A kind sluice has no entry for: no route. */
    {
        char *out = NULL;
        int status = 0;
        err_msg_t msg;
        ck_assert_int_eq(hook_admission_review(&env, "/mutate-apps-v1-replicaset", body,
                                               strlen(body), &status, &out, &msg),
                         ERR_NOT_FOUND);
        ck_assert_int_eq(status, 404);
        free(out);
    }
}
END_TEST

/* ---- a RayJob without a queue name under manageJobsWithoutQueueName ---------------------- */

static bool ray_enabled(void *ctx, const char *framework)
{
    (void)ctx;
    return strcmp(framework, "ray.io/rayjob") == 0;
}

/* manageJobsWithoutQueueName, for namespace ns2 only (as its managedJobsNamespaceSelector). */
static bool manage_ns2(void *ctx, const char *ns)
{
    (void)ctx;
    return strcmp(ns, "ns2") == 0;
}

static const hook_admission_env_t env_ray = {
    .framework_enabled = ray_enabled,
    .manage_without_queue_name = manage_ns2,
    .ctx = &cluster,
};

/* Kueue's RayJob webhook checks a RayJob without a queue name only where it manages such
 * objects: refused in ns2, allowed in ns1. */
START_TEST(test_rayjob_unlabelled_rules)
{
    static const char rayjob[] =
        "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayJob\",\"metadata\":{\"name\":\"r\","
        "\"namespace\":\"%s\"},\"spec\":{\"suspend\":true,\"entrypoint\":\"x\","
        "\"rayClusterSpec\":{\"headGroupSpec\":{\"template\":{\"spec\":{\"containers\":[{"
        "\"name\":\"h\",\"image\":\"i\"}]}}}}}}";
    char obj[1024], body[4096];

    for (int i = 0; i < 2; i++) {
        const char *ns = i == 0 ? "ns1" : "ns2";
        char *out = NULL;
        int status = 0;
        err_msg_t msg;
        json_t *root, *resp;
        snprintf(obj, sizeof(obj), rayjob, ns);
        review(body, sizeof(body), "CREATE", "RayJob", obj, NULL);
        ck_assert_int_eq(hook_admission_review(&env_ray, "/validate-ray-io-v1-rayjob", body,
                                               strlen(body), &status, &out, &msg),
                         ERR_OK);
        root = json_loads(out, 0, NULL);
        free(out);
        resp = json_object_get(root, "response");
        if (i == 0) {
            ck_assert(json_is_true(json_object_get(resp, "allowed")));
        } else {
            ck_assert(json_is_false(json_object_get(resp, "allowed")));
            ck_assert_ptr_nonnull(strstr(
                json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
                "spec.shutdownAfterJobFinishes: a kueue managed job should delete the "
                "cluster after finishing"));
        }
        json_decref(root);
    }
}
END_TEST

/* ---- a StatefulSet's scale-up from 0 while its Workload is not on hold ------------------------
 */

static bool sts_enabled(void *ctx, const char *framework)
{
    (void)ctx;
    return strcmp(framework, "statefulset") == 0 || strcmp(framework, "pod") == 0;
}

static bool sts_wl_left_answer;
static char sts_wl_asked[256];

static bool sts_wl_left(void *ctx, const char *ns, const char *name, const char *uid)
{
    (void)ctx;
    snprintf(sts_wl_asked, sizeof(sts_wl_asked), "%s/%s/%s", ns, name, uid ? uid : "");
    return sts_wl_left_answer;
}

static const hook_admission_env_t env_sts = {
    .framework_enabled = sts_enabled,
    .serving_workload_left = sts_wl_left,
    .ctx = &cluster,
};

/* Kueue's StatefulSet webhook: a scale-up from 0 is refused while the Workload of the scale-down
 * exists and is not on hold (the operator answers from its Workload cache). */
START_TEST(test_statefulset_scale_up_waits_for_its_workload)
{
    static const char sts[] =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","
        "\"namespace\":\"ns1\",\"uid\":\"u-1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
        "\"spec\":{\"replicas\":%d,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"},\"annotations\":{"
        "\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"}},\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"image\":\"i\"}]}}},\"status\":{\"replicas\":0}}";
    char old[2048], obj[2048], body[8192];

    snprintf(old, sizeof(old), sts, 0);
    snprintf(obj, sizeof(obj), sts, 2);
    review(body, sizeof(body), "UPDATE", "StatefulSet", obj, old);
    for (int i = 0; i < 2; i++) {
        char *out = NULL;
        int status = 0;
        err_msg_t msg;
        json_t *root, *resp;
        sts_wl_left_answer = i == 1;
        sts_wl_asked[0] = '\0';
        ck_assert_int_eq(hook_admission_review(&env_sts, "/validate-apps-v1-statefulset", body,
                                               strlen(body), &status, &out, &msg),
                         ERR_OK);
        root = json_loads(out, 0, NULL);
        free(out);
        resp = json_object_get(root, "response");
        ck_assert_str_eq(sts_wl_asked, "ns1/web/u-1");
        if (i == 0) {
            ck_assert(json_is_true(json_object_get(resp, "allowed")));
        } else {
            ck_assert(json_is_false(json_object_get(resp, "allowed")));
            ck_assert_str_eq(
                json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
                "spec.replicas: Forbidden: workload from previous scale-down is still being "
                "deleted");
        }
        json_decref(root);
    }
    sts_wl_left_answer = false;
}
END_TEST

/* Kueue's pod webhook keeps a Pod's group name fixed once set (validate--v1-pod on UPDATE). The
 * operator joins a StatefulSet's gated Pod to its pod group after creation, by an update that
 * adds the group name (jobs_serving_pod_default(), the operator's own marking): that update is
 * allowed; changing a group name the Pod already has is refused. */
START_TEST(test_pod_group_name_added_by_update_allowed)
{
    static const char sts[] =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","
        "\"namespace\":\"ns1\",\"uid\":\"u-1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},"
        "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"},\"annotations\":{"
        "\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"}},\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"image\":\"i\"}]}}}}";
    static const char pod[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\",\"namespace\":"
        "\"ns1\",\"uid\":\"p-1\",\"labels\":{\"app\":\"web\",\"apps.kubernetes.io/pod-index\":"
        "\"0\"},\"annotations\":{\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"name\":"
        "\"web\",\"uid\":\"u-1\",\"controller\":true}]},\"spec\":{\"schedulingGates\":[{\"name\":"
        "\"kueue.x-k8s.io/admission\"}],\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}";
    json_t *owner = json_loads(sts, 0, NULL), *old = json_loads(pod, 0, NULL), *marked, *root;
    json_t *resp, *labels;
    char *olds, *news, body[16384];
    const char *group;
    bool changed = false;
    err_msg_t msg;

    ck_assert_ptr_nonnull(owner);
    ck_assert_ptr_nonnull(old);
    marked = json_deep_copy(old);
    ck_assert_int_eq(
        jobs_serving_pod_default(&jobs_kind_statefulset, owner, marked, false, &changed, &msg),
        ERR_OK);
    ck_assert(changed);
    labels = json_object_get(json_object_get(marked, "metadata"), "labels");
    group = json_string_value(json_object_get(labels, "kueue.x-k8s.io/pod-group-name"));
    ck_assert_ptr_nonnull(group);
    olds = json_dumps(old, JSON_COMPACT);
    news = json_dumps(marked, JSON_COMPACT);
    review(body, sizeof(body), "UPDATE", "Pod", news, olds);
    root = run("/validate--v1-pod", body, &resp);
    ck_assert_msg(json_is_true(json_object_get(resp, "allowed")), "%s",
                  json_string_value(json_object_get(json_object_get(resp, "status"), "message")));
    json_decref(root);
    free(olds);
    free(news);

    /* A Pod of a group moved to another group (and its prebuilt workload with it): refused. */
    json_t *moved = json_deep_copy(marked);
    json_t *mlabels = json_object_get(json_object_get(moved, "metadata"), "labels");
    json_object_set_new(mlabels, "kueue.x-k8s.io/pod-group-name", json_string("other"));
    json_object_set_new(mlabels, "kueue.x-k8s.io/prebuilt-workload-name", json_string("other"));
    olds = json_dumps(marked, JSON_COMPACT);
    news = json_dumps(moved, JSON_COMPACT);
    review(body, sizeof(body), "UPDATE", "Pod", news, olds);
    root = run("/validate--v1-pod", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
               "metadata.labels[kueue.x-k8s.io/pod-group-name]: field "
               "is immutable"));
    json_decref(root);
    free(olds);
    free(news);
    json_decref(moved);
    json_decref(marked);
    json_decref(old);
    json_decref(owner);
}
END_TEST

START_TEST(test_jobset_queue_and_priority_rules)
{
    char js_old[2048], js_new[2048], body[8192];
    json_t *root, *resp;

    /* Running (admitted): the queue cannot change. */
    jobset(js_old, sizeof(js_old), "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
           "\"suspend\":false,");
    jobset(js_new, sizeof(js_new), "ns1", "\"kueue.x-k8s.io/queue-name\":\"other\"",
           "\"suspend\":false,");
    review(body, sizeof(body), "UPDATE", "JobSet", js_new, js_old);
    cluster.audits = 0;
    root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
                     "metadata.labels[kueue.x-k8s.io/queue-name]: field is immutable");
    ck_assert_int_eq(cluster.audits, 1);
    ck_assert(!cluster.last_allowed);
    json_decref(root);

    /* Held: it may move to another queue. */
    jobset(js_old, sizeof(js_old), "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
           "\"suspend\":true,");
    jobset(js_new, sizeof(js_new), "ns1", "\"kueue.x-k8s.io/queue-name\":\"other\"",
           "\"suspend\":true,");
    review(body, sizeof(body), "UPDATE", "JobSet", js_new, js_old);
    root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    json_decref(root);

    /* A priority class added to a running one, or removed: refused. */
    jobset(js_old, sizeof(js_old), "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
           "\"suspend\":false,");
    jobset(js_new, sizeof(js_new), "ns1",
           "\"kueue.x-k8s.io/queue-name\":\"lq\",\"kueue.x-k8s.io/priority-class\":\"high\"",
           "\"suspend\":false,");
    review(body, sizeof(body), "UPDATE", "JobSet", js_new, js_old);
    root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
        "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot be added "
        "to a non-suspended workload");
    json_decref(root);
    review(body, sizeof(body), "UPDATE", "JobSet", js_old, js_new);
    root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
        "metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass cannot be "
        "removed from a workload");
    json_decref(root);

    /* Create: the queue name is a CRD name, the maximum execution time positive. */
    jobset(js_new, sizeof(js_new), "ns1",
           "\"kueue.x-k8s.io/queue-name\":\"Bad_Name\",\"kueue.x-k8s.io/max-exec-time-seconds\":"
           "\"0\"",
           "");
    review(body, sizeof(body), "CREATE", "JobSet", js_new, NULL);
    root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    {
        const char *m =
            json_string_value(json_object_get(json_object_get(resp, "status"), "message"));
        ck_assert_ptr_nonnull(strstr(m, "[metadata.labels[kueue.x-k8s.io/queue-name]: a "
                                        "lowercase RFC 1123 subdomain"));
        ck_assert_ptr_nonnull(strstr(
            m, "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: should be greater than 0]"));
    }
    json_decref(root);
}
END_TEST

/* A batch/v1 Job with labels `labels`, spec.suspend `suspend`, and `extra` members in its pod
 * spec (a field newer than sluice's list, say). */
static void job(char *buf, size_t cap, const char *labels, const char *suspend, const char *extra)
{
    snprintf(buf, cap,
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
             "\"namespace\":\"ns1\",\"labels\":{%s}},\"spec\":{\"suspend\":%s,\"template\":{"
             "\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
             "\"restartPolicy\":\"Never\"}}}}",
             labels, suspend, extra);
}

static const char *denial(json_t *resp)
{
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    return json_string_value(json_object_get(json_object_get(resp, "status"), "message"));
}

START_TEST(test_unknown_fields_never_skip_validation)
{
    /* A PodSpec field newer than sluice's list (and one in a container). */
    const char *newer = "\"hostUsersV9\":false,\"resourceClaimsV9\":[{\"name\":\"x\"}],";
    char old[2048], obj[2048], body[8192];
    json_t *root, *resp;

    /* CREATE: the rules still run on what sluice knows. */
    job(obj, sizeof(obj), "\"kueue.x-k8s.io/queue-name\":\"Bad_Name\"", "true", newer);
    review(body, sizeof(body), "CREATE", "Job", obj, NULL);
    root = run("/validate-batch-v1-job", body, &resp);
    ck_assert_ptr_nonnull(
        strstr(denial(resp), "metadata.labels[kueue.x-k8s.io/queue-name]: a lowercase RFC 1123"));
    json_decref(root);
    /* ... and such a field alone is no reason to refuse. */
    job(obj, sizeof(obj), "\"kueue.x-k8s.io/queue-name\":\"lq\"", "true", newer);
    review(body, sizeof(body), "CREATE", "Job", obj, NULL);
    root = run("/validate-batch-v1-job", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    json_decref(root);

    /* UPDATE of an admitted (running) Job: its queue cannot be changed by adding a new field. */
    job(old, sizeof(old), "\"kueue.x-k8s.io/queue-name\":\"lq\"", "false", newer);
    job(obj, sizeof(obj), "\"kueue.x-k8s.io/queue-name\":\"other\"", "false", newer);
    review(body, sizeof(body), "UPDATE", "Job", obj, old);
    root = run("/validate-batch-v1-job", body, &resp);
    ck_assert_str_eq(denial(resp),
                     "metadata.labels[kueue.x-k8s.io/queue-name]: field is immutable");
    json_decref(root);
    /* ... nor its priority class. */
    job(old, sizeof(old), "\"kueue.x-k8s.io/queue-name\":\"lq\"", "false", "");
    job(obj, sizeof(obj),
        "\"kueue.x-k8s.io/queue-name\":\"lq\",\"kueue.x-k8s.io/priority-class\":\"high\"", "false",
        newer);
    review(body, sizeof(body), "UPDATE", "Job", obj, old);
    root = run("/validate-batch-v1-job", body, &resp);
    ck_assert_ptr_nonnull(strstr(denial(resp), "kueue.x-k8s.io/priority-class"));
    json_decref(root);

    /* An old object that cannot be decoded at all: refused, not judged by the create rules. */
    job(old, sizeof(old), "\"kueue.x-k8s.io/queue-name\":\"lq\"", "\"not a bool\"", "");
    job(obj, sizeof(obj), "\"kueue.x-k8s.io/queue-name\":\"other\"", "false", "");
    review(body, sizeof(body), "UPDATE", "Job", obj, old);
    root = run("/validate-batch-v1-job", body, &resp);
    ck_assert_ptr_nonnull(strstr(denial(resp), "oldObject: the stored object cannot be decoded"));
    ck_assert_ptr_nonnull(strstr(denial(resp), "spec.suspend"));
    json_decref(root);

    /* A JobSet whose pod template has the newer field: the same. */
    {
        char js_old[2048], js_new[2048];
        jobset(js_old, sizeof(js_old), "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
               "\"suspend\":false,\"newSpecFieldV9\":1,");
        jobset(js_new, sizeof(js_new), "ns1", "\"kueue.x-k8s.io/queue-name\":\"other\"",
               "\"suspend\":false,\"newSpecFieldV9\":1,");
        review(body, sizeof(body), "UPDATE", "JobSet", js_new, js_old);
        root = run("/validate-jobset-x-k8s-io-v1alpha2-jobset", body, &resp);
        ck_assert_str_eq(denial(resp),
                         "metadata.labels[kueue.x-k8s.io/queue-name]: field is immutable");
        json_decref(root);
    }
    /* Kueue's own kinds: a field unknown to sluice is an error there (sluice's schema). */
    {
        char cq[2048];
        snprintf(cq, sizeof(cq), cq_valid, "16");
        strcpy(strstr(cq, "\"cohortName\""), "\"madeUp\":1}}");
        review(body, sizeof(body), "CREATE", "ClusterQueue", cq, NULL);
        root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
        ck_assert_ptr_nonnull(strstr(denial(resp), "unknown field \"madeUp\""));
        json_decref(root);
    }
}
END_TEST

START_TEST(test_local_queue_cluster_queue_immutable)
{
    char body[4096];
    json_t *root, *resp;
    const char *old = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
                      "\"metadata\":{\"name\":\"lq\",\"namespace\":\"ns1\"},\"spec\":{"
                      "\"clusterQueue\":\"cq-a\"}}";
    const char *obj = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
                      "\"metadata\":{\"name\":\"lq\",\"namespace\":\"ns1\"},\"spec\":{"
                      "\"clusterQueue\":\"cq-b\"}}";

    review(body, sizeof(body), "UPDATE", "LocalQueue", obj, old);
    root = run("/validate-kueue-x-k8s-io-v1beta2-localqueue", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
               "spec.clusterQueue"));
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
               "field is immutable"));
    json_decref(root);
}
END_TEST

START_TEST(test_delete_is_allowed_and_audited)
{
    char body[4096], obj[2048];
    json_t *root, *resp;

    memset(&cluster, 0, sizeof(cluster));
    snprintf(obj, sizeof(obj), cq_valid, "16");
    review(body, sizeof(body), "DELETE", "ClusterQueue", NULL, obj);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    ck_assert_int_eq(cluster.audits, 1);
    ck_assert_str_eq(cluster.last_op, "DELETE");
    json_decref(root);
}
END_TEST

START_TEST(test_wrong_kind_is_a_bad_request)
{
    char body[4096];
    json_t *root, *resp;
    const char *lq = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\","
                     "\"metadata\":{\"name\":\"lq\",\"namespace\":\"ns1\"},\"spec\":{"
                     "\"clusterQueue\":\"cq-a\"}}";

    review(body, sizeof(body), "CREATE", "LocalQueue", lq, NULL);
    root = run("/validate-kueue-x-k8s-io-v1beta2-clusterqueue", body, &resp);
    ck_assert(json_is_false(json_object_get(resp, "allowed")));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(resp, "status"), "code")),
                     400);
    json_decref(root);
}
END_TEST

START_TEST(test_malformed_reviews)
{
    static const struct {
        const char *path, *body, *needle;
        int status;
    } cases[] = {
        {"/nope", "{}", "no webhook at /nope", 404},
        {"/validate-batch-v1-job", "not json", "invalid JSON", 400},
        {"/validate-batch-v1-job", "[]", "not a JSON object", 400},
        {"/validate-batch-v1-job", "{\"apiVersion\":\"admission.k8s.io/v1beta1\"}",
         "apiVersion must be admission.k8s.io/v1", 400},
        {"/validate-batch-v1-job",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
         "\"AdmissionReview\"}",
         "request: Required value", 400},
        {"/validate-batch-v1-job",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
         "\"operation\":\"CREATE\"}}",
         "request.uid: Required value", 400},
        {"/validate-batch-v1-job",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
         "\"uid\":\"u\",\"operation\":\"PATCH\"}}",
         "request.operation", 400},
        {"/validate-batch-v1-job",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
         "\"uid\":\"u\",\"operation\":\"CREATE\"}}",
         "request.object: Required value", 400},
        {"/validate-batch-v1-job",
         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
         "\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":7}}",
         "request.object: must be an object", 400},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = NULL;
        int status = 0;
        err_msg_t msg;
        err_t rc = hook_admission_review(&env, cases[i].path, cases[i].body, strlen(cases[i].body),
                                         &status, &out, &msg);
        ck_assert_msg(rc != ERR_OK, "case %zu accepted", i);
        ck_assert_int_eq(status, cases[i].status);
        ck_assert_msg(strstr(msg.text, cases[i].needle) != NULL, "case %zu: %s", i, msg.text);
        ck_assert_ptr_null(out);
    }
}
END_TEST

START_TEST(test_http_handler_method_and_content_type)
{
    hook_request_t req;
    hook_response_t resp;

    memset(&req, 0, sizeof(req));
    memset(&resp, 0, sizeof(resp));
    req.method = "GET";
    req.path = "/validate-batch-v1-job";
    hook_admission_handler((void *)&env, &req, &resp);
    ck_assert_int_eq(resp.status, 405);
    memset(&resp, 0, sizeof(resp));
    req.method = "POST";
    req.headers[0].name = "content-type";
    req.headers[0].value = "text/plain";
    req.nheaders = 1;
    hook_admission_handler((void *)&env, &req, &resp);
    ck_assert_int_eq(resp.status, 415);
    memset(&resp, 0, sizeof(resp));
    req.headers[0].value = "application/json";
    req.body = "{";
    req.body_len = 1;
    hook_admission_handler((void *)&env, &req, &resp);
    ck_assert_int_eq(resp.status, 400);
    ck_assert_ptr_nonnull(strstr(resp.owned_body, "malformed AdmissionReview"));
    free(resp.owned_body);
}
END_TEST

/* ---- plain Pods (/mutate--v1-pod) -------------------------------------------------------- */

/* Does `patch` (an array of operations) touch `path`? */
static bool patch_has(json_t *patch, const char *path)
{
    json_t *op;
    size_t i;

    json_array_foreach(patch, i, op)
    {
        if (strcmp(json_string_value(json_object_get(op, "path")), path) == 0)
            return true;
    }
    return false;
}

/* A queued Deployment: its template marked (Kueue's deployment webhook) so that every Pod it
 * creates is a managed, gated plain Pod. */
START_TEST(test_deployment_template_marked)
{
    char body[4096];
    json_t *root, *resp, *patch;
    const char *dep =
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"d\","
        "\"namespace\":\"ns1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}},\"spec\":{"
        "\"replicas\":2,\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{"
        "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}";

    review(body, sizeof(body), "CREATE", "Deployment", dep, NULL);
    root = run("/mutate-apps-v1-deployment", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    patch = patch_of(resp);
    ck_assert(patch_has(patch, "/spec/template/metadata/labels/kueue.x-k8s.io~1managed"));
    ck_assert(patch_has(patch, "/spec/template/metadata/labels/kueue.x-k8s.io~1queue-name"));
    ck_assert(patch_has(patch, "/spec/template/metadata/annotations"));
    json_decref(patch);
    json_decref(root);
}
END_TEST

START_TEST(test_pod_gated_and_marked)
{
    char body[4096], pod[1024];
    json_t *root, *resp, *patch;
    static const char podf[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"%s\",\"labels\":{%s}%s},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
        "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";

    /* Queued: Kueue's pod webhook -- managed label and finalizer, the gate, the role hash. */
    snprintf(pod, sizeof(pod), podf, "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"", "");
    review(body, sizeof(body), "CREATE", "Pod", pod, NULL);
    root = run("/mutate--v1-pod", body, &resp);
    ck_assert(json_is_true(json_object_get(resp, "allowed")));
    patch = patch_of(resp);
    ck_assert(patch_has(patch, "/metadata/labels/kueue.x-k8s.io~1managed"));
    ck_assert(patch_has(patch, "/metadata/finalizers"));
    ck_assert(patch_has(patch, "/spec/schedulingGates"));
    ck_assert(patch_has(patch, "/metadata/annotations"));
    json_decref(patch);
    json_decref(root);
    /* No queue name, no default LocalQueue (ns2): left alone. */
    snprintf(pod, sizeof(pod), podf, "ns2", "", "");
    review(body, sizeof(body), "CREATE", "Pod", pod, NULL);
    root = run("/mutate--v1-pod", body, &resp);
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
    /* A managed JobSet's Pod: its owner's admission covers it. */
    snprintf(pod, sizeof(pod), podf, "ns1", "\"kueue.x-k8s.io/queue-name\":\"lq\"",
             ",\"ownerReferences\":[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":"
             "\"JobSet\",\"name\":\"js\",\"uid\":\"u\",\"controller\":true}]");
    review(body, sizeof(body), "CREATE", "Pod", pod, NULL);
    root = run("/mutate--v1-pod", body, &resp);
    ck_assert_ptr_null(json_object_get(resp, "patch"));
    json_decref(root);
    /* ... unless the owner marked it pod-suspending-parent (a StatefulSet's Pod: the owner is
     * admitted through its Pods): gated all the same. */
    snprintf(pod, sizeof(pod), podf, "ns1", "",
             ",\"annotations\":{\"kueue.x-k8s.io/pod-suspending-parent\":\"statefulset\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"jobset.x-k8s.io/v1alpha2\",\"kind\":"
             "\"JobSet\",\"name\":\"js\",\"uid\":\"u\",\"controller\":true}]");
    review(body, sizeof(body), "CREATE", "Pod", pod, NULL);
    root = run("/mutate--v1-pod", body, &resp);
    patch = patch_of(resp);
    ck_assert(patch_has(patch, "/spec/schedulingGates"));
    json_decref(patch);
    json_decref(root);
}
END_TEST

/* Every allocation of a review fails in turn: the answer is the failure-free one, or the request
 * fails with 500 (the API server then applies the webhook's failurePolicy) -- never a 400 that
 * blames the caller, never a different verdict or patch. */
START_TEST(test_allocation_failures_answer_500_or_the_same)
{
    char bodies[4][4096], cq[1024];
    static const char *const paths[] = {"/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
                                        "/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
                                        "/mutate-batch-v1-job", "/validate-batch-v1-job"};
    const char *job = "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\","
                      "\"namespace\":\"ns1\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"nope\"}},"
                      "\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                      "\"i\"}],\"restartPolicy\":\"Never\"}}}}";

    snprintf(cq, sizeof(cq), cq_valid, "16");
    review(bodies[0], sizeof(bodies[0]), "CREATE", "ClusterQueue", cq, NULL);
    review(bodies[1], sizeof(bodies[1]), "CREATE", "ClusterQueue", cq_bad, NULL);
    review(bodies[2], sizeof(bodies[2]), "CREATE", "Job", job, NULL);
    review(bodies[3], sizeof(bodies[3]), "CREATE", "Job", job, NULL);
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char *ref = NULL;
        int ref_status = 0;
        err_msg_t msg;
        long n, failed500 = 0;

        ck_assert_int_eq(hook_admission_review(&env, paths[i], bodies[i], strlen(bodies[i]),
                                               &ref_status, &ref, &msg),
                         ERR_OK);
        ck_assert_int_eq(ref_status, 200);
        for (n = 1;; n++) {
            char *out = NULL;
            int status = 0;
            long made;
            err_t rc;

            oom_fail_at(n);
            rc = hook_admission_review(&env, paths[i], bodies[i], strlen(bodies[i]), &status, &out,
                                       &msg);
            made = oom_count();
            oom_fail_at(0);
            if (rc == ERR_OK) {
                ck_assert_int_eq(status, 200);
                ck_assert_msg(strcmp(out, ref) == 0, "%s, allocation %ld failed: %s\nwant %s",
                              paths[i], n, out, ref);
                free(out);
            } else {
                ck_assert_msg(status == 500, "%s, allocation %ld failed: HTTP %d: %s", paths[i], n,
                              status, msg.text);
                ck_assert_ptr_null(out);
                failed500++;
            }
            if (made < n)
                break;
        }
        ck_assert_int_gt(failed500, 5);
        free(ref);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hook_admission");
    TCase *tc = tcase_create("admission");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_invalid_cluster_queue_denied_with_paths);
    tcase_add_test(tc, test_valid_cluster_queue_allowed_and_audited);
    tcase_add_test(tc, test_dry_run_is_judged_but_not_audited);
    tcase_add_test(tc, test_quota_decrease_below_usage_warns);
    tcase_add_test(tc, test_no_effect_settings_warn);
    tcase_add_test(tc, test_cluster_queue_finalizer_patch);
    tcase_add_test(tc, test_job_defaults_queue_priority_and_suspend);
    tcase_add_test(tc, test_unmanaged_job_left_alone);
    tcase_add_test(tc, test_local_queue_cluster_queue_immutable);
    tcase_add_test(tc, test_delete_is_allowed_and_audited);
    tcase_add_test(tc, test_wrong_kind_is_a_bad_request);
    tcase_add_test(tc, test_malformed_reviews);
    tcase_add_test(tc, test_jobset_held_and_defaulted);
    tcase_add_test(tc, test_trainjob_held_with_runtime_patch);
    tcase_add_test(tc, test_child_job_and_disabled_kind_left_alone);
    tcase_add_test(tc, test_jobset_queue_and_priority_rules);
    tcase_add_test(tc, test_unknown_fields_never_skip_validation);
    tcase_add_test(tc, test_kind_paths);
    tcase_add_test(tc, test_pod_gated_and_marked);
    tcase_add_test(tc, test_deployment_template_marked);
    tcase_add_test(tc, test_statefulset_scale_up_waits_for_its_workload);
    tcase_add_test(tc, test_pod_group_name_added_by_update_allowed);
    tcase_add_test(tc, test_rayjob_unlabelled_rules);
    tcase_add_test(tc, test_http_handler_method_and_content_type);
    tcase_add_test(tc, test_allocation_failures_answer_500_or_the_same);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
