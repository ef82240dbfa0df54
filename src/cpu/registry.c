/* The CPU implementations (registry.h): each instruction set built into
 * this library, best first, and within it for NCDHW the input-channel-lane
 * tile (few output channels a group, many input channels) and the
 * output-channel tile before the W-lane tile (which always applies to
 * NCDHW), then for NDHWC
 * the depthwise tile, the input-channel-lane tile (few output channels a
 * group, many input channels: the reduction fills the vectors), the W-lane
 * tile on transposed rows (few output channels a group, long W rows) and the
 * grouped-lanes tile (which fills the vectors across groups) before the
 * tile of one group at a time (which always applies to NDHWC). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* the kinds, defined below the table */
static const cpu_family ncdhw_pw, ncdhw_colg, ncdhw_icl, ncdhw_oc, ncdhw, ndhwc_pw, ndhwc_dw, ndhwc_icl,
    ndhwc_tr, ndhwc_pl, ndhwc_gl, ndhwc;

/* Whether family f's kernel on im's instruction set would take s where the
 * walk reaches it (it applies and its rule does not pass it over): what an
 * earlier family's rule asks of a later one. */
static int family_takes(const cpu_family *f, const cpu_impl *im, const convt3d_shape *s,
                        char *why, size_t why_size)
{
    return (!f->applicable || f->applicable(im, s, why, why_size)) &&
           !(f->passed_over && f->passed_over(im, s, why, why_size));
}

/* Taps an output has on average: the kernel volume over the stride product. */
static double taps_an_output(const convt3d_shape *s)
{
    return (double)s->k_volume / ((double)s->s[0] * (double)s->s[1] * (double)s->s[2]);
}

/* The transposed NDHWC tile (a W-lane tile on transposed rows) exists for
 * the register-tiled sets only: the portable set lists no entry for it. */
#define CPU_NDHWC_FIRST(isa, sym)                                                              \
    {"cpu/f32_pointwise_ndhwc__" isa, &sym, &ndhwc_pw},                                        \
        {"cpu/f32_phase_depthwise_ndhwc__" isa, &sym, &ndhwc_dw},                              \
        {"cpu/f32_phase_iclanes_ndhwc__" isa, &sym, &ndhwc_icl},
#define CPU_NDHWC_LAST(isa, sym)                                                               \
    {"cpu/f32_phase_grouplanes_ndhwc__" isa, &sym, &ndhwc_gl},                                 \
        {"cpu/f32_phase_gather_ndhwc__" isa, &sym, &ndhwc},
#define CPU_IMPLS(isa, sym)                                                                    \
    {"cpu/f32_pointwise_ncdhw__" isa, &sym, &ncdhw_pw},                                        \
        {"cpu/f32_colgemm_ncdhw__" isa, &sym, &ncdhw_colg},                                    \
        {"cpu/f32_phase_iclanes_ncdhw__" isa, &sym, &ncdhw_icl},                               \
        {"cpu/f32_phase_gather_ncdhw_oc__" isa, &sym, &ncdhw_oc},                              \
        {"cpu/f32_phase_gather_ncdhw__" isa, &sym, &ncdhw}, CPU_NDHWC_FIRST(isa, sym)          \
        {"cpu/f32_phase_transposed_ndhwc__" isa, &sym, &ndhwc_tr},                             \
        {"cpu/f32_phase_poslanes_ndhwc__" isa, &sym, &ndhwc_pl}, CPU_NDHWC_LAST(isa, sym)

static const cpu_impl impls[] = {
#if CONVT3D_HAVE_CPU_AVX512
    CPU_IMPLS("avx512", convt3d_cpu_isa_avx512)
#endif
#if CONVT3D_HAVE_CPU_AVX2
    CPU_IMPLS("avx2", convt3d_cpu_isa_avx2)
#endif
    {"cpu/f32_pointwise_ncdhw__generic", &convt3d_cpu_isa_generic, &ncdhw_pw},
    {"cpu/f32_colgemm_ncdhw__generic", &convt3d_cpu_isa_generic, &ncdhw_colg},
    {"cpu/f32_phase_iclanes_ncdhw__generic", &convt3d_cpu_isa_generic, &ncdhw_icl},
    {"cpu/f32_phase_gather_ncdhw__generic", &convt3d_cpu_isa_generic, &ncdhw},
    CPU_NDHWC_FIRST("generic", convt3d_cpu_isa_generic)
    CPU_NDHWC_LAST("generic", convt3d_cpu_isa_generic)
};
#define N_IMPLS ((int)(sizeof impls / sizeof impls[0]))

int cpu_impl_count(void) { return N_IMPLS; }

const cpu_impl *cpu_impl_at(int index)
{
    return index >= 0 && index < N_IMPLS ? &impls[index] : NULL;
}

const cpu_impl *cpu_impl_named(const char *name)
{
    for (int i = 0; name && i < N_IMPLS; i++)
        if (strcmp(impls[i].name, name) == 0)
            return &impls[i];
    return NULL;
}

/* ---- CPU features ------------------------------------------------------- */

