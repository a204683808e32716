/* test_ctrl_config -- the operator's configuration: Kueue Configuration file, values, errors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/config.h"

#include "model/object.h"
#include "model/selector.h"
#include "model/yaml.h"
#include "sched/sched.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(defaults)
{
    ctrl_config_t c;

    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_int_eq(ctrl_config_finish(&c, NULL), ERR_OK);
    ck_assert_str_eq(c.namespace, "sluice-system");
    ck_assert(!c.namespace_set);
    ck_assert_str_eq(c.lease_name, "sluice.dev");
    ck_assert_ptr_null(c.lease_namespace);
    ck_assert_str_eq(c.webhook_service, "sluice-webhook-service");
    ck_assert_str_eq(c.webhook_secret, "sluice-webhook-server-cert");
    ck_assert_ptr_null(c.no_effect);
    ck_assert_ptr_null(c.warnings);
    ck_assert(!c.leader_elect);
    ck_assert_uint_eq(c.lease_ms, 15000);
    ck_assert_uint_eq(c.renew_ms, 10000);
    ck_assert_uint_eq(c.retry_ms, 2000);
    ck_assert_str_eq(c.job_group, "batch");
    ck_assert_int_eq(c.webhook_port, 9443);
    ck_assert_int_eq(c.health_port, 8081);
    ck_assert_uint_eq(c.qps_milli, 300000);
    ck_assert(!c.kueue.fair_sharing);
    ck_assert(c.kueue.managed_jobs_namespace_selector.present);
    ck_assert_str_eq(c.webhook_config_prefix, "sluice");
    ctrl_config_fini(&c);
}
END_TEST

START_TEST(file_and_flags)
{
    char path[] = "/tmp/sluice-ctrl-config-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    ctrl_config_t c;
    err_msg_t msg = {{0}};
    kv_list_t labels = {0};

    ck_assert_ptr_nonnull(f);
    fputs("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
          "kind: Configuration\n"
          "metadata:\n"
          "  annotations:\n"
          "    sluice.dev/job-resource: batch.test.sluice.dev/v1/jobs\n"
          "    sluice.dev/log-level: debug\n"
          "    sluice.dev/webhook-client-ca: /etc/sluice-webhook-client-ca/ca.crt\n"
          "    sluice.dev/preemption-loop-guards: all\n"
          "namespace: sluice-system\n"
          "manageJobsWithoutQueueName: true\n"
          "leaderElection: {leaderElect: true, resourceName: sluice-lock, leaseDuration: 90s,\n"
          "                 renewDeadline: 1m, retryPeriod: 500ms}\n"
          "webhook: {port: 9000, certDir: /certs}\n"
          "health: {healthProbeBindAddress: '127.0.0.1:9090'}\n"
          "clientConnection: {qps: 12.5, burst: 40}\n"
          "internalCertManagement: {enable: false, webhookServiceName: svc}\n"
          "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n",
          f);
    fclose(f);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_msg(ctrl_config_load(&c, path, &msg) == ERR_OK, "%s", msg.text);
    /* A flag overrides the file's namespace before finish(). */
    free(c.namespace);
    c.namespace = strdup("flag-ns");
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(c.leader_elect);
    ck_assert_str_eq(c.webhook_client_ca, "/etc/sluice-webhook-client-ca/ca.crt");
    ck_assert_str_eq(c.lease_name, "sluice-lock");
    ck_assert_uint_eq(c.lease_ms, 90000);
    ck_assert_uint_eq(c.renew_ms, 60000);
    ck_assert_uint_eq(c.retry_ms, 500);
    ck_assert_str_eq(c.job_group, "batch.test.sluice.dev");
    ck_assert_str_eq(c.job_version, "v1");
    ck_assert_str_eq(c.job_resource, "jobs");
    ck_assert_int_eq(c.log_level, CTRL_LOG_DEBUG);
    ck_assert_int_eq(c.webhook_port, 9000);
    ck_assert_str_eq(c.cert_dir, "/certs");
    ck_assert_str_eq(c.health_host, "127.0.0.1");
    ck_assert_int_eq(c.health_port, 9090);
    ck_assert_uint_eq(c.qps_milli, 12500);
    ck_assert_uint_eq(c.burst, 40);
    ck_assert(!c.internal_certs);
    ck_assert_str_eq(c.webhook_service, "svc");
    ck_assert_str_eq(c.webhook_config_prefix, "svc");
    ck_assert(c.kueue.fair_sharing);
    ck_assert_uint_eq(c.kueue.nstrategies, 1);
    ck_assert(c.kueue.manage_jobs_without_queue_name);
    sched_config_t sc;
    sched_config_from(&sc, &c.kueue);
    ck_assert_uint_eq(sc.loop_guards, SCHED_GUARD_ALL);
    /* The default managed-jobs selector excludes the final namespace. */
    ck_assert_int_eq(kv_list_set(&labels, "kubernetes.io/metadata.name", "flag-ns"), ERR_OK);
    ck_assert(!selector_matches(&c.kueue.managed_jobs_namespace_selector, &labels));
    kv_list_fini(&labels);
    ck_assert_int_eq(kv_list_set(&labels, "kubernetes.io/metadata.name", "team-a"), ERR_OK);
    ck_assert(selector_matches(&c.kueue.managed_jobs_namespace_selector, &labels));
    kv_list_fini(&labels);
    ctrl_config_fini(&c);
    unlink(path);
}
END_TEST

