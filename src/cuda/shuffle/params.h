/* The tensor-core shuffle kernel's parameters (body: kernel.cuh, planner:
 * plan.cu).  Plain structs, no CUDA API, so that the host planner and the
 * emulator include them without a GPU.
 *
 * What it computes: problems whose taps do not overlap, kernel = stride in
 * every dim, no padding, no output padding (the decoder's up-convolution,
 * k2 s2 p0, and the pointwise k1 s1).  Each output then takes exactly one
 * product sum, from one input position and one tap, so the whole problem is
 * one GEMM per image and group,
 *
 *     C[m][(tap, oc)] = sum over ic of x[ic][m] w[ic][tap][oc]
 *
 * over the input positions m (contiguous in NCDHW), followed by a "pixel
 * shuffle": C[m][(tap, oc)] is output (d s_d + a, h s_h + b, w s_w + c)
 * of channel oc for tap (a, b, c).  No MMA is spent on a tap that does not
 * reach an output (the per-phase engines see one tap a phase and a K of
 * C_in/G only; here a block's N tile covers every tap).
 *
 * A block computes a BM x BN tile: kShfBM consecutive input positions of
 * one image and group x kShfBN columns (every tap of ocb output channels),
 * streaming K in steps of kShfBK input channels through a 3-stage cp.async
 * pipeline; 8 warps as 2 (M) x 4 (N), each 64 x 32 (4 m16 x 4 n8 MMA tiles).
 * The tile leaves through shared memory: a warp writes consecutive output
 * W positions of one output row (s_w of them per input position).
 *
 * Block order, fastest first: the output-channel block, the M tile, the
 * group, the image: the nocb blocks that read one x tile run side by side
 * (L2 hits). */
#ifndef CONVT3D_CUDA_SHUFFLE_PARAMS_H
#define CONVT3D_CUDA_SHUFFLE_PARAMS_H

#include "../common/types.h"

namespace ct3d {

constexpr int kShfThreads = 256;
constexpr int kShfBM = 128;  /* input positions a block */
constexpr int kShfBN = 128;  /* columns (tap, oc) a block */
constexpr int kShfBK = 32;   /* input channels a K step */
constexpr int kShfStages = 3;
/* Elements a row of a stage (A: [k][m], B: [k][n]): 136 = 8 mod 32 words,
 * so the TF32 fragment loads of lanes t = 0..3 (rows t apart) hit distinct
 * banks; 16-bit rows are 272 bytes apart, an odd multiple of 16, so
 * ldmatrix's eight row addresses hit distinct 16-byte bank groups. */
constexpr int kShfPitch = kShfBM + 8;
/* Floats a column of the output tile in shared memory ([n][m]): 132 = 4
 * mod 32, so an accumulator store's lanes (g along m, t two columns apart)
 * hit distinct banks. */
constexpr int kShfCPitch = kShfBM + 4;
constexpr int kShfMaxTaps = 16; /* k_volume: ocb = BN / taps >= 8 */
/* Channels-last (NDHWC x, p.cl): the A stage is [m][k], a position's
 * channels as x holds them, in rows of kShfBK + 4 f32 (36 words: the
 * fragment loads' rows g, 36 words apart, and columns t hit banks 4 g + t)
 * or kShfBK + 8 16-bit elements (80-byte rows: ldmatrix's eight row
 * addresses fall in distinct 16-byte bank groups). */
constexpr CT3D_HD int shf_cl_pitch(int elem_bytes)
{
    return elem_bytes == 4 ? kShfBK + 4 : kShfBK + 8;
}
/* Elements of a stage's A part: room for either layout; B follows. */
constexpr CT3D_HD int shf_a_elems(int elem_bytes)
{
    return kShfBK * kShfPitch > kShfBM * shf_cl_pitch(elem_bytes)
               ? kShfBK * kShfPitch
               : kShfBM * shf_cl_pitch(elem_bytes);
}

/* Floats of one stage (A then B, elem_bytes-byte elements), of the region
 * the stages and then the output tile share, and the dynamic shared memory
 * of a block (the region, then the output offsets of the tile's kShfBM
 * positions as long long, the bias of the block's kShfBN channels at most,
 * and for NDHWC y each column's output offset (long long) and channel). */
constexpr CT3D_HD int shf_stage_floats(int elem_bytes)
{
    return (shf_a_elems(elem_bytes) + kShfBK * kShfPitch) * elem_bytes / 4;
}
constexpr CT3D_HD int shf_region_floats(int elem_bytes)
{
    return kShfStages * shf_stage_floats(elem_bytes) > kShfBN * kShfCPitch
               ? kShfStages * shf_stage_floats(elem_bytes)
               : kShfBN * kShfCPitch;
}
constexpr CT3D_HD int shf_smem_bytes(int elem_bytes)
{
    return (shf_region_floats(elem_bytes) + 2 * kShfBM + kShfBN + 3 * kShfBN) * 4;
}

/* The inner products (template parameter MATH). */
enum shf_math {
    SHF_TF32 = 0,   /* f32 data, x rounded to TF32 on use, weights at planning */
    SHF_3XTF32 = 1, /* f32 data, both operands split in a big and a small TF32 part */
    SHF_HALF = 2    /* f16 / bf16 data as it is: m16n8k16 steps */
};

struct shf_params {
    const float *x; /* of the data type (f16 / bf16 reinterpret) */
    const float *w; /* packed (common/types.h), ocb a block: f32, or 16-bit for SHF_HALF */
    const float *bias;
    float *y;
    long long xs[2]; /* image, channel strides of x */
    long long ys[4]; /* image, channel, D, H strides of y */
    long long xm;    /* x's stride from one input position to the next: 1 NCDHW, C_in NDHWC */
    long long yw;    /* y's W stride: 1 NCDHW, C_out NDHWC */
    int cl;          /* NDHWC: channels-last A stage and stores (kernel.cuh) */
    int groups, cig, cog;
    int taps;        /* k_volume = s_d s_h s_w */
    int k[3];        /* = the strides */
    int in[3];       /* input sizes */
    int ocb, nocb;   /* output channels a block (a multiple of 8), blocks of them */
    int ncols;       /* taps * ocb <= kShfBN: the columns that hold weights */
    int nk;          /* K steps: ceil(cig / kShfBK) */
    long long npos;  /* input positions an image (in_spatial) */
    long long ntm;   /* M tiles an image: ceil(npos / kShfBM) */
    long long nblocks;
};

} // namespace ct3d

#endif
