/* test_safetensors.c — the safetensors reader and writer, on hand-written, malformed and mutated files. */
#include "tests/test.h"
#include "engine/safetensors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Write a safetensors file by hand: the given header length (or the JSON's
 * own length when hlen < 0), the JSON, then ndata bytes 0, 1, 2, ... */
static const char *raw_file(const char *fname, const char *json, long long hlen, size_t ndata) {
    const char *path = test_tmp(fname);
    size_t jl = strlen(json);
    uint64_t n = hlen < 0 ? (uint64_t)jl : (uint64_t)hlen;
    unsigned char *buf = malloc(8 + jl + ndata);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, json, jl);
    for (size_t i = 0; i < ndata; i++) buf[8 + jl + i] = (unsigned char)i;
    test_write_file(path, buf, (long)(8 + jl + ndata));
    free(buf);
    return path;
}

/* Expect st_open to fail with a one-line message naming path and containing
 * want. */
static void expect_open_error(const char *path, const char *want, int line) {
    StFile f;
    Err e = {0};
    int rc = st_open(&f, path, &e);
    CHECK_MSG(rc != 0, "line %d: st_open(%s) succeeded, expected '%s'", line, path, want);
    CHECK_MSG(strstr(e.msg, path) == e.msg, "line %d: message does not start with the path: %s", line, e.msg);
    CHECK_MSG(strstr(e.msg, want) != NULL, "line %d: message '%s' lacks '%s'", line, e.msg, want);
    CHECK_MSG(strchr(e.msg, '\n') == NULL, "line %d: message has a newline: %s", line, e.msg);
    CHECK(f.n_tensors == 0 && f.base == NULL && f.path == NULL);
    st_close(&f);
}
#define EXPECT_OPEN_ERROR(path, want) expect_open_error(path, want, __LINE__)

#define T_F32(name, shape, b, e) "\"" name "\":{\"dtype\":\"F32\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

TEST(safetensors_reads_hand_written_file) {
    /* Two little-endian floats 1.0 and -2.0 after a reference-style header. */
    const char *json = "{\"__metadata__\":{\"format\":\"pt\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ";
    const char *path = test_tmp("hand.safetensors");
    size_t jl = strlen(json);
    unsigned char buf[256] = {0};
    buf[0] = (unsigned char)jl;
    memcpy(buf + 8, json, jl);
    const unsigned char vals[8] = {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0};
    memcpy(buf + 8 + jl, vals, 8);
    test_write_file(path, buf, (long)(8 + jl + 8));
    StFile f;
    Err e = {0};
    CHECK(st_open(&f, path, &e) == 0);
    if (e.msg[0]) printf("%s\n", e.msg);
    CHECK_INT(st_count(&f), 1);
    const StTensor *t = st_find(&f, "w");
    CHECK(t != NULL);
    if (t) {
        float v[2];
        memcpy(v, t->data, 8);
        CHECK_NEAR(v[0], 1.0, 0);
        CHECK_NEAR(v[1], -2.0, 0);
        CHECK_INT(t->dtype, ST_F32);
        CHECK_INT(t->ndim, 1);
        CHECK_INT(t->shape[0], 2);
        CHECK_INT(t->nbytes, 8);
    }
    CHECK(st_meta(&f, "format") && strcmp(st_meta(&f, "format"), "pt") == 0);
    CHECK(st_meta(&f, "missing") == NULL);
    CHECK(st_find(&f, "x") == NULL);
    st_close(&f);
}

