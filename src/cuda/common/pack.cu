/* The weight repack (pack.h). */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "launch_util.h"
#include "pack.h"

namespace ct3d {

namespace {

struct pack_params {
    long long cig, cog, kvol, ocb, nocb;
};

/* dst[e] of the packed weights, e < groups * nocb * cig * kvol * ocb. */
__device__ __forceinline__ void pack_thread(const pack_params &p, const float *src, float *dst,
                                            long long e)
{
    long long r = e;
    const long long oi = r % p.ocb;
    r /= p.ocb;
    const long long tap = r % p.kvol;
    r /= p.kvol;
    const long long ic = r % p.cig;
    r /= p.cig;
    const long long ob = r % p.nocb;
    const long long g = r / p.nocb;
    const long long oc = ob * p.ocb + oi;
    dst[e] = oc < p.cog ? src[((g * p.cig + ic) * p.cog + oc) * p.kvol + tap] : 0.0f;
}

__global__ void __launch_bounds__(256) pack_kernel(const pack_params p, const float *src,
                                                    float *dst, long long total)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total;
         e += (long long)gridDim.x * blockDim.x)
        pack_thread(p, src, dst, e);
}

} // namespace

__global__ void round_tf32_kernel(float *w, long long total)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned u;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(u) : "f"(w[i]));
        w[i] = __uint_as_float(u);
    }
}

cudaError_t launch_round_tf32(float *w, long long total, cudaStream_t stream)
{
    const int threads = 256;
    round_tf32_kernel<<<grid_of((total + threads - 1) / threads), threads, 0, stream>>>(w, total);
    return cudaGetLastError();
}

__global__ void narrow_kernel(const float *src, unsigned short *dst, long long total, bool bf16)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x)
        dst[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(src[i]))
                      : __half_as_ushort(__float2half_rn(src[i]));
}

cudaError_t launch_narrow(const float *src, unsigned short *dst, long long total,
                          convt3d_dtype type, cudaStream_t stream)
{
    const int threads = 256;
    narrow_kernel<<<grid_of((total + threads - 1) / threads), threads, 0, stream>>>(
        src, dst, total, type == CONVT3D_BF16);
    return cudaGetLastError();
}

cudaError_t launch_pack(const convt3d_shape *s, int ocb, int nocb, const float *src, float *dst,
                        long long total, cudaStream_t stream)
{
    const pack_params p = {s->cig, s->cog, s->k_volume, ocb, nocb};
    const int threads = 256;
    pack_kernel<<<grid_of((total + threads - 1) / threads), threads, 0, stream>>>(p, src, dst,
                                                                               total);
    return cudaGetLastError();
}

} // namespace ct3d
