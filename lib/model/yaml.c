/* yaml -- turn (multi-document) YAML into jansson trees, one document at a time. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yaml.h"

#include "model/yamlmark.h"
#include "util/grow.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/*
 * The loader walks libyaml's event stream (not its document API, which would hold the whole
 * node graph) and builds each document's jansson tree directly:
 *
 *   STREAM_START -> ( DOCUMENT_START  node  DOCUMENT_END  -> callback )* -> STREAM_END
 *
 * Collections under construction sit on an explicit stack (at most YAML_MAX_DEPTH deep); a
 * finished node is placed into the collection on top: appended to a sequence, or used as the
 * pending key of a mapping, or stored under that key. After DOCUMENT_END the tree is handed to
 * the callback and dropped, so memory is bounded by one document.
 *
 * What matches sigs.k8s.io/yaml (go-yaml v2 decoding into interface{}, then JSON):
 * - Plain scalars resolve by go-yaml v2's resolve(): see resolve_plain().
 * - Quoted and block scalars are strings; "!!str" forces a string; "!!int", "!!float", "!!bool"
 *   and "!!null" resolve the text (in any style) and fail when it is not of that type.
 * - Mapping keys become strings the way sigs.k8s.io/yaml converts them: ints in decimal
 *   ("0x10" -> "16"), booleans as "true"/"false" ("yes" -> "true"), strings as is. A null key and
 *   a sequence or mapping key are errors.
 * - Aliases expand to a copy of the anchored node; "<<" merges one mapping or a sequence of
 *   mappings into the enclosing mapping.
 *
 * Deliberate differences:
 * - Duplicate keys are an error (go-yaml v2 keeps the last one unless decoding strictly; we
 *   take the strict side, as a silently dropped quota is worse than a rejected file).
 * - Keys written in a mapping win over merged keys wherever "<<" appears (the YAML merge spec;
 *   go-yaml v2 lets a later "<<" overwrite earlier explicit keys).
 * - JSON has no infinity or NaN, so ".inf", "-.inf" and ".nan" stay strings; so do integers
 *   beyond int64 that go-yaml would hold in a uint64 (jansson integers are int64).
 * - A float key keeps its source text ("1.50"), where sigs.k8s.io/yaml would reformat it.
 * - "!!binary" and "!!timestamp" scalars stay the text as written (not decoded or checked).
 * - Documents whose root is null (empty, only comments, "~") are skipped but counted.
 */

#define KEY_QUOTE_MAX  64 /* bytes of a key or scalar quoted in an error message */
#define YAML_MERGE_TAG "tag:yaml.org,2002:merge"

typedef struct anchor_s {
    char *name;    /* owned */
    json_t *value; /* owned reference */
    size_t nodes;  /* nodes in value, alias expansions included */
    size_t bytes;  /* scalar bytes in value (+1 per node), alias expansions included */
    size_t height; /* nesting levels in value: 0 for a scalar */
    char *text;    /* owned: the scalar's source text for use as an alias key; NULL otherwise */
    size_t text_len;
} anchor_t;

typedef struct frame_s {
    json_t *node;   /* owned: the collection being built */
    json_t *merges; /* owned: mappings to merge in at the end ("<<" values), or NULL */
    char *key;      /* owned: key waiting for its value; NULL when the next node is a key */
    yaml_mark_t key_mark;
    int is_map;
    int key_is_merge;
    char *anchor;        /* owned: anchor to register when the collection ends, or NULL */
    size_t nodes_before; /* loader's node count when the collection started */
    size_t bytes_before; /* loader's byte count when the collection started */
    size_t height;       /* 1 + the largest height among the children so far */
    yaml_mark_t start;   /* where the collection starts, for errors about it */
} frame_t;

/*
 * Input. libyaml places a reader error (invalid UTF-8, a control character) only by byte offset,
 * so the loader finds its line and column itself: from the text when loading a string, and for a
 * FILE from the last two chunks its read handler passed on (libyaml decodes at most one raw buffer
 * of them behind the newest read, so the offset always falls in one of the two).
 */
#define READ_CHUNK 16384

typedef struct input_s {
    const unsigned char *str; /* borrowed: string input, or NULL */
    size_t str_len;
    FILE *f; /* borrowed: file input, or NULL */
    unsigned char chunk[2][READ_CHUNK];
    size_t chunk_len[2];
    size_t chunk_off[2];                /* offset of the chunk's first byte */
    size_t chunk_line[2], chunk_col[2]; /* 0-based position of that byte */
    int cur;                            /* the newest chunk */
    size_t total, line, col;            /* position after the last byte read */
    int io_errno;                       /* non-zero: reading failed with this errno */
} input_t;

