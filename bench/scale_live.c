/* scale_live -- Kueue's scheduler-benchmark runner against a live API server: create a shape's
 * queues and Workloads on Kueue's schedule, finish each admitted Workload after its runtime,
 * record every Workload and ClusterQueue change, and replay the Workload records through the
 * quota checker. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_live.h"

#include "kube/client.h"
#include "kube/informer.h"
#include "util/util.h"

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

/*
 * What Kueue's runner does (test/performance/scheduler/runner), and so what this does, on one
 * libuv loop with one client of its own (its own QPS budget, so it is never the bottleneck):
 *
 *   LIST+WATCH Workloads and ClusterQueues (label performance-scheduler-class), no timeout
 *     |  both listed: on_start() (the caller's "before" measurements)
 *     v
 *   create the ResourceFlavor; then for every ClusterQueue at once: ClusterQueue -> Namespace ->
 *   LocalQueue -> its workload sets, each a sequential loop: sleep creationIntervalMs, create
 *   one Workload, repeat (the next sleep starts when the create has returned, as in Kueue)
 *     |
 *   every Workload record: stats (Kueue's recorder), quota check, and the runner's controller:
 *     Admitted (newly)            -> finish it runtimeMs later: Finished=True "ByTest"
 *     Evicted and still reserving -> after release_after_ms remove the admission (Kueue's runner
 *                                    does it at once: nothing else would for a Workload without
 *                                    a Job; sluice does it itself, so by default the runner
 *                                    only steps in when sluice has not within 2 s)
 *     |  every Workload Finished: wait (settle_s at most) for the ClusterQueue statuses to show
 *     |  nothing pending or reserving, as Kueue's recorder does before it stops
 *     v
 *   on_end() (the "after" measurements), optional clean-up, close.
 *
 * Writes are merge patches of workloads/status carrying the resourceVersion of the record they
 * were decided on: a 409 is decided again on the next record. The watch is one stream from the
 * LIST's resourceVersion, so every record arrives, in resourceVersion order; a 410 forces a
 * relist, which the quota check reports as a gap in the history.
 */

static const kube_resource_t RES_WL = {"kueue.x-k8s.io", "v1beta2", "workloads", true};
static const kube_resource_t RES_CQ = {"kueue.x-k8s.io", "v1beta2", "clusterqueues", false};
static const kube_resource_t RES_LQ = {"kueue.x-k8s.io", "v1beta2", "localqueues", true};
static const kube_resource_t RES_RF = {"kueue.x-k8s.io", "v1beta2", "resourceflavors", false};
static const kube_resource_t RES_NS = {"", "v1", "namespaces", false};

#define SELECTOR          SCALE_LABEL_CLASS
#define RELIST_TIMEOUT_MS 600000 /* a relist's own timeout (the client's is 60 s) */
#define CREATE_RETRIES    5      /* setup objects; Workload creates retry until the run's timeout */
#define MAX_REPORTED      20

typedef enum { T_NONE, T_FINISH, T_RELEASE, T_RETRY } wl_timer_t;
typedef enum { W_NONE, W_FINISH, W_RELEASE } wl_write_t;

typedef struct live_s live_t;

typedef struct wl_s {
    uv_timer_t timer;
    live_t *lv;
    json_t *conds; /* owned: status.conditions of the latest record */
    uint64_t rv, sent_rv, wrote_rv;
    int64_t generation;
    wl_timer_t kind;
    wl_write_t sending;
    bool timer_inited, in_flight, finish_due, release_due;
    bool admitted, evicted, finished, deleted, reserved;
} wl_t;

typedef struct gen_s {
    uv_timer_t timer;
    live_t *lv;
    uint32_t cq, set, next, total, retries;
} gen_t;

typedef struct setup_s {
    live_t *lv;
    uint32_t cq, step, retries;
} setup_t;

typedef struct watch_s {
    live_t *lv;
    const kube_resource_t *res;
    bool is_wl, listed, gone, stopping, timer_inited;
    kube_req_t *req;
    uv_timer_t retry;
    char rv[32];
} watch_t;

typedef enum { PH_SYNC, PH_SETUP, PH_RUN, PH_SETTLE, PH_END, PH_CLEANUP, PH_CLOSING } phase_t;

struct live_s {
    uv_loop_t loop;
    const scale_live_opts_t *o;
    const scale_layout_t *l;
    scale_live_out_t *out;
    kube_client_t *c;
    wl_t *wl;
    gen_t *gens;
    size_t ngens, gens_done;
    /* Workload creates in flight, at most o->max_inflight; the loops over it wait in FIFO order
     * (a ring of gen indexes: each loop waits at most once). */
    uint32_t *waiting;
    size_t wait_head, wait_len, inflight;
    setup_t *setups;
    watch_t wwl, wcq;
    uv_timer_t tick, endt;
    uv_signal_t sigint, sigterm;
    bool tick_inited;
    phase_t phase;
    double t0, settle_start, last_progress;
    uint64_t running, evictions, reported, cleanup_pending;
    err_t result;
    err_msg_t msg;
};

static double now_ms(void)
{
    return (double)uv_hrtime() / 1e6;
}

