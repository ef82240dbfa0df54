/* The version query: the numbers come from configure via convt3d_version.h. */
#include "internal.h"

const char *convt3d_version(void) { return CONVT3D_VERSION_STRING; }

int convt3d_version_number(void)
{
    return CONVT3D_VERSION_MAJOR * 10000 + CONVT3D_VERSION_MINOR * 100 + CONVT3D_VERSION_PATCH;
}