typedef struct loader_s {
    yaml_parser_t parser;
    input_t in;
    frame_t stack[YAML_MAX_DEPTH];
    size_t depth;
    json_t *root;      /* owned: the finished root of the current document, or NULL */
    anchor_t *anchors; /* owned array */
    size_t nanchors, anchors_cap;
    size_t nodes;       /* nodes of the current document, alias expansions included */
    size_t bytes;       /* its scalar bytes + 1 per node, alias expansions included */
    size_t alias_nodes; /* of them, copies made by expanding aliases */
    size_t alias_bytes;
    yaml_doc_cb cb;
    yaml_doc_marks_cb mcb; /* instead of cb: the document with its marks */
    yaml_marks_t *marks;   /* owned: the current document's positions (mcb only), or NULL */
    void *ctx;
    err_msg_t *msg;
} loader_t;

/* A finished node on its way into its parent. */
typedef struct node_s {
    json_t *value;    /* owned until placed */
    const char *text; /* scalar source text (for keys), NULL for collections */
    size_t text_len;
    int is_merge_key; /* an untagged plain "<<", or "!!merge" */
    yaml_mark_t mark;
    size_t height; /* nesting levels: 0 for a scalar */
} node_t;

static err_t at(loader_t *ld, err_t code, yaml_mark_t mark, const char *what)
{
    return err_set(ld->msg, code, "line %zu, column %zu: %s", mark.line + 1, mark.column + 1, what);
}

static err_t nomem(loader_t *ld)
{
    return err_set(ld->msg, ERR_NOMEM, "out of memory while loading YAML");
}

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* Count `n` more nodes of `bytes` scalar bytes (+1 per node) into the document, checking the
 * limits before anything is copied: `alias` when they are the copy an alias expands to. What the
 * text holds is bounded by YAML_MAX_NODES and YAML_MAX_BYTES (a large honest List: thousands of
 * Nodes); what aliases add, by the much lower YAML_MAX_ALIAS_NODES and YAML_MAX_ALIAS_BYTES. The
 * byte limit is what stops an alias bomb built from long scalars: a 1 MB string aliased 200,000
 * times is few nodes but 200 GB. */
static err_t count_nodes(loader_t *ld, size_t n, size_t bytes, yaml_mark_t mark, bool alias)
{
    char what[128];

    if (alias && (n > YAML_MAX_ALIAS_NODES || ld->alias_nodes > YAML_MAX_ALIAS_NODES - n)) {
        snprintf(what, sizeof(what), "aliases expand to more than %d nodes: refused",
                 YAML_MAX_ALIAS_NODES);
        return at(ld, ERR_PARSE, mark, what);
    }
    if (alias && (bytes > YAML_MAX_ALIAS_BYTES || ld->alias_bytes > YAML_MAX_ALIAS_BYTES - bytes)) {
        snprintf(what, sizeof(what), "aliases expand to more than %u bytes: refused",
                 (unsigned)YAML_MAX_ALIAS_BYTES);
        return at(ld, ERR_PARSE, mark, what);
    }
    if (n > YAML_MAX_NODES || ld->nodes > YAML_MAX_NODES - n) {
        snprintf(what, sizeof(what), "document has more than %d nodes (aliases included)",
                 YAML_MAX_NODES);
        return at(ld, ERR_PARSE, mark, what);
    }
    if (bytes > YAML_MAX_BYTES || ld->bytes > YAML_MAX_BYTES - bytes) {
        snprintf(what, sizeof(what),
                 "document expands to more than %u bytes (aliases included): refused",
                 (unsigned)YAML_MAX_BYTES);
        return at(ld, ERR_PARSE, mark, what);
    }
    ld->nodes += n;
    ld->bytes += bytes;
    if (alias) {
        ld->alias_nodes += n;
        ld->alias_bytes += bytes;
    }
    return ERR_OK;
}

static err_t depth_error(loader_t *ld, yaml_mark_t mark)
{
    char what[64];
    snprintf(what, sizeof(what), "nesting deeper than %d levels", YAML_MAX_DEPTH);
    return at(ld, ERR_PARSE, mark, what);
}

/* ------------------------------------------------------------------------------------------ */
/* Scalar resolution (go-yaml v2 resolve.go semantics)                                         */
/* ------------------------------------------------------------------------------------------ */

typedef enum {
    RES_STR,
    RES_NULL,
    RES_BOOL,
    RES_INT,
    RES_BIGINT,        /* an integer in (INT64_MAX, UINT64_MAX]: kept as a string, real set */
    RES_FLOAT,         /* finite */
    RES_FLOAT_SPECIAL, /* .inf, -.inf, .nan: kept as a string */
} res_kind_t;

typedef struct res_s {
    res_kind_t kind;
    int boolean;
    json_int_t integer;
    double real;
} res_t;

