/* The CPU baseline: oneDNN's deconvolution forward primitive (its C API, 2.x
 * or 3.x: whichever configure found, see "The two C APIs" below), timed twice -- with plain src/dst in the problem's own layout (what a
 * C caller holds) and with the layouts oneDNN prefers (format_tag_any; the
 * reorders into and out of them are done once, outside the timed region).
 * Both outputs are checked against the reference.
 *
 * Mapping from PyTorch: oneDNN's weights are {g, oc/g, ic/g, kd, kh, kw}
 * (channel axes swapped), so PyTorch's [C_in][C_out/G][k] memory is the tag
 * giodhw (iodhw without groups); oneDNN dilation = PyTorch dilation - 1;
 * padding_r = padding - output_padding (negative when output_padding >
 * padding, which oneDNN accepts or refuses by its own rules: a refusal is
 * reported as unsupported).
 *
 * Data types: all four tensors in the run's type (dnnl_f32, dnnl_f16,
 * dnnl_bf16), as convt3d gets them; f32 is oneDNN's default strict fp32
 * math whatever --math says (its TF32 is a GPU feature).  Whether a half
 * type is implemented depends on oneDNN's version and the CPU's ISA: a
 * refusal says so in the row.
 *
 * The rows and the header line name the oneDNN that ran ("oneDNN 3.2 any",
 * "baselines: oneDNN 3.2.0"), read from the library at run time: a build
 * against a second oneDNN (configure --with-onednn=DIR) is compared with the
 * system's one by reading two tables side by side. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "data.h"

#ifdef CONVT3D_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

const char *onednn_version(void)
{
    static char buf[64];
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, sizeof buf, "oneDNN %d.%d.%d", v->major, v->minor, v->patch);
    return buf;
}

/* "oneDNN 3.2 ncdhw": a row's name with the major.minor of the library that
 * runs it. */
static void dnn_row_name(impl_result *r, const char *config)
{
    const dnnl_version_t *v = dnnl_version();
    char name[sizeof r->name];
    snprintf(name, sizeof name, "oneDNN %d.%d %s", v->major, v->minor, config);
    impl_init(r, name, 1);
}

/* ---- The two C APIs ----------------------------------------------------
 * oneDNN 3.0 made memory descriptors opaque handles (created and destroyed
 * like the other objects, queried by dnnl_memory_desc_query) and removed the
 * op descriptors (dnnl_*_desc_init): a primitive descriptor is created from
 * the memory descriptors in one call.  Everything else this file uses kept
 * its name and, with descriptors passed by pointer, its arguments.  So the
 * rest of the file holds descriptors as dnn_md / dnn_cmd and calls only the
 * functions of this section for what differs, each with one body per API.
 * (The 2.x descriptor is a plain struct; it is heap-allocated here so that
 * both APIs hand around a pointer that the owner destroys.) */
#if DNNL_VERSION_MAJOR >= 3
typedef dnnl_memory_desc_t dnn_md;        /* owned: dnn_md_destroy */
typedef const_dnnl_memory_desc_t dnn_cmd; /* borrowed */
#else
typedef dnnl_memory_desc_t *dnn_md;
typedef const dnnl_memory_desc_t *dnn_cmd;
#endif

static dnnl_status_t dnn_md_create(dnn_md *md, int ndims, const dnnl_dims_t dims,
                                   dnnl_data_type_t dt, dnnl_format_tag_t tag)
{
#if DNNL_VERSION_MAJOR >= 3
    return dnnl_memory_desc_create_with_tag(md, ndims, dims, dt, tag);
#else
    *md = malloc(sizeof **md);
    if (!*md)
        return dnnl_out_of_memory;
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(*md, ndims, dims, dt, tag);
    if (st != dnnl_success) {
        free(*md);
        *md = NULL;
    }
    return st;
#endif
}

static void dnn_md_destroy(dnn_md md)
{
#if DNNL_VERSION_MAJOR >= 3
    if (md)
        dnnl_memory_desc_destroy(md);
#else
    free(md);
#endif
}

/* The inner blocks of a blocked layout (nblks 0 for a plain one); 0 when the
 * layout is not a blocked one (oneDNN's opaque formats). */
