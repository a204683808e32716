/* fakeapi_store -- the fake API server's objects: writes with the API server's rules, history. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "fakeapi_int.h"
#include "util/grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Every write goes through commit(): it takes the next global resourceVersion (one counter for
 * all types, as etcd's revision is), replaces the stored object (objects are never changed in
 * place, so a borrowed pointer or a history entry stays what it was), appends the change to the
 * history and fans it out to the open watches. The rules are those of the generic registry
 * (k8s.io/apiserver/pkg/registry/generic/registry/store.go) as a Kueue controller sees them:
 *
 *   - an update whose result equals the stored object is not written: no new resourceVersion,
 *     no event (GuaranteedUpdate skips the etcd write);
 *   - uid, creationTimestamp, deletionTimestamp, generation belong to the server;
 *   - with a status subresource, writes to the object keep the stored status and writes to
 *     /status change only the status (the CRD status strategy copies the old object and puts
 *     the new status on it);
 *   - generation moves when anything outside metadata (and status, when it is a subresource)
 *     changes;
 *   - DELETE of an object with finalizers only sets deletionTimestamp (a MODIFIED event); an
 *     update that leaves such an object without finalizers deletes it instead of writing it,
 *     and the DELETED event carries the last stored state (finalizer included) at the delete's
 *     resourceVersion, as etcd's previous key-value does.
 */

#define KEY_MAX 512

/* ---- small helpers --------------------------------------------------------------------------- */

static json_t *meta(json_t *obj)
{
    json_t *m = json_object_get(obj, "metadata");

    return json_is_object(m) ? m : NULL;
}

static const char *mstr(json_t *obj, const char *k)
{
    const char *s = json_string_value(json_object_get(meta(obj), k));

    return s ? s : "";
}

/* Set metadata.k of `obj` to `v` (consumed), creating metadata when needed. */
static void mset(json_t *obj, const char *k, json_t *v)
{
    json_t *m = meta(obj);

    if (m == NULL) {
        m = json_object();
        FA_NN(m);
        ck_assert_int_eq(json_object_set_new(obj, "metadata", m), 0);
    }
    FA_NN(v);
    ck_assert_int_eq(json_object_set_new(m, k, v), 0);
}

static void mdel(json_t *obj, const char *k)
{
    json_t *m = meta(obj);

    if (m != NULL)
        json_object_del(m, k);
}

static void set_str(json_t *obj, const char *k, const char *v)
{
    ck_assert_int_eq(json_object_set_new(obj, k, json_string(v)), 0);
}

const char *fa__obj_ns(json_t *obj)
{
    return mstr(obj, "namespace");
}

void fa__key(const fa_type_t *t, const char *ns, const char *name, char *buf, size_t n)
{
    if (t->namespaced)
        snprintf(buf, n, "%s/%s", ns, name);
    else
        snprintf(buf, n, "%s", name);
}

