/* tls -- server-side TLS contexts (TLS 1.2/1.3 only) with hot certificate replacement. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/tls.h"

#include "util/grow.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hook_tls_s {
    SSL_CTX *ctx;      /* owned reference */
    char *cert_path;   /* owned, NULL when built from PEM text */
    char *key_path;    /* owned */
    char *loaded_cert; /* owned: file contents last loaded, to detect changes */
    char *loaded_key;  /* owned */
};

/* ECDHE key exchange with AEAD ciphers only (TLS 1.2); TLS 1.3 suites are all AEAD. */
static const char tls12_ciphers[] = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                                    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                                    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

static err_t ssl_error(err_msg_t *msg, const char *what)
{
    char buf[256];
    unsigned long e = ERR_get_error();

    ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return err_set(msg, ERR_TLS, "%s: %s", what, e ? buf : "unknown OpenSSL error");
}

/* A new SSL_CTX holding the given certificate chain and key. */
static err_t ctx_build(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       SSL_CTX **out, err_msg_t *msg)
{
    SSL_CTX *ctx = NULL;
    BIO *bio = NULL;
    X509 *cert = NULL, *extra = NULL;
    EVP_PKEY *key = NULL;
    err_t rc = ERR_OK;

    if (cert_len > (size_t)INT32_MAX || key_len > (size_t)INT32_MAX)
        return err_set(msg, ERR_INVALID, "certificate or key too large");
    ctx = SSL_CTX_new(TLS_server_method());
    if (ctx == NULL)
        return ssl_error(msg, "creating TLS context");
    if (!SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) ||
        !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) ||
        !SSL_CTX_set_cipher_list(ctx, tls12_ciphers)) {
        rc = ssl_error(msg, "configuring TLS context");
        goto out;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);

    bio = BIO_new_mem_buf(cert_pem, (int)cert_len);
    if (bio == NULL || (cert = PEM_read_bio_X509(bio, NULL, NULL, NULL)) == NULL) {
        rc = ssl_error(msg, "reading certificate PEM");
        goto out;
    }
    if (SSL_CTX_use_certificate(ctx, cert) != 1) {
        rc = ssl_error(msg, "using certificate");
        goto out;
    }
    /* The rest of the file is the chain. */
    while ((extra = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            rc = ssl_error(msg, "adding chain certificate");
            goto out;
        }
    }
    ERR_clear_error(); /* the loop ends on a "no start line" error */
    BIO_free(bio);
    bio = BIO_new_mem_buf(key_pem, (int)key_len);
    if (bio == NULL || (key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)) == NULL) {
        rc = ssl_error(msg, "reading private key PEM");
        goto out;
    }
    if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
        rc = ssl_error(msg, "private key does not match the certificate");
        goto out;
    }
    *out = ctx;
    ctx = NULL;
out:
    BIO_free(bio);
    X509_free(cert);
    EVP_PKEY_free(key);
    SSL_CTX_free(ctx);
    return rc;
}

err_t hook_tls_new_pem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                       hook_tls_t **out, err_msg_t *msg)
{
    hook_tls_t *tls = calloc(1, sizeof(*tls));
    err_t rc;

    if (tls == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = ctx_build(cert_pem, cert_len, key_pem, key_len, &tls->ctx, msg);
    if (rc != ERR_OK) {
        free(tls);
        return rc;
    }
    *out = tls;
    return ERR_OK;
}

/* Whole file contents, NUL-terminated, in a malloc'ed buffer. */
static err_t read_file(const char *path, char **out, size_t *len, err_msg_t *msg)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    if (f == NULL)
        return err_set(msg, ERR_IO, "%s: cannot open", path);
    for (;;) {
        if (n + 4096 + 1 > cap && cap > (1u << 20)) {
            free(buf);
            fclose(f);
            return err_set(msg, ERR_INVALID, "%s: larger than 1 MiB", path);
        }
        if (util_grow((void **)&buf, &cap, n + 4096 + 1, 1) != ERR_OK) {
            free(buf);
            fclose(f);
            return err_set(msg, ERR_NOMEM, "out of memory");
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fclose(f);
        return err_set(msg, ERR_IO, "%s: read error", path);
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return ERR_OK;
}

/* Load both files; when they equal what is loaded already, *changed = 0 and nothing happens. */
static err_t load_files(hook_tls_t *tls, int *changed, err_msg_t *msg)
{
    char *cert = NULL, *key = NULL;
    size_t cert_len, key_len;
    SSL_CTX *ctx = NULL;
    err_t rc;

    *changed = 0;
    rc = read_file(tls->cert_path, &cert, &cert_len, msg);
    if (rc == ERR_OK)
        rc = read_file(tls->key_path, &key, &key_len, msg);
    if (rc != ERR_OK)
        goto out;
    if (tls->loaded_cert && tls->loaded_key && strcmp(cert, tls->loaded_cert) == 0 &&
        strcmp(key, tls->loaded_key) == 0)
        goto out;
    rc = ctx_build(cert, cert_len, key, key_len, &ctx, msg);
    if (rc != ERR_OK)
        goto out;
    SSL_CTX_free(tls->ctx);
    tls->ctx = ctx;
    free(tls->loaded_cert);
    free(tls->loaded_key);
    tls->loaded_cert = cert;
    tls->loaded_key = key;
    cert = key = NULL;
    *changed = 1;
out:
    free(cert);
    free(key);
    return rc;
}

err_t hook_tls_new_files(const char *cert_path, const char *key_path, hook_tls_t **out,
                         err_msg_t *msg)
{
    hook_tls_t *tls = calloc(1, sizeof(*tls));
    int changed;
    err_t rc;

    if (tls == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    tls->cert_path = strdup(cert_path);
    tls->key_path = strdup(key_path);
    if (tls->cert_path == NULL || tls->key_path == NULL) {
        hook_tls_free(tls);
        return err_set(msg, ERR_NOMEM, "out of memory");
    }
    rc = load_files(tls, &changed, msg);
    if (rc != ERR_OK) {
        hook_tls_free(tls);
        return rc;
    }
    *out = tls;
    return ERR_OK;
}

err_t hook_tls_replace_pem(hook_tls_t *tls, const char *cert_pem, size_t cert_len,
                           const char *key_pem, size_t key_len, err_msg_t *msg)
{
    SSL_CTX *ctx = NULL;
    err_t rc = ctx_build(cert_pem, cert_len, key_pem, key_len, &ctx, msg);

    if (rc != ERR_OK)
        return rc;
    SSL_CTX_free(tls->ctx);
    tls->ctx = ctx;
    return ERR_OK;
}

err_t hook_tls_reload_files(hook_tls_t *tls, int *changed, err_msg_t *msg)
{
    *changed = 0;
    if (tls->cert_path == NULL)
        return err_set(msg, ERR_INVALID, "TLS context was not loaded from files");
    return load_files(tls, changed, msg);
}

SSL_CTX *hook_tls_ctx(hook_tls_t *tls)
{
    SSL_CTX_up_ref(tls->ctx);
    return tls->ctx;
}

void hook_tls_free(hook_tls_t *tls)
{
    if (tls == NULL)
        return;
    SSL_CTX_free(tls->ctx);
    free(tls->cert_path);
    free(tls->key_path);
    free(tls->loaded_cert);
    free(tls->loaded_key);
    free(tls);
}
