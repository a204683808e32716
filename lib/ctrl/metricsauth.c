/* metricsauth -- who may read /metrics: bearer tokens through TokenReview, SubjectAccessReview. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/metricsauth.h"

#include "util/hmap.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_TOKENS        256
#define MAX_REVIEWS       8
#define MAX_TOKEN_LEN     8192
#define ALLOW_TTL_MS      (10 * 60 * 1000) /* an allowed token is served this long ... */
#define REFRESH_MS        (60 * 1000)      /* ... and reviewed again in the background this often */
#define DENY_TTL_MS       (30 * 1000)
#define MAX_WAITERS       64   /* requests waiting for one token's first review */
#define REVIEW_TIMEOUT_MS 4000 /* each review request; two per token: a wait ends within 8 s */

typedef struct waiter_s waiter_t;
struct waiter_s {
    metricsauth_cb cb;
    void *ud;
    waiter_t *next;
};

typedef enum { E_REVIEWING = 0, E_ALLOWED, E_DENIED_401, E_DENIED_403 } entry_state_t;

typedef struct entry_s {
    entry_state_t state;
    bool reviewing;      /* a review is in flight (first one, or a background refresh) */
    uint64_t expires;    /* loop ms; 0 while the first review runs */
    uint64_t refresh_at; /* allowed: loop ms after which a request starts a background review */
    char why[256];       /* for the response body */
    waiter_t *waiters;   /* requests waiting for the first review's verdict (owned) */
    size_t nwaiters;
} entry_t;

typedef struct review_s review_t;
struct review_s {
    metricsauth_t *a; /* NULL once detached (metricsauth_free) */
    char key[65];     /* SHA-256 of the token, hex */
    review_t *next;
};

struct metricsauth_s {
    kube_client_t *client; /* borrowed */
    uv_loop_t *loop;
    char *path;
    util_hmap_t cache; /* key -> entry_t * (owned) */
    review_t *reviews; /* in flight, owned by their callbacks */
    size_t nreviews;
};

static const kube_resource_t token_reviews = {"authentication.k8s.io", "v1", "tokenreviews", false};
static const kube_resource_t access_reviews = {"authorization.k8s.io", "v1", "subjectaccessreviews",
                                               false};

/* Answer every request waiting on `e` with `res` (the list is taken first: a callback may not
 * touch the entry). */
static void notify(entry_t *e, metricsauth_result_t res, const char *why)
{
    waiter_t *w = e->waiters;

    e->waiters = NULL;
    e->nwaiters = 0;
    while (w != NULL) {
        waiter_t *next = w->next;
        w->cb(w->ud, res, why);
        free(w);
        w = next;
    }
}

metricsauth_t *metricsauth_new(kube_client_t *client, const char *path)
{
    metricsauth_t *a = calloc(1, sizeof(*a));

    if (a == NULL)
        return NULL;
    a->client = client;
    a->loop = kube_client_loop(client);
    a->path = strdup(path);
    if (a->path == NULL) {
        free(a);
        return NULL;
    }
    util_hmap_init(&a->cache, 0);
    return a;
}

void metricsauth_free(metricsauth_t *a)
{
    size_t pos = 0;
    void *v;

    if (a == NULL)
        return;
    for (review_t *r = a->reviews; r != NULL; r = r->next)
        r->a = NULL; /* its callback still fires and frees it */
    while (util_hmap_next(&a->cache, &pos, NULL, &v)) {
        notify(v, METRICSAUTH_PENDING, "shutting down\n");
        free(v);
    }
    util_hmap_fini(&a->cache);
    free(a->path);
    free(a);
}

/* ---- reviews ------------------------------------------------------------------------------ */

static void unlink_review(metricsauth_t *a, review_t *r)
{
    for (review_t **p = &a->reviews; *p != NULL; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            a->nreviews--;
            return;
        }
}

/* The review of `key` ended without a verdict: an allowed token keeps its entry until it
 * expires; anything else is forgotten, so the next request reviews again. */
static void review_failed(metricsauth_t *a, const char *key, const char *text)
{
    entry_t *e = util_hmap_get(&a->cache, key);
    char why[320];

    if (e == NULL)
        return;
    e->reviewing = false;
    if (e->state == E_ALLOWED)
        return;
    e = util_hmap_del(&a->cache, key);
    snprintf(why, sizeof(why), "the token review failed (%s): retry in a moment\n",
             text && *text ? text : "no answer");
    notify(e, METRICSAUTH_PENDING, why);
    free(e);
}

