/* conversion -- the CRD conversion webhook: ConversionReview v1 over model/convert, and the CRD
 * caBundle it needs. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "hook/conversion.h"

#include "model/convert.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * All or nothing, like controller-runtime's conversion handler that serves Kueue: if any object
 * of a review cannot be converted, the whole review fails and the API server reports the message
 * to the client ("conversion webhook for kueue.x-k8s.io/v1beta2, Kind=Workload failed: ...").
 * A failed read through v1beta1 is the fail-closed outcome; the object stays readable as
 * v1beta2, which needs no conversion.
 */

/* Replace every byte that does not belong to a well-formed UTF-8 sequence with '?': messages
 * quote object names and values cut at a byte limit, and json_string() refuses broken text. */
static void utf8_clean(char *s)
{
    unsigned char *p = (unsigned char *)s;

    while (*p != '\0') {
        size_t n = *p < 0x80             ? 1
                   : (*p & 0xE0) == 0xC0 ? 2
                   : (*p & 0xF0) == 0xE0 ? 3
                   : (*p & 0xF8) == 0xF0 ? 4
                                         : 0;
        size_t i;
        for (i = 1; n > 1 && i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                break;
        if (n == 0 || i < n || (n == 2 && *p < 0xC2)) {
            *p++ = '?';
            continue;
        }
        p += n;
    }
}

/* The ConversionReview answer: `converted` (stolen; NULL for a failure with `failure`). */
static err_t answer(const char *api, const json_t *uid, json_t *converted, char *failure,
                    char **out, err_msg_t *msg)
{
    json_t *root = json_object(), *resp = json_object(), *result, *uidv;
    char *text = NULL;

    if (failure != NULL)
        utf8_clean(failure);
    result = failure != NULL ? json_pack("{s:s,s:s}", "status", "Failure", "message", failure)
                             : json_pack("{s:s}", "status", "Success");
    uidv = json_is_string(uid) ? json_incref((json_t *)uid) : json_string("");
    if (resp == NULL || root == NULL) {
        json_decref(uidv);
        goto out;
    }
    if (json_object_set_new(resp, "uid", uidv) != 0)
        goto out;
    if (converted != NULL) {
        if (json_object_set_new(resp, "convertedObjects", converted) != 0) {
            converted = NULL;
            goto out;
        }
        converted = NULL;
    }
    if (json_object_set_new(resp, "result", result) != 0) {
        result = NULL;
        goto out;
    }
    result = NULL;
    if (json_object_set_new(root, "apiVersion", json_string(api)) != 0 ||
        json_object_set_new(root, "kind", json_string("ConversionReview")) != 0)
        goto out;
    if (json_object_set_new(root, "response", resp) != 0) {
        resp = NULL;
        goto out;
    }
    resp = NULL;
    text = util_json_dumps(root, JSON_COMPACT);
out:
    json_decref(converted);
    json_decref(result);
    json_decref(resp);
    json_decref(root);
    if (text == NULL)
        return err_set(msg, ERR_NOMEM, "conversion: out of memory");
    *out = text;
    return ERR_OK;
}

/* Answer `root`; `parse_error` (when root is NULL) says why the body did not parse. */
static err_t review_answer(const json_t *root, const char *parse_error, char **response,
                           err_msg_t *msg)
{
    json_t *req = json_object_get(root, "request"), *objects = json_object_get(req, "objects");
    json_t *uid = json_object_get(req, "uid"), *converted = NULL, *obj;
    const char *api = json_string_value(json_object_get(root, "apiVersion"));
    const char *kind = json_string_value(json_object_get(root, "kind"));
    const char *desired = json_string_value(json_object_get(req, "desiredAPIVersion"));
    size_t budget = CONVERT_MAX_DOMAINS, i;
    convert_opts_t opts = {.budget = &budget};
    char failure[ERR_MSG_LEN + 64];
    err_msg_t cmsg;
    err_t rc = ERR_OK;

    failure[0] = '\0';
    /* Answer in the version asked (the v1beta1 review has the same shape). */
    if (api == NULL || strcmp(api, "apiextensions.k8s.io/v1beta1") != 0)
        api = "apiextensions.k8s.io/v1";
    if (root == NULL)
        snprintf(failure, sizeof(failure), "malformed ConversionReview: %s",
                 parse_error != NULL ? parse_error : "no document");
    else if (!json_is_object(root) || kind == NULL || strcmp(kind, "ConversionReview") != 0)
        snprintf(failure, sizeof(failure),
                 "not a ConversionReview (kind must be ConversionReview)");
    else if (!json_is_object(req))
        snprintf(failure, sizeof(failure), "ConversionReview without a request");
    else if (!json_is_string(uid) || json_string_length(uid) == 0)
        snprintf(failure, sizeof(failure), "request.uid: must be a non-empty string");
    else if (desired == NULL ||
             (strcmp(desired, CONVERT_V1BETA1) != 0 && strcmp(desired, CONVERT_V1BETA2) != 0))
        snprintf(failure, sizeof(failure),
                 "request.desiredAPIVersion: must be " CONVERT_V1BETA1 " or " CONVERT_V1BETA2
                 ", got %.100s",
                 desired != NULL ? desired : "none");
    else if (!json_is_array(objects))
        snprintf(failure, sizeof(failure), "request.objects: must be an array");
    if (failure[0] != '\0')
        goto reply;
    converted = json_array();
    if (converted == NULL) {
        rc = ERR_NOMEM;
        goto reply;
    }
    json_array_foreach(objects, i, obj)
    {
        json_t *out = NULL;
        cmsg.text[0] = '\0';
        rc = convert_object(obj, desired, &opts, &out, &cmsg);
        if (rc == ERR_NOMEM)
            goto reply;
        if (rc != ERR_OK) {
            snprintf(failure, sizeof(failure), "request.objects[%zu]: %s", i, cmsg.text);
            rc = ERR_OK;
            goto reply;
        }
        if (json_array_append_new(converted, out) != 0) {
            rc = ERR_NOMEM;
            goto reply;
        }
    }
reply:
    if (rc != ERR_OK) {
        json_decref(converted);
        return err_set(msg, rc, "conversion: out of memory");
    }
    if (failure[0] != '\0') {
        json_decref(converted);
        converted = NULL;
    }
    return answer(api, json_is_string(uid) ? uid : NULL, converted, failure[0] ? failure : NULL,
                  response, msg);
}

err_t hook_conversion_answer(const json_t *review, char **response, err_msg_t *msg)
{
    return review_answer(review, "not a JSON document", response, msg);
}

err_t hook_conversion_review(const char *body, size_t len, char **response, err_msg_t *msg)
{
    json_error_t jerr;
    json_t *root = util_json_loadb(body, len, JSON_ALLOW_NUL, &jerr);
    char why[JSON_ERROR_TEXT_LENGTH + 64];
    err_t rc;

    /* jansson reports some allocation failures (its lexer's buffer) with an empty text. */
    if (root == NULL && (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == 0))
        return err_set(msg, ERR_NOMEM, "conversion: out of memory");
    if (root == NULL)
        snprintf(why, sizeof(why), "%s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
    rc = review_answer(root, why, response, msg);
    json_decref(root);
    return rc;
}

static void plain(hook_response_t *resp, int status, const char *text)
{
    resp->status = status;
    resp->content_type = "text/plain; charset=utf-8";
    resp->body = text;
    resp->body_len = strlen(text);
}

void hook_conversion_handler(void *ud, const hook_request_t *req, hook_response_t *resp)
{
    const char *ct = NULL;
    char *body = NULL;
    err_msg_t msg;

    (void)ud;
    if (strcmp(req->method, "POST") != 0) {
        plain(resp, 405, "the conversion webhook accepts POST only\n");
        return;
    }
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcmp(req->headers[i].name, "content-type") == 0)
            ct = req->headers[i].value;
    if (ct == NULL || strncmp(ct, "application/json", 16) != 0) {
        plain(resp, 415, "the conversion webhook accepts Content-Type: application/json only\n");
        return;
    }
    if (hook_conversion_review(req->body, req->body_len, &body, &msg) != ERR_OK) {
        plain(resp, 500, "conversion: out of memory\n");
        return;
    }
    resp->status = 200;
    resp->content_type = "application/json";
    resp->owned_body = body;
    resp->body_len = strlen(body);
}

/* ---- caBundle ----------------------------------------------------------------------------- */

/* Does `url` (https://HOST[:PORT][/path]) call one of t->hosts on t->port? */
static bool url_is_ours(const char *url, const hook_conversion_target_t *t)
{
    const char *h, *end, *p;
    size_t hlen;
    long port = 443;

    if (strncmp(url, "https://", 8) != 0)
        return false;
    h = url + 8;
    if (*h == '[') { /* [IPv6] */
        end = strchr(h, ']');
        if (end == NULL)
            return false;
        h++;
        hlen = (size_t)(end - h);
        p = end + 1;
    } else {
        hlen = strcspn(h, ":/?#");
        p = h + hlen;
    }
    if (*p == ':') {
        char *stop;
        port = strtol(p + 1, &stop, 10);
        if (stop == p + 1 || (*stop != '\0' && *stop != '/' && *stop != '?' && *stop != '#'))
            return false;
    } else if (*p != '\0' && *p != '/' && *p != '?' && *p != '#') {
        return false;
    }
    if (port != t->port || hlen == 0)
        return false;
    for (size_t i = 0; i < t->nhosts; i++)
        if (strlen(t->hosts[i]) == hlen && strncasecmp(t->hosts[i], h, hlen) == 0)
            return true;
    return false;
}

err_t hook_conversion_inject_ca(json_t *crd, const hook_conversion_target_t *t, bool *changed,
                                err_msg_t *msg)
{
    json_t *conv = json_object_get(json_object_get(crd, "spec"), "conversion");
    json_t *cc = json_object_get(json_object_get(conv, "webhook"), "clientConfig");
    json_t *svc = json_object_get(cc, "service");
    const char *strategy = json_string_value(json_object_get(conv, "strategy"));
    const char *url = json_string_value(json_object_get(cc, "url"));
    const char *have = json_string_value(json_object_get(cc, "caBundle"));
    const char *name = json_string_value(json_object_get(svc, "name"));
    const char *ns = json_string_value(json_object_get(svc, "namespace"));
    bool ours;

    *changed = false;
    if (strategy == NULL || strcmp(strategy, "Webhook") != 0 || !json_is_object(cc))
        return ERR_OK;
    ours = (svc != NULL && name != NULL && ns != NULL && strcmp(name, t->service) == 0 &&
            strcmp(ns, t->namespace) == 0) ||
           (svc == NULL && url != NULL && url_is_ours(url, t));
    if (!ours || (have != NULL && strcmp(have, t->ca_bundle) == 0))
        return ERR_OK;
    if (json_object_set_new(cc, "caBundle", json_string(t->ca_bundle)) != 0)
        return err_set(msg, ERR_NOMEM, "caBundle: out of memory");
    *changed = true;
    return ERR_OK;
}
