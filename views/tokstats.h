/* tokstats.h — rates split by token type (`c`): how often the selected
 * head, and all heads pooled, went global (the executed gate), how often
 * the oracle says it was needed, and how often a predictor agreed with the
 * oracle, for prompt against generated tokens, words against numbers
 * against punctuation against whitespace, and the most frequent pieces.
 *
 * The token types are defined once, by view_token_kind. Everything here is
 * pure: counted from per-step traces, one at a time, so the app can count
 * a long run a slice per frame, and printed as a table the text pane pins
 * the header of. Every decision comes from engine/decide.h.
 */
#ifndef AHASCOPE_VIEW_TOKSTATS_H
#define AHASCOPE_VIEW_TOKSTATS_H

#include <stdio.h>

#include "engine/decide.h"
#include "engine/trace.h"

typedef enum { VIEW_TOK_WORD, VIEW_TOK_NUMBER, VIEW_TOK_PUNCT, VIEW_TOK_SPACE, VIEW_TOK_KINDS } ViewTokKind;

/* What kind of token a piece is, read after its leading whitespace: a word
 * if it holds a letter (any non-ASCII character but the Unicode general
 * punctuation block counts as one), else a number if it holds a digit,
 * else punctuation if anything is left, else whitespace. */
ViewTokKind view_token_kind(const char *piece);

/* "words", "numbers", "punctuation", "whitespace". */
const char *view_token_kind_name(ViewTokKind k);

/* Counts behind three rates: executed global of decided, oracle global of
 * labelled, the predictor agreeing with the oracle of both known. */
typedef struct {
    double global, decided, oracle, labelled, agree, compared;
} ViewRates;

/* The groups every token counts in: prompt or generated, and its kind. */
enum { VIEW_TOKS_PROMPT, VIEW_TOKS_GENERATED, VIEW_TOKS_KIND0, VIEW_TOKS_GROUPS = VIEW_TOKS_KIND0 + VIEW_TOK_KINDS };

typedef struct {
    char piece[TRACE_PIECE_MAX];
    int n, first; /* tokens; the first position it was seen at (ties rank by it) */
    ViewRates head, all;
} ViewTokPiece;

typedef struct {
    int n_layers, n_heads, layer, head;
    DecidePred pred; /* compared with the oracle */
    float tau;
    double theta_logit;
    int n; /* positions counted */
    int count[VIEW_TOKS_GROUPS];
    ViewRates head_rates[VIEW_TOKS_GROUPS], all_rates[VIEW_TOKS_GROUPS];
    ViewTokPiece *pieces; /* distinct pieces in the order first seen (owned) */
    int n_pieces, cap_pieces;
    int *slot, n_slots;   /* hash of pieces: index + 1, 0 empty (owned) */
} ViewTokStats;

/* Start counting for head (layer, head) of an n_layers × n_heads model,
 * pred compared with the oracle at tau and theta_logit. */
void view_tokstats_begin(ViewTokStats *s, int n_layers, int n_heads, int layer, int head, DecidePred pred, float tau,
                         double theta_logit);

/* Count one position (its shape must be the model's); -1 out of memory. */
int view_tokstats_add(ViewTokStats *s, const StepTrace *t);

/* The table: a header and its rule, a row per group, then the top most
 * frequent pieces (more tokens first, then the first seen); rates "n/a"
 * where nothing was counted. ascii spells pieces' special characters out. */
void view_tokstats_print(const ViewTokStats *s, FILE *f, int top, int ascii);

/* Free what counting took; s may be counted again after view_tokstats_begin. */
void view_tokstats_free(ViewTokStats *s);

#endif
