/* gpu_world.cu - the initial world of sim_world_init (sim_world.c) built on the device: the same
 * field and the same agent cells, bit for bit, at memory speed instead of a host shuffle and an
 * upload (a billion agents: gpu_world.h).
 *
 * The placement is the partial shuffle of sim_world_shuffle, run as it runs on several host
 * threads: in rounds of deterministic reservations. A round takes a window of pending steps (the
 * ones that lost a round before, and fresh ones after them); each step reserves its two
 * positions (i and its partner) with atomicMin of its own number, and a step that holds both
 * swaps them and frees them. The smallest pending step always wins, and a step runs only when no
 * earlier pending step wants either position, so every step finds the candidates as the steps
 * in order would have left them: the result is the serial shuffle's, whatever the windows. The
 * last steps (at most GPU_WORLD_SERIAL_MAX candidates open) run in order on one thread, where
 * few candidates remain and the rounds would mostly collide. */
#include "gpu_check.h"
#include "gpu_world.h"

extern "C" {
#include "sim_rules.h"
}

#define GPU_WORLD_THREADS 256
#define GPU_WORLD_SERIAL_MAX 65536
#define GPU_WORLD_FREE 0xFFFFFFFFu

static unsigned blocks_for(int64_t n)
{
    return (unsigned)((n + GPU_WORLD_THREADS - 1) / GPU_WORLD_THREADS);
}

__global__ void world_field_kernel(float *field, int64_t cells, unsigned long long seed,
                                   float initial, float init_noise)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cells)
        field[i] = sim_initial_cell(seed, (uint64_t)i, initial, init_noise);
}

/* cand[c] = c, resv[c] = free: every cell a candidate, no position reserved. */
__global__ void world_cand_kernel(uint32_t *cand, uint32_t *resv, int64_t cells)
{
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cells) {
        cand[c] = (uint32_t)c;
        resv[c] = GPU_WORLD_FREE;
    }
}

/* The window: win[0 .. nleft) already holds the steps that lost; the fresh steps follow. */
__global__ void world_fresh_kernel(uint32_t *win, int64_t nleft, int64_t fresh, int64_t next)
{
    const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < fresh)
        win[nleft + k] = (uint32_t)(next + k);
}

__global__ void world_reserve_kernel(const uint32_t *win, uint32_t *part, int64_t m,
                                     uint32_t *resv, unsigned long long seed, int64_t n_cand)
{
    const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m)
        return;
    const uint32_t i = win[k];
    const uint32_t j = (uint32_t)sim_shuffle_partner(seed, 0, n_cand, i);
    part[k] = j;
    atomicMin(&resv[i], i);
    atomicMin(&resv[j], i);
}

/* A step that holds both positions swaps them and frees them (the others compare a position with
 * their own number only, which the free mark never is); a step that lost goes to the next
 * window, its reservations left as they are (it makes the same ones again). */
__global__ void world_swap_kernel(const uint32_t *win, const uint32_t *part, int64_t m,
                                  uint32_t *resv, uint32_t *cand, uint32_t *left,
                                  unsigned long long *nleft)
{
    const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m)
        return;
    const uint32_t i = win[k], j = part[k];
    if (resv[i] == i && resv[j] == i) {
        const uint32_t t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
        resv[i] = GPU_WORLD_FREE;
        resv[j] = GPU_WORLD_FREE;
    } else {
        left[atomicAdd(nleft, 1ull)] = i;
    }
}

/* Steps next .. n-1 in order (sim_world_pick's), on one thread. */
__global__ void world_serial_kernel(uint32_t *cand, unsigned long long seed, int64_t n_cand,
                                    int64_t next, int64_t n)
{
    for (int64_t i = next; i < n; i++) {
        const int64_t j = sim_shuffle_partner(seed, 0, n_cand, i);
        const uint32_t t = cand[i];
        cand[i] = cand[j];
        cand[j] = t;
    }
}

/* The window of a round: about 1/64 of the candidates still open (two of its steps then rarely
 * want one position), at least 1024. */
static int64_t window_for(int64_t open)
{
    const int64_t want = open / 64;
    return want < 1024 ? 1024 : want;
}

