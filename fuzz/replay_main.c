/* Replays fuzz inputs through the fuzz target without libFuzzer, so that
 * `make check` (any compiler, any sanitizer build) re-runs the seed corpus and
 * every crash input committed to it.  Arguments: files or directories; none
 * means the committed corpus (FUZZ_CORPUS_DIR, set by Makefile.am). */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef FUZZ_CORPUS_DIR
#define FUZZ_CORPUS_DIR "fuzz/corpus"
#endif

enum { REPLAY_MAX_BYTES = 1 << 16 };

static int replay_file(const char *path)
{
    static uint8_t buf[REPLAY_MAX_BYTES];
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 0;
    }
    const size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n); /* aborts on a failed check */
    return 1;
}

static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        *count += replay_file(path);
        return 1;
    }
    struct dirent **names;
    const int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        perror(path);
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char file[4096];
            snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
            ok &= replay_file(file);
            *count += 1;
        }
        free(names[i]);
    }
    free(names);
    return ok;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int count = 0, ok = 1;
    if (argc < 2)
        ok = replay_path(FUZZ_CORPUS_DIR, &count);
    for (int i = 1; i < argc; i++)
        ok &= replay_path(argv[i], &count);
    printf("fuzz replay: %d inputs passed every check\n", count);
    return ok && count > 0 ? 0 : 1;
}
