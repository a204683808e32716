/* test_quantity -- Kubernetes quantity parsing, canonical format, exact arithmetic. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "model/quantity.h"

#include "util/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most expectations come from kubernetes/apimachinery pkg/api/resource/quantity_test.go
 * (TestQuantityParse, TestQuantityString, TestQuantityParseEmit, TestNewSet, ...). */

static const struct {
    const char *in;
    const char *out;
    quantity_format_t format;
} canon[] = {
    /* zero in every spelling */
    {"0", "0", QUANTITY_DECIMAL_SI},
    {"0n", "0", QUANTITY_DECIMAL_SI},
    {"0u", "0", QUANTITY_DECIMAL_SI},
    {"0m", "0", QUANTITY_DECIMAL_SI},
    {"0Ki", "0", QUANTITY_BINARY_SI},
    {"0k", "0", QUANTITY_DECIMAL_SI},
    {"0Mi", "0", QUANTITY_BINARY_SI},
    {"0M", "0", QUANTITY_DECIMAL_SI},
    {"0Gi", "0", QUANTITY_BINARY_SI},
    {"0G", "0", QUANTITY_DECIMAL_SI},
    {"0Ti", "0", QUANTITY_BINARY_SI},
    {"0T", "0", QUANTITY_DECIMAL_SI},
    {"0e9", "0", QUANTITY_DECIMAL_EXP},
    {"0.000", "0", QUANTITY_DECIMAL_SI},
    {"-0", "0", QUANTITY_DECIMAL_SI},
    {"0e99999999999999999999", "0", QUANTITY_DECIMAL_EXP},
    /* plain numbers */
    {"1", "1", QUANTITY_DECIMAL_SI},
    {"9", "9", QUANTITY_DECIMAL_SI},
    {"1500", "1500", QUANTITY_DECIMAL_SI},
    {"1000", "1k", QUANTITY_DECIMAL_SI},
    {"1025", "1025", QUANTITY_DECIMAL_SI},
    {"007", "7", QUANTITY_DECIMAL_SI},
    {"+5", "5", QUANTITY_DECIMAL_SI},
    /* binary suffixes */
    {"1Ki", "1Ki", QUANTITY_BINARY_SI},
    {"8Ki", "8Ki", QUANTITY_BINARY_SI},
    {"7Mi", "7Mi", QUANTITY_BINARY_SI},
    {"6Gi", "6Gi", QUANTITY_BINARY_SI},
    {"5Ti", "5Ti", QUANTITY_BINARY_SI},
    {"4Pi", "4Pi", QUANTITY_BINARY_SI},
    {"3Ei", "3Ei", QUANTITY_BINARY_SI},
    {"10Ti", "10Ti", QUANTITY_BINARY_SI},
    {"100Ti", "100Ti", QUANTITY_BINARY_SI},
    {"1024Mi", "1Gi", QUANTITY_BINARY_SI},
    {"1024Ki", "1Mi", QUANTITY_BINARY_SI},
    {"1536Mi", "1536Mi", QUANTITY_BINARY_SI},
    {"300Mi", "300Mi", QUANTITY_BINARY_SI},
    {"307200Ki", "300Mi", QUANTITY_BINARY_SI},
    {"1025024Mi", "1001Gi", QUANTITY_BINARY_SI},
    {"1024Gi", "1Ti", QUANTITY_BINARY_SI},
    {"1024Ei", "1024Ei", QUANTITY_BINARY_SI}, /* no suffix above Ei */
    /* decimal suffixes */
    {"5n", "5n", QUANTITY_DECIMAL_SI},
    {"4u", "4u", QUANTITY_DECIMAL_SI},
    {"3m", "3m", QUANTITY_DECIMAL_SI},
    {"8k", "8k", QUANTITY_DECIMAL_SI},
    {"50k", "50k", QUANTITY_DECIMAL_SI},
    {"7M", "7M", QUANTITY_DECIMAL_SI},
    {"6G", "6G", QUANTITY_DECIMAL_SI},
    {"5T", "5T", QUANTITY_DECIMAL_SI},
    {"40T", "40T", QUANTITY_DECIMAL_SI},
    {"300T", "300T", QUANTITY_DECIMAL_SI},
    {"2P", "2P", QUANTITY_DECIMAL_SI},
    {"1E", "1E", QUANTITY_DECIMAL_SI},
    {"12E", "12E", QUANTITY_DECIMAL_SI},
    {"1000M", "1G", QUANTITY_DECIMAL_SI},
    {"1000m", "1", QUANTITY_DECIMAL_SI},
    {"1000u", "1m", QUANTITY_DECIMAL_SI},
    {"100M", "100M", QUANTITY_DECIMAL_SI},
    {"1234567M", "1234567M", QUANTITY_DECIMAL_SI},
    {"1000E", "1e21", QUANTITY_DECIMAL_SI}, /* beyond E: exponent form, as Kubernetes */
    {"5000E", "5e21", QUANTITY_DECIMAL_SI},
    {"1000000E", "1e24", QUANTITY_DECIMAL_SI},
    /* decimal exponents */
    {"1E-3", "1e-3", QUANTITY_DECIMAL_EXP},
    {"1e3", "1e3", QUANTITY_DECIMAL_EXP},
    {"1E6", "1e6", QUANTITY_DECIMAL_EXP},
    {"1e9", "1e9", QUANTITY_DECIMAL_EXP},
    {"1E12", "1e12", QUANTITY_DECIMAL_EXP},
    {"1e15", "1e15", QUANTITY_DECIMAL_EXP},
    {"1E18", "1e18", QUANTITY_DECIMAL_EXP},
    {"1e14", "100e12", QUANTITY_DECIMAL_EXP},
    {"1e13", "10e12", QUANTITY_DECIMAL_EXP},
    {"1e+3", "1e3", QUANTITY_DECIMAL_EXP},
    {"1e0", "1", QUANTITY_DECIMAL_EXP},
    {"1e003", "1e3", QUANTITY_DECIMAL_EXP},
    {".001e12", "1e9", QUANTITY_DECIMAL_EXP},
    {"0.001e0", "1e-3", QUANTITY_DECIMAL_EXP},
    {"1000e-12", "1e-9", QUANTITY_DECIMAL_EXP},
    {"80e-3", "80e-3", QUANTITY_DECIMAL_EXP},
    {"300e6", "300e6", QUANTITY_DECIMAL_EXP},
    {"3e3", "3e3", QUANTITY_DECIMAL_EXP},
    {"1e27", "1e27", QUANTITY_DECIMAL_EXP},
    /* fractions */
    {"100.035k", "100035", QUANTITY_DECIMAL_SI},
    {"0.001", "1m", QUANTITY_DECIMAL_SI},
    {"0.0005k", "500m", QUANTITY_DECIMAL_SI},
    {"0.005", "5m", QUANTITY_DECIMAL_SI},
    {"0.05", "50m", QUANTITY_DECIMAL_SI},
    {"0.5", "500m", QUANTITY_DECIMAL_SI},
    {"0.00050k", "500m", QUANTITY_DECIMAL_SI},
    {"0.00500", "5m", QUANTITY_DECIMAL_SI},
    {"0.05000", "50m", QUANTITY_DECIMAL_SI},
    {"0.50000", "500m", QUANTITY_DECIMAL_SI},
    {"0.5e0", "500e-3", QUANTITY_DECIMAL_EXP},
    {"0.5e-1", "50e-3", QUANTITY_DECIMAL_EXP},
    {"0.5e-2", "5e-3", QUANTITY_DECIMAL_EXP},
    {"10.035M", "10035k", QUANTITY_DECIMAL_SI},
    {"1.2e3", "1200", QUANTITY_DECIMAL_EXP},
    {"1.3E+6", "1300e3", QUANTITY_DECIMAL_EXP},
    {"1.40e9", "1400e6", QUANTITY_DECIMAL_EXP},
    {"1.53E12", "1530e9", QUANTITY_DECIMAL_EXP},
    {"1.6e15", "1600e12", QUANTITY_DECIMAL_EXP},
    {"1.7E18", "1700e15", QUANTITY_DECIMAL_EXP},
    {"9.01", "9010m", QUANTITY_DECIMAL_SI},
    {"8.1k", "8100", QUANTITY_DECIMAL_SI},
    {"7.123456M", "7123456", QUANTITY_DECIMAL_SI},
    {"6.987654321G", "6987654321", QUANTITY_DECIMAL_SI},
    {"5.444T", "5444G", QUANTITY_DECIMAL_SI},
    {"40.1T", "40100G", QUANTITY_DECIMAL_SI},
    {"300.2T", "300200G", QUANTITY_DECIMAL_SI},
    {"2.5P", "2500T", QUANTITY_DECIMAL_SI},
    {"1.01E", "1010P", QUANTITY_DECIMAL_SI},
    {"1.5", "1500m", QUANTITY_DECIMAL_SI},
    {"1.5k", "1500", QUANTITY_DECIMAL_SI},
    {"1.08", "1080m", QUANTITY_DECIMAL_SI},
    {"1080000000n", "1080m", QUANTITY_DECIMAL_SI},
    {"0.001T", "1G", QUANTITY_DECIMAL_SI},
    {"1.2345", "1234500u", QUANTITY_DECIMAL_SI},
    {"18446744073709551616", "18446744073709551616", QUANTITY_DECIMAL_SI},
    /* sub-nano values round away from zero to the next nano */
    {"3.001n", "4n", QUANTITY_DECIMAL_SI},
    {"1.1E-9", "2e-9", QUANTITY_DECIMAL_EXP},
    {"0.0000000001", "1n", QUANTITY_DECIMAL_SI},
    {"0.0000000005", "1n", QUANTITY_DECIMAL_SI},
    {"0.00000000050", "1n", QUANTITY_DECIMAL_SI},
    {"0.5e-9", "1e-9", QUANTITY_DECIMAL_EXP},
    {"0.9n", "1n", QUANTITY_DECIMAL_SI},
    {"0.00000012345", "124n", QUANTITY_DECIMAL_SI},
    {"0.00000012354", "124n", QUANTITY_DECIMAL_SI},
    {"1e-1000000", "1e-9", QUANTITY_DECIMAL_EXP},
    {"1e-99999999999999999999", "1e-9", QUANTITY_DECIMAL_EXP},
    {"1.000000000000000000000000000000000000001", "1000000001n", QUANTITY_DECIMAL_SI},
    /* fractional binary values */
    {"100.035Ki", "102435840m", QUANTITY_BINARY_SI},
    {"0.5Mi", "512Ki", QUANTITY_BINARY_SI},
    {"0.5Gi", "512Mi", QUANTITY_BINARY_SI},
    {"1.5Gi", "1536Mi", QUANTITY_BINARY_SI},
    {"0.05Gi", "53687091200m", QUANTITY_BINARY_SI},
    {"0.025Ti", "27487790694400m", QUANTITY_BINARY_SI},
    {".001Ki", "1024m", QUANTITY_BINARY_SI},
    {".000001Ki", "1024u", QUANTITY_DECIMAL_SI}, /* below 1: switches to decimal SI */
    {".000000001Ki", "1024n", QUANTITY_DECIMAL_SI},
    {".000000000001Ki", "2n", QUANTITY_DECIMAL_SI},
    {"0.000000000001Ki", "2n", QUANTITY_DECIMAL_SI},
    {"1023.5Ki", "1048064", QUANTITY_BINARY_SI},
    /* forms Kubernetes allows that look odd */
    {".001", "1m", QUANTITY_DECIMAL_SI},
    {".0001k", "100m", QUANTITY_DECIMAL_SI},
    {"1.", "1", QUANTITY_DECIMAL_SI},
    {"1.G", "1G", QUANTITY_DECIMAL_SI},
    /* the magnitude limit itself */
    {"1000000000000000000000000000", "1e27", QUANTITY_DECIMAL_SI},
    {"999999999999999999999999999.999999999", "999999999999999999999999999999999999n",
     QUANTITY_DECIMAL_SI},
    {"1000000000000000000000000000000000000n", "1e27", QUANTITY_DECIMAL_SI},
};

