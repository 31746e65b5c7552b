/* setup.h — turning command-line options into loaded engine objects:
 * where the model is (discovery), its tokenizer, routers and head sets. */
#ifndef AHASCOPE_SETUP_H
#define AHASCOPE_SETUP_H

#include "app/args.h"
#include "engine/model.h"
#include "engine/routers.h"
#include "engine/tokenize/tokenize.h"

/* Largest --prompt-file read: far more text than any context holds. */
#define APP_PROMPT_FILE_MAX ((size_t)16 << 20)

typedef struct {
    Model model;
    Tokenizer tok;
    int have_tok;
    char model_path[1024];
    char tok_path[1100];
    Routers routers;         /* routers.w is NULL without --routers */
    uint8_t *static_heads;
    float *head_span;        /* --static-heads moa: or windows: each head's window (AttnConfig.head_span), or NULL */
    char *chat_prompt;       /* --chat: the prompt as wrapped (o->prompt points here) */
    char *prompt_text;       /* --prompt-file: the file's text (o->prompt points here until --chat wraps it) */
    char warning[1200];      /* what app_load warned of on stderr ("" none), for the TUI's status line */
} AppLoaded;

/* Find the default model: $AHASCOPE_MODELS, ../shared/models, then the
 * cache directory; writes the checkpoint path. Returns 0 if found. */
int app_find_model(char *out, size_t cap);

/* The model --model names: arg itself when it exists, else OWNER/NAME or
 * OWNER/NAME@REV pulled into the cache (app/hub.h; when not pulled, e says
 * to run ahascope pull), else arg as a path when it holds a '/', a folder's
 * checkpoint, else a bare name looked up in the directories app_find_model
 * searches (stories260K, stories260K.bin, a folder's name); arg NULL: the
 * default model. On failure e says where it looked. */
int app_model_path(const char *arg, char *out, size_t cap, Err *e);

/* Pick the tokenizer beside a model (tokenizer.bin, tok<vocab>.bin, or the
 * Llama-2 vocabulary for 32000-token models). Returns 0 if found. */
int app_find_tokenizer(const char *model_path, int vocab_size, char *out, size_t cap);

/* The shipped routers for a model, if any: stories260K gets the w = 16 set
 * (engine/routers/, found from the working directory, the binary's directory
 * or its parent). */
int app_default_routers(const char *model_path, char *out, size_t cap);

/* A router file's own settings applied to a: its τ unless have_tau (--tau
 * wins). When a runs at a window other than the one the routers were
 * trained for, warn (a line on stderr) and keep the message in warn (cap
 * bytes; "" when all is well), so a screen can show it too. */
void app_router_meta(const Routers *r, int have_tau, AttnConfig *a, char *warn, size_t cap);

/* Load model, tokenizer (need_tok), routers and static heads as the options
 * say, and finish o->attn (routers pointer, default window and policy, the
 * router file's τ); a warning goes to stderr and L->warning. A
 * --prompt-file is read first (APP_PROMPT_FILE_MAX bytes at most, no NUL
 * byte) and becomes o->prompt. */
int app_load(RunOpts *o, AppLoaded *L, int need_tok, Err *e);

/* Load the tokenizer app_load would load (and apply --chat) into a AppLoaded
 * whose model is already loaded: for callers that loaded with need_tok = 0. */
int app_load_tokenizer(RunOpts *o, AppLoaded *L, Err *e);

/* The positions a session should run for prompt (BOS added, as the session
 * encodes it): steps when given is set (a prompt longer than that is cut
 * to steps + 1 tokens, llama2.c's rule, and warn says so; else warn is
 * ""); else steps (the default), or for a prompt longer than that, all of
 * it and as many positions again; never past seq_len. An unencodable
 * prompt leaves steps as it is (the session reports the error). */
int app_steps_for(const Tokenizer *tok, int seq_len, const char *prompt, int steps, int given, char *warn,
                  size_t warn_size);

/* app_steps_for for a command-line run of prompt on L: the steps o asked
 * for (given or default), its warning on stderr. */
int app_cli_steps(const RunOpts *o, const AppLoaded *L, const char *prompt);

/* Where the architecture's window is longer than AHA's --window, the one
 * note line that says so on stderr (model_window_note: --window applies to
 * the global layers only); nothing otherwise. record, generate (and run),
 * trace. */
void app_window_note(const AppLoaded *L, const RunOpts *o);

/* Release what app_load loaded. */
void app_unload(AppLoaded *L);

#endif
