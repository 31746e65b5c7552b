/* test_hftok.c — tokenizer.json encodings against a Python reference; the split scanners, classes, NFC.
 *
 * Hugging Face tokenizer.json: encodings of every fixture against the ids an
 * independent Python reference computed (tests/fixtures/hftok/
 * make_fixtures.py), the split scanners on hand-worked examples, special
 * tokens, BOS/EOS configuration, decoding of partial UTF-8, round trips of
 * random and invalid text, speed, and malformed files. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/tokenize/tokenize.h"
#include "engine/tokenize/hftok_impl.h"
#include "engine/tokenize/unicode.h"
#include "tests/test.h"

#define FIX "tests/fixtures/hftok/"

static HfTok *load_fixture(const char *name) {
    char path[256];
    snprintf(path, sizeof path, FIX "%s.json", name);
    HfTok *t = NULL;
    Err e = {0};
    if (hftok_load(&t, path, &e) != 0) test_fail(__FILE__, __LINE__, "%s", e.msg);
    return t;
}

/* Encode into a malloc'd array sized by the documented bound. */
static int *encode(const HfTok *t, const char *s, size_t len, int flags, int *n) {
    int cap = (int)(4 * len + 8);
    int *ids = malloc((size_t)cap * sizeof *ids);
    Err e = {0};
    if (hftok_encode(t, s, len, flags, ids, cap, n, &e) != 0) {
        test_fail(__FILE__, __LINE__, "encode failed: %s", e.msg);
        *n = 0;
    }
    return ids;
}

/* Concatenated hftok_decode pieces (prev = -1 before the first). */
static char *decode_pieces(const HfTok *t, const int *ids, int n, size_t *len) {
    size_t cap = 64, k = 0;
    char *out = malloc(cap);
    for (int i = 0; i < n; i++) {
        size_t m;
        const char *p = hftok_decode(t, i ? ids[i - 1] : -1, ids[i], &m);
        while (k + m + 1 > cap) out = realloc(out, cap *= 2);
        memcpy(out + k, p, m);
        k += m;
    }
    out[k] = 0;
    *len = k;
    return out;
}

static int same_ids(const int *a, int na, const cJSON *want) {
    if (na != cJSON_GetArraySize(want)) return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != cJSON_GetArrayItem(want, i)->valueint) return 0;
    return 1;
}

/* One expected case: ids, decode of the ids, and (without BOS) the pieces. */
static void check_case(const HfTok *t, const char *name, const cJSON *c) {
    const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
    const char *dec = cJSON_GetObjectItem(c, "decoded")->valuestring;
    const cJSON *skip = cJSON_GetObjectItem(c, "decoded_skip");
    int bos = cJSON_IsTrue(cJSON_GetObjectItem(c, "bos")), n;
    int flags = (bos ? HFTOK_BOS : 0) | (cJSON_IsTrue(cJSON_GetObjectItem(c, "special")) ? HFTOK_SPECIAL : 0);
    int *ids = encode(t, text, strlen(text), flags, &n);
    if (!same_ids(ids, n, cJSON_GetObjectItem(c, "ids"))) {
        char got[512] = "";
        for (int i = 0, k = 0; i < n && k < 480; i++) k += snprintf(got + k, sizeof got - (size_t)k, "%d ", ids[i]);
        test_fail(__FILE__, __LINE__, "%s: \"%s\" (flags %d) encodes to %s", name, text, flags, got);
    }
    size_t dl;
    char *d = hftok_decode_ids(t, ids, n, 0, &dl);
    CHECK_MSG(dl == strlen(dec) && memcmp(d, dec, dl) == 0, "%s: decode of \"%s\" is \"%s\", want \"%s\"", name, text, d, dec);
    free(d);
    if (skip) {
        d = hftok_decode_ids(t, ids, n, 1, &dl);
        CHECK_MSG(strcmp(d, skip->valuestring) == 0, "%s: skip-special decode \"%s\", want \"%s\"", name, d, skip->valuestring);
        free(d);
    }
    if (!bos) {
        d = decode_pieces(t, ids, n, &dl);
        CHECK_MSG(dl == strlen(dec) && memcmp(d, dec, dl) == 0, "%s: pieces of \"%s\" give \"%s\"", name, text, d);
        free(d);
    }
    free(ids);
}

