/* fuzz_duration -- duration_parse_ms / duration_parse_ns on arbitrary bytes: never crash, leave
 * the output untouched on error, agree with each other (a millisecond value is the nanosecond
 * value / 10^6), and every accepted millisecond value prints back (duration_format) to text that
 * parses to the same value. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/duration.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t v = -7, back = -7, ns = -7;
    err_msg_t msg;
    char buf[DURATION_STR_MAX];
    err_t rc_ns = duration_parse_ns((const char *)data, size, INT64_MAX, &ns, &msg);

    if (rc_ns != ERR_OK ? ns != -7 : ns < 0)
        abort();
    if (duration_parse_ms((const char *)data, size, DURATION_MS_MAX, &v, &msg) != ERR_OK) {
        if (v != -7)
            abort();
        /* Whole milliseconds within the nanosecond range are always accepted. */
        if (rc_ns == ERR_OK && ns % 1000000 == 0 && ns / 1000000 <= DURATION_MS_MAX)
            abort();
        return 0;
    }
    if (v < 0 || v > DURATION_MS_MAX || rc_ns != ERR_OK || ns != v * 1000000)
        abort();
    duration_format(v, buf);
    if (duration_parse_ms(buf, strlen(buf), DURATION_MS_MAX, &back, &msg) != ERR_OK || back != v)
        abort();
    duration_format_secs(v, buf);
    return 0;
}
