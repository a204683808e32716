/* sched match -- flavor matching on model/selector.h, and deep copies the engine keeps. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sched/sched_int.h"

#include "model/selector.h"

#include <stdlib.h>
#include <string.h>

/*
 * Matching itself is lib/model/selector.h (Kubernetes semantics); this file adds the one Kueue
 * twist (flavorSelector: only the keys a flavor's nodeLabels define take part) and the deep
 * copies of the types.h pieces the engine keeps.
 */

bool sched__label_selector_matches(const label_selector_t *sel, const kv_list_t *labels)
{
    return selector_matches(sel, labels);
}

const taint_t *sched__untolerated_taint(const flavor_rec_t *f, const wps_t *ps)
{
    return selector_untolerated(f->taints, f->ntaints, ps->tolerations, ps->ntolerations,
                                f->tolerations, f->ntolerations);
}

/*
 * Kueue flavorSelector (flavorassigner.go): the pod's nodeSelector and required node affinity are
 * restricted to the keys present in the flavor's nodeLabels, then matched against those labels.
 * A nodeSelector key the flavor does not define is ignored; an affinity term left with no
 * expression makes the whole affinity match (terms are ORed).
 */
bool sched__affinity_matches(const flavor_rec_t *f, const wps_t *ps)
{
    for (size_t i = 0; i < ps->node_selector.len; i++) {
        const kv_t *kv = &ps->node_selector.items[i];
        const char *have = kv_list_get(&f->node_labels, kv->key);
        if (have != NULL && strcmp(have, kv->value ? kv->value : "") != 0)
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
            if (kv_list_get(&f->node_labels, r->key) == NULL)
                continue;
            relevant++;
            ok = ok && selector_req_matches(r, &f->node_labels);
        }
        if (relevant == 0)
            return true;
        any_term = any_term || ok;
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
        dst->items[i].key = strdup(src->items[i].key ? src->items[i].key : "");
        dst->items[i].value = strdup(src->items[i].value ? src->items[i].value : "");
        if (dst->items[i].key == NULL || dst->items[i].value == NULL) {
            kv_list_fini(dst);
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
        if (util_strdup(src[i].key, &r[i].key) != ERR_OK)
            return ERR_NOMEM;
        if (src[i].nvalues) {
            r[i].values = calloc(src[i].nvalues, sizeof(char *));
            if (r[i].values == NULL)
                return ERR_NOMEM;
            r[i].nvalues = src[i].nvalues;
            for (size_t j = 0; j < src[i].nvalues; j++) {
                if (util_strdup(src[i].values[j], &r[i].values[j]) != ERR_OK)
                    return ERR_NOMEM;
            }
        }
    }
    return ERR_OK;
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
        label_selector_fini(dst);
    return rc;
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
        t[i].key = NULL;
        t[i].value = NULL;
        if (util_strdup(src[i].key, &t[i].key) != ERR_OK ||
            util_strdup(src[i].value, &t[i].value) != ERR_OK) {
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
    for (size_t i = 0; i < n; i++)
        toleration_fini(&t[i]);
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
        t[i].key = strdup(src[i].key ? src[i].key : "");
        if (t[i].key == NULL || util_strdup(src[i].value, &t[i].value) != ERR_OK) {
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
    for (size_t i = 0; i < n; i++)
        taint_fini(&t[i]);
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
    for (size_t i = 0; i < n; i++) {
        for (size_t e = 0; e < t[i].nexprs; e++)
            selector_req_fini(&t[i].exprs[e]);
        free(t[i].exprs);
    }
    free(t);
}
