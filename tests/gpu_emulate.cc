// Host emulator of the CUDA kernels' block bodies (src/cuda/phase/kernel.cuh,
// src/cuda/igemm/kernel.cuh): checks them against convt3d_reference() on a machine
// without a GPU.  A block's threads run as pthreads, __syncthreads() and the
// cluster barrier as pthread barriers, cp.async as plain copies; shared
// memory starts as NaN so that a read of something nobody wrote shows.
// Built and run by `make emulate` (Makefile.am: this file and the planners,
// src/cuda/*/plan.cu, compiled for the host under ASan and UBSan); not part
// of make check (it needs a C++ compiler and CUDA's headers).
//
//   gpu_emulate phase|igemm|dwtile|dwlast|fewout|tcwin|fewin|shuffle COUNT SEED [KERNEL|MATH|TYPE]
//
// COUNT random problems (even ones with small-integer data, compared
// exactly; odd ones uniform, relative L2 error <= 1e-5), plans from the
// planner with H200 limits; phase: KERNEL is grouped or tiled (the forced
// variants, with 4, 8 or the planner's channels a thread) or "" (the phase
// planner's own choice), or f16 / bf16 (x, bias and y of that type, f32
// weights, the planner's choice among the half builds), a third of the
// problems with a random CONVT3D_CUDA_TILE; igemm: every block shape and cluster size, MATH ""
// (the FMA engine), tf32 or 3xtf32 (tensor cores on f32 data, mma.sync
// modelled as loops over its fragment layout), f16 or bf16 (tensor cores on
// half data), each in both layouts, every fourth problem dilated along W,
// each checked with its mode's tolerance; dwtile: depthwise NCDHW problems, TYPE "" (f32), f16
// or bf16 (x, bias and y of that type, f32 weights); dwlast: depthwise problems
// with 1-70 channels, mostly NDHWC, both builds (4 channels a thread and 1), TYPE as
// dwtile's; fewout: C_out/G 1-8, TYPE as dwtile's,
// C_in/G 1-40 (several weight chunks where the taps are many), both
// layouts, dilation in every dim, groups, bias half the time; tcwin: the
// tensor-core window kernel, MATH tf32 (or ""), 3xtf32, f16 or bf16, both
// layouts, C_out/G up to 72 (several channel blocks), problems whose
// phases have more than kTcwMaxTaps taps skipped; fewin: the four-output
// kernel of few input channels (simple/kernel.cuh, depthwise32_thread with
// FEWIN; also cig = cog = 1 through the depthwise build), C_in/G 1-16,
// C_out/G 1-40, both layouts, groups, dilation; problems with more than 4
// taps a W phase skipped (the kernel does not take them); shuffle: the
// tensor-core kernel of taps that do not overlap (kernel = stride, no
// padding), MATH tf32 (or ""), 3xtf32, f16 or bf16, NCDHW, C_in/G 1-70,
// C_out/G 1-40, both copy paths of x.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "cuda/dwlast/kernel.cuh"
#include "cuda/dwlast/plan.h"
#include "cuda/dwtile/kernel.cuh"
#include "cuda/dwtile/plan.h"
#include "cuda/fewout/kernel.cuh"
#include "cuda/fewout/plan.h"
#include "cuda/tcwin/kernel.cuh"
#include "cuda/tcwin/plan.h"
#include "cuda/shuffle/kernel.cuh"
#include "cuda/shuffle/plan.h"
#include "cuda/igemm/kernel.cuh"
#include "cuda/igemm/plan.h"
#include "cuda/phase/kernel.cuh"
#include "cuda/phase/plan.h"
#include "cuda/simple/kernel.cuh"
#include "cuda/simple/plan.h"

using namespace ct3d;

namespace {

/* ---- the emulated execution model ---------------------------------------- */

thread_local pthread_barrier_t *t_block_bar;
thread_local pthread_barrier_t *t_cluster_bar;
thread_local float *const *t_cluster_smem;
thread_local int t_rank;
thread_local unsigned *t_mma_regs;

/* One emulated thread: its block's barrier and shared memory, its cluster's,
 * and its block's register file for the MMA fragments (6 words a thread
 * and queued MMA, kMmaQueueMax of them). */
struct emu_thread {
    pthread_barrier_t *block_bar, *cluster_bar;
    float *const *smem; /* of each rank of the cluster */
    unsigned *mma_regs;
    int rank, tid;
    void (*body)(const emu_thread &);
    const void *params;
};

void *emu_thread_main(void *arg)
{
    const emu_thread &t = *static_cast<const emu_thread *>(arg);
    t_block_bar = t.block_bar;
    t_cluster_bar = t.cluster_bar;
    t_cluster_smem = t.smem;
    t_rank = t.rank;
    t_mma_regs = t.mma_regs;
    t.body(t);
    return nullptr;
}

/* Runs body on cs blocks of nt threads at once, each block with smem_floats
 * of NaN-filled shared memory. */
void emulate_cluster(int cs, int nt, size_t smem_floats, void (*body)(const emu_thread &),
                     const void *params)
{
    std::vector<float *> smem(cs);
    for (auto &m : smem) {
        m = static_cast<float *>(aligned_alloc(16, (smem_floats + 4) / 4 * 16));
        for (size_t i = 0; i < smem_floats; i++)
            m[i] = NAN;
    }
    std::vector<pthread_barrier_t> block_bar(cs);
    for (auto &b : block_bar)
        pthread_barrier_init(&b, nullptr, nt);
    pthread_barrier_t cluster_bar;
    pthread_barrier_init(&cluster_bar, nullptr, nt * cs);
    std::vector<std::vector<unsigned>> regs(cs, std::vector<unsigned>((size_t)nt * 128 * 6));
    std::vector<emu_thread> threads(cs * nt);
    std::vector<pthread_t> ids(cs * nt);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int r = 0; r < cs; r++)
        for (int t = 0; t < nt; t++) {
            threads[r * nt + t] = {&block_bar[r], &cluster_bar, smem.data(), regs[r].data(),
                                   r, t, body, params};
            pthread_create(&ids[r * nt + t], &attr, emu_thread_main, &threads[r * nt + t]);
        }
    for (auto &id : ids)
        pthread_join(id, nullptr);
    for (auto &b : block_bar)
        pthread_barrier_destroy(&b);
    pthread_barrier_destroy(&cluster_bar);
    for (auto m : smem)
        free(m);
}

/* ---- random problems, data, comparison ---------------------------------- */

unsigned long long rng_state = 88172645463325252ULL;

unsigned long long next_random()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int rand_in(int lo, int hi)
{
    return (int)(lo + (long long)(next_random() % (unsigned long long)((long long)hi - lo + 1)));
}

/* EMULATE_LIMITS set: half the problems get one dim whose stride, dilation
 * or padding is CONVT3D_MAX_DIM_VALUE (a small output all the same), so that
 * the kernel bodies' index arithmetic is checked at the contract's edge. */
void put_dim_at_limit(convt3d_problem *p)
{
    const int64_t L = CONVT3D_MAX_DIM_VALUE;
    const int d = rand_in(0, 2);
    p->output_padding[d] = 0;
    switch (rand_in(0, 2)) {
    case 0: p->in_size[d] = 1, p->stride[d] = L; break;
    case 1: p->kernel[d] = 2, p->dilation[d] = L, p->padding[d] = (L - 1) / 2; break;
    default: p->kernel[d] = 3, p->dilation[d] = L, p->padding[d] = L; break;
    }
}

/* A valid problem: up to max_ci / max_co channels a group, sizes 1-9, any
 * kernel, stride, dilation, padding and output padding in small ranges; the
 * W stride at most max_sw and W dilation 1 when w_dilation is false. */
convt3d_problem random_problem(int max_ci, int max_co, int max_sw, bool w_dilation,
                               convt3d_layout layout)
{
    for (;;) {
        convt3d_problem p;
        convt3d_problem_init(&p);
        p.groups = rand_in(1, 3);
        p.in_channels = p.groups * rand_in(1, max_ci);
        p.out_channels = p.groups * rand_in(1, max_co);
        p.batch = rand_in(1, 2);
        for (int d = 0; d < 3; d++) {
            p.in_size[d] = rand_in(1, 9);
            p.kernel[d] = rand_in(1, 7);
            p.stride[d] = rand_in(1, d == 2 ? max_sw : 3);
            p.dilation[d] = (d < 2 || w_dilation) && rand_in(0, 3) == 0 ? rand_in(1, 3) : 1;
            p.padding[d] = rand_in(0, (int)p.kernel[d]);
            const int most = (int)(p.stride[d] > p.dilation[d] ? p.stride[d] : p.dilation[d]);
            p.output_padding[d] = rand_in(0, most - 1);
        }
        p.has_bias = rand_in(0, 1);
        p.layout = layout;
        if (getenv("EMULATE_LIMITS") && rand_in(0, 1))
            put_dim_at_limit(&p);
        if (convt3d_validate(&p) == CONVT3D_SUCCESS)
            return p;
    }
}

