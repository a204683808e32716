/* fuzz_promq -- libFuzzer target for idle reclaim's untrusted inputs: the Prometheus query
 * answer (JSON, then its shape and sample values) and the configuration section (YAML). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "ctrl/idle.h"
#include "ctrl/promq.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

static void on_series(const promq_series_t *s, void *ud)
{
    size_t *n = ud;

    CHECK(s->ns == NULL || (strlen(s->ns) > 0 && strlen(s->ns) <= 253));
    CHECK(s->pod == NULL || (strlen(s->pod) > 0 && strlen(s->pod) <= 253));
    CHECK(s->valid || s->milli == 0);
    (*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    err_msg_t msg;
    uint32_t milli;
    size_t n = 0, count = 0;
    json_t *body;

    /* The first byte picks the input: 'c' the configuration section, 'v' a sample value, else
     * an answer of the query API. */
    if (size > 0 && data[0] == 'c') {
        idle_config_t *cfg = NULL;
        if (idle_config_parse(text + 1, size - 1, &cfg, &msg) == ERR_OK) {
            char q[1024];
            CHECK(cfg != NULL && cfg->url != NULL && cfg->interval_ms >= 10000);
            CHECK(cfg->defaults.threshold_milli <= IDLE_MILLI_MAX);
            for (size_t i = 0; i < cfg->nrules; i++)
                CHECK(cfg->rules[i].policy.idle_ms > idle_policy_warn_ms(&cfg->rules[i].policy));
            if (promq_idle_query(cfg, q, sizeof(q), &msg) == ERR_OK)
                CHECK(strchr(q, '}') == strrchr(q, '}')); /* one selector: names cannot add any */
            idle_config_free(cfg);
        } else {
            CHECK(cfg == NULL && msg.text[0] != '\0');
        }
        return 0;
    }
    if (size > 0 && data[0] == 'v') {
        if (promq_value_milli(text + 1, size - 1, &milli) == ERR_OK)
            CHECK(size > 1 && data[1] >= '0' && data[1] <= '9');
        return 0;
    }
    body = json_loadb(text, size, JSON_DECODE_ANY, NULL);
    if (body == NULL)
        return 0;
    if (promq_parse(body, "namespace", "pod", on_series, &n, &count, &msg) == ERR_OK)
        CHECK(n == count);
    else
        CHECK(msg.text[0] != '\0');
    json_decref(body);
    return 0;
}
