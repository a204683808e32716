/* jobparent -- is a job the child of an object Kueue admits as a whole (JobSet, MPIJob, ...)? */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_CTRL_JOBPARENT_H
#define SLUICE_CTRL_JOBPARENT_H

#include "ctrl/config.h"

#include <jansson.h>
#include <stdbool.h>

/*
 * Kueue gives a job no Workload of its own when its controller ownerReference is of a kind it
 * manages (jobframework.IsOwnerManagedByKueue): a kind of an integration that is enabled
 * (integrations.frameworks; here: a kind of lib/jobs' table whose framework is enabled), or one
 * of integrations.externalFrameworks (Kind.version.group). The parent's Workload covers its pods.
 * A CronJob is none of them: the Jobs it creates are ordinary Jobs. A kind whose integration is
 * not enabled is not a parent either: its child Jobs are queued as Jobs, as in Kueue.
 */

/* Is an owner of apiVersion `api_version` and `kind` (either may be NULL: no) such a parent
 * under `cfg`? An enabled kind matches in any version of its group; an external framework
 * matches its exact group/version. */
bool jobparent_kind(const ctrl_config_t *cfg, const char *api_version, const char *kind);

/* Is apiVersion `api_version` and `kind` (either may be NULL: no) one of
 * integrations.externalFrameworks (its exact group/version)? */
bool jobparent_external(const ctrl_config_t *cfg, const char *api_version, const char *kind);

/* Does the object `obj` have a controller ownerReference of such a kind? On true, *kind and
 * *name (may be NULL) point into `obj` (borrowed). */
bool jobparent_managed(const ctrl_config_t *cfg, const json_t *obj, const char **kind,
                       const char **name);

#endif