static int dnn_md_blocks(dnn_cmd md, int *nblks, const dnnl_dim_t **blks,
                         const dnnl_dim_t **idxs)
{
#if DNNL_VERSION_MAJOR >= 3
    dnnl_format_kind_t kind;
    const dnnl_dims_t *b, *i;
    if (dnnl_memory_desc_query(md, dnnl_query_format_kind, &kind) != dnnl_success ||
        kind != dnnl_blocked || dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, nblks) ||
        dnnl_memory_desc_query(md, dnnl_query_inner_blks, &b) ||
        dnnl_memory_desc_query(md, dnnl_query_inner_idxs, &i))
        return 0;
    *blks = *b;
    *idxs = *i;
#else
    if (md->format_kind != dnnl_blocked)
        return 0;
    *nblks = md->format_desc.blocking.inner_nblks;
    *blks = md->format_desc.blocking.inner_blks;
    *idxs = md->format_desc.blocking.inner_idxs;
#endif
    return 1;
}

/* The one place the deconvolution's primitive descriptor is created (bia
 * NULL: no bias).  2.x goes through the op descriptor, 3.x has none. */
static dnnl_status_t dnn_deconv_pd_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                          dnn_cmd src, dnn_cmd wei, dnn_cmd bia, dnn_cmd dst,
                                          const dnnl_dims_t strides, const dnnl_dims_t dilates,
                                          const dnnl_dims_t pad_l, const dnnl_dims_t pad_r)
{
#if DNNL_VERSION_MAJOR >= 3
    return dnnl_deconvolution_forward_primitive_desc_create(
        pd, engine, dnnl_forward_inference, dnnl_deconvolution_direct, src, wei, bia, dst,
        strides, dilates, pad_l, pad_r, NULL);
#else
    dnnl_deconvolution_desc_t desc;
    dnnl_status_t st = dnnl_dilated_deconvolution_forward_desc_init(
        &desc, dnnl_forward_inference, dnnl_deconvolution_direct, src, wei, bia, dst, strides,
        dilates, pad_l, pad_r);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(pd, &desc, NULL, engine, NULL);
    return st;
#endif
}

/* ---- The baseline, on either API ---------------------------------------- */

/* Everything one configuration owns; released by dnn_release. */
typedef struct dnn_run {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    /* the descriptors the memories and the primitive are made from */
    dnn_md src_md, dst_md, wei_md, bia_md, user_src_md, user_dst_md, user_wei_md;
    dnnl_memory_t src, wei, bia, dst;          /* what the primitive reads and writes */
    dnnl_memory_t user_src, user_wei, user_dst; /* wrappers of the bench's host arrays */
    dnnl_exec_arg_t args[4];
    int nargs;
} dnn_run;

static void dnn_release(dnn_run *d)
{
    dnnl_memory_t *mems[] = {&d->src, &d->wei, &d->bia, &d->dst,
                             &d->user_src, &d->user_wei, &d->user_dst};
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (*mems[i])
            dnnl_memory_destroy(*mems[i]);
    dnn_md mds[] = {d->src_md,      d->dst_md,      d->wei_md,     d->bia_md,
                    d->user_src_md, d->user_dst_md, d->user_wei_md};
    for (size_t i = 0; i < sizeof mds / sizeof mds[0]; i++)
        dnn_md_destroy(mds[i]);
    if (d->prim)
        dnnl_primitive_destroy(d->prim);
    if (d->pd)
        dnnl_primitive_desc_destroy(d->pd);
    if (d->stream)
        dnnl_stream_destroy(d->stream);
    if (d->engine)
        dnnl_engine_destroy(d->engine);
    memset(d, 0, sizeof *d);
}

