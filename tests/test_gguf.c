/* test_gguf.c — the GGUF reader on hand-built files, a table of hostile ones, widening, stories260K.gguf. */
#include "tests/quant_fixture.h"
#include "tests/test.h"
#include "engine/aha.h"
#include "engine/forward.h"
#include "engine/gemm_q.h"
#include "engine/gguf.h"
#include "engine/quant.h"
#include "engine/half.h"
#include "engine/matvec.h"
#include "engine/model.h"
#include "engine/tokenize/tokenize.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A GGUF file being built, and where its fields landed, so that a hostile
 * variant is the valid file with one field patched. */
typedef struct {
    uint8_t b[4096];
    size_t n;
    size_t at_version, at_ntensors, at_arch_len, at_align_val, at_key_b, at_i8_type, at_tok_elem, at_tok_count,
        at_bool_val, at_t0_ndims, at_t0_ne0, at_t0_type, at_t1_name, at_t1_offset, at_t1_ne1;
} Gb;

static void put(Gb *g, const void *p, size_t n) {
    memcpy(g->b + g->n, p, n);
    g->n += n;
}
static void put_le(Gb *g, uint64_t v, int n) {
    for (int i = 0; i < n; i++) g->b[g->n++] = (uint8_t)(v >> (8 * i));
}
static void put_str(Gb *g, const char *s) {
    put_le(g, strlen(s), 8);
    put(g, s, strlen(s));
}
/* A key and its value type; the payload follows. */
static void put_key(Gb *g, const char *k, GgufVType t) {
    put_str(g, k);
    put_le(g, (uint64_t)t, 4);
}
static void patch(Gb *g, size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; i++) g->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* Every scalar type once, a string, two arrays (strings, f32). */
static void put_kvs(Gb *g) {
    put_key(g, "general.architecture", GGUF_STRING);
    g->at_arch_len = g->n;
    put_str(g, "llama");
    put_key(g, "general.alignment", GGUF_U32);
    g->at_align_val = g->n;
    put_le(g, 32, 4);
    put_key(g, "llama.block_count", GGUF_U32), put_le(g, 2, 4);
    put_key(g, "llama.embedding_length", GGUF_U64), put_le(g, 4, 8);
    put_key(g, "x.a", GGUF_U8), put_le(g, 200, 1);
    g->at_key_b = g->n + 8 + 2; /* the 'b' of "x.b" */
    put_key(g, "x.b", GGUF_I8);
    g->at_i8_type = g->n - 4;
    put_le(g, (uint8_t)-3, 1);
    put_key(g, "x.u16", GGUF_U16), put_le(g, 65535, 2);
    put_key(g, "x.i16", GGUF_I16), put_le(g, (uint16_t)-300, 2);
    put_key(g, "x.i32", GGUF_I32), put_le(g, (uint32_t)-70000, 4);
    put_key(g, "x.i64", GGUF_I64), put_le(g, (uint64_t)-5000000000LL, 8);
    float f = 0.25f;
    double d = -1.5;
    uint32_t fb;
    uint64_t db;
    memcpy(&fb, &f, 4), memcpy(&db, &d, 8);
    put_key(g, "x.f32", GGUF_F32), put_le(g, fb, 4);
    put_key(g, "x.f64", GGUF_F64), put_le(g, db, 8);
    put_key(g, "x.bool", GGUF_BOOL);
    g->at_bool_val = g->n;
    put_le(g, 1, 1);
    put_key(g, "tokenizer.ggml.model", GGUF_STRING), put_str(g, "llama");
    put_key(g, "tokenizer.ggml.tokens", GGUF_ARRAY);
    g->at_tok_elem = g->n;
    put_le(g, GGUF_STRING, 4);
    g->at_tok_count = g->n;
    put_le(g, 3, 8), put_str(g, "<unk>"), put_str(g, ""), put_str(g, "abc");
    put_key(g, "tokenizer.ggml.scores", GGUF_ARRAY), put_le(g, GGUF_F32, 4), put_le(g, 3, 8);
    for (int i = 0; i < 3; i++) put_le(g, fb, 4);
}
#define N_KV 16

/* Two tensors: t0 F32 [4, 3] at 0 (48 bytes), t1 F16 [32, 2] at 64 (128 bytes). */
static void build(Gb *g) {
    memset(g, 0, sizeof *g);
    put(g, "GGUF", 4);
    g->at_version = g->n;
    put_le(g, 3, 4);
    g->at_ntensors = g->n;
    put_le(g, 2, 8), put_le(g, N_KV, 8);
    put_kvs(g);
    put_str(g, "t0.weight");
    g->at_t0_ndims = g->n;
    put_le(g, 2, 4);
    g->at_t0_ne0 = g->n;
    put_le(g, 4, 8), put_le(g, 3, 8);
    g->at_t0_type = g->n;
    put_le(g, GGML_F32, 4), put_le(g, 0, 8);
    g->at_t1_name = g->n + 8;
    put_str(g, "t1.weight"), put_le(g, 2, 4), put_le(g, 32, 8);
    g->at_t1_ne1 = g->n;
    put_le(g, 2, 8), put_le(g, GGML_F16, 4);
    g->at_t1_offset = g->n;
    put_le(g, 64, 8);
    while (g->n % 32) g->b[g->n++] = 0;
    size_t data = g->n;
    for (int i = 0; i < 12; i++) {
        float v = (float)i - 5.5f;
        memcpy(g->b + data + 4 * i, &v, 4);
    }
    for (int i = 0; i < 64; i++) patch(g, data + 64 + 2 * i, half_f32_to_f16((float)i / 4), 2);
    g->n = data + 64 + 128;
}