static const struct {
    const char *text;
    res_kind_t kind;
    int boolean;
} resolve_words[] = {
    {"y", RES_BOOL, 1},
    {"Y", RES_BOOL, 1},
    {"yes", RES_BOOL, 1},
    {"Yes", RES_BOOL, 1},
    {"YES", RES_BOOL, 1},
    {"true", RES_BOOL, 1},
    {"True", RES_BOOL, 1},
    {"TRUE", RES_BOOL, 1},
    {"on", RES_BOOL, 1},
    {"On", RES_BOOL, 1},
    {"ON", RES_BOOL, 1},
    {"n", RES_BOOL, 0},
    {"N", RES_BOOL, 0},
    {"no", RES_BOOL, 0},
    {"No", RES_BOOL, 0},
    {"NO", RES_BOOL, 0},
    {"false", RES_BOOL, 0},
    {"False", RES_BOOL, 0},
    {"FALSE", RES_BOOL, 0},
    {"off", RES_BOOL, 0},
    {"Off", RES_BOOL, 0},
    {"OFF", RES_BOOL, 0},
    {"~", RES_NULL, 0},
    {"null", RES_NULL, 0},
    {"Null", RES_NULL, 0},
    {"NULL", RES_NULL, 0},
    {".nan", RES_FLOAT_SPECIAL, 0},
    {".NaN", RES_FLOAT_SPECIAL, 0},
    {".NAN", RES_FLOAT_SPECIAL, 0},
    {".inf", RES_FLOAT_SPECIAL, 0},
    {".Inf", RES_FLOAT_SPECIAL, 0},
    {".INF", RES_FLOAT_SPECIAL, 0},
    {"+.inf", RES_FLOAT_SPECIAL, 0},
    {"+.Inf", RES_FLOAT_SPECIAL, 0},
    {"+.INF", RES_FLOAT_SPECIAL, 0},
    {"-.inf", RES_FLOAT_SPECIAL, 0},
    {"-.Inf", RES_FLOAT_SPECIAL, 0},
    {"-.INF", RES_FLOAT_SPECIAL, 0},
};

static int digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

/*
 * Go's strconv.ParseInt(s, 0, 64) and ParseUint(s, 0, 64) on text whose underscores are gone:
 * optional sign (ParseInt only), then 0x/0o/0b prefixes, a leading 0 for octal, or decimal.
 * Returns 0 and the value when one of them accepts the text.
 */
static int parse_go_int(const char *s, size_t len, res_t *out)
{
    size_t i = 0;
    int neg = 0, sign = 0;
    unsigned base = 10;
    uint64_t mag = 0;

    if (i < len && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        sign = 1;
        i++;
    }
    if (i + 1 < len && s[i] == '0') {
        char p = s[i + 1];
        if (p == 'x' || p == 'X')
            base = 16;
        else if (p == 'o' || p == 'O')
            base = 8;
        else if (p == 'b' || p == 'B')
            base = 2;
        else
            base = 8; /* "017": a leading zero means octal */
        i += base == 8 && p != 'o' && p != 'O' ? 1 : 2;
    }
    if (i == len)
        return -1;
    for (; i < len; i++) {
        unsigned d = (unsigned)digit_value(s[i]);
        if (d >= base)
            return -1;
        if (mag > (UINT64_MAX - d) / base)
            return -1; /* beyond uint64: both parsers refuse */
        mag = mag * base + d;
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1)
            return -1;
        out->kind = RES_INT;
        out->integer = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)mag;
        return 0;
    }
    if (mag <= (uint64_t)INT64_MAX) {
        out->kind = RES_INT;
        out->integer = (json_int_t)mag;
        return 0;
    }
    if (sign)
        return -1; /* ParseUint takes no sign */
    out->kind = RES_BIGINT;
    out->real = (double)mag; /* for !!float */
    return 0;
}

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int is_yaml_float(const char *s, size_t len)
{
    size_t i = 0, d;

    if (i < len && (s[i] == '+' || s[i] == '-'))
        i++;
    if (i < len && s[i] == '.') {
        i++;
        for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
    } else {
        for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
        if (i < len && s[i] == '.')
            for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
                ;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
            ;
        if (i == d)
            return 0;
    }
    return i == len;
}

/* strtod on text already checked by is_yaml_float (NUL-terminated). Like Go's ParseFloat, a
 * value too large for a double is refused (Go returns an error, so the scalar stays a string);
 * underflow to zero or a subnormal is accepted. The process never calls setlocale(), so the
 * decimal point is '.'. */
static int parse_float(const char *s, res_t *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(s, &end);
    if (*end != '\0' || isinf(d) || isnan(d))
        return -1;
    out->kind = RES_FLOAT;
    out->real = d;
    return 0;
}

/*
 * go-yaml v2 resolve() for a plain scalar: the first byte picks the candidates
 * ('+'/'-'/digit: number; one of "yYnNtTfFoO~." or the empty string: the word table above;
 * '.': a float such as ".5"), anything else is a string. Numbers lose their underscores first,
 * then try ParseInt/ParseUint with base prefixes, then the YAML float syntax. So "1_000" is 1000,
 * "0x1F" is 31, "010" is 8 (octal), but "08" and "09" are floats 8.0 and 9.0.
 * Returns ERR_NOMEM or ERR_OK.
 */
