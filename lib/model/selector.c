/* selector -- label selectors, node selector terms and taint tolerations (Kubernetes semantics). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/selector.h"

#include "model/types.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool listed(const selector_req_t *r, const char *value)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (r->values[i] != NULL && strcmp(r->values[i], value) == 0)
            return true;
    return false;
}

/* strconv.ParseInt(s, 10, 64): optional sign, decimal digits only, no spaces, no overflow. */
static bool parse_int64(const char *s, long long *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0' || (*s != '-' && *s != '+' && (*s < '0' || *s > '9')))
        return false;
    if ((*s == '-' || *s == '+') && (s[1] < '0' || s[1] > '9'))
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

bool selector_req_matches(const selector_req_t *r, const kv_list_t *labels)
{
    const char *v = kv_list_get(labels, r->key ? r->key : "");
    long long have, want;

    switch (r->op) {
    case SELECTOR_OP_IN:
        return v != NULL && listed(r, v);
    case SELECTOR_OP_NOT_IN:
        return v == NULL || !listed(r, v);
    case SELECTOR_OP_EXISTS:
        return v != NULL;
    case SELECTOR_OP_DOES_NOT_EXIST:
        return v == NULL;
    case SELECTOR_OP_GT:
    case SELECTOR_OP_LT:
        if (v == NULL || r->nvalues != 1 || !parse_int64(v, &have) ||
            !parse_int64(r->values[0], &want))
            return false;
        return r->op == SELECTOR_OP_GT ? have > want : have < want;
    }
    return false;
}

bool selector_matches(const label_selector_t *sel, const kv_list_t *labels)
{
    if (!sel->present)
        return false;
    if (!selector_map_matches(&sel->match_labels, labels))
        return false;
    for (size_t i = 0; i < sel->nexprs; i++)
        if (!selector_req_matches(&sel->exprs[i], labels))
            return false;
    return true;
}

bool selector_map_matches(const kv_list_t *sel, const kv_list_t *labels)
{
    for (size_t i = 0; i < sel->len; i++) {
        const char *v = kv_list_get(labels, sel->items[i].key);
        if (v == NULL || strcmp(v, sel->items[i].value ? sel->items[i].value : "") != 0)
            return false;
    }
    return true;
}

bool selector_term_matches(const node_selector_term_t *t, const kv_list_t *labels)
{
    if (t->nexprs == 0)
        return false;
    for (size_t i = 0; i < t->nexprs; i++)
        if (!selector_req_matches(&t->exprs[i], labels))
            return false;
    return true;
}

bool selector_terms_match(const node_selector_term_t *terms, size_t n, const kv_list_t *labels)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (selector_term_matches(&terms[i], labels))
            return true;
    return false;
}

bool selector_tolerates(const toleration_t *tol, const taint_t *taint)
{
    const char *tv = tol->value ? tol->value : "", *v = taint->value ? taint->value : "";

    if (tol->effect != TAINT_EFFECT_ANY && tol->effect != taint->effect)
        return false;
    if (tol->key != NULL && tol->key[0] != '\0' &&
        strcmp(tol->key, taint->key ? taint->key : "") != 0)
        return false;
    if (tol->op == TOLERATION_OP_EXISTS)
        return true;
    return strcmp(tv, v) == 0;
}

bool selector_tolerated(const toleration_t *tols, size_t ntols, const taint_t *taint)
{
    for (size_t i = 0; i < ntols; i++)
        if (selector_tolerates(&tols[i], taint))
            return true;
    return false;
}

const taint_t *selector_untolerated(const taint_t *taints, size_t ntaints, const toleration_t *a,
                                    size_t na, const toleration_t *b, size_t nb)
{
    for (size_t i = 0; i < ntaints; i++) {
        const taint_t *t = &taints[i];
        if (t->effect != TAINT_EFFECT_NO_SCHEDULE && t->effect != TAINT_EFFECT_NO_EXECUTE)
            continue;
        if (!selector_tolerated(a, na, t) && !selector_tolerated(b, nb, t))
            return t;
    }
    return NULL;
}
