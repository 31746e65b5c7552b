/* tasks.c — the generator: intro, filler with the needle statements at drawn depths, the question.
 *
 * The task generator (tasks.h). A prompt is an intro, filler
 * words with the needle statements inserted at drawn depths, and the
 * question; the filler's word count and its last word are searched until
 * the whole prompt encodes to exactly the context, and the positions are
 * read off the final encoding, never assumed from the pieces. */
#include "engine/tasks/tasks.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stats.h"
#include "engine/tasks/ruler.h"
#include "engine/tasks/tasks_plan.h"


/* The haystack, read word by word and cycled: plain sentences that say
 * nothing a question could ask about. */
static const char filler_text[] =
    "The river runs past the old mill and the children play on the grass. A small dog sleeps under the table "
    "while the rain falls on the roof. Every morning the baker opens his shop and the street smells of bread. "
    "The hills are green in spring and brown at the end of summer. An old man walks to the lake and feeds the "
    "ducks. The wind moves the tall trees and the clouds drift over the town.";




typedef TaskPlan Plan;
typedef TaskBuf Buf;
typedef TaskWords Words;
#define buf_put tasks_plan_put


/* A five-digit number not already in used[0..n). */
static int fresh_value(StatsRng *r, const int *used, int n) {
    for (;;) {
        int v = 10000 + (int)stats_rng_below(r, 90000), dup = 0;
        for (int i = 0; i < n; i++) dup |= used[i] == v;
        if (!dup) return v;
    }
}

/* A lowercase name of `letters` letters (1 to 3) not already in
 * used[0..n): 26 one-letter names cover the most an item asks for (else
 * the draw would never end). */
static void fresh_name(StatsRng *r, int letters, char used[][4], int n, char out[4]) {
    _Static_assert(TASK_RECALL_MAX_KEYS + 1 <= 26 && TASK_MAX_NEEDLES <= 26, "one-letter names run out");
    for (;;) {
        for (int i = 0; i < letters; i++) out[i] = (char)('a' + stats_rng_below(r, 26));
        out[letters] = 0;
        int dup = 0;
        for (int i = 0; i < n; i++) dup |= !strcmp(used[i], out);
        if (!dup) return;
    }
}


static void plan_passkey(StatsRng *r, Plan *p, int local) {
    int v = fresh_value(r, NULL, 0);
    p->intro = "A pass key is hidden in the text below. Find it and remember it.";
    /* the control keeps its statement short: the window must reach past it */
    snprintf(p->stmt[0], sizeof p->stmt[0], local ? "The pass key is %d." : "The pass key is %d. Remember it.", v);
    snprintf(p->answer, sizeof p->answer, "%d", v);
    snprintf(p->question, sizeof p->question, "What is the pass key? The pass key is");
    p->n_stmt = 1, p->needle[0] = 1;
    tasks_plan_depths(r, p->depth, 1);
    if (local) p->depth[0] = 2; /* right before the question */
}

/* The question about key as a prompt ends with it ("What is the value of
 * key gzf? The value of key gzf is"), or, when val >= 0, asked again with
 * its answer written out (" 48213." after it): one wording for every kind
 * that asks a key. */
static void key_question(char *out, size_t n, const char *key, int val) {
    int w = snprintf(out, n, "What is the value of key %s? The value of key %s is", key, key);
    if (val >= 0 && w > 0 && (size_t)w < n) snprintf(out + w, n - (size_t)w, " %d.", val);
}


/* With reask > 0, that many questions follow the statements and the
 * filler, each about a key drawn from all of them (with replacement), its
 * value written out: retrievals the loss scores that only matching the key
 * answers. With replacement because asking every other key once lets a
 * model answer the last question by elimination, never matching a key (it
 * did). These draws come last, so the plain item's bytes are unchanged. */