static err_t resolve_plain(const char *s, size_t len, res_t *out)
{
    char c;

    out->kind = RES_STR;
    if (len == 0) {
        out->kind = RES_NULL;
        return ERR_OK;
    }
    c = s[0];
    if (!strchr("+-0123456789yYnNtTfFoO~.", c) || c == '\0')
        return ERR_OK;
    for (size_t i = 0; i < sizeof(resolve_words) / sizeof(resolve_words[0]); i++) {
        if (strlen(resolve_words[i].text) == len && memcmp(resolve_words[i].text, s, len) == 0) {
            out->kind = resolve_words[i].kind;
            out->boolean = resolve_words[i].boolean;
            return ERR_OK;
        }
    }
    if (c != '.' && (c < '0' || c > '9') && c != '+' && c != '-')
        return ERR_OK;

    /* '.' texts go straight to ParseFloat; numbers drop their underscores first. */
    char *plain = malloc(len + 1);
    size_t n = 0;
    if (plain == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < len; i++)
        if (c == '.' || s[i] != '_')
            plain[n++] = s[i];
    plain[n] = '\0';
    if (c == '.') {
        if (is_yaml_float(plain, n))
            parse_float(plain, out);
    } else if (parse_go_int(plain, n, out) != 0 && is_yaml_float(plain, n)) {
        parse_float(plain, out);
    }
    free(plain);
    return ERR_OK;
}

static const char *short_tag(const char *tag)
{
    static const char prefix[] = "tag:yaml.org,2002:";
    if (strncmp(tag, prefix, sizeof(prefix) - 1) == 0)
        return tag + sizeof(prefix) - 1;
    return tag;
}

/* The json value of a scalar event; ERR_PARSE for a tag its text does not satisfy. */
static err_t scalar_value(loader_t *ld, const yaml_event_t *ev, json_t **out)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    res_t res = {RES_STR, 0, 0, 0.0};
    json_t *v = NULL;

    if (tag == NULL) {
        if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            resolve_plain(text, len, &res) != ERR_OK)
            return nomem(ld);
    } else if (!strcmp(tag, YAML_NULL_TAG) || !strcmp(tag, YAML_BOOL_TAG) ||
               !strcmp(tag, YAML_INT_TAG) || !strcmp(tag, YAML_FLOAT_TAG)) {
        res_kind_t want = !strcmp(tag, YAML_NULL_TAG)   ? RES_NULL
                          : !strcmp(tag, YAML_BOOL_TAG) ? RES_BOOL
                          : !strcmp(tag, YAML_INT_TAG)  ? RES_INT
                                                        : RES_FLOAT;
        if (resolve_plain(text, len, &res) != ERR_OK)
            return nomem(ld);
        if (want == RES_FLOAT && res.kind == RES_INT) {
            res.kind = RES_FLOAT; /* go-yaml: an int under !!float becomes a float */
            res.real = (double)res.integer;
        } else if (want == RES_FLOAT && res.kind == RES_BIGINT) {
            res.kind = RES_FLOAT; /* res.real holds the value */
        }
        int ok = res.kind == want || (want == RES_INT && res.kind == RES_BIGINT) ||
                 (want == RES_FLOAT && res.kind == RES_FLOAT_SPECIAL);
        if (!ok) {
            char what[256];
            static const char *const kind_tag[] = {"str", "null",  "bool", "int",
                                                   "int", "float", "float"};
            snprintf(what, sizeof(what), "cannot decode !!%s `%.*s%s` as a !!%s",
                     kind_tag[res.kind], (int)(len > KEY_QUOTE_MAX ? KEY_QUOTE_MAX : len), text,
                     len > KEY_QUOTE_MAX ? "..." : "", short_tag(tag));
            return at(ld, ERR_PARSE, ev->start_mark, what);
        }
    }
    /* !!str, !!binary, !!timestamp, "!" and unknown tags: the text as a string. */

    switch (res.kind) {
    case RES_NULL:
        v = json_null();
        break;
    case RES_BOOL:
        v = json_boolean(res.boolean);
        break;
    case RES_INT:
        v = json_integer(res.integer);
        break;
    case RES_FLOAT:
        v = json_real(res.real);
        break;
    case RES_STR:
    case RES_BIGINT:
    case RES_FLOAT_SPECIAL:
        v = json_stringn(text, len);
        break;
    }
    if (v == NULL)
        return nomem(ld);
    *out = v;
    return ERR_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Anchors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void anchors_clear(loader_t *ld)
{
    for (size_t i = 0; i < ld->nanchors; i++) {
        free(ld->anchors[i].name);
        free(ld->anchors[i].text);
        json_decref(ld->anchors[i].value);
    }
    ld->nanchors = 0;
}

/* Remember `value` (a new reference is taken) under `name`; a later anchor of the same name
 * shadows an earlier one, as YAML requires. */
