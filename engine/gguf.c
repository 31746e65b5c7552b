/* gguf.c — the GGUF reader: bounded parse of header, metadata, tensor infos. */
#include "engine/gguf.h"
#include "engine/files.h"
#include "engine/quant.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A read position in the file; every read first proves its bytes are there. */
typedef struct {
    GgufFile *f;
    size_t at;
} Cur;

static const struct {
    const char *name;
    uint64_t elems, bytes; /* per block; 0 for an id this reader does not know */
} type_table[GGML_NTYPES] = {
    [GGML_F32] = {"F32", 1, 4},       [GGML_F16] = {"F16", 1, 2},      [GGML_BF16] = {"BF16", 1, 2},
    [GGML_Q4_0] = {"Q4_0", 32, 18},   [GGML_Q4_1] = {"Q4_1", 32, 20},  [GGML_Q5_0] = {"Q5_0", 32, 22},
    [GGML_Q5_1] = {"Q5_1", 32, 24},   [GGML_Q8_0] = {"Q8_0", 32, 34},  [GGML_Q8_1] = {"Q8_1", 32, 36},
    [GGML_Q2_K] = {"Q2_K", 256, 84},  [GGML_Q3_K] = {"Q3_K", 256, 110}, [GGML_Q4_K] = {"Q4_K", 256, 144},
    [GGML_Q5_K] = {"Q5_K", 256, 176}, [GGML_Q6_K] = {"Q6_K", 256, 210}, [GGML_Q8_K] = {"Q8_K", 256, 292},
};

/* Bytes of a scalar metadata value; 0 for strings and arrays. */
static const uint8_t vsize[GGUF_NVTYPES] = {
    [GGUF_U8] = 1, [GGUF_I8] = 1, [GGUF_U16] = 2, [GGUF_I16] = 2, [GGUF_U32] = 4, [GGUF_I32] = 4,
    [GGUF_F32] = 4, [GGUF_BOOL] = 1, [GGUF_U64] = 8, [GGUF_I64] = 8, [GGUF_F64] = 8,
};

static const char *const vnames[GGUF_NVTYPES] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64",
};

const char *gguf_vtype_name(GgufVType t) { return (unsigned)t < GGUF_NVTYPES ? vnames[t] : "?"; }

const char *gguf_type_name(GgmlType t) {
    return (unsigned)t < GGML_NTYPES && type_table[t].name ? type_table[t].name : "?";
}

int gguf_type_block(GgmlType t, uint64_t *elems, uint64_t *bytes) {
    int ok = (unsigned)t < GGML_NTYPES && type_table[t].bytes;
    *elems = ok ? type_table[t].elems : 0;
    *bytes = ok ? type_table[t].bytes : 0;
    return ok ? 0 : -1;
}

int gguf_sniff(const void *b, size_t n) { return n >= 4 && !memcmp(b, "GGUF", 4); }

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* n more bytes are in the file at the cursor, else a message saying what ran out. */
static int need(Cur *c, uint64_t n, const char *what, Err *e) {
    if (n <= c->f->size - c->at) return 0;
    return err_set(e, "%s: %s at byte %zu runs past the end of the file (%zu bytes)", c->f->path, what, c->at,
                   c->f->size);
}

static int rd(Cur *c, int n, uint64_t *v, const char *what, Err *e) {
    if (need(c, (uint64_t)n, what, e)) return -1;
    *v = le(c->f->base + c->at, n);
    c->at += (size_t)n;
    return 0;
}

/* A string (u64 length, bytes) shorter than max, copied NUL-terminated
 * into *out (malloc'd) when out is not NULL; *len its length. */
static int rd_str(Cur *c, uint64_t max, char **out, uint64_t *len, const char *what, Err *e) {
    uint64_t n;
    if (rd(c, 8, &n, what, e)) return -1;
    if (n >= max) return err_set(e, "%s: %s at byte %zu is %llu bytes long (limit %llu)", c->f->path, what, c->at - 8,
                                 (unsigned long long)n, (unsigned long long)max - 1);
    if (n > c->f->size - c->at)
        return err_set(e, "%s: %s at byte %zu claims %llu bytes, past the end of the file (%zu bytes)", c->f->path,
                       what, c->at - 8, (unsigned long long)n, c->f->size);
    if (out) {
        *out = malloc((size_t)n + 1);
        if (!*out) return err_set(e, "%s: out of memory", c->f->path);
        memcpy(*out, c->f->base + c->at, (size_t)n);
        (*out)[n] = '\0';
    }
    if (len) *len = n;
    c->at += (size_t)n;
    return 0;
}