/* One round over the window: the nleft steps in a[0 .. nleft) and the fresh steps next ..
 * next + fresh - 1 after them; reservations, swaps, the losers into b; *h_left: their count
 * (read back: it sizes the next window). */
static int world_round(unsigned long long seed, int64_t cells, uint32_t *a, uint32_t *b,
                       int64_t nleft, int64_t fresh, int64_t next, uint32_t *part, uint32_t *resv,
                       uint32_t *cand, unsigned long long *d_left, unsigned long long *h_left,
                       cudaStream_t s, sim_err *err)
{
    const int64_t m = nleft + fresh;
    if (fresh > 0) {
        world_fresh_kernel<<<blocks_for(fresh), GPU_WORLD_THREADS, 0, s>>>(a, nleft, fresh, next);
        GPU_CHECK_LAUNCH(err, s);
    }
    GPU_CHECK(err, cudaMemsetAsync(d_left, 0, sizeof *d_left, s));
    world_reserve_kernel<<<blocks_for(m), GPU_WORLD_THREADS, 0, s>>>(a, part, m, resv, seed,
                                                                     cells);
    GPU_CHECK_LAUNCH(err, s);
    world_swap_kernel<<<blocks_for(m), GPU_WORLD_THREADS, 0, s>>>(a, part, m, resv, cand, b,
                                                                  d_left);
    GPU_CHECK_LAUNCH(err, s);
    GPU_CHECK(err, cudaMemcpyAsync(h_left, d_left, sizeof *h_left, cudaMemcpyDeviceToHost, s));
    GPU_CHECK(err, cudaStreamSynchronize(s));
    return SIM_OK;
}

/* The rounds, from step 0 while more than GPU_WORLD_SERIAL_MAX candidates are open; returns the
 * first step no round took (*next), every step before it done. */
static int world_rounds(unsigned long long seed, int64_t cells, int64_t n, uint32_t *cand,
                        uint32_t *resv, uint32_t *win, uint32_t *part, unsigned long long *d_left,
                        unsigned long long *h_left, int64_t *next, cudaStream_t s, sim_err *err)
{
    uint32_t *a = win, *b = win + n; /* this window, and the next one's leftovers */
    int64_t nleft = 0;
    while (nleft > 0 || (*next < n && cells - *next > GPU_WORLD_SERIAL_MAX)) {
        int64_t fresh = window_for(cells - *next) - nleft;
        if (fresh > n - *next)
            fresh = n - *next;
        if (fresh < 0 || cells - *next <= GPU_WORLD_SERIAL_MAX)
            fresh = 0;
        GPU_TRY(world_round(seed, cells, a, b, nleft, fresh, *next, part, resv, cand, d_left,
                            h_left, s, err));
        *next += fresh;
        nleft = (int64_t)*h_left;
        uint32_t *t = a;
        a = b;
        b = t;
    }
    return SIM_OK;
}

int gpu_world_place(unsigned long long seed, int64_t cells, int64_t n, uint32_t *cand,
                    uint32_t *resv, uint32_t *win, uint32_t *part, unsigned long long *d_count,
                    unsigned long long *h_count, cudaStream_t s, sim_err *err)
{
    world_cand_kernel<<<blocks_for(cells), GPU_WORLD_THREADS, 0, s>>>(cand, resv, cells);
    GPU_CHECK_LAUNCH(err, s);
    int64_t next = 0;
    if (n > 0)
        GPU_TRY(world_rounds(seed, cells, n, cand, resv, win, part, d_count, h_count, &next, s,
                             err));
    if (next < n) {
        world_serial_kernel<<<1, 1, 0, s>>>(cand, seed, cells, next, n);
        GPU_CHECK_LAUNCH(err, s);
    }
    return SIM_OK;
}

int gpu_world_field(const sim_scenario *sc, float *field, cudaStream_t s, sim_err *err)
{
    const int64_t cells = (int64_t)sc->width * sc->height;
    world_field_kernel<<<blocks_for(cells), GPU_WORLD_THREADS, 0, s>>>(
        field, cells, (unsigned long long)sc->seed, sc->initial, sc->init_noise);
    GPU_CHECK_LAUNCH(err, s);
    return SIM_OK;
}
