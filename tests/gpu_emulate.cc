// Host emulator of the CUDA kernels' block bodies (src/cuda/phase/kernel.cuh,
// src/cuda/igemm/kernel.cuh): checks them against convt3d_reference() on a machine
// without a GPU.  A block's threads run as pthreads, __syncthreads() and the
// cluster barrier as pthread barriers, cp.async as plain copies; shared
// memory starts as NaN so that a read of something nobody wrote shows.
// Built and run by `make emulate` (Makefile.am: this file and the planners,
// src/cuda/*/plan.cu, compiled for the host under ASan and UBSan); not part
// of make check (it needs a C++ compiler and CUDA's headers).
//
//   gpu_emulate phase|igemm COUNT SEED [KERNEL]
//
// COUNT random problems (even ones with small-integer data, compared
// exactly; odd ones uniform, relative L2 error <= 1e-5), plans from the
// planner with H200 limits; phase: KERNEL is grouped or tiled (the forced
// variants, with 4, 8 or the planner's channels a thread) or "" (the phase
// planner's own choice), a third of the problems with a random
// CONVT3D_CUDA_TILE; igemm: every block shape and cluster size.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "cuda/igemm/kernel.cuh"
#include "cuda/igemm/plan.h"
#include "cuda/phase/kernel.cuh"
#include "cuda/phase/plan.h"

using namespace ct3d;

