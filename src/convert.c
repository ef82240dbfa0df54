/* The public data-type helpers: names, sizes, and host conversions
 * (halfconv.h does the rounding). */
#include "halfconv.h"
#include "internal.h"

const char *convt3d_dtype_name(convt3d_dtype type)
{
    switch (type) {
    case CONVT3D_F32: return "f32";
    case CONVT3D_F16: return "f16";
    case CONVT3D_BF16: return "bf16";
    }
    return "unknown";
}

size_t convt3d_dtype_size(convt3d_dtype type)
{
    switch (type) {
    case CONVT3D_F32: return 4;
    case CONVT3D_F16:
    case CONVT3D_BF16: return 2;
    }
    return 0;
}

float convt3d_load_f32(const void *base, convt3d_dtype type, int64_t i)
{
    switch (type) {
    case CONVT3D_F16: return convt3d_f16_to_f32(((const uint16_t *)base)[i]);
    case CONVT3D_BF16: return convt3d_bf16_to_f32(((const uint16_t *)base)[i]);
    default: return ((const float *)base)[i];
    }
}

void convt3d_store_f32(void *base, convt3d_dtype type, int64_t i, float v)
{
    switch (type) {
    case CONVT3D_F16: ((uint16_t *)base)[i] = convt3d_f32_to_f16(v); break;
    case CONVT3D_BF16: ((uint16_t *)base)[i] = convt3d_f32_to_bf16(v); break;
    default: ((float *)base)[i] = v; break;
    }
}

convt3d_status convt3d_convert(const void *src, convt3d_dtype src_type, void *dst,
                               convt3d_dtype dst_type, int64_t count)
{
    convt3d_clear_error();
    if (!src || !dst)
        return convt3d_fail(CONVT3D_ERR_NULL_POINTER, "%s is NULL", !src ? "src" : "dst");
    if (count < 0)
        return convt3d_fail(CONVT3D_ERR_BAD_SIZE, "count=%lld must be >= 0", (long long)count);
    if (!convt3d_dtype_size(src_type) || !convt3d_dtype_size(dst_type))
        return convt3d_fail(CONVT3D_ERR_UNSUPPORTED_DATA_TYPE, "%s=%d is not a convt3d_dtype",
                            !convt3d_dtype_size(src_type) ? "src_type" : "dst_type",
                            (int)(!convt3d_dtype_size(src_type) ? src_type : dst_type));
    if (src_type == dst_type) {
        memcpy(dst, src, (size_t)count * convt3d_dtype_size(src_type));
        return CONVT3D_SUCCESS;
    }
    /* f16 <-> bf16 goes through f32, which holds both exactly: one rounding */
    for (int64_t i = 0; i < count; i++)
        convt3d_store_f32(dst, dst_type, i, convt3d_load_f32(src, src_type, i));
    return CONVT3D_SUCCESS;
}
