/* lease -- leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/lease.h"

#include "kube/lease_int.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Every retry_ms each candidate reads the Lease and decides (kube__lease_plan):
 *
 *   no Lease ---------------------------------------> CREATE with us as holder
 *   holder is someone else, record changed < lease_ms ago by OUR clock --> WAIT
 *   holder is us, "", or the record has not changed for lease_ms -----> UPDATE (acquire/renew)
 *
 * The UPDATE carries the resourceVersion we read, so two candidates racing for an expired
 * Lease cannot both win: the second PUT gets 409 Conflict. "Expired" is judged by when *we*
 * last saw the record change, never by comparing the holder's renewTime with our clock, so clock
 * skew between nodes does not matter (client-go's observedTime).
 *
 * A leader stops when a read shows another valid holder, or when it has not renewed
 * successfully for deadline_ms (< lease_ms): it stops before anyone else may start.
 *
 *   standby --acquire ok--> leader --renew ok--> leader
 *      ^                      | other holder seen, or no renewal for deadline_ms, or close
 *      +------on_stopped------+
 */

#define DEFAULT_LEASE_MS    15000u
#define DEFAULT_DEADLINE_MS 10000u
#define DEFAULT_RETRY_MS    2000u

/* ---- state machine (pure) -----------------------------------------------------------------------
 */

static bool set_str(char **dst, const char *src)
{
    char *d = strdup(src ? src : "");

    if (d == NULL)
        return false;
    free(*dst);
    *dst = d;
    return true;
}

err_t kube__lease_init(kube__lease_state_t *st, const kube_lease_opts_t *opts,
                       const char *default_ns, err_msg_t *msg)
{
    memset(st, 0, sizeof(*st));
    if (opts == NULL || opts->name == NULL || opts->name[0] == '\0' || opts->identity == NULL ||
        opts->identity[0] == '\0')
        return err_set(msg, ERR_INVALID, "lease: name and identity are required");
    if (!set_str(&st->identity, opts->identity) || !set_str(&st->name, opts->name) ||
        !set_str(&st->ns, opts->ns ? opts->ns : default_ns) || !set_str(&st->obs_holder, "") ||
        !set_str(&st->obs_renew, "")) {
        kube__lease_fini(st);
        return err_set(msg, ERR_NOMEM, "lease %s: out of memory", opts->name);
    }
    st->lease_ms = opts->lease_ms ? opts->lease_ms : DEFAULT_LEASE_MS;
    st->deadline_ms = opts->deadline_ms ? opts->deadline_ms : DEFAULT_DEADLINE_MS;
    st->retry_ms = opts->retry_ms ? opts->retry_ms : DEFAULT_RETRY_MS;
    if (st->lease_ms < 1000)
        st->lease_ms = 1000; /* leaseDurationSeconds is whole seconds */
    return ERR_OK;
}

void kube__lease_fini(kube__lease_state_t *st)
{
    free(st->identity);
    free(st->ns);
    free(st->name);
    free(st->obs_holder);
    free(st->obs_renew);
    json_decref(st->last);
    memset(st, 0, sizeof(*st));
}

void kube__lease_microtime(int64_t unix_us, char buf[32])
{
    time_t secs = (time_t)(unix_us / 1000000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, 32, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(unix_us % 1000000));
}

/* Note the record in `lease` (borrowed) as observed at `now_ms` if it changed. */
static bool observe(kube__lease_state_t *st, uint64_t now_ms, json_t *lease)
{
    json_t *spec = json_object_get(lease, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    const char *renew = json_string_value(json_object_get(spec, "renewTime"));
    json_int_t dur = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));

    holder = holder ? holder : "";
    renew = renew ? renew : "";
    if (!st->have_obs || strcmp(holder, st->obs_holder) != 0 || strcmp(renew, st->obs_renew) != 0) {
        if (!set_str(&st->obs_holder, holder) || !set_str(&st->obs_renew, renew))
            return false;
        st->obs_at_ms = now_ms;
        st->have_obs = true;
    }
    st->obs_duration_s = dur > 0 && dur < 86400 ? (uint32_t)dur : st->lease_ms / 1000;
    json_decref(st->last);
    st->last = json_incref(lease);
    return true;
}

