/* The CPU backend's implementations, in the order the automatic walk tries
 * them (cpu_omp.c walks them; internal.h has the contract).  Not installed. */
#ifndef CONVT3D_CPU_REGISTRY_H
#define CONVT3D_CPU_REGISTRY_H

#include "kernels.h"

typedef enum cpu_impl_kind { CPU_IMPL_NCDHW_OC, CPU_IMPL_NCDHW, CPU_IMPL_NDHWC } cpu_impl_kind;

/* One implementation: an instruction set's kernel for one layout. */
struct cpu_impl {
    const char *name; /* exact and static: what plans report and options force */
    const cpu_isa *isa;
    cpu_impl_kind kind;
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
