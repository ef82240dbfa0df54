/* Gathering the problems of a run. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "descriptor.h"
#include "random_problems.h"
#include "suite.h"

static bench_case *push(case_list *cl)
{
    if (cl->n == cl->cap) {
        const size_t cap = cl->cap ? 2 * cl->cap : 16;
        bench_case *v = realloc(cl->v, cap * sizeof *v);
        if (!v)
            return NULL;
        cl->v = v;
        cl->cap = cap;
    }
    bench_case *c = &cl->v[cl->n++];
    memset(c, 0, sizeof *c);
    return c;
}

void cases_free(case_list *cl)
{
    free(cl->v);
    memset(cl, 0, sizeof *cl);
}

static void triple(char *buf, size_t size, const int64_t v[3])
{
    if (v[0] == v[1] && v[1] == v[2])
        snprintf(buf, size, "%lld", (long long)v[0]);
    else
        snprintf(buf, size, "(%lld,%lld,%lld)", (long long)v[0], (long long)v[1],
                 (long long)v[2]);
}

void problem_pytorch_string(const convt3d_problem *p, char *buf, size_t size)
{
    char k[48], s[48], pd[48], op[48], l[48];
    triple(k, sizeof k, p->kernel);
    triple(s, sizeof s, p->stride);
    triple(pd, sizeof pd, p->padding);
    triple(op, sizeof op, p->output_padding);
    triple(l, sizeof l, p->dilation);
    snprintf(buf, size,
             "ConvTranspose3d(%lld, %lld, k=%s, s=%s, p=%s, op=%s, g=%lld, d=%s, bias=%s) "
             "x=(%lld,%lld,%lld,%lld,%lld) %s",
             (long long)p->in_channels, (long long)p->out_channels, k, s, pd, op,
             (long long)p->groups, l, p->has_bias ? "True" : "False", (long long)p->batch,
             (long long)p->in_channels, (long long)p->in_size[0], (long long)p->in_size[1],
             (long long)p->in_size[2], p->layout == CONVT3D_LAYOUT_NDHWC ? "ndhwc" : "ncdhw");
}

/* Applies --layout and --bias, then fills the canonical and PyTorch strings. */
static void finish_problem(bench_case *c, const bench_options *o, const char *name)
{
    if (o->layout >= 0)
        c->problem.layout = (convt3d_layout)o->layout;
    if (o->bias >= 0)
        c->problem.has_bias = o->bias;
    bench_desc d;
    desc_from_problem(&c->problem, name, &d);
    desc_format(&d, c->canonical, sizeof c->canonical);
    problem_pytorch_string(&c->problem, c->pytorch, sizeof c->pytorch);
}

static int add_suite(const bench_options *o, case_list *cl, const char *name)
{
    for (size_t i = 0; i < suite_count(); i++) {
        const suite_shape *sh = suite_at(i);
        if (strcmp(name, "all") != 0 && strcmp(name, sh->name) != 0)
            continue;
        bench_case *c = push(cl);
        if (!c)
            return -1;
        snprintf(c->label, sizeof c->label, "%s", sh->name);
        snprintf(c->origin, sizeof c->origin, "suite");
        c->problem = sh->problem;
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", sh->name);
        finish_problem(c, o, quoted);
        if (strcmp(name, "all") != 0)
            return 0;
    }
    if (strcmp(name, "all") == 0)
        return 0;
    fprintf(stderr, "convt3d-bench: --suite=%s: no such shape; the suite has", name);
    for (size_t i = 0; i < suite_count(); i++)
        fprintf(stderr, " %s", suite_at(i)->name);
    fprintf(stderr, " (or \"all\")\n");
    return -1;
}

