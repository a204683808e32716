/* writer -- the operator's write budget: admissions first, then queue statuses, pending
 * explanations and Events, each within its own rate, all within a window of requests. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/writer.h"

#include <string.h>

void ctrl_writer_init(ctrl_writer_t *w, const ctrl_writer_opts_t *opts, uint64_t now_ms)
{
    memset(w, 0, sizeof(*w));
    if (opts != NULL)
        w->opts = *opts;
    if (w->opts.window == 0)
        w->opts.window = 64;
    if (w->opts.status_qps_milli == 0)
        w->opts.status_qps_milli = 10000;
    if (w->opts.explain_qps_milli == 0)
        w->opts.explain_qps_milli = 2000;
    if (w->opts.event_qps_milli == 0)
        w->opts.event_qps_milli = 2000;
    if (w->opts.burst == 0)
        w->opts.burst = 20;
    kube_bucket_init(&w->buckets[CTRL_WRITE_STATUS], w->opts.status_qps_milli, w->opts.burst,
                     now_ms);
    kube_bucket_init(&w->buckets[CTRL_WRITE_EXPLAIN], w->opts.explain_qps_milli, w->opts.burst,
                     now_ms);
    kube_bucket_init(&w->buckets[CTRL_WRITE_EVENT], w->opts.event_qps_milli, w->opts.burst, now_ms);
}

bool ctrl_writer_start(ctrl_writer_t *w, ctrl_write_class_t cls, uint64_t now_ms, uint64_t *wait_ms)
{
    uint64_t wait = 0;

    if (cls == CTRL_WRITE_ADMISSION) {
        if (w->inflight >= w->opts.window)
            goto refuse;
    } else {
        /* Half the window stays free for admissions, whatever the other classes want. */
        if (w->inflight >= w->opts.window / 2)
            goto refuse;
        wait = kube_bucket_take(&w->buckets[cls], now_ms);
        if (wait > 0)
            goto refuse;
    }
    w->inflight++;
    w->stats.started[cls]++;
    return true;
refuse:
    w->stats.refused[cls]++;
    if (wait_ms != NULL)
        *wait_ms = wait;
    return false;
}

bool ctrl_writer_ready(ctrl_writer_t *w, ctrl_write_class_t cls, uint64_t now_ms)
{
    if (cls == CTRL_WRITE_ADMISSION)
        return w->inflight < w->opts.window;
    return w->inflight < w->opts.window / 2 && kube_bucket_peek(&w->buckets[cls], now_ms) == 0;
}

void ctrl_writer_done(ctrl_writer_t *w)
{
    if (w->inflight > 0)
        w->inflight--;
}

void ctrl_writer_drop_event(ctrl_writer_t *w)
{
    w->stats.dropped_events++;
}