static void check_fixture(const char *name, const char *kind) {
    HfTok *t = load_fixture(name);
    if (!t) return;
    CHECK_MSG(strstr(hftok_describe(t), kind) != NULL, "%s: described as \"%s\"", name, hftok_describe(t));
    char path[256];
    snprintf(path, sizeof path, FIX "%s.expected.json", name);
    char *js = test_read_file(path, NULL);
    cJSON *root = js ? cJSON_Parse(js) : NULL;
    CHECK_MSG(root && cJSON_GetArraySize(root) > 90, "%s: expected cases missing", path);
    const cJSON *c;
    cJSON_ArrayForEach(c, root) check_case(t, name, c);
    cJSON_Delete(root);
    free(js);
    hftok_free(t);
}

TEST(hftok_fixture_gpt2) { check_fixture("gpt2", "GPT-2 split"); }
TEST(hftok_fixture_llama3) { check_fixture("llama3", "cl100k"); }
TEST(hftok_fixture_qwen2) { check_fixture("qwen2", "Qwen2 split, NFC"); }
TEST(hftok_fixture_olmo2) { check_fixture("olmo2", "cl100k"); }
TEST(hftok_fixture_llama2_sentencepiece) { check_fixture("llama2", "byte fallback"); }
TEST(hftok_fixture_llama2_old_metaspace) { check_fixture("llama2_metaspace", "metaspace split"); }
TEST(hftok_fixture_llama2_metaspace_first) { check_fixture("llama2_first", "dummy prefix"); }

/* ---- the split scanners on hand-worked examples ---------------------------- */

/* Pre-tokens of s joined with '|'. */
static void check_split(int pattern, const char *s, const char *want) {
    char got[512];
    size_t k = 0, n = strlen(s);
    for (size_t i = 0, j; i < n && k < sizeof got - 8; i = j) {
        j = hf_pretok_next(pattern, (const unsigned char *)s, n, i);
        CHECK(j > i && j <= n);
        if (j <= i) break;
        if (i) got[k++] = '|';
        memcpy(got + k, s + i, j - i);
        k += j - i;
    }
    got[k] = 0;
    CHECK_MSG(strcmp(got, want) == 0, "%s split of \"%s\": \"%s\", want \"%s\"", hf_pattern_name(pattern), s, got, want);
}

TEST(hftok_split_gpt2) {
    check_split(HF_PAT_GPT2, "I'm here, they'll go", "I|'m| here|,| they|'ll| go");
    check_split(HF_PAT_GPT2, "DON'T 'sup", "DON|'|T| '|sup");
    check_split(HF_PAT_GPT2, "x 1234567 ab12", "x| 1234567| ab|12");
    check_split(HF_PAT_GPT2, "a   b\n\nc  ", "a|  | b|\n|\n|c|  ");
    check_split(HF_PAT_GPT2, "\n x", "\n| x");
    check_split(HF_PAT_GPT2, "h\xc3\xa9llo \xd0\xbc\xd0\xb8\xd1\x80 \xd9\xa1\xd9\xa2", "h\xc3\xa9llo| \xd0\xbc\xd0\xb8\xd1\x80| \xd9\xa1\xd9\xa2");
    check_split(HF_PAT_GPT2, "ok!!! \xf0\x9f\x98\x80\xf0\x9f\x98\x80", "ok|!!!| \xf0\x9f\x98\x80\xf0\x9f\x98\x80");
    check_split(HF_PAT_GPT2, "a\xff\xfe b", "a|\xff\xfe| b"); /* invalid bytes are "other" characters */
}