/* x, w, bias and the reference output of one problem; the data are values
 * of type `type` (f16 and bf16: rounded to it, kept in f32), the reference
 * the f32 one on them. */
struct problem_data {
    convt3d_problem p;
    convt3d_shape s;
    std::vector<float> x, w, b, ref;
    bool ints;
    convt3d_dtype type;
};

float as_type(float v, convt3d_dtype type)
{
    return type == CONVT3D_F16    ? convt3d_f16_to_f32(convt3d_f32_to_f16(v))
           : type == CONVT3D_BF16 ? convt3d_bf16_to_f32(convt3d_f32_to_bf16(v))
                                  : v;
}

problem_data make_data(const convt3d_problem &p, bool ints, convt3d_dtype type = CONVT3D_F32)
{
    problem_data d;
    d.p = p;
    convt3d_shape_from_problem(&p, &d.s);
    d.ints = ints;
    d.type = type;
    d.x.resize(d.s.x_elems);
    d.w.resize(d.s.w_elems);
    d.b.resize(d.s.cout);
    for (auto *v : {&d.x, &d.w, &d.b})
        for (auto &e : *v)
            e = as_type(ints ? (float)rand_in(-3, 3)
                             : (float)((next_random() % 20001) / 10000.0 - 1.0),
                        type);
    d.ref.resize(d.s.y_elems);
    /* the data are kept in f32 whatever the problem's types (which a
     * planner may read) */
    convt3d_problem pf = p;
    pf.x_type = pf.w_type = pf.bias_type = pf.y_type = CONVT3D_F32;
    convt3d_reference(&pf, d.x.data(), d.w.data(), p.has_bias ? d.b.data() : nullptr,
                      d.ref.data());
    return d;
}

/* PyTorch's weights in the kernels' packing [g][ob][ic][tap][oc < ocb]. */
std::vector<float> pack_weights(const problem_data &d, long long ocb, long long nocb)
{
    const convt3d_shape &s = d.s;
    std::vector<float> out((size_t)(s.groups * nocb * s.cig * s.k_volume * ocb), 0.0f);
    for (long long g = 0; g < s.groups; g++)
        for (long long ic = 0; ic < s.cig; ic++)
            for (long long oc = 0; oc < s.cog; oc++)
                for (long long t = 0; t < s.k_volume; t++)
                    out[(((g * nocb + oc / ocb) * s.cig + ic) * s.k_volume + t) * ocb + oc % ocb] =
                        d.w[((g * s.cig + ic) * s.cog + oc) * s.k_volume + t];
    return out;
}

/* Whether y matches the reference within tol (relative L2; exact for
 * small-integer data whose outputs the type holds exactly); prints the
 * problem if not. */
bool check(const problem_data &d, const std::vector<float> &y, const char *what,
           double tol = 1e-5)
{
    double num = 0, den = 0, most = 0;
    long long unwritten = 0;
    for (size_t i = 0; i < y.size(); i++) {
        const double e = (double)y[i] - d.ref[i];
        unwritten += !(fabs(e) <= 1e30);
        num += e * e;
        den += (double)d.ref[i] * d.ref[i];
        most = fabs(e) > most ? fabs(e) : most;
    }
    const double rel = sqrt(num / (den > 0 ? den : 1));
    double biggest = 0;
    for (float r : d.ref)
        biggest = fabs(r) > biggest ? fabs(r) : biggest;
    const double exact_up_to = d.type == CONVT3D_F16 ? 2048 : d.type == CONVT3D_BF16 ? 256 : 1e7;
    const bool exact = d.ints && biggest <= exact_up_to;
    if (unwritten == 0 && (exact ? most == 0 : rel <= tol))
        return true;
    /* the descriptor convt3d-bench reads, so the failure can be pasted into it */
    char desc[512];
    convt3d_problem_to_string(&d.p, desc, sizeof desc);
    printf("FAILED %s: %s: %lld not finite, max error %g, rel L2 %g\n", what, desc, unwritten, most,
           rel);
    return false;
}

const device_limits kH200 = {232448, 233472, 132};

int g_fewout_chunked; /* fewout problems with several weight chunks */
int g_fewout_spanning; /* fewout problems whose warps span several slices (NCDHW, ks > 8) */
int g_fewout_big_chunk; /* fewout problems staging more than 48 KB of weights */
int g_fewout_th[kFewMaxTaps + 1]; /* fewout problems by the body's H window (TH) */
int g_fewout_h_step;  /* fewout problems whose H taps are dm > 1 rows apart */
int g_fewout_cs[4];   /* fewout problems by log2 of the cluster size */
int g_fewout_wide;    /* fewout problems with 5-8 output channels a group (ocb 8) */

/* A tensor of the problem's type from its f32 values (exact: they are
 * values of the type). */
template <class T>
std::vector<T> typed(const std::vector<float> &v)
{
    std::vector<T> out(v.size());
    for (size_t i = 0; i < v.size(); i++) {
        if constexpr (sizeof(T) == sizeof(float))
            out[i] = v[i];
        else if constexpr (std::is_same<T, f16_t>::value)
            out[i].bits = convt3d_f32_to_f16(v[i]);
        else
            out[i].bits = convt3d_f32_to_bf16(v[i]);
    }
    return out;
}

template <class T>
float widen(const T &v)
{
    if constexpr (sizeof(T) == sizeof(float))
        return v;
    else if constexpr (std::is_same<T, f16_t>::value)
        return convt3d_f16_to_f32(v.bits);
    else
        return convt3d_bf16_to_f32(v.bits);
}

/* A tensor of type T as f32 values (exact), for check(). */
template <class T>
std::vector<float> widened(const std::vector<T> &v)
{
    std::vector<float> out(v.size());
    for (size_t i = 0; i < v.size(); i++)
        out[i] = widen(v[i]);
    return out;
}

/* The tolerance of each inner product (relative L2 against the f32
 * reference on the same data): the contract's, with the output's own
 * rounding for f16 and bf16. */
double igemm_tolerance(int math, convt3d_dtype type)
{
    if (math == IGEMM_TF32)
        return 1e-3;
    if (type == CONVT3D_F16)
        return 1e-3;
    if (type == CONVT3D_BF16)
        return 8e-3;
    return 1e-5;
}

/* ---- the phase kernel ---------------------------------------------------- */

template <int SW, int QW, int OCT, int F, class T>
void phase_body(const emu_thread &t)
{
    const phase_params &p = *static_cast<const phase_params *>(t.params);
    for (long long vb = 0; vb < p.nblocks; vb++) {
        phase_block<SW, QW, OCT, F, T>(p, t.smem[0], t.tid, vb);
        ct3d_emulate_sync(); /* as the __global__ entry between blocks */
    }
}

template <int SW, int QW, int OCT, class T>
void (*phase_body_for_features(int f))(const emu_thread &)
{
    switch (f) {
    case 0: return phase_body<SW, QW, OCT, 0, T>;
    case kSliced: return phase_body<SW, QW, OCT, kSliced, T>;
    case kFused: return phase_body<SW, QW, OCT, kFused, T>;
    default: return phase_body<SW, QW, OCT, kSliced | kFused, T>;
    }
}

template <class T>
void (*phase_body_for(const phase_plan &k))(const emu_thread &)
{
    const int f = phase_features(k.p);
    if (k.sw == 2)
        return k.oct == 8 ? phase_body_for_features<2, 4, 8, T>(f)
                          : phase_body_for_features<2, 4, 4, T>(f);
    return k.oct == 8 ? phase_body_for_features<1, 8, 8, T>(f)
                      : phase_body_for_features<1, 8, 4, T>(f);
}

/* Returns 1 on failure, 0 on success, -1 when the phase kernel does not
 * take the problem.  T: the element type of x, bias and y (f16 and bf16:
 * the half builds, which the plan must stay inside: phase_half_built). */
