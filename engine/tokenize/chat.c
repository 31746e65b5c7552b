/* chat.c — chat formats (see tokenize.h).
 *
 * The templates themselves are Jinja programs; rather than interpret them,
 * each family's output for a single user message is written out here and
 * checked, in tests/test_chat.c, against what the published templates
 * produce. The template text is only searched for markers and for the one
 * thing that varies within a family: the default system turn.
 */
#include "tokenize.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "unicode.h"

#define LLAMA31_SYSTEM "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"

static int has(const char *s, const char *needle) { return s && strstr(s, needle) != NULL; }

static int is(const char *s, const char *name) { return s && strcmp(s, name) == 0; }

/* Whether the template writes Tulu's user turn, '<|user|>\n' + content +
 * '\n' (spaces and the kind of quotes aside): Zephyr's <|user|> turn ends
 * in eos_token instead, so the marker alone does not tell them apart. */
static int tulu_user_turn(const char *tmpl) {
    static const char want[] = "'<|user|>\\n'+message['content']+'\\n'";
    size_t n = strlen(tmpl), k = 0;
    char *flat = malloc(n + 1);
    if (!flat) return 0;
    for (size_t i = 0; i < n; i++)
        if (tmpl[i] != ' ') flat[k++] = tmpl[i] == '"' ? '\'' : tmpl[i];
    flat[k] = 0;
    int found = strstr(flat, want) != NULL;
    free(flat);
    return found;
}

/* Whether the template's [INST] literal ends in a space ('[INST] ' or
 * "[INST] "), as Llama-2's and Mistral v0.1's do; v3's is "[INST]". */
static int inst_spaced(const char *tmpl) { return has(tmpl, "[INST] '") || has(tmpl, "[INST] \""); }

ChatFormat chat_format_for(const char *model_type, const char *chat_template) {
    if (has(chat_template, "<|start_header_id|>")) return CHAT_LLAMA3;
    if (has(chat_template, "<|im_start|>")) return CHAT_CHATML;
    if (has(chat_template, "<start_of_turn>")) return CHAT_GEMMA;
    if (has(chat_template, "[INST]")) return inst_spaced(chat_template) ? CHAT_INST : CHAT_MISTRAL;
    if (has(chat_template, "<|end|>") && has(chat_template, "<|user|>")) return CHAT_PHI3;
    if (chat_template && tulu_user_turn(chat_template)) return CHAT_TULU;
    if (is(model_type, "olmo2") || is(model_type, "faolmo") || is(model_type, "olmo")) return CHAT_TULU;
    if (is(model_type, "qwen2")) return CHAT_CHATML;
    return CHAT_NONE;
}

/* The literal text of a ChatML default system turn in a template: after
 * "<|im_start|>system" and a newline (written "\n" inside a Jinja string, or
 * a real one) up to "<|im_end|>", with Jinja's string escapes undone. An
 * occurrence where the literal ends first (a quote or "{{": the system text
 * comes from the messages) is skipped. 0 if one was found, else -1. */
static int chatml_default_system(const char *tmpl, char *out, size_t cap) {
    static const char head[] = "<|im_start|>system", tail[] = "<|im_end|>";
    for (const char *p = tmpl; (p = strstr(p, head)) != NULL;) {
        char quote = p > tmpl && (p[-1] == '\'' || p[-1] == '"') ? p[-1] : 0; /* the literal's own quote */
        p += sizeof head - 1;
        const char *q = p;
        if (q[0] == '\\' && q[1] == 'n') q += 2;
        else if (q[0] == '\n') q++;
        else continue;
        size_t k = 0;
        int ok = 0;
        while (*q && k + 1 < cap) {
            if (strncmp(q, tail, sizeof tail - 1) == 0) {
                ok = 1;
                break;
            }
            if ((quote ? *q == quote : (*q == '\'' || *q == '"')) || (q[0] == '{' && (q[1] == '{' || q[1] == '%'))) break;
            if (*q == '\\' && q[1]) {
                char c = q[1];
                out[k++] = c == 'n' ? '\n' : c == 't' ? '\t' : c;
                q += 2;
            } else {
                out[k++] = *q++;
            }
        }
        if (ok && k > 0) {
            out[k] = 0;
            return 0;
        }
    }
    out[0] = 0;
    return -1;
}

Chat chat_for(const char *model_type, const char *chat_template) {
    Chat c = chat_of(chat_format_for(model_type, chat_template));
    if (!chat_template) return c;
    if (c.format == CHAT_CHATML) chatml_default_system(chat_template, c.system, sizeof c.system);
    if (c.format == CHAT_LLAMA3 && has(chat_template, "Cutting Knowledge Date"))
        memcpy(c.system, LLAMA31_SYSTEM, sizeof LLAMA31_SYSTEM);
    return c;
}

Chat chat_of(ChatFormat f) {
    Chat c;
    memset(&c, 0, sizeof c);
    c.format = f;
    return c;
}