START_TEST(test_parse_canonical)
{
    quantity_t q;
    err_msg_t msg;
    char buf[QUANTITY_STR_MAX];
    const char *in = canon[_i].in;

    ck_assert_msg(quantity_parse(in, strlen(in), &q, &msg) == ERR_OK, "%s: %s", in, msg.text);
    ck_assert_msg(strcmp(quantity_format(q, buf), canon[_i].out) == 0, "%s: got %s, want %s", in,
                  buf, canon[_i].out);
    ck_assert_msg(q.format == canon[_i].format, "%s: format %d", in, q.format);
}
END_TEST

/* Every case again with a leading '-' (the same text with a '-' unless zero) and '+'. */
START_TEST(test_parse_signed)
{
    char in[128], want[128], buf[QUANTITY_STR_MAX];
    quantity_t q, plus;
    err_msg_t msg;

    snprintf(in, sizeof(in), "-%s",
             canon[_i].in + (canon[_i].in[0] == '-' || canon[_i].in[0] == '+'));
    snprintf(want, sizeof(want), strcmp(canon[_i].out, "0") ? "-%s" : "%s", canon[_i].out);
    ck_assert_msg(quantity_parse(in, strlen(in), &q, &msg) == ERR_OK, "%s: %s", in, msg.text);
    ck_assert_str_eq(quantity_format(q, buf), want);
    in[0] = '+';
    ck_assert_int_eq(quantity_parse(in, strlen(in), &plus, &msg), ERR_OK);
    ck_assert_int_eq(quantity_cmp(plus, q), strcmp(canon[_i].out, "0") ? 1 : 0);
}
END_TEST

