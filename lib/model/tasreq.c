/* tasreq -- a pod set's topology request, from Kueue's pod-template annotations. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/tasreq.h"

#include "model/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Go's strconv.ParseBool. */
static bool parse_bool(const char *s, bool *out)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True", NULL};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False", NULL};

    for (size_t i = 0; t[i] != NULL; i++) {
        if (strcmp(s, t[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(s, f[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

/* Go's strconv.ParseInt(s, 10, 32): optional sign, decimal digits, int32 range. */
static bool parse_int32(const char *s, int32_t *out)
{
    const char *p = s;
    long long v = 0;
    bool neg = false;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p == '\0')
        return false;
    for (; *p != '\0'; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (*p - '0');
        if (v > (long long)INT32_MAX + 1)
            return false;
    }
    v = neg ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN)
        return false;
    *out = (int32_t)v;
    return true;
}

void tasreq_from_annotations(const kv_list_t *ann, tasreq_t *out)
{
    const char *req = kv_list_get(ann, TASREQ_REQUIRED), *pref = kv_list_get(ann, TASREQ_PREFERRED);
    const char *unc = kv_list_get(ann, TASREQ_UNCONSTRAINED);
    const char *sl = kv_list_get(ann, TASREQ_SLICE_LEVEL),
               *ss = kv_list_get(ann, TASREQ_SLICE_SIZE);
    int32_t size = 0;
    bool b = false;

    memset(out, 0, sizeof(*out));
    if (sl != NULL && ss != NULL && parse_int32(ss, &size) && size >= 1) {
        out->slice_level = sl;
        out->slice_size = size;
    }
    if (req != NULL) {
        out->mode = TASREQ_MODE_REQUIRED;
        out->level = req;
    } else if (pref != NULL) {
        out->mode = TASREQ_MODE_PREFERRED;
        out->level = pref;
    } else if ((unc != NULL && parse_bool(unc, &b) && b) || out->slice_level != NULL) {
        out->mode = TASREQ_MODE_UNCONSTRAINED;
    }
    if (out->mode == TASREQ_MODE_NONE) {
        out->slice_level = NULL;
        out->slice_size = 0;
    }
    if (out->mode == TASREQ_MODE_REQUIRED || out->mode == TASREQ_MODE_PREFERRED)
        out->group = kv_list_get(ann, TASREQ_GROUP_NAME);
}

/* `annotations[key]` under `path`. */
static void key_path(char *buf, size_t cap, const char *path, const char *key)
{
    snprintf(buf, cap, "%s[%s]", path, key);
}

static void label_name(diags_t *d, const char *path, const char *key, const char *value)
{
    names_msgs_t m = {.n = 0};
    char p[512];

    names_label_key(value, &m);
    key_path(p, sizeof(p), path, key);
    for (int i = 0; i < m.n; i++)
        diags_error(d, p, "%s", m.text[i]);
}

void tasreq_validate(const kv_list_t *ann, const char *path, int64_t count, diags_t *d)
{
    const char *req = kv_list_get(ann, TASREQ_REQUIRED), *pref = kv_list_get(ann, TASREQ_PREFERRED);
    const char *unc = kv_list_get(ann, TASREQ_UNCONSTRAINED);
    const char *sl = kv_list_get(ann, TASREQ_SLICE_LEVEL),
               *ss = kv_list_get(ann, TASREQ_SLICE_SIZE);
    const char *group = kv_list_get(ann, TASREQ_GROUP_NAME);
    char p[512];
    int32_t size;
    bool b;

    if ((req != NULL) + (pref != NULL) + (unc != NULL) > 1)
        diags_error(d, path,
                    "Invalid value: must not contain more than one topology annotation: "
                    "[\"" TASREQ_REQUIRED "\", \"" TASREQ_PREFERRED "\", \"" TASREQ_UNCONSTRAINED
                    "\"]");
    if (req != NULL)
        label_name(d, path, TASREQ_REQUIRED, req);
    if (pref != NULL)
        label_name(d, path, TASREQ_PREFERRED, pref);
    if (sl != NULL)
        label_name(d, path, TASREQ_SLICE_LEVEL, sl);
    key_path(p, sizeof(p), path, TASREQ_GROUP_NAME);
    if (group != NULL) {
        const char *q = group;
        while (*q >= '0' && *q <= '9')
            q++;
        if (group[0] != '\0' && *q == '\0' && strlen(group) <= 20) /* strconv.ParseUint, roughly */
            diags_error(d, p, "Invalid value: \"%s\": must not be a number", group);
        if (ss != NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when '" TASREQ_SLICE_SIZE "' is specified");
        if (sl != NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when '" TASREQ_SLICE_LEVEL "' is specified");
        if (req == NULL && pref == NULL)
            diags_error(d, p,
                        "Forbidden: may not be set when neither '" TASREQ_PREFERRED
                        "' nor '" TASREQ_REQUIRED "' is specified");
    }
    key_path(p, sizeof(p), path, TASREQ_UNCONSTRAINED);
    if (unc != NULL && !parse_bool(unc, &b))
        diags_error(d, p, "Invalid value: \"%s\": must be a boolean value", unc);
    key_path(p, sizeof(p), path, TASREQ_SLICE_SIZE);
    if (ss != NULL) {
        if (!parse_int32(ss, &size))
            diags_error(d, p, "Invalid value: \"%s\": must be a numeric value", ss);
        else if (size < 1)
            diags_error(d, p, "Invalid value: \"%s\": must be greater than or equal to 1", ss);
        else if (count >= 0 && size > count)
            diags_error(d, p, "Invalid value: \"%s\": must not be greater than pod set count %lld",
                        ss, (long long)count);
    }
    if (sl != NULL && ss == NULL)
        diags_error(d, p, "Required value: must be set when '" TASREQ_SLICE_LEVEL "' is specified");
    if (sl == NULL && ss != NULL)
        diags_error(d, p,
                    "Forbidden: may not be set when '" TASREQ_SLICE_LEVEL "' is not specified");
}
