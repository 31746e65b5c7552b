/* ruler.c — RULER's synthetic tasks in this project's own wording (ruler.h).
 *
 * The needle kinds and variable tracking are plans for tasks.c's sizer:
 * statements at drawn depths in a haystack of words. The haystacks are
 * made here, offline: a few noise sentences repeated; essay-like prose
 * written from the word lists below by a small grammar (RULER reads Paul
 * Graham's essays, which cannot be fetched here); or distractor needles
 * alone. Common-words and frequent-words extraction are word lists whose
 * size is searched here, with a neutral padding sentence before the
 * question taking up the last few ids. */
#include "engine/tasks/ruler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The word lists: keys are adjective-noun pairs ("misty-harbor"), the
 * essay is written from all of them, and cwe draws its words from them. */
static const char *const adjs[] = {
    "ancient", "bitter", "bold", "brave", "bright", "broad", "calm", "clever", "cold", "crisp", "curious",
    "damp", "dark", "deep", "dry", "dusty", "eager", "early", "empty", "faint", "fancy", "fast", "fierce",
    "gentle", "giant", "golden", "grand", "green", "happy", "heavy", "hollow", "honest", "huge", "humble",
    "icy", "jolly", "kind", "late", "lazy", "little", "lively", "lonely", "loud", "lucky", "mellow", "mighty",
    "misty", "narrow", "noble", "odd", "pale", "plain", "polite", "proud", "quick", "quiet", "rapid", "rare",
    "rough", "round", "rusty", "shiny", "silent", "silver", "sleepy", "slow", "smooth", "soft", "solid",
    "sour", "spare", "steep", "sticky", "stormy", "sunny", "sweet", "swift", "tall", "tame", "tender",
    "thick", "tidy", "tiny", "vast", "warm", "wild", "windy", "wise", "young", "yellow"};
static const char *const nouns[] = {
    "anchor", "apple", "arrow", "badge", "basket", "beacon", "bell", "bicycle", "blanket", "boat", "bottle",
    "bridge", "brush", "bucket", "button", "cabin", "camera", "candle", "canyon", "carpet", "castle", "cellar",
    "chair", "chimney", "circle", "cliff", "clock", "cloud", "coin", "comet", "compass", "cottage", "crayon",
    "crown", "cup", "curtain", "desert", "diamond", "dolphin", "door", "dragon", "drum", "eagle", "engine",
    "falcon", "feather", "fence", "field", "flag", "flute", "forest", "fountain", "garden", "gate", "glacier",
    "guitar", "hammer", "harbor", "helmet", "hill", "island", "jacket", "jungle", "kettle", "kite", "ladder",
    "lake", "lamp", "lantern", "leaf", "lemon", "library", "lion", "magnet", "maple", "market", "meadow",
    "mirror", "monkey", "mountain", "nest", "ocean", "orchard", "otter", "oven", "paddle", "palace", "parrot",
    "pencil", "pepper", "piano", "pillow", "planet", "pocket", "pond", "puzzle", "rabbit", "radio", "river",
    "robot", "rocket", "saddle", "sail", "scarf", "shell", "shovel", "spoon", "station", "statue", "stone",
    "tiger", "tower", "tractor", "trumpet", "tunnel", "turtle", "valley", "violin", "wagon", "wallet",
    "whistle", "window", "wizard", "wolf", "yacht", "zebra"};
static const char *const verbs[] = {
    "admired", "borrowed", "built", "carried", "chased", "cleaned", "climbed", "counted", "crossed",
    "discovered", "dropped", "found", "followed", "gathered", "guarded", "helped", "hid", "joined", "kept",
    "lifted", "lost", "mended", "moved", "noticed", "opened", "painted", "passed", "planted", "pulled",
    "pushed", "raised", "reached", "repaired", "sold", "shared", "showed", "sketched", "studied", "touched",
    "visited", "washed", "watched", "wrapped", "measured", "polished", "remembered"};
