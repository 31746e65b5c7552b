/* safetensors_write.c — the safetensors writer.
 *
 * The header is produced by hand rather than through cJSON because cJSON
 * prints numbers as doubles, and offsets must stay plain integers for other
 * readers. Tensors are laid out in the order added, each starting 8-aligned;
 * when a tensor's size is not a multiple of 8 that leaves a zero-filled gap,
 * which this reader accepts but the reference Rust reader (which wants
 * contiguous ranges) does not — model tensors are virtually always
 * multiples of 8 bytes, so in practice the output is contiguous.
 */
#include "engine/safetensors.h"
#include "engine/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void st_writer_init(StWriter *w) { memset(w, 0, sizeof *w); }

void st_writer_free(StWriter *w) {
    for (int i = 0; i < w->n_meta; i++) {
        free(w->meta_keys[i]);
        free(w->meta_values[i]);
    }
    free(w->meta_keys);
    free(w->meta_values);
    free(w->tensors);
    memset(w, 0, sizeof *w);
}

static int check_new_tensor(const StWriter *w, const char *name, StDtype dt, int ndim,
                            const int64_t *shape, const void *data, size_t *nbytes, Err *e) {
    if (strlen(name) >= ST_MAX_NAME)
        return err_set(e, "safetensors writer: tensor name '%.40s...' is longer than %d bytes", name,
                       ST_MAX_NAME - 1);
    if (strcmp(name, "__metadata__") == 0)
        return err_set(e, "safetensors writer: '__metadata__' is reserved, not a tensor name");
    if (st_dtype_size(dt) == 0)
        return err_set(e, "safetensors writer: tensor '%s': invalid dtype %d", name, (int)dt);
    if (ndim < 0 || ndim > ST_MAX_DIMS)
        return err_set(e, "safetensors writer: tensor '%s': %d dims (0..%d allowed)", name, ndim,
                       ST_MAX_DIMS);
    uint64_t n = st_dtype_size(dt);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return err_set(e, "safetensors writer: tensor '%s': shape entry %d is negative", name, i);
        uint64_t d = (uint64_t)shape[i];
        if (d != 0 && n > (uint64_t)SIZE_MAX / 2 / d)
            return err_set(e, "safetensors writer: tensor '%s': byte count overflows", name);
        n *= d;
    }
    if (n > 0 && !data) return err_set(e, "safetensors writer: tensor '%s': no data", name);
    for (int i = 0; i < w->n_tensors; i++)
        if (strcmp(w->tensors[i].name, name) == 0)
            return err_set(e, "safetensors writer: tensor '%s' added twice", name);
    *nbytes = (size_t)n;
    return 0;
}

int st_writer_add(StWriter *w, const char *name, StDtype dt, int ndim, const int64_t *shape,
                  const void *data, Err *e) {
    size_t nbytes = 0;
    if (check_new_tensor(w, name, dt, ndim, shape, data, &nbytes, e)) return -1;
    if (w->n_tensors == w->cap_tensors) {
        int cap = w->cap_tensors ? 2 * w->cap_tensors : 16;
        StWriterTensor *p = realloc(w->tensors, (size_t)cap * sizeof *p);
        if (!p) return err_set(e, "safetensors writer: out of memory");
        w->tensors = p;
        w->cap_tensors = cap;
    }
    StWriterTensor *t = &w->tensors[w->n_tensors++];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, strlen(name) + 1);
    t->dtype = dt;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) t->shape[i] = shape[i];
    t->data = data;
    t->nbytes = nbytes;
    return 0;
}

