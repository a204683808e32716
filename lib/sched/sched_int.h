/* sched_int -- internals shared by the files of the scheduling engine (lib/sched only). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_SCHED_INT_H
#define SLUICE_SCHED_INT_H

#include "model/requests.h"
#include "model/selector.h"
#include "model/tasreq.h"
#include "model/types.h"
#include "sched/sched.h"
#include "sched/tas.h"
#include "util/grow.h"
#include "util/hmap.h"
#include "util/str.h"
#include "util/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Data model (see docs/engine.md):
 *
 *  - Every resource name and flavor name is interned to a small integer; every (flavor, resource)
 *    pair that ever appears gets an "fr" id. Quota and usage live in dense per-node arrays
 *    indexed by fr id, as exact nano-unit integers (qnano_t): no floating point anywhere.
 *  - The cohort forest is made of node_t: ClusterQueues are leaves, Cohorts (explicit objects
 *    or implicit names) are inner nodes. Structure and SubtreeQuota are rebuilt when an object
 *    changes (rare); usage is updated incrementally on admission/eviction (frequent), walking
 *    up the parents exactly as Kueue's resource_node.go does.
 *  - Each ClusterQueue has a binary heap of pending workloads (the active queue), a vector of
 *    inadmissible ones and a vector of workloads holding quota.
 *  - Lookups by name use util/hmap.h (SipHash under a per-map random key: names come from
 *    users); no map is ever iterated, so hash order cannot reach a decision: ordered iteration
 *    uses sorted arrays (CQs by name, children by name, workloads by key). Arrays grow with
 *    util_grow() (util/grow.h).
 */

#define SCHED__NONE (-1)

/* ---- util.c ------------------------------------------------------------------------------- */

typedef int (*sched_cmp_fn)(const void *a, const void *b, const void *ctx);
err_t sched__sort(void *base, size_t n, size_t size, sched_cmp_fn cmp, const void *ctx);
/* The stable merge sort itself: runs of 8 sorted by insertion (`tmp` holds the element moved),
 * then bottom-up merges between `a` and `tmp` (room for n), the buffers swapped after each pass
 * rather than copied back. Inline, so that a caller with a constant size (pointers: sched__sort)
 * and a known comparison (the targets search's candidates, preempt.c) gets constant-size moves
 * and an inlined comparison. */
static inline void sched__merge_sort(char *a, size_t n, size_t size, char *tmp, sched_cmp_fn cmp,
                                     const void *ctx)
{
    enum { RUN = 8 };
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            size_t j = i;
            if (cmp(a + i * size, a + (i - 1) * size, ctx) >= 0)
                continue;
            memcpy(tmp, a + i * size, size);
            for (; j > lo && cmp(tmp, a + (j - 1) * size, ctx) < 0; j--)
                memcpy(a + j * size, a + (j - 1) * size, size);
            memcpy(a + j * size, tmp, size);
        }
    }
    char *src = a, *dst = tmp;
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (cmp(src + j * size, src + i * size, ctx) < 0)
                    memcpy(dst + (k++) * size, src + (j++) * size, size);
                else
                    memcpy(dst + (k++) * size, src + (i++) * size, size);
            }
            if (i < mid)
                memcpy(dst + k * size, src + i * size, (mid - i) * size);
            else if (j < hi)
                memcpy(dst + k * size, src + j * size, (hi - j) * size);
        }
        char *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * size);
}

/*
 * Shared strings: immutable text behind a reference count, for what many workload records of an
 * engine and of its copies (sched_clone) carry alike -- the pending explanation (every look-alike
 * parked behind a failed head has the head's), the key and the queue names. A field holding one
 * points at the text, so readers see a plain string; it is released with sched__str_unref, never
 * free. The count is atomic: a copy driven forward on another thread (the operator's start-time
 * estimate) drops the references it took while the engine goes on with its own.
 */

/* A new shared string of the first `n` bytes of `s` (NUL-terminated), one reference; NULL on
 * out-of-memory. */
char *sched__str_new(const char *s, size_t n);

/* One more reference to shared string `p` (NULL-safe); returns `p`. */
char *sched__str_ref(char *p);

/* Drop a reference to shared string `p` (NULL-safe), freeing it with the last. */
void sched__str_unref(char *p);

/* A shared string in static storage, never freed (its count is ignored): `SCHED_STR_STATIC(x,
 * "text")` defines `x`, and `x.text` is the string. */
/* The engine's shared copy of `text` (one reference for the caller): workloads of one namespace,
 * LocalQueue or priority class share one string. The engine's table keeps a reference of its own
 * and lets strings nobody else holds go as it grows. NULL on out-of-memory. */
char *sched__intern(struct sched_s *s, const char *text);

/* Release the intern table of `s` (sched_free). */
void sched__intern_fini(struct sched_s *s);

#define SCHED_STR_IMMORTAL UINT32_MAX
#define SCHED_STR_STATIC(var, lit) \
    static struct {                \
        uint32_t refs;             \
        char text[sizeof(lit)];    \
    } var = {SCHED_STR_IMMORTAL, lit}

/* ---- interning -------------------------------------------------------------------------- */

typedef struct flavor_rec_s {
    char *name; /* owned */
    int id;
    bool exists;           /* a ResourceFlavor object is present */
    kv_list_t node_labels; /* owned copy */
    taint_t *taints;       /* owned copy */
    size_t ntaints;
    toleration_t *tolerations; /* owned copy */
    size_t ntolerations;
    int *fr_by_res; /* res id -> fr id or -1 */
    size_t nfr_by_res;
    char *topology; /* owned: spec.topologyName (a TAS flavor), NULL = none */
} flavor_rec_t;

/* A Topology object (topology-aware scheduling): its levels' node labels, highest first. */
typedef struct topo_rec_s {
    char *name;    /* owned */
    char **levels; /* owned */
    size_t nlevels;
} topo_rec_t;

typedef struct fr_rec_s {
    int flavor;
    int res;
} fr_rec_t;

/* An exact non-negative rational share; inf marks zero-weight borrowing (fair sharing) or a
 * LocalQueue of weight 0 (admission fair sharing). */
typedef struct share_s {
    qnano_t num;
    qnano_t den; /* > 0 */
    bool inf;
} share_t;

/* Compare two shares exactly (fairshare.c): <0, 0, >0; +Inf equals +Inf. */
int sched__share_cmp(share_t a, share_t b);

/* ---- the cohort forest ------------------------------------------------------------------- */