/* The canonical text parses back to the same value (Kubernetes TestQuantityString). */
START_TEST(test_canonical_round_trip)
{
    quantity_t q, back;
    char buf[QUANTITY_STR_MAX];
    const char *in = canon[_i].in;

    ck_assert_int_eq(quantity_parse(in, strlen(in), &q, NULL), ERR_OK);
    quantity_format(q, buf);
    ck_assert_int_eq(quantity_parse(buf, strlen(buf), &back, NULL), ERR_OK);
    ck_assert_msg(quantity_cmp(q, back) == 0, "%s -> %s", in, buf);
}
END_TEST

static const struct {
    const char *in;
    err_t code;
    const char *msg;
} bad[] = {
    {"", ERR_PARSE, "invalid quantity \"\": empty"},
    {" 1", ERR_PARSE, "invalid quantity \" 1\""},
    {"1 ", ERR_PARSE, "invalid quantity \"1 \""},
    {"12x", ERR_PARSE, "invalid quantity \"12x\""},
    {"1.1.M", ERR_PARSE, "invalid quantity \"1.1.M\""},
    {"1+1.0M", ERR_PARSE, "invalid quantity \"1+1.0M\""},
    {"0.1mi", ERR_PARSE, "invalid quantity \"0.1mi\""},
    {"0.1am", ERR_PARSE, "invalid quantity \"0.1am\""},
    {"aoeu", ERR_PARSE, "invalid quantity \"aoeu\""},
    {".5i", ERR_PARSE, "invalid quantity \".5i\""},
    {"1i", ERR_PARSE, "invalid quantity \"1i\""},
    {"-3.01i", ERR_PARSE, "invalid quantity \"-3.01i\""},
    {"-3.01e-", ERR_PARSE, "invalid quantity \"-3.01e-\""},
    {"1.2.3", ERR_PARSE, "invalid quantity \"1.2.3\""},
    {"1Kb", ERR_PARSE, "invalid quantity \"1Kb\""},
    {"1K", ERR_PARSE, "invalid quantity \"1K\""},
    {"1ki", ERR_PARSE, "invalid quantity \"1ki\""},
    {"1KiB", ERR_PARSE, "invalid quantity \"1KiB\""},
    {"1EI", ERR_PARSE, "invalid quantity \"1EI\""},
    {"Mi", ERR_PARSE, "invalid quantity \"Mi\""},
    {"k", ERR_PARSE, "invalid quantity \"k\""},
    {"--1", ERR_PARSE, "invalid quantity \"--1\""},
    {"+-1", ERR_PARSE, "invalid quantity \"+-1\""},
    {"-", ERR_PARSE, "invalid quantity \"-\""},
    {"+", ERR_PARSE, "invalid quantity \"+\""},
    {".", ERR_PARSE, "invalid quantity \".\""},
    {"-.", ERR_PARSE, "invalid quantity \"-.\""},
    {"1e", ERR_PARSE, "invalid quantity \"1e\""},
    {"1e+", ERR_PARSE, "invalid quantity \"1e+\""},
    {"1e1.5", ERR_PARSE, "invalid quantity \"1e1.5\""},
    {"1e3k", ERR_PARSE, "invalid quantity \"1e3k\""},
    {"1m3", ERR_PARSE, "invalid quantity \"1m3\""},
    {"1kk", ERR_PARSE, "invalid quantity \"1kk\""},
    {"0x10", ERR_PARSE, "invalid quantity \"0x10\""},
    {"1,5", ERR_PARSE, "invalid quantity \"1,5\""},
    {"1_000", ERR_PARSE, "invalid quantity \"1_000\""},
    {"infinity", ERR_PARSE, "invalid quantity \"infinity\""},
    {"\xef\xbc\x91", ERR_PARSE, "invalid quantity \"\xef\xbc\x91\""},
    {"1e36", ERR_OVERFLOW, "quantity \"1e36\" is too large"},
    {"1e28", ERR_OVERFLOW, "quantity \"1e28\" is too large"},
    {"-1e28", ERR_OVERFLOW, "quantity \"-1e28\" is too large"},
    {"1000000000000000000000000000.000000001", ERR_OVERFLOW,
     "quantity \"1000000000000000000000000000.000000001\" is too large"},
    {"1000000001E", ERR_OVERFLOW, "quantity \"1000000001E\" is too large"},
    {"1000000000Ei", ERR_OVERFLOW, "quantity \"1000000000Ei\" is too large"},
    {"1e99999999999999999999", ERR_OVERFLOW, "quantity \"1e99999999999999999999\" is too large"},
    {"99999999999999999999999999999999999999999999", ERR_OVERFLOW,
     "quantity \"99999999999999999999999999999999999999999999\" is too large"},
};

