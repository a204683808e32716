/* yaml -- turn (multi-document) YAML into jansson trees, one document at a time. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_YAML_H
#define SLUICE_YAML_H

#include "util/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Plain scalars are resolved as Kubernetes' YAML reader (sigs.k8s.io/yaml over go-yaml v2, YAML
 * 1.1 rules) resolves them: null/~/empty -> null, true/false/yes/no/on/off (any case variant
 * go-yaml accepts) -> boolean, integers (decimal, 0x, 0o, 0b, with sign) -> integer (a string when
 * beyond int64), floats -> real (.inf/.nan stay strings: JSON cannot hold them); everything
 * quoted or otherwise -> string. Decoders that expect a string convert numbers and booleans back
 * the way Kubernetes does (see model/jsonx.h). Anchors and aliases are expanded (as copies);
 * merge keys ("<<") are honoured. Mapping keys are strings ("yes:" -> "true", "0x10:" -> "16");
 * a duplicate key, a null key or a collection as a key is ERR_PARSE.
 * Documents that are empty (only comments, or a null root) are skipped, but still counted in
 * `index`.
 */

/* Called once per document: `index` counts documents from 0, `line` is the 1-based line where
 * the document starts, `doc` is borrowed (valid during the call; json_incref to keep it).
 * A non-zero return stops loading and is returned by the loader. */
typedef err_t (*yaml_doc_cb)(void *ctx, size_t index, int line, json_t *doc);

/* Stream documents from `f`, holding at most one document's tree at a time. Syntax errors return
 * ERR_PARSE with "line L, column C: problem" in `msg` (a tab where YAML wants an indenting space
 * is named as such, not in libyaml's words); nesting deeper than YAML_MAX_DEPTH, a document of
 * more than YAML_MAX_NODES nodes or YAML_MAX_BYTES bytes (alias expansion included), or whose
 * aliases expand to more than YAML_MAX_ALIAS_NODES nodes or YAML_MAX_ALIAS_BYTES bytes, is
 * ERR_PARSE too, found before anything is copied; a read
 * error is ERR_IO. Documents before the error have been delivered. */
err_t yaml_load_file(FILE *f, yaml_doc_cb cb, void *ctx, err_msg_t *msg);

/* One document with the positions of its fields: `marks` (yamlmark.h) is owned by the callee
 * (yaml_marks_free it, or keep it with the document). */
typedef struct yaml_marks_s yaml_marks_t;
typedef err_t (*yaml_doc_marks_cb)(void *ctx, size_t index, int line, json_t *doc,
                                   yaml_marks_t *marks);

/* As yaml_load_file(), with each document's field positions (yamlmark.h) for messages that point
 * into the file. */
err_t yaml_load_file_marks(FILE *f, yaml_doc_marks_cb cb, void *ctx, err_msg_t *msg);

/* As yaml_load_file(), from memory. */
err_t yaml_load_string(const char *s, size_t len, yaml_doc_cb cb, void *ctx, err_msg_t *msg);

#define YAML_MAX_DEPTH 128
/* Nodes and scalar bytes (+1 per node) of one document, aliases expanded. The text itself is
 * bounded generously: one document may be a List of every Node of a large cluster as `kubectl get
 * nodes -o yaml` prints it (a Node with its status.images is ~1,000 nodes and 30 KB: 10,000 of
 * them are 10 million nodes and 300 MB); what it costs is proportional to the bytes read. */
#define YAML_MAX_NODES 16000000
#define YAML_MAX_BYTES (512u << 20)
/* What aliases may add to one document: the copies they expand to cost memory the text does not
 * pay for ("billion laughs"). Ten times the API server's 3 MiB request limit in bytes, so no
 * object Kubernetes accepts comes near it. */
#define YAML_MAX_ALIAS_NODES 200000
#define YAML_MAX_ALIAS_BYTES (32u << 20)

#endif
