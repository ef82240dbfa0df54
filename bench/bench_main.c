/* convt3d-bench: placeholder until the benchmark driver lands. */
#include <stdio.h>

#include <convt3d.h>

int main(void)
{
    printf("convt3d-bench %s: the benchmark driver is not written yet\n", convt3d_version());
    return 0;
}
