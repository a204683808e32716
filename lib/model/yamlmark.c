/* yamlmark -- where each field of a loaded YAML (or JSON) document was written: file positions
 * by field path. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/yamlmark.h"

#include "util/grow.h"
#include "util/hmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One hash map from "<parent address>/<key>" (or "<parent address>[<index>]", or "<address>" for
 * a collection's own start) to an index into the positions array. Addresses are those of the
 * jansson collections of the tree, which live as long as the tree does; the caller keeps both
 * together.
 */
struct yaml_marks_s {
    util_hmap_t map;
    yaml_pos_t *pos; /* owned */
    size_t len, cap;
};

yaml_marks_t *yaml_marks_new(void)
{
    yaml_marks_t *m = calloc(1, sizeof(*m));

    if (m != NULL)
        util_hmap_init(&m->map, 1);
    return m;
}

void yaml_marks_free(yaml_marks_t *m)
{
    if (m == NULL)
        return;
    util_hmap_fini(&m->map);
    free(m->pos);
    free(m);
}

/* The map key of a member, item or node: NULL when it does not fit (a key over 4 KiB: such a
 * member simply has no position of its own). */
static const char *slot_key(char *buf, size_t size, const json_t *parent, const char *key,
                            size_t index)
{
    int n;

    if (key != NULL)
        n = snprintf(buf, size, "%p/%s", (const void *)parent, key);
    else if (index != SIZE_MAX)
        n = snprintf(buf, size, "%p[%zu]", (const void *)parent, index);
    else
        n = snprintf(buf, size, "%p", (const void *)parent);
    return n < 0 || (size_t)n >= size ? NULL : buf;
}

err_t yaml_marks_add(yaml_marks_t *m, const json_t *parent, const char *key, size_t index,
                     yaml_pos_t pos)
{
    char buf[4200];
    const char *k = slot_key(buf, sizeof(buf), parent, key, index);

    if (k == NULL)
        return ERR_OK;
    if (util_grow((void **)&m->pos, &m->cap, m->len + 1, sizeof(*m->pos)) != ERR_OK)
        return ERR_NOMEM;
    if (util_hmap_put_index(&m->map, k, m->len) != ERR_OK)
        return ERR_NOMEM;
    m->pos[m->len++] = pos;
    return ERR_OK;
}

static bool lookup(const yaml_marks_t *m, const json_t *parent, const char *key, size_t index,
                   yaml_pos_t *out)
{
    char buf[4200];
    const char *k = slot_key(buf, sizeof(buf), parent, key, index);
    size_t i;

    if (k == NULL || !util_hmap_get_index(&m->map, k, &i))
        return false;
    *out = m->pos[i];
    return true;
}

/* Is s[0..n) a decimal index? Its value into *out. */
static bool parse_index(const char *s, size_t n, size_t *out)
{
    size_t v = 0;

    if (n == 0 || n > 9)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* Step from `cur` over the segment s[0..n): a member of an object or an item of an array. */
static const json_t *step(const yaml_marks_t *m, const json_t *cur, const char *s, size_t n,
                          yaml_pos_t *pos)
{
    char key[1024];
    size_t index;
    const json_t *child;

    if (json_is_array(cur)) {
        if (!parse_index(s, n, &index) || index >= json_array_size(cur))
            return NULL;
        lookup(m, cur, NULL, index, pos);
        return json_array_get(cur, index);
    }
    if (!json_is_object(cur) || n >= sizeof(key))
        return NULL;
    memcpy(key, s, n);
    key[n] = '\0';
    child = json_object_get(cur, key);
    if (child != NULL)
        lookup(m, cur, key, SIZE_MAX, pos);
    return child;
}

bool yaml_marks_find(const yaml_marks_t *m, const json_t *node, const char *path, yaml_pos_t *out)
{
    yaml_pos_t pos = {0, 0};
    const json_t *cur = node;
    const char *p = path;

    if (m == NULL || node == NULL)
        return false;
    lookup(m, node, NULL, SIZE_MAX, &pos);
    while (cur != NULL && *p != '\0') {
        const json_t *next = NULL;

        if (*p == '[') {
            const char *end = strchr(p, ']');
            if (end == NULL)
                break;
            next = step(m, cur, p + 1, (size_t)(end - p - 1), &pos);
            p = end + 1;
        } else {
            /* A dotted segment: the longest run up to a '.' boundary that names a member, so a
             * key holding dots ("nvidia.com/gpu") is found as one segment. */
            size_t run, n;
            if (*p == '.')
                p++;
            run = strcspn(p, "[");
            for (n = run; n > 0 && next == NULL; n--) {
                if (n < run && p[n] != '.')
                    continue;
                next = step(m, cur, p, n, &pos);
                if (next != NULL)
                    p += n;
            }
        }
        cur = next;
    }
    if (pos.line <= 0)
        return false;
    *out = pos;
    return true;
}
