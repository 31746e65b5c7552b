/* tasks_plan.c — what every generator shares (tasks_plan.h): the kinds'
 * table and its metrics, the pad words, growing strings and word lists,
 * depths and shuffles, and reading an item's positions off its encoding.
 *
 * It calls neither generator (tasks.c, ruler.c), so both can call it
 * without a circle of calls between files. */
#include "engine/tasks/tasks_plan.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/stats.h"
#include "engine/tasks/tasks.h"

#define TASK_KIND_ROW(e, name, metric, ruler, about) {name, TASK_METRIC_##metric, ruler, about},
static const struct {
    const char *name;
    TaskMetric metric;
    int ruler;
    const char *about;
} task_kinds[TASK_COUNT] = {TASK_KINDS(TASK_KIND_ROW)};
#undef TASK_KIND_ROW

#define TASK_METRIC_WORD(e, name) name,
static const char *const task_metric_names[TASK_METRIC_COUNT] = {TASK_METRICS(TASK_METRIC_WORD)};
#undef TASK_METRIC_WORD

static int kind_ok(TaskKind k) { return (int)k >= 0 && k < TASK_COUNT; }

const char *task_name(TaskKind k) { return kind_ok(k) ? task_kinds[k].name : "?"; }

TaskMetric task_metric(TaskKind k) { return kind_ok(k) ? task_kinds[k].metric : TASK_METRIC_EXACT; }

int task_is_ruler(TaskKind k) { return kind_ok(k) && task_kinds[k].ruler; }

const char *task_about(TaskKind k) { return kind_ok(k) ? task_kinds[k].about : "?"; }

const char *task_metric_name(TaskMetric m) {
    return (int)m >= 0 && m < TASK_METRIC_COUNT ? task_metric_names[m] : "?";
}

int task_metric_parse(const char *s, TaskMetric *m) {
    for (int i = 0; i < TASK_METRIC_COUNT; i++)
        if (!strcmp(s, task_metric_names[i])) return *m = (TaskMetric)i, 0;
    return -1;
}

int task_parse(const char *flag, const char *s, TaskKind *k, Err *e) {
    for (int i = 0; i < TASK_COUNT; i++)
        if (!strcmp(s, task_kinds[i].name)) return *k = (TaskKind)i, 0;
    return err_usage(e, "%s '%s': expected one of %s (`ahascope tasks --list` says what each is)", flag, s, TASK_LIST);
}

int task_match_exact(const char *gen, size_t n, const char *answer) {
    size_t i = 0, a = strlen(answer);
    while (i < n && (gen[i] == ' ' || gen[i] == '\t')) i++;
    if (n - i < a || memcmp(gen + i, answer, a)) return 0;
    return i + a == n || !isalnum((unsigned char)gen[i + a]);
}

/* 1 when ref occurs in gen[0..n), A-Z and a-z alike. */
static int holds_nocase(const char *gen, size_t n, const char *ref) {
    size_t l = strlen(ref);
    if (l > n) return 0;
    for (size_t i = 0; i + l <= n; i++) {
        size_t j = 0;
        while (j < l && tolower((unsigned char)gen[i + j]) == tolower((unsigned char)ref[j])) j++;
        if (j == l) return 1;
    }
    return 0;
}

double task_score(TaskMetric m, const char *gen, size_t n, char *const *refs, int n_refs) {
    if (n_refs < 1) return 0;
    if (m == TASK_METRIC_EXACT) return task_match_exact(gen, n, refs[0]);
    int found = 0;
    for (int i = 0; i < n_refs; i++) found += holds_nocase(gen, n, refs[i]);
    if (m == TASK_METRIC_PART) return found > 0;
    return (double)found / n_refs;
}

int task_gen_budget(TaskMetric m, int answer_ids) { return answer_ids + (m == TASK_METRIC_EXACT ? 1 : 8); }

/* The pad words (tasks_plan.h): many lengths, so that
 * some choice lands the count exactly on the context. */
const char *const tasks_pad_words[TASKS_N_PAD] = {"a", "I", "it", "so", "the", "sun", "tree", "cold", "house", "birds",
                                                 "garden", "yellow", "morning", "blanket", "mountain", "sandwich",
                                                 "yesterday", "butterflies", "wonderfully", "grandmother"};