/* client-go's rule (leaderelection.NewLeaderElector): leaseDuration > renewDeadline >
 * 1.2 x retryPeriod, all positive; and the Lease records whole seconds. */
static const char *lease_error(const char *le)
{
    static err_msg_t msg;
    ctrl_config_t c;
    char text[512];
    json_t *doc;
    err_t rc;

    snprintf(text, sizeof(text), "{\"leaderElection\":%s}", le);
    doc = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    memset(&msg, 0, sizeof(msg));
    rc = ctrl_config_apply(&c, doc, &msg);
    json_decref(doc);
    ctrl_config_fini(&c);
    return rc == ERR_OK ? NULL : msg.text;
}

START_TEST(lease_timings_checked_against_each_other)
{
    const char *e;

    ck_assert_ptr_null(lease_error("{\"leaseDuration\":\"15s\",\"renewDeadline\":\"10s\","
                                   "\"retryPeriod\":\"2s\"}"));
    ck_assert_ptr_null(lease_error("{\"leaseDuration\":\"6s\",\"renewDeadline\":\"4s\","
                                   "\"retryPeriod\":\"1s\"}"));
    e = lease_error("{\"leaseDuration\":\"20s\",\"renewDeadline\":\"1m\"}");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e, "leaderElection.leaseDuration (20s) must be greater than "
                        "leaderElection.renewDeadline (1m)");
    /* the default 10 s renew deadline against a 10 s lease in the file */
    e = lease_error("{\"leaseDuration\":\"10s\"}");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(strstr(e, "leaderElection.renewDeadline (10s)"));
    e = lease_error("{\"renewDeadline\":\"2400ms\",\"retryPeriod\":\"2s\"}");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e, "leaderElection.renewDeadline (2.4s) must be greater than 1.2 x "
                        "leaderElection.retryPeriod (2s)");
    ck_assert_ptr_null(lease_error("{\"renewDeadline\":\"2401ms\",\"retryPeriod\":\"2s\"}"));
    e = lease_error("{\"retryPeriod\":\"0s\"}");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(strstr(e, "leaderElection.retryPeriod: must be greater than zero"));
    e = lease_error("{\"leaseDuration\":\"15500ms\"}");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(strstr(e, "leaderElection.leaseDuration (15.5s): must be whole seconds"));
}
END_TEST

