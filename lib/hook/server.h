/* server -- an HTTP/1.1 server (optionally TLS) on the libuv loop for webhooks, metrics, health. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_SERVER_H
#define SLUICE_HOOK_SERVER_H

#include "hook/tls.h"
#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/*
 * One server type serves the admission webhooks (TLS), /metrics and the health probes. Requests
 * are parsed by nodejs' http-parser (Debian libhttp-parser); the handler runs synchronously on
 * the loop and fills a response, so it must be quick (validation is microseconds). Connections
 * are kept alive and pipelined requests are answered in order.
 *
 * The process must ignore SIGPIPE (signal(SIGPIPE, SIG_IGN)): libuv does not, and a peer
 * that resets its connection would otherwise kill the loop.
 *
 * Limits (all enforced; a violation gets a 4xx/503 with a plain-text reason, then the connection
 * is closed): header bytes (431), body bytes (413), headers or a whole request that take too long
 * to arrive (408), malformed HTTP (400), request bodies of all connections together beyond
 * max_buffered_bytes (503: the memory a body flood can take is bounded, far below the
 * Deployment's limit). Every connection state has a timer, so no client pins a connection:
 *
 *   accepted / between requests --(header_timeout: no complete headers)--> 408, close
 *   reading a body -----------------(request_timeout since its first byte)--> 408, close
 *   idle keep-alive -----------------------------------(idle_timeout)--> close
 *   output pending, the peer not reading ------(write_timeout without progress)--> close
 *   closing with output pending ----------------(write_timeout without progress)--> close
 *
 * Connections are counted per client address: beyond max_connections_per_client, or beyond
 * max_connections in all, the client's (or the server's) longest-idle connection is closed to
 * make room -- an idle connection costs a reconnect, a refused one a failed request -- and when
 * none is idle the new connection is reset at once. An accept that fails for memory is retried
 * with backoff (10 ms doubling to 1 s); meanwhile hook_server_accepting() is false (/readyz).
 */

typedef struct hook_server_s hook_server_t;

typedef struct hook_header_s {
    const char *name;  /* lower-cased */
    const char *value; /* as received, trimmed */
} hook_header_t;

#define HOOK_MAX_HEADERS 32

/* A received request; every pointer is borrowed and valid during the handler call only. */
typedef struct hook_request_s {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* URL path without the query */
    const char *query;  /* after '?', "" when none */
    hook_header_t headers[HOOK_MAX_HEADERS];
    size_t nheaders; /* headers beyond HOOK_MAX_HEADERS are counted in the size limit only */
    const char *body;
    size_t body_len;
    const char *peer; /* "ip:port" of the client */
    /* TLS with client certificates (hook_tls_new_pem_ca): the verified certificate's subject
     * common name, else "" */
    const char *client_cn;
    void *internal_; /* the server's connection (hook_request_defer) */
} hook_request_t;

/* The handler's answer. Body memory is copied by the server after the handler returns. */
typedef struct hook_response_s {
    int status;               /* default 200 */
    const char *content_type; /* default "application/json" */
    const char *body;         /* borrowed until the handler returns; NULL = empty */
    size_t body_len;
    char *owned_body; /* alternatively: a malloc'ed body the server frees */
} hook_response_t;

/* Fills `resp` for `req`; `ud` is hook_server_config_t.ud. */
typedef void (*hook_handler_fn)(void *ud, const hook_request_t *req, hook_response_t *resp);

/*
 * Deferred answers, for a handler that must wait for something (a token review) before it can
 * answer. Called in the handler, hook_request_defer() makes the server ignore the response the
 * handler filled and wait for hook_deferred_answer(); meanwhile that connection reads and parses
 * nothing more (pipelined requests wait, answers stay in order). Bounded: if no answer has come
 * request_timeout_ms after the request began, the server answers 503 itself and closes the
 * connection (a client that went away meanwhile is noticed then too: nothing is read). NULL on
 * out-of-memory or when the request is already deferred: answer now.
 *
 *   handler -> hook_request_defer -> (connection paused) -> hook_deferred_answer -> resumed
 *                                          \--(request_timeout)--> 503, close; the late
 *                                              hook_deferred_answer() only frees
 */