static void plan_multikey(StatsRng *r, Plan *p, int keys, int letters, int reask) {
    int val[TASK_MAX_NEEDLES] = {0}; /* keys >= 2 fills what is read; -O2 cannot see that */
    char key[TASK_MAX_NEEDLES][4];
    p->intro = "Some keys and their values are hidden in the text below. Remember them.";
    for (int i = 0; i < keys; i++) {
        val[i] = fresh_value(r, val, i);
        fresh_name(r, letters, key, i, key[i]);
        snprintf(p->stmt[i], sizeof p->stmt[i], "The value of key %s is %d.", key[i], val[i]);
    }
    int ask = (int)stats_rng_below(r, keys);
    for (int i = 0; i < keys; i++) p->needle[i] = i == ask;
    snprintf(p->answer, sizeof p->answer, "%d", val[ask]);
    key_question(p->question, sizeof p->question, key[ask], -1);
    p->n_stmt = keys;
    tasks_plan_depths(r, p->depth, keys); /* statement order is key order: the depths only need to ascend */
    for (int j = 0; j < reask; j++, p->n_stmt++) {
        int i = (int)stats_rng_below(r, (uint64_t)keys);
        key_question(p->stmt[p->n_stmt], sizeof p->stmt[p->n_stmt], key[i], val[i]);
        p->needle[p->n_stmt] = 0, p->depth[p->n_stmt] = 2; /* past every filler word, before the question */
    }
}

static void plan_vt(StatsRng *r, Plan *p, int letters) {
    enum { CHAINS = 2, HOPS = 3 };
    char name[CHAINS * HOPS][4];
    int val[CHAINS];
    p->intro = "Some variables are assigned in the text below. Follow the assignments.";
    for (int i = 0; i < CHAINS * HOPS; i++) fresh_name(r, letters, name, i, name[i]);
    for (int c = 0; c < CHAINS; c++) val[c] = fresh_value(r, val, c);
    int ask = (int)stats_rng_below(r, CHAINS);
    /* hop h of every chain before hop h + 1 of any: each chain reads in order */
    for (int h = 0; h < HOPS; h++)
        for (int c = 0; c < CHAINS; c++) {
            int i = h * CHAINS + c;
            const char *x = name[c * HOPS + h];
            if (h == 0) snprintf(p->stmt[i], sizeof p->stmt[i], "VAR %s = %d.", x, val[c]);
            else snprintf(p->stmt[i], sizeof p->stmt[i], "VAR %s = VAR %s.", x, name[c * HOPS + h - 1]);
            p->needle[i] = c == ask;
        }
    snprintf(p->answer, sizeof p->answer, "%d", val[ask]);
    const char *last = name[ask * HOPS + HOPS - 1];
    snprintf(p->question, sizeof p->question, "What is the value of VAR %s? The value of VAR %s is", last, last);
    p->n_stmt = CHAINS * HOPS;
    tasks_plan_depths(r, p->depth, p->n_stmt);
}

/* Training documents: facts stated in filler and asked again later with
 * their answers written out (a pass key and context / 128 keys, or the
 * count asked for, which makes a denser document; each asked once, a
 * question never before its statement), then one fact asked at the end.
 * Every earlier question is a retrieval the next-token loss scores, at a
 * distance of its own, so one item teaches copying from many distances
 * where the evaluation kinds teach it from one. */