typedef struct qfr_s {
    qnano_t nominal;
    qnano_t borrowing_limit;
    qnano_t lending_limit;
    bool has_borrowing_limit;
    bool has_lending_limit;
    bool declared;   /* listed in the node's resource groups */
    qnano_t subtree; /* SubtreeQuota */
    qnano_t usage;   /* Usage */
} qfr_t;

typedef struct node_s node_t;
struct node_s {
    bool is_cq;
    const char *name; /* borrowed from the owner record */
    node_t *parent;
    node_t **children; /* sorted: cohorts by name, then CQs by name */
    size_t nchildren, cchildren;
    int height;    /* distance to the furthest leaf (Kueue getNodeHeight) */
    bool disabled; /* in or under a cohort cycle */
    qfr_t *fr;     /* dense by fr id, length nfr */
    size_t nfr;
    qnano_t weight; /* fairSharing.weight in nano (default 1e9) */
    int visit;      /* scratch for cycle detection */
    bool fs_pruned; /* scratch of fair-sharing target ordering */
};

/* A cohort: an explicit Cohort object, or only a name referenced by someone. */
typedef struct cohort_rec_s {
    node_t node;
    char *name;                  /* owned */
    bool exists;                 /* Cohort object present */
    char *parent_name;           /* owned, from the object */
    struct quota_decl_s *quotas; /* owned: from spec.resourceGroups */
    size_t nquotas;
    int refs; /* scratch during rebuild */
} cohort_rec_t;

typedef struct quota_decl_s {
    int fr;
    qnano_t nominal, borrowing_limit, lending_limit;
    bool has_bl, has_ll;
} quota_decl_t;

typedef struct rgroup_s {
    int *res; /* covered resource ids */
    size_t nres;
    int *flavors; /* flavor ids in order */
    size_t nflavors;
} rgroup_t;

typedef struct wl_s wl_t;

/* ---- nodes.c: Nodes and the capacity in use on them ------------------------------------------ */

typedef struct nq_s {
    int res;
    qnano_t v;
} nq_t; /* vectors of them are sorted by res */

typedef struct snode_s {
    char *name;       /* owned */
    bool exists;      /* false: a tombstone (deleted, or only named by a pod) */
    kv_list_t labels; /* owned, sorted */
    taint_t *taints;  /* owned */
    size_t ntaints;
    bool unschedulable, ready;
    nq_t *alloc; /* owned */
    size_t nalloc;
    nq_t *used; /* owned: bound pods + placements, "pods" counted in units */
    size_t nused, cused;
    nq_t *tas_used; /* owned: the part of `used` held by TAS placements (wplace_t.tas) */
    size_t ntas_used, ctas_used;
    size_t npods;
} snode_t;

typedef struct spod_s {
    char *key;     /* owned */
    snode_t *node; /* borrowed: records live as long as the engine */
    char *wl;      /* owned, NULL */
    nq_t *req;     /* owned: per-pod requests */
    size_t nreq;
    size_t idx; /* in sched_nodes_t.pods */
} spod_t;

typedef struct sched_nodes_s {
    snode_t **recs; /* owned: every record, tombstones included */
    size_t nrecs, crecs;
    snode_t **live; /* the existing ones by name */
    size_t nlive, clive;
    util_hmap_t map; /* name -> snode_t */
    spod_t **pods;   /* owned, no order */
    size_t npods, cpods;
    util_hmap_t pod_map; /* key -> spod_t */
} sched_nodes_t;

/* Pods of podset `ps` the engine placed on `node`. */
typedef struct wplace_s {
    snode_t *node;
    uint32_t ps : 31;
    uint32_t tas : 1; /* made from a topology assignment (counted in node->tas_used too) */
    int32_t count;
} wplace_t;

typedef struct wlvec_s {
    wl_t **items;
    size_t len, cap;
} wlvec_t;

/* An AdmissionCheck object. */
typedef struct check_rec_s {
    char *name; /* owned */
    bool active;
} check_rec_t;

/* One admissionChecksStrategy rule of a ClusterQueue. */
typedef struct cq_check_s {
    char *name;   /* owned: AdmissionCheck name */
    int *flavors; /* owned: onFlavors as flavor ids; none = every flavor */
    size_t nflavors;
} cq_check_t;

/* Free `n` rules and the array; NULL-safe. */
void sched__cq_checks_fini(cq_check_t *acs, size_t n);

typedef struct cq_s {
    node_t node;
    char *name;        /* owned */
    bool exists;       /* ClusterQueue object present (false: deleted, kept while it holds quota) */
    bool in_tree;      /* linked into the forest */
    char *cohort_name; /* owned */
    rgroup_t *groups;  /* owned */
    size_t ngroups;
    quota_decl_t *quotas; /* owned */
    size_t nquotas;
    int *rg_by_res; /* res id -> group index or -1 */
    size_t nrg_by_res;
    queueing_strategy_t queueing;
    label_selector_t ns_selector; /* owned copy */
    fungibility_t when_can_borrow, when_can_preempt;
    fungibility_pref_t preference;
    preempt_policy_t reclaim_within_cohort, within_cluster_queue, borrow_within_cohort;
    bool has_max_prio_threshold;
    int32_t max_prio_threshold;
    stop_policy_t stop_policy;
    bool deleting;
    bool afs_mode;   /* admissionScope UsageBasedAdmissionFairSharing */
    bool afs_active; /* afs_mode and the configuration's admissionFairSharing (afs.c) */
    bool afs_dirty;  /* a LocalQueue's usage moved: re-read scores, re-order the heap */
    cq_check_t *acs; /* owned: admissionChecksStrategy, in name order */
    size_t nacs;
    /* status */
    bool active;
    sched_cq_reason_t reason;
    char *inactive_msg; /* owned */
    /* queue */
    wlvec_t heap;       /* pending, heap-ordered */
    wlvec_t inadm;      /* pending, parked */
    wlvec_t admitted;   /* holding quota here */
    wl_t *sticky;       /* preemptor waiting for its victims (BestEffortFIFO) */
    uint64_t alloc_gen; /* bumped when quota grows or usage is freed */
    size_t fs_head;     /* scratch of fair-sharing preemption: first candidate index */
    struct cohort_rec_s *rebuild_cohort; /* scratch of sched__tree_rebuild: its cohort record */
    size_t sorted_idx;
} cq_t;

/* A workload's entry penalty, pushed at its quota reservation and pending until its admission
 * checks are Ready (Kueue's penaltyRecords): in ledger `id` of LocalQueue `lq`. */
typedef struct afs_pen_s {
    char *lq;    /* shared (sched__intern) LocalQueue key */
    uint64_t id; /* lq_afs_t.id of that LocalQueue when pushed */
    size_t n;
    qnano_t v[]; /* by resource id */
} afs_pen_t;

