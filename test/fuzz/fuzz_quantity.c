/* fuzz_quantity -- libFuzzer target for quantity_parse() and the canonical format. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/quantity.h"

#include "fuzz_check.h"

#include <stdint.h>
#include <string.h>

/* Parse `s`; when it is a quantity, its canonical text must parse back to the same value, and
 * formatting must reach a fixed point. Returns whether `s` parsed. */
static int check_one(const char *s, size_t len, quantity_t *out)
{
    quantity_t q, back;
    err_msg_t msg;
    char text[QUANTITY_STR_MAX], again[QUANTITY_STR_MAX];
    err_t rc;

    msg.text[0] = '\0';
    rc = quantity_parse(s, len, &q, &msg);
    if (rc != ERR_OK) {
        CHECK(rc == ERR_PARSE || rc == ERR_OVERFLOW);
        CHECK(msg.text[0] != '\0');
        return 0;
    }
    CHECK(q.nano >= QUANTITY_NANO_MIN && q.nano <= QUANTITY_NANO_MAX);
    quantity_format(q, text);
    CHECK(strlen(text) < QUANTITY_STR_MAX);
    rc = quantity_parse(text, strlen(text), &back, &msg);
    CHECK(rc == ERR_OK);
    CHECK(quantity_cmp(q, back) == 0);
    /* Not always the same text: binary SI 4928000 prints "4928000" (no Ki multiple), which
     * parses as decimal SI and prints "4928k", as in Kubernetes. That second form is final. */
    quantity_format(back, again);
    rc = quantity_parse(again, strlen(again), &back, &msg);
    CHECK(rc == ERR_OK && quantity_cmp(q, back) == 0);
    quantity_format(back, text);
    CHECK(strcmp(text, again) == 0);
    *out = q;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    const char *nl = memchr(s, '\n', size);
    quantity_t a, b, sum, diff, prod, back;
    int64_t v;

    if (nl == NULL) {
        check_one(s, size, &a);
        return 0;
    }
    /* "A\nB": also check the arithmetic on the two quantities. */
    if (!check_one(s, (size_t)(nl - s), &a) || !check_one(nl + 1, size - (size_t)(nl - s) - 1, &b))
        return 0;
    CHECK(quantity_cmp(a, b) == -quantity_cmp(b, a));
    CHECK(quantity_cmp(quantity_max(a, b), quantity_min(a, b)) >= 0);
    if (quantity_add(a, b, &sum, NULL) == ERR_OK) {
        CHECK(quantity_sub(sum, b, &back, NULL) == ERR_OK);
        CHECK(quantity_cmp(back, a) == 0);
    }
    if (quantity_sub(a, b, &diff, NULL) == ERR_OK) {
        CHECK(quantity_sign(diff) == quantity_cmp(a, b));
    }
    if (quantity_mul(a, 3, &prod, NULL) == ERR_OK) {
        /* a * 3 == a + a + a, exactly */
        CHECK(quantity_add(a, a, &sum, NULL) == ERR_OK);
        CHECK(quantity_add(sum, a, &sum, NULL) == ERR_OK);
        CHECK(quantity_cmp(sum, prod) == 0);
    }
    if (quantity_value(b, &v) == ERR_OK && quantity_mul(a, v, &prod, NULL) == ERR_OK)
        CHECK(quantity_sign(prod) == quantity_sign(a) * ((v > 0) - (v < 0)));
    if (quantity_milli_value(a, &v) == ERR_OK) {
        quantity_t m = quantity_from_milli(v);
        /* rounded away from zero: |milli| >= |a| */
        CHECK(quantity_sign(a) >= 0 ? quantity_cmp(m, a) >= 0 : quantity_cmp(m, a) <= 0);
    }
    return 0;
}
