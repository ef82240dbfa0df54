/* The CPU tiling policy: which NCDHW tile is worth running and how large
 * each kernel's tiles are for a shape.  Plain C over an instruction set's
 * description (its lanes and tile maxima, which its kernel file sets from
 * the register budget), so one policy serves every instruction set and can
 * be tested without the kernels.  Not installed. */
#ifndef CONVT3D_CPU_TILING_H
#define CONVT3D_CPU_TILING_H

#include <stddef.h>

#include "../internal.h"

/* What a register-tiled instruction set can hold; index v - 1 of an array
 * is for tiles of v vectors. */
typedef struct cpu_tile_limits {
    int lanes;            /* floats in a vector */
    int ncdhw_maxv;       /* NCDHW W-lane tile: vectors along j */
    int ncdhw_ocb_max[4]; /*   and output channels for each vector count */
    int ocl_maxv;         /* NCDHW output-channel tile: channel vectors */
    int ocl_pos_max[2];   /*   and outputs for each vector count */
    int ndhwc_maxv;       /* NDHWC tile: channel vectors */
    int ndhwc_pos_max[4]; /*   and positions for each vector count */
    int vector_regs;      /* vector registers (16 for AVX2, 32 for AVX-512) */
} cpu_tile_limits;

/* A plan's tiling; what tile_a and tile_b count depends on the kernel
 * (cpu_plan in kernels.h). */
typedef struct cpu_tiling {
    int tile_a, tile_b;
    int64_t chunk;   /* j positions per tile: W work is split on these */
    int64_t w_block; /* output channels per weight block; 0: not blocked */
} cpu_tiling;

/* The byte budgets of the plan's cache-bound choices, from one core's L1d
 * and L2 (cpu/cachesize.h) by the rule below (cpu_cache_budget_of). */
typedef struct cpu_cache_budget {
    int64_t prep_bytes;     /* NCDHW row kernel: its prepared-chunk slots */
    int64_t pack_bytes;     /* NCDHW input-row packing: the rows, per thread */
    int64_t icl_rows_bytes; /* NCDHW input-channel-lane tile: transposed rows */
    int64_t colg_bytes;     /* NCDHW column GEMM: its z rows, per thread */
} cpu_cache_budget;

/* The rule, from the bytes of L1d and L2 of a core:
 *  - the NCDHW prepared-chunk slots (tap lists and lane masks) at most a
 *    quarter of the L2; a row touches only the slots of its own chunks, so
 *    this caps the scratch, not the hot set (a quarter of L1d would leave
 *    AVX2 plans with kW = 7, 2.4 KiB a slot, 3-5 slots instead of 8);
 *  - packed NCDHW input rows at most the L2: they are read again by every
 *    output row that needs them, so they must stay there;
 *  - the transposed rows of the input-channel-lane tile at most twice the
 *    L2: only the kD x kH rows of the current output row are hot, half the
 *    slots (the other half keeps rows shared with the next output row).
 * On the Zen 5 core the constants were tuned on (1 MiB L2) these equal the
 * old fixed 256 KiB, 1 MiB and 2 MiB.  No choice is bound by L1d yet: the
 * register tiles stream their weights from L2 by design; L1d is read for
 * the C_in blocking of a GEMM-style micro-kernel (issue 14, deliverable 2). */
CONVT3D_INTERNAL cpu_cache_budget cpu_cache_budget_of(int64_t l1d, int64_t l2);

/* The budget of this machine (or of CONVT3D_CPU_L1D / CONVT3D_CPU_L2). */
CONVT3D_INTERNAL cpu_cache_budget cpu_cache_budget_here(void);

/* Splits n into the fewest blocks of at most max, as even as possible:
 * the block size. */
CONVT3D_INTERNAL int64_t cpu_even_block(int64_t n, int64_t max);

/* Outputs per output-channel tile: at most max and a multiple of the
 * stride S (the tile grid), the row of ow outputs split evenly. */
CONVT3D_INTERNAL int cpu_ocl_positions(int64_t ow, int64_t max, int64_t S);

/* The output-channel tile's cost rule, for a shape it applies to (NCDHW,
 * W dilation 1, a tile built for its W taps and stride): 1 when it is
 * expected to beat the W-lane tile, else 0 with the reason in why. */
CONVT3D_INTERNAL int cpu_ocl_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim,
                                        char *why, size_t why_size);

