/* test_alloc.c - sim_alloc, the allocation hook: the counters, overflow checks, and the
 * allocation-failure sweep: for every N, a small run whose Nth allocation fails (scenario file,
 * sim_create, steps, a frame composed, a checkpoint written and read back, a restore, more
 * steps, destroy) ends with either success or a clean SIM_ENOMEM and its message, never a
 * crash, and with nothing left allocated. sim_compose's host buffers: each of them failing once,
 * a retry that succeeds, and no allocation on later frames. Under HORIZON_SANITIZE
 * LeakSanitizer checks the same at exit, for memory that bypasses the hook too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "render_frame.h"
#include "sim.h"
#include "sim_alloc.h"
#include "sim_checkpoint.h"

static void test_counters_and_overflow(void **state)
{
    (void)state;
    long live = sim_alloc_live();
    sim_alloc_fail_at(0);
    void *a = sim_malloc(10), *b = sim_calloc(3, 4), *c = sim_malloc(0);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c); /* never NULL on success, even for 0 bytes */
    assert_int_equal(sim_alloc_attempts(), 3);
    assert_int_equal(sim_alloc_live(), live + 3);
    assert_int_equal(sim_alloc_largest(), 12);
    assert_int_equal(sim_alloc_requested(), 10 + 12 + 0);
    a = sim_realloc(a, 1000);
    assert_non_null(a);
    assert_int_equal(sim_alloc_live(), live + 3);
    assert_int_equal(sim_alloc_requested(), 10 + 12 + 0 + 1000);
    sim_free(a);
    sim_free(b);
    sim_free(c);
    sim_free(NULL);
    assert_int_equal(sim_alloc_live(), live);

    /* n * size that wraps around is refused, not truncated into a small block */
    assert_null(sim_malloc_array(SIZE_MAX / 2, 4));
    assert_null(sim_calloc((SIZE_MAX >> 3) + 2, 8));

    /* the switch: exactly the Nth attempt fails, the others succeed */
    sim_alloc_fail_at(2);
    a = sim_malloc(1);
    b = sim_malloc(1);
    c = sim_malloc(1);
    assert_non_null(a);
    assert_null(b);
    assert_non_null(c);
    sim_free(a);
    sim_free(c);
    sim_alloc_fail_at(1);
    void *r = sim_malloc(8);
    sim_alloc_fail_at(1);
    assert_null(sim_realloc(r, 64)); /* a failed realloc keeps the old block */
    sim_alloc_fail_at(0);
    sim_free(r);
    assert_int_equal(sim_alloc_live(), live);
}

/* A scenario file longer than the parser's first 4 KiB buffer, so that it grows (realloc). */
static void write_scenario(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("; a small world for the allocation sweep\n", f);
    for (int i = 0; i < 120; i++)
        fputs(";;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;\n", f);
    fputs("[world]\nwidth = 24\nheight = 20\n[agents]\ndensity = 0.1\nradius = 2\n"
          "placement = center\n[field]\nsweeps = 2\n", f);
    fclose(f);
}

/* The small run. Returns its status; on failure err holds the message. */
static int small_run(const char *ini, const char *ckpt, sim_err *err)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sim *s = NULL, *t = NULL;
    sim_checkpoint ck, back;
    memset(&ck, 0, sizeof ck);
    memset(&back, 0, sizeof back);
    sim_stats st;
    int rc = sim_scenario_parse_file(&sc, ini, err);
    if (rc == SIM_OK)
        rc = sim_create(&sc, sim_cpu_backend(), 2, &s, err);
    if (rc == SIM_OK)
        rc = sim_checkpoint_init(&ck, &sc, err);
    for (int i = 0; rc == SIM_OK && i < 3; i++)
        if ((rc = sim_step(s, 1, &st)) != SIM_OK)
            snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
    uint8_t rgba[30 * 25 * 4];
    if (rc == SIM_OK) { /* a frame, as `horizon run` writes one */
        sim_view v;
        render_view_init(&v, sc.colormap, sc.range_max);
        render_view_fit(&v, sc.width, sc.height, 30, 25);
        if ((rc = sim_compose(s, &v, rgba)) != SIM_OK)
            snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
    }
    if (rc == SIM_OK)
        rc = sim_checkpoint_capture(&ck, s, 3, err);
    if (rc == SIM_OK)
        rc = sim_checkpoint_write(&ck, ckpt, err);
    if (rc == SIM_OK)
        rc = sim_checkpoint_read(ckpt, &back, err);
    if (rc == SIM_OK)
        rc = sim_checkpoint_restore(&back, sim_cpu_backend(), 1, &t, err);
    for (int i = 0; rc == SIM_OK && i < 2; i++)
        if ((rc = sim_step(t, 1, &st)) != SIM_OK)
            snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(t));
    sim_checkpoint_release(&ck);
    sim_checkpoint_release(&back);
    sim_destroy(s);
    sim_destroy(t);
    return rc;
}

