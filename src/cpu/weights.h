/* The CPU plans' weight layout, packed once from PyTorch's.  Not installed. */
#ifndef CONVT3D_CPU_WEIGHTS_H
#define CONVT3D_CPU_WEIGHTS_H

#include "../internal.h"

/* A group's packed weights: blocks of ob output channels, each holding
 * rows of ob floats, one row per (tap, input channel) of the group, in
 * (tap, ic) order, or with kw_inner in (kd, kh, ic, kw) order.  Channels
 * past C_out/G are zero. */
typedef struct cpu_weight_layout {
    int64_t ob;      /* channels per block */
    int64_t blocks;  /* ceil(cog / ob) */
    int kw_inner;    /* the W taps inside the input channels */
    int64_t w_group; /* floats per group: blocks * k_volume * cig * ob */
} cpu_weight_layout;

/* The layout for blocks of ob channels; 0 when its size overflows a size_t
 * of bytes. */
CONVT3D_INTERNAL int cpu_weight_layout_make(const convt3d_shape *s, int64_t ob, int kw_inner,
                                            cpu_weight_layout *out);

/* Repacks PyTorch's weight [C_in][Cog][kD][kH][kW] (src) into dst, which
 * holds G * w_group floats in layout l. */
CONVT3D_INTERNAL void cpu_pack_weights_cio_to_blocks(const convt3d_shape *s, const float *src,
                                                     const cpu_weight_layout *l, float *dst);

/* Floats of the all-groups NDHWC layout below for rows of cout_pad
 * channels, or -1 when that many bytes overflow a size_t. */
CONVT3D_INTERNAL int64_t cpu_lanes_weight_floats(const convt3d_shape *s, int64_t cout_pad);

/* Repacks PyTorch's weight into the all-groups NDHWC layout
 * [kd][kh][kw][ic < C_in/G][co < cout_pad]: entry co holds group co / cog's
 * weight of its input channel ic to its output channel co % cog, channels
 * past C_out zero.  A tap's channel rows are then one contiguous run
 * across every group, the lanes of the kernels that tile across groups. */
CONVT3D_INTERNAL void cpu_pack_weights_cio_to_lanes(const convt3d_shape *s, const float *src,
                                                    int64_t cout_pad, float *dst);

/* Floats of the input-channel-row layout below for rows of cigp channels
 * (every group), or -1 when that many bytes overflow a size_t. */
CONVT3D_INTERNAL int64_t cpu_ic_rows_weight_floats(const convt3d_shape *s, int64_t cigp);

/* Repacks PyTorch's weight into [g][kd][kh][kw][oc < C_out/G][ic < cigp],
 * channels past C_in/G zero: for a tap and an output channel, the weights
 * of the group's input channels are one contiguous row, the lanes of the
 * kernels that reduce over input channels in their vectors (cpu/iclanes.h). */
CONVT3D_INTERNAL void cpu_pack_weights_cio_to_ic_rows(const convt3d_shape *s, const float *src,
                                                      int64_t cigp, float *dst);

/* Floats of the column layout below (every group), or -1 when that many
 * bytes overflow a size_t. */
CONVT3D_INTERNAL int64_t cpu_cols_weight_floats(const convt3d_shape *s);

/* Repacks PyTorch's weight into [g][kd][ic < C_in/G][m], m = (oc * kH + kh)
 * * kW + kw: for a kd tap and an input channel, the weights of every
 * (output channel, kh, kw) of the group are one contiguous run, the rows
 * of the column GEMM (cpu/colgemm.h). */
CONVT3D_INTERNAL void cpu_pack_weights_cio_to_cols(const convt3d_shape *s, const float *src,
                                                   float *dst);

#endif /* CONVT3D_CPU_WEIGHTS_H */
