/* Host tensors for the bench: aligned allocation, reproducible random data
 * and poisoning (so an output element a backend never wrote is caught). */
#ifndef CONVT3D_BENCH_DATA_H
#define CONVT3D_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

/* 64-byte aligned, at least one element; NULL on failure. */
float *data_alloc(int64_t elems);
/* The same for elements of elem_size bytes (a convt3d_dtype's size). */
void *data_alloc_elems(int64_t elems, size_t elem_size);
void data_free(void *a);

/* Uniform in [-1, 1), a function of (seed, index) only: the same numbers
 * whatever the thread count. */
void data_fill_uniform(float *a, int64_t n, uint64_t seed);

/* Every element a quiet NaN (all-ones bytes are a NaN in f32, f16 and bf16
 * alike). */
void data_poison(float *a, int64_t n);
void data_poison_elems(void *a, int64_t n, size_t elem_size);

#endif
