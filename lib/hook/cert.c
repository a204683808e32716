/* cert -- generate the webhook's CA and serving certificates (ECDSA P-256), read expiry. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/cert.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static err_t ossl_fail(err_msg_t *msg, const char *what)
{
    char buf[256];
    unsigned long e = ERR_get_error();

    ERR_error_string_n(e, buf, sizeof(buf));
    ERR_clear_error();
    return err_set(msg, ERR_TLS, "%s: %s", what, e ? buf : "failed");
}

/* PEM text of `cert` and `key` into `out`. */
static err_t to_pem(X509 *cert, EVP_PKEY *key, hook_pem_t *out, err_msg_t *msg)
{
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    char *p;
    long n;
    err_t rc = ERR_OK;

    memset(out, 0, sizeof(*out));
    if (cb == NULL || kb == NULL || !PEM_write_bio_X509(cb, cert) ||
        !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL)) {
        rc = ossl_fail(msg, "encoding PEM");
        goto out;
    }
    n = BIO_get_mem_data(cb, &p);
    out->cert = strndup(p, (size_t)n);
    out->cert_len = (size_t)n;
    n = BIO_get_mem_data(kb, &p);
    out->key = strndup(p, (size_t)n);
    out->key_len = (size_t)n;
    if (out->cert == NULL || out->key == NULL) {
        hook_pem_fini(out);
        rc = err_set(msg, ERR_NOMEM, "out of memory");
    }
out:
    BIO_free(cb);
    BIO_free(kb);
    return rc;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL)
        return 0;
    ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/* A new certificate for `key` with subject CN `cn`, a random serial and the validity window. */
static X509 *cert_new(EVP_PKEY *key, const char *cn, int days)
{
    X509 *cert = X509_new();
    ASN1_INTEGER *serial = NULL;
    BIGNUM *bn = BN_new();
    X509_NAME *name;

    if (cert == NULL || bn == NULL || !BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY))
        goto fail;
    serial = BN_to_ASN1_INTEGER(bn, NULL);
    if (serial == NULL || !X509_set_serialNumber(cert, serial) || !X509_set_version(cert, 2) ||
        !X509_gmtime_adj(X509_getm_notBefore(cert), -3600) ||
        !X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 86400L) ||
        !X509_set_pubkey(cert, key))
        goto fail;
    name = X509_get_subject_name(cert);
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"sluice", -1,
                                    -1, 0) ||
        !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0))
        goto fail;
    ASN1_INTEGER_free(serial);
    BN_free(bn);
    return cert;
fail:
    ASN1_INTEGER_free(serial);
    BN_free(bn);
    X509_free(cert);
    return NULL;
}

err_t hook_cert_ca(const char *cn, int days, hook_pem_t *out, err_msg_t *msg)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = NULL;
    err_t rc;

    if (key == NULL)
        return ossl_fail(msg, "generating CA key");
    cert = cert_new(key, cn, days);
    if (cert == NULL || !X509_set_issuer_name(cert, X509_get_subject_name(cert)) ||
        !add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE") ||
        !add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature") ||
        !add_ext(cert, cert, NID_subject_key_identifier, "hash") ||
        !X509_sign(cert, key, EVP_sha256())) {
        rc = ossl_fail(msg, "building CA certificate");
        goto out;
    }
    rc = to_pem(cert, key, out, msg);
out:
    X509_free(cert);
    EVP_PKEY_free(key);
    return rc;
}

/* A certificate for a new key, subject CN `cn`, signed by `ca`, with extendedKeyUsage `eku` and
 * subjectAltName `san` (NULL: none). */
