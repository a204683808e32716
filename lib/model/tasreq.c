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

/* Report `text` about pod set ps: at its annotation `key` (NULL: at its annotations), or at
 * "spec" naming it when it has no path; a warning with `effect` appended when `warn`. */
static void group_report(diags_t *d, const tasreq_podset_t *ps, const char *key, bool warn,
                         const char *effect, const char *text)
{
    char p[512];
    const char *at = p;

    if (ps->path == NULL)
        at = "spec";
    else if (key != NULL)
        key_path(p, sizeof(p), ps->path, key);
    else
        snprintf(p, sizeof(p), "%s", ps->path);
    if (ps->path == NULL && warn)
        diags_warn(d, at, "pod set %s: annotation %s: %s; %s", ps->name, TASREQ_GROUP_NAME, text,
                   effect);
    else if (ps->path == NULL)
        diags_error(d, at, "pod set %s: annotation %s: %s", ps->name, TASREQ_GROUP_NAME, text);
    else if (warn)
        diags_warn(d, at, "%s; %s", text, effect);
    else
        diags_error(d, at, "%s", text);
}

#define GROUP_ALONE   "the group has no effect: its pod sets are placed one by one"
#define GROUP_WORKERS "the group is placed by its workers' topology request"

void tasreq_validate_groups(const tasreq_podset_t *ps, size_t n, bool warn, diags_t *d)
{
    char text[768];

    for (size_t i = 0; i < n; i++) {
        tasreq_t ti, tj;
        size_t members = 0, other = SIZE_MAX;
        bool first = true;
        tasreq_from_annotations(ps[i].ann, &ti);
        if (ti.group == NULL)
            continue;
        /* a group once, at its first pod set */
        for (size_t j = 0; j < n; j++) {
            tasreq_from_annotations(ps[j].ann, &tj);
            if (tj.group == NULL || strcmp(tj.group, ti.group) != 0)
                continue;
            if (j < i)
                first = false;
            if (j != i)
                other = j;
            members++;
        }
        if (!first)
            continue;
        if (members != 2) {
            snprintf(text, sizeof(text),
                     "Invalid value: \"%s\": can only define groups of exactly 2 pod sets, got: "
                     "%zu pod set(s)",
                     ti.group, members);
            for (size_t j = 0; j < n; j++) {
                tasreq_from_annotations(ps[j].ann, &tj);
                if (tj.group != NULL && strcmp(tj.group, ti.group) == 0)
                    group_report(d, &ps[j], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
            }
            continue;
        }
        tasreq_from_annotations(ps[other].ann, &tj);
        if (ps[i].count != 1 && ps[other].count != 1) {
            snprintf(text, sizeof(text),
                     "Invalid value: \"%s\": can only define groups where at least one pod set "
                     "has only 1 replica, got: %lld replica(s) and %lld replica(s) in the group",
                     ti.group, (long long)ps[i].count, (long long)ps[other].count);
            group_report(d, &ps[i], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
            group_report(d, &ps[other], TASREQ_GROUP_NAME, warn, GROUP_ALONE, text);
        }
        if (ti.mode != tj.mode || strcmp(ti.level, tj.level) != 0) {
            const tasreq_podset_t *pair[2] = {&ps[i], &ps[other]};
            for (int k = 0; k < 2; k++) {
                const tasreq_podset_t *o = pair[1 - k];
                char op[512];
                if (o->path != NULL)
                    snprintf(op, sizeof(op), "%s", o->path);
                else
                    snprintf(op, sizeof(op), "pod set %s", o->name);
                snprintf(text, sizeof(text),
                         "Invalid value: must specify '" TASREQ_REQUIRED "' or '" TASREQ_PREFERRED
                         "' topology consistent with '%s' in group '%s'",
                         op, ti.group);
                group_report(d, pair[k], NULL, warn, GROUP_WORKERS, text);
            }
        }
    }
}