static const char *const advs[] = {"slowly", "quietly", "often", "never", "always", "rarely", "gladly",
                                   "carefully", "suddenly", "twice", "again", "happily"};
static const char *const preps[] = {"near", "behind", "beside", "under", "across", "beyond", "above", "inside",
                                    "past", "toward"};
#define LEN(a) ((int)(sizeof a / sizeof a[0]))
#define PICK(r, a) (a[stats_rng_below(r, (uint64_t)LEN(a))])

/* The noise haystack, repeated: sentences that say nothing. */
static const char noise_text[] = "The grass is green. The sky is blue. The snow is white. The night is dark. "
                                 "On and on it goes.";

/* Words the list kinds pad with before the question, as many as the last
 * few ids need (then the last one swapped for a pad word of another length). */
static const char pad_text[] =
    "That is the end of the text, and the question about it comes next, so take a moment to read it once more "
    "with care, think it through in your own way, and then give the answer as well as you can, in as few words "
    "as it needs and with nothing else at all before or after it, because only the answer itself is wanted here "
    "and every other word would be in the way of it.";

/* Most sentences a made haystack holds before it is cycled. */
#define HAY_MAX_SENTENCES 8192

/* One essay-like sentence from the word lists, into b. */
static void essay_sentence(StatsRng *r, TaskBuf *b) {
    static const char *const dets[] = {"Every", "Each", "One", "That", "This"};
    switch (stats_rng_below(r, 6)) {
    case 0: tasks_plan_put(b, "The %s %s %s the %s. ", PICK(r, adjs), PICK(r, nouns), PICK(r, verbs), PICK(r, nouns)); break;
    case 1:
        tasks_plan_put(b, "%s %s %s a %s %s %s the %s. ", PICK(r, dets), PICK(r, nouns), PICK(r, verbs), PICK(r, adjs),
                       PICK(r, nouns), PICK(r, preps), PICK(r, nouns));
        break;
    case 2: tasks_plan_put(b, "In the %s %s, the %s %s %s. ", PICK(r, adjs), PICK(r, nouns), PICK(r, nouns), PICK(r, verbs), PICK(r, advs)); break;
    case 3:
        tasks_plan_put(b, "It seemed %s, so the %s %s the %s %s the %s %s. ", PICK(r, adjs), PICK(r, nouns),
                       PICK(r, verbs), PICK(r, nouns), PICK(r, preps), PICK(r, adjs), PICK(r, nouns));
        break;
    case 4: tasks_plan_put(b, "Nobody %s the %s, and the %s %s %s. ", PICK(r, verbs), PICK(r, nouns), PICK(r, nouns), PICK(r, verbs), PICK(r, advs)); break;
    default: tasks_plan_put(b, "Later the %s %s %s the %s %s. ", PICK(r, adjs), PICK(r, nouns), PICK(r, verbs), PICK(r, nouns), PICK(r, advs)); break;
    }
}

/* A key as RULER's word keys are, an adjective and a noun ("misty-harbor"). */
static void word_key(StatsRng *r, char out[TASK_REF_MAX]) { snprintf(out, TASK_REF_MAX, "%s-%s", PICK(r, adjs), PICK(r, nouns)); }

/* A random version-4 UUID, as RULER's uuid4 values are formatted. */
static void uuid_value(StatsRng *r, char out[TASK_REF_MAX]) {
    uint64_t a = stats_rng_next(r), b = stats_rng_next(r);
    snprintf(out, TASK_REF_MAX, "%08x-%04x-4%03x-%x%03x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)a & 0xfff, 8 + (unsigned)(b >> 62), (unsigned)(b >> 48) & 0xfff,
             (unsigned long long)(b & 0xffffffffffffull));
}

/* A seven-digit number, as RULER's number values are. */
static void number_value(StatsRng *r, char out[TASK_REF_MAX]) {
    snprintf(out, TASK_REF_MAX, "%d", 1000000 + (int)stats_rng_below(r, 9000000));
}

