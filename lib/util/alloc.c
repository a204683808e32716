/* alloc -- the one allocator, and a JSON parse that survives jansson's allocation failures. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/alloc.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *util_malloc(size_t n)
{
    return malloc(n);
}

void *util_calloc(size_t n, size_t size)
{
    return calloc(n, size);
}

void *util_realloc(void *p, size_t n)
{
    return realloc(p, n);
}

void util_free(void *p)
{
    free(p);
}

void util_alloc_trim(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

char *util_alloc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    return d != NULL ? memcpy(d, s, n) : NULL;
}

/*
 * The parse guard. While util_json_loadb() runs on a thread, `parse` points at its state. The
 * reserve holds 2 x (the longest token + 2) + 256 bytes: jansson's lexer keeps one token in a
 * buffer that starts at 16 bytes and doubles, so no growth is larger than twice the longest
 * token. Once an allocation failed, the source answers end of input, so the lexer saves at most
 * the 3 bytes left of a UTF-8 character it already read: the buffer cannot grow again in the
 * same token, and a new token starts from the buffer already grown. The one growth that must
 * not fail is therefore the failing allocation itself, which the fresh reserve always holds;
 * everything after it may fail, as jansson's parser (unlike its lexer) checks.
 */
typedef struct {
    const char *buf;
    size_t len, pos;
    char *reserve;
    size_t reserve_len, reserve_used;
    bool failed;
} parse_t;

static _Thread_local parse_t *parse;

/* The dump guard: while util_json_dumps() runs on a thread, `dump` collects its output and
 * notes any failed allocation of jansson's. */
typedef struct {
    char *buf;
    size_t len, cap;
    bool failed;
} dump_t;

static _Thread_local dump_t *dump;

static void *from_reserve(parse_t *p, size_t n)
{
    size_t at = (p->reserve_used + 15) & ~(size_t)15;

    if (n > p->reserve_len || at > p->reserve_len - n)
        return NULL;
    p->reserve_used = at + n;
    return p->reserve + at;
}

static void *json_malloc(size_t n)
{
    parse_t *p = parse;
    void *m;

    if (p == NULL) {
        m = util_malloc(n);
        if (m == NULL && dump != NULL)
            dump->failed = true;
        return m;
    }
    if (!p->failed) {
        m = util_malloc(n);
        if (m != NULL)
            return m;
        p->failed = true;
    }
    return from_reserve(p, n);
}

static void json_free(void *m)
{
    parse_t *p = parse;

    if (p != NULL && (uintptr_t)m >= (uintptr_t)p->reserve &&
        (uintptr_t)m < (uintptr_t)p->reserve + p->reserve_len)
        return; /* the reserve goes as a whole */
    util_free(m);
}

void util_alloc_install(void)
{
    json_set_alloc_funcs(json_malloc, json_free);
}

__attribute__((constructor)) static void alloc_init(void)
{
    util_alloc_install();
}

/* One byte per call: after a failure the next read is the end of the input. */
static size_t source(void *out, size_t room, void *arg)
{
    parse_t *p = arg;

    if (p->failed || p->pos >= p->len || room == 0)
        return 0;
    *(char *)out = p->buf[p->pos++];
    return 1;
}

/* The longest run of bytes a jansson token can take: a string from quote to quote, escapes
 * included; anything else up to white space or a structural character. */
static size_t longest_token(const char *b, size_t len)
{
    size_t best = 0, run = 0;
    bool in_string = false;

    for (size_t i = 0; i < len; i++) {
        char c = b[i];

        if (in_string) {
            run++;
            if (c == '\\' && i + 1 < len) {
                i++;
                run++;
            } else if (c == '"') {
                in_string = false;
                best = run > best ? run : best;
                run = 0;
            }
        } else if (c == '"') {
            best = run > best ? run : best;
            in_string = true;
            run = 1;
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '{' || c == '}' ||
                   c == '[' || c == ']' || c == ':' || c == ',') {
            best = run > best ? run : best;
            run = 0;
        } else {
            run++;
        }
    }
    return run > best ? run : best;
}

static void set_nomem(json_error_t *error)
{
    if (error == NULL)
        return;
    memset(error, 0, sizeof(*error));
    error->line = error->column = -1;
    snprintf(error->text, sizeof(error->text), "out of memory");
    snprintf(error->source, sizeof(error->source), "<buffer>");
    error->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)json_error_out_of_memory;
}

json_t *util_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *error)
{
    parse_t p = {.buf = buf, .len = len};
    json_t *v;
    size_t longest = longest_token(buf, len);

    if (longest > (SIZE_MAX - 512) / 2) {
        set_nomem(error);
        return NULL;
    }
    p.reserve_len = 2 * (longest + 2) + 256;
    p.reserve = util_malloc(p.reserve_len);
    if (p.reserve == NULL) {
        set_nomem(error);
        return NULL;
    }
    parse = &p;
    v = json_load_callback(source, &p, flags, error);
    if (p.failed) {
        json_decref(v); /* whatever was built, reserve and all */
        v = NULL;
        set_nomem(error);
    }
    parse = NULL;
    util_free(p.reserve);
    return v;
}

json_t *util_json_loads(const char *s, size_t flags, json_error_t *error)
{
    return util_json_loadb(s, strlen(s), flags, error);
}

/* json_dump_callback()'s sink: once anything failed, every later piece fails too (jansson does
 * not check every piece's answer). */
static int dump_append(const char *piece, size_t n, void *arg)
{
    dump_t *d = arg;
    size_t cap;
    char *b;

    if (d->failed)
        return -1;
    if (n >= d->cap - d->len || d->buf == NULL) {
        for (cap = d->cap ? d->cap : 256; n >= cap - d->len; cap *= 2) {
            if (cap > SIZE_MAX / 2) {
                d->failed = true;
                return -1;
            }
        }
        b = util_realloc(d->buf, cap);
        if (b == NULL) {
            d->failed = true;
            return -1;
        }
        d->buf = b;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, piece, n);
    d->len += n;
    d->buf[d->len] = '\0';
    return 0;
}

char *util_json_dumps(const json_t *json, size_t flags)
{
    dump_t d = {0}, *outer = dump;
    int rc;

    dump = &d;
    rc = json_dump_callback(json, dump_append, &d, flags);
    dump = outer;
    if (rc != 0 || d.failed || d.buf == NULL) {
        util_free(d.buf);
        return NULL;
    }
    return d.buf;
}

bool util_json_nomem(const json_error_t *error)
{
    return json_error_code(error) == json_error_out_of_memory;
}