TEST(gguf_reads_every_value_type_and_tensor) {
    Gb g;
    build(&g);
    GgufFile f;
    Err e = {0};
    CHECK_MSG(gguf_open_buffer(&f, g.b, g.n, "ok.gguf", &e) == 0, "%s", e.msg);
    CHECK_INT(f.version, 3);
    CHECK_INT(f.n_kv, N_KV);
    CHECK_INT(f.n_tensors, 2);
    int64_t v = 0;
    double x = 0;
    CHECK(gguf_get_str(&f, "general.architecture") && !strcmp(gguf_get_str(&f, "general.architecture"), "llama"));
    CHECK(gguf_get_int(&f, "x.a", &v) == 0 && v == 200);
    CHECK(gguf_get_int(&f, "x.b", &v) == 0 && v == -3);
    CHECK(gguf_get_int(&f, "x.u16", &v) == 0 && v == 65535);
    CHECK(gguf_get_int(&f, "x.i16", &v) == 0 && v == -300);
    CHECK(gguf_get_int(&f, "x.i32", &v) == 0 && v == -70000);
    CHECK(gguf_get_int(&f, "x.i64", &v) == 0 && v == -5000000000LL);
    CHECK(gguf_get_int(&f, "llama.embedding_length", &v) == 0 && v == 4);
    CHECK(gguf_get_int(&f, "x.bool", &v) == 0 && v == 1);
    CHECK(gguf_get_float(&f, "x.f32", &x) == 0 && x == 0.25);
    CHECK(gguf_get_float(&f, "x.f64", &x) == 0 && x == -1.5);
    CHECK(gguf_get_int(&f, "x.f32", &v) != 0 && gguf_get_str(&f, "x.a") == NULL && !gguf_find_kv(&f, "nope"));
    const GgufKv *tok = gguf_find_kv(&f, "tokenizer.ggml.tokens");
    uint64_t len = 9;
    CHECK(tok && tok->count == 3 && tok->elem == GGUF_STRING);
    if (tok) {
        const char *s = gguf_arr_str(tok, 2, &len);
        CHECK(s && len == 3 && !memcmp(s, "abc", 3));
        CHECK(gguf_arr_str(tok, 1, &len) && len == 0);
        CHECK(gguf_arr_str(tok, 3, &len) == NULL);
    }
    const GgufTensor *t0 = gguf_find_tensor(&f, "t0.weight"), *t1 = gguf_find_tensor(&f, "t1.weight");
    CHECK(t0 && t1 && !gguf_find_tensor(&f, "t2.weight"));
    if (t0 && t1) {
        CHECK(t0->n_dims == 2 && t0->ne[0] == 4 && t0->ne[1] == 3 && t0->ne[2] == 1 && t0->nbytes == 48);
        CHECK(t1->type == GGML_F16 && t1->nbytes == 128 && t1->offset == 64);
        float row[64];
        CHECK(gguf_dequant(t0->type, t0->data, row, 12, &e) == 0 && row[0] == -5.5f && row[11] == 5.5f);
        CHECK(gguf_dequant(t1->type, t1->data, row, 64, &e) == 0 && row[1] == 0.25f && row[63] == 15.75f);
        CHECK(gguf_dequant(GGML_Q8_K, t1->data, row, 0, &e) != 0 && strstr(e.msg, "Q8_K")); /* sized, but no weight type */
    }
    gguf_close(&f);
    patch(&g, g.at_version, 2, 4); /* v2 has the same layout */
    CHECK_MSG(gguf_open_buffer(&f, g.b, g.n, "v2.gguf", &e) == 0, "%s", e.msg);
    CHECK_INT(f.version, 2);
    gguf_close(&f);
}

/* Hand-made blocks: Q8_0 (scale 0.5, bytes -128, -1, 0, 127, ...) and Q4_0
 * (scale 2, low nibbles first, each less 8). */
TEST(gguf_widens_q8_0_and_q4_0_blocks) {
    uint8_t q8[34] = {0}, q4[18] = {0};
    uint16_t h = half_f32_to_f16(0.5f);
    q8[0] = (uint8_t)h, q8[1] = (uint8_t)(h >> 8);
    int8_t qs[4] = {-128, -1, 0, 127};
    for (int j = 0; j < 32; j++) q8[2 + j] = (uint8_t)qs[j % 4];
    h = half_f32_to_f16(2.0f);
    q4[0] = (uint8_t)h, q4[1] = (uint8_t)(h >> 8);
    for (int j = 0; j < 16; j++) q4[2 + j] = (uint8_t)(j | (15 - j) << 4);
    float out[32];
    Err e = {0};
    CHECK(gguf_dequant(GGML_Q8_0, q8, out, 32, &e) == 0);
    CHECK(out[0] == -64.0f && out[1] == -0.5f && out[2] == 0.0f && out[3] == 63.5f && out[31] == 63.5f);
    CHECK(gguf_dequant(GGML_Q4_0, q4, out, 32, &e) == 0);
    CHECK(out[0] == -16.0f && out[15] == 14.0f && out[16] == 14.0f && out[31] == -16.0f && out[8] == 0.0f);
    CHECK(gguf_dequant(GGML_Q8_0, q8, out, 31, &e) != 0 && strstr(e.msg, "whole number"));
    uint64_t be, bb;
    CHECK(gguf_type_block(GGML_Q6_K, &be, &bb) == 0 && be == 256 && bb == 210);
    CHECK(gguf_type_block((GgmlType)4, &be, &bb) != 0 && bb == 0);
}

/* A hostile variant: the valid file with one field (the Gb offset `field`,
 * plus `extra` bytes) set to v over `width` bytes; width 0 cuts the file to
 * v bytes instead. `want` is in the one-line refusal. */
typedef struct {
    const char *file;
    size_t field, extra;
    uint64_t v;
    int width;
    const char *want;
} Hostile;

#define AT(m) offsetof(Gb, m)
static const Hostile HOSTILE[] = {
    {"short.gguf", 0, 0, 20, 0, "too short for a GGUF header"},
    {"cut.gguf", 0, 0, 400, 0, "past the end of the file"},
    {"v1.gguf", AT(at_version), 0, 1, 4, "GGUF version 1 is not supported"},
    {"v9.gguf", AT(at_version), 0, 9, 4, "unknown GGUF version 9"},
    {"bigendian.gguf", AT(at_version), 0, 0x03000000, 4, "big-endian"},
    {"count.gguf", AT(at_ntensors), 0, (uint64_t)1 << 60, 8, "tensor count 1152921504606846976 is absurd"},
    {"kvcount.gguf", AT(at_ntensors), 8, (uint64_t)1 << 40, 8, "metadata count 1099511627776 is absurd"},
    {"strlen.gguf", AT(at_arch_len), 0, (uint64_t)1 << 40, 8, "past the end of the file"},
    {"align.gguf", AT(at_align_val), 0, 3, 4, "general.alignment 3 is not a power of two"},
    {"dupkey.gguf", AT(at_key_b), 0, 'a', 1, "metadata key 'x.a' appears twice"},
    {"vtype.gguf", AT(at_i8_type), 0, 99, 4, "unknown value type 99"},
    {"bool.gguf", AT(at_bool_val), 0, 2, 1, "bool value 2"},
    {"nested.gguf", AT(at_tok_elem), 0, GGUF_ARRAY, 4, "nested arrays"},
    {"elemtype.gguf", AT(at_tok_elem), 0, 13, 4, "unknown array element type 13"},
    {"array.gguf", AT(at_tok_count), 0, (uint64_t)1 << 40, 8, "array of 1099511627776 string elements"},
    {"ndims.gguf", AT(at_t0_ndims), 0, 5, 4, "5 dimensions (1 to 4"},
    {"ndims0.gguf", AT(at_t0_ndims), 0, 0, 4, "0 dimensions"},
    {"negdim.gguf", AT(at_t0_ne0), 0, (uint64_t)-5, 8, "dimension 0 is -5"},
    {"zerodim.gguf", AT(at_t0_ne0), 8, 0, 8, "dimension 1 is 0"},
    {"hugedim.gguf", AT(at_t0_ne0), 0, (uint64_t)1 << 50, 8, "dimension 0 is 1125899906842624"},
    {"product.gguf", AT(at_t1_ne1), 0, (uint64_t)1 << 44, 8, "more than 2^48 elements"},
    {"ttype.gguf", AT(at_t0_type), 0, 99, 4, "unknown tensor type 99"},
    {"retired.gguf", AT(at_t0_type), 0, 4, 4, "unknown tensor type 4"},
    {"block.gguf", AT(at_t0_type), 0, GGML_Q8_0, 4, "row of 4 elements is not a whole number of Q8_0 blocks"},
    {"dupname.gguf", AT(at_t1_name), 1, '0', 1, "tensor 't0.weight' appears twice"},
    {"overlap.gguf", AT(at_t1_offset), 0, 32, 8, "overlap"},
    {"pastend.gguf", AT(at_t1_offset), 0, 4096, 8, "lie past the end of the data"},
    {"unaligned.gguf", AT(at_t1_offset), 0, 65, 8, "not a multiple of the alignment 32"},
    {"bigtensor.gguf", AT(at_t1_ne1), 0, (uint64_t)1 << 30, 8, "more than the whole file"},
};