/* 1 when s is among set[0..n). */
static int among(const char *s, char set[][TASK_REF_MAX], int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, set[i])) return 1;
    return 0;
}

/* A key or value of the kind asked, not among used[0..n). */
static void fresh(StatsRng *r, int uuid, int number, char used[][TASK_REF_MAX], int n, char out[TASK_REF_MAX]) {
    do {
        if (uuid) uuid_value(r, out);
        else if (number) number_value(r, out);
        else word_key(r, out);
    } while (among(out, used, n));
}

typedef enum { HAY_NOISE, HAY_ESSAY, HAY_NEEDLES } Hay;

/* The needle kinds as RULER's configuration sets them: the haystack, the
 * key and value types, and how many keys, values a key and keys asked. */
static const struct {
    TaskKind kind;
    Hay hay;
    int uuid_keys, uuid_values, keys, values, queries;
} niah_rows[] = {
    {TASK_NIAH_SINGLE_1, HAY_NOISE, 0, 0, 1, 1, 1},   {TASK_NIAH_SINGLE_2, HAY_ESSAY, 0, 0, 1, 1, 1},
    {TASK_NIAH_SINGLE_3, HAY_ESSAY, 0, 1, 1, 1, 1},   {TASK_NIAH_MULTIKEY_1, HAY_ESSAY, 0, 0, 4, 1, 1},
    {TASK_NIAH_MULTIKEY_2, HAY_NEEDLES, 0, 0, 1, 1, 1}, {TASK_NIAH_MULTIKEY_3, HAY_NEEDLES, 1, 1, 1, 1, 1},
    {TASK_NIAH_MULTIVALUE, HAY_ESSAY, 0, 0, 1, 4, 1}, {TASK_NIAH_MULTIQUERY, HAY_ESSAY, 0, 0, 4, 1, 4},
};

/* A needle statement, the one sentence every needle kind hides. */
static void needle_text(char *out, size_t n, int uuid_values, const char *key, const char *value) {
    snprintf(out, n, "One special magic %s for %.47s is %.47s.", uuid_values ? "UUID" : "number", key, value);
}

/* Sentences a made haystack of the context needs (each costs at least
 * per ids), bounded: past the bound the haystack is cycled. */
static int hay_sentences(int context, int per) {
    int s = context / per + 16;
    return s > HAY_MAX_SENTENCES ? HAY_MAX_SENTENCES : s;
}

/* The haystack of kind h into p->hay; keys[0..n_keys) are the item's own,
 * which no distractor needle may name. */
static int make_hay(StatsRng *r, Hay h, int context, int uuid_keys, int uuid_values, char keys[][TASK_REF_MAX],
                    int n_keys, TaskPlan *p, Err *e) {
    if (h == HAY_NOISE) return tasks_plan_words(&p->hay, noise_text, e);
    TaskBuf b = {0};
    int n = hay_sentences(context, h == HAY_ESSAY ? 6 : 10);
    for (int i = 0; i < n && !b.oom; i++) {
        if (h == HAY_ESSAY) {
            essay_sentence(r, &b);
            continue;
        }
        char key[TASK_REF_MAX], value[TASK_REF_MAX], s[TASK_STMT_MAX + 2 * TASK_REF_MAX];
        fresh(r, uuid_keys, 0, keys, n_keys, key);
        fresh(r, uuid_values, !uuid_values, NULL, 0, value);
        needle_text(s, sizeof s, uuid_values, key, value);
        tasks_plan_put(&b, "%s ", s);
    }
    int rc = b.oom ? err_set(e, "out of memory") : tasks_plan_words(&p->hay, b.s, e);
    free(b.s);
    return rc;
}

/* keys[0..n) as a question names them: "a", "a and b", "a, b, and c". */
static void key_list(char *out, size_t cap, char keys[][TASK_REF_MAX], const int *order, int n) {
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < n && o < cap; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i == 0 ? "" : i == n - 1 ? (n > 2 ? ", and " : " and ") : ", ",
                              keys[order[i]]);
}

