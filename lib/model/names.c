/* names -- Kubernetes name and label syntax checks (label keys/values, DNS-1123), with
 * Kubernetes' own messages. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The regex texts and examples are part of the messages users search for. */
#define NAME_RE_MSG                                                                             \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "      \
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define VALUE_RE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is "                                    \
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define SUBDOMAIN_RE_MSG                                                                          \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "  \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_RE_MSG                                                                             \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and " \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "   \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

static void add(names_msgs_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(names_msgs_t *m, const char *fmt, ...)
{
    va_list ap;

    if (m->n >= NAMES_MAX_MSGS)
        return;
    va_start(ap, fmt);
    vsnprintf(m->text[m->n++], NAMES_MSG_LEN, fmt, ap);
    va_end(ap);
}

static bool alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool lower_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over s[0..len) */
static bool match_name(const char *s, size_t len)
{
    if (len == 0 || !alnum((unsigned char)s[0]) || !alnum((unsigned char)s[len - 1]))
        return false;
    for (size_t i = 1; i + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!alnum(c) && c != '-' && c != '_' && c != '.')
            return false;
    }
    return true;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over s[0..len) */
static bool match_label(const char *s, size_t len)
{
    if (len == 0 || !lower_alnum((unsigned char)s[0]) || !lower_alnum((unsigned char)s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!lower_alnum((unsigned char)s[i]) && s[i] != '-')
            return false;
    return true;
}

/* label(\.label)* over s[0..len) */
static bool match_subdomain(const char *s, size_t len)
{
    size_t start = 0;

    if (len == 0)
        return false;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!match_label(s + start, i - start))
                return false;
            start = i + 1;
        }
    }
    return true;
}

static void subdomain(const char *s, size_t len, const char *prefix, names_msgs_t *m)
{
    if (len > 253)
        add(m, "%smust be no more than 253 bytes", prefix);
    if (!match_subdomain(s, len))
        add(m, "%s" SUBDOMAIN_RE_MSG, prefix);
}

void names_label_key(const char *s, names_msgs_t *m)
{
    const char *slash = strchr(s, '/'), *name = s;
    size_t nlen;

    m->n = 0;
    if (slash != NULL && strchr(slash + 1, '/') != NULL) {
        add(m, "a valid label key " NAME_RE_MSG
               " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
        return;
    }
    if (slash != NULL) {
        size_t plen = (size_t)(slash - s);
        if (plen == 0)
            add(m, "prefix part must be non-empty");
        else
            subdomain(s, plen, "prefix part ", m);
        name = slash + 1;
    }
    nlen = strlen(name);
    if (nlen == 0)
        add(m, "name part must be non-empty");
    else if (nlen > 63)
        add(m, "name part must be no more than 63 bytes");
    if (!match_name(name, nlen))
        add(m, "name part " NAME_RE_MSG);
}

void names_label_value(const char *s, names_msgs_t *m)
{
    size_t len = strlen(s);

    m->n = 0;
    if (len > 63)
        add(m, "must be no more than 63 bytes");
    if (len > 0 && !match_name(s, len))
        add(m, VALUE_RE_MSG);
}

void names_dns1123_subdomain(const char *s, names_msgs_t *m)
{
    m->n = 0;
    subdomain(s, strlen(s), "", m);
}

void names_dns1123_label(const char *s, names_msgs_t *m)
{
    size_t len = strlen(s);

    m->n = 0;
    if (len > 63)
        add(m, "must be no more than 63 bytes");
    if (!match_label(s, len)) {
        /* A valid subdomain is almost right: say what is wrong with it. */
        if (match_subdomain(s, len))
            add(m, "must not contain dots");
        else
            add(m, LABEL_RE_MSG);
    }
}

bool names_is_label_key(const char *s)
{
    names_msgs_t m;

    names_label_key(s, &m);
    return m.n == 0;
}

bool names_is_label_value(const char *s)
{
    size_t len = strlen(s);

    return len == 0 || (len <= 63 && match_name(s, len));
}

bool names_is_dns1123_subdomain(const char *s)
{
    size_t len = strlen(s);

    return len <= 253 && match_subdomain(s, len);
}

bool names_is_dns1123_label(const char *s)
{
    size_t len = strlen(s);

    return len <= 63 && match_label(s, len);
}

void names_report(diags_t *d, const char *path, const char *value, const names_msgs_t *m)
{
    for (int i = 0; i < m->n; i++)
        diags_error(d, path, "Invalid value: \"%s\": %s", value, m->text[i]);
}
