/* The broad problem list (bench/inputs/classes.txt) as the bench reads it,
 * for the test programs that walk it (test_random_problems.c,
 * test_cuda_walk.c). */
#ifndef CONVT3D_TEST_CLASSES_H
#define CONVT3D_TEST_CLASSES_H

#include "../bench/cases.h"

#define CLASSES_FILE "bench/inputs/classes.txt"

/* Reads CLASSES_FILE under $srcdir (or .) into *cl: 0 on success. */
int read_classes(case_list *cl);

#endif