TEST(safetensors_round_trip) {
    float a[6] = {1.5f, -2.25f, 3.0f, 1e-30f, 65504.0f, -0.0f};
    uint16_t b[5] = {0x3f80, 0xc020, 0x7f80, 0x0001, 0xffff}; /* 10 bytes: forces a gap */
    int64_t c = -1234567890123LL;
    int32_t d[6] = {1, -2, 3, -4, 5, 2147483647};
    int64_t sa[2] = {2, 3}, sb[1] = {5}, sd[3] = {3, 1, 2}, se[2] = {0, 4};
    StWriter w;
    Err e = {0};
    st_writer_init(&w);
    CHECK(st_writer_add(&w, "layer.0.a", ST_F32, 2, sa, a, &e) == 0);
    CHECK(st_writer_add(&w, "b", ST_BF16, 1, sb, b, &e) == 0);
    CHECK(st_writer_add(&w, "c.scalar", ST_I64, 0, NULL, &c, &e) == 0);
    CHECK(st_writer_add(&w, "d", ST_I32, 3, sd, d, &e) == 0);
    CHECK(st_writer_add(&w, "empty", ST_U8, 2, se, NULL, &e) == 0);
    CHECK(st_writer_meta(&w, "window", "64", &e) == 0);
    CHECK(st_writer_meta(&w, "odd \"key\"", "back\\slash\nnew line \xc3\xa9", &e) == 0);
    CHECK(st_writer_meta(&w, "window", "128", &e) == 0); /* replaces */
    const char *path = test_tmp("rt.safetensors");
    test_write_file(path, "old", 3); /* overwritten atomically */
    CHECK(st_write(&w, path, &e) == 0);
    st_writer_free(&w);

    CHECK_INT(test_count_tmp(path), 0); /* the temporary was renamed onto path */
    long len = 0;
    unsigned char *bytes = (unsigned char *)test_read_file(path, &len);
    CHECK(bytes && len > 8 && bytes[0] % 8 == 0 && bytes[8] == '{');
    free(bytes);

    StFile f;
    CHECK(st_open(&f, path, &e) == 0);
    CHECK_INT(st_count(&f), 5);
    const char *order[5] = {"layer.0.a", "b", "c.scalar", "d", "empty"};
    for (int i = 0; i < 5 && st_count(&f) == 5; i++) {
        CHECK(strcmp(st_tensor(&f, i)->name, order[i]) == 0);
        CHECK_INT((uintptr_t)st_tensor(&f, i)->data % 8, 0);
    }
    CHECK(st_tensor(&f, 5) == NULL && st_tensor(&f, -1) == NULL);
    const StTensor *t = st_expect(&f, "layer.0.a", ST_F32, 2, sa, &e);
    CHECK(t && t->nbytes == sizeof a && memcmp(t->data, a, sizeof a) == 0);
    t = st_expect(&f, "b", ST_BF16, 1, sb, &e);
    CHECK(t && t->nbytes == sizeof b && memcmp(t->data, b, sizeof b) == 0);
    t = st_expect(&f, "c.scalar", ST_I64, 0, NULL, &e);
    CHECK(t && t->nbytes == 8 && memcmp(t->data, &c, 8) == 0);
    t = st_expect(&f, "d", ST_I32, 3, sd, &e);
    CHECK(t && t->nbytes == sizeof d && memcmp(t->data, d, sizeof d) == 0);
    t = st_expect(&f, "empty", ST_U8, 2, se, &e);
    CHECK(t && t->nbytes == 0);
    CHECK_INT(st_meta_count(&f), 2);
    CHECK(st_meta(&f, "window") && strcmp(st_meta(&f, "window"), "128") == 0);
    const char *odd = st_meta(&f, "odd \"key\"");
    CHECK(odd && strcmp(odd, "back\\slash\nnew line \xc3\xa9") == 0);
    CHECK(st_meta_key(&f, 0) && strcmp(st_meta_key(&f, 0), "window") == 0);
    CHECK(st_meta_value(&f, 2) == NULL);
    st_close(&f);
    st_close(&f); /* closing twice is harmless */
}