static void end_run(live_t *lv, err_t result, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void act(wl_t *w);

/* Count one of the runner's requests by the API server's labels. Only requests made between
 * the two metric scrapes count (from the first create on); a request canceled at the end never
 * reached the server's counters before the second scrape. */
static void count(live_t *lv, const char *verb, const kube_resource_t *res, const char *sub,
                  const kube_result_t *r)
{
    if (lv->t0 > 0 && !r->canceled)
        (void)scale_api_add(&lv->out->api, verb, res->resource, sub, r->status, 1);
}

/* A transient failure worth another try: timeouts, transport errors, 5xx. */
static bool transient(const kube_result_t *r)
{
    return r->err == ERR_TIMEOUT || r->err == ERR_IO || r->err == ERR_TLS ||
           (r->err == ERR_HTTP && (r->status == 0 || r->status >= 500 || r->status == 429));
}

static size_t wl_index(const live_t *lv, const wl_t *w)
{
    return (size_t)(w - lv->wl);
}

/* Namespace and name of workload `i`. */
static void wl_names(const live_t *lv, uint64_t i, const char **ns, char *name, size_t n)
{
    scale_wlpos_t p;
    if (scale_layout_wl(lv->l, i, &p) != 0) {
        *ns = "";
        name[0] = '\0';
        return;
    }
    *ns = lv->l->cqs[p.cq].name;
    scale_wl_name(&p, name, n);
}

static void rfc3339_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *quantity_json(int64_t milli)
{
    char buf[32];
    if (milli % 1000 == 0)
        snprintf(buf, sizeof(buf), "%" PRId64, milli / 1000);
    else
        snprintf(buf, sizeof(buf), "%" PRId64 "m", milli);
    return json_string(buf);
}

/* ---- trace lines ---------------------------------------------------------------------------- */

json_t *scale_trace_line(const scale_rec_t *rec, const char *type, double t_ms)
{
    return json_pack("{s:f,s:s,s:I,s:s,s:s,s:b,s:b,s:b,s:b,s:b,s:s,s:I}", "t", t_ms, "type", type,
                     "rv", (json_int_t)rec->rv, "ns", rec->ns, "name", rec->name, "reserved",
                     rec->reserved, "admitted", rec->admitted, "evicted", rec->evicted, "finished",
                     rec->finished, "deleted", rec->deleted, "cq", rec->cq, "cpuMilli",
                     (json_int_t)rec->usage_milli);
}

err_t scale_trace_parse(json_t *line, scale_rec_t *out, err_msg_t *msg)
{
    const char *ns = NULL, *name = NULL, *cq = "";
    json_int_t rv = 0, cpu = 0;
    int reserved = 0, admitted = 0, evicted = 0, finished = 0, deleted = 0;
    json_error_t je;

    if (json_unpack_ex(line, &je, 0, "{s?I,s:s,s:s,s?b,s?b,s?b,s?b,s?b,s?s,s?I}", "rv", &rv, "ns",
                       &ns, "name", &name, "reserved", &reserved, "admitted", &admitted, "evicted",
                       &evicted, "finished", &finished, "deleted", &deleted, "cq", &cq, "cpuMilli",
                       &cpu) != 0)
        return err_set(msg, ERR_PARSE, "trace line: %s", je.text);
    memset(out, 0, sizeof(*out));
    if (strlen(ns) >= sizeof(out->ns) || strlen(name) >= sizeof(out->name) ||
        strlen(cq) >= sizeof(out->cq))
        return err_set(msg, ERR_PARSE, "trace line: name too long");
    snprintf(out->ns, sizeof(out->ns), "%s", ns);
    snprintf(out->name, sizeof(out->name), "%s", name);
    snprintf(out->cq, sizeof(out->cq), "%s", cq);
    out->rv = (uint64_t)rv;
    out->reserved = reserved;
    out->admitted = admitted;
    out->evicted = evicted;
    out->finished = finished;
    out->deleted = deleted;
    out->usage_milli = cpu;
    out->created_s = out->admitted_at_s = -1;
    return ERR_OK;
}

/* ---- the runner's controller: finish admitted Workloads, release evicted ones -------------- */

/* Set condition `type` in `conds` (owned array) as apimeta.SetStatusCondition does: the
 * transition time changes only with the status. */
static int cond_set(json_t *conds, const char *type, const char *status, const char *reason,
                    const char *message, const char *now, int64_t generation)
{
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t == NULL || strcmp(t, type) != 0)
            continue;
        const char *s = json_string_value(json_object_get(c, "status"));
        if (s == NULL || strcmp(s, status) != 0) {
            if (json_object_set_new(c, "status", json_string(status)) ||
                json_object_set_new(c, "lastTransitionTime", json_string(now)))
                return -1;
        }
        return json_object_set_new(c, "reason", json_string(reason)) ||
               json_object_set_new(c, "message", json_string(message)) ||
               json_object_set_new(c, "observedGeneration", json_integer(generation));
    }
    return json_array_append_new(conds, json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "type", type,
                                                  "status", status, "reason", reason, "message",
                                                  message, "lastTransitionTime", now,
                                                  "observedGeneration", (json_int_t)generation));
}

static void on_write_done(const kube_result_t *res, void *data);

static void send_write(wl_t *w, wl_write_t what)
{
    live_t *lv = w->lv;
    char now[32], rv[32], name[SCALE_NAME_MAX];
    const char *ns;
    json_t *conds = w->conds ? json_deep_copy(w->conds) : json_array(), *patch = NULL;
    err_msg_t msg;
    int bad;

    rfc3339_now(now, sizeof(now));
    snprintf(rv, sizeof(rv), "%" PRIu64, w->rv);
    if (conds == NULL)
        goto oom;
    if (what == W_FINISH) {
        bad = cond_set(conds, "Finished", "True", "ByTest", "By test runner", now, w->generation);
    } else {
        bad = cond_set(conds, "QuotaReserved", "False", "Pending", "Evicted by the test runner",
                       now, w->generation) ||
              cond_set(conds, "Admitted", "False", "NoReservation",
                       "The workload has no reservation", now, w->generation);
    }
    if (bad)
        goto oom;
    patch = json_pack("{s:{s:s},s:{s:O}}", "metadata", "resourceVersion", rv, "status",
                      "conditions", conds);
    if (patch == NULL || (what == W_RELEASE && json_object_set_new(json_object_get(patch, "status"),
                                                                   "admission", json_null()) != 0))
        goto oom;
    wl_names(lv, wl_index(lv, w), &ns, name, sizeof(name));
    if (kube_patch(lv->c, &RES_WL, ns, name, "status", KUBE_PATCH_MERGE, patch, on_write_done, w,
                   NULL, &msg) != ERR_OK) {
        end_run(lv, ERR_IO, "patch %s/%s: %s", ns, name, msg.text);
        goto out;
    }
    w->in_flight = true;
    w->sending = what;
    w->sent_rv = w->rv;
    goto out;
oom:
    end_run(lv, ERR_NOMEM, "out of memory building a status patch");
out:
    json_decref(conds);
    json_decref(patch);
}