namespace {

/* ---- the emulated execution model ---------------------------------------- */

thread_local pthread_barrier_t *t_block_bar;
thread_local pthread_barrier_t *t_cluster_bar;
thread_local float *const *t_cluster_smem;
thread_local int t_rank;

/* One emulated thread: its block's barrier and shared memory, its cluster's. */
struct emu_thread {
    pthread_barrier_t *block_bar, *cluster_bar;
    float *const *smem; /* of each rank of the cluster */
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
    std::vector<emu_thread> threads(cs * nt);
    std::vector<pthread_t> ids(cs * nt);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (int r = 0; r < cs; r++)
        for (int t = 0; t < nt; t++) {
            threads[r * nt + t] = {&block_bar[r], &cluster_bar, smem.data(), r, t, body, params};
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

int rand_in(int lo, int hi) { return lo + (int)(next_random() % (unsigned long long)(hi - lo + 1)); }

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
        if (convt3d_validate(&p) == CONVT3D_SUCCESS)
            return p;
    }
}

/* x, w, bias and the reference output of one problem. */
struct problem_data {
    convt3d_problem p;
    convt3d_shape s;
    std::vector<float> x, w, b, ref;
    bool ints;
};

problem_data make_data(const convt3d_problem &p, bool ints)
{
    problem_data d;
    d.p = p;
    convt3d_shape_from_problem(&p, &d.s);
    d.ints = ints;
    d.x.resize(d.s.x_elems);
    d.w.resize(d.s.w_elems);
    d.b.resize(d.s.cout);
    for (auto *v : {&d.x, &d.w, &d.b})
        for (auto &e : *v)
            e = ints ? (float)rand_in(-3, 3) : (float)((next_random() % 20001) / 10000.0 - 1.0);
    d.ref.resize(d.s.y_elems);
    convt3d_reference(&p, d.x.data(), d.w.data(), p.has_bias ? d.b.data() : nullptr,
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

/* Whether y matches the reference; prints the problem if not. */
bool check(const problem_data &d, const std::vector<float> &y, const char *what)
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
    if (unwritten == 0 && (d.ints ? most == 0 : rel <= 1e-5))
        return true;
    /* the descriptor convt3d-bench reads, so the failure can be pasted into it */
    char desc[512];
    convt3d_problem_to_string(&d.p, desc, sizeof desc);
    printf("FAILED %s: %s: %lld not finite, max error %g, rel L2 %g\n", what, desc, unwritten, most,
           rel);
    return false;
}

const device_limits kH200 = {232448, 233472, 132};

/* ---- the phase kernel ---------------------------------------------------- */

template <int SW, int QW, int OCT, int F>
void phase_body(const emu_thread &t)
{
    const phase_params &p = *static_cast<const phase_params *>(t.params);
    for (long long vb = 0; vb < p.nblocks; vb++) {
        phase_block<SW, QW, OCT, F>(p, t.smem[0], t.tid, vb);
        ct3d_emulate_sync(); /* as the __global__ entry between blocks */
    }
}

template <int SW, int QW, int OCT>
void (*phase_body_for_features(int f))(const emu_thread &)
{
    switch (f) {
    case 0: return phase_body<SW, QW, OCT, 0>;
    case kSliced: return phase_body<SW, QW, OCT, kSliced>;
    case kFused: return phase_body<SW, QW, OCT, kFused>;
    default: return phase_body<SW, QW, OCT, kSliced | kFused>;
    }
}

void (*phase_body_for(const phase_plan &k))(const emu_thread &)
{
    const int f = phase_features(k.p);
    if (k.sw == 2)
        return k.oct == 8 ? phase_body_for_features<2, 4, 8>(f) : phase_body_for_features<2, 4, 4>(f);
    return k.oct == 8 ? phase_body_for_features<1, 8, 8>(f) : phase_body_for_features<1, 8, 4>(f);
}

/* Returns 1 on failure, 0 on success, -1 when the phase kernel does not
 * take the problem. */
int run_phase(int i, const char *force)
{
    const convt3d_layout layout = rand_in(0, 1) ? CONVT3D_LAYOUT_NDHWC : CONVT3D_LAYOUT_NCDHW;
    const problem_data d = make_data(random_problem(9, 12, 2, false, layout), i % 2 == 0);
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
    std::vector<float> w = pack_weights(d, k.p.ocb, k.p.nocb), y(d.s.y_elems, NAN);
    phase_params p = k.p;
    p.x = d.x.data();
    p.w = w.data();
    p.bias = d.p.has_bias ? d.b.data() : nullptr;
    p.y = y.data();
    p.vec_store = 0;
    emulate_cluster(1, p.nthreads, k.smem / sizeof(float), phase_body_for(k), &p);
    char what[600];
    snprintf(what, sizeof what, "%s toc%d tx%d ty%d tz%d ks%d cic%d fuse_w %d%s%s",
             phase_name(k.all, k.sw, k.oct), p.toc, p.tx, p.ty, p.tz, p.ks, p.cic, p.fuse_w,
             note[0] ? "; " : "", note);
    return check(d, y, what) ? 0 : 1;
}

/* ---- the implicit-GEMM kernel -------------------------------------------- */

template <int WM, int WN>
void igemm_body(const emu_thread &t)
{
    const igemm_params &p = *static_cast<const igemm_params *>(t.params);
    for (long long c = 0; c < p.ntiles; c++) {
        igemm_block<WM, WN>(p, t.smem[t.rank], t.tid, c * p.cs + t.rank);
        ct3d_emulate_cluster_sync(); /* the next cluster reuses the blocks */
    }
}

int run_igemm(int i)
{
    static const igemm_shape shapes[] = {{2, 4}, {4, 2}, {2, 2}, {4, 1}, {1, 4}, {2, 1}};
    const problem_data d =
        make_data(random_problem(40, 40, 3, true, CONVT3D_LAYOUT_NCDHW), i % 2 == 0);
    const igemm_shape t = shapes[rand_in(0, 5)];
    const int cs = 1 << rand_in(0, 3);
    igemm_params p;
    size_t smem;
    if (!igemm_fill(&d.s, t, cs, &p, &smem)) {
        printf("FAILED igemm_fill\n");
        return 1;
    }
    std::vector<float> w = pack_weights(d, p.ocb, p.nocb), y(d.s.y_elems, NAN);
    p.x = d.x.data();
    p.w = w.data();
    p.bias = d.p.has_bias ? d.b.data() : nullptr;
    p.y = y.data();
    void (*body)(const emu_thread &) = igemm_body<2, 1>;
    if (t.wm == 2 && t.wn == 4)
        body = igemm_body<2, 4>;
    else if (t.wm == 4 && t.wn == 2)
        body = igemm_body<4, 2>;
    else if (t.wm == 2 && t.wn == 2)
        body = igemm_body<2, 2>;
    else if (t.wm == 4 && t.wn == 1)
        body = igemm_body<4, 1>;
    else if (t.wm == 1 && t.wn == 4)
        body = igemm_body<1, 4>;
    emulate_cluster(cs, 32 * t.wm * t.wn, smem / sizeof(float), body, &p);
    char what[64];
    snprintf(what, sizeof what, "igemm %d,%d cs %d", t.wm, t.wn, cs);
    return check(d, y, what) ? 0 : 1;
}

} // namespace

void ct3d_emulate_sync(void) { pthread_barrier_wait(t_block_bar); }
void ct3d_emulate_cluster_sync(void) { pthread_barrier_wait(t_cluster_bar); }
float *ct3d_emulate_cluster_smem(float *ptr, int rank)
{
    return t_cluster_smem[rank] + (ptr - t_cluster_smem[t_rank]);
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "phase") != 0 && strcmp(argv[1], "igemm") != 0)) {
        fprintf(stderr, "usage: %s phase|igemm COUNT SEED [KERNEL]\n", argv[0]);
        return 2;
    }
    const bool igemm = strcmp(argv[1], "igemm") == 0;
    const int count = atoi(argv[2]);
    rng_state = strtoull(argv[3], nullptr, 10) * 2654435761ULL + 1;
    const char *force = argc > 4 ? argv[4] : "";
    int failed = 0, ran = 0;
    for (int i = 0; i < count; i++) {
        const int r = igemm ? run_igemm(i) : run_phase(i, force);
        failed += r > 0;
        ran += r >= 0;
    }
    printf("gpu_emulate %s%s%s: %d problems, %d failed\n", argv[1], *force ? " " : "", force, ran,
           failed);
    return failed ? 1 : 0;
}
