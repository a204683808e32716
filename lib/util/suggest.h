/* suggest -- "did you mean X": the closest of a set of known words to a misspelt one. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SUGGEST_H
#define SLUICE_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>

/* Candidates longer than this are never suggested (and never cost more than a bounded table). */
#define SUGGEST_MAX_LEN 64

/*
 * The edit distance from `word` to `known`: insertions, deletions, substitutions and swaps of
 * two neighbouring characters each cost 2, a difference of letter case alone costs 1 (so
 * "cohortname" is closer to "cohortName" than any real typo). SIZE_MAX when either is longer than
 * SUGGEST_MAX_LEN.
 */
size_t suggest_distance(const char *word, const char *known);

/* Is `known` close enough to `word` to be offered as what was meant? At most two edits, and
 * fewer than half of the shorter word's length (so "a" never suggests "b"). */
bool suggest_close(const char *word, const char *known);

/* A running search for the best suggestion: init with the misspelt word, offer every known word,
 * then read `best` (borrowed from the offered words; NULL when none was close). */
typedef struct suggest_s {
    const char *word; /* borrowed */
    const char *best; /* borrowed: the closest word offered so far, or NULL */
    size_t dist;
} suggest_t;

/* Start a search for `word` (borrowed). */
void suggest_init(suggest_t *s, const char *word);

/* Offer `known` (borrowed; it must outlive the search): it becomes `best` when it is close and
 * strictly closer than the best so far (ties keep the first offered). */
void suggest_offer(suggest_t *s, const char *known);

/* The closest of the NULL-terminated `known` words to `word`, or NULL. */
const char *suggest_pick(const char *word, const char *const *known);

#endif
