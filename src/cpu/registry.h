/* The CPU backend's implementations, in the order the automatic walk tries
 * them (cpu_omp.c walks them; internal.h has the contract).  Not installed. */
#ifndef CONVT3D_CPU_REGISTRY_H
#define CONVT3D_CPU_REGISTRY_H

#include "kernels.h"

/* A kind of kernel that every instruction set may build (the W-lane NCDHW
 * tile, the output-channel NCDHW tile, the NDHWC tile): what it asks of a
 * problem beyond its layout and its ISA, its cost rule, and how it tells
 * its tiling.  A new kind of kernel is one more of these (registry.c). */
typedef struct cpu_family {
    convt3d_layout layout;
    /* the ISA's kernel of this kind */
    const cpu_kernel *(*kernel)(const cpu_isa *isa);
    /* hard conditions beyond layout and ISA support (NULL: none); pure,
     * 0 with the reason in why when not met */
    int (*applicable)(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size);
    /* the automatic walk's cost rule (NULL: never passed over); 1 with the
     * reason in why when it passes the entry over */
    int (*passed_over)(const cpu_impl *im, const convt3d_shape *s, char *why, size_t why_size);
    /* the tiling in words; returns snprintf's count */
    int (*describe)(const cpu_plan *pl, char *out, size_t size);
} cpu_family;

/* One implementation: an instruction set's kernel of one kind. */
struct cpu_impl {
    const char *name; /* exact and static: what plans report and options force */
    const cpu_isa *isa;
    const cpu_family *family;
};

CONVT3D_INTERNAL int cpu_impl_count(void);
/* Entry index in walk order, or NULL when out of range. */
CONVT3D_INTERNAL const cpu_impl *cpu_impl_at(int index);
/* The entry named exactly name, or NULL. */
CONVT3D_INTERNAL const cpu_impl *cpu_impl_named(const char *name);

/* Whether im can run s at all: its layout, the CPU's support for its
 * instruction set, and its kernel's hard conditions.  Pure; 0 with the
 * reason in why when not. */
CONVT3D_INTERNAL int cpu_impl_applicable(const cpu_impl *im, const convt3d_shape *s, char *why,
                                         size_t why_size);
/* Whether the automatic walk passes over an applicable im: the
 * CONVT3D_CPU_ISA and CONVT3D_CPU_LANES overrides, then im's cost rule.
 * 1 with the reason in why when it does.  Never asked of a forced entry. */
CONVT3D_INTERNAL int cpu_impl_passed_over(const cpu_impl *im, const convt3d_shape *s, char *why,
                                          size_t why_size);
/* im's row kernel and planning. */
CONVT3D_INTERNAL const cpu_kernel *cpu_impl_kernel(const cpu_impl *im);
/* A one-line account of a plan's tiling, for CONVT3D_VERBOSE. */
CONVT3D_INTERNAL void cpu_impl_describe(const cpu_plan *pl, char *out, size_t size);

#endif /* CONVT3D_CPU_REGISTRY_H */
