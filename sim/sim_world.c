/* sim_world.c - initial field and agent placement, from the seed, on the host. */
#include "sim_world.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_rules.h"

float sim_world_unit24(uint32_t x)
{
    return sim_unit24(x);
}

uint32_t sim_world_pick(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand, int64_t i)
{
    int64_t j = sim_shuffle_partner(seed, index, n_cand, i);
    uint32_t t = cand[i];
    cand[i] = cand[j];
    cand[j] = t;
    return cand[i];
}

/* Below this many steps, or on one thread, the steps run one after another; the last steps,
 * with this many candidates or fewer still open, too. */
#define SHUFFLE_SERIAL_MAX 65536
/* The most steps a round of the parallel shuffle tries: few enough that the reservations a
 * round makes are still in the cores' caches when it checks them. */
#define SHUFFLE_WINDOW_MAX (1 << 15)

/* x = min(x, v), atomically. */
static void reserve_min(uint32_t *x, uint32_t v)
{
    uint32_t cur = __atomic_load_n(x, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(x, &cur, v, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {
    }
}

/* The steps i in win[0..m) (ascending; every step before win[0] is done, and every step between
 * win[0] and win[m-1] is in win) that can run now, run: each reserves its two positions (i and
 * its partner) with its own number, the smallest number wins a position, and a step that won
 * both swaps them. No earlier step is pending on either position, so it finds the candidates as
 * the steps in order would have left them. ok[k]: step win[k] ran. */
static void shuffle_round(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand,
                          const int64_t *win, int64_t *part, uint8_t *ok, int64_t m,
                          uint32_t *resv, int team)
{
#pragma omp parallel num_threads(team)
    {
#pragma omp for schedule(static)
        for (int64_t k = 0; k < m; k++) {
            const int64_t i = win[k], j = sim_shuffle_partner(seed, index, n_cand, i);
            part[k] = j;
            reserve_min(&resv[i], (uint32_t)i);
            reserve_min(&resv[j], (uint32_t)i);
        }
        /* A step that won both positions swaps and frees them at once: the others only ever
         * compare a position with their own number, which UINT32_MAX never is. A step that lost
         * leaves its reservations: they are what it reserves again next round. */
#pragma omp for schedule(static)
        for (int64_t k = 0; k < m; k++) {
            const int64_t i = win[k], j = part[k];
            ok[k] = __atomic_load_n(&resv[i], __ATOMIC_RELAXED) == (uint32_t)i &&
                    __atomic_load_n(&resv[j], __ATOMIC_RELAXED) == (uint32_t)i;
            if (ok[k]) {
                uint32_t t = cand[i];
                cand[i] = cand[j];
                cand[j] = t;
                __atomic_store_n(&resv[i], UINT32_MAX, __ATOMIC_RELAXED);
                __atomic_store_n(&resv[j], UINT32_MAX, __ATOMIC_RELAXED);
            }
        }
    }
}

void sim_world_shuffle(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand, int64_t n,
                       int threads)
{
    int team = threads > 0 ? threads : omp_get_max_threads();
    uint32_t *resv = NULL;
    int64_t *buf = NULL;
    uint8_t *ok = NULL;
    if (team > 1 && n >= SHUFFLE_SERIAL_MAX) {
        resv = sim_malloc_array((size_t)n_cand, sizeof *resv);
        buf = sim_malloc_array((size_t)SHUFFLE_WINDOW_MAX * 3, sizeof *buf);
        ok = sim_malloc_array((size_t)SHUFFLE_WINDOW_MAX, 1);
    }
    int64_t next = 0; /* the first step no round has tried */
    if (resv && buf && ok) {
#pragma omp parallel for schedule(static) num_threads(team)
        for (int64_t c = 0; c < n_cand; c++)
            resv[c] = UINT32_MAX;
        int64_t *win = buf, *part = buf + SHUFFLE_WINDOW_MAX;
        int64_t *left = buf + 2 * (int64_t)SHUFFLE_WINDOW_MAX;
        int64_t nleft = 0; /* steps tried and not run yet, ascending, all before `next` */
        /* A round tries about 1/64 of the candidates still open, so that two of its steps rarely
         * want one position. */
        while (nleft > 0 || (next < n && n_cand - next > SHUFFLE_SERIAL_MAX)) {
            const int64_t open = n_cand - (nleft > 0 ? left[0] : next);
            int64_t want = open / 64;
            if (want > SHUFFLE_WINDOW_MAX)
                want = SHUFFLE_WINDOW_MAX;
            if (want < 1024)
                want = 1024;
            int64_t fresh = want - nleft;
            if (fresh > n - next)
                fresh = n - next;
            if (fresh < 0 || n_cand - next <= SHUFFLE_SERIAL_MAX)
                fresh = 0;
            const int64_t m = nleft + fresh;
            memmove(win, left, (size_t)nleft * sizeof *win);
            for (int64_t k = 0; k < fresh; k++)
                win[nleft + k] = next + k;
            next += fresh;
            shuffle_round(seed, index, cand, n_cand, win, part, ok, m, resv, team);
            nleft = 0;
            for (int64_t k = 0; k < m; k++)
                if (!ok[k])
                    left[nleft++] = win[k];
        }
    }
    sim_free(resv);
    sim_free(buf);
    sim_free(ok);
    for (int64_t i = next; i < n; i++)
        sim_world_pick(seed, index, cand, n_cand, i);
}

int sim_world_init(const sim_scenario *sc, int threads, float *field, uint32_t *agents,
                   sim_err *err)
{
    int w = sc->width, h = sc->height;
    int64_t cells = (int64_t)w * h;
    int64_t n = sim_scenario_agent_count(sc);
    if (n > cells)
        return sim_err_set(err, SIM_EINVAL, "agents: %lld agents do not fit in %lld cells",
                           (long long)n, (long long)cells);

    /* The caller's thread count: a sweep runs many worlds at once, one thread each, and a team
     * of every core per world would oversubscribe the machine many times over. */
    int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(team)
    for (int64_t i = 0; i < cells; i++) {
        field[i] = sim_initial_cell(sc->seed, (uint64_t)i, sc->initial, sc->init_noise);
    }
    if (n == 0)
        return SIM_OK;

    /* Candidate cells: all of them, or those of a centred disk just large enough to hold the
     * agents at 50% density (the whole grid if that disk does not fit). */
    uint32_t *cand = sim_malloc_array((size_t)cells, sizeof *cand);
    if (!cand)
        return sim_err_set(err, SIM_ENOMEM, "out of memory placing %lld agents", (long long)n);
    int64_t n_cand = 0;
    if (sc->placement == SIM_PLACE_CENTER) {
        double radius = sqrt((double)n * 2.0 / 3.14159265358979);
        double cx = (w - 1) * 0.5, cy = (h - 1) * 0.5;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double dx = x - cx, dy = y - cy;
                if (dx * dx + dy * dy <= radius * radius)
                    cand[n_cand++] = (uint32_t)((int64_t)y * w + x);
            }
    }
    if (n_cand < n) {
        n_cand = cells;
#pragma omp parallel for schedule(static) num_threads(team)
        for (int64_t i = 0; i < cells; i++)
            cand[i] = (uint32_t)i;
    }
    /* distinct cells chosen uniformly: the first n of a partial shuffle */
    sim_world_shuffle(sc->seed, 0, cand, n_cand, n, team);
    memcpy(agents, cand, (size_t)n * sizeof *agents);
    sim_free(cand);
    return SIM_OK;
}

/* 1 when every agent's cell is inside the grid and no cell holds two agents, on `team` threads
 * (a bit a cell, set atomically); -1 without the memory. */
static int agents_distinct(const uint32_t *agents, int64_t n, int64_t cells, int team)
{
    uint64_t *bits = sim_calloc((size_t)((cells + 63) / 64), sizeof *bits);
    if (!bits)
        return -1;
    int bad = 0;
#pragma omp parallel for schedule(static) num_threads(team) reduction(| : bad)
    for (int64_t i = 0; i < n; i++) {
        const uint32_t c = agents[i];
        if ((int64_t)c >= cells) {
            bad = 1;
            continue;
        }
        const uint64_t bit = 1ull << (c & 63);
        if (__atomic_fetch_or(&bits[c >> 6], bit, __ATOMIC_RELAXED) & bit)
            bad = 1;
    }
    sim_free(bits);
    return !bad;
}

int sim_world_check_agents(const sim_scenario *sc, const uint32_t *agents, int64_t n,
                           int threads, sim_err *err)
{
    int64_t cells = (int64_t)sc->width * sc->height;
    int team = threads > 0 ? threads : omp_get_max_threads();
    /* many agents on several threads: a parallel pass, and the serial one below only to name
     * the first offender when there is one */
    if (team > 1 && n >= (1 << 20) && agents_distinct(agents, n, cells, team) == 1)
        return SIM_OK;
    uint8_t *seen = sim_calloc((size_t)cells, 1);
    if (!seen)
        return sim_err_set(err, SIM_ENOMEM, "out of memory checking %lld agents", (long long)n);
    int rc = SIM_OK;
    for (int64_t i = 0; i < n; i++) {
        if ((int64_t)agents[i] >= cells) {
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u outside the %dx%d grid",
                             (long long)i, agents[i], sc->width, sc->height);
            break;
        }
        if (seen[agents[i]]++) {
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u already holds another agent",
                             (long long)i, agents[i]);
            break;
        }
    }
    sim_free(seen);
    return rc;
}
