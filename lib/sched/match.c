/* sched match -- label selectors, node affinity and taints against ResourceFlavors. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * lib/model/selector.h (label selector and toleration helpers) did not exist when the engine
 * was written, so the engine carries the few matchers it needs here, privately.
 */

const char *sched__kv_get(const kv_list_t *l, const char *key)
{
    size_t lo = 0, hi = l->len;
    while (lo < hi) { /* kv lists are sorted by key (types.h) */
        size_t mid = (lo + hi) / 2;
        int c = strcmp(l->items[mid].key, key);
        if (c == 0)
            return l->items[mid].value ? l->items[mid].value : "";
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* tolerate unsorted input from hand-built objects */
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value ? l->items[i].value : "";
    return NULL;
}

static bool in_values(const selector_req_t *r, const char *v)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

static bool parse_i64(const char *s, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

static bool req_matches(const selector_req_t *r, const kv_list_t *labels)
{
    const char *v = sched__kv_get(labels, r->key);
    switch (r->op) {
    case SELECTOR_OP_IN:
        return v != NULL && in_values(r, v);
    case SELECTOR_OP_NOT_IN:
        return v == NULL || !in_values(r, v);
    case SELECTOR_OP_EXISTS:
        return v != NULL;
    case SELECTOR_OP_DOES_NOT_EXIST:
        return v == NULL;
    case SELECTOR_OP_GT:
    case SELECTOR_OP_LT: {
        long long have, want;
        if (v == NULL || r->nvalues != 1 || !parse_i64(v, &have) ||
            !parse_i64(r->values[0], &want))
            return false;
        return r->op == SELECTOR_OP_GT ? have > want : have < want;
    }
    }
    return false;
}

bool sched__label_selector_matches(const label_selector_t *sel, const kv_list_t *labels)
{
    if (!sel->present)
        return false; /* a nil namespaceSelector selects nothing */
    for (size_t i = 0; i < sel->match_labels.len; i++) {
        const char *v = sched__kv_get(labels, sel->match_labels.items[i].key);
        const char *want = sel->match_labels.items[i].value ? sel->match_labels.items[i].value : "";
        if (v == NULL || strcmp(v, want) != 0)
            return false;
    }
    for (size_t i = 0; i < sel->nexprs; i++)
        if (!req_matches(&sel->exprs[i], labels))
            return false;
    return true;
}

static bool tolerates(const toleration_t *t, const taint_t *taint)
{
    if (t->effect != TAINT_EFFECT_ANY && t->effect != taint->effect)
        return false;
    if (t->key != NULL && t->key[0] != '\0' && strcmp(t->key, taint->key) != 0)
        return false;
    if ((t->key == NULL || t->key[0] == '\0') && t->op != TOLERATION_OP_EXISTS)
        return false;
    if (t->op == TOLERATION_OP_EXISTS)
        return true;
    const char *tv = t->value ? t->value : "";
    const char *v = taint->value ? taint->value : "";
    return strcmp(tv, v) == 0;
}

const taint_t *sched__untolerated_taint(const flavor_rec_t *f, const wps_t *ps)
{
    for (size_t i = 0; i < f->ntaints; i++) {
        const taint_t *taint = &f->taints[i];
        if (taint->effect != TAINT_EFFECT_NO_SCHEDULE && taint->effect != TAINT_EFFECT_NO_EXECUTE)
            continue;
        bool ok = false;
        for (size_t j = 0; j < ps->ntolerations && !ok; j++)
            ok = tolerates(&ps->tolerations[j], taint);
        for (size_t j = 0; j < f->ntolerations && !ok; j++)
            ok = tolerates(&f->tolerations[j], taint);
        if (!ok)
            return taint;
    }
    return NULL;
}

/* Kueue's flavorSelector: only the keys the flavor's nodeLabels define are considered. */
bool sched__affinity_matches(const flavor_rec_t *f, const wps_t *ps)
{
    for (size_t i = 0; i < ps->node_selector.len; i++) {
        const kv_t *kv = &ps->node_selector.items[i];
        const char *have = sched__kv_get(&f->node_labels, kv->key);
        if (have == NULL)
            continue;
        if (strcmp(have, kv->value ? kv->value : "") != 0)
            return false;
    }
    if (ps->nterms == 0)
        return true;
    bool any_term = false;
    for (size_t t = 0; t < ps->nterms; t++) {
        const node_selector_term_t *term = &ps->terms[t];
        size_t relevant = 0;
        bool ok = true;
        for (size_t e = 0; e < term->nexprs; e++) {
            const selector_req_t *r = &term->exprs[e];
            if (sched__kv_get(&f->node_labels, r->key) == NULL)
                continue;
            relevant++;
            if (!req_matches(r, &f->node_labels))
                ok = false;
        }
        if (relevant == 0)
            return true; /* an emptied term matches every flavor (terms are ORed) */
        if (ok)
            any_term = true;
    }
    return any_term;
}

/* ---- deep copies of the few types.h pieces the engine keeps ------------------------------- */

err_t sched__kv_copy(kv_list_t *dst, const kv_list_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->len == 0)
        return ERR_OK;
    dst->items = calloc(src->len, sizeof(kv_t));
    if (dst->items == NULL)
        return ERR_NOMEM;
    dst->len = src->len;
    for (size_t i = 0; i < src->len; i++) {
        dst->items[i].key = sched__strdup(src->items[i].key);
        dst->items[i].value = sched__strdup(src->items[i].value ? src->items[i].value : "");
        if (dst->items[i].key == NULL || dst->items[i].value == NULL) {
            sched__kv_fini(dst);
            return ERR_NOMEM;
        }
    }
    /* keep the sorted-by-key invariant even for hand-built input (insertion sort: tiny lists) */
    for (size_t i = 1; i < dst->len; i++) {
        kv_t cur = dst->items[i];
        size_t j = i;
        while (j > 0 && strcmp(dst->items[j - 1].key, cur.key) > 0) {
            dst->items[j] = dst->items[j - 1];
            j--;
        }
        dst->items[j] = cur;
    }
    return ERR_OK;
}

void sched__kv_fini(kv_list_t *l)
{
    for (size_t i = 0; i < l->len; i++) {
        free(l->items[i].key);
        free(l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof(*l));
}

static err_t reqs_copy(selector_req_t **dst, const selector_req_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return ERR_OK;
    selector_req_t *r = calloc(n, sizeof(*r));
    if (r == NULL)
        return ERR_NOMEM;
    *dst = r;
    for (size_t i = 0; i < n; i++) {
        r[i].op = src[i].op;
        r[i].key = sched__strdup(src[i].key);
        if (r[i].key == NULL)
            return ERR_NOMEM;
        if (src[i].nvalues) {
            r[i].values = calloc(src[i].nvalues, sizeof(char *));
            if (r[i].values == NULL)
                return ERR_NOMEM;
            r[i].nvalues = src[i].nvalues;
            for (size_t j = 0; j < src[i].nvalues; j++) {
                r[i].values[j] = sched__strdup(src[i].values[j]);
                if (r[i].values[j] == NULL)
                    return ERR_NOMEM;
            }
        }
    }
    return ERR_OK;
}

static void reqs_fini(selector_req_t *r, size_t n)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(r[i].key);
        for (size_t j = 0; j < r[i].nvalues; j++)
            free(r[i].values[j]);
        free(r[i].values);
    }
    free(r);
}