int st_writer_meta(StWriter *w, const char *key, const char *value, Err *e) {
    char *v = strdup(value);
    if (!v) return err_set(e, "safetensors writer: out of memory");
    for (int i = 0; i < w->n_meta; i++) {
        if (strcmp(w->meta_keys[i], key) == 0) {
            free(w->meta_values[i]);
            w->meta_values[i] = v;
            return 0;
        }
    }
    if (w->n_meta == w->cap_meta) {
        int cap = w->cap_meta ? 2 * w->cap_meta : 8;
        char **k = realloc(w->meta_keys, (size_t)cap * sizeof *k);
        if (k) w->meta_keys = k;
        char **vv = k ? realloc(w->meta_values, (size_t)cap * sizeof *vv) : NULL;
        if (vv) w->meta_values = vv;
        if (!k || !vv) {
            free(v);
            return err_set(e, "safetensors writer: out of memory");
        }
        w->cap_meta = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return err_set(e, "safetensors writer: out of memory");
    }
    w->meta_keys[w->n_meta] = k;
    w->meta_values[w->n_meta++] = v;
    return 0;
}

/* A growable string; once an allocation fails it stays failed, so callers
 * check oom once at the end. */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(Buf *b, const char *fmt, ...) {
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0) buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* JSON string literal; bytes >= 0x80 pass through (names are UTF-8). */
static void buf_json_str(Buf *b, const char *s) {
    buf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            buf_put(b, esc, 2);
        } else if (c < 0x20) {
            buf_printf(b, "\\u%04x", c);
        } else {
            buf_put(b, (const char *)&c, 1);
        }
    }
    buf_put(b, "\"", 1);
}

static uint64_t align8(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

/* The JSON header, padded with spaces so the data starts 8-aligned. */
static int build_header(const StWriter *w, Buf *b) {
    buf_put(b, "{", 1);
    if (w->n_meta > 0) {
        buf_put(b, "\"__metadata__\":{", 16);
        for (int i = 0; i < w->n_meta; i++) {
            if (i) buf_put(b, ",", 1);
            buf_json_str(b, w->meta_keys[i]);
            buf_put(b, ":", 1);
            buf_json_str(b, w->meta_values[i]);
        }
        buf_put(b, "}", 1);
    }
    uint64_t off = 0;
    for (int i = 0; i < w->n_tensors; i++) {
        const StWriterTensor *t = &w->tensors[i];
        if (i || w->n_meta > 0) buf_put(b, ",", 1);
        buf_json_str(b, t->name);
        buf_printf(b, ":{\"dtype\":\"%s\",\"shape\":[", st_dtype_name(t->dtype));
        for (int d = 0; d < t->ndim; d++) buf_printf(b, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        off = align8(off);
        buf_printf(b, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                   (unsigned long long)(off + t->nbytes));
        off += t->nbytes;
    }
    buf_put(b, "}", 1);
    while ((8 + b->n) % 8) buf_put(b, " ", 1);
    return b->oom ? -1 : 0;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k == 0) errno = EIO; /* so the message never says "Success" */
        if (k <= 0) return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_body(const StWriter *w, int fd, const Buf *hdr) {
    unsigned char len[8], zeros[8] = {0};
    uint64_t n = hdr->n;
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(n >> (8 * i));
    if (write_all(fd, len, 8) || write_all(fd, hdr->p, hdr->n)) return -1;
    uint64_t off = 0;
    for (int i = 0; i < w->n_tensors; i++) {
        const StWriterTensor *t = &w->tensors[i];
        if (off != align8(off)) {
            if (write_all(fd, zeros, (size_t)(align8(off) - off))) return -1;
            off = align8(off);
        }
        if (t->nbytes && write_all(fd, t->data, t->nbytes)) return -1;
        off += t->nbytes;
    }
    return 0;
}

int st_write(const StWriter *w, const char *path, Err *e) {
    Buf hdr = {0};
    if (build_header(w, &hdr)) {
        free(hdr.p);
        return err_set(e, "%s: out of memory building the header", path);
    }
    FileAtomic a;
    int rc = -1;
    if (file_atomic_open(&a, path, e)) { /* unbuffered writes to its descriptor; commit syncs */
        if (write_body(w, fileno(a.f), &hdr) == 0) rc = file_atomic_commit(&a, e);
        else rc = err_set(e, "%s: write failed: %s", path, strerror(errno));
        file_atomic_abort(&a);
    }
    free(hdr.p);
    return rc;
}