START_TEST(errors_name_the_field)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};
    json_t *doc;

    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    doc = json_loads("{\"leaderElection\":{\"leaseDuration\":\"15 s\"}}", 0, NULL);
    ck_assert_int_eq(ctrl_config_apply(&c, doc, &msg), ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(msg.text, "leaderElection.leaseDuration: "));
    json_decref(doc);
    doc = json_loads("{\"webhook\":{\"port\":70000}}", 0, NULL);
    ck_assert_int_eq(ctrl_config_apply(&c, doc, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "webhook.port"));
    json_decref(doc);
    /* Unknown Kueue fields are refused by the Configuration decoder, with the path. */
    doc = json_loads("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":"
                     "\"Configuration\",\"bogus\":1}",
                     0, NULL);
    ck_assert_int_eq(ctrl_config_apply(&c, doc, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_finish(&c, &msg), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(msg.text, "bogus"));
    json_decref(doc);
    ck_assert_int_eq(ctrl_config_load(&c, "/nonexistent/sluice.yaml", &msg), ERR_IO);
    ctrl_config_fini(&c);
}
END_TEST

/* Apply `json` to fresh defaults; the error's text when it fails, else NULL. */
static const char *apply_error(const char *json, err_msg_t *msg)
{
    ctrl_config_t c;
    json_t *doc = json_loads(json, 0, NULL);
    err_t rc;

    ck_assert_ptr_nonnull(doc);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    rc = ctrl_config_apply(&c, doc, msg);
    json_decref(doc);
    ctrl_config_fini(&c);
    return rc == ERR_OK ? NULL : msg->text;
}

START_TEST(operator_sections_are_strict)
{
    err_msg_t msg = {{0}};

    /* Every operator section refuses a field it does not know, naming its path. */
    ck_assert_str_eq(apply_error("{\"leaderElection\":{\"leaseDurtion\":\"15s\"}}", &msg),
                     "leaderElection.leaseDurtion: unknown field");
    ck_assert_str_eq(apply_error("{\"webhook\":{\"prot\":9443}}", &msg),
                     "webhook.prot: unknown field");
    ck_assert_str_eq(apply_error("{\"health\":{\"bindAddress\":\":8081\"}}", &msg),
                     "health.bindAddress: unknown field");
    ck_assert_str_eq(apply_error("{\"clientConnection\":{\"kubeconfig\":\"x\"}}", &msg),
                     "clientConnection.kubeconfig: unknown field");
    ck_assert_str_eq(apply_error("{\"internalCertManagement\":{\"enabled\":true}}", &msg),
                     "internalCertManagement.enabled: unknown field");
    ck_assert_str_eq(apply_error("{\"webhook\":[]}", &msg), "webhook: must be an object");
    /* Only Lease locks exist in sluice. */
    ck_assert_ptr_nonnull(
        strstr(apply_error("{\"leaderElection\":{\"resourceLock\":\"configmapsleases\"}}", &msg),
               "leaderElection.resourceLock: sluice elects its leader on a coordination.k8s.io "
               "Lease only"));
    ck_assert_ptr_null(apply_error("{\"leaderElection\":{\"resourceLock\":\"leases\"}}", &msg));
    /* A sluice.dev annotation sluice does not know is a typo, not the user's own. */
    ck_assert_ptr_nonnull(strstr(
        apply_error("{\"metadata\":{\"annotations\":{\"sluice.dev/log-levle\":\"debug\"}}}", &msg),
        "metadata.annotations[sluice.dev/log-levle]: unknown sluice setting"));
    ck_assert_ptr_null(
        apply_error("{\"metadata\":{\"annotations\":{\"team.example.com/owner\":\"x\"}}}", &msg));
    /* The loop guards: a list of known names. */
    ck_assert_ptr_null(apply_error("{\"metadata\":{\"annotations\":{\"sluice.dev/"
                                   "preemption-loop-guards\":\"own-queue-borrowing, "
                                   "strict-fifo-sticky\"}}}",
                                   &msg));
    ck_assert_ptr_nonnull(strstr(apply_error("{\"metadata\":{\"annotations\":{\"sluice.dev/"
                                             "preemption-loop-guards\":\"own-queue\"}}}",
                                             &msg),
                                 "metadata.annotations[sluice.dev/preemption-loop-guards]: "
                                 "unknown loop guard \"own-queue\""));
}
END_TEST

