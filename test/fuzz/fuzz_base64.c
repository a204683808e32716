/* fuzz_base64 -- base64_decode on arbitrary bytes: never crash, leave the outputs untouched on
 * error, and every accepted input decodes to bytes whose encoding decodes to the same bytes. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *bytes = NULL, *back = NULL;
    size_t n = 7, m = 7;
    char *text = NULL;
    err_msg_t msg;

    if (base64_decode((const char *)data, size, &bytes, &n, &msg) != ERR_OK) {
        if (bytes != NULL || n != 7)
            abort();
        return 0;
    }
    if (n > size || bytes[n] != '\0')
        abort();
    if (base64_encode(bytes, n, &text) != ERR_OK)
        abort();
    if (strlen(text) != (n + 2) / 3 * 4)
        abort();
    if (base64_decode(text, strlen(text), &back, &m, &msg) != ERR_OK || m != n ||
        memcmp(back, bytes, n) != 0)
        abort();
    free(bytes);
    free(back);
    free(text);
    return 0;
}
