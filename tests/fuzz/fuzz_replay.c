/* fuzz_replay.c - a main() for the fuzz harnesses in builds without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named (directories: every file in them), so the
 * seed corpus and every regression input are checked by the normal and the sanitizer builds.
 * -rss_limit_mb=N (as in libFuzzer) fails when the process's peak resident size passes N MiB,
 * naming the input: tiny inputs that make the readers take huge memory are bugs too. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long rss_limit_kb; /* 0: no limit */

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
    if (!buf || n < 0 || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        free(buf);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    struct rusage ru;
    if (rss_limit_kb > 0 && getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > rss_limit_kb) {
        fprintf(stderr, "%s: peak resident size %ld MiB, over the limit of %ld MiB\n", path,
                ru.ru_maxrss / 1024, rss_limit_kb / 1024);
        rss_limit_kb = 0; /* the peak stays: name only the first input past it */
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-rss_limit_mb=", 14) == 0) {
            rss_limit_kb = atol(argv[i] + 14) * 1024;
            continue;
        }
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= run_file(argv[i]);
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            bad |= run_file(p);
            files++;
        }
        if (d)
            closedir(d);
    }
    printf("%d inputs replayed\n", files);
    return bad || files == 0;
}