enum { CPU_FEATURE_AVX2 = 1, CPU_FEATURE_AVX512 = 2, CPU_FEATURES_KNOWN = 4 };

static int detect_features(void)
{
    int f = CPU_FEATURES_KNOWN;
#if CONVT3D_HAVE_CPU_AVX2 || CONVT3D_HAVE_CPU_AVX512
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        f |= CPU_FEATURE_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
        f |= CPU_FEATURE_AVX512;
#endif
    return f;
}

/* Detected once; racing first callers compute the same value. */
static int cpu_features(void)
{
    static int cached;
    int f = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (!f) {
        f = detect_features();
        __atomic_store_n(&cached, f, __ATOMIC_RELEASE);
    }
    return f;
}

static int isa_supported(const cpu_isa *isa)
{
#if CONVT3D_HAVE_CPU_AVX512
    if (isa == &convt3d_cpu_isa_avx512)
        return (cpu_features() & CPU_FEATURE_AVX512) != 0;
#endif
#if CONVT3D_HAVE_CPU_AVX2
    if (isa == &convt3d_cpu_isa_avx2)
        return (cpu_features() & CPU_FEATURE_AVX2) != 0;
#endif
    return isa == &convt3d_cpu_isa_generic;
}

/* ---- the kinds of kernel ------------------------------------------------ */

/* A kind's override name=1|0: 1 when it asks to take the kind wherever it
 * applies, 0 when never (why then says so), -1 when unset or otherwise. */
static int env_forced(const char *name, char *why, size_t why_size)
{
    const char *force = getenv(name);
    if (force && strcmp(force, "1") == 0)
        return 1;
    if (force && strcmp(force, "0") == 0) {
        snprintf(why, why_size, "%s=0", name);
        return 0;
    }
    return -1;
}

static const cpu_kernel *ncdhw_oc_kernel(const cpu_isa *isa) { return &isa->ncdhw_oc; }
static const cpu_kernel *ncdhw_kernel(const cpu_isa *isa) { return &isa->ncdhw; }
static const cpu_kernel *ndhwc_kernel(const cpu_isa *isa) { return &isa->ndhwc; }
static const cpu_kernel *ndhwc_dw_kernel(const cpu_isa *isa) { return &isa->ndhwc_dw; }
static const cpu_kernel *ndhwc_gl_kernel(const cpu_isa *isa) { return &isa->ndhwc_gl; }
static const cpu_kernel *ndhwc_icl_kernel(const cpu_isa *isa) { return &isa->ndhwc_icl; }
static const cpu_kernel *ncdhw_icl_kernel(const cpu_isa *isa) { return &isa->ncdhw_icl; }
static const cpu_kernel *ncdhw_pw_kernel(const cpu_isa *isa) { return &isa->ncdhw_pw; }
static const cpu_kernel *ndhwc_pw_kernel(const cpu_isa *isa) { return &isa->ndhwc_pw; }
static const cpu_kernel *ncdhw_colg_kernel(const cpu_isa *isa) { return &isa->ncdhw_colg; }

/* The pointwise kernels need one tap in every dim (dilation is then moot). */
static int pw_applicable(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size)
{
    (void)im;
    if (s->k[0] != 1 || s->k[1] != 1 || s->k[2] != 1) {
        snprintf(why, why_size, "kernel %lldx%lldx%lld (it needs 1x1x1)", (long long)s->k[0],
                 (long long)s->k[1], (long long)s->k[2]);
        return 0;
    }
    return 1;
}

/* A few output channels from at least a vector of input channels: the
 * input-channel-lane tile (next in the walk) fills its lanes where this
 * one uses C_out/G of them.  Measured (Zen 4, 2 threads, round 26: C_in/G
 * 16-256, C_out/G 1-4, strides 1 and 2, 32 problems): 1.2-4x faster at
 * C_out/G <= 2, and at 3-4 with stride 1; at 3-4 with stride 2 slower from
 * 16-64 input channels, faster from 256 (and seed 3's random_147, 256 -> 4
 * at stride 1x2x2: 0.16 against 0.29-0.33 ms), so from 8 vectors on. */
static int pw_icl_better(const cpu_impl *im, const convt3d_shape *s)
{
    const int64_t vectors = s->cig / im->isa->ic_lanes;
    const int stride1 = s->s[0] == 1 && s->s[1] == 1 && s->s[2] == 1;
    return vectors >= 1 && (s->cog <= 2 || (s->cog <= 4 && (stride1 || vectors >= 8)));
}

/* NDHWC puts a group's output channels in the lanes: where they fill at
 * most half a vector and there are other groups, the tiles with lanes
 * across groups (depthwise, grouped lanes) keep the lanes busier (half a
 * vector from round 39: 16 problems of 8 output channels a group, Zen 4,
 * 15 faster, geomean 2.0x).  NCDHW puts positions in the lanes: never
 * passed over. */