/* refs[0..n) joined by ", " into the answer. */
static void join_refs(TaskPlan *p) {
    size_t o = 0;
    p->answer[0] = 0;
    for (int i = 0; i < p->n_refs && o < sizeof p->answer; i++)
        o += (size_t)snprintf(p->answer + o, sizeof p->answer - o, "%s%s", i ? ", " : "", p->refs[i]);
}

static int plan_niah(StatsRng *r, int row, int context, TaskPlan *p, Err *e) {
    int K = niah_rows[row].keys, V = niah_rows[row].values, Q = niah_rows[row].queries;
    int uk = niah_rows[row].uuid_keys, uv = niah_rows[row].uuid_values;
    char keys[4][TASK_REF_MAX], vals[16][TASK_REF_MAX];
    for (int k = 0; k < K; k++) fresh(r, uk, 0, keys, k, keys[k]);
    for (int i = 0; i < K * V; i++) fresh(r, uv, !uv, vals, i, vals[i]);
    int order[4] = {0, 1, 2, 3};
    tasks_plan_shuffle(r, order, K); /* the keys asked: the first Q of a drawn order */
    for (int k = 0; k < K; k++)
        for (int v = 0; v < V; v++) {
            int s = k * V + v, asked = 0;
            needle_text(p->stmt[s], sizeof p->stmt[s], uv, keys[k], vals[s]);
            for (int q = 0; q < Q; q++) asked |= order[q] == k;
            p->needle[s] = asked;
        }
    p->n_stmt = K * V;
    tasks_plan_depths(r, p->depth, p->n_stmt);
    for (int q = 0; q < Q; q++)
        for (int v = 0; v < V; v++) snprintf(p->refs[p->n_refs++], TASK_REF_MAX, "%s", vals[order[q] * V + v]);
    join_refs(p);
    const char *type = uv ? "UUID" : "number";
    char query[4 * TASK_REF_MAX + 16];
    key_list(query, sizeof query, keys, order, Q);
    int one = p->n_refs == 1;
    if (one)
        snprintf(p->intro_buf, sizeof p->intro_buf, "A special magic %s is hidden in the text below. Memorize it: "
                 "you will be asked about the %s afterwards.", type, type);
    else
        snprintf(p->intro_buf, sizeof p->intro_buf, "Some special magic %ss are hidden in the text below. Memorize "
                 "them: you will be asked about the %ss afterwards.", type, type);
    p->intro = p->intro_buf;
    snprintf(p->question, sizeof p->question, "Which special magic %s%s for %s does the text above give? The special "
             "magic %s%s for %s given in the text above %s", type, one ? "" : "s", query, type, one ? "" : "s", query,
             one ? "is" : "are");
    return make_hay(r, niah_rows[row].hay, context, uk, uv, keys, K, p, e);
}

/* RULER's variable tracking: one chain of four hops (five variables of
 * five capitals) through noise, every variable holding the value asked. */
static int plan_vt(StatsRng *r, int context, TaskPlan *p, Err *e) {
    enum { VARS = 5 };
    int value = 10000 + (int)stats_rng_below(r, 90000);
    for (int i = 0; i < VARS; i++) {
        do {
            for (int c = 0; c < 5; c++) p->refs[i][c] = (char)('A' + stats_rng_below(r, 26));
            p->refs[i][5] = 0;
        } while (among(p->refs[i], p->refs, i));
        char x[8], y[8]; /* copies: the statement and the names live in one plan */
        memcpy(x, p->refs[i], 6), memcpy(y, p->refs[i ? i - 1 : 0], 6);
        if (i == 0) snprintf(p->stmt[i], sizeof p->stmt[i], "VAR %s = %d.", x, value);
        else snprintf(p->stmt[i], sizeof p->stmt[i], "VAR %s = VAR %s.", x, y);
        p->needle[i] = 1;
    }
    p->n_stmt = p->n_refs = VARS;
    tasks_plan_depths(r, p->depth, VARS);
    join_refs(p);
    p->intro = "Keep track of the chain of variable assignments hidden in the text below.";
    snprintf(p->question, sizeof p->question, "Question: Which variables in the text above are given the value %d? "
             "Answer: Following the chain of assignments in the text above, %d variables are given the value %d. "
             "They are", value, VARS, value);
    (void)context;
    return make_hay(r, HAY_NOISE, context, 0, 0, NULL, 0, p, e);
}

