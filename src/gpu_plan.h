/* Host-side planning for the CUDA backend: which kernel runs a problem, with
 * which tiling, and the kernel parameters derived from the shape.  Pure
 * computation (no CUDA calls), done once at plan creation.
 *
 * The heuristic (bench/NOTES.md has the H200 measurements behind it):
 *   0. the implicit-GEMM kernel (gpu_igemm.h) for NCDHW problems with
 *      C_in/G >= 16, Cog >= 32 and at most 2 taps in every W phase;
 *   1. the phase kernel, where it applies (W stride 1 or 2 with every W tap
 *      reaching its phase at unit input step, <= 8 taps per W phase, D/H
 *      strides <= 8) -- depthwise problems included:
 *        phase_grouped when all of C_in/G and every tap fit one block's
 *        shared memory budget (one staging for every D/H phase pair), else
 *        phase_tiled (one D/H phase pair per block, input-channel chunks);
 *        the tiling follows the rules at plan_phase();
 *   2. else, C_in/G = C_out/G = 1                -> depthwise kernel
 *   3. else                                      -> generic direct kernel
 * Before all of these: depthwise problems in NCDHW that the depthwise tile
 * kernel takes (gpu_depthwise.h: W stride <= 2 with dilation dividing it,
 * <= 4 taps a W phase, D/H strides <= 8, tile in 48 KB) -> dwtile.
 * CONVT3D_CUDA_KERNEL=igemm|grouped|tiled|dwtile|depthwise|generic (or a
 * full kernel name) forces a kernel where it applies (dwtile also in NDHWC);
 * CONVT3D_CUDA_TILE=tx,ty,tz,toc,cic[,ks[,fuse[,occ[,align]]]] forces the
 * phase kernel's tiling and CONVT3D_CUDA_IGEMM=wm,wn[,cs] the
 * implicit-GEMM kernel's (benchmarking only). */
#ifndef CONVT3D_GPU_PLAN_H
#define CONVT3D_GPU_PLAN_H

#include <stddef.h>

#include "gpu_depthwise.h"
#include "gpu_igemm.h"
#include "gpu_kernels.h"
#include "internal.h"

namespace ct3d {

enum kernel_kind { KERNEL_PHASE, KERNEL_DEPTHWISE, KERNEL_GENERIC, KERNEL_DWTILE, KERNEL_IGEMM };

struct device_limits {
    int smem_optin; /* bytes one block may use */
    int smem_sm;    /* bytes per multiprocessor */
    int num_sms;
};

struct kernel_plan {
    kernel_kind kind;
    int sw, qw, oct;      /* phase kernel instantiation */
    int occ3;             /* 1: its three-blocks-a-multiprocessor build (gpu_phase_entry.h) */
    phase_params phase;   /* pointers left NULL */
    simple_params simple; /* pointers left NULL */
    dw_params dw;         /* depthwise tile kernel, pointers left NULL */
    igemm_params igemm;   /* implicit-GEMM kernel, pointers left NULL */
    igemm_shape ig;       /* its instantiation */
    unsigned dw_grid[3];
    int ocb, nocb;        /* weight packing: output channels per block, blocks */
    size_t smem_bytes;
    int threads;
    long long blocks;
    const char *name; /* static storage */
    char why[160];    /* a note on the choice (a forced kernel that did not apply) */
};

/* Chooses the kernel and fills *out.  force and tile are the environment
 * overrides (NULL or "" when unset). */
convt3d_status plan_kernel(const convt3d_shape *s, const device_limits &lim, const char *force,
                           const char *tile, kernel_plan *out);

/* Phase r of dim d: taps, first tap, input offset m0, and the q range. */
phase_entry phase_entry_of(const convt3d_shape *s, int d, long long r);

/* The fields the phase and implicit-GEMM kernels' parameters share, from the
 * shape (int: the planners checked the ranges): channels, per-dim sizes,
 * the input step dm and tap step kstep of a phase's taps, strides. */
template <class P>
void fill_shape_fields(const convt3d_shape *s, P &p)
{
    p.groups = (int)s->groups;
    p.cig = (int)s->cig;
    p.cog = (int)s->cog;
    for (int d = 0; d < 3; d++) {
        const long long g = gcd64(s->s[d], s->l[d]);
        p.in[d] = (int)s->in[d];
        p.k[d] = (int)s->k[d];
        p.s[d] = (int)s->s[d];
        p.p[d] = (int)s->p[d];
        p.dm[d] = (int)(s->l[d] / g);
        p.kstep[d] = (int)(s->s[d] / g);
    }
    for (int d = 0; d < 5; d++) {
        p.xs[d] = s->x_stride[d];
        p.ys[d] = s->y_stride[d];
    }
}

/* Entries of the device phase table used by the simple kernels: 3 ints
 * {taps, k0, m0} per (dim, phase index); off[d] is dim d's first entry and
 * by_o[d] says whether dim d is indexed by output coordinate rather than
 * phase (simple_params.phase). */
long long phase_table_ints(const convt3d_shape *s);
void phase_table_fill(const convt3d_shape *s, int *table, long long off[3], int by_o[3]);

/* A one-line description of the plan's tiling, for CONVT3D_VERBOSE. */
void plan_describe(const kernel_plan &k, char *buf, size_t size);

} // namespace ct3d

#endif
