/* fakeapi -- an in-memory Kubernetes API server on loopback: HTTP, watches, faults, the log. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "fakeapi.h"

#include "fakeapi_int.h"
#include "util/grow.h"
#include "util/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One request, as kube_testsrv hands it over:
 *
 *   on_request -> route (path -> type, namespace, name, subresource, verb) -> log entry
 *              -> fault rules, then the fault hook -> fakeapi_fault_t
 *              -> delay_ms? park it in a fa_pending_t until its timer fires
 *              -> act: FAIL (answer, nothing applied) | LOSE (close) |
 *                      serve (fakeapi_store.c applies it) then answer, or with FAIL_APPLIED a
 *                      Status instead, or with DROP close without answering
 *
 * A WATCH becomes a fa_watch_t that owns its connection until the stream ends. Its response is
 * chunked, unlike the testsrv's one-shot replies, so that a clean end (the terminating chunk,
 * as after timeoutSeconds) and a broken connection (a FIN without it) look different to libcurl,
 * as they do against a real API server:
 *
 *   headers -> replay (rv absent/"0": ADDED for every object; rv N: the history after N;
 *              N older than the last compaction: one ERROR 410 and the end) -> live events
 *           -> end: timeoutSeconds (clean) | fakeapi_close_watches | CUT after n events |
 *                   the client went away | fakeapi_stop
 *
 * Connections can end under a parked request or a watch (the client timed out or canceled);
 * testsrv_on_end() tells us, and from then on the connection pointer is never used.
 */

#define WATCH_HEAD                                                                        \
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n" \
    "Connection: close\r\n\r\n"

typedef enum { END_CLEAN, END_CUT, END_RESET, END_PEER } end_how_t;

struct fa_watch_s {
    fakeapi_t *fa;
    testsrv_conn_t *conn; /* NULL once the stream ended */
    uv_timer_t timer;     /* timeoutSeconds */
    fa_type_t *type;      /* borrowed from fa->types */
    char *ns;             /* owned; "" for all namespaces */
    fa_sel_t sel;
    bool bookmarks;
    bool cut, reset; /* a CUT fault: end abruptly after cut_after events */
    uint32_t cut_after, sent;
    bool ended;
    fa_watch_t *prev, *next;
};

/* A request as received (all owned). */
typedef struct fa_call_s {
    char *method, *path, *query, *ctype, *body;
    size_t body_len;
} fa_call_t;

/* Where a request goes. */
typedef struct fa_route_s {
    fa_type_t *type; /* NULL when not routed */
    char ns[256], name[256], sub[64];
    const char *verb; /* "" when not routed; "discover" for GET /api/v1, /apis/GROUP/VERSION */
    char gv[320];     /* discover: "v1" or "GROUP/VERSION" */
    int err;          /* non-zero: answer this status (404, 405) instead of serving */
    char err_msg[256];
} fa_route_t;

/* A fault with its strings owned. */
typedef struct fa_fault_s {
    fakeapi_fault_t f;
    char *retry_after, *message;
} fa_fault_t;

struct fa_pending_s {
    fakeapi_t *fa;
    testsrv_conn_t *conn; /* NULL once the client left */
    uv_timer_t timer;
    unsigned seq;
    fa_call_t call;
    fa_route_t rt;
    fa_fault_t fault;
    fa_pending_t *prev, *next;
};

struct fa_rule_s {
    char *verb, *resource; /* owned, NULL: any */
    fa_fault_t fault;
    unsigned times;
    fa_rule_t *next;
};

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");

    FA_NN(d);
    return d;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    FA_NN(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void fault_copy(fa_fault_t *dst, const fakeapi_fault_t *src)
{
    dst->f = *src;
    if ((src->action == FAKEAPI_FAIL || src->action == FAKEAPI_FAIL_APPLIED) &&
        (src->status < 100 || src->status > 599))
        dst->f.status = 500; /* no status given: the most common server failure */
    dst->retry_after = src->retry_after ? xstrdup(src->retry_after) : NULL;
    dst->message = src->message ? xstrdup(src->message) : NULL;
    dst->f.retry_after = dst->retry_after;
    dst->f.message = dst->message;
}

static void fault_fini(fa_fault_t *f)
{
    free(f->retry_after);
    free(f->message);
    memset(f, 0, sizeof(*f));
}

static void call_fini(fa_call_t *c)
{
    free(c->method);
    free(c->path);
    free(c->query);
    free(c->ctype);
    free(c->body);
    memset(c, 0, sizeof(*c));
}

/* ---- URLs ------------------------------------------------------------------------------------ */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Percent-decode s[0..n) into out (at most cap-1 bytes); `plus` turns '+' into ' ' (queries). */
static void url_decode(const char *s, size_t n, bool plus, char *out, size_t cap)
{
    size_t o = 0;

    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out[o++] = plus && s[i] == '+' ? ' ' : s[i];
        }
    }
    out[o] = '\0';
}

