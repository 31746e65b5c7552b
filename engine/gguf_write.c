/* gguf_write.c — the GGUF v3 container writer: metadata pairs, tensor infos, aligned data, atomically. */
#include "engine/gguf_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"

void gguf_write_init(GgufWriter *w) { memset(w, 0, sizeof *w); }

void gguf_write_free(GgufWriter *w) {
    for (int i = 0; i < w->n_kv; i++) free(w->keys[i]);
    for (int i = 0; i < w->n_t; i++) {
        free(w->t[i].name);
        if (w->t[i].owned) free((void *)w->t[i].data);
    }
    free(w->keys);
    free(w->t);
    free(w->kv);
    memset(w, 0, sizeof *w);
}

/* Remember the first failure only: later ones are usually its echo. */
static void fail(GgufWriter *w, const char *what, const char *key) {
    if (!w->err[0]) snprintf(w->err, sizeof w->err, "%s '%.100s'", what, key);
}

static void put(GgufWriter *w, const void *p, size_t n) {
    if (w->err[0]) return;
    if (w->kv_len + n > w->kv_cap) {
        size_t cap = w->kv_cap ? w->kv_cap : 4096;
        while (cap < w->kv_len + n) cap *= 2;
        uint8_t *grown = realloc(w->kv, cap);
        if (!grown) { fail(w, "out of memory at key", ""); return; }
        w->kv = grown, w->kv_cap = cap;
    }
    memcpy(w->kv + w->kv_len, p, n);
    w->kv_len += n;
}

