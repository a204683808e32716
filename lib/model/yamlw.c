/* yamlw -- write jansson trees as YAML documents (libyaml's emitter), readable back unchanged. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yamlw.h"

#include "model/jsonx.h"
#include "model/yaml.h"
#include "util/grow.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/*
 * libyaml chooses a scalar's style from its characters (plain when the syntax allows it, else
 * quoted), but it knows nothing of YAML 1.1's implicit types: "yes" or "0x10" are fine plain
 * scalars to it, and Kubernetes would read them back as true and 16. So every string is emitted
 * with plain_implicit only when model/yaml.c's resolver (go-yaml v2's rules) gives the same
 * string back (needs_quotes); otherwise libyaml has to quote it.
 */

typedef struct sink_s {
    FILE *f;   /* yamlw_file */
    char *buf; /* yamlw_string: owned, grown */
    size_t len, cap;
    bool failed; /* a write or allocation failed */
    bool nomem;
} sink_t;

static int on_write(void *data, unsigned char *buffer, size_t size)
{
    sink_t *s = data;

    if (s->f != NULL) {
        if (size > 0 && fwrite(buffer, 1, size, s->f) != size)
            s->failed = true;
        return !s->failed;
    }
    if (util_grow((void **)&s->buf, &s->cap, s->len + size + 1, 1) != ERR_OK) {
        s->failed = s->nomem = true;
        return 0;
    }
    memcpy(s->buf + s->len, buffer, size);
    s->len += size;
    s->buf[s->len] = '\0';
    return 1;
}

static err_t on_probe(void *ctx, size_t index, int line, json_t *doc)
{
    (void)index;
    (void)line;
    *(json_t **)ctx = json_incref(json_object_get(doc, "x"));
    return ERR_OK;
}

/* Would this string, written as a plain scalar, read back as something else? Only a first
 * character go-yaml's resolver looks at (sign, digit, dot, y/n/t/f/o, ~) can make it a number,
 * boolean or null; those strings are read back through model/yaml.c -- the same rules as
 * Kubernetes' reader -- and quoted unless they come back as themselves ("512Gi", "team-a" stay
 * plain; "8", "0x10", "yes", "1e3", ".inf" are quoted). */
static bool needs_quotes(const char *s, size_t len)
{
    char buf[128];
    json_t *back = NULL;
    bool same;

    if (len == 0 || (len == 2 && memcmp(s, "<<", 2) == 0))
        return true;
    if (strchr("+-.0123456789yYnNtTfFoO~", s[0]) == NULL)
        return false;
    if (len > sizeof(buf) - 4 || memchr(s, '\0', len) != NULL)
        return true; /* long or odd: quoting is always correct */
    memcpy(buf, "x: ", 3);
    memcpy(buf + 3, s, len);
    if (yaml_load_string(buf, len + 3, on_probe, &back, NULL) != ERR_OK) {
        json_decref(back);
        return true;
    }
    same = json_is_string(back) && json_string_length(back) == len &&
           memcmp(json_string_value(back), s, len) == 0;
    json_decref(back);
    return !same;
}

/* Emit an event whose initialisation returned `initialized` (0: out of memory). */
static bool emit(yaml_emitter_t *e, yaml_event_t *ev, int initialized)
{
    if (!initialized) {
        e->error = YAML_MEMORY_ERROR;
        return false;
    }
    return yaml_emitter_emit(e, ev);
}

static bool emit_string(yaml_emitter_t *e, const char *s, size_t len)
{
    yaml_event_t ev;
    bool plain = !needs_quotes(s, len);
    yaml_scalar_style_t style =
        memchr(s, '\n', len) != NULL ? YAML_LITERAL_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;

    return emit(e, &ev,
                yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)YAML_STR_TAG,
                                             (yaml_char_t *)s, (int)len, plain, 1, style));
}

static bool emit_plain(yaml_emitter_t *e, const char *text)
{
    yaml_event_t ev;

    return emit(e, &ev,
                yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text,
                                             (int)strlen(text), 1, 0, YAML_PLAIN_SCALAR_STYLE));
}

