/* app_models.h - the model library: scenario files that the command line finds by name
 * (`horizon run laplace`) and `horizon models` lists.
 *
 * A model is a file NAME.ini (with any PNG maps it names) in a library directory. The
 * directories, in lookup order:
 *   1. $HORIZON_DATA_DIR/models, when HORIZON_DATA_DIR is set and not empty;
 *   2. the installed library, found from the executable's own place (/proc/self/exe):
 *      <exe dir>/HORIZON_EXE_TO_MODELS, which CMake sets to ../share/horizon/models for the
 *      usual layout (bin/horizon beside share/horizon/models);
 *   3. the source tree's assets/models (HORIZON_SOURCE_MODELS_DIR, an absolute path CMake
 *      sets), so that a binary run from its build directory finds the library too.
 * A name is looked up in each in turn; `horizon models` lists the first that exists. */
#ifndef APP_MODELS_H
#define APP_MODELS_H

#include <stddef.h>

#include "sim.h"

/* The longest path of a library directory or a model file. */
#define APP_MODELS_PATH_MAX 4096

/* At most this many library directories (the three above). */
#define APP_MODELS_MAX_DIRS 3

/* The library directories in lookup order, whether they exist or not, as absolute paths where
 * they exist (a directory that does not is shown as computed, "../" parts folded away). Fills
 * dirs[0 .. return value - 1]; a directory that cannot be computed (no /proc/self/exe, a path
 * too long) is left out. Never fails. */
int app_models_dirs(char dirs[APP_MODELS_MAX_DIRS][APP_MODELS_PATH_MAX]);

/* Turns a SCENARIO argument into the path of a scenario file, into path (n bytes):
 *   - an argument naming something that exists (and is not a directory) is that file, as is;
 *   - else an argument that is a model name ([A-Za-z0-9_-]+: no slash, no ".ini") is the
 *     first NAME.ini found in the library directories, its full path;
 *   - else the argument as is (the scenario parser reports the file it cannot open).
 * SIM_EINVAL with "no scenario file or model named 'X' (see `horizon models`; looked in A, B)"
 * in err when a model name is found nowhere; SIM_EINVAL when the path does not fit in n. */
int app_models_resolve(const char *arg, char *path, size_t n, sim_err *err);

#endif
