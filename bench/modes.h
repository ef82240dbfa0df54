/* The bench's modes: the data type of the four tensors (--dtype) and the
 * math mode of convt3d's plans (--math), and what follows from them for
 * each row of the table -- the precision a row is held to, its
 * verification tolerance and the compute ceiling its %floor is taken
 * against (calib.h).
 *
 * A row's precision is what its implementation computes in: convt3d on the
 * GPU in the run's mode; convt3d and oneDNN on the CPU in fp32 for f32 data
 * (the CPU computes every math mode in full fp32); cuDNN in the mode it was
 * configured for (two rows, fp32 and tf32, in a 3xtf32 run).  For f16 and
 * bf16 data the math mode changes nothing (the header's rule), so the
 * precision is the data type's. */
#ifndef CONVT3D_BENCH_MODES_H
#define CONVT3D_BENCH_MODES_H

#include "convt3d.h"

typedef enum bench_prec {
    PREC_FP32 = 0, /* f32 data, exact fp32 FMA */
    PREC_TF32,     /* f32 data, inputs rounded to TF32, fp32 accumulation */
    PREC_3XTF32,   /* f32 data, split TF32 (three tensor-core products a product) */
    PREC_F16,      /* f16 data, fp32 accumulation, y rounded to f16 */
    PREC_BF16,     /* bf16 data, fp32 accumulation, y rounded to bf16 */
    PREC_COUNT
} bench_prec;

/* --dtype: "f32", "f16", "bf16".  0, or -1 for anything else. */
int mode_parse_dtype(const char *text, convt3d_dtype *out);
/* --math: "fp32" (or its synonym "f32"), "tf32", "3xtf32".  0 or -1. */
int mode_parse_math(const char *text, convt3d_math_mode *out);
/* "fp32", "tf32", "3xtf32" (the --math spelling), "unknown". */
const char *mode_math_name(convt3d_math_mode math);

/* The precision of a run of (dtype, math): the data type's for f16/bf16,
 * the math mode's for f32. */
bench_prec mode_prec(convt3d_dtype dtype, convt3d_math_mode math);
/* "fp32", "tf32", "3xtf32", "f16", "bf16". */
const char *prec_name(bench_prec prec);

/* The pass bound of a precision, relative L2 error against the
 * float64-accumulated reference: 1e-5 for fp32 and 3xtf32 (fp32 accuracy),
 * 1e-3 for tf32 (10-bit mantissa inputs) and f16 (y rounded to 11 bits),
 * 8e-3 for bf16 (y rounded to 8 bits). */
double prec_tolerance(bench_prec prec);

/* The tolerance a row of `prec` is checked against when the user gave
 * --tol=user_tol (user_tol < 0: not given): --tol can only tighten, so the
 * smaller of the two.  A looser --tol never loosens a row. */
double prec_row_tolerance(bench_prec prec, double user_tol);

/* Sets the four tensor types of p to t. */
void mode_apply_dtype(convt3d_problem *p, convt3d_dtype t);

#endif
