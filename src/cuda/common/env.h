/* The CUDA backend's environment overrides, for benchmarking (README):
 *   CONVT3D_CUDA_KERNEL=NAME|WORD  forces the CUDA implementation named NAME
 *       exactly, or one whose name contains WORD (grouped, tiled, igemm,
 *       dwtile, depthwise, generic, ...): the first in registry order that
 *       applies and that the automatic walk would not pass over (e.g.
 *       "grouped" where the phase planner picks a grouped variant), else the
 *       first that applies (e.g. "grouped" where it picks tiled: the first
 *       grouped variant for the W stride, 8 channels a thread before 4).
 *       When none applies, plan creation fails with
 *       CONVT3D_ERR_NOT_APPLICABLE, never a silent fallback.  The plan
 *       options' implementation (or CONVT3D_IMPLEMENTATION) wins over it.
 *   CONVT3D_CUDA_TILE=tx,ty,tz,toc,cic[,ks[,fuse[,occ[,align]]]]  the phase
 *       kernel's tiling, where it fits (else ignored, with a note);
 *   CONVT3D_CUDA_IGEMM=wm,wn[,cs]  the implicit-GEMM kernel's block shape
 *       and cluster size (cs 1-16, 0: the planner's; above 8 the
 *       non-portable cluster sizes of Hopper), where compiled (else
 *       ignored, with a note);
 *   CONVT3D_CUDA_FEWOUT=cs  the few-output kernel's largest cluster size
 *       (1, 2, 4 or 8; 1: small grids take more slices a block instead;
 *       else ignored, with a note);
 *   CONVT3D_CUDA_TCWIN=0|1  the tensor-core window kernel's staging: 0 by
 *       element, 1 by 16-byte words wherever they apply (NCDHW, W a
 *       multiple of 16 bytes, x 16-byte aligned) and fit; by default words
 *       where they apply and two blocks still fit a multiprocessor.
 * Read once per plan creation (gpu.cu) and handed to the planners, which
 * stay pure functions of their arguments. */
#ifndef CONVT3D_CUDA_COMMON_ENV_H
#define CONVT3D_CUDA_COMMON_ENV_H

namespace ct3d {

struct cuda_overrides {
    const char *kernel; /* CONVT3D_CUDA_KERNEL, NULL when unset or empty */
    const char *tile;   /* CONVT3D_CUDA_TILE */
    const char *igemm;  /* CONVT3D_CUDA_IGEMM */
    const char *fewout; /* CONVT3D_CUDA_FEWOUT */
    const char *tcwin;  /* CONVT3D_CUDA_TCWIN */
};

/* The overrides from the environment. */
cuda_overrides overrides_from_env(void);

/* Parses "tx,ty,tz,toc,cic[,ks[,fuse[,occ[,align]]]]" (ks, fuse, occ and
 * align 1 when left out) into v; false if absent or malformed. */
bool parse_tile(const char *text, int v[9]);

/* Parses "wm,wn[,cs]" (cs 0 when left out: the planner's) into v; false if
 * absent or malformed. */
bool parse_igemm(const char *text, int v[3]);

/* Parses "cs" (1, 2, 4 or 8) into *cs; false if absent or malformed. */
bool parse_fewout(const char *text, int *cs);

/* Parses "V[,R]" into *vec (V: 0 or 1, the window's staging; -1, the
 * planner's, with an R) and, where given, *round (R: 1 the TF32 window
 * rounded once a chunk, 0 each element at each tap; left as it was
 * without one); false if absent or malformed. */
bool parse_tcwin(const char *text, int *vec, int *round);

} // namespace ct3d

#endif
