/* fuzz_kubeconfig -- libFuzzer target for kubeconfig resolution: YAML/JSON text of a kubeconfig
 * (what `--kubeconfig` reads) through kube_config_from_json(): no crash, no leak, and a resolved
 * configuration is always usable (server https:// or http://, never a token over http://). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/kubeconfig.h"

#include "model/yaml.h"

#include "fuzz_check.h"

#include <stdbool.h>
#include <string.h>

typedef struct first_s {
    json_t *doc;
} first_t;

static err_t on_doc(void *ctx, size_t index, int line, json_t *doc)
{
    first_t *f = ctx;

    (void)line;
    if (index == 0 && f->doc == NULL)
        f->doc = json_incref(doc);
    return ERR_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    first_t f = {NULL};
    err_msg_t msg;
    kube_config_t cfg;

    if (yaml_load_string((const char *)data, size, on_doc, &f, &msg) != ERR_OK || f.doc == NULL) {
        json_decref(f.doc);
        return 0;
    }
    memset(&cfg, 0, sizeof(cfg));
    /* The exec plugin is only parsed here, never run (kube_config_token() is not called). */
    if (kube_config_from_json(f.doc, NULL, "/nonexistent", &cfg, &msg) == ERR_OK) {
        bool http = strncmp(cfg.server, "http://", 7) == 0;
        CHECK(http || strncmp(cfg.server, "https://", 8) == 0);
        CHECK(!http || (cfg.token == NULL && cfg.token_file == NULL && cfg.exec == NULL));
        CHECK(cfg.namespace_name != NULL);
        CHECK((cfg.cert_file || cfg.cert_data.data) == (cfg.key_file || cfg.key_data.data));
        kube_config_fini(&cfg);
    } else {
        CHECK(msg.text[0] != '\0');
    }
    json_decref(f.doc);
    return 0;
}
