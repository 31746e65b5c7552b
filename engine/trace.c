#include "trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One allocation holds the struct and all its arrays, so a copy of a trace
 * is a pointer fix-up away and a history of traces is cheap to keep. */
static size_t trace_bytes(int cells) {
    return sizeof(StepTrace) + (size_t)cells * (5 * sizeof(float) + sizeof(int8_t) + sizeof(int32_t)) + 16;
}

static void trace_wire(StepTrace *t, int cells) {
    char *p = (char *)(t + 1);
    t->score = (float *)p;          p += cells * sizeof(float);
    t->oracle_mass = (float *)p;    p += cells * sizeof(float);
    t->oracle_err = (float *)p;     p += cells * sizeof(float);
    t->qada_mass = (float *)p;      p += cells * sizeof(float);
    t->qada_bulk_mass = (float *)p; p += cells * sizeof(float);
    t->keys_read = (int32_t *)p;    p += cells * sizeof(int32_t);
    t->gate = (int8_t *)p;
}

StepTrace *trace_new(int n_layers, int n_heads) {
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096) return NULL;
    int cells = n_layers * n_heads;
    StepTrace *t = malloc(trace_bytes(cells));
    if (!t) return NULL;
    t->n_layers = n_layers;
    t->n_heads = n_heads;
    trace_wire(t, cells);
    trace_clear(t);
    return t;
}

void trace_clear(StepTrace *t) {
    int cells = trace_cells(t);
    t->pos = -1;
    t->token = -1;
    t->is_prompt = 0;
    t->piece[0] = '\0';
    t->logprob = NAN;
    t->entropy = NAN;
    t->step_us = 0;
    for (int i = 0; i < cells; i++) {
        t->score[i] = NAN;
        t->oracle_mass[i] = NAN;
        t->oracle_err[i] = NAN;
        t->qada_mass[i] = NAN;
        t->qada_bulk_mass[i] = NAN;
        t->keys_read[i] = -1;
        t->gate[i] = -1;
    }
}

void trace_copy(StepTrace *dst, const StepTrace *src) {
    int cells = trace_cells(src);
    memcpy(dst, src, trace_bytes(cells));
    trace_wire(dst, cells);
}

void trace_free(StepTrace *t) { free(t); }