/* The variant's bytes in g (its length in g->n). */
static void hostile(Gb *g, const Hostile *h) {
    build(g);
    if (h->width == 0) {
        g->n = (size_t)h->v;
        return;
    }
    size_t at = *(const size_t *)((const char *)g + h->field) + h->extra;
    patch(g, at, h->v, h->width);
}

TEST(gguf_refuses_each_hostile_file_in_one_line) {
    for (size_t i = 0; i < sizeof HOSTILE / sizeof HOSTILE[0]; i++) {
        const Hostile *h = &HOSTILE[i];
        Gb g;
        hostile(&g, h);
        GgufFile f;
        Err e = {0};
        int rc = gguf_open_buffer(&f, g.b, g.n, h->file, &e);
        CHECK_MSG(rc != 0, "%s: accepted", h->file);
        CHECK_MSG(strncmp(e.msg, h->file, strlen(h->file)) == 0 && e.msg[strlen(h->file)] == ':',
                  "%s: message does not name the file: %s", h->file, e.msg);
        CHECK_MSG(strstr(e.msg, h->want) != NULL, "%s: '%s' lacks '%s'", h->file, e.msg, h->want);
        CHECK_MSG(strchr(e.msg, '\n') == NULL, "%s: two lines: %s", h->file, e.msg);
        CHECK(f.n_tensors == 0 && f.n_kv == 0 && f.path == NULL);
        gguf_close(&f);
    }
}

/* The same table through `ahascope info`: exit 1, one line naming the file. */
TEST(gguf_info_refuses_hostile_files) {
    for (size_t i = 0; i < sizeof HOSTILE / sizeof HOSTILE[0]; i++) {
        const Hostile *h = &HOSTILE[i];
        Gb g;
        hostile(&g, h);
        const char *path = test_tmp(h->file);
        if (g.n < 4) continue; /* no magic: not sent to the GGUF reader */
        CHECK(test_write_file(path, g.b, (long)g.n) == 0);
        char cmd[1400], starts[1200];
        snprintf(cmd, sizeof cmd, "%s info --model %s", test_bin(), path);
        snprintf(starts, sizeof starts, "ahascope info: %s: ", path);
        CHECK_REFUSAL(cmd, 1, starts, h->want, 1);
    }
}

TEST(gguf_info_describes_a_small_file) {
    Gb g;
    build(&g);
    const char *path = test_tmp("small.gguf");
    CHECK(test_write_file(path, g.b, (long)g.n) == 0);
    int st = -1;
    char *out = test_runf(&st, "%s info --model %s", test_bin(), path);
    CHECK_INT(st, 0);
    CHECK_MSG(out && strstr(out, "format        gguf v3\n") && strstr(out, "architecture  llama\n") &&
                  strstr(out, "F32 1 (48 bytes), F16 1 (128 bytes)") && strstr(out, "layers 2,") &&
                  strstr(out, "llama, 3 tokens"),
              "unexpected: %s", out ? out : "(null)");
    free(out);
    out = test_runf(&st, "%s info --json --model %s", test_bin(), path);
    CHECK_INT(st, 0);
    CHECK_MSG(out && strstr(out, "\"format\": \"gguf\", \"version\": 3, \"architecture\": \"llama\""), "%s", out);
    free(out);
}

TEST(gguf_info_stories260k) {
    SKIP_UNLESS_SHARED();
    const char *path = test_shared("models/stories260K/stories260K.gguf");
    int st = -1;
    char *out = test_runf(&st, "%s info --model %s", test_bin(), path);
    CHECK_INT(st, 0);
    CHECK_MSG(out && strstr(out, "format        gguf v3\n") && strstr(out, "architecture  llama\n") &&
                  strstr(out, "F32 48") && strstr(out, "dim 64, hidden 172, layers 5, heads 8, kv_heads 4, vocab 512") &&
                  strstr(out, "context       2048\n"),
              "unexpected: %s", out ? out : "(null)");
    free(out);
}

/* The GGUF's token embedding holds the same floats as the llama2.c
 * checkpoint's (its table follows a 7-int header). */
TEST(gguf_stories260k_embedding_matches_the_checkpoint) {
    SKIP_UNLESS_SHARED();
    GgufFile f;
    Err e = {0};
    CHECK_MSG(gguf_open(&f, test_shared("models/stories260K/stories260K.gguf"), &e) == 0, "%s", e.msg);
    CHECK_INT(f.n_tensors, 48);
    const GgufTensor *t = gguf_find_tensor(&f, "token_embd.weight");
    long len = 0;
    char *bin = test_read_file(test_stories_model(), &len);
    CHECK(t && bin && t->type == GGML_F32 && t->ne[0] == 64 && t->ne[1] == 512);
    if (t && bin && len >= 28 + (long)t->nbytes) CHECK(memcmp(bin + 28, t->data, t->nbytes) == 0);
    free(bin);
    gguf_close(&f);
}

/* Every proper prefix of the valid file is refused in one line naming it
 * (a file cut anywhere: in a count, a string, an array, the tensor infos,
 * the padding or the data), and the whole file is read. */
TEST(gguf_refuses_every_truncation) {
    Gb g;
    build(&g);
    for (size_t n = 0; n <= g.n; n++) {
        GgufFile f;
        Err e = {0};
        int rc = gguf_open_buffer(&f, g.b, n, "cut.gguf", &e);
        if (n == g.n) CHECK_MSG(rc == 0, "whole file: %s", e.msg);
        else CHECK_MSG(rc != 0 && !strncmp(e.msg, "cut.gguf: ", 10) && !strchr(e.msg, '\n'),
                       "prefix of %zu bytes: rc %d, '%s'", n, rc, e.msg);
        gguf_close(&f);
    }
}

/* stories260K.gguf runs: greedy text identical to the llama2.c checkpoint's
 * (its rows need no permuting: both rotate adjacent RoPE pairs), with the
 * vocabulary from the metadata. */
TEST(gguf_generate_stories260k_matches_the_checkpoint) {
    SKIP_UNLESS_SHARED();
    const char *g = test_shared("models/stories260K/stories260K.gguf");
    int st1 = -1, st2 = -1;
    char *a = test_runf(&st1, "%s generate --model %s --prompt 'Once upon a time' --steps 64 --temperature 0", test_bin(), g);
    char *b = test_runf(&st2, "%s generate --model %s --prompt 'Once upon a time' --steps 64 --temperature 0", test_bin(),
                        test_stories_model());
    CHECK_INT(st1, 0);
    CHECK_INT(st2, 0);
    CHECK_MSG(a && b && !strcmp(a, b), "gguf: %s\nbin: %s", a ? a : "(null)", b ? b : "(null)");
    CHECK(a && strstr(a, "Once upon a time, there was a little girl"));
    free(a);
    free(b);
}

/* The metadata's vocabulary is tok512.bin's: the same pieces (U+2581 read
 * as a space; BOS and EOS without the newlines llama2.c's export adds) and
 * scores. */
