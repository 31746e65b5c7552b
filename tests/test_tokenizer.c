/* test_tokenizer.c — the llama2.c tokenizer against golden encodings; its heap merge against the quadratic scan.
 *
 * Tokenizer: golden encodings from the reference implementation, decode
 * round trips, invalid UTF-8, malformed tokenizer files, and the heap merge
 * against the quadratic scan it replaced (ids equal, time not quadratic). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/tokenize/tokenize.h"
#include "tests/test.h"

/* Concatenated decode of ids[1..n) (skipping BOS), into a malloc'd buffer. */
static char *decode_all(const Tokenizer *t, const int *ids, int n, size_t *len) {
    size_t cap = 16, k = 0;
    char *out = malloc(cap);
    for (int i = 1; i < n; i++) {
        size_t m;
        const char *p = tok_decode(t, ids[i - 1], ids[i], &m);
        while (k + m + 1 > cap) out = realloc(out, cap *= 2);
        memcpy(out + k, p, m);
        k += m;
    }
    out[k] = 0;
    *len = k;
    return out;
}

static void check_golden(const char *tok_rel, int vocab, const char *golden_rel) {
    Tokenizer t;
    Err e;
    if (tok_load(&t, test_shared(tok_rel), vocab, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); return; }
    char *js = test_read_file(test_shared(golden_rel), NULL);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    CHECK(root != NULL && cJSON_GetArraySize(root) >= 5);
    cJSON *c;
    cJSON_ArrayForEach(c, root) {
        const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
        cJSON *ids = cJSON_GetObjectItem(c, "ids");
        int bos = cJSON_IsTrue(cJSON_GetObjectItem(c, "bos")), n = 0, want = cJSON_GetArraySize(ids);
        size_t len = strlen(text);
        int *out = malloc((len + 3) * sizeof(int));
        CHECK(tok_encode(&t, text, len, bos, 0, out, (int)len + 3, &n, &e) == 0);
        int same = n == want;
        for (int i = 0; same && i < n; i++) same = out[i] == cJSON_GetArrayItem(ids, i)->valueint;
        CHECK_MSG(same, "%s: encoding of \"%s\" differs from golden (%d vs %d ids)", tok_rel, text, n, want);
        size_t dl;
        char *dec = decode_all(&t, out, n, &dl);
        CHECK_MSG(dl == len && memcmp(dec, text, len) == 0, "%s: decode(encode(\"%s\")) = \"%s\"", tok_rel, text, dec);
        free(dec);
        free(out);
    }
    cJSON_Delete(root);
    free(js);
    tok_free(&t);
}

TEST(tokenizer_golden_tok512) {
    SKIP_UNLESS_SHARED();
    check_golden("models/stories260K/tok512.bin", 512, "golden/tok512_encode.json");
}

TEST(tokenizer_golden_llama2_32000) {
    SKIP_UNLESS_SHARED();
    check_golden("models/llama2-tokenizer.bin", 32000, "golden/llama2_tokenizer_encode.json");
}

TEST(tokenizer_invalid_utf8_round_trips_through_byte_fallback) {
    SKIP_UNLESS_SHARED();
    Tokenizer t;
    Err e;
    CHECK(tok_load(&t, test_stories_tokenizer(), 512, &e) == 0);
    const char *cases[] = {"\xff\xfe", "abc\xe6\x97", "\x80\x80x", "\xc0\xaf overlong", "ok \xf0\x9f\x99", "\xed\xa0\x80"};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t len = strlen(cases[c]), dl;
        int ids[64], n = 0;
        CHECK(tok_encode(&t, cases[c], len, 1, 0, ids, 64, &n, &e) == 0);
        char *dec = decode_all(&t, ids, n, &dl);
        CHECK_MSG(dl == len && memcmp(dec, cases[c], len) == 0, "case %zu does not round-trip", c);
        free(dec);
    }
    int ids[4], n = -1;
    CHECK(tok_encode(&t, "", 0, 1, 0, ids, 4, &n, &e) == 0);
    CHECK_INT(n, 1);
    CHECK(tok_encode(&t, "", 0, 0, 0, ids, 4, &n, &e) == 0);
    CHECK_INT(n, 0);
    char buf[8];
    int byte_tok = 0xE2 + 3;
    CHECK_INT(tok_piece_printable(&t, 5, 3 + 0x07, buf, sizeof buf), 0); /* BEL is never printed */
    CHECK_INT(tok_piece_printable(&t, 5, 3 + '\n', buf, sizeof buf), 1);
    size_t m;
    CHECK(tok_decode(&t, 5, byte_tok, &m)[0] == '\xe2' && m == 1);
    tok_free(&t);
}

