/* sim_checkpoint.c - checkpoint files: encoding and decoding of the format in sim_checkpoint.h
 * through one byte sink (a file descriptor or a memory buffer) and one byte source (a FILE or
 * a memory buffer), crash-safe writes, and the checks that keep a hostile file from being
 * trusted. Streams the field straight to and from its buffer: no copy of the state is made. */
#include "sim_checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "sim_alloc.h"
#include "sim_model.h"
#include "sim_world.h"

static const uint8_t signature[8] = {0x89, 'H', 'Z', 'C', 0x0d, 0x0a, 0x1a, 0x0a};
#define BYTE_ORDER_MARK 0x0A0B0C0Du
#define N_SECTIONS 5 /* the most: version 1 has the first 4 */
#define STEP_BYTES 56
#define SECTION_OVERHEAD 16 /* tag, length, CRC */

enum { TAG_SCEN, TAG_STEP, TAG_FELD, TAG_AGNT, TAG_LIFE };
static const char tag_text[N_SECTIONS][5] = {"SCEN", "STEP", "FELD", "AGNT", "LIFE"};
static const char *const tag_name[N_SECTIONS] = {"scenario", "step", "field", "agents",
                                                 "life"};

static int sections(const sim_checkpoint *ck)
{
    return ck->version == 2 ? 5 : 4;
}

static uint64_t life_bytes(const sim_checkpoint *ck)
{
    return 4 + (uint64_t)ck->n_agents * 16;
}

/* ---- little-endian helpers: byte by byte, so the host's order never matters ---- */

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int host_is_little_endian(void)
{
    const uint32_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Swaps 4-byte words in place on a big-endian host (floats and u32 share the treatment). */
static void words_to_host(void *p, size_t n)
{
    if (host_is_little_endian())
        return;
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++, b += 4) {
        uint8_t t0 = b[0], t1 = b[1];
        b[0] = b[3];
        b[1] = b[2];
        b[2] = t1;
        b[3] = t0;
    }
}

static uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return crc;
}

/* ---- the scenario as text ---- */

/* Renders ck's scenario (output.dir replaced by ".") into buf; returns its length, or 0 when it
 * does not fit in SIM_CKPT_SCENARIO_MAX bytes. */
