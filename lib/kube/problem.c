/* problem -- what a failed API request means for the person running sluice, in one line. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/problem.h"

#include <stdio.h>
#include <string.h>

void kube_problem_resource_name(const kube_resource_t *r, const char *sub, char *buf, size_t n)
{
    const char *res = r && r->resource ? r->resource : "?";
    const char *group = r && r->group ? r->group : "";

    snprintf(buf, n, "%s%s%s%s%s", res, group[0] ? "." : "", group, sub ? "/" : "", sub ? sub : "");
}

/* The API server's own words: the Status message when the answer had one, else the client's
 * text (which already names the method and path). */
static const char *server_words(const kube_result_t *res)
{
    const char *m = json_string_value(json_object_get(res->body, "message"));

    return m != NULL && m[0] != '\0' ? m : res->msg.text;
}

/* The transport's reason without the request ("GET /api/v1/...: Couldn't connect" -> "Couldn't
 * connect"): a problem of the whole server reads the same whichever request met it. */
static const char *transport_reason(const kube_result_t *res)
{
    const char *t = res->msg.text, *sp = strchr(t, ' '), *sep = strstr(t, ": ");

    if (sp != NULL && sp[1] == '/' && sep != NULL && sep > sp)
        return sep + 2;
    return t;
}

kube_problem_t kube_problem_explain(const kube_result_t *res, const char *verb,
                                    const kube_resource_t *r, const char *sub, const char *server,
                                    char *key, size_t key_len, err_msg_t *text)
{
    char name[160], k[200], srv[300];
    const char *group = r && r->group ? r->group : "";
    const char *version = r && r->version ? r->version : "?";
    kube_problem_t p;

    kube_problem_resource_name(r, sub, name, sizeof(name));
    if (server != NULL && server[0] != '\0')
        snprintf(srv, sizeof(srv), "API server %s", server);
    else
        snprintf(srv, sizeof(srv), "the API server");
    if (res->err == ERR_OK || res->canceled) {
        p = KUBE_PROBLEM_NONE;
        k[0] = '\0';
        err_set(text, ERR_OK, "ok");
    } else if (res->status == 0 && res->err == ERR_TLS) {
        p = KUBE_PROBLEM_TLS;
        snprintf(k, sizeof(k), "api");
        err_set(text, res->err,
                "TLS with %s failed: %s; check the certificate authority sluice "
                "trusts (kubeconfig certificate-authority, or the ServiceAccount's ca.crt in a "
                "pod) and that the server name matches its certificate",
                srv, transport_reason(res));
    } else if (res->status == 0) {
        p = KUBE_PROBLEM_UNREACHABLE;
        snprintf(k, sizeof(k), "api");
        err_set(text, res->err,
                "%s unreachable: %s; sluice keeps retrying with backoff (check the "
                "server address, network policies and that the API server is up)",
                srv, transport_reason(res));
    } else if (res->status == 401) {
        p = KUBE_PROBLEM_UNAUTHORIZED;
        snprintf(k, sizeof(k), "api");
        err_set(text, res->err,
                "%s refused sluice's credentials (401 Unauthorized): the token is missing, "
                "expired or not trusted; check the kubeconfig user or the pod's ServiceAccount "
                "token",
                srv);
    } else if (res->status == 403 && strstr(server_words(res), " cannot ") != NULL) {
        /* RBAC's denials read `... is forbidden: User "u" cannot list resource ...`; other
         * 403s (a namespace being deleted, an admission plugin) are the request's business. */
        p = KUBE_PROBLEM_FORBIDDEN;
        snprintf(k, sizeof(k), "rbac:%s:%s", verb, name);
        err_set(text, res->err, "RBAC forbids %s %s: %s", verb, name, server_words(res));
    } else if (res->status == 404 && (strcmp(verb, "list") == 0 || strcmp(verb, "watch") == 0)) {
        p = KUBE_PROBLEM_NOT_INSTALLED;
        snprintf(k, sizeof(k), "crd:%s", name);
        if (group[0] != '\0')
            err_set(text, res->err,
                    "the API server does not serve %s/%s %s: the CustomResourceDefinition %s is "
                    "not installed or does not serve version %s",
                    group, version, r ? r->resource : "?", name, version);
        else
            err_set(text, res->err, "the API server does not serve %s %s (404 on %s)", version,
                    name, verb);
    } else if (res->status >= 500 || res->status == 429) {
        p = KUBE_PROBLEM_SERVER;
        snprintf(k, sizeof(k), "server:%s", name);
        err_set(text, res->err, "API server error on %s %s (HTTP %ld): %s", verb, name, res->status,
                server_words(res));
    } else {
        p = KUBE_PROBLEM_OTHER;
        snprintf(k, sizeof(k), "request:%s:%s", verb, name);
        err_set(text, res->err, "%s %s failed (HTTP %ld): %s", verb, name, res->status,
                server_words(res));
    }
    if (key != NULL && key_len > 0)
        snprintf(key, key_len, "%s", k);
    return p;
}
