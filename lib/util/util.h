/* util -- small macros shared by every module. */
/* SPDX-License-Identifier: Apache-2.0 */
#ifndef SLUICE_UTIL_H
#define SLUICE_UTIL_H

#include <stddef.h>

/* The struct that embeds `ptr` as its member `member`. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