/* The decoded value of query parameter `name` (malloc'd), or NULL when absent. */
static char *query_get(const char *query, const char *name)
{
    size_t nl = strlen(name);

    for (const char *p = query; p && *p;) {
        size_t len = strcspn(p, "&");

        if (len > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            char *v = malloc(len - nl);

            FA_NN(v);
            url_decode(p + nl + 1, len - nl - 1, true, v, len - nl);
            return v;
        }
        if (len == nl && strncmp(p, name, nl) == 0)
            return xstrdup("");
        p += len;
        if (*p == '&')
            p++;
    }
    return NULL;
}

static bool query_true(const char *query, const char *name)
{
    char *v = query_get(query, name);
    bool t = v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);

    free(v);
    return t;
}

/*
 * /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]] and /apis/GROUP/VERSION/... ("namespaces/NS" is
 * a namespace prefix only when the segment after NS is a namespaced type of that group/version;
 * otherwise it is the namespaces resource itself). A GET of /api/v1 or /apis/GROUP/VERSION is
 * API discovery (verb "discover").
 */
static void route(fakeapi_t *fa, const fa_call_t *c, fa_route_t *rt)
{
    char seg[8][256], group[256] = "", version[256];
    size_t nseg = 0, i = 0;
    const char *p = c->path;
    fa_type_t *t;

    memset(rt, 0, sizeof(*rt));
    rt->verb = "";
    rt->err = 404;
    snprintf(rt->err_msg, sizeof(rt->err_msg), "the server could not find the requested resource");
    while (*p == '/')
        p++;
    while (*p && nseg < 8) {
        size_t len = strcspn(p, "/");

        url_decode(p, len, false, seg[nseg++], sizeof(seg[0]));
        p += len;
        while (*p == '/')
            p++;
    }
    if (*p)
        return;
    if (nseg >= 2 && strcmp(seg[0], "api") == 0) {
        snprintf(version, sizeof(version), "%s", seg[1]);
        i = 2;
    } else if (nseg >= 3 && strcmp(seg[0], "apis") == 0) {
        snprintf(group, sizeof(group), "%s", seg[1]);
        snprintf(version, sizeof(version), "%s", seg[2]);
        i = 3;
    } else {
        return;
    }
    if (nseg == i && strcmp(c->method, "GET") == 0) {
        snprintf(rt->gv, sizeof(rt->gv), "%s%s%s", group, group[0] ? "/" : "", version);
        rt->verb = "discover";
        rt->err = 0;
        return;
    }
    if (nseg - i >= 3 && strcmp(seg[i], "namespaces") == 0) {
        t = fa__type_at(fa, group, version, seg[i + 2]);
        if (t != NULL && t->namespaced) {
            snprintf(rt->ns, sizeof(rt->ns), "%s", seg[i + 1]);
            i += 2;
        }
    }
    if (nseg - i < 1 || nseg - i > 3)
        return;
    t = fa__type_at(fa, group, version, seg[i]);
    if (t == NULL || (!t->namespaced && rt->ns[0]))
        return;
    if (nseg - i >= 2)
        snprintf(rt->name, sizeof(rt->name), "%s", seg[i + 1]);
    if (nseg - i == 3)
        snprintf(rt->sub, sizeof(rt->sub), "%s", seg[i + 2]);
    if (rt->sub[0] && (strcmp(rt->sub, "status") != 0 || !t->status_sub))
        return;
    if (t->namespaced && rt->name[0] && !rt->ns[0])
        return;
    rt->type = t;
    rt->err = 0;
    if (strcmp(c->method, "GET") == 0)
        rt->verb = rt->name[0] ? "get" : query_true(c->query, "watch") ? "watch" : "list";
    else if (strcmp(c->method, "POST") == 0 && !rt->name[0] && (rt->ns[0] || !t->namespaced))
        rt->verb = "create";
    else if (strcmp(c->method, "PUT") == 0 && rt->name[0])
        rt->verb = "update";
    else if (strcmp(c->method, "PATCH") == 0 && rt->name[0])
        rt->verb = "patch";
    else if (strcmp(c->method, "DELETE") == 0 && rt->name[0] && !rt->sub[0])
        rt->verb = "delete";
    if (rt->verb[0] == '\0') {
        rt->err = 405;
        snprintf(rt->err_msg, sizeof(rt->err_msg),
                 "the server does not allow this method on the requested resource");
    }
}

/* ---- the log --------------------------------------------------------------------------------- */

static void resource_of(const fa_route_t *rt, char *buf, size_t n)
{
    if (rt->type == NULL)
        buf[0] = '\0';
    else if (rt->sub[0])
        snprintf(buf, n, "%s/%s", rt->type->plural, rt->sub);
    else
        snprintf(buf, n, "%s", rt->type->plural);
}

