/* limits -- the HTTP servers' connection, memory and time limits as operators configure them. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_LIMITS_H
#define SLUICE_HOOK_LIMITS_H

#include "hook/server.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * One set of limits for each server `sluice run` starts (webhooks, probes, HTTPS /metrics, the
 * visibility API); each server holds its own connections and its own body budget. Written as
 * a comma-separated list of NAME=VALUE (the annotation sluice.dev/server-limits and the flag
 * --server-limits), later entries winning:
 *
 *   max-connections=N             connections open at once (1..1000000)        default 512
 *   max-connections-per-client=N  per client IP address (1..max-connections)   default 32
 *   body-budget=BYTES             request bodies buffered at once, all         default 64Mi
 *                                 connections together (a quantity, 12Mi..4Gi: one client may
 *                                 use a quarter of it, and that quarter must hold one 3 MiB
 *                                 AdmissionReview, the API server's request limit)
 *   header-timeout=DURATION       request line and headers within this         default 5s
 *   request-timeout=DURATION      a whole request within this (>= header-timeout) default 10s
 *   idle-timeout=DURATION         keep-alive connection idle this long: closed default 10s
 *   write-timeout=DURATION        pending output without progress: closed     default 5s
 *
 * Durations are Go durations of whole milliseconds, 1ms..1h.
 */

#define HOOK_LIMITS_ANNOTATION "sluice.dev/server-limits"

typedef struct hook_limits_s {
    size_t max_connections;
    size_t max_connections_per_client;
    size_t body_budget;
    uint64_t header_timeout_ms;
    uint64_t request_timeout_ms;
    uint64_t idle_timeout_ms;
    uint64_t write_timeout_ms;
} hook_limits_t;

/* The defaults (lib/hook/server.h's HOOK_SERVER_DEFAULT_*). */
void hook_limits_default(hook_limits_t *l);

/* Apply the NAME=VALUE list `text` over `l`, then check the limits against each other. On error
 * `l` is unchanged and `msg` names the entry ("idle-timeout=0s: must be at least 1ms"). */
err_t hook_limits_parse(hook_limits_t *l, const char *text, err_msg_t *msg);

/* Write the limits as a NAME=VALUE list that hook_limits_parse() reads back, into buf (`size`
 * bytes, truncated if too small). Returns buf. */
char *hook_limits_format(const hook_limits_t *l, char *buf, size_t size);

/* Copy the limits into a server configuration (the fields it has beyond them are untouched). */
void hook_limits_apply(const hook_limits_t *l, hook_server_config_t *sc);

#endif