static err_t anchor_add(loader_t *ld, const char *name, const node_t *nd, size_t nodes,
                        size_t bytes)
{
    anchor_t a = {NULL, NULL, nodes, bytes, nd->height, NULL, 0};
    const char *text = nd->text;
    size_t text_len = nd->text_len;

    if (util_grow((void **)&ld->anchors, &ld->anchors_cap, ld->nanchors + 1,
                  sizeof(*ld->anchors)) != ERR_OK)
        return nomem(ld);
    a.name = strdup(name);
    if (text != NULL) {
        a.text = dup_n(text, text_len);
        a.text_len = text_len;
    }
    if (a.name == NULL || (text != NULL && a.text == NULL)) {
        free(a.name);
        free(a.text);
        return nomem(ld);
    }
    a.value = json_incref(nd->value);
    ld->anchors[ld->nanchors++] = a;
    return ERR_OK;
}

static const anchor_t *anchor_find(const loader_t *ld, const char *name)
{
    for (size_t i = ld->nanchors; i > 0; i--)
        if (strcmp(ld->anchors[i - 1].name, name) == 0)
            return &ld->anchors[i - 1];
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Tree building                                                                               */
/* ------------------------------------------------------------------------------------------ */

static void frame_fini(frame_t *f)
{
    json_decref(f->node);
    json_decref(f->merges);
    free(f->key);
    free(f->anchor);
    memset(f, 0, sizeof(*f));
}

/* The string form of a scalar used as a mapping key (see the file comment). */
static err_t key_text(loader_t *ld, const node_t *nd, char **out)
{
    char buf[32];
    const char *s = buf;
    size_t n;

    switch (json_typeof(nd->value)) {
    case JSON_STRING:
        s = json_string_value(nd->value);
        n = json_string_length(nd->value);
        break;
    case JSON_INTEGER:
        n = (size_t)snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
                             json_integer_value(nd->value));
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        s = json_is_true(nd->value) ? "true" : "false";
        n = strlen(s);
        break;
    case JSON_REAL:
        s = nd->text;
        n = nd->text_len;
        break;
    case JSON_NULL:
        return at(ld, ERR_PARSE, nd->mark, "mapping key is null");
    default:
        return at(ld, ERR_PARSE, nd->mark, "mapping key must be a scalar");
    }
    if (s == NULL || memchr(s, '\0', n) != NULL)
        return at(ld, ERR_PARSE, nd->mark, "mapping key contains a NUL character");
    *out = dup_n(s, n);
    return *out == NULL ? nomem(ld) : ERR_OK;
}

static err_t add_merge(loader_t *ld, frame_t *f, json_t *v, yaml_mark_t mark)
{
    int ok = json_is_object(v);

    if (json_is_array(v)) {
        size_t i;
        json_t *item;
        ok = 1;
        json_array_foreach(v, i, item)
        {
            if (!json_is_object(item))
                ok = 0;
        }
    }
    if (!ok)
        return at(ld, ERR_PARSE, mark,
                  "the value of a merge key (<<) must be a mapping or a sequence of mappings");
    if (f->merges == NULL) {
        f->merges = json_array();
        if (f->merges == NULL)
            return nomem(ld);
    }
    if (json_is_object(v))
        return json_array_append(f->merges, v) ? nomem(ld) : ERR_OK;
    return json_array_extend(f->merges, v) ? nomem(ld) : ERR_OK;
}

/* Record a position for the marks table (yamlmark.h) when the caller asked for one. */
static err_t mark(loader_t *ld, const json_t *parent, const char *key, size_t index, yaml_mark_t m)
{
    yaml_pos_t pos = {m.line + 1 > INT32_MAX ? INT32_MAX : (int)m.line + 1,
                      m.column + 1 > INT32_MAX ? INT32_MAX : (int)m.column + 1};

    if (ld->marks == NULL)
        return ERR_OK;
    return yaml_marks_add(ld->marks, parent, key, index, pos) == ERR_OK ? ERR_OK : nomem(ld);
}

/* Put a finished node into its parent (or make it the document root); consumes nd->value. */
static err_t place(loader_t *ld, node_t *nd)
{
    frame_t *f;
    err_t rc = ERR_OK;

    if (ld->depth == 0) {
        ld->root = nd->value;
        return ERR_OK;
    }
    f = &ld->stack[ld->depth - 1];
    if (f->height < nd->height + 1)
        f->height = nd->height + 1;
    if (!f->is_map) {
        if (json_array_append_new(f->node, nd->value))
            return nomem(ld);
        return mark(ld, f->node, NULL, json_array_size(f->node) - 1, nd->mark);
    }
    if (f->key == NULL && !f->key_is_merge) {
        if (nd->is_merge_key) {
            f->key_is_merge = 1;
        } else {
            rc = key_text(ld, nd, &f->key);
            f->key_mark = nd->mark;
        }
        json_decref(nd->value);
        return rc;
    }
    if (f->key_is_merge) {
        f->key_is_merge = 0;
        rc = add_merge(ld, f, nd->value, nd->mark);
        json_decref(nd->value);
        return rc;
    }
    if (json_object_get(f->node, f->key) != NULL) {
        char what[160];
        size_t klen = strlen(f->key);
        snprintf(what, sizeof(what), "duplicate key \"%.*s%s\"",
                 (int)(klen > KEY_QUOTE_MAX ? KEY_QUOTE_MAX : klen), f->key,
                 klen > KEY_QUOTE_MAX ? "..." : "");
        json_decref(nd->value);
        return at(ld, ERR_PARSE, f->key_mark, what);
    }
    rc = json_object_set_new(f->node, f->key, nd->value) ? nomem(ld) : ERR_OK;
    if (rc == ERR_OK)
        rc = mark(ld, f->node, f->key, SIZE_MAX, f->key_mark);
    free(f->key);
    f->key = NULL;
    return rc;
}

