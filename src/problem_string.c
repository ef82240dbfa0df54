/* convt3d_problem_to_string(): placeholder until the shared printer lands. */
#include <stdio.h>

#include "internal.h"

int convt3d_problem_to_string(const convt3d_problem *problem, char *buf, size_t size)
{
    if (!problem)
        return -1;
    return snprintf(buf, size, "mb%lldic%lldoc%lld", (long long)problem->batch,
                    (long long)problem->in_channels, (long long)problem->out_channels);
}
