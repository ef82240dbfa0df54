/* Planning of the input-row packing (rowpack.h). */
#include <stdlib.h>
#include <string.h>

#include "rowpack.h"


static void tap_delta_range(const cpu_dim_phases *ph, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    *hi = 0;
    for (int64_t t = 0; t < ph->start[ph->nphase]; t++) {
        *lo = t == 0 || ph->taps[t].delta < *lo ? ph->taps[t].delta : *lo;
        *hi = t == 0 || ph->taps[t].delta > *hi ? ph->taps[t].delta : *hi;
    }
}

/* Why pack: the input channels of NCDHW x are a plane apart, often a
 * multiple of 4 KiB, so the tile's loads of one row from every channel fall
 * in the same L1 sets and on a new page each; the packed copy is contiguous.
 * The zero margins also make every tile load whole.  A slot holds one input
 * row (all channels of a group); enough slots for the rows of consecutive
 * output rows: (most D taps of a phase) x (H tap offsets spanned + 1).
 * Above pl->cache.pack_bytes a thread (the L2: tiling.h) packing is off
 * and tiles read x in place.
 * CONVT3D_CPU_PACK=0|1 turns it off or on where it fits (for the tests). */
void cpu_plan_row_packing(cpu_plan *pl)
{
    const convt3d_shape *s = &pl->s;
    const char *force = getenv("CONVT3D_CPU_PACK");
    const int forced_on = force && strcmp(force, "1") == 0;
    pl->pack_slots = 0;
    if (!pl->kernel->reads_packed_rows || (force && strcmp(force, "0") == 0))
        return;
    int64_t wlo, whi, hlo, hhi, nd = 0, nh = 0;
    tap_delta_range(&pl->ph[2], &wlo, &whi);
    tap_delta_range(&pl->ph[1], &hlo, &hhi);
    for (int64_t c = 0; c < pl->ph[0].nphase; c++)
        nd = cpu_max64(nd, pl->ph[0].start[c + 1] - pl->ph[0].start[c]);
    for (int64_t c = 0; c < pl->ph[1].nphase; c++)
        nh = cpu_max64(nh, pl->ph[1].start[c + 1] - pl->ph[1].start[c]);
    /* Measured: the copy and its bookkeeping pay off only when they are
     * cheap, one input row per output row (kernel <= stride in D and H), and
     * the channel sweep is long (unet_up_k2s2: 8%); elsewhere they cost
     * 2-6%.  CONVT3D_CPU_PACK=1 packs whenever the rows fit the budget. */
    if (!forced_on && s->layout == CONVT3D_LAYOUT_NCDHW &&
        (nd * nh > 1 || s->cig < 32))
        return;
    /* NDHWC (the one-group gather tile): packed, its positions read one
     * channel row each, one base register and constant offsets, and the
     * zero margins spare the border tiles their per-position pointers.
     * That pays where a tile's positions are too many for the registers to
     * hold their pointers (9 or more) and the copy, a transpose an element
     * at a time, is cheap (8 or fewer input channels a group, each read by
     * 4 or more taps).  Measured on
     * seed 3's 42 NDHWC gather problems (Zen 4): inside the rule 8 of 9
     * faster (random_84, 2 -> 6 channels, k4 s2, 1.50x; random_15 1.22x),
     * outside it mostly slower (random_101, 64 channels a group, 0.59x;
     * random_22, one tap, 0.88x). */
    const int64_t jlen = cpu_phase_len(s->out[2], s->s[2], 0);
    if (!forced_on && s->layout == CONVT3D_LAYOUT_NDHWC) {
        const int64_t tile = pl->tile_a > 0 ? pl->tile_a : 1;
        const int64_t per_tile = jlen > 0 ? jlen / ((jlen + tile - 1) / tile) : 0;
        if (s->cig > 8 || per_tile < 9 || s->k_volume < 4)
            return;
    }
    const int64_t chunk = pl->chunk > 0 ? pl->chunk : 1;
    const int64_t jlast = (jlen + chunk - 1) / chunk * chunk - 1;
    /* Margins as wide as the taps reach past the row; huge ones (huge
     * dilations) would not fit the budget anyway, and must not overflow. */
    const int64_t big = (int64_t)1 << 40;
    if (-wlo > big || whi > big || jlast > big || s->in[2] > big)
        return;
    const int64_t left = cpu_max64(0, -wlo);
    const int64_t right = cpu_max64(0, jlast + whi - (s->in[2] - 1));
    const int64_t row = (left + s->in[2] + right + 15) / 16 * 16;
    const int64_t slots = cpu_max64(1, nd * (hhi - hlo + 2));
    if ((double)slots * (double)s->cig * (double)row * sizeof(float) > (double)pl->cache.pack_bytes)
        return;
    pl->pack_slots = (int)slots;
    pl->pack_left = left;
    pl->pack_row = row;
}