/* "mb1_ic128oc64_56x56x40_k2s2": a readable label for a nameless problem. */
static void short_label(const bench_desc *d, char *buf, size_t size)
{
    char sp[64], k[48], st[48];
    const int64_t *v[3] = {d->in, d->k, d->s};
    char *out[3] = {sp, k, st};
    const size_t cap[3] = {sizeof sp, sizeof k, sizeof st};
    for (int j = 0; j < 3; j++) {
        if (v[j][0] == v[j][1] && v[j][1] == v[j][2])
            snprintf(out[j], cap[j], "%lld", (long long)v[j][0]);
        else
            snprintf(out[j], cap[j], "%lldx%lldx%lld", (long long)v[j][0], (long long)v[j][1],
                     (long long)v[j][2]);
    }
    char groups[32] = "";
    if (d->g > 1)
        snprintf(groups, sizeof groups, "g%lld_", (long long)d->g);
    char whole[320];
    snprintf(whole, sizeof whole, "%smb%lld_ic%lldoc%lld_%s_k%ss%s", groups, (long long)d->mb,
             (long long)d->ic, (long long)d->oc, sp, k, st);
    const size_t len = strlen(whole) < size - 1 ? strlen(whole) : size - 1;
    memcpy(buf, whole, len);
    buf[len] = '\0';
}

static int add_descriptor(const bench_options *o, case_list *cl, const char *text,
                          const char *origin, const char *klass)
{
    bench_case *c = push(cl);
    if (!c)
        return -1;
    snprintf(c->klass, sizeof c->klass, "%s", klass);
    snprintf(c->text, sizeof c->text, "%s", text);
    snprintf(c->origin, sizeof c->origin, "%s", origin);
    bench_desc d;
    desc_error err;
    if (desc_parse(text, &d, &err)) {
        char msg[1200];
        desc_error_format(text, &err, msg, sizeof msg);
        fprintf(stderr, "convt3d-bench: %s: malformed descriptor\n%s", origin, msg);
        c->kind = CASE_MALFORMED;
        snprintf(c->reason, sizeof c->reason, "malformed descriptor: %s (column %d)",
                 err.message, err.column + 1);
        snprintf(c->label, sizeof c->label, "%s", text);
        return 0;
    }
    desc_display_name(&d, c->label, sizeof c->label);
    if (!c->label[0])
        snprintf(c->label, sizeof c->label, "%s", text);
    if (strlen(c->label) > 40 || strpbrk(c->label, "*&"))
        short_label(&d, c->label, sizeof c->label); /* hashes and long texts */
    desc_format(&d, c->canonical, sizeof c->canonical);
    char reason[600];
    const desc_verdict v = desc_to_problem(&d, &c->problem, reason, sizeof reason);
    if (v != DESC_EXPRESSIBLE) {
        c->kind = v == DESC_NOT_EXPRESSIBLE ? CASE_NOT_EXPRESSIBLE : CASE_INVALID;
        snprintf(c->reason, sizeof c->reason, "%s: %s",
                 v == DESC_NOT_EXPRESSIBLE ? "not expressible" : "invalid problem", reason);
        return 0;
    }
    /* has_bias and layout come from the descriptor (default: with bias, as
     * benchdnn's default direction FWD_B, and NCDHW). */
    finish_problem(c, o, d.name);
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* The value of a "# WORD: value" directive line, or NULL. */
static char *directive(char *line, const char *word)
{
    if (*line != '#')
        return NULL;
    line++;
    while (*line == ' ' || *line == '\t')
        line++;
    const size_t n = strlen(word);
    if (strncmp(line, word, n) != 0 || line[n] != ':')
        return NULL;
    return trim(line + n + 1);
}

/* path2 as written in the file at path: relative to that file's folder. */
static void relative_to(const char *path, const char *path2, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (path2[0] == '/' || !slash)
        snprintf(buf, size, "%s", path2);
    else
        snprintf(buf, size, "%.*s/%s", (int)(slash - path), path, path2);
}

enum { MAX_INCLUDE_DEPTH = 4 };

static int add_batch_file(const bench_options *o, case_list *cl, const char *path,
                          const char *klass, int depth);

/* One line of a batch file: a directive, a comment, or descriptors. */
static int batch_line(const bench_options *o, case_list *cl, const char *path, int lineno,
                      char *s, char *klass, size_t klass_size, int depth)
{
    char origin[160];
    const char *v;
    if ((v = directive(s, "class"))) {
        snprintf(klass, klass_size, "%s", v);
        return 0;
    }
    if ((v = directive(s, "include"))) {
        char inc[1024];
        relative_to(path, v, inc, sizeof inc);
        if (depth >= MAX_INCLUDE_DEPTH) {
            fprintf(stderr, "convt3d-bench: %s:%d: includes nested deeper than %d\n", path,
                    lineno, MAX_INCLUDE_DEPTH);
            return -1;
        }
        return add_batch_file(o, cl, inc, klass, depth + 1);
    }
    if (!*s || *s == '#' || strncmp(s, "--", 2) == 0)
        return 0;
    /* Several descriptors may share a line; benchdnn options among them
     * (--dir=..., --dt=...) are not ours and are skipped. */
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(s, " \t", &save); tok && rc == 0;
         tok = strtok_r(NULL, " \t", &save)) {
        if (strncmp(tok, "--", 2) == 0)
            continue;
        snprintf(origin, sizeof origin, "%s:%d", path, lineno);
        rc = add_descriptor(o, cl, tok, origin, klass);
    }
    return rc;
}