TEST(hftok_split_llama3_and_qwen2) {
    check_split(HF_PAT_CL100K, "DON'T I'M WE'RE", "DON|'T| I|'M| WE|'RE");
    check_split(HF_PAT_CL100K, "it'\xc5\xbf", "it|'\xc5\xbf"); /* (?i) folds U+017F to s */
    check_split(HF_PAT_CL100K, "1234567 x", "123|456|7| x");
    check_split(HF_PAT_QWEN2, "1234 x", "1|2|3|4| x");
    check_split(HF_PAT_CL100K, "(hello) \tworld", "(hello|)| |\tworld");
    check_split(HF_PAT_CL100K, "a  \n\n  b", "a|  \n\n| | b");
    check_split(HF_PAT_CL100K, "x;\n\ny", "x|;\n\n|y");
    check_split(HF_PAT_CL100K, " ...\r\n", " ...\r\n");
    check_split(HF_PAT_CL100K, "end   ", "end|   ");
    check_split(HF_PAT_CL100K, "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x80\x82ok", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e|\xe3\x80\x82ok");
}

/* ---- special tokens, BOS/EOS ------------------------------------------------ */

TEST(hftok_special_tokens_and_bos) {
    HfTok *t = load_fixture("llama3");
    if (!t) return;
    int bot = hftok_lookup(t, "<|begin_of_text|>"), eot = hftok_lookup(t, "<|eot_id|>"), n;
    CHECK(bot >= 0 && eot >= 0);
    CHECK_INT(hftok_bos(t), bot);
    CHECK(hftok_wants_bos(t) && !hftok_wants_eos(t) && hftok_eos(t) == -1);
    CHECK(hftok_is_special(t, eot) && !hftok_is_special(t, hftok_lookup(t, "a")));
    int *ids = encode(t, "x<|eot_id|>y", 12, HFTOK_SPECIAL, &n);
    CHECK(n == 3 && ids[1] == eot);
    free(ids);
    ids = encode(t, "x<|eot_id|>y", 12, HFTOK_BOS, &n); /* not parsed: plain text */
    CHECK(n > 3 && ids[0] == bot);
    for (int i = 0; i < n; i++) CHECK(ids[i] != eot);
    free(ids);
    ids = encode(t, " zzxq", 5, 0, &n); /* ignore_merges: a whole-word vocab entry wins */
    CHECK(n == 1 && ids[0] == hftok_lookup(t, "\xc4\xa0zzxq"));
    free(ids);
    ids = encode(t, "", 0, HFTOK_BOS | HFTOK_EOS, &n);
    CHECK_INT(n, 1);
    free(ids);
    hftok_free(t);
    t = load_fixture("gpt2");
    if (t) CHECK(!hftok_wants_bos(t) && hftok_bos(t) == -1);
    hftok_free(t);
}

/* A copy of fixture `name` changed by edit, written to the scratch dir. */
static const char *fixture_variant(const char *name, void (*edit)(cJSON *root), const char *out_name) {
    char path[256];
    snprintf(path, sizeof path, FIX "%s.json", name);
    char *js = test_read_file(path, NULL);
    cJSON *root = cJSON_Parse(js);
    edit(root);
    char *out = cJSON_PrintUnformatted(root);
    const char *p = test_tmp(out_name);
    test_write_file(p, out, (long)strlen(out));
    cJSON_free(out);
    cJSON_Delete(root);
    free(js);
    return p;
}

static void add_mask_token(cJSON *root) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", 900);
    cJSON_AddStringToObject(m, "content", "<mask>");
    cJSON_AddBoolToObject(m, "lstrip", 1);
    cJSON_AddBoolToObject(m, "rstrip", 1);
    cJSON_AddBoolToObject(m, "special", 1);
    cJSON_AddItemToArray(cJSON_GetObjectItem(root, "added_tokens"), m);
    m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "id", 901);
    cJSON_AddStringToObject(m, "content", "zz");
    cJSON_AddBoolToObject(m, "single_word", 1);
    cJSON_AddBoolToObject(m, "special", 0);
    cJSON_AddItemToArray(cJSON_GetObjectItem(root, "added_tokens"), m);
}

/* Whether id occurs in the encoding of s (flags 0). */
static int encodes_with(const HfTok *t, const char *s, int id) {
    int n, found = 0, *ids = encode(t, s, strlen(s), 0, &n);
    for (int i = 0; i < n; i++) found |= ids[i] == id;
    free(ids);
    return found;
}

TEST(hftok_added_token_strip_flags) {
    HfTok *t = NULL;
    Err e;
    CHECK(hftok_load(&t, fixture_variant("gpt2", add_mask_token, "gpt2_mask.json"), &e) == 0);
    if (!t) return;
    CHECK_INT(hftok_vocab_size(t), 902);
    /* a non-special added token is always matched; single_word only between non-word characters */
    CHECK(encodes_with(t, "zz", 901) && encodes_with(t, "a zz, b", 901));
    CHECK(!encodes_with(t, "azz", 901) && !encodes_with(t, "zz9", 901) && !encodes_with(t, "<mask>", 900));
    CHECK(hftok_piece(t, 800) == NULL); /* ids between the vocab and 900 are unused */
    int n, na, nb, *ids = encode(t, "a  <mask>\t b", 12, HFTOK_SPECIAL, &n);
    int *a = encode(t, "a", 1, 0, &na), *b = encode(t, "b", 1, 0, &nb);
    CHECK(n == na + 1 + nb && ids[na] == 900 && memcmp(ids, a, sizeof(int) * (size_t)na) == 0 &&
          memcmp(ids + na + 1, b, sizeof(int) * (size_t)nb) == 0);
    free(ids), free(a), free(b);
    hftok_free(t);
}