int ruler_plan(StatsRng *r, TaskKind k, int context, TaskPlan *p, Err *e) {
    if (k == TASK_VT) return plan_vt(r, context, p, e);
    for (int i = 0; i < LEN(niah_rows); i++)
        if (niah_rows[i].kind == k) return plan_niah(r, i, context, p, e);
    return err_set(e, "%s is no needle or variable-tracking kind", task_name(k));
}

/* --- the list kinds: cwe and fwe ------------------------------------- */

int ruler_pad_words(TaskWords *w, Err *e) { return tasks_plan_words(w, pad_text, e); }

void ruler_put_pad(TaskBuf *b, const TaskWords *pad, int j, int w) {
    for (int i = 0; i < j; i++) tasks_plan_put(b, " %s", w >= 0 && i == j - 1 ? tasks_pad_words[w] : pad->w[i]);
}

/* Ids the prompt at (m, j, w) encodes to, or -1. */
static int list_count(const Tokenizer *tok, RulerText text, const void *ctx, const TaskWords *pad, int m, int j, int w,
                      int **ids, int *cap, Err *e) {
    size_t q;
    char *t = text(ctx, pad, m, j, w, &q);
    if (!t) return err_set(e, "out of memory");
    int n = tasks_plan_count(tok, t, ids, cap, e);
    free(t);
    return n;
}

/* The largest m whose unpadded prompt fits is found by bisection, then
 * padding is added word by word, the last swapped where one more word
 * overshoots; a few smaller m are tried if none lands. */
int ruler_fit(const Tokenizer *tok, TaskKind k, RulerText text, const void *ctx, const TaskWords *pad, int lo, int hi,
              int context, int fit[3], int **ids, int *cap, Err *e) {
    int n = list_count(tok, text, ctx, pad, lo, 0, -1, ids, cap, e);
    if (n < 0) return -1;
    if (n > context)
        return err_set(e, "context %d is too short for %s: its smallest prompt takes %d tokens, so at least %d", context, task_name(k), n, n);
    while (lo < hi) { /* the largest m in [lo, hi] that fits unpadded */
        int mid = lo + (hi - lo + 1) / 2;
        if ((n = list_count(tok, text, ctx, pad, mid, 0, -1, ids, cap, e)) < 0) return -1;
        if (n <= context) lo = mid;
        else hi = mid - 1;
    }
    for (int m = lo; m >= 1 && m > lo - 4; m--)
        for (int j = 0; j <= pad->n; j++) {
            if ((n = list_count(tok, text, ctx, pad, m, j, -1, ids, cap, e)) < 0) return -1;
            if (n == context) return fit[0] = m, fit[1] = j, fit[2] = -1, 0;
            if (n < context) continue;
            for (int w = 0; j > 0 && w < TASKS_N_PAD; w++) {
                if ((n = list_count(tok, text, ctx, pad, m, j, w, ids, cap, e)) < 0) return -1;
                if (n == context) return fit[0] = m, fit[1] = j, fit[2] = w, 0;
            }
            break;
        }
    return err_set(e, "could not fill exactly %d tokens of %s with this tokenizer (a context past what its "
                      "vocabulary covers is refused so)", context, task_name(k));
}

