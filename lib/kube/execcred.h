/* execcred -- kubeconfig `exec` users: run the ExecCredential plugin for a bearer token. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_KUBE_EXECCRED_H
#define SLUICE_KUBE_EXECCRED_H

#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

/*
 * client-go's credential plugins (client.authentication.k8s.io/v1 and v1beta1), as EKS (`aws
 * eks get-token`), GKE (`gke-gcloud-auth-plugin`) and AKS (`kubelogin`) kubeconfigs use them:
 * the command runs with the user's args and env plus KUBERNETES_EXEC_INFO (an ExecCredential
 * with spec.interactive false; stdin is /dev/null, stderr is sluice's), and prints an
 * ExecCredential whose status.token is the bearer token. The token is kept until 60 s before
 * status.expirationTimestamp (without one: for the life of the process, as client-go does) and
 * the plugin runs again after that. A plugin that returns only a client certificate is refused
 * (sluice sends bearer tokens only). The run blocks its caller for at most 60 s (then the
 * plugin is killed): a plugin is for `sluice run` on a workstation, in-cluster sluice uses its
 * ServiceAccount.
 */
typedef struct kube_exec_s kube_exec_t;

/* Read users[].user.exec `exec` (path `path` for messages, user name `user`) into a new
 * kube_exec_t. A relative command containing '/' is resolved against `base_dir` (NULL: as
 * written), others are looked up in $PATH. ERR_INVALID/ERR_UNSUPPORTED name the field. */
err_t kube_exec_parse(json_t *exec, const char *path, const char *user, const char *base_dir,
                      kube_exec_t **out, err_msg_t *msg);

/* The token to send at `now` (Unix seconds), running the plugin when none is held or it
 * expires within 60 s. Borrowed, valid until the next call. On failure the previous token (if
 * any) stays in *out and the error names the user, the command and what went wrong. */
err_t kube_exec_token(kube_exec_t *x, int64_t now, const char **out, err_msg_t *msg);

/* How many times the plugin ran (tests). */
unsigned kube_exec_runs(const kube_exec_t *x);

/* Release; NULL-safe. */
void kube_exec_free(kube_exec_t *x);

#endif