/* Decide on the latest record whether the runner writes now. */
static void act(wl_t *w)
{
    if (w->in_flight || w->lv->phase >= PH_END || w->finished || w->deleted)
        return;
    if (w->wrote_rv != 0 && w->rv < w->wrote_rv)
        return; /* the watch has not shown our last write yet */
    if (w->admitted && w->evicted && w->reserved && w->release_due)
        send_write(w, W_RELEASE);
    else if (w->admitted && !w->evicted && w->finish_due)
        send_write(w, W_FINISH);
}

static void on_wl_timer(uv_timer_t *t)
{
    wl_t *w = container_of(t, wl_t, timer);
    wl_timer_t kind = w->kind;

    w->kind = T_NONE;
    if (kind == T_FINISH)
        w->finish_due = true;
    else if (kind == T_RELEASE)
        w->release_due = true;
    act(w);
}

static void wl_timer_start(wl_t *w, wl_timer_t kind, uint64_t ms)
{
    if (!w->timer_inited) {
        uv_timer_init(&w->lv->loop, &w->timer);
        w->timer_inited = true;
    }
    w->kind = kind;
    uv_timer_start(&w->timer, on_wl_timer, ms, 0);
}

static void wl_timer_stop(wl_t *w)
{
    if (w->timer_inited)
        uv_timer_stop(&w->timer);
    w->kind = T_NONE;
}

static void on_write_done(const kube_result_t *res, void *data)
{
    wl_t *w = data;
    live_t *lv = w->lv;
    scale_live_out_t *out = lv->out;

    w->in_flight = false;
    count(lv, "PATCH", &RES_WL, "status", res);
    if (lv->phase >= PH_END || res->canceled)
        return;
    if (res->err == ERR_OK) {
        const char *rv = json_string_value(
            json_object_get(json_object_get(res->body, "metadata"), "resourceVersion"));
        w->wrote_rv = rv ? strtoull(rv, NULL, 10) : 0;
        if (w->sending == W_FINISH) {
            w->finish_due = false;
            out->finish_writes++;
        } else {
            w->release_due = false;
            out->release_writes++;
        }
    } else if (res->err == ERR_CONFLICT) {
        out->write_conflicts++;
        if (w->rv > w->sent_rv)
            act(w); /* a newer record is already here; otherwise the next one decides */
    } else if (res->err != ERR_NOT_FOUND) {
        out->write_errors++;
        if (lv->reported++ < MAX_REPORTED)
            fprintf(stderr, "scale: %s (retrying in 500 ms)\n", res->msg.text);
        wl_timer_start(w, T_RETRY, 500);
    }
}

/* ---- records -------------------------------------------------------------------------------- */

static void start_settle(live_t *lv);

static void on_wl_record(live_t *lv, json_t *obj, const char *type, bool deleted)
{
    scale_live_out_t *out = lv->out;
    double now = now_ms();
    scale_rec_t rec;
    err_msg_t msg;
    int64_t idx;

    if (scale_rec_parse(obj, deleted, &rec, &msg) != ERR_OK) {
        if (lv->reported++ < MAX_REPORTED)
            fprintf(stderr, "scale: skipped a Workload record: %s\n", msg.text);
        return;
    }
    idx = scale_layout_wl_find(lv->l, rec.ns, rec.name);
    if (idx < 0)
        return; /* not ours */
    if (lv->o->trace != NULL) {
        json_t *line = scale_trace_line(&rec, type, now - lv->t0);
        if (line != NULL)
            json_dumpf(line, lv->o->trace, JSON_COMPACT);
        fputc('\n', lv->o->trace);
        json_decref(line);
    }
    if (scale_check_apply(&out->chk, (uint64_t)idx, &rec, &msg) != ERR_OK &&
        out->chk.violations <= MAX_REPORTED)
        fprintf(stderr, "scale: QUOTA CHECK FAILED: %s\n", msg.text);

    scale_wlstat_t *st = &out->wl[idx];
    bool was_running = st->admitted && !st->finished;
    int changed = scale_wlstat_record(st, now, rec.created_s, rec.admitted_at_s, rec.admitted,
                                      rec.evicted, rec.finished);
    bool running = st->admitted && !st->finished;
    if (running != was_running) {
        if (running)
            lv->running++;
        else
            lv->running--;
    }

    wl_t *w = &lv->wl[idx];
    /* Admitted again without an unadmitted record in between: a relist (after a 410) can jump
     * from "admitted, evicted" straight to "admitted" -- that is a new admission to run. */
    bool readmitted = w->admitted && w->evicted && rec.admitted && !rec.evicted && !rec.finished;
    json_decref(w->conds);
    w->conds = json_incref(rec.conditions);
    w->rv = rec.rv;
    w->generation = rec.generation;
    w->admitted = rec.admitted;
    w->evicted = rec.evicted;
    w->finished = rec.finished;
    w->deleted = deleted;
    w->reserved = rec.reserved;

    if (changed & SCALE_WL_EVICTED)
        lv->evictions++;
    if (changed & SCALE_WL_FINISHED) {
        out->finished++;
        if (out->finished == lv->l->nwl) {
            out->last_finish_ms = now;
            out->completed = true;
            start_settle(lv);
        }
    }
    if (rec.finished || deleted || (changed & SCALE_WL_UNADMIT)) {
        wl_timer_stop(w);
        w->finish_due = w->release_due = false;
    } else if ((changed & SCALE_WL_ADMITTED) || readmitted) {
        /* Kueue's runner: runtimeMs from the moment it saw the admission. */
        scale_wlpos_t p;
        if (scale_layout_wl(lv->l, (uint64_t)idx, &p) == 0)
            wl_timer_start(w, T_FINISH, p.t->runtime_ms);
        w->finish_due = w->release_due = false;
    }
    if (rec.admitted && rec.evicted && !rec.finished) {
        if (w->kind == T_FINISH)
            wl_timer_stop(w);
        w->finish_due = false;
        if (lv->o->release_after_ms >= 0 && !w->release_due && w->kind != T_RELEASE &&
            rec.reserved) {
            if (lv->o->release_after_ms == 0)
                w->release_due = true;
            else
                wl_timer_start(w, T_RELEASE, (uint64_t)lv->o->release_after_ms);
        }
    }
    act(w);
}

