/* safetensors.c — the safetensors reader: map, validate, look up.
 *
 * Everything a later kernel will trust (offsets, sizes, dtypes) is checked
 * here once, so st_find/st_expect callers can index tensor data freely.
 */
#include "engine/safetensors.h"
#include "engine/files.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *name;
    size_t size;
} dtype_table[ST_NDTYPES] = {
    [ST_BOOL] = {"BOOL", 1},       [ST_U8] = {"U8", 1},     [ST_I8] = {"I8", 1},
    [ST_F8_E4M3] = {"F8_E4M3", 1}, [ST_F8_E5M2] = {"F8_E5M2", 1},
    [ST_I16] = {"I16", 2},         [ST_U16] = {"U16", 2},   [ST_F16] = {"F16", 2},
    [ST_BF16] = {"BF16", 2},       [ST_I32] = {"I32", 4},   [ST_U32] = {"U32", 4},
    [ST_F32] = {"F32", 4},         [ST_I64] = {"I64", 8},   [ST_U64] = {"U64", 8},
    [ST_F64] = {"F64", 8},
};

size_t st_dtype_size(StDtype dt) {
    if ((int)dt < 0 || dt >= ST_NDTYPES) return 0;
    return dtype_table[dt].size;
}

const char *st_dtype_name(StDtype dt) {
    if ((int)dt < 0 || dt >= ST_NDTYPES) return dt == ST_ANY ? "any" : "?";
    return dtype_table[dt].name;
}

int st_dtype_parse(const char *name, StDtype *dt) {
    for (int i = 0; i < ST_NDTYPES; i++) {
        if (strcmp(name, dtype_table[i].name) == 0) {
            *dt = (StDtype)i;
            return 0;
        }
    }
    return -1;
}

char *st_shape_str(char *buf, size_t n, int ndim, const int64_t *shape) {
    size_t used = 0;
    if (n == 0) return buf;
    buf[0] = '\0';
    for (int i = -1; i <= ndim && used < n; i++) {
        int w;
        if (i < 0) w = snprintf(buf + used, n - used, "[");
        else if (i == ndim) w = snprintf(buf + used, n - used, "]");
        else w = snprintf(buf + used, n - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return buf;
}

/* A JSON number that is an exact non-negative integer (< 2^53, the range a
 * double holds exactly). Returns 0 and sets *out, else -1. */
static int json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return -1;
    double v = j->valuedouble;
    if (!isfinite(v) || v < 0 || v != floor(v) || v >= 9007199254740992.0) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* Multiply with overflow detection; returns -1 on overflow. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return -1;
    *out = a * b;
    return 0;
}

static int parse_shape(const StFile *f, const char *name, const cJSON *js, StTensor *t,
                       Err *e) {
    if (!cJSON_IsArray(js)) return err_set(e, "%s: tensor '%s': shape is not an array", f->path, name);
    int nd = cJSON_GetArraySize(js);
    if (nd > ST_MAX_DIMS)
        return err_set(e, "%s: tensor '%s': %d dims (at most %d supported)", f->path, name, nd,
                       ST_MAX_DIMS);
    t->ndim = nd;
    int i = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, js) {
        uint64_t v;
        if (cJSON_IsNumber(d) && d->valuedouble < 0)
            return err_set(e, "%s: tensor '%s': shape entry %d is negative (%g)", f->path, name, i,
                           d->valuedouble);
        if (json_uint(d, &v))
            return err_set(e, "%s: tensor '%s': shape entry %d is not a non-negative integer",
                           f->path, name, i);
        t->shape[i++] = (int64_t)v;
    }
    return 0;
}

static int parse_offsets(const StFile *f, const char *name, const cJSON *jo, uint64_t *begin,
                         uint64_t *end, Err *e) {
    if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2)
        return err_set(e, "%s: tensor '%s': data_offsets is not a [begin, end] pair", f->path, name);
    if (json_uint(cJSON_GetArrayItem(jo, 0), begin) || json_uint(cJSON_GetArrayItem(jo, 1), end))
        return err_set(e, "%s: tensor '%s': data_offsets are not non-negative integers", f->path,
                       name);
    if (*begin > *end || *end > f->data_size)
        return err_set(e, "%s: tensor '%s': data_offsets [%llu, %llu] out of range (data is %zu bytes)",
                       f->path, name, (unsigned long long)*begin, (unsigned long long)*end,
                       f->data_size);
    return 0;
}

/* One header entry that is not __metadata__: fill t, checking everything
 * that can be checked without looking at the other tensors. */
