/* The automatic plan's description for --all-kernels' JSON.  The public API
 * names a plan's kernel but not its tiling; CONVT3D_VERBOSE=1 prints that
 * line on stderr while the plan is made.  So the plan is made once more with
 * the variable set and stderr sent to a temporary file, and the line is
 * picked out: "convt3d: cpu: NAME: DESC" or "convt3d: cuda:N DESC" (the walk's
 * "passed over" / "does not apply" lines have neither form). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* The description in one line of the verbose output, or NULL. */
static const char *desc_in(const char *line, const char *kernel)
{
    static const char cpu[] = "convt3d: cpu: ", cuda[] = "convt3d: cuda:";
    if (strncmp(line, cpu, sizeof cpu - 1) == 0) {
        const char *p = line + sizeof cpu - 1;
        const size_t k = strlen(kernel);
        return strncmp(p, kernel, k) == 0 && p[k] == ':' && p[k + 1] == ' ' ? p + k + 2 : NULL;
    }
    if (strncmp(line, cuda, sizeof cuda - 1) == 0 && isdigit((unsigned char)line[sizeof cuda - 1])) {
        const char *p = strchr(line, ' ');
        p = p ? strchr(p + 1, ' ') : NULL; /* after "convt3d:" and "cuda:N" */
        return p ? p + 1 : NULL;
    }
    return NULL;
}

/* The automatic plan made with stderr in tmp; its kernel name, or NULL. */
static const char *plan_verbosely(const bench_problem *bp, convt3d_device dev,
                                  const bench_settings *s, FILE *tmp)
{
    const char *old = getenv("CONVT3D_VERBOSE");
    char *saved = old ? strdup(old) : NULL;
    fflush(stderr);
    const int fd = dup(fileno(stderr));
    if (fd < 0 || dup2(fileno(tmp), fileno(stderr)) < 0) {
        if (fd >= 0)
            close(fd);
        free(saved);
        return NULL;
    }
    setenv("CONVT3D_VERBOSE", "1", 1);
    bench_settings auto_s = *s;
    auto_s.impl = NULL;
    convt3d_plan *plan = NULL;
    const char *name = NULL;
    if (bench_plan_create(&plan, bp, dev, &auto_s) == CONVT3D_SUCCESS) {
        name = convt3d_plan_kernel_name(plan); /* static storage */
        convt3d_plan_destroy(plan);
    }
    fflush(stderr);
    dup2(fd, fileno(stderr));
    close(fd);
    if (saved)
        setenv("CONVT3D_VERBOSE", saved, 1);
    else
        unsetenv("CONVT3D_VERBOSE");
    free(saved);
    return name;
}

void automatic_plan_description(const bench_problem *bp, convt3d_device dev,
                                const bench_settings *s, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *tmp = tmpfile();
    if (!tmp)
        return;
    const char *kernel = plan_verbosely(bp, dev, s, tmp);
    char line[1024];
    rewind(tmp);
    while (kernel && fgets(line, sizeof line, tmp)) {
        line[strcspn(line, "\n")] = '\0';
        const char *d = desc_in(line, kernel);
        if (d)
            snprintf(buf, size, "%s", d);
    }
    fclose(tmp);
}
