/* The CUDA backend's automatic walk as a pure function, for tests (gpu.cu;
 * gpu_none.c in a build without CUDA).  Not installed. */
#ifndef CONVT3D_CUDA_WALK_H
#define CONVT3D_CUDA_WALK_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend's automatic choice for shape (its math mode included) on
 * a device with these limits, as plan creation would make it without
 * overrides from the environment: the implementation's name, or NULL (a
 * build without CUDA, or none applies).  Touches no device, so that a test
 * can check the walk on a machine without a GPU. */
CONVT3D_INTERNAL const char *convt3d_cuda_walk_choice(const convt3d_shape *shape, int smem_optin,
                                                      int smem_sm, int num_sms);

/* The same choice as convt3d_cuda_walk_choice, and its plan described into
 * buf (the implementation's describe: e.g. the implicit-GEMM engine's block
 * shape and cluster size), for tests of the planners' rules.  Only in a build
 * with CUDA (gpu.cu): callers guard it with CONVT3D_HAVE_CUDA. */
CONVT3D_INTERNAL const char *convt3d_cuda_walk_describe(const convt3d_shape *shape,
                                                        int smem_optin, int smem_sm, int num_sms,
                                                        char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
