/* hftok_load.c — reading tokenizer.json, and config.json / tokenizer_config.json for BOS and EOS.
 *
 * Reading tokenizer.json (and tokenizer_config.json /
 * config.json for BOS/EOS) into an HfTok.
 *
 * The loader is strict: every component it does not implement exactly is an
 * error, because a tokenizer that loads but splits differently from the
 * reference would quietly feed the model text it was never trained on.
 * Messages are produced without the path and prefixed with it once, at the
 * top (hftok_load / hftok_load_config).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"
#include "hftok_impl.h"
#include "unicode.h"

#define SP_SPACE "\xe2\x96\x81" /* U+2581 '▁' */

/* ---- JSON helpers --------------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *key) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const char *get_str(const cJSON *o, const char *key) {
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Boolean field with a default for absent / null. */
static int get_bool(const cJSON *o, const char *key, int dflt) {
    const cJSON *v = get(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

/* A token id: an integral number in [0, HFTOK_MAX_VOCAB). */
static int json_id(const cJSON *v, int *id) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0 && d < HFTOK_MAX_VOCAB) || d != floor(d)) return -1;
    *id = (int)d;
    return 0;
}

static cJSON *parse_file(const char *path, Err *e) {
    size_t n = 0;
    char *buf = file_read_all(path, "tokenizer file", "a tokenizer JSON file", HFTOK_MAX_FILE, &n, e);
    if (!buf) return NULL;
    cJSON *root = cJSON_ParseWithLength(buf, n);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= buf && at <= buf + n ? (long)(at - buf) : -1;
        err_set(e, "not valid JSON (error near byte %ld)", off);
    } else if (!cJSON_IsObject(root)) {
        err_set(e, "the top level is not a JSON object");
        cJSON_Delete(root);
        root = NULL;
    }
    free(buf);
    return root;
}

/* ---- vocabulary and added tokens ------------------------------------------ */

/* Largest id in vocab and added_tokens, validating every id on the way. */
static int scan_ids(const cJSON *vocab, const cJSON *added, int *max_id, Err *e) {
    const cJSON *v;
    int id;
    *max_id = -1;
    cJSON_ArrayForEach(v, vocab) {
        if (json_id(v, &id)) return err_set(e, "vocab entry \"%.80s\" has an invalid id", v->string);
        if (id > *max_id) *max_id = id;
    }
    int i = 0;
    cJSON_ArrayForEach(v, added) {
        if (json_id(get(v, "id"), &id)) return err_set(e, "added_tokens[%d] has a missing or invalid id", i);
        if (id > *max_id) *max_id = id;
        i++;
    }
    if (*max_id < 0) return err_set(e, "the vocabulary is empty");
    return 0;
}

/* Record spelling s as token id (a new id or, for added tokens, the vocab
 * entry it repeats). */
static int set_form(HfTok *t, int id, const char *s, const char *what, Err *e) {
    size_t n = strlen(s);
    if (n == 0 || n > HFTOK_MAX_PIECE) return err_set(e, "%s token %d has length %zu", what, id, n);
    if (t->flags[id] & HF_TOK_USED) {
        const char *old = t->pool + t->form_off[id];
        if (strcmp(old, s) == 0 && strcmp(what, "added") == 0) return 0;
        return err_set(e, "id %d is used twice (\"%.60s\" and \"%.60s\")", id, old, s);
    }
    uint32_t off;
    if (hf_pool_add(t, s, n, &off)) return err_set(e, "out of memory");
    int prev = hf_smap_put(t, off, (uint32_t)n, id);
    if (prev >= 0) return err_set(e, "token \"%.80s\" appears twice (ids %d and %d)", s, prev, id);
    t->form_off[id] = off;
    t->form_len[id] = (uint32_t)n;
    t->flags[id] |= HF_TOK_USED;
    return 0;
}

