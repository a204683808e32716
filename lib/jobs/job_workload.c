/* job_workload -- the Workload Kueue builds for a batch/v1 Job, and its priority. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "jobs/job_workload.h"

#include "model/names.h"
#include "model/object.h"
#include "model/requests.h"
#include "util/str.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name -------------------------------------------------------------------------------------
 */

/*
 * Kueue (pkg/controller/jobframework/workload_names.go) hashes kind, group, owner name and uid
 * joined by newlines, keeps 5 hex digits, and cuts "job-<name>" so the whole name fits the
 * limit: 253 - 1 ("-") - 5 = 247 bytes of prefix. The cut is by bytes and nothing is trimmed
 * after it, so a name may end up with "--" or ".-" in the middle; Kueue does the same.
 */
err_t job_workload_name(const char *job_name, const char *uid, size_t max, char *buf, size_t size,
                        err_msg_t *msg)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_MD_CTX *ctx;
    size_t prefix_max, plen;
    int ok;

    if (max < 7 || size < max + 1)
        return err_set(msg, ERR_INVALID, "workload name: buffer of %zu bytes for %zu", size, max);
    if (uid == NULL)
        uid = "";
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL)
        return err_set(msg, ERR_NOMEM, "workload name: out of memory");
    ok = EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) && EVP_DigestUpdate(ctx, "Job\nbatch\n", 10) &&
         EVP_DigestUpdate(ctx, job_name, strlen(job_name)) && EVP_DigestUpdate(ctx, "\n", 1) &&
         EVP_DigestUpdate(ctx, uid, strlen(uid)) && EVP_DigestFinal_ex(ctx, md, &mdlen);
    EVP_MD_CTX_free(ctx);
    if (!ok || mdlen < 3)
        return err_set(msg, ERR_UNSUPPORTED, "workload name: SHA-1 unavailable in OpenSSL");

    prefix_max = max - 6;
    plen = (size_t)snprintf(buf, size, "job-%s", job_name);
    if (plen > prefix_max)
        plen = prefix_max;
    buf[plen++] = '-';
    for (int i = 0; i < 5; i++)
        buf[plen++] = hex[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
    buf[plen] = '\0';
    return ERR_OK;
}

/* ---- build ------------------------------------------------------------------------------------
 */

/* strconv.ParseInt(s, 10, 32) with Kueue's "> 0" rule; false when unusable. */
static bool positive_int32(const char *s, int32_t *out)
{
    char *end;
    long long v;

    if (s == NULL || *s == '\0' || *s == ' ' || *s == '\t')
        return false;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v <= 0 || v > INT32_MAX)
        return false;
    *out = (int32_t)v;
    return true;
}

/* Labels the Job controller puts on pod templates; Kueue drops them from the podset so the
 * Workload does not change when the Job controller rewrites them. */
static bool job_controller_label(const char *key)
{
    return strcmp(key, "job-name") == 0 || strcmp(key, "controller-uid") == 0 ||
           strcmp(key, "batch.kubernetes.io/controller-uid") == 0;
}

