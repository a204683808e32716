/* intern -- shared, reference-counted copies of strings that many objects repeat. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/intern.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct intern_s {
    size_t refs;
    char s[]; /* the text; the map's key borrows it */
} intern_t;

static intern_t *of(const char *s)
{
    return (intern_t *)(void *)(s - offsetof(intern_t, s));
}

void util_intern_init(util_intern_t *t)
{
    util_hmap_init_borrowed(&t->map, 0);
}

void util_intern_fini(util_intern_t *t)
{
    void *e;

    for (size_t pos = 0; util_hmap_next(&t->map, &pos, NULL, &e);)
        free(e);
    util_hmap_fini(&t->map);
}

const char *util_intern(util_intern_t *t, const char *s)
{
    intern_t *e;
    size_t n;

    if (s == NULL)
        return NULL;
    e = util_hmap_get(&t->map, s);
    if (e != NULL) {
        e->refs++;
        return e->s;
    }
    n = strlen(s);
    e = malloc(sizeof(*e) + n + 1);
    if (e == NULL)
        return NULL;
    e->refs = 1;
    memcpy(e->s, s, n + 1);
    if (util_hmap_put(&t->map, e->s, e, NULL) != ERR_OK) {
        free(e);
        return NULL;
    }
    return e->s;
}

void util_intern_drop(util_intern_t *t, const char *s)
{
    intern_t *e;

    if (s == NULL)
        return;
    e = of(s);
    if (--e->refs == 0) {
        util_hmap_del(&t->map, e->s);
        free(e);
    }
}

size_t util_intern_count(const util_intern_t *t)
{
    return util_hmap_len(&t->map);
}
