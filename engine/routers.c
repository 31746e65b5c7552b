/* routers.c — router files: one vector (and bias) per head, checked against the model's shape. */
#include <errno.h>
#include <limits.h>
#include "routers.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "kernels.h"
#include "safetensors.h"
#include "sniff.h"

/* Room for routers of a shape; windows[0..k) make them multi-choice (k 0: two-way). */
static int router_alloc(Routers *r, int n_layers, int n_heads, int dim, const int *windows, int k, Err *e) {
    memset(r, 0, sizeof *r);
    r->n_layers = n_layers;
    r->n_heads = n_heads;
    r->dim = dim;
    r->tau = NAN;
    r->n_windows = k;
    if (k) memcpy(r->windows, windows, (size_t)k * sizeof(int));
    r->w = malloc((size_t)n_layers * n_heads * router_choices(r) * dim * sizeof(float));
    return r->w ? 0 : err_set(e, "out of memory for routers");
}

int router_windows_parse(const char *s, const char *what, int *w, int *k, Err *e) {
    *k = 0;
    for (const char *p = s;; p++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',') || *p == '+' || *p == ' ' || errno || v < 1 || v > (1 << 20))
            return err_usage(e, "%s: windows '%.60s': expected whole numbers from 1 to %d, comma-separated", what, s,
                             1 << 20);
        if (*k == ROUTER_MAX_WINDOWS)
            return err_usage(e, "%s: windows '%.60s': more than %d windows", what, s, ROUTER_MAX_WINDOWS);
        if (*k && v <= w[*k - 1])
            return err_usage(e, "%s: windows '%.60s': not increasing (%ld after %d)", what, s, v, w[*k - 1]);
        w[(*k)++] = (int)v;
        if (!*end) return 0;
        p = end;
    }
}

#define NOT_ROUTERS "an AHA router file"

/* Open path as safetensors, refusing (without opening it) anything that is
 * plainly something else: a text file, a checkpoint, a FIFO. */
static int open_router_file(StFile *f, const char *path, FileKind *kind, Err *e) {
    FileKind k = *kind = sniff_kind(path);
    if (k == FILE_MISSING) return err_set(e, "%s: no such router file", path);
    if (k != FILE_SAFETENSORS && k != FILE_ROUTERS && k != FILE_BINARY && k != FILE_UNREADABLE)
        return file_not(e, path, NOT_ROUTERS, k, NULL);
    if (st_open(f, path, e) == 0) return 0;
    return k == FILE_BINARY ? file_not(e, path, NOT_ROUTERS, k, e ? e->msg : NULL) : -1;
}

/* Layer l's vectors from f into r, checked for shape, dtype and finiteness. */
static int load_layer(Routers *r, const StFile *f, int l, FileKind kind, const char *path, Err *e) {
    char name[96];
    snprintf(name, sizeof name, "model.layers.%d.self_attn.router.weight", l);
    int multi = r->n_windows > 0;
    int64_t shape[3] = {r->n_heads, multi ? router_choices(r) : r->dim, r->dim};
    const StTensor *t = st_expect(f, name, ST_F32, multi ? 3 : 2, shape, e);
    if (!t && l == 0 && kind != FILE_ROUTERS && !st_find(f, name)) /* not a router file at all */
        return file_not(e, path, NOT_ROUTERS, kind, e ? e->msg : NULL);
    if (!t && multi) /* a file "windows" claims for K windows, not holding K + 1 vectors a head */
        return err_set(e, "%s: metadata windows names %d windows, so '%s' must be [%d, %d, %d] F32 (K + 1 vectors "
                          "a head): %s", path, r->n_windows, name, r->n_heads, router_choices(r), r->dim,
                       e ? e->msg : "");
    if (!t) return -1;
    size_t n = (size_t)r->n_heads * router_choices(r) * r->dim, bad;
    float *dst = r->w + (size_t)l * n;
    memcpy(dst, t->data, t->nbytes); /* copied first: the mapping need not be float-aligned */
    if ((bad = k_first_nonfinite(dst, n)) < n) /* NaN scores would read as "not computed", every head local */
        return err_set(e, "%s: tensor '%s' holds %g at element %zu (router weights must be finite)", path, name,
                       dst[bad], bad);
    return 0;
}

static void bias_name(char *out, size_t cap, int layer) {
    snprintf(out, cap, "model.layers.%d.self_attn.router.bias", layer);
}

