/* test_gui_script.c - the viewer's script parser: commands, numbers, comments, and messages
 * that name the file, line and what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "render_gui_script.h"

static void test_script_parse(void **state)
{
    (void)state;
    render_gui_script s;
    sim_err err;
    const char *text = "# a script\n"
                       "step 10\n"
                       "\n"
                       "key shift+r   # comment\n"
                       "click 3 -4\n"
                       "drag 1 2 3 4\n"
                       "snapshot out/a.png\n"
                       "resize 640 480\n"
                       "wheel 5 6 -2\n"
                       "quit\n";
    assert_int_equal(render_gui_script_parse(text, "t.txt", &s, &err), SIM_OK);
    assert_int_equal(s.n, 8);
    assert_int_equal(s.cmd[0].op, RENDER_GUI_CMD_STEP);
    assert_int_equal(s.cmd[0].arg[0], 10);
    assert_int_equal(s.cmd[0].line, 2);
    assert_int_equal(s.cmd[1].op, RENDER_GUI_CMD_KEY);
    assert_string_equal(s.cmd[1].text, "shift+r");
    assert_int_equal(s.cmd[2].arg[1], -4);
    assert_int_equal(s.cmd[3].arg[3], 4);
    assert_string_equal(s.cmd[4].text, "out/a.png");
    assert_int_equal(s.cmd[6].arg[2], -2);
    assert_int_equal(s.cmd[7].op, RENDER_GUI_CMD_QUIT);
    render_gui_script_free(&s);
    render_gui_script_free(&s); /* freeing twice is harmless */

    const struct {
        const char *text, *msg;
    } bad[] = {
        {"step\n", "t.txt:1: step needs 1 number"},
        {"step 1\nfly 3\n", "t.txt:2: unknown command 'fly'"},
        {"step -1\n", "t.txt:1: step: '-1' is not an integer in 0 .. 1000000000"},
        {"step 1x\n", "t.txt:1: step: '1x' is not an integer"},
        {"key\n", "t.txt:1: key needs a key name"},
        {"quit now\n", "t.txt:1: quit: unexpected 'now'"},
        {"resize 0 10\n", "t.txt:1: resize: '0' is not an integer in 1 .. 16384"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(render_gui_script_parse(bad[i].text, "t.txt", &s, &err), SIM_EINVAL);
        if (strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) != 0)
            fail_msg("'%s' gave '%s'", bad[i].text, err.msg);
        assert_int_equal(s.n, 0);
        assert_null(s.cmd);
    }
    assert_int_equal(render_gui_script_load("/nonexistent/x.txt", &s, &err), SIM_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_script_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