static int ndhwc_pw_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    const int64_t lanes = im->isa->vector_lanes;
    if (s->groups > 1 && 2 * s->cog <= lanes) {
        snprintf(why, why_size, "C_out/G=%lld fills at most half a %lld-lane vector",
                 (long long)s->cog, (long long)lanes);
        return 1;
    }
    if (pw_icl_better(im, s)) {
        snprintf(why, why_size,
                 "C_out/G=%lld from C_in/G=%lld: the input-channel-lane tile fills its lanes",
                 (long long)s->cog, (long long)s->cig);
        return 1;
    }
    return 0;
}

static int pw_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "pointwise GEMM, tiles of up to %d %s x %d-lane vectors",
                    pl->tile_a,
                    pl->s.layout == CONVT3D_LAYOUT_NCDHW ? "channels" : "positions",
                    pl->tile_b);
}

/* Tiles are built for every C_out/G up to CPU_ICL_MAXO (all of a group's
 * channels in one tile). */
static int ndhwc_icl_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    (void)im;
    if (s->cog > CPU_ICL_MAXO) {
        snprintf(why, why_size, "C_out/G=%lld (tiles are built for 1-%d)", (long long)s->cog,
                 CPU_ICL_MAXO);
        return 0;
    }
    return 1;
}

/* Whether C_in/G fills at least `need` lanes of the reduction; why says so
 * where it does not. */
static int icl_lanes_filled(const convt3d_shape *s, int64_t need, char *why, size_t why_size)
{
    if (s->cig < need) {
        snprintf(why, why_size, "C_in/G=%lld fills fewer than %lld lanes of the reduction",
                 (long long)s->cig, (long long)need);
        return 0;
    }
    return 1;
}

/* Below a whole vector (half a vector <= C_in/G < ic_lanes) the tile
 * runs half-empty lanes and a lane sum for each output.  Round 38 (Zen 4,
 * 2 threads, bench/NOTES.md) timed it against the tiles the walk took
 * before: on seeds 1-20 of --random it lost to the W-lane tile on
 * transposed rows on 17 of 33 problems (to 0.53x) and to the grouped-lanes
 * tile (32 groups of 8 -> 4, k2x4x2 s2: 3.98 -> 11.6 ms), and where 3-4
 * output channels a group share each broadcast of the gather tile and an
 * output has fewer than 4 taps, so each lane sum ends few FMAs (9 -> 4
 * channels k2 s2: 1.67 -> 2.85 ms).  So it stays out of those, and it beat
 * the gather and position-lane tiles on 24 of 26 of the rest (up to
 * 2.2x); chosen so, it was faster on 28 of 31 problems of seeds 21-40,
 * never timed before (geomean 1.37x, worst 0.83x). */
static int icl_half_vector_pays(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    /* The lanes here must fill at least twice the share of a vector that
     * the gather tile's output-channel lanes fill: never binding with
     * AVX-512 (C_out/G <= 4 of 16 lanes against 8 or more of 16), but with
     * AVX2 it leaves 4 output channels (half of 8 lanes) to the gather tile,
     * and 3 unless C_in/G >= 6.  Round 40 (Zen 3, 1 thread, forced against
     * the walk's tile on the 99 NDHWC problems of seeds 1-20 with C_in/G
     * 4-7): with 4 output channels the lanes here lost all 6 (0.45-0.72x). */
    if (2 * s->cog * im->isa->ic_lanes > s->cig * im->isa->vector_lanes) {
        snprintf(why, why_size,
                 "C_in/G=%lld fills half a vector, not twice the share of C_out/G=%lld in the "
                 "gather tile's lanes",
                 (long long)s->cig, (long long)s->cog);
        return 0;
    }
    if (family_takes(&ndhwc_gl, im, s, why, why_size)) {
        snprintf(why, why_size, "C_in/G=%lld fills half a vector; the grouped lanes fill theirs",
                 (long long)s->cig);
        return 0;
    }
    if (family_takes(&ndhwc_tr, im, s, why, why_size)) {
        snprintf(why, why_size, "C_in/G=%lld fills half a vector; the W-lane tile takes it",
                 (long long)s->cig);
        return 0;
    }
    const double taps = taps_an_output(s);
    if (s->cog >= 3 && taps < 4.0) {
        snprintf(why, why_size,
                 "C_in/G=%lld fills half a vector and C_out/G=%lld lane sums end %.2f taps each "
                 "(below 4)",
                 (long long)s->cig, (long long)s->cog, taps);
        return 0;
    }
    return 1;
}

/* With 8-lane vectors, several groups of 2-4 output channels from one or two
 * vectors of input channels a group, whose output channels, a batch of
 * groups at a time, fill whole vectors of y (the W-lane tile on transposed
 * rows writes y so, cpu/ndhwc_transposed.h's tr_batch; a single group of at
 * most 4 never does), on W phases of at least two vectors of positions:
 * there the W-lane tile fills its lanes along W, amortises x's transposes
 * over 2-4 outputs and streams whole lines, while each output of the
 * input-channel-lane tile ends its lane sum after one or two FMAs a tap.
 * Round 42 (Zen 3, 1 thread): forced on 26 problems of seeds 1-30 with
 * groups that the walk gave the input-channel lanes at C_in/G >= 8, then
 * the walk with and without a first rule (no bound on C_in/G or the phase)
 * on 89 problems; on the 29 this rule takes the W lanes were faster on 22
 * (geometric mean 1.37x, to 2.7x; unchanged problems of the same runs
 * 0.98x), while from 3 vectors of input channels or with shorter phases
 * they lost 2 of 3 (0.74x).  This compares those two tiles only: the W-lane
 * tile's own cost rule (against the channel tiles) does not apply to such
 * problems.  AVX-512 was not measured so. */