template <class T>
int run_phase_as(int i, const char *force, convt3d_dtype type)
{
    const convt3d_layout layout = rand_in(0, 1) ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    convt3d_problem prob = random_problem(9, 12, 2, false, layout);
    prob.x_type = prob.w_type = prob.bias_type = prob.y_type = type; /* the planner reads it */
    const problem_data d = make_data(prob, i % 2 == 0, type);
    char tile[64];
    const bool forced = rand_in(0, 2) == 0;
    snprintf(tile, sizeof tile, "%d,%d,%d,%d,%d,1,%d,1,%d", rand_in(1, 8), 1 << rand_in(0, 3),
             1 << rand_in(0, 2), rand_in(1, 4), rand_in(1, 9), rand_in(0, 1), rand_in(0, 1));
    static const int octs[] = {0, 4, 8};
    const int want_all = strcmp(force, "grouped") == 0 ? 1 : strcmp(force, "tiled") == 0 ? 0 : -1;
    const int oct = want_all < 0 ? 0 : octs[rand_in(0, 2)];
    char why[160], note[160] = "";
    phase_plan k;
    if (!phase_kernel_applies(&d.s, why, sizeof why) ||
        !plan_phase(&d.s, kH200, want_all, oct, forced ? tile : nullptr, &k, note, sizeof note))
        return -1;
    const bool half = sizeof(T) != sizeof(float);
    if (half && (k.oct != kHalfPhaseOct || k.occ3 || k.type != type ||
                 !phase_half_built(k.sw, phase_features(k.p)))) {
        printf("FAILED phase %s: a plan without a half build (oct %d, features %d, occ3 %d)\n",
               convt3d_dtype_name(type), k.oct, phase_features(k.p), k.occ3);
        return 1;
    }
    std::vector<float> w = pack_weights(d, k.p.ocb, k.p.nocb);
    std::vector<T> x = typed<T>(d.x), b = typed<T>(d.b);
    std::vector<T> y = typed<T>(std::vector<float>(d.s.y_elems, NAN));
    phase_params p = k.p;
    p.x = reinterpret_cast<const float *>(x.data());
    p.w = w.data();
    p.bias = d.p.has_bias ? reinterpret_cast<const float *>(b.data()) : nullptr;
    p.y = reinterpret_cast<float *>(y.data());
    /* f32: scalar stores, as before; half: the launch's rule (launch.cu), so
     * the packed 8-byte stores are covered */
    const bool ndhwc = layout == CONVT3D_LAYOUT_NDHWC;
    p.vec_store = half && reinterpret_cast<uintptr_t>(y.data()) % 16 == 0 &&
                  (ndhwc ? d.s.cout % 4 == 0 && d.s.cog % 4 == 0 : d.s.out[2] % 4 == 0);
    emulate_cluster(1, p.nthreads, k.smem / sizeof(float), phase_body_for<T>(k), &p);
    const std::vector<float> yf = widened(y);
    char what[600];
    snprintf(what, sizeof what, "%s toc%d tx%d ty%d tz%d ks%d cic%d fuse_w %d vec %d%s%s",
             phase_name(k.all, k.sw, k.oct, type), p.toc, p.tx, p.ty, p.tz, p.ks, p.cic,
             p.fuse_w, p.vec_store, note[0] ? "; " : "", note);
    return check(d, yf, what, igemm_tolerance(IGEMM_FFMA, type)) ? 0 : 1;
}

/* KERNEL: grouped, tiled or "" on f32 data; f16 or bf16: half data, the
 * planner's own choice. */
int run_phase(int i, const char *force)
{
    if (strcmp(force, "f16") == 0)
        return run_phase_as<f16_t>(i, "", CONVT3D_F16);
    if (strcmp(force, "bf16") == 0)
        return run_phase_as<bf16_t>(i, "", CONVT3D_BF16);
    return run_phase_as<float>(i, force, CONVT3D_F32);
}

/* ---- the implicit-GEMM kernel -------------------------------------------- */

template <int WM, int WN, int MATH, class T, bool KC, bool RUNS = false>
void igemm_body(const emu_thread &t)
{
    const igemm_params &p = *static_cast<const igemm_params *>(t.params);
    for (long long c = 0; c < p.ntiles; c++) {
        igemm_block<WM, WN, MATH, T, KC, RUNS>(p, t.smem[t.rank], t.tid, c * p.cs + t.rank);
        ct3d_emulate_cluster_sync(); /* the next cluster reuses the blocks */
    }
}

typedef void (*emu_body)(const emu_thread &);

template <int MATH, class T, bool KC = false, bool RUNS = false>
emu_body igemm_body_for(igemm_shape t)
{
    if (t.wm == 2 && t.wn == 4)
        return igemm_body<2, 4, MATH, T, KC, RUNS>;
    if (t.wm == 4 && t.wn == 2)
        return igemm_body<4, 2, MATH, T, KC, RUNS>;
    if (t.wm == 4 && t.wn == 1)
        return igemm_body<4, 1, MATH, T, KC, RUNS>;
    if constexpr (MATH == IGEMM_FFMA) {
        if (t.wm == 2 && t.wn == 2)
            return igemm_body<2, 2, MATH, T, KC>;
        if (t.wm == 1 && t.wn == 4)
            return igemm_body<1, 4, MATH, T, KC>;
        return igemm_body<2, 1, MATH, T, KC>;
    }
    return nullptr;
}

/* Problems of each layout with a dilation above 1 (any dim; in W: one the
 * phase kernel does not take), which the summary line reports. */
int g_dilated[2], g_w_dilated[2];
/* Tensor-core problems whose A tile went in runs along W, and of them with x
 * one element off 16-byte alignment (the summary line reports them). */
int g_runs, g_runs_off;
int g_igemm_cs_odd, g_igemm_cs_wide; /* clusters of 3, 6 or 12 blocks; of more than 8 */

/* The body for shape t, K-contiguous A or not (only the tensor cores have
 * that path: the FMA engine's is never instantiated), runs along W or not
 * (half data only, igemm_plan.runs). */
template <int MATH, class T>
emu_body igemm_body_kc(igemm_shape t, bool kc, bool runs)
{
    if constexpr (MATH != IGEMM_FFMA)
        if (kc)
            return igemm_body_for<MATH, T, true>(t);
    if constexpr (MATH != IGEMM_FFMA)
        if (runs)
            return igemm_body_for<MATH, T, false, true>(t);
    return igemm_body_for<MATH, T>(t);
}

/* Sets prob's input W to the smallest size (up to 48) whose every W phase
 * has a multiple of rl output positions (igemm_runs_apply); false if none. */
bool make_runs_apply(convt3d_problem &prob, int rl)
{
    for (int w = 1; w <= 48; w++) {
        convt3d_problem q = prob;
        q.in_size[2] = w;
        if (convt3d_validate(&q) != CONVT3D_SUCCESS)
            continue;
        convt3d_shape s;
        convt3d_shape_from_problem(&q, &s);
        bool all = s.out[2] > 0;
        for (int r = 0; r < (int)s.s[2]; r++)
            all = all && phase_entry_of(&s, 2, r).qcount % rl == 0;
        if (all) {
            prob = q;
            return true;
        }
    }
    return false;
}

template <int MATH, class T>
int run_igemm_as(int i, convt3d_dtype type)
{
    static const igemm_shape shapes[] = {{2, 4}, {4, 2}, {4, 1}, {2, 2}, {1, 4}, {2, 1}};
    const bool tc = MATH != IGEMM_FFMA;
    /* every inner product in both layouts (the FMA engine's NDHWC A tile goes
     * element by element, as the tensor cores' without kc) */
    const convt3d_layout layout = rand_in(0, 1) ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    /* tensor cores in NDHWC: the K-contiguous copies (igemm_plan.kc) half the time */
    const bool want_kc = tc && layout == CONVT3D_LAYOUT_NDHWC && rand_in(0, 1);
    /* every fourth problem dilated along W (2 or 3, which the phase kernel
     * does not take unless the W stride is a multiple of it): the FMA
     * engine's automatic domain since it took the generic kernel's */
    const bool want_wdil = i % 4 == 1;
    /* tensor cores in NCDHW: the 16-byte runs along W (igemm_plan.runs) two
     * times in three, x one element off 16-byte alignment every other time */
    const bool want_runs = tc && layout == CONVT3D_LAYOUT_NCDHW && rand_in(0, 2) != 0;
    const int chunk = MATH == IGEMM_HALF ? 8 : 4;
    convt3d_problem prob;
    for (int tries = 0;; tries++) {
        prob = random_problem(40, 40, 3, true, layout);
        if (want_wdil) {
            prob.dilation[2] = rand_in(2, 3);
            prob.output_padding[2] = rand_in(0, (int)prob.dilation[2] - 1);
            if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
                continue;
        }
        if (want_runs && !make_runs_apply(prob, MATH == IGEMM_HALF ? 8 : 4) && tries < 1000)
            continue;
        if (!want_kc || (prob.in_channels / prob.groups) % chunk == 0 || tries >= 1000)
            break;
    }
    const problem_data d = make_data(prob, i % 2 == 0, type);
    char why[160];
    if (!igemm_applies(&d.s, why, sizeof why))
        return -1; /* the walk and forced plans refuse it too (EMULATE_LIMITS) */
    const int nd = layout == CONVT3D_LAYOUT_NDHWC;
    g_dilated[nd] += prob.dilation[0] > 1 || prob.dilation[1] > 1 || prob.dilation[2] > 1;
    g_w_dilated[nd] += prob.stride[2] % prob.dilation[2] != 0;
    const bool kc = igemm_kc_applies(&d.s, MATH);
    const igemm_shape t = shapes[rand_in(0, tc ? 2 : 5)];
    const bool off = want_runs && i % 2 == 1; /* x one element past 16-byte alignment */
    /* powers of two to 8 (portable), and 3, 6, 12, 16 (any size splits
     * K; 9-16 the non-portable sizes), at most 1024 emulated threads */
    static const int sizes[] = {1, 2, 4, 8, 3, 6, 12, 16};
    int cs = sizes[rand_in(0, 7)];
    if (cs * 32 * t.wm * t.wn > 1024)
        cs = 1 << rand_in(0, 3);
    igemm_params p;
    size_t smem;
    g_igemm_cs_odd += (cs & (cs - 1)) != 0;
    g_igemm_cs_wide += cs > kIgemmPortableCluster;
    if (!igemm_fill(&d.s, t, MATH, kc, cs, &p, &smem)) {
        printf("FAILED igemm_fill\n");
        return 1;
    }
    std::vector<float> w = pack_weights(d, p.ocb, p.nocb);
    if (MATH == IGEMM_TF32) /* the entry's tf32_weights: rounded once at planning */
        for (float &v : w)
            v = tf32_value(to_tf32(v));
    std::vector<unsigned short> w16(w.size()); /* the entry's half_weights: narrowed, exact */
    for (size_t e = 0; e < w.size(); e++)
        w16[e] = type == CONVT3D_BF16 ? convt3d_f32_to_bf16(w[e]) : convt3d_f32_to_f16(w[e]);
    std::vector<T> xv = typed<T>(d.x), b = typed<T>(d.b);
    std::vector<T> x(xv.size() + off); /* off: x[0] a NaN that no result may see */
    x[0] = typed<T>(std::vector<float>(1, NAN))[0];
    std::copy(xv.begin(), xv.end(), x.begin() + off);
    std::vector<T> y = typed<T>(std::vector<float>(d.s.y_elems, NAN));
    p.x = x.data() + off;
    p.w = MATH == IGEMM_HALF ? reinterpret_cast<const float *>(w16.data()) : w.data();
    p.bias = d.p.has_bias ? b.data() : nullptr;
    p.y = y.data();
    const bool runs = igemm_runs_apply(&d.s, p, MATH);
    g_runs += runs;
    g_runs_off += runs && off;
    emulate_cluster(cs, 32 * t.wm * t.wn, smem / sizeof(float),
                    igemm_body_kc<MATH, T>(t, kc, runs), &p);
    const std::vector<float> yf = widened(y);
    static const char *const names[] = {"ffma", "tf32", "3xtf32", "half"};
    char what[96];
    snprintf(what, sizeof what, "igemm %s %s %d,%d cs %d%s%s%s", names[MATH],
             convt3d_dtype_name(type), t.wm, t.wn, cs, kc ? " kc" : "", runs ? " runs" : "",
             off ? " x+1" : "");
    return check(d, yf, what, igemm_tolerance(MATH, type)) ? 0 : 1;
}

