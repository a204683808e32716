/* suggest -- "did you mean X": the closest of a set of known words to a misspelt one. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

/*
 * Optimal string alignment distance (Damerau-Levenshtein without re-editing a swapped pair),
 * doubled so that a case-only difference can cost half an edit. Three rows of the table suffice;
 * words are bounded by SUGGEST_MAX_LEN, so the rows live on the stack.
 */
static size_t distance(const char *word, const char *known, size_t limit)
{
    size_t n = strlen(word), m = strlen(known);
    size_t rows[3][SUGGEST_MAX_LEN + 1];
    size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    size_t prev_min = 0;

    if (n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN)
        return SIZE_MAX;
    /* Each byte of length difference is a whole edit. */
    if ((n > m ? n - m : m - n) > limit / 2)
        return SIZE_MAX;
    for (size_t j = 0; j <= m; j++)
        prev[j] = 2 * j;
    for (size_t i = 1; i <= n; i++) {
        size_t cur_min;

        cur[0] = 2 * i;
        cur_min = cur[0];
        for (size_t j = 1; j <= m; j++) {
            unsigned char a = (unsigned char)word[i - 1], b = (unsigned char)known[j - 1];
            size_t sub = a == b ? 0 : tolower(a) == tolower(b) ? 1 : 2;
            size_t best = prev[j - 1] + sub;
            if (prev[j] + 2 < best)
                best = prev[j] + 2;
            if (cur[j - 1] + 2 < best)
                best = cur[j - 1] + 2;
            if (i > 1 && j > 1 && tolower(a) == tolower((unsigned char)known[j - 2]) &&
                tolower((unsigned char)word[i - 2]) == tolower(b) && prev2[j - 2] + 2 < best)
                best = prev2[j - 2] + 2;
            cur[j] = best;
            if (best < cur_min)
                cur_min = best;
        }
        /* A cell is at least the least of the two rows above it: once two rows are past the
         * limit, so is the distance. */
        if (i > 1 && cur_min > limit && prev_min > limit)
            return SIZE_MAX;
        prev_min = cur_min;
        size_t *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[m];
}

size_t suggest_distance(const char *word, const char *known)
{
    return distance(word, known, SIZE_MAX - 1);
}

/* Half edits: two edits at most. */
#define CLOSE_MAX 4

/* Is distance `d` between `word` and `known` close enough to suggest? */
static bool close_at(size_t d, const char *word, const char *known)
{
    size_t shorter = strlen(word) < strlen(known) ? strlen(word) : strlen(known);

    /* d counts half edits: at most two edits, and fewer edits than half the shorter length. */
    return d > 0 && d <= CLOSE_MAX && d < shorter;
}

bool suggest_close(const char *word, const char *known)
{
    return close_at(distance(word, known, CLOSE_MAX), word, known);
}

void suggest_init(suggest_t *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->dist = SIZE_MAX;
}

void suggest_offer(suggest_t *s, const char *known)
{
    size_t d;

    if (known == NULL)
        return;
    d = distance(s->word, known, CLOSE_MAX);
    if (close_at(d, s->word, known) && d < s->dist) {
        s->best = known;
        s->dist = d;
    }
}

const char *suggest_pick(const char *word, const char *const *known)
{
    suggest_t s;

    suggest_init(&s, word);
    for (size_t i = 0; known[i] != NULL; i++)
        suggest_offer(&s, known[i]);
    return s.best;
}