static int tr_groups_fill_lines(const cpu_impl *im, const convt3d_shape *s)
{
    const int64_t lanes = im->isa->vector_lanes, ic = im->isa->ic_lanes;
    if (lanes != 8 || s->groups < 2 || s->cog < 2 || s->cog > 4 || s->cig < ic ||
        s->cig > 2 * ic || cpu_phase_len(s->out[2], s->s[2], 0) < 2 * lanes)
        return 0;
    return cpu_ndhwc_tr_batch(s, lanes) * s->cog % lanes == 0;
}

static int icl_tr_takes_groups(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    if (!tr_groups_fill_lines(im, s) || !family_takes(&ndhwc_tr, im, s, why, why_size))
        return 0;
    snprintf(why, why_size,
             "%lld groups of C_out/G=%lld fill whole vectors of y: the W-lane tile takes it",
             (long long)s->groups, (long long)s->cog);
    return 1;
}

/* Taken when C_in/G fills at least one vector of the reduction: then at
 * least half of its lanes work (C_in/G = ic_lanes + 1 is the worst, just
 * over half), while the tile of one group uses C_out/G of its lanes -- at
 * most 4 of 8 (AVX2) or 16 (AVX-512) -- and pays a broadcast an FMA, and the
 * grouped-lanes tile cannot hold the input span of more than one such group
 * in a vector.  Also from half a vector of input channels (8 with
 * AVX-512, 4 with AVX2) where icl_half_vector_pays.  Below that the
 * channel-lane tiles stay (their lanes across groups can be full). */
static int ndhwc_icl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                 size_t why_size)
{
    /* half a vector with SIMD lanes; the portable kernel's 8 partial sums
     * stay whole */
    const int64_t ic = im->isa->ic_lanes;
    if (!icl_lanes_filled(s, im->isa->vector_lanes > 1 ? ic / 2 : ic, why, why_size))
        return 1;
    if (icl_tr_takes_groups(im, s, why, why_size))
        return 1;
    return s->cig < im->isa->ic_lanes && !icl_half_vector_pays(im, s, why, why_size);
}

static int ndhwc_dw_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    (void)im;
    if (s->cig != 1 || s->cog != 1) {
        snprintf(why, why_size, "C_in/G=%lld, C_out/G=%lld (it needs 1 and 1)",
                 (long long)s->cig, (long long)s->cog);
        return 0;
    }
    return 1;
}

/* Lanes across groups pay where a group alone would leave lanes idle
 * (C_out/G below the vector), and the tile holds a vector's input span in
 * one register, or two where the ISA permutes across two (AVX-512). */
static int ndhwc_gl_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    const int64_t lanes = im->isa->group_lanes;
    if (s->cog >= lanes) {
        snprintf(why, why_size, "C_out/G=%lld fills %lld-lane vectors by itself",
                 (long long)s->cog, (long long)lanes);
        return 0;
    }
    const int64_t span = cpu_ndhwc_gl_span(s, lanes), most = lanes * im->isa->gl_span_vectors;
    if (span > most) {
        snprintf(why, why_size,
                 "a vector of %lld output channels reads %lld input channels (at most %lld; "
                 "C_in/G=%lld, C_out/G=%lld)",
                 (long long)lanes, (long long)span, (long long)most, (long long)s->cig,
                 (long long)s->cog);
        return 0;
    }
    return 1;
}

/* A span of two vectors costs a two-vector permute (vpermt2ps) an FMA,
 * which pays only where the tile of one group would leave most lanes idle.
 * Measured (Zen 4, 2 threads, seed 3 of --random, round 33): 16 groups of
 * 2 -> 1 channels (k1 s2) 2.5-3.0 ms against the gather tile's 7.8, 4 of
 * 8 -> 3 1.38 -> 0.63 ms, but 16 of 8 -> 7 16.4 -> 17.7: taken up to a
 * quarter of a vector of output channels a group. */
static int ndhwc_gl_span_pays(const cpu_impl *im, const convt3d_shape *s, char *why,
                              size_t why_size)
{
    const int64_t lanes = im->isa->group_lanes;
    if (cpu_ndhwc_gl_span(s, lanes) > lanes && 4 * s->cog > lanes) {
        snprintf(why, why_size,
                 "its input spans take two vectors, which pay up to C_out/G=%lld (C_out/G=%lld)",
                 (long long)(lanes / 4), (long long)s->cog);
        return 0;
    }
    return 1;
}

