/* cond -- Kubernetes status conditions in JSON, with apimeta.SetStatusCondition's semantics. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/cond.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

char *cond_time_str(int64_t epoch_s, char *buf, size_t size)
{
    time_t t = (time_t)epoch_s;
    struct tm tm;

    if (gmtime_r(&t, &tm) == NULL || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, size, "1970-01-01T00:00:00Z");
    return buf;
}

json_t *cond_find(const json_t *conds, const char *type)
{
    size_t i;
    json_t *c;

    if (!json_is_array(conds))
        return NULL;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t != NULL && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

bool cond_is_true(const json_t *conds, const char *type)
{
    const char *s = json_string_value(json_object_get(cond_find(conds, type), "status"));
    return s != NULL && strcmp(s, "True") == 0;
}

size_t cond_utf8_cut(const char *s, size_t max)
{
    size_t len = strlen(s);

    if (len <= max)
        return len;
    /* Step back over continuation bytes (10xxxxxx) so the cut lands before a lead byte. */
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

/* Does field `key` of `c` already hold string `want`? */
static bool str_is(const json_t *c, const char *key, const char *want, size_t len)
{
    const char *v = json_string_value(json_object_get(c, key));
    return v != NULL && strlen(v) == len && memcmp(v, want, len) == 0;
}

err_t cond_set(json_t *conds, const char *type, const char *status, const char *reason,
               const char *message, int64_t generation, int64_t now_s, bool *changed)
{
    char ts[32];
    size_t mlen;
    json_t *c, *fresh = NULL;
    bool existing;

    if (!json_is_array(conds))
        return ERR_INVALID;
    message = message ? message : "";
    reason = reason ? reason : "";
    mlen = cond_utf8_cut(message, COND_MESSAGE_MAX);
    c = cond_find(conds, type);
    existing = c != NULL;
    if (existing && str_is(c, "status", status, strlen(status)) &&
        str_is(c, "reason", reason, strlen(reason)) && str_is(c, "message", message, mlen) &&
        (generation < 0 ||
         json_integer_value(json_object_get(c, "observedGeneration")) == generation)) {
        if (changed != NULL)
            *changed = false;
        return ERR_OK;
    }

    /* Build the new state into a copy so a failure leaves `conds` as it was. */
    fresh = existing ? json_deep_copy(c) : json_object();
    if (fresh == NULL)
        return ERR_NOMEM;
    if (!existing || !str_is(c, "status", status, strlen(status))) {
        if (json_object_set_new(fresh, "lastTransitionTime",
                                json_string(cond_time_str(now_s, ts, sizeof(ts)))))
            goto fail;
    }
    if (json_object_set_new(fresh, "type", json_string(type)) ||
        json_object_set_new(fresh, "status", json_string(status)) ||
        json_object_set_new(fresh, "reason", json_string(reason)) ||
        json_object_set_new(fresh, "message", json_stringn(message, mlen)))
        goto fail;
    if (generation >= 0 &&
        json_object_set_new(fresh, "observedGeneration", json_integer(generation)))
        goto fail;
    if (existing) {
        if (json_object_update(c, fresh))
            goto fail;
        json_decref(fresh);
    } else if (json_array_append_new(conds, fresh)) {
        return ERR_NOMEM; /* consumed */
    }
    if (changed != NULL)
        *changed = true;
    return ERR_OK;
fail:
    json_decref(fresh);
    return ERR_NOMEM;
}

bool cond_remove(json_t *conds, const char *type)
{
    size_t i;
    json_t *c;

    if (!json_is_array(conds))
        return false;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t != NULL && strcmp(t, type) == 0)
            return json_array_remove(conds, i) == 0;
    }
    return false;
}

bool cond_same_but_numbers(const char *a, const char *b)
{
    while (*a != '\0' && *b != '\0') {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (isdigit((unsigned char)*a) || *a == '.')
                a++;
            while (isdigit((unsigned char)*b) || *b == '.')
                b++;
            continue;
        }
        if (*a != *b)
            return false;
        a++;
        b++;
    }
    return *a == *b;
}