/* Make a list kind's item from its text and fitted size. */
static int list_item(const Tokenizer *tok, TaskKind k, RulerText text, const void *ctx, int lo, int hi, int context,
                     char refs[][TASK_REF_MAX], int n_refs, const char *answer, TaskItem *out, Err *e) {
    TaskWords pad = {0};
    int *ids = NULL, cap = 0, fit[3] = {0, 0, -1}, rc = -1;
    size_t q;
    memset(out, 0, sizeof *out);
    out->kind = k;
    if (ruler_pad_words(&pad, e) || ruler_fit(tok, k, text, ctx, &pad, lo, hi, context, fit, &ids, &cap, e))
        goto out;
    if (!(out->prompt = text(ctx, &pad, fit[0], fit[1], fit[2], &q)) || !(out->answer = strdup(answer))) {
        err_set(e, "out of memory");
        goto out;
    }
    out->n_tokens = tasks_plan_count(tok, out->prompt, &ids, &cap, e);
    if (out->n_tokens < 0 || tasks_plan_locate(tok, out, ids, out->n_tokens, NULL, 0, NULL, q, e)) goto out;
    rc = tasks_plan_refs(out, k, refs, n_refs, e);
out:
    free(ids);
    tasks_plan_words_free(&pad);
    if (rc) task_item_free(out);
    return rc;
}

/* cwe's vocabulary: every listed word, then adjective-noun pairs, which a
 * list of more words than the lists hold draws from instead (as RULER
 * turns to a larger word list). */
#define CWE_SINGLES (LEN(adjs) + LEN(nouns) + LEN(verbs))
#define CWE_PAIRS (LEN(adjs) * LEN(nouns))
#define CWE_COMMON 10

static void cwe_word(int i, char out[TASK_REF_MAX]) {
    if (i < LEN(adjs)) snprintf(out, TASK_REF_MAX, "%s", adjs[i]);
    else if (i < LEN(adjs) + LEN(nouns)) snprintf(out, TASK_REF_MAX, "%s", nouns[i - LEN(adjs)]);
    else if (i < CWE_SINGLES) snprintf(out, TASK_REF_MAX, "%s", verbs[i - LEN(adjs) - LEN(nouns)]);
    else snprintf(out, TASK_REF_MAX, "%s-%s", adjs[(i - CWE_SINGLES) / LEN(nouns)], nouns[(i - CWE_SINGLES) % LEN(nouns)]);
}

typedef struct {
    int *word;     /* distinct vocabulary indices: the example's, then the list's */
    int n_example; /* the example's distinct words (its first CWE_COMMON common) */
    int ex_common, ex_rare, common, rare; /* how often a common and a rare word occur: example, list */
    StatsRng ex_order, order; /* the shuffles' streams (copied for every size tried) */
} Cwe;

/* "1. w 2. w …" of words[0..n) (the first CWE_COMMON `common` times each,
 * the rest `rare` times), shuffled by a copy of order. */
static void cwe_list(TaskBuf *b, const int *words, int n, int common, int rare, StatsRng order) {
    int total = CWE_COMMON * common + (n - CWE_COMMON) * rare, *seq = malloc((size_t)(total > 0 ? total : 1) * sizeof *seq);
    if (!seq) { b->oom = 1; return; }
    for (int i = 0, t = 0; i < n; i++)
        for (int r = 0; r < (i < CWE_COMMON ? common : rare); r++) seq[t++] = words[i];
    tasks_plan_shuffle(&order, seq, total);
    char w[TASK_REF_MAX];
    for (int t = 0; t < total; t++) {
        cwe_word(seq[t], w);
        tasks_plan_put(b, "%s%d. %s", t ? " " : "", t + 1, w);
    }
    free(seq);
}

static const char cwe_intro[] = "Here is a numbered list of words in which some words occur far more often than the "
                                "rest. Remember the words that occur most often.";
static const char cwe_question[] = "Question: Which 10 words occur most often in the list above? Answer: The 10 "
                                   "words that occur most often in the list above are:";

/* The common words of words[0..) as the answer numbers them, "1. w 2. w …". */
static void cwe_answer(TaskBuf *b, const int *words) {
    char w[TASK_REF_MAX];
    for (int i = 0; i < CWE_COMMON; i++) {
        cwe_word(words[i], w);
        tasks_plan_put(b, "%s%d. %s", i ? " " : "", i + 1, w);
    }
}