/* Admission fair sharing state of a LocalQueue (afs.c): Kueue's AfsUsageLedger entry. */
typedef struct lq_afs_s {
    qnano_t *consumed; /* owned: decayed consumed resources by resource id, length n */
    size_t n;
    int64_t last;  /* last sample or settlement (ms); valid once started */
    bool started;  /* the decay clock runs (set at the first time seen) */
    bool history;  /* sampled, admitted or seeded: a seed from status no longer applies */
    share_t score; /* weighted (consumed + pen) / LocalQueue weight: lower first */
    qnano_t *pen;  /* owned: entry penalties not settled yet (the sum of the workloads'
                      afs_pen records), by resource id, length npen */
    size_t npen;
    uint64_t id;         /* this ledger (LocalQueue object), for the records; 0 = none yet */
    qnano_t weight_seen; /* the weight `score` was computed with */
} lq_afs_t;

typedef struct lq_s {
    char *key; /* owned ns/name */
    char *cq;  /* owned */
    stop_policy_t stop_policy;
    qnano_t weight; /* spec.fairSharing.weight in nano (default 1e9) */
    lq_afs_t afs;   /* owned */
} lq_t;

typedef struct ns_rec_s {
    char *name;
    kv_list_t labels;
} ns_rec_t;

typedef struct prio_rec_s {
    char *name;
    int32_t value;
    bool global_default;
} prio_rec_t;

/* ---- workloads ---------------------------------------------------------------------------- */

typedef struct req_s {
    int res;
    qnano_t per_pod;
} req_t;

typedef struct wps_s {
    char *name;      /* shared (sched__intern) */
    int32_t count;   /* pods to place: the spec's count less `reclaim` */
    int32_t reclaim; /* status.reclaimablePods: pods done, whose quota is released */
    bool has_min;
    int32_t min_count;
    req_t *reqs; /* sorted by resource name */
    size_t nreqs;
    kv_list_t node_selector;
    toleration_t *tolerations;
    size_t ntolerations;
    node_selector_term_t *terms;
    size_t nterms;
    /* topology request (Kueue's podset-*-topology annotations; tas_mode NONE = none) */
    tasreq_mode_t tas_mode;
    char *tas_level;       /* owned: required / preferred level, NULL otherwise */
    char *tas_slice_level; /* owned: the outermost slice layer's level, NULL = no slices */
    int32_t tas_slice_size;
    /* the inner slice layers (podset-slice-required-topology-constraints), outermost first */
    size_t tas_ninner;
    char *tas_inner_level[TASREQ_MAX_LAYERS - 1]; /* owned */
    int32_t tas_inner_size[TASREQ_MAX_LAYERS - 1];
    char *tas_group; /* owned: podset-group-name (with required / preferred), NULL = none */
} wps_t;

typedef struct use_s {
    int fr;
    qnano_t v;
} use_t;

typedef enum {
    WQ_NONE = 0, /* not queued */
    WQ_HEAP,
    WQ_INADM,
} wq_where_t;

/*
 * A workload's pod sets: one block, immutable once loaded, behind a reference count, shared by
 * the engine and its copies (sched_clone: the start-time estimate's copy reads them on a libuv
 * worker thread while the loop goes on with the engine). wl_t.ps points at the array inside the
 * block, so readers see a plain `wps_t *`; the block owns every pointer of its pod sets (names,
 * requests, selectors, tolerations, terms, TAS strings).
 *
 * Threads: a reference is only ever taken on the loop (by the engine, or sched_clone of it);
 * a copy on another thread only drops its own. So a count of one read on the loop is the
 * caller's alone for good, and the block may be changed in place; with more, the writer first
 * takes a copy of its own (sched__wl_ps_own: copy on write). The count is a C11 atomic: the
 * last reference may be dropped on either thread.
 */
typedef struct wps_block_s {
    _Atomic uint32_t refs;
    uint32_t n; /* pod sets in ps */
    wps_t ps[]; /* the pod sets (wl_t.ps points here) */
} wps_block_t;

/* A new block of `n` zeroed pod sets with one reference, its array returned (NULL on
 * out-of-memory, and for n == 0: no block). */
wps_t *sched__ps_new(size_t n);
/* One more reference to the block of `ps` (NULL-safe); returns `ps`. Loop thread only. */
wps_t *sched__ps_ref(wps_t *ps);
/* Drop a reference to the block of `ps` (NULL-safe); the last frees the block and all it owns.
 * Any thread. */
void sched__ps_unref(wps_t *ps);
/* Make w's pod sets its own before changing them in place: a block shared with a copy of the
 * engine is replaced by a deep copy of it (copy on write). ERR_NOMEM leaves w as it was. */
err_t sched__wl_ps_own(wl_t *w);
/* Is the block of `ps` shared (more than one reference)? NULL: false. */
bool sched__ps_shared(const wps_t *ps);

/* What few workloads hold (wl_t.rare): a preemptor's pinned assignment, a victim's preemptor, the
 * failed nodes of a TAS workload, an entry penalty of admission fair sharing. Allocated by the
 * first writer (sched__wl_rare), freed once empty again (sched__wl_rare_trim) or with the
 * workload: the workload record of the many pending and admitted workloads stays small. */
typedef struct wl_rare_s {
    /* the assignment a preemptor issued its preemptions for (counts per podset, flavor per
     * podset x group of pin_cq); tried first while it waits, dropped at admission */
    cq_t *pin_cq;
    int32_t *pin_counts; /* owned */
    int *pin_flavors;    /* owned */
    char *preemptor;     /* owned, EVICTING by preemption */
    /* Kueue's status.unhealthyNodes: failed nodes of its topology assignment, in the order the
     * driver reported them (replace.c); owned */
    char **unhealthy;
    size_t nunhealthy;
    afs_pen_t *afs_pen; /* owned: its entry penalty not settled yet (afs.c), NULL when none */
} wl_rare_t;

/* Records below are deep-copied by clone.c: a new owned pointer field needs its copy there
 * (the pod sets, ps, are shared: see wps_block_t). The fields are ordered so that the record
 * has no padding to speak of (bench/engine_cost prints its size): 352 bytes. */
