/* Random realistic problems for convt3d-bench --random: a documented
 * distribution over PyTorch ConvTranspose3d problems, each bounded in work
 * and memory, drawn with the generator's own PRNG so that a seed gives the
 * same problems on every machine and C library.
 *
 * Problem i of seed s depends on (s, i) only: the first 200 problems of
 * `--random 400 --seed s` are those of `--random 200 --seed s`.
 *
 * The distribution (each draw independent; "log-uniform" = 2^u, u uniform):
 *   batch        1-4 uniform (85%), else 5-16 uniform
 *   groups       dense g=1 (65%); depthwise g = C_in, C_out = C_in or 2 C_in
 *                (15%); grouped g in {2,4,8,16,32} (20%)
 *   channels     log-uniform 1-256 for C_in and C_out (dense), per group for
 *                grouped (C_in, C_out <= 256 overall); depthwise C_in 1-256
 *   volume       4-32 a side: one size for all three dims (40%), else each
 *                dim its own
 *   kernel       1-5: cubic (50%), else each dim its own (asymmetric)
 *   stride       1 (35%), 2 (45%), 3 (20%): the same in all dims (70%), else
 *                each dim its own
 *   dilation     1 (80%), else 1-3 per dim, at least one dim > 1
 *   padding      0 .. dilation*(kernel-1)/2 per dim (rounded up), uniform
 *   out. padding 0 (70%), else uniform in [0, max(stride, dilation)) per dim
 *                (PyTorch's rule)
 *   layout       NCDHW or NDHWC (50/50); bias on or off (50/50)
 * A draw is kept when convt3d_validate() accepts it and it is within the
 * bounds below, else the generator draws again from the same stream, so the
 * distribution is the one above conditioned on the bounds.  The bound is on
 * N*C_in*(C_out/G)*D*H*W*kD*kH*kW (MACs with every tap counted), which is
 * at least the useful MACs. */
#ifndef CONVT3D_BENCH_RANDOM_PROBLEMS_H
#define CONVT3D_BENCH_RANDOM_PROBLEMS_H

#include <stddef.h>
#include <stdint.h>

#include "convt3d.h"

#define RANDOM_MAX_MACS 1.5e9    /* all-taps MACs of one problem */
#define RANDOM_MAX_ELEMS (1 << 25) /* elements of x, of weight and of y, each (128 MB in fp32) */

/* Problem `index` of `seed` into *p: always a valid problem within the
 * bounds.  Returns the number of draws it took, or 0 when RANDOM_MAX_DRAWS
 * were all rejected and *p is a fixed small problem instead (never seen in
 * practice; the tests check that it does not happen). */
#define RANDOM_MAX_DRAWS 10000
int random_problems_draw(uint64_t seed, uint64_t index, convt3d_problem *p);

/* N*C_in*(C_out/G)*D*H*W*kD*kH*kW, in double (no overflow). */
double random_problems_all_tap_macs(const convt3d_problem *p);

/* p within the generator's bounds (valid, work and element counts). */
int random_problems_in_bounds(const convt3d_problem *p);

#endif
