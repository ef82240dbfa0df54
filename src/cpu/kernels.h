/* The CPU backend's inner contract: what the driver (cpu_omp.c: plan, stride
 * phases of D and H, OpenMP decomposition) hands to the row kernels, one file
 * per instruction set (cpu/phase_avx512.c, cpu/phase_avx2.c,
 * cpu/phase_generic.c).  Not installed.
 *
 * The stride-phase view used throughout: in each dim, output o = j*s + c with
 * c = o mod s.  Output o is reached by exactly the taps k with
 * (c + p - k*l) divisible by s, and tap k reads input i = j + delta with
 * delta = (c + p - k*l) / s.  So for a fixed c every tap is a dense stride-1
 * correlation along j: no divisibility tests once the tables below exist. */
#ifndef CONVT3D_CPU_KERNELS_H
#define CONVT3D_CPU_KERNELS_H

#include <stddef.h>

#include "../internal.h"

/* One tap of one dim inside a phase: kernel index and input offset. */
typedef struct cpu_tap {
    int64_t k;
    int64_t delta;
} cpu_tap;

/* The taps of one dim grouped by phase c in [0, nphase): taps[start[c]] to
 * taps[start[c+1]-1].  nphase = min(stride, out) since larger c never occur. */
typedef struct cpu_dim_phases {
    int64_t nphase;
    int64_t *start;
    cpu_tap *taps;
} cpu_dim_phases;

/* One (kd, kh) pair whose input row (id, ih) exists for a given output row:
 * x_off is that input row's element offset from x at (n, first channel of
 * the group, 0, 0, 0); w_tap = (kd*kH + kh)*kW is the first of its kW taps in
 * the packed weights. */
typedef struct cpu_row_tap {
    int64_t x_off;
    int64_t w_tap;
} cpu_row_tap;

typedef struct cpu_plan cpu_plan;

/* One output row (n, g, od, oh) of a group's output channels, restricted to
 * j in [j0, j1) in every W phase (j0, j1 multiples of plan->chunk, or j1 the
 * end).  The row kernel writes every y element of that range exactly once. */
typedef struct cpu_row_job {
    /* x at (n, first input channel of g, 0, 0, 0), or (NCDHW) the thread's
     * packed copy of the input rows: rt[].x_off is relative to it either way. */
    const float *x;
    int64_t x_plane;          /* NCDHW: distance between input channels from x */
    int64_t w_lo, w_hi;       /* NCDHW: x[w] may be read for w_lo <= w < w_hi */
    float *y;                 /* y at (n, first output channel of g, od, oh, 0) */
    const float *w;           /* packed weights of g: [tap][ic][oc < cogp] */
    const float *bias;        /* bias of g padded to cogp, or NULL */
    const cpu_row_tap *rt;    /* the (kd, kh) pairs reaching this row */
    int64_t nrt;
    int64_t j0, j1;
    void *scratch;            /* plan->scratch_bytes, 64-byte aligned, per thread;
                                 zeroed at the start of each execute and kept across
                                 the thread's rows */
} cpu_row_job;

typedef void (*cpu_row_fn)(const cpu_plan *plan, const cpu_row_job *job);

/* One instruction-set variant.  plan() fills the plan's tiling fields from the
 * shape (called once at plan creation, after the common fields are set). */
typedef struct cpu_isa {
    const char *name;          /* "avx512", "avx2", "generic" */
    int64_t vector_lanes;      /* NDHWC kernels pad weights and bias to this */
    void (*plan)(cpu_plan *plan);
    cpu_row_fn row_ncdhw, row_ndhwc;
    const char *kernel_ncdhw, *kernel_ndhwc; /* static names for the plan */
    /* NCDHW, dilation 1 along W (W stride 1 or 2): the tile with the output
     * channels in the lanes (cpu/phase_tile.h), or NULL where there is none. */
    cpu_row_fn row_ncdhw_oc;
    const char *kernel_ncdhw_oc;
    void (*finish)(void);      /* run by each thread after its last row, or NULL */
} cpu_isa;

/* Immutable after creation: concurrent executes share it. */
struct cpu_plan {
    convt3d_shape s;
    const cpu_isa *isa;
    cpu_row_fn row;            /* isa->row_ncdhw, row_ncdhw_oc or row_ndhwc */
    float *w;                  /* [g][kd][kh][kw][ic][oc < cogp], 64-byte aligned */
    float *bias;               /* [g][cogp], zero-padded; NULL without bias */
    float *zeros;              /* cig zeros: where NDHWC kernels read outside x */
    int64_t cogp;              /* output channels per group as stored */
    cpu_dim_phases ph[3];
    /* Tiling chosen by isa->plan(): for NCDHW tile_a = vectors along j and
     * tile_b = output channels per block; for NDHWC tile_a = positions along
     * j and tile_b = vectors along the output channels. */
    int tile_a, tile_b;
    int64_t chunk;             /* j positions per tile: W work is split on these */
    /* NCDHW, when nonzero: the weights are stored block by block of w_block
     * output channels, [g][block][kd][kh][kw][ic][oc < w_block] (the last
     * block zero-padded), so a tile's weights are one contiguous stream
     * rather than a short piece of every cogp-long row. */
    int64_t w_block;
    /* NCDHW: isa->row_ncdhw_oc runs the rows (chosen by isa->plan()); its
     * weight blocks hold the W taps inside the input channels,
     * [g][block][kd][kh][ic][kw][oc < w_block].  lanes_force: what
     * CONVT3D_CPU_LANES asks for, set before isa->plan(): -1 let the plan
     * choose, 0 W lanes, 1 output-channel lanes where they apply. */
    int ncdhw_oc;
    int lanes_force;
    int64_t w_group;           /* floats of packed weights per group */
    int stream;                /* y is large: kernels may write it with streaming stores */
    /* NCDHW input-row packing (0 slots: off): each needed input row (id, ih)
     * of a group is copied, all cig channels, into a per-thread slot of
     * cig rows of pack_row floats with pack_left zeros before the data and
     * zeros after it, so tiles read contiguous, unaliased, in-bounds memory. */
    int pack_slots;
    int64_t pack_left, pack_row;
    size_t scratch_bytes;      /* per-thread scratch of the row kernel */
};

CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_generic;
#if CONVT3D_HAVE_CPU_AVX2
CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_avx2;
#endif
#if CONVT3D_HAVE_CPU_AVX512
CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_avx512;
#endif

/* Number of j positions of W phase c: outputs c, c + s, ... below out. */
static inline int64_t cpu_phase_len(int64_t out, int64_t s, int64_t c)
{
    return c < out ? (out - c - 1) / s + 1 : 0; /* no out + s: s may be near INT64_MAX */
}

static inline int64_t cpu_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t cpu_max64(int64_t a, int64_t b) { return a > b ? a : b; }

#endif /* CONVT3D_CPU_KERNELS_H */