struct wl_s {
    char *key;        /* shared (sched__str_*) ns/name */
    char *ns;         /* shared, interned */
    char *lq_key;     /* shared, interned: ns/queueName, NULL when no queue (sched__wl_lq_name) */
    char *prio_class; /* shared, interned */
    priority_source_t prio_source;
    int32_t explicit_prio;
    int32_t boost; /* kueue.x-k8s.io/priority-boost (0 when absent or malformed) */
    int32_t priority;
    int64_t created;
    uint64_t seq; /* tie-break after created (sched_wl_opts_t.seq) */
    wps_t *ps;    /* shared, immutable (wps_block_t: sched__ps_*); NULL when nps == 0 */
    size_t nps;
    uint64_t shape; /* equivalence hash */
    sched_wl_state_t state;
    bool deact_by_engine; /* deactivated by max exec time; stays so until spec.active flips */
    bool held;            /* pending in requeue backoff (sched_wl_opts_t.hold): parked */
    bool failed_checks;   /* pending with a Retry/Rejected check (sched_wl_opts_t): parked */
    bool seen_inactive;
    /* (the flags are kept together: no padding between them) */
    bool has_explicit_prio;
    bool borrowing;
    bool has_max_exec;    /* max execution time */
    bool awaiting_checks; /* admission checks that apply are not all Ready yet */
    bool check_retry;     /* EVICTING by a Retry verdict: requeued at the eviction time */
    bool was_sticky;      /* has been some ClusterQueue's sticky preemptor (cq_t.sticky) */
    /* scratch (here: they fill the gap before afs_score's 16-byte alignment) */
    int mark;
    wq_where_t where;  /* queue membership (with qcq, qidx) */
    share_t afs_score; /* its LocalQueue's admission-fair-sharing score (afs.c refresh_cq) */
    /* queue membership */
    cq_t *qcq;
    size_t qidx;
    /* quota */
    cq_t *acq; /* CQ holding its quota */
    size_t aidx;
    admission_t adm; /* owned */
    use_t *use;
    size_t nuse;
    int64_t admitted_at; /* quota reservation time (preemption orders by it, as Kueue) */
    /* admission checks: those that apply to the admission (name order), whether they are all
     * Ready yet, and when the workload was Admitted (its execution time runs from there) */
    char **checks; /* owned */
    size_t nchecks;
    int64_t exec_since;
    /* max execution time */
    int64_t max_exec_ms;
    int64_t accumulated_ms;
    /* flavor assignment progress: per podset per group, last tried index (-1 = none) */
    int *last_tried;
    size_t nlast_tried;
    uint64_t last_gen;
    /* where the engine placed its pods (nodes.c); owned */
    wplace_t *place;
    size_t nplace;
    int32_t unplaced; /* pods that fit no node when admitted without node_fit */
    /* explanation */
    sched_reason_t reason;
    char *message; /* shared (sched__str_*), NULL when none */
    size_t sorted_idx;
    wl_rare_t *rare; /* owned, NULL when it holds none of what wl_rare_t keeps */
};

/* w's LocalQueue name (queueName: inside lq_key, after the namespace), NULL when no queue. */
static inline const char *sched__wl_lq_name(const wl_t *w)
{
    return w->lq_key != NULL ? w->lq_key + strlen(w->ns) + 1 : NULL;
}

/* w's rare part, allocated (zeroed) when it has none; NULL on out-of-memory. */
wl_rare_t *sched__wl_rare(wl_t *w);
/* Free w's rare part when it holds nothing any more. */
void sched__wl_rare_trim(wl_t *w);

/* Readers of the rare part (NULL / 0 when w has none). */
static inline cq_t *sched__wl_pin_cq(const wl_t *w)
{
    return w->rare != NULL ? w->rare->pin_cq : NULL;
}
static inline const char *sched__wl_preemptor(const wl_t *w)
{
    return w->rare != NULL ? w->rare->preemptor : NULL;
}
static inline size_t sched__wl_nunhealthy(const wl_t *w)
{
    return w->rare != NULL ? w->rare->nunhealthy : 0;
}
static inline afs_pen_t *sched__wl_afs_pen(const wl_t *w)
{
    return w->rare != NULL ? w->rare->afs_pen : NULL;
}

/* ---- the engine ----------------------------------------------------------------------------- */

struct sched_s {
    sched_config_t cfg;     /* cfg.resources points at `rules`, cfg.afs_weights at afs_weights */
    resource_rules_t rules; /* owned: the Configuration's resources section */
    resource_list_t afs_weights; /* owned: admissionFairSharing.resourceWeights */
    qnano_t *afs_w;              /* owned: those weights by resource id (afs.c), length afs_wlen */
    size_t afs_wlen;
    uint64_t afs_ids; /* the last lq_afs_t.id given */
    /* interning */
    char **res_names;
    size_t nres, cres;
    util_hmap_t res_map; /* name -> id (util_hmap_put_index) */
    flavor_rec_t **flavors;
    size_t nflavors, cflavors;
    util_hmap_t flavor_map;
    fr_rec_t *frs;
    size_t nfr, cfr;
    /* objects */
    cq_t **cqs;
    size_t ncqs, ccqs;
    util_hmap_t cq_map; /* cqs sorted by name */
    cohort_rec_t **cohorts;
    size_t ncohorts, ccohorts;
    util_hmap_t cohort_map; /* sorted by name */
    lq_t **lqs;
    size_t nlqs, clqs;
    util_hmap_t lq_map;
    ns_rec_t **nss;
    size_t nnss, cnss;
    util_hmap_t ns_map;
    prio_rec_t **wpcs;
    size_t nwpcs, cwpcs;
    util_hmap_t wpc_map;
    prio_rec_t **pcs;
    size_t npcs, cpcs;
    util_hmap_t pc_map;
    check_rec_t **checks; /* sorted by name */
    size_t nchecks, cchecks;
    util_hmap_t check_map;
    topo_rec_t **topos; /* Topology objects, in name order */
    size_t ntopos, ctopos;
    wl_t **wls;
    size_t nwls, cwls;
    util_hmap_t wl_map;    /* wls sorted by key; keys borrowed (each workload's own key) */
    util_hmap_t interned;  /* text -> shared string (sched__intern), keys borrowed */
    size_t interned_swept; /* entries left by the last sweep of the table */
    bool wls_sorted;
    node_t **roots;
    size_t nroots, croots;
    bool tree_dirty;  /* structure must be rebuilt before the next cycle */
    bool requeue_all; /* every inadmissible workload goes back (object change) */
    node_t **requeue_roots;
    size_t nrequeue, crequeue; /* trees to requeue */
    bool queues_dirty;         /* workload -> CQ mapping must be recomputed */
    wlvec_t expiring;          /* admitted workloads with a maximum execution time */
    sched_nodes_t *nodes;      /* owned, NULL until a Node or bound pod is given (nodes.c) */
    int64_t now;
    uint64_t cycle_no;
    sched_attempts_t attempts; /* passes with heads, and those that admitted (sched_attempts) */
    /* The preemption oracle's last answer (flavor assignment asks it per flavor-resource).
     * The targets search of the same nomination asks the same question when the workload
     * uses one flavor-resource: it takes the answer instead of searching again. */
    struct {
        bool valid;
        const cq_t *cq;
        const wl_t *w;
        use_t use;
        struct target_s *items; /* owned: a targets_t's items, len, cap */
        size_t len, cap;
    } memo;
    /* The topology-aware preemption search under way (cycle.c targets_for), NULL otherwise:
     * sched__fits_after then also asks whether its TAS pod sets are placed (nodes.c). */
    struct tas_pre_s *tas_pre;
    /* Scratch of the classical targets search (preempt.c), kept from one search to the next so
     * that a search allocates nothing once they are big enough: the candidate lists' arrays
     * and the sort's buffer. */
    struct {
        struct cand_s *sort_tmp; /* owned */
        size_t csort_tmp;
        struct cand_s *lists[4]; /* owned: same, hier, prio, all (sched__get_targets) */
        size_t clists[4];
    } pscr;
    /* The heads of a cycle (cycle.c one_cycle), room for one per ClusterQueue, kept from one
     * cycle to the next: allocating and zeroing it for 1,000 ClusterQueues every cycle cost a
     * fresh mapping (over malloc's mmap threshold) and its page faults each time. Owned. */
    struct entry_s *cyc_es;
    size_t ccyc_es;
    /* keys of workloads with unhealthy nodes, for the next cycle's replacement pass (replace.c);
     * owned */
    char **repl;
    size_t nrepl, crepl;
};

