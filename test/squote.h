/* squote -- JSON written with single quotes in tests: {'kind':'Job'} for {"kind":"Job"}. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_SQUOTE_H
#define SLUICE_TEST_SQUOTE_H

#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* A copy of `text` with every ' turned into " (caller frees). */
static inline char *squote(const char *text)
{
    char *s = strdup(text);

    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    return s;
}

/* `text`, single-quoted JSON, parsed: a new reference. The test fails when it is not JSON. */
static inline json_t *squote_json(const char *text)
{
    char *s = squote(text);
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);

    if (j == NULL)
        ck_abort_msg("bad test JSON: %s: %s", e.text, s);
    free(s);
    return j;
}

#endif
