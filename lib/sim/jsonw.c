/* jsonw -- a small streaming JSON writer with stable key order and 2-space indentation. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/jsonw.h"

#include "sim/events.h"

void jsonw_init(jsonw_t *w, FILE *out)
{
    w->out = out;
    w->depth = 0;
    w->first[0] = true;
    w->after_key = false;
}

static void indent(jsonw_t *w)
{
    putc('\n', w->out);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->out);
}

/* Separator and indentation before a value or a key. */
static void before(jsonw_t *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (w->depth == 0)
        return;
    if (!w->first[w->depth])
        putc(',', w->out);
    w->first[w->depth] = false;
    indent(w);
}

static void jw_open(jsonw_t *w, char c)
{
    before(w);
    putc(c, w->out);
    if (w->depth + 1 < JSONW_MAX_DEPTH)
        w->depth++;
    w->first[w->depth] = true;
}

static void close_(jsonw_t *w, char c)
{
    bool empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty)
        indent(w);
    putc(c, w->out);
    if (w->depth == 0)
        putc('\n', w->out);
}

void jsonw_object_begin(jsonw_t *w)
{
    jw_open(w, '{');
}

void jsonw_object_end(jsonw_t *w)
{
    close_(w, '}');
}

void jsonw_array_begin(jsonw_t *w)
{
    jw_open(w, '[');
}

void jsonw_array_end(jsonw_t *w)
{
    close_(w, ']');
}

void jsonw_key(jsonw_t *w, const char *key)
{
    before(w);
    sim_json_write_string(w->out, key);
    fputs(": ", w->out);
    w->after_key = true;
}

void jsonw_string(jsonw_t *w, const char *s)
{
    before(w);
    sim_json_write_string(w->out, s);
}

void jsonw_raw(jsonw_t *w, const char *text)
{
    before(w);
    fputs(text, w->out);
}

void jsonw_uint(jsonw_t *w, unsigned long long v)
{
    before(w);
    fprintf(w->out, "%llu", v);
}

void jsonw_bool(jsonw_t *w, bool v)
{
    before(w);
    fputs(v ? "true" : "false", w->out);
}
