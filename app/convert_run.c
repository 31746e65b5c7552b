/* convert_run.c — `ahascope convert`: the source loaded, its vocabulary found, the engine's writer called. */
#include "app/convert_run.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/setup.h"
#include "engine/files.h"
#include "engine/gguf.h"
#include "engine/gguf_write.h"
#include "engine/model.h"
#include "engine/textout.h"
#include "engine/tokenize/tokenize.h"

static int load_any(Model *m, const char *path, Err *e) {
    return model_is_gguf(path) ? model_load_gguf(m, path, e) : model_load(m, path, e);
}

static int to_hf(const ConvertOpts *o, Err *e) {
    int dt = model_dtype_parse(o->dtype ? o->dtype : "f32");
    if (dt < 0) return err_usage(e, "--dtype must be f32, bf16 or f16, not '%s'", o->dtype);
    Model m;
    char path[1024]; /* a bare name (stories260K) is looked up as the default model is */
    if (app_model_path(o->model, path, sizeof path, e) || model_load(&m, path, e)) return -1;
    int rc = 0;
    if (m.c.arch != ARCH_LLAMA2C)
        rc = err_set(e, "%s: convert --to hf reads llama2.c checkpoints (this is a Hugging Face folder already)", path);
    HfSaveOpts s = {.dtype = dt, .bos_id = 1, .eos_id = 2}; /* llama2.c's BOS and EOS */
    if (!rc) rc = model_save_hf(&m, o->out, &s, e);
    model_free(&m);
    char safe[4 * 1024 + 1]; /* the path as typed: escaped for the terminal */
    if (!rc) printf("wrote %s/config.json, generation_config.json, model.safetensors (%s)\n",
                    textout_term(o->out, safe, sizeof safe), o->dtype ? o->dtype : "f32");
    return rc;
}

/* A folder's tokenizer_config.json chat_template (a string, or the
 * "default" of a list of named ones), malloc'd; NULL when there is none. */
static char *chat_template(const char *dir) {
    char p[1100];
    snprintf(p, sizeof p, "%.1000s/tokenizer_config.json", dir);
    size_t n;
    char *buf = file_read_all(p, "tokenizer config", "a JSON file", 64 << 20, &n, NULL), *out = NULL;
    cJSON *j = buf ? cJSON_Parse(buf) : NULL, *t = cJSON_GetObjectItemCaseSensitive(j, "chat_template"), *it;
    cJSON *list = cJSON_IsArray(t) ? t : NULL;
    if (cJSON_IsString(t)) out = strdup(t->valuestring);
    cJSON_ArrayForEach(it, list) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name"), *x = cJSON_GetObjectItemCaseSensitive(it, "template");
        if (!out && cJSON_IsString(x) && cJSON_IsString(name) && !strcmp(name->valuestring, "default"))
            out = strdup(x->valuestring);
    }
    cJSON_Delete(j);
    free(buf);
    return out;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* What gguf_write_model reads the vocabulary from, and what it holds while writing. */
typedef struct {
    Tokenizer tok;
    int have_tok;
    GgufFile from;
    int have_from;
    char hf[1100];
    char *chat;
} Vocab;

/* A tokenizer.json: BOS/EOS and whether BOS is prepended come from it (and
 * its tokenizer_config.json), the template from the folder it is in. */
static int vocab_hf(Vocab *v, GgufSaveOpts *s, const char *json, Err *e) {
    HfTok *t;
    if (hftok_load(&t, json, e)) return -1;
    s->bos_id = hftok_bos(t), s->eos_id = hftok_eos(t), s->add_bos = hftok_wants_bos(t);
    hftok_free(t);
    snprintf(v->hf, sizeof v->hf, "%s", json);
    s->hf_tokenizer = v->hf;
    char dir[1100];
    file_parent(json, dir, sizeof dir);
    s->chat_template = v->chat = chat_template(dir);
    return 0;
}

static int vocab_bin(Vocab *v, GgufSaveOpts *s, const char *bin, int n_vocab, Err *e) {
    if (tok_load(&v->tok, bin, n_vocab, e)) return -1;
    v->have_tok = 1;
    s->tok = &v->tok, s->bos_id = TOK_BOS, s->eos_id = TOK_EOS, s->add_bos = 1; /* llama2.c's ids; it prepends BOS */
    return 0;
}

/* The vocabulary: --tokenizer, else the source's own (a GGUF file's
 * metadata, a folder's tokenizer.json, the tokenizer.bin beside a checkpoint). */
