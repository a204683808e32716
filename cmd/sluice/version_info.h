/* version_info -- the commit and build date of this binary (generated: version_info.cmake). */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_VERSION_INFO_H
#define SLUICE_VERSION_INFO_H

/* `git rev-parse --short=12 HEAD` of the sources built, with "-dirty" when tracked files had
 * changes, or "unknown" outside a git checkout. */
extern const char sluice_git_commit[];

/* UTC, "2026-12-02T08:15:00Z": $SOURCE_DATE_EPOCH when the build set it. */
extern const char sluice_build_date[];

#endif
