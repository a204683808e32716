/* lines -- split a byte stream into newline-terminated lines with a bounded buffer. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_LINES_H
#define SLUICE_KUBE_LINES_H

#include "util/err.h"

#include <stdbool.h>
#include <stddef.h>

/* Called once per complete line (without the '\n' or a trailing '\r'; `line` is NUL-terminated
 * and borrowed for the call). `too_long` is set, with len 0, once for a line that exceeded the
 * bound and was dropped. Returning non-zero stops kube_lines_feed(), which returns that value. */
typedef int (*kube_lines_cb)(void *ctx, const char *line, size_t len, bool too_long);

/* Accumulates a partial line between feeds. The buffer never grows past `max` bytes: a longer
 * line is discarded up to its newline and reported once with too_long. */
typedef struct kube_lines_s {
    char *buf;  /* owned */
    size_t len; /* bytes of the current partial line */
    size_t cap;
    size_t max;    /* longest line kept */
    bool skipping; /* inside an over-long line, dropping bytes until '\n' */
} kube_lines_t;

/* Empty splitter with a line bound of `max` bytes. */
void kube_lines_init(kube_lines_t *l, size_t max);

/* Free the buffer; the splitter may be re-initialised. */
void kube_lines_fini(kube_lines_t *l);

/* Discard any partial line (a new stream starts). */
void kube_lines_reset(kube_lines_t *l);

/* Feed `len` bytes; calls `cb` for every line completed. Returns 0, the callback's non-zero
 * value, or -1 when the buffer cannot grow (out of memory; the partial line is dropped). */
int kube_lines_feed(kube_lines_t *l, const char *data, size_t len, kube_lines_cb cb, void *ctx);

#endif
