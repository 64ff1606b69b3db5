/* ckpt_fixup.h - test helper: recomputes the CRCs of a checkpoint image in place (format in
 * sim/sim_checkpoint.h), so that tests and the fuzzer can change a field on purpose and reach
 * the checks behind the CRCs. Walks as far as the lengths allow; never reads out of bounds. */
#ifndef CKPT_FIXUP_H
#define CKPT_FIXUP_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

static inline uint64_t ckpt_fixup_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static inline void ckpt_fixup_put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Header CRC (and, when set_size, the file size field), then each section's CRC. */
static inline void ckpt_fixup(uint8_t *buf, size_t len, int set_size)
{
    if (len < 36)
        return;
    if (set_size)
        ckpt_fixup_put(buf + 24, len, 8);
    ckpt_fixup_put(buf + 32, crc32(0, buf, 32), 4);
    size_t pos = 36;
    while (len - pos >= 12) {
        uint64_t n = ckpt_fixup_get(buf + pos + 4, 8);
        if (n > len - pos - 12 || len - pos - 12 - n < 4)
            return;
        uLong crc = crc32(0, Z_NULL, 0);
        size_t span = (size_t)n + 12, at = pos;
        while (span > 0) { /* zlib takes 32-bit lengths */
            uInt c = span > (1u << 30) ? (1u << 30) : (uInt)span;
            crc = crc32(crc, buf + at, c);
            at += c;
            span -= c;
        }
        ckpt_fixup_put(buf + pos + 12 + n, crc, 4);
        pos += 12 + (size_t)n + 4;
    }
}

#endif
