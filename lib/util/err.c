/* err -- error codes and human-readable error messages shared by every module. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const err_texts[] = {
#define XX(name, text) text,
    ERR_MAP(XX)
#undef XX
};

const char *err_str(err_t code)
{
    if ((int)code < 0 || code >= ERR__COUNT)
        return "unknown error";
    return err_texts[code];
}

err_t err_set(err_msg_t *msg, err_t code, const char *fmt, ...)
{
    va_list ap;

    if (msg == NULL)
        return code;
    va_start(ap, fmt);
    vsnprintf(msg->text, sizeof(msg->text), fmt, ap);
    va_end(ap);
    return code;
}

err_t err_prefix(err_msg_t *msg, err_t code, const char *fmt, ...)
{
    char old[ERR_MSG_LEN];
    size_t head_len, old_len;
    va_list ap;
    int n;

    if (msg == NULL)
        return code;
    memcpy(old, msg->text, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    va_start(ap, fmt);
    n = vsnprintf(msg->text, sizeof(msg->text), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    head_len = (size_t)n < sizeof(msg->text) - 1 ? (size_t)n : sizeof(msg->text) - 1;
    old_len = strlen(old);
    if (old_len > sizeof(msg->text) - 1 - head_len)
        old_len = sizeof(msg->text) - 1 - head_len;
    memcpy(msg->text + head_len, old, old_len);
    msg->text[head_len + old_len] = '\0';
    return code;
}