static int parse_tensor(const StFile *f, const cJSON *item, StTensor *t, char *name_at, Err *e) {
    const char *name = item->string;
    memcpy(name_at, name, strlen(name) + 1);
    t->name = name_at;
    if (!cJSON_IsObject(item)) return err_set(e, "%s: tensor '%s': entry is not an object", f->path, name);
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    if (!cJSON_IsString(jd)) return err_set(e, "%s: tensor '%s': dtype missing or not a string", f->path, name);
    if (st_dtype_parse(jd->valuestring, &t->dtype))
        return err_set(e, "%s: tensor '%s': unknown dtype '%.32s'", f->path, name, jd->valuestring);
    if (parse_shape(f, name, cJSON_GetObjectItemCaseSensitive(item, "shape"), t, e)) return -1;
    uint64_t begin = 0, end = 0, n = st_dtype_size(t->dtype);
    if (parse_offsets(f, name, cJSON_GetObjectItemCaseSensitive(item, "data_offsets"), &begin, &end, e))
        return -1;
    for (int i = 0; i < t->ndim; i++) {
        if (mul_u64(n, (uint64_t)t->shape[i], &n)) {
            char sh[160];
            return err_set(e, "%s: tensor '%s': shape %s overflows the byte count", f->path, name,
                           st_shape_str(sh, sizeof sh, t->ndim, t->shape));
        }
    }
    if (n != end - begin) {
        char sh[160];
        return err_set(e, "%s: tensor '%s': %s %s needs %llu bytes but data_offsets [%llu, %llu] hold %llu",
                       f->path, name, st_dtype_name(t->dtype),
                       st_shape_str(sh, sizeof sh, t->ndim, t->shape), (unsigned long long)n,
                       (unsigned long long)begin, (unsigned long long)end,
                       (unsigned long long)(end - begin));
    }
    t->offset = begin;
    t->nbytes = (size_t)n;
    t->data = f->data + begin;
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Duplicate keys would make st_meta ambiguous; sorting keeps this
 * O(n log n) however large a hostile header is. */
static int check_meta_unique(const StFile *f, Err *e) {
    char **keys = malloc(((size_t)f->n_meta + 1) * sizeof *keys);
    if (!keys) return err_set(e, "%s: out of memory", f->path);
    memcpy(keys, f->meta_keys, (size_t)f->n_meta * sizeof *keys);
    qsort(keys, (size_t)f->n_meta, sizeof *keys, cmp_str);
    int rc = 0;
    for (int i = 1; i < f->n_meta && !rc; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            rc = err_set(e, "%s: __metadata__ key '%.64s' appears twice", f->path, keys[i]);
    free(keys);
    return rc;
}

static int parse_meta(StFile *f, const cJSON *jm, Err *e) {
    if (f->meta_keys) return err_set(e, "%s: __metadata__ appears twice", f->path);
    if (!cJSON_IsObject(jm)) return err_set(e, "%s: __metadata__ is not an object", f->path);
    int n = cJSON_GetArraySize(jm);
    f->meta_keys = calloc((size_t)n + 1, sizeof *f->meta_keys);
    f->meta_values = calloc((size_t)n + 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values) return err_set(e, "%s: out of memory", f->path);
    const cJSON *kv;
    cJSON_ArrayForEach(kv, jm) {
        if (!cJSON_IsString(kv))
            return err_set(e, "%s: __metadata__ '%.64s' is not a string", f->path, kv->string);
        f->meta_keys[f->n_meta] = strdup(kv->string);
        f->meta_values[f->n_meta] = strdup(kv->valuestring);
        if (!f->meta_keys[f->n_meta] || !f->meta_values[f->n_meta]) {
            free(f->meta_keys[f->n_meta]);
            free(f->meta_values[f->n_meta]);
            f->meta_keys[f->n_meta] = f->meta_values[f->n_meta] = NULL;
            return err_set(e, "%s: out of memory", f->path);
        }
        f->n_meta++;
    }
    return check_meta_unique(f, e);
}

static int cmp_by_name(const void *a, const void *b) {
    return strcmp((*(const StTensor *const *)a)->name, (*(const StTensor *const *)b)->name);
}

static int cmp_by_offset(const void *a, const void *b) {
    const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->nbytes < y->nbytes ? -1 : x->nbytes > y->nbytes;
}

/* Build the name index, rejecting duplicates, then reject byte ranges that
 * overlap (empty tensors occupy no bytes and overlap nothing). */
static int index_tensors(StFile *f, Err *e) {
    size_t n = (size_t)f->n_tensors;
    f->by_name = malloc((n + 1) * sizeof *f->by_name);
    const StTensor **tmp = malloc((n + 1) * sizeof *tmp);
    if (!f->by_name || !tmp) {
        free(tmp);
        return err_set(e, "%s: out of memory", f->path);
    }
    for (size_t i = 0; i < n; i++) f->by_name[i] = tmp[i] = &f->tensors[i];
    qsort(f->by_name, n, sizeof *f->by_name, cmp_by_name);
    for (size_t i = 1; i < n; i++) {
        if (strcmp(f->by_name[i - 1]->name, f->by_name[i]->name) == 0) {
            free(tmp);
            return err_set(e, "%s: tensor '%s' appears twice", f->path, f->by_name[i]->name);
        }
    }
    qsort(tmp, n, sizeof *tmp, cmp_by_offset);
    const StTensor *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        const StTensor *t = tmp[i];
        if (t->nbytes == 0) continue;
        if (prev && prev->offset + prev->nbytes > t->offset) {
            err_set(e, "%s: tensors '%s' [%llu, %llu] and '%s' [%llu, %llu] overlap", f->path,
                    prev->name, (unsigned long long)prev->offset,
                    (unsigned long long)(prev->offset + prev->nbytes), t->name,
                    (unsigned long long)t->offset, (unsigned long long)(t->offset + t->nbytes));
            free(tmp);
            return -1;
        }
        prev = t;
    }
    free(tmp);
    return 0;
}

/* The bytes of all tensor names (with their NULs), refusing a name of
 * ST_MAX_NAME bytes or more. */
static int names_size(const StFile *f, const cJSON *root, size_t *total, Err *e) {
    const cJSON *item;
    *total = 1;
    cJSON_ArrayForEach(item, root) {
        size_t len = strlen(item->string);
        if (len >= ST_MAX_NAME)
            return err_set(e, "%s: tensor name '%.40s...' is %zu bytes (limit %d)", f->path, item->string, len,
                           ST_MAX_NAME - 1);
        *total += len + 1;
    }
    return 0;
}

static int parse_entries(StFile *f, const cJSON *root, Err *e) {
    int n = cJSON_GetArraySize(root);
    size_t names = 0, used = 0;
    if (names_size(f, root, &names, e)) return -1;
    f->tensors = calloc((size_t)n + 1, sizeof *f->tensors);
    f->names = malloc(names);
    if (!f->tensors || !f->names) return err_set(e, "%s: out of memory", f->path);
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (strcmp(item->string, "__metadata__") == 0) {
            if (parse_meta(f, item, e)) return -1;
            continue;
        }
        if (parse_tensor(f, item, &f->tensors[f->n_tensors], f->names + used, e)) return -1;
        used += strlen(item->string) + 1;
        f->n_tensors++;
    }
    return index_tensors(f, e);
}