START_TEST(test_parse_errors)
{
    quantity_t q = {42, QUANTITY_BINARY_SI};
    err_msg_t msg;
    const char *in = bad[_i].in;

    ck_assert_msg(quantity_parse(in, strlen(in), &q, &msg) == bad[_i].code, "%s", in);
    ck_assert_str_eq(msg.text, bad[_i].msg);
    ck_assert_msg(q.nano == 42 && q.format == QUANTITY_BINARY_SI, "out changed on error");
    ck_assert_int_eq(quantity_parse(in, strlen(in), &q, NULL), bad[_i].code);
}
END_TEST

START_TEST(test_parse_uses_len_not_nul)
{
    quantity_t q;
    char buf[QUANTITY_STR_MAX];
    err_msg_t msg;

    ck_assert_int_eq(quantity_parse("1500mXYZ", 5, &q, NULL), ERR_OK);
    ck_assert_str_eq(quantity_format(q, buf), "1500m");
    ck_assert_int_eq(quantity_parse("1\0002", 3, &q, &msg), ERR_PARSE);
    ck_assert_int_eq(quantity_parse(NULL, 0, &q, &msg), ERR_PARSE);
}
END_TEST

START_TEST(test_parse_error_truncates_long_text)
{
    char in[400];
    quantity_t q;
    err_msg_t msg;

    memset(in, '7', sizeof(in));
    in[sizeof(in) - 1] = 'x';
    ck_assert_int_eq(quantity_parse(in, sizeof(in), &q, &msg), ERR_PARSE);
    ck_assert_msg(strlen(msg.text) < 100, "message too long: %zu", strlen(msg.text));
    ck_assert_ptr_nonnull(strstr(msg.text, "7777...\""));
    memset(in, '7', sizeof(in));
    ck_assert_int_eq(quantity_parse(in, sizeof(in), &q, &msg), ERR_OVERFLOW);
    ck_assert_ptr_nonnull(strstr(msg.text, "...\" is too large"));
}
END_TEST