/* A file starts in the class in force where it is included ("" for a
 * --batch file); a class it sets lasts to its end only. */
static int add_batch_file(const bench_options *o, case_list *cl, const char *path,
                          const char *klass, int depth)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        fprintf(stderr, "convt3d-bench: --batch: cannot read %s\n", path);
        return -1;
    }
    char own[48], line[8192];
    snprintf(own, sizeof own, "%s", klass);
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        rc = batch_line(o, cl, path, lineno, trim(line), own, sizeof own, depth);
    }
    fclose(f);
    return rc;
}

static int add_batch(const bench_options *o, case_list *cl, const char *path)
{
    return add_batch_file(o, cl, path, "", 0);
}

/* --random=N: problems 0..N-1 of --seed, class "random". */
static int add_random(const bench_options *o, case_list *cl)
{
    for (int i = 0; i < o->random_n; i++) {
        bench_case *c = push(cl);
        if (!c)
            return -1;
        snprintf(c->label, sizeof c->label, "random_%d", i);
        snprintf(c->origin, sizeof c->origin, "--random, seed %llu, problem %d",
                 (unsigned long long)o->seed, i);
        snprintf(c->klass, sizeof c->klass, "random");
        random_problems_draw(o->seed, (uint64_t)i, &c->problem);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"random_%d\"", i);
        finish_problem(c, o, quoted);
    }
    return 0;
}

int cases_build(const bench_options *o, case_list *cl)
{
    memset(cl, 0, sizeof *cl);
    const int any = o->n_suites || o->n_batches || o->n_descs || o->have_shape || o->random_n;
    if (!any && add_suite(o, cl, "all"))
        return -1;
    for (int i = 0; i < o->n_suites; i++)
        if (add_suite(o, cl, o->suites[i]))
            return -1;
    if (o->have_shape) {
        bench_case *c = push(cl);
        if (!c)
            return -1;
        snprintf(c->label, sizeof c->label, "flags");
        snprintf(c->origin, sizeof c->origin, "shape flags");
        c->problem = o->shape;
        finish_problem(c, o, "\"flags\"");
        if (convt3d_validate(&c->problem) != CONVT3D_SUCCESS) {
            c->kind = CASE_INVALID;
            snprintf(c->reason, sizeof c->reason, "invalid problem: %s", convt3d_last_error());
        }
    }
    char origin[64];
    for (int i = 0; i < o->n_descs; i++) {
        snprintf(origin, sizeof origin, "argument %d", i + 1);
        if (add_descriptor(o, cl, o->descs[i], origin, ""))
            return -1;
    }
    for (int i = 0; i < o->n_batches; i++)
        if (add_batch(o, cl, o->batches[i]))
            return -1;
    return add_random(o, cl);
}