/* The top-level entries and (an upper bound on) the JSON values of a header,
 * counted in its text with strings skipped, so that a hostile header is
 * refused before cJSON builds a tree many times its size. */
static void header_counts(const char *h, size_t n, size_t *entries, size_t *values) {
    size_t depth = 0, top = 0, v = 1;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = h[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
        } else if (c == '"') in_str = 1;
        else if (c == '{' || c == '[') depth++, v += 2; /* the container and its first element */
        else if (c == '}' || c == ']') depth -= depth > 0;
        else if (c == ',') v++, top += depth == 1;
    }
    *entries = top + 1, *values = v;
}

static int check_counts(const StFile *f, const char *hdr, size_t hlen, Err *e) {
    size_t entries, values;
    header_counts(hdr, hlen, &entries, &values);
    if (entries > ST_MAX_TENSORS)
        return err_set(e, "%s: header has %zu entries (at most %d tensors per file)", f->path, entries, ST_MAX_TENSORS);
    if (values > ST_MAX_VALUES)
        return err_set(e, "%s: header holds about %zu JSON values (at most %d: 16 a tensor)", f->path, values,
                       ST_MAX_VALUES);
    return 0;
}

/* Validate the buffer already stored in f (base, size) and fill the rest. */
static int parse_file(StFile *f, Err *e) {
    if (f->size < 8) return err_set(e, "%s: file is %zu bytes, too short for a safetensors header", f->path, f->size);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | f->base[i];
    if (hlen > ST_MAX_HEADER)
        return err_set(e, "%s: header length %llu exceeds the %llu-byte limit", f->path,
                       (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
    if (hlen > f->size - 8)
        return err_set(e, "%s: header length %llu is longer than the file (%zu bytes after the length)",
                       f->path, (unsigned long long)hlen, f->size - 8);
    const char *hdr = (const char *)f->base + 8, *end = NULL;
    f->data = f->base + 8 + hlen;
    f->data_size = f->size - 8 - (size_t)hlen;
    if (check_counts(f, hdr, (size_t)hlen, e)) return -1;
    cJSON *root = cJSON_ParseWithLengthOpts(hdr, (size_t)hlen, &end, 0);
    if (!root) {
        long at = end && end >= hdr ? (long)(end - hdr) : 0;
        return err_set(e, "%s: header is not valid JSON (near byte %ld of %llu)", f->path, at,
                       (unsigned long long)hlen);
    }
    int rc = 0;
    for (const char *p = end; p < hdr + hlen && !rc; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            rc = err_set(e, "%s: header has trailing bytes after the JSON (at byte %ld)", f->path,
                         (long)(p - hdr));
    if (!rc && !cJSON_IsObject(root)) rc = err_set(e, "%s: header JSON is not an object", f->path);
    if (!rc) rc = parse_entries(f, root, e);
    cJSON_Delete(root);
    return rc;
}

static void clear(StFile *f) { memset(f, 0, sizeof *f); }

int st_open_buffer(StFile *f, const void *buf, size_t size, const char *name, Err *e) {
    clear(f);
    f->path = strdup(name ? name : "(buffer)");
    if (!f->path) return err_set(e, "%s: out of memory", name ? name : "(buffer)");
    f->base = buf;
    f->size = size;
    if (parse_file(f, e)) {
        st_close(f);
        return -1;
    }
    return 0;
}

int st_open(StFile *f, const char *path, Err *e) {
    clear(f);
    size_t size = 0;
    if (mem_view_path(&f->view, path, "safetensors file", "a safetensors file", 8, "a safetensors header", &size, e))
        return -1;
    f->path = strdup(path);
    f->base = f->view.base;
    f->size = size;
    if (!f->path) {
        st_close(f);
        return err_set(e, "%s: out of memory", path);
    }
    if (parse_file(f, e)) {
        st_close(f);
        return -1;
    }
    return 0;
}

void st_close(StFile *f) {
    if (!f) return;
    mem_view_close(&f->view);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->meta_keys);
    free(f->meta_values);
    free(f->tensors);
    free(f->by_name);
    free(f->names);
    free(f->path);
    clear(f);
}

int st_count(const StFile *f) { return f->n_tensors; }

const StTensor *st_tensor(const StFile *f, int i) {
    return i >= 0 && i < f->n_tensors ? &f->tensors[i] : NULL;
}

const StTensor *st_find(const StFile *f, const char *name) {
    int lo = 0, hi = f->n_tensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, f->by_name[mid]->name);
        if (c == 0) return f->by_name[mid];
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return NULL;
}

const char *st_meta(const StFile *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0) return f->meta_values[i];
    return NULL;
}