/* mode "": the FMA engine on f32; tf32, 3xtf32: the tensor-core engine on
 * f32; f16, bf16: the tensor-core engine on that data. */
int run_igemm(int i, const char *mode)
{
    if (strcmp(mode, "tf32") == 0)
        return run_igemm_as<IGEMM_TF32, float>(i, CONVT3D_F32);
    if (strcmp(mode, "3xtf32") == 0)
        return run_igemm_as<IGEMM_3XTF32, float>(i, CONVT3D_F32);
    if (strcmp(mode, "f16") == 0)
        return run_igemm_as<IGEMM_HALF, f16_t>(i, CONVT3D_F16);
    if (strcmp(mode, "bf16") == 0)
        return run_igemm_as<IGEMM_HALF, bf16_t>(i, CONVT3D_BF16);
    return run_igemm_as<IGEMM_FFMA, float>(i, CONVT3D_F32);
}

/* ---- the depthwise tile kernel ------------------------------------------- */

/* The grid of a dwtile launch, one block after the other (x: spatial
 * tiles, y: channels, z: images), each in the body's own element type. */
struct dw_emu {
    const dw_params *p;
    unsigned grid[3];
};

template <int SW, int T0, int T1, bool FAST, class T>
void dwtile_body(const emu_thread &t)
{
    const dw_emu &e = *static_cast<const dw_emu *>(t.params);
    for (unsigned z = 0; z < e.grid[2]; z++)
        for (unsigned c = 0; c < e.grid[1]; c++)
            for (unsigned x = 0; x < e.grid[0]; x++) {
                dw_block<SW, T0, T1, FAST, T>(*e.p, t.smem[0], t.tid, (int)c, (int)z, x);
                ct3d_emulate_sync(); /* as the __global__ entry between blocks */
            }
}

template <int SW, int T0, class T>
emu_body dwtile_fast_t1(int t1)
{
    switch (t1) {
    case 0: return dwtile_body<SW, T0, 0, true, T>;
    case 1: return dwtile_body<SW, T0, 1, true, T>;
    case 2: return dwtile_body<SW, T0, 2, true, T>;
    case 3: return dwtile_body<SW, T0, 3, true, T>;
    case 4: return dwtile_body<SW, T0, 4, true, T>;
    default: return nullptr;
    }
}

/* The instantiation launch.cu's dw_kernel_for picks. */
template <class T>
emu_body dwtile_body_for(const dw_params &p)
{
    if (!p.fast)
        return p.sw == 1 ? dwtile_body<1, 0, 0, false, T> : dwtile_body<2, 0, 0, false, T>;
    if (p.sw == 1) {
        switch (p.wt[0]) {
        case 1: return dwtile_body<1, 1, 0, true, T>;
        case 2: return dwtile_body<1, 2, 0, true, T>;
        case 3: return dwtile_body<1, 3, 0, true, T>;
        case 4: return dwtile_body<1, 4, 0, true, T>;
        default: return nullptr;
        }
    }
    switch (p.wt[0]) {
    case 0: return p.wt[1] > 0 ? dwtile_fast_t1<2, 0, T>(p.wt[1]) : nullptr;
    case 1: return dwtile_fast_t1<2, 1, T>(p.wt[1]);
    case 2: return dwtile_fast_t1<2, 2, T>(p.wt[1]);
    case 3: return dwtile_fast_t1<2, 3, T>(p.wt[1]);
    case 4: return dwtile_fast_t1<2, 4, T>(p.wt[1]);
    default: return nullptr;
    }
}

/* run(T(), type) for the element type T that TYPE names ("f16", "bf16",
 * anything else f32): the kernels that take x, bias and y in each type. */
template <class Run>
int run_in_type(const char *type, Run run)
{
    if (strcmp(type, "f16") == 0)
        return run(f16_t(), CONVT3D_F16);
    if (strcmp(type, "bf16") == 0)
        return run(bf16_t(), CONVT3D_BF16);
    return run(float(), CONVT3D_F32);
}

/* Returns 1 on failure, 0 on success, -1 when the dwtile kernel does not
 * take the problem.  Sizes up to 24 in W so that runs of several threads
 * and partial runs both occur. */
template <class T>
int run_dwtile_as(int i, convt3d_dtype type)
{
    convt3d_problem prob = random_problem(1, 1, 2, true, CONVT3D_LAYOUT_NCDHW);
    prob.in_size[2] = rand_in(1, 24);
    if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
        return -1;
    const problem_data d = make_data(prob, i % 2 == 0, type);
    dw_params p;
    size_t smem;
    int threads;
    dw_emu e;
    char why[160];
    if (!plan_dwtile(&d.s, &p, &smem, &threads, e.grid, why, sizeof why))
        return -1;
    const emu_body body = dwtile_body_for<T>(p);
    if (!body) {
        printf("FAILED dwtile: no instantiation\n");
        return 1;
    }
    std::vector<float> w = pack_weights(d, 1, 1);
    std::vector<T> x = typed<T>(d.x), b = typed<T>(d.b);
    std::vector<T> y = typed<T>(std::vector<float>(d.s.y_elems, NAN));
    p.x = reinterpret_cast<const float *>(x.data());
    p.w = w.data();
    p.bias = d.p.has_bias ? reinterpret_cast<const float *>(b.data()) : nullptr;
    p.y = reinterpret_cast<float *>(y.data());
    /* as the launch: 16-byte staging for f32 x only (the vectors are 16-byte
     * aligned), packed stores where y's rows allow */
    p.vec_load = sizeof(T) == sizeof(float) && p.vec_ok;
    p.vec_store = p.ys[4] == 1 && p.out[2] % 4 == 0 &&
                  reinterpret_cast<uintptr_t>(y.data()) % 16 == 0;
    e.p = &p;
    emulate_cluster(1, threads, smem / sizeof(float), body, &e);
    const std::vector<float> yf = widened(y);
    char what[96];
    snprintf(what, sizeof what, "dwtile %s %s sw%d wt %d,%d tx%d ty%d tz%d",
             convt3d_dtype_name(type), p.fast ? "run8" : "slotwise", p.sw, p.wt[0], p.wt[1],
             p.tx, p.ty, p.tz);
    return check(d, yf, what, igemm_tolerance(IGEMM_FFMA, type)) ? 0 : 1;
}

int run_dwtile(int i, const char *type)
{
    return run_in_type(type, [i](auto elem, convt3d_dtype dt) {
        return run_dwtile_as<decltype(elem)>(i, dt);
    });
}

/* ---- the channels-last depthwise kernel ------------------------------------ */

/* The grid of a dwlast launch, one block after the other (x: position
 * blocks, y: channel chunks). */
struct dl_emu {
    const dl_params *p;
    unsigned grid[2];
};