/* A scalar of type t into kv's union. */
static int rd_scalar(Cur *c, GgufKv *kv, GgufVType t, Err *e) {
    uint64_t v;
    int n = vsize[t];
    if (rd(c, n, &v, "metadata value", e)) return -1;
    if (t == GGUF_BOOL && v > 1)
        return err_set(e, "%s: metadata '%.64s': bool value %llu is neither 0 nor 1", c->f->path, kv->key,
                       (unsigned long long)v);
    if (t == GGUF_F32) {
        float x;
        uint32_t b = (uint32_t)v;
        memcpy(&x, &b, 4);
        kv->v.f = x;
    } else if (t == GGUF_F64) memcpy(&kv->v.f, &v, 8);
    else if (t == GGUF_I8 || t == GGUF_I16 || t == GGUF_I32 || t == GGUF_I64) {
        int sh = 64 - 8 * n; /* sign-extend through the top bits */
        kv->v.i = (int64_t)(v << sh) >> sh;
    } else kv->v.u = v;
    return 0;
}

/* An array's element type, count and elements; string elements are indexed
 * (str_at) so that later lookups need no walk and no bound check. */
static int rd_array(Cur *c, GgufKv *kv, Err *e) {
    uint64_t et, n;
    const char *p = c->f->path;
    if (rd(c, 4, &et, "array element type", e) || rd(c, 8, &n, "array length", e)) return -1;
    if (et >= GGUF_NVTYPES)
        return err_set(e, "%s: metadata '%.64s': unknown array element type %llu", p, kv->key, (unsigned long long)et);
    if (et == GGUF_ARRAY) return err_set(e, "%s: metadata '%.64s': nested arrays are not supported", p, kv->key);
    kv->elem = (GgufVType)et, kv->count = n;
    size_t left = c->f->size - c->at;
    uint64_t min = et == GGUF_STRING ? 8 : vsize[et]; /* a string is at least its length */
    if (n > left / min)
        return err_set(e, "%s: metadata '%.64s': array of %llu %s elements does not fit in the %zu bytes left", p,
                       kv->key, (unsigned long long)n, vnames[et], left);
    kv->arr = c->f->base + c->at;
    if (et != GGUF_STRING) {
        c->at += (size_t)(n * min);
        return 0;
    }
    kv->str_at = malloc(((size_t)n + 1) * sizeof *kv->str_at);
    if (!kv->str_at) return err_set(e, "%s: out of memory", p);
    for (uint64_t i = 0; i < n; i++) {
        kv->str_at[i] = (uint64_t)(c->f->base + c->at - kv->arr);
        if (rd_str(c, (uint64_t)1 << 62, NULL, NULL, "array string", e)) return -1;
    }
    return 0;
}

static int rd_kv(Cur *c, GgufKv *kv, Err *e) {
    uint64_t klen, t;
    if (rd_str(c, GGUF_MAX_KEY, (char **)&kv->key, &klen, "metadata key", e)) return -1;
    if (strlen(kv->key) != klen) return err_set(e, "%s: metadata key at byte %zu holds a NUL", c->f->path, c->at);
    if (rd(c, 4, &t, "metadata type", e)) return -1;
    if (t >= GGUF_NVTYPES)
        return err_set(e, "%s: metadata '%.64s': unknown value type %llu", c->f->path, kv->key, (unsigned long long)t);
    kv->type = (GgufVType)t;
    if (t == GGUF_STRING) return rd_str(c, (uint64_t)1 << 62, (char **)&kv->str, &kv->len, "metadata string", e);
    if (t == GGUF_ARRAY) return rd_array(c, kv, e);
    return rd_scalar(c, kv, kv->type, e);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Refuse the first name appearing twice among n names (n log n however many). */
static int check_unique(const GgufFile *f, const char **names, size_t n, const char *noun, Err *e) {
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(names[i - 1], names[i]))
            return err_set(e, "%s: %s '%.64s' appears twice", f->path, noun, names[i]);
    return 0;
}