/* Whitespace as Python's str.strip (Jinja's trim) sees it: Unicode
 * White_Space plus the information separators U+001C..U+001F. */
static int trim_space(uint32_t cp) { return uni_is_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

/* The prompt without leading and trailing whitespace: *start, *len. */
static void trim(const char *s, const char **start, size_t *len) {
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, end = 0, l;
    while (i < n && trim_space(uni_next(u + i, n - i, &l))) i += l;
    *start = s + i;
    for (size_t j = i; j < n; j += l)
        if (!trim_space(uni_next(u + j, n - j, &l))) end = j + l;
    *len = end > i ? end - i : 0;
}

/* Concatenate the NULL-terminated list of pieces; the piece that is PROMPT
 * itself (compared by address) stands for prompt[0..plen). */
static const char PROMPT[] = "{prompt}";

static char *join(const char *prompt, size_t plen, const char *const *pieces) {
    size_t n = 1;
    for (const char *const *p = pieces; *p; p++) n += *p == PROMPT ? plen : strlen(*p);
    char *out = malloc(n), *o = out;
    if (!out) return NULL;
    for (const char *const *p = pieces; *p; p++) {
        size_t m = *p == PROMPT ? plen : strlen(*p);
        memcpy(o, *p == PROMPT ? prompt : *p, m);
        o += m;
    }
    *o = 0;
    return out;
}

char *chat_wrap(const Chat *c, const char *prompt) {
    const char *sys = c->system, *p = prompt;
    size_t plen = strlen(prompt);
    int s = sys[0] != 0;
    switch (c->format) {
    case CHAT_TULU: {
        const char *const v[] = {"<|endoftext|>", s ? "<|system|>\n" : "", sys, s ? "\n" : "",
                                 "<|user|>\n", PROMPT, "\n<|assistant|>\n", NULL};
        return join(p, plen, v);
    }
    case CHAT_LLAMA3: {
        trim(prompt, &p, &plen);
        const char *const v[] = {"<|begin_of_text|>", s ? "<|start_header_id|>system<|end_header_id|>\n\n" : "", sys,
                                 s ? "<|eot_id|>" : "", "<|start_header_id|>user<|end_header_id|>\n\n", PROMPT,
                                 "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", NULL};
        return join(p, plen, v);
    }
    case CHAT_CHATML: {
        const char *const v[] = {s ? "<|im_start|>system\n" : "", sys, s ? "<|im_end|>\n" : "",
                                 "<|im_start|>user\n", PROMPT, "<|im_end|>\n<|im_start|>assistant\n", NULL};
        return join(p, plen, v);
    }
    case CHAT_GEMMA: {
        trim(prompt, &p, &plen);
        const char *const v[] = {"<bos><start_of_turn>user\n", PROMPT, "<end_of_turn>\n<start_of_turn>model\n", NULL};
        return join(p, plen, v);
    }
    case CHAT_MISTRAL: {
        const char *const v[] = {"<s>[INST]", PROMPT, "[/INST]", NULL};
        return join(p, plen, v);
    }
    case CHAT_INST: {
        const char *const v[] = {"<s>[INST] ", PROMPT, " [/INST]", NULL};
        return join(p, plen, v);
    }
    case CHAT_PHI3: {
        const char *const v[] = {"<|user|>\n", PROMPT, "<|end|>\n<|assistant|>\n", NULL};
        return join(p, plen, v);
    }
    default: {
        const char *const v[] = {PROMPT, NULL};
        return join(p, plen, v);
    }
    }
}

static const char *const NAMES[] = {"none", "tulu", "llama3", "chatml", "gemma", "mistral", "inst", "phi3"};

const char *chat_format_name(ChatFormat f) {
    return (unsigned)f < sizeof NAMES / sizeof NAMES[0] ? NAMES[f] : "none";
}

int chat_format_parse(const char *name, ChatFormat *f) {
    for (int i = 0; i < (int)(sizeof NAMES / sizeof NAMES[0]); i++)
        if (name && strcasecmp(name, NAMES[i]) == 0) return *f = (ChatFormat)i, 0;
    return -1;
}

int chat_has_bos(ChatFormat f) {
    return f == CHAT_TULU || f == CHAT_LLAMA3 || f == CHAT_GEMMA || f == CHAT_MISTRAL || f == CHAT_INST;
}

const char *chat_end_of_turn(ChatFormat f) {
    switch (f) {
    case CHAT_TULU: return "<|endoftext|>";
    case CHAT_LLAMA3: return "<|eot_id|>";
    case CHAT_CHATML: return "<|im_end|>";
    case CHAT_GEMMA: return "<end_of_turn>";
    case CHAT_MISTRAL: case CHAT_INST: return "</s>";
    case CHAT_PHI3: return "<|end|>";
    default: return NULL;
    }
}