template <int V, class T>
void dwlast_body(const emu_thread &t)
{
    const dl_emu &e = *static_cast<const dl_emu *>(t.params);
    for (unsigned c = 0; c < e.grid[1]; c++)
        for (unsigned x = 0; x < e.grid[0]; x++) {
            dl_block<V, T>(*e.p, t.smem[0], t.tid, x, (int)c);
            ct3d_emulate_sync(); /* as the __global__ entry between blocks */
        }
}

int g_dwlast_vec, g_dwlast_ncdhw, g_dwlast_dilated_w; /* problems run with V 4; NCDHW; l_w > 1 */

/* Returns 1 on failure, 0 on success, -1 when the dwlast kernel does not
 * take the problem.  Depthwise problems with 1 to 70 channels (a multiple
 * of 4 two times in three, so that both builds run), dilation in every
 * dim, W strides up to 4, W sizes up to 24 (several W runs, partial ones),
 * NDHWC three times in four.  Where the vector build plans, every other
 * problem runs the scalar one instead, as the launch does for misaligned
 * pointers. */
template <class T>
int run_dwlast_as(int i, convt3d_dtype type)
{
    const convt3d_layout layout = rand_in(0, 3) ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    convt3d_problem prob = random_problem(1, 1, 4, true, layout);
    const int c = rand_in(0, 2) ? 4 * rand_in(1, 17) : rand_in(1, 70);
    prob.groups = prob.in_channels = prob.out_channels = c;
    prob.in_size[2] = rand_in(1, 24);
    if (rand_in(0, 3) == 0) /* a long kernel: weights of fewer channels staged a block */
        prob.kernel[rand_in(0, 2)] = rand_in(8, 12);
    if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
        return -1;
    const problem_data d = make_data(prob, i % 2 == 0, type);
    dl_params p;
    size_t smem;
    dl_emu e;
    char why[160];
    const bool vec = (i / 2) % 2 == 0 && plan_dwlast(&d.s, 4, &p, &smem, e.grid, why, sizeof why);
    if (!vec && !plan_dwlast(&d.s, 1, &p, &smem, e.grid, why, sizeof why))
        return -1;
    std::vector<float> w = pack_weights(d, 1, 1);
    std::vector<T> x = typed<T>(d.x), b = typed<T>(d.b);
    std::vector<T> y = typed<T>(std::vector<float>(d.s.y_elems, NAN));
    p.x = reinterpret_cast<const float *>(x.data());
    p.w = w.data();
    p.bias = d.p.has_bias ? reinterpret_cast<const float *>(b.data()) : nullptr;
    p.y = reinterpret_cast<float *>(y.data());
    e.p = &p;
    emulate_cluster(1, p.nthreads, smem / sizeof(float),
                    vec ? dwlast_body<4, T> : dwlast_body<1, T>, &e);
    g_dwlast_vec += vec;
    g_dwlast_ncdhw += layout == CONVT3D_LAYOUT_NCDHW;
    g_dwlast_dilated_w += prob.dilation[2] > 1;
    const std::vector<float> yf = widened(y);
    char what[128];
    snprintf(what, sizeof what, "dwlast %s V%d cv%d pb%d iters %d, %d B shared",
             convt3d_dtype_name(type), p.v, p.cv, p.pb, p.iters, (int)smem);
    return check(d, yf, what, igemm_tolerance(IGEMM_FFMA, type)) ? 0 : 1;
}

int run_dwlast(int i, const char *type)
{
    return run_in_type(type, [i](auto elem, convt3d_dtype dt) {
        return run_dwlast_as<decltype(elem)>(i, dt);
    });
}

/* ---- the few-output-channel kernel --------------------------------------- */

/* The grid of a fewout launch, one cluster after the other (x: phase tiles
 * x cluster size, y: groups). */
struct few_emu {
    const few_params *p;
    unsigned grid[2];
};

template <int COG, int TH, class T>
void fewout_body(const emu_thread &t)
{
    const few_emu &e = *static_cast<const few_emu *>(t.params);
    const unsigned cs = (unsigned)e.p->cs;
    for (unsigned g = 0; g < e.grid[1]; g++)
        for (unsigned x = 0; x < e.grid[0]; x += cs) {
            few_block<COG, TH, T>(*e.p, t.smem[t.rank], t.tid, (int)(x + t.rank), (int)g);
            ct3d_emulate_sync(); /* as the __global__ entry between blocks */
        }
}

template <int COG, class T>
emu_body fewout_body_th(int th)
{
    return th == kFewThSizes[0]   ? fewout_body<COG, kFewThSizes[0], T>
           : th == kFewThSizes[1] ? fewout_body<COG, kFewThSizes[1], T>
           : th == kFewThSizes[2] ? fewout_body<COG, kFewThSizes[2], T>
                                  : fewout_body<COG, kFewThSizes[3], T>;
}

template <class T>
emu_body fewout_body_for(int cog, int th)
{
    switch (cog) {
    case 1: return fewout_body_th<1, T>(th);
    case 2: return fewout_body_th<2, T>(th);
    case 3: return fewout_body_th<3, T>(th);
    case 4: return fewout_body_th<4, T>(th);
    case 5: return fewout_body_th<5, T>(th);
    case 6: return fewout_body_th<6, T>(th);
    case 7: return fewout_body_th<7, T>(th);
    default: return fewout_body_th<8, T>(th);
    }
}

/* Returns 1 on failure, 0 on success, -1 when the kernel does not take the
 * problem.  Every third problem has 17-60 input channels a group and 3-5
 * taps a dim at stride 1, so that a weight chunk holds fewer channels than
 * the group (several chunks, a partial last one); two in six (one of them
 * with those taps) have 64-256 in one group and 1-8 output channels, so
 * that the small-grid rule takes clusters and 16-128 slices (16 to 2
 * position slots: a warp spans several slices), their weights in chunks
 * above 48 KB where the taps are many; every third problem may have 5-8
 * output channels a group (two float4s of weights a tap).  T: the data
 * type of x, bias and y. */
template <class T>
int run_fewout_as(int i, convt3d_dtype type)
{
    const convt3d_layout layout = i % 4 < 2 ? CONVT3D_LAYOUT_NCDHW : CONVT3D_LAYOUT_NDHWC;
    convt3d_problem prob = random_problem(12, i % 3 == 1 ? 8 : 4, 3, true, layout);
    if (i % 3 == 2) {
        prob.in_channels = prob.groups * rand_in(17, 60);
        for (int d = 0; d < 3; d++) {
            prob.stride[d] = 1;
            if (prob.dilation[d] > 3) /* EMULATE_LIMITS: 3-5 taps at 2^31 apart, a huge y */
                prob.dilation[d] = 1;
            prob.kernel[d] = rand_in(3, 5);
            prob.padding[d] = rand_in(0, (int)(prob.dilation[d] * (prob.kernel[d] - 1) / 2));
            prob.output_padding[d] = 0;
        }
        if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
            return -1;
    }
    if (i % 6 == 1 || i % 6 == 5) {
        prob.groups = 1;
        prob.in_channels = rand_in(64, 256);
        prob.out_channels = rand_in(1, 8);
        if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
            return -1;
    }
    const problem_data d = make_data(prob, i % 2 == 0, type);
    few_params p;
    size_t smem;
    few_emu e;
    char why[160];
    /* one problem in five with a smaller cluster bound (CONVT3D_CUDA_FEWOUT) */
    const int cs_max = i % 5 == 4 ? 1 << rand_in(0, 2) : 0;
    if (!plan_fewout(&d.s, cs_max, &p, &smem, e.grid, why, sizeof why))
        return -1;
    emu_body body = fewout_body_for<T>(p.cog, p.th);
    std::vector<float> w = pack_weights(d, p.ocb, 1);
    std::vector<T> x = typed<T>(d.x), b = typed<T>(d.b);
    std::vector<T> y = typed<T>(std::vector<float>(d.s.y_elems, NAN));
    p.x = reinterpret_cast<const float *>(x.data());
    p.w = w.data();
    p.bias = d.p.has_bias ? reinterpret_cast<const float *>(b.data()) : nullptr;
    p.y = reinterpret_cast<float *>(y.data());
    e.p = &p;
    emulate_cluster(p.cs, kFewThreads, smem / sizeof(float), body, &e);
    const std::vector<float> yf = widened(y);
    char what[192];
    snprintf(what, sizeof what, "fewout %s %s cog %d, %d slices x %d slots, clusters of %d, "
             "chunk %d of %d, window of %d H taps, H step %d", convt3d_dtype_name(type),
             p.chan_fast ? "NDHWC" : "NCDHW", p.cog, p.ks, p.ps, p.cs, p.ck, p.cig, p.th,
             p.dm[1]);
    g_fewout_cs[p.lcs]++;
    g_fewout_wide += p.cog > 4;
    g_fewout_th[p.th]++;
    if (p.dm[1] > 1)
        g_fewout_h_step++;
    if (p.ck < p.cig)
        g_fewout_chunked++;
    if (!p.chan_fast && p.ks > 8)
        g_fewout_spanning++;
    if (smem > (size_t)kFewSmemMax)
        g_fewout_big_chunk++;
    return check(d, yf, what, igemm_tolerance(IGEMM_FFMA, type)) ? 0 : 1;
}