static void test_every_allocation_failure_is_clean(void **state)
{
    (void)state;
    char dir[] = "/tmp/hz_alloc_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ini[64], ckpt[64], prev[80];
    snprintf(ini, sizeof ini, "%s/small.ini", dir);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint.hzc", dir);
    snprintf(prev, sizeof prev, "%s.prev", ckpt);
    write_scenario(ini);

    long live = sim_alloc_live();
    sim_err err;
    sim_alloc_fail_at(0);
    assert_int_equal(small_run(ini, ckpt, &err), SIM_OK);
    long total = sim_alloc_attempts();
    assert_int_equal(sim_alloc_live(), live);
    /* parse buffer + growth, world buffers, 10 backend blocks, checks, checkpoint buffers,
     * scenario text, field and agents read back, the restored copy: well over 20 */
    assert_true(total >= 20);

    long failures = 0;
    for (long n = 1; n <= total + 1; n++) {
        sim_alloc_fail_at(n);
        memset(&err, 0, sizeof err);
        int rc = small_run(ini, ckpt, &err);
        long attempts = sim_alloc_attempts();
        sim_alloc_fail_at(0);
        if (n > attempts) { /* the sweep has passed the last allocation */
            assert_int_equal(rc, SIM_OK);
            assert_int_equal(n, total + 1);
            break;
        }
        if (rc != SIM_ENOMEM)
            fail_msg("allocation %ld of %ld failed but the run returned %d (%s)", n, total, rc,
                     err.msg);
        assert_non_null(strstr(err.msg, "out of memory"));
        assert_int_equal(sim_alloc_live(), live);
        failures++;
    }
    assert_int_equal(failures, total);
    print_message("%ld allocations in the run; each failed once, cleanly\n", total);
    unlink(ini);
    unlink(ckpt);
    unlink(prev);
    rmdir(dir);
}

/* sim_compose on the CPU backend takes three host buffers on its first call (field, agents,
 * occupancy). Each failing gives SIM_ENOMEM with nothing leaked and the same frame on the next
 * call; once they exist, frames allocate nothing. */
static sim *compose_sim(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 19;
    sc.height = 13;
    sc.count = 20;
    sim *s = NULL;
    sim_err err = {{0}};
    sim_alloc_fail_at(0);
    if (sim_create(&sc, sim_cpu_backend(), 1, &s, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    return s;
}

static void test_compose_buffers(void **state)
{
    (void)state;
    sim_view v;
    render_view_init(&v, SIM_CMAP_INFERNO, 0.0f);
    render_view_fit(&v, 19, 13, 41, 29);
    static uint8_t want[41 * 29 * 4], got[41 * 29 * 4];
    long live = sim_alloc_live();

    sim *s = compose_sim();
    sim_alloc_fail_at(0);
    assert_int_equal(sim_compose(s, &v, want), SIM_OK);
    long total = sim_alloc_attempts();
    assert_int_equal(total, 3); /* field, agents, occupancy */
    sim_alloc_fail_at(0);
    assert_int_equal(sim_compose(s, &v, got), SIM_OK);
    assert_int_equal(sim_alloc_attempts(), 0); /* later frames allocate nothing */
    assert_memory_equal(want, got, sizeof want);
    sim_destroy(s);
    assert_int_equal(sim_alloc_live(), live);

    for (long n = 1; n <= total; n++) {
        s = compose_sim();
        long created = sim_alloc_live();
        sim_alloc_fail_at(n);
        int rc = sim_compose(s, &v, got);
        sim_alloc_fail_at(0);
        if (rc != SIM_ENOMEM)
            fail_msg("allocation %ld failed but compose returned %d (%s)", n, rc, sim_errmsg(s));
        assert_non_null(strstr(sim_errmsg(s), "out of memory"));
        assert_int_equal(sim_alloc_live(), created); /* none of the three is kept */
        memset(got, 0, sizeof got);
        if (sim_compose(s, &v, got) != SIM_OK) /* the retry takes the buffers */
            fail_msg("compose after a failed one: %s", sim_errmsg(s));
        assert_memory_equal(want, got, sizeof want);
        sim_destroy(s);
        assert_int_equal(sim_alloc_live(), live);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters_and_overflow),
        cmocka_unit_test(test_every_allocation_failure_is_clean),
        cmocka_unit_test(test_compose_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