/* ------------------------------------------------------------------------------------------ */

static quantity_t P(const char *s)
{
    quantity_t q;
    err_msg_t msg;
    ck_assert_msg(quantity_parse(s, strlen(s), &q, &msg) == ERR_OK, "%s: %s", s, msg.text);
    return q;
}

typedef enum { OP_ADD, OP_SUB } op_t;

static const struct {
    op_t op;
    const char *a, *b;
    const char *want; /* NULL: ERR_OVERFLOW */
} arith[] = {
    {OP_ADD, "100m", "0", "100m"},
    {OP_ADD, "0", "100m", "100m"},
    {OP_ADD, "1Gi", "0", "1Gi"},
    {OP_ADD, "0", "1Gi", "1Gi"}, /* zero takes the other's format (TestQuantityAddZero...) */
    {OP_ADD, "1", "500m", "1500m"},
    {OP_ADD, "1Gi", "1Gi", "2Gi"},
    {OP_ADD, "1Gi", "512Mi", "1536Mi"},
    {OP_ADD, "1Gi", "1", "1073741825"},
    {OP_ADD, "1G", "1Gi", "2073741824"},
    {OP_ADD, "1Gi", "1G", "2073741824"},
    {OP_ADD, "1e3", "1", "1001"},
    {OP_ADD, "1n", "1n", "2n"},
    {OP_ADD, "1", "-1", "0"},
    {OP_ADD, "999999999999999999999999999", "1", "1e27"},
    {OP_ADD, "999999999999999999999999999.999999999", "1n", "1e27"},
    {OP_ADD, "1e27", "1n", NULL},
    {OP_ADD, "-1e27", "-1n", NULL},
    {OP_ADD, "1e27", "1e27", NULL},
    {OP_SUB, "100m", "0", "100m"},
    {OP_SUB, "1Gi", "0", "1Gi"},
    {OP_SUB, "0", "100m", "-100m"},
    {OP_SUB, "0", "1Gi", "-1Gi"},
    {OP_SUB, "2Gi", "1Gi", "1Gi"},
    {OP_SUB, "1", "1500m", "-500m"},
    {OP_SUB, "4", "4", "0"},
    {OP_SUB, "1e27", "-1e27", NULL},
    {OP_SUB, "-1e27", "1n", NULL},
    {OP_SUB, "-1e27", "-1e27", "0"},
};