static void log_add(fakeapi_t *fa, unsigned seq, const fa_call_t *c, const fa_route_t *rt)
{
    fakeapi_logent_t *e;
    char res[512];

    FA_OK(util_grow((void **)&fa->log, &fa->log_cap, fa->nlog + 1, sizeof(*fa->log)));
    e = &fa->log[fa->nlog++];
    memset(e, 0, sizeof(*e));
    e->seq = seq;
    e->method = xstrdup(c->method);
    e->path = xstrdup(c->path);
    e->query = xstrdup(c->query);
    e->verb = rt->verb;
    resource_of(rt, res, sizeof(res));
    e->resource = xstrdup(res);
    e->fault = "";
}

static fakeapi_logent_t *log_find(fakeapi_t *fa, unsigned seq)
{
    for (size_t i = fa->nlog; i > 0; i--) {
        if (fa->log[i - 1].seq == seq)
            return &fa->log[i - 1];
    }
    return NULL; /* cleared meanwhile */
}

static void log_status(fakeapi_t *fa, unsigned seq, int status)
{
    fakeapi_logent_t *e = log_find(fa, seq);

    if (e != NULL)
        e->status = status;
}

size_t fakeapi_log_len(const fakeapi_t *fa)
{
    return fa->nlog;
}

const fakeapi_logent_t *fakeapi_log_at(const fakeapi_t *fa, size_t i)
{
    return i < fa->nlog ? &fa->log[i] : NULL;
}

size_t fakeapi_count(const fakeapi_t *fa, const char *verb, const char *resource)
{
    size_t n = 0;

    for (size_t i = 0; i < fa->nlog; i++) {
        const fakeapi_logent_t *e = &fa->log[i];

        if ((verb == NULL || strcmp(verb, e->verb) == 0) &&
            (resource == NULL || strcmp(resource, e->resource) == 0))
            n++;
    }
    return n;
}

char *fakeapi_log_text(const fakeapi_t *fa)
{
    size_t cap = 1, len = 0;
    char *s;

    for (size_t i = 0; i < fa->nlog; i++)
        cap += strlen(fa->log[i].path) + strlen(fa->log[i].query) + 64;
    s = malloc(cap);
    FA_NN(s);
    s[0] = '\0';
    for (size_t i = 0; i < fa->nlog; i++) {
        const fakeapi_logent_t *e = &fa->log[i];

        len += (size_t)snprintf(s + len, cap - len, "%s %s%s%s -> %d%s%s\n", e->method, e->path,
                                e->query[0] ? "?" : "", e->query, e->status, e->fault[0] ? " " : "",
                                e->fault);
    }
    return s;
}

void fakeapi_log_clear(fakeapi_t *fa)
{
    for (size_t i = 0; i < fa->nlog; i++) {
        free(fa->log[i].method);
        free(fa->log[i].path);
        free(fa->log[i].query);
        free(fa->log[i].resource);
    }
    fa->nlog = 0;
}

/* ---- answers --------------------------------------------------------------------------------- */

static void reply(testsrv_conn_t *conn, fa_answer_t *a, const char *retry_after)
{
    char extra[128] = "", *text;

    if (conn == NULL)
        return; /* the client left; the answer goes nowhere */
    if (retry_after != NULL)
        snprintf(extra, sizeof(extra), "Retry-After: %s\r\n", retry_after);
    text = json_dumps(a->body, JSON_COMPACT);
    FA_NN(text);
    testsrv_reply(conn, a->code, extra, text);
    free(text);
}

static void hang_up(testsrv_conn_t *conn, bool reset)
{
    if (conn == NULL)
        return;
    if (reset)
        testsrv_reset(conn);
    else
        testsrv_end(conn);
}

/* The Status an injected failure answers with, worded as the API server words it. */
static void fault_answer(const fa_route_t *rt, const fakeapi_fault_t *f, fa_answer_t *a)
{
    const char *name = rt->name[0] ? rt->name : "";
    const char *what = rt->type ? rt->type->qualified : "resource";

    if (f->message != NULL)
        fa__status(a, f->status, NULL, "%s", f->message);
    else if (f->status == 409)
        fa__status(a, 409, NULL,
                   "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                   "please apply your changes to the latest version and try again",
                   what, name);
    else if (f->status == 403)
        fa__status(a, 403, NULL,
                   "%s \"%s\" is forbidden: User \"system:serviceaccount:kueue-system:sluice\" "
                   "cannot %s resource \"%s\"",
                   what, name, rt->verb[0] ? rt->verb : "access", what);
    else if (f->status == 429)
        fa__status(a, 429, NULL, "Too many requests, please try again later.");
    else if (f->status == 503)
        fa__status(a, 503, NULL, "the server is currently unable to handle the request");
    else if (f->status == 504)
        fa__status(a, 504, NULL,
                   "Timeout: request did not complete within requested timeout - context "
                   "deadline exceeded");
    else if (f->status == 500)
        fa__status(a, 500, NULL, "Internal error occurred: injected fault");
    else
        fa__status(a, f->status, NULL, "injected fault (HTTP %d)", f->status);
    if (rt->type != NULL && f->status != 429 && f->status != 503 && f->status != 504)
        fa__status_details(a, rt->type, name);
}

