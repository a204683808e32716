/* yamlmark -- where each field of a loaded YAML (or JSON) document was written: file positions
 * by field path. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_YAMLMARK_H
#define SLUICE_YAMLMARK_H

#include "util/err.h"

#include <jansson.h>
#include <stdbool.h>

/*
 * The loader (yaml_load_file_marks) records, for the tree it hands out, the position of every
 * mapping member (its key), every sequence item and every collection's start. A lookup walks a
 * diagnostic's field path down from a node of that tree and answers with the deepest position
 * it reaches: the field itself when the document has it, else its nearest written ancestor (a
 * missing required field points at its parent; a key brought in by a YAML merge at the mapping
 * that merges it).
 */
typedef struct yaml_marks_s yaml_marks_t;

/* A 1-based line and column (a column counts characters, not bytes, as libyaml's marks do). */
typedef struct yaml_pos_s {
    int line;
    int col;
} yaml_pos_t;

/* An empty table, or NULL when out of memory. */
yaml_marks_t *yaml_marks_new(void);

/* Release the table; NULL-safe. The tree it describes is not touched. */
void yaml_marks_free(yaml_marks_t *m);

/* Record where member `key` of object `parent` (or, with key NULL, item `index` of array
 * `parent`, or with parent's own position when both key is NULL and index is SIZE_MAX) was
 * written. For the loader. */
err_t yaml_marks_add(yaml_marks_t *m, const json_t *parent, const char *key, size_t index,
                     yaml_pos_t pos);

/*
 * The position of field `path` below `node` (borrowed, a node of the tree `m` describes). `path`
 * is a diagnostic's path: "spec.resourceGroups[0].flavors[1].name", map keys in brackets
 * ("metadata.labels[kueue.x-k8s.io/queue-name]") or after a dot even when they hold dots
 * ("requests.nvidia.com/gpu"), indices in brackets or after a dot ("spec.podSets.0"); "" is
 * `node` itself. Returns false when not even `node`'s position is known.
 */
bool yaml_marks_find(const yaml_marks_t *m, const json_t *node, const char *path, yaml_pos_t *out);

#endif
