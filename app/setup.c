/* setup.c — command-line options into loaded engine objects: model, tokenizer, routers, chat format. */
#include "app/setup.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/headsets.h"
#include "app/hub.h"
#include "engine/files.h"
#include "engine/tokenize/tokenize.h"
#include "engine/sniff.h"

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A models directory holds stories260K/stories260K.bin or stories260K.bin. */
static int model_in_dir(const char *dir, char *out, size_t cap) {
    snprintf(out, cap, "%s/stories260K/stories260K.bin", dir);
    if (is_file(out)) return 0;
    snprintf(out, cap, "%s/stories260K.bin", dir);
    return is_file(out) ? 0 : -1;
}

#define MAX_MODEL_DIRS 4

typedef struct {
    char dir[MAX_MODEL_DIRS][1100];
    int n;
} ModelDirs;

/* Where models are looked for, in order: $AHASCOPE_MODELS, ../shared/models
 * from the working directory, then from the binary, then the cache. */
static void model_dirs(ModelDirs *d) {
    const char *env = getenv("AHASCOPE_MODELS");
    d->n = 0;
    if (env && *env) snprintf(d->dir[d->n++], sizeof d->dir[0], "%.1000s", env);
    snprintf(d->dir[d->n++], sizeof d->dir[0], "../shared/models");
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
        snprintf(d->dir[d->n++], sizeof d->dir[0], "%.1000s/../shared/models", exe);
    }
    hub_cache_dir(d->dir[d->n++], sizeof d->dir[0]);
}

/* "A, B, C" of the search directories, for messages. */
static void model_dirs_text(const ModelDirs *d, char *out, size_t cap) {
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < d->n && k < cap; i++) k += snprintf(out + k, cap - k, "%s%s", i ? ", " : "", d->dir[i]);
}

int app_find_model(char *out, size_t cap) {
    ModelDirs d;
    model_dirs(&d);
    for (int i = 0; i < d.n; i++)
        if (model_in_dir(d.dir[i], out, cap) == 0) return 0;
    return -1;
}

/* A model named without a directory, in one models directory: DIR/NAME
 * (a checkpoint or a Hugging Face folder), DIR/NAME.bin, DIR/STEM/STEM.bin
 * where STEM is NAME without ".bin". */
static int model_named_in(const char *dir, const char *name, char *out, size_t cap) {
    size_t n = strlen(name);
    int stem = n > 4 && !strcmp(name + n - 4, ".bin") ? (int)(n - 4) : (int)n;
    snprintf(out, cap, "%s/%s", dir, name);
    if (is_file(out) || model_is_hf_dir(out)) return 0;
    snprintf(out, cap, "%s/%s.bin", dir, name);
    if (is_file(out)) return 0;
    snprintf(out, cap, "%s/%.*s/%.*s.bin", dir, stem, name, stem, name);
    return is_file(out) ? 0 : -1;
}

/* OWNER/NAME, OWNER/NAME@REV or either with :FILE (a pulled .gguf) that
 * names no local file: the complete pull of it in the cache. Returns 0
 * found, 1 not hub-shaped, -1 (e set) hub-shaped but not pulled. */
static int model_from_hub(const char *arg, char *out, size_t cap, Err *e) {
    char repo[200], rev[100] = "main", file[200] = "";
    const char *colon = strchr(arg, ':');
    size_t end = colon ? (size_t)(colon - arg) : strlen(arg);
    const char *at = memchr(arg, '@', end);
    if (strlen(arg) >= sizeof repo) return 1;
    snprintf(repo, sizeof repo, "%.*s", at ? (int)(at - arg) : (int)end, arg);
    if (at) snprintf(rev, sizeof rev, "%.*s", (int)(end - (size_t)(at + 1 - arg)), at + 1);
    if (colon) snprintf(file, sizeof file, "%s", colon + 1);
    if (!hub_repo_valid(repo) || !hub_rev_valid(rev) || (colon && (!file[0] || strchr(file, '/')))) return 1;
    if (colon) return hub_cached_file(repo, rev, file, out, cap, e);
    if (hub_cached(repo, rev, out, cap) == 0) return 0;
    return err_set(e, "%s: no such file, and not pulled into %s; run: ahascope pull %s%s%s", arg, out, repo,
                   at ? " --revision " : "", at ? rev : "");
}

#define OLLAMA_MANIFEST_MAX (1 << 20) /* real manifests are about 1 KB */
#define OLLAMA_MODEL_LAYER "application/vnd.ollama.image.model"

