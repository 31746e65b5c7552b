/* gguf.h — read the GGUF tensor container (ggml's single-file model format).
 *
 * Layout (v2 and v3, little-endian): "GGUF", a u32 version, a u64 tensor
 * count, a u64 metadata count; the metadata as key/value pairs (a key is a
 * string: u64 length then bytes; a value is a u32 type then its payload,
 * arrays being an element type, a u64 count and the elements); the tensor
 * infos (name, u32 n_dims, u64 dims with the fastest-varying first, u32 ggml
 * type, u64 offset); then, padded to general.alignment (default 32), the
 * data section the offsets are relative to.
 *
 * gguf_open validates everything before handing anything out: every count,
 * length, type, dimension, offset and size is bounded against the bytes that
 * remain before it is used to allocate or index, tensors may not overlap or
 * run past the end, names and keys are unique. So a caller of an opened
 * GgufFile may read any tensor's nbytes at data and any array element
 * without further checks. Nested arrays and big-endian files are refused
 * (neither appears in files written by ggml's converters). Nothing here
 * keeps state beyond the GgufFile.
 */
#ifndef AHASCOPE_GGUF_H
#define AHASCOPE_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "engine/err.h"
#include "engine/mem.h"

#define GGUF_MAX_DIMS 4
#define GGUF_MAX_NAME 256              /* tensor names are shorter than this */
#define GGUF_MAX_KEY 65536             /* metadata keys are shorter than this (the spec's limit) */
#define GGUF_MAX_TENSORS 65536         /* tensor infos per file */
#define GGUF_MAX_KV 65536              /* metadata pairs per file */
#define GGUF_MAX_ALIGN 65536           /* general.alignment at most this */
#define GGUF_MAX_ELEMS ((uint64_t)1 << 48) /* elements of one tensor */

/* Metadata value types, numbered as the format numbers them. */
typedef enum {
    GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3, GGUF_U32 = 4, GGUF_I32 = 5,
    GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_U64 = 10,
    GGUF_I64 = 11, GGUF_F64 = 12, GGUF_NVTYPES
} GgufVType;

/* Tensor types known by their block layout, numbered as ggml numbers them
 * (the gaps are ids ggml retired or quantisations this reader does not size). */
typedef enum {
    GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q4_1 = 3, GGML_Q5_0 = 6, GGML_Q5_1 = 7,
    GGML_Q8_0 = 8, GGML_Q8_1 = 9, GGML_Q2_K = 10, GGML_Q3_K = 11, GGML_Q4_K = 12,
    GGML_Q5_K = 13, GGML_Q6_K = 14, GGML_Q8_K = 15, GGML_BF16 = 30, GGML_NTYPES = 31
} GgmlType;

typedef struct {
    const char *key;        /* NUL-terminated copy; valid until gguf_close */
    GgufVType type;
    GgufVType elem;         /* for GGUF_ARRAY: the element type (never an array) */
    uint64_t count;         /* for GGUF_ARRAY: the number of elements */
    union {
        uint64_t u;         /* U8..U64 and BOOL, widened */
        int64_t i;          /* I8..I64, sign-extended */
        double f;           /* F32, F64 */
    } v;
    const char *str;        /* GGUF_STRING: NUL-terminated copy (may hold NULs: see len) */
    uint64_t len;           /* GGUF_STRING: its length in bytes */
    const uint8_t *arr;     /* GGUF_ARRAY: first element's bytes, in the file */
    uint64_t *str_at;       /* GGUF_ARRAY of strings: each element's offset from arr */
} GgufKv;

typedef struct {
    const char *name;       /* NUL-terminated copy; valid until gguf_close */
    int n_dims;
    int64_t ne[GGUF_MAX_DIMS]; /* fastest-varying first (ggml's order); unused ones are 1 */
    GgmlType type;
    uint64_t offset;        /* from the start of the data section */
    size_t nbytes;
    const void *data;       /* in the file; valid until gguf_close */
} GgufTensor;

typedef struct {
    char *path;             /* used in every message */
    const uint8_t *base;    /* the whole file */
    size_t size;
    MemView view;           /* zeroed for a caller's buffer */
    uint32_t version;
    uint32_t alignment;
    size_t data_start;      /* offset of the data section in the file */
    GgufKv *kv;
    int n_kv;
    GgufTensor *tensors;    /* in file order */
    int n_tensors;
} GgufFile;

/* 1 if the first n bytes begin with the GGUF magic. */
int gguf_sniff(const void *b, size_t n);

/* Map path read-only and validate it wholly (header, metadata, tensor
 * infos, alignment, sizes, overlaps). On failure f is left empty
 * (gguf_close is still safe) and e holds one line "PATH: problem". */
int gguf_open(GgufFile *f, const char *path, Err *e);

/* As gguf_open over a caller-owned buffer that must outlive f; name is used
 * in messages. For tests and fuzzing. */
int gguf_open_buffer(GgufFile *f, const void *buf, size_t size, const char *name, Err *e);

/* Release everything gguf_open made; f becomes empty. */
void gguf_close(GgufFile *f);

/* The metadata pair called key, or NULL. */
const GgufKv *gguf_find_kv(const GgufFile *f, const char *key);

/* The tensor called name, or NULL. */
const GgufTensor *gguf_find_tensor(const GgufFile *f, const char *name);

/* key's value as an integer when it is stored as any integer type (or bool)
 * that fits an int64; 0 and *out set, else -1 (absent, other type). */
int gguf_get_int(const GgufFile *f, const char *key, int64_t *out);

/* key's value as a double (any integer or float type); 0 or -1 as above. */
int gguf_get_float(const GgufFile *f, const char *key, double *out);

/* key's string value, or NULL when absent or not a string. */
const char *gguf_get_str(const GgufFile *f, const char *key);

/* Element i of a string array: its bytes (not NUL-terminated) and length. */
const char *gguf_arr_str(const GgufKv *kv, uint64_t i, uint64_t *len);

/* ggml's spelling of a tensor type ("F32", "Q4_K", ...), "?" if unknown. */
const char *gguf_type_name(GgmlType t);

/* Elements per block and bytes per block of t; 0 and 0 if unknown. */
int gguf_type_block(GgmlType t, uint64_t *elems, uint64_t *bytes);

/* The format's name of a metadata value type ("u32", "string", ...). */
const char *gguf_vtype_name(GgufVType t);

/* Widen n elements of a row of type t at src to floats, bit for bit as
 * ggml's to_float (engine/quant.h): F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1,
 * Q8_0 and Q2_K to Q6_K, n a multiple of the block size. Returns 0, or -1
 * with a message for any other type or count. */
int gguf_dequant(GgmlType t, const void *src, float *dst, int64_t n, Err *e);

#endif