static void settle_check(live_t *lv)
{
    if (lv->phase != PH_SETTLE)
        return;
    for (uint32_t q = 0; q < lv->l->ncqs; q++) {
        const scale_cqstat_t *s = &lv->out->cq[q];
        if (s->pending > 0 || s->reserving > 0 || s->usage_milli > 0) {
            if (now_ms() - lv->settle_start < lv->o->settle_s * 1000.0)
                return;
            break;
        }
    }
    end_run(lv, ERR_OK, "done");
}

static void start_settle(live_t *lv)
{
    if (lv->phase >= PH_SETTLE)
        return;
    lv->phase = PH_SETTLE;
    lv->settle_start = now_ms();
    settle_check(lv);
}

static void on_cq_record(live_t *lv, json_t *obj)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    int64_t q = name ? scale_layout_cq_find(lv->l, name) : -1;
    int64_t usage, quota, pending, reserving, admitted;
    bool active;
    err_msg_t msg;

    if (q < 0)
        return;
    if (scale_cq_fields(obj, &usage, &quota, &pending, &reserving, &admitted, &active, &msg) !=
        ERR_OK) {
        if (lv->reported++ < MAX_REPORTED)
            fprintf(stderr, "scale: ClusterQueue %s: %s\n", name, msg.text);
        return;
    }
    scale_cqstat_record(&lv->out->cq[q], now_ms(), usage, quota, pending, reserving, admitted,
                        active);
    settle_check(lv);
}

/* ---- watches -------------------------------------------------------------------------------- */

static void watch_list(watch_t *w);
static void watch_start(watch_t *w);
static void begin_setup(live_t *lv);

static void on_watch_retry(uv_timer_t *t)
{
    watch_t *w = container_of(t, watch_t, retry);
    if (w->lv->phase >= PH_END)
        return;
    if (w->gone || !w->listed)
        watch_list(w);
    else
        watch_start(w);
}

static void watch_later(watch_t *w, uint64_t ms)
{
    if (!w->timer_inited) {
        uv_timer_init(&w->lv->loop, &w->retry);
        w->timer_inited = true;
    }
    uv_timer_start(&w->retry, on_watch_retry, ms, 0);
}

static void on_watch_event(kube_event_type_t type, json_t *obj, void *data)
{
    watch_t *w = data;
    const char *rv;

    if (w->lv->phase >= PH_END)
        return;
    if (type == KUBE_EVENT_ERROR) {
        json_int_t code = json_integer_value(json_object_get(obj, "code"));
        if (code == 410)
            w->gone = true;
        fprintf(stderr, "scale: %s watch error %" JSON_INTEGER_FORMAT ": %s\n", w->res->resource,
                code, json_string_value(json_object_get(obj, "message")));
        return;
    }
    rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    if (rv != NULL)
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
    if (type == KUBE_EVENT_BOOKMARK)
        return;
    if (w->is_wl)
        on_wl_record(w->lv, obj,
                     type == KUBE_EVENT_ADDED      ? "ADDED"
                     : type == KUBE_EVENT_MODIFIED ? "MODIFIED"
                                                   : "DELETED",
                     type == KUBE_EVENT_DELETED);
    else
        on_cq_record(w->lv, obj);
}

static void on_watch_done(const kube_result_t *res, void *data)
{
    watch_t *w = data;

    w->req = NULL;
    count(w->lv, "WATCH", w->res, NULL, res);
    if (w->stopping || w->lv->phase >= PH_END)
        return;
    if (res->err == ERR_GONE)
        w->gone = true;
    if (res->err != ERR_OK && !w->gone)
        fprintf(stderr, "scale: %s watch ended: %s\n", w->res->resource, res->msg.text);
    watch_later(w, w->gone ? 0 : 100);
}

static void watch_start(watch_t *w)
{
    kube_watch_opts_t o = {
        .label_selector = SELECTOR, .resource_version = w->rv, .bookmarks = true};
    err_msg_t msg;

    /* No timeoutSeconds: the server keeps the stream 30-60 min, so a whole run is usually one
     * stream and never has to resume from a resourceVersion the watch cache may have dropped. */
    if (kube_watch(w->lv->c, w->res, NULL, &o, on_watch_event, on_watch_done, w, &w->req, &msg) !=
        ERR_OK)
        end_run(w->lv, ERR_IO, "watch %s: %s", w->res->resource, msg.text);
}

/* A relisted object, ordered for the quota check: Workloads holding no quota first, then by
 * resourceVersion, so that every state the check sees is part of the listed one. */
typedef struct relisted_s {
    json_t *obj;
    bool holds;
    uint64_t rv;
} relisted_t;

static int by_hold_then_rv(const void *a, const void *b)
{
    const relisted_t *x = a, *y = b;
    if (x->holds != y->holds)
        return x->holds ? 1 : -1;
    return x->rv < y->rv ? -1 : x->rv > y->rv;
}

