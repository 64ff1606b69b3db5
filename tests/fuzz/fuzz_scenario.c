/* fuzz_scenario.c - libFuzzer harness for the scenario parser (sim_scenario_parse_string), the
 * path every scenario file and every checkpoint's scenario takes. Besides not crashing, a text
 * that parses must survive the round trip: written back as INI (sim_scenario_write_ini, what a
 * checkpoint stores) and parsed again, it gives the same scenario. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *ini_text(const sim_scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        abort();
    sim_scenario_write_ini(sc, m);
    fclose(m);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sim_scenario sc;
    sim_err err;
    sim_scenario_defaults(&sc);
    int rc = sim_scenario_parse_string(&sc, text, "fuzz.ini", &err);
    free(text);
    if (rc != SIM_OK) {
        if (err.msg[0] == '\0' || strlen(err.msg) >= sizeof err.msg)
            abort(); /* every failure says what was wrong */
        return 0;
    }
    /* output.dir is free text that INI cannot always carry (see README); checkpoints store "." */
    strcpy(sc.dir, ".");
    char *first = ini_text(&sc);
    sim_scenario back;
    sim_scenario_defaults(&back);
    if (sim_scenario_parse_string(&back, first, "round-trip", &err) != SIM_OK) {
        fprintf(stderr, "written scenario does not parse back: %s\n%s", err.msg, first);
        abort();
    }
    char *second = ini_text(&back);
    if (strcmp(first, second) != 0) {
        fprintf(stderr, "round trip changed the scenario:\n%s---\n%s", first, second);
        abort();
    }
    free(first);
    free(second);
    return 0;
}
