/* problems -- what is wrong with the operator's surroundings right now, said once and loudly. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/problems.h"

#include "ctrl/cond.h"
#include "util/grow.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBLEM_TEXT_MAX 768

typedef struct problem_s {
    char *key;  /* owned */
    char *text; /* owned */
    uint64_t since_ms;
    uint64_t logged_ms;
    uint64_t repeats; /* occurrences since the last line */
} problem_t;

struct problems_s {
    problem_t *items; /* owned, oldest first */
    size_t len, cap;
    problems_log_fn log;
    void *log_data;
    uint64_t repeat_ms;
};

problems_t *problems_new(problems_log_fn log, void *data, uint64_t repeat_ms)
{
    problems_t *p = calloc(1, sizeof(*p));

    if (p == NULL)
        return NULL;
    p->log = log;
    p->log_data = data;
    p->repeat_ms = repeat_ms;
    return p;
}

void problems_free(problems_t *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->len; i++) {
        free(p->items[i].key);
        free(p->items[i].text);
    }
    free(p->items);
    free(p);
}

static void say(problems_t *p, int level, const char *text)
{
    if (p->log != NULL)
        p->log(p->log_data, level, text);
}

static problem_t *find(const problems_t *p, const char *key)
{
    for (size_t i = 0; i < p->len; i++)
        if (strcmp(p->items[i].key, key) == 0)
            return &p->items[i];
    return NULL;
}

/* A new entry at the end, or NULL on out-of-memory. */
static problem_t *add(problems_t *p, const char *key, const char *text, uint64_t now_ms)
{
    problem_t *e;

    if (util_grow((void **)&p->items, &p->cap, p->len + 1, sizeof(*p->items)) != ERR_OK)
        return NULL;
    e = &p->items[p->len];
    e->key = strdup(key);
    e->text = strdup(text);
    if (e->key == NULL || e->text == NULL) {
        free(e->key);
        free(e->text);
        return NULL;
    }
    e->since_ms = e->logged_ms = now_ms;
    e->repeats = 0;
    p->len++;
    return e;
}

void problems_set(problems_t *p, const char *key, uint64_t now_ms, const char *fmt, ...)
{
    char text[PROBLEM_TEXT_MAX], line[PROBLEM_TEXT_MAX + 96];
    problem_t *e;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    e = find(p, key);
    if (e == NULL) {
        add(p, key, text, now_ms); /* on OOM: logged every time, which is loud, not silent */
        say(p, 0, text);
        return;
    }
    /* Texts that differ only in numbers (a port, "after 3 ms", a count) are the same problem:
     * repeating them at once would defeat the rate limit. */
    if (!cond_same_but_numbers(e->text, text)) {
        char *copy = strdup(text);
        if (copy != NULL) {
            free(e->text);
            e->text = copy;
        }
        e->logged_ms = now_ms;
        e->repeats = 0;
        say(p, 0, text);
        return;
    }
    e->repeats++;
    if (now_ms - e->logged_ms < p->repeat_ms)
        return;
    snprintf(line, sizeof(line), "%s (still, for %llu s; %llu more times since the last report)",
             text, (unsigned long long)((now_ms - e->since_ms) / 1000),
             (unsigned long long)e->repeats);
    e->logged_ms = now_ms;
    e->repeats = 0;
    say(p, 0, line);
}

static void drop(problems_t *p, size_t i, uint64_t now_ms)
{
    char line[PROBLEM_TEXT_MAX + 64];

    snprintf(line, sizeof(line), "resolved after %llu s: %s",
             (unsigned long long)((now_ms - p->items[i].since_ms) / 1000), p->items[i].text);
    say(p, 1, line);
    free(p->items[i].key);
    free(p->items[i].text);
    memmove(&p->items[i], &p->items[i + 1], (p->len - i - 1) * sizeof(p->items[0]));
    p->len--;
}

void problems_clear(problems_t *p, const char *key, uint64_t now_ms)
{
    problem_t *e = find(p, key);

    if (e != NULL)
        drop(p, (size_t)(e - p->items), now_ms);
}

void problems_clear_prefix(problems_t *p, const char *prefix, uint64_t now_ms)
{
    size_t n = strlen(prefix);

    for (size_t i = 0; i < p->len;) {
        if (strncmp(p->items[i].key, prefix, n) == 0)
            drop(p, i, now_ms);
        else
            i++;
    }
}

bool problems_has(const problems_t *p, const char *key)
{
    return find(p, key) != NULL;
}

size_t problems_count(const problems_t *p)
{
    return p->len;
}

size_t problems_describe(const problems_t *p, const char *indent, char *buf, size_t n)
{
    size_t used = strlen(buf), written = 0;

    for (size_t i = 0; i < p->len && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s\n", indent, p->items[i].text);
        if (w < 0)
            break;
        used += (size_t)w < n - used ? (size_t)w : n - used - 1;
        written++;
    }
    return written;
}
