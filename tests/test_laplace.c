/* test_laplace.c - the shipped Laplace exercise end to end: `horizon run laplace.ini`, shrunk to
 * 200 x 100 cells and 10 steps of 100 sweeps, dumps its field as .npy; the field must match an
 * independent double-precision Jacobi written here (a (w+2) x (h+2) array whose ghost ring holds
 * the boundary: top 100, bottom 0, left and right columns 0 including the corners) after the
 * same 1000 sweeps, to 1e-4 of the maximum value. The residual column of stats.csv is checked
 * against the reference's max |T_new - T| every 100 sweeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "hz_test_util.h"

enum { W = 200, H = 100, STEPS = 10, SWEEPS = 100 };

typedef struct fixture {
    char dir[64];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || hz_mkdtemp(f->dir, sizeof f->dir, "laplace") != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    hz_rm_rf(f->dir);
    free(f);
    return 0;
}

/* Reads a little-endian float32 2-D .npy file of shape (h, w); returns the data or fails. */
static float *read_npy(const char *path, int h, int w)
{
    size_t len;
    char *buf = hz_read_file(path, &len);
    if (!buf)
        fail_msg("%s: cannot read", path);
    assert_true(len >= 10);
    assert_memory_equal(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
    size_t data = 10 + hlen;
    assert_int_equal(data % 64, 0);
    assert_int_equal(len, data + (size_t)w * h * 4);
    char header[512];
    assert_true(hlen < sizeof header);
    memcpy(header, buf + 10, hlen);
    header[hlen] = '\0';
    char shape[64];
    snprintf(shape, sizeof shape, "'shape': (%d, %d)", h, w);
    hz_assert_contains(header, "'descr': '<f4'");
    hz_assert_contains(header, "'fortran_order': False");
    hz_assert_contains(header, shape);
    assert_int_equal(header[hlen - 1], '\n');
    float *f = malloc((size_t)w * h * sizeof *f);
    assert_non_null(f);
    memcpy(f, buf + data, (size_t)w * h * sizeof *f); /* the test hosts are little-endian */
    free(buf);
    return f;
}

static void test_laplace_matches_double_jacobi(void **state)
{
    fixture *fx = *state;
    char cmd[2048], out[256], path[512];
    snprintf(out, sizeof out, "%s/out", fx->dir);
    snprintf(cmd, sizeof cmd,
             "'%s' run '%s/assets/scenarios/laplace.ini' --set world.width=%d "
             "--set world.height=%d --set field.sweeps=%d --steps %d --dump-fields-every %d "
             "--frames-every 0 --threads 2 --quiet --out '%s'",
             HZ_BINARY, HZ_SOURCE_DIR, W, H, SWEEPS, STEPS, STEPS, out);
    int rc = system(cmd);
    if (rc != 0)
        fail_msg("exit status %d from: %s", rc, cmd);

    /* The reference: ghost ring around the plate, a = 1, no decay. */
    const int GW = W + 2, GH = H + 2;
    double *t = calloc((size_t)GW * GH, sizeof *t), *u = calloc((size_t)GW * GH, sizeof *u);
    assert_non_null(t);
    assert_non_null(u);
    for (int x = 1; x <= W; x++)
        t[x] = u[x] = 100.0; /* top ghost row; the corners belong to the left/right columns */
    double residual[STEPS];
    for (int k = 0; k < STEPS * SWEEPS; k++) {
        double res = 0.0;
        for (int y = 1; y <= H; y++)
            for (int x = 1; x <= W; x++) {
                size_t i = (size_t)y * GW + x;
                u[i] = 0.25 * (t[i - GW] + t[i + GW] + t[i - 1] + t[i + 1]);
                res = fmax(res, fabs(u[i] - t[i]));
            }
        double *s = t;
        t = u;
        u = s;
        if ((k + 1) % SWEEPS == 0)
            residual[k / SWEEPS] = res;
    }

    snprintf(path, sizeof path, "%s/fields/field_%06d.npy", out, STEPS);
    float *f = read_npy(path, H, W);
    double maxv = 0.0, maxdiff = 0.0;
    int at = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double want = t[(size_t)(y + 1) * GW + x + 1];
            double d = fabs((double)f[y * W + x] - want);
            maxv = fmax(maxv, want);
            if (d > maxdiff) {
                maxdiff = d;
                at = y * W + x;
            }
        }
    assert_true(maxv > 50.0); /* the heat has spread: the comparison is not of two zero fields */
    if (maxdiff > 1e-4 * maxv)
        fail_msg("max |horizon - reference| = %g at (%d, %d), allowed %g", maxdiff, at % W,
                 at / W, 1e-4 * maxv);
    free(f);

    /* The initial dump is the initial state: all zero. */
    snprintf(path, sizeof path, "%s/fields/field_%06d.npy", out, 0);
    f = read_npy(path, H, W);
    for (int i = 0; i < W * H; i++)
        assert_true(f[i] == 0.0f);
    free(f);

    /* stats.csv: one row per step, the residual of each step's last sweep. */
    snprintf(path, sizeof path, "%s/stats.csv", out);
    size_t len;
    char *csv = hz_read_file(path, &len);
    assert_non_null(csv);
    char *line = strchr(csv, '\n');
    for (int k = 0; k < STEPS; k++) {
        assert_non_null(line);
        long stepno;
        double res;
        /* step,agents,moved,field_total,field_mean,field_max,residual,checksum */
        if (sscanf(line + 1, "%ld,%*d,%*d,%*g,%*g,%*g,%lg,", &stepno, &res) != 2)
            fail_msg("stats.csv row %d: %.80s", k + 1, line + 1);
        assert_int_equal(stepno, k + 1);
        if (fabs(res - residual[k]) > 1e-3 * residual[0] + 1e-4)
            fail_msg("step %d: residual %g, reference %g", k + 1, res, residual[k]);
        line = strchr(line + 1, '\n');
    }
    free(csv);
    free(t);
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_laplace_matches_double_jacobi, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
