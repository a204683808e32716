/* logfmt -- one log line as text or as JSON with object references and reason. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "obs/logfmt.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

err_t logfmt_parse(const char *s, logfmt_t *out, err_msg_t *msg)
{
    if (strcmp(s, "text") == 0)
        *out = LOGFMT_TEXT;
    else if (strcmp(s, "json") == 0)
        *out = LOGFMT_JSON;
    else
        return err_set(msg, ERR_INVALID, "log format %s: want text or json", s);
    return ERR_OK;
}

/* "2026-12-02T05:10:00.123Z" into ts (32 bytes). */
static void timestamp(int64_t unix_ms, char *ts, size_t n)
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;
    char base[24];

    gmtime_r(&secs, &tm);
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts, n, "%s.%03dZ", base, (int)(unix_ms % 1000));
}

/* Append `s` (len bytes) JSON-escaped to out[*used..n-1) while it fits within `limit` bytes
 * (<= n - 1); an escape sequence is never cut. */
static void put_escaped(char *out, size_t *used, size_t limit, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[8];
        size_t el;
        if (ch == '"' || ch == '\\') {
            esc[0] = '\\';
            esc[1] = (char)ch;
            el = 2;
        } else if (ch == '\n') {
            memcpy(esc, "\\n", 2);
            el = 2;
        } else if (ch == '\t') {
            memcpy(esc, "\\t", 2);
            el = 2;
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(esc, sizeof(esc), "\\u%04x", ch);
            el = 6;
        } else {
            esc[0] = (char)ch;
            el = 1;
        }
        if (*used + el > limit)
            return;
        memcpy(out + *used, esc, el);
        *used += el;
    }
}

/* The fields lifted out of a message. Pointers into the message; lengths bound them. */
typedef struct fields_s {
    const char *kind, *ns, *name, *reason, *cq;
    size_t kind_len, ns_len, name_len, reason_len, cq_len;
} fields_t;

static size_t span(const char *s, const char *set)
{
    return strspn(s, set);
}

#define LOWER   "abcdefghijklmnopqrstuvwxyz"
#define UPPER   "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define NAMECH  LOWER "0123456789.-"
#define CLUSTER " clusterqueue localqueue resourceflavor cohort "

static void parse(const char *text, fields_t *f)
{
    const char *ref, *rest, *slash;
    size_t kl, rl;

    memset(f, 0, sizeof(*f));
    kl = span(text, LOWER);
    if (kl == 0 || kl > 32 || text[kl] != ' ')
        return;
    ref = text + kl + 1;
    rl = span(ref, NAMECH "/");
    if (rl == 0 || ref[rl] != ':' || ref[rl + 1] != ' ')
        return;
    slash = memchr(ref, '/', rl);
    if (slash != NULL) {
        if (slash == ref || slash == ref + rl - 1 ||
            memchr(slash + 1, '/', rl - 1 - (size_t)(slash - ref)))
            return;
        f->ns = ref;
        f->ns_len = (size_t)(slash - ref);
        f->name = slash + 1;
        f->name_len = rl - f->ns_len - 1;
    } else {
        char probe[40];
        snprintf(probe, sizeof(probe), " %.*s ", (int)kl, text);
        if (strstr(CLUSTER, probe) == NULL)
            return;
        f->name = ref;
        f->name_len = rl;
    }
    f->kind = text;
    f->kind_len = kl;
    rest = ref + rl + 2;
    if (strncmp(rest, "admitted to ", 12) == 0) {
        f->reason = "Admitted";
        f->reason_len = 8;
        f->cq = rest + 12;
        f->cq_len = span(f->cq, NAMECH);
        return;
    }
    if (span(rest, UPPER) >= 1) {
        size_t n = span(rest, UPPER LOWER);
        if (rest[n] == ':' || (rest[n] == ' ' && rest[n + 1] == '(') || rest[n] == '\0') {
            f->reason = rest;
            f->reason_len = n;
        }
    }
}

/* Append `"key":"value"` (value escaped) to tail. */
static void tail_str(char *tail, size_t *used, size_t cap, const char *key, const char *v,
                     size_t vl)
{
    size_t kl = strlen(key);

    if (*used + kl + 8 + vl * 6 > cap)
        return; /* a field that does not fit is left out whole */
    tail[(*used)++] = ',';
    tail[(*used)++] = '"';
    memcpy(tail + *used, key, kl);
    *used += kl;
    memcpy(tail + *used, "\":\"", 3);
    *used += 3;
    put_escaped(tail, used, cap, v, vl);
    tail[(*used)++] = '"';
}

size_t logfmt_line(logfmt_t fmt, int64_t unix_ms, const char *level, const char *text, char *buf,
                   size_t n)
{
    char ts[40], tail[1024];
    size_t used = 0, tl = 0, limit;
    fields_t f;
    int w;

    if (n == 0)
        return 0;
    timestamp(unix_ms, ts, sizeof(ts));
    if (fmt == LOGFMT_TEXT) {
        w = snprintf(buf, n, "%s %-5s %s\n", ts, level, text);
        return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
    }
    parse(text, &f);
    if (f.kind != NULL) {
        size_t cap = sizeof(tail) - 4;
        /* Kind, namespace and name hold [a-z0-9.-] only (parse()): nothing to escape. */
        if (f.ns != NULL)
            w = snprintf(tail, cap, ",\"%.*s\":{\"name\":\"%.*s\",\"namespace\":\"%.*s\"}",
                         (int)f.kind_len, f.kind, (int)f.name_len, f.name, (int)f.ns_len, f.ns);
        else
            w = snprintf(tail, cap, ",\"%.*s\":{\"name\":\"%.*s\"}", (int)f.kind_len, f.kind,
                         (int)f.name_len, f.name);
        tl = w > 0 && (size_t)w < cap ? (size_t)w : 0;
        if (f.reason != NULL)
            tail_str(tail, &tl, cap, "reason", f.reason, f.reason_len);
        if (f.cq != NULL && f.cq_len > 0)
            tail_str(tail, &tl, cap, "clusterQueue", f.cq, f.cq_len);
    }
    tail[tl++] = '}';
    tail[tl++] = '\n';
    w = snprintf(buf, n, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"", ts, level);
    if (w < 0 || (size_t)w + tl + 2 > n) {
        /* Too small for anything useful: an empty object keeps the stream valid JSON lines. */
        w = snprintf(buf, n, "{}\n");
        return w < 0 ? 0 : (size_t)w < n ? (size_t)w : n - 1;
    }
    used = (size_t)w;
    limit = n - 1 - tl - 1; /* room for the closing quote, the tail and the NUL */
    put_escaped(buf, &used, limit, text, strlen(text));
    buf[used++] = '"';
    memcpy(buf + used, tail, tl);
    used += tl;
    buf[used] = '\0';
    return used;
}
