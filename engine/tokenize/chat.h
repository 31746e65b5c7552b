/* chat.h — wrapping a prompt in a model family's chat format.
 *
 * Instruction-tuned models expect the user's text inside their chat
 * template, with the assistant's turn opened so that generation continues as
 * the assistant. This renders what the model's Jinja chat_template renders
 * for one user message with add_generation_prompt, for three families:
 *
 *   Tulu (OLMo-2 instruct, AHA-OLMO2):
 *     <|endoftext|><|user|>\n{prompt}\n<|assistant|>\n
 *   Llama-3 (Llama-3.1/3.2 add a system turn with knowledge and fixed date):
 *     <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n{prompt}
 *     <|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n
 *   ChatML (Qwen2/2.5/3; Qwen2 and 2.5 add a default system turn):
 *     <|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n
 *
 * The result is text with the special tokens spelled out: encode it with
 * HFTOK_SPECIAL, and without HFTOK_BOS when chat_has_bos() says the text
 * already starts with the BOS token.
 */
#ifndef AHASCOPE_CHAT_H
#define AHASCOPE_CHAT_H

typedef enum { CHAT_NONE, CHAT_TULU, CHAT_LLAMA3, CHAT_CHATML } ChatFormat;

#define CHAT_SYSTEM_MAX 512

typedef struct {
    ChatFormat format;
    /* Content of the system turn the template writes when the conversation
     * has none ("" = no system turn), e.g. Qwen2's "You are a helpful
     * assistant." or Llama-3.1's "Cutting Knowledge Date: ...". */
    char system[CHAT_SYSTEM_MAX];
} Chat;

/* The chat format of a model, from its chat_template (tokenizer_config.json;
 * NULL if none) and config.json model_type (NULL if unknown). Markers in the
 * template win ("<|start_header_id|>" Llama-3, "<|im_start|>" ChatML); else
 * olmo2/faolmo/olmo are Tulu, qwen2 is ChatML, anything else CHAT_NONE. */
ChatFormat chat_format_for(const char *model_type, const char *chat_template);

/* chat_format_for plus the default system turn the template inserts: a
 * ChatML template's literal "<|im_start|>system\n...<|im_end|>" text, or
 * Llama-3.1's knowledge/date header (with the template's fallback date
 * "26 Jul 2024", so prompts do not change from day to day). No template
 * means no system turn. */
Chat chat_for(const char *model_type, const char *chat_template);

/* A Chat of format f without a system turn (for a format chosen by name). */
Chat chat_of(ChatFormat f);

/* The prompt wrapped in c's format as a malloc'd NUL-terminated string
 * (CHAT_NONE: a copy of prompt); NULL only when out of memory. Llama-3
 * trims whitespace around the prompt, as its template does. */
char *chat_wrap(const Chat *c, const char *prompt);

/* Short name of a format: "none", "tulu", "llama3", "chatml". */
const char *chat_format_name(ChatFormat f);

/* The format called name (as chat_format_name spells it, any case); 0, or
 * -1 if the name is unknown. */
int chat_format_parse(const char *name, ChatFormat *f);

/* 1 if chat_wrap's text starts with the model's BOS token spelled out
 * (Tulu's "<|endoftext|>", Llama-3's "<|begin_of_text|>"), so the encoder
 * must not prepend another (no HFTOK_BOS); 0 otherwise. */
int chat_has_bos(ChatFormat f);

/* The special token that ends the assistant's turn ("<|endoftext|>",
 * "<|eot_id|>", "<|im_end|>"), a natural stop for generation; NULL for
 * CHAT_NONE. */
const char *chat_end_of_turn(ChatFormat f);

#endif
