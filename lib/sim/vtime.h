/* duration -- virtual-time durations: parse Go-style text ("1h30m", "250ms") and print seconds. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_DURATION_H
#define SLUICE_SIM_DURATION_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Virtual time is an exact count of milliseconds since the start of the scenario. There is no
 * floating point anywhere in time arithmetic: "1.5s" is 1500, and printing 1500 gives "1.5".
 */
typedef int64_t sim_ms_t;

/* Longest virtual time: about 292 years, so that any duration also fits in nanoseconds. */
#define SIM_MS_MAX ((sim_ms_t)9223372036854LL)

/* Longest text sim_time_format() writes, including the terminating NUL. */
#define SIM_TIME_STR_MAX 32

/* Parse `len` bytes of `s` as a duration: a sequence of decimal numbers, each with a unit (ns,
 * us, µs, ms, s, m, h), as in "0s", "1.5s", "250ms", "2m", "1h30m"; a bare "0" is zero. The total
 * must be a whole, non-negative number of milliseconds no larger than SIM_MS_MAX. Errors
 * (ERR_PARSE, ERR_OVERFLOW) quote the text in `msg`; `out` is untouched on failure. */
err_t sim_duration_parse(const char *s, size_t len, sim_ms_t *out, err_msg_t *msg);

/* Write `ms` as seconds, exactly and as short as possible ("0", "1.5", "0.25", "90", "-0.001"),
 * into buf, which must hold SIM_TIME_STR_MAX bytes. Returns buf. */
char *sim_time_format(sim_ms_t ms, char *buf);

/* Write `ms` for people, e.g. "0s", "1.5s", "2m", "1h30m", "1h5.25s" (zero parts left out;
 * the text parses back to the same value), into buf,
 * which must hold SIM_TIME_STR_MAX bytes. Returns buf. */
char *sim_duration_format(sim_ms_t ms, char *buf);

#endif
