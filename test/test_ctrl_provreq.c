/* test_ctrl_provreq -- the pure parts of the ProvisioningRequest admission check: names as
 * Kueue's, the ProvisioningRequestConfig decoded and refused field by field, the request built
 * for a Workload, and a request's conditions as the check's next state. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/provreq.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);

    ck_assert_msg(v != NULL, "%s: %s", text, e.text);
    return v;
}

static void config(const char *spec, provreq_config_t *cfg)
{
    char buf[2048];
    err_msg_t msg = {{0}};
    json_t *o;

    snprintf(buf, sizeof(buf), "{\"spec\":%s}", spec);
    o = parse(buf);
    ck_assert_msg(provreq_config_decode(o, cfg, &msg) == ERR_OK, "%s", msg.text);
    json_decref(o);
}

/* The error decoding `spec`. */
static const char *config_err(const char *spec, char *out, size_t n)
{
    char buf[2048];
    err_msg_t msg = {{0}};
    provreq_config_t cfg;
    json_t *o;

    snprintf(buf, sizeof(buf), "{\"spec\":%s}", spec);
    o = parse(buf);
    ck_assert_int_eq(provreq_config_decode(o, &cfg, &msg), ERR_INVALID);
    json_decref(o);
    snprintf(out, n, "%s", msg.text);
    return out;
}

START_TEST(names_as_kueue)
{
    char buf[PROVREQ_NAME_MAX + 1], wl[300];
    err_msg_t msg = {{0}};

    ck_assert_int_eq(provreq_name("job-train-1a2b3", "prov", 1, buf, sizeof(buf), &msg), ERR_OK);
    ck_assert_str_eq(buf, "job-train-1a2b3-prov-1");
    ck_assert_int_eq(provreq_template_name(buf, "main", buf, sizeof(buf), &msg), ERR_OK);
    ck_assert_str_eq(buf, "ppt-job-train-1a2b3-prov-1-main");
    ck_assert_int_eq(provreq_attempt("job-train-1a2b3-prov-12", "job-train-1a2b3", "prov"), 12);
    ck_assert_int_eq(provreq_attempt("job-train-1a2b3-prov-", "job-train-1a2b3", "prov"), 0);
    ck_assert_int_eq(provreq_attempt("job-train-1a2b3-prov-1x", "job-train-1a2b3", "prov"), 0);
    ck_assert_int_eq(provreq_attempt("job-train-1a2b3-other-1", "job-train-1a2b3", "prov"), 0);
    ck_assert_int_eq(provreq_attempt("job-train-1a2b3-prov-99999999999", "job-train-1a2b3", "prov"),
                     0);
    /* Over 247 bytes: cut, '-', 5 hex digits of the SHA-1 of the whole name (253 bytes). */
    memset(wl, 'w', 250);
    wl[250] = '\0';
    ck_assert_int_eq(provreq_name(wl, "prov", 3, buf, sizeof(buf), &msg), ERR_OK);
    ck_assert_uint_eq(strlen(buf), 253);
    ck_assert_int_eq(buf[247], '-');
    ck_assert(strspn(buf + 248, "0123456789abcdef") == 5);
    ck_assert_int_eq(strncmp(buf, wl, 247), 0);
    {
        char again[PROVREQ_NAME_MAX + 1], other[PROVREQ_NAME_MAX + 1];
        ck_assert_int_eq(provreq_name(wl, "prov", 3, again, sizeof(again), &msg), ERR_OK);
        ck_assert_str_eq(buf, again);
        ck_assert_int_eq(provreq_name(wl, "prov", 4, other, sizeof(other), &msg), ERR_OK);
        ck_assert_str_ne(buf, other); /* the hash tells the attempts apart */
    }
    /* A 247-byte name is kept whole. */
    memset(wl, 'a', 247);
    wl[247] = '\0';
    ck_assert_int_eq(provreq_limit_name(wl, buf, sizeof(buf), &msg), ERR_OK);
    ck_assert_str_eq(buf, wl);
    ck_assert_int_eq(provreq_limit_name(wl, buf, 10, &msg), ERR_INVALID);
}
END_TEST

