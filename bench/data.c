/* Host tensors.  Filling is parallel (the big U-Net tensors hold hundreds of
 * millions of elements) but reproducible: each block of the array draws from
 * its own generator seeded by (seed, block). */
#include <stdlib.h>
#include <string.h>

#include "data.h"

#define FILL_BLOCK 65536

void *data_alloc_elems(int64_t elems, size_t elem_size)
{
    if (elems < 1)
        elems = 1;
    if (elem_size == 0 || (uint64_t)elems > (SIZE_MAX - 64) / elem_size)
        return NULL;
    size_t bytes = (size_t)elems * elem_size;
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

float *data_alloc(int64_t elems) { return data_alloc_elems(elems, sizeof(float)); }

void data_free(void *a) { free(a); }

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void data_fill_uniform(float *a, int64_t n, uint64_t seed)
{
    const int64_t blocks = (n + FILL_BLOCK - 1) / FILL_BLOCK;
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < blocks; b++) {
        uint64_t state = seed * 0x2545f4914f6cdd1dULL + (uint64_t)b;
        const int64_t end = (b + 1) * FILL_BLOCK < n ? (b + 1) * FILL_BLOCK : n;
        for (int64_t i = b * FILL_BLOCK; i < end; i++)
            /* 24 random bits: exactly representable, uniform in [-1, 1) */
            a[i] = (float)((int64_t)(splitmix64(&state) >> 40) - (1 << 23)) * (1.0f / (1 << 23));
    }
}

void data_poison_elems(void *a, int64_t n, size_t elem_size)
{
    /* 0xff bytes are a quiet NaN in every lane */
    memset(a, 0xff, (size_t)n * elem_size);
}

void data_poison(float *a, int64_t n) { data_poison_elems(a, n, sizeof(float)); }