static int load_vocab(HfTok *t, const cJSON *vocab, const cJSON *added, size_t n_merges, Err *e) {
    int max_id;
    if (scan_ids(vocab, added, &max_id, e)) return -1;
    t->n_vocab = max_id + 1;
    size_t nv = (size_t)t->n_vocab;
    t->form_off = calloc(nv, sizeof *t->form_off);
    t->form_len = calloc(nv, sizeof *t->form_len);
    t->text_off = calloc(nv, sizeof *t->text_off);
    t->text_len = calloc(nv, sizeof *t->text_len);
    t->flags = calloc(nv, 1);
    size_t n_strings = (size_t)cJSON_GetArraySize(vocab) + (size_t)cJSON_GetArraySize(added);
    if (!t->form_off || !t->form_len || !t->text_off || !t->text_len || !t->flags ||
        hf_maps_init(t, n_strings, n_merges))
        return err_set(e, "out of memory for %d tokens", t->n_vocab);
    const cJSON *v;
    cJSON_ArrayForEach(v, vocab) {
        int id = 0;
        json_id(v, &id);
        if (set_form(t, id, v->string, "vocab", e)) return -1;
    }
    return 0;
}

static int cmp_added(const void *a, const void *b) {
    const HfAdded *x = a, *y = b;
    if (x->first != y->first) return x->first - y->first;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id != y->id ? x->id - y->id : x->seq - y->seq;
}

/* Sort by first byte, longest first, so the first hit at a position is the
 * longest (the reference matches leftmost-longest); ties by id, then by
 * place in the file, keep the order total so qsort's instability cannot show. */
static void sort_added(HfTok *t) {
    qsort(t->added, (size_t)t->n_added, sizeof *t->added, cmp_added);
    for (int b = 0, k = 0; b <= 256; b++) {
        while (k < t->n_added && (unsigned char)t->pool[t->added[k].off] < b) k++;
        t->added_at[b] = k;
    }
}

static int load_added(HfTok *t, const cJSON *added, Err *e) {
    int n = cJSON_GetArraySize(added), i = 0;
    if (n == 0) return 0;
    t->added = calloc((size_t)n, sizeof *t->added);
    if (!t->added) return err_set(e, "out of memory");
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        const char *content = get_str(a, "content");
        if (!content) return err_set(e, "added_tokens[%d] has no \"content\" string", i);
        int id = 0;
        json_id(get(a, "id"), &id);
        if (set_form(t, id, content, "added", e)) return -1;
        HfAdded *x = &t->added[t->n_added++];
        *x = (HfAdded){t->form_off[id], t->form_len[id], id, (unsigned char)get_bool(a, "special", 0),
                       (unsigned char)get_bool(a, "lstrip", 0), (unsigned char)get_bool(a, "rstrip", 0),
                       (unsigned char)get_bool(a, "single_word", 0), (unsigned char)t->pool[t->form_off[id]], t->n_added - 1};
        t->flags[id] |= HF_TOK_ADDED | (x->special ? HF_TOK_SPECIAL : 0);
        i++;
    }
    sort_added(t);
    return 0;
}

/* ---- model options and merges --------------------------------------------- */

static int load_model_options(HfTok *t, const cJSON *model, Err *e) {
    const char *type = get_str(model, "type");
    if (type && strcmp(type, "BPE") != 0) return err_set(e, "model type \"%.40s\" is not supported (only BPE)", type);
    const char *pre = get_str(model, "continuing_subword_prefix"), *suf = get_str(model, "end_of_word_suffix");
    if ((pre && *pre) || (suf && *suf)) return err_set(e, "BPE with subword prefixes/suffixes is not supported");
    t->byte_fallback = get_bool(model, "byte_fallback", 0);
    t->fuse_unk = get_bool(model, "fuse_unk", 0);
    t->ignore_merges = get_bool(model, "ignore_merges", 0);
    return 0;
}

static int resolve_unk(HfTok *t, const cJSON *model, Err *e) {
    const char *unk = get_str(model, "unk_token");
    if (!unk) return 0;
    t->unk_id = hf_smap_get(t, unk, strlen(unk));
    if (t->unk_id < 0) return err_set(e, "unk_token \"%.60s\" is not in the vocabulary", unk);
    return 0;
}

