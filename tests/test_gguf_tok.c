/* test_gguf_tok.c — the tokenizer of a GGUF file: llama (SentencePiece) and gpt2 (byte-level BPE) metadata, chat templates.
 *
 * The files are written here, with a tiny GGUF writer, holding only
 * tokenizer metadata (no tensors). The llama cases start from the shared
 * tok512.bin, whose llama2.c encoding is the reference; the gpt2 cases turn
 * the npm fixtures' real tokenizer.json files (tests/hftok_npm) into GGUF
 * arrays and must encode every fixture string exactly as the tokenizer.json
 * path and the npm reference do.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gguf.h"
#include "engine/tokenize/tokenize.h"
#include "tests/npm_fixture.h"
#include "tests/test.h"

/* ---- a GGUF writer for metadata ------------------------------------------ */

typedef struct {
    unsigned char *b;
    size_t n, cap;
    int n_kv;
} Gw;

static void put(Gw *g, const void *p, size_t n) {
    if (g->n + n > g->cap) {
        while (g->n + n > g->cap) g->cap = g->cap ? 2 * g->cap : 1 << 16;
        g->b = realloc(g->b, g->cap);
    }
    memcpy(g->b + g->n, p, n);
    g->n += n;
}
static void put_u32(Gw *g, uint32_t v) { put(g, &v, 4); }
static void put_u64(Gw *g, uint64_t v) { put(g, &v, 8); }
static void put_str(Gw *g, const char *s) { put_u64(g, strlen(s)), put(g, s, strlen(s)); }
static void key(Gw *g, const char *k, uint32_t type) { put_str(g, k), put_u32(g, type), g->n_kv++; }

static void gw_begin(Gw *g) {
    memset(g, 0, sizeof *g);
    put(g, "GGUF", 4), put_u32(g, 3), put_u64(g, 0), put_u64(g, 0); /* the kv count is patched at the end */
}
static void kv_str(Gw *g, const char *k, const char *v) { key(g, k, 8), put_str(g, v); }
static void kv_u32(Gw *g, const char *k, uint32_t v) { key(g, k, 4), put_u32(g, v); }
static void kv_bool(Gw *g, const char *k, int v) { unsigned char c = (unsigned char)v; key(g, k, 7), put(g, &c, 1); }
static void kv_strs(Gw *g, const char *k, const char *const *v, int n) {
    key(g, k, 9), put_u32(g, 8), put_u64(g, (uint64_t)n);
    for (int i = 0; i < n; i++) put_str(g, v[i]);
}
static void kv_i32s(Gw *g, const char *k, const int *v, int n) {
    key(g, k, 9), put_u32(g, 5), put_u64(g, (uint64_t)n), put(g, v, 4 * (size_t)n);
}
static void kv_f32s(Gw *g, const char *k, const float *v, int n) {
    key(g, k, 9), put_u32(g, 6), put_u64(g, (uint64_t)n), put(g, v, 4 * (size_t)n);
}
/* Patch the count, pad to the default alignment, write path, free. */
static void gw_end(Gw *g, const char *path) {
    uint64_t n = (uint64_t)g->n_kv;
    memcpy(g->b + 16, &n, 8);
    while (g->n % 32) put(g, "", 1);
    CHECK(test_write_file(path, g->b, (long)g->n) == 0);
    free(g->b);
}

/* ---- llama --------------------------------------------------------------- */

typedef struct {
    int n;
    char **piece; /* with U+2581 for spaces, as GGUF spells them */
    float *score;
    int *type;
} Spm;

/* tok512.bin's pieces as GGUF metadata would hold them, types as llama.cpp's
 * converter gives them (unknown, two control, 256 bytes, the rest normal). */
static int spm_from_tok512(Spm *s) {
    Tokenizer t;
    Err e = {0};
    if (tok_load(&t, test_stories_tokenizer(), 512, &e) != 0) return test_fail(__FILE__, __LINE__, "%s", e.msg), -1;
    s->n = t.vocab_size;
    s->piece = calloc((size_t)s->n, sizeof *s->piece), s->score = malloc((size_t)s->n * 4), s->type = malloc((size_t)s->n * 4);
    for (int i = 0; i < s->n; i++) {
        const char *p = t.vocab[i];
        if (i == 1) p = "<s>";
        if (i == 2) p = "</s>";
        char *o = s->piece[i] = malloc(3 * strlen(p) + 1);
        for (; *p; p++)
            if (*p == ' ') memcpy(o, "\xe2\x96\x81", 3), o += 3;
            else *o++ = *p;
        *o = 0;
        s->score[i] = t.scores[i];
        s->type[i] = i == 0 ? 2 : i <= 2 ? 3 : i <= 258 ? 6 : 1;
    }
    tok_free(&t);
    return 0;
}