static void set_prefix_space(cJSON *root) {
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(root, "pre_tokenizer"), "add_prefix_space", cJSON_CreateTrue());
}

/* ByteLevel add_prefix_space: "hello" is encoded as " hello" (and a leading
 * space is not doubled). */
TEST(hftok_bytelevel_prefix_space) {
    HfTok *plain = load_fixture("gpt2"), *pre = NULL;
    Err e;
    CHECK(hftok_load(&pre, fixture_variant("gpt2", set_prefix_space, "gpt2_prefix.json"), &e) == 0);
    if (plain && pre) {
        int n1, n2, n3, *a = encode(pre, "hello world", 11, 0, &n1), *b = encode(plain, " hello world", 12, 0, &n2);
        int *c = encode(pre, " hello world", 12, 0, &n3);
        CHECK(n1 == n2 && n1 == n3 && memcmp(a, b, sizeof(int) * (size_t)n1) == 0 && memcmp(a, c, sizeof(int) * (size_t)n1) == 0);
        free(a), free(b), free(c);
    }
    hftok_free(plain);
    hftok_free(pre);
}

/* The Unicode layer on its own: classes, strict UTF-8 and NFC. */
TEST(hftok_unicode_classes_and_nfc) {
    CHECK(uni_is_letter(0xE9) && uni_is_letter(0x65E5) && uni_is_letter(0x2C6) && !uni_is_letter(0x301));
    CHECK(uni_is_number(0x661) && uni_is_number(0x216B) && uni_is_number(0xBD) && !uni_is_number('x'));
    CHECK(uni_is_space(0x3000) && uni_is_space(0x85) && uni_is_space(0x2028) && !uni_is_space(0x200B) && !uni_is_space(0x1C));
    size_t l;
    CHECK(uni_next((const unsigned char *)"\xc0\xaf", 2, &l) == UNI_INVALID && l == 1);   /* overlong */
    CHECK(uni_next((const unsigned char *)"\xed\xa0\x80", 3, &l) == UNI_INVALID);        /* surrogate */
    CHECK(uni_next((const unsigned char *)"\xf4\x90\x80\x80", 4, &l) == UNI_INVALID);   /* > U+10FFFF */
    CHECK(uni_next((const unsigned char *)"\xf0\x9f\x98\x80", 4, &l) == 0x1F600 && l == 4);
    static const char *nfc[][2] = {
        {"e\xcc\x81", "\xc3\xa9"},                                   /* e + acute */
        {"\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", "\xea\xb0\x81"}, /* Hangul L V T */
        {"a\xcc\x82\xcc\xa3", "\xe1\xba\xad"},                       /* marks reordered, then composed */
        {"\xe2\x84\xab", "\xc3\x85"},                                   /* Angstrom sign -> A ring */
        {"x\xff\xcc\x81", "x\xff\xcc\x81"},                             /* an invalid byte blocks */
    };
    for (size_t i = 0; i < sizeof nfc / sizeof nfc[0]; i++) {
        char *o;
        size_t n;
        CHECK(uni_nfc(nfc[i][0], strlen(nfc[i][0]), &o, &n) == 0);
        CHECK_MSG(n == strlen(nfc[i][1]) && memcmp(o, nfc[i][1], n) == 0, "NFC case %zu", i);
        free(o);
    }
}

