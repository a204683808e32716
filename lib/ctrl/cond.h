/* cond -- Kubernetes status conditions in JSON, with apimeta.SetStatusCondition's semantics. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_COND_H
#define SLUICE_CTRL_COND_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Kueue truncates condition messages to 32 KiB and event messages to 1 KiB. */
#define COND_MESSAGE_MAX       32768
#define COND_EVENT_MESSAGE_MAX 1024

/* RFC 3339 UTC text ("2026-11-29T18:00:00Z") of `epoch_s` into `buf` (at least 32 bytes). */
char *cond_time_str(int64_t epoch_s, char *buf, size_t size);

/* The condition of `type` in the array `conds` (borrowed), NULL when absent or not an array. */
json_t *cond_find(const json_t *conds, const char *type);

/* Is condition `type` present with status "True"? */
bool cond_is_true(const json_t *conds, const char *type);

/*
 * Set condition `type` in the JSON array `conds` as apimeta.SetStatusCondition does: a new
 * condition gets lastTransitionTime = now; an existing one changes lastTransitionTime only when
 * its status changes, and has reason, message and observedGeneration overwritten in place.
 * `message` is cut to COND_MESSAGE_MAX bytes (on a UTF-8 boundary); `generation` < 0 leaves
 * observedGeneration out. *changed (may be NULL) says whether anything changed. ERR_INVALID when
 * `conds` is not an array, ERR_NOMEM on out-of-memory (the array is then unchanged).
 */
err_t cond_set(json_t *conds, const char *type, const char *status, const char *reason,
               const char *message, int64_t generation, int64_t now_s, bool *changed);

/* Remove condition `type` from `conds`; true when it was there. */
bool cond_remove(json_t *conds, const char *type);

/* Do `a` and `b` say the same but for their numbers ("requested 8, available 4" and
 * "requested 8, available 2")? A message whose numbers moved is not news worth a write. */
bool cond_same_but_numbers(const char *a, const char *b);

/* Length of `s` cut to at most `max` bytes without splitting a UTF-8 sequence. */
size_t cond_utf8_cut(const char *s, size_t max);

#endif