/* A name or tag of ollama's store: the characters of a hub part, so it can
 * name a path without escaping ("." and ".." refused). */
static int ollama_part_ok(const char *s, size_t n) {
    if (n == 0 || n > 96 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'))
            return 0;
    }
    return 1;
}

/* The model layer's blob digest of a manifest: "sha256:" and 64 hex digits
 * copied to hex; -1 if the manifest has no such layer (or a digest that is
 * anything else, e.g. one holding '/' or ".."). */
static int ollama_model_digest(const cJSON *m, char hex[65]) {
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(m, "layers"), *l;
    if (!cJSON_IsArray(layers)) return -1;
    cJSON_ArrayForEach(l, layers) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(l, "mediaType"), *dg = cJSON_GetObjectItemCaseSensitive(l, "digest");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, OLLAMA_MODEL_LAYER) || !cJSON_IsString(dg)) continue;
        const char *d = dg->valuestring;
        if (strncmp(d, "sha256:", 7) || strlen(d) != 7 + 64 || strspn(d + 7, "0123456789abcdef") != 64) return -1;
        memcpy(hex, d + 7, 65);
        return 0;
    }
    return -1;
}

/* ollama:NAME[:TAG] (NAME may be USER/NAME): the model blob the manifest
 * $OLLAMA_MODELS/manifests/registry.ollama.ai/library/NAME/TAG names. */
static int model_from_ollama(const char *arg, char *out, size_t cap, Err *e) {
    const char *spec = arg + 7, *colon = strrchr(spec, ':'), *slash = strchr(spec, '/');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const char *tag = colon ? colon + 1 : "latest";
    int user = slash && (size_t)(slash - spec) < nlen;
    size_t ulen = user ? (size_t)(slash - spec) : 0, mlen = user ? nlen - ulen - 1 : nlen;
    if (!ollama_part_ok(tag, strlen(tag)) || (user && !ollama_part_ok(spec, ulen)) || !ollama_part_ok(spec + (user ? ulen + 1 : 0), mlen))
        return err_set(e, "%s: not an ollama model name (ollama:NAME[:TAG], letters, digits, '-', '_', '.')", arg);
    char root[1024], man[2400];
    const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
    if (env && *env) snprintf(root, sizeof root, "%.1000s", env);
    else snprintf(root, sizeof root, "%.990s/.ollama/models", home ? home : "");
    snprintf(man, sizeof man, "%s/manifests/registry.ollama.ai/%.*s/%.*s/%s", root, user ? (int)ulen : 7, user ? spec : "library",
             (int)mlen, spec + (user ? ulen + 1 : 0), tag);
    if (sniff_kind(man) == FILE_MISSING) return err_set(e, "%s: no ollama manifest %s (run: ollama pull %s)", arg, man, spec);
    size_t n;
    char *text = file_read_all(man, "ollama manifest", "a JSON manifest", OLLAMA_MANIFEST_MAX, &n, e);
    if (!text) return -1;
    cJSON *m = cJSON_ParseWithLength(text, n);
    char hex[65];
    int r = !cJSON_IsObject(m) ? err_set(e, "%s: not a JSON manifest", man)
            : ollama_model_digest(m, hex) ? err_set(e, "%s: no model layer (%s) with a sha256 digest", man, OLLAMA_MODEL_LAYER) : 0;
    cJSON_Delete(m);
    free(text);
    if (r) return -1;
    snprintf(out, cap, "%s/blobs/sha256-%s", root, hex);
    if (!is_file(out)) return err_set(e, "%s: the model blob %s named by %s is missing", arg, out, man);
    return 0;
}

int app_model_path(const char *arg, char *out, size_t cap, Err *e) {
    ModelDirs d;
    char where[4600];
    struct stat st;
    if (arg && !strncmp(arg, "ollama:", 7)) return model_from_ollama(arg, out, cap, e);
    if (arg && model_is_hf_dir(arg)) return snprintf(out, cap, "%s", arg), 0;
    if (arg && is_dir(arg)) {
        if (model_in_dir(arg, out, cap) == 0) return 0;
        return err_set(e, "%s: not a llama2.c checkpoint or Hugging Face folder (a directory with no config.json, "
                          "nor a llama2.c checkpoint named stories260K.bin)", arg);
    }
    if (arg && lstat(arg, &st) == 0) return snprintf(out, cap, "%s", arg), 0;
    int hub = arg && strchr(arg, '/') ? model_from_hub(arg, out, cap, e) : 1;
    if (hub <= 0) return hub;
    if (arg && strchr(arg, '/')) return snprintf(out, cap, "%s", arg), 0;
    model_dirs(&d);
    for (int i = 0; i < d.n; i++)
        if (arg ? model_named_in(d.dir[i], arg, out, cap) == 0 : model_in_dir(d.dir[i], out, cap) == 0) return 0;
    model_dirs_text(&d, where, sizeof where);
    if (arg) return err_set(e, "%s: no such file, nor a model of that name in %s", arg, where);
    return err_set(e, "no model found (looked in %s); pass --model PATH or run `make run` to download stories260K",
                   where);
}

