/* run_info.c — the runs row a recording starts with, and the step counting its commands share.
 *
 * The runs row (enough to reproduce a run from the database),
 * and the small things every command that runs the model shares about its
 * run: why it stopped, the names its export takes, the prompts it reads. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/run_info.h"
#include "app/version.h"
#include "engine/files.h"
#include "engine/gguf.h"
#include "engine/gguf_names.h"
#include "engine/sha256.h"

void app_heads_text(const uint8_t *map, int n_layers, int n_heads, char *out, size_t cap) {
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; map && i < n_layers * n_heads && o + 16 < cap; i++)
        if (map[i]) o += (size_t)snprintf(out + o, cap - o, "%s%d.%d", o ? "," : "", i / n_heads, i % n_heads);
}

int app_session_error(const Session *s, Err *e) {
    if (s->failed == SAMPLER_OVERFLOW)
        return err_set(e, "position %d: --temperature %g is too small: the logits divided by it overflow (0 is greedy)",
                       s->n_ids, s->sampler.temperature);
    if (!s->failed) return 0;
    int kv = s->model->c.kv_dtype;
    if (kv != DT_F32)
        return err_set(e, "position %d: the logits are not finite (NaN or Inf); the %s KV cache probably overflowed, "
                          "try --kv-dtype f32", s->n_ids, model_dtype_name(kv));
    return err_set(e, "position %d: the logits are not finite (NaN or Inf): the model's activations overflowed",
                   s->n_ids);
}

/* "gguf-llama Q4_K_M": the architecture and the type mix (engine/gguf_names.h),
 * which the loaded model no longer shows (every tensor is widened to f32);
 * the header is read again for it, a cheap validated mapping of no weights. */
static void gguf_arch(const Model *m, char *out, size_t cap) {
    GgufFile f;
    Err e;
    char mix[16] = "?";
    if (gguf_open(&f, m->path, &e) == 0) {
        gguf_mix_name(&f, mix, sizeof mix);
        gguf_close(&f);
    }
    snprintf(out, cap, "gguf-%.12s %.13s", m->arch_name, mix); /* 31 bytes at most: runs.arch fits 32 */
}

int app_run_info(const RunOpts *o, const AppLoaded *L, StoreRunInfo *r, Err *e) {
    memset(r, 0, sizeof *r);
    r->program_version = AHASCOPE_VERSION;
    const Config *c = &L->model.c;
    const AttnConfig *a = &o->attn;
    snprintf(r->model, sizeof r->model, "%s", L->model.path[0] ? L->model.path : "random");
    const char *files[1100];
    int n_files = model_files(&L->model, files, 1100);
    if (n_files > 0 && sha256_files(files, n_files, r->model_sha256, e)) return -1;
    if (L->model.version == 2) snprintf(r->arch, sizeof r->arch, "hf-%.20s", L->model.arch_name);
    else if (L->model.version == MODEL_VERSION_GGUF) gguf_arch(&L->model, r->arch, sizeof r->arch);
    else snprintf(r->arch, sizeof r->arch, "llama2c-v%d", L->model.version < 0 ? 0 : L->model.version);
    r->dim = c->dim, r->hidden_dim = c->hidden_dim, r->n_layers = c->n_layers, r->n_heads = c->n_heads;
    r->n_kv_heads = c->n_kv_heads, r->vocab_size = c->vocab_size, r->seq_len = c->seq_len;
    model_layer_windows(&L->model, r->layer_window);
    if (L->have_tok) {
        snprintf(r->tokenizer, sizeof r->tokenizer, "%.1000s", L->tok_path);
        if (sha256_file(L->tok_path, r->tokenizer_sha256, e)) return -1;
    }
    snprintf(r->policy, sizeof r->policy, "%s", aha_policy_name(a->policy));
    r->window = a->window, r->sinks = a->sinks, r->profile = a->profile;
    r->tau = a->tau, r->theta_logit = a->theta_logit, r->p = a->p;
    if (L->routers.w) {
        snprintf(r->routers, sizeof r->routers, "%s", L->routers.desc);
        if (strncmp(L->routers.desc, "random", 6) != 0 && sha256_file(L->routers.desc, r->routers_sha256, e))
            return -1;
    }
    app_heads_text(L->static_heads, c->n_layers, c->n_heads, r->static_heads, sizeof r->static_heads);
    r->head_span = (float *)a->head_span; /* borrowed: the heads' own windows, run_heads' rows */
    r->prompt = (char *)(o->prompt ? o->prompt : "");
    r->steps = o->steps, r->temperature = o->temperature, r->topp = o->topp, r->seed = o->seed;
    return 0;
}

