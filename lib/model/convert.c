/* convert -- Kueue's kueue.x-k8s.io v1beta1 <-> v1beta2 conversion, JSON object to JSON object. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/convert.h"

#include "model/convert_int.h"
#include "util/util.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * Why JSON to JSON rather than decode -> typed structs -> encode: lib/model's structs hold what
 * the engine needs, not every Kueue field, and a conversion webhook must hand the API server back
 * everything it was given (the server rejects a converted object whose metadata changed, and
 * silently loses any field the converter forgot). So the object is deep-copied and only the
 * fields listed in convert.h are renamed or reshaped in the copy; renames keep the key's
 * position (convert__splice), so `sluice convert` output reads like its input.
 *
 * Each kind has one function per direction. They follow Kueue's conversion functions
 * (apis/kueue/v1beta1/<kind>_conversion.go and the generated autoConvert_* they call), including
 * Go's omitempty: a renamed field that is null, or an empty string where Kueue's field is a
 * plain string, disappears instead of being carried over.
 *
 * A field that exists only in the *other* version, found in the source object, is an error:
 * the API server prunes such fields before it calls the webhook, so in a ConversionReview they
 * never occur, and in a manifest they mean the author mixed the two versions (a v1beta1 object
 * with spec.cohortName). Converting it would have to pick one of two values.
 */

/* ---- cursor, paths, messages -------------------------------------------------------------- */

static size_t push_text(convert__cur_t *c, const char *text)
{
    size_t mark = c->len;
    int n = snprintf(c->path + c->len, sizeof(c->path) - c->len, "%s", text);

    if (n > 0)
        c->len += (size_t)n < sizeof(c->path) - c->len ? (size_t)n : sizeof(c->path) - 1 - c->len;
    return mark;
}

size_t convert__push_key(convert__cur_t *c, const char *key)
{
    size_t mark = c->len;

    if (c->len > 0)
        push_text(c, ".");
    push_text(c, key);
    return mark;
}

size_t convert__push_index(convert__cur_t *c, size_t i)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "[%zu]", i);
    return push_text(c, buf);
}

void convert__pop(convert__cur_t *c, size_t mark)
{
    c->len = mark;
    c->path[mark] = '\0';
}

