/* benchdnn deconvolution descriptors.  The rules follow benchdnn's str2desc
 * (tests/benchdnn/deconv/deconv_aux.cpp) and sanitize_desc: the same field
 * letters, defaults, inference of a missing output size or padding and the
 * copying of d values to h and w.  Where benchdnn is silent about positions we
 * add them: every rejection names the column of the offending character.
 * Deliberate differences: '_' is ignored anywhere between fields (benchdnn
 * rejects a leading or doubled '_'), numbers must follow their letters
 * directly (no sign or blanks) and are capped at 10^9 so that no size formula
 * can overflow int64.  Extensions (see descriptor.h): bias0/bias1 and
 * layoutncdhw/layoutndhwc. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "descriptor.h"

#define VALUE_MAX 1000000000LL

/* Fields in benchdnn's matching order.  The spatial ones come in (d, h, w)
 * triples so that F_ID + dim addresses a dimension. */
enum field {
    F_G, F_MB, F_IC, F_ID, F_IH, F_IW, F_OC, F_OD, F_OH, F_OW, F_KD, F_KH, F_KW,
    F_SD, F_SH, F_SW, F_PD, F_PH, F_PW, F_DD, F_DH, F_DW, F_COUNT
};

static const char *const field_key[F_COUNT] = {
    "g", "mb", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd", "kh", "kw",
    "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw"};

static const char dim_letter[3] = {'d', 'h', 'w'};

/* What the scanner saw: raw values and the column of each field (-1 if absent). */
typedef struct scan {
    int64_t v[F_COUNT];
    int col[F_COUNT];
    int len;
    int bias;              /* 1 unless "bias0" */
    convt3d_layout layout; /* NCDHW unless "layoutndhwc" */
} scan;