/* ---- tree.c: structure and quota math ------------------------------------------------------- */

err_t sched__intern_res(sched_t *s, const char *name, int *out);
err_t sched__intern_flavor(sched_t *s, const char *name, flavor_rec_t **out);
err_t sched__intern_fr(sched_t *s, int flavor, int res, int *out);
int sched__find_res(const sched_t *s, const char *name);
int sched__find_fr(const sched_t *s, int flavor, int res);
err_t sched__node_reserve(sched_t *s, node_t *n);
err_t sched__tree_rebuild(sched_t *s);
cohort_rec_t *sched__cohort_get(sched_t *s, const char *name, bool create);
void sched__node_fini(node_t *n);

qnano_t sched__local_quota(const node_t *n, int fr);
qnano_t sched__available(const node_t *n, int fr);
qnano_t sched__potential_available(const node_t *n, int fr);
bool sched__borrowing_with(const node_t *n, int fr, qnano_t val);
bool sched__within_nominal(const node_t *n, int fr);
void sched__usage_add(node_t *n, int fr, qnano_t val);
void sched__usage_remove(node_t *n, int fr, qnano_t val);
/* Height of the lowest subtree that fits val more; *may_reclaim as Kueue. */
int sched__lowest_fit_height(const node_t *cq, int fr, qnano_t val, bool *may_reclaim);
qnano_t sched__fr_get_usage(const node_t *n, int fr);
const qfr_t *sched__qfr(const node_t *n, int fr);
node_t *sched__root(node_t *n);
void sched__mark_requeue(sched_t *s, node_t *n);

/* ---- queue.c -------------------------------------------------------------------------------- */

int sched__wl_cmp(const wl_t *a, const wl_t *b);
/* The order of cq's heap: sched__wl_cmp, after the LocalQueue usage under admission fair
 * sharing. */
int sched__queue_cmp(const cq_t *cq, const wl_t *a, const wl_t *b);
err_t sched__queue_push(cq_t *cq, wl_t *w);
err_t sched__queue_park(cq_t *cq, wl_t *w);
void sched__queue_remove(wl_t *w);
wl_t *sched__queue_pop(cq_t *cq);
err_t sched__queue_requeue_all(cq_t *cq);
void sched__queue_rebuild_heap(cq_t *cq);
err_t sched__wlvec_push(wlvec_t *v, wl_t *w);
void sched__wlvec_fini(wlvec_t *v);
err_t sched__admitted_add(cq_t *cq, wl_t *w);
void sched__admitted_remove(wl_t *w);
/* Put pending workload w in the right queue (or none); err only on OOM. */
err_t sched__wl_enqueue(sched_t *s, wl_t *w);
err_t sched__requeue_pending(sched_t *s);

/* ---- afs.c: admission fair sharing ------------------------------------------------------- */

/* cq orders by LocalQueue usage (admissionScope UsageBased and the configuration's section). */
bool sched__afs_on(const sched_t *s, const cq_t *cq);
/* Before w's LocalQueue's admitted usage changes at `now`: replay the samples due. */
void sched__afs_before(sched_t *s, const wl_t *w, int64_t now);
/* w was admitted into cq at `now`: settle its LocalQueue's usage and entry penalty. */
err_t sched__afs_admitted(sched_t *s, wl_t *w, const cq_t *cq, int64_t now);
/* Workload w (its checks just Ready) is Admitted at `now`: its LocalQueue's usage decays up to
 * now and its pending entry penalty settles into consumed (Kueue's updateAfsConsumedUsage). */
void sched__afs_settle(sched_t *s, wl_t *w, int64_t now);
/* Drop w's pending entry penalty, if any (deleted, finished, deactivated, moved to another
 * LocalQueue: it can no longer settle). */
void sched__afs_drop(sched_t *s, wl_t *w);
/* A copy of record `p` (NULL for NULL), or NULL on OOM with *oom set. */
afs_pen_t *sched__afs_pen_copy(const afs_pen_t *p, bool *oom);
/* Free record `p` (NULL-safe). */
void sched__afs_pen_free(afs_pen_t *p);
/* Before a cycle's heads are taken: samples due, scores, heaps of the queues whose order moved. */
err_t sched__afs_prepare(sched_t *s, int64_t now);
void sched__afs_fini(lq_afs_t *a);
err_t sched__afs_copy(lq_afs_t *dst, const lq_afs_t *src);

/* ---- workload.c ----------------------------------------------------------------------------- */

lq_t *sched__lq_of(const sched_t *s, const wl_t *w);
cq_t *sched__cq_of(const sched_t *s, const wl_t *w);
void sched__wl_set_reason(wl_t *w, sched_reason_t r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* sched__wl_set_reason(w, r, "%s", msg) without the formatting (msg NULL: ""): the same
 * result, cut at the same length; for the cycle's hot paths (the equivalence parking sets one
 * message on every look-alike of a failed head). */