int run_fewout(int i, const char *type)
{
    return run_in_type(type, [i](auto elem, convt3d_dtype dt) {
        return run_fewout_as<decltype(elem)>(i, dt);
    });
}

/* ---- the few-input (and depthwise) four-output kernel ---------------------- */

int g_fewin_mt[5];      /* problems by W taps unrolled (1, 2, 4) */
int g_fewin_depthwise;  /* problems run through the depthwise build (FEWIN false) */

template <int MT, bool FEWIN>
void fewin_all_threads(const simple_params &p, unsigned total)
{
    for (unsigned t = 0; t < total; t++)
        depthwise32_thread<MT, FEWIN>(p, t);
}

/* Returns 1 on failure, 0 on success, -1 when the kernel does not take the
 * problem.  Every fifth problem depthwise (C_in/G = C_out/G = 1) through
 * the depthwise build and its packing (4 channels a block). */
int run_fewin(int i)
{
    const convt3d_layout layout = i % 2 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    const bool depthwise = i % 5 == 4;
    convt3d_problem prob = random_problem(depthwise ? 1 : 16, depthwise ? 1 : 40, 3, true, layout);
    if (depthwise) {
        prob.groups = rand_in(1, 12);
        prob.in_channels = prob.out_channels = prob.groups;
        if (convt3d_validate(&prob) != CONVT3D_SUCCESS)
            return -1;
    }
    const problem_data d = make_data(prob, i % 3 == 0);
    const long long ocb = depthwise ? 4 : 1;
    simple_params p;
    fill_simple(&d.s, ocb, &p);
    fill_depthwise32(&d.s, &p);
    if (!p.fast32)
        return -1;
    std::vector<float> w = pack_weights(d, ocb, depthwise ? 1 : d.s.cog);
    std::vector<float> y(d.s.y_elems, NAN);
    p.x = d.x.data();
    p.w = w.data();
    p.bias = d.p.has_bias ? d.b.data() : nullptr;
    p.y = y.data();
    p.vec_store = false; /* host vectors: no 16-byte alignment promise */
    const bool ndhwc = layout == CONVT3D_LAYOUT_NDHWC;
    const unsigned total = (unsigned)four_output_threads(&d.s);
    with_w_taps(p.dw_mt, [&](auto mt) {
        if (depthwise)
            fewin_all_threads<decltype(mt)::value, false>(p, total);
        else
            fewin_all_threads<decltype(mt)::value, true>(p, total);
    });
    g_fewin_mt[p.dw_mt]++;
    g_fewin_depthwise += depthwise;
    char what[96];
    snprintf(what, sizeof what, "fewin %s %s, %d W taps unrolled", depthwise ? "depthwise" : "",
             ndhwc ? "NDHWC" : "NCDHW", p.dw_mt);
    return check(d, y, what) ? 0 : 1;
}

/* ---- the tensor-core families' modes --------------------------------------- */

/* The tensor-core window and shuffle families number their inner products
 * alike (tcw_math, shf_math): 0 TF32, 1 3xTF32, 2 half data.  Their name,
 * and the tolerance of the implicit-GEMM engine's same mode. */
static_assert(TCW_TF32 == 0 && TCW_3XTF32 == 1 && TCW_HALF == 2 && SHF_TF32 == 0 &&
                  SHF_3XTF32 == 1 && SHF_HALF == 2,
              "the tensor-core families number their inner products alike");
const char *tc_math_name(int math)
{
    static const char *const names[] = {"tf32", "3xtf32", "half"};
    return names[math];
}
double tc_tolerance(int math, convt3d_dtype type)
{
    static const int igemm_math[] = {IGEMM_TF32, IGEMM_3XTF32, IGEMM_HALF};
    return igemm_tolerance(igemm_math[math], type);
}

/* run(math, element, type) for the MODE word: 3xtf32, f16, bf16, else tf32
 * (math as a std::integral_constant, element a value of the data type). */
template <class Run>
int by_tc_mode(const char *mode, Run run)
{
    if (strcmp(mode, "3xtf32") == 0)
        return run(std::integral_constant<int, 1>{}, float{}, CONVT3D_F32);
    if (strcmp(mode, "f16") == 0)
        return run(std::integral_constant<int, 2>{}, f16_t{}, CONVT3D_F16);
    if (strcmp(mode, "bf16") == 0)
        return run(std::integral_constant<int, 2>{}, bf16_t{}, CONVT3D_BF16);
    return run(std::integral_constant<int, 0>{}, float{}, CONVT3D_F32);
}

/* The tensors a tensor-core entry hands its kernel: x, bias and a
 * NaN-poisoned y in the data type; the weights packed ocb a block, rounded
 * to TF32 once for a TF32 entry (tf32_weights) or narrowed for a half one
 * (half_weights, exact).  MATH numbers the inner products as tc_math_name. */
template <int MATH, class T>
struct tc_tensors {
    std::vector<float> w;
    std::vector<T> w16, x, b, y;
    tc_tensors(const problem_data &d, long long ocb, long long nocb)
        : w(pack_weights(d, ocb, nocb)), x(typed<T>(d.x)), b(typed<T>(d.b)),
          y(typed<T>(std::vector<float>(d.s.y_elems, NAN)))
    {
        if (MATH == 0)
            for (float &v : w)
                v = tf32_value(to_tf32(v));
        w16 = typed<T>(w);
    }
    /* Points the kernel parameters p (x, w, bias, y as float pointers) at them. */
    template <class P>
    void point(P &p, const problem_data &d)
    {
        p.x = reinterpret_cast<const float *>(x.data());
        p.w = MATH == 2 ? reinterpret_cast<const float *>(w16.data()) : w.data();
        p.bias = d.p.has_bias ? reinterpret_cast<const float *>(b.data()) : nullptr;
        p.y = reinterpret_cast<float *>(y.data());
    }
};

/* ---- the tensor-core window kernel --------------------------------------- */

template <int MATH, class T>
void tcwin_body(const emu_thread &t)
{
    const tcw_params &p = *static_cast<const tcw_params *>(t.params);
    for (long long b = 0; b < p.nblocks; b++) {
        tcw_block<MATH, T>(p, t.smem[t.rank], t.tid, b);
        ct3d_emulate_sync(); /* as the __global__ loop between boxes */
    }
}

int g_tcwin_boxes[5]; /* problems by box shape (D rows 1, 2, 4, 8, 16) */
int g_tcwin_chunks;   /* problems with several chunks of input channels */
int g_tcwin_ragged;   /* problems with C_in/G not a multiple of the chunk */
int g_tcwin_dilated;  /* problems with a dilation above 1 */
int g_tcwin_vec;      /* problems with 16-byte staging (tcw_vrows or channels-last) */
int g_tcwin_cl;       /* problems with channels-last staging (tcw_copy_positions) */
int g_tcwin_rounded;  /* TF32 problems run with the window rounded once a chunk and at each tap */

/* Random problems of 1-40 channels a group (C_out/G above 32 half the
 * time: several channel blocks), 9-40 inputs along W, both layouts, strides
 * up to 3, dilation;
 * every other one small-integer data (bit-exact in EXACT and 3xTF32's
 * products). */
