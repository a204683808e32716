/* audit -- the governance audit trail: who changed which quota, queue mapping or priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/audit.h"

#include "model/quantity.h"
#include "util/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

/* ---- field extraction ----------------------------------------------------------------------- */

/* `v` as audit text: strings as they are, integers in decimal, booleans; NULL for the rest. */
static json_t *scalar_text(json_t *v)
{
    char buf[32];

    if (json_is_string(v))
        return json_string(json_string_value(v));
    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
        return json_string(buf);
    }
    if (json_is_boolean(v))
        return json_string(json_is_true(v) ? "true" : "false");
    return NULL;
}

static int put(json_t *fields, const char *field, json_t *v)
{
    json_t *text = scalar_text(v);

    if (text == NULL)
        return 0; /* absent (or not a scalar): compared as absent */
    return json_object_set_new(fields, field, text);
}

static json_t *at(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    return b ? json_object_get(v, b) : v;
}

/* Every flavor/resource quota of a ClusterQueue or Cohort spec. */
static int put_quotas(json_t *fields, json_t *spec)
{
    static const char *const limits[] = {"nominalQuota", "borrowingLimit", "lendingLimit"};
    size_t g, f, r;
    json_t *group, *flavor, *res;

    json_array_foreach(json_object_get(spec, "resourceGroups"), g, group)
    {
        json_array_foreach(json_object_get(group, "flavors"), f, flavor)
        {
            const char *fname = json_string_value(json_object_get(flavor, "name"));
            json_array_foreach(json_object_get(flavor, "resources"), r, res)
            {
                const char *rname = json_string_value(json_object_get(res, "name"));
                for (size_t i = 0; i < 3; i++) {
                    char field[600];
                    snprintf(field, sizeof(field), "quota %s/%s %s", fname ? fname : "?",
                             rname ? rname : "?", limits[i]);
                    if (put(fields, field, json_object_get(res, limits[i])) != 0)
                        return -1;
                }
            }
        }
    }
    return 0;
}

/* The audited fields of `obj` as {field: text}. */
static json_t *fields_of(const char *kind, json_t *obj)
{
    json_t *fields = json_object();
    json_t *spec = json_object_get(obj, "spec");
    json_t *labels = at(obj, "metadata", "labels");
    int rc = 0;

    if (fields == NULL || obj == NULL)
        return fields;
    if (strcmp(kind, "ClusterQueue") == 0) {
        rc |= put_quotas(fields, spec);
        rc |= put(
            fields, "cohortName",
            json_object_get(spec, json_object_get(spec, "cohortName") ? "cohortName" : "cohort"));
        rc |= put(fields, "fairSharing.weight", at(spec, "fairSharing", "weight"));
        rc |= put(fields, "stopPolicy", json_object_get(spec, "stopPolicy"));
    } else if (strcmp(kind, "Cohort") == 0) {
        rc |= put_quotas(fields, spec);
        rc |= put(fields, "parentName", json_object_get(spec, "parentName"));
        rc |= put(fields, "fairSharing.weight", at(spec, "fairSharing", "weight"));
    } else if (strcmp(kind, "LocalQueue") == 0) {
        rc |= put(fields, "clusterQueue", json_object_get(spec, "clusterQueue"));
        rc |= put(fields, "stopPolicy", json_object_get(spec, "stopPolicy"));
    } else if (strcmp(kind, "WorkloadPriorityClass") == 0) {
        rc |= put(fields, "value", json_object_get(obj, "value"));
    } else if (strcmp(kind, "Job") == 0) {
        rc |= put(fields, "label kueue.x-k8s.io/priority-class",
                  json_object_get(labels, "kueue.x-k8s.io/priority-class"));
        rc |= put(fields, "label kueue.x-k8s.io/queue-name",
                  json_object_get(labels, "kueue.x-k8s.io/queue-name"));
    } else if (strcmp(kind, "Workload") == 0) {
        json_t *ref = at(spec, "priorityClassRef", "name");
        rc |= put(fields, "priorityClass", ref ? ref : json_object_get(spec, "priorityClassName"));
        rc |= put(fields, "priority", json_object_get(spec, "priority"));
        rc |= put(fields, "label kueue.x-k8s.io/priority-class",
                  json_object_get(labels, "kueue.x-k8s.io/priority-class"));
    }
    if (rc != 0) {
        json_decref(fields);
        return NULL;
    }
    return fields;
}