START_TEST(config_defaults_and_fields)
{
    provreq_config_t cfg;

    config("{\"provisioningClassName\":\"check-capacity.autoscaling.x-k8s.io\"}", &cfg);
    ck_assert_str_eq(cfg.class_name, "check-capacity.autoscaling.x-k8s.io");
    ck_assert_int_eq(cfg.backoff_limit, 3);
    ck_assert_int_eq(cfg.backoff_base_s, 60);
    ck_assert_int_eq(cfg.backoff_max_s, 1800);
    ck_assert_uint_eq(json_object_size(cfg.parameters), 0);
    ck_assert_uint_eq(cfg.nmanaged, 0);
    /* Backoff: 60, 120, 240, ..., capped at 1800. */
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, 0), 60);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 1, 0), 120);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 4, 0), 960);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 5, 0), 1800);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 40, 0), 1800);
    /* Kueue's jitter (0.0001 of the delay) never makes a whole second below 10000 s. */
    ck_assert_int_eq(provreq_backoff_s(&cfg, 40, UINT32_MAX), 1800);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, UINT32_MAX), 60);
    provreq_config_fini(&cfg);
    /* Above that it does, by up to a second per 10000 s; the first delay is the base even over
     * the cap (client-go's Backoff caps from the second step on). */
    config("{\"provisioningClassName\":\"c\",\"retryStrategy\":{\"backoffBaseSeconds\":"
           "20000,\"backoffMaxSeconds\":30000}}",
           &cfg);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, 0), 20000);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, UINT32_MAX), 20001);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, UINT32_MAX / 2), 20000);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 1, 0), 30000);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 1, UINT32_MAX), 30002);
    provreq_config_fini(&cfg);
    config("{\"provisioningClassName\":\"c\",\"retryStrategy\":{\"backoffBaseSeconds\":"
           "60,\"backoffMaxSeconds\":30}}",
           &cfg);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 0, 0), 60);
    ck_assert_int_eq(provreq_backoff_s(&cfg, 1, 0), 30);
    provreq_config_fini(&cfg);

    config("{\"provisioningClassName\":\"queued-provisioning.gke.io\",\"parameters\":{\"a\":\"1\"},"
           "\"managedResources\":[\"nvidia.com/gpu\"],\"retryStrategy\":{\"backoffLimitCount\":1,"
           "\"backoffBaseSeconds\":5},\"podSetUpdates\":{\"nodeSelector\":[{\"key\":\"pool\","
           "\"valueFromProvisioningClassDetail\":\"poolName\"}]},"
           "\"podSetMergePolicy\":\"IdenticalPodTemplates\"}",
           &cfg);
    ck_assert_str_eq(json_string_value(json_object_get(cfg.parameters, "a")), "1");
    ck_assert_uint_eq(cfg.nmanaged, 1);
    ck_assert_str_eq(cfg.managed[0], "nvidia.com/gpu");
    ck_assert_int_eq(cfg.backoff_limit, 1);
    ck_assert_int_eq(cfg.backoff_base_s, 5);
    ck_assert_int_eq(cfg.backoff_max_s, 1800); /* the field's own default */
    ck_assert_str_eq(cfg.merge_policy, "IdenticalPodTemplates");
    ck_assert_uint_eq(json_array_size(cfg.node_selector), 1);
    provreq_config_fini(&cfg);
    provreq_config_fini(NULL);
}
END_TEST

START_TEST(config_errors_name_the_field)
{
    char e[512];

    ck_assert_str_eq(config_err("{}", e, sizeof(e)),
                     "spec.provisioningClassName: required (a string)");
    ck_assert_str_eq(
        config_err("{\"provisioningClassName\":\"c\",\"parameters\":{\"x\":1}}", e, sizeof(e)),
        "spec.parameters.x: must be a string");
    ck_assert_str_eq(
        config_err("{\"provisioningClassName\":\"c\",\"managedResources\":[\"\"]}", e, sizeof(e)),
        "spec.managedResources[0]: must be a resource name");
    ck_assert_str_eq(config_err("{\"provisioningClassName\":\"c\",\"retryStrategy\":{"
                                "\"backoffLimitCount\":-1}}",
                                e, sizeof(e)),
                     "spec.retryStrategy.backoffLimitCount: must be an integer in 0..2147483647");
    ck_assert_str_eq(
        config_err("{\"provisioningClassName\":\"c\",\"podSetMergePolicy\":\"Any\"}", e, sizeof(e)),
        "spec.podSetMergePolicy: must be IdenticalPodTemplates or "
        "IdenticalWorkloadSchedulingRequirements");
    ck_assert_str_eq(config_err("{\"provisioningClassName\":\"c\",\"podSetUpdates\":{"
                                "\"nodeSelector\":[{\"key\":\"k\"}]}}",
                                e, sizeof(e)),
                     "spec.podSetUpdates.nodeSelector[0]: key and "
                     "valueFromProvisioningClassDetail are required strings");
    {
        err_msg_t msg = {{0}};
        provreq_config_t cfg;
        json_t *o = parse("{}");
        ck_assert_int_eq(provreq_config_decode(o, &cfg, &msg), ERR_INVALID);
        ck_assert_str_eq(msg.text, "spec: required (an object)");
        json_decref(o);
    }
}
END_TEST

