/* The implicit-GEMM kernel of the CUDA backend (kernel.cuh): its
 * parameters (planner: plan.cu, launch: launch.cu).  Plain structs, no CUDA
 * API, so the host planning code and an emulator can include it.
 *
 * Every (D, H, W) stride phase of the output is a dense stride-1 correlation
 * with a fixed sub-kernel (phase/kernel.cuh says how), i.e. a GEMM per
 * phase and group:
 *
 *     Y[m][oc] = sum over K = (tap, ic) of A[m][K] * B[K][oc]
 *
 * with m = (n, qd, qh, qw) the phase's output positions, A the input at the
 * tap's shifted position (zero outside x) and B the packed weights.  A block
 * computes one BM x BN tile of one phase's Y in registers (8 x 8 a thread),
 * streaming K in steps of BK input channels of one tap through a 3-stage
 * cp.async pipeline; the tile goes out through shared memory so that a
 * warp's stores cover consecutive positions.  This is the kernel for
 * problems with many channels a group, where the phase kernel's
 * W-vectorised tiles spend their time staging, and for those the phase
 * kernel does not take (its strides and phase tables take any dilation,
 * stride up to 8 and either layout).
 *
 * Balance: the phases of an odd kernel at stride 2 differ up to 8x in taps.
 * Tiles are ordered heaviest phase first, and a cluster of cs blocks
 * (Hopper thread-block clusters) may share one tile: block r of the cluster
 * takes the r-th part of the tile's K steps, and the partial tiles are added
 * through distributed shared memory in rank order -- deterministic, no
 * atomics, no workspace in global memory. */
#ifndef CONVT3D_CUDA_IGEMM_PARAMS_H
#define CONVT3D_CUDA_IGEMM_PARAMS_H

#include "../common/types.h"

namespace ct3d {

/* D, H and W strides up to this (phase tables in the kernel parameters). */
constexpr int kIgemmMaxStride = 8;
/* Tap-count classes (distinct products of per-dim tap counts) at most. */
constexpr int kIgemmMaxClasses = 64;
/* Input channels a K step takes. */
constexpr int kIgemmBK = 16;
/* Blocks a cluster at most: the portable limit is 8; 9-16 need the
 * non-portable cluster size (cudaFuncAttributeNonPortableClusterSizeAllowed,
 * set by igemm_prepare), which Hopper (H100, H200) allows.  Any size from 1
 * up: block r takes K steps [steps * r / cs, steps * (r + 1) / cs). */
constexpr int kIgemmMaxCluster = 16;
constexpr int kIgemmPortableCluster = 8;

/* The engine's inner product: FMA on f32 (exact, the default), tensor
 * cores with mma.sync m16n8k8 TF32 (fp32 accumulation) on f32 inputs
 * rounded to TF32 or split into two TF32 parts (3 products, fp32
 * accuracy), or mma.sync m16n8k16 on f16 / bf16 data as it is (IGEMM_HALF:
 * 16-bit shared-memory stages and weights, fp32 accumulation). */
enum igemm_math { IGEMM_FFMA = 0, IGEMM_TF32 = 1, IGEMM_3XTF32 = 2, IGEMM_HALF = 3 };

struct igemm_params {
    const void *x;  /* of the problem's type (f32, f16_t or bf16_t), as bias and y */
    const float *w; /* packed [g][ob][ic][kd][kh][kw][oc < ocb], ocb = BN; f32, or the
                     data's type for IGEMM_HALF (cuda_impl.half_weights) */
    const void *bias;
    void *y;
    long long xs[5], ys[5];
    int groups, cig, cog;
    int in[3], k[3], s[3], p[3], dm[3], kstep[3];
    int ocb, nocb;   /* weight packing: BN output channels a block, blocks of them */
    int kchunks;     /* K steps a tap: ceil(cig / kIgemmBK) */
    int cs;          /* blocks a cluster (1: no cluster) */
    long long nimg;  /* images (N) */
    phase_entry ph[3][kIgemmMaxStride]; /* per dim and phase r */
    /* Block order: tiles by tap-count class, heaviest class first; within a
     * class by M tile, then phase, then group, then output-channel block
     * (the phases of one M tile read neighbouring inputs: they run
     * together).  Class c holds the phases order[cls_phase[c] ..
     * cls_phase[c + 1]) (igemm_phase_code) and the tiles [cls_tile[c],
     * cls_tile[c + 1]): enough M tiles of BM for its largest phase, so the
     * smaller phases skip their last tiles. */
    int nclass;
    unsigned short order[kIgemmMaxStride * kIgemmMaxStride * kIgemmMaxStride];
    int cls_phase[kIgemmMaxClasses + 1];
    long long cls_tile[kIgemmMaxClasses + 1];
    long long ntiles; /* blocks = ntiles * cs */
};

/* A phase (rd, rh, rw) as one number of igemm_params.order, and back. */
CT3D_HD int igemm_phase_code(const int r[3]) { return r[0] + 8 * (r[1] + 8 * r[2]); }
CT3D_HD int igemm_phase_dim(int code, int d) { return (code >> (3 * d)) & 7; }

/* Taps of the phase with this code (the product over the dims). */
CT3D_HD int igemm_phase_taps(const igemm_params &p, int code)
{
    int taps = 1;
    for (int d = 0; d < 3; d++)
        taps *= p.ph[d][igemm_phase_dim(code, d)].taps;
    return taps;
}

/* Floats between consecutive input channels of the packed weights. */
CT3D_HD long long igemm_wrow(const igemm_params &p)
{
    return (long long)p.k[0] * p.k[1] * p.k[2] * p.ocb;
}

/* The kernel's instantiations: warps along M x along N, each warp a 64 x 32
 * tile (BM = 64 * wm, BN = 32 * wn). */
struct igemm_shape {
    int wm, wn;
};

/* The instantiations compiled in (launch.cu's igemm_kernel_for keeps
 * to this list): 256 threads with BN 128 or 64, 128 threads with BN 64,
 * 32 or 128, 64 threads with BN 32. */
inline bool igemm_shape_compiled(igemm_shape t)
{
    return (t.wm == 2 && t.wn == 4) || (t.wm == 4 && t.wn == 2) || (t.wm == 2 && t.wn == 2) ||
           (t.wm == 4 && t.wn == 1) || (t.wm == 1 && t.wn == 4) || (t.wm == 2 && t.wn == 1);
}


} // namespace ct3d

#endif