static bool emit_node(yaml_emitter_t *e, const json_t *v)
{
    yaml_event_t ev;
    const char *key;
    size_t klen, i;
    json_t *item;
    char buf[48];

    switch (json_typeof(v)) {
    case JSON_OBJECT:
        if (!emit(e, &ev,
                  yaml_mapping_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_MAP_TAG, 1,
                                                      YAML_BLOCK_MAPPING_STYLE)))
            return false;
        json_object_keylen_foreach((json_t *)v, key, klen, item)
        {
            if (!emit_string(e, key, klen) || !emit_node(e, item))
                return false;
        }
        return emit(e, &ev, yaml_mapping_end_event_initialize(&ev));
    case JSON_ARRAY:
        if (!emit(e, &ev,
                  yaml_sequence_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_SEQ_TAG, 1,
                                                       YAML_BLOCK_SEQUENCE_STYLE)))
            return false;
        json_array_foreach(v, i, item)
        {
            if (!emit_node(e, item))
                return false;
        }
        return emit(e, &ev, yaml_sequence_end_event_initialize(&ev));
    case JSON_STRING:
        return emit_string(e, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_plain(e, buf);
    case JSON_REAL:
        jsonx_format_go_float(json_real_value(v), buf, sizeof(buf) - 2);
        if (strpbrk(buf, ".eE") == NULL)
            strcat(buf, ".0"); /* "1" would read back as an integer */
        return emit_plain(e, buf);
    case JSON_TRUE:
        return emit_plain(e, "true");
    case JSON_FALSE:
        return emit_plain(e, "false");
    default:
        return emit_plain(e, "null");
    }
}

static err_t write_docs(sink_t *sink, const json_t *const *docs, size_t ndocs, err_msg_t *msg)
{
    yaml_emitter_t e;
    yaml_event_t ev;
    bool ok;

    if (!yaml_emitter_initialize(&e))
        return err_set(msg, ERR_NOMEM, "yaml: out of memory");
    yaml_emitter_set_output(&e, on_write, sink);
    yaml_emitter_set_unicode(&e, 1);
    yaml_emitter_set_width(&e, -1);
    yaml_emitter_set_indent(&e, 2);
    ok = emit(&e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    for (size_t i = 0; ok && i < ndocs; i++) {
        ok = emit(&e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, i == 0)) &&
             emit_node(&e, docs[i]) && emit(&e, &ev, yaml_document_end_event_initialize(&ev, 1));
    }
    ok = ok && emit(&e, &ev, yaml_stream_end_event_initialize(&ev)) && yaml_emitter_flush(&e);
    if (!ok && !sink->failed && e.error == YAML_MEMORY_ERROR)
        sink->nomem = true;
    if (!ok && !sink->failed && !sink->nomem)
        err_set(msg, ERR_IO, "yaml: %s", e.problem ? e.problem : "emitter error");
    yaml_emitter_delete(&e);
    if (sink->nomem)
        return err_set(msg, ERR_NOMEM, "yaml: out of memory");
    if (sink->failed)
        return err_set(msg, ERR_IO, "yaml: write error");
    return ok ? ERR_OK : ERR_IO;
}

err_t yamlw_file(FILE *f, const json_t *const *docs, size_t ndocs, err_msg_t *msg)
{
    sink_t sink = {.f = f};

    return write_docs(&sink, docs, ndocs, msg);
}

err_t yamlw_string(const json_t *const *docs, size_t ndocs, char **out, size_t *len, err_msg_t *msg)
{
    sink_t sink = {0};
    err_t rc = write_docs(&sink, docs, ndocs, msg);

    if (rc == ERR_OK && sink.buf == NULL) {
        sink.buf = calloc(1, 1);
        if (sink.buf == NULL)
            rc = err_set(msg, ERR_NOMEM, "yaml: out of memory");
    }
    if (rc != ERR_OK) {
        free(sink.buf);
        return rc;
    }
    *out = sink.buf;
    *len = sink.len;
    return ERR_OK;
}
