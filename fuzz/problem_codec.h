/* The byte format the fuzz target reads, with its encoder (used by
 * make_corpus.c to write the seed corpus).  Header-only so that the decoder
 * and the encoder cannot drift apart.
 *
 * Format, in order (missing bytes read as 0):
 *   22 sizes    batch, in_channels, out_channels, groups, in_size[3], kernel[3],
 *               stride[3], padding[3], output_padding[3], dilation[3]
 *   layout      1 tag byte: < 0xF0 -> tag & 1; else an int32 follows (any value)
 *   flags       bit 0: has_bias; bit 7: pass a NULL tensor, bits 1-2 say which
 *               (0 x, 1 weight, 2 bias, 3 y)
 *   data seed   8 bytes, little endian: the RNG seed of the tensor data
 *   device      1 tag byte: < 0x80 -> "cpu"; < 0xC0 -> one of the table below;
 *               else the rest of the input (up to 31 bytes, up to a NUL)
 *
 * A size is one tag byte, then maybe more bytes.  The classes make both
 * realistic small values and int64 edge values one mutation away:
 *   0x00-0x7F  tag - 4                      (-4 .. 123)
 *   0x80-0x9F  int16 from the next 2 bytes
 *   0xA0-0xBF  int32 from the next 4 bytes
 *   0xC0-0xDF  int64 from the next 8 bytes
 *   0xE0-0xFF  edge_values[tag & 31]
 */
#ifndef CONVT3D_FUZZ_PROBLEM_CODEC_H
#define CONVT3D_FUZZ_PROBLEM_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "convt3d.h"

typedef struct fuzz_case {
    convt3d_problem problem;
    uint8_t flags;
    uint64_t data_seed;
    char device[32];
} fuzz_case;

enum { FUZZ_FLAG_BIAS = 1, FUZZ_FLAG_NULL = 0x80 };

static const int64_t fuzz_edge_values[32] = {
    INT64_MAX,          INT64_MIN,           INT64_MAX - 1,      INT64_MIN + 1,
    INT64_MAX / 2,      INT64_MAX / 2 + 1,   INT64_MAX / 4,      INT64_MAX / 4 + 1,
    INT32_MAX,          (int64_t)INT32_MAX + 1, INT32_MIN,        (int64_t)UINT32_MAX,
    (int64_t)1 << 32,   3037000499LL,        3037000500LL,       2097151,
    2097152,            (int64_t)1 << 40,    -((int64_t)1 << 40), 65535,
    65536,              46340,               46341,              1290,
    1291,               1625,                1626,               (int64_t)1 << 62,
    -1,                 0,                   1,                  2};

static const char *const fuzz_device_table[16] = {
    "auto",  "cuda",     "cuda:0",     "cuda:1",  "cuda:99", "cuda:-1", "gpu",      "",
    "cuda:9999", "cuda:10000", "CPU", "cpu ", "cuda:", "cuda:0x1", "cuda:+1", "cuda:007"};

typedef struct fuzz_reader {
    const uint8_t *p;
    size_t n;
} fuzz_reader;

static inline uint8_t fuzz_take_u8(fuzz_reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static inline uint64_t fuzz_take_le(fuzz_reader *r, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)fuzz_take_u8(r) << (8 * i);
    return v;
}

static inline int64_t fuzz_take_size(fuzz_reader *r)
{
    const uint8_t tag = fuzz_take_u8(r);
    if (tag < 0x80)
        return (int64_t)tag - 4;
    if (tag < 0xA0)
        return (int16_t)fuzz_take_le(r, 2);
    if (tag < 0xC0)
        return (int32_t)fuzz_take_le(r, 4);
    if (tag < 0xE0)
        return (int64_t)fuzz_take_le(r, 8);
    return fuzz_edge_values[tag & 31];
}