static void plan_recall(StatsRng *r, Plan *p, int context, int keys, int letters) {
    enum { MAX_FACTS = TASK_RECALL_MAX_KEYS + 1 };
    int n_keys = keys ? keys : context / 128, n_facts, val[MAX_FACTS], stated = 0, asked = 0;
    int order[MAX_FACTS], perm[MAX_FACTS];
    char key[MAX_FACTS][4];
    if (n_keys < 1) n_keys = 1;
    if (n_keys > MAX_FACTS - 1) n_keys = MAX_FACTS - 1;
    n_facts = n_keys + 1; /* fact 0 is the pass key */
    for (int i = 0; i < n_facts; i++) {
        val[i] = fresh_value(r, val, i);
        fresh_name(r, letters, key, i, key[i]);
    }
    for (int i = 0; i < n_facts; i++) perm[i] = i; /* the order the facts are stated in */
    tasks_plan_shuffle(r, perm, n_facts);
    int ask = stats_rng_below(r, 2) ? 0 : 1 + (int)stats_rng_below(r, (uint64_t)n_keys);
    p->intro = ask == 0 ? "A pass key is hidden in the text below. Find it and remember it."
                        : "Some keys and their values are hidden in the text below. Remember them.";
    /* each slot states the next fact or asks one stated and not yet asked,
     * as a coin falls where both are possible */
    while (asked < n_facts) {
        int state = stated < n_facts && (stated == asked || stats_rng_below(r, 2));
        int i = p->n_stmt++;
        if (state) {
            int f = perm[stated];
            if (f == 0) snprintf(p->stmt[i], sizeof p->stmt[i], "The pass key is %d. Remember it.", val[0]);
            else snprintf(p->stmt[i], sizeof p->stmt[i], "The value of key %s is %d.", key[f], val[f]);
            p->needle[i] = f == ask;
            order[stated++] = f;
        } else {
            /* any fact stated and not yet asked: order[asked … stated) holds them */
            int k = asked + (int)stats_rng_below(r, (uint64_t)(stated - asked)), f = order[k];
            order[k] = order[asked], order[asked++] = f;
            if (f == 0) snprintf(p->stmt[i], sizeof p->stmt[i], "What is the pass key? The pass key is %d.", val[0]);
            else key_question(p->stmt[i], sizeof p->stmt[i], key[f], val[f]);
        }
    }
    snprintf(p->answer, sizeof p->answer, "%d", val[ask]);
    if (ask == 0) snprintf(p->question, sizeof p->question, "What is the pass key? The pass key is");
    else key_question(p->question, sizeof p->question, key[ask], -1);
    tasks_plan_depths(r, p->depth, p->n_stmt);
}

/* Where statement i goes among m filler words: the sentence end nearest
 * below its depth (statements after word k-1, k in 0 … m). */
static int insert_at(const Words *f, double depth, int m) {
    if (depth > 1) return m;
    int k = (int)(depth * m);
    while (k > 0 && f->w[(k - 1) % f->n][strlen(f->w[(k - 1) % f->n]) - 1] != '.') k--;
    return k;
}

/* The prompt with m filler words (the last one tasks_pad_words[pad] when pad >=
 * 0), then j words of tail padding when tail is set (RULER's kinds:
 * ruler_put_pad), and the byte spans of the statements and the question. */
static char *assemble(const Plan *p, const Words *f, int m, int pad, size_t span[][2], size_t *q_at,
                      const TaskWords *tail, int j, int w) {
    Buf b = {0};
    int at[TASK_MAX_STMTS];
    for (int i = 0; i < p->n_stmt; i++) at[i] = insert_at(f, p->depth[i], m);
    buf_put(&b, "%s", p->intro);
    for (int k = 0, s = 0; k <= m; k++) {
        for (; s < p->n_stmt && at[s] == k; s++) {
            buf_put(&b, " ");
            span[s][0] = b.n;
            buf_put(&b, "%s", p->stmt[s]);
            span[s][1] = b.n;
        }
        if (k < m) buf_put(&b, " %s", pad >= 0 && k == m - 1 ? tasks_pad_words[pad] : f->w[k % f->n]);
    }
    if (tail) ruler_put_pad(&b, tail, j, w);
    buf_put(&b, " ");
    *q_at = b.n;
    buf_put(&b, "%s", p->question);
    if (b.oom) { free(b.s); return NULL; }
    return b.s;
}



/* The filler's size whose prompt encodes to exactly context ids: word
 * count from the tokens a word costs, then the last word among tasks_pad_words. */