/* Little-endian integers of 4 and 8 bytes, whatever the host. */
static void put_u32(GgufWriter *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_u64(GgufWriter *w, uint64_t v) {
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_str(GgufWriter *w, const char *s, size_t n) {
    put_u64(w, n);
    put(w, s, n);
}

/* The key and its type: refused when empty, too long or already written. */
static void put_key(GgufWriter *w, const char *key, GgufVType t) {
    size_t n = strlen(key);
    if (!n || n >= GGUF_MAX_KEY) { fail(w, "bad key", key); return; }
    for (int i = 0; i < w->n_kv; i++)
        if (!strcmp(w->keys[i], key)) { fail(w, "key written twice:", key); return; }
    if (w->n_kv == w->cap_keys) {
        int cap = w->cap_keys ? 2 * w->cap_keys : 32;
        char **grown = realloc(w->keys, (size_t)cap * sizeof *grown);
        if (!grown) { fail(w, "out of memory at key", key); return; }
        w->keys = grown, w->cap_keys = cap;
    }
    if (!(w->keys[w->n_kv] = strdup(key))) { fail(w, "out of memory at key", key); return; }
    w->n_kv++;
    put_str(w, key, n);
    put_u32(w, (uint32_t)t);
}

void gguf_write_str(GgufWriter *w, const char *key, const char *v) {
    put_key(w, key, GGUF_STRING);
    put_str(w, v, strlen(v));
}

void gguf_write_u32(GgufWriter *w, const char *key, uint32_t v) {
    put_key(w, key, GGUF_U32);
    put_u32(w, v);
}

void gguf_write_i32(GgufWriter *w, const char *key, int32_t v) {
    put_key(w, key, GGUF_I32);
    put_u32(w, (uint32_t)v);
}

void gguf_write_f32(GgufWriter *w, const char *key, float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    put_key(w, key, GGUF_F32);
    put_u32(w, u);
}

void gguf_write_bool(GgufWriter *w, const char *key, int v) {
    uint8_t b = v != 0;
    put_key(w, key, GGUF_BOOL);
    put(w, &b, 1);
}

static void put_arr_head(GgufWriter *w, const char *key, GgufVType elem, uint64_t n) {
    put_key(w, key, GGUF_ARRAY);
    put_u32(w, (uint32_t)elem);
    put_u64(w, n);
}

void gguf_write_arr_str(GgufWriter *w, const char *key, uint64_t n, const char *const *s, const size_t *len) {
    put_arr_head(w, key, GGUF_STRING, n);
    for (uint64_t i = 0; i < n; i++) put_str(w, s[i], len ? len[i] : strlen(s[i]));
}

void gguf_write_arr_f32(GgufWriter *w, const char *key, uint64_t n, const float *v) {
    put_arr_head(w, key, GGUF_F32, n);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        put_u32(w, u);
    }
}

void gguf_write_arr_i32(GgufWriter *w, const char *key, uint64_t n, const int32_t *v) {
    put_arr_head(w, key, GGUF_I32, n);
    for (uint64_t i = 0; i < n; i++) put_u32(w, (uint32_t)v[i]);
}

/* Bytes of one value of a fixed-size type; 0 for strings and arrays. */
static size_t vtype_size(GgufVType t) {
    static const size_t sz[GGUF_NVTYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return (unsigned)t < GGUF_NVTYPES ? sz[t] : 0;
}

/* A fixed-size scalar widened by the reader, narrowed back to its bytes. */
static void put_scalar(GgufWriter *w, const GgufKv *kv) {
    uint64_t u = kv->v.u;
    if (kv->type == GGUF_F32) {
        float f = (float)kv->v.f;
        uint32_t b;
        memcpy(&b, &f, 4);
        u = b;
    } else if (kv->type == GGUF_F64) {
        memcpy(&u, &kv->v.f, 8);
    } else if (kv->type == GGUF_I8 || kv->type == GGUF_I16 || kv->type == GGUF_I32 || kv->type == GGUF_I64) {
        u = (uint64_t)kv->v.i;
    }
    uint8_t b[8];
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(u >> (8 * i));
    put(w, b, vtype_size(kv->type));
}

void gguf_write_copy(GgufWriter *w, const GgufKv *kv) {
    put_key(w, kv->key, kv->type);
    if (kv->type == GGUF_STRING) { put_str(w, kv->str, (size_t)kv->len); return; }
    if (kv->type != GGUF_ARRAY) { put_scalar(w, kv); return; }
    put_u32(w, (uint32_t)kv->elem);
    put_u64(w, kv->count);
    if (kv->elem != GGUF_STRING) { put(w, kv->arr, (size_t)(kv->count * vtype_size(kv->elem))); return; }
    for (uint64_t i = 0; i < kv->count; i++) {
        uint64_t len;
        const char *s = gguf_arr_str(kv, i, &len);
        put_str(w, s, (size_t)len);
    }
}

/* Bytes a tensor of type t and dims ne must hold; 0 when the shape is bad
 * (rows not a whole number of blocks, absurd sizes). */
static size_t tensor_bytes(GgmlType t, int n_dims, const int64_t *ne) {
    uint64_t be, bb, n = 1;
    if (gguf_type_block(t, &be, &bb) || !be) return 0;
    for (int i = 0; i < n_dims; i++) {
        if (ne[i] <= 0 || (uint64_t)ne[i] > GGUF_MAX_ELEMS / n) return 0;
        n *= (uint64_t)ne[i];
    }
    if ((uint64_t)ne[0] % be) return 0;
    return (size_t)(n / be * bb);
}

static int check_tensor(const GgufWriter *w, const char *name, GgmlType t, int n_dims, const int64_t *ne,
                        size_t nbytes, Err *e) {
    if (!*name || strlen(name) >= GGUF_MAX_NAME) return err_set(e, "GGUF writer: bad tensor name '%.60s'", name);
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS) return err_set(e, "GGUF writer: tensor '%s': %d dims", name, n_dims);
    size_t want = tensor_bytes(t, n_dims, ne);
    if (!want) return err_set(e, "GGUF writer: tensor '%s': a %s row of %lld values is not whole blocks", name,
                              gguf_type_name(t), (long long)ne[0]);
    if (want != nbytes) return err_set(e, "GGUF writer: tensor '%s': %zu bytes given, %zu expected", name, nbytes, want);
    for (int i = 0; i < w->n_t; i++)
        if (!strcmp(w->t[i].name, name)) return err_set(e, "GGUF writer: tensor '%s' added twice", name);
    return 0;
}

int gguf_write_tensor(GgufWriter *w, const char *name, GgmlType t, int n_dims, const int64_t *ne, const void *data,
                      size_t nbytes, int owned, Err *e) {
    int rc = check_tensor(w, name, t, n_dims, ne, nbytes, e);
    if (!rc && w->n_t == w->cap_t) {
        int cap = w->cap_t ? 2 * w->cap_t : 64;
        GgufWriteTensor *grown = realloc(w->t, (size_t)cap * sizeof *grown);
        if (grown) w->t = grown, w->cap_t = cap;
        else rc = err_set(e, "GGUF writer: out of memory");
    }
    char *copy = rc ? NULL : strdup(name);
    if (!rc && !copy) rc = err_set(e, "GGUF writer: out of memory");
    if (rc) {
        if (owned) free((void *)data);
        return -1;
    }
    GgufWriteTensor *x = &w->t[w->n_t++];
    memset(x, 0, sizeof *x);
    x->name = copy, x->n_dims = n_dims, x->type = t, x->data = data, x->nbytes = nbytes, x->owned = owned;
    for (int i = 0; i < GGUF_MAX_DIMS; i++) x->ne[i] = i < n_dims ? ne[i] : 1;
    return 0;
}

static uint64_t pad(uint64_t x) { return (x + GGUF_WRITE_ALIGN - 1) / GGUF_WRITE_ALIGN * GGUF_WRITE_ALIGN; }

/* Header, metadata and tensor infos, in one buffer made by the same
 * serialiser (a writer of its own, so the pairs' bytes are copied once). */
static int head(const GgufWriter *w, GgufWriter *h) {
    gguf_write_init(h);
    put(h, "GGUF", 4);
    put_u32(h, 3);
    put_u64(h, (uint64_t)w->n_t);
    put_u64(h, (uint64_t)w->n_kv);
    put(h, w->kv, w->kv_len);
    uint64_t off = 0;
    for (int i = 0; i < w->n_t; i++) {
        const GgufWriteTensor *t = &w->t[i];
        put_str(h, t->name, strlen(t->name));
        put_u32(h, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) put_u64(h, (uint64_t)t->ne[d]);
        put_u32(h, (uint32_t)t->type);
        put_u64(h, off);
        off = pad(off + t->nbytes);
    }
    static const uint8_t zeros[GGUF_WRITE_ALIGN];
    put(h, zeros, (size_t)(pad(h->kv_len) - h->kv_len));
    return h->err[0] ? -1 : 0;
}

static int write_body(const GgufWriter *w, FILE *f, const GgufWriter *h) {
    static const uint8_t zeros[GGUF_WRITE_ALIGN];
    if (fwrite(h->kv, 1, h->kv_len, f) != h->kv_len) return -1;
    for (int i = 0; i < w->n_t; i++) {
        size_t n = w->t[i].nbytes, gap = (size_t)(pad(n) - n);
        if (fwrite(w->t[i].data, 1, n, f) != n || fwrite(zeros, 1, gap, f) != gap) return -1;
    }
    return 0;
}

int gguf_write_file(const GgufWriter *w, const char *path, Err *e) {
    if (w->err[0]) return err_set(e, "%s: %s", path, w->err);
    GgufWriter h;
    if (head(w, &h)) {
        gguf_write_free(&h);
        return err_set(e, "%s: out of memory building the header", path);
    }
    FileAtomic a;
    FILE *f = file_atomic_open(&a, path, e);
    int rc = -1;
    if (f) {
        errno = 0;
        if (write_body(w, f, &h) == 0) rc = file_atomic_commit(&a, e);
        else rc = err_set(e, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
        file_atomic_abort(&a);
    }
    gguf_write_free(&h);
    return rc;
}
