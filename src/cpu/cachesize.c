/* Cache sizes of one core (cachesize.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachesize.h"

int64_t cpu_cache_parse_size(const char *text)
{
    if (!text)
        return -1;
    while (*text == ' ' || *text == '\t')
        text++;
    if (*text < '0' || *text > '9')
        return -1;
    errno = 0;
    char *end;
    const unsigned long long n = strtoull(text, &end, 10);
    if (errno || n > ((unsigned long long)1 << 40))
        return -1;
    int64_t scale = 1;
    if (*end == 'K' || *end == 'k')
        scale = (int64_t)1 << 10, end++;
    else if (*end == 'M' || *end == 'm')
        scale = (int64_t)1 << 20, end++;
    else if (*end == 'G' || *end == 'g')
        scale = (int64_t)1 << 30, end++;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    if (*end || n == 0)
        return -1;
    return (int64_t)n * scale;
}

/* The first line of root/index<i>/name, without its newline. */
static int read_field(const char *root, int i, const char *name, char *out, size_t size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/index%d/%s", root, i, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    const int ok = fgets(out, (int)size, f) != NULL;
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
    return ok;
}

/* The size of the level-`level` cache holding data (type Data or Unified)
 * among root/index0..15, or -1. */
static int64_t sysfs_size(const char *root, int level)
{
    for (int i = 0; i < 16; i++) {
        char lv[32], type[32], size[32];
        if (!read_field(root, i, "level", lv, sizeof lv))
            continue;
        if (atoi(lv) != level || !read_field(root, i, "type", type, sizeof type) ||
            (strcmp(type, "Data") != 0 && strcmp(type, "Unified") != 0) ||
            !read_field(root, i, "size", size, sizeof size))
            continue;
        return cpu_cache_parse_size(size);
    }
    return -1;
}

static int64_t sysconf_size(int name)
{
    const long v = sysconf(name);
    return v > 0 ? (int64_t)v : -1;
}

cpu_cache_sizes cpu_cache_sizes_detect(const char *root, int use_sysconf)
{
    cpu_cache_sizes c = {-1, -1};
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    if (use_sysconf) {
        c.l1d = sysconf_size(_SC_LEVEL1_DCACHE_SIZE);
        c.l2 = sysconf_size(_SC_LEVEL2_CACHE_SIZE);
    }
#else
    (void)use_sysconf;
#endif
    if (c.l1d <= 0)
        c.l1d = sysfs_size(root, 1);
    if (c.l2 <= 0)
        c.l2 = sysfs_size(root, 2);
    if (c.l1d <= 0)
        c.l1d = CPU_CACHE_L1D_FALLBACK;
    if (c.l2 <= 0)
        c.l2 = CPU_CACHE_L2_FALLBACK;
    return c;
}

/* Detected once; racing first callers compute and store the same values. */
static cpu_cache_sizes machine_sizes(void)
{
    static int64_t l1d, l2;
    static int ready;
    cpu_cache_sizes c;
    if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
        c.l1d = __atomic_load_n(&l1d, __ATOMIC_RELAXED);
        c.l2 = __atomic_load_n(&l2, __ATOMIC_RELAXED);
        return c;
    }
    c = cpu_cache_sizes_detect("/sys/devices/system/cpu/cpu0/cache", 1);
    __atomic_store_n(&l1d, c.l1d, __ATOMIC_RELAXED);
    __atomic_store_n(&l2, c.l2, __ATOMIC_RELAXED);
    __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    return c;
}

cpu_cache_sizes cpu_cache_sizes_get(void)
{
    cpu_cache_sizes c = machine_sizes();
    const int64_t l1d = cpu_cache_parse_size(getenv("CONVT3D_CPU_L1D"));
    const int64_t l2 = cpu_cache_parse_size(getenv("CONVT3D_CPU_L2"));
    if (l1d > 0)
        c.l1d = l1d;
    if (l2 > 0)
        c.l2 = l2;
    return c;
}
