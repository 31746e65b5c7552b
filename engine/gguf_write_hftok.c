/* gguf_write_hftok.c — a Hugging Face tokenizer.json as GGUF tokenizer metadata (byte-level BPE as "gpt2").
 *
 * ggml's "gpt2" vocabulary is tokenizer.json's own: the byte-level
 * spellings ("Ġthe") by id, the merges as "left right" strings, and a
 * tokenizer.ggml.pre naming the split regex, which llama.cpp keeps a table
 * of: GPT-2's is "gpt-2", cl100k's (Llama-3, OLMo-2) "llama-bpe", Qwen2's
 * "qwen2". Ids the file leaves unassigned up to the model's vocabulary are
 * "[PAD<id>]" of type unused, as llama.cpp's converter pads them. The file
 * is loaded by the tokenizer room first (hftok_load), so one that cannot be
 * read is refused as running it would be, and its split is known.
 */
#include "engine/gguf_write.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"

#define MAX_JSON ((size_t)1 << 30)

/* llama.cpp's pre-tokenizer name for the split hftok_describe reports. */
static const char *pre_name(const char *desc) {
    if (strstr(desc, "cl100k")) return "llama-bpe";
    if (strstr(desc, "Qwen2")) return "qwen2";
    if (strstr(desc, "GPT-2")) return "gpt-2";
    return "default";
}

typedef struct {
    char **tok;        /* [n] spellings, NULL until assigned */
    int32_t *type;
    int n;
    char **merge;      /* [n_merges] "left right" */
    int n_merges;
} HfVocab;

static void vocab_free(HfVocab *v) {
    for (int i = 0; v->tok && i < v->n; i++) free(v->tok[i]);
    for (int i = 0; v->merge && i < v->n_merges; i++) free(v->merge[i]);
    free(v->tok), free(v->type), free(v->merge);
}

/* Spelling s at id x (type t); a later assignment (added_tokens) wins. The
 * id is bounded while still a double, so no cast is out of range. */
static int assign(HfVocab *v, double x, const char *s, int32_t t, const char *path, Err *e) {
    if (!(x >= 0 && x < v->n) || x != (double)(int)x)
        return err_set(e, "%s: token id %g of '%.40s' is not one of the model's %d ids", path, x, s, v->n);
    int id = (int)x;
    char *c = strdup(s);
    if (!c) return err_set(e, "%s: out of memory", path);
    free(v->tok[id]);
    v->tok[id] = c, v->type[id] = t;
    return 0;
}

static int read_tokens(HfVocab *v, const cJSON *root, const char *path, Err *e) {
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "model"), "vocab"), *it;
    if (!cJSON_IsObject(vocab)) return err_set(e, "%s: model.vocab is missing or not an object", path);
    cJSON_ArrayForEach(it, vocab) {
        if (!cJSON_IsNumber(it)) return err_set(e, "%s: model.vocab['%.40s'] is not an id", path, it->string);
        if (assign(v, it->valuedouble, it->string, 1, path, e)) return -1;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "added_tokens")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id"), *s = cJSON_GetObjectItemCaseSensitive(it, "content");
        if (!cJSON_IsNumber(id) || !cJSON_IsString(s)) return err_set(e, "%s: an added_tokens entry lacks id or content", path);
        if (assign(v, id->valuedouble, s->valuestring, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "special")) ? 3 : 4, path, e))
            return -1;
    }
    for (int i = 0; i < v->n; i++) {
        char pad[32];
        snprintf(pad, sizeof pad, "[PAD%d]", i);
        if (!v->tok[i] && assign(v, i, pad, 5, path, e)) return -1;
    }
    return 0;
}

/* A merge as ggml spells it: "left right", from either tokenizer.json form. */
static char *merge_text(const cJSON *m) {
    if (cJSON_IsString(m)) return strdup(m->valuestring);
    const cJSON *a = cJSON_GetArrayItem(m, 0), *b = cJSON_GetArrayItem(m, 1);
    if (cJSON_GetArraySize(m) != 2 || !cJSON_IsString(a) || !cJSON_IsString(b)) return NULL;
    size_t n = strlen(a->valuestring) + strlen(b->valuestring) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s %s", a->valuestring, b->valuestring);
    return s;
}

static int read_merges(HfVocab *v, const cJSON *root, const char *path, Err *e) {
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "model"), "merges"), *it;
    int n = cJSON_GetArraySize(merges);
    if (!cJSON_IsArray(merges)) return err_set(e, "%s: model.merges is missing or not an array", path);
    if (n && !(v->merge = calloc((size_t)n, sizeof *v->merge))) return err_set(e, "%s: out of memory", path);
    cJSON_ArrayForEach(it, merges) {
        if (!(v->merge[v->n_merges] = merge_text(it)))
            return err_set(e, "%s: merge %d is neither \"a b\" nor [\"a\", \"b\"]", path, v->n_merges);
        v->n_merges++;
    }
    return 0;
}

/* The kind check: byte-level BPE only (model.type BPE, a ByteLevel
 * pre-tokenizer, as hftok_describe reports); anything else in one line. */
static int check_kind(const char *path, int vocab_size, const char **pre, Err *e) {
    HfTok *t;
    if (hftok_load(&t, path, e)) return -1;
    const char *desc = hftok_describe(t);
    int rc = 0;
    if (strncmp(desc, "byte-level BPE", 14))
        rc = err_set(e, "%s: a %.60s tokenizer cannot be written as GGUF yet (only byte-level BPE, as gpt2)", path, desc);
    else if (hftok_vocab_size(t) > vocab_size)
        rc = err_set(e, "%s: %d ids but the model's vocabulary is %d", path, hftok_vocab_size(t), vocab_size);
    *pre = pre_name(desc);
    hftok_free(t);
    return rc;
}

int gguf_write_hf_vocab(GgufWriter *w, const char *path, int vocab_size, Err *e) {
    const char *pre;
    if (check_kind(path, vocab_size, &pre, e)) return -1;
    size_t len;
    char *buf = file_read_all(path, "tokenizer", "a tokenizer.json", MAX_JSON, &len, e);
    cJSON *root = buf ? cJSON_ParseWithLength(buf, len) : NULL;
    int read = buf != NULL;
    free(buf);
    if (!root) return read ? err_set(e, "%s: not valid JSON", path) : -1;
    HfVocab v = {.n = vocab_size, .tok = calloc((size_t)vocab_size, sizeof(char *)), .type = calloc((size_t)vocab_size, 4)};
    int rc = !v.tok || !v.type ? err_set(e, "%s: out of memory", path) : read_tokens(&v, root, path, e);
    if (!rc) rc = read_merges(&v, root, path, e);
    cJSON_Delete(root);
    if (!rc) {
        gguf_write_str(w, "tokenizer.ggml.model", "gpt2");
        gguf_write_str(w, "tokenizer.ggml.pre", pre);
        gguf_write_arr_str(w, "tokenizer.ggml.tokens", (uint64_t)v.n, (const char *const *)v.tok, NULL);
        gguf_write_arr_i32(w, "tokenizer.ggml.token_type", (uint64_t)v.n, v.type);
        gguf_write_arr_str(w, "tokenizer.ggml.merges", (uint64_t)v.n_merges, (const char *const *)v.merge, NULL);
    }
    vocab_free(&v);
    return rc;
}