template <int MATH, class T>
int run_tcwin_as(int i, convt3d_dtype type)
{
    /* NCDHW every third problem (vector staging's layout), else either */
    const convt3d_layout layout =
        rand_in(0, 1) && i % 3 != 0 ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    convt3d_problem prob = random_problem(40, i % 2 ? 72 : 40, 3, true, layout);
    /* W phases of 9-40 positions: both halves of a box row's m16 tile (the
     * second half, rows g + 8 of the A fragments, holds positions 8-15) */
    for (;;) {
        convt3d_problem q = prob;
        q.in_size[2] = rand_in(9, 40);
        if (i % 3 != 2) /* W a multiple of 8: vector staging's rows (tcw_vrows) */
            q.in_size[2] = 8 * rand_in(2, 5);
        /* NDHWC: C_in/G a multiple of 8 every other time (channels-last
         * staging's 16-byte copies), else whatever came */
        const int gin = q.in_channels / q.groups;
        if (layout == CONVT3D_LAYOUT_NDHWC && i % 2 == 0 && gin % 8 != 0)
            q.in_channels = q.groups * (gin + 8 - gin % 8);
        if (convt3d_validate(&q) == CONVT3D_SUCCESS) {
            prob = q;
            break;
        }
    }
    const problem_data d = make_data(prob, i % 2 == 0, type);
    tcw_params p;
    size_t smem;
    char why[200];
    convt3d_shape typed_shape = d.s; /* the planner sizes a chunk by the data type */
    typed_shape.x_type = typed_shape.w_type = typed_shape.bias_type = typed_shape.y_type = type;
    /* vector or channels-last staging wherever it fits (every sixth problem:
     * by element in the NCDHW layout) */
    if (!plan_tcwin(&typed_shape, kH200.smem_optin, i % 6 == 1 ? 0 : 1, &p, &smem, why,
                    sizeof why))
        return -1;
    tc_tensors<MATH, T> ts(d, kTcwOcb, p.nocb);
    ts.point(p, d);
    /* as the launch does for an x not 16-byte aligned: element staging in
     * the vector plan's layout (every fifth problem) */
    if (i % 5 == 4)
        p.vec = 0;
    /* TF32: the window rounded once a chunk from 1, 2 or 3 taps, or at each
     * tap, so that small problems take both paths too */
    p.preround = i % 4 == 3 ? 0 : 1 + i % 4;
    g_tcwin_vec += p.vec;
    g_tcwin_cl += p.cl;
    emulate_cluster(1, kTcwThreads, smem / sizeof(float), tcwin_body<MATH, T>, &p);
    const std::vector<float> yf = widened(ts.y);
    /* TF32: rounding the window once a chunk must give the MMAs the very
     * bits that rounding each element at each tap gives them */
    bool same = true;
    if constexpr (MATH == TCW_TF32) {
        const std::vector<T> first = ts.y;
        const int preround = p.preround;
        std::fill(ts.y.begin(), ts.y.end(), (T)NAN);
        p.preround = preround ? 0 : 1;
        emulate_cluster(1, kTcwThreads, smem / sizeof(float), tcwin_body<MATH, T>, &p);
        p.preround = preround;
        same = memcmp(first.data(), ts.y.data(), first.size() * sizeof(T)) == 0;
        g_tcwin_rounded++;
        if (!same)
            printf("FAILED tcwin tf32: the window rounded once a chunk and at each tap differ\n");
    }
    for (int k = 0; k < 5; k++)
        g_tcwin_boxes[k] += p.td == 1 << k;
    g_tcwin_chunks += p.nchunks > 1;
    g_tcwin_ragged += d.s.cig % p.ck != 0;
    g_tcwin_dilated += p.dm[0] > 1 || p.dm[1] > 1 || p.dm[2] > 1;
    char what[96];
    snprintf(what, sizeof what, "tcwin %s %s box %dx%dx%d, %s%s staging", tc_math_name(MATH),
             convt3d_dtype_name(type), p.td, p.th, kTcwW, p.cl ? "channels-last " : "",
             p.vec ? "16-byte" : "element");
    return check(d, yf, what, tc_tolerance(MATH, type)) && same ? 0 : 1;
}

int run_tcwin(int i, const char *mode)
{
    return by_tc_mode(mode, [i](auto math, auto elem, convt3d_dtype type) {
        return run_tcwin_as<decltype(math)::value, decltype(elem)>(i, type);
    });
}

/* ---- the tensor-core shuffle kernel -------------------------------------- */

template <int MATH, class T, bool VEC>
void shuffle_body(const emu_thread &t)
{
    const shf_params &p = *static_cast<const shf_params *>(t.params);
    for (long long b = 0; b < p.nblocks; b++) {
        shf_block<MATH, T, VEC>(p, t.smem[t.rank], t.tid, b);
        ct3d_emulate_sync(); /* as the __global__ loop between tiles */
    }
}

int g_shuffle_vec;    /* problems on the 16-byte copies of x */
int g_shuffle_steps;  /* problems with several K steps */
int g_shuffle_ragged; /* problems with C_in/G not a multiple of the K step */
int g_shuffle_blocks; /* problems with several output-channel blocks */
int g_shuffle_cl;     /* NDHWC problems (channels-last stage and stores) */

/* Random problems whose taps do not overlap (kernel = stride 1-3 a dim, at
 * most kShfMaxTaps taps, no padding), NCDHW or NDHWC (every other pair;
 * C_in/G a multiple of 8 every other time there: the 16-byte copies), 1-3 groups, C_in/G 1-70 (several
 * K steps, ragged ones), C_out/G 1-40 (several channel blocks), 1-9 inputs a
 * dim (the last M tile partial; image positions a multiple of the 16-byte
 * copy or not, each copy path runs where it applies), bias half the time;
 * every other one small-integer data. */
template <int MATH, class T>
int run_shuffle_as(int i, convt3d_dtype type)
{
    convt3d_problem prob;
    for (;;) {
        convt3d_problem_init(&prob);
        prob.groups = rand_in(1, 3);
        prob.in_channels = prob.groups * rand_in(1, 70);
        prob.out_channels = prob.groups * rand_in(1, 40);
        prob.batch = rand_in(1, 2);
        long long taps = 1;
        for (int d = 0; d < 3; d++) {
            prob.in_size[d] = rand_in(1, 9);
            prob.kernel[d] = prob.stride[d] = rand_in(1, 3);
            taps *= prob.kernel[d];
        }
        if (i % 4 == 0) /* positions a multiple of 8: the 16-byte copies */
            prob.in_size[2] = 8;
        if ((i / 2) % 2) {
            prob.layout = CONVT3D_LAYOUT_NDHWC;
            if ((i / 4) % 2)
                prob.in_channels = prob.groups * 8 * rand_in(1, 9);
        }
        prob.has_bias = rand_in(0, 1);
        if (taps <= kShfMaxTaps && convt3d_validate(&prob) == CONVT3D_SUCCESS)
            break;
    }
    const problem_data d = make_data(prob, i % 2 == 0, type);
    shf_params p;
    size_t smem;
    char why[200];
    convt3d_shape typed_shape = d.s;
    typed_shape.x_type = typed_shape.w_type = typed_shape.bias_type = typed_shape.y_type = type;
    if (!plan_shuffle(&typed_shape, kH200.smem_optin, &p, &smem, why, sizeof why)) {
        fprintf(stderr, "shuffle: %s\n", why);
        return 1;
    }
    tc_tensors<MATH, T> ts(d, p.ocb, p.nocb);
    ts.point(p, d);
    /* as the launch decides (shf_vector_x) */
    const long long per = 16 / (long long)sizeof(T);
    const bool vec = ((uintptr_t)ts.x.data() & 15u) == 0 &&
                     (p.cl ? p.cig % per == 0 : p.npos % per == 0);
    if (vec)
        emulate_cluster(1, kShfThreads, smem / sizeof(float), shuffle_body<MATH, T, true>, &p);
    else
        emulate_cluster(1, kShfThreads, smem / sizeof(float), shuffle_body<MATH, T, false>, &p);
    const std::vector<float> yf = widened(ts.y);
    g_shuffle_vec += vec;
    g_shuffle_steps += p.nk > 1;
    g_shuffle_ragged += d.s.cig % kShfBK != 0;
    g_shuffle_blocks += p.nocb > 1;
    g_shuffle_cl += p.cl;
    char what[112];
    snprintf(what, sizeof what, "shuffle %s %s %s, %d taps x %d channels a block%s",
             tc_math_name(MATH), convt3d_dtype_name(type), p.cl ? "ndhwc" : "ncdhw", p.taps,
             p.ocb, vec ? ", 16-byte copies" : "");
    return check(d, yf, what, tc_tolerance(MATH, type)) ? 0 : 1;
}

int run_shuffle(int i, const char *mode)
{
    return by_tc_mode(mode, [i](auto math, auto elem, convt3d_dtype type) {
        return run_shuffle_as<decltype(math)::value, decltype(elem)>(i, type);
    });
}

} // namespace

void ct3d_emulate_sync(void) { pthread_barrier_wait(t_block_bar); }
void ct3d_emulate_cluster_sync(void) { pthread_barrier_wait(t_cluster_bar); }
float *ct3d_emulate_cluster_smem(float *ptr, int rank)
{
    return t_cluster_smem[rank] + (ptr - t_cluster_smem[t_rank]);
}

/* mma.sync (m16n8k8 TF32, m16n8k16 f16 / bf16) as plain loops over its
 * fragment layouts (device.cuh).  A thread queues its MMAs; at the flush
 * every thread of the block posts its queued fragments, then computes its
 * own four C elements of each MMA, in order, from the whole warp's.  The
 * hardware reads only the top 19 bits of a TF32 operand (the mask),
 * multiplies exactly and accumulates in at least fp32 (double here).
 * ldmatrix needs no exchange: every lane of a warp names the same tile
 * (device.cuh), so a lane reads its elements from it directly. */
namespace {

enum mma_kind { kMmaTf32, kMmaF16, kMmaBf16 };
struct queued_mma {
    float *c;
    unsigned ab[6];
    mma_kind kind;
};
thread_local std::vector<queued_mma> t_mma_queue;
constexpr size_t kMmaQueueMax = 128; /* per thread and flush: emu_thread.mma_regs */

double tf32_operand(unsigned u)
{
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* One 16-bit operand of a pair (low half first) as its value. */
double half_operand(unsigned word, int which, mma_kind kind)
{
    const uint16_t h = (uint16_t)(which ? word >> 16 : word & 0xffffu);
    return kind == kMmaBf16 ? (double)convt3d_bf16_to_f32(h) : (double)convt3d_f16_to_f32(h);
}

void queue_mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2], mma_kind kind)
{
    queued_mma q;
    q.c = c;
    q.kind = kind;
    for (int r = 0; r < 4; r++)
        q.ab[r] = a[r];
    q.ab[4] = b[0];
    q.ab[5] = b[1];
    if (t_mma_queue.size() >= kMmaQueueMax) {
        fprintf(stderr, "gpu_emulate: more than %zu MMAs between flushes\n", kMmaQueueMax);
        abort();
    }
    t_mma_queue.push_back(q);
}

} // namespace