static void verdict(metricsauth_t *a, const char *key, entry_state_t st, const char *why)
{
    entry_t *e = util_hmap_get(&a->cache, key);
    uint64_t now = uv_now(a->loop);

    if (e == NULL)
        return;
    e->state = st;
    e->reviewing = false;
    e->expires = now + (st == E_ALLOWED ? ALLOW_TTL_MS : DENY_TTL_MS);
    e->refresh_at = now + REFRESH_MS;
    snprintf(e->why, sizeof(e->why), "%s", why);
    if (e->waiters != NULL) {
        char line[300];
        snprintf(line, sizeof(line), "%s\n", st == E_ALLOWED ? "" : why);
        notify(e,
               st == E_ALLOWED      ? METRICSAUTH_ALLOW
               : st == E_DENIED_401 ? METRICSAUTH_UNAUTHENTICATED
                                    : METRICSAUTH_FORBIDDEN,
               st == E_ALLOWED ? "" : line);
    }
}

static void on_access_review(const kube_result_t *res, void *data)
{
    review_t *r = data;
    metricsauth_t *a = r->a;
    const json_t *status = json_object_get(res->body, "status");
    char why[256];

    if (a != NULL) {
        unlink_review(a, r);
        if (res->err != ERR_OK || res->canceled) {
            review_failed(a, r->key, res->msg.text);
        } else if (json_is_true(json_object_get(status, "allowed"))) {
            verdict(a, r->key, E_ALLOWED, "allowed");
        } else {
            const char *reason = json_string_value(json_object_get(status, "reason"));
            snprintf(why, sizeof(why), "forbidden: get %s is not allowed%s%s", a->path,
                     reason && *reason ? ": " : "", reason ? reason : "");
            verdict(a, r->key, E_DENIED_403, why);
        }
    }
    free(r);
}

/* SubjectAccessReview for the user a TokenReview authenticated (`user`: status.user). */
static bool send_access_review(metricsauth_t *a, review_t *r, const json_t *user)
{
    json_t *spec =
        json_pack("{s:{s:s,s:s}}", "nonResourceAttributes", "path", a->path, "verb", "get");
    json_t *sar = NULL;
    kube_req_t *req = NULL;
    const char *fields[][2] = {
        {"username", "user"}, {"uid", "uid"}, {"groups", "groups"}, {"extra", "extra"}};
    bool ok = false;

    for (size_t i = 0; spec != NULL && i < 4; i++) {
        json_t *v = json_object_get(user, fields[i][0]);
        if (v != NULL && json_object_set(spec, fields[i][1], v) != 0) {
            json_decref(spec);
            spec = NULL;
        }
    }
    if (spec != NULL)
        sar = json_pack("{s:s,s:s,s:o}", "apiVersion", "authorization.k8s.io/v1", "kind",
                        "SubjectAccessReview", "spec", spec);
    if (sar != NULL && kube_create(a->client, &access_reviews, NULL, sar, on_access_review, r, &req,
                                   NULL) == ERR_OK) {
        kube_req_set_timeout(req, REVIEW_TIMEOUT_MS); /* bounds the wait of deferred requests */
        ok = true;
    }
    json_decref(sar);
    return ok;
}

static void on_token_review(const kube_result_t *res, void *data)
{
    review_t *r = data;
    metricsauth_t *a = r->a;
    const json_t *status = json_object_get(res->body, "status");

    if (a == NULL) {
        free(r);
        return;
    }
    if (res->err != ERR_OK || res->canceled) {
        unlink_review(a, r);
        review_failed(a, r->key, res->msg.text);
        free(r);
        return;
    }
    if (!json_is_true(json_object_get(status, "authenticated"))) {
        const char *err = json_string_value(json_object_get(status, "error"));
        char why[256];
        snprintf(why, sizeof(why), "unauthorized: the bearer token is not valid%s%s",
                 err && *err ? ": " : "", err ? err : "");
        unlink_review(a, r);
        verdict(a, r->key, E_DENIED_401, why);
        free(r);
        return;
    }
    /* Still counted in flight: the same review goes on to the SubjectAccessReview. */
    if (!send_access_review(a, r, json_object_get(status, "user"))) {
        unlink_review(a, r);
        review_failed(a, r->key, "SubjectAccessReview not sent");
        free(r);
    }
}

