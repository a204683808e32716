/* err -- error codes and human-readable error messages shared by every module. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_ERR_H
#define SLUICE_ERR_H

#include <stddef.h>

/* One list feeds the enum and err_str(); add new codes at the end. */
#define ERR_MAP(XX)                                                                                \
    XX(OK, "success")                                                                              \
    XX(NOMEM, "out of memory")                                                                     \
    XX(INVALID, "invalid argument")                                                                \
    XX(PARSE, "malformed input")                                                                   \
    XX(NOT_FOUND, "not found")                                                                     \
    XX(CONFLICT, "conflict")                                                                       \
    XX(IO, "i/o error")                                                                            \
    XX(OVERFLOW, "value out of range")                                                             \
    XX(EXISTS, "already exists")                                                                   \
    XX(UNSUPPORTED, "not supported")                                                               \
    XX(TIMEOUT, "timed out")                                                                       \
    XX(GONE, "gone")                                                                               \
    XX(TLS, "tls error")                                                                           \
    XX(HTTP, "http error")

typedef enum {
#define XX(name, text) ERR_##name,
    ERR_MAP(XX)
#undef XX
        ERR__COUNT
} err_t;

#define ERR_MSG_LEN 512

/* Human-readable detail for an error; filled by err_set(). */
typedef struct err_msg_s {
    char text[ERR_MSG_LEN];
} err_msg_t;

/* Static text describing `code` ("unknown error" for values out of range). */
const char *err_str(err_t code);

/* Format detail into `msg` (ignored when NULL) and return `code`. */
err_t err_set(err_msg_t *msg, err_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the existing text of `msg` with a formatted string (e.g. a field path); returns `code`. */
err_t err_prefix(err_msg_t *msg, err_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
