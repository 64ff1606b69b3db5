/* test_render_queue.c - the frame writer queue: many frames through few buffers arrive intact,
 * and a write error is reported by check and finish and stops later frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <unistd.h>

#include "render_png.h"
#include "render_queue.h"

enum { W = 61, H = 37, FRAMES = 20 };

static int setup(void **state)
{
    char *dir = malloc(64);
    if (!dir)
        return -1;
    snprintf(dir, 64, "/tmp/hz_queue_XXXXXX");
    if (!mkdtemp(dir)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    char *dir = *state;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
    return 0;
}

/* Frame k's content: every byte depends on k, so any mix-up between slots shows. */
static void fill(uint8_t *buf, int k)
{
    for (size_t i = 0; i < (size_t)W * H * 4; i++)
        buf[i] = (uint8_t)(i * 7 + (size_t)k * 31 + (i >> 8) * (size_t)k);
}

static void test_many_frames(void **state)
{
    const char *dir = *state;
    render_queue *q = NULL;
    sim_err err = {{0}};
    assert_int_equal(render_queue_create(3, 2, W, H, &q, &err), SIM_OK);
    assert_non_null(q);

    char path[256];
    for (int k = 0; k < FRAMES; k++) {
        uint8_t *buf = render_queue_acquire(q);
        assert_non_null(buf);
        fill(buf, k);
        snprintf(path, sizeof(path), "%s/frame_%03d.png", dir, k);
        render_queue_submit(q, buf, path);
        assert_int_equal(render_queue_check(q, &err), SIM_OK);
    }
    assert_int_equal(render_queue_finish(q, &err), SIM_OK);

    uint8_t *want = malloc((size_t)W * H * 4);
    assert_non_null(want);
    for (int k = 0; k < FRAMES; k++) {
        snprintf(path, sizeof(path), "%s/frame_%03d.png", dir, k);
        uint8_t *got = NULL;
        int w, h;
        assert_int_equal(render_png_read(path, &got, &w, &h, &err), SIM_OK);
        assert_int_equal(w, W);
        assert_int_equal(h, H);
        fill(want, k);
        assert_memory_equal(got, want, (size_t)W * H * 4);
        free(got);
        /* The temp file was renamed away. */
        snprintf(path, sizeof(path), "%s/frame_%03d.png.tmp", dir, k);
        assert_int_equal(access(path, F_OK), -1);
    }
    free(want);

    /* The queue stays usable after finish. */
    uint8_t *buf = render_queue_acquire(q);
    fill(buf, 99);
    snprintf(path, sizeof(path), "%s/again.png", dir);
    render_queue_submit(q, buf, path);
    assert_int_equal(render_queue_finish(q, &err), SIM_OK);
    assert_int_equal(access(path, F_OK), 0);
    render_queue_destroy(q);
}

static void test_error_reported(void **state)
{
    const char *dir = *state;
    render_queue *q = NULL;
    sim_err err = {{0}};
    assert_int_equal(render_queue_create(2, 2, W, H, &q, &err), SIM_OK);

    char bad[256], good[256];
    snprintf(bad, sizeof(bad), "%s/missing/frame.png", dir);
    uint8_t *buf = render_queue_acquire(q);
    fill(buf, 1);
    render_queue_submit(q, buf, bad);
    assert_int_equal(render_queue_finish(q, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, bad));

    sim_err err2 = {{0}};
    assert_int_equal(render_queue_check(q, &err2), SIM_EIO);
    assert_string_equal(err2.msg, err.msg);

    /* Later frames are dropped, their buffers come back (more submits than slots must not
     * block) and the first error stays. */
    for (int k = 0; k < 5; k++) {
        buf = render_queue_acquire(q);
        fill(buf, k);
        snprintf(good, sizeof(good), "%s/late_%d.png", dir, k);
        render_queue_submit(q, buf, good);
    }
    sim_err err3 = {{0}};
    assert_int_equal(render_queue_finish(q, &err3), SIM_EIO);
    assert_string_equal(err3.msg, err.msg);
    assert_int_equal(access(good, F_OK), -1);
    render_queue_destroy(q);
}

/* destroy on its own finishes the pending frames before it joins. */
static void test_destroy_finishes(void **state)
{
    const char *dir = *state;
    render_queue *q = NULL;
    sim_err err = {{0}};
    assert_int_equal(render_queue_create(1, 3, W, H, &q, &err), SIM_OK);
    char path[256];
    for (int k = 0; k < 3; k++) {
        uint8_t *buf = render_queue_acquire(q);
        fill(buf, k);
        snprintf(path, sizeof(path), "%s/d_%d.png", dir, k);
        render_queue_submit(q, buf, path);
    }
    render_queue_destroy(q);
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof(path), "%s/d_%d.png", dir, k);
        assert_int_equal(access(path, F_OK), 0);
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    render_queue *q = (render_queue *)&q;
    sim_err err = {{0}};
    assert_int_equal(render_queue_create(0, 2, W, H, &q, &err), SIM_EINVAL);
    assert_null(q);
    assert_int_equal(render_queue_create(2, 0, W, H, &q, &err), SIM_EINVAL);
    assert_int_equal(render_queue_create(2, 2, 0, H, &q, &err), SIM_EINVAL);
    assert_int_equal(render_queue_create(2, 2, W, -1, &q, &err), SIM_EINVAL);
    assert_null(q);
    render_queue_destroy(NULL);
}

/* Final names appear in submission order: frame 0 is slow to encode (noise compresses badly, a
 * big frame), frame 1 quick (all zeros); while they are written, frame_1.png must never exist
 * without frame_0.png (a kill -9 then would leave a gap). Polled every 200 us. */
static void test_renamed_in_order(void **state)
{
    const char *dir = *state;
    enum { BW = 1536, BH = 1536 };
    render_queue *q = NULL;
    sim_err err;
    assert_int_equal(render_queue_create(2, 2, BW, BH, &q, &err), SIM_OK);
    char p0[256], p1[256];
    snprintf(p0, sizeof p0, "%s/frame_000000.png", dir);
    snprintf(p1, sizeof p1, "%s/frame_000001.png", dir);
    uint8_t *b0 = render_queue_acquire(q);
    uint32_t x = 12345;
    for (size_t i = 0; i < (size_t)BW * BH * 4; i++) {
        x = x * 1664525u + 1013904223u;
        b0[i] = (uint8_t)(x >> 24);
    }
    uint8_t *b1 = render_queue_acquire(q);
    memset(b1, 0, (size_t)BW * BH * 4);
    render_queue_submit(q, b0, p0);
    render_queue_submit(q, b1, p1);
    int gap = 0;
    while (access(p0, F_OK) != 0) {
        if (access(p1, F_OK) == 0)
            gap = 1;
        usleep(200);
    }
    assert_int_equal(render_queue_finish(q, &err), SIM_OK);
    render_queue_destroy(q);
    assert_false(gap);
    assert_int_equal(access(p1, F_OK), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_many_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_renamed_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_finishes, setup, teardown),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("render_queue", tests, NULL, NULL);
}
