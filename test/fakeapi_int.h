/* fakeapi_int -- internals shared by fakeapi.c (HTTP, watches, faults) and fakeapi_store.c. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_FAKEAPI_INT_H
#define SLUICE_TEST_FAKEAPI_INT_H

#include "fakeapi.h"
#include "kube_testsrv.h"

#include <check.h>

/* Abort the test when `p` is NULL, or `e` is not ERR_OK (out of memory in test infrastructure). */
#define FA_NN(p) ck_assert_msg((p) != NULL, "fakeapi: out of memory")
#define FA_OK(e) ck_assert_msg((e) == ERR_OK, "fakeapi: out of memory")

/* One registered resource type. */
typedef struct fa_type_s {
    char *group, *version, *plural, *kind; /* owned */
    char *api_version;                     /* owned: "v1" or "group/version" */
    char *qualified;                       /* owned: "configmaps", "workloads.kueue.x-k8s.io" */
    bool namespaced, status_sub;
    json_t *objs; /* owned: "ns/name" or "name" -> object, never changed in place */
} fa_type_t;

typedef enum { FA_ADDED, FA_MODIFIED, FA_DELETED } fa_etype_t;

/* One change in the history that watches replay; in resourceVersion order. */
typedef struct fa_event_s {
    fa_type_t *type; /* borrowed from fa->types */
    fa_etype_t etype;
    uint64_t rv;
    json_t *obj;  /* owned reference: the new state (DELETED: the last state at this rv) */
    json_t *prev; /* owned reference: the state before a MODIFIED, else NULL */
} fa_event_t;

/* A parsed label or field selector: every requirement must hold. */
typedef enum {
    FA_SEL_EQ,
    FA_SEL_NE,
    FA_SEL_IN,
    FA_SEL_NOTIN,
    FA_SEL_EXISTS,
    FA_SEL_ABSENT
} fa_selop_t;

typedef struct fa_selreq_s {
    char *key; /* owned: label key, or "metadata.name"/"metadata.namespace" for a field */
    fa_selop_t op;
    char **vals; /* owned */
    size_t nvals;
    bool field;
} fa_selreq_t;

typedef struct fa_sel_s {
    fa_selreq_t *reqs; /* owned */
    size_t n;
} fa_sel_t;

/* The outcome of an operation on the store: an HTTP status and a body (new reference: the
 * object, a List or a Status). */
typedef struct fa_answer_s {
    int code;
    json_t *body;
} fa_answer_t;

typedef struct fa_watch_s fa_watch_t;
typedef struct fa_pending_s fa_pending_t;
typedef struct fa_rule_s fa_rule_t;

struct fakeapi_s {
    uv_loop_t *loop;
    testsrv_t srv;
    char url[64];
    fa_type_t **types; /* owned */
    size_t ntypes;
    uint64_t rv;        /* of the last write; starts at 1 like a fresh etcd */
    uint64_t compacted; /* watches from an older resourceVersion get 410 */
    uint64_t rng;       /* splitmix64 state: uids and generateName suffixes */
    time_t now;         /* 0: wall clock */
    fa_event_t *hist;   /* owned */
    size_t nhist, hist_cap;
    fa_watch_t *watches;   /* open watch streams */
    fa_pending_t *pending; /* delayed requests */
    fakeapi_logent_t *log; /* owned */
    size_t nlog, log_cap;
    unsigned seq;
    fakeapi_fault_fn fault_fn;
    void *fault_data;
    fa_rule_t *rules, *rules_tail;
    fa_type_t *hold_type; /* fakeapi_hold_object(): NULL when nothing is held */
    char hold_key[512];
    size_t *held; /* indices into hist of the held events, in order */
    size_t nheld, held_cap;
    bool stopping;
};

/* ---- fakeapi_store.c ---- */

/* Free every type, object and the history. */
void fa__store_fini(fakeapi_t *fa);

/* The type served at group/version/plural (group "" for the core group), or NULL. */
fa_type_t *fa__type_at(const fakeapi_t *fa, const char *group, const char *version,
                       const char *plural);

/* The type named "plural" or "plural.group", or NULL. */
fa_type_t *fa__type_named(const fakeapi_t *fa, const char *name);

/* Fill `a` with a Status body for `code` (reason from the code unless given), message printf. */
void fa__status(fa_answer_t *a, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Add details {name, group, kind} about the object `name` of `t` to the Status in `a`. */
void fa__status_details(fa_answer_t *a, const fa_type_t *t, const char *name);

/* The Status reason the API server uses with `code` ("NotFound", "InternalError"...). */
const char *fa__reason(int code);

/* Operations on type `t`, `ns` "" for cluster-scoped types; bodies are borrowed. */
void fa__get(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, fa_answer_t *a);
void fa__list(fakeapi_t *fa, fa_type_t *t, const char *ns, const fa_sel_t *sel, uint32_t limit,
              const char *cont, fa_answer_t *a);
void fa__create(fakeapi_t *fa, fa_type_t *t, const char *ns, json_t *body, fa_answer_t *a);
void fa__update(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, bool status,
                json_t *body, fa_answer_t *a);
void fa__patch(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, bool status,
               json_t *patch, fa_answer_t *a);
void fa__delete(fakeapi_t *fa, fa_type_t *t, const char *ns, const char *name, json_t *opts,
                fa_answer_t *a);

/* RFC 7386: apply `patch` (borrowed) to `target` (consumed); returns a new reference. */
json_t *fa__merge_patch(json_t *target, json_t *patch);

/* Parse a labelSelector and a fieldSelector (either may be NULL) into `sel`; `pods`: the Pod
 * fields spec.nodeName and status.phase are supported too. On a syntax error or an unsupported
 * field returns false with the reason in `err`. */
bool fa__sel_parse(const char *label, const char *field, bool pods, fa_sel_t *sel, char *err,
                   size_t n);

/* Does `obj` satisfy every requirement? (An empty selector matches everything.) */
bool fa__sel_match(const fa_sel_t *sel, json_t *obj);

/* Free the requirements. */
void fa__sel_fini(fa_sel_t *sel);

/* The object's key ("ns/name" or "name") into buf. */
void fa__key(const fa_type_t *t, const char *ns, const char *name, char *buf, size_t n);

/* metadata.namespace of `obj` or "". */
const char *fa__obj_ns(json_t *obj);

/* ---- fakeapi.c ---- */

/* Send history event `e` to the open watches it concerns. */
void fa__fanout(fakeapi_t *fa, const fa_event_t *e);

#endif