/* With one group there are no other groups to lay across the lanes: the
 * grouped-lanes tile then fills the lanes the gather tile does (C_out) and
 * only adds a permute to each multiply-add where the gather tile loads a
 * broadcast.  Round 25 (Zen 4, seeds 1, 2, 4, 5 of --random): the gather
 * tile faster on 27 of the 35 such problems, geometric mean 1.19x. */
static int ndhwc_gl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    if (s->groups == 1) {
        snprintf(why, why_size, "one group: no other groups to lay across the lanes");
        return 1;
    }
    return !ndhwc_gl_span_pays(im, s, why, why_size);
}

static int ncdhw_oc_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    if (s->l[2] != 1) {
        snprintf(why, why_size, "W dilation %lld (it needs 1)", (long long)s->l[2]);
        return 0;
    }
    if (!im->isa->ncdhw_oc_built(s)) {
        snprintf(why, why_size,
                 "no tile is built for kW=%lld with W stride %lld (stride 1 and 2: kW 1-4, "
                 "stride 3: kW 1-3)",
                 (long long)s->k[2], (long long)s->s[2]);
        return 0;
    }
    return 1;
}

/* CONVT3D_CPU_LANES=w passes over the output-channel tile, and =oc takes it
 * wherever it applies (its cost rule is skipped). */
static int ncdhw_oc_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    const char *lanes = getenv("CONVT3D_CPU_LANES");
    if (lanes && strcmp(lanes, "w") == 0) {
        snprintf(why, why_size, "CONVT3D_CPU_LANES=w");
        return 1;
    }
    if (lanes && strcmp(lanes, "oc") == 0)
        return 0;
    return !cpu_ocl_worthwhile(s, &im->isa->limits, why, why_size);
}

static int ncdhw_oc_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "tiles of %d outputs x %d channel vector%s", pl->tile_a,
                    pl->tile_b, pl->tile_b == 1 ? "" : "s");
}

static int ncdhw_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "tiles of %d channels x %d %s along W", pl->tile_b, pl->tile_a,
                    pl->isa->vector_lanes > 1 ? "vectors" : "positions");
}

static int ndhwc_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "tiles of %d positions x %d %s", pl->tile_a, pl->tile_b,
                    pl->isa->vector_lanes > 1 ? "channel vectors" : "channels");
}

static int ndhwc_rows_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "whole rows, tiles of %d positions x %d %s across groups",
                    pl->tile_a, pl->tile_b,
                    pl->isa->vector_lanes > 1 ? "channel vectors" : "channels");
}

static const cpu_family ncdhw_pw = {CONVT3D_LAYOUT_NCDHW, ncdhw_pw_kernel, pw_applicable, NULL,
                                    pw_describe};
static const cpu_family ndhwc_pw = {CONVT3D_LAYOUT_NDHWC, ndhwc_pw_kernel, pw_applicable,
                                    ndhwc_pw_passed_over, pw_describe};
static const cpu_family ncdhw_oc = {CONVT3D_LAYOUT_NCDHW, ncdhw_oc_kernel, ncdhw_oc_applicable,
                                    ncdhw_oc_passed_over, ncdhw_oc_describe};
static const cpu_family ncdhw = {CONVT3D_LAYOUT_NCDHW, ncdhw_kernel, NULL, NULL,
                                 ncdhw_describe};
static const cpu_family ndhwc = {CONVT3D_LAYOUT_NDHWC, ndhwc_kernel, NULL, NULL,
                                 ndhwc_describe};
static const cpu_family ndhwc_dw = {CONVT3D_LAYOUT_NDHWC, ndhwc_dw_kernel, ndhwc_dw_applicable,
                                    NULL, ndhwc_rows_describe};
/* The input-channel-lane tile ends each output with a horizontal sum of
 * its lanes (a log2(lanes)-step shuffle tree), which the vector FMAs of
 * that output must amortise: an output gets k_volume / (sD sH sW) taps on
 * average (its phase's share) and each tap ceil(C_in/G / lanes) vector
 * FMAs.  Taken at 8 or more FMAs a sum.  Measured (Zen 5, 1 thread, CPU
 * time, under load; bench/NOTES.md round 12d): random_71 (k3x1x2 s2, C_in/G
 * 27: 1.5 a sum) 2.7 ms on the tile vs 1.4 on the W-lane tile, random_140
 * (k1x4x2 s2, C_in/G 64: 4 a sum) 0.48-0.59 vs 0.25; the round-10b wins
 * had 30 or more. */
static int icl_sums_fed(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size)
{
    const int64_t lanes = im->isa->ic_lanes;
    const double taps = taps_an_output(s);
    const double fmas = taps * (double)((s->cig + lanes - 1) / lanes);
    if (fmas < 8.0) {
        snprintf(why, why_size,
                 "an output's lane sum ends %.1f vector FMAs (%.2f taps x %lld vectors of C_in/G; "
                 "at least 8 pay)",
                 fmas, taps, (long long)((s->cig + lanes - 1) / lanes));
        return 0;
    }
    return 1;
}

/* The NDHWC rule; the transposed rows (cpu/iclanes.h: twice the kD x kH
 * rows of an output row, each in_w x cigp floats) must fit the budget of
 * the machine's caches (cpu_cache_budget_of: twice the L2); then the
 * tiling policy's rule (cpu_icl_ncdhw_worthwhile).  The portable kernel
 * reads its channels a plane apart: never taken by the walk. */