static int fail(desc_error *err, int column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(desc_error *err, int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->column = column;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}

/* The field whose key starts at text, or -1. */
static int match_key(const char *text)
{
    for (int f = 0; f < F_COUNT; f++)
        if (strncmp(field_key[f], text, strlen(field_key[f])) == 0)
            return f;
    return -1;
}

/* A non-negative decimal number at text[*pos]; advances *pos past it. */
static int scan_number(const char *text, int *pos, int f, int64_t *value, desc_error *err)
{
    const int start = *pos;
    if (text[start] == '-' || text[start] == '+')
        return fail(err, start, "`%s` must be a non-negative integer without a sign",
                    field_key[f]);
    if (!isdigit((unsigned char)text[start]))
        return fail(err, start, "`%s` must be followed by a number", field_key[f]);
    int64_t v = 0;
    int p = start;
    for (; isdigit((unsigned char)text[p]); p++) {
        v = v * 10 + (text[p] - '0');
        if (v > VALUE_MAX)
            return fail(err, start, "the value of `%s` is larger than %lld", field_key[f],
                        VALUE_MAX);
    }
    *value = v;
    *pos = p;
    return 0;
}

/* Splits text into fields and the name; defaults are benchdnn's. */
static int scan_text(const char *text, scan *sc, bench_desc *d, desc_error *err)
{
    memset(sc, 0, sizeof *sc);
    for (int f = 0; f < F_COUNT; f++)
        sc->col[f] = -1;
    sc->v[F_G] = -1; /* unset */
    sc->v[F_MB] = 2;
    for (int dim = 0; dim < 3; dim++) {
        sc->v[F_SD + dim] = 1;
        sc->v[F_PD + dim] = -1; /* unset: inferred */
    }
    sc->bias = 1;
    sc->layout = CONVT3D_LAYOUT_NCDHW;
    d->name[0] = '\0';
    const size_t len = strlen(text);
    if (len > 4096)
        return fail(err, 4096, "descriptor longer than 4096 characters");
    sc->len = (int)len;
    if (len == 0)
        return fail(err, 0, "empty descriptor");
    int pos = 0;
    while (text[pos]) {
        if (text[pos] == '_') {
            pos++;
            continue;
        }
        if (text[pos] == 'n') {
            const char *name = text + pos + 1;
            if (strlen(name) >= DESC_NAME_MAX)
                return fail(err, pos, "the name is longer than %d characters", DESC_NAME_MAX - 1);
            strcpy(d->name, name);
            break;
        }
        if (strncmp(text + pos, "bias", 4) == 0) {
            if (text[pos + 4] != '0' && text[pos + 4] != '1')
                return fail(err, pos + 4, "`bias` must be followed by 0 or 1");
            sc->bias = text[pos + 4] == '1';
            pos += 5;
            continue;
        }
        if (strncmp(text + pos, "layout", 6) == 0) {
            if (strncmp(text + pos + 6, "ncdhw", 5) == 0)
                sc->layout = CONVT3D_LAYOUT_NCDHW;
            else if (strncmp(text + pos + 6, "ndhwc", 5) == 0)
                sc->layout = CONVT3D_LAYOUT_NDHWC;
            else
                return fail(err, pos + 6, "`layout` must be followed by ncdhw or ndhwc");
            pos += 11;
            continue;
        }
        const int f = match_key(text + pos);
        if (f < 0)
            return fail(err, pos,
                        "unrecognized field: expected one of g mb ic id ih iw oc od oh ow kd kh "
                        "kw sd sh sw pd ph pw dd dh dw, bias0/1, layoutncdhw/ndhwc, '_' or "
                        "n\"NAME\"");
        sc->col[f] = pos;
        pos += (int)strlen(field_key[f]);
        if (scan_number(text, &pos, f, &sc->v[f], err))
            return -1;
    }
    return 0;
}

/* The earliest column among one dimension's fields, or -1. */
static int dim_column(const scan *sc, int dim)
{
    const int fields[6] = {F_ID, F_OD, F_KD, F_SD, F_PD, F_DD};
    int best = -1;
    for (int j = 0; j < 6; j++) {
        const int c = sc->col[fields[j] + dim];
        if (c >= 0 && (best < 0 || c < best))
            best = c;
    }
    return best;
}

/* A positive count (g, ic, oc, a stride): present and nonzero. */
static int need_positive(const scan *sc, int f, desc_error *err)
{
    if (sc->v[f] > 0)
        return 0;
    if (sc->col[f] < 0)
        return fail(err, sc->len, "`%s` is missing", field_key[f]);
    return fail(err, sc->col[f], "`%s` must be at least 1", field_key[f]);
}

/* benchdnn: a dimension is present if any of its i/k/o/dilation is nonzero,
 * its stride is not 1 or its padding is at least 1; then i and k are needed
 * and a missing o or padding is inferred. */
static int resolve_dim(scan *sc, int dim, desc_error *err)
{
    int64_t *v = sc->v;
    int64_t *i = &v[F_ID + dim], *o = &v[F_OD + dim], *k = &v[F_KD + dim];
    int64_t *s = &v[F_SD + dim], *p = &v[F_PD + dim], *dl = &v[F_DD + dim];
    if (*i == 0 && *k == 0 && *o == 0 && *dl == 0 && *s == 1 && *p < 1)
        return 0;
    const int where = dim_column(sc, dim);
    for (int j = 0; j < 2; j++) {
        const int f = (j == 0 ? F_ID : F_KD) + dim;
        if (v[f] > 0)
            continue;
        if (sc->col[f] >= 0)
            return fail(err, sc->col[f], "`%s` must be at least 1", field_key[f]);
        return fail(err, where, "dimension %c is used here but `%s` is missing", dim_letter[dim],
                    field_key[f]);
    }
    const int64_t span = (*k - 1) * (*dl + 1) + 1; /* the dilated kernel extent */
    if (*o == 0) {
        if (*p < 0)
            *p = 0;
        *o = (*i - 1) * *s + span - 2 * *p;
        if (*o <= 0)
            return fail(err, where,
                        "the inferred `o%c` is %lld: (i-1)*s + (k-1)*(dil+1) + 1 - 2*p must be "
                        "at least 1",
                        dim_letter[dim], (long long)*o);
    } else if (*p < 0) {
        *p = ((*i - 1) * *s - *o + span) / 2; /* C division, as benchdnn (may be negative) */
    }
    return 0;
}

/* benchdnn's sanitize_desc: which dims exist follows from the output sizes;
 * d alone is copied to h and w, h alone to w, absent dims get size 1. */
static int sanitize_dims(scan *sc, desc_error *err)
{
    int64_t *v = sc->v;
    const int no[3] = {v[F_OD] == 0, v[F_OH] == 0, v[F_OW] == 0};
    const int base[6] = {F_ID, F_OD, F_KD, F_SD, F_PD, F_DD};
    const int64_t def[6] = {1, 1, 1, 1, 0, 0};
    int ndims = 5;
    if (no[0])
        ndims--;
    if (no[0] && no[1])
        ndims--;
    if (no[0] && no[1] && no[2])
        return fail(err, sc->len, "no spatial dimension: give at least one of id/ih/iw with "
                                  "its kernel kd/kh/kw");
    if (ndims == 5) {
        if (no[1] && no[2]) {
            for (int j = 0; j < 6; j++)
                v[base[j] + 1] = v[base[j] + 2] = v[base[j]];
        } else if (no[1] || no[2]) {
            const int c1 = dim_column(sc, 1), c2 = dim_column(sc, 2);
            return fail(err, c1 >= 0 ? c1 : c2,
                        "give both the h and the w dimension, or neither (then d is copied "
                        "to both)");
        }
    } else if (ndims == 4 && no[2]) {
        for (int j = 0; j < 6; j++)
            v[base[j] + 2] = v[base[j] + 1];
    }
    for (int j = 0; j < 6; j++) {
        if (ndims < 5)
            v[base[j]] = def[j];
        if (ndims < 4)
            v[base[j] + 1] = def[j];
    }
    return 0;
}

int desc_parse(const char *text, bench_desc *desc, desc_error *err)
{
    scan sc;
    bench_desc d;
    memset(&d, 0, sizeof d);
    err->column = -1;
    err->message[0] = '\0';
    if (!text)
        return fail(err, 0, "no descriptor");
    if (scan_text(text, &sc, &d, err))
        return -1;
    d.has_groups = sc.v[F_G] >= 0;
    d.bias = sc.bias;
    d.layout = sc.layout;
    if (d.has_groups && need_positive(&sc, F_G, err))
        return -1;
    if (need_positive(&sc, F_IC, err) || need_positive(&sc, F_OC, err))
        return -1;
    for (int dim = 0; dim < 3; dim++)
        if (need_positive(&sc, F_SD + dim, err))
            return -1;
    for (int dim = 0; dim < 3; dim++)
        if (resolve_dim(&sc, dim, err))
            return -1;
    if (sanitize_dims(&sc, err))
        return -1;

    d.g = d.has_groups ? sc.v[F_G] : 1;
    d.mb = sc.v[F_MB];
    d.ic = sc.v[F_IC];
    d.oc = sc.v[F_OC];
    for (int dim = 0; dim < 3; dim++) {
        d.in[dim] = sc.v[F_ID + dim];
        d.out[dim] = sc.v[F_OD + dim];
        d.k[dim] = sc.v[F_KD + dim];
        d.s[dim] = sc.v[F_SD + dim];
        d.pad[dim] = sc.v[F_PD + dim];
        d.dil[dim] = sc.v[F_DD + dim];
        /* benchdnn's opp_pad */
        d.pad_r[dim] = (d.in[dim] - 1) * d.s[dim] - d.out[dim] +
                       (d.k[dim] - 1) * (d.dil[dim] + 1) + 1 - d.pad[dim];
    }
    *desc = d;
    return 0;
}

void desc_error_format(const char *text, const desc_error *err, char *buf, size_t size)
{
    const int len = text ? (int)strlen(text) : 0;
    int col = err->column < 0 ? 0 : err->column > len ? len : err->column;
    snprintf(buf, size, "error: %s\n  %s\n  %*s^\n", err->message, text ? text : "", col, "");
}

int desc_format(const bench_desc *d, char *buf, size_t size)
{
    char pad[3][32];
    /* A negative padding can only have been inferred (the parser refuses a
     * negative number), and inferring it again from the output size gives the
     * same value: leave it out so that the string stays parseable. */
    for (int dim = 0; dim < 3; dim++) {
        if (d->pad[dim] >= 0)
            snprintf(pad[dim], sizeof pad[dim], "p%c%lld", dim_letter[dim],
                     (long long)d->pad[dim]);
        else
            pad[dim][0] = '\0';
    }
    return snprintf(buf, size,
                    "g%lldmb%lld_ic%lldid%lldih%lldiw%lld_oc%lldod%lldoh%lldow%lld_kd%lldkh%lldkw%"
                    "lld_sd%lldsh%lldsw%lld_%s%s%s_dd%llddh%llddw%lld_bias%d_layout%s%s%s",
                    (long long)d->g, (long long)d->mb, (long long)d->ic, (long long)d->in[0],
                    (long long)d->in[1], (long long)d->in[2], (long long)d->oc,
                    (long long)d->out[0], (long long)d->out[1], (long long)d->out[2],
                    (long long)d->k[0], (long long)d->k[1], (long long)d->k[2], (long long)d->s[0],
                    (long long)d->s[1], (long long)d->s[2], pad[0], pad[1], pad[2],
                    (long long)d->dil[0], (long long)d->dil[1], (long long)d->dil[2],
                    d->bias ? 1 : 0, d->layout == CONVT3D_LAYOUT_NDHWC ? "ndhwc" : "ncdhw",
                    d->name[0] ? "_n" : "", d->name);
}

int desc_equal(const bench_desc *a, const bench_desc *b)
{
    if (a->g != b->g || a->mb != b->mb || a->ic != b->ic || a->oc != b->oc ||
        a->bias != b->bias || a->layout != b->layout)
        return 0;
    for (int dim = 0; dim < 3; dim++)
        if (a->in[dim] != b->in[dim] || a->out[dim] != b->out[dim] || a->k[dim] != b->k[dim] ||
            a->s[dim] != b->s[dim] || a->pad[dim] != b->pad[dim] ||
            a->pad_r[dim] != b->pad_r[dim] || a->dil[dim] != b->dil[dim])
            return 0;
    return strcmp(a->name, b->name) == 0;
}

void desc_display_name(const bench_desc *desc, char *buf, size_t size)
{
    const char *n = desc->name;
    size_t len = strlen(n);
    if (len >= 2 && n[0] == '"' && n[len - 1] == '"') {
        n++;
        len -= 2;
    }
    snprintf(buf, size, "%.*s", (int)len, n);
}

static desc_verdict verdict(desc_verdict v, char *reason, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static desc_verdict verdict(desc_verdict v, char *reason, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (reason && size)
        vsnprintf(reason, size, fmt, ap);
    va_end(ap);
    return v;
}

desc_verdict desc_to_problem(const bench_desc *d, convt3d_problem *problem, char *reason,
                             size_t size)
{
    convt3d_problem p = CONVT3D_PROBLEM_INIT;
    if (reason && size)
        reason[0] = '\0';
    if (d->mb < 1)
        return verdict(DESC_INVALID, reason, size, "mb=%lld: the batch must be at least 1",
                       (long long)d->mb);
    if (d->ic % d->g || d->oc % d->g)
        return verdict(DESC_INVALID, reason, size, "%s=%lld is not divisible by g=%lld",
                       d->ic % d->g ? "ic" : "oc", (long long)(d->ic % d->g ? d->ic : d->oc),
                       (long long)d->g);
    p.batch = d->mb;
    p.in_channels = d->ic;
    p.out_channels = d->oc;
    p.groups = d->g;
    p.has_bias = d->bias;
    p.layout = d->layout;
    for (int dim = 0; dim < 3; dim++) {
        const char c = dim_letter[dim];
        const int64_t op = d->pad[dim] - d->pad_r[dim];
        const int64_t l = d->dil[dim] + 1;
        if (d->pad[dim] < 0)
            return verdict(DESC_NOT_EXPRESSIBLE, reason, size,
                           "padding p%c=%lld is negative (PyTorch's padding is >= 0)", c,
                           (long long)d->pad[dim]);
        if (op < 0)
            return verdict(DESC_NOT_EXPRESSIBLE, reason, size,
                           "right padding p%c_r=%lld exceeds left padding p%c=%lld: "
                           "output_padding would be %lld < 0",
                           c, (long long)d->pad_r[dim], c, (long long)d->pad[dim],
                           (long long)op);
        if (op >= d->s[dim] && op >= l)
            return verdict(DESC_NOT_EXPRESSIBLE, reason, size,
                           "output_padding[%d] (%c) = p%c - p%c_r = %lld - %lld = %lld must be "
                           "smaller than stride s%c=%lld or dilation d%c+1=%lld",
                           dim, c, c, c, (long long)d->pad[dim], (long long)d->pad_r[dim],
                           (long long)op, c, (long long)d->s[dim], c, (long long)l);
        p.in_size[dim] = d->in[dim];
        p.kernel[dim] = d->k[dim];
        p.stride[dim] = d->s[dim];
        p.padding[dim] = d->pad[dim];
        p.output_padding[dim] = op;
        p.dilation[dim] = l;
    }
    if (convt3d_validate(&p) != CONVT3D_SUCCESS)
        return verdict(DESC_INVALID, reason, size, "%s", convt3d_last_error());
    *problem = p;
    return DESC_EXPRESSIBLE;
}

void desc_from_problem(const convt3d_problem *p, const char *name, bench_desc *d)
{
    memset(d, 0, sizeof *d);
    d->g = p->groups;
    d->has_groups = 1;
    d->mb = p->batch;
    d->ic = p->in_channels;
    d->oc = p->out_channels;
    d->bias = p->has_bias ? 1 : 0;
    d->layout = p->layout;
    for (int dim = 0; dim < 3; dim++) {
        d->in[dim] = p->in_size[dim];
        d->k[dim] = p->kernel[dim];
        d->s[dim] = p->stride[dim];
        d->pad[dim] = p->padding[dim];
        d->dil[dim] = p->dilation[dim] - 1;
        d->out[dim] = (p->in_size[dim] - 1) * p->stride[dim] - 2 * p->padding[dim] +
                      p->dilation[dim] * (p->kernel[dim] - 1) + p->output_padding[dim] + 1;
        d->pad_r[dim] = p->padding[dim] - p->output_padding[dim];
    }
    if (name)
        snprintf(d->name, sizeof d->name, "%s", name);
}
