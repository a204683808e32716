/* waitready -- Kueue's waitForPodsReady once for every driver: the configuration and its rules. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/waitready.h"

#include "model/jsonx.h"
#include "util/duration.h"

#include <string.h>

void waitready_defaults(pods_ready_config_t *c, bool v1beta1)
{
    memset(c, 0, sizeof(*c));
    c->enabled = !v1beta1;
    c->timeout_ms = 30 * 60 * 1000;
    c->recovery_timeout_ms = c->timeout_ms;
    c->timestamp = REQUEUE_TS_EVICTION;
    c->backoff_base_s = 60;
    c->backoff_max_s = 3600;
}

/* ---- decoding ------------------------------------------------------------------------------
 * The operator's configuration reader (lib/ctrl/config.c) and lib/model's Configuration decoder
 * (the simulator, `sluice check`) both call waitready_decode(), so a file means the same to
 * `sluice run` and `sluice sim`. Messages are "path: what", as the operator reports them. */

#define PATH  "waitForPodsReady"
#define SPATH "waitForPodsReady.requeuingStrategy"

static bool present(const json_t *v)
{
    return v != NULL && !json_is_null(v);
}

static err_t opt_bool(const json_t *o, const char *key, bool *dst, err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);

    if (!present(v))
        return ERR_OK;
    if (!json_is_boolean(v))
        return err_set(msg, ERR_INVALID, PATH ".%s: must be a boolean", key);
    *dst = json_is_true(v);
    return ERR_OK;
}

static err_t opt_duration(const json_t *o, const char *key, uint32_t *dst, bool *set,
                          err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);
    const char *s;
    int64_t ms;
    err_t rc;

    if (!present(v))
        return ERR_OK;
    if (!json_is_string(v))
        return err_set(msg, ERR_INVALID, PATH ".%s: must be a duration string", key);
    s = json_string_value(v);
    rc = duration_parse_ms(s, strlen(s), UINT32_MAX, &ms, msg);
    if (rc != ERR_OK)
        return err_prefix(msg, rc, PATH ".%s: ", key);
    *dst = (uint32_t)ms;
    if (set != NULL)
        *set = true;
    return ERR_OK;
}

static err_t opt_int32(const json_t *o, const char *key, int32_t min, int32_t *dst, bool *set,
                       err_msg_t *msg)
{
    const json_t *v = json_object_get(o, key);

    if (!present(v))
        return ERR_OK;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > INT32_MAX)
        return err_set(msg, ERR_INVALID, SPATH ".%s: must be an integer >= %d", key, (int)min);
    *dst = (int32_t)json_integer_value(v);
    if (set != NULL)
        *set = true;
    return ERR_OK;
}

static err_t decode_strategy(const json_t *rs, pods_ready_config_t *p, err_msg_t *msg)
{
    static const char *const fields[] = {"timestamp", "backoffLimitCount", "backoffBaseSeconds",
                                         "backoffMaxSeconds", NULL};
    const json_t *ts;
    err_t rc;

    if (!json_is_object(rs))
        return err_set(msg, ERR_INVALID, SPATH ": must be an object");
    if ((rc = jsonx_known_fields(rs, fields, SPATH, msg)) != ERR_OK)
        return rc;
    ts = json_object_get(rs, "timestamp");
    if (present(ts)) {
        if (json_is_string(ts) && strcmp(json_string_value(ts), "Eviction") == 0)
            p->timestamp = REQUEUE_TS_EVICTION;
        else if (json_is_string(ts) && strcmp(json_string_value(ts), "Creation") == 0)
            p->timestamp = REQUEUE_TS_CREATION;
        else
            return err_set(msg, ERR_INVALID, SPATH ".timestamp: must be Eviction or Creation");
    }
    if ((rc = opt_int32(rs, "backoffLimitCount", 0, &p->backoff_limit_count, &p->has_backoff_limit,
                        msg)) != ERR_OK ||
        (rc = opt_int32(rs, "backoffBaseSeconds", 1, &p->backoff_base_s, NULL, msg)) != ERR_OK)
        return rc;
    return opt_int32(rs, "backoffMaxSeconds", 1, &p->backoff_max_s, NULL, msg);
}

err_t waitready_decode(const json_t *root, pods_ready_config_t *out, err_msg_t *msg)
{
    static const char *const fields[] = {"enable",          "timeout",           "blockAdmission",
                                         "recoveryTimeout", "requeuingStrategy", NULL};
    const char *av = json_string_value(json_object_get(root, "apiVersion"));
    bool v1beta1 = av != NULL && strcmp(av, "config.kueue.x-k8s.io/v1beta1") == 0;
    const json_t *w = json_object_get(root, PATH), *rs;
    pods_ready_config_t p;
    err_t rc;

    waitready_defaults(&p, v1beta1);
    if (!present(w)) {
        *out = p;
        return ERR_OK;
    }
    if (!json_is_object(w))
        return err_set(msg, ERR_INVALID, PATH ": must be an object");
    if ((rc = jsonx_known_fields(w, fields, PATH, msg)) != ERR_OK ||
        (rc = opt_bool(w, "enable", &p.enabled, msg)) != ERR_OK)
        return rc;
    p.block_admission = v1beta1 && p.enabled; /* v1beta1: blockAdmission defaults to enable */
    if ((rc = opt_bool(w, "blockAdmission", &p.block_admission, msg)) != ERR_OK ||
        (rc = opt_duration(w, "timeout", &p.timeout_ms, NULL, msg)) != ERR_OK)
        return rc;
    if (p.timeout_ms == 0)
        return err_set(msg, ERR_INVALID, PATH ".timeout: must be greater than 0");
    p.recovery_timeout_ms = p.timeout_ms;
    if ((rc = opt_duration(w, "recoveryTimeout", &p.recovery_timeout_ms, &p.recovery_set, msg)) !=
        ERR_OK)
        return rc;
    rs = json_object_get(w, "requeuingStrategy");
    if (present(rs) && (rc = decode_strategy(rs, &p, msg)) != ERR_OK)
        return rc;
    *out = p;
    return ERR_OK;
}

/* ---- the rules --------------------------------------------------------------------------------
 */

waitready_cause_t waitready_deadline(const pods_ready_config_t *c, waitready_pods_t pods,
                                     int64_t admitted_ms, int64_t unready_ms, int64_t *deadline_ms)
{
    if (!c->enabled || pods == WAITREADY_READY)
        return WAITREADY_NONE;
    if (pods == WAITREADY_RECOVERING) {
        if (c->recovery_timeout_ms == 0)
            return WAITREADY_NONE;
        *deadline_ms = unready_ms + c->recovery_timeout_ms;
        return WAITREADY_WAIT_FOR_RECOVERY;
    }
    *deadline_ms = admitted_ms + c->timeout_ms;
    return WAITREADY_WAIT_FOR_START;
}

bool waitready_limit_exceeded(const pods_ready_config_t *c, int32_t count)
{
    return c->has_backoff_limit && (int64_t)count + 1 > c->backoff_limit_count;
}

int64_t waitready_backoff_s(const pods_ready_config_t *c, int32_t count)
{
    int64_t d = c->backoff_base_s;

    for (int32_t i = 1; i < count && d < c->backoff_max_s; i++)
        d *= 2;
    return d < c->backoff_max_s ? d : c->backoff_max_s;
}

int64_t waitready_queue_ts(const pods_ready_config_t *c, int64_t evicted_ms, int64_t created_ms)
{
    return c->timestamp == REQUEUE_TS_EVICTION ? evicted_ms : created_ms;
}
