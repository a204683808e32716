/* vtime -- the simulator's virtual time: an exact count of milliseconds. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SIM_VTIME_H
#define SLUICE_SIM_VTIME_H

#include "util/duration.h"

#include <stdint.h>

/*
 * Virtual time is an exact count of milliseconds since the start of the scenario. There is no
 * floating point anywhere in time arithmetic: "1.5s" is 1500, and printing 1500 gives "1.5".
 * Text goes through util/duration.h: duration_parse_ms(s, len, SIM_MS_MAX, &ms, msg) reads it,
 * duration_format_secs() prints exact seconds and duration_format() prints it for people.
 */
typedef int64_t sim_ms_t;

/* Longest virtual time: about 292 years, so that any duration also fits in nanoseconds. */
#define SIM_MS_MAX ((sim_ms_t)DURATION_MS_MAX)

#endif