/* Equal as audit values: the same text, or the same quantity written differently. */
static bool same_value(const char *field, json_t *a, json_t *b)
{
    quantity_t qa, qb;
    const char *sa = json_string_value(a), *sb = json_string_value(b);

    if (sa == NULL || sb == NULL)
        return sa == sb;
    if (strcmp(sa, sb) == 0)
        return true;
    if (strncmp(field, "quota ", 6) != 0 && strcmp(field, "fairSharing.weight") != 0)
        return false;
    return quantity_parse(sa, strlen(sa), &qa, NULL) == ERR_OK &&
           quantity_parse(sb, strlen(sb), &qb, NULL) == ERR_OK && quantity_cmp(qa, qb) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *audit_changes(const char *kind, json_t *old, json_t *obj)
{
    json_t *before = fields_of(kind, old), *after = fields_of(kind, obj);
    json_t *changes = json_array();
    const char **keys = NULL;
    size_t nkeys = 0, cap;
    const char *k;
    json_t *v;

    if (before == NULL || after == NULL || changes == NULL)
        goto fail;
    cap = json_object_size(before) + json_object_size(after);
    keys = calloc(cap ? cap : 1, sizeof(*keys));
    if (keys == NULL)
        goto fail;
    json_object_foreach(before, k, v) keys[nkeys++] = k;
    json_object_foreach(after, k, v)
    {
        if (json_object_get(before, k) == NULL)
            keys[nkeys++] = k;
    }
    qsort(keys, nkeys, sizeof(*keys), cmp_str);
    for (size_t i = 0; i < nkeys; i++) {
        json_t *b = json_object_get(before, keys[i]), *a = json_object_get(after, keys[i]);
        json_t *change;
        if (same_value(keys[i], b, a))
            continue;
        change = json_pack("{s:s, s:O?, s:O?}", "field", keys[i], "before", b, "after", a);
        if (change == NULL || json_array_append_new(changes, change) != 0)
            goto fail;
    }
    free(keys);
    json_decref(before);
    json_decref(after);
    return changes;
fail:
    free(keys);
    json_decref(before);
    json_decref(after);
    json_decref(changes);
    return NULL;
}

/* ---- records -----------------------------------------------------------------------------------
 */

err_t audit_record_build(const hook_audit_event_t *ev, int64_t now_ms, json_t **out)
{
    json_t *changes = audit_changes(ev->kind, ev->old_object, ev->object);
    json_t *rec;
    char when[40];

    if (changes == NULL)
        return ERR_NOMEM;
    if (ev->allowed && json_array_size(changes) == 0) {
        json_decref(changes);
        *out = NULL;
        return ERR_OK;
    }
    chainlog_format_time(now_ms, when, sizeof(when));
    /* The user is only what an authenticated caller (the API server, under mutual TLS) says it
     * is; from anyone else it is a claim, kept apart so that no reader takes it for a fact. */
    rec = json_pack("{s:s, s:s?, s:b, s:O, s:s, s:s, s:s?, s:s?, s:b, s:o}", "time", when, "user",
                    ev->authenticated ? (ev->user ? ev->user : "") : NULL, "authenticated",
                    ev->authenticated, ev->authenticated ? "groups" : "claimedGroups",
                    ev->groups ? ev->groups : json_null(), "operation", ev->operation, "kind",
                    ev->kind, "namespace", ev->namespace, "name", ev->name, "allowed", ev->allowed,
                    "changes", changes);
    if (rec != NULL && !ev->authenticated &&
        json_object_set_new(rec, "claimedUser", json_string(ev->user ? ev->user : "")) != 0) {
        json_decref(rec);
        return ERR_NOMEM;
    }
    if (rec == NULL)
        return ERR_NOMEM;
    if ((!ev->allowed &&
         json_object_set_new(rec, "reason", json_string(ev->reason ? ev->reason : "")) != 0) ||
        (json_array_size(ev->warnings) > 0 &&
         json_object_set(rec, "warnings", ev->warnings) != 0)) {
        json_decref(rec);
        return ERR_NOMEM;
    }
    *out = rec;
    return ERR_OK;
}

char *audit_event_message(json_t *record)
{
    const size_t cap = 1024;
    char *out = malloc(cap);
    const char *user = json_string_value(json_object_get(record, "user"));
    const char *claimed = json_string_value(json_object_get(record, "claimedUser"));
    json_t *changes = json_object_get(record, "changes"), *ch;
    char who[300];
    size_t len, i;

    if (out == NULL)
        return NULL;
    if (user == NULL && claimed != NULL) {
        snprintf(who, sizeof(who), "an unauthenticated caller claiming to be %.200s", claimed);
        user = who;
    }
    if (user == NULL || user[0] == '\0')
        user = "(unknown user)";
    if (!json_is_true(json_object_get(record, "allowed"))) {
        const char *op = json_string_value(json_object_get(record, "operation"));
        const char *reason = json_string_value(json_object_get(record, "reason"));
        snprintf(out, cap, "%s was refused %s: %s", user, op ? op : "a change",
                 reason ? reason : "");
        return out;
    }
    len = (size_t)snprintf(out, cap, "%s changed", user);
    json_array_foreach(changes, i, ch)
    {
        const char *b = json_string_value(json_object_get(ch, "before"));
        const char *a = json_string_value(json_object_get(ch, "after"));
        if (len >= cap - 1)
            break;
        len += (size_t)snprintf(out + len, cap - len, "%s %s %s -> %s", i ? ";" : "",
                                json_string_value(json_object_get(ch, "field")), b ? b : "(none)",
                                a ? a : "(none)");
    }
    return out;
}

/* ---- printing
 * ------------------------------------------------------------------------------------ */

/* Does the record name the object "Kind/name" or "Kind/namespace/name"? */
static bool object_matches(json_t *rec, const char *filter)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    const char *ns = json_string_value(json_object_get(rec, "namespace"));
    const char *name = json_string_value(json_object_get(rec, "name"));
    const char *slash = strchr(filter, '/');
    char want[600];

    if (slash == NULL || kind == NULL || name == NULL)
        return false;
    if ((size_t)(slash - filter) != strlen(kind) ||
        strncasecmp(filter, kind, (size_t)(slash - filter)) != 0)
        return false;
    if (ns != NULL)
        snprintf(want, sizeof(want), "%s/%s", ns, name);
    else
        snprintf(want, sizeof(want), "%s", name);
    return strcmp(slash + 1, want) == 0 || (ns != NULL && strcmp(slash + 1, name) == 0);
}