TEST(tokenizer_long_text) {
    SKIP_UNLESS_SHARED();
    Tokenizer t;
    Err e;
    CHECK(tok_load(&t, test_stories_tokenizer(), 512, &e) == 0);
    size_t len = 20000;
    char *text = malloc(len + 1);
    for (size_t i = 0; i < len; i++) text[i] = "Once upon a time, Lily saw 3 cats.\n"[i % 35];
    text[len] = 0;
    int *ids = malloc((len + 3) * sizeof(int)), n = 0;
    CHECK(tok_encode(&t, text, len, 1, 0, ids, (int)len + 3, &n, &e) == 0);
    CHECK(n > 1000 && n < (int)len);
    size_t dl;
    char *dec = decode_all(&t, ids, n, &dl);
    CHECK(dl == len && memcmp(dec, text, len) == 0);
    free(dec); free(ids); free(text);
    tok_free(&t);
}

/* Write a tokenizer file from a header and raw records. */
static const char *write_tok(const char *name, const void *data, long n) {
    const char *p = test_tmp(name);
    test_write_file(p, data, n);
    return p;
}

TEST(tokenizer_malformed_files_fail_with_path) {
    Tokenizer t;
    Err e;
    unsigned char good[8 + 300 * 9];
    long n = 0;
    int32_t maxlen = 4;
    memcpy(good, &maxlen, 4); n = 4;
    for (int i = 0; i < 300; i++) {
        float s = (float)-i;
        int32_t len = 1;
        memcpy(good + n, &s, 4); memcpy(good + n + 4, &len, 4); good[n + 8] = (unsigned char)('a' + i % 26);
        n += 9;
    }
    CHECK(tok_load(&t, write_tok("ok.bin", good, n), 300, &e) == 0);
    tok_free(&t);
    struct { const char *name; long cut; int patch_at; int32_t patch; int vocab; } cases[] = {
        {"empty.bin", 0, -1, 0, 300},           {"short_header.bin", 2, -1, 0, 300},
        {"cut_record.bin", 4 + 9 * 10 + 3, -1, 0, 300}, {"cut_bytes.bin", 4 + 9 * 10 + 8, -1, 0, 300},
        {"neg_len.bin", n, 4 + 4, -5, 300},     {"huge_len.bin", n, 4 + 4, 0x7fffffff, 300},
        {"len_over_max.bin", n, 4 + 4, 9, 300}, {"zero_maxlen.bin", n, 0, 0, 300},
        {"neg_maxlen.bin", n, 0, -1, 300},      {"nan_score.bin", n, 4, 0x7fc00000, 300},
        {"too_few.bin", n, -1, 0, 512},         {"header_only.bin", 4, -1, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned char buf[sizeof good];
        memcpy(buf, good, sizeof good);
        if (cases[c].patch_at >= 0) memcpy(buf + cases[c].patch_at, &cases[c].patch, 4);
        const char *p = write_tok(cases[c].name, buf, cases[c].cut);
        e.msg[0] = 0;
        int r = tok_load(&t, p, cases[c].vocab, &e);
        CHECK_MSG(r != 0, "%s was accepted", cases[c].name);
        CHECK_MSG(strstr(e.msg, p) != NULL, "%s: message does not name the file: %s", cases[c].name, e.msg);
        if (r == 0) tok_free(&t);
    }
    CHECK(tok_load(&t, test_tmp("missing.bin"), 10, &e) != 0 && strstr(e.msg, "missing.bin"));
}

/* ---- the heap merge against the scan it replaced -------------------------------- */

/* The encoder as it was before the heap (test-only reference): each merge
 * rescans every adjacent pair and takes the first with the highest score. */
static size_t ref_utf8_len(const unsigned char *s, size_t left) {
    size_t n = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 1;
    if (n > left) return 1;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 1;
    return n;
}

static int ref_encode(const Tokenizer *t, const char *text, size_t len, int *ids) {
    char buf[64], *m = malloc((size_t)t->max_token_length * 2 + 8);
    int n = 0, sp = len ? tok_lookup(t, " ") : -1;
    if (sp >= 0) ids[n++] = sp;
    for (size_t i = 0; i < len;) {
        size_t k = ref_utf8_len((const unsigned char *)text + i, len - i);
        memcpy(buf, text + i, k), buf[k] = 0;
        int id = tok_lookup(t, buf);
        if (id >= 0) ids[n++] = id;
        else
            for (size_t j = 0; j < k; j++) ids[n++] = (unsigned char)text[i + j] + 3;
        i += k;
    }
    for (;;) {
        float best = -1e30f;
        int best_id = -1, best_at = -1;
        for (int i = 0; i + 1 < n; i++) {
            int la = t->vocab_len[ids[i]], lb = t->vocab_len[ids[i + 1]];
            if (la + lb > t->max_token_length) continue;
            memcpy(m, t->vocab[ids[i]], la), memcpy(m + la, t->vocab[ids[i + 1]], lb), m[la + lb] = 0;
            int id = tok_lookup(t, m);
            if (id >= 0 && t->scores[id] > best) best = t->scores[id], best_id = id, best_at = i;
        }
        if (best_at < 0) break;
        ids[best_at] = best_id;
        memmove(ids + best_at + 1, ids + best_at + 2, (size_t)(n - best_at - 2) * sizeof(int));
        n--;
    }
    free(m);
    return n;
}

static unsigned rng_next(unsigned *s) { return *s = *s * 1664525u + 1013904223u, *s >> 8; }

/* Random text from pieces the vocabularies know, accents, emoji and
 * invalid bytes, so merges, byte fallback and ties all happen. */
static size_t random_text(unsigned *seed, char *out, size_t max) {
    static const char *parts[] = {"a", "b", "c", "ab", "ba", "abc", " ", "  ", "the", " once", "é", "ö", "日本",
                                  "\xf0\x9f\x98\x80", "\xff", "\xc3", "\n", "x", "ing", "aaaa"};
    size_t n = 0, want = rng_next(seed) % max;
    while (n < want) {
        const char *p = parts[rng_next(seed) % (sizeof parts / sizeof parts[0])];
        size_t l = strlen(p);
        if (n + l > max) break;
        memcpy(out + n, p, l), n += l;
    }
    return n;
}

static void check_equivalence(const Tokenizer *t, unsigned seed, int rounds) {
    enum { MAX = 300 };
    char text[MAX];
    int got[MAX + 3], want[MAX + 3], n;
    Err e;
    for (int r = 0; r < rounds; r++) {
        size_t len = random_text(&seed, text, MAX);
        int m = ref_encode(t, text, len, want);
        CHECK(tok_encode(t, text, len, 0, 0, got, MAX + 3, &n, &e) == 0);
        int same = n == m && memcmp(got, want, (size_t)n * sizeof(int)) == 0;
        CHECK_MSG(same, "%s: round %d (%zu bytes): %d ids, the scan gives %d", t->path, r, len, n, m);
        if (!same) return;
    }
}

/* A vocabulary built for ties: every string of 1 to 4 letters over {a,b,c}
 * with scores from only three values, some below llama2.c's -1e30 floor
 * (never merged), and a max_token_length that rules out some pairs. */
static const char *write_tie_vocab(void) {
    static unsigned char buf[8 + 400 * 16];
    int32_t maxlen = 6;
    long n = 0;
    memcpy(buf, &maxlen, 4), n = 4;
    char s[8];
    for (int i = 0; i < 379; i++) {
        float score = 0;
        if (i < 3) snprintf(s, sizeof s, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259) snprintf(s, sizeof s, "<0x%02X>", i - 3);
        else {
            int k = i - 259, len = k < 3 ? 1 : k < 12 ? 2 : k < 39 ? 3 : 4, base = len == 1 ? 0 : len == 2 ? 3 : len == 3 ? 12 : 39;
            for (int j = 0, v = k - base; j < len; j++, v /= 3) s[j] = (char)('a' + v % 3);
            s[len] = 0;
            float levels[] = {-1.0f, -2.0f, -1.0f, -3e30f};
            score = levels[(k * 7) % 4];
        }
        int32_t len = (int32_t)strlen(s);
        memcpy(buf + n, &score, 4), memcpy(buf + n + 4, &len, 4), memcpy(buf + n + 8, s, (size_t)len);
        n += 8 + len;
    }
    return write_tok("ties.bin", buf, n);
}

TEST(tokenizer_heap_merges_match_the_scan) {
    Tokenizer t;
    Err e;
    CHECK(tok_load(&t, write_tie_vocab(), 0, &e) == 0);
    check_equivalence(&t, 1, 2000);
    tok_free(&t);
    if (!test_shared_available()) return;
    const char *vocabs[] = {"models/stories260K/tok512.bin", "models/llama2-tokenizer.bin"};
    for (int v = 0; v < 2; v++) {
        if (tok_load(&t, test_shared(vocabs[v]), 0, &e) != 0) { test_fail(__FILE__, __LINE__, "%s", e.msg); continue; }
        check_equivalence(&t, 7 + (unsigned)v, 300);
        tok_free(&t);
    }
}

/* The scan took 5 s for 16 800 characters and grows with their square;
 * the heap takes milliseconds for 60 KB. */
TEST(tokenizer_long_text_is_not_quadratic) {
    SKIP_UNLESS_SHARED();
    Tokenizer t;
    Err e;
    CHECK(tok_load(&t, test_stories_tokenizer(), 512, &e) == 0);
    const char *sentence = "Once upon a time, Lily saw 3 cats near the big park. They were happy. ";
    size_t sl = strlen(sentence), len = 60000;
    char *text = malloc(len);
    int *ids = malloc((len + 3) * sizeof(int)), n = 0;
    for (size_t i = 0; i < len; i++) text[i] = sentence[i % sl];
    clock_t c0 = clock(); /* CPU time: a loaded machine does not stretch it */
    CHECK(tok_encode(&t, text, len, 1, 0, ids, (int)len + 3, &n, &e) == 0);
    double s = (double)(clock() - c0) / CLOCKS_PER_SEC;
    CHECK_MSG(s < 1.0, "%zu bytes took %.2f s of CPU", len, s);
    CHECK(n > 10000 && n < (int)len / 2);
    free(text), free(ids);
    tok_free(&t);
}

/* bench --tokenizer: one JSON object with the counts; its flags refused
 * without a tokenizer, an unreadable --text named. */
TEST(tokenizer_bench_mode) {
    SKIP_UNLESS_SHARED();
    const char *bin = getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope";
    int st;
    char *out = test_runf(&st, "%s bench --tokenizer %s --bytes 20000 --runs 1 --json", bin,
                          test_stories_tokenizer());
    cJSON *j = st == 0 ? cJSON_Parse(out) : NULL;
    CHECK_MSG(j, "%s", out);
    CHECK(j && cJSON_GetObjectItem(j, "bytes")->valuedouble == 20000);
    CHECK(j && cJSON_GetObjectItem(j, "tokens")->valuedouble > 1000 && !strcmp(cJSON_GetObjectItem(j, "kind")->valuestring, "llama2.c"));
    cJSON_Delete(j);
    free(out);
    out = test_runf(&st, "%s bench --text x.txt 2>&1", bin);
    CHECK_MSG(st == 2 && strstr(out, "--tokenizer"), "%s", out);
    free(out);
    out = test_runf(&st, "%s bench --tokenizer %s --text %s 2>&1", bin, test_stories_tokenizer(),
                    test_tmp("no-such.txt"));
    CHECK_MSG(st != 0 && strstr(out, "no-such.txt") && strchr(out, '\n') == strrchr(out, '\n'), "%s", out);
    free(out);
}