/* The optional biases: absent in layer 0 means none; present there means
 * every layer has one of shape [n_heads]. */
static int load_bias(Routers *r, const StFile *f, const char *path, Err *e) {
    char name[96];
    bias_name(name, sizeof name, 0);
    if (!st_find(f, name)) return 0;
    if (r->n_windows) return err_set(e, "%s: a multi-choice router file (metadata windows) carries no bias", path);
    if (!(r->b = malloc((size_t)r->n_layers * r->n_heads * sizeof(float)))) return err_set(e, "out of memory for routers");
    int64_t shape[1] = {r->n_heads};
    for (int l = 0; l < r->n_layers; l++) {
        bias_name(name, sizeof name, l);
        const StTensor *t = st_expect(f, name, ST_F32, 1, shape, e);
        if (!t) return -1;
        float *dst = r->b + (size_t)l * r->n_heads;
        memcpy(dst, t->data, t->nbytes);
        size_t bad = k_first_nonfinite(dst, (size_t)r->n_heads);
        if (bad < (size_t)r->n_heads)
            return err_set(e, "%s: tensor '%s' holds %g at element %zu (router biases must be finite)", path, name,
                           dst[bad], bad);
    }
    return 0;
}

int router_load(Routers *r, const char *path, int n_layers, int n_heads, int dim, Err *e) {
    StFile f;
    FileKind kind;
    if (open_router_file(&f, path, &kind, e) != 0) return -1;
    const char *ws = st_meta(&f, "windows");
    int win[ROUTER_MAX_WINDOWS], k = 0;
    if (ws && router_windows_parse(ws, path, win, &k, e) != 0) {
        if (e) e->usage = 0; /* a bad file, not a bad flag */
        st_close(&f);
        return -1;
    }
    if (router_alloc(r, n_layers, n_heads, dim, win, k, e) != 0) { st_close(&f); return -1; }
    snprintf(r->desc, sizeof r->desc, "%s", path);
    for (int l = 0; l < n_layers; l++)
        if (load_layer(r, &f, l, kind, path, e)) { st_close(&f); router_free(r); return -1; }
    if (load_bias(r, &f, path, e) != 0) { st_close(&f); router_free(r); return -1; }
    const char *w = st_meta(&f, "window"), *tau = st_meta(&f, "tau");
    char *end;
    if (w) {
        long v = strtol(w, &end, 10);
        if (*end || v < 1 || v > (1 << 20)) {
            err_set(e, "%s: metadata window '%.40s' is not a positive integer", path, w); /* before st_close frees w */
            st_close(&f);
            router_free(r);
            return -1;
        }
        r->window = (int)v;
    }
    if (tau) {
        double v = strtod(tau, &end);
        if (*end || !(v >= 0 && v <= 1)) {
            err_set(e, "%s: metadata tau '%.40s' is not in [0, 1]", path, tau);
            st_close(&f);
            router_free(r);
            return -1;
        }
        r->tau = (float)v;
    }
    st_close(&f);
    return 0;
}

int router_random(Routers *r, int n_layers, int n_heads, int dim, uint64_t seed, Err *e) {
    return router_random_multi(r, n_layers, n_heads, dim, NULL, 0, seed, e);
}

