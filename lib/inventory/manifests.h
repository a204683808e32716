/* manifests -- read Nodes and Kueue's queue objects from manifest files or API lists. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_INV_MANIFESTS_H
#define SLUICE_INV_MANIFESTS_H

#include "model/node.h"
#include "model/object.h"
#include "util/err.h"

#include <jansson.h>
#include <stdio.h>

/*
 * The objects `sluice inventory` and `sluice graph` work on: v1 Nodes (`kubectl get nodes -o
 * yaml` output, a List) and ResourceFlavors, ClusterQueues, Cohorts and LocalQueues. Other kinds
 * are counted and skipped. An object that does not decode is reported on `errs` as
 * "FILE:LINE: doc N (Kind name): path: message" (LINE: where its document starts; errors only,
 * sluice check tells the rest) and left out.
 */
typedef struct inv_set_s {
    node_t *nodes; /* owned */
    size_t nnodes, capn;
    object_t *objs; /* owned: the Kueue objects, in the order read */
    size_t nobjs, capo;
    json_t **status; /* owned references, one per objs[i]: a ClusterQueue's or LocalQueue's
                        status as the API server holds it (live), else NULL */
    size_t caps;
    size_t nskipped;  /* objects of other kinds */
    size_t ninvalid;  /* objects that did not decode */
    FILE *errs;       /* borrowed: where problems are written */
    const char *file; /* borrowed: the file being read, for messages */
    char **paths;     /* owned: the files found in directories (messages borrow them) */
    size_t npaths;
} inv_set_t;

/* Pointers into a set, by kind (borrowed from the set; valid until it changes). */
typedef struct inv_view_s {
    const flavor_t **flavors; /* owned arrays of borrowed pointers */
    size_t nflavors;
    const cluster_queue_t **cqs;
    size_t ncqs;
    const cohort_t **cohorts;
    size_t ncohorts;
    const local_queue_t **lqs;
    size_t nlqs;
    const json_t **cq_status; /* borrowed from the set, one per cqs[i] (NULL: none) */
    const json_t **lq_status; /* one per lqs[i] */
} inv_view_t;

/* An empty set reporting to `errs` (borrowed). */
void inv_set_init(inv_set_t *s, FILE *errs);

/* Release everything; NULL-safe. */
void inv_set_fini(inv_set_t *s);

/* Read every YAML/JSON document of `f` (`display` names it in messages; borrowed, must outlive
 * the read). Not well-formed input is ERR_PARSE with "line L, column C: ..." in `msg`; ERR_IO;
 * ERR_NOMEM. Objects that do not decode are reported and counted, not an error. */
err_t inv_set_read(inv_set_t *s, FILE *f, const char *display, err_msg_t *msg);

/* Read the file at `path` ("-": standard input, named "<stdin>"; `path` is borrowed and must
 * outlive the set's messages) as inv_set_read(); a directory's *.yaml, *.yml and *.json files in
 * name order (not recursive). A file that cannot be opened or read is ERR_IO
 * with "PATH: reason" in `msg`; not well-formed input is ERR_PARSE with "PATH: line L, ...". */
err_t inv_set_read_path(inv_set_t *s, const char *path, err_msg_t *msg);

/* Add one object or a List's items (`root` borrowed); `origin`, `doc` (1-based) and `line` (where
 * the document starts; 0: unknown, not printed) name it in messages. */
err_t inv_set_add(inv_set_t *s, json_t *root, const char *origin, size_t doc, int line);

/* The set's objects by kind into `out` (zeroed first); ERR_NOMEM. */
err_t inv_set_view(const inv_set_t *s, inv_view_t *out);

/* Release the view's arrays; NULL-safe. */
void inv_view_fini(inv_view_t *v);

#endif
