/* logfmt -- one log line as text or as JSON with object references and reason. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_OBS_LOGFMT_H
#define SLUICE_OBS_LOGFMT_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/*
 * sluice's log messages read "<kind> <namespace>/<name>: <what happened>", e.g.
 * "workload team-a/job-train-5x2k9: Preempted: Preempted to accommodate ...". The JSON form
 * keeps the whole message in "msg" and lifts out what a log query wants, in the shape Kueue's
 * (controller-runtime's zap) JSON logs have:
 *
 *   {"ts":"2026-12-02T05:10:00.123Z","level":"info","msg":"workload ns/w: admitted to gpu",
 *    "workload":{"name":"w","namespace":"ns"},"reason":"Admitted","clusterQueue":"gpu"}
 *
 * Object reference: a message starting with a lower-case word (the kind: workload, job,
 * jobset, pytorchjob, ...), a space, "namespace/name" and ": " gives {"<kind>": {"name",
 * "namespace"}}; cluster-scoped ones are recognised for clusterqueue, localqueue,
 * resourceflavor and cohort ("clusterqueue gpu: ..."). Reason: the text after the reference
 * starting with a CamelCase word followed by ':' or " (" ("Preempted: ...",
 * "PodsReadyTimeout (...)"); "admitted to <cq>" gives reason "Admitted" and "clusterQueue".
 * Anything else is "msg" only. Strings are JSON-escaped (control characters as \u00XX).
 */

typedef enum { LOGFMT_TEXT = 0, LOGFMT_JSON } logfmt_t;

/* Parse "text" or "json". ERR_INVALID (with the accepted values in msg) otherwise. */
err_t logfmt_parse(const char *s, logfmt_t *out, err_msg_t *msg);

/* Format one line (with its trailing newline) into buf of size n, truncated to fit (a JSON line
 * stays valid JSON: the message is cut, never the structure). `unix_ms` is the wall-clock time,
 * `level` a name ("error", "info", "debug"). Returns the length written. */
size_t logfmt_line(logfmt_t f, int64_t unix_ms, const char *level, const char *text, char *buf,
                   size_t n);

#endif
