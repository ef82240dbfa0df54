/* Host tensors for the bench: aligned allocation, reproducible random data
 * and poisoning (so an output element a backend never wrote is caught). */
#ifndef CONVT3D_BENCH_DATA_H
#define CONVT3D_BENCH_DATA_H

#include <stdint.h>

/* 64-byte aligned, at least one element; NULL on failure. */
float *data_alloc(int64_t elems);
void data_free(float *a);

/* Uniform in [-1, 1), a function of (seed, index) only: the same numbers
 * whatever the thread count. */
void data_fill_uniform(float *a, int64_t n, uint64_t seed);

/* Every element a quiet NaN. */
void data_poison(float *a, int64_t n);

#endif
