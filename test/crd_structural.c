/* crd_structural -- structural-schema rules and CustomResourceDefinition object checks. */
/* SPDX-License-Identifier: Apache-2.0 */
#include "crd_schema.h"
#include "crd_schema_int.h"

#include "model/yaml.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Follows k8s.io/apiextensions-apiserver: pkg/apiserver/schema/validation.go (structural
 * invariants and completeness) and pkg/apis/apiextensions/validation (the CRD object). Where a
 * check is stricter than the API server, the comment at the check says why.
 */

/* ------------------------------------------------------------------------------------------ */
/* Structural schemas                                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef enum { LVL_ROOT, LVL_ITEM, LVL_FIELD } level_t;

/* JSONSchemaProps fields of apiextensions.k8s.io/v1 (1.2x) and the JSON kind each must have
 * ('s' string, 'n' number, 'u' non-negative integer, 'b' boolean, 'a' array, 'o' object,
 * '*' anything, 'x' schema or boolean). */
static const struct {
    const char *name;
    char kind;
} schema_fields[] = {
    {"description", 's'},
    {"type", 's'},
    {"format", 's'},
    {"title", 's'},
    {"default", '*'},
    {"maximum", 'n'},
    {"exclusiveMaximum", 'b'},
    {"minimum", 'n'},
    {"exclusiveMinimum", 'b'},
    {"maxLength", 'u'},
    {"minLength", 'u'},
    {"pattern", 's'},
    {"maxItems", 'u'},
    {"minItems", 'u'},
    {"uniqueItems", 'b'},
    {"multipleOf", 'n'},
    {"enum", 'a'},
    {"maxProperties", 'u'},
    {"minProperties", 'u'},
    {"required", 'a'},
    {"items", 'o'},
    {"allOf", 'a'},
    {"oneOf", 'a'},
    {"anyOf", 'a'},
    {"not", 'o'},
    {"properties", 'o'},
    {"additionalProperties", 'x'},
    {"nullable", 'b'},
    {"example", '*'},
    {"externalDocs", 'o'},
    {"x-kubernetes-preserve-unknown-fields", 'b'},
    {"x-kubernetes-embedded-resource", 'b'},
    {"x-kubernetes-int-or-string", 'b'},
    {"x-kubernetes-list-map-keys", 'a'},
    {"x-kubernetes-list-type", 's'},
    {"x-kubernetes-map-type", 's'},
    {"x-kubernetes-validations", 'a'},
};

/* Fields of JSONSchemaProps that CRDs refuse outright. */
static const char *const forbidden_fields[] = {
    "$ref", "$schema", "id", "definitions", "dependencies", "additionalItems", "patternProperties"};

