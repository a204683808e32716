/* duration -- Go duration text ("1h30m", "1.5s", "250ms") as exact nanoseconds or milliseconds. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_DURATION_H
#define SLUICE_DURATION_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * The syntax is Go's time.ParseDuration: an optional '+', then one or more decimal numbers, each
 * with an optional fraction and a unit (ns, us, µs, μs, ms, s, m, h), as in "0s", "1.5s", "250ms",
 * "2m", "1h30m"; a bare "0" is zero. Two rules are stricter than Go, for every caller here:
 * a negative duration is an error, and nothing is rounded -- each term must be a whole number of
 * nanoseconds and the total a whole number of the result's unit, or the text is rejected
 * ("1.0005s" is 1000500 us, not a whole millisecond). No floating point is involved.
 */

/* Longest duration in milliseconds that also fits in int64 nanoseconds: about 292 years. */
#define DURATION_MS_MAX ((int64_t)9223372036854LL)

/* Longest text duration_format() or duration_format_secs() writes, including the NUL. */
#define DURATION_STR_MAX 32

/* Parse `len` bytes of `s` into whole nanoseconds in [0, max] (max >= 0). Errors (ERR_PARSE,
 * ERR_OVERFLOW) quote the text in `msg` (may be NULL); `out` is untouched on failure. */
err_t duration_parse_ns(const char *s, size_t len, int64_t max, int64_t *out, err_msg_t *msg);

/* As duration_parse_ns(), into whole milliseconds in [0, max]; max in [0, DURATION_MS_MAX]. */
err_t duration_parse_ms(const char *s, size_t len, int64_t max, int64_t *out, err_msg_t *msg);

/* Write `ms` as seconds, exactly and as short as possible ("0", "1.5", "0.25", "90", "-0.001"),
 * into buf, which must hold DURATION_STR_MAX bytes. Returns buf. */
char *duration_format_secs(int64_t ms, char *buf);

/* Write `ms` for people in Go syntax, e.g. "0s", "1.5s", "250ms", "2m", "1h30m", "1h5.25s" (zero
 * parts left out; the text parses back to the same value), into buf, which must hold
 * DURATION_STR_MAX bytes. Returns buf. */
char *duration_format(int64_t ms, char *buf);

#endif
