/* problems -- what is wrong with the operator's surroundings right now, said once and loudly. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_PROBLEMS_H
#define SLUICE_CTRL_PROBLEMS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A missing CRD, an RBAC rule that forbids a list, an unreachable API server or a webhook
 * certificate that is not served yet each stop sluice from doing its job while the process
 * looks healthy. Each is a problem with a key naming its cause ("crd:clusterqueues.kueue.x-k8s.io",
 * "rbac:list:jobs.batch", "api", "webhook-cert"):
 *
 *   problems_set(key)   new, or its text changed   -> one error line at once
 *                       the same, again            -> silent, counted; one line per repeat
 *                                                     interval saying how often it recurred
 *   problems_clear(key) it was set                 -> one info line "resolved: ..."
 *
 * The open problems also explain /readyz. Pure bookkeeping: the caller passes `now`.
 */

typedef struct problems_s problems_t;

/* Log sink; `level` is a ctrl_log_level_t (0 error, 1 info). */
typedef void (*problems_log_fn)(void *data, int level, const char *text);

/* An empty set logging through `log` (borrowed `data`), repeating an unchanged problem at most
 * every `repeat_ms`. NULL on out-of-memory. */
problems_t *problems_new(problems_log_fn log, void *data, uint64_t repeat_ms);

/* Free the set; NULL-safe. */
void problems_free(problems_t *p);

/* Problem `key` holds at `now_ms`, described by the formatted text. Out of memory drops the
 * bookkeeping but still logs. */
void problems_set(problems_t *p, const char *key, uint64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Problem `key` is over (nothing happens when it was not set). */
void problems_clear(problems_t *p, const char *key, uint64_t now_ms);

/* Clear every problem whose key starts with `prefix`. */
void problems_clear_prefix(problems_t *p, const char *prefix, uint64_t now_ms);

/* Is problem `key` open? */
bool problems_has(const problems_t *p, const char *key);

/* Number of open problems. */
size_t problems_count(const problems_t *p);

/* Append the open problems to `buf` (size `n`, NUL-terminated, truncated to fit), one per
 * line prefixed by `indent`, oldest first. Returns how many were written. */
size_t problems_describe(const problems_t *p, const char *indent, char *buf, size_t n);

#endif