static size_t scenario_text(const sim_checkpoint *ck, char *buf, size_t cap)
{
    sim_scenario sc = ck->sc;
    strcpy(sc.dir, ".");
    FILE *m = fmemopen(buf, cap, "w");
    if (!m)
        return 0;
    sim_scenario_write_ini(&sc, m);
    long n = ftell(m);
    int bad = ferror(m);
    fclose(m);
    return bad || n <= 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static uint64_t file_size(const sim_checkpoint *ck, size_t n_text)
{
    uint64_t cells = (uint64_t)ck->sc.width * (uint64_t)ck->sc.height;
    return SIM_CKPT_HEADER_BYTES + (uint64_t)sections(ck) * SECTION_OVERHEAD + n_text +
           STEP_BYTES + cells * 4 * (uint64_t)ck->n_fields + (uint64_t)ck->n_agents * 4 +
           (ck->version == 2 ? life_bytes(ck) : 0);
}

uint64_t sim_checkpoint_file_size(const sim_checkpoint *ck)
{
    char text[SIM_CKPT_SCENARIO_MAX + 1];
    size_t n = scenario_text(ck, text, sizeof text);
    return n == 0 ? 0 : file_size(ck, n);
}

/* ---- writing: one sink, to a descriptor or to memory ---- */

typedef struct sink {
    int fd;       /* -1: memory */
    uint8_t *mem; /* memory sink: exactly `cap` bytes */
    size_t pos, cap;
    uint32_t crc; /* running CRC of the current section */
    int os_errno; /* first write error */
} sink;

static int sink_put(sink *k, const void *p, size_t n)
{
    k->crc = crc_update(k->crc, p, n);
    if (k->fd < 0) {
        if (n > k->cap - k->pos)
            return -1; /* cannot happen: the size is computed first */
        memcpy(k->mem + k->pos, p, n);
        k->pos += n;
        return 0;
    }
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(k->fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            k->os_errno = w < 0 ? errno : EIO;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* 4-byte words (floats or u32) in little-endian order; converted in chunks on big-endian. */
static int sink_put_words(sink *k, const void *p, size_t n)
{
    if (host_is_little_endian())
        return sink_put(k, p, n * 4);
    uint8_t chunk[4096];
    const uint8_t *b = p;
    while (n > 0) {
        size_t m = n < sizeof chunk / 4 ? n : sizeof chunk / 4;
        memcpy(chunk, b, m * 4);
        words_to_host(chunk, m); /* the swap is its own inverse */
        if (sink_put(k, chunk, m * 4) != 0)
            return -1;
        b += m * 4;
        n -= m;
    }
    return 0;
}

static int section_begin(sink *k, int tag, uint64_t length)
{
    uint8_t h[12];
    memcpy(h, tag_text[tag], 4);
    put_le(h + 4, length, 8);
    k->crc = (uint32_t)crc32(0, NULL, 0);
    return sink_put(k, h, sizeof h);
}

static int section_end(sink *k)
{
    uint8_t c[4];
    put_le(c, k->crc, 4);
    return sink_put(k, c, 4);
}

static int encode(const sim_checkpoint *ck, sink *k)
{
    char text[SIM_CKPT_SCENARIO_MAX + 1];
    size_t n_text = scenario_text(ck, text, sizeof text);
    uint64_t cells = (uint64_t)ck->sc.width * (uint64_t)ck->sc.height;
    if (n_text == 0)
        return -1;
    uint8_t h[SIM_CKPT_HEADER_BYTES];
    memcpy(h, signature, 8);
    put_le(h + 8, (uint64_t)ck->version, 4);
    put_le(h + 12, BYTE_ORDER_MARK, 4);
    put_le(h + 16, (uint64_t)sections(ck), 4);
    put_le(h + 20, 0, 4);
    put_le(h + 24, file_size(ck, n_text), 8);
    put_le(h + 32, crc_update((uint32_t)crc32(0, NULL, 0), h, 32), 4);
    uint8_t st[STEP_BYTES] = {0};
    put_le(st, (uint64_t)ck->step, 8);
    put_le(st + 8, ck->rng_key, 8);
    put_le(st + 16, (uint64_t)ck->n_agents, 8);
    put_le(st + 24, (uint64_t)ck->sc.width, 4);
    put_le(st + 28, (uint64_t)ck->sc.height, 4);
    put_le(st + 32, (uint64_t)ck->checkpoint_every, 8);
    memcpy(st + 40, ck->backend, strnlen(ck->backend, SIM_CKPT_BACKEND_MAX - 1));
    if (sink_put(k, h, sizeof h) || section_begin(k, TAG_SCEN, n_text) ||
        sink_put(k, text, n_text) || section_end(k) || section_begin(k, TAG_STEP, STEP_BYTES) ||
        sink_put(k, st, STEP_BYTES) || section_end(k) ||
        section_begin(k, TAG_FELD, cells * 4 * (uint64_t)ck->n_fields) ||
        sink_put_words(k, ck->field, cells * (uint64_t)ck->n_fields) || section_end(k) ||
        section_begin(k, TAG_AGNT, (uint64_t)ck->n_agents * 4) ||
        sink_put_words(k, ck->agents, (size_t)ck->n_agents) || section_end(k))
        return -1;
    if (ck->version != 2)
        return 0;
    uint8_t next[4];
    put_le(next, ck->next_id, 4);
    size_t n = (size_t)ck->n_agents;
    if (section_begin(k, TAG_LIFE, life_bytes(ck)) || sink_put(k, next, 4) ||
        sink_put_words(k, ck->ids, n) || sink_put_words(k, ck->species, n) ||
        sink_put_words(k, ck->energy, n) || sink_put_words(k, ck->age, n) || section_end(k))
        return -1;
    return 0;
}

int sim_checkpoint_encode(const sim_checkpoint *ck, uint8_t **out, size_t *len, sim_err *err)
{
    *out = NULL;
    *len = 0;
    uint64_t size = sim_checkpoint_file_size(ck);
    if (size == 0)
        return sim_err_set(err, SIM_EINVAL, "checkpoint: scenario text longer than %d bytes",
                           SIM_CKPT_SCENARIO_MAX);
    if (size > SIZE_MAX)
        return sim_err_set(err, SIM_ENOMEM, "checkpoint: %llu bytes do not fit in memory",
                           (unsigned long long)size);
    sink k = {-1, sim_malloc((size_t)size), 0, (size_t)size, 0, 0};
    if (!k.mem)
        return sim_err_set(err, SIM_ENOMEM, "checkpoint: out of memory for %llu bytes",
                           (unsigned long long)size);
    encode(ck, &k);
    *out = k.mem;
    *len = k.pos;
    return SIM_OK;
}

/* "dir/name" -> "dir" (or "." without a slash), for the directory fsync. */
static void dir_of(const char *path, char *dir, size_t cap)
{
    snprintf(dir, cap, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, cap, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
}

int sim_checkpoint_write(const sim_checkpoint *ck, const char *path, sim_err *err)
{
    char tmp[SIM_PATH_MAX + 32], prev[SIM_PATH_MAX + 32], prev_tmp[SIM_PATH_MAX + 32];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return sim_err_set(err, SIM_EINVAL, "%s: path too long", path);
    snprintf(prev, sizeof prev, "%s.prev", path);
    snprintf(prev_tmp, sizeof prev_tmp, "%s.prev.tmp", path);
    if (sim_checkpoint_file_size(ck) == 0)
        return sim_err_set(err, SIM_EINVAL, "%s: scenario text longer than %d bytes", path,
                           SIM_CKPT_SCENARIO_MAX);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    sink k = {fd, NULL, 0, 0, 0, 0};
    const char *what = NULL;
    int e = 0;
    if (encode(ck, &k) != 0) {
        what = "write failed";
        e = k.os_errno;
    } else if (fsync(fd) != 0) {
        what = "fsync failed";
        e = errno;
    }
    if (close(fd) != 0 && !what) {
        what = "close failed";
        e = errno;
    }
    if (what) {
        unlink(tmp);
        return sim_err_set(err, SIM_EIO, "%s: %s: %s", tmp, what, strerror(e));
    }
    /* Keep the previous checkpoint as .prev. A hard link keeps `path` in place throughout;
     * where links are not supported, a rename leaves a short window with only .prev. */
    struct stat st;
    if (stat(path, &st) == 0) {
        unlink(prev_tmp);
        if (link(path, prev_tmp) == 0) {
            if (rename(prev_tmp, prev) != 0) {
                e = errno;
                unlink(prev_tmp);
                unlink(tmp);
                return sim_err_set(err, SIM_EIO, "%s: cannot rename to %s: %s", prev_tmp, prev,
                                   strerror(e));
            }
        } else if (rename(path, prev) != 0) {
            e = errno;
            unlink(tmp);
            return sim_err_set(err, SIM_EIO, "%s: cannot keep as %s: %s", path, prev,
                               strerror(e));
        }
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        unlink(tmp);
        return sim_err_set(err, SIM_EIO, "%s: cannot rename to %s: %s", tmp, path, strerror(e));
    }
    char dir[SIM_PATH_MAX + 32];
    dir_of(path, dir, sizeof dir);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        int rc = fsync(dfd);
        e = errno;
        close(dfd);
        if (rc != 0 && e != EINVAL) /* some file systems cannot sync a directory */
            return sim_err_set(err, SIM_EIO, "%s: fsync of the directory failed: %s", dir,
                               strerror(e));
    }
    return SIM_OK;
}

/* ---- reading: one source, from a FILE or from memory ---- */

typedef struct source {
    FILE *f;            /* NULL: memory */
    const uint8_t *mem;
    uint64_t size, pos; /* total bytes available, bytes consumed */
    uint32_t crc;
    int os_errno;       /* read error on a FILE */
    int version;        /* from the header */
} source;

/* Reads exactly n bytes; -1 when the data ends first or a read fails (os_errno set). The
 * caller has checked n against the bytes left, so a short read means the file changed. */
static int src_get(source *s, void *p, size_t n)
{
    if (n > s->size - s->pos)
        return -1;
    if (s->f) {
        if (fread(p, 1, n, s->f) != n) {
            s->os_errno = ferror(s->f) ? errno : 0;
            return -1;
        }
    } else {
        memcpy(p, s->mem + s->pos, n);
    }
    s->pos += n;
    s->crc = crc_update(s->crc, p, n);
    return 0;
}

static int truncated(const char *name, source *s, uint64_t need, sim_err *err)
{
    if (s->os_errno)
        return sim_err_set(err, SIM_EIO, "%s: read error: %s", name, strerror(s->os_errno));
    return sim_err_set(err, SIM_EINVAL, "%s: truncated checkpoint: %llu bytes, %llu needed", name,
                       (unsigned long long)s->size, (unsigned long long)need);
}

/* Reads a section's tag and length and checks them: the right section in the right place, its
 * length equal to `want` (or at most `cap` when want is 0 for the variable scenario text), and
 * inside the data. Starts the section's CRC. */
static int section_open(source *s, int tag, uint64_t want, uint64_t cap, const char *name,
                        uint64_t *length, sim_err *err)
{
    uint8_t h[12];
    s->crc = (uint32_t)crc32(0, NULL, 0);
    if (src_get(s, h, sizeof h) != 0)
        return truncated(name, s, s->pos + sizeof h, err);
    if (memcmp(h, tag_text[tag], 4) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: expected the %s section "
                           "('%s') at byte %llu", name, tag_name[tag], tag_text[tag],
                           (unsigned long long)(s->pos - sizeof h));
    uint64_t n = get_le(h + 4, 8);
    if ((want && n != want) || (!want && n > cap))
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %s section of %llu bytes "
                           "(%s %llu)", name, tag_name[tag], (unsigned long long)n,
                           want ? "expected" : "allowed at most",
                           (unsigned long long)(want ? want : cap));
    if (n > s->size - s->pos || s->size - s->pos - n < 4)
        return truncated(name, s, s->pos + n + 4, err);
    *length = n;
    return SIM_OK;
}

static int section_close(source *s, int tag, const char *name, sim_err *err)
{
    uint32_t computed = s->crc;
    uint8_t c[4];
    if (src_get(s, c, 4) != 0)
        return truncated(name, s, s->pos + 4, err);
    uint32_t stored = (uint32_t)get_le(c, 4);
    if (stored != computed)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %s section CRC mismatch "
                           "(stored %08x, computed %08x)", name, tag_name[tag], stored, computed);
    return SIM_OK;
}

static int check_header(source *s, const char *name, sim_err *err)
{
    uint8_t h[SIM_CKPT_HEADER_BYTES];
    size_t have = s->size < sizeof h ? (size_t)s->size : sizeof h;
    if (src_get(s, h, have) != 0)
        return truncated(name, s, sizeof h, err);
    if (have < 8 ? memcmp(h, signature, have) != 0 : memcmp(h, signature, 8) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: not a Horizon checkpoint (bad signature)", name);
    if (have < sizeof h)
        return sim_err_set(err, SIM_EINVAL, "%s: truncated checkpoint: %llu bytes, shorter than "
                           "the %d-byte header", name, (unsigned long long)s->size,
                           SIM_CKPT_HEADER_BYTES);
    uint32_t bom = (uint32_t)get_le(h + 12, 4), version = (uint32_t)get_le(h + 8, 4);
    s->version = (int)version;
    if (bom == 0x0D0C0B0Au)
        return sim_err_set(err, SIM_EINVAL, "%s: wrong byte order: the checkpoint is big-endian "
                           "(byte-order mark 0a 0b 0c 0d); this horizon reads little-endian "
                           "checkpoints", name);
    if (bom != BYTE_ORDER_MARK)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint header (byte-order mark "
                           "%08x)", name, bom);
    if (version != 1 && version != 2)
        return sim_err_set(err, SIM_EINVAL, "%s: checkpoint format version %u; this horizon "
                           "reads versions 1 and %d (written by %s horizon, or corrupt)", name,
                           version, SIM_CKPT_VERSION,
                           version > SIM_CKPT_VERSION ? "a newer" : "an older");
    uint32_t stored = (uint32_t)get_le(h + 32, 4);
    uint32_t computed = crc_update((uint32_t)crc32(0, NULL, 0), h, 32);
    if (stored != computed)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint header (CRC mismatch: stored "
                           "%08x, computed %08x)", name, stored, computed);
    uint64_t size = get_le(h + 24, 8);
    if (get_le(h + 16, 4) != (version == 2 ? 5u : 4u) || get_le(h + 20, 4) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint header (%u sections, "
                           "reserved %u)", name, (unsigned)get_le(h + 16, 4),
                           (unsigned)get_le(h + 20, 4));
    if (size > s->size)
        return truncated(name, s, size, err);
    if (size < s->size)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %llu bytes where the header "
                           "says %llu (data after the end)", name, (unsigned long long)s->size,
                           (unsigned long long)size);
    return SIM_OK;
}

/* The scenario section: INI text without NUL bytes, parsed over the defaults. */
static int read_scenario(source *s, const char *name, sim_checkpoint *ck, sim_err *err)
{
    uint64_t n;
    int rc = section_open(s, TAG_SCEN, 0, SIM_CKPT_SCENARIO_MAX, name, &n, err);
    if (rc != SIM_OK)
        return rc;
    char *text = sim_malloc((size_t)n + 1);
    if (!text)
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
    if (src_get(s, text, (size_t)n) != 0) {
        sim_free(text);
        return truncated(name, s, s->pos + n, err);
    }
    text[n] = '\0';
    rc = section_close(s, TAG_SCEN, name, err);
    if (rc == SIM_OK && strlen(text) != n)
        rc = sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: NUL byte in the scenario",
                         name);
    if (rc == SIM_OK) {
        char where[SIM_PATH_MAX + 32];
        snprintf(where, sizeof where, "%s [scenario]", name);
        sim_scenario_defaults(&ck->sc);
        rc = sim_scenario_parse_string(&ck->sc, text, where, err);
        if (rc == SIM_ENOMEM)
            rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
    }
    sim_free(text);
    return rc;
}

/* The step section, checked against the scenario. */
static int read_step(source *s, const char *name, sim_checkpoint *ck, sim_err *err)
{
    uint64_t n;
    uint8_t st[STEP_BYTES];
    int rc = section_open(s, TAG_STEP, STEP_BYTES, 0, name, &n, err);
    if (rc != SIM_OK)
        return rc;
    if (src_get(s, st, STEP_BYTES) != 0)
        return truncated(name, s, s->pos + STEP_BYTES, err);
    if ((rc = section_close(s, TAG_STEP, name, err)) != SIM_OK)
        return rc;
    ck->step = (int64_t)get_le(st, 8);
    ck->rng_key = get_le(st + 8, 8);
    ck->n_agents = (int64_t)get_le(st + 16, 8);
    uint32_t w = (uint32_t)get_le(st + 24, 4), h = (uint32_t)get_le(st + 28, 4);
    ck->checkpoint_every = (int64_t)get_le(st + 32, 8);
    memcpy(ck->backend, st + 40, SIM_CKPT_BACKEND_MAX);
    if (ck->backend[SIM_CKPT_BACKEND_MAX - 1] != '\0')
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: backend name", name);
    if (w != (uint32_t)ck->sc.width || h != (uint32_t)ck->sc.height)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %ux%u cells in the step "
                           "section, %dx%d in the scenario", name, w, h, ck->sc.width,
                           ck->sc.height);
    if (ck->rng_key != ck->sc.seed)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: RNG key %llu differs from "
                           "run.seed %llu", name, (unsigned long long)ck->rng_key,
                           (unsigned long long)ck->sc.seed);
    int64_t cells = (int64_t)ck->sc.width * ck->sc.height;
    if (ck->version == 1 && ck->n_agents != sim_scenario_agent_count(&ck->sc))
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %lld agents, the scenario "
                           "has %lld", name, (long long)ck->n_agents,
                           (long long)sim_scenario_agent_count(&ck->sc));
    if (ck->version == 2 && (ck->n_agents < 0 || ck->n_agents > cells))
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: %lld agents in %lld cells",
                           name, (long long)ck->n_agents, (long long)cells);
    if (ck->step < 0 || ck->checkpoint_every < 0)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: step %lld, period %lld",
                           name, (long long)ck->step, (long long)ck->checkpoint_every);
    return SIM_OK;
}