void sched__wl_set_reason_str(wl_t *w, sched_reason_t r, const char *msg);
/* The same for a shared string (sched__str_*, e.g. another workload's explanation or a
 * SCHED_STR_STATIC's text): `w` takes a reference to it rather than a copy (NULL: ""). */
void sched__wl_share_reason(wl_t *w, sched_reason_t r, char *shared);
/* Pending evaluation: "Workload is pending evaluation in the scheduling queue" (shared). */
void sched__wl_set_pending_evaluation(wl_t *w);
int32_t sched__priority_boost(const kv_list_t *annotations);
int32_t sched__resolve_priority(const sched_t *s, const wl_t *w);
/* Free quota of an admitted/evicting workload (does not change state). */
void sched__wl_release(sched_t *s, wl_t *w, int64_t now);
err_t sched__wl_apply_admission(sched_t *s, wl_t *w, cq_t *cq, use_t *use, size_t nuse);
void sched__wl_free(wl_t *w);
/* Forget the assignment pinned by issued preemptions. */
void sched__wl_pin_clear(wl_t *w);
void sched__admission_fini(admission_t *a);
/* The checks of cq that apply to admission `a` (Kueue's admissionChecksForAdmission: a rule with
 * no onFlavors always, else when a podset was assigned one of its flavors), as new strings in
 * name order; *n = 0 and *out = NULL when none. ERR_NOMEM. */
err_t sched__checks_for(const sched_t *s, const cq_t *cq, const admission_t *a, char ***out,
                        size_t *n);
err_t sched__admission_copy(admission_t *dst, const admission_t *src);

/* ---- match.c: flavor matching (on model/selector.h) and deep copies ---------------------------
 */

/* Kubernetes LabelSelector semantics (nil selects nothing), for namespaceSelector. */
bool sched__label_selector_matches(const label_selector_t *sel, const kv_list_t *labels);
/* NULL when tolerated, else the first untolerated NoSchedule/NoExecute taint. */
const taint_t *sched__untolerated_taint(const flavor_rec_t *f, const wps_t *ps);
/* Kueue flavorSelector: nodeSelector and required affinity restricted to the flavor's keys. */
bool sched__affinity_matches(const flavor_rec_t *f, const wps_t *ps);
/* Copy sorted by key, absent values as "" (free with kv_list_fini). */
err_t sched__kv_copy(kv_list_t *dst, const kv_list_t *src);
/* Free with label_selector_fini. */
err_t sched__selector_copy(label_selector_t *dst, const label_selector_t *src);
err_t sched__tolerations_copy(toleration_t **dst, const toleration_t *src, size_t n);
void sched__tolerations_fini(toleration_t *t, size_t n);
err_t sched__taints_copy(taint_t **dst, const taint_t *src, size_t n);
void sched__taints_fini(taint_t *t, size_t n);
err_t sched__terms_copy(node_selector_term_t **dst, const node_selector_term_t *src, size_t n);
void sched__terms_fini(node_selector_term_t *t, size_t n);

/* ---- assign.c: flavor assignment ------------------------------------------------------------ */

typedef enum {
    PM_NOFIT = 0,
    PM_NO_CANDIDATES,
    PM_PREEMPT,
    PM_RECLAIM,
    PM_FIT,
} pmode_t;

typedef enum {
    AM_NOFIT = 0,
    AM_PREEMPT,
    AM_FIT,
} amode_t;

typedef struct ps_assign_s {
    int32_t count;
    size_t nreqs;   /* requests of the podset for `count` pods (+ "pods" when covered) */
    int *res;       /* resource id per request */
    qnano_t *total; /* total for all pods */
    int *flavor;    /* chosen flavor id or -1 (resource not covered, zero request) */
    int *fr;        /* fr id or -1 */
    pmode_t *mode;  /* per request: the resource's own mode in the chosen flavor */
    int *tried;     /* per resource group: TriedFlavorIdx (-1 = start over) */
    topology_assignment_t *topo; /* owned: where its pods go (a TAS flavor), NULL = none */
} ps_assign_t;

typedef struct assignment_s {
    amode_t mode;
    int borrow; /* max borrowing level */
    ps_assign_t *ps;
    size_t nps;
    use_t *use; /* total usage per fr */
    size_t nuse;
    sched_reason_t reason;
    char *message; /* owned; NULL when it fits */
    bool pending_flavors;
    /* It preempts (AM_PREEMPT) and has TAS pod sets: its victims must also make room on the
     * nodes (Kueue's workloadFits with the TAS requests; nodes.c sched__tas_fits_after). */
    bool tas;
} assignment_t;

/* Flavor assignment of w in cq. counts: per podset, NULL = full counts. force: per podset x
 * resource group a flavor id to use alone (SCHED__NONE = scan as usual), NULL = none. */
err_t sched__assign(sched_t *s, cq_t *cq, wl_t *w, const int32_t *counts, const int *force,
                    assignment_t *out);
void sched__assignment_fini(assignment_t *a);
err_t sched__use_add(use_t **use, size_t *n, int fr, qnano_t v);

/* ---- nodes.c ------------------------------------------------------------------------------- */

void sched__nodes_free(sched_t *s);
err_t sched__nodes_clone(sched_t *d, const sched_t *s);
/* c's placement from s's, its nodes mapped by name into d (d's nodes cloned already). */
err_t sched__wl_place_clone(const sched_t *d, wl_t *c, const wl_t *s);
/* Is some node known (and existing)? */
bool sched__nodes_known(const sched_t *s);
/* Ready, not cordoned, not deleted. */
bool sched__node_selectable(const snode_t *n);
/* Place w's pods under assignment a (first fit, nodes by name). `all`: every pod must fit, else
 * nothing is placed, *placed = false and *why (owned, may be NULL) says why; otherwise the pods
 * that fit are placed and the rest counted in w->unplaced. ERR_NOMEM places nothing. */
err_t sched__nodes_place(sched_t *s, wl_t *w, const assignment_t *a, bool all, bool *placed,
                         char **why);
/* Kueue's FindTopologyAssignmentsForWorkload: every pod set of w asking for topology-aware
 * scheduling in cq (with pods in assignment a) placed by Kueue's algorithm (tas.c) on the nodes
 * its TAS flavor and the pod set select, in pod-set order, each after the pods of the earlier
 * ones on the same flavor are counted on their domains (Kueue's assumedUsage); the two pod sets
 * of a podset-group-name group (the leader of one pod and its workers) placed in one run at the
 * first of them (tas.c tas_place_group()), *failed then naming that first one; on the nodes'
 * free capacity or, `empty`, without their topology-aware usage (Kueue's simulate-empty pass for
 * a preempting assignment). ERR_OK: all placed, and when `keep` is not NULL (a itself, as a
 * rule) each placed pod set's assignment replaces keep->ps[i].topo; ERR_CONFLICT: pod set *failed
 * does not fit, *why (owned) says why in Kueue's words; ERR_NOT_FOUND: pod set *failed got no
 * TAS flavor (*why says so); ERR_NOMEM. */
