/* Writes the fuzz target's seed corpus: one file per case below, named after
 * it.  Build and run from the repository root (`make fuzz-seeds` does it):
 *   cc -Iinclude -I<dir with convt3d_version.h> fuzz/make_corpus.c -o make_corpus
 *   ./make_corpus fuzz/corpus
 * Each file is checked to decode back to its case. */
#include <stdio.h>
#include <string.h>

#include "problem_codec.h"

typedef struct seed {
    const char *name;
    fuzz_case c;
} seed;

static fuzz_case make(int64_t n, int64_t cin, int64_t cout, int64_t g, int64_t d, int64_t h,
                      int64_t w, int64_t k, int64_t s, int64_t p, int64_t op, int bias,
                      convt3d_layout layout)
{
    fuzz_case c;
    memset(&c, 0, sizeof c);
    convt3d_problem pr = CONVT3D_PROBLEM_INIT;
    pr.batch = n, pr.in_channels = cin, pr.out_channels = cout, pr.groups = g;
    pr.in_size[0] = d, pr.in_size[1] = h, pr.in_size[2] = w;
    for (int i = 0; i < 3; i++) {
        pr.kernel[i] = k;
        pr.stride[i] = s;
        pr.padding[i] = p;
        pr.output_padding[i] = op;
    }
    pr.has_bias = bias;
    pr.layout = layout;
    c.problem = pr;
    c.data_seed = 0x5eed0000u + (uint64_t)(n * 131 + cin * 17 + cout * 7 + k);
    strcpy(c.device, "cpu");
    return c;
}

#define NC CONVT3D_LAYOUT_NCDHW
#define NH CONVT3D_LAYOUT_NDHWC

