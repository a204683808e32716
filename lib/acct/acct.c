/* acct -- the accounting record: one JSON line per admission that ends, and its log file. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "acct/acct.h"

#include <stdlib.h>
#include <string.h>

static const char *const outcomes[ACCT__OUTCOMES] = {"finished", "preempted", "evicted", "deleted"};

const char *acct_outcome_str(acct_outcome_t o)
{
    return (unsigned)o < ACCT__OUTCOMES ? outcomes[o] : "?";
}

bool acct_outcome_parse(const char *s, acct_outcome_t *out)
{
    for (int i = 0; s != NULL && i < ACCT__OUTCOMES; i++) {
        if (strcmp(s, outcomes[i]) == 0) {
            *out = (acct_outcome_t)i;
            return true;
        }
    }
    return false;
}

/* ---- building -------------------------------------------------------------------------------- */

static json_t *time_json(int64_t ms)
{
    char buf[40];

    if (ms < 0)
        return json_null();
    chainlog_format_time(ms, buf, sizeof(buf));
    return json_string(buf);
}

/* Each podset as {"name","count","flavors":{resource: flavor},"resources":{resource: qty}};
 * the distinct flavor names, sorted, are added to `flavors`. */
static json_t *podsets_json(const admission_t *adm, json_t *flavors)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr != NULL && adm != NULL && i < adm->nassignments; i++) {
        const pod_set_assignment_t *a = &adm->assignments[i];
        json_t *ps = json_object(), *fl = json_object(), *res = json_object();
        char q[QUANTITY_STR_MAX];
        int rc = ps == NULL || fl == NULL || res == NULL;

        for (size_t k = 0; !rc && k < a->flavors.len; k++) {
            const char *f = a->flavors.items[k].value;
            size_t n = json_array_size(flavors), at = 0;
            rc |= json_object_set_new(fl, a->flavors.items[k].key, json_string(f));
            while (at < n && strcmp(json_string_value(json_array_get(flavors, at)), f) < 0)
                at++;
            if (at == n || strcmp(json_string_value(json_array_get(flavors, at)), f) != 0)
                rc |= json_array_insert_new(flavors, at, json_string(f));
        }
        for (size_t k = 0; !rc && k < a->usage.len; k++)
            rc |= json_object_set_new(res, a->usage.items[k].name,
                                      json_string(quantity_format(a->usage.items[k].value, q)));
        if (!rc)
            rc = json_object_set_new(ps, "name", json_string(a->name ? a->name : "main")) ||
                 json_object_set_new(ps, "count",
                                     a->has_count ? json_integer(a->count) : json_null()) ||
                 json_object_set(ps, "flavors", fl) || json_object_set(ps, "resources", res) ||
                 json_array_append(arr, ps);
        json_decref(ps);
        json_decref(fl);
        json_decref(res);
        if (rc) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

err_t acct_record_build(const acct_end_t *e, json_t **out, err_msg_t *msg)
{
    json_t *flavors = json_array(), *podsets = NULL, *rec = NULL;

    if (flavors == NULL || (podsets = podsets_json(e->adm, flavors)) == NULL)
        goto oom;
    /* Keys in a fixed order (JSON_PRESERVE_ORDER when written): the record reads the same way
     * every time, and the simulator's file is byte-for-byte reproducible. */
    rec = json_pack("{s:o, s:s, s:s, s:s, s:s?, s:s?, s:s?, s:s?, s:i, s:s, s:s?, s:o, s:o, s:o, "
                    "s:O, s:O}",
                    "time", time_json(e->ended_ms), "source", e->source ? e->source : "operator",
                    "workload", e->workload ? e->workload : "", "namespace", e->ns ? e->ns : "",
                    "uid", e->uid, "localQueue", e->local_queue, "clusterQueue",
                    e->adm ? e->adm->cluster_queue : NULL, "priorityClass", e->priority_class,
                    "priority", (int)e->priority, "outcome", acct_outcome_str(e->outcome), "reason",
                    e->reason, "queuedAt", time_json(e->queued_ms), "admittedAt",
                    time_json(e->admitted_ms), "endedAt", time_json(e->ended_ms), "flavors",
                    flavors, "podSets", podsets);
    if (rec == NULL)
        goto oom;
    json_decref(flavors);
    json_decref(podsets);
    *out = rec;
    return ERR_OK;
oom:
    json_decref(flavors);
    json_decref(podsets);
    json_decref(rec);
    return err_set(msg, ERR_NOMEM, "accounting record: out of memory");
}

/* ---- reading ----------------------------------------------------------------------------------
 */

void acct_rec_fini(acct_rec_t *r)
{
    if (r == NULL)
        return;
    free(r->workload);
    free(r->ns);
    free(r->local_queue);
    free(r->cluster_queue);
    free(r->priority_class);
    free(r->reason);
    for (size_t i = 0; i < r->nuse; i++) {
        free(r->use[i].flavor);
        free(r->use[i].resource);
    }
    free(r->use);
    memset(r, 0, sizeof(*r));
}

/* A string field (null or absent: "" when `optional`, else an error) copied into *out. */
static err_t get_str(json_t *j, const char *key, bool optional, char **out, err_msg_t *msg)
{
    json_t *v = json_object_get(j, key);

    if ((v == NULL || json_is_null(v)) && optional)
        v = NULL;
    else if (!json_is_string(v))
        return err_set(msg, ERR_PARSE, "%s: %s", key, v == NULL ? "missing" : "not a string");
    *out = strdup(v != NULL ? json_string_value(v) : "");
    return *out == NULL ? err_set(msg, ERR_NOMEM, "out of memory") : ERR_OK;
}

static err_t get_time(json_t *j, const char *key, int64_t *out, err_msg_t *msg)
{
    const char *s = json_string_value(json_object_get(j, key));
    int64_t t = chainlog_parse_time(s);

    if (t < 0)
        return err_set(msg, ERR_PARSE, "%s: %s", key,
                       s == NULL ? "missing or not a string"
                                 : "not a UTC time YYYY-MM-DDTHH:MM:SS[.sss]Z");
    *out = t;
    return ERR_OK;
}

/* Add `amount` of (flavor, resource) to r->use. */
static err_t use_add(acct_rec_t *r, const char *flavor, const char *resource, qnano_t amount,
                     err_msg_t *msg)
{
    acct_use_t *u;

    for (size_t i = 0; i < r->nuse; i++) {
        u = &r->use[i];
        if (strcmp(u->flavor, flavor) == 0 && strcmp(u->resource, resource) == 0) {
            if (amount > QUANTITY_NANO_MAX - u->amount)
                return err_set(msg, ERR_PARSE, "%s/%s: total out of range", flavor, resource);
            u->amount += amount;
            return ERR_OK;
        }
    }
    u = realloc(r->use, (r->nuse + 1) * sizeof(*u));
    if (u == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    r->use = u;
    u = &r->use[r->nuse];
    u->flavor = strdup(flavor);
    u->resource = strdup(resource);
    u->amount = amount;
    if (u->flavor == NULL || u->resource == NULL) {
        free(u->flavor);
        free(u->resource);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    r->nuse++;
    return ERR_OK;
}

static err_t parse_podsets(json_t *arr, acct_rec_t *r, err_msg_t *msg)
{
    size_t i;
    json_t *ps;

    if (!json_is_array(arr))
        return err_set(msg, ERR_PARSE, "podSets: missing or not an array");
    json_array_foreach(arr, i, ps)
    {
        json_t *fl = json_object_get(ps, "flavors"), *res = json_object_get(ps, "resources"), *v;
        const char *name;

        if (!json_is_object(ps) || !json_is_object(fl) || !json_is_object(res))
            return err_set(msg, ERR_PARSE, "podSets[%zu]: not an object with flavors and resources",
                           i);
        json_object_foreach(res, name, v)
        {
            const char *text = json_string_value(v);
            const char *flavor = json_string_value(json_object_get(fl, name));
            quantity_t q;
            err_msg_t qm;
            err_t rc;

            if (text == NULL || quantity_parse(text, strlen(text), &q, &qm) != ERR_OK ||
                quantity_sign(q) < 0)
                return err_set(msg, ERR_PARSE, "podSets[%zu].resources[%s]: %s", i, name,
                               text == NULL ? "not a string" : "not a quantity >= 0");
            rc = use_add(r, flavor != NULL ? flavor : "", name, q.nano, msg);
            if (rc != ERR_OK)
                return err_prefix(msg, rc, "podSets[%zu].resources[%s]: ", i, name);
        }
    }
    return ERR_OK;
}

err_t acct_record_parse(json_t *j, acct_rec_t *out, err_msg_t *msg)
{
    acct_rec_t r;
    err_t rc;

    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    if (!json_is_object(j))
        return err_set(msg, ERR_PARSE, "not a JSON object");
    if (json_object_get(j, "type") != NULL)
        return err_set(msg, ERR_NOT_FOUND, "the log's own record");
    if ((rc = get_str(j, "workload", false, &r.workload, msg)) != ERR_OK ||
        (rc = get_str(j, "namespace", false, &r.ns, msg)) != ERR_OK ||
        (rc = get_str(j, "localQueue", true, &r.local_queue, msg)) != ERR_OK ||
        (rc = get_str(j, "clusterQueue", false, &r.cluster_queue, msg)) != ERR_OK ||
        (rc = get_str(j, "priorityClass", true, &r.priority_class, msg)) != ERR_OK ||
        (rc = get_str(j, "reason", true, &r.reason, msg)) != ERR_OK ||
        (rc = get_time(j, "queuedAt", &r.queued_ms, msg)) != ERR_OK ||
        (rc = get_time(j, "admittedAt", &r.admitted_ms, msg)) != ERR_OK ||
        (rc = get_time(j, "endedAt", &r.ended_ms, msg)) != ERR_OK)
        goto fail;
    if (!acct_outcome_parse(json_string_value(json_object_get(j, "outcome")), &r.outcome)) {
        rc = err_set(msg, ERR_PARSE, "outcome: not one of finished, preempted, evicted, deleted");
        goto fail;
    }
    if (r.admitted_ms < r.queued_ms || r.ended_ms < r.admitted_ms) {
        rc = err_set(msg, ERR_PARSE, "times out of order (queuedAt <= admittedAt <= endedAt)");
        goto fail;
    }
    rc = parse_podsets(json_object_get(j, "podSets"), &r, msg);
    if (rc != ERR_OK)
        goto fail;
    *out = r;
    return ERR_OK;
fail:
    acct_rec_fini(&r);
    return rc;
}

/* ---- the log ----------------------------------------------------------------------------------
 */

struct acct_log_s {
    chainlog_t *file; /* owned */
    uint64_t count;
    err_t failed; /* the first failure, kept for acct_log_close() */
    err_msg_t failure;
};

err_t acct_log_open(const char *path, bool sim, uint64_t max_bytes, unsigned keep, acct_log_t **out,
                    err_msg_t *msg)
{
    acct_log_t *log = calloc(1, sizeof(*log));
    chainlog_opts_t opts = {.what = "accounting log",
                            .max_bytes = sim ? 0 : max_bytes,
                            .keep = keep,
                            .truncate = sim,
                            .no_sync = sim};
    err_t rc;

    if (log == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = chainlog_open(path, &opts, &log->file, msg);
    if (rc != ERR_OK) {
        free(log);
        return rc;
    }
    *out = log;
    return ERR_OK;
}

err_t acct_record_end(json_t *rec, acct_outcome_t outcome, const char *reason, int64_t ended_ms)
{
    if (json_object_set_new(rec, "time", time_json(ended_ms)) != 0 ||
        json_object_set_new(rec, "outcome", json_string(acct_outcome_str(outcome))) != 0 ||
        json_object_set_new(rec, "reason", reason ? json_string(reason) : json_null()) != 0 ||
        json_object_set_new(rec, "endedAt", time_json(ended_ms)) != 0)
        return ERR_NOMEM;
    return ERR_OK;
}

err_t acct_log_write(acct_log_t *log, const acct_end_t *e, err_msg_t *msg)
{
    json_t *rec = NULL;
    err_t rc;

    acct_record_build(e, &rec, NULL);
    rc = acct_log_append(log, rec, msg);
    json_decref(rec);
    return rc;
}

err_t acct_log_append(acct_log_t *log, json_t *rec, err_msg_t *msg)
{
    err_msg_t m = {{0}};
    err_t rc = rec != NULL ? chainlog_append(log->file, rec, &m)
                           : err_set(&m, ERR_NOMEM, "accounting record: out of memory");

    if (rc == ERR_OK) {
        log->count++;
        return ERR_OK;
    }
    if (log->failed == ERR_OK) {
        log->failed = rc;
        log->failure = m;
    }
    if (msg != NULL)
        *msg = m;
    return rc;
}

uint64_t acct_log_count(const acct_log_t *log)
{
    return log->count;
}

err_t acct_log_close(acct_log_t *log, err_msg_t *msg)
{
    err_msg_t m = {{0}};
    err_t rc;

    if (log == NULL)
        return ERR_OK;
    rc = chainlog_close(log->file, &m);
    if (log->failed != ERR_OK) {
        rc = log->failed;
        m = log->failure;
    }
    free(log);
    if (rc != ERR_OK && msg != NULL)
        *msg = m;
    return rc;
}
