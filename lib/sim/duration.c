/* duration -- virtual-time durations: parse Go-style text ("1h30m", "250ms") and print seconds. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * Parsing works in nanoseconds with __int128 intermediates so that every unit Go accepts can be
 * added up exactly ("1.0005s" is 1000500000 ns); only the total has to be whole milliseconds.
 * A fraction is exact: value_ns = whole * unit + frac_digits * unit / 10^ndigits, and we require
 * that last division to be exact too (a fraction of a nanosecond is rejected).
 */

typedef struct unit_s {
    const char *name;
    int64_t ns;
} unit_t;

/* Longer names first so "ms" is not read as "m" followed by garbage. */
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

#define NS_MAX ((__int128)SIM_MS_MAX * 1000000)

err_t sim_duration_parse(const char *s, size_t len, sim_ms_t *out, err_msg_t *msg)
{
    size_t i = 0;
    __int128 total = 0;
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
        const unit_t *u = NULL;

        while (i < len && s[i] >= '0' && s[i] <= '9') {
            whole = whole * 10 + (s[i] - '0');
            if (whole > NS_MAX)
                goto overflow;
            digits = true;
            i++;
        }
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                /* More than 18 fraction digits cannot change a whole nanosecond count exactly
                 * unless they are zeros; keep scale bounded and require them to be zero. */
                if (scale < (__int128)1000000000000000000LL) {
                    frac = frac * 10 + (s[i] - '0');
                    scale *= 10;
                } else if (s[i] != '0') {
                    return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a millisecond",
                                   (int)len, s);
                }
                digits = true;
                i++;
            }
        }
        if (!digits)
            return err_set(msg, ERR_PARSE, "duration \"%.*s\": expected a number at offset %zu",
                           (int)len, s, i);
        for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
            size_t n = strlen(units[k].name);
            if (n <= len - i && memcmp(s + i, units[k].name, n) == 0) {
                /* "m" must not match the start of "ms": units are ordered so "ms" is tried
                 * first, and a longer name always wins because we keep the longest match. */
                if (u == NULL || n > strlen(u->name))
                    u = &units[k];
            }
        }
        if (u == NULL)
            return err_set(msg, ERR_PARSE,
                           "duration \"%.*s\": missing or unknown unit at offset %zu (use ns, us, "
                           "ms, s, m or h)",
                           (int)len, s, i);
        i += strlen(u->name);
        if (whole > NS_MAX / u->ns)
            goto overflow;
        total += whole * u->ns;
        if (frac != 0) {
            __int128 part = frac * u->ns;
            if (part % scale != 0)
                return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a millisecond",
                               (int)len, s);
            total += part / scale;
        }
        if (total > NS_MAX)
            goto overflow;
        nterms++;
    }
    if (nterms == 0)
        return err_set(msg, ERR_PARSE, "duration \"%.*s\": expected a number", (int)len, s);
    if (total % 1000000 != 0)
        return err_set(msg, ERR_PARSE, "duration \"%.*s\": finer than a millisecond", (int)len, s);
    *out = (sim_ms_t)(total / 1000000);
    return ERR_OK;
overflow:
    return err_set(msg, ERR_OVERFLOW, "duration \"%.*s\": longer than %lld hours", (int)len, s,
                   (long long)(SIM_MS_MAX / 3600000));
}

char *sim_time_format(sim_ms_t ms, char *buf)
{
    /* Work on the magnitude as unsigned so INT64_MIN cannot overflow. */
    unsigned long long mag = ms < 0 ? 0ULL - (unsigned long long)ms : (unsigned long long)ms;
    unsigned long long secs = mag / 1000, frac = mag % 1000;
    const char *sign = ms < 0 ? "-" : "";

    if (frac == 0)
        snprintf(buf, SIM_TIME_STR_MAX, "%s%llu", sign, secs);
    else if (frac % 100 == 0)
        snprintf(buf, SIM_TIME_STR_MAX, "%s%llu.%llu", sign, secs, frac / 100);
    else if (frac % 10 == 0)
        snprintf(buf, SIM_TIME_STR_MAX, "%s%llu.%02llu", sign, secs, frac / 10);
    else
        snprintf(buf, SIM_TIME_STR_MAX, "%s%llu.%03llu", sign, secs, frac);
    return buf;
}

char *sim_duration_format(sim_ms_t ms, char *buf)
{
    unsigned long long mag = ms < 0 ? 0ULL - (unsigned long long)ms : (unsigned long long)ms;
    unsigned long long h = mag / 3600000, m = (mag / 60000) % 60, rest = mag % 60000;
    size_t n = 0;

    buf[0] = '\0';
    if (ms < 0)
        n += (size_t)snprintf(buf + n, SIM_TIME_STR_MAX - n, "-");
    if (mag == 0) {
        snprintf(buf, SIM_TIME_STR_MAX, "0s");
        return buf;
    }
    if (h > 0)
        n += (size_t)snprintf(buf + n, SIM_TIME_STR_MAX - n, "%lluh", h);
    if (m > 0)
        n += (size_t)snprintf(buf + n, SIM_TIME_STR_MAX - n, "%llum", m);
    if (rest > 0) {
        char secs[SIM_TIME_STR_MAX];
        if (rest < 1000 && h == 0 && m == 0)
            snprintf(buf + n, SIM_TIME_STR_MAX - n, "%llums", rest);
        else
            snprintf(buf + n, SIM_TIME_STR_MAX - n, "%ss", sim_time_format((sim_ms_t)rest, secs));
    }
    return buf;
}