TEST(safetensors_expect_reports_mismatch) {
    float a[6] = {0};
    int64_t sa[2] = {2, 3}, wrong[2] = {3, 2};
    StWriter w;
    Err e = {0};
    st_writer_init(&w);
    CHECK(st_writer_add(&w, "router", ST_F32, 2, sa, a, &e) == 0);
    const char *path = test_tmp("expect.safetensors");
    CHECK(st_write(&w, path, &e) == 0);
    st_writer_free(&w);
    StFile f;
    CHECK(st_open(&f, path, &e) == 0);
    CHECK(st_expect(&f, "router", ST_F32, 2, wrong, &e) == NULL);
    CHECK_MSG(strstr(e.msg, "tensor 'router': expected F32 [3, 2], found F32 [2, 3]") != NULL, "%s", e.msg);
    CHECK(st_expect(&f, "router", ST_BF16, 2, sa, &e) == NULL);
    CHECK_MSG(strstr(e.msg, "expected BF16 [2, 3], found F32 [2, 3]") != NULL, "%s", e.msg);
    CHECK(st_expect(&f, "router", ST_F32, 1, sa, &e) == NULL);
    CHECK(st_expect(&f, "nope", ST_F32, 2, sa, &e) == NULL);
    CHECK_MSG(strstr(e.msg, "tensor 'nope' not found") && strstr(e.msg, path) == e.msg, "%s", e.msg);
    CHECK(st_expect(&f, "router", ST_ANY, -1, NULL, &e) != NULL);
    st_close(&f);
}

TEST(safetensors_writer_rejects_bad_tensors) {
    StWriter w;
    Err e = {0};
    float x[4] = {0};
    int64_t s1[1] = {4}, neg[1] = {-1}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 4};
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    st_writer_init(&w);
    CHECK(st_writer_add(&w, "x", ST_F32, 1, s1, x, &e) == 0);
    CHECK(st_writer_add(&w, "x", ST_F32, 1, s1, x, &e) != 0 && strstr(e.msg, "twice"));
    CHECK(st_writer_add(&w, "__metadata__", ST_F32, 1, s1, x, &e) != 0);
    CHECK(st_writer_add(&w, "y", ST_F32, 1, neg, x, &e) != 0 && strstr(e.msg, "negative"));
    CHECK(st_writer_add(&w, "y", ST_F32, 9, s9, x, &e) != 0 && strstr(e.msg, "9 dims"));
    CHECK(st_writer_add(&w, "y", ST_F32, 1, s1, NULL, &e) != 0 && strstr(e.msg, "no data"));
    CHECK(st_writer_add(&w, longname, ST_F32, 1, s1, x, &e) != 0);
    CHECK(st_writer_add(&w, "y", ST_ANY, 1, s1, x, &e) != 0);
    CHECK_INT(w.n_tensors, 1);
    CHECK(st_write(&w, test_tmp("no-such-dir/out.safetensors"), &e) != 0 && strstr(e.msg, "no-such-dir"));
    st_writer_free(&w);
}

