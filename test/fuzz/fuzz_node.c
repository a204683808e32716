/* fuzz_node -- libFuzzer target for node_decode() (JSON bytes from a cluster -> node_t) and the
 * inventory built from whatever decodes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "inventory/inventory.h"
#include "model/node.h"

#include "fuzz_check.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t e;
    json_t *root = json_loadb((const char *)data, size, JSON_DECODE_ANY, &e);
    node_t nodes[2];
    size_t n = 0;
    diags_t d;
    err_t rc;

    if (root == NULL)
        return 0;
    diags_init(&d);
    rc = node_decode(root, &nodes[0], &d);
    if (rc == ERR_OK) {
        CHECK(d.nerrors == 0 && nodes[0].meta.name != NULL);
        for (size_t i = 1; i < nodes[0].allocatable.len; i++)
            CHECK(strcmp(nodes[0].allocatable.items[i - 1].name,
                         nodes[0].allocatable.items[i].name) < 0);
        n = 1;
        /* The same node twice: one pool of two, sums that may overflow. */
        diags_fini(&d);
        diags_init(&d);
        if (node_decode(root, &nodes[1], &d) == ERR_OK)
            n = 2;
    } else {
        CHECK(rc == ERR_INVALID || rc == ERR_NOMEM);
        CHECK(rc == ERR_NOMEM || d.nerrors > 0);
        CHECK(nodes[0].meta.name == NULL && nodes[0].allocatable.items == NULL);
    }
    if (n > 0) {
        inventory_t inv;
        err_msg_t msg;
        err_t ib = inventory_build(nodes, n, inventory_default_keys, 3, &inv, &msg);
        CHECK(ib == ERR_OK || ib == ERR_OVERFLOW || ib == ERR_NOMEM);
        if (ib == ERR_OK) {
            json_t *j = inventory_json(&inv);
            CHECK(inv.npools == 1 && inv.pools[0].nnodes == n);
            CHECK(j != NULL);
            json_decref(j);
        }
        inventory_fini(&inv);
    }
    for (size_t i = 0; i < n; i++)
        node_fini(&nodes[i]);
    diags_fini(&d);
    json_decref(root);
    return 0;
}