static void on_list_done(const kube_result_t *res, void *data)
{
    watch_t *w = data;
    live_t *lv = w->lv;
    json_t *items = json_object_get(res->body, "items"), *it;
    const char *rv;
    size_t i, n = json_array_size(items);

    count(lv, "LIST", w->res, NULL, res);
    if (lv->phase >= PH_END || res->canceled)
        return;
    if (res->err != ERR_OK) {
        fprintf(stderr, "scale: list %s: %s (retrying)\n", w->res->resource, res->msg.text);
        watch_later(w, 1000);
        return;
    }
    rv = json_string_value(
        json_object_get(json_object_get(res->body, "metadata"), "resourceVersion"));
    snprintf(w->rv, sizeof(w->rv), "%s", rv ? rv : "");
    if (!w->listed) {
        /* Objects of the shape that exist already belong to an earlier run. */
        json_array_foreach(items, i, it)
        {
            json_t *m = json_object_get(it, "metadata");
            const char *name = json_string_value(json_object_get(m, "name"));
            const char *ns = json_string_value(json_object_get(m, "namespace"));
            bool ours = w->is_wl ? (ns && name && scale_layout_wl_find(lv->l, ns, name) >= 0)
                                 : (name && scale_layout_cq_find(lv->l, name) >= 0);
            if (ours) {
                end_run(lv, ERR_EXISTS,
                        "%s %s%s%s exists already (an earlier run's? delete it, or use another "
                        "--prefix)",
                        w->res->resource, ns ? ns : "", ns ? "/" : "", name);
                return;
            }
        }
        w->listed = true;
    } else {
        /* A relist after 410 Gone: the records in between are lost. Apply the listed state,
         * releases first, and say so. */
        relisted_t *arr = calloc(n ? n : 1, sizeof(*arr));
        if (arr == NULL) {
            end_run(lv, ERR_NOMEM, "out of memory");
            return;
        }
        json_array_foreach(items, i, it)
        {
            scale_rec_t rec;
            err_msg_t pmsg;
            arr[i].obj = it;
            arr[i].rv = strtoull(kube_object_rv(it), NULL, 10);
            arr[i].holds = w->is_wl && scale_rec_parse(it, false, &rec, &pmsg) == ERR_OK &&
                           rec.reserved && !rec.finished;
        }
        qsort(arr, n, sizeof(*arr), by_hold_then_rv);
        if (w->is_wl) {
            lv->out->relists++;
            scale_check_gap(&lv->out->chk);
            fprintf(stderr, "scale: Workload watch expired (410): relisted, the history has a "
                            "gap here\n");
        }
        for (i = 0; i < n && lv->phase < PH_END; i++) {
            if (w->is_wl)
                on_wl_record(lv, arr[i].obj, "RELIST", false);
            else
                on_cq_record(lv, arr[i].obj);
        }
        if (w->is_wl)
            scale_check_gap_end(&lv->out->chk);
        free(arr);
    }
    w->gone = false;
    watch_start(w);
    if (lv->phase == PH_SYNC && lv->wwl.listed && lv->wcq.listed)
        begin_setup(lv);
}

static void watch_list(watch_t *w)
{
    kube_list_opts_t o = {.label_selector = SELECTOR};
    kube_req_t *req = NULL;
    err_msg_t msg;

    if (kube_list(w->lv->c, w->res, NULL, &o, on_list_done, w, &req, &msg) != ERR_OK)
        end_run(w->lv, ERR_IO, "list %s: %s", w->res->resource, msg.text);
    else if (w->listed)
        /* A relist of tens of thousands of Workloads from a busy server takes minutes: the
         * client's 60 s would cut it off again and again. */
        kube_req_set_timeout(req, RELIST_TIMEOUT_MS);
}

/* ---- creating the shape --------------------------------------------------------------------- */