static err_t build_pod_set(const job_t *job, pod_set_t *ps, err_msg_t *msg)
{
    const char *min = kv_list_get(&job->meta.annotations, JOB_ANNOTATION_MIN_PARALLELISM);
    err_t rc;

    ps->name = strdup("main");
    if (ps->name == NULL)
        return err_set(msg, ERR_NOMEM, "out of memory");
    ps->count = requests_job_count(job);
    ps->has_min_count = positive_int32(min, &ps->min_count);
    for (size_t i = 0; i < job->template_labels.len; i++) {
        const kv_t *kv = &job->template_labels.items[i];
        if (job_controller_label(kv->key))
            continue;
        if (kv_list_set(&ps->template_labels, kv->key, kv->value) != ERR_OK)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    if (kv_list_copy(&ps->template_annotations, &job->template_annotations) != ERR_OK ||
        pod_spec_copy(&ps->spec, &job->spec) != ERR_OK)
        return err_set(msg, ERR_NOMEM, "out of memory");
    rc = requests_pod(&ps->spec, &ps->pod_requests, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, "job %s: ", job->meta.name ? job->meta.name : "");
    return ERR_OK;
}

err_t job_workload_build(const job_t *job, workload_t *out, err_msg_t *msg)
{
    char name[JOB_WORKLOAD_NAME_MAX + 1];
    const object_meta_t *jm = &job->meta;
    workload_t wl;
    err_t rc;

    memset(out, 0, sizeof(*out));
    memset(&wl, 0, sizeof(wl));
    if (jm->name == NULL || jm->name[0] == '\0')
        return err_set(msg, ERR_INVALID, "job without metadata.name");
    rc = job_workload_name(jm->name, jm->uid, JOB_WORKLOAD_NAME_MAX, name, sizeof(name), msg);
    if (rc != ERR_OK)
        return rc;

    wl.active = true;
    if (util_strdup(name, &wl.meta.name) != ERR_OK ||
        util_strdup(jm->namespace, &wl.meta.namespace) != ERR_OK)
        goto nomem;
    wl.meta.finalizers = calloc(1, sizeof(char *));
    if (wl.meta.finalizers == NULL)
        goto nomem;
    wl.meta.nfinalizers = 1;
    if (util_strdup(JOB_FINALIZER_RESOURCE_IN_USE, &wl.meta.finalizers[0]) != ERR_OK)
        goto nomem;
    if (jm->uid != NULL && names_is_label_value(jm->uid) &&
        kv_list_set(&wl.meta.labels, JOB_LABEL_JOB_UID, jm->uid) != ERR_OK)
        goto nomem;
    for (size_t i = 0; i < jm->annotations.len; i++)
        if (strncmp(jm->annotations.items[i].key, "provreq.kueue.x-k8s.io/", 23) == 0 &&
            kv_list_set(&wl.meta.annotations, jm->annotations.items[i].key,
                        jm->annotations.items[i].value) != ERR_OK)
            goto nomem;
    if (util_strdup(kv_list_get(&jm->labels, JOB_LABEL_QUEUE_NAME), &wl.queue_name) != ERR_OK)
        goto nomem;
    wl.has_max_exec_seconds =
        positive_int32(kv_list_get(&jm->labels, JOB_LABEL_MAX_EXEC_TIME), &wl.max_exec_seconds);
    {
        const char *pc = kv_list_get(&jm->labels, JOB_LABEL_PRIORITY_CLASS);
        if (pc != NULL && pc[0] != '\0') {
            if (util_strdup(pc, &wl.priority_class) != ERR_OK)
                goto nomem;
            wl.priority_source = PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
            wl.priority_kind = PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS;
        }
    }
    wl.pod_sets = calloc(1, sizeof(*wl.pod_sets));
    if (wl.pod_sets == NULL)
        goto nomem;
    wl.npod_sets = 1;
    rc = build_pod_set(job, &wl.pod_sets[0], msg);
    if (rc != ERR_OK)
        goto fail;
    *out = wl;
    return ERR_OK;
nomem:
    rc = err_set(msg, ERR_NOMEM, "out of memory");
fail:
    workload_fini(&wl);
    return rc;
}

/* ---- priority ----------------------------------------------------------------------------------
 */

static err_t set_priority(workload_t *wl, priority_source_t src, const char *name, int32_t value,
                          err_msg_t *msg)
{
    char *copy = NULL;

    if (name != NULL) {
        copy = strdup(name);
        if (copy == NULL)
            return err_set(msg, ERR_NOMEM, "out of memory");
    }
    free(wl->priority_class);
    wl->priority_class = copy;
    wl->priority_source = src;
    wl->priority_kind = src;
    wl->has_priority = true;
    wl->priority = value;
    return ERR_OK;
}

err_t job_workload_priority(const job_t *job, const job_priority_lookup_t *lookup, workload_t *wl,
                            err_msg_t *msg)
{
    const char *wpc_name = kv_list_get(&job->meta.labels, JOB_LABEL_PRIORITY_CLASS);
    const char *pc_name = job->spec.priority_class_name;
    const priority_class_t *best = NULL;

    if (wpc_name != NULL && wpc_name[0] != '\0') {
        const workload_priority_class_t *w =
            lookup && lookup->wpc ? lookup->wpc(lookup->ctx, wpc_name) : NULL;
        if (w == NULL)
            return err_set(msg, ERR_NOT_FOUND,
                           "WorkloadPriorityClass.kueue.x-k8s.io \"%s\" not found", wpc_name);
        return set_priority(wl, PRIORITY_SOURCE_WORKLOAD_PRIORITY_CLASS, wpc_name, w->value, msg);
    }
    if (pc_name != NULL && pc_name[0] != '\0') {
        const priority_class_t *p = lookup && lookup->pc ? lookup->pc(lookup->ctx, pc_name) : NULL;
        if (p == NULL)
            return err_set(msg, ERR_NOT_FOUND, "priorityclasses.scheduling.k8s.io \"%s\" not found",
                           pc_name);
        return set_priority(wl, PRIORITY_SOURCE_PRIORITY_CLASS, pc_name, p->value, msg);
    }
    for (size_t i = 0; lookup && lookup->pc_at; i++) {
        const priority_class_t *p = lookup->pc_at(lookup->ctx, i);
        if (p == NULL)
            break;
        if (p->global_default && (best == NULL || p->value < best->value))
            best = p;
    }
    if (best != NULL)
        return set_priority(wl, PRIORITY_SOURCE_PRIORITY_CLASS, best->meta.name, best->value, msg);
    return set_priority(wl, PRIORITY_SOURCE_NONE, NULL, 0, msg);
}
