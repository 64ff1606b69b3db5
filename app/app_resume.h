/* app_resume.h - `horizon run --resume`: a checkpoint becomes the run's scenario and starting
 * state, and the command line may only change what does not change the results. */
#ifndef APP_RESUME_H
#define APP_RESUME_H

#include "sim_checkpoint.h"

/* Reads the checkpoint at path into ck (released again on failure; with no floor under the field
 * values when the checkpoint's directory holds events.csv: SIM_CKPT_ANY_SIGN) and sets *sc to
 * the scenario to go on with: the checkpoint's, with output.dir = the checkpoint's directory and
 * the command line's overrides `sets` applied. Of the scenario only run.steps (the total) may
 * differ from the checkpoint; overrides that repeat its values are fine, a scenario file or
 * --force (scenario_file non-NULL, force non-zero) are refused, as is a run.steps below the
 * checkpoint's step. Prints the one-line error; returns SIM_OK, SIM_EINVAL, SIM_EIO (the file
 * cannot be read) or SIM_ENOMEM. */
int app_resume_load(const char *path, const char *scenario_file, int force, char **sets,
                    int n_sets, sim_scenario *sc, sim_checkpoint *ck);

#endif