static void spm_free(Spm *s) {
    for (int i = 0; i < s->n; i++) free(s->piece[i]);
    free(s->piece), free(s->score), free(s->type);
}

/* Swap tokens a and b everywhere. */
static void spm_swap(Spm *s, int a, int b) {
    char *p = s->piece[a];
    float f = s->score[a];
    int ty = s->type[a];
    s->piece[a] = s->piece[b], s->score[a] = s->score[b], s->type[a] = s->type[b];
    s->piece[b] = p, s->score[b] = f, s->type[b] = ty;
}

/* Write s as a llama GGUF; bos/eos < -1 leave the key out, add_bos < 0 too. */
static void spm_write(const Spm *s, const char *path, int bos, int eos, int add_bos) {
    Gw g;
    gw_begin(&g);
    kv_str(&g, "tokenizer.ggml.model", "llama");
    kv_strs(&g, "tokenizer.ggml.tokens", (const char *const *)s->piece, s->n);
    kv_f32s(&g, "tokenizer.ggml.scores", s->score, s->n);
    kv_i32s(&g, "tokenizer.ggml.token_type", s->type, s->n);
    if (bos >= -1) kv_u32(&g, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
    if (eos >= -1) kv_u32(&g, "tokenizer.ggml.eos_token_id", (uint32_t)eos);
    if (add_bos >= 0) kv_bool(&g, "tokenizer.ggml.add_bos_token", add_bos);
    gw_end(&g, path);
}

static const char *const SPM_TEXTS[] = {"Once upon a time, there was a little girl named Lily.", "", " ", "a  b\n\nc",
                                        "caf\xc3\xa9 \xe4\xbd\xa0\xe5\xa5\xbd", "\xff\xfe broken \x80 utf8", "<s> is text"};

/* Encode text with both tokenizers; 1 if the ids agree. */
static int same_ids(const Tokenizer *a, const Tokenizer *b, const char *text, int bos, int eos) {
    size_t len = strlen(text);
    int cap = (int)len + 3, na = -1, nb = -2, ia[300], ib[300];
    Err e = {0};
    if (tok_encode(a, text, len, bos, eos, ia, cap, &na, &e) || tok_encode(b, text, len, bos, eos, ib, cap, &nb, &e)) return 0;
    return na == nb && !memcmp(ia, ib, (size_t)na * sizeof(int));
}

/* tok512 written as GGUF encodes and decodes as tok512.bin does (BOS 1,
 * EOS 2 from the file; bytes at 3..258; the decoded byte pieces). */
TEST(gguf_tok_llama_matches_tokenizer_bin) {
    SKIP_UNLESS_SHARED();
    Spm s;
    if (spm_from_tok512(&s)) return;
    const char *path = test_tmp("spm.gguf");
    spm_write(&s, path, 1, 2, -1);
    Tokenizer g, b;
    Err e = {0};
    CHECK_MSG(tok_load_gguf(&g, path, 512, &e) == 0, "%s", e.msg);
    CHECK_MSG(tok_load(&b, test_stories_tokenizer(), 512, &e) == 0, "%s", e.msg);
    for (size_t i = 0; i < sizeof SPM_TEXTS / sizeof *SPM_TEXTS; i++)
        CHECK_MSG(same_ids(&g, &b, SPM_TEXTS[i], 1, 1), "text %zu encodes differently", i);
    CHECK_INT(g.bos_id, 1);
    CHECK_INT(tok_stop_id(&g), 1); /* llama2.c's rule: a story ends at BOS */
    size_t n;
    const char *p = tok_decode(&g, 5, 3 + 0xE4, &n);
    CHECK(n == 1 && (unsigned char)p[0] == 0xE4);
    p = tok_decode(&g, 5, 2, &n); /* </s>, a control piece: no text */
    CHECK(n == 0);
    p = tok_decode(&b, 5, 2, &n); /* tokenizer.bin spells it out */
    CHECK(n > 0);
    tok_free(&g);
    tok_free(&b);
    spm_free(&s);
}

/* The file's ids, not 1/2/3+b: BOS and EOS swapped, add_bos_token false,
 * byte pieces moved; a control piece is never merged into. */
TEST(gguf_tok_llama_ids_come_from_the_file) {
    SKIP_UNLESS_SHARED();
    Spm s;
    if (spm_from_tok512(&s)) return;
    spm_swap(&s, 3 + 'A', 400); /* <0x41> now at id 400 */
    const char *path = test_tmp("spm2.gguf");
    spm_write(&s, path, 2, 1, 1);
    Tokenizer g;
    Err e = {0};
    int ids[64], n = 0;
    CHECK_MSG(tok_load_gguf(&g, path, 0, &e) == 0, "%s", e.msg);
    CHECK(tok_encode(&g, "x", 1, 1, 1, ids, 64, &n, &e) == 0);
    CHECK_MSG(n >= 3 && ids[0] == 2 && ids[n - 1] == 1, "n %d first %d last %d", n, ids[0], ids[n - 1]);
    CHECK_INT(g.byte_id['A'], 400);
    /* "\xc3" alone is invalid UTF-8: byte fallback through the file's <0xC3> */
    CHECK(tok_encode(&g, "\xc3", 1, 0, 0, ids, 64, &n, &e) == 0);
    CHECK_MSG(n >= 1 && ids[n - 1] == 3 + 0xC3, "n %d last %d", n, n ? ids[n - 1] : -1);
    size_t len;
    const char *p = tok_decode(&g, 0, 400, &len);
    CHECK(len == 1 && p[0] == 'A');
    tok_free(&g);

    /* add_bos_token false: no BOS even when asked for */
    spm_write(&s, path, 1, 2, 0);
    CHECK_MSG(tok_load_gguf(&g, path, 0, &e) == 0, "%s", e.msg);
    CHECK(tok_encode(&g, "x", 1, 1, 0, ids, 64, &n, &e) == 0 && ids[0] != 1);
    tok_free(&g);

    /* the piece tok512.bin ends "Once" with made a control token: never produced */
    Tokenizer b;
    CHECK_MSG(tok_load(&b, test_stories_tokenizer(), 512, &e) == 0, "%s", e.msg);
    CHECK(tok_encode(&b, "Once", 4, 0, 0, ids, 64, &n, &e) == 0 && n >= 1);
    int st = ids[n - 1];
    CHECK_MSG(st > 258, "\"Once\" ends with piece %d, no merge", st);
    spm_free(&s);
    if (spm_from_tok512(&s)) return;
    s.type[st] = 3;
    spm_write(&s, path, 1, 2, -1);
    CHECK_MSG(tok_load_gguf(&g, path, 0, &e) == 0, "%s", e.msg);
    CHECK(tok_encode(&g, "Once", 4, 0, 0, ids, 64, &n, &e) == 0 && n >= 1);
    for (int i = 0; i < n; i++) CHECK_MSG(ids[i] != st, "control piece %d produced", st);
    tok_free(&g);
    tok_free(&b);
    spm_free(&s);
}

/* Bad metadata is one line naming the file. */
TEST(gguf_tok_llama_bad_metadata_refused) {
    SKIP_UNLESS_SHARED();
    Spm s;
    if (spm_from_tok512(&s)) return;
    const char *path = test_tmp("spm3.gguf");
    Tokenizer g;
    Err e = {0};
    spm_write(&s, path, 9999, 2, -1);
    CHECK(tok_load_gguf(&g, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, path) == e.msg && strstr(e.msg, "bos_token_id is 9999") && !strchr(e.msg, '\n'), "%s", e.msg);
    s.type[7] = 9;
    spm_write(&s, path, 1, 2, -1);
    CHECK(tok_load_gguf(&g, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, "token 7 has type 9"), "%s", e.msg);
    Gw w;
    gw_begin(&w);
    kv_str(&w, "tokenizer.ggml.model", "t5");
    gw_end(&w, path);
    CHECK(tok_load_gguf(&g, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, "tokenizer.ggml.model 't5' is not supported"), "%s", e.msg);
    spm_free(&s);
}

/* ---- gpt2 from the npm fixtures' tokenizer.json -------------------------- */

typedef struct {
    int n, n_merges;
    char **tok, **merge;
    int *type;
} Bpe;

static void bpe_free(Bpe *b) {
    for (int i = 0; i < b->n; i++) free(b->tok[i]);
    for (int i = 0; i < b->n_merges; i++) free(b->merge[i]);
    free(b->tok), free(b->merge), free(b->type);
}

/* The arrays a GGUF converter writes for a tokenizer.json: every id up to
 * the largest (gaps as unused "[PADn]"), added special tokens as control,
 * other added ones as user-defined, merges as "a b". */
static int bpe_from_json(const char *path, Bpe *b) {
    cJSON *j = test_read_json(path);
    if (!j) return -1;
    const cJSON *model = cJSON_GetObjectItem(j, "model"), *vocab = cJSON_GetObjectItem(model, "vocab");
    const cJSON *added = cJSON_GetObjectItem(j, "added_tokens"), *merges = cJSON_GetObjectItem(model, "merges"), *x;
    int max = -1;
    cJSON_ArrayForEach(x, vocab) if (x->valueint > max) max = x->valueint;
    cJSON_ArrayForEach(x, added) if (cJSON_GetObjectItem(x, "id")->valueint > max) max = cJSON_GetObjectItem(x, "id")->valueint;
    b->n = max + 1;
    b->tok = calloc((size_t)b->n, sizeof *b->tok), b->type = malloc((size_t)b->n * sizeof *b->type);
    for (int i = 0; i < b->n; i++) b->type[i] = 5;
    cJSON_ArrayForEach(x, vocab) b->tok[x->valueint] = strdup(x->string), b->type[x->valueint] = 1;
    cJSON_ArrayForEach(x, added) {
        int id = cJSON_GetObjectItem(x, "id")->valueint;
        free(b->tok[id]);
        b->tok[id] = strdup(cJSON_GetObjectItem(x, "content")->valuestring);
        b->type[id] = cJSON_IsTrue(cJSON_GetObjectItem(x, "special")) ? 3 : 4;
    }
    for (int i = 0; i < b->n; i++)
        if (!b->tok[i]) {
            char pad[32];
            snprintf(pad, sizeof pad, "[PAD%d]", i);
            b->tok[i] = strdup(pad);
        }
    b->n_merges = cJSON_GetArraySize(merges);
    b->merge = calloc((size_t)b->n_merges + 1, sizeof *b->merge);
    int i = 0;
    cJSON_ArrayForEach(x, merges) {
        if (cJSON_IsString(x)) b->merge[i++] = strdup(x->valuestring);
        else {
            const char *l = cJSON_GetArrayItem(x, 0)->valuestring, *r = cJSON_GetArrayItem(x, 1)->valuestring;
            b->merge[i] = malloc(strlen(l) + strlen(r) + 2);
            sprintf(b->merge[i++], "%s %s", l, r);
        }
    }
    cJSON_Delete(j);
    return 0;
}

static void bpe_write(const Bpe *b, const char *path, const char *pre, int bos, int eos, int add_bos) {
    Gw g;
    gw_begin(&g);
    kv_str(&g, "tokenizer.ggml.model", "gpt2");
    if (pre) kv_str(&g, "tokenizer.ggml.pre", pre);
    kv_strs(&g, "tokenizer.ggml.tokens", (const char *const *)b->tok, b->n);
    kv_i32s(&g, "tokenizer.ggml.token_type", b->type, b->n);
    kv_strs(&g, "tokenizer.ggml.merges", (const char *const *)b->merge, b->n_merges);
    if (bos >= 0) kv_u32(&g, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
    if (eos >= 0) kv_u32(&g, "tokenizer.ggml.eos_token_id", (uint32_t)eos);
    kv_bool(&g, "tokenizer.ggml.add_bos_token", add_bos);
    kv_str(&g, "tokenizer.chat_template", "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}");
    gw_end(&g, path);
}

/* Encode one text with both; a failure message on any difference. */
static int compare_one(const char *name, int i, const HfTok *js, const HfTok *gg, const char *text, int flags, const cJSON *want) {
    size_t len = strlen(text);
    int cap = (int)(4 * len + 8), na = 0, nb = 0;
    int *a = malloc((size_t)cap * sizeof *a), *b = malloc((size_t)cap * sizeof *b);
    Err e = {0};
    int ok = hftok_encode(js, text, len, flags, a, cap, &na, &e) == 0 && hftok_encode(gg, text, len, flags, b, cap, &nb, &e) == 0 &&
             na == nb && !memcmp(a, b, (size_t)na * sizeof *a);
    for (int k = 0; ok && want && k < na; k++) ok = cJSON_GetArraySize(want) == na && cJSON_GetArrayItem(want, k)->valueint == a[k];
    if (!ok) test_fail(__FILE__, __LINE__, "%s string %d flags %d: GGUF %d ids, tokenizer.json %d ids%s", name, i, flags, nb, na, e.msg[0] ? e.msg : "");
    free(a), free(b);
    return ok;
}

/* Every fixture string, with special tokens matched, as plain text and with
 * BOS as the file wants it, encodes to the tokenizer.json path's ids (and,
 * for the first, the npm reference's "ids"). */
static void check_bpe(const char *name, const char *pre) {
    if (!npm_skip_unless_available()) return;
    cJSON *exp = npm_expected(name);
    if (!exp) return;
    HfTok *js = npm_tokenizer(name, exp);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", npm_dir(), cJSON_GetObjectItem(exp, "tokenizer")->valuestring);
    Bpe b;
    memset(&b, 0, sizeof b);
    if (js && bpe_from_json(path, &b) == 0) {
        const char *gpath = test_tmp("bpe.gguf");
        bpe_write(&b, gpath, pre, hftok_bos(js), hftok_eos(js), hftok_wants_bos(js));
        Tokenizer t;
        Err e = {0};
        CHECK_MSG(tok_load_gguf(&t, gpath, b.n, &e) == 0, "%s: %s", name, e.msg);
        const cJSON *cases = cJSON_GetObjectItem(exp, "cases"), *c;
        int i = 0, bad = 0, post = HFTOK_SPECIAL | (hftok_wants_bos(js) ? HFTOK_BOS : 0);
        CHECK(t.hf && hftok_bos(t.hf) == hftok_bos(js) && hftok_eos(t.hf) == hftok_eos(js) && hftok_wants_bos(t.hf) == hftok_wants_bos(js));
        cJSON_ArrayForEach(c, cases) {
            const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
            if (t.hf && bad < 10) {
                bad += !compare_one(name, i, js, t.hf, text, HFTOK_SPECIAL, cJSON_GetObjectItem(c, "ids"));
                bad += !compare_one(name, i, js, t.hf, text, 0, cJSON_GetObjectItem(c, "ids_plain"));
                bad += !compare_one(name, i, js, t.hf, text, post, NULL);
            }
            i++;
        }
        CHECK(i >= 200);
        char *tmpl = tok_gguf_chat_template(gpath);
        CHECK(tmpl && chat_format_for(NULL, tmpl) == CHAT_CHATML);
        free(tmpl);
        tok_free(&t);
    }
    bpe_free(&b);
    hftok_free(js);
    cJSON_Delete(exp);
}

TEST(gguf_tok_gpt2_llama3) { check_bpe("llama3", "llama-bpe"); }
TEST(gguf_tok_gpt2_llama3_2) { check_bpe("llama3_2", "llama-bpe"); }
TEST(gguf_tok_gpt2_qwen2_5) { check_bpe("qwen2_5", "qwen2"); }
TEST(gguf_tok_gpt2_qwen3) { check_bpe("qwen3", "qwen2"); }
TEST(gguf_tok_gpt2_cl100k) { check_bpe("gpt35turbo", "dbrx"); }

/* A pre-tokenizer name that is not one of the known regexes, or none, is
 * refused in one line naming it; so are merges naming no token. */
TEST(gguf_tok_gpt2_refusals) {
    Bpe b = {0};
    const char *toks[] = {"a", "b", "ab", "<|end|>"};
    int types[] = {1, 1, 1, 3};
    char *merges[] = {"a b"};
    b.n = 4, b.n_merges = 1, b.tok = (char **)toks, b.type = types, b.merge = merges;
    const char *path = test_tmp("bpe_bad.gguf");
    Tokenizer t;
    Err e = {0};
    bpe_write(&b, path, "deepseek-llm", -1, 3, 0);
    CHECK(tok_load_gguf(&t, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, path) == e.msg && strstr(e.msg, "tokenizer.ggml.pre 'deepseek-llm' is not a supported") && !strchr(e.msg, '\n'), "%s", e.msg);
    bpe_write(&b, path, NULL, -1, 3, 0);
    CHECK(tok_load_gguf(&t, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, "missing: llama.cpp's default"), "%s", e.msg);
    bpe_write(&b, path, "gpt-2", -1, 3, 0);
    CHECK_MSG(tok_load_gguf(&t, path, 0, &e) == 0, "%s", e.msg);
    int ids[16], n = 0;
    CHECK_MSG(tok_encode(&t, "ab", 2, 0, 0, ids, 16, &n, &e) == 0, "%s", e.msg);
    CHECK_MSG(n == 1 && ids[0] == 2, "n %d first %d", n, ids[0]);
    CHECK_INT(tok_stop_id(&t), 3);
    tok_free(&t);
    merges[0] = "a c";
    bpe_write(&b, path, "gpt-2", -1, 3, 0);
    CHECK(tok_load_gguf(&t, path, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, path) == e.msg && strstr(e.msg, "merge 0"), "%s", e.msg);
}

/* ---- chat templates -------------------------------------------------------- */

/* A GGUF's tokenizer.chat_template is read back whole; the formats are told
 * by their markers: Llama-3's header, ChatML's im_start, Tulu's user turn
 * (OLMo-2's template, double-quoted too) but not Zephyr's; Llama-2's
 * spaced [INST]. */
TEST(gguf_tok_chat_template_markers) {
    static const char olmo2[] = "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
                                "{{ '<|user|>\\n' + message['content'] + '\\n' }}{% elif message['role'] == 'assistant' %}"
                                "{{ '<|assistant|>\\n'  + message['content'] + eos_token + '\\n' }}{% endif %}{% endfor %}";
    CHECK_INT(chat_format_for("llama", olmo2), CHAT_TULU);
    CHECK_INT(chat_format_for(NULL, "{{ \"<|user|>\\n\" + message[\"content\"] + \"\\n\" }}"), CHAT_TULU);
    CHECK_INT(chat_format_for("llama", "{{ '<|user|>\\n' + message['content'] + eos_token }}"), CHAT_NONE);
    CHECK_INT(chat_format_for("llama", "{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}"), CHAT_INST);
    CHECK_INT(chat_format_for("llama", "x<|start_header_id|>y"), CHAT_LLAMA3);
    Gw g;
    gw_begin(&g);
    kv_str(&g, "tokenizer.chat_template", olmo2);
    const char *path = test_tmp("chat.gguf");
    gw_end(&g, path);
    char *t = tok_gguf_chat_template(path);
    CHECK(t && !strcmp(t, olmo2));
    free(t);
    CHECK(tok_gguf_chat_template(test_tmp("absent.gguf")) == NULL);
}

/* ---- a whole model with a gpt2 vocabulary --------------------------------- */

/* stories260K.gguf with its tokenizer swapped for b's (a gpt2 one of the
 * same 512 ids) and tmpl as tokenizer.chat_template: the other metadata and
 * every tensor copied as they are. */
static int swap_tokenizer(const char *path, const Bpe *b, const char *tmpl) {
    GgufFile f;
    Err e = {0};
    if (gguf_open(&f, test_shared("models/stories260K/stories260K.gguf"), &e)) return test_fail(__FILE__, __LINE__, "%s", e.msg), -1;
    Gw g;
    gw_begin(&g);
    for (int i = 0; i < f.n_kv; i++) {
        const GgufKv *kv = &f.kv[i];
        if (!strncmp(kv->key, "tokenizer.", 10)) continue;
        if (kv->type == GGUF_U32) kv_u32(&g, kv->key, (uint32_t)kv->v.u);
        else if (kv->type == GGUF_F32) { float x = (float)kv->v.f; key(&g, kv->key, 6), put(&g, &x, 4); }
        else if (kv->type == GGUF_STRING) kv_str(&g, kv->key, kv->str);
        else return test_fail(__FILE__, __LINE__, "stories260K.gguf: unexpected type of %s", kv->key), gguf_close(&f), -1;
    }
    kv_str(&g, "tokenizer.ggml.model", "gpt2");
    kv_str(&g, "tokenizer.ggml.pre", "gpt-2");
    kv_strs(&g, "tokenizer.ggml.tokens", (const char *const *)b->tok, b->n);
    kv_i32s(&g, "tokenizer.ggml.token_type", b->type, b->n);
    kv_strs(&g, "tokenizer.ggml.merges", (const char *const *)b->merge, b->n_merges);
    kv_u32(&g, "tokenizer.ggml.bos_token_id", (uint32_t)(b->n - 1));
    kv_u32(&g, "tokenizer.ggml.eos_token_id", (uint32_t)(b->n - 1));
    kv_bool(&g, "tokenizer.ggml.add_bos_token", 1); /* as the generated tokenizer.json's post-processor */
    kv_str(&g, "tokenizer.chat_template", tmpl);
    for (int i = 0; i < f.n_tensors; i++) {
        const GgufTensor *t = &f.tensors[i];
        put_str(&g, t->name), put_u32(&g, (uint32_t)t->n_dims);
        for (int d = 0; d < t->n_dims; d++) put_u64(&g, (uint64_t)t->ne[d]);
        put_u32(&g, (uint32_t)t->type), put_u64(&g, t->offset);
    }
    uint64_t nt = (uint64_t)f.n_tensors;
    memcpy(g.b + 8, &nt, 8);
    while (g.n % f.alignment) put(&g, "", 1);
    put(&g, f.base + f.data_start, f.size - f.data_start);
    gw_end(&g, path);
    gguf_close(&f);
    return 0;
}

/* `generate --chat` on a GGUF whose tokenizer is gpt2 and whose template is
 * OLMo-2's: the prompt fed is Tulu's wrapping encoded with the special
 * tokens matched, as the same tokenizer.json encodes it in process. */
TEST(gguf_tok_generate_chat_with_a_gpt2_vocabulary) {
    SKIP_UNLESS_SHARED();
    Err e = {0};
    char *json = hftok_bytelevel_json(512, &e);
    const char *jpath = test_tmp("gen512.json"), *gpath = test_tmp("gpt2model.gguf");
    CHECK_MSG(json && test_write_file(jpath, json, (long)strlen(json)) == 0, "%s", e.msg);
    free(json);
    Bpe b;
    memset(&b, 0, sizeof b);
    HfTok *h = NULL;
    if (bpe_from_json(jpath, &b) || swap_tokenizer(gpath, &b, "{{ bos_token }}{{ '<|user|>\\n' + message['content'] + '\\n' }}") ||
        hftok_load(&h, jpath, &e)) {
        CHECK_MSG(0, "%s", e.msg);
        bpe_free(&b);
        return;
    }
    Chat c = chat_of(CHAT_TULU);
    char *text = chat_wrap(&c, "hi there");
    int want[64], n = 0, st;
    CHECK(hftok_encode(h, text, strlen(text), HFTOK_SPECIAL, want, 64, &n, &e) == 0 && n > 3 && want[0] == 511);
    char *out = test_runf(&st, "%s generate --model %s --chat --prompt 'hi there' --steps %d --temperature 0 --ids 2>&1", test_bin(), gpath, n + 4);
    char exp[600] = "";
    for (int i = 0; i < n; i++) snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%d", i ? " " : "", want[i]);
    CHECK_MSG(st == 0 && out && !strncmp(out, exp, strlen(exp)), "want the prompt [%s], got: %s", exp, out ? out : "");
    free(out);
    out = test_runf(&st, "%s generate --model %s --prompt 'hi there' --steps 20 --temperature 0 --ids 2>&1", test_bin(), gpath);
    CHECK(hftok_encode(h, "hi there", 8, HFTOK_BOS, want, 64, &n, &e) == 0 && want[0] == 511);
    exp[0] = 0;
    for (int i = 0; i < n; i++) snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%d", i ? " " : "", want[i]);
    CHECK_MSG(st == 0 && out && !strncmp(out, exp, strlen(exp)), "plain: want the prompt [%s], got: %s", exp, out ? out : "");
    free(out);
    out = test_runf(&st, "%s generate --model %s --prompt 'hi there' --steps 20 --temperature 0 2>&1", test_bin(), gpath);
    CHECK_MSG(st == 0 && out && !strncmp(out, "hi there", 8), "plain text: %s", out ? out : "");
    free(out);
    free(text);
    hftok_free(h);
    bpe_free(&b);
}