int app_default_routers(const char *model_path, char *out, size_t cap) {
    const char *base = strrchr(model_path, '/');
    base = base ? base + 1 : model_path;
    if (strcmp(base, "stories260K.bin") != 0) return -1;
    const char *file = "engine/routers/stories260K_w16.safetensors";
    snprintf(out, cap, "%s", file);
    if (is_file(out)) return 0;
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(out, cap, "%s/%s", exe, file);
    if (is_file(out)) return 0;
    snprintf(out, cap, "%s/../%s", exe, file); /* build-san/ahascope */
    return is_file(out) ? 0 : -1;
}

int app_find_tokenizer(const char *model_path, int vocab_size, char *out, size_t cap) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", model_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    snprintf(out, cap, "%s/tokenizer.bin", dir);
    if (is_file(out)) return 0;
    snprintf(out, cap, "%s/tok%d.bin", dir, vocab_size);
    if (is_file(out)) return 0;
    if (vocab_size == 32000) {
        snprintf(out, cap, "%s/llama2-tokenizer.bin", dir);
        if (is_file(out)) return 0;
        snprintf(out, cap, "%s/../llama2-tokenizer.bin", dir);
        if (is_file(out)) return 0;
    }
    return -1;
}

static int load_static(RunOpts *o, AppLoaded *L, Err *e) {
    if (!o->static_heads) return 0;
    const Config *c = &L->model.c;
    AppHeadShape shape = {c->n_layers, c->n_heads, c->n_kv_heads, c->seq_len};
    HeadPick pick = app_headset_pick(o->static_heads, &o->static_pick, o->have_budget, o->have_duo_threshold);
    int r = app_headset_load(o->static_heads, &pick, &shape, &L->static_heads, e);
    if (!r) r = app_headset_spans(o->static_heads, &shape, &L->head_span, e);
    o->attn.static_heads = L->static_heads, o->attn.head_span = L->head_span;
    return r;
}

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* The tokenizer: --tokenizer (a .json is a tokenizer.json), else the
 * folder's tokenizer.json for a Hugging Face model, else the llama2.c
 * vocabulary beside the checkpoint; a GGUF model's is in its metadata. */
static int load_tokenizer(const RunOpts *o, AppLoaded *L, Err *e) {
    const Model *m = &L->model;
    int hf = m->version == 2;
    if (m->version == MODEL_VERSION_GGUF && !o->tokenizer) { /* the vocabulary is in the file's metadata */
        snprintf(L->tok_path, sizeof L->tok_path, "%s", L->model_path);
        if (tok_load_gguf(&L->tok, L->model_path, m->c.vocab_size, e) != 0) return -1;
        L->tok.special = o->chat;
        L->have_tok = 1;
        return 0;
    }
    if (o->tokenizer) snprintf(L->tok_path, sizeof L->tok_path, "%s", o->tokenizer);
    else if (hf) snprintf(L->tok_path, sizeof L->tok_path, "%.1000s/tokenizer.json", L->model_path);
    else if (app_find_tokenizer(L->model_path, m->c.vocab_size, L->tok_path, sizeof L->tok_path) != 0)
        return err_set(e, "%s: no tokenizer beside the model (tokenizer.bin or tok%d.bin); pass --tokenizer PATH",
                       L->model_path, m->c.vocab_size);
    if (hf && !o->tokenizer && sniff_kind(L->tok_path) == FILE_MISSING) /* a FIFO there is refused by name */
        return err_set(e, "%s: no tokenizer.json in the folder; pass --tokenizer PATH", L->model_path);
    int r = ends_with(L->tok_path, ".json") || sniff_kind(L->tok_path) == FILE_JSON
                ? tok_load_hf(&L->tok, L->tok_path, hf ? L->model_path : NULL, m->c.vocab_size, e)
                : tok_load(&L->tok, L->tok_path, m->c.vocab_size, e);
    if (r != 0) return -1;
    L->tok.special = o->chat;
    L->have_tok = 1;
    return 0;
}

