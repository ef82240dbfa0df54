/* The CUDA runtime glue of a build without CUDA: no devices, every pointer is host. */
#include "internal.h"

int convt3d_gpu_device_count(void) { return 0; }

int convt3d_gpu_pointer_device(const void *p)
{
    (void)p;
    return -1;
}