TEST(safetensors_malformed_files_give_clear_errors) {
    char big[400];
    {   /* 5 bytes: not even the length field */
        const char *p = test_tmp("short.st");
        test_write_file(p, "\x05\0\0\0\0", 5);
        EXPECT_OPEN_ERROR(p, "file is 5 bytes, too short");
    }
    EXPECT_OPEN_ERROR(raw_file("empty.st", "", 0, 0), "not valid JSON");
    {   /* genuinely empty: 0 bytes */
        const char *p = test_tmp("zero.st");
        test_write_file(p, "", 0);
        EXPECT_OPEN_ERROR(p, "too short");
    }
    EXPECT_OPEN_ERROR(raw_file("hlong.st", "{}", 1000, 0), "longer than the file");
    EXPECT_OPEN_ERROR(raw_file("hhuge.st", "{}", 200000000, 0), "exceeds the 100000000-byte limit");
    EXPECT_OPEN_ERROR(raw_file("nojson.st", "{not json", -1, 0), "not valid JSON");
    EXPECT_OPEN_ERROR(raw_file("array.st", "[1,2]", -1, 0), "not an object");
    EXPECT_OPEN_ERROR(raw_file("trail.st", "{} x", -1, 0), "trailing bytes");
    EXPECT_OPEN_ERROR(raw_file("dtype.st", "{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4),
                      "tensor 'a': unknown dtype 'F33'");
    EXPECT_OPEN_ERROR(raw_file("nodtype.st", "{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", -1, 4),
                      "tensor 'a': dtype missing");
    EXPECT_OPEN_ERROR(raw_file("size.st", "{" T_F32("a", "[2,3]", 0, 20) "}", -1, 24),
                      "tensor 'a': F32 [2, 3] needs 24 bytes but data_offsets [0, 20] hold 20");
    EXPECT_OPEN_ERROR(raw_file("range.st", "{" T_F32("a.weight", "[24]", 0, 96) "}", -1, 64),
                      "tensor 'a.weight': data_offsets [0, 96] out of range (data is 64 bytes)");
    EXPECT_OPEN_ERROR(raw_file("backw.st", "{" T_F32("a", "[1]", 8, 4) "}", -1, 16), "out of range");
    EXPECT_OPEN_ERROR(raw_file("frac.st", "{" T_F32("a", "[1]", 0.5, 4.5) "}", -1, 16),
                      "data_offsets are not non-negative integers");
    EXPECT_OPEN_ERROR(raw_file("overlap.st", "{" T_F32("a", "[4]", 0, 16) "," T_F32("b", "[4]", 8, 24) "}", -1, 24),
                      "tensors 'a' [0, 16] and 'b' [8, 24] overlap");
    EXPECT_OPEN_ERROR(raw_file("neg.st", "{" T_F32("a", "[-1,4]", 0, 16) "}", -1, 16),
                      "tensor 'a': shape entry 0 is negative");
    EXPECT_OPEN_ERROR(raw_file("fshape.st", "{" T_F32("a", "[1.5]", 0, 4) "}", -1, 16), "not a non-negative integer");
    EXPECT_OPEN_ERROR(raw_file("dims.st", "{" T_F32("a", "[1,1,1,1,1,1,1,1,1]", 0, 4) "}", -1, 4),
                      "tensor 'a': 9 dims");
    EXPECT_OPEN_ERROR(raw_file("ovf.st", "{" T_F32("a", "[4294967296,4294967296,4294967296]", 0, 4) "}", -1, 4),
                      "overflows");
    EXPECT_OPEN_ERROR(raw_file("dup.st", "{" T_F32("a", "[1]", 0, 4) "," T_F32("a", "[1]", 4, 8) "}", -1, 8),
                      "tensor 'a' appears twice");
    EXPECT_OPEN_ERROR(raw_file("meta.st", "{\"__metadata__\":{\"window\":128}}", -1, 0),
                      "__metadata__ 'window' is not a string");
    EXPECT_OPEN_ERROR(raw_file("meta2.st", "{\"__metadata__\":[\"x\"]}", -1, 0), "__metadata__ is not an object");
    EXPECT_OPEN_ERROR(raw_file("meta3.st", "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", -1, 0),
                      "key 'k' appears twice");
    EXPECT_OPEN_ERROR(raw_file("entry.st", "{\"a\":3}", -1, 0), "tensor 'a': entry is not an object");
    snprintf(big, sizeof big, "{\"%0300d\":{}}", 0);
    EXPECT_OPEN_ERROR(raw_file("longname.st", big, -1, 0), "limit 255");
    EXPECT_OPEN_ERROR(test_tmp("does-not-exist.st"), "No such file");
    EXPECT_OPEN_ERROR(test_tmpdir(), "not a safetensors file (a directory)");
}

TEST(safetensors_truncated_file_is_an_error) {
    float a[16];
    for (int i = 0; i < 16; i++) a[i] = (float)i;
    int64_t s[1] = {16};
    StWriter w;
    Err e = {0};
    st_writer_init(&w);
    CHECK(st_writer_add(&w, "model.layers.0.self_attn.router.weight", ST_F32, 1, s, a, &e) == 0);
    const char *path = test_tmp("trunc.safetensors");
    CHECK(st_write(&w, path, &e) == 0);
    st_writer_free(&w);
    long len = 0;
    char *bytes = test_read_file(path, &len);
    CHECK(bytes != NULL);
    if (!bytes) return;
    test_write_file(path, bytes, len - 4);
    EXPECT_OPEN_ERROR(path, "tensor 'model.layers.0.self_attn.router.weight': data_offsets [0, 64] out of range (data is 60 bytes)");
    /* Every strict prefix of the file must fail cleanly (ASan checks the
     * reads stay inside each exactly-sized copy). */
    for (long n = 0; n < len; n++) {
        char *cut = malloc(n ? (size_t)n : 1);
        memcpy(cut, bytes, (size_t)n);
        StFile f;
        CHECK_MSG(st_open_buffer(&f, cut, (size_t)n, "cut", &e) != 0, "prefix of %ld bytes opened", n);
        st_close(&f);
        free(cut);
    }
    free(bytes);
}

/* Deterministic byte mutations of a valid file: whatever st_open_buffer
 * accepts must have every tensor inside the buffer; nothing may crash. */
TEST(safetensors_mutations_never_escape_the_buffer) {
    float a[6] = {1, 2, 3, 4, 5, 6};
    uint16_t b[4] = {1, 2, 3, 4};
    int64_t sa[2] = {2, 3}, sb[1] = {4};
    StWriter w;
    Err e = {0};
    st_writer_init(&w);
    st_writer_add(&w, "a", ST_F32, 2, sa, a, &e);
    st_writer_add(&w, "b", ST_F16, 1, sb, b, &e);
    st_writer_meta(&w, "k", "v", &e);
    const char *path = test_tmp("fuzz.safetensors");
    CHECK(st_write(&w, path, &e) == 0);
    st_writer_free(&w);
    long len = 0;
    unsigned char *orig = (unsigned char *)test_read_file(path, &len);
    CHECK(orig != NULL);
    if (!orig) return;
    unsigned char *m = malloc((size_t)len);
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    int accepted = 0;
    const char alphabet[] = "{}[]\",:-0123456789eE. FBUI\\";
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(m, orig, (size_t)len);
        int nmut = 1 + iter % 3;
        for (int k = 0; k < nmut; k++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)((seed >> 33) % (uint64_t)len);
            unsigned char v = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
            m[pos] = (iter & 1) ? v : (unsigned char)(seed >> 12);
        }
        StFile f;
        if (st_open_buffer(&f, m, (size_t)len, "fuzz", &e) == 0) {
            accepted++;
            for (int i = 0; i < st_count(&f); i++) {
                const StTensor *t = st_tensor(&f, i);
                const unsigned char *p = t->data;
                CHECK(p >= m && p + t->nbytes <= m + len);
            }
        } else {
            CHECK(strncmp(e.msg, "fuzz: ", 6) == 0);
        }
        st_close(&f);
    }
    CHECK(accepted > 0); /* mutations in tensor data keep the file valid */
    free(m);
    free(orig);
}

TEST(safetensors_dtype_table) {
    CHECK_INT(st_dtype_size(ST_F32), 4);
    CHECK_INT(st_dtype_size(ST_BF16), 2);
    CHECK_INT(st_dtype_size(ST_F16), 2);
    CHECK_INT(st_dtype_size(ST_I64), 8);
    CHECK_INT(st_dtype_size(ST_U8), 1);
    CHECK_INT(st_dtype_size(ST_ANY), 0);
    for (int i = 0; i < ST_NDTYPES; i++) {
        StDtype d;
        CHECK(st_dtype_parse(st_dtype_name((StDtype)i), &d) == 0 && (int)d == i);
    }
    StDtype d;
    CHECK(st_dtype_parse("f32", &d) != 0);
    char buf[64];
    int64_t s[3] = {2, 0, 7};
    CHECK(strcmp(st_shape_str(buf, sizeof buf, 3, s), "[2, 0, 7]") == 0);
    CHECK(strcmp(st_shape_str(buf, sizeof buf, 0, s), "[]") == 0);
}
