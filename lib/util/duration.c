/* duration -- Go duration text ("1h30m", "1.5s", "250ms") as exact nanoseconds or milliseconds. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Parsing works in nanoseconds with __int128 intermediates so that every unit Go accepts can be
 * added up exactly ("1.0005s" is 1000500000 ns); only the total has to be a whole number of the
 * result's unit. A fraction is exact: value_ns = whole * unit + frac_digits * unit / 10^ndigits,
 * and that last division must be exact too (a fraction of a nanosecond is rejected).
 */

typedef struct unit_s {
    const char *name;
    int64_t ns;
} unit_t;

static const unit_t units[] = {
    {"ns", 1LL},
    {"us", 1000LL},
    {"\xc2\xb5s", 1000LL}, /* µs, U+00B5 */
    {"\xce\xbcs", 1000LL}, /* μs, U+03BC */
    {"ms", 1000000LL},
    {"s", 1000000000LL},
    {"m", 60LL * 1000000000LL},
    {"h", 3600LL * 1000000000LL},
};

#define NS_PER_MS   1000000LL
#define NS_PER_HOUR (3600LL * 1000000000LL)

/* The unit of a parse result: its length in nanoseconds, and its name in messages. */
typedef struct result_unit_s {
    int64_t ns;
    const char *name;   /* "millisecond" */
    const char *symbol; /* "ms" */
} result_unit_t;

static const result_unit_t in_ns = {1, "nanosecond", "ns"};
static const result_unit_t in_ms = {NS_PER_MS, "millisecond", "ms"};

/* The unit of `s` at its start (the longest name that matches, so "ms" is not "m"), or NULL. */
static const unit_t *unit_at(const char *s, size_t len)
{
    const unit_t *u = NULL;

    for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
        size_t n = strlen(units[k].name);
        if (n <= len && memcmp(s, units[k].name, n) == 0 && (u == NULL || n > strlen(u->name)))
            u = &units[k];
    }
    return u;
}

static err_t too_long(const char *s, size_t len, const result_unit_t *ru, int64_t max,
                      err_msg_t *msg)
{
    long long hours = (long long)((__int128)max * ru->ns / NS_PER_HOUR);

    if (hours > 0)
        return err_set(msg, ERR_OVERFLOW, "duration \"%.*s\": longer than %lld hours", (int)len, s,
                       hours);
    return err_set(msg, ERR_OVERFLOW, "duration \"%.*s\": longer than %lld%s", (int)len, s,
                   (long long)max, ru->symbol);
}

static err_t parse(const char *s, size_t len, const result_unit_t *ru, int64_t max, int64_t *out,
                   err_msg_t *msg)
{
    const __int128 max_ns = (__int128)max * ru->ns;
    __int128 total = 0;
    size_t i = 0;
    int nterms = 0;

    if (len == 0)
        return err_set(msg, ERR_PARSE, "duration \"\": empty");
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return ERR_OK;
    }
    if (s[0] == '-')
        return err_set(msg, ERR_PARSE, "duration \"%.*s\": must not be negative", (int)len, s);
    if (s[0] == '+')
        i++;
    while (i < len) {
        __int128 whole = 0, frac = 0, scale = 1;
        bool digits = false;
        const unit_t *u;

        while (i < len && s[i] >= '0' && s[i] <= '9') {
            whole = whole * 10 + (s[i] - '0');
            if (whole > max_ns)
                return too_long(s, len, ru, max, msg);
            digits = true;
            i++;
        }
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                /* A digit past the 18th of a fraction is finer than a nanosecond of any unit
                 * (10^-19 h is 0.00036 ns): keep scale bounded and require such digits to be 0. */
                if (scale < (__int128)1000000000000000000LL) {
                    frac = frac * 10 + (s[i] - '0');
                    scale *= 10;
                } else if (s[i] != '0') {
                    return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a %s", (int)len,
                                   s, ru->name);
                }
                digits = true;
                i++;
            }
        }
        if (!digits)
            return err_set(msg, ERR_PARSE, "duration \"%.*s\": expected a number at offset %zu",
                           (int)len, s, i);
        u = unit_at(s + i, len - i);
        if (u == NULL)
            return err_set(msg, ERR_PARSE,
                           "duration \"%.*s\": missing or unknown unit at offset %zu (use ns, us, "
                           "ms, s, m or h)",
                           (int)len, s, i);
        i += strlen(u->name);
        if (whole > max_ns / u->ns)
            return too_long(s, len, ru, max, msg);
        total += whole * u->ns;
        if (frac != 0) {
            __int128 part = frac * u->ns;
            if (part % scale != 0)
                return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a %s", (int)len, s,
                               ru->name);
            total += part / scale;
        }
        if (total > max_ns)
            return too_long(s, len, ru, max, msg);
        nterms++;
    }
    if (nterms == 0)
        return err_set(msg, ERR_PARSE, "duration \"%.*s\": expected a number", (int)len, s);
    if (total % ru->ns != 0)
        return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a %s", (int)len, s, ru->name);
    *out = (int64_t)(total / ru->ns);
    return ERR_OK;
}

err_t duration_parse_ns(const char *s, size_t len, int64_t max, int64_t *out, err_msg_t *msg)
{
    return parse(s, len, &in_ns, max, out, msg);
}

err_t duration_parse_ms(const char *s, size_t len, int64_t max, int64_t *out, err_msg_t *msg)
{
    return parse(s, len, &in_ms, max, out, msg);
}

char *duration_format_secs(int64_t ms, char *buf)
{
    /* Work on the magnitude as unsigned so INT64_MIN cannot overflow. */
    unsigned long long mag = ms < 0 ? 0ULL - (unsigned long long)ms : (unsigned long long)ms;
    unsigned long long secs = mag / 1000, frac = mag % 1000;
    const char *sign = ms < 0 ? "-" : "";

    if (frac == 0)
        snprintf(buf, DURATION_STR_MAX, "%s%llu", sign, secs);
    else if (frac % 100 == 0)
        snprintf(buf, DURATION_STR_MAX, "%s%llu.%llu", sign, secs, frac / 100);
    else if (frac % 10 == 0)
        snprintf(buf, DURATION_STR_MAX, "%s%llu.%02llu", sign, secs, frac / 10);
    else
        snprintf(buf, DURATION_STR_MAX, "%s%llu.%03llu", sign, secs, frac);
    return buf;
}

char *duration_format(int64_t ms, char *buf)
{
    unsigned long long mag = ms < 0 ? 0ULL - (unsigned long long)ms : (unsigned long long)ms;
    unsigned long long h = mag / 3600000, m = (mag / 60000) % 60, rest = mag % 60000;
    size_t n = 0;

    buf[0] = '\0';
    if (ms < 0)
        n += (size_t)snprintf(buf + n, DURATION_STR_MAX - n, "-");
    if (mag == 0) {
        snprintf(buf, DURATION_STR_MAX, "0s");
        return buf;
    }
    if (h > 0)
        n += (size_t)snprintf(buf + n, DURATION_STR_MAX - n, "%lluh", h);
    if (m > 0)
        n += (size_t)snprintf(buf + n, DURATION_STR_MAX - n, "%llum", m);
    if (rest > 0) {
        char secs[DURATION_STR_MAX];
        if (rest < 1000 && h == 0 && m == 0)
            snprintf(buf + n, DURATION_STR_MAX - n, "%llums", rest);
        else
            snprintf(buf + n, DURATION_STR_MAX - n, "%ss",
                     duration_format_secs((int64_t)rest, secs));
    }
    return buf;
}
