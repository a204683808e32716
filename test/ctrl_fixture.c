/* ctrl_fixture -- the operator's controller on a loop of its own against the in-memory API
 * server (test/fakeapi.h), for the unit tests of lib/ctrl. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl_fixture.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_guard(uv_timer_t *t)
{
    (void)t;
}

static void quiet(void *data, int level, const char *text)
{
    (void)data;
    if (getenv("SLUICE_TEST_VERBOSE") != NULL)
        fprintf(stderr, "ctrl: %d %s\n", level, text);
}

static bool synced(fx_t *fx)
{
    return ctrl_synced(fx->ctrl);
}

void fx_put(fx_t *fx, const char *json)
{
    json_error_t e;
    json_t *obj = json_loads(json, 0, &e);
    err_msg_t msg = {{0}};

    ck_assert_msg(obj != NULL, "%s: %s", e.text, json);
    ck_assert_msg(fakeapi_put_object(fx->fa, obj, NULL, &msg) == ERR_OK, "%s", msg.text);
    json_decref(obj);
}

void fx_run_until(fx_t *fx, bool (*cond)(fx_t *), double secs, const char *what)
{
    uint64_t deadline = uv_now(&fx->loop) + (uint64_t)(secs * 1000);

    while (!cond(fx)) {
        ck_assert_msg(uv_now(&fx->loop) < deadline, "timed out waiting for %s", what);
        uv_run(&fx->loop, UV_RUN_ONCE);
    }
}

void fx_queues(fx_t *fx, int cpu)
{
    char cq[512];

    fx_put(fx, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"ns\"}}");
    fx_put(fx,
           "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ResourceFlavor\",\"metadata\":"
           "{\"name\":\"default\"},\"spec\":{\"nodeLabels\":{\"pool\":\"p1\"}}}");
    snprintf(cq, sizeof(cq),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"ClusterQueue\",\"metadata\":"
             "{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
             "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"default\",\"resources\":[{"
             "\"name\":\"cpu\",\"nominalQuota\":\"%d\"}]}]}]}}",
             cpu);
    fx_put(fx, cq);
    fx_put(fx, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"LocalQueue\",\"metadata\":"
               "{\"name\":\"lq\",\"namespace\":\"ns\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
}

void fx_serve(fx_t *fx, const fx_kind_t *kinds, size_t n)
{
    memset(fx, 0, sizeof(*fx));
    ck_assert_int_eq(uv_loop_init(&fx->loop), 0);
    uv_timer_init(&fx->loop, &fx->guard);
    uv_timer_start(&fx->guard, on_guard, 20, 20);
    ck_assert_int_eq(fakeapi_start(&fx->loop, &fx->fa), ERR_OK);
    ck_assert_int_eq(fakeapi_register_sluice(fx->fa), ERR_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(fakeapi_register(fx->fa, kinds[i].group, kinds[i].version,
                                          kinds[i].resource, kinds[i].kind, true, true),
                         ERR_OK);
}

void fx_operate(fx_t *fx, const char *section, const char *value)
{
    kube_client_opts_t co;
    err_msg_t msg = {{0}};

    kube_config_init(&fx->kcfg);
    fx->kcfg.server = strdup(fakeapi_url(fx->fa));
    memset(&co, 0, sizeof(co));
    co.http1 = true;
    co.qps_milli = 1000000;
    co.burst = 1000;
    ck_assert_int_eq(kube_client_new(&fx->loop, &fx->kcfg, &co, &fx->client, &msg), ERR_OK);
    ck_assert_int_eq(ctrl_config_init(&fx->cfg, &msg), ERR_OK);
    fx->cfg.pods_ready.enabled = false;
    /* no start-time estimate runs (thread pool work) unless a test sets the annotation
     * sluice.dev/estimate-interval in `section` "metadata" */
    fx->cfg.estimate_interval_ms = 0;
    if (section != NULL && value != NULL) {
        char doc[1024];
        json_t *d;
        snprintf(doc, sizeof(doc),
                 "{\"apiVersion\":\"config.kueue.x-k8s.io/v1beta2\",\"kind\":\"Configuration\","
                 "\"%s\":%s}",
                 section, value);
        d = json_loads(doc, 0, NULL);
        ck_assert_msg(d != NULL, "configuration %s", doc);
        ck_assert_msg(ctrl_config_apply(&fx->cfg, d, &msg) == ERR_OK, "%s", msg.text);
        json_decref(d);
    }
    if (getenv("SLUICE_TEST_VERBOSE") != NULL)
        fx->cfg.log_level = CTRL_LOG_DEBUG;
    ck_assert_msg(ctrl_config_finish(&fx->cfg, &msg) == ERR_OK, "%s", msg.text);
    ck_assert_int_eq(ctrl_new(fx->client, &fx->cfg, quiet, NULL, &fx->ctrl, &msg), ERR_OK);
    ck_assert_msg(ctrl_start(fx->ctrl, &msg) == ERR_OK, "%s", msg.text);
    ctrl_set_leader(fx->ctrl, true);
    fx_run_until(fx, synced, 10, "the caches");
}

static void on_closed(void *data)
{
    ((fx_t *)data)->closed++;
}

static void on_walk(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

void fx_stop(fx_t *fx)
{
    ctrl_close(fx->ctrl, on_closed, fx);
    kube_client_close(fx->client, on_closed, fx);
    fakeapi_stop(fx->fa);
    uv_close((uv_handle_t *)&fx->guard, NULL);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(fx->closed, 2);
    uv_walk(&fx->loop, on_walk, NULL);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&fx->loop), 0);
    ctrl_config_fini(&fx->cfg);
    kube_config_fini(&fx->kcfg);
}

char *fx_scrape(fx_t *fx)
{
    metrics_buf_t b = {0};

    ck_assert_int_eq(ctrl_metrics_render(fx->ctrl, &b), ERR_OK);
    return b.data;
}

double fx_metric_value(const char *exposition, const char *series)
{
    size_t n = strlen(series);

    for (const char *p = exposition; p != NULL && *p != '\0';) {
        const char *eol = strchr(p, '\n');
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = eol ? eol + 1 : NULL;
    }
    return NAN;
}