int st_meta_count(const StFile *f) { return f->n_meta; }

const char *st_meta_key(const StFile *f, int i) {
    return i >= 0 && i < f->n_meta ? f->meta_keys[i] : NULL;
}

const char *st_meta_value(const StFile *f, int i) {
    return i >= 0 && i < f->n_meta ? f->meta_values[i] : NULL;
}

const StTensor *st_expect(const StFile *f, const char *name, StDtype dt, int ndim,
                          const int64_t *shape, Err *e) {
    const StTensor *t = st_find(f, name);
    if (!t) {
        err_set(e, "%s: tensor '%s' not found", f->path, name);
        return NULL;
    }
    int ok = dt == ST_ANY || t->dtype == dt;
    if (ok && ndim >= 0) {
        ok = t->ndim == ndim;
        for (int i = 0; ok && i < ndim; i++) ok = t->shape[i] == shape[i];
    }
    if (ok) return t;
    char want[160], got[160];
    if (ndim >= 0) st_shape_str(want, sizeof want, ndim > ST_MAX_DIMS ? ST_MAX_DIMS : ndim, shape);
    else snprintf(want, sizeof want, "[any shape]");
    st_shape_str(got, sizeof got, t->ndim, t->shape);
    err_set(e, "%s: tensor '%s': expected %s %s, found %s %s", f->path, name, st_dtype_name(dt),
            want, st_dtype_name(t->dtype), got);
    return NULL;
}