/* Register the anchor (if any) of a finished node, then place it. Consumes nd->value. */
static err_t finish_node(loader_t *ld, node_t *nd, const char *anchor, size_t nodes, size_t bytes)
{
    if (anchor != NULL) {
        err_t rc = anchor_add(ld, anchor, nd, nodes, bytes);
        if (rc != ERR_OK) {
            json_decref(nd->value);
            return rc;
        }
    }
    return place(ld, nd);
}

static int is_merge_scalar(const yaml_event_t *ev)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    if (ev->data.scalar.length != 2 || memcmp(ev->data.scalar.value, "<<", 2) != 0)
        return 0;
    if (tag == NULL)
        return ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    return strcmp(tag, YAML_MERGE_TAG) == 0;
}

static err_t on_scalar(loader_t *ld, const yaml_event_t *ev)
{
    node_t nd = {
        NULL, (const char *)ev->data.scalar.value, ev->data.scalar.length, 0, ev->start_mark, 0};
    err_t rc = count_nodes(ld, 1, ev->data.scalar.length + 1, ev->start_mark, false);

    if (rc != ERR_OK)
        return rc;
    nd.is_merge_key = is_merge_scalar(ev);
    if (nd.is_merge_key) {
        nd.value = json_string("<<");
        if (nd.value == NULL)
            return nomem(ld);
    } else {
        rc = scalar_value(ld, ev, &nd.value);
        if (rc != ERR_OK)
            return rc;
    }
    return finish_node(ld, &nd, (const char *)ev->data.scalar.anchor, 1,
                       ev->data.scalar.length + 1);
}

static err_t on_alias(loader_t *ld, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    const anchor_t *a = anchor_find(ld, name);
    node_t nd = {NULL, NULL, 0, 0, ev->start_mark, 0};
    err_t rc;

    if (a == NULL) {
        char what[160];
        snprintf(what, sizeof(what), "unknown anchor \"%.*s\"", KEY_QUOTE_MAX, name);
        return at(ld, ERR_PARSE, ev->start_mark, what);
    }
    /* Counting the anchored node's size for every alias is what stops "billion laughs". */
    rc = count_nodes(ld, a->nodes, a->bytes, ev->start_mark, true);
    if (rc != ERR_OK)
        return rc;
    /* The copy lands at the current depth: it must not nest deeper than the limit either. */
    if (ld->depth + a->height > YAML_MAX_DEPTH)
        return depth_error(ld, ev->start_mark);
    nd.height = a->height;
    /* A copy keeps every document a tree: consumers may modify one place safely. */
    nd.value = json_deep_copy(a->value);
    if (nd.value == NULL)
        return nomem(ld);
    nd.text = a->text;
    nd.text_len = a->text_len;
    return place(ld, &nd);
}

static err_t on_start(loader_t *ld, const yaml_event_t *ev, int is_map)
{
    const yaml_char_t *anchor =
        is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
    frame_t *f;
    err_t rc;

    if (ld->depth > 0) {
        frame_t *top = &ld->stack[ld->depth - 1];
        if (top->is_map && top->key == NULL && !top->key_is_merge)
            return at(ld, ERR_PARSE, ev->start_mark, "mapping key must be a scalar");
    }
    if (ld->depth == YAML_MAX_DEPTH)
        return depth_error(ld, ev->start_mark);
    rc = count_nodes(ld, 1, 1, ev->start_mark, false);
    if (rc != ERR_OK)
        return rc;
    f = &ld->stack[ld->depth];
    memset(f, 0, sizeof(*f));
    f->is_map = is_map;
    f->height = 1;
    f->start = ev->start_mark;
    f->nodes_before = ld->nodes - 1;
    f->bytes_before = ld->bytes - 1;
    f->node = is_map ? json_object() : json_array();
    if (anchor != NULL)
        f->anchor = strdup((const char *)anchor);
    if (f->node == NULL || (anchor != NULL && f->anchor == NULL)) {
        frame_fini(f);
        return nomem(ld);
    }
    ld->depth++;
    return mark(ld, f->node, NULL, SIZE_MAX, ev->start_mark);
}

/* Merge sources fill in keys the mapping does not have; earlier sources win. */
static err_t apply_merges(loader_t *ld, frame_t *f)
{
    size_t i;
    json_t *src;

    json_array_foreach(f->merges, i, src)
    {
        const char *key;
        json_t *value;
        json_object_foreach(src, key, value)
        {
            if (json_object_get(f->node, key) == NULL && json_object_set(f->node, key, value))
                return nomem(ld);
        }
    }
    return ERR_OK;
}

