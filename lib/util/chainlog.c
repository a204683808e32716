/* chainlog -- an append-only JSON-lines file chained by hash: the audit and accounting sink. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/chainlog.h"

#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Why a chain: the audit file is the record of who changed which quota, the accounting file the
 * record of who used how many GPU-hours. A record that can be edited or dropped without trace is
 * no record. Each line carries the SHA-256 of the line before it and a sequence number, so
 * `sluice audit --verify` (and `sluice report --verify`) finds the first place where the history
 * was changed. The chain does not stop someone with write access from rewriting the whole file
 * from the edit onwards; copies shipped off the node are the cross-check.
 *
 *   open: PATH's last complete line (or PATH.1's when PATH is empty) -> seq, prev
 *         a torn tail (no newline) -> cut off, "recovered" record
 *   append: [rotate: "rotated"] -> line with seq+1 and prev -> write(2) -> fdatasync(2)
 */

#define HASH_HEX  65 /* 64 hex digits + NUL */
#define TAIL_MAX  (4u << 20)
#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"

struct chainlog_s {
    char *path; /* owned */
    char *what; /* owned: "audit log" */
    int fd;
    uint64_t size;
    uint64_t max_bytes;
    unsigned keep;
    bool no_sync;
    uint64_t seq;        /* last written */
    char prev[HASH_HEX]; /* hash of the last line written */
};

/* ---- time text ------------------------------------------------------------------------------ */

