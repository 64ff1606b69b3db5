/* app_gui.c - `horizon gui` when the SDL2 viewer is not built in. */
#include <stdio.h>

#include "app.h"

#ifndef HORIZON_HAVE_SDL2
int app_gui_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "horizon gui: this horizon was built without SDL2; install libsdl2-dev and "
            "rebuild to get the viewer (headless runs: horizon run)\n");
    return APP_EXIT_USAGE;
}
#endif
