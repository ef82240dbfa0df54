/* The bench suite of DESIGN.md section 5: the shapes every speed claim is
 * measured on. */
#ifndef CONVT3D_BENCH_SUITE_H
#define CONVT3D_BENCH_SUITE_H

#include <stddef.h>

#include "convt3d.h"

typedef struct suite_shape {
    const char *name;
    convt3d_problem problem; /* NCDHW; the bench's --layout may change it */
} suite_shape;

size_t suite_count(void);
const suite_shape *suite_at(size_t index);
/* The shape called name, or NULL. */
const suite_shape *suite_find(const char *name);

#endif