static int write_seed(const char *dir, int index, const seed *s)
{
    fuzz_writer w;
    fuzz_encode(&s->c, &w);
    fuzz_case back;
    fuzz_decode(w.buf, w.n, &back);
    if (memcmp(&back.problem, &s->c.problem, sizeof back.problem) != 0 ||
        strcmp(back.device, s->c.device) != 0 || back.data_seed != s->c.data_seed) {
        fprintf(stderr, "make_corpus: %s does not round-trip\n", s->name);
        return 0;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%02d-%s", dir, index, s->name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(w.buf, 1, w.n, f) != w.n || fclose(f) != 0) {
        perror(path);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    seed seeds[64];
    int n = 0;
#define ADD(label, expr) (seeds[n].name = (label), seeds[n].c = (expr), &seeds[n++].c)
    fuzz_case *c;

    /* Valid, small: the bench shapes scaled down, both layouts, bias on/off. */
    c = ADD("kernelbench-like", make(1, 8, 8, 4, 3, 4, 5, 3, 2, 1, 1, 0, NC));
    c->problem.kernel[1] = 5, c->problem.kernel[2] = 7;
    c->problem.padding[1] = 2, c->problem.padding[2] = 3;
    ADD("unet-k2s2", make(2, 4, 2, 1, 3, 3, 4, 2, 2, 0, 0, 1, NC));
    ADD("k4s2p1", make(1, 3, 2, 1, 2, 3, 3, 4, 2, 1, 0, 1, NH));
    ADD("k3s2p1op1", make(1, 4, 2, 1, 2, 2, 3, 3, 2, 1, 1, 1, NC));
    ADD("depthwise", make(2, 6, 6, 6, 3, 3, 3, 3, 2, 1, 1, 0, NH));
    ADD("k3s1p1", make(1, 2, 3, 1, 4, 4, 4, 3, 1, 1, 0, 0, NC));
    ADD("grouped-ndhwc-bias", make(3, 6, 9, 3, 2, 3, 2, 2, 3, 0, 2, 1, NH));
    c = ADD("dilated-op-ge-stride", make(1, 2, 2, 1, 3, 3, 3, 3, 2, 1, 2, 0, NC));
    c->problem.dilation[0] = c->problem.dilation[1] = c->problem.dilation[2] = 3;
    c = ADD("mixed-per-dim", make(1, 2, 4, 2, 2, 5, 3, 1, 1, 0, 0, 1, NH));
    c->problem.kernel[0] = 4, c->problem.stride[1] = 3, c->problem.padding[2] = 1;
    c->problem.dilation[2] = 2, c->problem.output_padding[1] = 2;
    ADD("one-voxel", make(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, NC));
    ADD("kernel-larger-than-input", make(1, 1, 2, 1, 1, 2, 1, 5, 3, 0, 0, 1, NC));
    ADD("output-size-exactly-1", make(1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 0, 0, NC));
    ADD("stride-gaps-bias-only-rows", make(1, 2, 2, 1, 2, 2, 2, 1, 4, 0, 3, 1, NC));
    ADD("padding-cuts-most", make(1, 2, 2, 1, 4, 4, 4, 3, 2, 3, 1, 1, NH));

    /* Valid, too large to run: plan creation only. */
    ADD("large-output-small-weights", make(1, 1, 1, 1, 64, 64, 64, 1, 1000, 0, 0, 1, NC));

    /* Each rule broken once. */
    ADD("batch-0", make(0, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("batch-negative", make(-3, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("in-channels-0", make(1, 0, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("out-channels-negative", make(1, 2, -2, 1, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("groups-0", make(1, 2, 2, 0, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("groups-not-dividing", make(1, 4, 6, 4, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    ADD("in-size-0", make(1, 2, 2, 1, 2, 0, 2, 2, 1, 0, 0, 0, NC));
    ADD("kernel-0", make(1, 2, 2, 1, 2, 2, 2, 0, 1, 0, 0, 0, NC));
    ADD("stride-0", make(1, 2, 2, 1, 2, 2, 2, 2, 0, 0, 0, 0, NC));
    c = ADD("dilation-0", make(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, NC));
    c->problem.dilation[1] = 0;
    ADD("padding-negative", make(1, 2, 2, 1, 2, 2, 2, 2, 1, -1, 0, 0, NC));
    ADD("output-padding-eq-stride", make(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 2, 0, NC));
    ADD("output-padding-negative", make(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, -1, 0, NC));
    ADD("layout-2", make(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, (convt3d_layout)2));
    ADD("layout-negative", make(1, 2, 2, 1, 2, 2, 2, 2, 1, 0, 0, 0, (convt3d_layout)-1));
    ADD("output-size-0", make(1, 2, 2, 1, 2, 2, 2, 3, 1, 2, 0, 0, NC));
    ADD("output-size-negative", make(1, 2, 2, 1, 2, 2, 2, 3, 1, 100, 0, 0, NC));
    c = ADD("overflow-extent", make(1, 1, 1, 1, 2, 2, 2, 1, 1, 0, 0, 0, NC));
    c->problem.in_size[0] = INT64_MAX / 2, c->problem.stride[0] = 4;
    c = ADD("overflow-padding-int64-max", make(1, 1, 1, 1, 2, 2, 2, 1, 1, 0, 0, 0, NC));
    c->problem.padding[2] = INT64_MAX;
    ADD("overflow-y-elements", make(1, 6, 6, 1, 1000, 1000, 1000, 1, 10000, 0, 0, 0, NC));
    ADD("overflow-x-bytes", make(1, 1, 1, 1, 2097152, 2097152, 1048576, 1, 1, 0, 0, 0, NC));
    c = ADD("overflow-weight", make(1, (int64_t)1 << 40, 1, 1, 1, 1, 1, 256, 1, 0, 0, 0, NC));
    (void)c;
    ADD("overflow-batch", make(INT64_MAX / 3, 4, 6, 2, 3, 4, 5, 3, 2, 1, 1, 1, NC));

    /* Devices, NULL tensors. */
    static const char *const devices[] = {"auto", "cuda", "cuda:0", "cuda:99", "cuda:-1",
                                          "gpu",  "",     "cuda:9999", "cuda:12345", "CPU"};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        static char names[16][32];
        snprintf(names[i], sizeof names[i], "device-%s", devices[i][0] ? devices[i] : "empty");
        for (char *q = names[i]; *q; q++)
            if (*q == ':')
                *q = '_';
        c = ADD(names[i], make(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 1, 1, NC));
        strcpy(c->device, devices[i]);
    }
    for (int which = 0; which < 4; which++) {
        static const char *const names[4] = {"null-x", "null-weight", "null-bias", "null-y"};
        c = ADD(names[which], make(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 1, 1, NC));
        c->flags = (uint8_t)(FUZZ_FLAG_NULL | (which << 1));
    }
    c = ADD("null-bias-without-bias", make(1, 2, 2, 1, 2, 2, 2, 2, 2, 0, 1, 0, NC));
    c->flags = (uint8_t)(FUZZ_FLAG_NULL | (2 << 1));

    /* Found by fuzzing: stride and padding that cancel, out = 6, but (in-1)*s +
     * l*(k-1) leaves int64: must be OVERFLOW (backends add p to output
     * coordinates in int64). */
    c = ADD("partial-sum-overflow", make(2, 1, 2, 1, 3, 3, 3, 3, 2, 2, 1, 1, NH));
    c->problem.stride[0] = c->problem.padding[0] = INT64_MAX / 2;
    c->problem.dilation[0] = c->problem.dilation[1] = c->problem.dilation[2] = 2;
    c->problem.stride[2] = 120;

    /* Found by fuzzing in the CPU backend: a W stride far beyond the output
     * overflowed the NDHWC tile's output step (stride * C_out), one near
     * INT64_MAX the phase length (out + s - 1) / s, and one of 2^62 the
     * tiling's stride * kernel.  Such strides are now refused (above
     * CONVT3D_MAX_DIM_VALUE); these seeds keep the largest one accepted.
     * Data seeds divisible by 3 pick the best CPU kernel. */
    c = ADD("cpu-ndhwc-out-stride-overflow", make(1, 4, 36, 2, 2, 3, 1, 1, 2, 1, 1, 0, NH));
    c->problem.kernel[2] = 3, c->problem.dilation[2] = 2;
    c->problem.stride[2] = CONVT3D_MAX_DIM_VALUE;
    c->data_seed = 3;
    c = ADD("cpu-phase-len-overflow", make(1, 1, 109, 1, 1, 1, 1, 1, 1, 0, 0, 0, NH));
    c->problem.stride[2] = CONVT3D_MAX_DIM_VALUE, c->problem.output_padding[2] = 1;
    c->problem.dilation[1] = 95, c->problem.dilation[2] = 113;
    c->data_seed = 6;

    int ok = 1;
    for (int i = 0; i < n; i++)
        ok &= write_seed(argv[1], i, &seeds[i]);
    printf("make_corpus: %d seeds written to %s\n", n, argv[1]);
    return ok ? 0 : 1;
}
