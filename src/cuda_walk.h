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

#ifdef __cplusplus
}
#endif

#endif