err_t sched__tas_place_all(const sched_t *s, const cq_t *cq, const wl_t *w, const assignment_t *a,
                           bool empty, assignment_t *keep, size_t *failed, char **why);
/* An admitted workload read back (sched_workload_upsert of an admission): its pods counted on
 * the nodes its admission's topologyAssignment names (nodes not known yet by their hostname,
 * counted when they come). ERR_NOMEM. */
err_t sched__nodes_place_admission(sched_t *s, wl_t *w);
/* Failed-node replacement (replace.c) reads the nodes through these. Is `n` a node for podset
 * `ps` under flavors `p` (node_for)? */
bool sched__node_for(const sched_t *s, const snode_t *n, const wps_t *ps, const ps_assign_t *p);
/* n's free capacity of the resources rid[0..nres) (SCHED__NONE: 0) into fv, as a TAS placement
 * reads it ("pods" not listed: no limit). */
void sched__node_tas_free(const snode_t *n, const int *rid, size_t nres, int pods, qnano_t *fv);
/* The resources a TAS placement of pod set ps counts, into res/rid/per (room for ps->nreqs +
 * (lps ? lps->nreqs : 0) + 1): ps's non-zero requests, then those only leader pod set lps (may
 * be NULL) requests (per 0), then "pods" (one per pod). Returns how many. */
size_t sched__tas_resources(const sched_t *s, const wps_t *ps, const wps_t *lps, const char **res,
                            int *rid, qnano_t *per);
/* Which slice layers sched__tas_request() asks for: all of them, none, or one (0 = the
 * outermost, 1.. the inner ones) alone. */
#define SCHED_LAYERS_ALL  (-1)
#define SCHED_LAYERS_NONE (-2)
/* The tas.c request of `count` pods of pod set ps (per-pod requests `per`): its mode and level,
 * and the slice layers `layers` says (SCHED_LAYERS_*, or a layer's index). */
tas_request_t sched__tas_request(const wps_t *ps, int32_t count, const qnano_t *per, int layers);
/* Count pod set pi's pods of topology assignment ta on the nodes of its domains (as at
 * admission); ERR_CONFLICT when a domain has no node of the pod set, ERR_NOMEM. */
err_t sched__nodes_place_topology(sched_t *s, wl_t *w, size_t pi, const ps_assign_t *p,
                                  const topology_assignment_t *ta);
/* Drop w's placements from index `base` on (base = 0: all, without requeueing). */
void sched__nodes_unplace_from(sched_t *s, wl_t *w, size_t base);
/* Drop w's placements on node `n`. */
void sched__nodes_unplace_on(sched_t *s, wl_t *w, const snode_t *n);

/* ---- replace.c: failed-node replacement (Kueue's TASFailedNodeReplacement) ------------------ */

/* Forget w's unhealthy nodes. */
void sched__wl_unhealthy_clear(wl_t *w);
/* c's unhealthy nodes from s's; d's replacement keys from s's (sched_clone). */
err_t sched__wl_unhealthy_clone(wl_rare_t *c, const wl_rare_t *s);
err_t sched__repl_clone(sched_t *d, const sched_t *s);
void sched__repl_free(sched_t *s);
/* Kueue's second pass after a node failure for admitted workload w with unhealthy nodes: with
 * one, a replacement of that node's pods in the same required domain (the rest of the
 * assignment kept). true: *next is the admission with the merged topology assignments (owned,
 * placed already; sched__replace_commit or sched__replace_undo); false: *message (owned) is
 * Kueue's NodeFailures eviction message. ERR_NOMEM. */
err_t sched__replace_plan(sched_t *s, wl_t *w, bool *ok, admission_t *next, size_t *base,
                          char **message);
/* Make the plan w's admission (next taken) and drop its pods on the failed node. */
void sched__replace_commit(sched_t *s, wl_t *w, admission_t *next);
/* Drop a plan: the placements from `base` on. */
void sched__replace_undo(sched_t *s, wl_t *w, admission_t *next, size_t base);

/* The Topology object `name`, NULL when it does not exist. */
const topo_rec_t *sched__topo_find(const sched_t *s, const char *name);
/* Does podset ps of a workload in cq ask for topology-aware scheduling (explicitly, or implied
 * because every flavor of cq is a TAS flavor: Kueue's isTASImplied)? */
bool sched__tas_requested(const sched_t *s, const cq_t *cq, const wps_t *ps);
/* The TAS flavor among p's flavors, SCHED__NONE when none. */
int sched__tas_flavor(const sched_t *s, const ps_assign_t *p);
/* Release w's placement (never fails). */
void sched__nodes_unplace(sched_t *s, wl_t *w);

/* ---- preempt.c ---------------------------------------------------------------------------- */

typedef struct target_s {
    wl_t *w;
    sched_preempt_reason_t reason;
} target_t;

typedef struct targets_s {
    target_t *items;
    size_t len, cap;
    size_t nhold; /* items whose ClusterQueue's freed nominal quota is held back (preempt.c) */
} targets_t;

/* Append a target (keeps nhold); ERR_NOMEM. */
err_t sched__targets_add(targets_t *t, wl_t *w, sched_preempt_reason_t r);
/* Remove and return item i, order kept. */
target_t sched__targets_remove_at(targets_t *t, size_t i);
/* Put `x` back at index i (capacity is there: it was removed from this list). */
void sched__targets_insert_at(targets_t *t, size_t i, target_t x);

/* Targets that make `use` fit for `w` in `cq` (empty = none). frs_need: fr ids needing it. */
err_t sched__get_targets(sched_t *s, cq_t *cq, wl_t *w, const use_t *use, size_t nuse,
                         const int *frs_need, size_t nfrs_need, targets_t *out);
void sched__targets_fini(targets_t *t);
/* Kueue's preemption oracle for one fr: PM_NO_CANDIDATES, PM_RECLAIM or PM_PREEMPT, and the
 * borrowing level after the preemptions. */
pmode_t sched__simulate_preemption(sched_t *s, cq_t *cq, wl_t *w, int fr, qnano_t val,
                                   int *borrow_after);
/* Take the oracle's memoised targets when they answer (cq, w, use, frs); false otherwise. The
 * memo is dropped either way. */