TEST(gguf_tokenizer_is_tok512) {
    SKIP_UNLESS_SHARED();
    Tokenizer a, b;
    Err e = {0};
    CHECK_MSG(tok_load_gguf(&a, test_shared("models/stories260K/stories260K.gguf"), 512, &e) == 0, "%s", e.msg);
    CHECK_MSG(tok_load(&b, test_stories_tokenizer(), 512, &e) == 0, "%s", e.msg);
    int same = a.vocab_size == b.vocab_size;
    for (int i = 0; same && i < a.vocab_size; i++) {
        char bin[64]; /* llama2.c's export spells BOS and EOS "\\n<s>\\n", "\\n</s>\\n"; GGUF keeps the pieces */
        snprintf(bin, sizeof bin, "%s", b.vocab[i]);
        if ((i == 1 || i == 2) && bin[0] == '\n' && strlen(bin) > 2) memmove(bin, bin + 1, strlen(bin)), bin[strlen(bin) - 1] = 0;
        same = !strcmp(a.vocab[i], bin) && a.scores[i] == b.scores[i];
        CHECK_MSG(same, "token %d: '%s' %g vs '%s' %g", i, a.vocab[i], a.scores[i], b.vocab[i], b.scores[i]);
    }
    CHECK(same);
    tok_free(&b);
    CHECK_MSG(tok_load_gguf(&b, test_shared("models/stories260K/stories260K.gguf"), 500, &e) != 0 &&
                  strstr(e.msg, "512 tokens but the model's vocabulary is 500"), "%s", e.msg);
    tok_free(&a);
    tok_free(&b);
}

/* A GGUF that is no runnable llama is refused in one line naming it: the
 * small file (no token_embd.weight), another architecture. */
TEST(gguf_model_refusals) {
    Gb g;
    build(&g);
    const char *path = test_tmp("norun.gguf");
    CHECK(test_write_file(path, g.b, (long)g.n) == 0);
    Model m;
    Err e = {0};
    CHECK(model_is_gguf(path) && !model_is_gguf(test_stories_model()));
    CHECK(model_load_gguf(&m, path, &e) != 0);
    CHECK_MSG(strstr(e.msg, path) == e.msg && strstr(e.msg, "llama.feed_forward_length is missing"), "%s", e.msg);
    memcpy(g.b + g.at_arch_len + 8, "gemma", 5);
    CHECK(test_write_file(path, g.b, (long)g.n) == 0);
    CHECK(model_load_gguf(&m, path, &e) != 0);
    CHECK_MSG(strstr(e.msg, "GGUF architecture 'gemma' cannot run yet (llama, qwen2, olmo2, qwen3, gemma2, gemma3 and phi3 can)"), "%s", e.msg);
    char cmd[1400], starts[1200];
    snprintf(cmd, sizeof cmd, "%s generate --model %s --prompt hi --steps 2", test_bin(), path);
    snprintf(starts, sizeof starts, "ahascope generate: %s: ", path);
    CHECK_REFUSAL(cmd, 1, starts, "cannot run yet", 1);
}

/* Loaded in process, stories260K.gguf holds the checkpoint's weights, part
 * for part (its separate output.weight equals the tied embedding). */
TEST(gguf_model_weights_equal_the_checkpoint) {
    SKIP_UNLESS_SHARED();
    Model g, b;
    Err e = {0};
    CHECK_MSG(model_load_gguf(&g, test_shared("models/stories260K/stories260K.gguf"), &e) == 0, "%s", e.msg);
    CHECK_MSG(model_load(&b, test_stories_model(), &e) == 0, "%s", e.msg);
    const Config *c = &b.c;
    CHECK(g.c.dim == c->dim && g.c.hidden_dim == c->hidden_dim && g.c.n_layers == c->n_layers &&
          g.c.n_kv_heads == c->n_kv_heads && g.c.vocab_size == c->vocab_size && g.c.rope_half == 0);
    CHECK(g.version == MODEL_VERSION_GGUF && !strcmp(g.arch_name, "llama"));
    size_t d = c->dim, h = c->hidden_dim, kv = c->kv_dim, V = c->vocab_size;
    CHECK(g.embed.dt == DT_F32 && !memcmp(g.embed.p, b.w.token_embedding, V * d * 4));
    CHECK(g.cls.dt == DT_F32 && !memcmp(g.cls.p, b.w.wcls, V * d * 4) && !memcmp(g.final_norm, b.w.rms_final, d * 4));
    CHECK(g.gguf && g.c.weight_bytes == model_decode_bytes(&b.c) + (g.c.shared_classifier ? 0 : d * 4)); /* + its one embedding row */
    for (size_t l = 0; l < (size_t)c->n_layers; l++) { /* in place: the mapped file's f32 rows */
        const LayerWeights *a = &g.layers[l], *r = &b.layers[l];
        const Mat *ma[] = {&a->wq, &a->wk, &a->wv, &a->wo, &a->w1, &a->w2, &a->w3}, *mb[] = {&r->wq, &r->wk, &r->wv, &r->wo, &r->w1, &r->w2, &r->w3};
        const size_t n[] = {d * d, kv * d, kv * d, d * d, h * d, d * h, h * d};
        for (int i = 0; i < 7; i++) CHECK_MSG(ma[i]->dt == DT_F32 && !memcmp(ma[i]->p, mb[i]->p, n[i] * 4), "layer %zu part %d", l, i);
        CHECK(!memcmp(a->attn_norm, r->attn_norm, d * 4) && !memcmp(a->ffn_norm, r->ffn_norm, d * 4));
    }
    model_free(&g);
    model_free(&b);
}

/* ---- whole models written as GGUF here, run against the same weights in memory ---- */

typedef struct {
    uint8_t *b;
    size_t n, cap;
} Buf;

static void bput(Buf *g, const void *p, size_t n) {
    if (g->n + n > g->cap) {
        g->cap = (g->n + n) * 2;
        g->b = realloc(g->b, g->cap);
    }
    memcpy(g->b + g->n, p, n);
    g->n += n;
}
static void bput_le(Buf *g, uint64_t v, int n) {
    uint8_t t[8];
    for (int i = 0; i < n; i++) t[i] = (uint8_t)(v >> (8 * i));
    bput(g, t, (size_t)n);
}
static void bput_str(Buf *g, const char *s) {
    bput_le(g, strlen(s), 8);
    bput(g, s, strlen(s));
}

#define GT_MAX 64
typedef struct {
    char name[GT_MAX][96];
    int64_t ne0[GT_MAX], ne1[GT_MAX];
    GgmlType type[GT_MAX];
    uint8_t *data[GT_MAX]; /* owned */
    size_t bytes[GT_MAX];
    int n;
} GTensors;

/* Rows of n_heads heads, adjacent RoPE pairs reordered into halves (what
 * ggml's qwen2 and olmo2 expect), or copied as they are. */
static void rope_to_halves(float *dst, const float *src, int rows, int cols, int hs, int permute) {
    for (int r = 0; r < rows; r++) {
        int h = r / hs, i = r % hs, from = !permute ? r : h * hs + (i < hs / 2 ? 2 * i : 2 * (i - hs / 2) + 1);
        memcpy(dst + (size_t)r * cols, src + (size_t)from * cols, (size_t)cols * sizeof(float));
    }
}

/* Random blocks of type t for rows × cols, their scales small (under
 * 8e-4, so weights stay O(0.1)); wide gets their widening. */
static uint8_t *random_quant(GgmlType t, int64_t rows, int64_t cols, float *wide, size_t *bytes, unsigned *s) {
    uint8_t *b = qfx_random_blocks(t, (size_t)(rows * cols), 8e-4f, s, bytes);
    if (b) quant_dequant(t, b, wide, rows * cols);
    return b;
}