TEST(hftok_config_files) {
    HfTok *t = load_fixture("llama2");
    if (!t) return;
    Err e;
    CHECK(hftok_bos(t) == 1 && hftok_wants_bos(t) && hftok_eos(t) == -1);
    const char *cfg = test_tmp("tokenizer_config.json");
    const char *js = "{\"add_bos_token\": false, \"add_eos_token\": true, \"bos_token\": {\"content\": \"<s>\", \"lstrip\": false},"
                     " \"eos_token\": \"</s>\"}";
    test_write_file(cfg, js, (long)strlen(js));
    CHECK(hftok_load_config(t, cfg, &e) == 0);
    CHECK(hftok_bos(t) == 1 && hftok_eos(t) == 2 && !hftok_wants_bos(t) && hftok_wants_eos(t));
    int n, *ids = encode(t, "hi", 2, HFTOK_BOS | HFTOK_EOS, &n);
    CHECK(n >= 3 && ids[0] == 1 && ids[n - 1] == 2);
    free(ids);
    js = "{\"bos_token_id\": null, \"eos_token_id\": [2, 0]}";
    test_write_file(cfg, js, (long)strlen(js));
    CHECK(hftok_load_config(t, cfg, &e) == 0 && hftok_bos(t) == -1 && hftok_eos(t) == 2);
    const char *bad[] = {"{\"eos_token\": \"<nope>\"}", "{\"bos_token\": 5}", "{\"eos_token_id\": 99999}", "[1]", "{"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_write_file(cfg, bad[i], (long)strlen(bad[i]));
        e.msg[0] = 0;
        CHECK_MSG(hftok_load_config(t, cfg, &e) != 0 && strstr(e.msg, cfg), "config %zu: \"%s\"", i, e.msg);
    }
    CHECK(hftok_bos(t) == -1 && hftok_eos(t) == 2); /* failed loads change nothing */
    CHECK(hftok_set_bos_eos(t, 1, 2, &e) == 0 && hftok_set_bos_eos(t, 5000, 2, &e) != 0);
    hftok_free(t);
}

/* ---- decoding partial UTF-8 -------------------------------------------------- */

TEST(hftok_decode_partial_utf8_is_safe) {
    HfTok *t = load_fixture("gpt2");
    if (!t) return;
    int e6 = hftok_lookup(t, "\xc3\xa6"); /* byte 0xE6 spelled as U+00E6 */
    size_t m;
    CHECK(e6 >= 0 && hftok_decode(t, -1, e6, &m)[0] == '\xe6' && m == 1);
    char buf[16];
    CHECK_INT(hftok_piece_printable(t, -1, e6, buf, sizeof buf), 3);
    CHECK(strcmp(buf, "\xef\xbf\xbd") == 0);
    int ids[] = {e6, hftok_lookup(t, "a")};
    char *d = hftok_decode_ids(t, ids, 2, 0, &m);
    CHECK(strcmp(d, "\xef\xbf\xbd" "a") == 0);
    free(d);
    CHECK_INT(hftok_utf8_ready("ab\xe6\x97", 4), 2);
    CHECK_INT(hftok_utf8_ready("ab\xe6\x97\xa5", 5), 5);
    CHECK_INT(hftok_utf8_ready("ab\xff", 3), 3);
    CHECK_INT(hftok_utf8_ready("\xf0\x9f\x98", 3), 0);
    CHECK_INT(hftok_utf8_ready("\xed\xa0", 2), 2); /* a surrogate can never complete */
    CHECK(hftok_decode(t, -1, -5, &m)[0] == 0 && m == 0);
    CHECK(hftok_decode(t, -1, 1 << 30, &m)[0] == 0 && m == 0);
    CHECK_INT(hftok_piece_printable(t, -1, hftok_lookup(t, "\xc4\x8a"), buf, sizeof buf), 1); /* '\n' */
    CHECK_INT(hftok_piece_printable(t, -1, hftok_lookup(t, "\xc4\x87"), buf, sizeof buf), 0); /* BEL dropped */
    hftok_free(t);
}

/* ---- round trips of random text ------------------------------------------------ */

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Random valid UTF-8 (valid = 1) or random bytes biased to UTF-8 lead bytes. */
static size_t random_text(uint64_t *s, char *out, int valid) {
    size_t k = 0, n = rng_next(s) % 40;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next(s);
        if (!valid) {
            out[k++] = (char)(r % 4 ? (0x80 | (r >> 8 & 0x7F)) : (r >> 8 & 0xFF));
            continue;
        }
        static const uint32_t tops[] = {0x80, 0x800, 0x3100, 0x10000, 0x110000};
        uint32_t cp = (uint32_t)(r >> 8) % tops[r % 5];
        /* surrogates cannot be encoded; a literal U+2581 decodes as a space */
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0x2581) cp = ' ';
        k += uni_put(cp, out + k);
    }
    return k;
}

static void round_trips(const char *name, int valid) {
    HfTok *t = load_fixture(name);
    if (!t) return;
    uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)valid;
    char text[200];
    int bad = 0;
    for (int it = 0; it < 2000 && bad < 5; it++) {
        size_t len = random_text(&seed, text, valid), dl, wl = len;
        int n;
        int *ids = encode(t, text, len, 0, &n);
        char *want = text, *nfc = NULL;
        if (strcmp(name, "qwen2") == 0 && uni_nfc(text, len, &nfc, &wl) == 0) want = nfc;
        char *d = decode_pieces(t, ids, n, &dl);
        if (dl != wl || memcmp(d, want, wl) != 0) bad++, test_fail(__FILE__, __LINE__, "%s: text %d does not round-trip", name, it);
        free(d), free(ids), free(nfc);
    }
    hftok_free(t);
}

