/* base64 -- standard base64 (RFC 4648 section 4) text from bytes and back. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_BASE64_H
#define SLUICE_BASE64_H

#include "util/err.h"

#include <stddef.h>

/* The padded base64 text of `len` bytes at `data`, without line breaks, into *out (NUL-terminated,
 * caller frees). ERR_NOMEM (also for a length whose text would not fit in size_t) leaves *out
 * untouched. */
err_t base64_encode(const void *data, size_t len, char **out);

/* Decode `len` bytes of base64 text at `s` as Kubernetes' kubeconfig and Secret data are written:
 * standard alphabet, padding optional, ASCII whitespace (space, tab, CR, LF) ignored anywhere.
 * The bytes go to *out (caller frees; a NUL follows them so that PEM text can be used as a
 * string) and their count to *out_len. ERR_PARSE with the reason in `msg` ("bad base64
 * character at offset N", "bad base64 length", "bad base64 padding"), or ERR_NOMEM; *out and
 * *out_len are untouched on failure. */
err_t base64_decode(const char *s, size_t len, unsigned char **out, size_t *out_len,
                    err_msg_t *msg);

#endif