/* Add a tensor: f32 src (rows × cols, permuted to halves if asked), or of
 * block type t with random blocks whose widening replaces src in place, so
 * the in-memory model computes with exactly the file's weights. */
static void gt_add(GTensors *g, const char *name, float *src, int64_t rows, int64_t cols, GgmlType t, int hs,
                   int permute, unsigned *s) {
    int i = g->n++;
    snprintf(g->name[i], sizeof g->name[i], "%s", name);
    g->ne0[i] = cols, g->ne1[i] = rows, g->type[i] = t;
    if (t == GGML_F32) {
        g->bytes[i] = (size_t)(rows * cols) * 4;
        g->data[i] = malloc(g->bytes[i]);
        rope_to_halves((float *)g->data[i], src, (int)rows, (int)cols, hs, permute);
        return;
    }
    if (t == GGML_F16 || t == GGML_BF16) { /* rounded, and the model given the rounded values */
        size_t n = (size_t)(rows * cols);
        g->bytes[i] = n * 2;
        g->data[i] = malloc(g->bytes[i]);
        half_from_f32_n((uint16_t *)g->data[i], src, n, t == GGML_BF16);
        quant_dequant(t, g->data[i], src, (int64_t)n);
        return;
    }
    g->data[i] = random_quant(t, rows, cols, src, &g->bytes[i], s); /* (no RoPE permute: used for llama) */
}

/* The file: {arch}.* metadata, the tensor infos, data aligned to `align`
 * (32 unless given: then general.alignment says so, and a padding string
 * of pad bytes follows it). */
static void gt_write_aligned(const GTensors *g, const char *arch, const Config *c, const char *path, int align, int pad);

static void gt_write(const GTensors *g, const char *arch, const Config *c, const char *path) {
    gt_write_aligned(g, arch, c, path, 32, -1);
}

/* The header's bytes (through the tensor infos) for gt_write_aligned. */
static void gt_header(Buf *b, const GTensors *g, const char *arch, const Config *c, int align, int pad) {
    bput(b, "GGUF", 4), bput_le(b, 3, 4), bput_le(b, (uint64_t)g->n, 8), bput_le(b, pad >= 0 ? 12 : 10, 8);
    if (pad >= 0) {
        char filler[64] = {0};
        memset(filler, 'p', (size_t)pad);
        bput_str(b, "general.alignment"), bput_le(b, GGUF_U32, 4), bput_le(b, (uint64_t)align, 4);
        bput_str(b, "x.pad"), bput_le(b, GGUF_STRING, 4), bput_str(b, filler);
    }
    char k[96];
    bput_str(b, "general.architecture"), bput_le(b, GGUF_STRING, 4), bput_str(b, arch);
    bput_str(b, "general.file_type"), bput_le(b, GGUF_U32, 4), bput_le(b, 15, 4);
    const char *ik[] = {"embedding_length", "feed_forward_length", "block_count", "attention.head_count",
                        "attention.head_count_kv", "context_length"};
    int iv[] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->seq_len};
    for (int i = 0; i < 6; i++) snprintf(k, sizeof k, "%s.%s", arch, ik[i]), bput_str(b, k), bput_le(b, GGUF_U32, 4), bput_le(b, (uint64_t)iv[i], 4);
    float fv[2] = {c->rope_theta, c->norm_eps};
    const char *fk[] = {"rope.freq_base", "attention.layer_norm_rms_epsilon"};
    for (int i = 0; i < 2; i++) {
        uint32_t u;
        memcpy(&u, &fv[i], 4);
        snprintf(k, sizeof k, "%s.%s", arch, fk[i]), bput_str(b, k), bput_le(b, GGUF_F32, 4), bput_le(b, u, 4);
    }
    uint64_t off = 0;
    for (int i = 0; i < g->n; i++) {
        bput_str(b, g->name[i]), bput_le(b, g->ne1[i] > 1 ? 2 : 1, 4), bput_le(b, (uint64_t)g->ne0[i], 8);
        if (g->ne1[i] > 1) bput_le(b, (uint64_t)g->ne1[i], 8);
        bput_le(b, g->type[i], 4), bput_le(b, off, 8);
        off += (g->bytes[i] + (size_t)align - 1) / (size_t)align * (size_t)align;
    }
}

static void gt_write_aligned(const GTensors *g, const char *arch, const Config *c, const char *path, int align, int pad) {
    Buf b = {0};
    gt_header(&b, g, arch, c, align, pad);
    while (b.n % (size_t)align) bput_le(&b, 0, 1);
    for (int i = 0; i < g->n; i++) {
        bput(&b, g->data[i], g->bytes[i]);
        while (b.n % (size_t)align) bput_le(&b, 0, 1);
    }
    CHECK(test_write_file(path, b.b, (long)b.n) == 0);
    free(b.b);
}

static void gt_free(GTensors *g) {
    for (int i = 0; i < g->n; i++) free(g->data[i]);
}

/* m's tensors under ggml's names; types[0..7] are the matrices' types
 * (q, k, v, o, gate, down, up, embedding/classifier), cycled over layers. */
static void gt_model(GTensors *g, Model *m, const char *arch, const GgmlType *types, unsigned *s) {
    const Config *c = &m->c;
    int d = c->dim, h = c->hidden_dim, q = c->q_dim, kv = c->kv_dim, hs = c->head_size, perm = c->rope_half == 0 && strcmp(arch, "llama");
    char n[96];
    memset(g, 0, sizeof *g);
    gt_add(g, "token_embd.weight", (float *)m->embed.p, c->vocab_size, d, types[7], hs, 0, s);
    gt_add(g, "output_norm.weight", (float *)m->final_norm, 1, d, GGML_F32, hs, 0, s);
    if (!c->shared_classifier) gt_add(g, "output.weight", (float *)m->cls.p, c->vocab_size, d, types[7], hs, 0, s);
    for (int l = 0; l < c->n_layers; l++) {
        LayerWeights *lw = &m->layers[l];
        struct { const char *nm; const void *p; int rows, cols, perm, mat; } parts[] = {
            {"attn_q.weight", lw->wq.p, q, d, perm, 0}, {"attn_k.weight", lw->wk.p, kv, d, perm, 1},
            {"attn_v.weight", lw->wv.p, kv, d, 0, 2}, {"attn_output.weight", lw->wo.p, d, q, 0, 3},
            {"ffn_gate.weight", lw->w1.p, h, d, 0, 4}, {"ffn_down.weight", lw->w2.p, d, h, 0, 5},
            {"ffn_up.weight", lw->w3.p, h, d, 0, 6},
            {"attn_norm.weight", lw->attn_norm, 1, d, 0, -1}, {"ffn_norm.weight", lw->ffn_norm, 1, d, 0, -1},
            {"post_attention_norm.weight", lw->post_attn_norm, 1, d, 0, -1},
            {"post_ffw_norm.weight", lw->post_ffn_norm, 1, d, 0, -1},
            {"attn_q_norm.weight", lw->q_norm, q, 1, perm, -1}, {"attn_k_norm.weight", lw->k_norm, kv, 1, perm, -1},
            {"attn_q.bias", lw->bq, q, 1, perm, -1}, {"attn_k.bias", lw->bk, kv, 1, perm, -1}, {"attn_v.bias", lw->bv, kv, 1, 0, -1}};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            if (!parts[i].p) continue;
            if (parts[i].mat < 0 && !strcmp(arch, "olmo2") && (i == 7 || i == 8)) continue; /* olmo2: no pre-norms */
            snprintf(n, sizeof n, "blk.%d.%s", l, parts[i].nm);
            GgmlType t = parts[i].mat < 0 ? GGML_F32 : types[(parts[i].mat + l) % 7];
            if (parts[i].cols == 1) { /* a vector permuted as rows of one element */
                float *tmp = malloc((size_t)parts[i].rows * 4);
                rope_to_halves(tmp, parts[i].p, parts[i].rows, 1, hs, parts[i].perm);
                gt_add(g, n, tmp, 1, parts[i].rows, GGML_F32, hs, 0, s);
                free(tmp);
            } else {
                gt_add(g, n, (float *)parts[i].p, parts[i].rows, parts[i].cols, t, hs, parts[i].perm, s);
            }
        }
    }
}