/* A section of 4-byte words read straight into `dst` (allocated here, once its length has been
 * checked against the data). */
static int read_words(source *s, int tag, uint64_t count, const char *name, void **dst,
                      sim_err *err)
{
    uint64_t n;
    /* want = 0 with cap = 0 accepts exactly an empty section, so count 0 needs no special case */
    int rc = section_open(s, tag, count * 4, 0, name, &n, err);
    if (rc != SIM_OK)
        return rc;
    *dst = sim_malloc_array((size_t)(count ? count : 1), 4);
    if (!*dst)
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory for the %s (%llu bytes)", name,
                           tag_name[tag], (unsigned long long)(count * 4));
    if (src_get(s, *dst, (size_t)count * 4) != 0)
        return truncated(name, s, s->pos + count * 4, err);
    words_to_host(*dst, (size_t)count);
    return section_close(s, tag, name, err);
}

/* The lowest field value a run of sc can produce, or -INFINITY when there is none. Every
 * source of values is the initial value plus a non-negative noise, a deposit, or a fixed edge;
 * a Jacobi update is a weighted mean of values with weights >= 0, and decay multiplies by a
 * factor in (0, 1]. When every source is >= 0 every product and sum is, in floating point too,
 * so 0 is a floor. When one is negative there is none to check: a negative deposit accumulates,
 * and below a negative edge or initial value rounding drifts the field lower sweep after sweep
 * (fl(1 - a) + a can exceed 1: 3.5e-4 of the value after 20000 sweeps at a = 2.5e-5, measured),
 * so min(0, sources) as a bound would refuse checkpoints of real runs. */
