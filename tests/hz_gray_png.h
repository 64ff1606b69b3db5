/* hz_gray_png.h - writes 8-bit grayscale PNGs for tests that need maps (walls, capacities,
 * masks). Include after <cmocka.h>; links with libpng. */
#ifndef HZ_GRAY_PNG_H
#define HZ_GRAY_PNG_H

#include <png.h>
#include <stdint.h>
#include <stdio.h>

/* Writes w x h gray bytes (row-major) to path; 0 on success. */
static inline int hz_write_gray_png(const char *path, const uint8_t *gray, int w, int h)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(gray + (size_t)y * (size_t)w));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return fclose(f) == 0 ? 0 : -1;
}

#endif
