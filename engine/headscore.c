/* headscore.c — per-unit head scores and the row pieces they are made of
 * (headscore.h). Sums run in double: a mean over thousands of rows of
 * float weights must not drift with the order the rows come in. */
#include "headscore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int headscore_init(HeadScores *s, int n_layers, int n_heads, int n_kv, Err *e) {
    memset(s, 0, sizeof *s);
    if (n_layers < 1 || n_heads < 1 || n_kv < 1 || n_heads % n_kv)
        return err_set(e, "%d layers of %d heads over %d KV heads make no head table", n_layers, n_heads, n_kv);
    s->n_layers = n_layers, s->n_heads = n_heads, s->n_kv = n_kv;
    return 0;
}

void headscore_free(HeadScores *s) {
    free(s->v);
    memset(s, 0, sizeof *s);
}

double *headscore_unit(HeadScores *s, Err *e) {
    size_t row = (size_t)s->n_layers * s->n_heads;
    if (s->n_units == HEADSCORE_MAX_UNITS) {
        err_set(e, "more than %d units to score", HEADSCORE_MAX_UNITS);
        return NULL;
    }
    if (s->n_units == s->cap) { /* doubling: units arrive one at a time */
        int cap = s->cap ? 2 * s->cap : 16;
        double *v = realloc(s->v, (size_t)cap * row * sizeof *v);
        if (!v) {
            err_set(e, "out of memory");
            return NULL;
        }
        s->v = v, s->cap = cap;
    }
    double *u = s->v + (size_t)s->n_units++ * row;
    memset(u, 0, row * sizeof *u);
    return u;
}

double headscore_mean(const HeadScores *s, int l, int h) {
    double sum = 0;
    size_t row = (size_t)s->n_layers * s->n_heads;
    for (int u = 0; u < s->n_units; u++) sum += s->v[u * row + (size_t)l * s->n_heads + h];
    return s->n_units ? sum / s->n_units : 0;
}

double headscore_kv(const HeadScores *s, int l, int k) {
    int g = s->n_heads / s->n_kv;
    double best = -INFINITY, sum = 0;
    for (int h = k * g; h < (k + 1) * g; h++) {
        double m = headscore_mean(s, l, h);
        sum += m;
        if (m > best) best = m;
    }
    return s->kv_mean ? sum / g : best;
}

int headscore_top_key(const float *w, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (w[i] > w[best]) best = i;
    return best;
}

double headscore_retrieval_step(const float *w, int n, const int *ids, const uint8_t *needle, int n_needle,
                                int generated) {
    int k = headscore_top_key(w, n);
    return n_needle > 0 && needle[k] && ids[k] == generated ? 1.0 / n_needle : 0.0;
}

double headscore_mass_on(const float *w, int n, const uint8_t *mask) {
    double m = 0;
    for (int i = 0; i < n; i++) m += mask[i] ? w[i] : 0;
    return m;
}

void headscore_echo_induction(const float *w, int t, int period, double *echo, double *induction) {
    *echo = w[t - period];
    *induction = w[t - period + 1];
}

double headscore_cum_area(const float *w, int n) {
    double cum = 0, area = 0;
    for (int i = 0; i < n; i++) area += (cum += w[i]);
    return n > 0 ? area / n : 0;
}

/* One pair rotated by (c, s), or back: the inverse of a rotation scaled by
 * r = c² + s² is its transpose over r. */
static void rope_pair(float *a, float *b, float c, float s, int inverse) {
    float x = *a, y = *b;
    if (inverse) {
        float r = c * c + s * s;
        *a = (x * c + y * s) / r, *b = (y * c - x * s) / r;
    } else {
        *a = x * c - y * s, *b = x * s + y * c;
    }
}

void headscore_rope(float *v, int hs, int half, const float *cs, const float *sn, int inverse) {
    for (int j = 0; j < hs / 2; j++) {
        if (half) rope_pair(&v[j], &v[j + hs / 2], cs[j], sn[j], inverse);
        else rope_pair(&v[2 * j], &v[2 * j + 1], cs[j], sn[j], inverse);
    }
}

void headscore_softmax(const float *q, const float *keys, int n, int hs, float *w) {
    float scale = 1.0f / sqrtf((float)hs), mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        float dot = 0;
        for (int j = 0; j < hs; j++) dot += q[j] * keys[(size_t)i * hs + j];
        w[i] = dot * scale;
        if (w[i] > mx) mx = w[i];
    }
    double z = 0;
    for (int i = 0; i < n; i++) z += (w[i] = expf(w[i] - mx));
    for (int i = 0; i < n; i++) w[i] = (float)(w[i] / z);
}