static int size_filler(const Tokenizer *tok, TaskKind kind, const Plan *p, const Words *f, int context, int *m_out,
                       int *pad_out, int **ids, int *cap, Err *e) {
    size_t span[TASK_MAX_STMTS][2], q;
    char *t0 = assemble(p, f, 0, -1, span, &q, NULL, 0, -1), *t64 = assemble(p, f, 64, -1, span, &q, NULL, 0, -1);
    int base = -1, n64 = -1;
    if (!t0 || !t64) err_set(e, "out of memory");
    else if ((base = tasks_plan_count(tok, t0, ids, cap, e)) >= 0) n64 = tasks_plan_count(tok, t64, ids, cap, e);
    free(t0), free(t64);
    if (base < 0 || n64 < 0) return -1;
    if (context < base + 2)
        return err_set(e, "context %d is too short for %s: its statements and question alone take %d tokens, "
                          "so at least %d", context, task_name(kind), base, base + 2);
    double per = (n64 - base) / 64.0;
    int m = (int)((context - base) / per), tried[4096] = {0}, seen[4096] = {0};
    for (int it = 0; it < 200; it++) {
        if (m < 1) m = 1;
        char *t = assemble(p, f, m, -1, span, &q, NULL, 0, -1);
        int n = t ? tasks_plan_count(tok, t, ids, cap, e) : -1;
        free(t);
        if (n < 0) return -1;
        if (n == context) return *m_out = m, *pad_out = -1, 0;
        if (m < 4096) seen[m] = 1;
        if (abs(n - context) > 4 || (m < 4096 && tried[m])) {
            int step = (int)((context - n) / per), dir = n < context ? 1 : -1;
            /* a statement moving to another sentence end makes the count jump, and a
             * jump both ways would bounce between two sizes: step to one not seen */
            if (!step || (m + step >= 1 && m + step < 4096 && seen[m + step])) step = dir;
            m += step;
            continue;
        }
        if (m < 4096) tried[m] = 1;
        for (int k = 0; k < TASKS_N_PAD; k++) {
            t = assemble(p, f, m, k, span, &q, NULL, 0, -1);
            n = t ? tasks_plan_count(tok, t, ids, cap, e) : -1;
            free(t);
            if (n < 0) return -1;
            if (n == context) return *m_out = m, *pad_out = k, 0;
        }
        m += n < context ? 1 : -1;
    }
    return err_set(e, "could not fill exactly %d tokens with this tokenizer", context);
}

int task_keys_range(TaskKind k, int *lo, int *hi) {
    if (k == TASK_MULTIKEY) return *lo = 2, *hi = TASK_MAX_NEEDLES, 1;
    if (k == TASK_RECALL) return *lo = 1, *hi = TASK_RECALL_MAX_KEYS, 1;
    return 0;
}

int task_make(const Tokenizer *tok, const TaskSpec *spec, int index, TaskItem *out, Err *e) {
    TaskKind k = spec->kind;
    int context = spec->context, keys = spec->keys;
    int letters = spec->key_letters ? spec->key_letters : TASK_KEY_LETTERS;
    memset(out, 0, sizeof *out);
    out->kind = k;
    int lo = 0, hi = 0;
    if (keys && (!task_keys_range(k, &lo, &hi) || keys < lo || keys > hi))
        return err_usage(e, "a key count (%d) is for multikey items, 2 to %d, or recall items, 1 to %d", keys,
                         TASK_MAX_NEEDLES, TASK_RECALL_MAX_KEYS);
    if (letters < 1 || letters > TASK_KEY_LETTERS)
        return err_usage(e, "a key has 1 to %d letters, not %d", TASK_KEY_LETTERS, letters);
    if (task_is_ruler(k) && spec->key_letters)
        return err_usage(e, "%s names its keys as RULER does: a letter count is for the project's own kinds", task_name(k));
    if (spec->reask && (k != TASK_MULTIKEY || spec->reask < 0 || spec->reask > TASK_MAX_REASKS))
        return err_usage(e, "questions asked again (%d) are for multikey items, 1 to %d", spec->reask, TASK_MAX_REASKS);
    /* Not index × the generator's own increment: item i + 1's stream would
     * then be item i's one draw later (its keys item i's shifted by a
     * letter). Another odd constant puts neighbours' streams far apart;
     * item 0 is as before. */
    /* vt_value keeps the stream it had as vt, so its items are the bytes vt wrote */
    uint64_t salt = k == TASK_VT_VALUE ? (uint64_t)TASK_VT : (uint64_t)k;
    StatsRng r = stats_rng(spec->seed * 0x100000001b3ull + (uint64_t)index * 0xd1b54a32d192ed03ull + salt);
    if (k == TASK_CWE || k == TASK_FWE) return ruler_make_list(tok, k, &r, context, out, e);
    Plan p;
    memset(&p, 0, sizeof p);
    if (k == TASK_PASSKEY || k == TASK_LOCAL) plan_passkey(&r, &p, k == TASK_LOCAL);
    else if (k == TASK_MULTIKEY) plan_multikey(&r, &p, keys ? keys : TASK_KEYS, letters, spec->reask);
    else if (k == TASK_VT_VALUE) plan_vt(&r, &p, letters);
    else if (k == TASK_RECALL) plan_recall(&r, &p, context, keys, letters);
    else if (task_is_ruler(k)) {
        if (ruler_plan(&r, k, context, &p, e)) return -1;
    } else return err_set(e, "unknown task kind %d", (int)k);
    return tasks_plan_finish(tok, k, &p, context, out, e);
}