/* 1 if the JSON export at path is of this run: the run object on its first
 * line has the same id, creation time, seed and prompt. */
static int export_is_run(const char *path, const StoreRunInfo *ri) {
    FILE *f = file_fopen_regular(path, "export", "an export", NULL); /* never wait on a FIFO */
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = f ? getline(&line, &cap, f) : -1;
    if (f) fclose(f);
    const char *head = "{\"run\": ";
    int same = 0;
    if (n > 10 && !strncmp(line, head, strlen(head))) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ',')) line[--n] = 0;
        cJSON *j = cJSON_Parse(line + strlen(head));
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "run_id"),
                    *at = cJSON_GetObjectItemCaseSensitive(j, "created_at"),
                    *seed = cJSON_GetObjectItemCaseSensitive(j, "seed"),
                    *prompt = cJSON_GetObjectItemCaseSensitive(j, "prompt");
        same = cJSON_IsNumber(id) && (int64_t)id->valuedouble == ri->run_id && cJSON_IsString(at) &&
               !strcmp(at->valuestring, ri->created_at) && cJSON_IsString(seed) &&
               strtoull(seed->valuestring, NULL, 10) == ri->seed &&
               (cJSON_IsString(prompt) ? ri->prompt && !strcmp(prompt->valuestring, ri->prompt) : !ri->prompt);
        cJSON_Delete(j);
    }
    free(line);
    return same;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int app_export_names(Store *st, int64_t run, const char *dir, char *json, char *csv, size_t cap, Err *e) {
    StoreRunInfo ri;
    if (store_run_info(st, run, &ri, e)) return -1;
    int rc = -1;
    for (int k = 1; k < 1000 && rc; k++) {
        char tail[32] = "";
        if (k > 1) snprintf(tail, sizeof tail, "-%d", k);
        snprintf(json, cap, "%s/ahascope-run%lld%s.json", dir, (long long)run, tail);
        snprintf(csv, cap, "%s/ahascope-run%lld%s.csv", dir, (long long)run, tail);
        if (exists(json) ? export_is_run(json, &ri) : !exists(csv)) rc = 0;
    }
    store_run_info_free(&ri);
    return rc ? err_set(e, "%s: 999 exports of other runs numbered %lld already", dir, (long long)run) : 0;
}

void app_prompts_free(AppPrompts *p) {
    free(p->buf), free(p->text), free(p->line);
    memset(p, 0, sizeof *p);
}

int app_prompts_read(const char *path, AppPrompts *p, Err *e) {
    size_t size = 0;
    memset(p, 0, sizeof *p);
    if (!(p->buf = file_read_all(path, "prompts file", "a text file, one prompt a line", 64u << 20, &size, e)))
        return -1;
    if (memchr(p->buf, 0, size)) return app_prompts_free(p), err_set(e, "%s: a NUL byte: not a text file", path);
    p->text = malloc(APP_PROMPTS_MAX * sizeof *p->text);
    p->line = malloc(APP_PROMPTS_MAX * sizeof *p->line);
    if (!p->text || !p->line) return app_prompts_free(p), err_set(e, "out of memory");
    int line = 0;
    for (char *s = p->buf, *end = p->buf + size; s < end; line++) {
        char *nl = memchr(s, '\n', (size_t)(end - s)), *stop = nl ? nl : end;
        if (line >= APP_PROMPTS_MAX)
            return app_prompts_free(p), err_set(e, "%s: more than %d lines", path, APP_PROMPTS_MAX);
        if (stop - s > APP_PROMPT_LINE_MAX)
            return app_prompts_free(p), err_set(e, "%s:%d: a prompt longer than %d bytes", path, line + 1,
                                               APP_PROMPT_LINE_MAX);
        *stop = 0;
        if (stop > s && stop[-1] == '\r') stop[-1] = 0;
        if (*s) p->text[p->n] = s, p->line[p->n++] = line + 1;
        s = stop + 1;
    }
    return p->n ? 0 : (app_prompts_free(p), err_set(e, "%s: no prompt (every line is empty)", path));
}