static int ncdhw_icl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                 size_t why_size)
{
    /* a whole vector: the NCDHW rule was measured at that bound */
    if (!icl_lanes_filled(s, im->isa->ic_lanes, why, why_size))
        return 1;
    if (im->isa->vector_lanes == 1) {
        snprintf(why, why_size, "the portable kernel reads NCDHW channels a plane apart");
        return 1;
    }
    const double lanes = (double)im->isa->ic_lanes;
    const double cigp = (double)((s->cig + im->isa->ic_lanes - 1) / im->isa->ic_lanes) * lanes;
    const double bytes = 2.0 * (double)s->k[0] * (double)s->k[1] * (double)s->in[2] * cigp * 4;
    if (bytes > (double)cpu_cache_budget_here().icl_rows_bytes) {
        snprintf(why, why_size, "its transposed input rows would take %.0f KiB a thread",
                 bytes / 1024);
        return 1;
    }
    if (!icl_sums_fed(im, s, why, why_size))
        return 1;
    return !cpu_icl_ncdhw_worthwhile(s, &im->isa->limits, why, why_size);
}

static int ndhwc_icl_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "tiles of %d positions x %d channels, input channels in %s",
                    pl->tile_a, pl->tile_b, pl->isa->vector_lanes > 1 ? "the lanes" : "8 sums");
}

static const cpu_family ncdhw_icl = {CONVT3D_LAYOUT_NCDHW, ncdhw_icl_kernel,
                                     ndhwc_icl_applicable, ncdhw_icl_passed_over,
                                     ndhwc_icl_describe};
static const cpu_family ndhwc_icl = {CONVT3D_LAYOUT_NDHWC, ndhwc_icl_kernel,
                                     ndhwc_icl_applicable, ndhwc_icl_passed_over,
                                     ndhwc_icl_describe};
static const cpu_kernel *ndhwc_tr_kernel(const cpu_isa *isa) { return &isa->ndhwc_tr; }

/* Built for the register-tiled sets only (the portable kernel has no
 * W-lane tile to run). */
static int ndhwc_tr_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    cpu_tr_rows r;
    if (!im->isa->ndhwc_tr.row) {
        snprintf(why, why_size, "no %s kernel is built", im->isa->name);
        return 0;
    }
    if (!cpu_ndhwc_tr_rows(s, cpu_tiling_ncdhw(s, &im->isa->limits).chunk, &r)) {
        snprintf(why, why_size, "its transposed rows' W margins would be too large");
        return 0;
    }
    return 1;
}

/* One group whose W phases hold fewer than 24 positions, where the
 * position-lane tile (after this one in the walk) takes the problem: that
 * tile packs several positions' channels into a vector, while each row here
 * pays its transposes in and out for few positions.  Round 38 (Zen 4, 2
 * threads, both forced on the 24 problems of seeds 1-4 and 15-20 that the
 * two tiles took in turn): the position lanes faster on all 12 with 4-18
 * positions a phase (1.01-2.58x), slower on 8 of the 12 with 24-34 (to
 * 0.41x).  With 8-lane vectors (AVX2) also longer phases from at most 2
 * input channels: round 40 (Zen 3, 1 thread, both forced on the 49
 * one-group problems of seeds 1-40 that the walk gave the W-lane tile) the
 * position lanes were faster on all 7 such problems that they take (24-31
 * positions a phase, 1.18-3.47x), and slower on 8 of 10 with 3-4 input
 * channels; AVX-512 was not measured so. */
static int ndhwc_tr_rows_short(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    const int64_t len = cpu_phase_len(s->out[2], s->s[2], 0);
    const int few_inputs = s->cig <= 2 && im->isa->vector_lanes <= 8;
    if (s->groups != 1 || (len >= 24 && !few_inputs) ||
        !family_takes(&ndhwc_pl, im, s, why, why_size))
        return 0;
    snprintf(why, why_size,
             "one group, %lld positions a W phase from C_in/G=%lld: the position lanes take it",
             (long long)len, (long long)s->cig);
    return 1;
}

/* The cached input rows of every group must stay in the cache budget of
 * packed rows (the L2, tiling.h: each is read again by the output rows that
 * share it), then
 * the cost rule (cpu_ndhwc_tr_worthwhile). */
