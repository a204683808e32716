/* chainlog -- an append-only JSON-lines file chained by hash: the audit and accounting sink. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_CHAINLOG_H
#define SLUICE_UTIL_CHAINLOG_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * One JSON object per line, each chained to the one before it:
 *
 *   {"seq":7,"prev":"<sha256 hex of line 6, without its newline>", ...the record's fields...}
 *
 * seq counts from 1 over the whole history (across rotations and restarts: opening a file
 * resumes after its last line, or after PATH.1's when PATH is empty). The first record ever has
 * prev = 64 zeros. An edited, removed, reordered or inserted line breaks the link of the line
 * after it (or the seq sequence), which chainlog_verify() finds; only removing lines at the very
 * end is not visible in the file itself. Records the sink writes for itself have a "type":
 *   "rotated"   {dropped, firstSeq, lastSeq}: rotation deleted the oldest file (whose records
 *               had that seq range); the first record of the new file
 *   "recovered" {discardedBytes}: a torn last line (crash mid-write) was cut off at open
 * Both carry "time" (now, UTC, RFC 3339 with milliseconds).
 *
 * Durability: each record is written with one write(2) and, unless opts.no_sync, fdatasync(2)'d
 * before chainlog_append() returns. After a rotation the directory is fsync'd too.
 *
 * Users: the audit trail (lib/hook/auditlog.c: "what" = "audit log") and the accounting log
 * (lib/acct: "accounting log", written by the operator and by `sluice sim --accounting`).
 */
typedef struct chainlog_s chainlog_t;

typedef struct chainlog_opts_s {
    const char *what;   /* how messages name the file: "audit log" (NULL: "log") */
    uint64_t max_bytes; /* rotate past this size into PATH.1 .. PATH.keep (0 = never) */
    unsigned keep;      /* rotated files kept */
    bool truncate;      /* start a new history in PATH (seq 1) instead of resuming it */
    bool no_sync;       /* no fdatasync per record: the file is synced once, at close */
} chainlog_opts_t;

/* Open (create or append) the log at `path` and resume its chain. ERR_IO names the file;
 * ERR_PARSE when the last line is too long to be read (the file is left as it is). */
err_t chainlog_open(const char *path, const chainlog_opts_t *opts, chainlog_t **out,
                    err_msg_t *msg);

/* Append `rec` (a JSON object, not consumed; "seq" and "prev" are put in front, replacing any
 * of its own), rotating first when it would not fit. ERR_IO when the file cannot be written or
 * synced (a record that reached the file still moves the chain on); ERR_NOMEM. */
err_t chainlog_append(chainlog_t *log, json_t *rec, err_msg_t *msg);

/* The last seq written (0 when none). */
uint64_t chainlog_seq(const chainlog_t *log);

/* The path given to chainlog_open() (borrowed). */
const char *chainlog_path(const chainlog_t *log);

/* Is the file open (false only after a rotation failed half-way: the next append reopens it)? */
bool chainlog_is_open(const chainlog_t *log);

/* Sync (with opts.no_sync) and close the file; NULL-safe. ERR_IO when the final sync failed. */
err_t chainlog_close(chainlog_t *log, err_msg_t *msg);

/* Result of chainlog_verify(). */
typedef struct chainlog_verify_s {
    uint64_t records;   /* lines checked */
    uint64_t first_seq; /* seq of the first record read */
    uint64_t last_seq;
    bool anchored;   /* the first record is the first ever (seq 1, prev zeros) */
    bool ok;         /* no broken link */
    char where[512]; /* the first broken link: "FILE:LINE (seq N): what" */
} chainlog_verify_t;

/* Check the chain over `files` in order (oldest first: PATH.5 ... PATH.1 PATH; "-" is standard
 * input); `kind` names the
 * records in messages ("audit": "not a chained audit record"). Stops at the first broken link
 * (out->where, out->ok false). ERR_IO when a file cannot be read; a broken chain is ERR_OK with
 * out->ok false. */
err_t chainlog_verify(const char *const *files, size_t nfiles, const char *kind,
                      chainlog_verify_t *out, err_msg_t *msg);

/* `ms` (Unix milliseconds) as "YYYY-MM-DDTHH:MM:SS.mmmZ" into buf (at least 32 bytes). */
void chainlog_format_time(int64_t ms, char *buf, size_t cap);

/* Unix milliseconds of an RFC 3339 UTC time "YYYY-MM-DDTHH:MM:SS[.fraction]Z" (fraction cut
 * at milliseconds); -1 when malformed. */
int64_t chainlog_parse_time(const char *s);

#endif