static json_t *new_lease_body(kube__lease_state_t *st, const char *now_str)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:s, s:s, s:i}}", "apiVersion",
                     "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", st->name,
                     "namespace", st->ns, "spec", "holderIdentity", st->identity,
                     "leaseDurationSeconds", (json_int_t)(st->lease_ms / 1000), "acquireTime",
                     now_str, "renewTime", now_str, "leaseTransitions", 0);
}

err_t kube__lease_plan(kube__lease_state_t *st, uint64_t now_ms, const char *now_str, err_t get_err,
                       json_t *lease, kube__lease_action_t *action, json_t **body,
                       kube__lease_change_t *change, err_msg_t *msg)
{
    json_t *copy, *spec;
    bool ours, free_to_take;
    const char *holder;

    *change = KUBE__LEASE_SAME;
    *body = NULL;
    if (get_err == ERR_NOT_FOUND) {
        *body = new_lease_body(st, now_str);
        if (*body == NULL)
            return err_set(msg, ERR_NOMEM, "lease %s/%s: out of memory", st->ns, st->name);
        *action = KUBE__LEASE_CREATE;
        return ERR_OK;
    }
    if (get_err != ERR_OK)
        return err_set(msg, get_err, "lease %s/%s: read failed", st->ns, st->name);
    if (!json_is_object(lease) || !observe(st, now_ms, lease))
        return err_set(msg, json_is_object(lease) ? ERR_NOMEM : ERR_PARSE,
                       "lease %s/%s: unusable Lease object", st->ns, st->name);
    holder = st->obs_holder;
    ours = strcmp(holder, st->identity) == 0;
    free_to_take =
        holder[0] == '\0' || now_ms >= st->obs_at_ms + (uint64_t)st->obs_duration_s * 1000u;
    if (!ours && !free_to_take) {
        *action = KUBE__LEASE_WAIT;
        if (st->leading) {
            st->leading = false; /* someone else holds it: stop at once */
            *change = KUBE__LEASE_STOPPED;
        }
        return ERR_OK;
    }
    copy = json_deep_copy(lease);
    spec = json_object_get(copy, "spec");
    if (copy != NULL && spec == NULL) {
        spec = json_object();
        if (json_object_set_new(copy, "spec", spec) != 0)
            spec = NULL;
    }
    if (copy == NULL || spec == NULL ||
        json_object_set_new(spec, "holderIdentity", json_string(st->identity)) ||
        json_object_set_new(spec, "leaseDurationSeconds",
                            json_integer((json_int_t)(st->lease_ms / 1000))) ||
        json_object_set_new(spec, "renewTime", json_string(now_str)))
        goto nomem;
    if (!ours) {
        json_int_t transitions = json_integer_value(json_object_get(spec, "leaseTransitions"));

        if (json_object_set_new(spec, "acquireTime", json_string(now_str)) ||
            json_object_set_new(spec, "leaseTransitions",
                                json_integer(holder[0] ? transitions + 1 : transitions)))
            goto nomem;
    }
    *body = copy;
    *action = KUBE__LEASE_UPDATE;
    return ERR_OK;
nomem:
    json_decref(copy);
    return err_set(msg, ERR_NOMEM, "lease %s/%s: out of memory", st->ns, st->name);
}

kube__lease_change_t kube__lease_check(kube__lease_state_t *st, uint64_t now_ms)
{
    if (st->leading && now_ms - st->last_renew_ms >= st->deadline_ms) {
        st->leading = false;
        return KUBE__LEASE_STOPPED;
    }
    return KUBE__LEASE_SAME;
}

kube__lease_change_t kube__lease_written(kube__lease_state_t *st, uint64_t now_ms, err_t err,
                                         json_t *written)
{
    if (err != ERR_OK || !json_is_object(written))
        return kube__lease_check(st, now_ms);
    observe(st, now_ms, written);
    st->last_renew_ms = now_ms;
    if (!st->leading) {
        st->leading = true;
        return KUBE__LEASE_STARTED;
    }
    return KUBE__LEASE_SAME;
}

json_t *kube__lease_release_body(kube__lease_state_t *st, const char *now_str)
{
    json_t *copy, *spec;

    if (!st->leading || st->last == NULL)
        return NULL;
    st->leading = false;
    copy = json_deep_copy(st->last);
    spec = json_object_get(copy, "spec");
    if (spec == NULL || json_object_set_new(spec, "holderIdentity", json_string("")) ||
        json_object_set_new(spec, "leaseDurationSeconds", json_integer(1)) ||
        json_object_set_new(spec, "renewTime", json_string(now_str)) ||
        json_object_set_new(spec, "acquireTime", json_string(now_str))) {
        json_decref(copy);
        return NULL;
    }
    return copy;
}