/* The chat_template of a folder's tokenizer_config.json (a string, or the
 * "default" entry of a list of named templates), malloc'd; NULL if none. */
static char *read_chat_template(const char *dir) {
    char p[1100];
    snprintf(p, sizeof p, "%.1000s/tokenizer_config.json", dir);
    char *out = NULL;
    size_t n;
    char *buf = file_read_all(p, "tokenizer config", "a JSON file", 64 << 20, &n, NULL); /* none: no template */
    cJSON *j = buf ? cJSON_Parse(buf) : NULL;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "chat_template"), *it;
    if (cJSON_IsString(t)) out = strdup(t->valuestring);
    const cJSON *list = cJSON_IsArray(t) ? t : NULL;
    cJSON_ArrayForEach(it, list) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name"), *tmpl = cJSON_GetObjectItemCaseSensitive(it, "template");
        if (!out && cJSON_IsString(tmpl) && (!cJSON_IsString(name) || !strcmp(name->valuestring, "default")))
            out = strdup(tmpl->valuestring);
    }
    cJSON_Delete(j);
    free(buf);
    return out;
}

/* --chat: wrap the prompt in the model family's format (from the folder's
 * tokenizer_config.json or the GGUF's tokenizer.chat_template), let the
 * encoder match its special tokens, and stop generation at the end of the turn. */
static int apply_chat(RunOpts *o, AppLoaded *L, Err *e) {
    if (!o->chat || !L->have_tok) return 0;
    if (!L->tok.hf) return err_set(e, "--chat needs a model with a byte-level tokenizer (a Hugging Face folder's "
                                      "tokenizer.json, or a GGUF whose tokenizer.ggml.model is gpt2)");
    int gguf = L->model.version == MODEL_VERSION_GGUF;
    char *tmpl = gguf ? tok_gguf_chat_template(L->model_path) : read_chat_template(L->model_path);
    Chat c = chat_for(L->model.arch_name, tmpl);
    free(tmpl);
    if (c.format == CHAT_NONE)
        return err_set(e, "%s: --chat: no chat format known for model_type %s (Tulu, Llama-3, ChatML, Gemma, Mistral's [INST] "
                       "and Phi-3 are)",
                       L->model_path, L->model.arch_name);
    if (!(L->chat_prompt = chat_wrap(&c, o->prompt ? o->prompt : ""))) return err_set(e, "out of memory");
    o->prompt = L->chat_prompt;
    L->tok.text_has_bos = chat_has_bos(c.format);
    int stop = hftok_lookup(L->tok.hf, chat_end_of_turn(c.format));
    if (stop >= 0) L->tok.has_stop = 1, L->tok.stop = stop;
    return 0;
}

int app_load_tokenizer(RunOpts *o, AppLoaded *L, Err *e) {
    return load_tokenizer(o, L, e) != 0 || apply_chat(o, L, e) != 0 ? -1 : 0;
}

void app_router_meta(const Routers *r, int have_tau, AttnConfig *a, char *warn, size_t cap) {
    warn[0] = 0;
    if (!have_tau && !isnan(r->tau)) a->tau = r->tau;
    if (r->window > 0 && a->window != r->window && !r->n_windows) { /* multi-choice: aha reads its own windows */
        snprintf(warn, cap, "%.1000s was trained for window %d, used here at window %d", r->desc, r->window,
                 a->window);
        args_warn("%s", warn);
    }
}

/* --prompt-file: the file's bytes as the prompt. A NUL would cut the text
 * short without a word, so it is refused. */
static int read_prompt_file(RunOpts *o, AppLoaded *L, Err *e) {
    size_t n = 0;
    L->prompt_text = file_read_all(o->prompt_file, "prompt file", "a text file", APP_PROMPT_FILE_MAX, &n, e);
    if (!L->prompt_text) return -1;
    if (strlen(L->prompt_text) != n)
        return err_set(e, "%s: not a text file (a NUL byte at offset %zu)", o->prompt_file, strlen(L->prompt_text));
    o->prompt = L->prompt_text;
    return 0;
}