static inline int64_t *fuzz_size_field(convt3d_problem *p, int i)
{
    switch (i) {
    case 0: return &p->batch;
    case 1: return &p->in_channels;
    case 2: return &p->out_channels;
    case 3: return &p->groups;
    default: break;
    }
    int64_t *triples[6] = {p->in_size, p->kernel,         p->stride,
                           p->padding, p->output_padding, p->dilation};
    return &triples[(i - 4) / 3][(i - 4) % 3];
}

enum { FUZZ_SIZE_FIELDS = 22 };

static inline void fuzz_decode(const uint8_t *data, size_t size, fuzz_case *c)
{
    fuzz_reader r = {data, size};
    memset(c, 0, sizeof *c);
    for (int i = 0; i < FUZZ_SIZE_FIELDS; i++)
        *fuzz_size_field(&c->problem, i) = fuzz_take_size(&r);
    const uint8_t lt = fuzz_take_u8(&r);
    c->problem.layout = lt < 0xF0 ? (convt3d_layout)(lt & 1)
                                  : (convt3d_layout)(int32_t)fuzz_take_le(&r, 4);
    c->flags = fuzz_take_u8(&r);
    c->problem.has_bias = c->flags & FUZZ_FLAG_BIAS;
    c->data_seed = fuzz_take_le(&r, 8);
    const uint8_t dt = fuzz_take_u8(&r);
    if (dt < 0x80) {
        strcpy(c->device, "cpu");
    } else if (dt < 0xC0) {
        strcpy(c->device, fuzz_device_table[dt & 15]);
    } else {
        size_t len = 0;
        while (r.n && len < sizeof c->device - 1 && *r.p)
            c->device[len++] = (char)fuzz_take_u8(&r);
        c->device[len] = '\0';
    }
}

/* ---- the encoder ------------------------------------------------------- */

typedef struct fuzz_writer {
    uint8_t buf[512];
    size_t n;
} fuzz_writer;

static inline void fuzz_put_le(fuzz_writer *w, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes && w->n < sizeof w->buf; i++)
        w->buf[w->n++] = (uint8_t)(v >> (8 * i));
}

static inline void fuzz_put_size(fuzz_writer *w, int64_t v)
{
    if (v >= -4 && v <= 123) {
        fuzz_put_le(w, (uint64_t)(v + 4), 1);
    } else if (v >= INT16_MIN && v <= INT16_MAX) {
        fuzz_put_le(w, 0x80, 1);
        fuzz_put_le(w, (uint64_t)v, 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
        fuzz_put_le(w, 0xA0, 1);
        fuzz_put_le(w, (uint64_t)v, 4);
    } else {
        fuzz_put_le(w, 0xC0, 1);
        fuzz_put_le(w, (uint64_t)v, 8);
    }
}

/* The inverse of fuzz_decode: decode(encode(c)) == c for every case whose
 * device string is not empty (an empty string is written as table entry 7). */
static inline void fuzz_encode(const fuzz_case *c, fuzz_writer *w)
{
    convt3d_problem p = c->problem;
    w->n = 0;
    for (int i = 0; i < FUZZ_SIZE_FIELDS; i++)
        fuzz_put_size(w, *fuzz_size_field(&p, i));
    if (p.layout == CONVT3D_LAYOUT_NCDHW || p.layout == CONVT3D_LAYOUT_NDHWC) {
        fuzz_put_le(w, (uint64_t)p.layout, 1);
    } else {
        fuzz_put_le(w, 0xF0, 1);
        fuzz_put_le(w, (uint64_t)(int64_t)p.layout, 4);
    }
    fuzz_put_le(w, (c->flags & ~FUZZ_FLAG_BIAS) | (p.has_bias ? FUZZ_FLAG_BIAS : 0), 1);
    fuzz_put_le(w, c->data_seed, 8);
    if (strcmp(c->device, "cpu") == 0) {
        fuzz_put_le(w, 0, 1);
    } else if (c->device[0] == '\0') {
        fuzz_put_le(w, 0x80 + 7, 1);
    } else {
        fuzz_put_le(w, 0xC0, 1);
        for (const char *s = c->device; *s; s++)
            fuzz_put_le(w, (uint8_t)*s, 1);
    }
}

#endif