/* general.alignment: a u32 power of two, at most GGUF_MAX_ALIGN. */
static int read_alignment(GgufFile *f, Err *e) {
    f->alignment = 32;
    const GgufKv *kv = gguf_find_kv(f, "general.alignment");
    if (!kv) return 0;
    if (kv->type != GGUF_U32)
        return err_set(e, "%s: general.alignment is a %s, not a u32", f->path, gguf_vtype_name(kv->type));
    if (kv->v.u == 0 || kv->v.u > GGUF_MAX_ALIGN || (kv->v.u & (kv->v.u - 1)))
        return err_set(e, "%s: general.alignment %llu is not a power of two up to %d", f->path,
                       (unsigned long long)kv->v.u, GGUF_MAX_ALIGN);
    f->alignment = (uint32_t)kv->v.u;
    return 0;
}

static int parse_kvs(GgufFile *f, Cur *c, uint64_t n, Err *e) {
    f->kv = calloc((size_t)n + 1, sizeof *f->kv);
    const char **keys = malloc(((size_t)n + 1) * sizeof *keys);
    int rc = f->kv && keys ? 0 : err_set(e, "%s: out of memory", f->path);
    for (uint64_t i = 0; i < n && !rc; i++) {
        rc = rd_kv(c, &f->kv[i], e);
        f->n_kv += f->kv[i].key != NULL; /* so gguf_close frees a half-read pair too */
        keys[i] = f->kv[i].key;
    }
    if (!rc) rc = check_unique(f, keys, (size_t)n, "metadata key", e);
    free(keys);
    return rc ? rc : read_alignment(f, e);
}

/* Dimensions: each in [1, GGUF_MAX_ELEMS], their product too; the row
 * (ne[0]) a whole number of the type's blocks; nbytes from the blocks. */
static int tensor_size(const GgufFile *f, GgufTensor *t, Err *e) {
    uint64_t be, bb, n = 1;
    for (int d = 0; d < t->n_dims; d++) {
        uint64_t v = (uint64_t)t->ne[d];
        if (t->ne[d] <= 0 || v > GGUF_MAX_ELEMS)
            return err_set(e, "%s: tensor '%s': dimension %d is %lld (must be 1 to 2^48)", f->path, t->name, d,
                           (long long)t->ne[d]);
        if (v > GGUF_MAX_ELEMS / n)
            return err_set(e, "%s: tensor '%s': more than 2^48 elements", f->path, t->name);
        n *= v;
    }
    if (gguf_type_block(t->type, &be, &bb))
        return err_set(e, "%s: tensor '%s': unknown tensor type %d", f->path, t->name, (int)t->type);
    if ((uint64_t)t->ne[0] % be)
        return err_set(e, "%s: tensor '%s': row of %lld elements is not a whole number of %s blocks (%llu)", f->path,
                       t->name, (long long)t->ne[0], gguf_type_name(t->type), (unsigned long long)be);
    uint64_t blocks = n / be; /* < 2^48, and bb < 2^9: no overflow */
    if (blocks * bb > f->size)
        return err_set(e, "%s: tensor '%s': %llu bytes is more than the whole file (%zu)", f->path, t->name,
                       (unsigned long long)(blocks * bb), f->size);
    t->nbytes = (size_t)(blocks * bb);
    return 0;
}

static int rd_tensor(GgufFile *f, Cur *c, GgufTensor *t, Err *e) {
    uint64_t len, nd, v, type;
    if (rd_str(c, GGUF_MAX_NAME, (char **)&t->name, &len, "tensor name", e)) return -1;
    if (strlen(t->name) != len) return err_set(e, "%s: tensor name at byte %zu holds a NUL", f->path, c->at);
    if (rd(c, 4, &nd, "tensor dimension count", e)) return -1;
    if (nd < 1 || nd > GGUF_MAX_DIMS)
        return err_set(e, "%s: tensor '%s': %llu dimensions (1 to %d supported)", f->path, t->name,
                       (unsigned long long)nd, GGUF_MAX_DIMS);
    t->n_dims = (int)nd;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        t->ne[d] = 1;
        if (d < t->n_dims && rd(c, 8, &v, "tensor dimension", e)) return -1;
        if (d < t->n_dims) t->ne[d] = (int64_t)v;
    }
    if (rd(c, 4, &type, "tensor type", e) || rd(c, 8, &t->offset, "tensor offset", e)) return -1;
    t->type = type < GGML_NTYPES ? (GgmlType)type : GGML_NTYPES;
    if (type >= GGML_NTYPES || !type_table[type].bytes)
        return err_set(e, "%s: tensor '%s': unknown tensor type %llu", f->path, t->name, (unsigned long long)type);
    if (t->offset % f->alignment)
        return err_set(e, "%s: tensor '%s': offset %llu is not a multiple of the alignment %u", f->path, t->name,
                       (unsigned long long)t->offset, f->alignment);
    return tensor_size(f, t, e);
}