int app_load(RunOpts *o, AppLoaded *L, int need_tok, Err *e) {
    memset(L, 0, sizeof *L);
    if (o->prompt_file && read_prompt_file(o, L, e) != 0) return -1;
    if (app_model_path(o->model, L->model_path, sizeof L->model_path, e) != 0) return -1;
    int r = model_is_hf_dir(L->model_path) ? model_load_hf(&L->model, L->model_path, o->context, e)
            : model_is_gguf(L->model_path) ? model_load_gguf_ctx(&L->model, L->model_path, o->context, e)
                                            : model_load(&L->model, L->model_path, e);
    if (r != 0) return -1;
    if (o->kv_dtype >= 0) L->model.c.kv_dtype = o->kv_dtype;
    const Config *c = &L->model.c;
    if ((need_tok || o->tokenizer) && app_load_tokenizer(o, L, e) != 0) return -1;
    if (L->model.builtin_routers && !o->routers) { /* faolmo: the model routes itself */
        o->attn.model_routers = 1;
        if (!o->have_window) o->attn.window = L->model.default_window;
        if (!o->have_policy) o->attn.policy = POLICY_AHA;
    }
    if (load_static(o, L, e) != 0) return -1;
    if (o->routers) { /* a "{w}" template (as sweep takes) names the file for --window */
        if (strstr(o->routers, "{w}") && !o->have_window)
            return err_set(e, "--routers %s: a {w} template needs --window W", o->routers);
        if (router_open_for(&L->routers, o->routers, o->attn.window, c->n_layers, c->n_heads, c->dim, e) != 0) return -1;
        o->attn.routers = L->routers.w;
        o->attn.router_bias = L->routers.b;
        o->attn.n_windows = L->routers.n_windows; /* a multi-choice router picks the windows under aha */
        o->attn.windows = L->routers.n_windows ? L->routers.windows : NULL;
        if (!o->have_window && L->routers.window > 0) o->attn.window = L->routers.window;
        if (!o->have_policy) o->attn.policy = POLICY_AHA; /* routers given: they drive by default */
        app_router_meta(&L->routers, o->have_tau, &o->attn, L->warning, sizeof L->warning);
    }
    if (o->attn.policy == POLICY_AHA && !o->attn.routers && !o->attn.model_routers)
        return err_set(e, "policy aha needs routers (--routers FILE, or --routers random[:SEED])");
    if (o->attn.sinks > c->seq_len) return err_set(e, "--sinks %d exceeds the context (%d)", o->attn.sinks, c->seq_len);
    return aha_check(&o->attn, c->n_layers, c->n_heads, e);
}

int app_steps_for(const Tokenizer *tok, int seq_len, const char *prompt, int steps, int given, char *warn,
                  size_t warn_size) {
    if (warn_size) warn[0] = '\0';
    size_t len = prompt ? strlen(prompt) : 0;
    int n = 0, *ids = tok && len < (size_t)64 << 20 ? malloc((len + 3) * sizeof(int)) : NULL;
    Err e;
    if (!ids || tok_encode(tok, prompt ? prompt : "", len, 1, 0, ids, (int)len + 3, &n, &e) != 0) n = 0;
    free(ids);
    if (steps > seq_len) steps = seq_len;
    if (given) {
        if (n > steps + 1 && (n <= seq_len || steps < seq_len)) /* else the session refuses it, and says so */
            snprintf(warn, warn_size, "the prompt is %d tokens; --steps %d feeds only its first %d (give --steps %d or "
                     "more to feed all of it)", n, steps, steps + 1, n);
        return steps;
    }
    if (n <= steps) return steps;
    return n + steps < seq_len ? n + steps : seq_len;
}

int app_cli_steps(const RunOpts *o, const AppLoaded *L, const char *prompt) {
    char warn[200];
    int steps = app_steps_for(&L->tok, L->model.c.seq_len, prompt, o->steps, o->have_steps, warn, sizeof warn);
    if (warn[0]) args_warn("%s", warn);
    return steps;
}

void app_window_note(const AppLoaded *L, const RunOpts *o) {
    int32_t win[MODEL_MAX_LAYERS];
    char note[400];
    model_layer_windows(&L->model, win);
    if (model_window_note(win, L->model.c.n_layers, o->attn.window, note, sizeof note)) args_note("%s", note);
}

void app_unload(AppLoaded *L) {
    model_free(&L->model);
    if (L->have_tok) tok_free(&L->tok);
    router_free(&L->routers);
    free(L->static_heads);
    free(L->head_span);
    free(L->chat_prompt);
    free(L->prompt_text);
    memset(L, 0, sizeof *L);
}
