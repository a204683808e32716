/* scale_check -- replay a Workload watch history and fail on any quota overcommit or double
 * admission. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "scale_check.h"

#include "model/quantity.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- decoding a record ---------------------------------------------------------------------- */

/* `n` decimal digits at `s` into *out; false when one is not a digit. */
static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

int64_t scale_rfc3339(const char *s)
{
    int y, mo, d, h, mi, se;
    struct tm tm;
    const char *p;
    int64_t t, off = 0;

    if (s == NULL || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't'))
        return -1;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
        !digits(s + 17, 2, &se))
        return -1;
    p = s + 19;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == '+' || *p == '-') {
        int oh, om;
        if (strlen(p) != 6 || !digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om))
            return -1;
        off = (int64_t)(oh * 3600 + om * 60) * (*p == '+' ? 1 : -1);
    } else if (strcmp(p, "Z") != 0 && strcmp(p, "z") != 0) {
        return -1;
    }
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    t = (int64_t)timegm(&tm);
    return t - off;
}

static const char *str_at(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Status, reason and lastTransitionTime of condition `type` in `conds`. */
static bool cond_true(json_t *conds, const char *type, int64_t *ltt)
{
    size_t i;
    json_t *c;

    json_array_foreach(conds, i, c)
    {
        const char *t = str_at(c, "type");
        if (t != NULL && strcmp(t, type) == 0) {
            const char *st = str_at(c, "status");
            bool on = st != NULL && strcmp(st, "True") == 0;
            if (ltt != NULL)
                *ltt = on ? scale_rfc3339(str_at(c, "lastTransitionTime")) : -1;
            return on;
        }
    }
    if (ltt != NULL)
        *ltt = -1;
    return false;
}

static err_t copy_str(char *dst, size_t n, const char *src, const char *what, err_msg_t *msg)
{
    size_t len = src ? strlen(src) : 0;
    if (src == NULL)
        return err_set(msg, ERR_PARSE, "workload: no %s", what);
    if (len >= n)
        return err_set(msg, ERR_PARSE, "workload: %s too long", what);
    memcpy(dst, src, len + 1);
    return ERR_OK;
}

err_t scale_rec_parse(json_t *obj, bool deleted, scale_rec_t *out, err_msg_t *msg)
{
    json_t *meta = json_object_get(obj, "metadata"), *status = json_object_get(obj, "status");
    json_t *adm = json_object_get(status, "admission"), *psa, *a;
    scale_rec_t r;
    const char *rv, *cq;
    size_t i;
    err_t e;

    memset(&r, 0, sizeof(r));
    e = copy_str(r.ns, sizeof(r.ns), str_at(meta, "namespace"), "namespace", msg);
    if (e == ERR_OK)
        e = copy_str(r.name, sizeof(r.name), str_at(meta, "name"), "name", msg);
    if (e != ERR_OK)
        return e;
    rv = str_at(meta, "resourceVersion");
    if (rv != NULL) {
        char *end;
        unsigned long long v = strtoull(rv, &end, 10);
        r.rv = (*rv != '\0' && *end == '\0') ? (uint64_t)v : 0;
    }
    r.deleted = deleted;
    r.generation = json_integer_value(json_object_get(meta, "generation"));
    r.created_s = scale_rfc3339(str_at(meta, "creationTimestamp"));
    r.conditions = json_object_get(status, "conditions");
    r.admitted = cond_true(r.conditions, "Admitted", &r.admitted_at_s);
    r.evicted = cond_true(r.conditions, "Evicted", NULL);
    r.finished = cond_true(r.conditions, "Finished", NULL);
    r.reserved = cond_true(r.conditions, "QuotaReserved", NULL) && json_is_object(adm);
    cq = str_at(adm, "clusterQueue");
    if (cq != NULL && copy_str(r.cq, sizeof(r.cq), cq, "admission.clusterQueue", msg) != ERR_OK)
        return ERR_PARSE;
    psa = json_object_get(adm, "podSetAssignments");
    json_array_foreach(psa, i, a)
    {
        json_t *q = json_object_get(json_object_get(a, "resourceUsage"), "cpu");
        quantity_t qv;
        int64_t milli;
        if (q == NULL)
            continue;
        if (!json_is_string(q) ||
            quantity_parse(json_string_value(q), json_string_length(q), &qv, msg) != ERR_OK ||
            quantity_milli_value(qv, &milli) != ERR_OK)
            return err_prefix(msg, ERR_PARSE, "%s/%s: admission.podSetAssignments[%zu]: ", r.ns,
                              r.name, i);
        r.usage_milli += milli;
    }
    *out = r;
    return ERR_OK;
}

/* ---- the checker ---------------------------------------------------------------------------- */

err_t scale_check_init(scale_check_t *chk, const scale_layout_t *l, err_msg_t *msg)
{
    memset(chk, 0, sizeof(*chk));
    chk->l = l;
    chk->cq_held = calloc(l->ncqs + 1, sizeof(int64_t));
    chk->cq_peak = calloc(l->ncqs + 1, sizeof(int64_t));
    chk->cohort_held = calloc(l->ncohorts + 1, sizeof(int64_t));
    chk->cohort_peak = calloc(l->ncohorts + 1, sizeof(int64_t));
    chk->wl = calloc(l->nwl + 1, sizeof(scale_check_wl_t));
    if (chk->cq_held == NULL || chk->cq_peak == NULL || chk->cohort_held == NULL ||
        chk->cohort_peak == NULL || chk->wl == NULL)
        goto fail;
    return ERR_OK;
fail:
    scale_check_fini(chk);
    return err_set(msg, ERR_NOMEM, "quota checker: out of memory");
}

void scale_check_fini(scale_check_t *chk)
{
    free(chk->cq_held);
    free(chk->cq_peak);
    free(chk->cohort_held);
    free(chk->cohort_peak);
    free(chk->wl);
    memset(chk, 0, sizeof(*chk));
}

void scale_check_gap(scale_check_t *chk)
{
    chk->gaps++;
    chk->last_rv = 0;
    chk->relisting = true;
}

void scale_check_gap_end(scale_check_t *chk)
{
    chk->relisting = false;
}

/* Give back what `st` holds. */
static void release(scale_check_t *chk, scale_check_wl_t *st)
{
    chk->cq_held[st->cq] -= st->usage_milli;
    chk->cohort_held[chk->l->cqs[st->cq].cohort] -= st->usage_milli;
    st->held = false;
    chk->releases++;
}

/* Count a violation; the first one is kept. Returns ERR_CONFLICT. */
static err_t violation(scale_check_t *chk, err_msg_t *msg, const scale_rec_t *rec, const char *what)
{
    err_msg_t m;

    err_set(&m, ERR_CONFLICT, "record #%llu (resourceVersion %llu) of workload %s/%s: %s",
            (unsigned long long)chk->records, (unsigned long long)rec->rv, rec->ns, rec->name,
            what);
    if (chk->violations++ == 0)
        chk->first_violation = m;
    if (msg != NULL)
        *msg = m;
    return ERR_CONFLICT;
}

static void mcpu(char *buf, size_t n, int64_t milli)
{
    if (milli % 1000 == 0)
        snprintf(buf, n, "%lld", (long long)(milli / 1000));
    else
        snprintf(buf, n, "%lldm", (long long)milli);
}

err_t scale_check_apply(scale_check_t *chk, uint64_t wl, const scale_rec_t *rec, err_msg_t *msg)
{
    const scale_layout_t *l = chk->l;
    scale_check_wl_t *st;
    bool holds = rec->reserved && !rec->finished && !rec->deleted;
    err_t rc = ERR_OK;
    char what[400], a[32], b[32], c[32];

    chk->records++;
    if (wl >= l->nwl)
        return violation(chk, msg, rec, "not a workload of the shape");
    st = &chk->wl[wl];
    if (rec->rv != 0 && !chk->relisting) {
        if (chk->last_rv != 0 && rec->rv <= chk->last_rv) {
            snprintf(what, sizeof(what), "resourceVersion not after the previous record's %llu",
                     (unsigned long long)chk->last_rv);
            rc = violation(chk, msg, rec, what);
        }
        chk->last_rv = rec->rv;
    }
    if (rec->evicted)
        st->evicted_since_admission = true;

    if (st->held && holds) {
        /* Still held: the admission may not move or grow without a release in between. */
        int64_t qi = scale_layout_cq_find(l, rec->cq);
        if (qi >= 0 && (uint32_t)qi == st->cq && rec->usage_milli == st->usage_milli)
            goto out;
        if (!chk->relisting) {
            snprintf(what, sizeof(what),
                     "admission changed to ClusterQueue %s (%lld milli-cpu) while it held %s "
                     "(%lld milli-cpu): admitted twice without a release",
                     rec->cq, (long long)rec->usage_milli, l->cqs[st->cq].name,
                     (long long)st->usage_milli);
            rc = violation(chk, msg, rec, what);
            goto out;
        }
        /* Released and admitted again within the lost history. */
        release(chk, st);
    }
    if (st->held && !holds)
        release(chk, st);
    if (chk->relisting && holds)
        st->evicted_since_admission = true; /* an eviction may be in the lost history */
    if (rec->finished)
        st->finished = true;
    if (!st->held && holds) {
        int64_t qi = scale_layout_cq_find(l, rec->cq);
        uint32_t q, co;
        const scale_qset_t *qs;

        if (qi < 0) {
            snprintf(what, sizeof(what), "admitted to ClusterQueue \"%s\", not one of the shape",
                     rec->cq);
            return violation(chk, msg, rec, what);
        }
        if (st->admissions > 0 && !st->evicted_since_admission) {
            snprintf(what, sizeof(what),
                     "admitted again (admission %u) without an eviction since admission %u",
                     st->admissions + 1, st->admissions);
            rc = violation(chk, msg, rec, what);
        }
        q = (uint32_t)qi;
        co = l->cqs[q].cohort;
        qs = l->cqs[q].qset;
        st->held = true;
        st->cq = q;
        st->usage_milli = rec->usage_milli;
        st->admissions++;
        st->evicted_since_admission = rec->evicted;
        chk->admissions++;
        chk->cq_held[q] += rec->usage_milli;
        chk->cohort_held[co] += rec->usage_milli;
        if (chk->cq_held[q] > chk->cq_peak[q])
            chk->cq_peak[q] = chk->cq_held[q];
        if (chk->cohort_held[co] > chk->cohort_peak[co])
            chk->cohort_peak[co] = chk->cohort_held[co];
        if (qs->borrowing_milli >= 0 && chk->cq_held[q] > qs->nominal_milli + qs->borrowing_milli) {
            mcpu(a, sizeof(a), chk->cq_held[q]);
            mcpu(b, sizeof(b), qs->nominal_milli);
            mcpu(c, sizeof(c), qs->borrowing_milli);
            snprintf(what, sizeof(what),
                     "ClusterQueue %s holds %s cpu > nominalQuota %s + borrowingLimit %s",
                     l->cqs[q].name, a, b, c);
            rc = violation(chk, msg, rec, what);
        }
        if (chk->cohort_held[co] > l->cohort_nominal_milli[co]) {
            mcpu(a, sizeof(a), chk->cohort_held[co]);
            mcpu(b, sizeof(b), l->cohort_nominal_milli[co]);
            snprintf(what, sizeof(what),
                     "cohort %s holds %s cpu > its ClusterQueues' nominal quota %s (after "
                     "admission to %s)",
                     l->cohort_names[co], a, b, l->cqs[q].name);
            rc = violation(chk, msg, rec, what);
        }
    }
    if (holds && st->finished && st->admissions > 0 && !rec->finished) {
        /* held again after a Finished record: never legal */
        rc = violation(chk, msg, rec, "holds quota again after it finished");
    }
out:
    return rc;
}
