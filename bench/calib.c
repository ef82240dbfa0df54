/* Floors: the cache of measured ceilings and the "% of floor" figure.
 * Cache format, one device per line:
 *   <key> TAB <GFLOP/s> TAB <GB/s> TAB <unix time> [TAB <TF32> TAB <f16> TAB <bf16>]
 * (the tensor-core GFLOP/s on GPU lines; a reader that knows only the first
 * four fields still reads such a line), where key names what was measured ("cpu|<model>|threads=N",
 * "cuda|<ordinal>|<name>"), so a different machine, GPU or thread count gets
 * its own line.  The default run measures quickly (about a second) when its
 * line is missing; --calibrate measures longer.  A line keeps the best rates
 * measured for its key; delete the file to start over. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "gpu_util.h"

#define LINE_MAX_LEN 512
#define MAX_LINES 256

const char *calib_cache_path(void)
{
    static char path[1024];
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path, sizeof path, "%s/convt3d/calibration", xdg);
    else if (home && *home)
        snprintf(path, sizeof path, "%s/.cache/convt3d/calibration", home);
    else
        snprintf(path, sizeof path, ".convt3d-calibration");
    return path;
}

/* mkdir -p of the directory part of path. */
static void make_parent_dirs(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    mkdir(dir, 0755);
}

static int cache_lookup(const char *key, floor_rates *out)
{
    FILE *f = fopen(calib_cache_path(), "r");
    if (!f)
        return -1;
    char line[LINE_MAX_LEN];
    int found = -1;
    const size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 || line[klen] != '\t')
            continue;
        double gf = 0, bw = 0, tf32 = 0, f16 = 0, bf16 = 0;
        long long when = 0;
        const int fields = sscanf(line + klen + 1, "%lf\t%lf\t%lld\t%lf\t%lf\t%lf", &gf, &bw,
                                  &when, &tf32, &f16, &bf16);
        if (fields >= 3 && gf > 0 && bw > 0) {
            out->gflops = gf;
            out->gbps = bw;
            out->valid = 1;
            out->tc_valid = fields == 6 && tf32 > 0 && f16 > 0 && bf16 > 0;
            out->tf32_gflops = out->tc_valid ? tf32 : 0;
            out->f16_gflops = out->tc_valid ? f16 : 0;
            out->bf16_gflops = out->tc_valid ? bf16 : 0;
            const time_t t = (time_t)when;
            struct tm tm;
            char stamp[32] = "?";
            if (localtime_r(&t, &tm))
                strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M", &tm);
            snprintf(out->source, sizeof out->source, "cached %s", stamp);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* Replaces key's line (or appends it), through a temporary file and rename. */
static int cache_store(const char *key, const floor_rates *r)
{
    const char *path = calib_cache_path();
    static char lines[MAX_LINES][LINE_MAX_LEN];
    int n = 0;
    const size_t klen = strlen(key);
    FILE *f = fopen(path, "r");
    if (f) {
        while (n < MAX_LINES - 1 && fgets(lines[n], LINE_MAX_LEN, f))
            if (!(strncmp(lines[n], key, klen) == 0 && lines[n][klen] == '\t'))
                n++;
        fclose(f);
    }
    if (r->tc_valid)
        snprintf(lines[n++], LINE_MAX_LEN, "%s\t%.3f\t%.3f\t%lld\t%.3f\t%.3f\t%.3f\n", key,
                 r->gflops, r->gbps, (long long)time(NULL), r->tf32_gflops, r->f16_gflops,
                 r->bf16_gflops);
    else
        snprintf(lines[n++], LINE_MAX_LEN, "%s\t%.3f\t%.3f\t%lld\n", key, r->gflops, r->gbps,
                 (long long)time(NULL));
    make_parent_dirs(path);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    f = fopen(tmp, "w");
    if (!f)
        return -1;
    if (n > 0 && lines[0][0] != '#')
        fputs("# convt3d-bench calibration: key, fp32 GFLOP/s, copy GB/s, unix time[, TF32, "
              "f16, bf16 tensor-core GFLOP/s]\n",
              f);
    for (int i = 0; i < n; i++)
        fputs(lines[i], f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

void calib_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, size, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
    /* the key is tab-separated */
    for (char *p = buf; *p; p++)
        if (*p == '\t' || *p == '|')
            *p = ' ';
}

/* Whether /proc/cpuinfo's flags line names `flag` (Linux; 0 elsewhere). */
static int cpu_has_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    static char line[8192];
    int found = 0;
    const size_t n = strlen(flag);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        for (const char *p = strstr(line, flag); p && !found; p = strstr(p + 1, flag))
            found = (p == line || p[-1] == ' ' || p[-1] == '\t') &&
                    (p[n] == ' ' || p[n] == '\n' || p[n] == '\0');
        break; /* the first CPU's flags speak for all */
    }
    fclose(f);
    return found;
}

static unsigned cpu_half_dot_bits(void)
{
    return (cpu_has_flag("avx512_bf16") || cpu_has_flag("amx_bf16") ? 1u : 0u) |
           (cpu_has_flag("avx512_fp16") || cpu_has_flag("amx_fp16") ? 2u : 0u);
}

static void announce(const char *key, calib_mode mode)
{
    fprintf(stderr, "convt3d-bench: measuring the floors of %s (%s), cached in %s\n", key,
            mode == CALIB_FORCE ? "--calibrate" : "not in the cache yet; about a second",
            calib_cache_path());
}

/* Keeps the better of two measurements of one rate. */
static double keep_best(double now, double cached, int *kept)
{
    if (cached > now) {
        *kept = 1;
        return cached;
    }
    return now;
}