static int find_vocab(Vocab *v, GgufSaveOpts *s, const char *model, const Model *m, const char *given, Err *e) {
    char p[1100];
    int n = m->c.vocab_size;
    if (given) return ends_with(given, ".json") ? vocab_hf(v, s, given, e) : vocab_bin(v, s, given, n, e);
    if (m->version == MODEL_VERSION_GGUF) {
        if (gguf_open(&v->from, model, e)) return -1;
        v->have_from = 1, s->from = &v->from;
        if (!gguf_find_kv(&v->from, "tokenizer.ggml.model"))
            return err_set(e, "%s: no tokenizer in the metadata to carry over: pass --tokenizer PATH", model);
        return 0;
    }
    if (model_is_hf_dir(model)) {
        snprintf(p, sizeof p, "%.1000s/tokenizer.json", model);
        FileKind k;
        if (!file_stat_kind(p, &k, NULL)) return err_set(e, "%s: no tokenizer.json in the folder: pass --tokenizer PATH", model);
        return vocab_hf(v, s, p, e);
    }
    if (app_find_tokenizer(model, n, p, sizeof p))
        return err_set(e, "%s: no tokenizer.bin or tok%d.bin beside the model: pass --tokenizer PATH", model, n);
    return vocab_bin(v, s, p, n, e);
}

static void vocab_free(Vocab *v) {
    if (v->have_tok) tok_free(&v->tok);
    if (v->have_from) gguf_close(&v->from);
    free(v->chat);
}

/* general.name: the file's (or folder's) name without its extension. */
static void model_name(const char *path, char *out, size_t cap) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", path);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/') tmp[--n] = 0;
    const char *b = strrchr(tmp, '/');
    snprintf(out, cap, "%.200s", b ? b + 1 : tmp); /* a name, not a path: 200 bytes is plenty */
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

/* --out must be new: converting never replaces a file, and a path that is
 * no regular file (/dev/full, a FIFO) is refused before any work. */
static int check_out(const char *out, Err *e) {
    struct stat st;
    if (lstat(out, &st) == 0 && S_ISREG(st.st_mode))
        return err_set(e, "%s: already exists (convert writes a new file; remove it first)", out);
    if (lstat(out, &st) == 0 && !S_ISDIR(st.st_mode))
        return err_set(e, "%s: is not a regular file (convert writes a new file)", out);
    return file_check_output(out, NULL, e);
}

static int to_gguf(const ConvertOpts *o, Err *e) {
    int t = gguf_write_type_parse(o->type ? o->type : "f32");
    if (t < 0) return err_usage(e, "--type must be f32, f16, bf16, q8_0 or q4_0, not '%s'", o->type);
    if (o->dtype) return err_usage(e, "--dtype is for --to hf; --to gguf takes --type");
    if (check_out(o->out, e)) return -1;
    char path[1024], name[256];
    Model m;
    if (app_model_path(o->model, path, sizeof path, e) || load_any(&m, path, e)) return -1;
    Vocab v = {0};
    model_name(path, name, sizeof name);
    GgufSaveOpts s = {.type = (GgmlType)t, .name = name, .bos_id = -1, .eos_id = -1};
    int rc = find_vocab(&v, &s, path, &m, o->tokenizer, e);
    if (!rc) rc = gguf_write_model(&m, o->out, &s, e);
    char note[400]; /* what llama.cpp will run otherwise (a window it ignores): said once, on stderr */
    if (!rc && gguf_write_llamacpp_note(&m, note, sizeof note)) fprintf(stderr, "%s\n", note);
    vocab_free(&v);
    model_free(&m);
    char safe[4 * 1024 + 1];
    if (!rc) printf("wrote %s (gguf v3, %s)\n", textout_term(o->out, safe, sizeof safe), gguf_type_name((GgmlType)t));
    return rc;
}

int convert_run(const ConvertOpts *o, Err *e) {
    if (!o->to || (strcmp(o->to, "hf") && strcmp(o->to, "gguf")))
        return err_usage(e, "--to must be hf or gguf, not '%s'", o->to ? o->to : "(none)");
    if (!o->model || !o->out) return err_usage(e, "--model and --out are required");
    if (!strcmp(o->to, "hf")) {
        if (o->type || o->tokenizer) return err_usage(e, "--type and --tokenizer are for --to gguf");
        return to_hf(o, e);
    }
    return to_gguf(o, e);
}
