/* The README's usage example, compiled and run by `make check` so it cannot rot.
 * A ConvTranspose3d(4 -> 6 channels, kernel 3, stride 2, padding 1,
 * output_padding 1, groups 2, bias) on a 1 x 4 x 5 x 6 x 7 input.
 * Beyond the README: the output is checked against convt3d_reference (the
 * data are small integers, so every sum is exact and the match must be
 * bitwise), and the exit status is non-zero on any mismatch. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include <convt3d.h>

int main(void)
{
    convt3d_problem p = CONVT3D_PROBLEM_INIT;
    p.batch = 1;
    p.in_channels = 4;
    p.out_channels = 6;
    p.groups = 2;
    p.in_size[0] = 5, p.in_size[1] = 6, p.in_size[2] = 7;
    for (int d = 0; d < 3; d++) {
        p.kernel[d] = 3;
        p.stride[d] = 2;
        p.padding[d] = 1;
        p.output_padding[d] = 1;
    }
    p.has_bias = 1;

    int64_t nx, nw, ny, out[3];
    convt3d_status st = convt3d_tensor_elems(&p, &nx, &nw, &ny);
    if (st != CONVT3D_SUCCESS) {
        fprintf(stderr, "%s: %s\n", convt3d_status_string(st), convt3d_last_error());
        return 1;
    }
    convt3d_output_dims(&p, out); /* (5-1)*2 - 2 + 2 + 1 + 1 = 10, then 12, 14 */

    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
    float *y = malloc(ny * sizeof *y), bias[6] = {0.5f, -0.5f, 1, 2, 3, 4};
    for (int64_t i = 0; i < nx; i++) x[i] = (float)(i % 7) - 3;
    for (int64_t i = 0; i < nw; i++) w[i] = (float)(i % 5) - 2;

    /* Plan once (weights repacked here), execute many times. */
    convt3d_device dev;
    convt3d_device_parse("auto", &dev); /* CONVT3D_DEVICE=cpu|cuda:N overrides */
    convt3d_plan *plan = NULL;
    st = convt3d_plan_create(&plan, &p, dev, w, bias);
    if (st == CONVT3D_SUCCESS)
        st = convt3d_execute(plan, x, y);
    if (st != CONVT3D_SUCCESS) {
        fprintf(stderr, "%s: %s\n", convt3d_status_string(st), convt3d_last_error());
        return 1;
    }
    printf("y is 1 x 6 x %lld x %lld x %lld, computed by %s; y[0] = %g\n", (long long)out[0],
           (long long)out[1], (long long)out[2], convt3d_plan_kernel_name(plan), y[0]);
    convt3d_plan_destroy(plan);

    /* (not in the README) The check: the reference gives the same y. */
    float *ref = malloc(ny * sizeof *ref);
    if (!ref || out[0] != 10 || out[1] != 12 || out[2] != 14 || ny != 6LL * 10 * 12 * 14 ||
        convt3d_reference(&p, x, w, bias, ref) != CONVT3D_SUCCESS) {
        fprintf(stderr, "example: the reference run or the output size is wrong\n");
        return 1;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < ny; i++)
        bad += memcmp(&y[i], &ref[i], sizeof *y) != 0;
    if (bad) {
        char desc[512];
        convt3d_problem_to_string(&p, desc, sizeof desc);
        fprintf(stderr, "example: %lld of %lld outputs differ from convt3d_reference: %s\n",
                (long long)bad, (long long)ny, desc);
        return 1;
    }
    printf("matches convt3d_reference bitwise (%lld outputs)\n", (long long)ny);
    free(ref);

    /* Errors name the field: output_padding must be < stride or dilation. */
    p.output_padding[1] = 2;
    st = convt3d_validate(&p);
    printf("%s: %s\n", convt3d_status_string(st), convt3d_last_error());

    free(x), free(w), free(y);
    return st == CONVT3D_ERR_BAD_OUTPUT_PADDING ? 0 : 1;
}