/* m: what was measured now (its tensor-core rates if m->tc_valid). */
static int finish(const char *key, const floor_rates *m, floor_rates *out)
{
    /* Noise (other processes, clocks not yet up) only ever lowers a measured
     * ceiling: keep the best one seen for this key. */
    floor_rates old;
    memset(&old, 0, sizeof old);
    int kept = 0;
    const int have_old = cache_lookup(key, &old) == 0;
    out->gflops = keep_best(m->gflops, have_old ? old.gflops : 0, &kept);
    out->gbps = keep_best(m->gbps, have_old ? old.gbps : 0, &kept);
    out->tc_valid = m->tc_valid || (have_old && old.tc_valid);
    if (out->tc_valid) {
        out->tf32_gflops = keep_best(m->tf32_gflops, old.tf32_gflops, &kept);
        out->f16_gflops = keep_best(m->f16_gflops, old.f16_gflops, &kept);
        out->bf16_gflops = keep_best(m->bf16_gflops, old.bf16_gflops, &kept);
    }
    out->valid = 1;
    if (cache_store(key, out))
        snprintf(out->source, sizeof out->source, "measured now (could not write %s: %s)",
                 calib_cache_path(), strerror(errno));
    else
        snprintf(out->source, sizeof out->source, "%s",
                 kept ? "measured now, higher cached rate kept" : "measured now");
    return 0;
}

static int cache_only_miss(const floor_rates *out, char *err, size_t err_size)
{
    snprintf(err, err_size, "no calibration for \"%s\" in %s (run convt3d-bench --calibrate)",
             out->key, calib_cache_path());
    return -1;
}

int calib_cpu(int threads, calib_mode mode, floor_rates *out, char *err, size_t err_size)
{
    char model[256], isa[32];
    memset(out, 0, sizeof *out);
    calib_cpu_model(model, sizeof model);
    snprintf(out->key, sizeof out->key, "cpu|%s|threads=%d", model, threads);
    out->cpu_half_dot = cpu_half_dot_bits();
    if (mode != CALIB_FORCE && cache_lookup(out->key, out) == 0)
        return 0;
    if (mode == CALIB_CACHE_ONLY)
        return cache_only_miss(out, err, err_size);
    floor_rates m;
    memset(&m, 0, sizeof m);
    announce(out->key, mode);
    if (calib_measure_cpu(threads, mode != CALIB_FORCE, &m.gflops, &m.gbps, isa, sizeof isa)) {
        snprintf(err, err_size, "the CPU calibration measured nothing");
        return -1;
    }
    return finish(out->key, &m, out);
}

int calib_cuda(int ordinal, calib_mode mode, floor_rates *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
#if CONVT3D_HAVE_CUDA
    char name[256];
    size_t l2 = 0;
    if (gpu_device_info(ordinal, name, sizeof name, &l2, err, err_size))
        return -1;
    for (char *p = name; *p; p++)
        if (*p == '\t' || *p == '|')
            *p = ' ';
    snprintf(out->key, sizeof out->key, "cuda|%d|%s", ordinal, name);
    out->has_tc = 1;
    /* a line of an older bench has no tensor-core rates: measure them too */
    if (mode != CALIB_FORCE && cache_lookup(out->key, out) == 0 &&
        (out->tc_valid || mode == CALIB_CACHE_ONLY))
        return 0;
    if (mode == CALIB_CACHE_ONLY)
        return cache_only_miss(out, err, err_size);
    floor_rates m;
    memset(&m, 0, sizeof m);
    announce(out->key, mode);
    const int quick = mode != CALIB_FORCE;
    if (calib_measure_cuda(ordinal, quick, &m.gflops, &m.gbps, name, sizeof name, err, err_size))
        return -1;
    char tc_err[256] = "";
    m.tc_valid = calib_measure_cuda_tc(ordinal, quick, &m.tf32_gflops, &m.f16_gflops,
                                       &m.bf16_gflops, tc_err, sizeof tc_err) == 0;
    if (!m.tc_valid)
        fprintf(stderr, "convt3d-bench: cuda:%d: no tensor-core ceilings: %s\n", ordinal, tc_err);
    const int rc = finish(out->key, &m, out);
    out->has_tc = 1;
    return rc;
#else
    (void)ordinal, (void)mode;
    snprintf(err, err_size, "this convt3d-bench was built without CUDA");
    return -1;
#endif
}

double calib_compute_gflops(const floor_rates *f, bench_prec prec)
{
    if (!f || !f->valid)
        return 0;
    if (!f->has_tc) {
        if ((prec == PREC_BF16 && (f->cpu_half_dot & 1u)) ||
            (prec == PREC_F16 && (f->cpu_half_dot & 2u)))
            return 0;
        return f->gflops;
    }
    if (prec == PREC_FP32)
        return f->gflops;
    if (!f->tc_valid)
        return 0;
    switch (prec) {
    case PREC_TF32: return f->tf32_gflops;
    case PREC_3XTF32: return f->tf32_gflops / 3;
    case PREC_F16: return f->f16_gflops;
    case PREC_BF16: return f->bf16_gflops;
    default: return 0;
    }
}

double calib_floor_pct(const floor_rates *f, bench_prec prec, double flops, double bytes,
                       double seconds)
{
    const double peak = calib_compute_gflops(f, prec);
    if (peak <= 0 || seconds <= 0)
        return -1;
    const double t_compute = flops / (peak * 1e9), t_memory = bytes / (f->gbps * 1e9);
    return 100.0 * (t_compute > t_memory ? t_compute : t_memory) / seconds;
}