static float field_floor(const sim_scenario *sc)
{
    int negative = sc->deposit < 0.0f || sc->initial < 0.0f;
    if (sc->boundary == SIM_BOUNDARY_FIXED)
        negative |= sc->fixed_top < 0.0f || sc->fixed_bottom < 0.0f || sc->fixed_left < 0.0f ||
                    sc->fixed_right < 0.0f;
    return negative ? -INFINITY : 0.0f;
}

/* Refuses field values that no run produces (NaN and infinities always; values under
 * field_floor unless flags has SIM_CKPT_ANY_SIGN) and that a resumed run would carry into its
 * statistics. */
static int check_field(const sim_checkpoint *ck, int flags, const char *name, sim_err *err)
{
    const int w = ck->sc.width;
    const int64_t cells = (int64_t)w * ck->sc.height * ck->n_fields;
    /* a model's deposits, growth and sources are not bounded below by one rule: finite only */
    const float floor_value = flags & SIM_CKPT_ANY_SIGN || ck->version == 2
                                  ? -INFINITY
                                  : field_floor(&ck->sc);
    for (int64_t i = 0; i < cells; i++) {
        float v = ck->field[i];
        if (isfinite(v) && v >= floor_value)
            continue;
        int x = (int)(i % w), y = (int)(i / w % ck->sc.height);
        if (!isfinite(v))
            return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: non-finite field value "
                               "at cell %d,%d (%g)", name, x, y, (double)v);
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: field value %g at cell %d,%d "
                           "is below %g, which no run of this scenario produces (its deposit, "
                           "initial value and fixed edges are >= 0)", name, (double)v, x, y,
                           (double)floor_value);
    }
    return SIM_OK;
}

