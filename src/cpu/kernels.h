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
#include "tiling.h"

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

/* A block of output rows oh0 <= oh < oh1 of one plane (n, g, od) at once,
 * whole rows (the driver then splits no row along W): job->x is x at (n,
 * first input channel of g), job->y is y at (n, first output channel of g,
 * od, 0, 0), job->w and job->bias as for rows; rt, nrt, j0, j1 unused. */
typedef void (*cpu_block_fn)(const cpu_plan *plan, const cpu_row_job *job, int64_t od,
                             int64_t oh0, int64_t oh1);

/* One row kernel of an instruction set.  plan() fills the plan's tiling
 * fields and scratch_bytes from the shape (at plan creation, after the
 * common fields are set and before the weights are packed). */
typedef struct cpu_kernel {
    cpu_row_fn row;
    void (*plan)(cpu_plan *plan);
    /* The kernel reads x through cpu_row_job's x_plane, w_lo and w_hi such
     * that input-row packing may stand in for x (cpu/rowpack.c): NCDHW rows
     * as they are, NDHWC rows as channel rows (the kernel checks pack_slots). */
    int reads_packed_rows;
    /* The kernel takes whole NDHWC output rows (n, od, oh) across every
     * group, so that its vector lanes can run across groups: the row job's
     * x, y, w and bias are at group 0, the weights are packed as
     * [kd][kh][kw][ic][C_out padded to plan->cout_pad] (channel co of the
     * row is group co / cog's channel co % cog) and the bias is C_out long
     * (cpu/ndhwc_rows.h). */
    int all_groups;
    /* When set, and the plan says so (cpu_plan.blocks), the driver hands
     * this kernel blocks of whole rows instead of rows (cpu_block_fn); a
     * kernel whose plan always says so has no row function (row NULL). */
    cpu_block_fn block;
    /* With all_groups: the weights stay packed group by group as for the
     * kernels of one group (w_block, w_group apart), and the bias is
     * [g][C_out/G]; the kernel steps through the groups itself
     * (cpu/ndhwc_transposed.h). */
    int group_blocks;
} cpu_kernel;

/* One instruction-set variant (cpu/phase_*.c): its kernels, one per layout
 * and, for NCDHW with W dilation 1, the output-channel tile
 * (cpu/phase_tile.h; ncdhw_oc.row NULL where there is none). */
typedef struct cpu_isa {
    const char *name;          /* "avx512", "avx2", "generic" */
    int64_t vector_lanes;      /* NDHWC kernels pad weights and bias to this */
    cpu_tile_limits limits;    /* the register-tiled kernels' tile maxima */
    cpu_kernel ncdhw, ncdhw_oc, ndhwc;
    /* NDHWC kernels over whole rows (all_groups above): depthwise (one
     * input and one output channel a group) and the grouped-lanes tile
     * (C_out/G below group_lanes, cpu/registry.c has its rule). */
    cpu_kernel ndhwc_dw, ndhwc_gl;
    int64_t group_lanes;       /* lanes of one vector of those kernels */
    int gl_span_vectors;       /* vectors a grouped-lanes span may take (1 or 2) */
    /* The tiles with the input channels in their lanes (cpu/iclanes.h,
     * C_out/G <= CPU_ICL_MAXO; NCDHW through transposed input rows), and
     * how many input channels their reduction runs side by side (the
     * registry's rule). */
    cpu_kernel ndhwc_icl, ncdhw_icl;
    int64_t ic_lanes;
    /* Kernel 1x1x1 only: a GEMM over the input positions, the other outputs
     * the bias (cpu/pointwise.h). */
    cpu_kernel ncdhw_pw, ndhwc_pw;
    /* The column GEMM (cpu/colgemm.h): a GEMM of (output channel, kh, kw)
     * rows over a block of input rows, summed into each output row. */
    cpu_kernel ncdhw_colg;
    /* The W-lane NCDHW tile run on NDHWC data (cpu/ndhwc_transposed.h):
     * input rows transposed into a per-thread cache, output chunks
     * transposed back; row NULL where the ISA has none. */
    cpu_kernel ndhwc_tr;
    /* The position-lane NDHWC tile (cpu/poslanes.h): a vector holds several
     * positions' C_out/G channels; row NULL where the ISA has none. */
    cpu_kernel ndhwc_pl;
    /* Whether an output-channel tile is built for the shape's W taps and
     * stride (pure), or NULL where the ISA has none. */
    int (*ncdhw_oc_built)(const convt3d_shape *s);
    void (*finish)(void);      /* run by each thread after its last row, or NULL */
} cpu_isa;

typedef struct cpu_impl cpu_impl;

/* Output channels a group that the input-channel-lane tiles are built for. */
#define CPU_ICL_MAXO 4