/* Logits at every position, by prefill and by decode steps, KV in f32. */
static void gguf_logits(Model *m, const int *tok, int n, int prefill, float *out) {
    RunState s;
    Err e = {0};
    m->c.kv_dtype = DT_F32;
    CHECK_MSG(fwd_init(&s, &m->c, n, 2, &e) == 0, "%s", e.msg);
    AttnConfig a = aha_defaults();
    if (prefill) fwd_forward(m, &s, &a, tok, n, 0, out, NULL);
    else
        for (int t = 0; t < n; t++) {
            fwd_forward(m, &s, &a, &tok[t], 1, t, NULL, NULL);
            memcpy(out + (size_t)t * m->c.vocab_size, s.logits, m->c.vocab_size * sizeof(float));
        }
    fwd_free(&s);
}

/* The largest difference of log-softmax between two sets of n rows of V logits. */
static double worst_logprob(const float *a, const float *b, int n, int V) {
    double w = 0;
    for (int t = 0; t < n; t++) {
        double za = 0, zb = 0, ma = -1e30, mb = -1e30;
        for (int v = 0; v < V; v++) ma = fmax(ma, a[t * V + v]), mb = fmax(mb, b[t * V + v]);
        for (int v = 0; v < V; v++) za += exp(a[t * V + v] - ma), zb += exp(b[t * V + v] - mb);
        for (int v = 0; v < V; v++) {
            double d = fabs((a[t * V + v] - ma - log(za)) - (b[t * V + v] - mb - log(zb)));
            if (d > w) w = d;
        }
    }
    return w;
}

/* A random model of arch written as GGUF (matrices of types) and loaded
 * back gives the in-memory model's logits within tol · max|logit|. */
static void check_arch_file(int arch, const char *name, const Config *cfg, const GgmlType *types, double tol) {
    Model m, g;
    Err e = {0};
    unsigned s = 5;
    CHECK_MSG(model_random_arch(&m, cfg, arch, 42, &e) == 0, "%s", e.msg);
    m.c.rope_factor = cfg->rope_factor, m.c.rope_low = cfg->rope_low, m.c.rope_high = cfg->rope_high;
    m.c.rope_orig_ctx = cfg->rope_orig_ctx;
    GTensors gt;
    gt_model(&gt, &m, name, types, &s);
    if (cfg->rope_factor > 0) { /* llama.cpp's llama3 table: each pair's frequency divisor */
        const Config *c = &m.c;
        float ff[64];
        for (int i = 0; i < c->head_size / 2; i++) {
            double fr = 1.0 / pow(c->rope_theta, 2.0 * i / c->head_size), wl = 2 * 3.14159265358979323846 / fr;
            double lo_wl = c->rope_orig_ctx / c->rope_low, hi_wl = c->rope_orig_ctx / c->rope_high;
            double sm = (c->rope_orig_ctx / wl - c->rope_low) / (c->rope_high - c->rope_low);
            ff[i] = (float)(wl < hi_wl ? 1 : wl > lo_wl ? c->rope_factor : 1 / ((1 - sm) / c->rope_factor + sm));
        }
        gt_add(&gt, "rope_freqs.weight", ff, 1, c->head_size / 2, GGML_F32, c->head_size, 0, &s);
    }
    char file[64];
    snprintf(file, sizeof file, "%s-%d.gguf", name, (int)types[0]);
    const char *path = test_tmp(file);
    gt_write(&gt, name, &m.c, path);
    gt_free(&gt);
    CHECK_MSG(model_load_gguf(&g, path, &e) == 0, "%s", e.msg);
    if (e.msg[0] && g.layers == NULL) { model_free(&m); return; }
    CHECK(!strcmp(g.arch_name, name) && g.c.rope_half == (arch != ARCH_LLAMA));
    char mix[32] = "";
    CHECK(model_gguf_type_mix(&g, mix, sizeof mix) == 0 && !strcmp(mix, "Q4_K_M")); /* general.file_type 15 */
    CHECK(model_gguf_type_mix(&m, mix, sizeof mix) == -1);
    enum { N = 6 };
    int tok[N] = {1, 7, 3, 12, 5, 9};
    int V = m.c.vocab_size;
    float *a = malloc((size_t)N * V * 4), *b = malloc((size_t)N * V * 4);
    gguf_logits(&m, tok, N, 1, a);
    int int8 = mv_q_int8();
    mv_q_set_int8(0); /* the exact path: only summation order differs */
    for (int prefill = 0; prefill < 2; prefill++) {
        gguf_logits(&g, tok, N, prefill, b);
        double worst = 0, mag = 0;
        for (int i = 0; i < N * V; i++) {
            double d = fabs((double)a[i] - b[i]);
            if (!(d <= worst)) worst = d;
            if (fabs(a[i]) > mag) mag = fabs(a[i]);
        }
        CHECK_MSG(worst <= tol * (mag + 1), "%s (%s, %s): logits differ by %g (max |logit| %g)", name,
                  gguf_type_name(types[0]), prefill ? "prefill" : "decode", worst, mag);
        if (types[0] != GGML_F32) printf("      %s first %s, %s: max|dlogit| %.3g, max|dlogprob| %.3g (max |logit| %.3g)\n", name,
                                         gguf_type_name(types[0]), prefill ? "prefill" : "decode", worst, worst_logprob(a, b, N, V), mag);
    }
    if (types[0] != GGML_F32 && mv_q_int8_available(GGML_Q4_K)) { /* what the integer path (the default) costs */
        mv_q_set_int8(1);
        gguf_logits(&g, tok, N, 0, b);
        double lp = worst_logprob(a, b, N, V), mag = 0;
        for (int i = 0; i < N * V; i++) mag = fmax(mag, fabs(a[i]));
        printf("      %s first %s, decode, int8 x (Q8_0/Q4_K/Q5_K/Q6_K rows): max|dlogprob| %.3g\n", name,
               gguf_type_name(types[0]), lp);
        /* measured 2.7e-3 (max |logit| 0.50) and 1.5 (max |logit| 35.3, the Q4_1-first mix): x rounded
         * to 8 bits per 32 moves each row within matvec's bound, and this random llama's large logits
         * amplify it; 6% of the largest logit holds both */
        CHECK_MSG(lp > 1e-6 && lp < 0.06 * (mag + 1), "the integer path moved a log-prob by %g", lp);
    }
    mv_q_set_int8(int8);
    free(a), free(b);
    model_free(&g);
    model_free(&m);
}