START_TEST(test_add_sub)
{
    quantity_t out = {7, QUANTITY_DECIMAL_EXP};
    err_msg_t msg;
    char buf[QUANTITY_STR_MAX];
    err_t rc;
    quantity_t a = P(arith[_i].a), b = P(arith[_i].b);

    rc = arith[_i].op == OP_ADD ? quantity_add(a, b, &out, &msg) : quantity_sub(a, b, &out, &msg);
    if (arith[_i].want == NULL) {
        ck_assert_msg(rc == ERR_OVERFLOW, "%s op %s: %d", arith[_i].a, arith[_i].b, rc);
        ck_assert_ptr_nonnull(strstr(msg.text, "out of range"));
        ck_assert(out.nano == 7 && out.format == QUANTITY_DECIMAL_EXP);
        return;
    }
    ck_assert_int_eq(rc, ERR_OK);
    ck_assert_msg(strcmp(quantity_format(out, buf), arith[_i].want) == 0, "%s op %s = %s, want %s",
                  arith[_i].a, arith[_i].b, buf, arith[_i].want);
}
END_TEST

static const struct {
    const char *q;
    int64_t n;
    const char *want; /* NULL: ERR_OVERFLOW */
} muls[] = {
    {"500m", 3, "1500m"},
    {"1Gi", 8, "8Gi"},
    {"1Gi", 1024, "1Ti"},
    {"1536Mi", 2, "3Gi"},
    {"2", 0, "0"},
    {"2", -3, "-6"},
    {"-1n", INT64_MIN, "9223372036854775808n"},
    {"1n", INT64_MAX, "9223372036854775807n"},
    {"1", INT64_MAX, "9223372036854775807"},
    {"1E", 1000000000, "1e27"},
    {"1E", 1000000001, NULL},
    {"1e27", -1, "-1e27"},
    {"1e27", 2, NULL},
    {"2", INT64_MIN, "-18446744073709551616"},
    {"1e18", INT64_MIN, NULL},
};

START_TEST(test_mul)
{
    quantity_t out = {7, QUANTITY_DECIMAL_EXP};
    err_msg_t msg;
    char buf[QUANTITY_STR_MAX];
    err_t rc = quantity_mul(P(muls[_i].q), muls[_i].n, &out, &msg);

    if (muls[_i].want == NULL) {
        ck_assert_int_eq(rc, ERR_OVERFLOW);
        ck_assert_ptr_nonnull(strstr(msg.text, "out of range"));
        ck_assert(out.nano == 7);
        return;
    }
    ck_assert_int_eq(rc, ERR_OK);
    ck_assert_str_eq(quantity_format(out, buf), muls[_i].want);
}
END_TEST

START_TEST(test_arith_rejects_out_of_range_operands)
{
    quantity_t huge = {QUANTITY_NANO_MAX + 1, QUANTITY_DECIMAL_SI}, out;

    ck_assert_int_eq(quantity_add(huge, quantity_zero(), &out, NULL), ERR_OVERFLOW);
    ck_assert_int_eq(quantity_sub(quantity_zero(), huge, &out, NULL), ERR_OVERFLOW);
    ck_assert_int_eq(quantity_mul(huge, 1, &out, NULL), ERR_OVERFLOW);
}
END_TEST

