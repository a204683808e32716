/* server_int -- lib/hook/server internals for its tests. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_HOOK_SERVER_INT_H
#define SLUICE_HOOK_SERVER_INT_H

#include "hook/server.h"

/* Make the next `n` accepts fail as if the connection could not be allocated (the path an
 * out-of-memory takes). Call on the loop's thread, or before the loop runs. */
void hook_server__fail_accepts(hook_server_t *srv, unsigned n);

#endif
