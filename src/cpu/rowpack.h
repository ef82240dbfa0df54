/* Input-row packing: a per-thread cache of input rows copied out of x
 * (cpu_plan.pack_slots), channel-major in either layout.  Not installed. */
#ifndef CONVT3D_CPU_ROWPACK_H
#define CONVT3D_CPU_ROWPACK_H

#include <string.h>

#include "kernels.h"

/* Sets pack_slots, pack_left and pack_row of a planned plan (its
 * tiling and phase tables set); pack_slots 0 leaves packing off. */
CONVT3D_INTERNAL void cpu_plan_row_packing(cpu_plan *pl);

typedef struct cpu_pack_tag {
    int64_t ng, id, ih; /* which input row the slot holds */
    int64_t stamp;      /* output row that last used it */
} cpu_pack_tag;

/* A thread's packed rows: slots of cig x pack_row floats, zero outside the data. */
typedef struct cpu_pack_cache {
    cpu_pack_tag *tag;
    float *rows;
    int64_t now;
} cpu_pack_cache;

/* The lookups run for every output row: inline in the driver, as they were
 * when they lived there. */

/* The slot holding input row (id, ih) of x at (n, g) = ng, or -1. */
static inline int pack_find(const cpu_plan *pl, const cpu_pack_cache *pc, int64_t ng,
                            int64_t id, int64_t ih)
{
    for (int i = 0; i < pl->pack_slots; i++)
        if (pc->tag[i].ng == ng && pc->tag[i].id == id && pc->tag[i].ih == ih)
            return i;
    return -1;
}

/* The slot holding input row (id, ih) of x at (n, g) = ng; copies it in,
 * replacing the least recently used slot the current output row does not
 * use, when it is not there yet. */
static inline int64_t pack_slot(const cpu_plan *pl, cpu_pack_cache *pc, const float *xg,
                                int64_t ng, int64_t id, int64_t ih)
{
    const convt3d_shape *s = &pl->s;
    int victim = -1;
    for (int i = 0; i < pl->pack_slots; i++) {
        cpu_pack_tag *t = &pc->tag[i];
        if (t->ng == ng && t->id == id && t->ih == ih) {
            t->stamp = pc->now;
            return i;
        }
        if (t->stamp < pc->now && (victim < 0 || t->stamp < pc->tag[victim].stamp))
            victim = i;
    }
    /* victim >= 0: a row needs fewer slots than plan_packing provides. */
    float *dst = pc->rows + (int64_t)victim * s->cig * pl->pack_row + pl->pack_left;
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
    pc->tag[victim] = (cpu_pack_tag){ng, id, ih, pc->now};
    return victim;
}

#endif /* CONVT3D_CPU_ROWPACK_H */
