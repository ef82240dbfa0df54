/* The thread-local last-error message and the status names. */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

static _Thread_local char last_error[512];

convt3d_status convt3d_fail(convt3d_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

void convt3d_clear_error(void) { last_error[0] = '\0'; }

const char *convt3d_last_error(void) { return last_error; }

const char *convt3d_status_string(convt3d_status status)
{
    switch (status) {
    case CONVT3D_SUCCESS: return "CONVT3D_SUCCESS";
    case CONVT3D_ERR_NULL_POINTER: return "CONVT3D_ERR_NULL_POINTER";
    case CONVT3D_ERR_BAD_SIZE: return "CONVT3D_ERR_BAD_SIZE";
    case CONVT3D_ERR_BAD_GROUPS: return "CONVT3D_ERR_BAD_GROUPS";
    case CONVT3D_ERR_BAD_KERNEL: return "CONVT3D_ERR_BAD_KERNEL";
    case CONVT3D_ERR_BAD_STRIDE: return "CONVT3D_ERR_BAD_STRIDE";
    case CONVT3D_ERR_BAD_PADDING: return "CONVT3D_ERR_BAD_PADDING";
    case CONVT3D_ERR_BAD_OUTPUT_PADDING: return "CONVT3D_ERR_BAD_OUTPUT_PADDING";
    case CONVT3D_ERR_BAD_DILATION: return "CONVT3D_ERR_BAD_DILATION";
    case CONVT3D_ERR_BAD_LAYOUT: return "CONVT3D_ERR_BAD_LAYOUT";
    case CONVT3D_ERR_BAD_OUTPUT_SIZE: return "CONVT3D_ERR_BAD_OUTPUT_SIZE";
    case CONVT3D_ERR_OVERFLOW: return "CONVT3D_ERR_OVERFLOW";
    case CONVT3D_ERR_BAD_DEVICE_STRING: return "CONVT3D_ERR_BAD_DEVICE_STRING";
    case CONVT3D_ERR_NO_CUDA_SUPPORT: return "CONVT3D_ERR_NO_CUDA_SUPPORT";
    case CONVT3D_ERR_NO_DEVICE: return "CONVT3D_ERR_NO_DEVICE";
    case CONVT3D_ERR_POINTER_LOCATION: return "CONVT3D_ERR_POINTER_LOCATION";
    case CONVT3D_ERR_OUT_OF_MEMORY: return "CONVT3D_ERR_OUT_OF_MEMORY";
    case CONVT3D_ERR_CUDA: return "CONVT3D_ERR_CUDA";
    case CONVT3D_ERR_INTERNAL: return "CONVT3D_ERR_INTERNAL";
    case CONVT3D_ERR_UNSUPPORTED_DATA_TYPE: return "CONVT3D_ERR_UNSUPPORTED_DATA_TYPE";
    case CONVT3D_ERR_UNSUPPORTED_MATH_MODE: return "CONVT3D_ERR_UNSUPPORTED_MATH_MODE";
    case CONVT3D_ERR_BAD_OPTIONS: return "CONVT3D_ERR_BAD_OPTIONS";
    case CONVT3D_ERR_UNKNOWN_IMPLEMENTATION: return "CONVT3D_ERR_UNKNOWN_IMPLEMENTATION";
    case CONVT3D_ERR_NOT_APPLICABLE: return "CONVT3D_ERR_NOT_APPLICABLE";
    }
    return "CONVT3D_ERR_UNKNOWN_STATUS";
}
