/* estimate -- the operator's start-time estimates: lib/obs/estimate over the whole engine,
 * periodically, off the loop; the last result is what the visibility API and /metrics read. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/ctrl_int.h"

#include "util/alloc.h"
#include "util/util.h"

#include <string.h>
#include <time.h>

/*
 * One run every cfg->estimate_interval_ms (0: never), the first as soon as the engine is fed:
 *
 *   tick (loop) -- estimate_prepare: copy the engine, expected runtimes --> job
 *   thread pool -- estimate_job_run: the copy driven forward (the costly part: seconds of CPU
 *                  at 50,000 workloads, docs/observability.md)
 *   after (loop) -- the copy is freed and its pages given back (util_alloc_trim: glibc would
 *                   keep them, and the resident size would stay at the copy's peak); the
 *                   result replaces the last one; the next run is due an interval later,
 *                   or later still when the run was costly (ctrl__estimate_pause_ms)
 *
 * The copy is the job's own, so the engine goes on deciding while the run is in flight; the
 * result describes the engine as it was at the tick (at most one interval plus one run old).
 * A run in flight holds one of the controller's open handles, so ctrl_close() frees nothing
 * before it is back. A failed run (out of memory) keeps the last result and is counted.
 */

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ctrl__estimate_init(ctrl_t *c)
{
    estimate_means_init(&c->est.means, 0);
}

void ctrl__estimate_fini(ctrl_t *c)
{
    estimate_means_fini(&c->est.means);
    estimate_free(c->est.last);
    c->est.last = NULL;
    estimate_job_free(c->est.job); /* only when no run is in flight: see ctrl_close() */
    c->est.job = NULL;
}

void ctrl__estimate_finished(ctrl_t *c, const char *key)
{
    sched_wl_info_t info;
    int64_t ran;

    if (sched_workload_info(c->sched, key, &info, NULL) != ERR_OK ||
        (info.state != SCHED_WL_ADMITTED && info.state != SCHED_WL_EVICTING))
        return;
    ran = ctrl__now_ms() - info.admitted_at;
    if (ran >= 0)
        estimate_means_add(&c->est.means, &info, ran); /* OOM: this runtime is not learnt */
}

uint64_t ctrl__estimate_pause_ms(uint64_t interval_ms, uint64_t cost_ns)
{
    uint64_t paced = cost_ns / 1000000u * 9u;

    return paced > interval_ms ? paced : interval_ms;
}

static void on_work(uv_work_t *w)
{
    ctrl_estimate_t *e = container_of(w, ctrl_estimate_t, work);
    uint64_t t0 = thread_cpu_ns();

    e->job_rc = estimate_job_run(e->job, &e->job_msg);
    e->run_ns = thread_cpu_ns() - t0;
}

static void on_work_done(uv_work_t *w, int status)
{
    ctrl_estimate_t *e = container_of(w, ctrl_estimate_t, work);
    ctrl_t *c = container_of(e, ctrl_t, est);
    estimate_t *res = status == 0 && e->job_rc == ERR_OK ? estimate_job_take(e->job) : NULL;

    estimate_job_free(e->job);
    e->job = NULL;
    util_alloc_trim(); /* the copy's pages back to the system (docs/performance.md, memory) */
    if (res != NULL) {
        estimate_free(e->last);
        e->last = res;
        e->runs++;
        e->last_seconds = (double)(e->prepare_ns + e->run_ns) / 1e9;
        ctrl__log(c, CTRL_LOG_DEBUG,
                  "start-time estimate: %zu of %zu pending workloads have one (%zu engine cycles, "
                  "%.3f s of CPU%s)",
                  res->stats.estimated, res->stats.pending, res->stats.cycles, e->last_seconds,
                  res->stats.truncated ? ", cycle budget spent" : "");
    } else {
        e->failures++;
        ctrl__log(c, CTRL_LOG_ERROR, "start-time estimate: %s",
                  status != 0 ? uv_strerror(status) : e->job_msg.text);
    }
    e->next_run = uv_now(c->loop) +
                  ctrl__estimate_pause_ms(c->cfg->estimate_interval_ms, e->prepare_ns + e->run_ns);
    ctrl__handle_released(c); /* the last one out frees the controller (ctrl_close) */
}

void ctrl__estimate_tick(ctrl_t *c)
{
    ctrl_estimate_t *e = &c->est;
    estimate_opts_t o = {.horizon_ms = c->cfg->estimate_horizon_ms,
                         .max_cycles = c->cfg->estimate_max_cycles,
                         .runtime = estimate_means_runtime,
                         .ud = &e->means};
    uint64_t t0;
    int rc;

    if (c->cfg->estimate_interval_ms == 0 || !c->fed || c->closing || e->job != NULL ||
        uv_now(c->loop) < e->next_run)
        return;
    t0 = thread_cpu_ns();
    e->job_msg.text[0] = '\0';
    if (estimate_prepare(c->sched, ctrl__now_ms(), &o, &e->job, &e->job_msg) != ERR_OK) {
        e->failures++;
        e->next_run = uv_now(c->loop) + c->cfg->estimate_interval_ms;
        ctrl__log(c, CTRL_LOG_ERROR, "start-time estimate: %s", e->job_msg.text);
        return;
    }
    e->prepare_ns = thread_cpu_ns() - t0;
    rc = uv_queue_work(c->loop, &e->work, on_work, on_work_done);
    if (rc != 0) {
        estimate_job_free(e->job);
        e->job = NULL;
        e->failures++;
        e->next_run = uv_now(c->loop) + c->cfg->estimate_interval_ms;
        ctrl__log(c, CTRL_LOG_ERROR, "start-time estimate: %s", uv_strerror(rc));
        return;
    }
    c->open_handles++; /* held until on_work_done */
}

int64_t ctrl__estimate_start(const ctrl_t *c, const char *key)
{
    return estimate_start(c->est.last, key);
}