static int ndhwc_tr_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    /* One input channel a group: the grouped-lanes tile (after this one in
     * the walk) lays the groups across its lanes, where the W lanes here
     * serve one group at a time.  Forced both on round 26's runs (Zen 4):
     * the grouped-lanes tile 1.66-9.6x faster on all 12 such problems with
     * 2 or more output channels a group (seed 3's 8 groups of 1 -> 2, k5
     * stride 1: 3.3 -> 0.34 ms). */
    /* Likewise four or more groups of at most a quarter vector of output
     * channels, unless each transposed element feeds 128 or more
     * multiply-adds (round 33, Zen 4, 2 threads, each tile forced on seeds
     * 1-9 of --random and the tests' shapes: the grouped lanes faster on
     * 15 of 16 such problems below 128, 1.04-18x, C_in/G 2-8, spans of one
     * vector and of two, the other 0.94x; at 128 a tie, at 210 (4 groups of
     * 4, k3x5x7 s2) the W lanes 1.45x faster). */
    const int few_out = s->groups >= 4 && 4 * s->cog <= im->isa->group_lanes &&
                        cpu_transposed_macs(s) < 128.0;
    if ((s->cig == 1 || few_out) && family_takes(&ndhwc_gl, im, s, why, why_size)) {
        snprintf(why, why_size, "%s a group: the grouped lanes fill theirs",
                 s->cig == 1 ? "one input channel" : "four or more groups of few output channels");
        return 1;
    }
    if (ndhwc_tr_rows_short(im, s, why, why_size))
        return 1;
    cpu_tr_rows r;
    cpu_ndhwc_tr_rows(s, cpu_tiling_ncdhw(s, &im->isa->limits).chunk, &r);
    const double bytes = (double)r.slots * (double)s->cin * (double)r.row * sizeof(float);
    if (bytes > (double)cpu_cache_budget_here().pack_bytes) {
        snprintf(why, why_size, "its transposed input rows would take %.0f KiB a thread",
                 bytes / 1024);
        return 1;
    }
    if (tr_groups_fill_lines(im, s))
        return 0;
    return !cpu_ndhwc_tr_worthwhile(s, &im->isa->limits, why, why_size);
}

static const cpu_kernel *ndhwc_pl_kernel(const cpu_isa *isa) { return &isa->ndhwc_pl; }

/* Built for the register-tiled sets only; a width must hold C_out/G with
 * room for two positions, and their input span fit a vector. */
static int ndhwc_pl_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                               size_t why_size)
{
    const int64_t lanes = im->isa->vector_lanes;
    if (!im->isa->ndhwc_pl.row) {
        snprintf(why, why_size, "no %s kernel is built", im->isa->name);
        return 0;
    }
    if (!cpu_ndhwc_pl_width(s, lanes)) {
        snprintf(why, why_size,
                 "no lane width up to %lld holds C_out/G=%lld with its positions' input span "
                 "(C_in/G=%lld, x's W stride %lld) in one vector",
                 (long long)(lanes / 2), (long long)s->cog, (long long)s->cig,
                 (long long)s->x_stride[4]);
        return 0;
    }
    return 1;
}

/* Taken for one group (several: the grouped lanes, after this in the walk,
 * fill theirs across groups), with enough positions a W phase: 6 at W
 * stride 1, else 16 and at least 4 positions a vector.  Measured (Zen 4, 2
 * threads, bench/NOTES.md round 27: the 35 problems of seeds 1, 2, 4, 5, 6
 * with one group that it applies to and the gather tile took) against that
 * tile: at W stride 1 faster on 10 of 12 (1.17-3.0x; a tie, and 0.92x on a
 * row of 5 positions), at strides 2-3 with 4 or more positions a vector and
 * rows of 16 or more faster on 7 of 10 (1.03-1.72x; the others
 * 0.88-0.94x), with 2 a vector or shorter rows slower on 9 of 13.  Against
 * the grouped lanes on several groups: faster on 3 of 16 (1.1-1.5x),
 * 0.16-0.92x on the rest.  CONVT3D_CPU_PLN=1 takes the tile wherever it applies, =0 never. */
static int ndhwc_pl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                size_t why_size)
{
    const int forced = env_forced("CONVT3D_CPU_PLN", why, why_size);
    if (forced >= 0)
        return !forced;
    if (family_takes(&ndhwc_gl, im, s, why, why_size)) {
        snprintf(why, why_size, "%lld groups: the grouped lanes fill theirs across groups",
                 (long long)s->groups);
        return 1;
    }
    const int64_t ppv = im->isa->vector_lanes / cpu_ndhwc_pl_width(s, im->isa->vector_lanes);
    const int64_t len = cpu_phase_len(s->out[2], s->s[2], 0);
    if (s->s[2] == 1 ? len < 6 : ppv < 4 || len < 16) {
        snprintf(why, why_size,
                 "%lld positions a W phase, %lld a vector, at W stride %lld (it takes 6 or "
                 "more at stride 1, else 16 or more and 4 a vector)",
                 (long long)len, (long long)ppv, (long long)s->s[2]);
        return 1;
    }
    return 0;
}

static int ndhwc_pl_describe(const cpu_plan *pl, char *out, size_t size)
{
    const int64_t cw = cpu_ndhwc_pl_width(&pl->s, pl->isa->vector_lanes);
    return snprintf(out, size, "tiles of up to %d vectors of %lld positions x %lld lanes",
                    pl->tile_b, (long long)(pl->isa->vector_lanes / cw), (long long)cw);
}

static const cpu_family ndhwc_pl = {CONVT3D_LAYOUT_NDHWC, ndhwc_pl_kernel, ndhwc_pl_applicable,
                                    ndhwc_pl_passed_over, ndhwc_pl_describe};