static err_t issue(const hook_pem_t *ca, const char *cn, const char *eku, const char *san, int days,
                   hook_pem_t *out, err_msg_t *msg)
{
    BIO *bio = NULL;
    X509 *ca_cert = NULL, *cert = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    err_t rc;

    bio = BIO_new_mem_buf(ca->cert, (int)ca->cert_len);
    ca_cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    bio = BIO_new_mem_buf(ca->key, (int)ca->key_len);
    ca_key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (ca_cert == NULL || ca_key == NULL) {
        rc = ossl_fail(msg, "reading CA certificate and key");
        goto out;
    }
    key = EVP_EC_gen("P-256");
    if (key == NULL) {
        rc = ossl_fail(msg, "generating key");
        goto out;
    }
    cert = cert_new(key, cn, days);
    if (cert == NULL || !X509_set_issuer_name(cert, X509_get_subject_name(ca_cert)) ||
        !add_ext(cert, ca_cert, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(cert, ca_cert, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        !add_ext(cert, ca_cert, NID_ext_key_usage, eku) ||
        (san != NULL && !add_ext(cert, ca_cert, NID_subject_alt_name, san)) ||
        !X509_sign(cert, ca_key, EVP_sha256())) {
        rc = ossl_fail(msg, "building certificate");
        goto out;
    }
    rc = to_pem(cert, key, out, msg);
out:
    X509_free(ca_cert);
    X509_free(cert);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    return rc;
}

err_t hook_cert_serving(const hook_pem_t *ca, const char *const *dns, size_t ndns,
                        const char *const *ips, size_t nips, int days, hook_pem_t *out,
                        err_msg_t *msg)
{
    char san[4096];
    size_t used = 0;
    const char *cn = ndns ? dns[0] : nips ? ips[0] : NULL;

    if (cn == NULL)
        return err_set(msg, ERR_INVALID, "a serving certificate needs a DNS name or an IP");
    for (size_t i = 0; i < ndns + nips; i++) {
        int n = snprintf(san + used, sizeof(san) - used, "%s%s:%s", used ? "," : "",
                         i < ndns ? "DNS" : "IP", i < ndns ? dns[i] : ips[i - ndns]);
        if (n < 0 || (size_t)n >= sizeof(san) - used)
            return err_set(msg, ERR_INVALID, "too many subject alternative names");
        used += (size_t)n;
    }
    return issue(ca, cn, "serverAuth", san, days, out, msg);
}

err_t hook_cert_client(const hook_pem_t *ca, const char *cn, int days, hook_pem_t *out,
                       err_msg_t *msg)
{
    return issue(ca, cn, "clientAuth", NULL, days, out, msg);
}

err_t hook_cert_bundle(const char *ca, const char *old, int64_t now, char **out, err_msg_t *msg)
{
    BIO *in = old ? BIO_new_mem_buf(old, -1) : NULL, *acc = BIO_new(BIO_s_mem());
    BIO *first = BIO_new_mem_buf(ca, -1);
    X509 *newest = first ? PEM_read_bio_X509(first, NULL, NULL, NULL) : NULL, *x;
    char *p;
    long n;
    err_t rc = ERR_OK;

    BIO_free(first);
    if (acc == NULL || (old != NULL && in == NULL)) {
        rc = err_set(msg, ERR_NOMEM, "out of memory");
        goto out;
    }
    if (newest == NULL) {
        rc = ossl_fail(msg, "reading the new CA certificate");
        goto out;
    }
    if (!PEM_write_bio_X509(acc, newest)) {
        rc = ossl_fail(msg, "encoding PEM");
        goto out;
    }
    while (in != NULL && (x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL) {
        time_t t = (time_t)now;
        /* Still valid and not the new CA itself: kept, so certificates it signed (served by a
         * replica that has not re-read the Secret yet) still verify. */
        int keep = X509_cmp(x, newest) != 0 && X509_cmp_time(X509_get0_notAfter(x), &t) > 0;
        if (keep && !PEM_write_bio_X509(acc, x)) {
            X509_free(x);
            rc = ossl_fail(msg, "encoding PEM");
            goto out;
        }
        X509_free(x);
    }
    ERR_clear_error(); /* the loop ends on a "no start line" error */
    n = BIO_get_mem_data(acc, &p);
    *out = strndup(p, (size_t)n);
    if (*out == NULL)
        rc = err_set(msg, ERR_NOMEM, "out of memory");
out:
    X509_free(newest);
    BIO_free(in);
    BIO_free(acc);
    return rc;
}

err_t hook_cert_not_after(const char *pem, size_t len, int64_t *out, err_msg_t *msg)
{
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    X509 *cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    struct tm tm;
    err_t rc = ERR_OK;

    BIO_free(bio);
    if (cert == NULL)
        return ossl_fail(msg, "reading certificate");
    if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) {
        rc = ossl_fail(msg, "reading notAfter");
        goto out;
    }
    *out = (int64_t)timegm(&tm);
out:
    X509_free(cert);
    return rc;
}

void hook_pem_fini(hook_pem_t *pem)
{
    if (pem == NULL)
        return;
    free(pem->cert);
    free(pem->key);
    memset(pem, 0, sizeof(*pem));
}