/* Split merge i into its two spellings (copied into buf). */
static int merge_parts(const cJSON *m, int i, char *buf, const char **a, const char **b, Err *e) {
    if (cJSON_IsString(m)) {
        const char *s = m->valuestring, *sp = strchr(s, ' ');
        size_t n = strlen(s);
        if (!sp || sp == s || !sp[1] || strchr(sp + 1, ' ') || n >= 2 * HFTOK_MAX_PIECE)
            return err_set(e, "merge %d (\"%.60s\") is not two tokens separated by one space", i, s);
        memcpy(buf, s, n + 1);
        buf[sp - s] = 0;
        *a = buf, *b = buf + (sp - s) + 1;
        return 0;
    }
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(cJSON_GetArrayItem(m, 0)) && cJSON_IsString(cJSON_GetArrayItem(m, 1))) {
        *a = cJSON_GetArrayItem(m, 0)->valuestring;
        *b = cJSON_GetArrayItem(m, 1)->valuestring;
        return 0;
    }
    return err_set(e, "merge %d is neither \"a b\" nor [\"a\", \"b\"]", i);
}

static int load_merges(HfTok *t, const cJSON *merges, Err *e) {
    char *buf = malloc(4 * (size_t)HFTOK_MAX_PIECE + 2), *cat = buf + 2 * HFTOK_MAX_PIECE + 1;
    if (!buf) return err_set(e, "out of memory");
    int i = 0, r = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, merges) {
        const char *a = NULL, *b = NULL;
        if ((r = merge_parts(m, i, buf, &a, &b, e))) break;
        size_t na = strlen(a), nb = strlen(b);
        int ia = hf_smap_get(t, a, na), ib = hf_smap_get(t, b, nb), im = -1;
        if (na + nb <= HFTOK_MAX_PIECE) {
            memcpy(cat, a, na);
            memcpy(cat + na, b, nb);
            im = hf_smap_get(t, cat, na + nb);
        }
        if (ia < 0 || ib < 0) {
            r = err_set(e, "merge %d: \"%.60s\" is not in the vocabulary", i, ia < 0 ? a : b);
            break;
        }
        if (im < 0) {
            r = err_set(e, "merge %d: the concatenation of \"%.40s\" and \"%.40s\" is not in the vocabulary", i, a, b);
            break;
        }
        hf_pmap_put(t, ia, ib, i, im);
        i++;
    }
    free(buf);
    return r;
}

/* ---- texts: what each token decodes to ------------------------------------- */

/* Raw bytes of a byte-level spelling; characters outside the alphabet (only
 * in odd vocabularies) are kept as their UTF-8. */
static size_t bytelevel_text(const char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t len;
        uint32_t cp = uni_next((const unsigned char *)s + i, n - i, &len);
        int b = cp == UNI_INVALID ? -1 : hf_char_byte(cp);
        if (b >= 0) out[o++] = (char)b;
        else memcpy(out + o, s + i, len), o += len;
        i += len;
    }
    return o;
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The byte of a "<0xNN>" spelling, or -1. */
static int byte_token(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>' || hexval(s[3]) < 0 || hexval(s[4]) < 0) return -1;
    return hexval(s[3]) * 16 + hexval(s[4]);
}

/* SentencePiece spelling: '▁' back to ' '. */
static size_t sp_text(const char *s, size_t n, int replace, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (replace && i + 3 <= n && memcmp(s + i, SP_SPACE, 3) == 0) out[o++] = ' ', i += 3;
        else out[o++] = s[i++];
    }
    return o;
}

static int compute_texts(HfTok *t, Err *e) {
    char *buf = malloc(HFTOK_MAX_PIECE + 1);
    if (!buf) return err_set(e, "out of memory");
    for (int id = 0; id < t->n_vocab; id++) {
        if (!(t->flags[id] & HF_TOK_USED)) continue;
        const char *s = t->pool + t->form_off[id];
        size_t n = t->form_len[id], m;
        int b = t->byte_fallback && !t->byte_level ? byte_token(s, n) : -1;
        if (t->flags[id] & HF_TOK_ADDED) memcpy(buf, s, n), m = n;
        else if (t->byte_level) m = bytelevel_text(s, n, buf);
        else if (b >= 0) {
            buf[0] = (char)b, m = 1;
            t->flags[id] |= HF_TOK_BYTE;
            if (t->byte_id[b] < 0) t->byte_id[b] = id;
        }
        else m = sp_text(s, n, t->sp_replace, buf);
        uint32_t off;
        if (hf_pool_add(t, buf, m, &off)) {
            free(buf);
            return err_set(e, "out of memory");
        }
        t->text_off[id] = off;
        t->text_len[id] = (uint32_t)m;
    }
    free(buf);
    for (int b = 0; t->byte_level && b < 256; b++) {
        char c[4];
        t->byte_id[b] = hf_smap_get(t, c, uni_put(hf_byte_char((unsigned char)b), c));
    }
    return 0;
}