typedef struct hook_deferred_s hook_deferred_t;
hook_deferred_t *hook_request_defer(const hook_request_t *req);

/* Answer a deferred request with `resp` (its body copied; owned_body freed) and free `d`. Call
 * exactly once per deferred request, also after the client went away, the timeout answered or
 * the server closed: then it only frees. */
void hook_deferred_answer(hook_deferred_t *d, const hook_response_t *resp);

/* The defaults of the limits below (a field left 0 takes its default). */
#define HOOK_SERVER_DEFAULT_MAX_HEADER_BYTES           (16u << 10)
#define HOOK_SERVER_DEFAULT_MAX_BODY_BYTES             (3u << 20)
#define HOOK_SERVER_DEFAULT_MAX_CONNECTIONS            512
#define HOOK_SERVER_DEFAULT_MAX_CONNECTIONS_PER_CLIENT 32
#define HOOK_SERVER_DEFAULT_MAX_BUFFERED_BYTES         (64u << 20)
#define HOOK_SERVER_DEFAULT_HEADER_TIMEOUT_MS          5000
#define HOOK_SERVER_DEFAULT_REQUEST_TIMEOUT_MS         10000
#define HOOK_SERVER_DEFAULT_IDLE_TIMEOUT_MS            10000
#define HOOK_SERVER_DEFAULT_WRITE_TIMEOUT_MS           5000

typedef struct hook_server_config_s {
    const char *host;                  /* listen address, e.g. "127.0.0.1" or "0.0.0.0" */
    int port;                          /* 0 = pick a free port (see hook_server_port) */
    hook_tls_t *tls;                   /* borrowed; NULL = plain HTTP */
    size_t max_header_bytes;           /* default 16 KiB */
    size_t max_body_bytes;             /* default 3 MiB (the API server's request limit) */
    size_t max_connections;            /* default 512 */
    size_t max_connections_per_client; /* per client IP address; default 32 */
    size_t max_buffered_bytes;   /* request bodies of all connections together; default 64 MiB */
    uint64_t header_timeout_ms;  /* request line + headers within this; default 5 s */
    uint64_t request_timeout_ms; /* a request must arrive whole within this; default 10 s */
    uint64_t idle_timeout_ms;    /* keep-alive idle close; default 10 s */
    uint64_t write_timeout_ms;   /* pending output must progress within this; default 5 s */
    hook_handler_fn handler;
    void *ud;
} hook_server_config_t;

/* Statistics, for tests and metrics. */
typedef struct hook_server_stats_s {
    uint64_t accepted;
    uint64_t rejected_connections; /* over max_connections or the per-client limit, none idle */
    uint64_t evicted_idle;         /* idle connections closed to make room for a new one */
    uint64_t requests;
    uint64_t errors_4xx;        /* answered by the server itself (limits, malformed, 503 busy) */
    uint64_t busy_503;          /* refused for the body byte budget */
    uint64_t timeouts;          /* connections closed or answered 408 by a timer (any state) */
    uint64_t deferred;          /* requests answered later (hook_request_defer) */
    uint64_t deferred_timeouts; /* of which: answered 503 by the server, the answer too late */
    uint64_t write_timeouts;    /* of which: output pending without progress */
    uint64_t accept_failures;   /* accepts that failed for memory (retried with backoff) */
    uint64_t tls_failures;
    size_t open_connections;
    size_t buffered_bytes;      /* request body bytes held now */
    size_t buffered_bytes_peak; /* the most ever held at once */
} hook_server_stats_t;

/* Create a listening server on `loop`. On error nothing is left open. */
err_t hook_server_start(uv_loop_t *loop, const hook_server_config_t *cfg, hook_server_t **out,
                        err_msg_t *msg);

/* The bound port (useful with port 0). */
int hook_server_port(const hook_server_t *srv);

/* False while accepting is stalled by an allocation failure (retried with backoff); NULL: true. */
bool hook_server_accepting(const hook_server_t *srv);

/* Counters so far. */
void hook_server_stats(const hook_server_t *srv, hook_server_stats_t *out);

/* Stop listening, close every connection; `on_closed` (may be NULL) runs once everything is
 * closed, after which the server memory is freed. */
void hook_server_close(hook_server_t *srv, void (*on_closed)(void *ud), void *ud);

#endif