void chainlog_format_time(int64_t ms, char *buf, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

/* Read exactly `n` decimal digits at s; -1 when they are not all digits. */
static int fixed_digits(const char *s, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int64_t chainlog_parse_time(const char *s)
{
    static const struct {
        int at, len, sep;
    } parts[6] = {{0, 4, '-'}, {5, 2, '-'}, {8, 2, 'T'}, {11, 2, ':'}, {14, 2, ':'}, {17, 2, 0}};
    int v[6], ms = 0, digits = 0;
    size_t n;
    struct tm tm;

    if (s == NULL || strlen(s) < 20)
        return -1;
    for (int i = 0; i < 6; i++) {
        v[i] = fixed_digits(s + parts[i].at, parts[i].len);
        if (v[i] < 0 || (parts[i].sep && s[parts[i].at + parts[i].len] != parts[i].sep))
            return -1;
    }
    if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60)
        return -1;
    n = 19;
    if (s[n] == '.') {
        for (n++; s[n] >= '0' && s[n] <= '9'; n++, digits++)
            if (digits < 3)
                ms = ms * 10 + (s[n] - '0');
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (s[n] != 'Z' || s[n + 1] != '\0')
        return -1;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = v[0] - 1900;
    tm.tm_mon = v[1] - 1;
    tm.tm_mday = v[2];
    tm.tm_hour = v[3];
    tm.tm_min = v[4];
    tm.tm_sec = v[5];
    return (int64_t)timegm(&tm) * 1000 + ms;
}

static void now_text(char *buf, size_t cap)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    chainlog_format_time((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, buf, cap);
}

/* ---- small helpers ----------------------------------------------------------------------- */

static void sha256_hex(const char *data, size_t len, char out[HASH_HEX])
{
    unsigned char md[32];
    unsigned int n = 0;

    if (EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) != 1 || n != 32) {
        memset(out, '?', HASH_HEX - 1); /* never matches: a failed digest cannot verify */
        out[HASH_HEX - 1] = '\0';
        return;
    }
    for (unsigned i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* fsync the directory holding `path` (a rename or create is durable only then). */
static void sync_dir(const char *path)
{
    char *copy = strdup(path);
    int fd;

    if (copy == NULL)
        return;
    fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

/* The last complete line of the file `fd` (size `size`) into *line (malloc'ed, no newline;
 * NULL when there is none) and the length of a torn tail after it into *torn. */
static err_t tail_line(int fd, uint64_t size, const char *what, const char *path, char **line,
                       size_t *len, uint64_t *torn, err_msg_t *msg)
{
    size_t n = size > TAIL_MAX ? TAIL_MAX : (size_t)size, got = 0;
    char *buf;
    size_t end, start;

    *line = NULL;
    *len = 0;
    *torn = 0;
    if (n == 0)
        return ERR_OK;
    buf = malloc(n);
    if (buf == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(size - n + got));
        if (r <= 0) {
            free(buf);
            return err_set(msg, ERR_IO, "%s %s: %s", what, path,
                           r < 0 ? strerror(errno) : "short read");
        }
        got += (size_t)r;
    }
    end = n;
    while (end > 0 && buf[end - 1] != '\n')
        end--;
    *torn = n - end;
    if (end == 0) { /* no newline in the window */
        free(buf);
        if (size > n)
            return err_set(msg, ERR_PARSE, "%s %s: last line longer than %u bytes", what, path,
                           TAIL_MAX);
        return ERR_OK; /* the whole file is one torn line */
    }
    start = end - 1;
    while (start > 0 && buf[start - 1] != '\n')
        start--;
    if (start == 0 && size > n) {
        free(buf);
        return err_set(msg, ERR_PARSE, "%s %s: last line longer than %u bytes", what, path,
                       TAIL_MAX);
    }
    *len = end - 1 - start;
    *line = malloc(*len + 1);
    if (*line == NULL) {
        free(buf);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    memcpy(*line, buf + start, *len);
    (*line)[*len] = '\0';
    free(buf);
    return ERR_OK;
}

/* The seq of the record `line` (0 when it is not a chained record). */
static uint64_t line_seq(const char *line, size_t len)
{
    json_t *j = util_json_loadb(line, len, 0, NULL);
    json_t *s = json_object_get(j, "seq");
    uint64_t seq =
        json_is_integer(s) && json_integer_value(s) > 0 ? (uint64_t)json_integer_value(s) : 0;
    json_decref(j);
    return seq;
}

/* Resume the chain after the last line of the file at `path` (read-only); false when it has
 * none. */
static bool resume_from(chainlog_t *log, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char *line = NULL;
    size_t len;
    uint64_t torn;
    bool found = false;

    if (fd < 0)
        return false;
    if (fstat(fd, &st) == 0 &&
        tail_line(fd, (uint64_t)st.st_size, "log", path, &line, &len, &torn, NULL) == ERR_OK &&
        line != NULL) {
        log->seq = line_seq(line, len);
        sha256_hex(line, len, log->prev);
        found = true;
    }
    free(line);
    close(fd);
    return found;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* Append `rec` (not consumed) as the next link of the chain, durably. */
static err_t write_link(chainlog_t *log, json_t *rec, err_msg_t *msg)
{
    json_t *line = json_pack("{s:I, s:s}", "seq", (json_int_t)(log->seq + 1), "prev", log->prev);
    char *text = NULL;
    size_t n, done = 0;
    err_t rc = ERR_OK;

    if (line == NULL || json_object_update(line, rec) != 0) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    /* seq and prev are ours: a record carrying its own would break the chain. */
    if (json_object_set_new(line, "seq", json_integer((json_int_t)(log->seq + 1))) != 0 ||
        json_object_set_new(line, "prev", json_string(log->prev)) != 0) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    text = util_json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    n = strlen(text);
    text[n] = '\n'; /* replaces the NUL: written as one line with one write(2) */
    while (done < n + 1) {
        ssize_t w = write(log->fd, text + done, n + 1 - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = err_set(msg, ERR_IO, "writing %s %s: %s", log->what, log->path,
                         w < 0 ? strerror(errno) : "short write");
            /* Take a partial line back, so that the next record starts on a line of its own
             * (if even that fails, the next open cuts it off and says so). */
            if (done > 0 && ftruncate(log->fd, (off_t)log->size) != 0)
                log->size += done;
            goto out;
        }
        done += (size_t)w;
    }
    /* The line is in the file now: the chain moves on whether or not the sync succeeds (a
     * second line with the same seq would break it). */
    sha256_hex(text, n, log->prev);
    log->seq++;
    log->size += n + 1;
    if (!log->no_sync && fdatasync(log->fd) != 0)
        rc = err_set(msg, ERR_IO, "syncing %s %s: %s", log->what, log->path, strerror(errno));
out:
    free(text);
    json_decref(line);
    return rc;
}

/* First and last seq of the file at `path` (0 when unknown). */
static void seq_range(const char *path, uint64_t *first, uint64_t *last)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    *first = *last = 0;
    if (f == NULL)
        return;
    n = getline(&line, &cap, f);
    if (n > 0)
        *first = line_seq(line, (size_t)n);
    free(line);
    fclose(f);
    {
        chainlog_t probe;
        memset(&probe, 0, sizeof(probe));
        if (resume_from(&probe, path))
            *last = probe.seq;
    }
}

/* PATH.(keep-1) -> PATH.keep, ..., PATH -> PATH.1, then a new PATH starting with a "rotated"
 * record naming what was deleted (PATH.keep's records, or PATH's own when keep is 0). */
static err_t rotate(chainlog_t *log, err_msg_t *msg)
{
    char from[4096], to[4096], dropped[4096];
    uint64_t first = 0, last = 0;
    bool lost;
    json_t *rec;
    char when[40];
    err_t rc;

    if (log->keep > 0)
        snprintf(dropped, sizeof(dropped), "%s.%u", log->path, log->keep);
    else
        snprintf(dropped, sizeof(dropped), "%s", log->path);
    lost = access(dropped, F_OK) == 0;
    if (lost)
        seq_range(dropped, &first, &last);
    close(log->fd);
    log->fd = -1;
    for (unsigned i = log->keep; i > 0; i--) {
        if (i == 1)
            snprintf(from, sizeof(from), "%s", log->path);
        else
            snprintf(from, sizeof(from), "%s.%u", log->path, i - 1);
        snprintf(to, sizeof(to), "%s.%u", log->path, i);
        if (rename(from, to) != 0 && errno != ENOENT)
            return err_set(msg, ERR_IO, "rotating %s %s: %s", log->what, from, strerror(errno));
    }
    if (log->keep == 0 && remove(log->path) != 0 && errno != ENOENT)
        return err_set(msg, ERR_IO, "rotating %s %s: %s", log->what, log->path, strerror(errno));
    log->fd = open(log->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log->fd < 0)
        return err_set(msg, ERR_IO, "%s %s: %s", log->what, log->path, strerror(errno));
    sync_dir(log->path);
    log->size = 0;
    if (!lost)
        return ERR_OK;
    now_text(when, sizeof(when));
    rec = json_pack("{s:s, s:s, s:s, s:I, s:I}", "time", when, "type", "rotated", "dropped",
                    dropped, "firstSeq", (json_int_t)first, "lastSeq", (json_int_t)last);
    if (rec == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = write_link(log, rec, msg);
    json_decref(rec);
    return rc;
}

err_t chainlog_append(chainlog_t *log, json_t *rec, err_msg_t *msg)
{
    size_t n = 0;
    err_t rc;

    if (log->max_bytes > 0) { /* the record's size decides a rotation first */
        char *probe = util_json_dumps(rec, JSON_COMPACT);
        n = probe ? strlen(probe) + 100 : 0; /* + seq and prev */
        free(probe);
        if (n == 0)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (log->fd < 0) {
        /* A rotation that failed half-way: reopen PATH (never rotate again blindly, which
         * could push an older file out). */
        struct stat st;
        log->fd = open(log->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (log->fd < 0)
            return err_set(msg, ERR_IO, "%s %s: %s", log->what, log->path, strerror(errno));
        log->size = fstat(log->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    } else if (log->max_bytes > 0 && log->size > 0 && log->size + n > log->max_bytes) {
        rc = rotate(log, msg);
        if (rc != ERR_OK)
            return rc;
    }
    return write_link(log, rec, msg);
}

uint64_t chainlog_seq(const chainlog_t *log)
{
    return log->seq;
}

const char *chainlog_path(const chainlog_t *log)
{
    return log->path;
}

bool chainlog_is_open(const chainlog_t *log)
{
    return log->fd >= 0;
}

err_t chainlog_open(const char *path, const chainlog_opts_t *opts, chainlog_t **out, err_msg_t *msg)
{
    chainlog_t *log = calloc(1, sizeof(*log));
    const char *what = opts->what != NULL ? opts->what : "log";
    struct stat st;
    char *line = NULL, p1[4096];
    size_t len = 0;
    uint64_t torn = 0;
    err_t rc;

    if (log == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    log->fd = -1;
    log->path = strdup(path);
    log->what = strdup(what);
    if (log->path == NULL || log->what == NULL) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto fail;
    }
    log->max_bytes = opts->max_bytes;
    log->keep = opts->keep;
    log->no_sync = opts->no_sync;
    memcpy(log->prev, ZERO_HASH, HASH_HEX);
    log->fd =
        open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | (opts->truncate ? O_TRUNC : 0), 0600);
    if (log->fd < 0) {
        rc = err_set(msg, ERR_IO, "%s %s: %s", what, path, strerror(errno));
        goto fail;
    }
    if (opts->truncate) {
        *out = log; /* a new history: seq 1, prev zeros */
        return ERR_OK;
    }
    if (fstat(log->fd, &st) != 0) {
        rc = err_set(msg, ERR_IO, "%s %s: %s", what, path, strerror(errno));
        goto fail;
    }
    rc = tail_line(log->fd, (uint64_t)st.st_size, what, path, &line, &len, &torn, msg);
    if (rc != ERR_OK)
        goto fail;
    if (torn > 0 && ftruncate(log->fd, (off_t)((uint64_t)st.st_size - torn)) != 0) {
        rc = err_set(msg, ERR_IO, "%s %s: cutting a torn last line: %s", what, path,
                     strerror(errno));
        goto fail;
    }
    log->size = (uint64_t)st.st_size - torn;
    if (line != NULL) {
        /* A last line that is no chained record (an older sluice's file) links by its hash
         * all the same; its seq counts as 0, which verification reports. */
        log->seq = line_seq(line, len);
        sha256_hex(line, len, log->prev);
    } else {
        snprintf(p1, sizeof(p1), "%s.1", path);
        resume_from(log, p1);
    }
    free(line);
    line = NULL;
    if (torn > 0) {
        char when[40];
        json_t *rec;
        now_text(when, sizeof(when));
        rec = json_pack("{s:s, s:s, s:I}", "time", when, "type", "recovered", "discardedBytes",
                        (json_int_t)torn);
        rc = rec ? write_link(log, rec, msg) : err_set(msg, ERR_NOMEM, "out of memory");
        json_decref(rec);
        if (rc != ERR_OK)
            goto fail;
    }
    *out = log;
    return ERR_OK;
fail:
    free(line);
    if (log->fd >= 0)
        close(log->fd);
    free(log->path);
    free(log->what);
    free(log);
    return rc;
}

err_t chainlog_close(chainlog_t *log, err_msg_t *msg)
{
    err_t rc = ERR_OK;

    if (log == NULL)
        return ERR_OK;
    if (log->fd >= 0) {
        if (log->no_sync && fdatasync(log->fd) != 0)
            rc = err_set(msg, ERR_IO, "syncing %s %s: %s", log->what, log->path, strerror(errno));
        if (close(log->fd) != 0 && rc == ERR_OK)
            rc = err_set(msg, ERR_IO, "closing %s %s: %s", log->what, log->path, strerror(errno));
    }
    free(log->path);
    free(log->what);
    free(log);
    return rc;
}

/* ---- verifying ---------------------------------------------------------------------------- */

static bool is_hash(const char *s)
{
    if (s == NULL || strlen(s) != 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

err_t chainlog_verify(const char *const *files, size_t nfiles, const char *kind,
                      chainlog_verify_t *out, err_msg_t *msg)
{
    char prev[HASH_HEX] = "";
    char prev_where[300] = "";
    char *line = NULL;
    size_t cap = 0;
    bool first = true;

    memset(out, 0, sizeof(*out));
    out->ok = true;
    for (size_t fi = 0; fi < nfiles && out->ok; fi++) {
        /* "-": standard input (`sluice audit --verify -`) */
        FILE *f = strcmp(files[fi], "-") == 0 ? stdin : fopen(files[fi], "r");
        size_t lineno = 0;
        ssize_t n;

        if (f == NULL) {
            free(line);
            return err_set(msg, ERR_IO, "%s: %s", files[fi], strerror(errno));
        }
        while (out->ok && (n = getline(&line, &cap, f)) >= 0) {
            json_t *rec, *s;
            const char *p;
            uint64_t seq;

            lineno++;
            if (n == 0 || line[n - 1] != '\n') {
                snprintf(out->where, sizeof(out->where),
                         "%s:%zu: the last line is incomplete (a torn write)", files[fi], lineno);
                out->ok = false;
                break;
            }
            line[--n] = '\0';
            rec = util_json_loadb(line, (size_t)n, 0, NULL);
            s = json_object_get(rec, "seq");
            p = json_string_value(json_object_get(rec, "prev"));
            if (!json_is_integer(s) || json_integer_value(s) <= 0 || !is_hash(p)) {
                snprintf(out->where, sizeof(out->where),
                         "%s:%zu: not a chained %s record (no seq or prev)", files[fi], lineno,
                         kind != NULL ? kind : "log");
                out->ok = false;
                json_decref(rec);
                break;
            }
            seq = (uint64_t)json_integer_value(s);
            if (first) {
                out->first_seq = seq;
                out->anchored = seq == 1 && strcmp(p, ZERO_HASH) == 0;
                first = false;
            } else if (seq != out->last_seq + 1) {
                snprintf(out->where, sizeof(out->where),
                         "%s:%zu (seq %llu): follows seq %llu at %s: records are missing, "
                         "inserted or reordered",
                         files[fi], lineno, (unsigned long long)seq,
                         (unsigned long long)out->last_seq, prev_where);
                out->ok = false;
            } else if (strcmp(p, prev) != 0) {
                snprintf(out->where, sizeof(out->where),
                         "%s:%zu (seq %llu): prev does not match the hash of %s: that record was "
                         "edited or replaced",
                         files[fi], lineno, (unsigned long long)seq, prev_where);
                out->ok = false;
            }
            json_decref(rec);
            if (!out->ok)
                break;
            out->records++;
            out->last_seq = seq;
            sha256_hex(line, (size_t)n, prev);
            snprintf(prev_where, sizeof(prev_where), "%.250s:%zu", files[fi], lineno);
        }
        if (f != stdin)
            fclose(f);
    }
    free(line);
    return ERR_OK;
}