/* Immutable after creation: concurrent executes share it. */
struct cpu_plan {
    convt3d_shape s;
    const cpu_impl *impl;      /* the registry entry (cpu/registry.h) */
    const cpu_isa *isa;
    const cpu_kernel *kernel;  /* the entry's row kernel and planning */
    cpu_row_fn row;            /* kernel->row, one load less per row */
    float *w;                  /* packed weights (w_block below), 64-byte aligned */
    float *bias;               /* [g][cogp], zero-padded; NULL without bias */
    float *zeros;              /* cig + 64 zeros (C_in + 64 for all_groups kernels):
                                  where NDHWC kernels read outside x */
    int64_t cogp;              /* output channels per group as stored */
    int64_t cout_pad;          /* all_groups kernels: C_out rounded up to whole vectors */
    cpu_dim_phases ph[3];
    /* Tiling chosen by the kernel's plan(): for NCDHW tile_a = vectors along
     * j and tile_b = output channels per block; for the output-channel tile
     * tile_a = outputs and tile_b = channel vectors; for NDHWC tile_a =
     * positions along j and tile_b = vectors along the output channels. */
    int tile_a, tile_b;
    int64_t chunk;             /* j positions per tile: W work is split on these */
    /* When nonzero: the weights are stored block by block of w_block
     * output channels, [g][block][kd][kh][kw][ic][oc < w_block] (the last
     * block zero-padded), so a tile's weights are one contiguous stream
     * rather than a short piece of every cogp-long row; when zero,
     * [g][kd][kh][kw][ic][oc < cogp]. */
    int64_t w_block;
    /* The output-channel tile runs the rows: its weight blocks hold the W
     * taps inside the input channels, [g][block][kd][kh][ic][kw][oc < w_block]. */
    int ncdhw_oc;
    int64_t w_group;           /* floats of packed weights per group */
    /* When nonzero: the kernel reduces over input channels in its lanes, and
     * the weights are stored [g][kd][kh][kw][oc < cog][ic < cigp], C_in/G
     * padded with zeros to cigp (whole vectors). */
    int64_t cigp;
    cpu_cache_budget cache;    /* from the machine's caches, at plan creation */
    int stream;                /* y is large: kernels may write it with streaming stores */
    /* Input-row packing (0 slots: off): each needed input row (id, ih)
     * of a group is copied, all cig channels, into a per-thread slot of
     * cig rows of pack_row floats with pack_left zeros before the data and
     * zeros after it, so tiles read contiguous, unaliased, in-bounds memory. */
    int pack_slots;
    int64_t pack_left, pack_row;
    /* The transposed NDHWC kernel's row cache (cpu_tr_rows in tiling.h) and
     * the floats between channels of its output chunk buffer. */
    int64_t tr_slots, tr_left, tr_row, tr_out_row;
    size_t scratch_bytes;      /* per-thread scratch of the row kernel */
    int gl_spans;              /* grouped-lanes tile: vectors of each input span */
    /* NCDHW pointwise blocks (cpu/pointwise.h): for each input position
     * ih * in_w + iw of a plane, its output's offset oh * out_w + ow in the
     * output plane, or -1 where padding crops it; NULL: rows instead.
     * pw_run (in the same allocation): from each position, how many
     * consecutive positions land on consecutive outputs (0 where cropped). */
    int64_t *pw_off;
    const int64_t *pw_run;
    /* The driver hands the kernel blocks of whole rows (cpu_kernel.block):
     * set by the kernel's plan() (pointwise: where pw_off exists). */
    int blocks;
    /* With blocks: the input positions a block should hold at least (a
     * kernel whose lanes run along a block's positions fills them only with
     * enough); 0: no wish.  The driver grants it while every thread keeps
     * several items (cpu_omp.c, split_work). */
    int64_t block_positions;
    /* The column GEMM (cpu/colgemm.h): rows of z (C_out/G x kH x kW; its
     * weights are packed [g][kd][ic][m]), the input rows its buffer holds,
     * the floats of a z row, and of a phase row of its output buffer. */
    int64_t colg_m, colg_rows, colg_zrow, colg_pstride;
};

CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_generic;
#if CONVT3D_HAVE_CPU_AVX2
CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_avx2;
#endif
#if CONVT3D_HAVE_CPU_AVX512
CONVT3D_INTERNAL extern const cpu_isa convt3d_cpu_isa_avx512;
#endif

/* Sets a plan's tiling fields. */
static inline void cpu_plan_set_tiling(cpu_plan *pl, cpu_tiling t)
{
    pl->tile_a = t.tile_a;
    pl->tile_b = t.tile_b;
    pl->chunk = t.chunk;
    pl->w_block = t.w_block;
}

/* Number of j positions of W phase c: outputs c, c + s, ... below out. */
static inline int64_t cpu_phase_len(int64_t out, int64_t s, int64_t c)
{
    return c < out ? (out - c - 1) / s + 1 : 0; /* no out + s: s may be near INT64_MAX */
}

static inline int64_t cpu_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t cpu_max64(int64_t a, int64_t b) { return a > b ? a : b; }

#endif /* CONVT3D_CPU_KERNELS_H */