static int cmp_offset(const void *a, const void *b) {
    const GgufTensor *x = *(const GgufTensor *const *)a, *y = *(const GgufTensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Every tensor inside the data section, none overlapping another. */
static int place_tensors(GgufFile *f, Err *e) {
    size_t n = (size_t)f->n_tensors, room = f->size - f->data_start;
    const GgufTensor **by = malloc((n + 1) * sizeof *by);
    if (!by) return err_set(e, "%s: out of memory", f->path);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        GgufTensor *t = &f->tensors[i];
        by[i] = t;
        if (!rc && (t->offset > room || t->nbytes > room - t->offset))
            rc = err_set(e, "%s: tensor '%s': bytes [%llu, %llu) lie past the end of the data (%zu bytes)", f->path,
                         t->name, (unsigned long long)t->offset, (unsigned long long)(t->offset + t->nbytes), room);
        t->data = f->base + f->data_start + t->offset;
    }
    if (!rc) qsort(by, n, sizeof *by, cmp_offset);
    for (size_t i = 1; i < n && !rc; i++)
        if (by[i - 1]->offset + by[i - 1]->nbytes > by[i]->offset)
            rc = err_set(e, "%s: tensors '%s' and '%s' overlap (at data bytes %llu and %llu)", f->path, by[i - 1]->name,
                         by[i]->name, (unsigned long long)by[i - 1]->offset, (unsigned long long)by[i]->offset);
    free(by);
    return rc;
}

static int parse_tensors(GgufFile *f, Cur *c, uint64_t n, Err *e) {
    f->tensors = calloc((size_t)n + 1, sizeof *f->tensors);
    const char **names = malloc(((size_t)n + 1) * sizeof *names);
    int rc = f->tensors && names ? 0 : err_set(e, "%s: out of memory", f->path);
    for (uint64_t i = 0; i < n && !rc; i++) {
        rc = rd_tensor(f, c, &f->tensors[i], e);
        f->n_tensors += f->tensors[i].name != NULL;
        names[i] = f->tensors[i].name;
    }
    if (!rc) rc = check_unique(f, names, (size_t)n, "tensor", e);
    free(names);
    if (rc) return rc;
    size_t pad = (f->alignment - c->at % f->alignment) % f->alignment;
    if (n > 0 && pad > f->size - c->at)
        return err_set(e, "%s: the data section's alignment padding runs past the end of the file", f->path);
    f->data_start = n > 0 ? c->at + pad : c->at;
    return place_tensors(f, e);
}

/* Magic, version, counts; each count bounded by the bytes its entries need. */
static int parse_header(GgufFile *f, Cur *c, uint64_t *nt, uint64_t *nkv, Err *e) {
    if (f->size < 24) return err_set(e, "%s: %zu bytes, too short for a GGUF header (24)", f->path, f->size);
    if (!gguf_sniff(f->base, f->size)) return err_set(e, "%s: not a GGUF file (no GGUF magic)", f->path);
    c->at = 4;
    uint64_t ver;
    rd(c, 4, &ver, "version", e), rd(c, 8, nt, "tensor count", e), rd(c, 8, nkv, "metadata count", e);
    f->version = (uint32_t)ver;
    if (ver == 0x02000000 || ver == 0x03000000)
        return err_set(e, "%s: a big-endian GGUF file (not supported)", f->path);
    if (ver == 1) return err_set(e, "%s: GGUF version 1 is not supported (only v2 and v3)", f->path);
    if (ver != 2 && ver != 3) return err_set(e, "%s: unknown GGUF version %llu (v2 and v3 are read)", f->path,
                                             (unsigned long long)ver);
    size_t left = f->size - 24;
    if (*nt > GGUF_MAX_TENSORS || *nt > left / 32) /* a tensor info is at least 32 bytes */
        return err_set(e, "%s: tensor count %llu is absurd (at most %d, and %zu bytes follow the header)", f->path,
                       (unsigned long long)*nt, GGUF_MAX_TENSORS, left);
    if (*nkv > GGUF_MAX_KV || *nkv > (left - *nt * 32) / 13) /* key length, type, a byte */
        return err_set(e, "%s: metadata count %llu is absurd (at most %d, and %zu bytes follow the header)", f->path,
                       (unsigned long long)*nkv, GGUF_MAX_KV, left);
    return 0;
}

static int parse_file(GgufFile *f, Err *e) {
    Cur c = {f, 0};
    uint64_t nt = 0, nkv = 0;
    if (parse_header(f, &c, &nt, &nkv, e) || parse_kvs(f, &c, nkv, e) || parse_tensors(f, &c, nt, e)) return -1;
    return 0;
}

int gguf_open_buffer(GgufFile *f, const void *buf, size_t size, const char *name, Err *e) {
    memset(f, 0, sizeof *f);
    f->path = strdup(name ? name : "(buffer)");
    if (!f->path) return err_set(e, "%s: out of memory", name ? name : "(buffer)");
    f->base = buf;
    f->size = size;
    if (parse_file(f, e)) {
        gguf_close(f);
        return -1;
    }
    return 0;
}

int gguf_open(GgufFile *f, const char *path, Err *e) {
    memset(f, 0, sizeof *f);
    size_t size = 0;
    if (mem_view_path(&f->view, path, "GGUF file", "a GGUF file", 24, "a GGUF header (24)", &size, e)) return -1;
    f->path = strdup(path);
    f->base = f->view.base;
    f->size = size;
    if (!f->path) {
        gguf_close(f);
        return err_set(e, "%s: out of memory", path);
    }
    if (parse_file(f, e)) {
        gguf_close(f);
        return -1;
    }
    return 0;
}

void gguf_close(GgufFile *f) {
    if (!f) return;
    mem_view_close(&f->view);
    for (int i = 0; i < f->n_kv; i++) {
        free((char *)f->kv[i].key);
        free((char *)f->kv[i].str);
        free(f->kv[i].str_at);
    }
    for (int i = 0; i < f->n_tensors; i++) free((char *)f->tensors[i].name);
    free(f->kv);
    free(f->tensors);
    free(f->path);
    memset(f, 0, sizeof *f);
}

const GgufKv *gguf_find_kv(const GgufFile *f, const char *key) {
    for (int i = 0; i < f->n_kv; i++)
        if (f->kv[i].key && !strcmp(f->kv[i].key, key)) return &f->kv[i];
    return NULL;
}

const GgufTensor *gguf_find_tensor(const GgufFile *f, const char *name) {
    for (int i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensors[i].name, name)) return &f->tensors[i];
    return NULL;
}

