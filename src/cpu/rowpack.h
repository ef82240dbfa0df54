/* Input-row packing: a per-thread cache of input rows copied out of x
 * (cpu_plan.pack_slots), channel-major in either layout.  Not installed. */
#ifndef CONVT3D_CPU_ROWPACK_H
#define CONVT3D_CPU_ROWPACK_H

#include <stdint.h>
#include <string.h>

#include "kernels.h"

/* Sets pack_slots, pack_left and pack_row of a planned plan (its
 * tiling and phase tables set); pack_slots 0 leaves packing off. */
CONVT3D_INTERNAL void cpu_plan_row_packing(cpu_plan *pl);

typedef struct cpu_pack_tag {
    int64_t key;   /* which input row the slot holds (pack_key); -1: none */
    int64_t stamp; /* output row that last used it */
} cpu_pack_tag;

/* A thread's packed rows: slots of cig x pack_row floats, zero outside the
 * data, found through a hash table of chains (head: a slot for each hash
 * of pack_hash_bits bits, next: the slot after each in its chain; -1 ends
 * a chain). */
typedef struct cpu_pack_cache {
    cpu_pack_tag *tag;
    int32_t *head, *next;
    float *rows;
    int64_t now;
    int hash_bits; /* pack_hash_bits(pack_slots) */
} cpu_pack_cache;

/* Why a hash table: an output row looks up each of its kD x kH input rows
 * (and the driver's prefetch those of the next row), and a scan of the
 * tags costs a compare a slot.  With k5 and 30 slots (16 groups of 1 -> 8
 * channels, k5 s1, seed 62's random_3 on Zen 3) the scans took 61% of the
 * time: each miss scanned the tags twice (the prefetch's lookup, then the
 * copy's) and once more for the least recently used slot, comparing with
 * the victim's stamp in memory (each step waiting on the load the step
 * before chose).  Now a lookup reads a chain about one slot long, and the
 * victims of a row's misses come from one scan (pack_row_slots). */

/* Table bits: at least four heads a slot, so few live keys share a chain. */
static inline int pack_hash_bits(int slots)
{
    int bits = 2;
    while ((1 << bits) < 4 * slots)
        bits++;
    return bits;
}

/* Input row (id, ih) of x at (n, g) = ng, as one number: unique within an
 * execute (it is the row's index among x's rows). */
static inline int64_t pack_key(const convt3d_shape *s, int64_t ng, int64_t id, int64_t ih)
{
    return (ng * s->in[0] + id) * s->in[1] + ih;
}

static inline uint32_t pack_hash(const cpu_pack_cache *pc, int64_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - pc->hash_bits));
}

/* The slot holding input row `key`, or -1. */
static inline int pack_find(const cpu_pack_cache *pc, int64_t key)
{
    int i = pc->head[pack_hash(pc, key)];
    while (i >= 0 && pc->tag[i].key != key)
        i = pc->next[i];
    return i;
}

/* Slot v leaves its chain and takes `key` into the chain of its hash. */
static inline void pack_rekey(cpu_pack_cache *pc, int v, int64_t key)
{
    if (pc->tag[v].key >= 0) {
        int32_t *link = &pc->head[pack_hash(pc, pc->tag[v].key)];
        while (*link != v)
            link = &pc->next[*link];
        *link = pc->next[v];
    }
    const uint32_t h = pack_hash(pc, key);
    pc->tag[v].key = key;
    pc->next[v] = pc->head[h];
    pc->head[h] = v;
}

/* Copies input row (id, ih) of x at the group's xg into slot v. */
static inline void pack_copy_row(const cpu_plan *pl, const cpu_pack_cache *pc, const float *xg,
                                 int v, int64_t id, int64_t ih)
{
    const convt3d_shape *s = &pl->s;
    float *dst = pc->rows + (int64_t)v * s->cig * pl->pack_row + pl->pack_left;
    const float *from = xg + id * s->x_stride[2] + ih * s->x_stride[3];
    if (s->x_stride[4] == 1) {
        for (int64_t ic = 0; ic < s->cig; ic++)
            memcpy(dst + ic * pl->pack_row, from + ic * s->x_stride[1],
                   (size_t)s->in[2] * sizeof(float));
    } else {
        /* NDHWC: the group's channels of each position, transposed into
         * channel rows */
        const int64_t xw = s->x_stride[4], cig = s->cig, row = pl->pack_row;
        for (int64_t iw = 0; iw < s->in[2]; iw++)
            for (int64_t ic = 0; ic < cig; ic++)
                dst[ic * row + iw] = from[iw * xw + ic];
    }
}

/* The slots of an output row's n input rows src[r] = (id, ih) of x at
 * (n, g) = ng (xg: the group's x), as offsets into the packed rows
 * (rt[r].x_off); the caller has advanced pc->now for this row.  Rows not yet
 * cached are copied into the least recently used slots that this row does
 * not use (the oldest stamps first, as one miss at a time would take
 * them); `miss` holds n entries of scratch, `stale` pack_slots. */
static inline void pack_row_slots(const cpu_plan *pl, cpu_pack_cache *pc, const float *xg,
                                  int64_t ng, const int64_t (*src)[2], int64_t n,
                                  cpu_row_tap *rt, int32_t *miss, int32_t *stale)
{
    const int64_t stride = pl->s.cig * pl->pack_row;
    int64_t m = 0;
    for (int64_t r = 0; r < n; r++) {
        const int i = pack_find(pc, pack_key(&pl->s, ng, src[r][0], src[r][1]));
        if (i < 0) {
            miss[m++] = (int32_t)r;
            continue;
        }
        pc->tag[i].stamp = pc->now;
        rt[r].x_off = i * stride;
    }
    if (m == 0)
        return;
    /* the slots this row does not use, oldest first (an insertion sort:
     * pack_slots is a few dozen) */
    int64_t ns = 0;
    for (int i = 0; i < pl->pack_slots; i++) {
        const int64_t st = pc->tag[i].stamp;
        if (st >= pc->now)
            continue;
        int64_t at = ns++;
        for (; at > 0 && pc->tag[stale[at - 1]].stamp > st; at--)
            stale[at] = stale[at - 1];
        stale[at] = (int32_t)i;
    }
    /* ns >= m: a row needs fewer slots than cpu_plan_row_packing provides */
    for (int64_t k = 0; k < m; k++) {
        const int v = stale[k];
        const int64_t r = miss[k];
        pack_rekey(pc, v, pack_key(&pl->s, ng, src[r][0], src[r][1]));
        pc->tag[v].stamp = pc->now;
        pack_copy_row(pl, pc, xg, v, src[r][0], src[r][1]);
        rt[r].x_off = v * stride;
    }
}

#endif /* CONVT3D_CPU_ROWPACK_H */
