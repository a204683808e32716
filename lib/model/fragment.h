/* fragment -- decode the parts of objects sluice does not model whole: metadata, pod templates. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_FRAGMENT_H
#define SLUICE_FRAGMENT_H

#include "model/types.h"
#include "util/err.h"

#include <jansson.h>

/*
 * The job integrations (lib/jobs) read kinds whose whole schema sluice does not decode (JobSet,
 * PyTorchJob, ...): only their metadata and the pod templates they embed matter for admission.
 * These decode those fragments with the same rules as object_decode(), and report the first
 * error with its full field path, e.g. "spec.replicatedJobs[0].template.spec.template.spec.
 * containers[0].resources.requests.cpu: invalid quantity \"x\"".
 */

/* Decode `root`'s metadata (an API object's, namespaced) into zeroed `out`: ERR_INVALID with the
 * first error in `msg` (then `out` stays zeroed), ERR_NOMEM. Warnings are dropped. */
err_t fragment_meta(const json_t *root, object_meta_t *out, err_msg_t *msg);

/* Decode PodTemplateSpec `tmpl` found at field path `path` into `ps`: its template_labels,
 * template_annotations and spec, and pod_requests computed from the spec (name and counts are
 * left as they are). On error (ERR_INVALID, ERR_OVERFLOW, ERR_NOMEM) those members stay empty
 * and `msg` holds "path.field: message". */
err_t fragment_pod_template(const json_t *tmpl, const char *path, pod_set_t *ps, err_msg_t *msg);

#endif
