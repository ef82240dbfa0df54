/* The environment overrides (env.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

namespace ct3d {

static const char *env_value(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : nullptr;
}

cuda_overrides overrides_from_env(void)
{
    cuda_overrides o;
    o.kernel = env_value("CONVT3D_CUDA_KERNEL");
    o.tile = env_value("CONVT3D_CUDA_TILE");
    o.igemm = env_value("CONVT3D_CUDA_IGEMM");
    o.fewout = env_value("CONVT3D_CUDA_FEWOUT");
    o.tcwin = env_value("CONVT3D_CUDA_TCWIN");
    return o;
}

bool parse_tile(const char *text, int v[9])
{
    if (!text || !*text)
        return false;
    v[5] = 1;
    v[6] = 1;
    v[7] = 1;
    v[8] = 1;
    const int n = sscanf(text, "%d,%d,%d,%d,%d,%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7], &v[8]);
    return n >= 5 && v[0] > 0 && v[1] > 0 && v[2] > 0 && v[3] > 0 && v[4] > 0 && v[5] > 0 &&
           v[6] >= 0 && v[7] >= 0 && v[8] >= 0;
}

bool parse_igemm(const char *text, int v[3])
{
    if (!text || !*text)
        return false;
    v[2] = 0;
    const int n = sscanf(text, "%d,%d,%d", &v[0], &v[1], &v[2]);
    return n >= 2 && v[0] > 0 && v[1] > 0 && v[2] >= 0;
}

bool parse_fewout(const char *text, int *cs)
{
    if (!text || !*text)
        return false;
    int v;
    char tail;
    if (sscanf(text, "%d%c", &v, &tail) != 1)
        return false;
    if (v != 1 && v != 2 && v != 4 && v != 8)
        return false;
    *cs = v;
    return true;
}

bool parse_tcwin(const char *text, int *vec, int *round)
{
    int v, r = -1;
    char tail;
    if (!text)
        return false;
    const int got = sscanf(text, "%d,%d%c", &v, &r, &tail);
    if (got == 1 ? strcmp(text, "0") != 0 && strcmp(text, "1") != 0
                 : got != 2 || v < -1 || v > 1 || (r != 0 && r != 1))
        return false;
    *vec = v;
    if (got == 2)
        *round = r;
    return true;
}

} // namespace ct3d