/* The APIResourceList of the types registered in rt->gv (404 when none), as the API server
 * answers discovery: each type with its scope and kind, its status subresource after it. */
static void discover(fakeapi_t *fa, const fa_route_t *rt, fa_answer_t *a)
{
    json_t *list = json_array(), *r;
    char sub[512];

    FA_NN(list);
    for (size_t i = 0; i < fa->ntypes; i++) {
        const fa_type_t *t = fa->types[i];

        if (strcmp(t->api_version, rt->gv) != 0)
            continue;
        r = json_pack("{s:s,s:s,s:b,s:s,s:[s,s,s,s,s,s,s]}", "name", t->plural, "singularName", "",
                      "namespaced", t->namespaced, "kind", t->kind, "verbs", "create", "delete",
                      "get", "list", "patch", "update", "watch");
        FA_NN(r);
        ck_assert_int_eq(json_array_append_new(list, r), 0);
        if (t->status_sub) {
            snprintf(sub, sizeof(sub), "%s/status", t->plural);
            r = json_pack("{s:s,s:s,s:b,s:s,s:[s,s,s]}", "name", sub, "singularName", "",
                          "namespaced", t->namespaced, "kind", t->kind, "verbs", "get", "patch",
                          "update");
            FA_NN(r);
            ck_assert_int_eq(json_array_append_new(list, r), 0);
        }
    }
    if (json_array_size(list) == 0) {
        json_decref(list);
        fa__status(a, 404, NULL, "the server could not find the requested resource");
        return;
    }
    a->code = 200;
    a->body = json_pack("{s:s,s:s,s:s,s:o}", "kind", "APIResourceList", "apiVersion", "v1",
                        "groupVersion", rt->gv, "resources", list);
    FA_NN(a->body);
}

/* Apply a routed, non-watch request to the store. */
static void serve(fakeapi_t *fa, const fa_call_t *c, const fa_route_t *rt, fa_answer_t *a)
{
    bool status = rt->sub[0] != '\0';
    const char *v = rt->verb;
    json_t *body = NULL;
    json_error_t jerr;

    if (strcmp(v, "create") == 0 || strcmp(v, "update") == 0 || strcmp(v, "patch") == 0 ||
        (strcmp(v, "delete") == 0 && c->body_len > 0)) {
        if (strcmp(v, "patch") == 0 && strncmp(c->ctype, "application/merge-patch+json", 28) != 0) {
            fa__status(a, 415, NULL,
                       "the body of the request was in an unknown format - accepted media types "
                       "include: application/merge-patch+json");
            return;
        }
        body = json_loadb(c->body, c->body_len, 0, &jerr);
        if (body == NULL) {
            fa__status(a, 400, NULL, "the body of the request could not be decoded: %s", jerr.text);
            return;
        }
    }
    if (strcmp(v, "get") == 0) {
        fa__get(fa, rt->type, rt->ns, rt->name, a);
    } else if (strcmp(v, "list") == 0) {
        char *label = query_get(c->query, "labelSelector");
        char *field = query_get(c->query, "fieldSelector");
        char *cont = query_get(c->query, "continue");
        char *limit = query_get(c->query, "limit");
        char err[256];
        fa_sel_t sel;

        if (!fa__sel_parse(label, field, strcmp(rt->type->plural, "pods") == 0, &sel, err,
                           sizeof(err)))
            fa__status(a, 400, NULL, "%s", err);
        else
            fa__list(fa, rt->type, rt->ns, &sel, limit ? (uint32_t)strtoul(limit, NULL, 10) : 0,
                     cont, a);
        fa__sel_fini(&sel);
        free(label);
        free(field);
        free(cont);
        free(limit);
    } else if (strcmp(v, "create") == 0) {
        fa__create(fa, rt->type, rt->ns, body, a);
    } else if (strcmp(v, "update") == 0) {
        fa__update(fa, rt->type, rt->ns, rt->name, status, body, a);
    } else if (strcmp(v, "patch") == 0) {
        fa__patch(fa, rt->type, rt->ns, rt->name, status, body, a);
    } else {
        fa__delete(fa, rt->type, rt->ns, rt->name, body, a);
    }
    json_decref(body);
}

/* ---- watches --------------------------------------------------------------------------------- */

static void on_watch_timer_closed(uv_handle_t *h)
{
    free(container_of((uv_timer_t *)h, fa_watch_t, timer));
}