bool sched__memo_take(sched_t *s, const cq_t *cq, const wl_t *w, const use_t *use, size_t nuse,
                      const int *frs, size_t nfrs, targets_t *out);
/* Drop the oracle's memo (the tree is about to change). */
void sched__memo_drop(sched_t *s);
bool sched__quota_fits(const cq_t *cq, const use_t *use, size_t nuse, bool allow_borrowing);
/* Does `use` fit in cq once `removed` (already taken out of the tree) are gone, holding back the
 * nominal quota their ClusterQueues would reclaim (see preempt.c), and, with s's loop guard
 * own-queue-borrowing, without growing cq's borrowing through victims of its own? During a
 * topology-aware search (s->tas_pre for cq) the preemptor's TAS pod sets must also be placed on
 * the nodes without `removed` (sched__tas_fits_after). The answer into *fits; ERR_NOMEM leaves
 * it untouched. */
err_t sched__fits_after(sched_t *s, const cq_t *cq, const use_t *use, size_t nuse,
                        const targets_t *removed, bool allow_borrowing, bool *fits);
void sched__wl_usage_apply(wl_t *w, int sign);
/* Fair sharing variant (fairshare.c). */
err_t sched__fair_targets(sched_t *s, cq_t *cq, wl_t *w, const use_t *use, size_t nuse,
                          const int *frs_need, size_t nfrs_need, targets_t *out);

/* ---- nodes.c: topology-aware preemption -------------------------------------------------------
 * Kueue removes each candidate's TAS usage from its snapshot and places the preemptor again
 * (preemption.go workloadFits with the TAS requests). Here a candidate's node usage is its
 * placement and its bound pods; they are taken off the nodes for the check and put back. */

typedef struct tas_bound_s {
    const wl_t *w;
    spod_t *p;
} tas_bound_t;

/* One search: the preemptor `w` in `cq` with assignment `a` (AM_PREEMPT, a->tas). */
typedef struct tas_pre_s {
    const cq_t *cq;
    const wl_t *w;
    const assignment_t *a;
    tas_bound_t
        *bound; /* owned: bound pods of admitted workloads by workload, built on first use */
    size_t nbound;
    bool indexed;
} tas_pre_t;

/* With the node usage of `removed` taken off the nodes, is every TAS pod set of tp->a placed on
 * free capacity (Kueue's algorithm, tas.c)? The nodes are as before on return. The answer into
 * *fits; ERR_NOMEM leaves it untouched. */
err_t sched__tas_fits_after(sched_t *s, tas_pre_t *tp, const targets_t *removed, bool *fits);
/* Release what tp owns (its index); the struct itself is the caller's. */
void sched__tas_pre_fini(tas_pre_t *tp);

/* ---- preemption rules shared by classical (preempt.c) and fair sharing (fairshare.c) ----------
 * Inline: both call them per candidate, for every workload admitted in the cohort. */

/* Kueue's priorityTooHighToPreempt, inverted: may `policy` (withinClusterQueue or
 * reclaimWithinCohort of the preemptor's ClusterQueue) preempt candidate `c` for `w`? */
static inline bool sched__policy_allows(preempt_policy_t policy, const wl_t *w, const wl_t *c)
{
    switch (policy) {
    case PREEMPT_LOWER_PRIORITY:
        return c->priority < w->priority;
    case PREEMPT_LOWER_OR_NEWER_EQUAL_PRIORITY:
        return c->priority < w->priority || (c->priority == w->priority && w->created < c->created);
    case PREEMPT_ANY:
        return true;
    default:
        return false;
    }
}

/* Does candidate `c` use any of the contested flavor-resources `frs`? (Others free nothing the
 * preemptor needs.) */
static inline bool sched__uses_any_fr(const wl_t *c, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < c->nuse; i++)
        for (size_t j = 0; j < nfrs; j++)
            if (c->use[i].fr == frs[j])
                return true;
    return false;
}

/* Within nominal quota in every contested flavor-resource (Kueue: not cqIsBorrowing). */
static inline bool sched__within_nominal_frs(const node_t *n, const int *frs, size_t nfrs)
{
    for (size_t i = 0; i < nfrs; i++)
        if (!sched__within_nominal(n, frs[i]))
            return false;
    return true;
}

/* Kueue CandidatesOrdering: evicting first, workloads of other ClusterQueues than `own` first,
 * (admission fair sharing) higher LocalQueue usage, lower priority, most recently admitted
 * first, then key (Kueue: UID). */
static inline int sched__cand_cmp(const wl_t *a, const wl_t *b, const cq_t *own)
{
    bool ea = a->state == SCHED_WL_EVICTING, eb = b->state == SCHED_WL_EVICTING;
    if (ea != eb)
        return ea ? -1 : 1;
    bool oa = a->acq != own, ob = b->acq != own;
    if (oa != ob)
        return oa ? -1 : 1;
    /* admission fair sharing: in one ClusterQueue, the workload of the LocalQueue that used
     * more goes first (afs_score is refreshed for admitted workloads too, afs.c) */
    if (a->acq == b->acq && a->acq != NULL && a->acq->afs_active && a->lq_key != NULL &&
        b->lq_key != NULL && strcmp(a->lq_key, b->lq_key) != 0) {
        int c = sched__share_cmp(b->afs_score, a->afs_score);
        if (c != 0)
            return c;
    }
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    if (a->admitted_at != b->admitted_at)
        return a->admitted_at > b->admitted_at ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* ---- cycle.c: one nominated head --------------------------------------------------------- */

typedef struct entry_s {
    wl_t *w;
    cq_t *cq;
    assignment_t a;
    targets_t t;
    bool nominated; /* false: inadmissible before assignment (reason already set) */
    bool ns_mismatch;
    bool done;
} entry_t;

/* ---- fairshare.c ---------------------------------------------------------------------------- */

share_t sched__drs(const sched_t *s, const node_t *n, const use_t *extra, size_t nextra);
int64_t sched__share_status(share_t sh);
/* Fair-sharing tournament: index of the next entry to process among those not done. */
size_t sched__fair_next(sched_t *s, entry_t *e, size_t n);

/* ---- cycle.c / messages -----------------------------------------------------------------------
 */

/* How messages print an amount of resource `res`: binary suffixes for bytes (memory,
 * ephemeral-storage, hugepages-*), as Kueue's resources.ResourceQuantity(); else decimal. */
quantity_format_t sched__res_format(const char *res);
/* `v` in canonical Kubernetes form of `format` into `buf` (QUANTITY_STR_MAX bytes). */
char *sched__fmt_q(qnano_t v, quantity_format_t format, char *buf);

#endif
