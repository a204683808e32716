/* kube_itenv -- connection settings of the integration test cluster (test/kube-env). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_ITENV_H
#define SLUICE_KUBE_ITENV_H

#include "kube/kubeconfig.h"

#include <stdbool.h>
#include <stddef.h>

/* Fill `cfg` for the cluster described by the env file $SLUICE_KUBE_ENV (written by
 * test/kube-env/up): its kubeconfig for the local server, else server/CA/token. Exits 77 with a
 * loud message when the environment could not be built on this machine, 1 on other problems. */
void itenv_load(kube_config_t *cfg);

/* The etcd client URL of the local environment's API server ("http://127.0.0.1:port", from its
 * command line) into buf; false for an external cluster or when it cannot be found. */
bool itenv_etcd_url(char *buf, size_t n);

#endif
