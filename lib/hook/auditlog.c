/* auditlog -- the audit file: records chained by hash, fdatasync'd, rate-limited per user. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/audit.h"

#include "util/chainlog.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The file itself -- the hash chain, fdatasync, rotation, torn-tail recovery, verification --
 * is the shared sink (util/chainlog.h), which the accounting log uses too. What is the audit
 * trail's own is the flood control: a per-user budget, so that one user cannot rotate the
 * history of everyone else out of the files.
 *
 *   write: [rate limit per user] -> [pending "suppressed" record] -> chainlog_append()
 */

#define USERS         64
#define DEFAULT_RATE  10
#define DEFAULT_BURST 200

typedef struct user_budget_s {
    char *user;            /* owned; NULL = free slot */
    uint64_t tokens_milli; /* records * 1000 */
    int64_t last_ms;
    uint64_t suppressed; /* records not written since the last summary */
    char since[40];      /* "time" of the first of them */
} user_budget_t;

struct audit_log_s {
    chainlog_t *file; /* owned */
    unsigned rate, burst;
    user_budget_t users[USERS];
};

static void now_text(char *buf, size_t cap)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    chainlog_format_time((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, buf, cap);
}

static int64_t mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static err_t append(audit_log_t *log, json_t *rec, err_msg_t *msg)
{
    return chainlog_append(log->file, rec, msg);
}

/* The "suppressed" summary of budget `b`, written and reset. */
static err_t flush_suppressed(audit_log_t *log, user_budget_t *b, err_msg_t *msg)
{
    char when[40];
    json_t *rec;
    err_t rc;

    if (b->suppressed == 0)
        return ERR_OK;
    now_text(when, sizeof(when));
    rec = json_pack("{s:s, s:s, s:s, s:I, s:s}", "time", when, "type", "suppressed", "user",
                    b->user, "count", (json_int_t)b->suppressed, "since", b->since);
    if (rec == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = append(log, rec, msg);
    json_decref(rec);
    if (rc == ERR_OK)
        b->suppressed = 0;
    return rc;
}

/* The budget of `user`, taking the least recently used slot (its summary written first). */
static user_budget_t *budget_of(audit_log_t *log, const char *user, int64_t now_ms)
{
    user_budget_t *lru = NULL;

    for (size_t i = 0; i < USERS; i++)
        if (log->users[i].user != NULL && strcmp(log->users[i].user, user) == 0)
            return &log->users[i];
    for (size_t i = 0; i < USERS && lru == NULL; i++)
        if (log->users[i].user == NULL)
            lru = &log->users[i];
    if (lru == NULL) { /* all taken: the least recently seen user is forgotten */
        lru = &log->users[0];
        for (size_t i = 1; i < USERS; i++)
            if (log->users[i].last_ms < lru->last_ms)
                lru = &log->users[i];
    }
    if (lru->user != NULL) {
        flush_suppressed(log, lru, NULL); /* best effort: the record is lost otherwise anyway */
        free(lru->user);
    }
    memset(lru, 0, sizeof(*lru));
    lru->user = strdup(user);
    if (lru->user == NULL)
        return NULL;
    lru->tokens_milli = (uint64_t)log->burst * 1000;
    lru->last_ms = now_ms;
    return lru;
}

err_t audit_log_write_at(audit_log_t *log, json_t *record, int64_t now_ms, err_msg_t *msg)
{
    const char *user = json_string_value(json_object_get(record, "user"));
    const char *claimed = json_string_value(json_object_get(record, "claimedUser"));
    char key[300];
    user_budget_t *b;
    err_t rc;

    if (log->rate == 0)
        return append(log, record, msg);
    if (user != NULL)
        snprintf(key, sizeof(key), "%s", user);
    else
        snprintf(key, sizeof(key), "?%s", claimed ? claimed : "");
    b = budget_of(log, key, now_ms);
    if (b == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    if (now_ms > b->last_ms) {
        uint64_t cap = (uint64_t)log->burst * 1000;
        b->tokens_milli += (uint64_t)(now_ms - b->last_ms) * log->rate;
        if (b->tokens_milli > cap)
            b->tokens_milli = cap;
    }
    b->last_ms = now_ms;
    if (b->tokens_milli < 1000) {
        if (b->suppressed++ == 0) {
            const char *t = json_string_value(json_object_get(record, "time"));
            snprintf(b->since, sizeof(b->since), "%s", t ? t : "");
            return err_set(msg, ERR_OVERFLOW,
                           "audit log %s: user %s exceeds %u records/s (burst %u); further "
                           "records are counted in a \"suppressed\" record",
                           chainlog_path(log->file), key, log->rate, log->burst);
        }
        return ERR_OK;
    }
    b->tokens_milli -= 1000;
    rc = flush_suppressed(log, b, msg);
    return rc != ERR_OK ? rc : append(log, record, msg);
}

err_t audit_log_write(audit_log_t *log, json_t *record, err_msg_t *msg)
{
    return audit_log_write_at(log, record, mono_ms(), msg);
}

void audit_log_set_rate(audit_log_t *log, unsigned per_second, unsigned burst)
{
    log->rate = per_second;
    log->burst = burst > 0 ? burst : 1;
}

uint64_t audit_log_seq(const audit_log_t *log)
{
    return chainlog_seq(log->file);
}

err_t audit_log_open(const char *path, uint64_t max_bytes, unsigned keep, audit_log_t **out,
                     err_msg_t *msg)
{
    audit_log_t *log = calloc(1, sizeof(*log));
    chainlog_opts_t opts = {.what = "audit log", .max_bytes = max_bytes, .keep = keep};
    err_t rc;

    if (log == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    log->rate = DEFAULT_RATE;
    log->burst = DEFAULT_BURST;
    rc = chainlog_open(path, &opts, &log->file, msg);
    if (rc != ERR_OK) {
        free(log);
        return rc;
    }
    *out = log;
    return ERR_OK;
}

void audit_log_close(audit_log_t *log)
{
    if (log == NULL)
        return;
    for (size_t i = 0; i < USERS; i++) {
        if (log->users[i].user != NULL && chainlog_is_open(log->file))
            flush_suppressed(log, &log->users[i], NULL);
        free(log->users[i].user);
    }
    chainlog_close(log->file, NULL);
    free(log);
}

err_t audit_verify(const char *const *files, size_t nfiles, audit_verify_t *out, err_msg_t *msg)
{
    return chainlog_verify(files, nfiles, "audit", out, msg);
}
