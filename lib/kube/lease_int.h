/* lease_int -- the leader-election state machine without a loop (injected clock), for lease.c and
 * its tests only. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_LEASE_INT_H
#define SLUICE_KUBE_LEASE_INT_H

#include "kube/lease.h"

typedef enum {
    KUBE__LEASE_WAIT,   /* someone else holds a valid lease */
    KUBE__LEASE_CREATE, /* no Lease yet: POST the body */
    KUBE__LEASE_UPDATE, /* acquire or renew: PUT the body (carries the read resourceVersion) */
} kube__lease_action_t;

typedef enum {
    KUBE__LEASE_SAME,
    KUBE__LEASE_STARTED,
    KUBE__LEASE_STOPPED,
} kube__lease_change_t;

/* What a candidate knows. Times are monotonic milliseconds of the caller's clock: the other
 * holder's renewTime is never compared with our clock (skew), only noticed as changed. */
typedef struct kube__lease_state_s {
    char *identity;  /* owned */
    char *ns, *name; /* owned */
    uint32_t lease_ms, deadline_ms, retry_ms;
    bool leading;
    uint64_t last_renew_ms; /* when our last acquire/renew succeeded */
    char *obs_holder;       /* owned: holderIdentity last read, "" for none */
    char *obs_renew;        /* owned: renewTime last read */
    uint64_t obs_at_ms;     /* when the record last changed, by our clock */
    uint32_t obs_duration_s;
    bool have_obs;
    json_t *last; /* owned: the Lease as last read or written (release starts from it) */
} kube__lease_state_t;

/* Fill `st` from `opts` (defaults applied). ERR_INVALID without name or identity. */
err_t kube__lease_init(kube__lease_state_t *st, const kube_lease_opts_t *opts,
                       const char *default_ns, err_msg_t *msg);

/* Free what `st` owns. */
void kube__lease_fini(kube__lease_state_t *st);

/* Decide after a GET at `now_ms` (`now_str`: the wall clock as a MicroTime string). `get_err` is
 * the GET's error (ERR_NOT_FOUND: no Lease) and `lease` its body (borrowed). On CREATE/UPDATE,
 * `*body` is a new reference to write. `*change` is STOPPED when we were leading and the Lease
 * now shows another valid holder. ERR_* for a GET failure or OOM: nothing to write then. */
err_t kube__lease_plan(kube__lease_state_t *st, uint64_t now_ms, const char *now_str, err_t get_err,
                       json_t *lease, kube__lease_action_t *action, json_t **body,
                       kube__lease_change_t *change, err_msg_t *msg);

/* Record the outcome of the CREATE/UPDATE at `now_ms` (`written`: the server's answer on
 * success, borrowed). Success starts or continues leadership; a failure only counts against the
 * renew deadline. */
kube__lease_change_t kube__lease_written(kube__lease_state_t *st, uint64_t now_ms, err_t err,
                                         json_t *written);

/* Deadline check at `now_ms`: a leader without a successful renewal for deadline_ms stops. */
kube__lease_change_t kube__lease_check(kube__lease_state_t *st, uint64_t now_ms);

/* Body that releases the Lease (holderIdentity "", leaseDurationSeconds 1, times `now_str`), or
 * NULL when not leading or out of memory. Leadership ends (leading = false). */
json_t *kube__lease_release_body(kube__lease_state_t *st, const char *now_str);

/* Test hook: stop renewing and reading without releasing or stopping, as a crashed or
 * partitioned leader would (it still believes it leads). */
void kube__lease_freeze(kube_lease_t *l);

/* Format the wall clock `unix_us` as a Kubernetes MicroTime ("2006-01-02T15:04:05.000000Z"). */
void kube__lease_microtime(int64_t unix_us, char buf[32]);

#endif