int router_random_multi(Routers *r, int n_layers, int n_heads, int dim, const int *w, int k, uint64_t seed, Err *e) {
    if (router_alloc(r, n_layers, n_heads, dim, w, k, e) != 0) return -1;
    snprintf(r->desc, sizeof r->desc, "random:%llu", (unsigned long long)seed);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    size_t n = (size_t)n_layers * n_heads * router_choices(r) * dim;
    float scale = 1.0f / sqrtf((float)dim);
    for (size_t i = 0; i < n; i++) { /* Box–Muller on a xorshift stream */
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double u1 = ((s >> 11) + 1.0) / 9007199254740993.0;
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        double u2 = (s >> 11) / 9007199254740992.0;
        r->w[i] = scale * (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    return 0;
}

int router_open(Routers *r, const char *spec, int n_layers, int n_heads, int dim, Err *e) {
    if (!strncmp(spec, "random", 6) && (spec[6] == 0 || spec[6] == ':')) {
        unsigned long long seed = 1;
        if (spec[6] == ':') {
            char *end;
            errno = 0;
            seed = strtoull(spec + 7, &end, 10);
            if (!spec[7] || *end || spec[7] == '-' || spec[7] == '+')
                return err_usage(e, "--routers: bad seed in '%s' (random:SEED)", spec);
            if (errno == ERANGE) /* strtoull saturates: every huge seed would be the same one */
                return err_usage(e, "--routers: seed in '%s' is out of range (0 to %llu)", spec, ULLONG_MAX);
        }
        return router_random(r, n_layers, n_heads, dim, seed, e);
    }
    return router_load(r, spec, n_layers, n_heads, dim, e);
}

void router_path_for(const char *spec, int window, char *out, size_t cap) {
    const char *at = strstr(spec, "{w}");
    if (at) snprintf(out, cap, "%.*s%d%s", (int)(at - spec), spec, window, at + 3);
    else snprintf(out, cap, "%s", spec);
}

/* "8, 16, 32" of the windows a "{w}" template names existing files for,
 * ascending; "" if none. */
static void template_windows(const char *tmpl, char *out, size_t cap) {
    const char *at = strstr(tmpl, "{w}"), *slash = strrchr(tmpl, '/');
    out[0] = 0;
    if (!at || (slash && slash > at)) return;
    char dir[1024];
    file_parent(tmpl, dir, sizeof dir);
    const char *pre = slash ? slash + 1 : tmpl, *post = at + 3;
    size_t npre = (size_t)(at - pre), npost = strlen(post);
    DIR *d = opendir(dir);
    int w[64], n = 0;
    for (struct dirent *de; d && n < 64 && (de = readdir(d));) {
        const char *name = de->d_name;
        size_t len = strlen(name);
        if (len <= npre + npost || strncmp(name, pre, npre) || strcmp(name + len - npost, post)) continue;
        char *end;
        long v = strtol(name + npre, &end, 10);
        if (end == name + len - npost && end > name + npre && v > 0 && v < (1 << 20)) w[n++] = (int)v;
    }
    if (d) closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: a handful of windows */
        for (int j = i; j > 0 && w[j - 1] > w[j]; j--) { int t = w[j]; w[j] = w[j - 1]; w[j - 1] = t; }
    for (int i = 0, k = 0; i < n && (size_t)k < cap; i++) k += snprintf(out + k, cap - k, "%s%d", i ? ", " : "", w[i]);
}

int router_open_for(Routers *r, const char *spec, int window, int n_layers, int n_heads, int dim, Err *e) {
    char path[1100], have[256];
    router_path_for(spec, window, path, sizeof path);
    if (!strstr(spec, "{w}") || sniff_kind(path) != FILE_MISSING) return router_open(r, path, n_layers, n_heads, dim, e);
    template_windows(spec, have, sizeof have);
    return err_set(e, "%s: no such router file (--routers %s at w = %d; %s%s)", path, spec, window,
                   have[0] ? "files exist for w = " : "no window has one", have);
}

int router_save(const Routers *r, const char *path, const char *const *keys, const char *const *values, int n_meta,
                Err *e) {
    StWriter w;
    st_writer_init(&w);
    int multi = r->n_windows > 0;
    int64_t shape[3] = {r->n_heads, multi ? router_choices(r) : r->dim, r->dim};
    int rc = 0;
    for (int l = 0; rc == 0 && l < r->n_layers; l++) {
        char name[96]; /* the writer copies names */
        snprintf(name, sizeof name, "model.layers.%d.self_attn.router.weight", l);
        rc = st_writer_add(&w, name, ST_F32, multi ? 3 : 2, shape,
                           r->w + (size_t)l * r->n_heads * router_choices(r) * r->dim, e);
        int64_t bshape[1] = {r->n_heads};
        bias_name(name, sizeof name, l);
        if (rc == 0 && r->b) rc = st_writer_add(&w, name, ST_F32, 1, bshape, r->b + (size_t)l * r->n_heads, e);
    }
    if (rc == 0 && multi) {
        char ws[ROUTER_MAX_WINDOWS * 12] = "";
        for (int i = 0, o = 0; i < r->n_windows; i++) o += snprintf(ws + o, sizeof ws - o, "%s%d", i ? "," : "", r->windows[i]);
        rc = st_writer_meta(&w, "windows", ws, e);
    }
    for (int i = 0; rc == 0 && i < n_meta; i++) rc = st_writer_meta(&w, keys[i], values[i], e);
    if (rc == 0) rc = st_write(&w, path, e);
    st_writer_free(&w);
    return rc;
}

void router_free(Routers *r) {
    free(r->w);
    free(r->b);
    r->w = r->b = NULL;
}
