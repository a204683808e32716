/* intern -- shared, reference-counted copies of strings that many objects repeat. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/intern.h"

#include "util/hmap.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct intern_s {
    size_t refs;
    char s[]; /* the text; the map's key borrows it */
} intern_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static util_hmap_t table;
static int table_ready;

static intern_t *of(const char *s)
{
    return (intern_t *)(void *)(s - offsetof(intern_t, s));
}

const char *util_intern(const char *s)
{
    intern_t *e;
    size_t n;

    if (s == NULL)
        return NULL;
    pthread_mutex_lock(&lock);
    if (!table_ready) {
        util_hmap_init_borrowed(&table, 0);
        table_ready = 1;
    }
    e = util_hmap_get(&table, s);
    if (e != NULL) {
        e->refs++;
        pthread_mutex_unlock(&lock);
        return e->s;
    }
    n = strlen(s);
    e = malloc(sizeof(*e) + n + 1);
    if (e != NULL) {
        e->refs = 1;
        memcpy(e->s, s, n + 1);
        if (util_hmap_put(&table, e->s, e, NULL) != ERR_OK) {
            free(e);
            e = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    return e != NULL ? e->s : NULL;
}

void util_intern_drop(const char *s)
{
    intern_t *e;

    if (s == NULL)
        return;
    e = of(s);
    pthread_mutex_lock(&lock);
    if (--e->refs == 0) {
        util_hmap_del(&table, e->s);
        free(e);
        if (util_hmap_len(&table) == 0) {
            util_hmap_fini(&table); /* nothing left behind when every user is gone */
            table_ready = 0;
        }
    }
    pthread_mutex_unlock(&lock);
}

size_t util_intern_count(void)
{
    size_t n;

    pthread_mutex_lock(&lock);
    n = table_ready ? util_hmap_len(&table) : 0;
    pthread_mutex_unlock(&lock);
    return n;
}