/* Sets ck's version and field count from the file's version and the scenario's model. */
static int model_shape(source *s, const char *name, sim_checkpoint *ck, sim_err *err)
{
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
    int rc = sim_model_build(&ck->sc, m, err);
    ck->version = s->version;
    ck->n_fields = s->version == 2 ? m->n_fields : 1;
    if (rc == SIM_OK && s->version == 1 && !m->plain)
        rc = sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: format version 1 for a "
                         "model with several fields, species, walls or maps (version 2)", name);
    sim_free(m);
    return rc;
}

/* The LIFE section (version 2): next_id and the four per-agent arrays, then their checks. */
static int read_life(source *s, const char *name, sim_checkpoint *ck, sim_err *err)
{
    uint64_t len, n = (uint64_t)ck->n_agents;
    int rc = section_open(s, TAG_LIFE, life_bytes(ck), 0, name, &len, err);
    if (rc != SIM_OK)
        return rc;
    uint8_t next[4];
    if (src_get(s, next, 4) != 0)
        return truncated(name, s, s->pos + 4, err);
    ck->next_id = (uint32_t)get_le(next, 4);
    void **arrays[4] = {(void **)&ck->ids, (void **)&ck->species, (void **)&ck->energy,
                        (void **)&ck->age};
    for (int a = 0; a < 4; a++) {
        *arrays[a] = sim_malloc_array((size_t)(n ? n : 1), 4);
        if (!*arrays[a])
            return sim_err_set(err, SIM_ENOMEM, "%s: out of memory for the agents", name);
        if (src_get(s, *arrays[a], (size_t)n * 4) != 0)
            return truncated(name, s, s->pos + n * 4, err);
        words_to_host(*arrays[a], (size_t)n);
    }
    ck->cap = ck->n_agents;
    if ((rc = section_close(s, TAG_LIFE, name, err)) != SIM_OK)
        return rc;
    int n_species = ck->sc.n_species > 0 ? ck->sc.n_species : 1;
    for (int64_t i = 0; i < ck->n_agents; i++) {
        if (ck->species[i] >= (uint32_t)n_species || (i > 0 && ck->ids[i] <= ck->ids[i - 1]) ||
            ck->ids[i] >= ck->next_id || !isfinite(ck->energy[i]) || ck->age[i] < 0)
            return sim_err_set(err, SIM_EINVAL, "%s: corrupt checkpoint: agent %lld (id %u of "
                               "next %u, species %u, energy %g, age %d)", name, (long long)i,
                               ck->ids[i], ck->next_id, ck->species[i], (double)ck->energy[i],
                               ck->age[i]);
    }
    return SIM_OK;
}