static void watch_end(fa_watch_t *w, end_how_t how)
{
    testsrv_conn_t *conn = w->conn;

    if (w->ended)
        return;
    w->ended = true;
    if (w->prev)
        w->prev->next = w->next;
    else
        w->fa->watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    w->conn = NULL;
    if (conn != NULL && how != END_PEER) {
        testsrv_on_end(conn, NULL, NULL);
        if (how == END_CLEAN) {
            testsrv_send(conn, "0\r\n\r\n", 5); /* the last chunk: a complete response */
            testsrv_end(conn);
        } else {
            hang_up(conn, how == END_RESET);
        }
    }
    fa__sel_fini(&w->sel);
    free(w->ns);
    uv_timer_stop(&w->timer);
    uv_close((uv_handle_t *)&w->timer, on_watch_timer_closed);
}

static void on_watch_conn_end(testsrv_conn_t *conn, void *data)
{
    (void)conn;
    watch_end(data, END_PEER);
}

static void on_watch_timeout(uv_timer_t *t)
{
    watch_end(container_of(t, fa_watch_t, timer), END_CLEAN);
}

/* Send one event line as a chunk; a CUT watch ends once it has sent its share. */
static void watch_send(fa_watch_t *w, const char *type, json_t *obj)
{
    json_t *ev;
    char *line, head[32];
    int hn;

    if (w->ended)
        return;
    ev = json_pack("{s:s, s:O}", "type", type, "object", obj);
    FA_NN(ev);
    line = json_dumps(ev, JSON_COMPACT);
    FA_NN(line);
    json_decref(ev);
    hn = snprintf(head, sizeof(head), "%zx\r\n", strlen(line) + 1);
    testsrv_send(w->conn, head, (size_t)hn);
    testsrv_send(w->conn, line, strlen(line));
    testsrv_send(w->conn, "\n\r\n", 3);
    free(line);
    w->sent++;
    if (w->cut && w->sent >= w->cut_after)
        watch_end(w, w->reset ? END_RESET : END_CUT);
}

/*
 * What watcher `w` sees of history event `e`. With a selector, an object that starts matching
 * arrives as ADDED and one that stops matching leaves as DELETED, as the watch cache filters.
 */
static void watch_offer(fa_watch_t *w, const fa_event_t *e)
{
    bool now, was;

    if (w->ended || e->type != w->type)
        return;
    if (w->ns[0] && strcmp(fa__obj_ns(e->obj), w->ns) != 0)
        return;
    now = fa__sel_match(&w->sel, e->obj);
    switch (e->etype) {
    case FA_ADDED:
        if (now)
            watch_send(w, "ADDED", e->obj);
        break;
    case FA_DELETED:
        if (now)
            watch_send(w, "DELETED", e->obj);
        break;
    case FA_MODIFIED:
        was = fa__sel_match(&w->sel, e->prev);
        if (was && now)
            watch_send(w, "MODIFIED", e->obj);
        else if (now)
            watch_send(w, "ADDED", e->obj);
        else if (was)
            watch_send(w, "DELETED", e->obj);
        break;
    }
}

/* Is `e` about the object fakeapi_hold_object() holds? */
static bool held(const fakeapi_t *fa, const fa_event_t *e)
{
    json_t *md = json_object_get(e->obj, "metadata");
    char key[512];

    if (fa->hold_type == NULL || e->type != fa->hold_type)
        return false;
    fa__key(e->type, fa__obj_ns(e->obj), json_string_value(json_object_get(md, "name")), key,
            sizeof(key));
    return strcmp(key, fa->hold_key) == 0;
}

void fa__fanout(fakeapi_t *fa, const fa_event_t *e)
{
    fa_watch_t *w, *next;

    if (held(fa, e)) {
        FA_OK(util_grow((void **)&fa->held, &fa->held_cap, fa->nheld + 1, sizeof(*fa->held)));
        fa->held[fa->nheld++] = (size_t)(e - fa->hist);
        return;
    }
    for (w = fa->watches; w != NULL; w = next) {
        next = w->next;
        watch_offer(w, e);
    }
}