static err_t on_end(loader_t *ld)
{
    frame_t *f = &ld->stack[ld->depth - 1];
    node_t nd = {NULL, NULL, 0, 0, f->start, 0};
    char *anchor;
    size_t nodes, bytes;
    err_t rc;

    if (f->merges != NULL) {
        rc = apply_merges(ld, f);
        if (rc != ERR_OK)
            return rc;
    }
    nd.value = f->node;
    nd.height = f->height;
    f->node = NULL;
    anchor = f->anchor;
    f->anchor = NULL;
    nodes = ld->nodes - f->nodes_before;
    bytes = ld->bytes - f->bytes_before;
    frame_fini(f);
    ld->depth--;
    rc = finish_node(ld, &nd, anchor, nodes, bytes);
    free(anchor);
    return rc;
}

static err_t on_document_end(loader_t *ld, size_t index, int line)
{
    json_t *root = ld->root;
    err_t rc = ERR_OK;

    yaml_marks_t *marks = ld->marks;

    ld->root = NULL;
    anchors_clear(ld);
    ld->nodes = 0;
    ld->alias_nodes = 0;
    ld->alias_bytes = 0;
    ld->bytes = 0;
    if (ld->mcb != NULL) {
        ld->marks = yaml_marks_new();
        if (ld->marks == NULL)
            rc = nomem(ld);
    }
    if (rc == ERR_OK && root != NULL && !json_is_null(root)) {
        if (ld->mcb != NULL) {
            rc = ld->mcb(ld->ctx, index, line, root, marks);
            marks = NULL; /* the callback's */
        } else {
            rc = ld->cb(ld->ctx, index, line, root);
        }
    }
    yaml_marks_free(marks);
    json_decref(root);
    return rc;
}

/* Move (line, col) over n bytes: a line break is LF, CR or CR LF; a column is one character
 * (UTF-8 continuation bytes do not count), as in libyaml's marks. */