TEST(gguf_llama_qwen2_olmo2_files_match_the_model_in_memory) {
    Config c = {.dim = 64, .hidden_dim = 96, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 48,
                .seq_len = 16, .shared_classifier = 1};
    const GgmlType f32[8] = {GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32};
    check_arch_file(ARCH_LLAMA, "llama", &c, f32, 1e-5);
    check_arch_file(ARCH_QWEN2, "qwen2", &c, f32, 1e-5);
    check_arch_file(ARCH_OLMO2, "olmo2", &c, f32, 1e-5);
    /* llama3 scaling as a rope_freqs table (3 of 8 pairs part-way; no
     * original_context_length in the file, so only the ratios carry over) */
    c.rope_factor = 8, c.rope_low = 1, c.rope_high = 32, c.rope_orig_ctx = 4096;
    check_arch_file(ARCH_LLAMA, "llama", &c, f32, 1e-5);
}

/* Every block type somewhere in a llama, read in place by the decode
 * kernels and the prefill tiles; the model in memory holds their widening.
 * Only summation order differs: 1e-4 of the largest logit. */
TEST(gguf_quantised_llama_matches_its_widened_weights) {
    Config c = {.dim = 256, .hidden_dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 40,
                .seq_len = 16, .shared_classifier = 0};
    const GgmlType a[8] = {GGML_Q4_K, GGML_Q5_K, GGML_Q6_K, GGML_Q8_0, GGML_Q4_0, GGML_Q3_K, GGML_Q2_K, GGML_Q5_1};
    const GgmlType b[8] = {GGML_Q4_1, GGML_Q5_0, GGML_Q8_0, GGML_Q6_K, GGML_Q4_K, GGML_F16, GGML_BF16, GGML_Q6_K};
    check_arch_file(ARCH_LLAMA, "llama", &c, a, 1e-4);
    check_arch_file(ARCH_LLAMA, "llama", &c, b, 1e-4);
}

/* A random llama of shape c (seed) written at path as GGUF with the
 * matrices' types ty (gt_model's order; s seeds the blocks). 0 on success. */
static int gt_write_random_llama(Config c, const GgmlType *ty, uint64_t seed, unsigned s, const char *path) {
    Model m;
    Err e = {0};
    if (model_random_arch(&m, &c, ARCH_LLAMA, seed, &e)) {
        test_fail(__FILE__, __LINE__, "%s", e.msg);
        return -1;
    }
    GTensors gt;
    gt_model(&gt, &m, "llama", ty, &s);
    gt_write(&gt, "llama", &m.c, path);
    gt_free(&gt);
    model_free(&m);
    return 0;
}

/* A Q4_K llama (Q6_K in some matrices) packed at load (engine/gemm_q.h) against the same file
 * loaded as stored (AHASCOPE_REPACK=0): the same logits bit for bit by
 * decode and by prefill, on every product path (gemm_q auto, portable, and
 * off, which widens the rows given back) and with the exact decode path
 * too. The classifier's 50 rows end inside a group of four, and a thread's
 * slice of the fused Q, K, V rows starts at any multiple of 16. */
TEST(gguf_packed_q4_k_llama_gives_the_stored_bits_on_every_path) {
    Config c = {.dim = 256, .hidden_dim = 512, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 50,
                .seq_len = 16, .shared_classifier = 0};
    const GgmlType ty[8] = {GGML_Q4_K, GGML_Q4_K, GGML_Q6_K, GGML_Q4_K, GGML_Q4_K, GGML_Q4_K, GGML_Q4_K, GGML_Q4_K};
    Model g, u;
    Err e = {0};
    const char *path = test_tmp("packed.gguf");
    if (gt_write_random_llama(c, ty, 42, 9, path)) return;
    CHECK_MSG(model_load_gguf(&g, path, &e) == 0, "%s", e.msg);
    setenv("AHASCOPE_REPACK", "0", 1);
    CHECK_MSG(model_load_gguf(&u, path, &e) == 0, "%s", e.msg);
    unsetenv("AHASCOPE_REPACK");
    CHECK(u.packed == NULL);
    CHECK(gemm_q_pack_wanted(GGML_Q4_K) ? g.packed != NULL : g.packed == NULL);
    enum { N = 6 };
    int tok[N] = {1, 7, 3, 12, 5, 9}, V = c.vocab_size, differ = 0, runs = 0, int8 = mv_q_int8();
    float *a = malloc((size_t)N * V * 4), *b = malloc((size_t)N * V * 4);
    const char *paths[3] = {NULL, "portable", "off"};
    for (int p = 0; p < 3; p++)
        for (int exact = 0; exact < 2; exact++)
            for (int prefill = 0; prefill < 2; prefill++) {
                if (paths[p]) setenv("AHASCOPE_GEMMQ", paths[p], 1);
                mv_q_set_int8(!exact);
                gguf_logits(&g, tok, N, prefill, a);
                gguf_logits(&u, tok, N, prefill, b);
                int bad = memcmp(a, b, (size_t)N * V * 4) != 0;
                CHECK_MSG(!bad, "gemm_q %s, %s decode, %s: packed logits differ from stored", paths[p] ? paths[p] : "auto",
                          exact ? "exact" : "int8", prefill ? "prefill" : "decode");
                differ += bad, runs++;
                unsetenv("AHASCOPE_GEMMQ");
            }
    mv_q_set_int8(int8);
    printf("      packed Q4_K/Q6_K llama (%s): logits equal to the stored file's in %d of %d runs\n",
           g.packed ? "packed at load" : "not packed on this CPU", runs - differ, runs);
    free(a), free(b);
    model_free(&g);
    model_free(&u);
}

/* `bench --bytes-only --model F.gguf` counts the bytes a decode step reads
 * from the tensors' own types: every tensor's bytes in the file, less the
 * untied embedding but for one of its rows. */
TEST(gguf_bench_bytes_come_from_the_tensor_types) {
    Config c = {.dim = 256, .hidden_dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 40,
                .seq_len = 16, .shared_classifier = 0};
    const GgmlType a[8] = {GGML_Q4_K, GGML_Q6_K, GGML_Q4_K, GGML_Q4_K, GGML_Q4_K, GGML_Q6_K, GGML_Q4_K, GGML_Q6_K};
    Model m;
    Err e = {0};
    unsigned s = 3;
    CHECK_MSG(model_random_arch(&m, &c, ARCH_LLAMA, 42, &e) == 0, "%s", e.msg);
    GTensors gt;
    gt_model(&gt, &m, "llama", a, &s);
    const char *path = test_tmp("bytes.gguf");
    gt_write(&gt, "llama", &m.c, path);
    gt_free(&gt);
    model_free(&m);
    GgufFile f;
    CHECK_MSG(gguf_open(&f, path, &e) == 0, "%s", e.msg);
    uint64_t want = 0;
    for (int i = 0; i < f.n_tensors; i++) want += f.tensors[i].nbytes;
    const GgufTensor *emb = gguf_find_tensor(&f, "token_embd.weight");
    want -= emb->nbytes - emb->nbytes / (size_t)emb->ne[1];
    gguf_close(&f);
    int st;
    char *out = test_runf(&st, "%s bench --bytes-only --json --model %s", test_bin(), path);
    const char *at = out ? strstr(out, "\"weight_bytes_step\": ") : NULL;
    CHECK_MSG(st == 0 && at, "%s", out ? out : "(no output)");
    if (at) CHECK_MSG(strtoull(at + 21, NULL, 10) == want, "bench says %s, the tensors hold %llu", at + 21, (unsigned long long)want);
    CHECK(out && strstr(out, "\"dtype\": \"q4_k\""));
    free(out);
}