static void check_field_kinds(const json_t *s, const char *path, diags_t *d)
{
    const char *key;
    const json_t *v;
    char p[CRD_PATH_LEN];

    json_object_foreach((json_t *)s, key, v)
    {
        char kind = 0;
        long long u;
        crd__path_field(p, path, key);
        for (size_t i = 0; i < ARRAY_SIZE(schema_fields); i++)
            if (strcmp(key, schema_fields[i].name) == 0)
                kind = schema_fields[i].kind;
        for (size_t i = 0; i < ARRAY_SIZE(forbidden_fields); i++)
            if (strcmp(key, forbidden_fields[i]) == 0)
                kind = '!';
        switch (kind) {
        case 0:
            /* Stricter than the API server, which drops unknown fields of a CRD silently: a
             * misspelt keyword would otherwise disable a check without anyone noticing. */
            diags_error(d, p, "unknown field: not a JSONSchemaProps field of apiextensions/v1");
            break;
        case '!':
            diags_error(d, p, "Forbidden: %s is not supported in CustomResourceDefinitions", key);
            break;
        case 's':
            if (!json_is_string(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a string", crd__json_kind(v));
            break;
        case 'n':
            if (!json_is_number(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a number", crd__json_kind(v));
            break;
        case 'u':
            if (!crd__json_integral(v, &u) || u < 0)
                diags_error(d, p, "Invalid value: must be a non-negative integer");
            break;
        case 'b':
            if (!json_is_boolean(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a boolean", crd__json_kind(v));
            break;
        case 'a':
            if (!json_is_array(v))
                diags_error(d, p, "Invalid value: \"%s\": must be an array", crd__json_kind(v));
            break;
        case 'o':
            if (!json_is_object(v))
                diags_error(d, p, "Invalid value: \"%s\": must be an object (a single schema)",
                            crd__json_kind(v));
            break;
        case 'x':
            if (!json_is_object(v) && !json_is_boolean(v))
                diags_error(d, p, "Invalid value: \"%s\": must be a schema or a boolean",
                            crd__json_kind(v));
            break;
        default:
            break;
        }
    }
}

/* A pattern must compile (Go RE2 in the API server; here its POSIX translation). */
static void check_pattern(const json_t *s, const char *path, diags_t *d)
{
    const char *pattern = crd__jstr(s, "pattern");
    regex_t re;
    err_msg_t msg;
    err_t rc;
    char p[CRD_PATH_LEN];

    if (pattern == NULL)
        return;
    rc = crd_pattern_compile(pattern, &re, &msg);
    if (rc == ERR_OK) {
        regfree(&re);
        return;
    }
    crd__path_field(p, path, "pattern");
    diags_error(d, p, "Invalid value: %s: %s", msg.text,
                rc == ERR_UNSUPPORTED ? "this checker cannot translate it to POSIX"
                                      : "must be a valid regular expression");
}

static void check_bounds(const json_t *s, const char *path, const char *min_name,
                         const char *max_name, diags_t *d)
{
    const json_t *lo = json_object_get(s, min_name), *hi = json_object_get(s, max_name);
    char p[CRD_PATH_LEN];

    if (json_is_number(lo) && json_is_number(hi) && crd__json_num(lo) > crd__json_num(hi)) {
        crd__path_field(p, path, min_name);
        diags_error(d, p, "Invalid value: %g: must not be greater than %s (%g)", crd__json_num(lo),
                    max_name, crd__json_num(hi));
    }
}

static void check_validations(const json_t *rules, const char *path, diags_t *d)
{
    static const char *const reasons[] = {"FieldValueInvalid", "FieldValueForbidden",
                                          "FieldValueRequired", "FieldValueDuplicate"};
    const json_t *rule;
    size_t i;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];

    json_array_foreach(rules, i, rule)
    {
        const char *key, *text;
        const json_t *v;
        crd__path_index(p, path, i);
        if (!json_is_object(rule)) {
            diags_error(d, p, "Invalid value: must be an object with a rule");
            continue;
        }
        text = crd__jstr(rule, "rule");
        if (text == NULL || text[0] == '\0') {
            crd__path_field(q, p, "rule");
            diags_error(d, q, "Required value: rule must be a non-empty string");
        }
        json_object_foreach((json_t *)rule, key, v)
        {
            crd__path_field(q, p, key);
            if (strcmp(key, "rule") == 0)
                continue;
            if (strcmp(key, "message") == 0 || strcmp(key, "messageExpression") == 0 ||
                strcmp(key, "fieldPath") == 0) {
                const char *m = json_string_value(v);
                if (m == NULL || m[0] == '\0')
                    diags_error(d, q, "Invalid value: must be a non-empty string");
                else if (strcmp(key, "message") == 0 && strchr(m, '\n') != NULL)
                    diags_error(d, q, "Invalid value: message must not contain line breaks");
            } else if (strcmp(key, "reason") == 0) {
                bool ok = false;
                for (size_t r = 0; r < ARRAY_SIZE(reasons); r++)
                    ok = ok || (json_is_string(v) && strcmp(json_string_value(v), reasons[r]) == 0);
                if (!ok)
                    diags_error(d, q,
                                "Unsupported value: supported values: FieldValueInvalid, "
                                "FieldValueForbidden, FieldValueRequired, "
                                "FieldValueDuplicate");
            } else if (strcmp(key, "optionalOldSelf") == 0) {
                if (!json_is_boolean(v))
                    diags_error(d, q, "Invalid value: must be a boolean");
            } else {
                diags_error(d, q, "unknown field of a ValidationRule");
            }
        }
    }
}

static bool is_int_or_string_anyof(const json_t *any)
{
    const json_t *a = json_array_get(any, 0), *b = json_array_get(any, 1);

    return json_array_size(any) == 2 && json_object_size(a) == 1 && json_object_size(b) == 1 &&
           json_is_string(json_object_get(a, "type")) &&
           strcmp(crd__jstr(a, "type"), "integer") == 0 &&
           json_is_string(json_object_get(b, "type")) &&
           strcmp(crd__jstr(b, "type"), "string") == 0;
}

/* Inside anyOf/allOf/oneOf/not only value validations may appear, and every field they name must
 * also be specified outside (`outer`, possibly NULL): "structural completeness". */
static void check_nested(const json_t *n, const json_t *outer, const char *path, diags_t *d)
{
    static const char *const generic[] = {"type",  "additionalProperties", "default",
                                          "title", "description",          "nullable"};
    const json_t *props = json_object_get(n, "properties"), *v;
    const char *key;
    char p[CRD_PATH_LEN];
    size_t i;

    if (!json_is_object(n)) {
        diags_error(d, path, "Invalid value: must be a schema object");
        return;
    }
    check_field_kinds(n, path, d);
    for (i = 0; i < ARRAY_SIZE(generic); i++) {
        if (json_object_get(n, generic[i]) != NULL &&
            !(strcmp(generic[i], "nullable") == 0 && !crd__jtrue(n, "nullable"))) {
            crd__path_field(p, path, generic[i]);
            diags_error(d, p, "Forbidden: must be empty to be structural");
        }
    }
    json_object_foreach((json_t *)n, key, v)
    {
        if (strncmp(key, "x-kubernetes-", 13) == 0 && !json_is_false(v)) {
            crd__path_field(p, path, key);
            diags_error(d, p, "Forbidden: must be undefined to be structural");
        }
    }
    json_object_foreach((json_t *)props, key, v)
    {
        const json_t *o = json_object_get(json_object_get(outer, "properties"), key);
        crd__path_key(p, path, "properties", key);
        if (strcmp(key, "metadata") == 0)
            diags_error(d, p, "Forbidden: must not be specified in a nested context");
        if (o == NULL && !crd__jtrue(outer, "x-kubernetes-preserve-unknown-fields"))
            diags_error(d, p,
                        "Required value: must be specified outside of anyOf/allOf/oneOf/not "
                        "(structural completeness)");
        check_nested(v, o, p, d);
    }
    if (json_object_get(n, "items") != NULL) {
        crd__path_field(p, path, "items");
        check_nested(json_object_get(n, "items"), json_object_get(outer, "items"), p, d);
    }
    check_pattern(n, path, d);
}

static void check_junctors(const json_t *s, const char *path, diags_t *d)
{
    static const char *const arrays[] = {"allOf", "anyOf", "oneOf"};
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    const json_t *sub;
    size_t i;

    for (size_t a = 0; a < ARRAY_SIZE(arrays); a++) {
        const json_t *list = json_object_get(s, arrays[a]);
        /* The two int-or-string shapes are the only place where types may appear nested. */
        if (strcmp(arrays[a], "anyOf") == 0 && crd__jtrue(s, "x-kubernetes-int-or-string") &&
            is_int_or_string_anyof(list))
            continue;
        crd__path_field(p, path, arrays[a]);
        json_array_foreach(list, i, sub)
        {
            crd__path_index(q, p, i);
            if (strcmp(arrays[a], "allOf") == 0 && i == 0 &&
                crd__jtrue(s, "x-kubernetes-int-or-string") &&
                is_int_or_string_anyof(json_object_get(sub, "anyOf")) && json_object_size(sub) == 1)
                continue;
            check_nested(sub, s, q, d);
        }
    }
    if (json_object_get(s, "not") != NULL) {
        crd__path_field(p, path, "not");
        check_nested(json_object_get(s, "not"), s, p, d);
    }
}

static void check_list_extensions(const json_t *s, const char *path, diags_t *d)
{
    const char *type = crd__jstr(s, "type"), *lt = crd__jstr(s, "x-kubernetes-list-type");
    const char *mt = crd__jstr(s, "x-kubernetes-map-type");
    const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
    const json_t *items = json_object_get(s, "items");
    const char *itype = crd__jstr(items, "type");
    char p[CRD_PATH_LEN];

    if (mt != NULL) {
        crd__path_field(p, path, "x-kubernetes-map-type");
        if (strcmp(mt, "granular") != 0 && strcmp(mt, "atomic") != 0)
            diags_error(
                d, p, "Unsupported value: \"%s\": supported values: \"granular\", \"atomic\"", mt);
        if (type == NULL || strcmp(type, "object") != 0)
            diags_error(d, p, "Invalid value: must only be used if type is object");
    }
    if (keys != NULL && (lt == NULL || strcmp(lt, "map") != 0)) {
        crd__path_field(p, path, "x-kubernetes-list-map-keys");
        diags_error(d, p, "Forbidden: must not be set if x-kubernetes-list-type is not map");
    }
    if (lt == NULL)
        return;
    crd__path_field(p, path, "x-kubernetes-list-type");
    if (type == NULL || strcmp(type, "array") != 0) {
        diags_error(d, p, "Invalid value: must only be used if type is array");
        return;
    }
    if (strcmp(lt, "atomic") == 0)
        return;
    if (strcmp(lt, "set") == 0) {
        if (!crd__is_scalar_type(itype) &&
            !(itype != NULL && strcmp(itype, "object") == 0 &&
              crd__jstr(items, "x-kubernetes-map-type") != NULL &&
              strcmp(crd__jstr(items, "x-kubernetes-map-type"), "atomic") == 0) &&
            !(itype != NULL && strcmp(itype, "array") == 0 &&
              crd__jstr(items, "x-kubernetes-list-type") != NULL &&
              strcmp(crd__jstr(items, "x-kubernetes-list-type"), "atomic") == 0))
            diags_error(d, p, "Invalid value: \"set\": items of a set must be scalars or atomic");
        return;
    }
    if (strcmp(lt, "map") != 0) {
        diags_error(
            d, p, "Unsupported value: \"%s\": supported values: \"atomic\", \"set\", \"map\"", lt);
        return;
    }
    if (itype == NULL || strcmp(itype, "object") != 0)
        diags_error(d, p, "Invalid value: \"map\": items must be of type object");
    if (json_array_size(keys) == 0) {
        crd__path_field(p, path, "x-kubernetes-list-map-keys");
        diags_error(d, p, "Required value: must not be empty if x-kubernetes-list-type is map");
        return;
    }
    for (size_t i = 0; i < json_array_size(keys); i++) {
        const char *key = json_string_value(json_array_get(keys, i));
        const json_t *ks = json_object_get(json_object_get(items, "properties"), key ? key : "");
        bool required = false;
        size_t j;
        const json_t *r;
        char q[CRD_PATH_LEN];
        crd__path_field(p, path, "x-kubernetes-list-map-keys");
        crd__path_index(q, p, i);
        if (key == NULL || ks == NULL) {
            diags_error(d, q, "Invalid value: entries must all be names of item properties");
            continue;
        }
        if (!crd__is_scalar_type(crd__jstr(ks, "type")))
            diags_error(d, q, "Invalid value: \"%s\": must be a scalar property", key);
        json_array_foreach(json_object_get(items, "required"), j, r) required =
            required || (json_is_string(r) && strcmp(json_string_value(r), key) == 0);
        if (!required && json_object_get(ks, "default") == NULL)
            diags_error(d, q, "Invalid value: \"%s\": map keys must be required or have a default",
                        key);
    }
}

static void check_node(const json_t *s, const char *path, level_t lvl, bool in_metadata,
                       diags_t *d);

static void check_root_metadata(const json_t *meta, const char *path, diags_t *d)
{
    const char *key;
    const json_t *v;
    bool ok = json_is_object(meta);

    json_object_foreach((json_t *)meta, key, v)
    {
        if (strcmp(key, "type") == 0)
            continue;
        if (strcmp(key, "properties") == 0) {
            const char *pk;
            const json_t *pv;
            json_object_foreach((json_t *)v, pk, pv)
            {
                (void)pv;
                ok = ok && (strcmp(pk, "name") == 0 || strcmp(pk, "generateName") == 0);
            }
            continue;
        }
        ok = false;
    }
    if (!ok)
        diags_error(d, path,
                    "Forbidden: must not specify anything other than name and "
                    "generateName, but metadata is implicitly specified");
}

static void check_node(const json_t *s, const char *path, level_t lvl, bool in_metadata, diags_t *d)
{
    static const char *const types[] = {"object",  "array",  "string",
                                        "integer", "number", "boolean"};
    const char *type = crd__jstr(s, "type");
    bool ios = crd__jtrue(s, "x-kubernetes-int-or-string");
    bool preserve = crd__jtrue(s, "x-kubernetes-preserve-unknown-fields");
    bool embedded = crd__jtrue(s, "x-kubernetes-embedded-resource");
    const json_t *props = json_object_get(s, "properties");
    const json_t *addl = json_object_get(s, "additionalProperties");
    const json_t *items = json_object_get(s, "items");
    const json_t *required = json_object_get(s, "required");
    const json_t *v;
    const char *key;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    size_t i;

    if (!json_is_object(s)) {
        diags_error(d, path, "Invalid value: \"%s\": must be a schema object", crd__json_kind(s));
        return;
    }
    check_field_kinds(s, path, d);

    /* type */
    crd__path_field(p, path, "type");
    if (type != NULL) {
        bool known = false;
        for (i = 0; i < ARRAY_SIZE(types); i++)
            known = known || strcmp(type, types[i]) == 0;
        if (!known)
            diags_error(d, p,
                        "Unsupported value: \"%s\": supported values: \"array\", "
                        "\"boolean\", \"integer\", \"number\", \"object\", \"string\"",
                        type);
    }
    if (embedded && (type == NULL || strcmp(type, "object") != 0)) {
        diags_error(d, p,
                    "Required value: must be object if x-kubernetes-embedded-resource is true");
    } else if (type == NULL && !ios && !preserve) {
        diags_error(d, p, "Required value: must not be empty %s",
                    lvl == LVL_ROOT   ? "at the root"
                    : lvl == LVL_ITEM ? "for specified array items"
                                      : "for specified object fields");
    }
    if (ios && type != NULL)
        diags_error(d, p,
                    "Invalid value: \"%s\": must be empty if x-kubernetes-int-or-string is "
                    "true (the value may be either)",
                    type);
    if (lvl == LVL_ROOT && type != NULL && strcmp(type, "object") != 0)
        diags_error(d, p, "Invalid value: \"%s\": must be object at the root", type);

    /* extensions */
    if (json_is_false(json_object_get(s, "x-kubernetes-preserve-unknown-fields"))) {
        crd__path_field(p, path, "x-kubernetes-preserve-unknown-fields");
        diags_error(d, p, "Invalid value: false: must be true or undefined");
    }
    if (ios && preserve) {
        crd__path_field(p, path, "x-kubernetes-preserve-unknown-fields");
        diags_error(d, p,
                    "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    if (ios && embedded) {
        crd__path_field(p, path, "x-kubernetes-embedded-resource");
        diags_error(d, p,
                    "Invalid value: true: must be false if x-kubernetes-int-or-string is true");
    }
    if (embedded && !preserve && json_object_size(props) == 0) {
        crd__path_field(p, path, "properties");
        diags_error(d, p,
                    "Required value: must not be empty if x-kubernetes-embedded-resource is "
                    "true without x-kubernetes-preserve-unknown-fields");
    }
    if (lvl == LVL_ROOT && (ios || embedded))
        diags_error(d, path,
                    "Forbidden: x-kubernetes-int-or-string and "
                    "x-kubernetes-embedded-resource must not be used at the root");

    /* arrays */
    if (type != NULL && strcmp(type, "array") == 0 && items == NULL) {
        crd__path_field(p, path, "items");
        diags_error(d, p, "Required value: must be specified");
    }
    if (items != NULL) {
        crd__path_field(p, path, "items");
        if (type != NULL && strcmp(type, "array") != 0)
            diags_error(d, p, "Forbidden: only allowed for type array");
        if (json_is_object(items))
            check_node(items, p, LVL_ITEM, in_metadata, d);
    }

    /* objects */
    if (props != NULL && type != NULL && strcmp(type, "object") != 0) {
        crd__path_field(p, path, "properties");
        diags_error(d, p, "Forbidden: only allowed for type object");
    }
    json_object_foreach((json_t *)props, key, v)
    {
        crd__path_key(p, path, "properties", key);
        if (lvl == LVL_ROOT && strcmp(key, "metadata") == 0) {
            if (!json_is_string(json_object_get(v, "type")) ||
                strcmp(crd__jstr(v, "type"), "object"))
                diags_error(d, p, "Invalid value: type must be object");
            check_root_metadata(v, p, d);
            check_node(v, p, LVL_FIELD, true, d);
            continue;
        }
        if ((lvl == LVL_ROOT || embedded) &&
            (strcmp(key, "kind") == 0 || strcmp(key, "apiVersion") == 0) &&
            (crd__jstr(v, "type") == NULL || strcmp(crd__jstr(v, "type"), "string") != 0))
            diags_error(d, p, "Invalid value: type must be string");
        check_node(v, p, LVL_FIELD, in_metadata, d);
    }
    if (addl != NULL) {
        crd__path_field(p, path, "additionalProperties");
        if (lvl == LVL_ROOT)
            diags_error(d, p, "Forbidden: must not be used at the root");
        if (json_object_size(props) > 0)
            diags_error(d, p,
                        "Forbidden: additionalProperties and properties are mutual exclusive");
        if (json_is_false(addl))
            diags_error(d, p,
                        "Forbidden: additionalProperties: false is not structural (unknown "
                        "fields are pruned instead)");
        if (json_is_object(addl))
            check_node(addl, p, LVL_FIELD, in_metadata, d);
    }
    json_array_foreach(required, i, v)
    {
        crd__path_field(p, path, "required");
        crd__path_index(q, p, i);
        if (!json_is_string(v)) {
            diags_error(d, q, "Invalid value: must be a string");
        } else if (json_object_get(props, json_string_value(v)) == NULL && !preserve &&
                   addl == NULL) {
            /* Stricter than the API server: such a field would be pruned before it is checked,
             * so every object would be refused. */
            diags_error(d, q, "Invalid value: \"%s\": required field is not declared in properties",
                        json_string_value(v));
        }
    }

    /* value validations */
    if (crd__jtrue(s, "uniqueItems")) {
        crd__path_field(p, path, "uniqueItems");
        diags_error(d, p,
                    "Forbidden: uniqueItems cannot be set to true since the runtime "
                    "complexity becomes quadratic");
    }
    check_pattern(s, path, d);
    check_bounds(s, path, "minimum", "maximum", d);
    check_bounds(s, path, "minLength", "maxLength", d);
    check_bounds(s, path, "minItems", "maxItems", d);
    check_bounds(s, path, "minProperties", "maxProperties", d);
    check_list_extensions(s, path, d);
    check_junctors(s, path, d);
    if (json_object_get(s, "x-kubernetes-validations") != NULL) {
        crd__path_field(p, path, "x-kubernetes-validations");
        check_validations(json_object_get(s, "x-kubernetes-validations"), p, d);
    }

    /* enum values and the default must be valid against this very schema */
    json_array_foreach(json_object_get(s, "enum"), i, v)
    {
        crd__path_field(p, path, "enum");
        crd__path_index(q, p, i);
        crd_schema_validate(s, v, q, d);
    }
    if (json_object_get(s, "default") != NULL) {
        crd__path_field(p, path, "default");
        if (in_metadata)
            diags_error(d, p, "Forbidden: must not be set inside metadata");
        else
            crd_schema_validate(s, json_object_get(s, "default"), p, d);
    }
}

void crd_schema_check(const json_t *schema, const char *path, diags_t *d)
{
    check_node(schema, path ? path : "", LVL_ROOT, false, d);
}

/* ------------------------------------------------------------------------------------------ */
/* CustomResourceDefinition objects                                                           */
/* ------------------------------------------------------------------------------------------ */

const json_t *crd_version_schema(const json_t *crd, const char *version)
{
    const json_t *versions = json_object_get(json_object_get(crd, "spec"), "versions"), *v;
    size_t i;

    json_array_foreach(versions, i, v)
    {
        const char *name = crd__jstr(v, "name");
        if (name != NULL && strcmp(name, version) == 0 && crd__jtrue(v, "served"))
            return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
    }
    return NULL;
}

/* The schema node a printer-column / selectable-field JSONPath designates, NULL when the path
 * leaves the schema. Supports ".a.b", ".a[0]", ".a[*]" and ".a[?(@.x=='y')].b". Paths under
 * .metadata resolve to `meta_marker` (ObjectMeta is not in the schema). */
static const json_t *resolve_json_path(const json_t *schema, const char *jp, const json_t *marker)
{
    const json_t *node = schema;
    const char *p = jp;

    if (strncmp(jp, ".metadata.", 10) == 0)
        return marker;
    if (p[0] != '.')
        return NULL;
    while (*p != '\0') {
        char name[256];
        size_t n = 0;
        if (*p == '.') {
            p++;
            while (*p != '\0' && *p != '.' && *p != '[' && n + 1 < sizeof(name))
                name[n++] = *p++;
            name[n] = '\0';
            if (n == 0)
                return NULL;
            if (json_object_get(json_object_get(node, "properties"), name) != NULL)
                node = json_object_get(json_object_get(node, "properties"), name);
            else if (json_is_object(json_object_get(node, "additionalProperties")))
                node = json_object_get(node, "additionalProperties");
            else if (crd__jtrue(node, "x-kubernetes-preserve-unknown-fields"))
                return marker;
            else
                return NULL;
        } else if (*p == '[') {
            int depth = 0;
            for (; *p != '\0'; p++) {
                depth += (*p == '[') - (*p == ']');
                if (depth == 0)
                    break;
            }
            if (*p != ']' || crd__jstr(node, "type") == NULL ||
                strcmp(crd__jstr(node, "type"), "array"))
                return NULL;
            p++;
            node = json_object_get(node, "items");
        } else {
            return NULL;
        }
    }
    return node;
}

static void check_names(const json_t *crd, const json_t *spec, diags_t *d)
{
    static const char *const name_fields[] = {"plural",   "singular",   "kind",
                                              "listKind", "shortNames", "categories"};
    const json_t *names = json_object_get(spec, "names"), *v;
    const char *group = crd__jstr(spec, "group"), *plural = crd__jstr(names, "plural");
    const char *kind = crd__jstr(names, "kind"), *list_kind = crd__jstr(names, "listKind");
    const char *singular = crd__jstr(names, "singular"), *name, *key;
    char p[CRD_PATH_LEN], want[512];
    size_t i;

    if (group == NULL || strchr(group, '.') == NULL || !crd__dns_subdomain(group))
        diags_error(d, "spec.group", "Invalid value: should be a domain with at least one dot");
    if (plural == NULL || !crd__dns1035_label(plural))
        diags_error(d, "spec.names.plural", "Invalid value: must be a lowercase DNS-1035 label");
    if (singular == NULL || !crd__dns1035_label(singular))
        diags_error(d, "spec.names.singular", "Invalid value: must be a lowercase DNS-1035 label");
    if (kind == NULL || kind[0] < 'A' || kind[0] > 'Z')
        diags_error(d, "spec.names.kind", "Invalid value: must be a CamelCase kind");
    snprintf(want, sizeof(want), "%sList", kind ? kind : "");
    if (list_kind == NULL || strcmp(list_kind, want) != 0)
        diags_error(d, "spec.names.listKind", "Invalid value: should be %s", want);
    json_array_foreach(json_object_get(names, "shortNames"), i, v)
    {
        crd__path_index(p, "spec.names.shortNames", i);
        if (!json_is_string(v) || !crd__dns1035_label(json_string_value(v)))
            diags_error(d, p, "Invalid value: must be a lowercase DNS-1035 label");
    }
    json_object_foreach((json_t *)names, key, v)
    {
        bool known = false;
        for (i = 0; i < ARRAY_SIZE(name_fields); i++)
            known = known || strcmp(key, name_fields[i]) == 0;
        if (!known) {
            crd__path_field(p, "spec.names", key);
            diags_error(d, p, "unknown field of CustomResourceDefinitionNames");
        }
    }
    name = crd__jstr(json_object_get(crd, "metadata"), "name");
    snprintf(want, sizeof(want), "%s.%s", plural ? plural : "", group ? group : "");
    if (name == NULL || strcmp(name, want) != 0)
        diags_error(d, "metadata.name",
                    "Invalid value: must be spec.names.plural+\".\"+spec.group "
                    "(%s)",
                    want);
}

static void check_columns(const json_t *ver, const json_t *schema, const char *path, diags_t *d)
{
    static const char *const types[] = {"integer", "number", "string", "boolean", "date"};
    const json_t *cols = json_object_get(ver, "additionalPrinterColumns"), *col;
    json_t *meta_marker = json_object();
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    size_t i;

    json_array_foreach(cols, i, col)
    {
        const char *name = crd__jstr(col, "name"), *type = crd__jstr(col, "type");
        const char *jp = crd__jstr(col, "jsonPath");
        long long prio;
        bool known = false;
        crd__path_field(p, path, "additionalPrinterColumns");
        crd__path_index(q, p, i);
        if (name == NULL || name[0] == '\0')
            diags_error(d, q, "name: Required value");
        for (size_t t = 0; type != NULL && t < ARRAY_SIZE(types); t++)
            known = known || strcmp(type, types[t]) == 0;
        if (!known)
            diags_error(d, q,
                        "type: Unsupported value: supported values: integer, number, string, "
                        "boolean, date");
        if (json_object_get(col, "priority") != NULL &&
            (!crd__json_integral(json_object_get(col, "priority"), &prio) || prio < 0))
            diags_error(d, q, "priority: Invalid value: must be a non-negative integer");
        if (jp == NULL || resolve_json_path(schema, jp, meta_marker) == NULL)
            diags_error(d, q, "jsonPath: Invalid value: \"%s\": does not resolve in the schema",
                        jp ? jp : "");
        for (size_t j = 0; j < i && name != NULL; j++) {
            const char *other = crd__jstr(json_array_get(cols, j), "name");
            if (other != NULL && strcmp(other, name) == 0)
                diags_error(d, q, "name: Duplicate value: \"%s\"", name);
        }
    }
    json_array_foreach(json_object_get(ver, "selectableFields"), i, col)
    {
        const char *jp = crd__jstr(col, "jsonPath");
        const json_t *node = jp ? resolve_json_path(schema, jp, meta_marker) : NULL;
        crd__path_field(p, path, "selectableFields");
        crd__path_index(q, p, i);
        if (node == NULL || node == meta_marker)
            diags_error(d, q,
                        "jsonPath: Invalid value: \"%s\": must resolve to a field of the "
                        "schema",
                        jp ? jp : "");
        else if (crd__jstr(node, "type") == NULL || (strcmp(crd__jstr(node, "type"), "string") &&
                                                     strcmp(crd__jstr(node, "type"), "integer") &&
                                                     strcmp(crd__jstr(node, "type"), "boolean")))
            diags_error(d, q,
                        "jsonPath: Invalid value: must point to a string, integer or "
                        "boolean field");
    }
    if (json_array_size(json_object_get(ver, "selectableFields")) > 8) {
        crd__path_field(p, path, "selectableFields");
        diags_error(d, p, "Too many: must have at most 8 items");
    }
    json_decref(meta_marker);
}

/* Remove the "description" of every schema node under `n` (documentation may differ between
 * versions). `props` is true when `n` is a properties map, whose keys are field names (WPC has a
 * field called "description"). */
static void strip_descriptions_in(json_t *n, bool props)
{
    const char *key;
    json_t *v;
    size_t i;

    if (json_is_object(n)) {
        if (!props && json_is_string(json_object_get(n, "description")))
            json_object_del(n, "description");
        json_object_foreach(n, key, v)
            strip_descriptions_in(v, !props && strcmp(key, "properties") == 0);
    } else if (json_is_array(n)) {
        json_array_foreach(n, i, v) strip_descriptions_in(v, false);
    }
}

static json_t *strip_descriptions(const json_t *s)
{
    json_t *copy = json_deep_copy(s);

    if (copy != NULL)
        strip_descriptions_in(copy, false);
    return copy;
}

/* spec.conversion as apiextensions/v1 validates it (ValidateCustomResourceConversion): strategy
 * None without a webhook, or Webhook with conversionReviewVersions naming v1 (or v1beta1) and a
 * clientConfig with exactly one of url (https, no query or fragment) and service (name,
 * namespace, a path starting with '/', a port in 1..65535); sluice serves /convert. */
static void check_conversion(const json_t *conv, diags_t *d)
{
    const char *strategy = crd__jstr(conv, "strategy"), *url, *path;
    const json_t *wh = json_object_get(conv, "webhook"), *cc, *svc, *v, *port;
    bool known = false;
    size_t i;

    if (conv == NULL)
        return;
    if (strategy == NULL || (strcmp(strategy, "None") != 0 && strcmp(strategy, "Webhook") != 0)) {
        diags_error(d, "spec.conversion.strategy",
                    "Unsupported value: supported values: \"None\", \"Webhook\"");
        return;
    }
    if (strcmp(strategy, "None") == 0) {
        if (wh != NULL)
            diags_error(d, "spec.conversion.webhook",
                        "Forbidden: should be empty if conversion strategy is None");
        return;
    }
    if (!json_is_object(wh)) {
        diags_error(d, "spec.conversion.webhook",
                    "Required value: required when strategy is set to Webhook");
        return;
    }
    json_array_foreach(json_object_get(wh, "conversionReviewVersions"), i, v)
    {
        const char *name = json_string_value(v);
        known =
            known || (name != NULL && (strcmp(name, "v1") == 0 || strcmp(name, "v1beta1") == 0));
        for (size_t j = 0; j < i; j++)
            if (json_equal(v, json_array_get(json_object_get(wh, "conversionReviewVersions"), j)))
                diags_error(d, "spec.conversion.webhook.conversionReviewVersions",
                            "Duplicate value: \"%s\"", name ? name : "?");
    }
    if (!known)
        diags_error(d, "spec.conversion.webhook.conversionReviewVersions",
                    "Invalid value: must include at least one of v1, v1beta1");
    cc = json_object_get(wh, "clientConfig");
    svc = json_object_get(cc, "service");
    url = crd__jstr(cc, "url");
    if (!json_is_object(cc)) {
        diags_error(d, "spec.conversion.webhook.clientConfig",
                    "Required value: required when strategy is set to Webhook");
        return;
    }
    if ((svc != NULL) == (url != NULL)) {
        diags_error(d, "spec.conversion.webhook.clientConfig",
                    "Required value: exactly one of url or service is required");
        return;
    }
    if (url != NULL && (strncmp(url, "https://", 8) != 0 || strpbrk(url, "?#") != NULL))
        diags_error(d, "spec.conversion.webhook.clientConfig.url",
                    "Invalid value: \"%s\": must be an https URL without query or fragment", url);
    if (svc == NULL)
        return;
    if (crd__jstr(svc, "name") == NULL || crd__jstr(svc, "namespace") == NULL)
        diags_error(d, "spec.conversion.webhook.clientConfig.service",
                    "Required value: name and namespace");
    path = crd__jstr(svc, "path");
    if (path != NULL && path[0] != '/')
        diags_error(d, "spec.conversion.webhook.clientConfig.service.path",
                    "Invalid value: \"%s\": must start with a '/'", path);
    port = json_object_get(svc, "port");
    if (port != NULL && (!json_is_integer(port) || json_integer_value(port) < 1 ||
                         json_integer_value(port) > 65535))
        diags_error(d, "spec.conversion.webhook.clientConfig.service.port",
                    "Invalid value: port is not valid: must be between 1 and 65535, inclusive");
}

static void check_versions(const json_t *spec, diags_t *d)
{
    static const char *const version_fields[] = {"name",
                                                 "served",
                                                 "storage",
                                                 "deprecated",
                                                 "deprecationWarning",
                                                 "schema",
                                                 "subresources",
                                                 "additionalPrinterColumns",
                                                 "selectableFields"};
    const json_t *versions = json_object_get(spec, "versions"), *ver, *v;
    const json_t *conv = json_object_get(spec, "conversion");
    const char *strategy = crd__jstr(conv, "strategy");
    size_t i, storage = 0, served = 0;
    char p[CRD_PATH_LEN], q[CRD_PATH_LEN];
    const char *key;

    if (json_array_size(versions) == 0) {
        diags_error(d, "spec.versions", "Required value: must have at least one version");
        return;
    }
    json_array_foreach(versions, i, ver)
    {
        const char *name = crd__jstr(ver, "name"), *warning = crd__jstr(ver, "deprecationWarning");
        const json_t *schema = json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema");
        const json_t *sub = json_object_get(ver, "subresources");
        crd__path_index(p, "spec.versions", i);
        if (name == NULL || !crd__dns1035_label(name))
            diags_error(d, p, "name: Invalid value: must be a DNS-1035 label");
        for (size_t j = 0; j < i && name != NULL; j++) {
            const char *other = crd__jstr(json_array_get(versions, j), "name");
            if (other != NULL && strcmp(other, name) == 0)
                diags_error(d, p, "name: Duplicate value: \"%s\"", name);
        }
        if (!json_is_boolean(json_object_get(ver, "served")) ||
            !json_is_boolean(json_object_get(ver, "storage")))
            diags_error(d, p, "served and storage: Required value: must be booleans");
        storage += crd__jtrue(ver, "storage");
        served += crd__jtrue(ver, "served");
        if (crd__jtrue(ver, "storage") && !crd__jtrue(ver, "served"))
            diags_error(d, p, "storage: Invalid value: the storage version must be served");
        if (warning != NULL && !crd__jtrue(ver, "deprecated"))
            diags_error(d, p,
                        "deprecationWarning: Invalid value: may only be set when deprecated "
                        "is true");
        if (warning != NULL && strlen(warning) > 256)
            diags_error(d, p, "deprecationWarning: Too long: must be at most 256 characters");
        json_object_foreach((json_t *)ver, key, v)
        {
            bool known = false;
            for (size_t f = 0; f < ARRAY_SIZE(version_fields); f++)
                known = known || strcmp(key, version_fields[f]) == 0;
            if (!known) {
                crd__path_field(q, p, key);
                diags_error(d, q, "unknown field of CustomResourceDefinitionVersion");
            }
        }
        json_object_foreach((json_t *)sub, key, v)
        {
            char r[CRD_PATH_LEN];
            crd__path_field(r, p, "subresources");
            crd__path_field(q, r, key);
            if (strcmp(key, "status") == 0 && !(json_is_object(v) && json_object_size(v) == 0))
                diags_error(d, q, "Invalid value: must be {}");
            else if (strcmp(key, "status") != 0 && strcmp(key, "scale") != 0)
                diags_error(d, q, "unknown subresource (status and scale exist)");
        }
        crd__path_field(q, p, "schema.openAPIV3Schema");
        if (schema == NULL) {
            diags_error(d, q, "Required value: schemas are required");
            continue;
        }
        crd_schema_check(schema, q, d);
        check_columns(ver, schema, p, d);
    }
    if (storage != 1)
        diags_error(d, "spec.versions",
                    "Invalid value: must have exactly one version marked as "
                    "storage version (found %zu)",
                    storage);
    if (served == 0)
        diags_error(d, "spec.versions", "Invalid value: must serve at least one version");

    /* With conversion "None" the API server only rewrites apiVersion when it reads an object in
     * another version; served versions whose schemas differ would then show fields under the
     * wrong names. Without a conversion webhook, served schemas must therefore be identical. */
    check_conversion(conv, d);
    if (strategy != NULL && strcmp(strategy, "Webhook") == 0)
        return;
    json_array_foreach(versions, i, ver)
    {
        json_t *a, *b;
        const json_t *first = json_array_get(versions, 0);
        if (i == 0 || !crd__jtrue(ver, "served") || !crd__jtrue(first, "served"))
            continue;
        a = strip_descriptions(
            json_object_get(json_object_get(first, "schema"), "openAPIV3Schema"));
        b = strip_descriptions(json_object_get(json_object_get(ver, "schema"), "openAPIV3Schema"));
        if (a != NULL && b != NULL && !json_equal(a, b)) {
            crd__path_index(p, "spec.versions", i);
            diags_error(d, p,
                        "schema: Invalid value: served versions %s and %s have different schemas "
                        "but conversion is None (the API server would only rewrite apiVersion)",
                        crd__jstr(first, "name") ? crd__jstr(first, "name") : "?",
                        crd__jstr(ver, "name") ? crd__jstr(ver, "name") : "?");
        }
        json_decref(a);
        json_decref(b);
    }
}

void crd_check(const json_t *crd, diags_t *d)
{
    static const char *const spec_fields[] = {"group",    "names",      "scope",
                                              "versions", "conversion", "preserveUnknownFields"};
    const json_t *spec = json_object_get(crd, "spec"), *v;
    const char *api = crd__jstr(crd, "apiVersion"), *kind = crd__jstr(crd, "kind"), *scope, *key;
    char p[CRD_PATH_LEN];

    if (api == NULL || strcmp(api, "apiextensions.k8s.io/v1") != 0)
        diags_error(d, "apiVersion", "Invalid value: must be apiextensions.k8s.io/v1");
    if (kind == NULL || strcmp(kind, "CustomResourceDefinition") != 0)
        diags_error(d, "kind", "Invalid value: must be CustomResourceDefinition");
    if (!json_is_object(spec)) {
        diags_error(d, "spec", "Required value");
        return;
    }
    json_object_foreach((json_t *)spec, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < ARRAY_SIZE(spec_fields); i++)
            known = known || strcmp(key, spec_fields[i]) == 0;
        if (!known) {
            crd__path_field(p, "spec", key);
            diags_error(d, p, "unknown field of CustomResourceDefinitionSpec");
        }
    }
    scope = crd__jstr(spec, "scope");
    if (scope == NULL || (strcmp(scope, "Cluster") != 0 && strcmp(scope, "Namespaced") != 0))
        diags_error(d, "spec.scope",
                    "Unsupported value: supported values: \"Cluster\", "
                    "\"Namespaced\"");
    if (crd__jtrue(spec, "preserveUnknownFields"))
        diags_error(d, "spec.preserveUnknownFields", "Invalid value: true: must be false");
    check_names(crd, spec, d);
    check_versions(spec, d);
}
