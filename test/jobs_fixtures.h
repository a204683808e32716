/* jobs_fixtures -- API objects for the lib/jobs kind tests, from test/data/jobs/ or inline YAML. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_TEST_JOBS_FIXTURES_H
#define SLUICE_TEST_JOBS_FIXTURES_H

#include "jobs/framework.h"

#include <jansson.h>

/* The documents of test/data/jobs/<name> (YAML) as a new array; fails the test when it cannot be
 * read. */
json_t *jf_file(const char *name);

/* Document `i` of test/data/jobs/<name>, a new reference. */
json_t *jf_doc(const char *name, size_t i);

/* The first document of YAML text `yaml`, a new reference. */
json_t *jf_yaml(const char *yaml);

/* The value at a space-separated path ("spec template spec containers 0 name"; numbers index
 * arrays; keys may hold dots and slashes), borrowed, or NULL. */
json_t *jf_at(const json_t *v, const char *path);

/* The string at such a path, or NULL. */
const char *jf_str(const json_t *v, const char *path);

/* The pod sets kind `k` reads from `obj` into sets[JOBS_PODSETS_MAX], their number; fails the
 * test (with the kind's message) when it cannot read them. */
size_t jf_pod_sets(const jobs_kind_t *k, json_t *obj, jobs_podset_t *sets);

#endif