/* Start reviewing `token` for entry `key`. False when it could not be sent. */
static bool start_review(metricsauth_t *a, const char *key, const char *token, size_t len)
{
    review_t *r;
    json_t *tr;
    kube_req_t *req = NULL;
    bool ok = false;

    if (a->nreviews >= MAX_REVIEWS)
        return false;
    r = calloc(1, sizeof(*r));
    tr = json_pack("{s:s,s:s,s:{s:s%}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                   "TokenReview", "spec", "token", token, len);
    if (r != NULL && tr != NULL) {
        r->a = a;
        snprintf(r->key, sizeof(r->key), "%s", key);
        if (kube_create(a->client, &token_reviews, NULL, tr, on_token_review, r, &req, NULL) ==
            ERR_OK) {
            kube_req_set_timeout(req, REVIEW_TIMEOUT_MS);
            r->next = a->reviews;
            a->reviews = r;
            a->nreviews++;
            ok = true;
        }
    }
    json_decref(tr); /* serialised at once: the token lives on in no buffer of ours */
    if (!ok)
        free(r);
    return ok;
}

/* ---- decisions ---------------------------------------------------------------------------- */

/* The token of "Bearer <token>" (scheme case-insensitive), or NULL. */
static const char *bearer(const char *h, size_t *len)
{
    size_t n;

    if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
        return NULL;
    h += 7;
    while (*h == ' ')
        h++;
    n = strcspn(h, " \t\r\n");
    if (n == 0 || n > MAX_TOKEN_LEN || h[n] != '\0')
        return NULL;
    *len = n;
    return h;
}

static void digest(const char *token, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;

    EVP_Digest(token, len, md, &mdlen, EVP_sha256(), NULL);
    for (unsigned int i = 0; i < mdlen && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[64] = '\0';
}

/* Make room for one more entry: drop expired ones that no review is working on. */
static bool room(metricsauth_t *a, uint64_t now)
{
    const char *key;
    void *v;

    if (util_hmap_len(&a->cache) < MAX_TOKENS)
        return true;
    for (size_t pos = 0; util_hmap_next(&a->cache, &pos, &key, &v);) {
        entry_t *e = v;
        if (!e->reviewing && e->expires <= now)
            free(util_hmap_del(&a->cache, key)); /* deleting the current entry is allowed */
    }
    return util_hmap_len(&a->cache) < MAX_TOKENS;
}

metricsauth_result_t metricsauth_check(metricsauth_t *a, const char *authorization, char *why,
                                       size_t n)
{
    size_t len = 0;
    const char *token = bearer(authorization, &len);
    uint64_t now = uv_now(a->loop);
    char key[65];
    entry_t *e;

    if (token == NULL) {
        snprintf(why, n, "unauthorized: an Authorization: Bearer token is required\n");
        return METRICSAUTH_UNAUTHENTICATED;
    }
    digest(token, len, key);
    e = util_hmap_get(&a->cache, key);
    if (e != NULL && e->state != E_REVIEWING && now < e->expires) {
        if (e->state == E_ALLOWED) {
            if (now >= e->refresh_at && !e->reviewing && start_review(a, key, token, len))
                e->reviewing = true; /* served meanwhile; the verdict replaces this one */
            why[0] = '\0';
            return METRICSAUTH_ALLOW;
        }
        snprintf(why, n, "%s\n", e->why);
        return e->state == E_DENIED_401 ? METRICSAUTH_UNAUTHENTICATED : METRICSAUTH_FORBIDDEN;
    }
    if (e != NULL && e->reviewing) {
        snprintf(why, n, "the bearer token is being reviewed: retry in a moment\n");
        return METRICSAUTH_PENDING;
    }
    if (e == NULL) {
        if (!room(a, now)) {
            snprintf(why, n, "too many distinct tokens under review: retry later\n");
            return METRICSAUTH_PENDING;
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL || util_hmap_put(&a->cache, key, e, NULL) != ERR_OK) {
            free(e);
            snprintf(why, n, "out of memory\n");
            return METRICSAUTH_PENDING;
        }
    }
    e->state = E_REVIEWING;
    if (!start_review(a, key, token, len)) {
        free(util_hmap_del(&a->cache, key));
        snprintf(why, n, "too many token reviews in flight: retry in a moment\n");
        return METRICSAUTH_PENDING;
    }
    e->reviewing = true;
    snprintf(why, n,
             "the bearer token is being reviewed (TokenReview, SubjectAccessReview): "
             "retry in a moment\n");
    return METRICSAUTH_PENDING;
}

metricsauth_result_t metricsauth_check_wait(metricsauth_t *a, const char *authorization, char *why,
                                            size_t n, metricsauth_cb cb, void *ud, bool *waiting)
{
    metricsauth_result_t res = metricsauth_check(a, authorization, why, n);
    size_t len = 0;
    const char *token;
    char key[65];
    entry_t *e;
    waiter_t *w;

    *waiting = false;
    if (res != METRICSAUTH_PENDING || cb == NULL)
        return res;
    /* Pending: wait for the first review's verdict when one is under way for this token and the
     * entry has room for one more waiter (else the 503 stands). */
    token = bearer(authorization, &len);
    if (token == NULL)
        return res;
    digest(token, len, key);
    e = util_hmap_get(&a->cache, key);
    if (e == NULL || e->state != E_REVIEWING || !e->reviewing || e->nwaiters >= MAX_WAITERS)
        return res;
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return res;
    w->cb = cb;
    w->ud = ud;
    w->next = e->waiters;
    e->waiters = w;
    e->nwaiters++;
    *waiting = true;
    return res;
}
