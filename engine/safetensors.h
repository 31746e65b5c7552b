/* safetensors.h — read and write the safetensors tensor container.
 *
 * Layout: an 8-byte little-endian u64 N, N bytes of JSON header, then the
 * data. The header maps tensor names to {"dtype", "shape", "data_offsets"}
 * (offsets relative to the first data byte) and may carry "__metadata__", a
 * string-to-string object. Router files (engine/routers.c) and Hugging Face
 * checkpoints (engine/model_hf.c) both use it.
 *
 * The reader memory-maps the file and validates the whole header up front,
 * so a successfully opened StFile hands out tensors whose bytes are known to
 * lie inside the mapping. Tensor data is used in place, never copied; it is
 * 8-byte aligned in files this project writes (and in those written by the
 * reference Rust/Python writers), but callers needing alignment for other
 * files should check the pointer.
 */
#ifndef AHASCOPE_SAFETENSORS_H
#define AHASCOPE_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/err.h"
#include "engine/mem.h"

#define ST_MAX_DIMS 8
#define ST_MAX_NAME 256                       /* names are shorter than this */
#define ST_MAX_HEADER ((uint64_t)100000000)   /* header bytes, as the reference */
/* Counted in the header text before it is parsed: a JSON tree costs about
 * 64 bytes a value, so a 60 MB header of a million empty tensors once took
 * over 1 GB. Real files hold at most a few thousand tensors per file. */
#define ST_MAX_TENSORS 65536                  /* top-level entries */
#define ST_MAX_VALUES (16 * ST_MAX_TENSORS)   /* JSON values in the whole header */

typedef enum {
    ST_BOOL,
    ST_U8,
    ST_I8,
    ST_F8_E4M3,
    ST_F8_E5M2,
    ST_I16,
    ST_U16,
    ST_F16,
    ST_BF16,
    ST_I32,
    ST_U32,
    ST_F32,
    ST_I64,
    ST_U64,
    ST_F64,
    ST_NDTYPES,
    ST_ANY = -1 /* only for st_expect: accept whatever dtype is stored */
} StDtype;

typedef struct {
    const char *name;  /* in the StFile's name block; valid until st_close */
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data;  /* points into the mapping; valid until st_close */
    size_t nbytes;     /* = product(shape) * st_dtype_size(dtype) */
    uint64_t offset;   /* begin offset relative to the data section */
} StTensor;

typedef struct {
    char *path;             /* as given to st_open; used in every message */
    const uint8_t *base;    /* whole file (held in view, or caller's buffer) */
    size_t size;
    MemView view;           /* what st_open holds the file in; zeroed for a caller's buffer */
    const uint8_t *data;    /* first byte after the header */
    size_t data_size;
    StTensor *tensors;      /* in header order */
    int n_tensors;
    const StTensor **by_name; /* tensors sorted by name, for st_find */
    char *names;            /* every tensor's name, NUL-separated, in one block */
    char **meta_keys;       /* __metadata__, in header order */
    char **meta_values;
    int n_meta;
} StFile;

/* Size in bytes of one element of dt (0 for ST_ANY or an invalid value). */
size_t st_dtype_size(StDtype dt);

/* The safetensors spelling of dt ("F32", "BF16", ...); "?" if invalid. */
const char *st_dtype_name(StDtype dt);

/* Parse a safetensors dtype string; returns 0 and sets *dt, or -1 if the
 * name is not one this reader knows. */
int st_dtype_parse(const char *name, StDtype *dt);

/* Map path read-only and validate its header completely (sizes, dtypes,
 * shapes, offsets, overlaps, unique names, string metadata), refusing a
 * header of more than ST_MAX_TENSORS entries or ST_MAX_VALUES JSON values
 * before parsing it. On failure f is
 * left empty (st_close is still safe) and e holds one line naming the file
 * and, where relevant, the tensor. */
int st_open(StFile *f, const char *path, Err *e);

/* Like st_open, but over a caller-owned buffer that must outlive f; name is
 * used in error messages. For tests and fuzzing. */
int st_open_buffer(StFile *f, const void *buf, size_t size, const char *name, Err *e);

/* Unmap the file and free everything st_open allocated; f becomes empty. */
void st_close(StFile *f);

/* Number of tensors in the file. */
int st_count(const StFile *f);

/* The i-th tensor in header order, or NULL if i is out of range. */
const StTensor *st_tensor(const StFile *f, int i);

/* The tensor called name, or NULL if there is none (binary search). */
const StTensor *st_find(const StFile *f, const char *name);

/* The metadata value for key, or NULL if absent. */
const char *st_meta(const StFile *f, const char *key);

/* Number of metadata entries, and the i-th key/value (NULL if out of range). */
int st_meta_count(const StFile *f);
const char *st_meta_key(const StFile *f, int i);
const char *st_meta_value(const StFile *f, int i);

/* The tensor called name, checked to have dtype dt (unless ST_ANY) and, when
 * ndim >= 0, exactly ndim dims equal to shape[]. Returns NULL with a message
 * naming the tensor and expected vs actual when missing or mismatched. */
const StTensor *st_expect(const StFile *f, const char *name, StDtype dt, int ndim,
                          const int64_t *shape, Err *e);

/* Writes "[d0, d1, ...]" into buf (size n, always NUL-terminated); returns buf. */
char *st_shape_str(char *buf, size_t n, int ndim, const int64_t *shape);

/* ---- writer ---- */

typedef struct {
    char name[ST_MAX_NAME];
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data;  /* borrowed: must stay valid until st_write returns */
    size_t nbytes;
} StWriterTensor;

typedef struct {
    StWriterTensor *tensors;
    int n_tensors, cap_tensors;
    char **meta_keys;
    char **meta_values;
    int n_meta, cap_meta;
} StWriter;

/* Start an empty writer. */
void st_writer_init(StWriter *w);

/* Queue a tensor (data is borrowed, not copied). Rejects names that are too
 * long, duplicate or "__metadata__", bad dims, negative shapes and sizes that
 * overflow. Tensors are written in the order added. */
int st_writer_add(StWriter *w, const char *name, StDtype dt, int ndim,
                  const int64_t *shape, const void *data, Err *e);

/* Add (or replace) a metadata pair; both strings are copied. */
int st_writer_meta(StWriter *w, const char *key, const char *value, Err *e);

/* Write the file atomically (through FileAtomic: a fresh temporary beside
 * it, fsync, rename). The header is padded with spaces to a multiple of 8 bytes and each tensor starts 8-aligned. */
int st_write(const StWriter *w, const char *path, Err *e);

/* Free the writer's own allocations (not the borrowed tensor data). */
void st_writer_free(StWriter *w);

#endif