/* ---- normalizer, pre-tokenizer, decoder, post-processor -------------------- */

static int parse_normalizer(HfTok *t, const cJSON *n, Err *e) {
    if (!n || cJSON_IsNull(n)) return 0;
    const char *type = get_str(n, "type");
    if (!type) return err_set(e, "normalizer without a \"type\"");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *x;
        cJSON_ArrayForEach(x, get(n, "normalizers")) if (parse_normalizer(t, x, e)) return -1;
        return 0;
    }
    if (strcmp(type, "NFC") == 0) return t->nfc = 1, 0;
    const char *pre = get_str(n, "prepend"), *content = get_str(n, "content");
    if (strcmp(type, "Prepend") == 0 && pre && strcmp(pre, SP_SPACE) == 0) {
        t->sp_prefix = HF_PREFIX_ALWAYS;
        return 0;
    }
    const char *pat = get_str(get(n, "pattern"), "String");
    if (strcmp(type, "Replace") == 0 && pat && content && strcmp(pat, " ") == 0 && strcmp(content, SP_SPACE) == 0) {
        t->sp_replace = 1;
        return 0;
    }
    return err_set(e, "normalizer \"%.40s\" is not supported (only NFC, Prepend(\"▁\"), Replace(\" \", \"▁\"))", type);
}

static int set_pattern(HfTok *t, int pattern, Err *e) {
    if (t->pattern != HF_PAT_NONE) return err_set(e, "two regex splits in one pre-tokenizer are not supported");
    t->pattern = pattern;
    return 0;
}

static int parse_split(HfTok *t, const cJSON *p, Err *e) {
    const char *re = get_str(get(p, "pattern"), "Regex"), *beh = get_str(p, "behavior");
    if (!re) return err_set(e, "Split pre-tokenizer without a \"Regex\" pattern is not supported");
    int pat = hf_pattern_of(re);
    if (pat < 0) return err_set(e, "Split regex \"%.100s\" is not one of the known GPT-2/Llama-3/Qwen2 patterns", re);
    int inv = get_bool(p, "invert", 0);
    if (!beh || !((strcmp(beh, "Isolated") == 0 && !inv) || (strcmp(beh, "Removed") == 0 && inv)))
        return err_set(e, "Split behavior \"%.20s\" (invert %d) is not supported", beh ? beh : "?", inv);
    return set_pattern(t, pat, e);
}

static int parse_metaspace(HfTok *t, const cJSON *p, Err *e) {
    const char *rep = get_str(p, "replacement"), *scheme = get_str(p, "prepend_scheme");
    if (!rep || strcmp(rep, SP_SPACE) != 0) return err_set(e, "Metaspace replacement other than \"▁\" is not supported");
    if (!scheme) t->sp_prefix = get_bool(p, "add_prefix_space", 1) ? HF_PREFIX_ALWAYS : HF_PREFIX_NONE;
    else if (strcmp(scheme, "always") == 0) t->sp_prefix = HF_PREFIX_ALWAYS;
    else if (strcmp(scheme, "first") == 0) t->sp_prefix = HF_PREFIX_FIRST;
    else if (strcmp(scheme, "never") == 0) t->sp_prefix = HF_PREFIX_NONE;
    else return err_set(e, "Metaspace prepend_scheme \"%.20s\" is not supported", scheme);
    t->sp_replace = 1;
    t->sp_prefix_if_missing = 1;
    t->sp_split = get_bool(p, "split", 1);
    return 0;
}

static int parse_pretok(HfTok *t, const cJSON *p, Err *e) {
    if (!p || cJSON_IsNull(p)) return 0;
    const char *type = get_str(p, "type");
    if (!type) return err_set(e, "pre_tokenizer without a \"type\"");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *x;
        cJSON_ArrayForEach(x, get(p, "pretokenizers")) if (parse_pretok(t, x, e)) return -1;
        return 0;
    }
    if (strcmp(type, "ByteLevel") == 0) {
        t->byte_level = 1;
        t->bl_prefix_space = get_bool(p, "add_prefix_space", 1);
        return get_bool(p, "use_regex", 1) ? set_pattern(t, HF_PAT_GPT2, e) : 0;
    }
    if (strcmp(type, "Split") == 0) return parse_split(t, p, e);
    if (strcmp(type, "Metaspace") == 0) return parse_metaspace(t, p, e);
    return err_set(e, "pre_tokenizer \"%.40s\" is not supported", type);
}