/* ---- driver on the loop
 * -------------------------------------------------------------------------- */

static const kube_resource_t leases = {"coordination.k8s.io", "v1", "leases", true};

struct kube_lease_s {
    kube_client_t *c; /* borrowed */
    kube__lease_state_t st;
    kube_lease_handlers_t handlers;
    void *data;
    uv_timer_t timer;
    bool timer_ready, timer_closed;
    kube_req_t *req; /* GET or write of the current attempt */
    bool closing, waiting_req, waiting_release;
    bool failing;     /* the last request failed (on_error told) */
    const char *verb; /* of the write in flight: "create" or "update" */
    void (*on_closed)(void *data);
    void *closed_data;
};

static void now_microtime(char buf[32])
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    kube__lease_microtime((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000, buf);
}

static void fire(kube_lease_t *l, kube__lease_change_t change)
{
    if (change == KUBE__LEASE_STARTED) {
        kube_client_log(l->c, "lease %s/%s: %s is now the leader", l->st.ns, l->st.name,
                        l->st.identity);
        if (l->handlers.on_started)
            l->handlers.on_started(l, l->data);
    } else if (change == KUBE__LEASE_STOPPED) {
        kube_client_log(l->c, "lease %s/%s: %s stopped leading", l->st.ns, l->st.name,
                        l->st.identity);
        if (l->handlers.on_stopped)
            l->handlers.on_stopped(l, l->data);
    }
}

/* Tell the owner about a failure (`res` set) or the first success after failures. */
static void report(kube_lease_t *l, const kube_result_t *res, const char *verb)
{
    if (res == NULL && !l->failing)
        return;
    l->failing = res != NULL;
    if (l->handlers.on_error != NULL)
        l->handlers.on_error(l, res, verb, l->data);
}

static void maybe_free(kube_lease_t *l)
{
    void (*cb)(void *) = l->on_closed;
    void *data = l->closed_data;

    if ((l->timer_ready && !l->timer_closed) || l->waiting_req || l->waiting_release)
        return;
    kube__lease_fini(&l->st);
    free(l);
    if (cb != NULL)
        cb(data);
}

static void on_write(const kube_result_t *res, void *data)
{
    kube_lease_t *l = data;

    l->req = NULL;
    if (l->closing) {
        l->waiting_req = false;
        maybe_free(l);
        return;
    }
    if (res->err != ERR_OK)
        kube_client_log(l->c, "lease %s/%s: %s", l->st.ns, l->st.name, res->msg.text);
    if (res->err != ERR_CONFLICT && res->err != ERR_EXISTS)
        report(l, res->err == ERR_OK ? NULL : res, l->verb);
    fire(l, kube__lease_written(&l->st, uv_now(kube_client_loop(l->c)), res->err, res->body));
}

static void on_get(const kube_result_t *res, void *data)
{
    kube_lease_t *l = data;
    uint64_t now = uv_now(kube_client_loop(l->c));
    kube__lease_action_t action;
    kube__lease_change_t change;
    json_t *body = NULL;
    char now_str[32];
    err_msg_t msg;
    err_t rc;

    l->req = NULL;
    if (l->closing) {
        l->waiting_req = false;
        maybe_free(l);
        return;
    }
    if (res->err != ERR_NOT_FOUND)
        report(l, res->err == ERR_OK ? NULL : res, "get");
    now_microtime(now_str);
    rc = kube__lease_plan(&l->st, now, now_str, res->err, res->body, &action, &body, &change, &msg);
    if (rc != ERR_OK) {
        kube_client_log(l->c, "%s: %s", msg.text, res->msg.text);
        fire(l, kube__lease_check(&l->st, now));
        return;
    }
    fire(l, change);
    l->verb = action == KUBE__LEASE_CREATE ? "create" : "update";
    if (action == KUBE__LEASE_CREATE)
        rc = kube_create(l->c, &leases, l->st.ns, body, on_write, l, &l->req, &msg);
    else if (action == KUBE__LEASE_UPDATE)
        rc = kube_update(l->c, &leases, l->st.ns, l->st.name, NULL, body, on_write, l, &l->req,
                         &msg);
    json_decref(body);
    if (rc != ERR_OK) {
        l->req = NULL;
        kube_client_log(l->c, "lease %s/%s: %s", l->st.ns, l->st.name, msg.text);
    }
}

