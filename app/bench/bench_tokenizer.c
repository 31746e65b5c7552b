/* bench_tokenizer.c — `bench --tokenizer PATH`: how long encoding takes, so a quadratic tokenizer shows as a number.
 *
 * `ahascope bench --tokenizer PATH`: how long encoding
 * takes, so a tokenizer that turns quadratic (a long line, a long word)
 * shows up as a number. The text is --text FILE, or deterministic
 * English-like words (the same bytes every run and on every machine). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/args.h"
#include "app/bench/bench.h"
#include "app/setup.h"
#include "engine/files.h"
#include "engine/sniff.h"
#include "engine/textout.h"

#define TEXT_MAX ((size_t)64 << 20) /* what eval --data reads at most, too */

/* n bytes of sentences made of common words, with capitals, commas, digits
 * and paragraph breaks: English-like enough for real merges to happen. */
static char *english_text(size_t n) {
    static const char *words[] = {"the", "a", "little", "girl", "named", "Lily", "saw", "big", "red", "ball", "in",
                                  "park", "she", "was", "very", "happy", "and", "wanted", "to", "play", "with", "her",
                                  "friend", "Tom", "they", "ran", "around", "tree", "sun", "shining", "one", "day",
                                  "mom", "said", "it", "is", "time", "go", "home", "because", "dinner", "ready", "of",
                                  "once", "upon", "there", "lived", "dog", "who", "loved", "bones", "3", "2024"};
    char *s = malloc(n + 1);
    uint64_t x = 88172645463325252ull;
    size_t k = 0;
    int starts = 1; /* the next word starts a sentence: capitalised */
    while (s && k < n) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *w = words[x % (sizeof words / sizeof words[0])];
        char word[24];
        size_t l = 0, wl = strlen(w);
        if (k && s[k - 1] != '\n') word[l++] = ' ';
        memcpy(word + l, w, wl);
        if (starts && w[0] >= 'a' && w[0] <= 'z') word[l] = (char)(w[0] - 'a' + 'A');
        l += wl;
        starts = (x >> 20) % 12 == 0;
        if (starts) l += (size_t)snprintf(word + l, sizeof word - l, "%s", (x >> 30) % 5 ? "." : ".\n\n");
        else if ((x >> 40) % 9 == 0) word[l++] = ',';
        for (size_t i = 0; i < l && k < n; i++) s[k++] = word[i];
    }
    if (s) s[n] = 0;
    return s;
}

/* The first max bytes of a text file (all of it when max is 0). */
static char *read_text(const char *path, size_t max, size_t *n, Err *e) {
    int fd = file_open_regular(path, "text", "a text file", e);
    if (fd < 0) return NULL;
    struct stat st;
    char *s = NULL;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) err_set(e, "%s: empty text file", path);
    else if ((size_t)st.st_size > TEXT_MAX && !max) err_set(e, "%s: larger than 64 MB (use --bytes N)", path);
    else {
        *n = max && max < (size_t)st.st_size ? max : (size_t)st.st_size;
        s = malloc(*n + 1);
        if (!s) err_set(e, "%s: out of memory", path);
        else if (read(fd, s, *n) != (ssize_t)*n) free(s), s = NULL, err_set(e, "%s: read error", path);
        else s[*n] = 0;
    }
    close(fd);
    return s;
}

/* PATH as a tokenizer: a tokenizer.bin, a tokenizer.json, else a model
 * whose own tokenizer app_load finds. */
static int load_any(const char *path, AppLoaded *L, Err *e) {
    memset(L, 0, sizeof *L);
    FileKind k = sniff_kind(path);
    if (k == FILE_TOKENIZER || k == FILE_JSON) {
        char dir[1024];
        file_parent(path, dir, sizeof dir);
        int r = k == FILE_TOKENIZER ? tok_load(&L->tok, path, 0, e) : tok_load_hf(&L->tok, path, dir, 0, e);
        L->have_tok = r == 0;
        return r;
    }
    RunOpts o;
    runopts_defaults(&o);
    o.model = path;
    return app_load(&o, L, 1, e);
}

/* This process's CPU seconds, to set beside clock_now's wall seconds. */
static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Median wall and CPU seconds of b->runs encodings of text (BOS added, as a
 * prompt): CPU time too, because on a shared machine the wall clock also
 * counts the other processes' turns. */
static int time_encode(const Tokenizer *t, const BenchOpts *b, const char *text, size_t n, int *n_ids, double med[2],
                       Err *e) {
    int *ids = malloc((n + 3) * sizeof *ids), rc = ids ? 0 : err_set(e, "out of memory");
    double *secs = malloc(2 * (size_t)b->runs * sizeof *secs);
    if (!secs) rc = err_set(e, "out of memory");
    for (int r = 0; rc == 0 && r < b->runs; r++) {
        double w0 = clock_now(), c0 = cpu_seconds();
        rc = tok_encode(t, text, n, 1, 0, ids, (int)n + 3, n_ids, e);
        secs[r] = clock_now() - w0;
        secs[b->runs + r] = cpu_seconds() - c0;
    }
    if (rc == 0) med[0] = bench_median(secs, b->runs), med[1] = bench_median(secs + b->runs, b->runs);
    free(ids), free(secs);
    return rc;
}

static void print_result(const BenchOpts *b, const Tokenizer *t, size_t n, int n_ids, const double med[2]) {
    const char *kind = t->hf ? "tokenizer.json" : "llama2.c";
    double mb_s = med[0] > 0 ? (double)n / (1 << 20) / med[0] : 0;
    if (!b->json) {
        printf("tokenizer %s (%s, %d ids): %zu bytes -> %d tokens, median %.3f s (cpu %.3f s) over %d runs (%.2f MB/s)\n",
               b->tokenizer, kind, t->vocab_size, n, n_ids, med[0], med[1], b->runs, mb_s);
        return;
    }
    printf("{\"tokenizer\": ");
    textout_json_print(stdout, b->tokenizer);
    printf(", \"kind\": \"%s\", \"vocab_size\": %d, \"text\": ", kind, t->vocab_size);
    if (b->text) textout_json_print(stdout, b->text);
    else printf("null");
    printf(", \"bytes\": %zu, \"tokens\": %d, \"runs\": %d, \"median_s\": %.4f, \"median_cpu_s\": %.4f, \"mb_per_s\": %.3f}\n",
           n, n_ids, b->runs, med[0], med[1], mb_s);
}

int bench_tokenizer(const BenchOpts *b, Err *e) {
    size_t n = b->text_bytes ? (size_t)b->text_bytes : (size_t)1 << 20;
    char *text = b->text ? read_text(b->text, (size_t)b->text_bytes, &n, e) : english_text(n);
    if (!text) return b->text ? -1 : err_set(e, "out of memory");
    AppLoaded L;
    int n_ids = 0, rc = load_any(b->tokenizer, &L, e);
    double med[2] = {0, 0};
    if (rc == 0) rc = time_encode(&L.tok, b, text, n, &n_ids, med, e);
    if (rc == 0) print_result(b, &L.tok, n, n_ids, med);
    app_unload(&L);
    free(text);
    return rc;
}