static const char *text_or(json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

/* A reader of the JSON-lines stream: the next record matching the filter. */
typedef struct reader_s {
    FILE *in, *err;
    const audit_filter_t *f;
    char *line; /* owned: getline's buffer */
    size_t cap, lineno;
} reader_t;

/* The next record of `r` that matches its filter (a new reference), or NULL at the end of the
 * stream; lines that are not audit records are reported on r->err with their number. */
static json_t *reader_next(reader_t *r)
{
    ssize_t n;

    while ((n = getline(&r->line, &r->cap, r->in)) >= 0) {
        json_error_t jerr;
        json_t *rec;
        int64_t when;

        r->lineno++;
        if (n <= 1)
            continue;
        rec = util_json_loads(r->line, 0, &jerr);
        if (!json_is_object(rec) ||
            (when = chainlog_parse_time(text_or(json_object_get(rec, "time"), NULL))) < 0) {
            fprintf(r->err, "line %zu: not an audit record, skipped\n", r->lineno);
            json_decref(rec);
            continue;
        }
        if ((r->f->since_ms > 0 && when < r->f->since_ms) ||
            (r->f->object != NULL && !object_matches(rec, r->f->object))) {
            json_decref(rec);
            continue;
        }
        return rec;
    }
    return NULL;
}

err_t audit_collect(FILE *in, FILE *err, const audit_filter_t *f, json_t **out, err_msg_t *msg)
{
    reader_t r = {in, err, f, NULL, 0, 0};
    json_t *all = json_array(), *rec;
    err_t rc = ERR_OK;

    while (all != NULL && (rec = reader_next(&r)) != NULL) {
        if (json_array_append_new(all, rec) != 0) {
            rc = err_set(msg, ERR_NOMEM, "out of memory");
            break;
        }
    }
    free(r.line);
    if (all == NULL)
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    else if (rc == ERR_OK && ferror(in))
        rc = err_set(msg, ERR_IO, "reading audit log: %s", strerror(errno));
    if (rc != ERR_OK) {
        json_decref(all);
        return rc;
    }
    *out = all;
    return ERR_OK;
}

err_t audit_print(FILE *in, FILE *out, FILE *err, const audit_filter_t *f, size_t *count,
                  err_msg_t *msg)
{
    reader_t r = {in, err, f, NULL, 0, 0};
    bool header = false;
    json_t *rec;

    *count = 0;
    while ((rec = reader_next(&r)) != NULL) {
        json_t *changes, *ch;
        char object[600], who[300];
        size_t i;

        if (json_is_string(json_object_get(rec, "type"))) {
            /* The log's own records (auditlog.c): what happened to the trail itself. */
            const char *type = text_or(json_object_get(rec, "type"), "");
            char what[600];
            if (strcmp(type, "suppressed") == 0)
                snprintf(what, sizeof(what), "%lld records of %s not written (rate limit) since %s",
                         (long long)json_integer_value(json_object_get(rec, "count")),
                         text_or(json_object_get(rec, "user"), "?"),
                         text_or(json_object_get(rec, "since"), "?"));
            else if (strcmp(type, "rotated") == 0)
                snprintf(what, sizeof(what), "rotation deleted %s (records seq %lld..%lld)",
                         text_or(json_object_get(rec, "dropped"), "?"),
                         (long long)json_integer_value(json_object_get(rec, "firstSeq")),
                         (long long)json_integer_value(json_object_get(rec, "lastSeq")));
            else if (strcmp(type, "recovered") == 0)
                snprintf(what, sizeof(what), "a torn last line of %lld bytes was cut off at start",
                         (long long)json_integer_value(json_object_get(rec, "discardedBytes")));
            else
                snprintf(what, sizeof(what), "%s", type);
            fprintf(out, "%-24s  %-20s  %s\n", text_or(json_object_get(rec, "time"), ""),
                    "(audit log)", what);
            json_decref(rec);
            continue;
        }
        if (!header) {
            fprintf(out, "%-24s  %-20s  %-9s  %-40s  %s\n", "TIME", "USER", "OPERATION", "OBJECT",
                    "RESULT");
            header = true;
        }
        if (json_is_string(json_object_get(rec, "namespace")))
            snprintf(object, sizeof(object), "%s/%s/%s", text_or(json_object_get(rec, "kind"), "?"),
                     text_or(json_object_get(rec, "namespace"), "?"),
                     text_or(json_object_get(rec, "name"), "?"));
        else
            snprintf(object, sizeof(object), "%s/%s", text_or(json_object_get(rec, "kind"), "?"),
                     text_or(json_object_get(rec, "name"), "?"));
        if (json_is_string(json_object_get(rec, "user")))
            snprintf(who, sizeof(who), "%s", text_or(json_object_get(rec, "user"), ""));
        else /* not authenticated: only a claim */
            snprintf(who, sizeof(who), "?%s", text_or(json_object_get(rec, "claimedUser"), ""));
        fprintf(out, "%-24s  %-20s  %-9s  %-40s  %s\n", text_or(json_object_get(rec, "time"), ""),
                who, text_or(json_object_get(rec, "operation"), ""), object,
                json_is_true(json_object_get(rec, "allowed")) ? "allowed" : "denied");
        if (!json_is_true(json_object_get(rec, "allowed")))
            fprintf(out, "    reason: %s\n", text_or(json_object_get(rec, "reason"), ""));
        changes = json_object_get(rec, "changes");
        json_array_foreach(changes, i, ch)
        {
            fprintf(out, "    %s: %s -> %s\n", text_or(json_object_get(ch, "field"), "?"),
                    text_or(json_object_get(ch, "before"), "(none)"),
                    text_or(json_object_get(ch, "after"), "(none)"));
        }
        json_array_foreach(json_object_get(rec, "warnings"), i, ch)
        {
            fprintf(out, "    warning: %s\n", text_or(ch, ""));
        }
        (*count)++;
        json_decref(rec);
    }
    free(r.line);
    if (ferror(in))
        return err_set(msg, ERR_IO, "reading audit log: %s", strerror(errno));
    return ERR_OK;
}
