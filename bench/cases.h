/* The list of problems a run measures, gathered from the command line: the
 * suite, descriptors (arguments and --batch files) and the shape flags.
 * Descriptors that do not parse, are invalid, or cannot be expressed in
 * PyTorch's terms stay in the list with the reason, so that the report
 * accounts for every input. */
#ifndef CONVT3D_BENCH_CASES_H
#define CONVT3D_BENCH_CASES_H

#include <stddef.h>

#include "cli.h"
#include "convt3d.h"

typedef enum case_kind {
    CASE_RUN = 0,         /* a valid problem */
    CASE_NOT_EXPRESSIBLE, /* well-formed, outside PyTorch's contract: reported, not an error */
    CASE_INVALID,         /* well-formed but not a valid problem: an error */
    CASE_MALFORMED        /* does not parse: an error */
} case_kind;

typedef struct bench_case {
    char label[96];      /* suite name, descriptor name, the descriptor itself, or "flags" */
    char klass[48];      /* "# class: NAME" of a --batch file, "random", or "" */
    char origin[160];    /* "suite", "argument 3", "shapes.txt:12", "flags" */
    char text[1024];     /* the descriptor as given ("" for suite and flags) */
    char canonical[640]; /* a canonical descriptor that reproduces the problem */
    char pytorch[256];   /* the problem in PyTorch's words */
    convt3d_problem problem;
    case_kind kind;
    char reason[1400];   /* for all kinds but CASE_RUN */
} bench_case;

typedef struct case_list {
    bench_case *v;
    size_t n, cap;
} case_list;

/* Gathers every problem; -1 (message printed) when a file cannot be read or
 * a suite name is unknown.  Malformed descriptors are printed (with a caret
 * under the offending character) as they are read. */
int cases_build(const bench_options *o, case_list *cl);
void cases_free(case_list *cl);

/* "ConvTranspose3d(32, 32, k=(3,5,7), s=2, p=(1,2,3), op=1, g=4, bias=False) x=(8,32,12,24,48)" */
void problem_pytorch_string(const convt3d_problem *p, char *buf, size_t size);

#endif