static const char *WL =
    "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\",\"metadata\":{\"name\":"
    "\"wl\",\"namespace\":\"ns\",\"uid\":\"u-1\",\"annotations\":{\"provreq.kueue.x-k8s.io/"
    "ValidUntilSeconds\":\"60\",\"other\":\"x\"}},\"spec\":{\"podSets\":["
    "{\"name\":\"driver\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}},"
    "{\"name\":\"workers\",\"count\":4,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}}]},"
    "\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":["
    "{\"name\":\"driver\",\"flavors\":{\"cpu\":\"f\"}},"
    "{\"name\":\"workers\",\"flavors\":{\"nvidia.com/gpu\":\"f\"},\"count\":3}]}}}";

START_TEST(request_built_for_the_managed_pod_sets)
{
    provreq_config_t cfg;
    json_t *wl = parse(WL), *pr, *tmpls;
    err_msg_t msg = {{0}};
    char *s;

    config("{\"provisioningClassName\":\"queued-provisioning.gke.io\",\"parameters\":{"
           "\"maxRunDurationSeconds\":\"600\"},\"managedResources\":[\"nvidia.com/gpu\"]}",
           &cfg);
    ck_assert_int_eq(provreq_build(wl, "prov", 2, &cfg, &pr, &tmpls, &msg), ERR_OK);
    ck_assert_ptr_nonnull(pr);
    s = json_dumps(json_object_get(pr, "spec"), JSON_SORT_KEYS | JSON_COMPACT);
    /* Only "workers" uses the GPU; its admitted count (3) is the request's. */
    ck_assert_str_eq(s, "{\"parameters\":{\"ValidUntilSeconds\":\"60\",\"maxRunDurationSeconds\":"
                        "\"600\"},\"podSets\":[{\"count\":3,\"podTemplateRef\":{\"name\":"
                        "\"ppt-wl-prov-2-workers\"}}],\"provisioningClassName\":"
                        "\"queued-provisioning.gke.io\"}");
    free(s);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pr, "metadata"), "name")),
                     "wl-prov-2");
    s = json_dumps(json_object_get(json_object_get(pr, "metadata"), "ownerReferences"),
                   JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_str_eq(s, "[{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"blockOwnerDeletion\":true,"
                        "\"controller\":true,\"kind\":\"Workload\",\"name\":\"wl\",\"uid\":"
                        "\"u-1\"}]");
    free(s);
    ck_assert_uint_eq(json_array_size(tmpls), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(tmpls, 0), "podset")),
                     "workers");
    {
        json_t *pt = json_object_get(json_array_get(tmpls, 0), "object");
        ck_assert_str_eq(json_string_value(json_object_get(pt, "kind")), "PodTemplate");
        ck_assert_str_eq(
            json_string_value(json_object_get(json_object_get(pt, "metadata"), "name")),
            "ppt-wl-prov-2-workers");
        ck_assert_ptr_nonnull(json_object_get(json_object_get(pt, "template"), "spec"));
        /* A limit without a request is the request too (Kueue's UseLimitsAsMissingRequests). */
        s = json_dumps(json_object_get(json_object_get(pt, "template"), "spec"),
                       JSON_SORT_KEYS | JSON_COMPACT);
        ck_assert_str_eq(s,
                         "{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":{"
                         "\"nvidia.com/gpu\":\"1\"},\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}");
        free(s);
        /* the Workload itself is left as it was */
        {
            const json_t *ws =
                json_array_get(json_object_get(json_object_get(wl, "spec"), "podSets"), 1);
            const json_t *c0 = json_array_get(
                json_object_get(json_object_get(json_object_get(ws, "template"), "spec"),
                                "containers"),
                0);
            ck_assert_ptr_null(json_object_get(
                json_object_get(json_object_get(c0, "resources"), "requests"), "nvidia.com/gpu"));
        }
    }
    json_decref(pr);
    json_decref(tmpls);
    provreq_config_fini(&cfg);

    /* Nothing managed is used: no request (the check is Ready, "not needed"). */
    config("{\"provisioningClassName\":\"c\",\"managedResources\":[\"example.com/fpga\"]}", &cfg);
    ck_assert_int_eq(provreq_build(wl, "prov", 1, &cfg, &pr, &tmpls, &msg), ERR_OK);
    ck_assert_ptr_null(pr);
    ck_assert_ptr_null(tmpls);
    provreq_config_fini(&cfg);

    /* Every pod set when nothing is listed; a pod set without an assignment is refused. */
    config("{\"provisioningClassName\":\"c\"}", &cfg);
    ck_assert_int_eq(provreq_build(wl, "prov", 1, &cfg, &pr, &tmpls, &msg), ERR_OK);
    ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(pr, "spec"), "podSets")), 2);
    json_decref(pr);
    json_decref(tmpls);
    json_array_remove(json_object_get(json_object_get(json_object_get(wl, "status"), "admission"),
                                      "podSetAssignments"),
                      0);
    ck_assert_int_eq(provreq_build(wl, "prov", 1, &cfg, &pr, &tmpls, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text,
                     "inconsistent podSet assignments: missing assignment for PodSet \"driver\"");
    provreq_config_fini(&cfg);
    json_decref(wl);
}
END_TEST

