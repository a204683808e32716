/* summary -- the --summary JSON document (scenario-format.md "Output"; docs/simulator.md
 * defines every number). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/sim.h"

#include "sim/fmt.h"
#include "sim/jsonw.h"
#include "sim/view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Units: times and durations are seconds (printed exactly from milliseconds, as in the events);
 * quantities are Kubernetes quantity strings; shares are fractions rounded to 4 decimals;
 * resource-seconds and GPU-hours are rounded to 3 decimals. Only Jain's index goes through
 * floating point, and only at the end (docs/simulator.md).
 */

static void time_or_null(jsonw_t *w, const char *key, sim_ms_t t)
{
    char buf[DURATION_STR_MAX];
    jsonw_key(w, key);
    jsonw_raw(w, t < 0 ? "null" : duration_format_secs(t, buf));
}

static void time_val(jsonw_t *w, const char *key, sim_ms_t t)
{
    char buf[DURATION_STR_MAX];
    jsonw_key(w, key);
    jsonw_raw(w, duration_format_secs(t, buf));
}

static void write_workloads(jsonw_t *w, const sim_rec_t *r)
{
    char buf[32];

    jsonw_key(w, "workloads");
    jsonw_array_begin(w);
    for (size_t i = 0; i < r->nwls; i++) {
        const sim_wl_rec_t *wl = &r->wls[i];
        jsonw_object_begin(w);
        jsonw_key(w, "name");
        jsonw_string(w, wl->name);
        jsonw_key(w, "clusterQueue");
        jsonw_string(w, wl->cq != SIM_NONE ? r->holders[wl->cq].name : "");
        jsonw_key(w, "priorityClass");
        jsonw_string(w, wl->priority_class);
        jsonw_key(w, "priority");
        snprintf(buf, sizeof(buf), "%d", (int)wl->priority);
        jsonw_raw(w, buf);
        jsonw_key(w, "state");
        jsonw_string(w, sim_view_state(wl->state));
        time_val(w, "submitted", wl->submit);
        time_or_null(w, "firstAdmitted", wl->first_admit);
        time_or_null(w, "lastAdmitted", wl->last_admit);
        time_or_null(w, "finished", wl->finish);
        time_val(w, "wait", wl->wait);
        jsonw_key(w, "preemptions");
        jsonw_uint(w, wl->preemptions);
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
}

static void write_wait_stats(jsonw_t *w, const sim_ms_t *v, size_t n)
{
    jsonw_key(w, "wait");
    jsonw_object_begin(w);
    jsonw_key(w, "count");
    jsonw_uint(w, n);
    time_val(w, "avg", sim_stats_mean(v, n));
    time_val(w, "p50", sim_stats_percentile(v, n, 50));
    time_val(w, "p90", sim_stats_percentile(v, n, 90));
    time_val(w, "p99", sim_stats_percentile(v, n, 99));
    time_val(w, "max", n > 0 ? v[n - 1] : 0);
    jsonw_object_end(w);
}

static err_t write_cqs(jsonw_t *w, const sim_rec_t *r, const sim_view_groups_t *g)
{
    size_t ncq, nfr, nw;
    size_t *cqs = sim_view_cqs(r, &ncq);
    char buf[SIM_RATIO_STR_MAX], qbuf[QUANTITY_STR_MAX];

    if (cqs == NULL && r->nholders > 0)
        return ERR_NOMEM;
    jsonw_key(w, "clusterQueues");
    jsonw_array_begin(w);
    for (size_t c = 0; c < ncq; c++) {
        const sim_holder_t *h = &r->holders[cqs[c]];
        sim_ms_t *waits = sim_view_waits(r, g, cqs[c], &nw);
        size_t *frs = sim_view_frs(r, cqs[c], &nfr);
        size_t running = 0;

        if (waits == NULL || (frs == NULL && h->nfrs > 0)) {
            free(waits);
            free(frs);
            free(cqs);
            return ERR_NOMEM;
        }
        for (size_t i = g->start[cqs[c]]; i < g->start[cqs[c] + 1]; i++)
            running += r->wls[g->wl[i]].state == SIM_WL_RUNNING;
        jsonw_object_begin(w);
        jsonw_key(w, "name");
        jsonw_string(w, h->name);
        jsonw_key(w, "admissions");
        jsonw_uint(w, h->admissions);
        jsonw_key(w, "preemptions");
        jsonw_uint(w, h->preemptions);
        jsonw_key(w, "evictions");
        jsonw_uint(w, h->evictions);
        jsonw_key(w, "finished");
        jsonw_uint(w, h->finished);
        jsonw_key(w, "deactivated");
        jsonw_uint(w, h->deactivated);
        jsonw_key(w, "deleted");
        jsonw_uint(w, h->deleted);
        jsonw_key(w, "pendingAtEnd");
        jsonw_uint(w, h->pending > 0 ? (unsigned long long)h->pending : 0);
        jsonw_key(w, "runningAtEnd");
        jsonw_uint(w, running);
        write_wait_stats(w, waits, nw);
        jsonw_key(w, "resources");
        jsonw_array_begin(w);
        for (size_t k = 0; k < nfr; k++) {
            const sim_fr_rec_t *fr = &h->frs[frs[k]];
            jsonw_object_begin(w);
            jsonw_key(w, "flavor");
            jsonw_string(w, fr->flavor);
            jsonw_key(w, "resource");
            jsonw_string(w, fr->resource);
            jsonw_key(w, "nominalAtEnd");
            jsonw_string(w, sim_fmt_quantity(fr->nominal, fr->resource, qbuf));
            jsonw_key(w, "peakUsage");
            jsonw_string(w, sim_fmt_quantity(fr->peak, fr->resource, qbuf));
            jsonw_key(w, "usedResourceSeconds");
            jsonw_raw(w, sim_fmt_resource_seconds(fr->usage_int, buf));
            jsonw_key(w, "nominalResourceSeconds");
            jsonw_raw(w, sim_fmt_resource_seconds(fr->nominal_int, buf));
            jsonw_key(w, "shareOfNominal");
            jsonw_raw(w, fr->nominal_int > 0
                             ? sim_ratio_format(fr->usage_int, fr->nominal_int, 4, buf)
                             : "null");
            jsonw_key(w, "borrowedResourceSeconds");
            jsonw_raw(w, sim_fmt_resource_seconds(fr->borrowed_int, buf));
            jsonw_object_end(w);
        }
        jsonw_array_end(w);
        jsonw_key(w, "gpuHours");
        jsonw_raw(w, sim_fmt_gpu_hours(h->gpu_nano_ms, buf));
        jsonw_object_end(w);
        free(waits);
        free(frs);
    }
    jsonw_array_end(w);
    free(cqs);
    return ERR_OK;
}

static err_t write_overall(jsonw_t *w, const sim_rec_t *r, const sim_view_groups_t *groups)
{
    size_t ng, ncq, counts[5] = {0};
    size_t *g = sim_view_gfrs(r, &ng);
    size_t *cqs = sim_view_cqs(r, &ncq);
    long double *share = calloc(ncq + 1, sizeof(*share));
    size_t nj = 0;
    char buf[SIM_RATIO_STR_MAX];
    err_t rc = ERR_NOMEM;

    if ((g == NULL && r->ngfrs > 0) || (cqs == NULL && ncq > 0) || share == NULL)
        goto out;
    for (size_t i = 0; i < r->nwls; i++)
        counts[r->wls[i].state]++;
    jsonw_key(w, "overall");
    jsonw_object_begin(w);
    time_val(w, "makespan", r->end);
    jsonw_key(w, "endReason");
    jsonw_string(w, sim_view_end_reason(r));
    jsonw_key(w, "workloads");
    jsonw_uint(w, r->nwls);
    jsonw_key(w, "finished");
    jsonw_uint(w, counts[SIM_WL_FINISHED]);
    jsonw_key(w, "running");
    jsonw_uint(w, counts[SIM_WL_RUNNING]);
    jsonw_key(w, "pending");
    jsonw_uint(w, counts[SIM_WL_PENDING]);
    jsonw_key(w, "deactivated");
    jsonw_uint(w, counts[SIM_WL_DEACTIVATED]);
    jsonw_key(w, "deleted");
    jsonw_uint(w, counts[SIM_WL_DELETED]);
    jsonw_key(w, "preemptions");
    jsonw_uint(w, r->npreemptions);
    jsonw_key(w, "events");
    jsonw_uint(w, r->events);
    jsonw_key(w, "utilization");
    jsonw_array_begin(w);
    for (size_t i = 0; i < ng; i++) {
        const sim_gfr_t *x = &r->gfrs[g[i]];
        jsonw_object_begin(w);
        jsonw_key(w, "flavor");
        jsonw_string(w, x->flavor);
        jsonw_key(w, "resource");
        jsonw_string(w, x->resource);
        jsonw_key(w, "usedResourceSeconds");
        jsonw_raw(w, sim_fmt_resource_seconds(x->usage_int, buf));
        jsonw_key(w, "nominalResourceSeconds");
        jsonw_raw(w, sim_fmt_resource_seconds(x->nominal_int, buf));
        jsonw_key(w, "utilization");
        jsonw_raw(w, x->nominal_int > 0 ? sim_ratio_format(x->usage_int, x->nominal_int, 4, buf)
                                        : "null");
        jsonw_object_end(w);
    }
    jsonw_array_end(w);
    for (size_t i = 0; i < ncq; i++) {
        if (sim_view_fair_share(r, groups, cqs[i], &share[nj]))
            nj++;
    }
    jsonw_key(w, "jainFairnessIndex");
    jsonw_raw(w, nj > 0 ? sim_fmt_fraction(sim_stats_jain(share, nj), buf) : "null");
    jsonw_key(w, "jainClusterQueues");
    jsonw_uint(w, nj);
    jsonw_object_end(w);
    rc = ERR_OK;
out:
    free(g);
    free(cqs);
    free(share);
    return rc;
}

err_t sim_summary_write(const sim_rec_t *r, FILE *out, err_msg_t *msg)
{
    jsonw_t w;
    sim_view_groups_t g;
    err_t rc;

    if (sim_view_groups_init(&g, r) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "writing the summary: out of memory");
    jsonw_init(&w, out);
    jsonw_object_begin(&w);
    jsonw_key(&w, "version");
    jsonw_uint(&w, 1);
    rc = write_overall(&w, r, &g);
    if (rc == ERR_OK)
        rc = write_cqs(&w, r, &g);
    if (rc == ERR_OK)
        write_workloads(&w, r);
    sim_view_groups_fini(&g);
    if (rc != ERR_OK)
        return err_set(msg, rc, "writing the summary: out of memory");
    jsonw_object_end(&w);
    if (fflush(out) != 0 || ferror(out))
        return err_set(msg, ERR_IO, "writing the summary: %s", strerror(errno != 0 ? errno : EIO));
    return ERR_OK;
}
