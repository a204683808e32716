/* fuzz_acct -- `sluice report` over arbitrary bytes as an accounting log: never crash, skip what
 * is not a record, and always write a table, CSV and JSON (the JSON must parse back). */
/* SPDX-License-Identifier: Apache-2.0 */
#include "acct/report.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int by = ACCT_BY_NAMESPACE; by <= ACCT_BY_FLAVOR; by++) {
        /* The last byte picks a range: open, or cut at the edges of 2025-12-02. */
        bool cut = size > 0 && (data[size - 1] & 1);
        acct_report_t *r =
            acct_report_new((acct_by_t)by, cut ? 1764633600000LL : -1, cut ? 1764720000000LL : -1);
        FILE *in = size > 0 ? fmemopen((void *)data, size, "r") : NULL;
        FILE *err = fopen("/dev/null", "w");
        size_t skipped = 0;
        err_msg_t msg;
        err_t rc;

        CHECK(r != NULL && err != NULL);
        rc = in != NULL ? acct_report_read(r, in, "fuzz", err, &skipped, &msg) : ERR_OK;
        CHECK(rc == ERR_OK || rc == ERR_OVERFLOW || rc == ERR_NOMEM);
        for (int fmt = ACCT_OUT_TABLE; fmt <= ACCT_OUT_JSON; fmt++) {
            char *text = NULL;
            size_t len = 0;
            FILE *out = open_memstream(&text, &len);
            CHECK(out != NULL && acct_report_write(r, (acct_out_t)fmt, out, &msg) == ERR_OK);
            fclose(out);
            if (fmt == ACCT_OUT_JSON) {
                json_t *j = json_loadb(text, len, 0, NULL);
                CHECK(j != NULL);
                json_decref(j);
            }
            free(text);
        }
        if (in != NULL)
            fclose(in);
        fclose(err);
        acct_report_free(r);
    }
    return 0;
}
