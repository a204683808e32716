/* fuzz_sim_duration -- sim_duration_parse on arbitrary bytes: never crashes, leaves the output
 * untouched on error, and every accepted value prints back (sim_duration_format) to text that
 * parses to the same value. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/duration.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_ms_t v = -7, back = -7;
    err_msg_t msg;
    char buf[SIM_TIME_STR_MAX];

    if (sim_duration_parse((const char *)data, size, &v, &msg) != ERR_OK) {
        if (v != -7)
            abort();
        return 0;
    }
    if (v < 0 || v > SIM_MS_MAX)
        abort();
    sim_duration_format(v, buf);
    if (sim_duration_parse(buf, strlen(buf), &back, &msg) != ERR_OK || back != v)
        abort();
    sim_time_format(v, buf);
    return 0;
}