int tasks_plan_words(TaskWords *w, const char *text, Err *e) {
    size_t len = strlen(text), most = len / 2 + 1;
    char *save = NULL;
    memset(w, 0, sizeof *w);
    if (!(w->buf = strdup(text)) || !(w->w = malloc(most * sizeof *w->w))) {
        tasks_plan_words_free(w);
        return err_set(e, "out of memory");
    }
    for (char *p = strtok_r(w->buf, " ", &save); p && (size_t)w->n < most; p = strtok_r(NULL, " ", &save))
        w->w[w->n++] = p;
    return 0;
}

void tasks_plan_words_free(TaskWords *w) {
    free(w->buf), free(w->w);
    memset(w, 0, sizeof *w);
}

void tasks_plan_put(TaskBuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->oom || need < 0) return;
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = (b->n + (size_t)need + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->oom = 1; return; }
        b->s = s, b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)need;
}

void tasks_plan_depths(StatsRng *r, double *d, int n) {
    for (int i = 0; i < n; i++) d[i] = 0.05 + 0.9 * (double)stats_rng_below(r, 1u << 30) / (1u << 30);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
            double t = d[j];
            d[j] = d[j - 1], d[j - 1] = t;
        }
}

void tasks_plan_shuffle(StatsRng *r, int *a, int n) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)stats_rng_below(r, (uint64_t)i + 1), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

int tasks_plan_count(const Tokenizer *tok, const char *text, int **ids, int *cap, Err *e) {
    size_t len = strlen(text);
    int need = (int)(4 * len + 8), n = 0;
    if (need > *cap) {
        int *p = realloc(*ids, (size_t)need * sizeof *p);
        if (!p) return err_set(e, "out of memory");
        *ids = p, *cap = need;
    }
    if (tok_encode(tok, text, len, 1, 0, *ids, *cap, &n, e)) return -1;
    return n;
}

/* The bytes each id decodes to, laid end to end, must give the prompt back. */
int tasks_plan_locate(const Tokenizer *tok, TaskItem *it, const int *ids, int n, size_t span[][2], int n_stmt,
                  const int *needle, size_t q_at, Err *e) {
    size_t *off = malloc((size_t)(n + 1) * sizeof *off), o = 0;
    if (!off) return err_set(e, "out of memory");
    for (int i = 0; i < n; i++) {
        size_t l;
        const char *piece = tok_decode(tok, i ? ids[i - 1] : -1, ids[i], &l);
        if (i == 0 && ids[0] == TOK_BOS && !tok->hf) l = 0; /* llama2.c's BOS decodes to "<s>", which is no text */
        if (tok->hf && hftok_is_special(tok->hf, ids[i])) l = 0;
        if (o + l > strlen(it->prompt) || memcmp(it->prompt + o, piece, l)) {
            free(off);
            return err_set(e, "the tokenizer does not decode the %s prompt back to its text (at id %d), so its "
                              "positions cannot be trusted", task_name(it->kind), i);
        }
        off[i] = o, o += l;
    }
    off[n] = o;
    it->needle_pos = malloc((size_t)n * sizeof *it->needle_pos);
    if (!it->needle_pos) { free(off); return err_set(e, "out of memory"); }
    it->question_pos = -1;
    for (int i = 0; i < n; i++) {
        if (off[i + 1] == off[i]) continue; /* BOS and other empty pieces sit on no text */
        int in = 0;
        for (int s = 0; s < n_stmt; s++) in |= needle[s] && off[i] < span[s][1] && off[i + 1] > span[s][0];
        if (in) it->needle_pos[it->n_needle_pos++] = i;
        if (it->question_pos < 0 && off[i + 1] > q_at) it->question_pos = i;
    }
    free(off);
    return 0;
}

int tasks_plan_refs(TaskItem *it, TaskKind k, char refs[][TASK_REF_MAX], int n, Err *e) {
    it->metric = task_metric(k);
    if (n == 0) n = 1, refs = NULL;
    for (int i = 0; i < n && i < TASK_MAX_REFS; i++)
        if (!(it->refs[it->n_refs++] = strdup(refs ? refs[i] : it->answer))) return err_set(e, "out of memory");
    return 0;
}

void task_item_free(TaskItem *it) {
    free(it->prompt), free(it->answer), free(it->needle_pos);
    for (int i = 0; i < it->n_needles; i++) free(it->needles[i]);
    for (int i = 0; i < it->n_refs; i++) free(it->refs[i]);
    memset(it, 0, sizeof *it);
}