static int decode(source *s, const char *name, int flags, sim_checkpoint *ck, sim_err *err)
{
    memset(ck, 0, sizeof *ck);
    int rc = check_header(s, name, err);
    if (rc == SIM_OK)
        rc = read_scenario(s, name, ck, err);
    if (rc == SIM_OK)
        rc = model_shape(s, name, ck, err);
    if (rc == SIM_OK)
        rc = read_step(s, name, ck, err);
    if (rc == SIM_OK)
        rc = read_words(s, TAG_FELD,
                        (uint64_t)ck->sc.width * (uint64_t)ck->sc.height * (uint64_t)ck->n_fields,
                        name, (void **)&ck->field, err);
    if (rc == SIM_OK)
        rc = read_words(s, TAG_AGNT, (uint64_t)ck->n_agents, name, (void **)&ck->agents, err);
    if (rc == SIM_OK && ck->version == 2)
        rc = read_life(s, name, ck, err);
    if (rc == SIM_OK) {
        rc = sim_world_check_agents(&ck->sc, ck->agents, ck->n_agents, 1, err);
        if (rc == SIM_EINVAL) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            sim_err_set(err, rc, "%s: corrupt checkpoint: %s", name, why);
        }
    }
    if (rc == SIM_OK)
        rc = check_field(ck, flags, name, err);
    if (rc != SIM_OK)
        sim_checkpoint_release(ck);
    return rc;
}