static int cmp_key(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* No resourceVersion (or "0"): the current state as ADDED events, in key order. */
static void watch_replay_state(fa_watch_t *w)
{
    json_t *objs = w->type->objs, *obj;
    const char *key, **keys = calloc(json_object_size(objs) + 1, sizeof(*keys));
    size_t n = 0;

    FA_NN(keys);
    json_object_foreach(objs, key, obj)
    {
        keys[n++] = key;
    }
    qsort(keys, n, sizeof(*keys), cmp_key);
    for (size_t i = 0; i < n && !w->ended; i++) {
        obj = json_object_get(objs, keys[i]);
        if ((!w->ns[0] || strcmp(fa__obj_ns(obj), w->ns) == 0) && fa__sel_match(&w->sel, obj))
            watch_send(w, "ADDED", obj);
    }
    free(keys);
}

static void watch_start(fakeapi_t *fa, testsrv_conn_t *conn, const fa_call_t *c,
                        const fa_route_t *rt, const fakeapi_fault_t *f, unsigned seq)
{
    char *label = query_get(c->query, "labelSelector");
    char *field = query_get(c->query, "fieldSelector");
    char *rv = query_get(c->query, "resourceVersion");
    char *timeout = query_get(c->query, "timeoutSeconds");
    char err[256], *end = NULL;
    uint64_t from = 0;
    bool from_state = rv == NULL || rv[0] == '\0' || strcmp(rv, "0") == 0;
    fa_answer_t a = {0, NULL};
    fa_watch_t *w;
    fa_sel_t sel;

    if (!fa__sel_parse(label, field, strcmp(rt->type->plural, "pods") == 0, &sel, err,
                       sizeof(err))) {
        fa__status(&a, 400, NULL, "%s", err);
    } else if (!from_state) {
        from = strtoull(rv, &end, 10);
        if (end == rv || *end != '\0')
            fa__status(&a, 400, NULL, "invalid resource version: %s", rv);
    }
    if (a.body != NULL) {
        fa__sel_fini(&sel);
        reply(conn, &a, NULL);
        log_status(fa, seq, a.code);
        json_decref(a.body);
        goto out;
    }
    w = calloc(1, sizeof(*w));
    FA_NN(w);
    w->fa = fa;
    w->conn = conn;
    w->type = rt->type;
    w->ns = xstrdup(rt->ns);
    w->sel = sel;
    w->bookmarks = query_true(c->query, "allowWatchBookmarks");
    w->cut = f->action == FAKEAPI_CUT;
    w->reset = f->reset;
    w->cut_after = f->cut_after;
    ck_assert_int_eq(uv_timer_init(fa->loop, &w->timer), 0);
    w->next = fa->watches;
    if (fa->watches)
        fa->watches->prev = w;
    fa->watches = w;
    testsrv_on_end(conn, on_watch_conn_end, w);
    testsrv_send(conn, WATCH_HEAD, sizeof(WATCH_HEAD) - 1);
    log_status(fa, seq, 200);
    if (timeout != NULL && strtoul(timeout, NULL, 10) > 0)
        uv_timer_start(&w->timer, on_watch_timeout, strtoul(timeout, NULL, 10) * 1000u, 0);
    if (w->cut && w->cut_after == 0) {
        watch_end(w, w->reset ? END_RESET : END_CUT);
    } else if (!from_state && from < fa->compacted) {
        /* What the watch cache answers for a version it no longer has: 200, then one ERROR
         * event with a 410 Status, then the end of the stream. */
        fa__status(&a, 410, "Expired", "too old resource version: %" PRIu64 " (%" PRIu64 ")", from,
                   fa->compacted);
        watch_send(w, "ERROR", a.body);
        json_decref(a.body);
        watch_end(w, END_CLEAN);
    } else if (from_state) {
        watch_replay_state(w);
    } else {
        for (size_t i = 0; i < fa->nhist && !w->ended; i++) {
            if (fa->hist[i].rv > from)
                watch_offer(w, &fa->hist[i]);
        }
    }
out:
    free(label);
    free(field);
    free(rv);
    free(timeout);
}

void fakeapi_bookmark(fakeapi_t *fa)
{
    fa_watch_t *w, *next;
    char rv[32];

    snprintf(rv, sizeof(rv), "%" PRIu64, fa->rv);
    for (w = fa->watches; w != NULL; w = next) {
        json_t *obj;

        next = w->next;
        if (!w->bookmarks)
            continue;
        obj = json_pack("{s:s, s:s, s:{s:s}}", "kind", w->type->kind, "apiVersion",
                        w->type->api_version, "metadata", "resourceVersion", rv);
        FA_NN(obj);
        watch_send(w, "BOOKMARK", obj);
        json_decref(obj);
    }
}

void fakeapi_hold_object(fakeapi_t *fa, const char *resource, const char *ns, const char *name)
{
    fa_type_t *t = fa__type_named(fa, resource);

    ck_assert_msg(t != NULL, "fakeapi_hold_object: no resource %s", resource);
    ck_assert_msg(fa->hold_type == NULL, "fakeapi_hold_object: one object at a time");
    fa->hold_type = t;
    fa__key(t, ns, name, fa->hold_key, sizeof(fa->hold_key));
}

size_t fakeapi_release_object(fakeapi_t *fa)
{
    size_t n = fa->nheld;

    fa->hold_type = NULL;
    fa->nheld = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(fa->held[i] < fa->nhist, "fakeapi: held events compacted away");
        fa__fanout(fa, &fa->hist[fa->held[i]]);
    }
    return n;
}

size_t fakeapi_watch_count(const fakeapi_t *fa, const char *resource)
{
    fa_type_t *t = fa__type_named(fa, resource);
    size_t n = 0;

    for (fa_watch_t *w = fa->watches; w != NULL; w = w->next)
        n += resource == NULL || w->type == t;
    return n;
}