static const struct {
    const char *q;
    int64_t value, milli;
    err_t value_rc, milli_rc;
} values[] = {
    {"0", 0, 0, ERR_OK, ERR_OK},
    {"1", 1, 1000, ERR_OK, ERR_OK},
    {"1500m", 2, 1500, ERR_OK, ERR_OK},
    {"1001m", 2, 1001, ERR_OK, ERR_OK},
    {"1n", 1, 1, ERR_OK, ERR_OK},
    {"1000001n", 1, 2, ERR_OK, ERR_OK},
    {"9.01", 10, 9010, ERR_OK, ERR_OK},
    {"-9.01", -10, -9010, ERR_OK, ERR_OK},
    {"-1500m", -2, -1500, ERR_OK, ERR_OK},
    {"-1n", -1, -1, ERR_OK, ERR_OK},
    {"1Gi", 1073741824, 1073741824000, ERR_OK, ERR_OK},
    {"1Ki", 1024, 1024000, ERR_OK, ERR_OK},
    {"9223372036854775807", INT64_MAX, 0, ERR_OK, ERR_OVERFLOW},
    {"9223372036854775808", 0, 0, ERR_OVERFLOW, ERR_OVERFLOW},
    {"-9223372036854775808", INT64_MIN, 0, ERR_OK, ERR_OVERFLOW},
    {"9223372036854775.807", 9223372036854776, INT64_MAX, ERR_OK, ERR_OK},
    {"9223372036854775.8071", 9223372036854776, 0, ERR_OK, ERR_OVERFLOW},
    {"8Ei", 0, 0, ERR_OVERFLOW, ERR_OVERFLOW},
    {"1e27", 0, 0, ERR_OVERFLOW, ERR_OVERFLOW},
};

START_TEST(test_value_and_milli_value)
{
    int64_t v = 77, m = 77;
    quantity_t q = P(values[_i].q);

    ck_assert_int_eq(quantity_value(q, &v), values[_i].value_rc);
    ck_assert_int_eq(quantity_milli_value(q, &m), values[_i].milli_rc);
    if (values[_i].value_rc == ERR_OK)
        ck_assert_msg(v == values[_i].value, "%s: value %lld", values[_i].q, (long long)v);
    else
        ck_assert_int_eq(v, 77);
    if (values[_i].milli_rc == ERR_OK)
        ck_assert_msg(m == values[_i].milli, "%s: milli %lld", values[_i].q, (long long)m);
    else
        ck_assert_int_eq(m, 77);
}
END_TEST

static const struct {
    const char *a, *b;
    int cmp;
} cmps[] = {
    {"0", "0", 0},      {"100m", "50m", 1},  {"50m", "100m", -1},     {"10000T", "100Gi", 1},
    {"1Ki", "1024", 0}, {"1k", "1Ki", -1},   {"1e3", "1k", 0},        {"-1", "1n", -1},
    {"-1n", "-2n", 1},  {"0Gi", "-0", 0},    {"1e27", "-1e27", 1},    {"9.01", "9010m", 0},
    {"800m", "1", -1},  {"800m", "790m", 1}, {"1.000000001", "1", 1},
};

START_TEST(test_cmp_min_max_sign)
{
    quantity_t a = P(cmps[_i].a), b = P(cmps[_i].b);
    int c = quantity_cmp(a, b);

    ck_assert_msg(c == cmps[_i].cmp, "%s vs %s: %d", cmps[_i].a, cmps[_i].b, c);
    ck_assert_int_eq(quantity_cmp(b, a), -cmps[_i].cmp);
    ck_assert_int_eq(quantity_cmp(quantity_max(a, b), c >= 0 ? a : b), 0);
    ck_assert_int_eq(quantity_cmp(quantity_min(a, b), c <= 0 ? a : b), 0);
    ck_assert_int_eq(quantity_sign(a), quantity_cmp(a, quantity_zero()));
}
END_TEST