CONVT3D_INTERNAL cpu_tiling cpu_tiling_ncdhw(const convt3d_shape *s, const cpu_tile_limits *lim);
CONVT3D_INTERNAL cpu_tiling cpu_tiling_ncdhw_oc(const convt3d_shape *s,
                                                const cpu_tile_limits *lim);
CONVT3D_INTERNAL cpu_tiling cpu_tiling_ndhwc(const convt3d_shape *s, const cpu_tile_limits *lim);

/* The NDHWC kernels over whole rows (cpu/ndhwc_rows.h): vectors of lanes
 * channels across C_out, as many as fit (up to maxv, split evenly), then
 * positions up to pos_max[v - 1]. */
CONVT3D_INTERNAL cpu_tiling cpu_tiling_ndhwc_rows(const convt3d_shape *s, int64_t lanes,
                                                  int maxv, const int *pos_max);

/* The NDHWC tile with the input channels in its lanes (cpu/iclanes.h):
 * all C_out/G channels of a group, then positions up to pos_max[C_out/G - 1]. */
CONVT3D_INTERNAL cpu_tiling cpu_tiling_ndhwc_icl(const convt3d_shape *s, const int *pos_max);

/* The NCDHW input-channel-lane tile's cost rule, for a shape it applies
 * to: 1 when it is expected to beat the W-lane tile, else 0 with the
 * reason in why. */
CONVT3D_INTERNAL int cpu_icl_ncdhw_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim,
                                              char *why, size_t why_size);

/* The column GEMM's rule (cpu/colgemm.h): 1 to take it, else 0 with the
 * reason. */
CONVT3D_INTERNAL int cpu_colg_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim,
                                         char *why, size_t why_size);

/* The most input channels that one vector of lanes output channels, laid
 * across C_out, reads (its groups' C_in/G each): the grouped-lanes tile
 * loads them as one vector, so it needs this to be at most lanes. */
CONVT3D_INTERNAL int64_t cpu_ndhwc_gl_span(const convt3d_shape *s, int64_t lanes);

/* The position-lane NDHWC tile (cpu/poslanes.h): the lanes it gives a
 * position, the smallest power of two holding C_out/G such that a vector's
 * positions (lanes / width of them) read one span of x of at most a vector
 * ((positions - 1) x x's W stride + C_in/G floats); 0 where no width below
 * the vector qualifies.  Its tiling: tile_b vectors of positions, tile_a
 * positions (tile_b x lanes / width), at most qmax vectors. */
CONVT3D_INTERNAL int64_t cpu_ndhwc_pl_width(const convt3d_shape *s, int64_t lanes);
CONVT3D_INTERNAL cpu_tiling cpu_tiling_ndhwc_pl(const convt3d_shape *s, int64_t lanes, int qmax);

/* The input-row cache of the transposed NDHWC kernel (the W-lane NCDHW
 * tile on NDHWC data, cpu/ndhwc_transposed.h): slots of C_in/G channel-major
 * rows of row floats each, the data starting left floats in; zeros around
 * it reach as far as any W tap of any chunk of chunk positions reads.  Enough
 * slots for the input rows of consecutive output rows, as the NCDHW row
 * packing (cpu/rowpack.c).  0 where the margins would be absurdly large. */
typedef struct cpu_tr_rows {
    int64_t slots, left, row;
} cpu_tr_rows;
CONVT3D_INTERNAL int cpu_ndhwc_tr_rows(const convt3d_shape *s, int64_t chunk, cpu_tr_rows *r);

/* Groups whose output channels the transposed NDHWC kernel writes to y
 * together with `lanes`-float vectors (cpu/ndhwc_transposed.h's tr_batch
 * says why): the fewest whose channels fill whole vectors, at most all. */
CONVT3D_INTERNAL int64_t cpu_ndhwc_tr_batch(const convt3d_shape *s, int64_t lanes);

/* Multiply-adds each input element feeds between its copies into a
 * per-item transposed row: C_out/G * k_volume / ceil(kD / sD) (a row is
 * copied once per output plane that reads it). */
CONVT3D_INTERNAL double cpu_transposed_macs(const convt3d_shape *s);
/* The transposed NDHWC kernel's cost rule (a documented predicate over
 * lanes, channels a group and taps; tiling.c says why): 1 when it is
 * expected to beat the NDHWC tiles, else 0 with the reason in why. */
CONVT3D_INTERNAL int cpu_ndhwc_tr_worthwhile(const convt3d_shape *s, const cpu_tile_limits *lim,
                                             char *why, size_t why_size);

#endif /* CONVT3D_CPU_TILING_H */