#define DNN_CHECK(call, what)                                                                  \
    do {                                                                                       \
        dnnl_status_t s_ = (call);                                                             \
        if (s_ != dnnl_success) {                                                              \
            impl_set(r, IMPL_FAILED, "%s: %s failed: %s", what, #call, dnnl_status2str(s_));   \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

/* Copies between two memories of the same tensor in different formats. */
static int dnn_reorder(dnn_run *d, dnnl_memory_t from, dnnl_memory_t to, impl_result *r)
{
    dnn_cmd fmd, tmd;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t rp = NULL;
    DNN_CHECK(dnnl_memory_get_memory_desc(from, &fmd), "reorder");
    DNN_CHECK(dnnl_memory_get_memory_desc(to, &tmd), "reorder");
    DNN_CHECK(dnnl_reorder_primitive_desc_create(&rpd, fmd, d->engine, tmd, d->engine, NULL),
              "reorder");
    dnnl_status_t st = dnnl_primitive_create(&rp, rpd);
    dnnl_primitive_desc_destroy(rpd);
    if (st != dnnl_success) {
        impl_set(r, IMPL_FAILED, "reorder: dnnl_primitive_create failed: %s",
                 dnnl_status2str(st));
        return -1;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    st = dnnl_primitive_execute(rp, d->stream, 2, args);
    if (st == dnnl_success)
        st = dnnl_stream_wait(d->stream);
    dnnl_primitive_destroy(rp);
    if (st != dnnl_success) {
        impl_set(r, IMPL_FAILED, "reorder: execute failed: %s", dnnl_status2str(st));
        return -1;
    }
    return 0;
}

/* "16c" style summary of a blocked layout's inner blocks, "plain" if none. */
static void describe_md(dnn_cmd md, const char *dims, char *buf, size_t size)
{
    int nblks;
    const dnnl_dim_t *blks, *idxs;
    if (!dnn_md_blocks(md, &nblks, &blks, &idxs)) {
        snprintf(buf, size, "opaque");
        return;
    }
    if (nblks == 0) {
        snprintf(buf, size, "plain");
        return;
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < nblks && len + 8 < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%lld%c", (long long)blks[i],
                                dims[idxs[i]]);
}

static dnnl_data_type_t dnn_type(convt3d_dtype t)
{
    return t == CONVT3D_F16 ? dnnl_f16 : t == CONVT3D_BF16 ? dnnl_bf16 : dnnl_f32;
}

/* Builds the primitive for one configuration: src/dst in `tag` (the problem's
 * plain layout, or dnnl_format_tag_any), weights always in oneDNN's choice. */
static int dnn_setup(dnn_run *d, const bench_problem *bp, dnnl_format_tag_t tag, impl_result *r)
{
    const convt3d_problem *p = &bp->p;
    const int64_t g = p->groups;
    const dnnl_data_type_t dt = dnn_type(bp->dtype);
    const dnnl_format_tag_t plain = p->layout == CONVT3D_LAYOUT_NDHWC ? dnnl_ndhwc : dnnl_ncdhw;
    dnnl_dims_t src_dims = {p->batch, p->in_channels, p->in_size[0], p->in_size[1],
                            p->in_size[2]};
    dnnl_dims_t dst_dims = {p->batch, p->out_channels, bp->out[0], bp->out[1], bp->out[2]};
    dnnl_dims_t wei_dims, bia_dims = {p->out_channels};
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    const int wei_nd = g > 1 ? 6 : 5;
    if (g > 1) {
        const dnnl_dims_t w6 = {g, p->out_channels / g, p->in_channels / g, p->kernel[0],
                                p->kernel[1], p->kernel[2]};
        memcpy(wei_dims, w6, sizeof w6);
    } else {
        const dnnl_dims_t w5 = {p->out_channels, p->in_channels, p->kernel[0], p->kernel[1],
                                p->kernel[2]};
        memcpy(wei_dims, w5, sizeof w5);
    }
    for (int i = 0; i < 3; i++) {
        strides[i] = p->stride[i];
        dilates[i] = p->dilation[i] - 1;
        pad_l[i] = p->padding[i];
        pad_r[i] = p->padding[i] - p->output_padding[i];
    }
    DNN_CHECK(dnnl_engine_create(&d->engine, dnnl_cpu, 0), "engine");
    DNN_CHECK(dnnl_stream_create(&d->stream, d->engine, dnnl_stream_default_flags), "stream");
    DNN_CHECK(dnn_md_create(&d->src_md, 5, src_dims, dt, tag), "src md");
    DNN_CHECK(dnn_md_create(&d->dst_md, 5, dst_dims, dt, tag), "dst md");
    DNN_CHECK(dnn_md_create(&d->user_src_md, 5, src_dims, dt, plain), "src md");
    DNN_CHECK(dnn_md_create(&d->user_dst_md, 5, dst_dims, dt, plain), "dst md");
    DNN_CHECK(dnn_md_create(&d->wei_md, wei_nd, wei_dims, dt, dnnl_format_tag_any), "weights md");
    DNN_CHECK(dnn_md_create(&d->user_wei_md, wei_nd, wei_dims, dt,
                            g > 1 ? dnnl_giodhw : dnnl_iodhw),
              "weights md");
    DNN_CHECK(dnn_md_create(&d->bia_md, 1, bia_dims, dt, dnnl_x), "bias md");

    const dnnl_status_t st = dnn_deconv_pd_create(
        &d->pd, d->engine, d->src_md, d->wei_md, p->has_bias ? d->bia_md : NULL, d->dst_md,
        strides, dilates, pad_l, pad_r);
    if (st != dnnl_success) {
        if (pad_r[0] < 0 || pad_r[1] < 0 || pad_r[2] < 0)
            impl_set(r, IMPL_UNSUPPORTED,
                     "oneDNN refuses the problem (%s): padding_r = padding - output_padding = "
                     "(%lld,%lld,%lld) is negative",
                     dnnl_status2str(st), (long long)pad_r[0], (long long)pad_r[1],
                     (long long)pad_r[2]);
        else
            impl_set(r, IMPL_UNSUPPORTED, "oneDNN refuses the problem%s%s (%s)",
                     bp->dtype == CONVT3D_F32 ? "" : " in ",
                     bp->dtype == CONVT3D_F32 ? "" : convt3d_dtype_name(bp->dtype),
                     dnnl_status2str(st));
        return -1;
    }
    DNN_CHECK(dnnl_primitive_create(&d->prim, d->pd), "primitive");

    const dnn_cmd q_src = dnnl_primitive_desc_query_md(d->pd, dnnl_query_src_md, 0);
    const dnn_cmd q_dst = dnnl_primitive_desc_query_md(d->pd, dnnl_query_dst_md, 0);
    const dnn_cmd q_wei = dnnl_primitive_desc_query_md(d->pd, dnnl_query_weights_md, 0);
    const int src_plain = dnnl_memory_desc_equal(q_src, d->user_src_md);
    const int dst_plain = dnnl_memory_desc_equal(q_dst, d->user_dst_md);
    DNN_CHECK(dnnl_memory_create(&d->user_src, d->user_src_md, d->engine, bp->xt), "src memory");
    DNN_CHECK(dnnl_memory_create(&d->user_dst, d->user_dst_md, d->engine, bp->yt), "dst memory");
    DNN_CHECK(dnnl_memory_create(&d->user_wei, d->user_wei_md, d->engine, bp->wt),
              "weights memory");
    DNN_CHECK(dnnl_memory_create(&d->wei, q_wei, d->engine, DNNL_MEMORY_ALLOCATE),
              "weights memory");
    DNN_CHECK(dnnl_memory_create(&d->src, q_src, d->engine,
                                 src_plain ? (void *)bp->xt : DNNL_MEMORY_ALLOCATE),
              "src memory");
    DNN_CHECK(dnnl_memory_create(&d->dst, q_dst, d->engine,
                                 dst_plain ? bp->yt : DNNL_MEMORY_ALLOCATE),
              "dst memory");
    if (p->has_bias)
        DNN_CHECK(dnnl_memory_create(&d->bia, d->bia_md, d->engine, bp->bt), "bias memory");
    /* Once, outside the timing: weights (like a convt3d plan repacks them)
     * and, for preferred layouts, the input. */
    if (dnn_reorder(d, d->user_wei, d->wei, r) ||
        (!src_plain && dnn_reorder(d, d->user_src, d->src, r)))
        return -1;

    const char *impl = "?";
    dnnl_primitive_desc_query(d->pd, dnnl_query_impl_info_str, 0, &impl);
    char s_fmt[32], d_fmt[32], w_fmt[32];
    describe_md(q_src, "ncdhw", s_fmt, sizeof s_fmt);
    describe_md(q_dst, "ncdhw", d_fmt, sizeof d_fmt);
    describe_md(q_wei, g > 1 ? "goidhw" : "oidhw", w_fmt, sizeof w_fmt);
    snprintf(r->detail, sizeof r->detail, "%s, src %s, dst %s, wei %s", impl, s_fmt, d_fmt,
             w_fmt);

    d->nargs = 0;
    d->args[d->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, d->src};
    d->args[d->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, d->wei};
    if (p->has_bias)
        d->args[d->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, d->bia};
    d->args[d->nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, d->dst};
    return 0;
}

static int dnn_once(void *ctx)
{
    dnn_run *d = ctx;
    dnnl_status_t st = dnnl_primitive_execute(d->prim, d->stream, d->nargs, d->args);
    if (st == dnnl_success)
        st = dnnl_stream_wait(d->stream);
    return st != dnnl_success;
}

static void run_config(const bench_problem *bp, const bench_settings *s, dnnl_format_tag_t tag,
                       impl_result *r)
{
    dnn_run d;
    memset(&d, 0, sizeof d);
    if (dnn_setup(&d, bp, tag, r)) {
        dnn_release(&d);
        return;
    }
    /* The first run writes into a poisoned output, which is then brought back
     * to the problem's layout (if oneDNN chose another) and verified. */
    void *dst_ptr = NULL;
    dnn_cmd dmd = NULL;
    dnnl_memory_get_data_handle(d.dst, &dst_ptr);
    dnnl_memory_get_memory_desc(d.dst, &dmd);
    memset(dst_ptr, 0xff, dnnl_memory_desc_get_size(dmd));
    if (dst_ptr != bp->yt)
        data_poison_elems(bp->yt, bp->y_elems, bp->esize);
    const double t0 = bench_now();
    if (dnn_once(&d)) {
        impl_set(r, IMPL_FAILED, "dnnl_primitive_execute failed");
        dnn_release(&d);
        return;
    }
    const double first = bench_now() - t0;
    if (dst_ptr != bp->yt && dnn_reorder(&d, d.dst, d.user_dst, r)) {
        dnn_release(&d);
        return;
    }
    if (impl_verify(r, bp, NULL)) {
        dnn_release(&d);
        return;
    }
    if (time_host(&s->timing, dnn_once, &d, first, &r->time))
        impl_set(r, IMPL_FAILED, "dnnl_primitive_execute failed while timing");
    else
        r->state = IMPL_OK;
    dnn_release(&d);
}

void run_onednn(const bench_problem *bp, const bench_settings *s, impl_result *plain,
                impl_result *any)
{
    dnn_row_name(plain, bp->p.layout == CONVT3D_LAYOUT_NDHWC ? "ndhwc" : "ncdhw");
    dnn_row_name(any, "any");
    /* oneDNN on the CPU: strict fp32 for f32 data, whatever --math says */
    impl_set_prec(plain, mode_prec(bp->dtype, CONVT3D_MATH_F32), s);
    impl_set_prec(any, mode_prec(bp->dtype, CONVT3D_MATH_F32), s);
    run_config(bp, s, bp->p.layout == CONVT3D_LAYOUT_NDHWC ? dnnl_ndhwc : dnnl_ncdhw, plain);
    run_config(bp, s, dnnl_format_tag_any, any);
}

#else /* !CONVT3D_HAVE_ONEDNN */

const char *onednn_version(void) { return "oneDNN: not built (configure did not find libdnnl)"; }

void run_onednn(const bench_problem *bp, const bench_settings *s, impl_result *plain,
                impl_result *any)
{
    (void)s;
    impl_init(plain, bp->p.layout == CONVT3D_LAYOUT_NDHWC ? "oneDNN ndhwc" : "oneDNN ncdhw", 1);
    impl_init(any, "oneDNN any", 1);
    impl_set(plain, IMPL_SKIPPED, "not built: configure did not find oneDNN (libdnnl-dev, or --with-onednn=DIR)");
    impl_set(any, IMPL_SKIPPED, "not built: configure did not find oneDNN (libdnnl-dev, or --with-onednn=DIR)");
}

#endif