START_TEST(test_constructors)
{
    char buf[QUANTITY_STR_MAX];

    /* Kubernetes TestNewSet / TestMilliNewSet */
    ck_assert_str_eq(quantity_format(quantity_from_int(1, QUANTITY_DECIMAL_SI), buf), "1");
    ck_assert_str_eq(quantity_format(quantity_from_int(1000, QUANTITY_DECIMAL_SI), buf), "1k");
    ck_assert_str_eq(quantity_format(quantity_from_int(1234000, QUANTITY_DECIMAL_SI), buf),
                     "1234k");
    ck_assert_str_eq(quantity_format(quantity_from_int(1024, QUANTITY_BINARY_SI), buf), "1Ki");
    ck_assert_str_eq(quantity_format(quantity_from_int(1000000, QUANTITY_DECIMAL_EXP), buf), "1e6");
    ck_assert_str_eq(quantity_format(quantity_from_int(1024 * 1024, QUANTITY_BINARY_SI), buf),
                     "1Mi");
    ck_assert_str_eq(quantity_format(quantity_from_int(5, QUANTITY_BINARY_SI), buf), "5");
    ck_assert_str_eq(quantity_format(quantity_from_int(1025, QUANTITY_BINARY_SI), buf), "1025");
    ck_assert_str_eq(quantity_format(quantity_from_int(INT64_MIN, QUANTITY_DECIMAL_SI), buf),
                     "-9223372036854775808");
    ck_assert_str_eq(quantity_format(quantity_from_milli(1), buf), "1m");
    ck_assert_str_eq(quantity_format(quantity_from_milli(1000), buf), "1");
    ck_assert_str_eq(quantity_format(quantity_from_milli(1234000), buf), "1234");
    ck_assert_str_eq(quantity_format(quantity_from_milli(1500), buf), "1500m");
    ck_assert_str_eq(quantity_format(quantity_from_milli(-250), buf), "-250m");
    ck_assert_str_eq(quantity_format(quantity_zero(), buf), "0");
    ck_assert_int_eq(quantity_sign(quantity_zero()), 0);
}
END_TEST

START_TEST(test_format_extremes_fit)
{
    char buf[QUANTITY_STR_MAX];
    quantity_t q = {QUANTITY_NANO_MIN + 1, QUANTITY_DECIMAL_SI};

    ck_assert_str_eq(quantity_format(q, buf), "-999999999999999999999999999999999999n");
    q.format = QUANTITY_DECIMAL_EXP;
    ck_assert_str_eq(quantity_format(q, buf), "-999999999999999999999999999999999999e-9");
    q.format = QUANTITY_BINARY_SI;
    ck_assert_str_eq(quantity_format(q, buf), "-999999999999999999999999999999999999n");
    q.nano = QUANTITY_NANO_MIN; /* 10^27 = 2^27 * 5^27: two factors of 1024 */
    ck_assert_str_eq(quantity_format(q, buf), "-953674316406250000000Mi");
    q.format = (quantity_format_t)42; /* unknown: decimal exponent, as Kubernetes */
    q.nano = 1000000000000LL;
    ck_assert_str_eq(quantity_format(q, buf), "1e3");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quantity");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    tcase_add_loop_test(tc, test_parse_canonical, 0, (int)ARRAY_SIZE(canon));
    tcase_add_loop_test(tc, test_parse_signed, 0, (int)ARRAY_SIZE(canon));
    tcase_add_loop_test(tc, test_canonical_round_trip, 0, (int)ARRAY_SIZE(canon));
    tcase_add_loop_test(tc, test_parse_errors, 0, (int)ARRAY_SIZE(bad));
    tcase_add_test(tc, test_parse_uses_len_not_nul);
    tcase_add_test(tc, test_parse_error_truncates_long_text);
    tcase_add_loop_test(tc, test_add_sub, 0, (int)ARRAY_SIZE(arith));
    tcase_add_loop_test(tc, test_mul, 0, (int)ARRAY_SIZE(muls));
    tcase_add_test(tc, test_arith_rejects_out_of_range_operands);
    tcase_add_loop_test(tc, test_value_and_milli_value, 0, (int)ARRAY_SIZE(values));
    tcase_add_loop_test(tc, test_cmp_min_max_sign, 0, (int)ARRAY_SIZE(cmps));
    tcase_add_test(tc, test_constructors);
    tcase_add_test(tc, test_format_extremes_fit);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    /* Hundreds of table rows: forking an ASan process for each costs minutes, and the rows
     * share no state, so run them in-process (a failed row still reports and continues). */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