/* A request with condition `type`=True (and Accepted); none but Accepted when NULL. */
static json_t *request(const char *type, const char *message)
{
    json_t *pr =
        parse("{\"metadata\":{\"name\":\"wl-prov-1\"},\"spec\":{\"provisioningClassName\":\"cls\","
              "\"podSets\":[{\"count\":2,\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-main\"}}]},"
              "\"status\":{\"provisioningClassDetails\":{\"poolName\":\"p7\"},\"conditions\":["
              "{\"type\":\"Accepted\",\"status\":\"True\",\"message\":\"ok\"}]}}");

    if (type != NULL)
        json_array_append_new(
            json_object_get(json_object_get(pr, "status"), "conditions"),
            json_pack("{s:s,s:s,s:s}", "type", type, "status", "True", "message", message));
    return pr;
}

START_TEST(conditions_to_check_states)
{
    provreq_config_t cfg;
    static char pname[] = "prov", reset[] = "Reset to Pending after eviction. Previously: Retry",
                ready[] = "capacity is ready", main_ps[] = "main";
    admission_check_state_t cur = {.name = pname, .state = CHECK_STATE_PENDING};
    provreq_verdict_t v;
    json_t *pr;

    config("{\"provisioningClassName\":\"cls\",\"retryStrategy\":{\"backoffLimitCount\":1,"
           "\"backoffBaseSeconds\":5,\"backoffMaxSeconds\":8},\"podSetUpdates\":{"
           "\"nodeSelector\":[{\"key\":\"pool\",\"valueFromProvisioningClassDetail\":"
           "\"poolName\"},{\"key\":\"zone\",\"valueFromProvisioningClassDetail\":\"zone\"}]}}",
           &cfg);

    /* No answer yet: Pending, no message. */
    pr = request(NULL, NULL);
    provreq_decide(pr, 1, &cur, &cfg, false, true, 0, &v);
    ck_assert(!v.change);
    ck_assert_int_eq(v.state, CHECK_STATE_PENDING);
    json_decref(pr);

    /* Provisioned: Ready, with the annotations and the class detail's node selector. */
    pr = request("Provisioned", "capacity is ready");
    provreq_decide(pr, 1, &cur, &cfg, false, true, 0, &v);
    ck_assert(v.change && v.podset_updates);
    ck_assert_int_eq(v.state, CHECK_STATE_READY);
    ck_assert_str_eq(v.message, "capacity is ready");
    {
        char *names[] = {main_ps};
        json_t *u = provreq_updates(pr, names, NULL, 1, &cfg);
        char *s = json_dumps(u, JSON_SORT_KEYS | JSON_COMPACT);
        ck_assert_str_eq(s, "[{\"annotations\":{\"autoscaling.x-k8s.io/consume-provisioning-"
                            "request\":\"wl-prov-1\",\"autoscaling.x-k8s.io/provisioning-class-"
                            "name\":\"cls\"},\"name\":\"main\",\"nodeSelector\":{\"pool\":"
                            "\"p7\"}}]");
        free(s);
        json_decref(u);
    }
    json_decref(pr);

    /* Failed, attempt 1 of backoffLimitCount 1: Retry after 5 s; attempt 2: Rejected. */
    pr = request("Failed", "out of stock");
    provreq_decide(pr, 1, &cur, &cfg, false, true, 0, &v);
    ck_assert(v.change && v.set_requeue);
    ck_assert_int_eq(v.state, CHECK_STATE_RETRY);
    ck_assert_int_eq(v.requeue_after_s, 5);
    ck_assert_str_eq(v.message, "Retrying after failure: out of stock");
    /* After the eviction (retryCount 1) the same old request only keeps the message. */
    cur.has_retry_count = true;
    cur.retry_count = 1;
    cur.message = reset;
    provreq_decide(pr, 1, &cur, &cfg, false, true, 0, &v);
    ck_assert_int_eq(v.state, CHECK_STATE_PENDING);
    ck_assert(!v.set_requeue);
    ck_assert_str_eq(v.message, "Retrying after failure: out of stock");
    provreq_decide(pr, 2, &cur, &cfg, false, true, 0, &v);
    ck_assert(v.change);
    ck_assert_int_eq(v.state, CHECK_STATE_REJECTED);
    ck_assert_str_eq(v.message, "out of stock");
    json_decref(pr);

    /* The backoff doubles with the retries, capped (retryCount 1: 10 s -> 8 s). */
    cfg.backoff_limit = 5;
    pr = request("BookingExpired", "booking gone");
    provreq_decide(pr, 2, &cur, &cfg, false, true, 0, &v);
    ck_assert_int_eq(v.state, CHECK_STATE_RETRY);
    ck_assert_int_eq(v.requeue_after_s, 8);
    ck_assert_str_eq(v.message, "Retrying after booking expired: booking gone");
    /* Once admitted an expired booking changes nothing (the pods consumed it). */
    cur.state = CHECK_STATE_READY;
    cur.message = ready;
    provreq_decide(pr, 2, &cur, &cfg, true, true, 0, &v);
    ck_assert(!v.change);
    json_decref(pr);

    /* CapacityRevoked: Rejected while the Workload runs. */
    pr = request("CapacityRevoked", "nodes deleted");
    provreq_decide(pr, 2, &cur, &cfg, true, true, 0, &v);
    ck_assert(v.change);
    ck_assert_int_eq(v.state, CHECK_STATE_REJECTED);
    ck_assert_str_eq(v.message, "nodes deleted");
    provreq_decide(pr, 2, &cur, &cfg, true, false, 0, &v);
    ck_assert(!v.change);
    json_decref(pr);
    provreq_config_fini(&cfg);
}
END_TEST