static uint64_t rnd(fakeapi_t *fa)
{
    uint64_t z = (fa->rng += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void now_str(const fakeapi_t *fa, char *buf, size_t n)
{
    time_t t = fa->now ? fa->now : time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void rv_str(uint64_t rv, char *buf, size_t n)
{
    snprintf(buf, n, "%" PRIu64, rv);
}

static bool has_finalizers(json_t *obj)
{
    return json_array_size(json_object_get(meta(obj), "finalizers")) > 0;
}

static bool deleting(json_t *obj)
{
    return json_object_get(meta(obj), "deletionTimestamp") != NULL;
}

/* Does anything outside metadata (and status when it is a subresource) differ? */
static bool spec_changed(const fa_type_t *t, json_t *a, json_t *b)
{
    json_t *x = json_copy(a), *y = json_copy(b);
    bool changed;

    FA_NN(x);
    FA_NN(y);
    json_object_del(x, "metadata");
    json_object_del(y, "metadata");
    if (t->status_sub) {
        json_object_del(x, "status");
        json_object_del(y, "status");
    }
    changed = !json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return changed;
}

/* ---- Status bodies --------------------------------------------------------------------------- */

const char *fa__reason(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Expired";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

void fa__status(fa_answer_t *a, int code, const char *reason, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    a->code = code;
    a->body = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                        "v1", "metadata", "status", "Failure", "message", text, "reason",
                        reason ? reason : fa__reason(code), "code", code);
    FA_NN(a->body);
    if (json_string_length(json_object_get(a->body, "reason")) == 0)
        json_object_del(a->body, "reason");
}

void fa__status_details(fa_answer_t *a, const fa_type_t *t, const char *name)
{
    json_t *d = json_object();

    FA_NN(d);
    if (name != NULL && name[0] != '\0')
        set_str(d, "name", name);
    if (t->group[0] != '\0')
        set_str(d, "group", t->group);
    set_str(d, "kind", t->plural);
    ck_assert_int_eq(json_object_set_new(a->body, "details", d), 0);
}

static void not_found(fa_answer_t *a, const fa_type_t *t, const char *name)
{
    fa__status(a, 404, NULL, "%s \"%s\" not found", t->qualified, name);
    fa__status_details(a, t, name);
}

/* 409 Conflict: "Operation cannot be fulfilled on <resource> "<name>": <why>". */
static void conflict(fa_answer_t *a, const fa_type_t *t, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void conflict(fa_answer_t *a, const fa_type_t *t, const char *name, const char *fmt, ...)
{
    char why[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    fa__status(a, 409, NULL, "Operation cannot be fulfilled on %s \"%s\": %s", t->qualified, name,
               why);
    fa__status_details(a, t, name);
}

static void invalid(fa_answer_t *a, const fa_type_t *t, const char *name, const char *what)
{
    fa__status(a, 422, NULL, "%s%s%s \"%s\" is invalid: %s", t->kind, t->group[0] ? "." : "",
               t->group, name, what);
    fa__status_details(a, t, name);
}

/* ---- types ----------------------------------------------------------------------------------- */

fa_type_t *fa__type_at(const fakeapi_t *fa, const char *group, const char *version,
                       const char *plural)
{
    for (size_t i = 0; i < fa->ntypes; i++) {
        fa_type_t *t = fa->types[i];

        if (strcmp(t->group, group) == 0 && strcmp(t->version, version) == 0 &&
            strcmp(t->plural, plural) == 0)
            return t;
    }
    return NULL;
}

fa_type_t *fa__type_named(const fakeapi_t *fa, const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < fa->ntypes; i++) {
        fa_type_t *t = fa->types[i];

        if (strcmp(t->plural, name) == 0 || strcmp(t->qualified, name) == 0)
            return t;
    }
    return NULL;
}

static fa_type_t *type_of_kind(const fakeapi_t *fa, const char *api_version, const char *kind)
{
    for (size_t i = 0; i < fa->ntypes; i++) {
        fa_type_t *t = fa->types[i];

        if (strcmp(t->api_version, api_version) == 0 && strcmp(t->kind, kind) == 0)
            return t;
    }
    return NULL;
}

static char *dup(const char *s)
{
    char *d = strdup(s ? s : "");

    FA_NN(d);
    return d;
}

err_t fakeapi_register(fakeapi_t *fa, const char *group, const char *version, const char *plural,
                       const char *kind, bool namespaced, bool has_status_subresource)
{
    fa_type_t *t, **types;
    char buf[512];

    if (group == NULL)
        group = "";
    if (version == NULL || !version[0] || plural == NULL || !plural[0] || kind == NULL || !kind[0])
        return ERR_INVALID;
    if (fa__type_at(fa, group, version, plural) != NULL)
        return ERR_EXISTS;
    t = calloc(1, sizeof(*t));
    FA_NN(t);
    t->group = dup(group);
    t->version = dup(version);
    t->plural = dup(plural);
    t->kind = dup(kind);
    if (group[0])
        snprintf(buf, sizeof(buf), "%s/%s", group, version);
    else
        snprintf(buf, sizeof(buf), "%s", version);
    t->api_version = dup(buf);
    if (group[0])
        snprintf(buf, sizeof(buf), "%s.%s", plural, group);
    else
        snprintf(buf, sizeof(buf), "%s", plural);
    t->qualified = dup(buf);
    t->namespaced = namespaced;
    t->status_sub = has_status_subresource;
    t->objs = json_object();
    FA_NN(t->objs);
    types = realloc(fa->types, (fa->ntypes + 1) * sizeof(*types));
    FA_NN(types);
    fa->types = types;
    fa->types[fa->ntypes++] = t;
    return ERR_OK;
}

err_t fakeapi_register_sluice(fakeapi_t *fa)
{
    static const struct {
        const char *group, *version, *plural, *kind;
        bool namespaced, status;
    } types[] = {
        {"", "v1", "namespaces", "Namespace", false, true},
        {"", "v1", "events", "Event", true, false},
        {"", "v1", "secrets", "Secret", true, false},
        {"batch", "v1", "jobs", "Job", true, true},
        {"coordination.k8s.io", "v1", "leases", "Lease", true, false},
        {"scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false, false},
        {"kueue.x-k8s.io", "v1beta2", "resourceflavors", "ResourceFlavor", false, false},
        {"kueue.x-k8s.io", "v1beta2", "cohorts", "Cohort", false, true},
        {"kueue.x-k8s.io", "v1beta2", "clusterqueues", "ClusterQueue", false, true},
        {"kueue.x-k8s.io", "v1beta2", "localqueues", "LocalQueue", true, true},
        {"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses", "WorkloadPriorityClass", false,
         false},
        {"kueue.x-k8s.io", "v1beta2", "workloads", "Workload", true, true},
        {"kueue.x-k8s.io", "v1beta2", "admissionchecks", "AdmissionCheck", false, true},
        {"kueue.x-k8s.io", "v1beta2", "topologies", "Topology", false, false},
        {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
         false, true},
        {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
         "ValidatingWebhookConfiguration", false, false},
        {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
         "MutatingWebhookConfiguration", false, false},
    };

    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        err_t rc = fakeapi_register(fa, types[i].group, types[i].version, types[i].plural,
                                    types[i].kind, types[i].namespaced, types[i].status);

        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

static void type_free(fa_type_t *t)
{
    json_decref(t->objs);
    free(t->group);
    free(t->version);
    free(t->plural);
    free(t->kind);
    free(t->api_version);
    free(t->qualified);
    free(t);
}

err_t fakeapi_unregister(fakeapi_t *fa, const char *group, const char *plural)
{
    for (size_t i = 0; i < fa->ntypes; i++) {
        fa_type_t *t = fa->types[i];
        if (strcmp(t->group, group) != 0 || strcmp(t->plural, plural) != 0)
            continue;
        for (size_t h = 0; h < fa->nhist; h++)
            if (fa->hist[h].type == t)
                return ERR_CONFLICT;
        type_free(t);
        memmove(&fa->types[i], &fa->types[i + 1], (fa->ntypes - i - 1) * sizeof(*fa->types));
        fa->ntypes--;
        return ERR_OK;
    }
    return ERR_NOT_FOUND;
}

void fa__store_fini(fakeapi_t *fa)
{
    for (size_t i = 0; i < fa->nhist; i++) {
        json_decref(fa->hist[i].obj);
        json_decref(fa->hist[i].prev);
    }
    free(fa->hist);
    free(fa->held);
    for (size_t i = 0; i < fa->ntypes; i++) {
        type_free(fa->types[i]);
    }
    free(fa->types);
}

/* ---- commit: the one place that writes ------------------------------------------------------- */

static void record(fakeapi_t *fa, fa_type_t *t, fa_etype_t et, json_t *obj, json_t *prev)
{
    fa_event_t *e;

    FA_OK(util_grow((void **)&fa->hist, &fa->hist_cap, fa->nhist + 1, sizeof(*fa->hist)));
    e = &fa->hist[fa->nhist++];
    e->type = t;
    e->etype = et;
    e->rv = fa->rv;
    e->obj = json_incref(obj);
    e->prev = json_incref(prev);
    fa__fanout(fa, e);
}

/* Remove `key` (whose stored state is `old`). Returns a new reference to the last state. */
static json_t *remove_obj(fakeapi_t *fa, fa_type_t *t, const char *key, json_t *old)
{
    json_t *gone = json_deep_copy(old);
    char rv[32];

    FA_NN(gone);
    rv_str(++fa->rv, rv, sizeof(rv));
    mset(gone, "resourceVersion", json_string(rv));
    json_object_del(t->objs, key);
    record(fa, t, FA_DELETED, gone, NULL);
    return gone;
}

/*
 * Make `next` (consumed) the state of `key`; `old` (borrowed, may be NULL) is the stored state.
 * Returns a new reference to the stored object (the old one when nothing changed) or, when the
 * write removed the object (deleting, no finalizers left), to its last state with *removed set.
 */
static json_t *commit(fakeapi_t *fa, fa_type_t *t, const char *key, json_t *old, json_t *next,
                      bool *removed)
{
    char rv[32];
    json_t *out;

    *removed = false;
    if (old != NULL) {
        mset(next, "resourceVersion", json_string(mstr(old, "resourceVersion")));
        if (json_equal(old, next)) {
            json_decref(next);
            return json_incref(old);
        }
        if (deleting(next) && !has_finalizers(next)) {
            json_decref(next);
            *removed = true;
            return remove_obj(fa, t, key, old);
        }
    }
    json_incref(old); /* replaced in t->objs below; the history keeps it as `prev` */
    rv_str(++fa->rv, rv, sizeof(rv));
    mset(next, "resourceVersion", json_string(rv));
    ck_assert_int_eq(json_object_set(t->objs, key, next), 0);
    record(fa, t, old ? FA_MODIFIED : FA_ADDED, next, old);
    json_decref(old);
    out = next; /* the reference we held becomes the caller's */
    return out;
}

/* ---- names ----------------------------------------------------------------------------------- */

/* A DNS-1123 subdomain, what most types (and every CRD) accept as metadata.name. */
static bool name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

        if (!alnum && c != '-' && c != '.')
            return false;
        if (!alnum && (i == 0 || i == n - 1))
            return false;
    }
    return true;
}

static void generate_name(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *prefix,
                          char *out, size_t n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789"; /* k8s utilrand */
    char key[KEY_MAX];

    do {
        char suffix[6];

        for (int i = 0; i < 5; i++)
            suffix[i] = alphabet[rnd(fa) % (sizeof(alphabet) - 1)];
        suffix[5] = '\0';
        snprintf(out, n, "%.*s%s", 58, prefix, suffix);
        fa__key(t, ns, out, key, sizeof(key));
    } while (json_object_get(t->objs, key) != NULL);
}

static void new_uid(fakeapi_t *fa, char *buf, size_t n)
{
    uint64_t a = rnd(fa), b = rnd(fa);

    snprintf(buf, n, "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
             a >> 32, (a >> 16) & 0xffff, a & 0xfff, UINT64_C(0x8000) | (b >> 48 & 0x3fff),
             b & UINT64_C(0xffffffffffff));
}

/* Check apiVersion/kind of a request body against `t` and fill them in. */
static bool fix_type(fa_type_t *t, json_t *obj, fa_answer_t *a)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *k = json_string_value(json_object_get(obj, "kind"));

    if (av != NULL && av[0] && strcmp(av, t->api_version) != 0) {
        fa__status(a, 400, NULL,
                   "the API version in the data (%s) does not match the expected API version (%s)",
                   av, t->api_version);
        return false;
    }
    if (k != NULL && k[0] && strcmp(k, t->kind) != 0) {
        fa__status(a, 400, NULL, "the kind in the data (%s) does not match the expected kind (%s)",
                   k, t->kind);
        return false;
    }
    if (json_object_get(obj, "metadata") != NULL && meta(obj) == NULL) {
        fa__status(a, 400, NULL, "metadata: expected an object");
        return false;
    }
    set_str(obj, "apiVersion", t->api_version);
    set_str(obj, "kind", t->kind);
    return true;
}

/* The body's namespace must be the URL's (or absent); then it is set from the URL. */
static bool fix_ns(fa_type_t *t, json_t *obj, const char *ns, fa_answer_t *a)
{
    const char *bns = mstr(obj, "namespace");

    if (!t->namespaced) {
        mdel(obj, "namespace");
        return true;
    }
    if (bns[0] && strcmp(bns, ns) != 0) {
        fa__status(a, 400, NULL,
                   "the namespace of the provided object does not match the namespace sent on "
                   "the request");
        return false;
    }
    mset(obj, "namespace", json_string(ns));
    return true;
}

/* ---- operations ------------------------------------------------------------------------------ */

void fa__get(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, fa_answer_t *a)
{
    char key[KEY_MAX];
    json_t *obj;

    (void)fa;
    fa__key(t, ns, name, key, sizeof(key));
    obj = json_object_get(t->objs, key);
    if (obj == NULL) {
        not_found(a, t, name);
        return;
    }
    a->code = 200;
    a->body = json_incref(obj);
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void fa__list(fakeapi_t *fa, fa_type_t *t, const char *ns, const fa_sel_t *sel, uint32_t limit,
              const char *cont, fa_answer_t *a)
{
    uint64_t list_rv = fa->rv;
    const char *after = NULL, *key, **keys;
    json_t *items, *obj, *md;
    size_t n = 0, i;
    char rv[32], kind[256];

    if (cont != NULL && cont[0]) {
        /* Our continue token: "<list resourceVersion>:<last key returned>". */
        char *end;

        list_rv = strtoull(cont, &end, 10);
        if (end == cont || *end != ':') {
            fa__status(a, 400, NULL, "continue key is not valid: %s", cont);
            return;
        }
        after = end + 1;
        if (list_rv < fa->compacted) {
            fa__status(a, 410, "Expired",
                       "The provided continue parameter is too old to display a consistent list "
                       "result. You can start a new list without the continue parameter.");
            return;
        }
    }
    keys = calloc(json_object_size(t->objs) + 1, sizeof(*keys));
    FA_NN(keys);
    json_object_foreach(t->objs, key, obj)
    {
        if (ns[0] && strcmp(fa__obj_ns(obj), ns) != 0)
            continue;
        if (after != NULL && strcmp(key, after) <= 0)
            continue;
        if (!fa__sel_match(sel, obj))
            continue;
        keys[n++] = key;
    }
    qsort(keys, n, sizeof(*keys), cmp_str);
    items = json_array();
    FA_NN(items);
    for (i = 0; i < n && (limit == 0 || i < limit); i++)
        ck_assert_int_eq(json_array_append(items, json_object_get(t->objs, keys[i])), 0);
    rv_str(list_rv, rv, sizeof(rv));
    md = json_pack("{s:s}", "resourceVersion", rv);
    FA_NN(md);
    if (i < n) {
        char token[KEY_MAX + 32];

        snprintf(token, sizeof(token), "%s:%s", rv, keys[i - 1]);
        set_str(md, "continue", token);
        ck_assert_int_eq(
            json_object_set_new(md, "remainingItemCount", json_integer((json_int_t)(n - i))), 0);
    }
    free(keys);
    snprintf(kind, sizeof(kind), "%sList", t->kind);
    a->code = 200;
    a->body = json_pack("{s:s, s:s, s:o, s:o}", "kind", kind, "apiVersion", t->api_version,
                        "metadata", md, "items", items);
    FA_NN(a->body);
}

void fa__create(fakeapi_t *fa, fa_type_t *t, const char *ns, json_t *body, fa_answer_t *a)
{
    json_t *obj = NULL, *out;
    char name[256], key[KEY_MAX], buf[64];
    const char *gen;
    bool removed;

    if (!json_is_object(body)) {
        fa__status(a, 400, NULL, "the body of the request was not a JSON object");
        return;
    }
    obj = json_deep_copy(body);
    FA_NN(obj);
    if (!fix_type(t, obj, a) || !fix_ns(t, obj, ns, a))
        goto out;
    snprintf(name, sizeof(name), "%s", mstr(obj, "name"));
    gen = mstr(obj, "generateName");
    if (name[0] == '\0' && gen[0] != '\0') {
        generate_name(fa, t, ns, gen, name, sizeof(name));
        mset(obj, "name", json_string(name));
    }
    if (name[0] == '\0') {
        invalid(a, t, "", "metadata.name: Required value: name or generateName is required");
        goto out;
    }
    if (!name_ok(name)) {
        invalid(a, t, name,
                "metadata.name: Invalid value: a lowercase RFC 1123 subdomain must consist of "
                "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character");
        goto out;
    }
    fa__key(t, ns, name, key, sizeof(key));
    if (json_object_get(t->objs, key) != NULL) {
        fa__status(a, 409, "AlreadyExists", "%s \"%s\" already exists", t->qualified, name);
        fa__status_details(a, t, name);
        goto out;
    }
    new_uid(fa, buf, sizeof(buf));
    mset(obj, "uid", json_string(buf));
    now_str(fa, buf, sizeof(buf));
    mset(obj, "creationTimestamp", json_string(buf));
    mset(obj, "generation", json_integer(1));
    mdel(obj, "deletionTimestamp");
    mdel(obj, "deletionGracePeriodSeconds");
    if (t->status_sub)
        json_object_del(obj, "status"); /* the status strategy drops it on create */
    out = commit(fa, t, key, NULL, obj, &removed);
    obj = NULL;
    a->code = 201;
    a->body = out;
out:
    json_decref(obj);
}

/* The PUT/PATCH core: `cand` (consumed) is the client's version of object `name`. */
static void do_update(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, bool status,
                      json_t *cand, fa_answer_t *a)
{
    static const char *const server_owned[] = {"uid", "creationTimestamp", "deletionTimestamp",
                                               "deletionGracePeriodSeconds", "generation"};
    char key[KEY_MAX];
    json_t *old, *next = NULL, *out, *fin_old, *fin_new, *f;
    const char *crv, *cuid;
    size_t i;
    bool removed;

    fa__key(t, ns, name, key, sizeof(key));
    old = json_object_get(t->objs, key);
    if (old == NULL) {
        not_found(a, t, name);
        goto out;
    }
    if (!fix_type(t, cand, a))
        goto out;
    if (mstr(cand, "name")[0] && strcmp(mstr(cand, "name"), name) != 0) {
        fa__status(a, 400, NULL,
                   "the name of the object (%s) does not match the name on the URL (%s)",
                   mstr(cand, "name"), name);
        goto out;
    }
    if (!fix_ns(t, cand, ns, a))
        goto out;
    /* Optimistic concurrency: a resourceVersion (or uid) in the body is a precondition. */
    crv = mstr(cand, "resourceVersion");
    if (crv[0] && strcmp(crv, mstr(old, "resourceVersion")) != 0) {
        conflict(a, t, name,
                 "the object has been modified; please apply your changes to the latest version "
                 "and try again");
        goto out;
    }
    cuid = mstr(cand, "uid");
    if (cuid[0] && strcmp(cuid, mstr(old, "uid")) != 0) {
        conflict(a, t, name, "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                 cuid, mstr(old, "uid"));
        goto out;
    }
    if (status) {
        /* /status: the stored object with the client's status. */
        json_t *st = json_object_get(cand, "status");

        next = json_deep_copy(old);
        FA_NN(next);
        if (st != NULL)
            ck_assert_int_eq(json_object_set(next, "status", st), 0);
        else
            json_object_del(next, "status");
    } else {
        next = cand;
        cand = NULL;
        mset(next, "name", json_string(name));
        for (i = 0; i < sizeof(server_owned) / sizeof(server_owned[0]); i++) {
            json_t *v = json_object_get(meta(old), server_owned[i]);

            if (v != NULL)
                mset(next, server_owned[i], json_incref(v));
            else
                mdel(next, server_owned[i]);
        }
        if (t->status_sub) {
            json_t *st = json_object_get(old, "status");

            if (st != NULL)
                ck_assert_int_eq(json_object_set(next, "status", st), 0);
            else
                json_object_del(next, "status");
        }
        if (spec_changed(t, old, next))
            mset(next, "generation",
                 json_integer(json_integer_value(json_object_get(meta(old), "generation")) + 1));
    }
    /* While deleting, finalizers may only go away. */
    fin_old = json_object_get(meta(old), "finalizers");
    fin_new = json_object_get(meta(next), "finalizers");
    if (deleting(old)) {
        json_array_foreach(fin_new, i, f)
        {
            bool known = false;
            size_t j;
            json_t *g;

            json_array_foreach(fin_old, j, g)
            {
                known = known || json_equal(f, g);
            }
            if (!known) {
                char what[512];

                snprintf(what, sizeof(what),
                         "metadata.finalizers: Forbidden: no new finalizers can be added if the "
                         "object is being deleted, found new finalizers []string{\"%s\"}",
                         json_string_value(f) ? json_string_value(f) : "");
                invalid(a, t, name, what);
                goto out;
            }
        }
    }
    out = commit(fa, t, key, old, next, &removed);
    next = NULL;
    a->code = 200;
    a->body = out;
out:
    json_decref(next);
    json_decref(cand);
}

void fa__update(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, bool status,
                json_t *body, fa_answer_t *a)
{
    json_t *cand;

    if (!json_is_object(body)) {
        fa__status(a, 400, NULL, "the body of the request was not a JSON object");
        return;
    }
    cand = json_deep_copy(body);
    FA_NN(cand);
    do_update(fa, t, ns, name, status, cand, a);
}

void fa__patch(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, bool status,
               json_t *patch, fa_answer_t *a)
{
    char key[KEY_MAX];
    json_t *old, *cand;

    if (!json_is_object(patch)) {
        fa__status(a, 400, NULL, "the body of the request was not a JSON object");
        return;
    }
    fa__key(t, ns, name, key, sizeof(key));
    old = json_object_get(t->objs, key);
    if (old == NULL) {
        not_found(a, t, name);
        return;
    }
    /* The patched object keeps the stored resourceVersion unless the patch names one, which
     * do_update() then checks as a precondition. */
    cand = fa__merge_patch(json_deep_copy(old), patch);
    FA_NN(cand);
    if (!json_is_object(cand)) {
        json_decref(cand);
        fa__status(a, 400, NULL, "the patched object is not a JSON object");
        return;
    }
    do_update(fa, t, ns, name, status, cand, a);
}

void fa__delete(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, json_t *opts,
                fa_answer_t *a)
{
    char key[KEY_MAX], ts[64];
    json_t *old, *pre = json_object_get(opts, "preconditions"), *next;
    const char *prv = json_string_value(json_object_get(pre, "resourceVersion"));
    const char *puid = json_string_value(json_object_get(pre, "uid"));
    bool removed;

    fa__key(t, ns, name, key, sizeof(key));
    old = json_object_get(t->objs, key);
    if (old == NULL) {
        not_found(a, t, name);
        return;
    }
    if (prv != NULL && strcmp(prv, mstr(old, "resourceVersion")) != 0) {
        conflict(a, t, name,
                 "the ResourceVersion in the precondition (%s) does not match the "
                 "ResourceVersion in record (%s). The object might have been modified",
                 prv, mstr(old, "resourceVersion"));
        return;
    }
    if (puid != NULL && strcmp(puid, mstr(old, "uid")) != 0) {
        conflict(a, t, name,
                 "the UID in the precondition (%s) does not match the UID in record (%s). The "
                 "object might have been deleted and then recreated",
                 puid, mstr(old, "uid"));
        return;
    }
    a->code = 200;
    if (!has_finalizers(old)) {
        a->body = remove_obj(fa, t, key, old);
        return;
    }
    if (deleting(old)) {
        a->body = json_incref(old); /* already terminating: nothing changes */
        return;
    }
    next = json_deep_copy(old);
    FA_NN(next);
    now_str(fa, ts, sizeof(ts));
    mset(next, "deletionTimestamp", json_string(ts));
    /* A Pod's grace period is its spec.terminationGracePeriodSeconds (30 by default), as the API
     * server sets it; other objects go at once. */
    {
        json_t *tg = json_object_get(json_object_get(old, "spec"), "terminationGracePeriodSeconds");
        json_int_t grace = strcmp(t->plural, "pods") == 0 && t->group[0] == '\0'
                               ? (json_is_integer(tg) ? json_integer_value(tg) : 30)
                               : 0;
        mset(next, "deletionGracePeriodSeconds", json_integer(grace));
    }
    a->body = commit(fa, t, key, old, next, &removed);
}

/* ---- direct access --------------------------------------------------------------------------- */

err_t fakeapi_put_object(fakeapi_t *fa, json_t *obj, json_t **stored, err_msg_t *msg)
{
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    const char *name = mstr(obj, "name"), *ns = mstr(obj, "namespace");
    char key[KEY_MAX], buf[64];
    json_t *next, *old, *out;
    fa_type_t *t;
    bool removed;

    if (stored != NULL)
        *stored = NULL;
    if (av == NULL || kind == NULL)
        return err_set(msg, ERR_INVALID, "fakeapi_put_object: apiVersion and kind are required");
    t = type_of_kind(fa, av, kind);
    if (t == NULL)
        return err_set(msg, ERR_NOT_FOUND, "fakeapi_put_object: %s %s is not registered", av, kind);
    if (!name_ok(name))
        return err_set(msg, ERR_INVALID, "fakeapi_put_object: bad metadata.name \"%s\"", name);
    if (t->namespaced && !name_ok(ns))
        return err_set(msg, ERR_INVALID, "fakeapi_put_object: %s %s needs a namespace", kind, name);
    next = json_deep_copy(obj);
    FA_NN(next);
    if (!t->namespaced) {
        mdel(next, "namespace");
        ns = "";
    }
    fa__key(t, ns, name, key, sizeof(key));
    old = json_object_get(t->objs, key);
    if (json_object_get(meta(next), "uid") == NULL) {
        if (old != NULL)
            mset(next, "uid", json_string(mstr(old, "uid")));
        else {
            new_uid(fa, buf, sizeof(buf));
            mset(next, "uid", json_string(buf));
        }
    }
    if (json_object_get(meta(next), "creationTimestamp") == NULL) {
        if (old != NULL)
            mset(next, "creationTimestamp", json_string(mstr(old, "creationTimestamp")));
        else {
            now_str(fa, buf, sizeof(buf));
            mset(next, "creationTimestamp", json_string(buf));
        }
    }
    if (json_object_get(meta(next), "generation") == NULL) {
        json_int_t g = old ? json_integer_value(json_object_get(meta(old), "generation")) : 0;

        mset(next, "generation", json_integer(old && !spec_changed(t, old, next) ? g : g + 1));
    }
    if (old == NULL && deleting(next) && !has_finalizers(next)) {
        json_decref(next); /* created already gone */
        return ERR_OK;
    }
    out = commit(fa, t, key, old, next, &removed);
    if (stored != NULL && !removed)
        *stored = out;
    json_decref(out); /* the store (or nothing, when removed) holds it */
    return ERR_OK;
}

json_t *fakeapi_get_object(const fakeapi_t *fa, const char *resource, const char *ns,
                           const char *name)
{
    fa_type_t *t = fa__type_named(fa, resource);
    char key[KEY_MAX];

    if (t == NULL || name == NULL)
        return NULL;
    fa__key(t, ns ? ns : "", name, key, sizeof(key));
    return json_object_get(t->objs, key);
}

err_t fakeapi_delete_object(fakeapi_t *fa, const char *resource, const char *ns, const char *name,
                            err_msg_t *msg)
{
    fa_type_t *t = fa__type_named(fa, resource);
    fa_answer_t a = {0, NULL};
    err_t rc = ERR_OK;

    if (t == NULL)
        return err_set(msg, ERR_NOT_FOUND, "fakeapi_delete_object: unknown resource %s",
                       resource ? resource : "(null)");
    fa__delete(fa, t, t->namespaced && ns ? ns : "", name, NULL, &a);
    if (a.code != 200)
        rc = err_set(msg, ERR_NOT_FOUND, "fakeapi_delete_object: %s",
                     json_string_value(json_object_get(a.body, "message")));
    json_decref(a.body);
    return rc;
}

size_t fakeapi_object_count(const fakeapi_t *fa, const char *resource)
{
    size_t n = 0;

    for (size_t i = 0; i < fa->ntypes; i++) {
        if (resource == NULL || fa->types[i] == fa__type_named(fa, resource))
            n += json_object_size(fa->types[i]->objs);
    }
    return n;
}

uint64_t fakeapi_resource_version(const fakeapi_t *fa)
{
    return fa->rv;
}

void fakeapi_compact(fakeapi_t *fa)
{
    for (size_t i = 0; i < fa->nhist; i++) {
        json_decref(fa->hist[i].obj);
        json_decref(fa->hist[i].prev);
    }
    fa->nhist = 0;
    fa->compacted = fa->rv;
}

/* ---- RFC 7386 merge patch -------------------------------------------------------------------- */

json_t *fa__merge_patch(json_t *target, json_t *patch)
{
    const char *k;
    json_t *v;

    if (!json_is_object(patch)) {
        json_decref(target);
        return json_deep_copy(patch);
    }
    if (!json_is_object(target)) {
        json_decref(target);
        target = json_object();
        FA_NN(target);
    }
    json_object_foreach(patch, k, v)
    {
        if (json_is_null(v)) {
            json_object_del(target, k);
        } else {
            json_t *cur = json_incref(json_object_get(target, k));
            json_t *merged = fa__merge_patch(cur, v);

            FA_NN(merged);
            ck_assert_int_eq(json_object_set_new(target, k, merged), 0);
        }
    }
    return target;
}

/* ---- selectors ------------------------------------------------------------------------------- */

static char *trim_dup(const char *s, size_t n)
{
    char *d;

    while (n > 0 && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    d = malloc(n + 1);
    FA_NN(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static bool key_ok(const char *k)
{
    if (k[0] == '\0')
        return false;
    for (; *k; k++) {
        if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') ||
              *k == '-' || *k == '_' || *k == '.' || *k == '/'))
            return false;
    }
    return true;
}

static void add_val(fa_selreq_t *r, char *v)
{
    char **vals = realloc(r->vals, (r->nvals + 1) * sizeof(*vals));

    FA_NN(vals);
    r->vals = vals;
    r->vals[r->nvals++] = v;
}

/* One requirement `term` (trimmed, no top-level commas). */
static bool parse_term(const char *term, bool field, bool pods, fa_selreq_t *r, char *err, size_t n)
{
    const char *op;

    memset(r, 0, sizeof(*r));
    r->field = field;
    if (!field && term[0] == '!') {
        r->op = FA_SEL_ABSENT;
        r->key = trim_dup(term + 1, strlen(term + 1));
    } else if ((op = strstr(term, "!=")) != NULL) {
        r->op = FA_SEL_NE;
        r->key = trim_dup(term, (size_t)(op - term));
        add_val(r, trim_dup(op + 2, strlen(op + 2)));
    } else if ((op = strchr(term, '=')) != NULL) {
        size_t skip = op[1] == '=' ? 2 : 1;

        r->op = FA_SEL_EQ;
        r->key = trim_dup(term, (size_t)(op - term));
        add_val(r, trim_dup(op + skip, strlen(op + skip)));
    } else if (!field &&
               ((op = strstr(term, " in ")) != NULL || (op = strstr(term, " notin ")) != NULL)) {
        const char *open = strchr(op, '('), *close = strrchr(op, ')'), *p;

        r->op = op[1] == 'i' ? FA_SEL_IN : FA_SEL_NOTIN;
        r->key = trim_dup(term, (size_t)(op - term));
        if (open == NULL || close == NULL || close < open) {
            snprintf(err, n, "unable to parse requirement: expected a value list in \"%s\"", term);
            return false;
        }
        for (p = open + 1; p <= close;) {
            size_t len = strcspn(p, ",)");

            add_val(r, trim_dup(p, len));
            p += len + 1;
        }
    } else if (!field) {
        r->op = FA_SEL_EXISTS;
        r->key = trim_dup(term, strlen(term));
    } else {
        snprintf(err, n, "invalid selector: '%s'; can't understand '%s'", term, term);
        return false;
    }
    if (!key_ok(r->key)) {
        snprintf(err, n, "unable to parse requirement: invalid label key \"%s\"", r->key);
        return false;
    }
    if (field && strcmp(r->key, "metadata.name") != 0 &&
        strcmp(r->key, "metadata.namespace") != 0 &&
        (!pods || (strcmp(r->key, "spec.nodeName") != 0 && strcmp(r->key, "status.phase") != 0))) {
        snprintf(err, n, "field label not supported: %s", r->key);
        return false;
    }
    return true;
}

static bool parse_sel(const char *s, bool field, bool pods, fa_sel_t *sel, char *err, size_t n)
{
    while (s != NULL && *s) {
        size_t len = 0;
        int depth = 0;
        char *term;
        fa_selreq_t *reqs;
        bool ok;

        while (s[len] && (s[len] != ',' || depth > 0)) {
            depth += s[len] == '(' ? 1 : s[len] == ')' ? -1 : 0;
            len++;
        }
        term = trim_dup(s, len);
        reqs = realloc(sel->reqs, (sel->n + 1) * sizeof(*reqs));
        FA_NN(reqs);
        sel->reqs = reqs;
        memset(&sel->reqs[sel->n], 0, sizeof(sel->reqs[sel->n]));
        ok = term[0] != '\0' && parse_term(term, field, pods, &sel->reqs[sel->n], err, n);
        if (term[0] == '\0')
            snprintf(err, n, "unable to parse requirement: empty term");
        sel->n++; /* even when failed: its strings are freed by fa__sel_fini */
        free(term);
        if (!ok)
            return false;
        s += len;
        if (*s == ',')
            s++;
    }
    return true;
}

bool fa__sel_parse(const char *label, const char *field, bool pods, fa_sel_t *sel, char *err,
                   size_t n)
{
    memset(sel, 0, sizeof(*sel));
    return parse_sel(label, false, false, sel, err, n) && parse_sel(field, true, pods, sel, err, n);
}

static bool req_match(const fa_selreq_t *r, json_t *obj)
{
    const char *v;
    bool listed = false;

    if (r->field && strncmp(r->key, "metadata.", 9) != 0) {
        /* a Pod's spec.nodeName / status.phase; absent reads as "", as in the API server */
        const char *dot = strchr(r->key, '.');
        char top[16];
        snprintf(top, sizeof(top), "%.*s", (int)(dot - r->key), r->key);
        v = json_string_value(json_object_get(json_object_get(obj, top), dot + 1));
        if (v == NULL)
            v = "";
    } else if (r->field)
        v = strcmp(r->key, "metadata.name") == 0 ? mstr(obj, "name") : mstr(obj, "namespace");
    else
        v = json_string_value(json_object_get(json_object_get(meta(obj), "labels"), r->key));
    for (size_t i = 0; v != NULL && i < r->nvals; i++)
        listed = listed || strcmp(v, r->vals[i]) == 0;
    switch (r->op) {
    case FA_SEL_EQ:
    case FA_SEL_IN:
        return listed;
    case FA_SEL_NE:
    case FA_SEL_NOTIN:
        return !listed;
    case FA_SEL_EXISTS:
        return v != NULL;
    case FA_SEL_ABSENT:
        return v == NULL;
    }
    return false;
}

bool fa__sel_match(const fa_sel_t *sel, json_t *obj)
{
    for (size_t i = 0; sel != NULL && i < sel->n; i++) {
        if (!req_match(&sel->reqs[i], obj))
            return false;
    }
    return true;
}

void fa__sel_fini(fa_sel_t *sel)
{
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->reqs[i].key);
        for (size_t j = 0; j < sel->reqs[i].nvals; j++)
            free(sel->reqs[i].vals[j]);
        free(sel->reqs[i].vals);
    }
    free(sel->reqs);
    memset(sel, 0, sizeof(*sel));
}
