/* app_mpi.c - messages between the ranks of a sweep started by mpirun: rank 0 writes the
 * sweep's files, the other ranks send it their rows. Built with MPI when the build found it
 * (HORIZON_HAVE_MPI); without it, or when the process was not started by mpirun, there is one
 * rank and every function here is a no-op.
 *
 * Only the thread that called app_mpi_start calls MPI (MPI_THREAD_FUNNELED): the sweep's
 * worker threads hand their rows to it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_sweep.h"

#ifdef HORIZON_HAVE_MPI
#include <mpi.h>

static int mpi_on; /* MPI was started here; read-only after app_mpi_start */

/* mpirun (OpenMPI, MPICH, any PMIx launcher) leaves one of these in each rank's environment.
 * Without it the process is a plain `horizon sweep`, and MPI is not started at all: a
 * singleton MPI_Init can be slow or noisy where no launcher runs. */
static int launched_by_mpirun(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

int app_mpi_start(int *rank, int *size, sim_err *err)
{
    *rank = 0;
    *size = 1;
    if (!launched_by_mpirun())
        return SIM_OK;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sim_err_set(err, SIM_EIO, "MPI_Init_thread failed");
    mpi_on = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return SIM_OK;
}

void app_mpi_stop(void)
{
    if (mpi_on)
        MPI_Finalize();
    mpi_on = 0;
}

void app_mpi_bcast(void *buf, size_t n)
{
    /* In pieces below INT_MAX bytes (MPI counts are int). */
    for (size_t off = 0; mpi_on && off < n; off += 1 << 30) {
        size_t k = n - off < ((size_t)1 << 30) ? n - off : (size_t)1 << 30;
        MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

void app_mpi_send(int tag, const char *text)
{
    if (mpi_on)
        MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, 0, tag, MPI_COMM_WORLD);
}

int app_mpi_poll(int *tag, int *source, char *text, size_t n)
{
    if (!mpi_on)
        return 0;
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag)
        return 0;
    int count = 0;
    MPI_Get_count(&st, MPI_CHAR, &count);
    /* Senders send rows of at most APP_SWEEP_ROW_MAX bytes and short DONE lines. */
    char tmp[APP_SWEEP_ROW_MAX + 1024];
    if (count < 1 || (size_t)count > sizeof tmp)
        count = (int)sizeof tmp;
    MPI_Recv(tmp, count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    tmp[count - 1] = '\0';
    snprintf(text, n, "%s", tmp);
    *tag = st.MPI_TAG;
    *source = st.MPI_SOURCE;
    return 1;
}

#else

int app_mpi_start(int *rank, int *size, sim_err *err)
{
    (void)err;
    *rank = 0;
    *size = 1;
    return SIM_OK;
}

void app_mpi_stop(void)
{
}

void app_mpi_bcast(void *buf, size_t n)
{
    (void)buf;
    (void)n;
}

void app_mpi_send(int tag, const char *text)
{
    (void)tag;
    (void)text;
}

int app_mpi_poll(int *tag, int *source, char *text, size_t n)
{
    (void)tag;
    (void)source;
    (void)text;
    (void)n;
    return 0;
}

#endif