static char *cwe_text(const void *ctx, const TaskWords *pad, int m, int j, int w, size_t *q_at) {
    const Cwe *c = ctx;
    TaskBuf b = {0};
    /* a worked example first, its answer written out, as RULER's one-shot prompt has */
    tasks_plan_put(&b, "%s ", cwe_intro);
    cwe_list(&b, c->word, c->n_example, c->ex_common, c->ex_rare, c->ex_order);
    tasks_plan_put(&b, " %s ", cwe_question);
    cwe_answer(&b, c->word);
    tasks_plan_put(&b, " %s ", cwe_intro);
    cwe_list(&b, c->word + c->n_example, m, c->common, c->rare, c->order);
    ruler_put_pad(&b, pad, j, w);
    tasks_plan_put(&b, " ");
    *q_at = b.n;
    tasks_plan_put(&b, "%s", cwe_question);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

/* c's words: vocabulary indices from .. from + n in an order drawn from
 * a copy of r (so drawing again from the pairs starts where the listed
 * words did), and the shuffles' streams. */
static int cwe_draw(Cwe *c, const StatsRng *r, int from, int n) {
    StatsRng s = *r;
    for (int i = 0; i < n; i++) c->word[i] = from + i;
    tasks_plan_shuffle(&s, c->word, n);
    c->ex_order = stats_rng(stats_rng_next(&s)), c->order = stats_rng(stats_rng_next(&s));
    return 0;
}

/* RULER's common-words extraction: ten words repeated 6 times among words
 * once each below 4096 ids (30 and 3 from 4096), after one worked example
 * of 20 words (3 and 1; 40 words, 10 and 3, from 4096). */
static int make_cwe(const Tokenizer *tok, StatsRng *r, int context, TaskItem *out, Err *e) {
    int big = context >= 4096;
    Cwe c = {.n_example = big ? 40 : 20, .ex_common = big ? 10 : 3, .ex_rare = big ? 3 : 1,
             .common = big ? 30 : 6, .rare = big ? 3 : 1};
    int most = context / (2 * c.rare) + CWE_COMMON + 1; /* every listed word costs two ids at least */
    int *all = malloc((size_t)(CWE_SINGLES + CWE_PAIRS) * sizeof *all);
    if (!all) return err_set(e, "out of memory");
    c.word = all;
    /* the listed words when they are enough (the list at its most fills more than the context), else the pairs */
    int from = 0, vocab = CWE_SINGLES, rc = cwe_draw(&c, r, from, vocab);
    if (most + c.n_example > vocab) {
        TaskWords none = {0};
        int *ids = NULL, cap = 0, n = list_count(tok, cwe_text, &c, &none, vocab - c.n_example, 0, -1, &ids, &cap, e);
        free(ids);
        if (n < 0) { free(all); return -1; }
        if (n <= context) from = CWE_SINGLES, vocab = CWE_PAIRS;
    }
    if (from) rc = cwe_draw(&c, r, from, vocab);
    if (most > vocab - c.n_example) most = vocab - c.n_example;
    char refs[CWE_COMMON][TASK_REF_MAX];
    for (int i = 0; i < CWE_COMMON; i++) cwe_word(all[c.n_example + i], refs[i]);
    TaskBuf ans = {0};
    cwe_answer(&ans, all + c.n_example);
    rc = rc ? rc : ans.oom ? err_set(e, "out of memory")
                     : list_item(tok, TASK_CWE, cwe_text, &c, CWE_COMMON + 1, most, context, refs, CWE_COMMON, ans.s, out, e);
    free(ans.s), free(all);
    return rc;
}

/* fwe: coded words of six letters, the first of them "..." (noise, as in
 * RULER), word k occurring floor(N k^-2 / zeta(2)) times. */
#define FWE_MAX_VOCAB 4096
#define FWE_ZETA2 1.6449340668482264 /* pi^2 / 6 */

typedef struct {
    char (*vocab)[8];
    int n_vocab;
    StatsRng order;
} Fwe;

/* How often word k (from 0) occurs among about n words. */
static int fwe_count(int n, int k) { return (int)((double)n / ((double)(k + 1) * (k + 1) * FWE_ZETA2)); }

static const char fwe_intro[] = "Read the coded text below and keep count of how often each coded word occurs: "
                                "three of them occur more often than the others.";
static const char fwe_question[] = "Question: Give no explanation, and ignore the dots '...'. Which three coded words "
                                   "occur most often in the coded text above? Answer: The three coded words that "
                                   "occur most often in the coded text above are:";

static char *fwe_text(const void *ctx, const TaskWords *pad, int n, int j, int w, size_t *q_at) {
    const Fwe *f = ctx;
    TaskBuf b = {0};
    int total = 0;
    for (int k = 0; k < f->n_vocab; k++) total += fwe_count(n, k);
    int *seq = malloc((size_t)(total > 0 ? total : 1) * sizeof *seq);
    if (!seq) return NULL;
    for (int k = 0, t = 0; k < f->n_vocab; k++)
        for (int c = fwe_count(n, k); c > 0; c--) seq[t++] = k;
    StatsRng order = f->order;
    tasks_plan_shuffle(&order, seq, total);
    tasks_plan_put(&b, "%s", fwe_intro);
    for (int t = 0; t < total; t++) tasks_plan_put(&b, " %s", f->vocab[seq[t]]);
    free(seq);
    ruler_put_pad(&b, pad, j, w);
    tasks_plan_put(&b, " ");
    *q_at = b.n;
    tasks_plan_put(&b, "%s", fwe_question);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}

/* RULER's frequent-words extraction (alpha 2): a vocabulary of context / 50
 * coded words (at least 8, at most FWE_MAX_VOCAB), the three most frequent
 * after the dots asked. The size searched is N; the least is the one where
 * the fourth word still occurs more often than the fifth. */
static int make_fwe(const Tokenizer *tok, StatsRng *r, int context, TaskItem *out, Err *e) {
    Fwe f = {.n_vocab = context / 50};
    if (f.n_vocab < 8) f.n_vocab = 8;
    if (f.n_vocab > FWE_MAX_VOCAB) f.n_vocab = FWE_MAX_VOCAB;
    if (!(f.vocab = malloc((size_t)f.n_vocab * sizeof *f.vocab))) return err_set(e, "out of memory");
    snprintf(f.vocab[0], sizeof f.vocab[0], "...");
    for (int k = 1; k < f.n_vocab; k++) {
        int dup;
        do {
            for (int c = 0; c < 6; c++) f.vocab[k][c] = (char)('a' + stats_rng_below(r, 26));
            f.vocab[k][6] = 0, dup = 0;
            for (int i = 1; i < k && !dup; i++) dup = !strcmp(f.vocab[i], f.vocab[k]);
        } while (dup);
    }
    f.order = stats_rng(stats_rng_next(r));
    int lo = 1;
    while (fwe_count(lo, 3) <= fwe_count(lo, 4)) lo++;
    char refs[3][TASK_REF_MAX], answer[3 * TASK_REF_MAX + 8];
    for (int i = 0; i < 3; i++) snprintf(refs[i], TASK_REF_MAX, "%s", f.vocab[1 + i]);
    snprintf(answer, sizeof answer, "%s, %s, %s", refs[0], refs[1], refs[2]);
    int rc = list_item(tok, TASK_FWE, fwe_text, &f, lo, context > lo ? context : lo, context, refs, 3, answer, out, e);
    free(f.vocab);
    return rc;
}

int ruler_make_list(const Tokenizer *tok, TaskKind k, StatsRng *r, int context, TaskItem *out, Err *e) {
    if (k == TASK_CWE) return make_cwe(tok, r, context, out, e);
    if (k == TASK_FWE) return make_fwe(tok, r, context, out, e);
    return err_set(e, "%s is no list kind", task_name(k));
}
