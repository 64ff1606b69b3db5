/* app_info.c - `horizon info [SCENARIO]`: version, backends compiled in, devices found, and the
 * memory a scenario needs on each backend. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "sim_backend.h"
#include "sim_model.h"
#ifdef HORIZON_HAVE_CUDA
#include "gpu_backend.h"
#endif

int app_info_main(int argc, char **argv)
{
    const char *path = NULL;
    char **sets = argv; /* --set values are collected in place */
    int n_sets = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: horizon info [SCENARIO.ini | MODEL] [--set SECTION.KEY=VALUE ...]\n\n"
                 "Prints the version, the backends compiled in, the CUDA devices found (with free\n"
                 "memory) and, for a scenario (a file, or a model: see horizon models), the\n"
                 "memory it needs on each backend and, with a CUDA device, how its steps run\n"
                 "there.");
            return APP_EXIT_OK;
        } else if (app_opt(argc, argv, &i, "--set", &v, &bad)) {
            if (bad)
                return APP_EXIT_USAGE;
            sets[n_sets++] = (char *)v;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "horizon info: unknown option '%s'\n", argv[i]);
            return APP_EXIT_USAGE;
        } else {
            path = argv[i];
        }
    }
    printf("horizon %s\n", HORIZON_VERSION);
    printf("backends: cpu (OpenMP, %d threads)", omp_get_num_procs());
#ifdef HORIZON_HAVE_CUDA
    printf(", cuda\n");
#else
    printf("\n");
#endif
#ifdef HORIZON_HAVE_SDL2
    printf("viewer: SDL2\n");
#else
    printf("viewer: not built (no SDL2)\n");
#endif
#ifdef HORIZON_HAVE_MPI
    printf("mpi: yes (mpirun -np N horizon sweep spreads runs over ranks)\n");
#else
    printf("mpi: no (built without MPI)\n");
#endif
    sim_scenario sc;
    int have_sc = path != NULL || n_sets > 0;
    if (have_sc && app_load_scenario(path, sets, n_sets, &sc) != SIM_OK)
        return APP_EXIT_USAGE;
    if (have_sc) {
        int64_t n = sim_scenario_agent_count(&sc);
        sim_model *m = malloc(sizeof *m);
        int model = m && sim_model_build(&sc, m, NULL) == SIM_OK && !m->plain;
        if (model)
            printf("scenario: %dx%d %s, %lld agents, %lld steps\n", sc.width, sc.height,
                   sim_boundary_name(sc.boundary), (long long)m->agents, (long long)sc.steps);
        else
            printf("scenario: %dx%d %s, %lld agents, r=%d, %d sweeps/step, %lld steps\n",
                   sc.width, sc.height, sim_boundary_name(sc.boundary), (long long)n, sc.radius,
                   sc.sweeps, (long long)sc.steps);
        if (model) {
            printf("model: %d field%s (", m->n_fields, m->n_fields > 1 ? "s" : "");
            for (int f = 0; f < m->n_fields; f++)
                printf("%s%s", f ? ", " : "", m->field_name[f]);
            printf("), %d species (", m->n_species);
            for (int s = 0; s < m->n_species; s++)
                printf("%s%s %lld%s", s ? ", " : "", m->species_name[s],
                       (long long)m->species[s].count, m->species[s].life ? " with a life cycle" : "");
            printf(")%s\n", m->walls ? ", walls" : "");
            sim_mem mem;
            char split[256] = "";
            if (sim_cpu_model_memory(&sc, 0, &mem) == SIM_OK)
                sim_mem_describe(&mem, split, sizeof split);
            printf("cpu memory estimate: %.1f MiB at the start (%s; the agent arrays double "
                   "when births need room)\n", (double)mem.total / 1048576.0, split);
        } else {
            sim_mem mem;
            char split[256];
            sim_cpu_memory(&sc, 0, &mem);
            sim_mem_describe(&mem, split, sizeof split);
            printf("cpu memory estimate: %.1f MiB (%s)\n", (double)mem.total / 1048576.0, split);
        }
        free(m);
    }
#ifdef HORIZON_HAVE_CUDA
    gpu_info_print(stdout, have_sc ? &sc : NULL);
#else
    printf("cuda: not built in\n");
#endif
    return APP_EXIT_OK;
}