static int parse_decoder(HfTok *t, const cJSON *d, Err *e) {
    if (!d || cJSON_IsNull(d)) return 0;
    const char *type = get_str(d, "type");
    if (!type) return err_set(e, "decoder without a \"type\"");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *x;
        cJSON_ArrayForEach(x, get(d, "decoders")) if (parse_decoder(t, x, e)) return -1;
        return 0;
    }
    if (strcmp(type, "ByteLevel") == 0) {
        if (!t->byte_level) return err_set(e, "ByteLevel decoder without a ByteLevel pre-tokenizer");
        return 0;
    }
    if (strcmp(type, "Strip") == 0) {
        const char *c = get_str(d, "content");
        const cJSON *start = get(d, "start");
        if (c && strcmp(c, " ") == 0 && cJSON_IsNumber(start) && start->valuedouble >= 1) t->strip_lead = HF_STRIP_ONE;
        return 0;
    }
    if (strcmp(type, "Metaspace") == 0) {
        const char *scheme = get_str(d, "prepend_scheme");
        int on = scheme ? strcmp(scheme, "never") != 0 : get_bool(d, "add_prefix_space", 1);
        t->strip_lead = on ? HF_STRIP_FIRST_TOKEN : HF_STRIP_NONE;
        return 0;
    }
    if (strcmp(type, "Replace") == 0 || strcmp(type, "ByteFallback") == 0 || strcmp(type, "Fuse") == 0) return 0;
    return err_set(e, "decoder \"%.40s\" is not supported", type);
}

/* Id of a TemplateProcessing special token named in `single`. */
static int template_token(HfTok *t, const cJSON *p, const cJSON *item, int *id, Err *e) {
    const char *name = get_str(get(item, "SpecialToken"), "id");
    if (!name) return 0;
    const cJSON *ids = get(get(get(p, "special_tokens"), name), "ids");
    int v = -1;
    if (cJSON_IsArray(ids) && cJSON_GetArraySize(ids) >= 1) json_id(cJSON_GetArrayItem(ids, 0), &v);
    else v = hf_smap_get(t, name, strlen(name));
    if (v < 0) return err_set(e, "post_processor special token \"%.60s\" has no valid id", name);
    if (v >= t->n_vocab) return err_set(e, "post_processor special token \"%.60s\" has id %d out of range", name, v);
    *id = v;
    return 1;
}

static int parse_post(HfTok *t, const cJSON *p, Err *e) {
    if (!p || cJSON_IsNull(p)) return 0;
    const char *type = get_str(p, "type");
    if (!type) return err_set(e, "post_processor without a \"type\"");
    if (strcmp(type, "Sequence") == 0) {
        const cJSON *x;
        cJSON_ArrayForEach(x, get(p, "processors")) if (parse_post(t, x, e)) return -1;
        return 0;
    }
    if (strcmp(type, "ByteLevel") == 0) return 0;
    if (strcmp(type, "TemplateProcessing") != 0)
        return err_set(e, "post_processor \"%.40s\" is not supported", type);
    const cJSON *single = get(p, "single");
    int n = cJSON_GetArraySize(single), r;
    if (n >= 1 && (r = template_token(t, p, cJSON_GetArrayItem(single, 0), &t->bos_id, e)) != 0) {
        if (r < 0) return -1;
        t->add_bos = 1;
    }
    if (n >= 2 && (r = template_token(t, p, cJSON_GetArrayItem(single, n - 1), &t->eos_id, e)) != 0) {
        if (r < 0) return -1;
        t->add_eos = 1;
    }
    return 0;
}

