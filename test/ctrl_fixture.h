/* ctrl_fixture -- the operator's controller on a loop of its own against the in-memory API
 * server (test/fakeapi.h), for the unit tests of lib/ctrl. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_CTRL_FIXTURE_H
#define SLUICE_TEST_CTRL_FIXTURE_H

#include "ctrl/ctrl.h"
#include "fakeapi.h"
#include "kube/client.h"

#include <stdbool.h>

typedef struct fx_s {
    uv_loop_t loop;
    uv_timer_t guard; /* keeps fx_run_until() from blocking when nothing else is pending */
    fakeapi_t *fa;
    kube_config_t kcfg;
    kube_client_t *client;
    ctrl_config_t cfg;
    ctrl_t *ctrl;
    int closed;
} fx_t;

/* A kind the server serves besides sluice's own (group "" for the core group). */
typedef struct fx_kind_s {
    const char *group, *version, *resource, *kind;
} fx_kind_t;

/* Start the loop and the server with sluice's kinds and the `n` `kinds`. Objects put now exist
 * before the controller starts. */
void fx_serve(fx_t *fx, const fx_kind_t *kinds, size_t n);

/* Start the controller as leader with Kueue's default configuration, waitForPodsReady off, the
 * start-time estimate off (sluice.dev/estimate-interval turns it on), and
 * the configuration member `section` set to the JSON `value` (both NULL: none); wait until its
 * caches are synced. SLUICE_TEST_VERBOSE=1 prints its log. */
void fx_operate(fx_t *fx, const char *section, const char *value);

/* Create or replace object `json` in the server. */
void fx_put(fx_t *fx, const char *json);

/* Run the loop until `cond(fx)` holds; the test fails after `secs` seconds naming `what`. */
void fx_run_until(fx_t *fx, bool (*cond)(fx_t *), double secs, const char *what);

/* Namespace "ns", ResourceFlavor "default" with nodeLabels {pool: p1}, ClusterQueue "cq" of
 * `cpu` cpus, LocalQueue ns/lq. */
void fx_queues(fx_t *fx, int cpu);

/* Close the controller, the client and the server, and every handle of the loop. */
void fx_stop(fx_t *fx);

/* The controller's /metrics exposition now, a new string (the caller frees it). */
char *fx_scrape(fx_t *fx);

/* The value of the series written exactly as `series` (name and labels) in `exposition`, NAN
 * when absent. */
double fx_metric_value(const char *exposition, const char *series);

#endif
