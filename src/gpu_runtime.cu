/* CUDA runtime glue shared by the dispatcher and the CUDA backend: how many
 * devices there are, and where a pointer lives.  Built only with CUDA. */
#include <cuda_runtime.h>

#include "internal.h"

/* -2: not probed yet.  Probing twice is harmless, so a plain atomic suffices. */
static int cached_count = -2;

extern "C" int convt3d_gpu_device_count(void)
{
    int n = __atomic_load_n(&cached_count, __ATOMIC_ACQUIRE);
    if (n != -2)
        return n;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0) {
        /* No driver or no device: the CPU path must still work, so this is not an error. */
        cudaGetLastError();
        n = 0;
    }
    __atomic_store_n(&cached_count, n, __ATOMIC_RELEASE);
    return n;
}

extern "C" int convt3d_gpu_pointer_device(const void *p)
{
    if (!p || convt3d_gpu_device_count() == 0)
        return -1;
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError(); /* an unknown pointer is host memory */
        return -1;
    }
    return attr.type == cudaMemoryTypeDevice ? attr.device : -1;
}