size_t fakeapi_close_watches(fakeapi_t *fa, const char *resource, bool abrupt)
{
    fa_type_t *t = fa__type_named(fa, resource);
    fa_watch_t *w, *next;
    size_t n = 0;

    for (w = fa->watches; w != NULL; w = next) {
        next = w->next;
        if (resource == NULL || w->type == t) {
            watch_end(w, abrupt ? END_CUT : END_CLEAN);
            n++;
        }
    }
    return n;
}

/* ---- acting on a request --------------------------------------------------------------------- */

static void act(fakeapi_t *fa, testsrv_conn_t *conn, const fa_call_t *c, const fa_route_t *rt,
                const fakeapi_fault_t *f, unsigned seq)
{
    fa_answer_t a = {0, NULL};

    if (f->action == FAKEAPI_LOSE) {
        hang_up(conn, f->reset);
        return;
    }
    if (f->action == FAKEAPI_FAIL) {
        fault_answer(rt, f, &a);
        goto answer;
    }
    if (rt->err != 0) {
        fa__status(&a, rt->err, NULL, "%s", rt->err_msg);
    } else if (strcmp(rt->verb, "discover") == 0) {
        discover(fa, rt, &a);
    } else if (strcmp(rt->verb, "watch") == 0) {
        if (f->action == FAKEAPI_DROP)
            hang_up(conn, f->reset);
        else if (f->action == FAKEAPI_FAIL_APPLIED)
            fault_answer(rt, f, &a);
        else if (conn != NULL)
            watch_start(fa, conn, c, rt, f, seq);
        if (a.body == NULL)
            return;
        goto answer;
    } else {
        serve(fa, c, rt, &a);
    }
    if (f->action == FAKEAPI_DROP) {
        hang_up(conn, f->reset);
        json_decref(a.body);
        return;
    }
    if (f->action == FAKEAPI_FAIL_APPLIED) {
        json_decref(a.body);
        fault_answer(rt, f, &a);
    }
answer:
    reply(conn, &a,
          f->action == FAKEAPI_FAIL || f->action == FAKEAPI_FAIL_APPLIED ? f->retry_after : NULL);
    if (conn != NULL)
        log_status(fa, seq, a.code);
    json_decref(a.body);
}

static void on_pending_closed(uv_handle_t *h)
{
    fa_pending_t *p = container_of((uv_timer_t *)h, fa_pending_t, timer);

    call_fini(&p->call);
    fault_fini(&p->fault);
    free(p);
}

static void pending_unlink(fa_pending_t *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        p->fa->pending = p->next;
    if (p->next)
        p->next->prev = p->prev;
    if (p->conn != NULL)
        testsrv_on_end(p->conn, NULL, NULL);
}

static void on_pending_conn_end(testsrv_conn_t *conn, void *data)
{
    (void)conn;
    ((fa_pending_t *)data)->conn = NULL; /* the request still takes effect when its time comes */
}

static void on_pending_due(uv_timer_t *t)
{
    fa_pending_t *p = container_of(t, fa_pending_t, timer);

    pending_unlink(p);
    act(p->fa, p->conn, &p->call, &p->rt, &p->fault.f, p->seq);
    uv_close((uv_handle_t *)&p->timer, on_pending_closed);
}

/* Rules first (in order), then the hook. */
static void decide(fakeapi_t *fa, const fakeapi_req_t *r, fa_fault_t *out)
{
    fakeapi_fault_t f;
    fa_rule_t **pp;

    memset(out, 0, sizeof(*out));
    for (pp = &fa->rules; *pp != NULL; pp = &(*pp)->next) {
        fa_rule_t *rule = *pp;
        char res[512];

        snprintf(res, sizeof(res), "%s%s%s", r->resource, r->subresource[0] ? "/" : "",
                 r->subresource);
        if ((rule->verb != NULL && strcmp(rule->verb, r->verb) != 0) ||
            (rule->resource != NULL && strcmp(rule->resource, res) != 0))
            continue;
        fault_copy(out, &rule->fault.f);
        if (--rule->times == 0) {
            *pp = rule->next;
            if (fa->rules_tail == rule) {
                fa->rules_tail = NULL;
                for (fa_rule_t *x = fa->rules; x != NULL; x = x->next)
                    fa->rules_tail = x;
            }
            free(rule->verb);
            free(rule->resource);
            fault_fini(&rule->fault);
            free(rule);
        }
        return;
    }
    if (fa->fault_fn != NULL) {
        memset(&f, 0, sizeof(f));
        fa->fault_fn(fa, r, &f, fa->fault_data);
        fault_copy(out, &f);
    }
}