int sim_checkpoint_decode(const uint8_t *data, size_t len, const char *name, sim_checkpoint *ck,
                          sim_err *err)
{
    source s = {NULL, data, len, 0, 0, 0, 0};
    return decode(&s, name, 0, ck, err);
}

int sim_checkpoint_read(const char *path, sim_checkpoint *ck, sim_err *err)
{
    return sim_checkpoint_read_flags(path, 0, ck, err);
}

int sim_checkpoint_read_flags(const char *path, int flags, sim_checkpoint *ck, sim_err *err)
{
    memset(ck, 0, sizeof *ck);
    /* O_NONBLOCK: a FIFO given by mistake is refused below instead of waiting for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, "%s: cannot open checkpoint: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return sim_err_set(err, SIM_EIO, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return sim_err_set(err, SIM_EINVAL, "%s: not a regular file", path);
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return sim_err_set(err, SIM_ENOMEM, "%s: %s", path, strerror(e));
    }
    source s = {f, NULL, (uint64_t)st.st_size, 0, 0, 0, 0};
    int rc = decode(&s, path, flags, ck, err);
    fclose(f);
    return rc;
}

/* ---- state in and out of a simulation ---- */

/* (Re)allocates the version-2 agent arrays for cap agents. */
static int reserve_life(sim_checkpoint *ck, int64_t cap, sim_err *err)
{
    size_t n = (size_t)(cap > 0 ? cap : 1);
    void **arrays[5] = {(void **)&ck->agents, (void **)&ck->ids, (void **)&ck->species,
                        (void **)&ck->energy, (void **)&ck->age};
    for (int a = 0; a < 5; a++) {
        void *p = sim_realloc(*arrays[a], n * 4);
        if (!p)
            return sim_err_set(err, SIM_ENOMEM, "out of memory for checkpoint buffers (%lld "
                               "agents)", (long long)cap);
        *arrays[a] = p;
    }
    ck->cap = cap;
    return SIM_OK;
}

/* Zeroes bytes of p, 1 MiB slices spread over the cores. */
static void touch(void *p, size_t bytes)
{
    const size_t slice = (size_t)1 << 20;
    const int64_t slices = (int64_t)((bytes + slice - 1) / slice);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < slices; k++) {
        const size_t at = (size_t)k * slice;
        memset((char *)p + at, 0, bytes - at < slice ? bytes - at : slice);
    }
}

int sim_checkpoint_init(sim_checkpoint *ck, const sim_scenario *sc, sim_err *err)
{
    memset(ck, 0, sizeof *ck);
    ck->sc = *sc;
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int rc = sim_model_build(sc, m, err);
    ck->version = rc == SIM_OK && !m->plain ? 2 : 1;
    ck->n_fields = ck->version == 2 ? m->n_fields : 1;
    ck->n_agents = ck->version == 2 ? m->agents : sim_scenario_agent_count(sc);
    sim_free(m);
    if (rc != SIM_OK)
        return rc;
    size_t cells = (size_t)sc->width * (size_t)sc->height * (size_t)ck->n_fields;
    ck->field = sim_malloc_array(cells, sizeof *ck->field);
    if (ck->version == 2)
        rc = reserve_life(ck, ck->n_agents, err);
    else
        ck->agents = sim_malloc_array((size_t)(ck->n_agents > 0 ? ck->n_agents : 1),
                                      sizeof *ck->agents);
    if (!ck->field || !ck->agents || rc != SIM_OK) {
        sim_checkpoint_release(ck);
        return sim_err_set(err, SIM_ENOMEM, "out of memory for checkpoint buffers (%dx%d world)",
                           sc->width, sc->height);
    }
    /* Touch the pages now: the memory a run needs is committed (and shows in its resident size)
     * from the start, not at the first checkpoint, which may be the one a signal asks for. In
     * slices on every core: for a large world the page faults are most of the run's setup. */
    touch(ck->field, cells * sizeof *ck->field);
    touch(ck->agents, (size_t)(ck->n_agents > 0 ? ck->n_agents : 1) * sizeof *ck->agents);
    return SIM_OK;
}