int gguf_get_int(const GgufFile *f, const char *key, int64_t *out) {
    const GgufKv *kv = gguf_find_kv(f, key);
    if (!kv) return -1;
    switch (kv->type) {
    case GGUF_U8: case GGUF_U16: case GGUF_U32: case GGUF_BOOL: case GGUF_U64:
        if (kv->v.u > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)kv->v.u;
        return 0;
    case GGUF_I8: case GGUF_I16: case GGUF_I32: case GGUF_I64: *out = kv->v.i; return 0;
    default: return -1;
    }
}

int gguf_get_float(const GgufFile *f, const char *key, double *out) {
    const GgufKv *kv = gguf_find_kv(f, key);
    int64_t i;
    if (kv && (kv->type == GGUF_F32 || kv->type == GGUF_F64)) {
        *out = kv->v.f;
        return 0;
    }
    if (gguf_get_int(f, key, &i)) return -1;
    *out = (double)i;
    return 0;
}

const char *gguf_get_str(const GgufFile *f, const char *key) {
    const GgufKv *kv = gguf_find_kv(f, key);
    return kv && kv->type == GGUF_STRING ? kv->str : NULL;
}

const char *gguf_arr_str(const GgufKv *kv, uint64_t i, uint64_t *len) {
    if (kv->type != GGUF_ARRAY || kv->elem != GGUF_STRING || i >= kv->count) return NULL;
    const uint8_t *p = kv->arr + kv->str_at[i];
    *len = le(p, 8);
    return (const char *)p + 8;
}

int gguf_dequant(GgmlType t, const void *src, float *dst, int64_t n, Err *e) {
    int rc = quant_dequant(t, src, dst, n);
    if (rc == -1)
        return err_set(e, "%s tensors cannot be read (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q2_K to Q6_K can)",
                       gguf_type_name(t));
    if (rc == -2)
        return err_set(e, "gguf_dequant: %lld elements is not a whole number of %s blocks", (long long)n,
                       gguf_type_name(t));
    return 0;
}