static void on_tick(uv_timer_t *t)
{
    kube_lease_t *l = container_of(t, kube_lease_t, timer);
    err_msg_t msg;

    fire(l, kube__lease_check(&l->st, uv_now(kube_client_loop(l->c))));
    if (l->req != NULL)
        return; /* the previous attempt is still in flight (its timeout bounds it) */
    if (kube_get(l->c, &leases, l->st.ns, l->st.name, NULL, on_get, l, &l->req, &msg) != ERR_OK) {
        l->req = NULL;
        kube_client_log(l->c, "lease %s/%s: %s", l->st.ns, l->st.name, msg.text);
    }
}

kube_lease_t *kube_lease_new(kube_client_t *c, const kube_lease_opts_t *opts,
                             const kube_lease_handlers_t *handlers, void *data)
{
    kube_lease_t *l = calloc(1, sizeof(*l));

    if (l == NULL)
        return NULL;
    if (kube__lease_init(&l->st, opts, kube_client_namespace(c), NULL) != ERR_OK) {
        free(l);
        return NULL;
    }
    l->c = c;
    if (handlers != NULL)
        l->handlers = *handlers;
    l->data = data;
    return l;
}

err_t kube_lease_start(kube_lease_t *l, err_msg_t *msg)
{
    int rc;

    if (l->timer_ready || l->closing)
        return err_set(msg, ERR_INVALID, "lease %s: already started", l->st.name);
    rc = uv_timer_init(kube_client_loop(l->c), &l->timer);
    if (rc != 0)
        return err_set(msg, ERR_IO, "lease %s: uv_timer_init: %s", l->st.name, uv_strerror(rc));
    l->timer_ready = true;
    uv_timer_start(&l->timer, on_tick, 0, l->st.retry_ms);
    return ERR_OK;
}

static void on_released(const kube_result_t *res, void *data)
{
    kube_lease_t *l = data;

    if (res->err != ERR_OK)
        kube_client_log(l->c, "lease %s/%s: release: %s", l->st.ns, l->st.name, res->msg.text);
    l->waiting_release = false;
    maybe_free(l);
}

static void on_timer_closed(uv_handle_t *h)
{
    kube_lease_t *l = container_of((uv_timer_t *)h, kube_lease_t, timer);

    l->timer_closed = true;
    maybe_free(l);
}

void kube_lease_close(kube_lease_t *l, void (*on_closed)(void *data), void *data)
{
    char now_str[32];
    json_t *body;
    bool was_leading;

    if (l == NULL || l->closing)
        return;
    l->closing = true;
    l->on_closed = on_closed;
    l->closed_data = data;
    l->waiting_req = l->req != NULL;
    if (l->req != NULL)
        kube_req_cancel(l->req);
    was_leading = l->st.leading;
    now_microtime(now_str);
    body = kube__lease_release_body(&l->st, now_str); /* ends leadership */
    if (was_leading && l->handlers.on_stopped)
        l->handlers.on_stopped(l, l->data); /* stop admitting before the Lease is let go */
    if (body != NULL) {
        err_msg_t msg;

        l->waiting_release = true;
        if (kube_update(l->c, &leases, l->st.ns, l->st.name, NULL, body, on_released, l, NULL,
                        &msg) != ERR_OK) {
            l->waiting_release = false;
            kube_client_log(l->c, "lease %s/%s: release: %s", l->st.ns, l->st.name, msg.text);
        }
        json_decref(body);
    }
    if (l->timer_ready) {
        uv_timer_stop(&l->timer);
        uv_close((uv_handle_t *)&l->timer, on_timer_closed);
    } else {
        maybe_free(l);
    }
}

void kube__lease_freeze(kube_lease_t *l)
{
    if (l->timer_ready)
        uv_timer_stop(&l->timer);
}

bool kube_lease_is_leader(const kube_lease_t *l)
{
    return l->st.leading;
}

const char *kube_lease_holder(const kube_lease_t *l)
{
    return l->st.obs_holder ? l->st.obs_holder : "";
}