static json_t *labels_json(const char *cls)
{
    json_t *o = json_pack("{s:s}", SCALE_LABEL_CLEANUP, "true");
    if (o != NULL && cls != NULL && json_object_set_new(o, SCALE_LABEL_CLASS, json_string(cls))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *cq_json(const live_t *lv, const scale_cq_t *cq)
{
    const scale_qset_t *qs = cq->qset;
    json_t *res =
        json_pack("{s:s,s:o}", "name", "cpu", "nominalQuota", quantity_json(qs->nominal_milli));
    if (res != NULL && qs->borrowing_milli >= 0 &&
        json_object_set_new(res, "borrowingLimit", quantity_json(qs->borrowing_milli))) {
        json_decref(res);
        return NULL;
    }
    if (res == NULL)
        return NULL;
    return json_pack("{s:s,s:s,s:{s:s,s:o},s:{s:s,s:{},s:s,s:{s:s,s:s},s:{s:s,s:s},s:[{s:[s],s:[{s:"
                     "s,s:[o]}]}]}}",
                     "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "ClusterQueue", "metadata",
                     "name", cq->name, "labels", labels_json(qs->class_name), "spec", "cohortName",
                     lv->l->cohort_names[cq->cohort], "namespaceSelector", "queueingStrategy",
                     "BestEffortFIFO", "flavorFungibility", "whenCanBorrow", "MayStopSearch",
                     "whenCanPreempt", "TryNextFlavor", "preemption", "reclaimWithinCohort",
                     qs->reclaim_within_cohort, "withinClusterQueue", qs->within_cluster_queue,
                     "resourceGroups", "coveredResources", "cpu", "flavors", "name", lv->l->flavor,
                     "resources", res);
}

static json_t *wl_json(const live_t *lv, const scale_wlpos_t *p)
{
    char name[SCALE_NAME_MAX], rt[16];
    const char *q = lv->l->cqs[p->cq].name;

    scale_wl_name(p, name, sizeof(name));
    snprintf(rt, sizeof(rt), "%u", p->t->runtime_ms);
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s}},s:{s:s,s:i,s:[{s:s,s:i,s:{s:{s:s,s:[{s:s,"
                     "s:{s:{s:o}}}]}}}]}}",
                     "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload", "metadata", "name",
                     name, "namespace", q, "labels", SCALE_LABEL_RUNTIME, rt, SCALE_LABEL_CLASS,
                     p->t->class_name, "spec", "queueName", q, "priority", (int)p->t->priority,
                     "podSets", "name", "main", "count", 1, "template", "spec", "restartPolicy",
                     "Never", "containers", "name", "c", "resources", "requests", "cpu",
                     quantity_json(p->t->request_milli));
}

static void on_gen_timer(uv_timer_t *t);

static void gen_next(gen_t *g, uint64_t delay_ms)
{
    uv_timer_start(&g->timer, on_gen_timer, delay_ms, 0);
}

static void gen_submit(gen_t *g);

/* A create finished: let the next waiting loop send its own. */
static void create_slot_free(live_t *lv)
{
    lv->inflight--;
    while (lv->wait_len > 0 && lv->inflight < lv->o->max_inflight && lv->phase < PH_END) {
        gen_t *g = &lv->gens[lv->waiting[lv->wait_head]];
        lv->wait_head = (lv->wait_head + 1) % lv->ngens;
        lv->wait_len--;
        gen_submit(g);
    }
}

static void on_created(const kube_result_t *res, void *data)
{
    gen_t *g = data;
    live_t *lv = g->lv;
    const scale_wlset_t *set = &lv->l->cqs[g->cq].qset->sets[g->set];

    count(lv, "POST", &RES_WL, NULL, res);
    if (lv->phase >= PH_END || res->canceled)
        return;
    /* After a lost answer the create may have landed: AlreadyExists is then its success. */
    if (res->err == ERR_OK || (res->err == ERR_EXISTS && g->retries > 0)) {
        lv->out->created++;
        lv->out->last_create_ms = now_ms();
        g->retries = 0;
        if (++g->next < g->total)
            gen_next(g, set->interval_ms);
        else
            lv->gens_done++;
    } else if (transient(res)) {
        /* The server is overloaded (504 after its request timeout, 429 past the retries of
         * the client, a reset): try again with backoff, until the run's own timeout. */
        uint64_t backoff = 200u << (g->retries < 5 ? g->retries : 5);
        g->retries++;
        lv->out->create_retries++;
        if (lv->reported++ < MAX_REPORTED)
            fprintf(stderr, "scale: %s (retry %u in %" PRIu64 " ms)\n", res->msg.text, g->retries,
                    backoff);
        gen_next(g, backoff);
    } else {
        end_run(lv, res->err, "create workload: %s", res->msg.text);
        return;
    }
    create_slot_free(lv);
}

/* Send the loop's next Workload now. */
static void gen_submit(gen_t *g)
{
    live_t *lv = g->lv;
    const scale_wlset_t *set = &lv->l->cqs[g->cq].qset->sets[g->set];
    uint32_t rep = g->next / (uint32_t)set->ntmpl, tm = g->next % (uint32_t)set->ntmpl;
    uint64_t idx = scale_layout_wl_index(lv->l, g->cq, g->set, rep, tm);
    scale_wlpos_t p;
    json_t *body;
    err_msg_t msg;

    if (scale_layout_wl(lv->l, idx, &p) != 0)
        return;
    body = wl_json(lv, &p);
    if (body == NULL) {
        end_run(lv, ERR_NOMEM, "out of memory building a Workload");
        return;
    }
    if (g->retries == 0) {
        double now = now_ms();
        lv->out->wl[idx].create_ms = now;
        if (lv->out->first_create_ms == 0)
            lv->out->first_create_ms = now;
    }
    if (kube_create(lv->c, &RES_WL, lv->l->cqs[g->cq].name, body, on_created, g, NULL, &msg) !=
        ERR_OK)
        end_run(lv, ERR_IO, "create workload: %s", msg.text);
    else
        lv->inflight++;
    json_decref(body);
}

static void on_gen_timer(uv_timer_t *t)
{
    gen_t *g = container_of(t, gen_t, timer);
    live_t *lv = g->lv;

    if (lv->phase >= PH_END)
        return;
    if (lv->inflight >= lv->o->max_inflight) {
        lv->waiting[(lv->wait_head + lv->wait_len) % lv->ngens] = (uint32_t)(g - lv->gens);
        lv->wait_len++;
        return;
    }
    gen_submit(g);
}

static void setup_step(setup_t *s);

static void on_setup_done(const kube_result_t *res, void *data)
{
    setup_t *s = data;
    live_t *lv = s->lv;
    static const kube_resource_t *const steps[] = {&RES_CQ, &RES_NS, &RES_LQ};

    count(lv, "POST", steps[s->step], NULL, res);
    if (lv->phase >= PH_END || res->canceled)
        return;
    if (res->err == ERR_OK || (res->err == ERR_EXISTS && s->retries > 0)) {
        s->retries = 0;
        s->step++;
        setup_step(s);
        return;
    }
    if (transient(res) && s->retries++ < CREATE_RETRIES) {
        setup_step(s);
        return;
    }
    end_run(lv, res->err, "set up ClusterQueue %s: %s", lv->l->cqs[s->cq].name, res->msg.text);
}

/* ClusterQueue -> Namespace -> LocalQueue -> the workload sets (generateQueue in Kueue). */
static void setup_step(setup_t *s)
{
    live_t *lv = s->lv;
    const scale_cq_t *cq = &lv->l->cqs[s->cq];
    json_t *body = NULL;
    const kube_resource_t *res = NULL;
    const char *ns = NULL;
    err_msg_t msg;

    switch (s->step) {
    case 0:
        body = cq_json(lv, cq);
        res = &RES_CQ;
        break;
    case 1:
        body = json_pack("{s:s,s:s,s:{s:s,s:o}}", "apiVersion", "v1", "kind", "Namespace",
                         "metadata", "name", cq->name, "labels", labels_json(NULL));
        res = &RES_NS;
        break;
    case 2:
        body = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta2",
                         "kind", "LocalQueue", "metadata", "name", cq->name, "namespace", cq->name,
                         "spec", "clusterQueue", cq->name);
        res = &RES_LQ;
        ns = cq->name;
        break;
    default:
        /* Kueue starts every workload set of the queue at once. */
        for (size_t i = 0; i < lv->ngens; i++) {
            gen_t *g = &lv->gens[i];
            if (g->cq == s->cq)
                gen_next(g, cq->qset->sets[g->set].interval_ms);
        }
        if (lv->phase == PH_SETUP)
            lv->phase = PH_RUN;
        return;
    }
    if (body == NULL) {
        end_run(lv, ERR_NOMEM, "out of memory");
        return;
    }
    if (kube_create(lv->c, res, ns, body, on_setup_done, s, NULL, &msg) != ERR_OK)
        end_run(lv, ERR_IO, "create %s: %s", res->resource, msg.text);
    json_decref(body);
}

static void on_flavor_done(const kube_result_t *res, void *data)
{
    live_t *lv = data;

    count(lv, "POST", &RES_RF, NULL, res);
    if (lv->phase >= PH_END || res->canceled)
        return;
    if (res->err != ERR_OK) {
        end_run(lv, res->err, "create ResourceFlavor: %s", res->msg.text);
        return;
    }
    for (uint32_t q = 0; q < lv->l->ncqs && lv->phase < PH_END; q++)
        setup_step(&lv->setups[q]);
}

static void begin_setup(live_t *lv)
{
    json_t *rf;
    err_msg_t msg;

    lv->phase = PH_SETUP;
    if (lv->o->on_start != NULL)
        lv->o->on_start(lv->o->data);
    lv->t0 = now_ms();
    rf =
        json_pack("{s:s,s:s,s:{s:s,s:o}}", "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
                  "ResourceFlavor", "metadata", "name", lv->l->flavor, "labels", labels_json(NULL));
    if (rf == NULL) {
        end_run(lv, ERR_NOMEM, "out of memory");
        return;
    }
    if (kube_create(lv->c, &RES_RF, NULL, rf, on_flavor_done, lv, NULL, &msg) != ERR_OK)
        end_run(lv, ERR_IO, "create ResourceFlavor: %s", msg.text);
    json_decref(rf);
}

/* ---- the end -------------------------------------------------------------------------------- */

static void close_all(live_t *lv);

static void on_deleted(const kube_result_t *res, void *data)
{
    live_t *lv = data;
    if (res->err != ERR_OK && res->err != ERR_NOT_FOUND && !res->canceled)
        fprintf(stderr, "scale: clean-up: %s\n", res->msg.text);
    if (--lv->cleanup_pending == 0)
        close_all(lv);
}

static void cleanup(live_t *lv)
{
    err_msg_t msg;
    char flavor[SCALE_NAME_MAX];

    lv->phase = PH_CLEANUP;
    lv->cleanup_pending = 1; /* held until every delete is submitted */
    /* Kueue's Cleanup: namespaces (their Workloads go with them), LocalQueues, ClusterQueues,
     * the ResourceFlavor. */
    for (uint32_t q = 0; q < lv->l->ncqs; q++) {
        const char *n = lv->l->cqs[q].name;
        if (kube_delete(lv->c, &RES_NS, NULL, n, NULL, on_deleted, lv, NULL, &msg) == ERR_OK)
            lv->cleanup_pending++;
        if (kube_delete(lv->c, &RES_LQ, n, n, NULL, on_deleted, lv, NULL, &msg) == ERR_OK)
            lv->cleanup_pending++;
        if (kube_delete(lv->c, &RES_CQ, NULL, n, NULL, on_deleted, lv, NULL, &msg) == ERR_OK)
            lv->cleanup_pending++;
    }
    snprintf(flavor, sizeof(flavor), "%s", lv->l->flavor);
    if (kube_delete(lv->c, &RES_RF, NULL, flavor, NULL, on_deleted, lv, NULL, &msg) == ERR_OK)
        lv->cleanup_pending++;
    if (--lv->cleanup_pending == 0)
        close_all(lv);
}

/* The end is decided here and carried out from a timer: this may run inside a watch event
 * callback, where the client must not be closed. */
static void on_end_timer(uv_timer_t *t);

static void end_run(live_t *lv, err_t result, const char *fmt, ...)
{
    va_list ap;

    if (lv->phase >= PH_END)
        return;
    lv->phase = PH_END;
    lv->result = result;
    va_start(ap, fmt);
    vsnprintf(lv->msg.text, sizeof(lv->msg.text), fmt, ap);
    va_end(ap);
    if (result != ERR_OK)
        fprintf(stderr, "scale: stopping: %s\n", lv->msg.text);
    uv_timer_start(&lv->endt, on_end_timer, 0, 0);
}

static void on_end_timer(uv_timer_t *t)
{
    live_t *lv = container_of(t, live_t, endt);

    if (lv->t0 > 0 && lv->o->on_end != NULL)
        lv->o->on_end(lv->o->data);
    lv->wwl.stopping = lv->wcq.stopping = true;
    if (lv->wwl.req != NULL)
        kube_req_cancel(lv->wwl.req);
    if (lv->wcq.req != NULL)
        kube_req_cancel(lv->wcq.req);
    for (size_t i = 0; i < lv->ngens; i++)
        uv_timer_stop(&lv->gens[i].timer);
    for (uint64_t i = 0; i < lv->l->nwl; i++)
        wl_timer_stop(&lv->wl[i]);
    if (lv->o->cleanup && lv->t0 > 0)
        cleanup(lv);
    else
        close_all(lv);
}

static void close_all(live_t *lv)
{
    if (lv->phase == PH_CLOSING)
        return;
    lv->phase = PH_CLOSING;
    for (uint64_t i = 0; i < lv->l->nwl; i++) {
        if (lv->wl[i].timer_inited)
            uv_close((uv_handle_t *)&lv->wl[i].timer, NULL);
    }
    for (size_t i = 0; i < lv->ngens; i++)
        uv_close((uv_handle_t *)&lv->gens[i].timer, NULL);
    if (lv->wwl.timer_inited)
        uv_close((uv_handle_t *)&lv->wwl.retry, NULL);
    if (lv->wcq.timer_inited)
        uv_close((uv_handle_t *)&lv->wcq.retry, NULL);
    if (lv->tick_inited) {
        uv_close((uv_handle_t *)&lv->tick, NULL);
        uv_close((uv_handle_t *)&lv->endt, NULL);
        uv_close((uv_handle_t *)&lv->sigint, NULL);
        uv_close((uv_handle_t *)&lv->sigterm, NULL);
    }
    kube_client_close(lv->c, NULL, NULL);
    lv->c = NULL;
}

static void on_tick(uv_timer_t *t)
{
    live_t *lv = container_of(t, live_t, tick);
    scale_live_out_t *out = lv->out;
    double now = now_ms();

    if (lv->phase >= PH_END)
        return;
    if (lv->t0 > 0 && now - lv->t0 > lv->o->timeout_s * 1000.0) {
        end_run(lv, ERR_TIMEOUT,
                "timeout after %.0f s: %" PRIu64 " of %" PRIu64 " created, %" PRIu64 " finished",
                lv->o->timeout_s, out->created, lv->l->nwl, out->finished);
        return;
    }
    settle_check(lv);
    if (!lv->o->quiet && lv->t0 > 0 && now - lv->last_progress >= 5000.0) {
        lv->last_progress = now;
        fprintf(stderr,
                "scale: %6.1f s  created %" PRIu64 "/%" PRIu64 "  running %" PRIu64
                "  finished %" PRIu64 "  evictions %" PRIu64 "  records %" PRIu64 "\n",
                (now - lv->t0) / 1000.0, out->created, lv->l->nwl, lv->running, out->finished,
                lv->evictions, out->chk.records);
    }
}

/* SIGINT/SIGTERM: stop as at the end, so the figures so far are still measured and printed. */
static void on_signal(uv_signal_t *h, int signum)
{
    live_t *lv = h->data;
    end_run(lv, ERR_IO, "interrupted by signal %d", signum);
}

static void on_client_log(void *data, const char *text)
{
    live_t *lv = data;
    if (lv->reported++ < 200)
        fprintf(stderr, "scale: client: %s\n", text);
}

void scale_live_out_fini(scale_live_out_t *out)
{
    free(out->wl);
    free(out->cq);
    scale_check_fini(&out->chk);
    scale_api_fini(&out->api);
    memset(out, 0, sizeof(*out));
}

err_t scale_live_run(const scale_live_opts_t *o, scale_live_out_t *out, err_msg_t *msg)
{
    const scale_layout_t *l = o->l;
    live_t *lv = calloc(1, sizeof(*lv));
    /* The runner queues on purpose: a create per Workload and a finish per admission, held to
     * its QPS, can be tens of thousands deep at large scale (the client's default bound of 10,000
     * is for the operator, which must shed load instead). */
    kube_client_opts_t co = {
        .qps_milli = o->qps_milli, .burst = o->burst, .timeout_ms = 60000, .max_requests = 1000000};
    err_t e;
    size_t g = 0;

    memset(out, 0, sizeof(*out));
    if (lv == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    lv->o = o;
    lv->l = l;
    lv->out = out;
    out->wl = calloc(l->nwl + 1, sizeof(scale_wlstat_t));
    out->cq = calloc(l->ncqs + 1, sizeof(scale_cqstat_t));
    lv->wl = calloc(l->nwl + 1, sizeof(wl_t));
    lv->setups = calloc(l->ncqs + 1, sizeof(setup_t));
    for (uint32_t q = 0; q < l->ncqs; q++)
        lv->ngens += l->cqs[q].qset->nsets;
    lv->gens = calloc(lv->ngens + 1, sizeof(gen_t));
    lv->waiting = calloc(lv->ngens + 1, sizeof(uint32_t));
    if (out->wl == NULL || out->cq == NULL || lv->wl == NULL || lv->setups == NULL ||
        lv->gens == NULL || lv->waiting == NULL) {
        e = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail_early;
    }
    e = scale_check_init(&out->chk, l, msg);
    if (e != ERR_OK)
        goto fail_early;
    if (uv_loop_init(&lv->loop) != 0) {
        e = err_set(msg, ERR_IO, "uv_loop_init failed");
        goto fail_early;
    }
    co.log = on_client_log;
    co.log_data = lv;
    e = kube_client_new(&lv->loop, o->cfg, &co, &lv->c, msg);
    if (e != ERR_OK) {
        uv_loop_close(&lv->loop);
        goto fail_early;
    }
    for (uint64_t i = 0; i < l->nwl; i++)
        lv->wl[i].lv = lv;
    for (uint32_t q = 0; q < l->ncqs; q++) {
        lv->setups[q] = (setup_t){lv, q, 0, 0};
        for (uint32_t s = 0; s < l->cqs[q].qset->nsets; s++, g++) {
            const scale_wlset_t *set = &l->cqs[q].qset->sets[s];
            lv->gens[g] =
                (gen_t){.lv = lv, .cq = q, .set = s, .total = set->count * (uint32_t)set->ntmpl};
            uv_timer_init(&lv->loop, &lv->gens[g].timer);
        }
    }
    lv->wwl = (watch_t){.lv = lv, .res = &RES_WL, .is_wl = true};
    lv->wcq = (watch_t){.lv = lv, .res = &RES_CQ, .is_wl = false};
    uv_timer_init(&lv->loop, &lv->tick);
    uv_timer_init(&lv->loop, &lv->endt);
    uv_signal_init(&lv->loop, &lv->sigint);
    uv_signal_init(&lv->loop, &lv->sigterm);
    lv->sigint.data = lv->sigterm.data = lv;
    uv_signal_start(&lv->sigint, on_signal, SIGINT);
    uv_signal_start(&lv->sigterm, on_signal, SIGTERM);
    lv->tick_inited = true;
    uv_timer_start(&lv->tick, on_tick, 1000, 1000);
    watch_list(&lv->wwl);
    watch_list(&lv->wcq);

    uv_run(&lv->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&lv->loop) != 0)
        fprintf(stderr, "scale: the loop still had handles at the end\n");
    for (uint64_t i = 0; i < l->nwl; i++)
        json_decref(lv->wl[i].conds);
    e = lv->result;
    if (e != ERR_OK)
        err_set(msg, e, "%s", lv->msg.text);
    free(lv->wl);
    free(lv->gens);
    free(lv->waiting);
    free(lv->setups);
    free(lv);
    return e;
fail_early:
    free(lv->wl);
    free(lv->gens);
    free(lv->waiting);
    free(lv->setups);
    free(lv);
    return e;
}
