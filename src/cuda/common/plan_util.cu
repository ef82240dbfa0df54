/* The planners' shared pieces (plan_util.h). */
#include <stdio.h>

#include "plan_util.h"

namespace ct3d {

bool int_indexable(const convt3d_shape *s, char *why, size_t why_size)
{
    const long long lim = CONVT3D_INT_INDEX_LIMIT;
    for (int d = 0; d < 3; d++)
        if (s->in[d] >= lim || s->out[d] >= lim || s->k[d] >= lim || s->s[d] >= lim ||
            s->p[d] >= lim || s->l[d] >= lim) {
            snprintf(why, why_size, "a size in dim %d is too large for int indexing", d);
            return false;
        }
    if (s->cin >= lim || s->cout >= lim) {
        snprintf(why, why_size, "channel counts too large for int indexing");
        return false;
    }
    return true;
}

phase_entry phase_entry_of(const convt3d_shape *s, int d, long long r)
{
    const convt3d_phase ph = convt3d_phase_of(s, d, r);
    phase_entry e;
    e.taps = (int)ph.taps;
    e.k0 = ph.first_tap >= 0 ? (int)ph.first_tap : 0;
    e.m0 = (int)ph.m0;
    e.qlo = (int)ph.qlo;
    e.qcount = (int)ph.qcount;
    return e;
}

} // namespace ct3d
