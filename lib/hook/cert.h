/* cert -- generate the webhook's CA and serving certificates (ECDSA P-256), read expiry. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_CERT_H
#define SLUICE_HOOK_CERT_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* A certificate and its private key, PEM-encoded and NUL-terminated. */
typedef struct hook_pem_s {
    char *cert; /* owned */
    size_t cert_len;
    char *key; /* owned */
    size_t key_len;
} hook_pem_t;

/* A self-signed CA certificate named `cn`, valid from now-1h for `days` days. */
err_t hook_cert_ca(const char *cn, int days, hook_pem_t *out, err_msg_t *msg);

/* A serving certificate signed by `ca` for the DNS names and IP addresses given (the first DNS
 * name, or first IP, is also the subject CN), valid from now-1h for `days` days. */
err_t hook_cert_serving(const hook_pem_t *ca, const char *const *dns, size_t ndns,
                        const char *const *ips, size_t nips, int days, hook_pem_t *out,
                        err_msg_t *msg);

/* A client certificate (extendedKeyUsage clientAuth, subject CN `cn`) signed by `ca`, valid from
 * now-1h for `days` days: what a webhook caller presents under mutual TLS. */
err_t hook_cert_client(const hook_pem_t *ca, const char *cn, int days, hook_pem_t *out,
                       err_msg_t *msg);

/* The caBundle after a CA rotation: `ca`'s first certificate (the new CA), then every
 * certificate of `old` (the previous bundle, may be NULL) that is still valid at `now` (Unix
 * seconds) and is not the new CA. Malloc'ed PEM into *out. The API server then trusts the
 * serving certificates of both CAs while the other replica still serves its old one. */
err_t hook_cert_bundle(const char *ca, const char *old, int64_t now, char **out, err_msg_t *msg);

/* The notAfter time of the first certificate in `pem`, in seconds since the epoch. */
err_t hook_cert_not_after(const char *pem, size_t len, int64_t *out, err_msg_t *msg);

/* Release both PEM buffers; NULL-safe. */
void hook_pem_fini(hook_pem_t *pem);

#endif
