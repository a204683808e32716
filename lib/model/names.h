/* names -- Kubernetes name and label syntax checks (label keys/values, DNS-1123), with
 * Kubernetes' own messages. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_NAMES_H
#define SLUICE_NAMES_H

#include "model/diag.h"

#include <stdbool.h>

/*
 * Each check fills a names_msgs_t with the messages Kubernetes (k8s.io/apimachinery
 * pkg/api/validate/content, v1.34) returns for the value, in the same order, texts, examples and
 * regexes included; no messages means valid. The webhook-style error for a field is then
 * `path: Invalid value: "<value>": <message>`, one per message (names_report()).
 */

#define NAMES_MAX_MSGS 4
#define NAMES_MSG_LEN  512

typedef struct names_msgs_s {
    char text[NAMES_MAX_MSGS][NAMES_MSG_LEN];
    int n;
} names_msgs_t;

/* Label key / qualified name: optional DNS-1123 subdomain prefix + "/" + name (<= 63 bytes,
 * alphanumerics, '-', '_', '.', alphanumeric at both ends). Resets and fills `m`. */
void names_label_key(const char *s, names_msgs_t *m);

/* Label value: empty, or <= 63 bytes of the label-name alphabet. */
void names_label_value(const char *s, names_msgs_t *m);

/* DNS-1123 subdomain (object names, queue names, flavor names): <= 253 bytes, lowercase. */
void names_dns1123_subdomain(const char *s, names_msgs_t *m);

/* DNS-1123 label (podset names, namespace names): <= 63 bytes, lowercase, no dots. */
void names_dns1123_label(const char *s, names_msgs_t *m);

/* Predicates for the same rules. */
bool names_is_label_key(const char *s);
bool names_is_label_value(const char *s);
bool names_is_dns1123_subdomain(const char *s);
bool names_is_dns1123_label(const char *s);

/* Append one `Invalid value: "<value>": <message>` error at `path` per message in `m`. */
void names_report(diags_t *d, const char *path, const char *value, const names_msgs_t *m);

#endif