static const cpu_family ndhwc_tr = {CONVT3D_LAYOUT_NDHWC, ndhwc_tr_kernel, ndhwc_tr_applicable,
                                    ndhwc_tr_passed_over, ncdhw_describe};
static const cpu_family ndhwc_gl = {CONVT3D_LAYOUT_NDHWC, ndhwc_gl_kernel, ndhwc_gl_applicable,
                                    ndhwc_gl_passed_over, ndhwc_rows_describe};

/* The column GEMM's z buffer must hold the input rows of one output row
 * (cpu/colgemm.h); beyond this it would not be a per-thread tile. */
#define CPU_COLG_MAX_BYTES ((double)(64 << 20))

static int ncdhw_colg_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                                 size_t why_size)
{
    (void)im;
    if (s->x_stride[3] != s->in[2]) {
        snprintf(why, why_size, "x's rows are not contiguous within a plane");
        return 0;
    }
    /* one output row reads at most ceil(kH / sH) taps, (kH - 1) * dH / sH + 1 rows apart */
    const double rows = (double)((s->k[1] - 1) * s->l[1] / s->s[1] + 1);
    const double bytes = (double)s->cog * (double)s->k[1] * (double)s->k[2] *
                         (rows < (double)s->in[1] ? rows : (double)s->in[1]) *
                         (double)s->in[2] * sizeof(float);
    if (bytes > CPU_COLG_MAX_BYTES) {
        snprintf(why, why_size, "its z rows for one output row would take %.0f MiB",
                 bytes / (1 << 20));
        return 0;
    }
    return 1;
}

/* CONVT3D_CPU_COLG=1 takes the column GEMM wherever it applies, =0 never;
 * else the rule (cpu_colg_worthwhile). */
static int ncdhw_colg_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                  size_t why_size)
{
    const int forced = env_forced("CONVT3D_CPU_COLG", why, why_size);
    if (forced >= 0)
        return !forced;
    if (im->isa->vector_lanes == 1) {
        snprintf(why, why_size, "the portable build is the tests' second implementation");
        return 1;
    }
    return !cpu_colg_worthwhile(s, &im->isa->limits, why, why_size);
}

static int ncdhw_colg_describe(const cpu_plan *pl, char *out, size_t size)
{
    return snprintf(out, size, "GEMM of %lld (channel, kh, kw) rows over %lld input rows at a "
                    "time, tiles of up to %d rows x %d-lane vectors",
                    (long long)pl->colg_m, (long long)pl->colg_rows, pl->tile_a, pl->tile_b);
}

static const cpu_family ncdhw_colg = {CONVT3D_LAYOUT_NCDHW, ncdhw_colg_kernel,
                                      ncdhw_colg_applicable, ncdhw_colg_passed_over,
                                      ncdhw_colg_describe};

/* ---- the predicates ------------------------------------------------------ */

int cpu_impl_applicable(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size)
{
    if (im->family->layout != s->layout) {
        snprintf(why, why_size, "it is for %s tensors",
                 im->family->layout == CONVT3D_LAYOUT_NDHWC ? "NDHWC" : "NCDHW");
        return 0;
    }
    if (!isa_supported(im->isa)) {
        snprintf(why, why_size, "this CPU lacks %s", im->isa->name);
        return 0;
    }
    return !im->family->applicable || im->family->applicable(im, s, why, why_size);
}

/* Rank of an instruction set for CONVT3D_CPU_ISA: a named one caps the walk
 * at that set (unknown names are ignored). */
static int isa_rank(const char *name)
{
    return strcmp(name, "generic") == 0 ? 0
           : strcmp(name, "avx2") == 0  ? 1
           : strcmp(name, "avx512") == 0 ? 2
                                         : -1;
}

/* The overrides for benchmarking and for the tests, which run every variant
 * the machine supports: CONVT3D_CPU_ISA=generic|avx2|avx512 passes over the
 * sets above it; then the kind's own rule. */
int cpu_impl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size)
{
    const char *isa = getenv("CONVT3D_CPU_ISA");
    if (isa && *isa && isa_rank(isa) >= 0 && isa_rank(im->isa->name) > isa_rank(isa)) {
        snprintf(why, why_size, "CONVT3D_CPU_ISA=%s", isa);
        return 1;
    }
    return im->family->passed_over && im->family->passed_over(im, s, why, why_size);
}

const cpu_kernel *cpu_impl_kernel(const cpu_impl *im) { return im->family->kernel(im->isa); }

void cpu_impl_describe(const cpu_plan *pl, char *out, size_t size)
{
    const int n = pl->impl->family->describe(pl, out, size);
    if (n < 0 || (size_t)n >= size)
        return;
    snprintf(out + n, size - (size_t)n,
             ", W split every %lld positions, weight %s of %lld channels, %d packed-row "
             "slots%s",
             (long long)pl->chunk, pl->w_block ? "blocks" : "rows",
             (long long)(pl->w_block ? pl->w_block : pl->cogp), pl->pack_slots,
             pl->stream ? ", streaming stores" : "");
}
