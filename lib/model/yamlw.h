/* yamlw -- write jansson trees as YAML documents (libyaml's emitter), readable back unchanged. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_YAMLW_H
#define SLUICE_YAMLW_H

#include "util/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Block style, two-space indent, no line folding, keys in the tree's order, documents separated
 * by "---". The output reads back through model/yaml.h -- and through Kubernetes' YAML reader,
 * whose YAML 1.1 rules it mirrors -- as the same JSON: a string or key that a plain scalar would
 * turn into something else ("true", "no", "null", "", "8", "0x10", "1e3", "~") is quoted, one
 * that stays itself ("512Gi", "team-a") is not; reals are written in Go's shortest form
 * with a ".0" when they would otherwise read back as integers; strings with a newline use the
 * literal block style when libyaml allows it. Comments of the input are not kept (there are none
 * in a jansson tree).
 */

/* Write `ndocs` documents (each borrowed) to `f`. ERR_IO when writing fails, ERR_NOMEM. */
err_t yamlw_file(FILE *f, const json_t *const *docs, size_t ndocs, err_msg_t *msg);

/* The same text in a new NUL-terminated string (*out, caller frees; *len its length). */
err_t yamlw_string(const json_t *const *docs, size_t ndocs, char **out, size_t *len,
                   err_msg_t *msg);

#endif