START_TEST(managed_resources_in_any_container)
{
    provreq_config_t cfg;
    json_t *t;

    config("{\"provisioningClassName\":\"c\",\"managedResources\":[\"nvidia.com/gpu\"]}", &cfg);
    t = parse("{\"spec\":{\"initContainers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":1}}}],"
              "\"containers\":[{\"resources\":{}}]}}");
    ck_assert(provreq_podset_uses(&cfg, t));
    json_decref(t);
    t = parse("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":1}}}]}}");
    ck_assert(!provreq_podset_uses(&cfg, t));
    json_decref(t);
    ck_assert(!provreq_podset_uses(&cfg, NULL));
    provreq_config_fini(&cfg);
}
END_TEST

/* A Workload of three GPU pod sets: "leader" and "workers" alike but for the command, "other"
 * asking for two GPUs. */
static const char *WL3 =
    "{\"metadata\":{\"name\":\"wl\",\"namespace\":\"ns\",\"uid\":\"u-1\"},\"spec\":{\"podSets\":["
    "{\"name\":\"leader\",\"count\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"command\":[\"lead\"],\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}},"
    "{\"name\":\"workers\",\"count\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"command\":[\"work\"],\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1000m\"}}}],"
    "\"tolerations\":[]}}},"
    "{\"name\":\"other\",\"count\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","
    "\"command\":[\"lead\"],\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"2\"}}}]}}}]},"
    "\"status\":{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":["
    "{\"name\":\"leader\",\"flavors\":{\"nvidia.com/gpu\":\"f\"}},"
    "{\"name\":\"workers\",\"flavors\":{\"nvidia.com/gpu\":\"f\"}},"
    "{\"name\":\"other\",\"flavors\":{\"nvidia.com/gpu\":\"f\"}}]}}}";

/* The request pod sets built for WL3 under `spec` (a config), as compact JSON (freed by the
 * caller), and how many PodTemplates. */
static char *merged_sets(const char *spec, size_t *ntemplates)
{
    provreq_config_t cfg;
    json_t *wl = parse(WL3), *pr, *tmpls;
    err_msg_t msg = {{0}};
    char *s;

    config(spec, &cfg);
    ck_assert_int_eq(provreq_build(wl, "prov", 1, &cfg, &pr, &tmpls, &msg), ERR_OK);
    s = json_dumps(json_object_get(json_object_get(pr, "spec"), "podSets"), JSON_COMPACT);
    *ntemplates = json_array_size(tmpls);
    json_decref(pr);
    json_decref(tmpls);
    json_decref(wl);
    provreq_config_fini(&cfg);
    return s;
}

START_TEST(pod_sets_merged_by_policy)
{
    size_t n;
    char *s;

    /* No policy: one request pod set per pod set. */
    s = merged_sets("{\"provisioningClassName\":\"c\"}", &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(s, "[{\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-leader\"},\"count\":1},"
                        "{\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-workers\"},\"count\":3},"
                        "{\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-other\"},\"count\":2}]");
    free(s);
    /* IdenticalPodTemplates: the commands differ, nothing merges. */
    s = merged_sets("{\"provisioningClassName\":\"c\",\"podSetMergePolicy\":"
                    "\"IdenticalPodTemplates\"}",
                    &n);
    ck_assert_uint_eq(n, 3);
    free(s);
    /* IdenticalWorkloadSchedulingRequirements: leader and workers ask for the same (1 and
     * 1000m; an empty toleration list is none), their counts add up under the leader's
     * template; other asks for more. */
    s = merged_sets("{\"provisioningClassName\":\"c\",\"podSetMergePolicy\":"
                    "\"IdenticalWorkloadSchedulingRequirements\"}",
                    &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(s, "[{\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-leader\"},\"count\":4},"
                        "{\"podTemplateRef\":{\"name\":\"ppt-wl-prov-1-other\"},\"count\":2}]");
    free(s);
}
END_TEST

/* Set the CPU request of the first container of template `t` to `v`. */
static void set_cpu(json_t *t, const char *v)
{
    json_t *c0 = json_array_get(json_object_get(json_object_get(t, "spec"), "containers"), 0);

    json_object_set_new(json_object_get(json_object_get(c0, "resources"), "requests"), "cpu",
                        json_string(v));
}

START_TEST(merge_policies_compare_as_kueue)
{
    static const char *const pol = "IdenticalWorkloadSchedulingRequirements";
    json_t *a = parse("{\"metadata\":{\"labels\":{\"x\":\"1\"}},\"spec\":{\"containers\":["
                      "{\"name\":\"a\",\"image\":\"i1\",\"resources\":{\"requests\":{\"cpu\":"
                      "\"500m\"}}}],\"nodeSelector\":{\"pool\":\"p\"}}}");
    json_t *b = parse("{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"i2\",\"resources\":"
                      "{\"requests\":{\"cpu\":\"0.5\"},\"limits\":{\"cpu\":\"1\"}}}],"
                      "\"nodeSelector\":{\"pool\":\"p\"}}}");
    json_t *c = json_deep_copy(a);

    /* Scheduling requirements: requests, not names, images, limits or labels. */
    ck_assert(provreq_can_merge(pol, a, b));
    ck_assert(!provreq_can_merge("IdenticalPodTemplates", a, b));
    ck_assert(provreq_can_merge("IdenticalPodTemplates", a, c));
    ck_assert(!provreq_can_merge(NULL, a, c));
    /* A node selector, a toleration, an affinity or another container tells them apart. */
    json_object_set_new(json_object_get(json_object_get(b, "spec"), "nodeSelector"), "zone",
                        json_string("z"));
    ck_assert(!provreq_can_merge(pol, a, b));
    json_object_del(json_object_get(json_object_get(b, "spec"), "nodeSelector"), "zone");
    json_object_set_new(json_object_get(b, "spec"), "tolerations",
                        parse("[{\"key\":\"gpu\",\"operator\":\"Exists\"}]"));
    ck_assert(!provreq_can_merge(pol, a, b));
    json_object_del(json_object_get(b, "spec"), "tolerations");
    json_object_set_new(json_object_get(b, "spec"), "affinity", parse("{\"nodeAffinity\":{}}"));
    ck_assert(!provreq_can_merge(pol, a, b));
    json_object_del(json_object_get(b, "spec"), "affinity");
    ck_assert(provreq_can_merge(pol, a, b));
    json_array_append_new(json_object_get(json_object_get(b, "spec"), "containers"),
                          parse("{\"name\":\"side\"}"));
    ck_assert(!provreq_can_merge(pol, a, b));
    /* Quantities equal by value, not by text; a different one differs. */
    set_cpu(c, "0.5");
    ck_assert(provreq_can_merge("IdenticalPodTemplates", a, c));
    set_cpu(c, "600m");
    ck_assert(!provreq_can_merge("IdenticalPodTemplates", a, c));
    ck_assert(!provreq_can_merge(pol, a, c));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}
END_TEST

START_TEST(merged_pod_sets_get_the_update)
{
    provreq_config_t cfg;
    json_t *pr = parse("{\"metadata\":{\"name\":\"wl-prov-1\"},\"spec\":{"
                       "\"provisioningClassName\":\"cls\",\"podSets\":[{\"podTemplateRef\":{"
                       "\"name\":\"ppt-wl-prov-1-leader\"},\"count\":4}]}}");
    char leader[] = "leader", workers[] = "workers", driver[] = "driver";
    char *names[] = {leader, workers, driver};
    bool in[] = {true, true, false};
    json_t *u;
    char *s;

    config("{\"provisioningClassName\":\"cls\"}", &cfg);
    u = provreq_updates(pr, names, in, 3, &cfg);
    s = json_dumps(u, JSON_COMPACT);
    /* workers was merged into leader's request pod set; driver was not in the request. */
    ck_assert_str_eq(s, "[{\"name\":\"leader\",\"annotations\":{\"autoscaling.x-k8s.io/consume-"
                        "provisioning-request\":\"wl-prov-1\",\"autoscaling.x-k8s.io/provisioning-"
                        "class-name\":\"cls\"}},{\"name\":\"workers\",\"annotations\":{"
                        "\"autoscaling.x-k8s.io/consume-provisioning-request\":\"wl-prov-1\","
                        "\"autoscaling.x-k8s.io/provisioning-class-name\":\"cls\"}}]");
    free(s);
    json_decref(u);
    /* Without the list (no merge policy), only the named ones. */
    u = provreq_updates(pr, names, NULL, 3, &cfg);
    ck_assert_uint_eq(json_array_size(u), 1);
    json_decref(u);
    json_decref(pr);
    provreq_config_fini(&cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_provreq");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, names_as_kueue);
    tcase_add_test(tc, config_defaults_and_fields);
    tcase_add_test(tc, config_errors_name_the_field);
    tcase_add_test(tc, request_built_for_the_managed_pod_sets);
    tcase_add_test(tc, conditions_to_check_states);
    tcase_add_test(tc, managed_resources_in_any_container);
    tcase_add_test(tc, pod_sets_merged_by_policy);
    tcase_add_test(tc, merge_policies_compare_as_kueue);
    tcase_add_test(tc, merged_pod_sets_get_the_update);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
