/* oneDNN benchdnn deconvolution problem descriptors
 * ("mb8g4ic32id12ih24iw48oc32od24oh48ow96kd3kh5kw7sd2sh2sw2pd1ph2pw3n\"x\""):
 * parsing with benchdnn's defaults and inference rules, the canonical string,
 * and the mapping to and from a convt3d_problem (PyTorch's contract).
 *
 * convt3d's two extensions, for what benchdnn states outside the descriptor
 * (--dir=FWD_B/FWD_D, --stag/--dtag): "bias0" / "bias1" (default bias1, as
 * benchdnn's default direction FWD_B) and "layoutncdhw" / "layoutndhwc"
 * (default ncdhw), anywhere before the name.  convt3d_problem_to_string()
 * prints this dialect; desc_parse() is its one reader.
 *
 * Spatial triples are ordered (d, h, w) as everywhere in convt3d. */
#ifndef CONVT3D_BENCH_DESCRIPTOR_H
#define CONVT3D_BENCH_DESCRIPTOR_H

#include <stddef.h>
#include <stdint.h>

#include "convt3d.h"

#define DESC_NAME_MAX 256

/* A parsed descriptor with every size resolved, in benchdnn's terms:
 * dil is oneDNN's dilation (0 = none = PyTorch dilation 1), pad the left
 * (front) padding, pad_r the right padding derived from the sizes. */
typedef struct bench_desc {
    int64_t g, mb, ic, oc;
    int64_t in[3], out[3], k[3], s[3], pad[3], pad_r[3], dil[3];
    int has_groups;             /* g was given explicitly */
    int bias;                   /* 1: with bias (the default), 0: without */
    convt3d_layout layout;      /* of x and y (default NCDHW) */
    char name[DESC_NAME_MAX];   /* the raw text after 'n' (quotes included), or "" */
} bench_desc;

/* Why a descriptor was rejected: a message and the 0-based column of the
 * offending character (the string's length when something is missing). */
typedef struct desc_error {
    int column;
    char message[256];
} desc_error;

/* Parses text with benchdnn's rules (defaults g=1 mb=2 s=1 dil=0; a missing
 * output size or padding is inferred; d values copied to h and w when only d
 * is given, h to w when w is missing).  Returns 0 on success, -1 with *err set
 * when the text is malformed or the sizes are inconsistent. */
int desc_parse(const char *text, bench_desc *desc, desc_error *err);

/* Writes "error: <message>\n  <text>\n  <caret under the column>\n" into buf. */
void desc_error_format(const char *text, const desc_error *err, char *buf, size_t size);

/* The canonical descriptor: every field explicit, so that parsing it gives the
 * same bench_desc back.  Returns the length snprintf would have written. */
int desc_format(const bench_desc *desc, char *buf, size_t size);

/* Two descriptors describe the same problem (name included). */
int desc_equal(const bench_desc *a, const bench_desc *b);

/* The name for display: the raw name without one pair of surrounding quotes. */
void desc_display_name(const bench_desc *desc, char *buf, size_t size);

typedef enum desc_verdict {
    DESC_EXPRESSIBLE = 0,  /* *problem is a valid PyTorch ConvTranspose3d */
    DESC_NOT_EXPRESSIBLE,  /* well-formed, but PyTorch's contract cannot state it */
    DESC_INVALID           /* not a valid problem for oneDNN either (e.g. ic % g) */
} desc_verdict;

/* Maps to PyTorch's terms: dilation = dil + 1, padding = pad, output_padding =
 * pad - pad_r; has_bias and layout from the bias and layout fields.  Negative padding, negative output_padding, or output_padding
 * >= max(stride, dilation) make it not expressible; why goes into reason. */
desc_verdict desc_to_problem(const bench_desc *desc, convt3d_problem *problem, char *reason,
                             size_t size);

/* The descriptor of a (valid) problem: o from the output formula, pad_r =
 * padding - output_padding.  name is copied raw (NULL for none). */
void desc_from_problem(const convt3d_problem *problem, const char *name, bench_desc *desc);

#endif