static void advance(const unsigned char *p, size_t n, size_t *line, size_t *col)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || p[i] == '\r') {
            if (p[i] == '\r' && i + 1 < n && p[i + 1] == '\n')
                i++;
            (*line)++;
            *col = 0;
        } else if ((p[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static int on_read(void *data, unsigned char *buffer, size_t size, size_t *size_read)
{
    input_t *in = data;
    int next = in->cur ^ 1;
    size_t n = fread(in->chunk[next], 1, size < READ_CHUNK ? size : READ_CHUNK, in->f);

    *size_read = 0;
    if (n == 0) {
        if (ferror(in->f)) {
            in->io_errno = errno != 0 ? errno : EIO;
            return 0;
        }
        return 1; /* end of file */
    }
    in->chunk_len[next] = n;
    in->chunk_off[next] = in->total;
    in->chunk_line[next] = in->line;
    in->chunk_col[next] = in->col;
    in->cur = next;
    memcpy(buffer, in->chunk[next], n);
    advance(buffer, n, &in->line, &in->col);
    in->total += n;
    *size_read = n;
    return 1;
}

/* 0-based line and column of byte `off` of the input; -1 when no longer known. */
static int input_position(const input_t *in, size_t off, size_t *line, size_t *col)
{
    *line = *col = 0;
    if (in->f == NULL) {
        advance(in->str, off < in->str_len ? off : in->str_len, line, col);
        return 0;
    }
    for (int k = 0; k < 2; k++) {
        int c = k == 0 ? in->cur ^ 1 : in->cur; /* older chunk first */
        if (in->chunk_len[c] > 0 && off >= in->chunk_off[c] &&
            off < in->chunk_off[c] + in->chunk_len[c]) {
            *line = in->chunk_line[c];
            *col = in->chunk_col[c];
            advance(in->chunk[c], off - in->chunk_off[c], line, col);
            return 0;
        }
    }
    if (off == in->total) {
        *line = in->line;
        *col = in->col;
        return 0;
    }
    return -1;
}

static err_t parser_error(loader_t *ld)
{
    const yaml_parser_t *p = &ld->parser;
    const char *problem = p->problem != NULL ? p->problem : "malformed YAML";

    switch (p->error) {
    case YAML_MEMORY_ERROR:
        return nomem(ld);
    case YAML_READER_ERROR: {
        size_t line, col;
        if (ld->in.io_errno != 0)
            return err_set(ld->msg, ERR_IO, "reading YAML: %s", strerror(ld->in.io_errno));
        if (input_position(&ld->in, p->problem_offset, &line, &col) != 0)
            return err_set(ld->msg, ERR_PARSE, "byte %zu: %s", p->problem_offset, problem);
        return err_set(ld->msg, ERR_PARSE, "line %zu, column %zu: %s (byte %zu)", line + 1, col + 1,
                       problem, p->problem_offset);
    }
    default:
        /* libyaml's words for a tab where YAML wants spaces say nothing of tabs. */
        if (p->error == YAML_SCANNER_ERROR && p->buffer.pointer != NULL &&
            p->buffer.pointer < p->buffer.last && *p->buffer.pointer == '\t' &&
            p->problem_mark.line == p->mark.line && p->problem_mark.column == p->mark.column)
            return err_set(ld->msg, ERR_PARSE,
                           "line %zu, column %zu: a tab character indents this line: YAML "
                           "indents with spaces only",
                           p->problem_mark.line + 1, p->problem_mark.column + 1);
        if (p->context != NULL)
            return err_set(ld->msg, ERR_PARSE,
                           "line %zu, column %zu: %s (%s at line %zu, column %zu)",
                           p->problem_mark.line + 1, p->problem_mark.column + 1, problem,
                           p->context, p->context_mark.line + 1, p->context_mark.column + 1);
        return err_set(ld->msg, ERR_PARSE, "line %zu, column %zu: %s", p->problem_mark.line + 1,
                       p->problem_mark.column + 1, problem);
    }
}

static err_t run(loader_t *ld)
{
    size_t index = 0;
    int line = 1;

    for (;;) {
        yaml_event_t ev;
        err_t rc = ERR_OK;
        int done = 0;

        if (!yaml_parser_parse(&ld->parser, &ev))
            return parser_error(ld);
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            line = ev.start_mark.line + 1 > INT32_MAX ? INT32_MAX : (int)ev.start_mark.line + 1;
            break;
        case YAML_DOCUMENT_END_EVENT:
            rc = on_document_end(ld, index++, line);
            break;
        case YAML_SCALAR_EVENT:
            rc = on_scalar(ld, &ev);
            break;
        case YAML_ALIAS_EVENT:
            rc = on_alias(ld, &ev);
            break;
        case YAML_SEQUENCE_START_EVENT:
            rc = on_start(ld, &ev, 0);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = on_start(ld, &ev, 1);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            rc = on_end(ld);
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        if (rc != ERR_OK)
            return rc;
        if (done)
            return ERR_OK;
    }
}

static loader_t *loader_new(yaml_doc_cb cb, void *ctx, err_msg_t *msg)
{
    loader_t *ld = calloc(1, sizeof(*ld));
    if (ld == NULL)
        return NULL;
    if (!yaml_parser_initialize(&ld->parser)) {
        free(ld);
        return NULL;
    }
    ld->cb = cb;
    ld->ctx = ctx;
    ld->msg = msg;
    ld->in.cur = 1;
    return ld;
}

static void loader_free(loader_t *ld)
{
    while (ld->depth > 0)
        frame_fini(&ld->stack[--ld->depth]);
    json_decref(ld->root);
    yaml_marks_free(ld->marks);
    anchors_clear(ld);
    free(ld->anchors);
    yaml_parser_delete(&ld->parser);
    free(ld);
}

err_t yaml_load_file(FILE *f, yaml_doc_cb cb, void *ctx, err_msg_t *msg)
{
    loader_t *ld;
    err_t rc;

    if (f == NULL || cb == NULL)
        return err_set(msg, ERR_INVALID, "yaml_load_file: no input or callback");
    ld = loader_new(cb, ctx, msg);
    if (ld == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory while loading YAML");
    /* Our own read handler (rather than yaml_parser_set_input_file) keeps the recent bytes for
     * error positions; either way the file is read in chunks, never whole. */
    ld->in.f = f;
    yaml_parser_set_input(&ld->parser, on_read, &ld->in);
    rc = run(ld);
    loader_free(ld);
    return rc;
}

err_t yaml_load_file_marks(FILE *f, yaml_doc_marks_cb cb, void *ctx, err_msg_t *msg)
{
    loader_t *ld;
    err_t rc;

    if (f == NULL || cb == NULL)
        return err_set(msg, ERR_INVALID, "yaml_load_file_marks: no input or callback");
    ld = loader_new(NULL, ctx, msg);
    if (ld == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory while loading YAML");
    ld->mcb = cb;
    ld->marks = yaml_marks_new();
    if (ld->marks == NULL) {
        loader_free(ld);
        return err_set(msg, ERR_NOMEM, "out of memory while loading YAML");
    }
    ld->in.f = f;
    yaml_parser_set_input(&ld->parser, on_read, &ld->in);
    rc = run(ld);
    loader_free(ld);
    return rc;
}

err_t yaml_load_string(const char *s, size_t len, yaml_doc_cb cb, void *ctx, err_msg_t *msg)
{
    loader_t *ld;
    err_t rc;

    if ((s == NULL && len > 0) || cb == NULL)
        return err_set(msg, ERR_INVALID, "yaml_load_string: no input or callback");
    ld = loader_new(cb, ctx, msg);
    if (ld == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory while loading YAML");
    ld->in.str = (const unsigned char *)(s ? s : "");
    ld->in.str_len = len;
    yaml_parser_set_input_string(&ld->parser, ld->in.str, len);
    rc = run(ld);
    loader_free(ld);
    return rc;
}
