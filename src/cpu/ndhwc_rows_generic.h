/* The portable NDHWC kernels over whole rows (cpu_kernel.all_groups), for
 * cpu/phase_generic.c's table.  Not installed. */
#ifndef CONVT3D_CPU_NDHWC_ROWS_GENERIC_H
#define CONVT3D_CPU_NDHWC_ROWS_GENERIC_H

#include "kernels.h"

/* Lanes the registry's grouped-lanes rule assumes for these kernels: they
 * have no vectors of their own, so the widest the other sets use. */
#define CPU_GENERIC_GROUP_LANES 16

CONVT3D_INTERNAL void cpu_row_ndhwc_dw_generic(const cpu_plan *pl, const cpu_row_job *job);
CONVT3D_INTERNAL void cpu_row_ndhwc_gl_generic(const cpu_plan *pl, const cpu_row_job *job);
CONVT3D_INTERNAL void cpu_plan_ndhwc_rows_generic(cpu_plan *pl);

#endif /* CONVT3D_CPU_NDHWC_ROWS_GENERIC_H */