/* A RULER plan's prompt for ruler_fit: the plan, its haystack, and where
 * the spans go (written, though the fitter needs only the text). */
typedef struct {
    const Plan *p;
    const Words *f;
    size_t (*span)[2];
} PlanText;

static char *plan_text(const void *ctx, const TaskWords *pad, int m, int j, int w, size_t *q_at) {
    const PlanText *t = ctx;
    return assemble(t->p, t->f, m, -1, t->span, q_at, pad, j, w);
}

/* RULER's plans sized: haystack words (bisected), then tail padding. */
static int fit_ruler_plan(const Tokenizer *tok, TaskKind k, const Plan *p, const Words *f, const TaskWords *tail,
                          int context, int fit[3], int **ids, int *cap, Err *e) {
    size_t span[TASK_MAX_STMTS][2];
    PlanText t = {p, f, span};
    return ruler_fit(tok, k, plan_text, &t, tail, 0, context, context, fit, ids, cap, e);
}


int tasks_plan_finish(const Tokenizer *tok, TaskKind k, TaskPlan *p, int context, TaskItem *out, Err *e) {
    Words own = {0}, tail = {0}, *f = &p->hay;
    int *ids = NULL, cap = 0, m = 0, pad = -1, rc = -1, fit[3] = {0, 0, -1};
    size_t span[TASK_MAX_STMTS][2], q;
    memset(out, 0, sizeof *out);
    out->kind = k;
    if (f->n == 0) {
        if (tasks_plan_words(&own, filler_text, e)) goto out;
        f = &own;
    }
    if (task_is_ruler(k)) { /* padding before the question takes up the last ids: a haystack word may cost many */
        if (ruler_pad_words(&tail, e) || fit_ruler_plan(tok, k, p, f, &tail, context, fit, &ids, &cap, e)) goto out;
        m = fit[0];
    } else if (size_filler(tok, k, p, f, context, &m, &pad, &ids, &cap, e)) goto out;
    out->prompt = assemble(p, f, m, pad, span, &q, tail.n ? &tail : NULL, fit[1], fit[2]);
    if (!out->prompt || !(out->answer = strdup(p->answer))) {
        err_set(e, "out of memory");
        goto out;
    }
    out->n_tokens = tasks_plan_count(tok, out->prompt, &ids, &cap, e);
    if (out->n_tokens < 0 || tasks_plan_locate(tok, out, ids, out->n_tokens, span, p->n_stmt, p->needle, q, e)) goto out;
    for (int s = 0; s < p->n_stmt; s++)
        if (p->needle[s] && !(out->needles[out->n_needles++] = strdup(p->stmt[s]))) {
            err_set(e, "out of memory");
            goto out;
        }
    rc = tasks_plan_refs(out, k, p->refs, p->n_refs, e);
out:
    free(ids);
    tasks_plan_words_free(&own);
    tasks_plan_words_free(&tail);
    tasks_plan_words_free(&p->hay);
    if (rc) task_item_free(out);
    return rc;
}