static void describe(HfTok *t) {
    if (t->byte_level)
        snprintf(t->desc, sizeof t->desc, "byte-level BPE, %s split%s%s, %d ids, %zu merges", hf_pattern_name(t->pattern),
                 t->nfc ? ", NFC" : "", t->ignore_merges ? ", ignore_merges" : "", t->n_vocab, t->n_merges);
    else
        snprintf(t->desc, sizeof t->desc, "SentencePiece-style BPE%s%s%s, %d ids, %zu merges",
                 t->sp_prefix ? ", dummy prefix" : "", t->sp_split ? ", metaspace split" : "",
                 t->byte_fallback ? ", byte fallback" : "", t->n_vocab, t->n_merges);
}

static int check_combination(HfTok *t, Err *e) {
    if (t->byte_level && (t->sp_replace || t->sp_prefix))
        return err_set(e, "byte-level pre-tokenizer combined with \"▁\" handling is not supported");
    if (!t->byte_level && t->pattern != HF_PAT_NONE)
        return err_set(e, "a Split regex without a ByteLevel pre-tokenizer is not supported");
    return 0;
}

/* Parse the tokenizer.json document into t. */
static int load_json(HfTok *t, const cJSON *root, Err *e) {
    const cJSON *model = get(root, "model"), *vocab = get(model, "vocab"), *merges = get(model, "merges");
    const cJSON *added = get(root, "added_tokens");
    if (!cJSON_IsObject(model)) return err_set(e, "no \"model\" object");
    if (load_model_options(t, model, e)) return -1;
    if (!cJSON_IsObject(vocab)) return err_set(e, "model has no \"vocab\" object");
    if (!cJSON_IsArray(merges)) return err_set(e, "model has no \"merges\" array");
    if (added && !cJSON_IsArray(added) && !cJSON_IsNull(added)) return err_set(e, "\"added_tokens\" is not an array");
    if (!cJSON_IsArray(added)) added = NULL;
    if (parse_normalizer(t, get(root, "normalizer"), e) || parse_pretok(t, get(root, "pre_tokenizer"), e) ||
        check_combination(t, e) || parse_decoder(t, get(root, "decoder"), e))
        return -1;
    if (load_vocab(t, vocab, added, (size_t)cJSON_GetArraySize(merges), e) || load_added(t, added, e) ||
        compute_texts(t, e) || load_merges(t, merges, e) || resolve_unk(t, model, e) ||
        parse_post(t, get(root, "post_processor"), e))
        return -1;
    describe(t);
    return 0;
}

int hftok_load(HfTok **out, const char *path, Err *e) {
    *out = NULL;
    HfTok *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, "%s: out of memory", path);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->bos_id = t->eos_id = t->unk_id = -1;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    cJSON *root = parse_file(path, e);
    int r = root ? load_json(t, root, e) : -1;
    cJSON_Delete(root);
    if (r) {
        hftok_free(t);
        return err_prefix(e, path);
    }
    *out = t;
    return 0;
}

/* ---- a vocabulary from arrays (a GGUF's tokenizer.ggml.*) ------------------ */

/* The arrays as the tokenizer.json objects load_vocab, load_added and
 * load_merges read: normal tokens in "vocab", special and added ones in
 * "added_tokens". NULL when out of memory. */
static cJSON *arrays_doc(const HfArrays *a) {
    cJSON *doc = cJSON_CreateObject(), *vocab = cJSON_AddObjectToObject(doc, "vocab");
    cJSON *added = cJSON_AddArrayToObject(doc, "added_tokens"), *merges = cJSON_AddArrayToObject(doc, "merges");
    int ok = vocab && added && merges;
    for (int i = 0; ok && i < a->n; i++) {
        int kind = a->kind ? a->kind[i] : HF_ARR_NORMAL;
        if (kind == HF_ARR_NORMAL) {
            ok = cJSON_AddNumberToObject(vocab, a->tokens[i], i) != NULL;
            continue;
        }
        cJSON *x = cJSON_CreateObject();
        ok = x && cJSON_AddItemToArray(added, x) && cJSON_AddNumberToObject(x, "id", i) &&
             cJSON_AddStringToObject(x, "content", a->tokens[i]) && cJSON_AddBoolToObject(x, "special", kind == HF_ARR_SPECIAL);
    }
    for (int i = 0; ok && i < a->n_merges; i++) {
        cJSON *m = cJSON_CreateString(a->merges[i]);
        ok = m && cJSON_AddItemToArray(merges, m);
    }
    if (!ok) cJSON_Delete(doc);
    return ok ? doc : NULL;
}