void ct3d::ct3d_emulate_mma_tf32(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                 int tid)
{
    (void)tid;
    queue_mma(c, a, b, kMmaTf32);
}

void ct3d::ct3d_emulate_mma_half(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2],
                                 int tid, bool bf16)
{
    (void)tid;
    queue_mma(c, a, b, bf16 ? kMmaBf16 : kMmaF16);
}

void ct3d::ct3d_emulate_mma_flush(int tid)
{
    const size_t nq = t_mma_queue.size(), words = kMmaQueueMax * 6;
    unsigned *mine = t_mma_regs + (size_t)tid * words;
    for (size_t q = 0; q < nq; q++)
        memcpy(mine + q * 6, t_mma_queue[q].ab, sizeof t_mma_queue[q].ab);
    ct3d_emulate_sync();
    const unsigned *warp = t_mma_regs + (size_t)(tid & ~31) * words;
    const int lane = tid & 31, g = lane >> 2, t = lane & 3;
    for (size_t q = 0; q < nq; q++) {
        const mma_kind kind = t_mma_queue[q].kind;
        auto reg = [&](int l, int r) { return warp[l * words + q * 6 + r]; };
        /* TF32 (m16n8k8): A[r][k] in lane (r % 8) * 4 + k % 4, register
         * (r >= 8) + 2 (k >= 4); B[k][n] in lane n * 4 + k % 4, register
         * 4 + (k >= 4).  f16 / bf16 (m16n8k16): pairs along k, so A[r][k] in
         * lane (r % 8) * 4 + (k % 8) / 2, register (r >= 8) + 2 (k >= 8),
         * half k % 2; B[k][n] in lane n * 4 + (k % 8) / 2, register
         * 4 + (k >= 8), half k % 2. */
        auto A = [&](int r, int k) {
            if (kind == kMmaTf32)
                return tf32_operand(reg((r % 8) * 4 + k % 4, (r >= 8) + 2 * (k >= 4)));
            return half_operand(reg((r % 8) * 4 + (k % 8) / 2, (r >= 8) + 2 * (k >= 8)), k % 2,
                                kind);
        };
        auto B = [&](int k, int n) {
            if (kind == kMmaTf32)
                return tf32_operand(reg(n * 4 + k % 4, 4 + (k >= 4)));
            return half_operand(reg(n * 4 + (k % 8) / 2, 4 + (k >= 8)), k % 2, kind);
        };
        const int kdim = kind == kMmaTf32 ? 8 : 16;
        float *c = t_mma_queue[q].c;
        for (int e = 0; e < 4; e++) {
            const int r = g + 8 * (e >> 1), n = 2 * t + (e & 1);
            double sum = 0;
            for (int k = 0; k < kdim; k++)
                sum += A(r, k) * B(k, n);
            c[e] = (float)((double)c[e] + sum);
        }
    }
    t_mma_queue.clear();
    ct3d_emulate_sync(); /* everybody has read the fragments */
}

/* The walk rules of the few-output, few-input and window kernels
 * (fewout_preferred, cuda/fewout/plan.cu; fewin_preferred_over_engine,
 * cuda/simple/plan.cu; tcwin_takes_few_inputs, cuda/tcwin/plan.cu) ask the
 * registry whether other entries would take a problem; the emulator links
 * the planners, not the registry, the walk or the launchers.  It checks
 * kernel bodies, not the walk, so those entries stand in as never
 * applicable and the rest of the walk as taking nothing (the rules' other
 * clauses still run). */
namespace ct3d {
extern const cuda_impl cuda_f32_igemm_8x8, cuda_f32_fewin_phase_4;
const cuda_impl cuda_f32_igemm_8x8 = {}, cuda_f32_fewin_phase_4 = {};
bool cuda_entry_applicable(const cuda_impl &, const convt3d_shape *, const device_limits &,
                           char *why, size_t why_size)
{
    snprintf(why, why_size, "not in the emulator");
    return false;
}
const cuda_impl *cuda_walk_after(const cuda_impl &, const convt3d_shape *,
                                 const device_limits &, const cuda_overrides &)
{
    return nullptr;
}
} // namespace ct3d

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "phase") != 0 && strcmp(argv[1], "igemm") != 0 &&
                     strcmp(argv[1], "dwtile") != 0 && strcmp(argv[1], "fewout") != 0 &&
                     strcmp(argv[1], "dwlast") != 0 && strcmp(argv[1], "tcwin") != 0 &&
                     strcmp(argv[1], "fewin") != 0 && strcmp(argv[1], "shuffle") != 0)) {
        fprintf(stderr,
                "usage: %s phase|igemm|dwtile|dwlast|fewout|tcwin|fewin|shuffle COUNT SEED "
                "[KERNEL|MATH|TYPE]\n",
                argv[0]);
        return 2;
    }
    const bool igemm = strcmp(argv[1], "igemm") == 0, dwtile = strcmp(argv[1], "dwtile") == 0,
               fewout = strcmp(argv[1], "fewout") == 0, dwlast = strcmp(argv[1], "dwlast") == 0,
               tcwin = strcmp(argv[1], "tcwin") == 0, fewin = strcmp(argv[1], "fewin") == 0,
               shuffle = strcmp(argv[1], "shuffle") == 0;
    const int count = atoi(argv[2]);
    rng_state = strtoull(argv[3], nullptr, 10) * 2654435761ULL + 1;
    const char *force = argc > 4 ? argv[4] : "";
    int failed = 0, ran = 0;
    for (int i = 0; i < count; i++) {
        const int r = igemm    ? run_igemm(i, force)
                      : dwtile ? run_dwtile(i, force)
                      : dwlast ? run_dwlast(i, force)
                      : fewout ? run_fewout(i, force)
                      : tcwin  ? run_tcwin(i, force)
                      : shuffle ? run_shuffle(i, force)
                      : fewin  ? run_fewin(i)
                               : run_phase(i, force);
        failed += r > 0;
        ran += r >= 0;
    }
    printf("gpu_emulate %s%s%s: %d problems, %d failed", argv[1], *force ? " " : "", force, ran,
           failed);
    if (igemm)
        printf(" (dilated: %d NCDHW, %d NDHWC; a W dilation not dividing the W stride: %d "
               "NCDHW, %d NDHWC)",
               g_dilated[0], g_dilated[1], g_w_dilated[0], g_w_dilated[1]);
    if (igemm)
        printf(" (clusters of 3/6/12 blocks: %d; of 12/16, past the portable 8: %d)",
               g_igemm_cs_odd, g_igemm_cs_wide);
    if (igemm && g_runs)
        printf(" (runs along W: %d, x off alignment in %d)", g_runs, g_runs_off);
    if (fewout)
        printf(" (%d with several weight chunks, %d NCDHW with more than 8 slices, %d with "
               "chunks above 48 KB, %d with H taps dm > 1 rows apart; H windows of 2/3/5/8 "
               "taps: %d/%d/%d/%d; clusters of 1/2/4/8: %d/%d/%d/%d; C_out/G 5-8: %d)",
               g_fewout_chunked, g_fewout_spanning, g_fewout_big_chunk, g_fewout_h_step,
               g_fewout_th[2], g_fewout_th[3], g_fewout_th[5], g_fewout_th[8], g_fewout_cs[0],
               g_fewout_cs[1], g_fewout_cs[2], g_fewout_cs[3], g_fewout_wide);
    if (tcwin)
        printf(" (boxes of 1/2/4/8/16 D rows: %d/%d/%d/%d/%d; %d with several chunks, %d with "
               "C_in/G not a multiple of the chunk, %d dilated, %d by 16-byte words, %d "
               "channels-last; TF32: %d, both roundings bitwise equal)",
               g_tcwin_boxes[0], g_tcwin_boxes[1], g_tcwin_boxes[2], g_tcwin_boxes[3],
               g_tcwin_boxes[4], g_tcwin_chunks, g_tcwin_ragged, g_tcwin_dilated, g_tcwin_vec,
               g_tcwin_cl, g_tcwin_rounded);
    if (shuffle)
        printf(" (%d on 16-byte copies of x, %d with several K steps, %d with C_in/G not a "
               "multiple of %d, %d with several output-channel blocks, %d NDHWC)",
               g_shuffle_vec, g_shuffle_steps, g_shuffle_ragged, kShfBK, g_shuffle_blocks,
               g_shuffle_cl);
    if (fewin)
        printf(" (W taps unrolled 1/2/4: %d/%d/%d; %d depthwise)", g_fewin_mt[1], g_fewin_mt[2],
               g_fewin_mt[4], g_fewin_depthwise);
    if (dwlast)
        printf(" (%d with 4 channels a thread, %d NCDHW, %d dilated along W)", g_dwlast_vec,
               g_dwlast_ncdhw, g_dwlast_dilated_w);
    printf("\n");
    return failed ? 1 : 0;
}