static err_t vfail(convert__cur_t *c, err_t code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static err_t vfail(convert__cur_t *c, err_t code, const char *fmt, va_list ap)
{
    char detail[ERR_MSG_LEN];

    vsnprintf(detail, sizeof(detail), fmt, ap);
    if (c->len > 0)
        return err_set(c->msg, code, "%s: %s: %s", c->who, c->path, detail);
    return err_set(c->msg, code, "%s: %s", c->who, detail);
}

err_t convert__fail(convert__cur_t *c, err_t code, const char *fmt, ...)
{
    va_list ap;
    err_t rc;

    va_start(ap, fmt);
    rc = vfail(c, code, fmt, ap);
    va_end(ap);
    return rc;
}

err_t convert__fail_at(convert__cur_t *c, const char *key, err_t code, const char *fmt, ...)
{
    size_t mark = convert__push_key(c, key);
    va_list ap;
    err_t rc;

    va_start(ap, fmt);
    rc = vfail(c, code, fmt, ap);
    va_end(ap);
    convert__pop(c, mark);
    return rc;
}

void convert__note(convert__cur_t *c, const char *key, const char *fmt, ...)
{
    size_t mark;
    char text[ERR_MSG_LEN];
    va_list ap;

    if (c->opts->note == NULL)
        return;
    mark = key != NULL ? convert__push_key(c, key) : c->len;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    c->opts->note(c->opts->ctx, c->path, text);
    convert__pop(c, mark);
}

/* ---- JSON helpers ------------------------------------------------------------------------- */

bool convert__str_is(const json_t *v, const char *s)
{
    size_t n = strlen(s);

    return json_is_string(v) && json_string_length(v) == n &&
           memcmp(json_string_value(v), s, n) == 0;
}

json_t *convert__obj1(const char *key, json_t *value)
{
    json_t *obj = json_object();

    if (obj == NULL) {
        json_decref(value);
        return NULL;
    }
    if (json_object_set_new(obj, key, value) != 0) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

err_t convert__splice(json_t *obj, const char *old, json_t *entries)
{
    json_t *rebuilt = json_object(), *v, *ev;
    const char *key, *ekey;
    size_t klen, eklen, oldlen = strlen(old);
    bool found = false;
    err_t rc = ERR_NOMEM;

    if (rebuilt == NULL)
        goto out;
    json_object_keylen_foreach(obj, key, klen, v)
    {
        if (klen == oldlen && memcmp(key, old, klen) == 0) {
            found = true;
            json_object_keylen_foreach(entries, ekey, eklen, ev)
            {
                if (json_object_setn_nocheck(rebuilt, ekey, eklen, ev) != 0)
                    goto out;
            }
        } else if (json_object_setn_nocheck(rebuilt, key, klen, v) != 0) {
            goto out;
        }
    }
    if (!found) {
        json_object_keylen_foreach(entries, ekey, eklen, ev)
        {
            if (json_object_setn_nocheck(rebuilt, ekey, eklen, ev) != 0)
                goto out;
        }
    }
    /* Same json_t (the parent still points at it), new order. */
    json_object_clear(obj);
    json_object_keylen_foreach(rebuilt, key, klen, v)
    {
        if (json_object_setn_nocheck(obj, key, klen, v) != 0)
            goto out;
    }
    rc = ERR_OK;
out:
    json_decref(rebuilt);
    json_decref(entries);
    return rc;
}

err_t convert__foreign(convert__cur_t *c, const json_t *obj, const char *const *keys,
                       const char *version)
{
    for (; *keys != NULL; keys++) {
        if (json_object_get(obj, *keys) != NULL)
            return convert__fail_at(c, *keys, ERR_INVALID,
                                    "not a field of %s (it is the other version's): convert the "
                                    "object from the version it was written in",
                                    version);
    }
    return ERR_OK;
}

err_t convert__object_at(convert__cur_t *c, json_t *obj, const char *key, json_t **out)
{
    json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_object(v))
        return convert__fail_at(c, key, ERR_INVALID, "must be an object, got %s",
                                json_is_array(v)     ? "array"
                                : json_is_string(v)  ? "string"
                                : json_is_number(v)  ? "number"
                                : json_is_boolean(v) ? "boolean"
                                                     : "?");
    *out = v;
    return ERR_OK;
}

err_t convert__all_strings(convert__cur_t *c, const json_t *list, const char *key, const char *what)
{
    size_t i;
    json_t *v;

    json_array_foreach(list, i, v)
    {
        if (!json_is_string(v)) {
            size_t mark = convert__push_key(c, key);
            convert__push_index(c, i);
            convert__fail(c, ERR_INVALID, "%s", what);
            convert__pop(c, mark);
            return ERR_INVALID;
        }
    }
    return ERR_OK;
}

/* obj[from] -> obj[to] at the same position. A null value -- or, with `drop_empty`, an empty
 * string (Kueue's field is a plain string with omitempty) -- is removed instead. */
static err_t rename_field(json_t *obj, const char *from, const char *to, bool drop_empty)
{
    json_t *v = json_object_get(obj, from), *entries;

    if (v == NULL)
        return ERR_OK;
    if (json_is_null(v) || (drop_empty && json_is_string(v) && json_string_length(v) == 0))
        return convert__splice(obj, from, NULL);
    entries = json_object();
    if (entries == NULL || json_object_set(entries, to, v) != 0) {
        json_decref(entries);
        return ERR_NOMEM;
    }
    return convert__splice(obj, from, entries);
}

/* rename_field() from the source version's name of a field to the target version's. */
static err_t rename_version(json_t *obj, const char *v1_name, const char *v2_name, bool to_v2,
                            bool drop_empty)
{
    return to_v2 ? rename_field(obj, v1_name, v2_name, drop_empty)
                 : rename_field(obj, v2_name, v1_name, drop_empty);
}

/* Remove obj[key], a field the target version does not have, with a note. */
static void drop_field(convert__cur_t *c, json_t *obj, const char *key, const char *target)
{
    json_t *v = json_object_get(obj, key);

    if (v == NULL)
        return;
    if (!json_is_null(v))
        convert__note(c, key, "dropped: %s has no such field (Kueue's conversion drops it too)",
                      target);
    json_object_del(obj, key);
}

/* The object obj[key] with its path pushed: *mark to pop, *out NULL when absent. */
static err_t enter(convert__cur_t *c, json_t *obj, const char *key, json_t **out, size_t *mark)
{
    err_t rc = convert__object_at(c, obj, key, out);

    if (rc == ERR_OK && *out != NULL)
        *mark = convert__push_key(c, key);
    return rc;
}

/* ---- ClusterQueue ------------------------------------------------------------------------- */

/* status.fairSharing of a ClusterQueue or Cohort: v1beta1's (the ClusterQueue type in both)
 * has admissionFairSharingStatus, v1beta2's has not. */
static err_t fair_sharing(convert__cur_t *c, json_t *status, bool to_v2)
{
    static const char *const fs_v1[] = {"admissionFairSharingStatus", NULL};
    json_t *fs;
    size_t mark = 0;
    err_t rc = enter(c, status, "fairSharing", &fs, &mark);

    if (rc != ERR_OK || fs == NULL)
        return rc;
    if (to_v2)
        drop_field(c, fs, "admissionFairSharingStatus", CONVERT_V1BETA2);
    else if ((rc = convert__foreign(c, fs, fs_v1, CONVERT_V1BETA2)) != ERR_OK)
        return rc;
    convert__pop(c, mark);
    return ERR_OK;
}

/* spec.admissionChecks [names] -> spec.admissionChecksStrategy {admissionChecks: [{name}]}.
 * Kueue converts a non-empty list and then overwrites any admissionChecksStrategy with it (its
 * v1beta1 webhook refused both together); an empty list just disappears. */
static err_t cq_admission_checks_to_v2(convert__cur_t *c, json_t *spec)
{
    json_t *list = json_object_get(spec, "admissionChecks"), *rules, *strategy, *entries, *v;
    size_t i;

    if (list == NULL)
        return ERR_OK;
    if (json_is_null(list) || (json_is_array(list) && json_array_size(list) == 0))
        return convert__splice(spec, "admissionChecks", NULL);
    if (!json_is_array(list))
        return convert__fail_at(c, "admissionChecks", ERR_INVALID, "must be an array of names");
    if (convert__all_strings(c, list, "admissionChecks",
                             "must be a string (an AdmissionCheck name)") != ERR_OK)
        return ERR_INVALID;
    if (json_object_get(spec, "admissionChecksStrategy") != NULL) {
        convert__note(c, "admissionChecksStrategy",
                      "replaced by spec.admissionChecks, as Kueue's conversion does (v1beta1 "
                      "allows only one of the two)");
        json_object_del(spec, "admissionChecksStrategy");
    }
    rules = json_array();
    strategy = json_object();
    entries = json_object();
    if (rules == NULL || strategy == NULL || entries == NULL)
        goto oom;
    json_array_foreach(list, i, v)
    {
        if (json_array_append_new(rules, convert__obj1("name", json_incref(v))) != 0)
            goto oom;
    }
    if (json_object_set_new(strategy, "admissionChecks", rules) != 0) {
        rules = NULL;
        goto oom;
    }
    rules = NULL;
    if (json_object_set_new(entries, "admissionChecksStrategy", strategy) != 0) {
        strategy = NULL;
        goto oom;
    }
    return convert__splice(spec, "admissionChecks", entries);
oom:
    json_decref(rules);
    json_decref(strategy);
    json_decref(entries);
    return ERR_NOMEM;
}

/* v1beta1's whenCanBorrow: Borrow and whenCanPreempt: Preempt have no v1beta2 value; Kueue maps
 * both to MayStopSearch. */
static err_t cq_fungibility_to_v2(convert__cur_t *c, json_t *spec)
{
    static const struct {
        const char *field, *old;
    } map[] = {{"whenCanBorrow", "Borrow"}, {"whenCanPreempt", "Preempt"}};
    json_t *ff;
    size_t mark = 0;
    err_t rc = enter(c, spec, "flavorFungibility", &ff, &mark);

    if (rc != ERR_OK || ff == NULL)
        return rc;
    for (size_t i = 0; i < ARRAY_SIZE(map); i++) {
        if (!convert__str_is(json_object_get(ff, map[i].field), map[i].old))
            continue;
        convert__note(c, map[i].field, "%s -> MayStopSearch (v1beta2 has no %s)", map[i].old,
                      map[i].old);
        if (json_object_set_new(ff, map[i].field, json_string("MayStopSearch")) != 0) {
            rc = ERR_NOMEM;
            break;
        }
    }
    convert__pop(c, mark);
    return rc;
}

/* ClusterQueue: v1beta2 renamed spec.cohort to cohortName and reshaped spec.admissionChecks and
 * the flavorFungibility values (to v1beta2 only: cq_admission_checks_to_v2(),
 * cq_fungibility_to_v2()); status.pendingWorkloadsStatus is v1beta1's only, and
 * spec.concurrentAdmissionPolicy v1beta2's. */
static err_t cq_convert(convert__cur_t *c, json_t *obj, bool to_v2)
{
    /* The fields only one version has: in an object of the other, a mistake (convert__foreign). */
    static const char *const spec_v1[] = {"cohort", "admissionChecks", NULL};
    static const char *const spec_v2[] = {"cohortName", "concurrentAdmissionPolicy", NULL};
    static const char *const status_v1[] = {"pendingWorkloadsStatus", NULL};
    const char *from = to_v2 ? CONVERT_V1BETA1 : CONVERT_V1BETA2;
    json_t *spec, *status;
    size_t mark = 0;
    err_t rc;

    if ((rc = enter(c, obj, "spec", &spec, &mark)) != ERR_OK)
        return rc;
    if (spec != NULL) {
        if ((rc = convert__foreign(c, spec, to_v2 ? spec_v2 : spec_v1, from)) != ERR_OK ||
            (rc = rename_version(spec, "cohort", "cohortName", to_v2, true)) != ERR_OK)
            return rc;
        if (!to_v2)
            drop_field(c, spec, "concurrentAdmissionPolicy", CONVERT_V1BETA1);
        else if ((rc = cq_admission_checks_to_v2(c, spec)) != ERR_OK ||
                 (rc = cq_fungibility_to_v2(c, spec)) != ERR_OK)
            return rc;
        convert__pop(c, mark);
    }
    if ((rc = enter(c, obj, "status", &status, &mark)) != ERR_OK)
        return rc;
    if (status != NULL) {
        if (to_v2)
            drop_field(c, status, "pendingWorkloadsStatus", CONVERT_V1BETA2);
        else if ((rc = convert__foreign(c, status, status_v1, CONVERT_V1BETA2)) != ERR_OK)
            return rc;
        if ((rc = fair_sharing(c, status, to_v2)) != ERR_OK)
            return rc;
        convert__pop(c, mark);
    }
    return ERR_OK;
}

/* ---- LocalQueue, Cohort ------------------------------------------------------------------- */

/* LocalQueue: v1beta1's status.flavorUsage is v1beta2's flavorsUsage, and its deprecated
 * status.flavors has no v1beta2 field. */
static err_t lq_convert(convert__cur_t *c, json_t *obj, bool to_v2)
{
    /* The fields only one version has: in an object of the other, a mistake (convert__foreign). */
    static const char *const status_v1[] = {"flavorUsage", "flavors", NULL};
    static const char *const status_v2[] = {"flavorsUsage", NULL};
    const char *from = to_v2 ? CONVERT_V1BETA1 : CONVERT_V1BETA2;
    json_t *status;
    size_t mark = 0;
    err_t rc;

    if ((rc = enter(c, obj, "status", &status, &mark)) != ERR_OK || status == NULL)
        return rc;
    if ((rc = convert__foreign(c, status, to_v2 ? status_v2 : status_v1, from)) != ERR_OK ||
        (rc = rename_version(status, "flavorUsage", "flavorsUsage", to_v2, false)) != ERR_OK)
        return rc;
    if (to_v2)
        drop_field(c, status, "flavors", CONVERT_V1BETA2);
    convert__pop(c, mark);
    return ERR_OK;
}

/* Cohort: same fields but v1beta1's status.fairSharing (the ClusterQueue type) also had
 * admissionFairSharingStatus. */
static err_t cohort_convert(convert__cur_t *c, json_t *obj, bool to_v2)
{
    json_t *status;
    size_t mark = 0;
    err_t rc;

    if ((rc = enter(c, obj, "status", &status, &mark)) != ERR_OK || status == NULL)
        return rc;
    if ((rc = fair_sharing(c, status, to_v2)) != ERR_OK)
        return rc;
    convert__pop(c, mark);
    return ERR_OK;
}

/* ---- Workload ----------------------------------------------------------------------------- */

#define WPC_SOURCE "kueue.x-k8s.io/workloadpriorityclass"
#define PC_SOURCE  "scheduling.k8s.io/priorityclass"

/* A string field or nothing: *out NULL when absent/null; ERR_INVALID for other types. */
static err_t string_at(convert__cur_t *c, json_t *obj, const char *key, json_t **out)
{
    json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return ERR_OK;
    if (!json_is_string(v))
        return convert__fail_at(c, key, ERR_INVALID, "must be a string");
    *out = v;
    return ERR_OK;
}

/* priorityClassName + priorityClassSource -> priorityClassRef {group, kind, name}. Kueue maps
 * the two sources it knows; with source "" it has no ref, and the name is lost. */
static err_t wl_priority_to_v2(convert__cur_t *c, json_t *spec)
{
    json_t *name, *source, *ref = NULL, *entries = NULL;
    const char *group = NULL, *kind = NULL, *first = "priorityClassName";
    err_t rc;

    if ((rc = string_at(c, spec, "priorityClassName", &name)) != ERR_OK ||
        (rc = string_at(c, spec, "priorityClassSource", &source)) != ERR_OK)
        return rc;
    if (convert__str_is(source, WPC_SOURCE)) {
        group = "kueue.x-k8s.io";
        kind = "WorkloadPriorityClass";
    } else if (convert__str_is(source, PC_SOURCE)) {
        group = "scheduling.k8s.io";
        kind = "PriorityClass";
    } else if (source != NULL && json_string_length(source) > 0) {
        return convert__fail_at(c, "priorityClassSource", ERR_INVALID,
                                "Unsupported value: \"%s\": supported values: \"" WPC_SOURCE
                                "\", \"" PC_SOURCE "\", \"\"",
                                json_string_value(source));
    }
    if (json_object_get(spec, "priorityClassName") == NULL)
        first = "priorityClassSource";
    if (group == NULL) {
        if (name != NULL && json_string_length(name) > 0)
            convert__note(c, "priorityClassName",
                          "dropped: without a priorityClassSource Kueue's conversion sets no "
                          "priorityClassRef");
    } else {
        ref = json_pack("{s:s,s:s}", "group", group, "kind", kind);
        entries = json_object();
        if (ref == NULL || entries == NULL ||
            (name != NULL && json_string_length(name) > 0 && json_object_set(ref, "name", name)))
            goto oom;
        if (json_object_set_new(entries, "priorityClassRef", ref) != 0) {
            ref = NULL;
            goto oom;
        }
        ref = NULL;
    }
    if (json_object_get(spec, first) == NULL) /* neither field */
        return ERR_OK;
    if ((rc = convert__splice(spec, first, entries)) != ERR_OK)
        return rc;
    json_object_del(spec, "priorityClassSource");
    json_object_del(spec, "priorityClassName");
    return ERR_OK;
oom:
    json_decref(ref);
    json_decref(entries);
    return ERR_NOMEM;
}

/* priorityClassRef -> priorityClassName + priorityClassSource, for the two group/kind pairs
 * v1beta1 can express; any other ref is dropped (as Kueue does). */
static err_t wl_priority_to_v1(convert__cur_t *c, json_t *spec)
{
    json_t *ref, *group, *kind, *name, *entries;
    const char *source = NULL;
    size_t mark = 0;
    err_t rc;

    if (json_is_null(json_object_get(spec, "priorityClassRef")))
        return convert__splice(spec, "priorityClassRef", NULL);
    if ((rc = enter(c, spec, "priorityClassRef", &ref, &mark)) != ERR_OK || ref == NULL)
        return rc;
    if ((rc = string_at(c, ref, "group", &group)) != ERR_OK ||
        (rc = string_at(c, ref, "kind", &kind)) != ERR_OK ||
        (rc = string_at(c, ref, "name", &name)) != ERR_OK)
        return rc;
    convert__pop(c, mark);
    if (convert__str_is(group, "kueue.x-k8s.io") && convert__str_is(kind, "WorkloadPriorityClass"))
        source = WPC_SOURCE;
    else if (convert__str_is(group, "scheduling.k8s.io") && convert__str_is(kind, "PriorityClass"))
        source = PC_SOURCE;
    if (source == NULL) {
        convert__note(c, "priorityClassRef",
                      "dropped: v1beta1 has a priorityClassSource only for WorkloadPriorityClass "
                      "and PriorityClass");
        return convert__splice(spec, "priorityClassRef", NULL);
    }
    entries = json_object();
    if (entries == NULL ||
        (name != NULL && json_string_length(name) > 0 &&
         json_object_set(entries, "priorityClassName", name) != 0) ||
        json_object_set_new(entries, "priorityClassSource", json_string(source)) != 0) {
        json_decref(entries);
        return ERR_NOMEM;
    }
    return convert__splice(spec, "priorityClassRef", entries);
}

/* spec.podSets[].topologyRequest: v1beta2's podsetSliceRequiredTopologyConstraints has no
 * v1beta1 field. Only walked, never reshaped: a podSets of another type is left to the schema. */
static err_t wl_podsets(convert__cur_t *c, json_t *spec, bool to_v2)
{
    static const char *const tr_v2[] = {"podsetSliceRequiredTopologyConstraints", NULL};
    json_t *podsets = json_object_get(spec, "podSets"), *ps;
    size_t i;
    err_t rc = ERR_OK;

    if (!json_is_array(podsets))
        return ERR_OK;
    json_array_foreach(podsets, i, ps)
    {
        json_t *tr = json_object_get(ps, "topologyRequest");
        size_t mark;
        if (!json_is_object(tr))
            continue;
        mark = convert__push_key(c, "podSets");
        convert__push_index(c, i);
        convert__push_key(c, "topologyRequest");
        if (to_v2)
            rc = convert__foreign(c, tr, tr_v2, CONVERT_V1BETA1);
        else
            drop_field(c, tr, "podsetSliceRequiredTopologyConstraints", CONVERT_V1BETA1);
        convert__pop(c, mark);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* status.admission.podSetAssignments[].topologyAssignment, each reshaped. */
static err_t wl_topology(convert__cur_t *c, json_t *status, bool to_v2)
{
    json_t *admission, *psas, *psa, *ta;
    size_t amark = 0, i;
    err_t rc;

    if ((rc = enter(c, status, "admission", &admission, &amark)) != ERR_OK || admission == NULL)
        return rc;
    psas = json_object_get(admission, "podSetAssignments");
    if (psas != NULL && !json_is_null(psas) && !json_is_array(psas))
        return convert__fail_at(c, "podSetAssignments", ERR_INVALID, "must be an array");
    json_array_foreach(psas, i, psa)
    {
        size_t mark = convert__push_key(c, "podSetAssignments"), tmark = 0;
        convert__push_index(c, i);
        if (!json_is_object(psa))
            return convert__fail(c, ERR_INVALID, "must be an object");
        if ((rc = enter(c, psa, "topologyAssignment", &ta, &tmark)) != ERR_OK)
            return rc;
        if (ta != NULL) {
            rc = to_v2 ? convert__tas_to_v2(c, ta) : convert__tas_to_v1(c, ta);
            if (rc != ERR_OK)
                return rc;
        }
        convert__pop(c, mark);
    }
    convert__pop(c, amark);
    return ERR_OK;
}

/* Workload: v1beta2 has priorityClassRef for v1beta1's priorityClassName + priorityClassSource,
 * renames status.accumulatedPastExexcutionTimeSeconds (sic), reshapes topology assignments and
 * adds preemptionGates (spec and status), which v1beta1 drops. */
static err_t wl_convert(convert__cur_t *c, json_t *obj, bool to_v2)
{
    /* The fields only one version has: in an object of the other, a mistake (convert__foreign). */
    static const char *const spec_v1[] = {"priorityClassName", "priorityClassSource", NULL};
    static const char *const spec_v2[] = {"priorityClassRef", "preemptionGates", NULL};
    static const char *const status_v1[] = {"accumulatedPastExexcutionTimeSeconds", NULL};
    static const char *const status_v2[] = {"accumulatedPastExecutionTimeSeconds",
                                            "preemptionGates", NULL};
    const char *from = to_v2 ? CONVERT_V1BETA1 : CONVERT_V1BETA2;
    json_t *spec, *status;
    size_t mark = 0;
    err_t rc;

    if ((rc = enter(c, obj, "spec", &spec, &mark)) != ERR_OK)
        return rc;
    if (spec != NULL) {
        if ((rc = convert__foreign(c, spec, to_v2 ? spec_v2 : spec_v1, from)) != ERR_OK ||
            (rc = to_v2 ? wl_priority_to_v2(c, spec) : wl_priority_to_v1(c, spec)) != ERR_OK ||
            (rc = wl_podsets(c, spec, to_v2)) != ERR_OK)
            return rc;
        if (!to_v2)
            drop_field(c, spec, "preemptionGates", CONVERT_V1BETA1);
        convert__pop(c, mark);
    }
    if ((rc = enter(c, obj, "status", &status, &mark)) != ERR_OK)
        return rc;
    if (status != NULL) {
        if ((rc = convert__foreign(c, status, to_v2 ? status_v2 : status_v1, from)) != ERR_OK ||
            (rc = rename_version(status, "accumulatedPastExexcutionTimeSeconds",
                                 "accumulatedPastExecutionTimeSeconds", to_v2, false)) != ERR_OK ||
            (rc = wl_topology(c, status, to_v2)) != ERR_OK)
            return rc;
        if (!to_v2)
            drop_field(c, status, "preemptionGates", CONVERT_V1BETA1);
        convert__pop(c, mark);
    }
    return ERR_OK;
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* Reshape `obj` (the caller's copy) from one version to the other, in place. */
typedef err_t (*convert_fn)(convert__cur_t *c, json_t *obj, bool to_v2);

static const struct {
    const char *kind;
    convert_fn convert; /* NULL: the schemas are the same, apiVersion only */
} kinds[] = {
    {"ClusterQueue", cq_convert}, {"LocalQueue", lq_convert}, {"Workload", wl_convert},
    {"Cohort", cohort_convert},   {"ResourceFlavor", NULL},   {"WorkloadPriorityClass", NULL},
};

static int kind_index(const json_t *kind)
{
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (convert__str_is(kind, kinds[i].kind))
            return (int)i;
    return -1;
}

static int version_of(const json_t *api)
{
    return convert__str_is(api, CONVERT_V1BETA1)   ? 1
           : convert__str_is(api, CONVERT_V1BETA2) ? 2
                                                   : 0;
}

bool convert_supported(const char *api_version, const char *kind)
{
    if (api_version == NULL || kind == NULL ||
        (strcmp(api_version, CONVERT_V1BETA1) != 0 && strcmp(api_version, CONVERT_V1BETA2) != 0))
        return false;
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (strcmp(kind, kinds[i].kind) == 0)
            return true;
    return false;
}

/* "<Kind> <namespace>/<name>" (or without the namespace), bounded. */
static void describe(convert__cur_t *c, const json_t *in, const char *kind)
{
    const json_t *md = json_object_get(in, "metadata");
    const char *name = json_string_value(json_object_get(md, "name"));
    const char *ns = json_string_value(json_object_get(md, "namespace"));

    if (name == NULL)
        name = json_string_value(json_object_get(md, "generateName"));
    if (name == NULL)
        snprintf(c->who, sizeof(c->who), "%.64s (no name)", kind);
    else if (ns != NULL && ns[0] != '\0')
        snprintf(c->who, sizeof(c->who), "%.64s %.63s/%.200s", kind, ns, name);
    else
        snprintf(c->who, sizeof(c->who), "%.64s %.200s", kind, name);
}

err_t convert_object(const json_t *in, const char *to, const convert_opts_t *opts, json_t **out,
                     err_msg_t *msg)
{
    static const convert_opts_t no_opts = {0};
    convert__cur_t c = {.opts = opts != NULL ? opts : &no_opts, .msg = msg};
    const json_t *api = json_object_get(in, "apiVersion"), *kind = json_object_get(in, "kind");
    int k, from_v, to_v = 0;
    json_t *copy;
    err_t rc = ERR_OK;

    if (!json_is_object(in))
        return err_set(msg, ERR_INVALID, "not a JSON object");
    if (to != NULL)
        to_v = strcmp(to, CONVERT_V1BETA1) == 0 ? 1 : strcmp(to, CONVERT_V1BETA2) == 0 ? 2 : 0;
    if (to_v == 0)
        return err_set(msg, ERR_UNSUPPORTED,
                       "cannot convert to \"%.100s\": only " CONVERT_V1BETA1
                       " and " CONVERT_V1BETA2,
                       to ? to : "(null)");
    from_v = version_of(api);
    if (from_v == 0)
        return err_set(msg, ERR_UNSUPPORTED,
                       "apiVersion \"%.100s\" is not converted: only " CONVERT_V1BETA1
                       " and " CONVERT_V1BETA2,
                       json_is_string(api) ? json_string_value(api) : "(none)");
    k = kind_index(kind);
    if (k < 0)
        return err_set(msg, ERR_UNSUPPORTED, "kind \"%.100s\" of %s is not converted",
                       json_is_string(kind) ? json_string_value(kind) : "(none)",
                       json_string_value(api));
    describe(&c, in, kinds[k].kind);
    c.own_budget = CONVERT_MAX_DOMAINS;
    c.budget = c.opts->budget != NULL ? c.opts->budget : &c.own_budget;
    copy = json_deep_copy(in);
    if (copy == NULL)
        return err_set(msg, ERR_NOMEM, "%s: out of memory", c.who);
    if (from_v != to_v && kinds[k].convert != NULL)
        rc = kinds[k].convert(&c, copy, to_v == 2);
    if (rc == ERR_OK && json_object_set_new(copy, "apiVersion", json_string(to)) != 0)
        rc = ERR_NOMEM;
    if (rc != ERR_OK) {
        if (rc == ERR_NOMEM)
            err_set(msg, ERR_NOMEM, "%s: out of memory", c.who);
        json_decref(copy);
        return rc;
    }
    *out = copy;
    return ERR_OK;
}