err_t sched__selector_copy(label_selector_t *dst, const label_selector_t *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->present = src->present;
    err_t rc = sched__kv_copy(&dst->match_labels, &src->match_labels);
    if (rc == ERR_OK) {
        rc = reqs_copy(&dst->exprs, src->exprs, src->nexprs);
        dst->nexprs = src->nexprs;
    }
    if (rc != ERR_OK)
        sched__selector_fini(dst);
    return rc;
}

void sched__selector_fini(label_selector_t *sel)
{
    sched__kv_fini(&sel->match_labels);
    reqs_fini(sel->exprs, sel->nexprs);
    memset(sel, 0, sizeof(*sel));
}

err_t sched__tolerations_copy(toleration_t **dst, const toleration_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return ERR_OK;
    toleration_t *t = calloc(n, sizeof(*t));
    if (t == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i] = src[i];
        t[i].key = sched__strdup(src[i].key);
        t[i].value = sched__strdup(src[i].value);
        if ((src[i].key && !t[i].key) || (src[i].value && !t[i].value)) {
            sched__tolerations_fini(t, i + 1);
            return ERR_NOMEM;
        }
    }
    *dst = t;
    return ERR_OK;
}

void sched__tolerations_fini(toleration_t *t, size_t n)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

err_t sched__taints_copy(taint_t **dst, const taint_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return ERR_OK;
    taint_t *t = calloc(n, sizeof(*t));
    if (t == NULL)
        return ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        t[i].effect = src[i].effect;
        t[i].key = sched__strdup(src[i].key ? src[i].key : "");
        t[i].value = sched__strdup(src[i].value);
        if (!t[i].key || (src[i].value && !t[i].value)) {
            sched__taints_fini(t, i + 1);
            return ERR_NOMEM;
        }
    }
    *dst = t;
    return ERR_OK;
}

void sched__taints_fini(taint_t *t, size_t n)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < n; i++) {
        free(t[i].key);
        free(t[i].value);
    }
    free(t);
}

err_t sched__terms_copy(node_selector_term_t **dst, const node_selector_term_t *src, size_t n)
{
    *dst = NULL;
    if (n == 0)
        return ERR_OK;
    node_selector_term_t *t = calloc(n, sizeof(*t));
    if (t == NULL)
        return ERR_NOMEM;
    *dst = t;
    for (size_t i = 0; i < n; i++) {
        t[i].nexprs = src[i].nexprs;
        if (reqs_copy(&t[i].exprs, src[i].exprs, src[i].nexprs) != ERR_OK)
            return ERR_NOMEM; /* caller finalises *dst with n */
    }
    return ERR_OK;
}

void sched__terms_fini(node_selector_term_t *t, size_t n)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        reqs_fini(t[i].exprs, t[i].nexprs);
    free(t);
}