void sim_checkpoint_release(sim_checkpoint *ck)
{
    if (!ck)
        return;
    sim_free(ck->field);
    sim_free(ck->agents);
    sim_free(ck->ids);
    sim_free(ck->species);
    sim_free(ck->energy);
    sim_free(ck->age);
    ck->field = NULL;
    ck->agents = NULL;
    ck->ids = ck->species = NULL;
    ck->energy = NULL;
    ck->age = NULL;
}

/* A version-2 capture: the whole state through sim_read_state. */
static int capture_state(sim_checkpoint *ck, sim *s, sim_err *err)
{
    sim_state st;
    int rc = sim_read_state(s, &st);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, "checkpoint: %s", sim_errmsg(s));
    if (st.n > ck->cap && (rc = reserve_life(ck, st.n, err)) != SIM_OK) {
        sim_state_free(&st);
        return rc;
    }
    size_t cells = (size_t)st.cells, n = (size_t)st.n;
    for (int f = 0; f < ck->n_fields; f++)
        memcpy(ck->field + (size_t)f * cells, st.field[f], cells * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        ck->agents[i] = st.cell[i];
        ck->ids[i] = st.id[i];
        ck->species[i] = st.species[i];
        ck->energy[i] = st.energy[i];
        ck->age[i] = st.age[i];
    }
    ck->n_agents = st.n;
    ck->next_id = st.next_id;
    sim_state_free(&st);
    return SIM_OK;
}

int sim_checkpoint_capture(sim_checkpoint *ck, sim *s, int64_t checkpoint_every, sim_err *err)
{
    int ticket = -1;
    int rc = sim_checkpoint_capture_begin(ck, s, checkpoint_every, &ticket, err);
    return rc == SIM_OK ? sim_read_wait(s, ticket, err) : rc;
}

int sim_checkpoint_capture_begin(sim_checkpoint *ck, sim *s, int64_t checkpoint_every,
                                 int *field_ticket, sim_err *err)
{
    *field_ticket = -1;
    const sim_scenario *sc = sim_get_scenario(s);
    if (!ck->field || !ck->agents || sc->width != ck->sc.width || sc->height != ck->sc.height ||
        (ck->version == 1 && sim_agent_count(s) != ck->n_agents))
        return sim_err_set(err, SIM_EINVAL, "checkpoint: buffers not sized for this simulation");
    int rc;
    if (ck->version == 2) {
        if ((rc = capture_state(ck, s, err)) != SIM_OK)
            return rc;
    } else {
        rc = sim_read_field_begin(s, ck->field, field_ticket);
        if (rc == SIM_OK)
            rc = sim_read_agents(s, ck->agents);
        if (rc != SIM_OK) {
            sim_err late; /* the copy into ck->field, if begun, ends before ck is given back */
            sim_read_wait(s, *field_ticket, &late);
            *field_ticket = -1;
            return sim_err_set(err, rc, "checkpoint: %s", sim_errmsg(s));
        }
    }
    ck->sc = *sc;
    ck->step = sim_steps_done(s);
    ck->rng_key = sc->seed;
    ck->checkpoint_every = checkpoint_every;
    memset(ck->backend, 0, sizeof ck->backend);
    snprintf(ck->backend, sizeof ck->backend, "%s", sim_get_backend(s)->name);
    return SIM_OK;
}

int sim_checkpoint_restore(const sim_checkpoint *ck, const sim_backend_ops *ops, int threads,
                           sim **out, sim_err *err)
{
    if (ck->version != 2)
        return sim_create_from_state(&ck->sc, ops, threads, ck->step, ck->field, ck->agents,
                                     ck->n_agents, out, err);
    *out = NULL;
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    sim_state st;
    int rc = sim_model_build(&ck->sc, m, err);
    if (rc == SIM_OK)
        rc = sim_state_alloc(m, ck->n_agents, &st, err);
    if (rc != SIM_OK) {
        sim_free(m);
        return rc;
    }
    size_t cells = (size_t)st.cells, n = (size_t)ck->n_agents;
    for (int f = 0; f < ck->n_fields; f++)
        memcpy(st.field[f], ck->field + (size_t)f * cells, cells * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        st.cell[i] = ck->agents[i];
        st.id[i] = ck->ids[i];
        st.species[i] = (uint8_t)ck->species[i];
        st.energy[i] = ck->energy[i];
        st.age[i] = ck->age[i];
    }
    st.n = ck->n_agents;
    st.next_id = ck->next_id;
    rc = sim_model_load_maps(&ck->sc, m, &st, err);
    if (rc == SIM_OK)
        rc = sim_create_from_model_state(&ck->sc, ops, threads, ck->step, &st, out, err);
    sim_state_free(&st);
    sim_free(m);
    return rc;
}
