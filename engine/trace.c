/* trace.c — StepTrace in one allocation: new, clear, copy, and its key totals. */
#include "trace.h"

#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Each array starts on a max_align_t boundary, whatever the field order. */
static size_t trace_round(size_t n) { return (n + alignof(max_align_t) - 1) / alignof(max_align_t) * alignof(max_align_t); }

/* One allocation holds the struct and all its arrays, so a copy of a trace
 * is a pointer fix-up away and a history of traces is cheap to keep. */
static size_t trace_bytes(int n_layers, int cells, int top_k) {
    size_t n = trace_round(sizeof(StepTrace)) + trace_round((size_t)n_layers * sizeof(int32_t)); /* layer_window */
#define TRACE_SIZE(name, type, missing, sql, show, title, short_name, doc) n += trace_round((size_t)cells * sizeof(type));
    TRACE_HEAD_FIELDS(TRACE_SIZE)
#undef TRACE_SIZE
    n += trace_round((size_t)cells * sizeof(int32_t)); /* kv_read */
    size_t top = (size_t)cells * (size_t)top_k;
    return n + trace_round(top * sizeof(int32_t)) + trace_round(top * sizeof(float));
}

static void trace_wire(StepTrace *t, int cells) {
    char *p = (char *)t + trace_round(sizeof(StepTrace));
    t->layer_window = (int32_t *)p;
    p += trace_round((size_t)t->n_layers * sizeof(int32_t));
#define TRACE_WIRE(name, type, missing, sql, show, title, short_name, doc) t->name = (type *)p, p += trace_round((size_t)cells * sizeof(type));
    TRACE_HEAD_FIELDS(TRACE_WIRE)
#undef TRACE_WIRE
    t->kv_read = (int32_t *)p;
    p += trace_round((size_t)cells * sizeof(int32_t));
    size_t top = (size_t)cells * (size_t)t->top_k;
    t->top_pos = t->top_k ? (int32_t *)p : NULL;
    p += trace_round(top * sizeof(int32_t));
    t->top_w = t->top_k ? (float *)p : NULL;
}

StepTrace *trace_new(int n_layers, int n_heads) { return trace_new_top(n_layers, n_heads, 0); }

StepTrace *trace_new_top(int n_layers, int n_heads, int top_k) {
    if (n_layers <= 0 || n_heads <= 0 || n_layers > 4096 || n_heads > 4096) return NULL;
    if (top_k < 0 || top_k > TRACE_TOP_MAX) return NULL;
    int cells = n_layers * n_heads;
    StepTrace *t = malloc(trace_bytes(n_layers, cells, top_k));
    if (!t) return NULL;
    t->n_layers = n_layers;
    t->n_heads = n_heads;
    t->top_k = top_k;
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
    t->n_far = -1;
    t->n_kv_heads = -1;
    for (int l = 0; l < t->n_layers; l++) t->layer_window[l] = -1;
    for (int i = 0; i < cells; i++) {
#define TRACE_CLEAR(name, type, missing, sql, show, title, short_name, doc) t->name[i] = (type)(missing);
        TRACE_HEAD_FIELDS(TRACE_CLEAR)
#undef TRACE_CLEAR
        t->kv_read[i] = -1;
    }
    for (size_t i = 0; i < (size_t)cells * (size_t)t->top_k; i++) t->top_pos[i] = -1, t->top_w[i] = NAN;
}

void trace_copy(StepTrace *dst, const StepTrace *src) {
    int cells = trace_cells(src);
    memcpy(dst, src, trace_bytes(src->n_layers, cells, src->top_k));
    trace_wire(dst, cells);
}

void trace_free(StepTrace *t) { free(t); }

long trace_kv_full(const StepTrace *t) {
    return t->n_kv_heads > 0 && t->pos >= 0 ? (long)t->n_layers * t->n_kv_heads * (t->pos + 1) : -1;
}

long trace_kv_read_total(const StepTrace *t) {
    long sum = 0;
    int any = 0, cells = trace_cells(t);
    for (int i = 0; i < cells; i++)
        if (t->kv_read[i] >= 0) sum += t->kv_read[i], any = 1;
    return any ? sum : -1;
}
