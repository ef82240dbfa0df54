/* Host-side planning of the implicit-GEMM kernel (gpu_igemm.h): where it
 * applies, its parameters, and the heaviest-first block order. */
#include <stdio.h>
#include <string.h>

#include "gpu_igemm.h"
#include "gpu_plan.h"

namespace ct3d {

namespace {

constexpr long long kIntLimit = 1LL << 28;

struct phase_ref {
    int code;    /* igemm_phase_code */
    int taps;    /* product of the per-dim tap counts */
    long long m; /* output positions of the phase */
};

/* The phases that have outputs, heaviest (most taps) first; a stable
 * insertion sort, so equal phases keep their (rd, rh, rw) order. */
int list_phases(const igemm_params &p, long long nimg, phase_ref *out)
{
    int n = 0;
    for (int rw = 0; rw < p.s[2]; rw++)
        for (int rh = 0; rh < p.s[1]; rh++)
            for (int rd = 0; rd < p.s[0]; rd++) {
                const int r[3] = {rd, rh, rw};
                phase_ref f;
                f.code = igemm_phase_code(r);
                f.taps = igemm_phase_taps(p, f.code);
                f.m = nimg;
                for (int d = 0; d < 3; d++)
                    f.m *= p.ph[d][r[d]].qcount;
                if (f.m == 0)
                    continue; /* stride larger than the output: no such outputs */
                int j = n++;
                for (; j > 0 && out[j - 1].taps < f.taps; j--)
                    out[j] = out[j - 1];
                out[j] = f;
            }
    return n;
}

} // namespace

bool igemm_applies(const convt3d_shape *s, char *why, size_t why_size)
{
    if (s->layout != CONVT3D_LAYOUT_NCDHW) {
        snprintf(why, why_size, "NCDHW only");
        return false;
    }
    for (int d = 0; d < 3; d++) {
        if (s->s[d] > kIgemmMaxStride) {
            snprintf(why, why_size, "stride[%d]=%lld > %d", d, (long long)s->s[d],
                     kIgemmMaxStride);
            return false;
        }
        if (s->in[d] >= kIntLimit || s->out[d] >= kIntLimit || s->k[d] >= kIntLimit ||
            s->p[d] >= kIntLimit || s->l[d] >= kIntLimit) {
            snprintf(why, why_size, "a size in dim %d is too large for int indexing", d);
            return false;
        }
    }
    if (s->cin >= kIntLimit || s->cout >= kIntLimit || s->k_volume >= kIntLimit ||
        s->k_volume * ceil_div(s->cig, kIgemmBK) >= (1LL << 31)) {
        snprintf(why, why_size, "channel or kernel counts too large for int indexing");
        return false;
    }
    return true;
}

size_t igemm_smem_bytes(igemm_shape t)
{
    const long long bm = 64LL * t.wm, bn = 32LL * t.wn;
    const long long pipe = 3LL * kIgemmBK * (bm + bn), out = bn * (bm + 4);
    return (size_t)(pipe > out ? pipe : out) * sizeof(float);
}

bool igemm_fill(const convt3d_shape *s, igemm_shape t, int cs, igemm_params *pp, size_t *smem)
{
    if (cs != 1 && cs != 2 && cs != 4 && cs != 8)
        return false;
    const int bm = 64 * t.wm, bn = 32 * t.wn;
    igemm_params p;
    memset(&p, 0, sizeof p);
    fill_shape_fields(s, p);
    for (int d = 0; d < 3; d++)
        for (int r = 0; r < p.s[d]; r++)
            p.ph[d][r] = phase_entry_of(s, d, r);
    p.ocb = bn;
    p.nocb = (int)ceil_div(s->cog, bn);
    p.kchunks = (int)ceil_div(s->cig, kIgemmBK);
    p.cs = cs;
    p.nimg = s->n;

    phase_ref ph[kIgemmMaxStride * kIgemmMaxStride * kIgemmMaxStride];
    const int nph = list_phases(p, s->n, ph);
    long long tiles = 0;
    for (int i = 0; i < nph;) {
        if (p.nclass == kIgemmMaxClasses)
            return false;
        const int c = p.nclass++;
        p.cls_phase[c] = i;
        p.cls_tile[c] = tiles;
        long long mt = 0;
        int j = i;
        for (; j < nph && ph[j].taps == ph[i].taps; j++) {
            p.order[j] = (unsigned short)ph[j].code;
            const long long need = ceil_div(ph[j].m, bm);
            mt = need > mt ? need : mt;
        }
        tiles += mt * (j - i) * p.groups * p.nocb;
        i = j;
    }
    p.cls_phase[p.nclass] = nph;
    p.cls_tile[p.nclass] = tiles;
    p.ntiles = tiles;
    if (tiles < 1 || tiles > (1LL << 40))
        return false;
    *pp = p;
    *smem = igemm_smem_bytes(t);
    return true;
}

} // namespace ct3d
