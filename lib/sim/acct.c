/* acct (sim) -- `sluice sim --accounting FILE`: the accounting log in virtual time. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/run_int.h"

#include "acct/acct.h"

#include <stdlib.h>
#include <string.h>

/*
 * The record (record.c) tells this observer when a workload starts and stops holding quota. At
 * admission the record is built (everything the operator's record has but the end, which is
 * null until then: the LocalQueue and the admission are read from the engine now, when they are
 * sure), and at the end it is completed and written. Times are virtual: 0 is the epoch given
 * in the options (the Unix epoch, 1970-01-01T00:00:00Z, by default). Outcomes: Finished ->
 * finished (reason Succeeded), preemption -> preempted (Kueue's preemption reason), stop-policy
 * eviction -> evicted (ClusterQueueStopped / LocalQueueStopped), deactivation -> evicted
 * (reason Deactivated), deletion -> deleted. Admissions still open when the run stops are not
 * written (they have not ended), as in the operator.
 */

struct sim_acct_s {
    acct_log_t *log;  /* borrowed */
    const sched_t *s; /* borrowed: the run's engine */
    int64_t epoch_ms; /* Unix ms of virtual time 0 */
    json_t **open;    /* owned: per workload index, its open admission's record, or NULL */
    size_t nopen;
};

static void on_admit(void *ud, const sim_rec_t *r, size_t w, const admission_t *adm, sim_ms_t t)
{
    sim_acct_t *a = ud;
    const sim_wl_rec_t *wl = &r->wls[w];
    sched_wl_info_t info;
    const char *slash = strchr(wl->name, '/');
    json_t *rec = NULL;

    if (w >= a->nopen) {
        size_t n = w + 1 > 2 * a->nopen ? w + 1 : 2 * a->nopen;
        json_t **o = realloc(a->open, n * sizeof(*o));
        if (o == NULL) {
            acct_log_append(a->log, NULL, NULL); /* kept as the log's failure */
            return;
        }
        memset(o + a->nopen, 0, (n - a->nopen) * sizeof(*o));
        a->open = o;
        a->nopen = n;
    }
    acct_end_t e = {
        .source = "simulator",
        .workload = slash != NULL ? slash + 1 : wl->name,
        .ns = wl->ns,
        .local_queue =
            sched_workload_info(a->s, wl->name, &info, NULL) == ERR_OK ? info.local_queue : NULL,
        .adm = adm,
        .priority_class = wl->priority_class[0] ? wl->priority_class : NULL,
        .priority = wl->priority,
        .queued_ms = a->epoch_ms + wl->pending_since,
        .admitted_ms = a->epoch_ms + t,
        .ended_ms = -1,
    };
    if (acct_record_build(&e, &rec, NULL) != ERR_OK) {
        acct_log_append(a->log, NULL, NULL);
        return;
    }
    json_decref(a->open[w]);
    a->open[w] = rec;
}

static void on_release(void *ud, const sim_rec_t *r, size_t w, sim_wl_state_t state,
                       const char *preemption, const char *eviction, sim_ms_t t)
{
    sim_acct_t *a = ud;
    acct_outcome_t outcome;
    const char *reason;
    json_t *rec;

    (void)r;
    if (w >= a->nopen || a->open[w] == NULL)
        return; /* its admission's record was lost to out-of-memory (already reported) */
    rec = a->open[w];
    a->open[w] = NULL;
    switch (state) {
    case SIM_WL_FINISHED:
        outcome = ACCT_FINISHED;
        reason = "Succeeded";
        break;
    case SIM_WL_DEACTIVATED:
        outcome = ACCT_EVICTED;
        reason = "Deactivated";
        break;
    case SIM_WL_DELETED:
        outcome = ACCT_DELETED;
        reason = NULL;
        break;
    default:
        outcome = preemption != NULL ? ACCT_PREEMPTED : ACCT_EVICTED;
        reason = preemption != NULL ? preemption : eviction;
        break;
    }
    acct_log_append(a->log,
                    acct_record_end(rec, outcome, reason, a->epoch_ms + t) == ERR_OK ? rec : NULL,
                    NULL);
    json_decref(rec);
}

sim_acct_t *sim__acct_new(acct_log_t *log, const sched_t *s, sim_rec_t *rec, int64_t epoch_ms)
{
    sim_acct_t *a;

    if (log == NULL)
        return NULL;
    a = calloc(1, sizeof(*a));
    if (a == NULL) {
        acct_log_append(log, NULL, NULL);
        return NULL;
    }
    a->log = log;
    a->s = s;
    a->epoch_ms = epoch_ms;
    rec->hook = (sim_rec_hook_t){on_admit, on_release, a};
    return a;
}

void sim__acct_free(sim_acct_t *a, sim_rec_t *rec)
{
    if (a == NULL)
        return;
    rec->hook = (sim_rec_hook_t){NULL, NULL, NULL};
    for (size_t i = 0; i < a->nopen; i++)
        json_decref(a->open[i]);
    free(a->open);
    free(a);
}
