/* The CUDA runtime glue of a build without CUDA: no devices, every pointer is host. */
#include "cuda_walk.h"

int convt3d_gpu_device_count(void) { return 0; }

int convt3d_gpu_pointer_device(const void *p)
{
    (void)p;
    return -1;
}

const char *convt3d_cuda_walk_choice(const convt3d_shape *shape, int smem_optin, int smem_sm,
                                     int num_sms)
{
    (void)shape;
    (void)smem_optin;
    (void)smem_sm;
    (void)num_sms;
    return NULL;
}