/* A file whose general.alignment (2) lets f32 tensors sit off a 4-byte
 * boundary is refused, not read through misaligned floats; the same file
 * aligned to 4 loads. */
TEST(gguf_misaligned_f32_matrix_is_refused) {
    Config c = {.dim = 64, .hidden_dim = 96, .n_layers = 1, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 8,
                .seq_len = 16, .shared_classifier = 1};
    const GgmlType f32[8] = {GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32};
    Model m, g;
    Err e = {0};
    unsigned s = 1;
    CHECK(model_random_arch(&m, &c, ARCH_LLAMA, 1, &e) == 0);
    GTensors gt;
    gt_model(&gt, &m, "llama", f32, &s);
    Buf h = {0};
    gt_header(&h, &gt, "llama", &m.c, 2, 0);
    int pad = (int)((6 - h.n % 4) % 4); /* the data then starts at 2 mod 4 */
    free(h.b);
    const char *path = test_tmp("misaligned.gguf");
    gt_write_aligned(&gt, "llama", &m.c, path, 2, pad);
    CHECK(model_load_gguf(&g, path, &e) != 0 && strstr(e.msg, path) == e.msg && strstr(e.msg, "misaligned"));
    CHECK_MSG(strstr(e.msg, "token_embd.weight"), "%s", e.msg);
    gt_write_aligned(&gt, "llama", &m.c, path, 4, pad);
    CHECK_MSG(model_load_gguf(&g, path, &e) == 0, "%s", e.msg);
    model_free(&g);
    gt_free(&gt);
    model_free(&m);
}

/* Files the in-place loader refuses in one line naming file and tensor: a
 * matrix of a type no weight is read in (Q8_K), a rope_freqs table that is
 * not llama3's, one with a divisor below 1. */
TEST(gguf_in_place_refusals) {
    Config c = {.dim = 256, .hidden_dim = 256, .n_layers = 1, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 8,
                .seq_len = 16, .shared_classifier = 1};
    const GgmlType f32[8] = {GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32, GGML_F32};
    const char *path = test_tmp("refused.gguf");
    for (int k = 0; k < 3; k++) {
        Model m, g;
        Err e = {0};
        unsigned s = 1;
        CHECK(model_random_arch(&m, &c, ARCH_LLAMA, 1, &e) == 0);
        GTensors gt;
        gt_model(&gt, &m, "llama", f32, &s);
        if (k == 0) { /* blk.0.attn_k.weight as one Q8_K block a row */
            int i = 3;
            CHECK(!strcmp(gt.name[i], "blk.0.attn_k.weight"));
            gt.type[i] = GGML_Q8_K, gt.bytes[i] = (size_t)gt.ne1[i] * 292;
            gt.data[i] = realloc(gt.data[i], gt.bytes[i]);
            memset(gt.data[i], 0, gt.bytes[i]);
        } else {
            float ff[32];
            for (int j = 0; j < 32; j++) ff[j] = k == 1 ? (j < 8 ? 1.0f : j < 12 ? (float)(1 + (j * 7) % 5) : 8.0f) : 0.5f;
            gt_add(&gt, "rope_freqs.weight", ff, 1, 32, GGML_F32, 64, 0, &s);
        }
        gt_write(&gt, "llama", &m.c, path);
        gt_free(&gt);
        model_free(&m);
        CHECK(model_load_gguf(&g, path, &e) != 0 && strstr(e.msg, path) == e.msg && !strchr(e.msg, '\n'));
        const char *want[] = {"tensor 'blk.0.attn_k.weight': Q8_K weights cannot be read", "is not llama3's scaling",
                              "is not a divisor >= 1"};
        CHECK_MSG(strstr(e.msg, want[k]), "%d: %s", k, e.msg);
    }
}

/* Matrix k (q, k, v, o, gate, down, up) of layer l, and its shape. */
static Mat layer_mat(const Model *m, int l, int k, int *rows, int *cols) {
    const Config *c = &m->c;
    const LayerWeights *w = &m->layers[l];
    const Mat all[7] = {w->wq, w->wk, w->wv, w->wo, w->w1, w->w2, w->w3};
    const int r[7] = {c->q_dim, c->kv_dim, c->kv_dim, c->dim, c->hidden_dim, c->dim, c->hidden_dim};
    const int d[7] = {c->dim, c->dim, c->dim, c->q_dim, c->dim, c->hidden_dim, c->dim};
    *rows = r[k], *cols = d[k];
    return all[k];
}

/* `convert --to gguf --type f32` of a quantised file (a mix of block
 * types, the Q4_K and Q6_K ones packed at load where this CPU packs):
 * every matrix written equals ggml's dequantisation of the stored blocks
 * bit for bit. Before, the writer read the blocks as if they were bf16. */
TEST(gguf_convert_of_a_quantised_file_widens_its_blocks) {
    SKIP_UNLESS_SHARED();
    Config c = {.dim = 256, .hidden_dim = 512, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 512,
                .seq_len = 16, .shared_classifier = 0};
    const GgmlType ty[8] = {GGML_Q4_K, GGML_Q6_K, GGML_Q8_0, GGML_Q5_K, GGML_Q4_0, GGML_Q3_K, GGML_Q4_K, GGML_Q8_0};
    Model u, f;
    Err e = {0};
    char src[1100], out[1100];
    snprintf(src, sizeof src, "%s", test_tmp("mixed.gguf"));
    snprintf(out, sizeof out, "%s", test_tmp("mixed-f32.gguf"));
    if (gt_write_random_llama(c, ty, 7, 5, src)) return;
    int st;
    char *o = test_runf(&st, "%s convert --to gguf --type f32 --model %s --tokenizer %s --out %s 2>&1", test_bin(), src,
                        test_stories_tokenizer(), out);
    CHECK_MSG(st == 0, "convert: %s", o ? o : "");
    free(o);
    if (st) return;
    setenv("AHASCOPE_REPACK", "0", 1);
    int ok = model_load_gguf(&u, src, &e) == 0;
    unsetenv("AHASCOPE_REPACK");
    CHECK_MSG(ok, "%s", e.msg);
    CHECK_MSG(model_load_gguf(&f, out, &e) == 0, "%s", e.msg);
    int bad = 0, checked = 0;
    float *want = malloc(512 * 512 * sizeof *want);
    for (int l = 0; l < c.n_layers; l++)
        for (int k = 0; k < 7; k++) {
            int rows, cols;
            Mat q = layer_mat(&u, l, k, &rows, &cols), w = layer_mat(&f, l, k, &rows, &cols);
            CHECK(w.dt == DT_F32 && model_dtype_is_block(q.dt));
            size_t rb = model_row_bytes(q.dt, (size_t)cols);
            for (int r = 0; r < rows; r++)
                quant_dequant((GgmlType)model_dtype_ggml(q.dt), (const char *)q.p + r * rb, want + (size_t)r * cols, cols);
            int diff = memcmp(want, w.p, (size_t)rows * cols * sizeof *want) != 0;
            CHECK_MSG(!diff, "layer %d matrix %d (%s): the f32 copy is not the dequantised blocks", l, k,
                      gguf_type_name((GgmlType)model_dtype_ggml(q.dt)));
            bad += diff, checked++;
        }
    printf("      %d of %d matrices widened exactly\n", checked - bad, checked);
    free(want);
    model_free(&u);
    model_free(&f);
}
