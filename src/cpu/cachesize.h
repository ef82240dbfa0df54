/* The data caches of one core (L1d, L2), read from the machine once per
 * process, so that the CPU plan's blocking follows the processor it runs on
 * instead of constants fitted to one.  Not installed.
 *
 * Where the sizes come from, first that answers:
 *   1. CONVT3D_CPU_L1D / CONVT3D_CPU_L2 (bytes; for tests and for checking
 *      another machine's choices), read at each call (plan time only);
 *   2. glibc's sysconf(_SC_LEVEL1_DCACHE_SIZE / _SC_LEVEL2_CACHE_SIZE);
 *   3. /sys/devices/system/cpu/cpu0/cache/index<N>/{level,type,size};
 *   4. 32 KiB and 1 MiB (the smallest L1d and the common L2 of current
 *      x86-64 server cores: an under-estimate keeps blocks resident).
 * Sizes are per cache instance as cpu0 sees it: a core's own L1d and L2 on
 * every x86-64 seen so far (with SMT, two threads share it). */
#ifndef CONVT3D_CPU_CACHESIZE_H
#define CONVT3D_CPU_CACHESIZE_H

#include <stdint.h>

#include "../internal.h"

#define CPU_CACHE_L1D_FALLBACK ((int64_t)32 << 10)
#define CPU_CACHE_L2_FALLBACK ((int64_t)1 << 20)

typedef struct cpu_cache_sizes {
    int64_t l1d, l2; /* bytes */
} cpu_cache_sizes;

/* The sizes the plan uses (the override, else the machine's, detected once;
 * thread-safe). */
CONVT3D_INTERNAL cpu_cache_sizes cpu_cache_sizes_get(void);

/* The machine's sizes without the override or the once-cache, reading the
 * sysfs tree under root (normally "/sys/devices/system/cpu/cpu0/cache");
 * use_sysconf 0 skips glibc (tests of the sysfs parser and fallback). */
CONVT3D_INTERNAL cpu_cache_sizes cpu_cache_sizes_detect(const char *root, int use_sysconf);

/* A size as sysfs writes it ("48K", "1024K", "32M") or as plain bytes
 * ("49152"); -1 when it is not one. */
CONVT3D_INTERNAL int64_t cpu_cache_parse_size(const char *text);

#endif /* CONVT3D_CPU_CACHESIZE_H */