/* A BOS or EOS id of the arrays: -1 (none) or a token. */
static int arrays_id(const HfArrays *a, int id, const char *what, Err *e) {
    if (id < -1 || id >= a->n) return err_set(e, "%s id %d is not a token (%d tokens)", what, id, a->n);
    return 0;
}

static int load_arrays(HfTok *t, const HfArrays *a, Err *e) {
    if (a->n <= 0 || a->n > HFTOK_MAX_VOCAB) return err_set(e, "%d tokens", a->n);
    if (a->n_merges < 0) return err_set(e, "%d merges", a->n_merges);
    if (arrays_id(a, a->bos, "BOS", e) || arrays_id(a, a->eos, "EOS", e)) return -1;
    t->byte_level = 1, t->pattern = a->pattern, t->nfc = a->nfc, t->ignore_merges = a->ignore_merges;
    cJSON *doc = arrays_doc(a);
    if (!doc) return err_set(e, "out of memory for %d tokens", a->n);
    const cJSON *added = get(doc, "added_tokens");
    int r = load_vocab(t, get(doc, "vocab"), added, (size_t)a->n_merges, e) || load_added(t, added, e) ||
            compute_texts(t, e) || load_merges(t, get(doc, "merges"), e) ? -1 : 0;
    cJSON_Delete(doc);
    if (r) return -1;
    if (t->n_vocab != a->n) return err_set(e, "%d tokens make %d ids", a->n, t->n_vocab);
    t->bos_id = a->bos, t->eos_id = a->eos;
    t->add_bos = a->add_bos && a->bos >= 0, t->add_eos = a->add_eos && a->eos >= 0;
    describe(t);
    return 0;
}

int hftok_load_arrays(HfTok **out, const HfArrays *a, Err *e) {
    *out = NULL;
    HfTok *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, "%s: out of memory", a->name);
    snprintf(t->path, sizeof t->path, "%s", a->name);
    t->bos_id = t->eos_id = t->unk_id = -1;
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;
    if (load_arrays(t, a, e)) {
        hftok_free(t);
        return err_prefix(e, a->name);
    }
    *out = t;
    return 0;
}

/* ---- tokenizer_config.json / config.json ------------------------------------ */

/* bos_token / eos_token: a spelling or {"content": spelling}; null = none. */
static int config_token(HfTok *t, const cJSON *root, const char *key, int *id, Err *e) {
    const cJSON *v = get(root, key);
    if (!v) return 0;
    if (cJSON_IsNull(v)) return *id = -1, 0;
    const char *s = cJSON_IsString(v) ? v->valuestring : get_str(v, "content");
    if (!s) return err_set(e, "\"%s\" is neither a string nor {\"content\": ...}", key);
    int found = hf_smap_get(t, s, strlen(s));
    if (found < 0) return err_set(e, "%s \"%.60s\" is not in the vocabulary", key, s);
    *id = found;
    return 0;
}

/* bos_token_id / eos_token_id: an id, a list of ids (the first is used) or null. */
static int config_id(HfTok *t, const cJSON *root, const char *key, int *id, Err *e) {
    const cJSON *v = get(root, key);
    if (!v) return 0;
    if (cJSON_IsNull(v)) return *id = -1, 0;
    if (cJSON_IsArray(v)) v = cJSON_GetArrayItem(v, 0);
    int x;
    if (json_id(v, &x) || x >= t->n_vocab) return err_set(e, "\"%s\" is not an id in the vocabulary", key);
    *id = x;
    return 0;
}

int hftok_load_config(HfTok *t, const char *path, Err *e) {
    cJSON *root = parse_file(path, e);
    if (!root) return err_prefix(e, path);
    int bos = t->bos_id, eos = t->eos_id, r = 0;
    if (config_token(t, root, "bos_token", &bos, e) || config_token(t, root, "eos_token", &eos, e) ||
        config_id(t, root, "bos_token_id", &bos, e) || config_id(t, root, "eos_token_id", &eos, e))
        r = err_prefix(e, path);
    if (!r) {
        t->bos_id = bos, t->eos_id = eos;
        t->add_bos = get_bool(root, "add_bos_token", t->add_bos);
        t->add_eos = get_bool(root, "add_eos_token", t->add_eos);
    }
    cJSON_Delete(root);
    return r;
}
