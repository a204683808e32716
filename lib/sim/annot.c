/* annot -- the simulator's annotations (sim.sluice.dev/...): which exist, and typos in them. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/annot.h"

#include "sim/scenario.h"
#include "util/duration.h"
#include "util/suggest.h"

#include <stdio.h>
#include <string.h>

/* Every annotation a scenario may carry (design/scenario-format.md): a new one is added here and
 * to scenario.h, or `sluice check` and `sluice sim` refuse it. */
static const char *const known[] = {SIM_ANN_AT,
                                    SIM_ANN_DELETE_AT,
                                    SIM_ANN_RUNTIME,
                                    SIM_ANN_VERDICT,
                                    SIM_ANN_VERDICTS,
                                    SIM_ANN_PODS_READY_AFTER,
                                    SIM_ANN_PODS_UNREADY_AFTER,
                                    SIM_ANN_PODS_RECOVER_AFTER,
                                    NULL};

bool sim_annot_is_sim(const char *key)
{
    return strncmp(key, SIM_ANN_PREFIX, strlen(SIM_ANN_PREFIX)) == 0;
}

bool sim_annot_known(const char *key)
{
    for (size_t i = 0; known[i] != NULL; i++)
        if (strcmp(key, known[i]) == 0)
            return true;
    return false;
}

err_t sim_annot_check(const json_t *annotations, diags_t *d, size_t *nsim)
{
    const char *key;
    const json_t *v;
    size_t n = 0;

    json_object_foreach((json_t *)annotations, key, v)
    {
        const char *near;
        char path[300];

        (void)v;
        if (!sim_annot_is_sim(key))
            continue;
        n++;
        if (sim_annot_known(key))
            continue;
        near = suggest_pick(key, known);
        snprintf(path, sizeof(path), "metadata.annotations[%.250s]", key);
        if (near != NULL) {
            diags_error(d, path, "unknown simulator annotation; did you mean \"%s\"?", near);
        } else {
            char list[512];
            size_t used = 0;
            for (size_t i = 0; known[i] != NULL && used < sizeof(list); i++) {
                int w = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", known[i]);
                used += w > 0 ? (size_t)w : 0;
            }
            diags_error(d, path, "unknown simulator annotation (the simulator reads %s)", list);
        }
    }
    if (nsim != NULL)
        *nsim = n;
    return d->oom ? ERR_NOMEM : ERR_OK;
}

/* ---- admission check verdicts ---------------------------------------------------------------- */

/* One STEP "State[:DURATION[:REQUEUE_AFTER]]" of [p, p + n); *requeue_s -1 without a delay. */
static err_t verdict_step(const char *p, size_t n, check_state_t *state, int64_t *delay,
                          int64_t *requeue_s, err_msg_t *msg)
{
    static const struct {
        const char *name;
        check_state_t state;
    } states[] = {{"Ready", CHECK_STATE_READY},
                  {"Retry", CHECK_STATE_RETRY},
                  {"Rejected", CHECK_STATE_REJECTED}};
    while (n > 0 && *p == ' ')
        p++, n--;
    while (n > 0 && p[n - 1] == ' ')
        n--;
    size_t name_len = 0;
    while (name_len < n && p[name_len] != ':')
        name_len++;
    *delay = 0;
    *requeue_s = -1;
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        if (strlen(states[i].name) != name_len || strncmp(p, states[i].name, name_len) != 0)
            continue;
        *state = states[i].state;
        if (name_len == n)
            return ERR_OK;
        const char *d = p + name_len + 1, *end = p + n;
        const char *colon = memchr(d, ':', (size_t)(end - d));
        if (duration_parse_ms(d, (size_t)((colon != NULL ? colon : end) - d), SIM_MS_MAX, delay,
                              msg) != ERR_OK)
            return ERR_INVALID;
        if (colon == NULL)
            return ERR_OK;
        /* Kueue's requeueAfterSeconds: how long a Retry keeps the workload out of its queue */
        int64_t ra = 0;
        if (states[i].state != CHECK_STATE_RETRY)
            return err_set(msg, ERR_INVALID,
                           "verdict \"%.*s\": only Retry takes a requeue delay "
                           "(Retry:DURATION:REQUEUE_AFTER)",
                           (int)(n > 64 ? 64 : n), p);
        if (duration_parse_ms(colon + 1, (size_t)(end - colon - 1), (int64_t)INT32_MAX * 1000, &ra,
                              msg) != ERR_OK)
            return err_prefix(msg, ERR_INVALID,
                              "verdict \"%.*s\": requeue delay: ", (int)(n > 64 ? 64 : n), p);
        if (ra % 1000 != 0)
            return err_set(msg, ERR_INVALID,
                           "verdict \"%.*s\": requeue delay: want whole seconds (Kueue's "
                           "requeueAfterSeconds)",
                           (int)(n > 64 ? 64 : n), p);
        *requeue_s = ra / 1000;
        return ERR_OK;
    }
    return err_set(msg, ERR_INVALID,
                   "verdict \"%.*s\": want Ready, Retry or Rejected, then optionally :DURATION "
                   "(e.g. Ready:30s; Retry:30s:2m also delays the requeue by 2m)",
                   (int)(n > 64 ? 64 : n), p);
}

err_t sim_verdict_step(const char *seq, size_t len, size_t k, check_state_t *state, int64_t *delay,
                       int64_t *requeue_s, err_msg_t *msg)
{
    size_t i = 0, start = 0;
    check_state_t st = CHECK_STATE_READY;
    int64_t dl = 0, rq = -1;
    bool any = false;

    for (size_t pos = 0; pos <= len; pos++) {
        if (pos < len && seq[pos] != ',')
            continue;
        check_state_t s1 = CHECK_STATE_READY;
        int64_t d1 = 0, r1 = -1;
        if (verdict_step(seq + start, pos - start, &s1, &d1, &r1, msg) != ERR_OK)
            return ERR_INVALID;
        if (!any || i <= k) {
            st = s1;
            dl = d1;
            rq = r1;
        }
        any = true;
        i++;
        start = pos + 1;
    }
    *state = st;
    *delay = dl;
    if (requeue_s != NULL)
        *requeue_s = rq;
    return ERR_OK;
}

err_t sim_verdicts_find(const char *list, const char *check, const char **seq, size_t *len,
                        err_msg_t *msg)
{
    const char *p = list;

    *seq = NULL;
    *len = 0;
    while (*p != '\0') {
        size_t n = strcspn(p, ";");
        const char *eq = memchr(p, '=', n);
        if (eq == NULL)
            return err_set(msg, ERR_INVALID,
                           "\"%.*s\": want CHECK=VERDICTS (e.g. prov=Retry:1m,Ready:30s), "
                           "separated by \";\"",
                           (int)(n > 64 ? 64 : n), p);
        const char *name = p;
        size_t nl = (size_t)(eq - p);
        while (nl > 0 && *name == ' ')
            name++, nl--;
        while (nl > 0 && name[nl - 1] == ' ')
            nl--;
        if (check != NULL && strlen(check) == nl && strncmp(name, check, nl) == 0) {
            *seq = eq + 1;
            *len = n - (size_t)(eq + 1 - p);
        } else if (check == NULL) {
            check_state_t st = CHECK_STATE_READY;
            int64_t dl = 0;
            if (sim_verdict_step(eq + 1, n - (size_t)(eq + 1 - p), 0, &st, &dl, NULL, msg) !=
                ERR_OK)
                return ERR_INVALID;
        }
        p += n;
        if (*p == ';')
            p++;
    }
    return ERR_OK;
}