TEST(hftok_round_trip_random_utf8) {
    const char *names[] = {"gpt2", "llama3", "qwen2", "olmo2", "llama2"};
    for (size_t i = 0; i < 5; i++) round_trips(names[i], 1);
}

TEST(hftok_round_trip_invalid_utf8) {
    const char *names[] = {"gpt2", "llama3", "qwen2", "olmo2", "llama2"};
    for (size_t i = 0; i < 5; i++) round_trips(names[i], 0);
}

/* ---- capacity and speed ---------------------------------------------------------- */

TEST(hftok_output_capacity_is_checked) {
    HfTok *t = load_fixture("gpt2");
    if (!t) return;
    int ids[4] = {-7, -7, -7, -7}, n = -1;
    Err e;
    CHECK(hftok_encode(t, "a1!b2?c3.", 9, 0, ids, 3, &n, &e) != 0 && n == 0);
    CHECK(strstr(e.msg, "more than 3 ids") != NULL && ids[3] == -7);
    hftok_free(t);
}

/* ~10k words; a SentencePiece tokenizer has no pre-tokenizer, so there it is
 * one 60 kB BPE word. */
TEST(hftok_long_text_is_fast) {
    const char *sentence = "Once upon a time, Lily saw 3 cats near the park; they'll play. ";
    size_t sl = strlen(sentence), len = sl * 850;
    char *text = malloc(len + 1);
    for (size_t i = 0; i < len; i++) text[i] = sentence[i % sl];
    text[len] = 0;
    const char *names[] = {"llama3", "llama2"};
    for (int k = 0; k < 2; k++) {
        HfTok *t = load_fixture(names[k]);
        if (!t) continue;
        int n;
        clock_t c0 = clock(); /* CPU time: a loaded machine does not stretch it */
        int *ids = encode(t, text, len, HFTOK_BOS, &n);
        double ms = 1e3 * (double)(clock() - c0) / CLOCKS_PER_SEC;
        CHECK_MSG(ms < 500, "%s: %zu bytes took %.1f ms of CPU", names[k], len, ms);
        size_t dl;
        char *d = hftok_decode_ids(t, ids, n, 1, &dl);
        CHECK(n > 1000 && n < (int)len && dl == len && memcmp(d, text, len) == 0);
        free(d), free(ids);
        hftok_free(t);
    }
    free(text);
}

/* ---- malformed files ---------------------------------------------------------------- */

#define V3 "\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}"
#define BPE(rest) "{\"model\": {\"type\": \"BPE\", " rest "}}"