static const char *fault_name(fakeapi_action_t a)
{
    static const char *const names[] = {"", "fail", "fail-applied", "drop", "lose", "cut"};

    return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

static void on_request(testsrv_t *srv, testsrv_conn_t *conn, const testsrv_req_t *req)
{
    fakeapi_t *fa = container_of(srv, fakeapi_t, srv);
    const char *q = strchr(req->target, '?');
    fakeapi_logent_t *e;
    fakeapi_req_t r;
    fa_call_t c;
    fa_route_t rt;
    fa_fault_t fault;
    char ctype[128] = "";
    unsigned seq = ++fa->seq;

    c.method = xstrdup(req->method);
    c.path = q ? xstrndup(req->target, (size_t)(q - req->target)) : xstrdup(req->target);
    c.query = xstrdup(q ? q + 1 : "");
    testsrv_header(req, "Content-Type", ctype, sizeof(ctype));
    c.ctype = xstrdup(ctype);
    c.body = xstrndup(req->body ? req->body : "", req->body_len);
    c.body_len = req->body_len;
    route(fa, &c, &rt);
    log_add(fa, seq, &c, &rt);
    memset(&r, 0, sizeof(r));
    r.seq = seq;
    r.method = c.method;
    r.path = c.path;
    r.query = c.query;
    r.verb = rt.verb;
    r.resource = rt.type ? rt.type->plural : "";
    r.subresource = rt.sub;
    r.ns = rt.ns;
    r.name = rt.name;
    r.body = c.body;
    r.body_len = c.body_len;
    decide(fa, &r, &fault);
    e = log_find(fa, seq);
    if (e != NULL) {
        e->fault = fault_name(fault.f.action);
        e->delay_ms = fault.f.delay_ms;
    }
    if (fault.f.delay_ms > 0) {
        fa_pending_t *p = calloc(1, sizeof(*p));

        FA_NN(p);
        p->fa = fa;
        p->conn = conn;
        p->seq = seq;
        p->call = c;
        p->rt = rt;
        p->fault = fault;
        p->next = fa->pending;
        if (fa->pending)
            fa->pending->prev = p;
        fa->pending = p;
        testsrv_on_end(conn, on_pending_conn_end, p);
        ck_assert_int_eq(uv_timer_init(fa->loop, &p->timer), 0);
        uv_timer_start(&p->timer, on_pending_due, fault.f.delay_ms, 0);
        return;
    }
    act(fa, conn, &c, &rt, &fault.f, seq);
    call_fini(&c);
    fault_fini(&fault);
}

/* ---- faults ---------------------------------------------------------------------------------- */

void fakeapi_set_fault(fakeapi_t *fa, fakeapi_fault_fn fn, void *data)
{
    fa->fault_fn = fn;
    fa->fault_data = data;
}

void fakeapi_fault_next(fakeapi_t *fa, const char *verb, const char *resource,
                        const fakeapi_fault_t *fault, unsigned times)
{
    fa_rule_t *rule;

    if (times == 0)
        return;
    rule = calloc(1, sizeof(*rule));
    FA_NN(rule);
    rule->verb = verb ? xstrdup(verb) : NULL;
    rule->resource = resource ? xstrdup(resource) : NULL;
    fault_copy(&rule->fault, fault);
    rule->times = times;
    if (fa->rules_tail)
        fa->rules_tail->next = rule;
    else
        fa->rules = rule;
    fa->rules_tail = rule;
}

/* ---- lifecycle ------------------------------------------------------------------------------- */

static void on_stopped(testsrv_t *srv)
{
    fakeapi_t *fa = container_of(srv, fakeapi_t, srv);

    while (fa->rules != NULL) {
        fa_rule_t *r = fa->rules;

        fa->rules = r->next;
        free(r->verb);
        free(r->resource);
        fault_fini(&r->fault);
        free(r);
    }
    fakeapi_log_clear(fa);
    free(fa->log);
    fa__store_fini(fa);
    free(fa);
}

err_t fakeapi_start(uv_loop_t *loop, fakeapi_t **out)
{
    fakeapi_t *fa = calloc(1, sizeof(*fa));

    if (fa == NULL)
        return ERR_NOMEM;
    fa->loop = loop;
    fa->rv = 1;
    fa->rng = 0x5eed5eed;
    testsrv_start(&fa->srv, loop, on_request, fa);
    fa->srv.on_stopped = on_stopped;
    snprintf(fa->url, sizeof(fa->url), "http://127.0.0.1:%d", fa->srv.port);
    *out = fa;
    return ERR_OK;
}

const char *fakeapi_url(const fakeapi_t *fa)
{
    return fa->url;
}

void fakeapi_set_now(fakeapi_t *fa, time_t now)
{
    fa->now = now;
}

void fakeapi_stop(fakeapi_t *fa)
{
    if (fa == NULL || fa->stopping)
        return;
    fa->stopping = true;
    fa->fault_fn = NULL;
    while (fa->pending != NULL) {
        fa_pending_t *p = fa->pending;

        pending_unlink(p);
        uv_timer_stop(&p->timer);
        uv_close((uv_handle_t *)&p->timer, on_pending_closed);
    }
    while (fa->watches != NULL)
        watch_end(fa->watches, END_CUT);
    testsrv_stop(&fa->srv); /* on_stopped frees `fa` once the listener is closed */
}
