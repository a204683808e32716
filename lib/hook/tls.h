/* tls -- server-side TLS contexts (TLS 1.2/1.3 only) with hot certificate replacement. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_TLS_H
#define SLUICE_HOOK_TLS_H

#include "util/err.h"

#include <openssl/ssl.h>
#include <stddef.h>

/*
 * A hook_tls_t holds the current SSL_CTX. Replacing the certificate (rotation, or files changed
 * on disk for cert-manager) builds a new context; connections already open keep the one they
 * started with (SSL_CTX is reference counted), new connections get the new one.
 * Protocols: TLS 1.2 and 1.3 only. TLS 1.2 ciphers: ECDHE with AES-GCM or ChaCha20-Poly1305.
 */
typedef struct hook_tls_s hook_tls_t;

/* A context from PEM text (certificate chain, private key). */
err_t hook_tls_new_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       hook_tls_t **out, err_msg_t *msg);

/* A context from PEM files (e.g. tls.crt / tls.key of a mounted Secret). */
err_t hook_tls_new_files(const char *cert_path, const char *key_path, hook_tls_t **out,
                         err_msg_t *msg);

/* Replace the certificate from PEM text; on error the old one stays in use. */
err_t hook_tls_replace_pem(hook_tls_t *tls, const char *cert_pem, size_t cert_len,
                           const char *key_pem, size_t key_len, err_msg_t *msg);

/* Reload from the files given at creation when their contents changed; *changed tells. */
err_t hook_tls_reload_files(hook_tls_t *tls, int *changed, err_msg_t *msg);

/* The current context with one more reference (SSL_CTX_free it when done). */
SSL_CTX *hook_tls_ctx(hook_tls_t *tls);

/* Release; connections holding the context keep it alive. NULL-safe. */
void hook_tls_free(hook_tls_t *tls);

#endif