START_TEST(no_effect_fields_are_listed)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};
    json_t *doc = json_loads("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":"
                             "\"Configuration\",\"metrics\":{\"customLabels\":[]},"
                             "\"integrations\":{\"frameworks\":[\"batch/job\"]},"
                             "\"health\":{\"readinessEndpointName\":\"ready\"},"
                             "\"leaderElection\":{\"resourceNamespace\":\"lease-ns\"},"
                             "\"namespace\":\"ops\"}",
                             0, NULL);

    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_msg(ctrl_config_apply(&c, doc, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert(c.namespace_set);
    ck_assert_str_eq(c.namespace, "ops");
    ck_assert_str_eq(c.lease_namespace, "lease-ns");
    /* integrations is acted on (the kinds sluice run manages): not listed. */
    ck_assert_str_eq(c.no_effect, "health.readinessEndpointName, metrics.customLabels");
    /* finish() twice says the same, not twice as much. */
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(c.no_effect, "health.readinessEndpointName, metrics.customLabels");
    json_decref(doc);
    ctrl_config_fini(&c);
}
END_TEST

/* Issue 17: `resources` reaches sluice run's engine configuration; Kueue's rules refuse the file
 * with the field path; a transformation that cannot act is listed among the no-effect fields. */
START_TEST(resources_section)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};
    sched_config_t sc;
    json_t *doc = json_loads(
        "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":\"Configuration\","
        "\"resources\":{\"excludeResourcePrefixes\":[\"example.com/\"],\"transformations\":["
        "{\"input\":\"nvidia.com/mig-1g.10gb\",\"strategy\":\"Replace\",\"outputs\":"
        "{\"gpu-memory\":\"10Gi\"}},{\"input\":\"example.com/x\",\"outputs\":{\"cpu\":1}}]}}",
        0, NULL);

    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_msg(ctrl_config_apply(&c, doc, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_uint_eq(c.kueue.resources.ntransformations, 2);
    ck_assert_uint_eq(c.kueue.resources.nexclude_prefixes, 1);
    ck_assert_str_eq(c.no_effect, "resources.transformations[1]");
    sched_config_from(&sc, &c.kueue);
    ck_assert_ptr_eq(sc.resources, &c.kueue.resources);
    json_decref(doc);
    ctrl_config_fini(&c);

    doc = json_loads("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":"
                     "\"Configuration\",\"resources\":{\"transformations\":["
                     "{\"input\":\"a\",\"outputs\":{\"b\":1}},{\"input\":\"a\","
                     "\"outputs\":{\"c\":1}}]}}",
                     0, NULL);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_int_eq(ctrl_config_apply(&c, doc, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_finish(&c, &msg), ERR_INVALID);
    ck_assert_str_eq(msg.text,
                     "configuration: resources.transformations[1].input: Duplicate value: \"a\"");
    json_decref(doc);
    ctrl_config_fini(&c);
}
END_TEST

/* Apply the JSON text `doc` over a fresh configuration; the code, and the message in `msg`. */
static err_t apply_text(ctrl_config_t *c, const char *text, err_msg_t *msg)
{
    json_t *doc = json_loads(text, 0, NULL);
    err_t rc;

    ck_assert_ptr_nonnull(doc);
    ck_assert_int_eq(ctrl_config_init(c, NULL), ERR_OK);
    rc = ctrl_config_apply(c, doc, msg);
    json_decref(doc);
    return rc;
}

START_TEST(wait_for_pods_ready)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};

    /* Kueue's v1beta2 defaults: always on, 30m, no blocking, recovery = timeout, Eviction,
     * unlimited requeues every 60 s doubling up to an hour. No file: the same. */
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert(c.pods_ready.enabled);
    ck_assert(!c.pods_ready.block_admission);
    ck_assert_uint_eq(c.pods_ready.timeout_ms, 1800000);
    ck_assert_uint_eq(c.pods_ready.recovery_timeout_ms, 1800000);
    ck_assert_int_eq(c.pods_ready.timestamp, REQUEUE_TS_EVICTION);
    ck_assert(!c.pods_ready.has_backoff_limit);
    ck_assert_int_eq(c.pods_ready.backoff_base_s, 60);
    ck_assert_int_eq(c.pods_ready.backoff_max_s, 3600);
    ctrl_config_fini(&c);
    ck_assert_int_eq(apply_text(&c, "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\"}", &msg),
                     ERR_OK);
    ck_assert(c.pods_ready.enabled);
    ctrl_config_fini(&c);

    /* Every field. recoveryTimeout given explicitly does not follow a later --timeout flag. */
    ck_assert_msg(
        apply_text(&c,
                   "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"waitForPodsReady\":"
                   "{\"timeout\":\"3s\",\"blockAdmission\":true,\"recoveryTimeout\":\"2m\","
                   "\"requeuingStrategy\":{\"timestamp\":\"Creation\",\"backoffLimitCount\":2,"
                   "\"backoffBaseSeconds\":1,\"backoffMaxSeconds\":5}}}",
                   &msg) == ERR_OK,
        "%s", msg.text);
    ck_assert(c.pods_ready.enabled);
    ck_assert(c.pods_ready.block_admission);
    ck_assert_uint_eq(c.pods_ready.timeout_ms, 3000);
    ck_assert_uint_eq(c.pods_ready.recovery_timeout_ms, 120000);
    ck_assert_int_eq(c.pods_ready.timestamp, REQUEUE_TS_CREATION);
    ck_assert(c.pods_ready.has_backoff_limit);
    ck_assert_int_eq(c.pods_ready.backoff_limit_count, 2);
    ck_assert_int_eq(c.pods_ready.backoff_base_s, 1);
    ck_assert_int_eq(c.pods_ready.backoff_max_s, 5);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "10s", &msg), ERR_OK);
    ck_assert_uint_eq(c.pods_ready.timeout_ms, 10000);
    ck_assert_uint_eq(c.pods_ready.recovery_timeout_ms, 120000);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "false", &msg), ERR_OK);
    ck_assert(!c.pods_ready.enabled);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "1m", &msg), ERR_OK);
    ck_assert(c.pods_ready.enabled);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "0", &msg), ERR_OK);
    ck_assert(!c.pods_ready.enabled);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "soon", &msg), ERR_PARSE);
    ctrl_config_fini(&c);

    /* "0s" turns the recovery timeout off; a recoveryTimeout the file left out follows the
     * flag's timeout. */
    ck_assert_int_eq(apply_text(&c, "{\"waitForPodsReady\":{\"recoveryTimeout\":\"0s\"}}", &msg),
                     ERR_OK);
    ck_assert_uint_eq(c.pods_ready.recovery_timeout_ms, 0);
    ctrl_config_fini(&c);
    ck_assert_int_eq(apply_text(&c, "{\"waitForPodsReady\":{}}", &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_set_pods_ready_timeout(&c, "7s", &msg), ERR_OK);
    ck_assert_uint_eq(c.pods_ready.recovery_timeout_ms, 7000);
    ctrl_config_fini(&c);

    /* v1beta1: off unless enable; blockAdmission then defaults to enable. */
    ck_assert_int_eq(apply_text(&c, "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\"}", &msg),
                     ERR_OK);
    ck_assert(!c.pods_ready.enabled);
    ctrl_config_fini(&c);
    ck_assert_int_eq(apply_text(&c,
                                "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\","
                                "\"waitForPodsReady\":{\"timeout\":\"1m\"}}",
                                &msg),
                     ERR_OK);
    ck_assert(!c.pods_ready.enabled);
    ctrl_config_fini(&c);
    ck_assert_int_eq(apply_text(&c,
                                "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\","
                                "\"waitForPodsReady\":{\"enable\":true}}",
                                &msg),
                     ERR_OK);
    ck_assert(c.pods_ready.enabled);
    ck_assert(c.pods_ready.block_admission);
    ctrl_config_fini(&c);

    /* Errors name the field path. */
    static const struct {
        const char *doc, *path;
    } bad[] = {
        {"{\"waitForPodsReady\":{\"timeout\":\"0s\"}}", "waitForPodsReady.timeout: "},
        {"{\"waitForPodsReady\":{\"timeout\":\"3 s\"}}", "waitForPodsReady.timeout: "},
        {"{\"waitForPodsReady\":{\"blockAdmission\":\"yes\"}}", "waitForPodsReady.blockAdmission"},
        {"{\"waitForPodsReady\":{\"enable\":1}}", "waitForPodsReady.enable"},
        {"{\"waitForPodsReady\":{\"recoveryTimeout\":5}}", "waitForPodsReady.recoveryTimeout"},
        {"{\"waitForPodsReady\":{\"bogus\":1}}", "waitForPodsReady.bogus: unknown field"},
        {"{\"waitForPodsReady\":[]}", "waitForPodsReady: must be an object"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"timestamp\":\"Later\"}}}",
         "waitForPodsReady.requeuingStrategy.timestamp"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"backoffLimitCount\":-1}}}",
         "waitForPodsReady.requeuingStrategy.backoffLimitCount"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"backoffBaseSeconds\":0}}}",
         "waitForPodsReady.requeuingStrategy.backoffBaseSeconds"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"backoffMaxSeconds\":\"1h\"}}}",
         "waitForPodsReady.requeuingStrategy.backoffMaxSeconds"},
        {"{\"waitForPodsReady\":{\"requeuingStrategy\":{\"x\":1}}}",
         "waitForPodsReady.requeuingStrategy.x: unknown field"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_ne(apply_text(&c, bad[i].doc, &msg), ERR_OK);
        ck_assert_msg(strstr(msg.text, bad[i].path) != NULL, "%s: %s", bad[i].doc, msg.text);
        ctrl_config_fini(&c);
    }
}
END_TEST

START_TEST(value_parsers)
{
    uint32_t ms;
    char *host = NULL;
    int port = -1;
    ctrl_log_level_t lvl;
    ctrl_config_t c;

    ck_assert_int_eq(ctrl_duration_ms("1h2m3s4ms", &ms, NULL), ERR_OK);
    ck_assert_uint_eq(ms, 3723004);
    ck_assert_int_eq(ctrl_duration_ms("0", &ms, NULL), ERR_OK);
    ck_assert_uint_eq(ms, 0);
    ck_assert_int_eq(ctrl_duration_ms("5", &ms, NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_duration_ms("s", &ms, NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_duration_ms("", &ms, NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_duration_ms("2000h", &ms, NULL), ERR_OVERFLOW);
    ck_assert_int_eq(ctrl_bind_address(":8081", &host, &port, NULL), ERR_OK);
    ck_assert_str_eq(host, "");
    ck_assert_int_eq(port, 8081);
    ck_assert_int_eq(ctrl_bind_address("0", &host, &port, NULL), ERR_OK);
    ck_assert_int_eq(port, 0);
    ck_assert_int_eq(ctrl_bind_address("localhost", &host, &port, NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_bind_address(":99999", &host, &port, NULL), ERR_PARSE);
    free(host);
    ck_assert_int_eq(ctrl_log_level_parse("error", &lvl, NULL), ERR_OK);
    ck_assert_int_eq(lvl, CTRL_LOG_ERROR);
    ck_assert_int_eq(ctrl_log_level_parse("trace", &lvl, NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_int_eq(ctrl_config_set_job_resource(&c, "batch/v1", NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_config_set_job_resource(&c, "a/b/c/d", NULL), ERR_PARSE);
    ck_assert_int_eq(ctrl_config_set_job_resource(&c, "/v1/jobs", NULL), ERR_OK);
    ck_assert_str_eq(c.job_group, "");
    ctrl_config_fini(&c);
}
END_TEST

START_TEST(shipped_manifest)
{
    /* the configuration manifests/ ships (configMapGenerator's file) is valid and says what it
     * means */
    const char *src = getenv("SLUICE_SOURCE_DIR");
    char path[4096];
    err_msg_t msg = {{0}};
    ctrl_config_t c;

    ck_assert_ptr_nonnull(src);
    snprintf(path, sizeof(path), "%s/manifests/config/controller_manager_config.yaml", src);
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_msg(ctrl_config_load(&c, path, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_str_eq(c.namespace, "sluice-system");
    ck_assert(c.namespace_set);
    ck_assert(c.leader_elect);
    ck_assert_str_eq(c.lease_name, "sluice.dev");
    ck_assert_str_eq(c.webhook_service, "sluice-webhook-service");
    ck_assert_str_eq(c.webhook_secret, "sluice-webhook-server-cert");
    ck_assert_ptr_null(c.no_effect);
    /* It enables JobSet besides Jobs (rbac.yaml and webhooks.yaml cover both). */
    ck_assert(ctrl_framework_enabled(&c, "batch/job"));
    ck_assert(ctrl_framework_enabled(&c, "jobset.x-k8s.io/jobset"));
    ck_assert(c.pods_ready.enabled);
    ck_assert_uint_eq(c.pods_ready.timeout_ms, 1800000);
    ck_assert_int_eq(c.pods_ready.backoff_base_s, 60);
    ctrl_config_fini(&c);
}
END_TEST

START_TEST(integrations)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};
    json_t *doc =
        json_loads("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":\"Configuration\","
                   "\"integrations\":{\"frameworks\":[\"batch/job\",\"jobset.x-k8s.io/jobset\"],"
                   "\"externalFrameworks\":[\"AppWrapper.v1beta2.workload.codeflare.dev\"],"
                   "\"labelKeysToCopy\":[\"team\",\"example.com/cost-center\"]}}",
                   0, NULL);

    /* Kueue's default: batch/job only. */
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_uint_eq(c.integrations.nframeworks, 1);
    ck_assert_str_eq(c.integrations.frameworks[0], "batch/job");
    ck_assert_ptr_null(c.integrations.frameworks[1]);
    ck_assert_uint_eq(c.integrations.nexternal, 0);
    ck_assert_ptr_null(c.integrations.label_keys[0]);
    ck_assert(ctrl_framework_enabled(&c, "batch/job"));
    ck_assert(!ctrl_framework_enabled(&c, "jobset.x-k8s.io/jobset"));

    ck_assert_msg(ctrl_config_apply(&c, doc, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_msg(ctrl_config_finish(&c, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_uint_eq(c.integrations.nframeworks, 2);
    ck_assert(ctrl_framework_enabled(&c, "jobset.x-k8s.io/jobset"));
    ck_assert_str_eq(c.integrations.external[0], "AppWrapper.v1beta2.workload.codeflare.dev");
    ck_assert_uint_eq(c.integrations.nlabel_keys, 2);
    ck_assert_str_eq(c.integrations.label_keys[1], "example.com/cost-center");
    ck_assert_ptr_null(c.integrations.label_keys[2]);
    ck_assert_ptr_null(c.no_effect);
    json_decref(doc);

    /* An empty list is Kueue's default again. */
    doc = json_loads("{\"integrations\":{\"frameworks\":[]}}", 0, NULL);
    ck_assert_msg(ctrl_config_apply(&c, doc, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_uint_eq(c.integrations.nframeworks, 1);
    ck_assert_str_eq(c.integrations.frameworks[0], "batch/job");
    ck_assert_uint_eq(c.integrations.nlabel_keys, 0);
    json_decref(doc);
    ctrl_config_fini(&c);

    ck_assert(ctrl_framework_known("ray.io/raycluster"));
    ck_assert(ctrl_framework_known("pod"));
    ck_assert(!ctrl_framework_known("jobset"));

    /* Errors name the field path and the value. */
    ck_assert_str_eq(
        apply_error("{\"integrations\":{\"frameworks\":[\"batch/job\",\"jobset\"]}}", &msg),
        "integrations.frameworks[1]: Unsupported value: \"jobset\": not a Kueue "
        "framework name (batch/job, jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob, "
        "ray.io/rayjob, pod, ...)");
    ck_assert_str_eq(apply_error("{\"integrations\":{\"frameworks\":[\"pod\",\"pod\"]}}", &msg),
                     "integrations.frameworks[1]: Duplicate value: \"pod\"");
    ck_assert_str_eq(apply_error("{\"integrations\":{\"frameworks\":\"batch/job\"}}", &msg),
                     "integrations.frameworks: must be a list of strings");
    ck_assert_str_eq(apply_error("{\"integrations\":{\"frameworks\":[1]}}", &msg),
                     "integrations.frameworks[0]: must be a string");
    ck_assert_str_eq(
        apply_error("{\"integrations\":{\"externalFrameworks\":[\"AppWrapper\"]}}", &msg),
        "integrations.externalFrameworks[0]: Invalid value: \"AppWrapper\": must be "
        "Kind.version.group (e.g. AppWrapper.v1beta2.workload.codeflare.dev)");
    ck_assert_ptr_nonnull(
        strstr(apply_error("{\"integrations\":{\"labelKeysToCopy\":[\"-bad\"]}}", &msg),
               "integrations.labelKeysToCopy[0]: Invalid value: \"-bad\": "));
    ck_assert_str_eq(
        apply_error("{\"integrations\":{\"frameworks\":[\"batch/job\",\"deployment\"]}}", &msg),
        "integrations.frameworks: \"deployment\" requires \"pod\" to be enabled too");
    ck_assert_str_eq(apply_error("{\"integrations\":{\"framework\":[]}}", &msg),
                     "integrations.framework: unknown field");
    ck_assert_str_eq(apply_error("{\"integrations\":{\"podOptions\":{}}}", &msg),
                     "integrations.podOptions: unknown field (v1beta1 only)");
    ck_assert_ptr_null(apply_error("{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta1\","
                                   "\"integrations\":{\"podOptions\":{}}}",
                                   &msg));
}
END_TEST

START_TEST(server_limits_annotation)
{
    ctrl_config_t c;
    err_msg_t msg = {{0}};

    /* Defaults: the server's own. */
    ck_assert_int_eq(ctrl_config_init(&c, NULL), ERR_OK);
    ck_assert_uint_eq(c.server_limits.max_connections, HOOK_SERVER_DEFAULT_MAX_CONNECTIONS);
    ck_assert_uint_eq(c.server_limits.body_budget, HOOK_SERVER_DEFAULT_MAX_BUFFERED_BYTES);
    ck_assert_uint_eq(c.server_limits.idle_timeout_ms, HOOK_SERVER_DEFAULT_IDLE_TIMEOUT_MS);
    ctrl_config_fini(&c);
    ck_assert_int_eq(
        apply_text(&c,
                   "{\"metadata\":{\"annotations\":{\"sluice.dev/server-limits\":"
                   "\"max-connections=2048, max-connections-per-client=128,body-budget=128Mi,"
                   "idle-timeout=30s\"}}}",
                   &msg),
        ERR_OK);
    ck_assert_uint_eq(c.server_limits.max_connections, 2048);
    ck_assert_uint_eq(c.server_limits.max_connections_per_client, 128);
    ck_assert_uint_eq(c.server_limits.body_budget, 128u << 20);
    ck_assert_uint_eq(c.server_limits.idle_timeout_ms, 30000);
    ck_assert_uint_eq(c.server_limits.header_timeout_ms, HOOK_SERVER_DEFAULT_HEADER_TIMEOUT_MS);
    ctrl_config_fini(&c);
    /* A bad value stops the start with the annotation and the entry named. */
    ck_assert_str_eq(apply_error("{\"metadata\":{\"annotations\":{\"sluice.dev/server-limits\":"
                                 "\"write-timeout=forever\"}}}",
                                 &msg),
                     "metadata.annotations[sluice.dev/server-limits]: write-timeout=forever: "
                     "duration \"forever\": expected a number at offset 0");
    ck_assert_str_eq(apply_error("{\"metadata\":{\"annotations\":{\"sluice.dev/server-limits\":"
                                 "\"max-connections=8,max-connections-per-client=16\"}}}",
                                 &msg),
                     "metadata.annotations[sluice.dev/server-limits]: max-connections-per-client "
                     "(16) must not exceed max-connections (8)");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ctrl_config");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, defaults);
    tcase_add_test(tc, file_and_flags);
    tcase_add_test(tc, errors_name_the_field);
    tcase_add_test(tc, lease_timings_checked_against_each_other);
    tcase_add_test(tc, operator_sections_are_strict);
    tcase_add_test(tc, no_effect_fields_are_listed);
    tcase_add_test(tc, resources_section);
    tcase_add_test(tc, integrations);
    tcase_add_test(tc, value_parsers);
    tcase_add_test(tc, wait_for_pods_ready);
    tcase_add_test(tc, shipped_manifest);
    tcase_add_test(tc, server_limits_annotation);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