TEST(hftok_malformed_files_fail_with_path) {
    static const struct { const char *name, *json, *why; } cases[] = {
        {"empty", "", "empty"},
        {"not_json", "{\"model\": ", "not valid JSON"},
        {"array", "[1, 2]", "not a JSON object"},
        {"no_model", "{\"version\": \"1.0\"}", "no \"model\""},
        {"unigram", "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "Unigram"},
        {"no_vocab", BPE("\"merges\": []"), "vocab"},
        {"no_merges", BPE(V3), "merges"},
        {"empty_vocab", BPE("\"vocab\": {}, \"merges\": []"), "empty"},
        {"neg_id", BPE("\"vocab\": {\"a\": -1}, \"merges\": []"), "invalid id"},
        {"frac_id", BPE("\"vocab\": {\"a\": 1.5}, \"merges\": []"), "invalid id"},
        {"huge_id", BPE("\"vocab\": {\"a\": 1e12}, \"merges\": []"), "invalid id"},
        {"str_id", BPE("\"vocab\": {\"a\": \"0\"}, \"merges\": []"), "invalid id"},
        {"dup_id", BPE("\"vocab\": {\"a\": 0, \"b\": 0}, \"merges\": []"), "used twice"},
        {"dup_key", BPE("\"vocab\": {\"a\": 0, \"a\": 1}, \"merges\": []"), "appears twice"},
        {"empty_token", BPE("\"vocab\": {\"\": 0}, \"merges\": []"), "length 0"},
        {"merge_unknown", BPE(V3 ", \"merges\": [\"a c\"]"), "\"c\" is not in the vocabulary"},
        {"merge_no_result", BPE("\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]"), "concatenation"},
        {"merge_3_parts", BPE(V3 ", \"merges\": [\"a b c\"]"), "one space"},
        {"merge_1_elem", BPE(V3 ", \"merges\": [[\"a\"]]"), "neither"},
        {"merge_number", BPE(V3 ", \"merges\": [7]"), "neither"},
        {"merge_object", BPE(V3 ", \"merges\": [{\"x\": \"a\", \"y\": \"b\"}]"), "neither"},
        {"unk_missing", BPE(V3 ", \"merges\": [], \"unk_token\": \"<unk>\""), "unk_token"},
        {"suffix", BPE(V3 ", \"merges\": [], \"end_of_word_suffix\": \"</w>\""), "suffix"},
        {"added_no_content", "{\"added_tokens\": [{\"id\": 3}], \"model\": {" V3 ", \"merges\": []}}", "content"},
        {"added_bad_id", "{\"added_tokens\": [{\"id\": -2, \"content\": \"x\"}], \"model\": {" V3 ", \"merges\": []}}", "invalid id"},
        {"added_clash", "{\"added_tokens\": [{\"id\": 1, \"content\": \"<x>\"}], \"model\": {" V3 ", \"merges\": []}}", "used twice"},
        {"added_dup", "{\"added_tokens\": [{\"id\": 5, \"content\": \"a\"}], \"model\": {" V3 ", \"merges\": []}}", "appears twice"},
        {"added_not_array", "{\"added_tokens\": 3, \"model\": {" V3 ", \"merges\": []}}", "not an array"},
        {"unknown_regex", "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\s+|\\\\w+\"}, "
                          "\"behavior\": \"Isolated\", \"invert\": false}, \"model\": {" V3 ", \"merges\": []}}", "known"},
        {"string_split", "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \" \"}, "
                         "\"behavior\": \"Isolated\"}, \"model\": {" V3 ", \"merges\": []}}", "Regex"},
        {"bad_behavior", "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"'s|'t|'re|'ve|'m|'ll|'d| ?\\\\p{L}+| "
                         "?\\\\p{N}+| ?[^\\\\s\\\\p{L}\\\\p{N}]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Removed\", \"invert\": false}, "
                         "\"model\": {" V3 ", \"merges\": []}}", "behavior"},
        {"lowercase", "{\"normalizer\": {\"type\": \"Lowercase\"}, \"model\": {" V3 ", \"merges\": []}}", "Lowercase"},
        {"whitespace_pre", "{\"pre_tokenizer\": {\"type\": \"Whitespace\"}, \"model\": {" V3 ", \"merges\": []}}", "Whitespace"},
        {"wordpiece_dec", "{\"decoder\": {\"type\": \"WordPiece\"}, \"model\": {" V3 ", \"merges\": []}}", "WordPiece"},
        {"two_splits", "{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"ByteLevel\"}, "
                       "{\"type\": \"ByteLevel\"}]}, \"model\": {" V3 ", \"merges\": []}}", "two regex"},
        {"bad_template", "{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<q>\"}}]}, "
                         "\"model\": {" V3 ", \"merges\": []}}", "<q>"},
        {"bert_post", "{\"post_processor\": {\"type\": \"BertProcessing\"}, \"model\": {" V3 ", \"merges\": []}}", "BertProcessing"},
        {"null_model", "{\"model\": null}", "no \"model\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.json", cases[i].name);
        const char *p = test_tmp(name);
        test_write_file(p, cases[i].json, (long)strlen(cases[i].json));
        HfTok *t = (HfTok *)&t;
        Err e = {0};
        int r = hftok_load(&t, p, &e);
        CHECK_MSG(r != 0 && t == NULL, "%s was accepted", cases[i].name);
        CHECK_MSG(strstr(e.msg, p) == e.msg, "%s: message does not start with the file: %s", cases[i].name, e.msg);
        CHECK_MSG(strstr(e.msg, cases[i].why) != NULL, "%s: message lacks \"%s\": %s", cases[i].name, cases[i].why, e.msg);
        CHECK_MSG(strchr(e.msg, '\n') == NULL, "%s: message is not one line", cases[i].name);
        hftok_free(r == 0 ? t : NULL);
    }
    HfTok *t;
    Err e;
    CHECK(hftok_load(&t, test_tmp("missing.json"), &e) != 0 && strstr(e.msg, "missing.json") && strstr(e.msg, "cannot open"));
}

/* Nesting far beyond any tokenizer must not recurse the stack away. */
TEST(hftok_deep_json_fails_cleanly) {
    HfTok *t;
    Err e;
    size_t depth = 100000;
    char *deep = malloc(2 * depth + 16);
    memcpy(deep, "{\"model\": ", 10);
    memset(deep + 10, '[', depth);
    memset(deep + 10 + depth, ']', depth);
    memcpy(deep + 10 + 2 * depth, "}", 2);
    const char *p = test_tmp("deep.json");
    test_write_file(p, deep, (long)strlen(deep));
    CHECK(hftok_load(&t, p, &e) != 0 && strstr(e.msg, p));
    free(deep);
}

/* A real fixture cut at many points never loads and never crashes. */
TEST(hftok_truncated_fixture_fails_cleanly) {
    long len;
    char *js = test_read_file(FIX "llama3.json", &len);
    CHECK(js != NULL && len > 1000);
    if (!js) return;
    const char *p = test_tmp("cut.json");
    for (long cut = 1; cut < len - 2; cut += len / 37) {
        test_write_file(p, js, cut);
        HfTok *t = NULL;
        Err e;
        CHECK_MSG(hftok_load(&t, p, &e) != 0, "cut at %ld loaded", cut);
        hftok_free(t);
    }
    free(js);
}

/* The other spellings of known regexes load as the same scanner. */
TEST(hftok_regex_spellings) {
    static const char *alts[][2] = {
        {"'(?i:[sdmt]|ll|ve|re)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?+\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]++[\\\\r\\\\n]*|"
         "\\\\s*[\\\\r\\\\n]|\\\\s+(?!\\\\S)|\\\\s+", "cl100k"},
        {"'(?:[sdmt]|ll|ve|re)| ?\\\\p{L}+| ?\\\\p{N}+| ?[^\\\\s\\\\p{L}\\\\p{N}]+|\\\\s+(?!\\\\S)|\\\\s+", "GPT-2"},
    };
    for (int i = 0; i < 2; i++) {
        char js[1024];
        snprintf(js, sizeof js,
                 "{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
                 "{\"Regex\": \"%s\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", "
                 "\"use_regex\": false}]}, \"model\": {" V3 ", \"merges\": [\"a b\"]}}", alts[i][0]);
        const char *p = test_tmp("alt.json");
        test_write_file(p, js, (long)strlen(js));
        HfTok *t = NULL;
        Err e = {0};
        CHECK_MSG(hftok_load(&t, p, &e) == 0, "%s", e.msg);
        if (t) CHECK_MSG(strstr(hftok_describe(t), alts[i][1]) != NULL, "described as %s", hftok_describe(t));
        hftok_free(t);
    }
}

/* Added tokens were insertion-sorted: 200 000 listed in the worst order
 * (one length, ids falling) took 9.5 s to load. Sorted with qsort they take
 * well under a second, and matching still prefers the longest. The time is
 * the process's CPU time (clock()), not the wall's: a loaded machine (10.9 s
 * of wall time at load 12 under the sanitizers) does not stretch it, and
 * the quadratic sort it guards against costs seconds of CPU all the same. */
TEST(hftok_many_added_tokens_load_fast) {
    enum { N = 200000 };
    size_t cap = (size_t)N * 64 + 256, k = 0;
    char *js = malloc(cap);
    k += (size_t)snprintf(js + k, cap - k, "{\"added_tokens\": [{\"id\": 2, \"content\": \"t0000001\"}");
    for (int i = 0; i < N; i++)
        k += (size_t)snprintf(js + k, cap - k, ", {\"id\": %d, \"content\": \"t%06d\"}", N + 2 - i, i);
    snprintf(js + k, cap - k, "], \"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": []}}");
    const char *path = test_tmp("many_added.json");
    CHECK(test_write_file(path, js, (long)strlen(js)) == 0);
    free(js);
    HfTok *t = NULL;
    Err e = {0};
    clock_t c0 = clock();
    int r = hftok_load(&t, path, &e);
    double ms = 1e3 * (double)(clock() - c0) / CLOCKS_PER_SEC;
    CHECK_MSG(r == 0, "%s", e.msg);
    CHECK_MSG(ms < 5000, "%d added tokens took %.0f ms of CPU to load", N, ms);
    if (r) return;
    int n, *ids = encode(t, "t0000001t000005", 15, HFTOK_SPECIAL, &n);
    CHECK(n == 2 && ids[0] == 2 && ids[1] == N + 2 - 5);
    free(ids);
    hftok_free(t);
}
