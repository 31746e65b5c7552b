/* llamacpp_fixture.c — running llama.cpp's harness and ahascope on the same question, for the comparison tests. */
#include "tests/llamacpp_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/aha.h"
#include "engine/forward.h"
#include "tests/test.h"

const char *lcfx_ref(void) {
    const char *p = getenv("AHASCOPE_LLAMACPP_REF");
    return p && *p ? p : "build/llamacpp-ref";
}

/* 1 if `ref info` runs (the harness is built, the libraries are installed
 * and match its declarations); otherwise a skip naming what is missing, or
 * a failure when the libraries load but do not match. */
int lcfx_available(void) {
    int state = -1;
    char why[1400];
    if (state < 0) {
        struct stat st;
        int status = -1;
        if (stat(lcfx_ref(), &st) != 0) {
            snprintf(why, sizeof why, "llama.cpp harness %s not built; %s", lcfx_ref(), LC_HOWTO);
            state = 0;
        } else {
            char *out = test_runf(&status, "%s info 2>&1", lcfx_ref());
            const char *o = out ? out : "";
            state = status == 0;
            /* Libraries that load but do not match ref.c's declarations
             * are a failure of this pin, not a missing tool. */
            if (!state && !strstr(o, "cannot load llama.cpp")) {
                test_fail(__FILE__, __LINE__, "ref info: exit %d: %s", status, o);
                state = 2;
            }
            if (!state) snprintf(why, sizeof why, "llama.cpp not usable (%.*s); %s", (int)strcspn(o, "\n"), o, LC_HOWTO);
            free(out);
        }
    }
    if (state == 2) test_fail(__FILE__, __LINE__, "llama.cpp's libraries do not match tests/llamacpp/ref.c");
    else if (!state) test_skip(why);
    return state == 1;
}

/* Run the harness; 0 when it exited 0, else a test failure showing its line. */
int lcfx_run(const char *args) {
    int status = -1;
    char *out = test_runf(&status, "%s %s", lcfx_ref(), args);
    if (status != 0) test_fail(__FILE__, __LINE__, "ref %s: exit %d: %s", args, status, out ? out : "");
    free(out);
    return status == 0 ? 0 : -1;
}

float *lcfx_read_floats(const char *path, long want) {
    long n = 0;
    char *b = test_read_file(path, &n);
    if (!b || n != want * (long)sizeof(float)) {
        test_fail(__FILE__, __LINE__, "%s: %ld bytes, expected %ld floats", path, n, want);
        free(b);
        return NULL;
    }
    return (float *)b;
}

/* llama.cpp's logits for every position of ids, [n][vocab], or NULL. */
float *lcfx_logits_kv(const char *model, const int *ids, int n, int vocab, const char *tag, const char *kv) {
    char toks[1024], out[1100], args[4096];
    snprintf(toks, sizeof toks, "%s", test_tmp(tag));
    strncat(toks, ".ids", sizeof toks - strlen(toks) - 1);
    snprintf(out, sizeof out, "%s.logits", toks);
    FILE *f = fopen(toks, "w");
    if (!f) { test_fail(__FILE__, __LINE__, "cannot write %s", toks); return NULL; }
    for (int i = 0; i < n; i++) fprintf(f, "%d\n", ids[i]);
    fclose(f);
    snprintf(args, sizeof args, "logits %s %s %s --kv %s", model, toks, out, kv);
    if (lcfx_run(args)) return NULL;
    return lcfx_read_floats(out, (long)n * vocab);
}

/* The same with f32 keys and values, as ahascope keeps them here. */
float *lcfx_logits(const char *model, const int *ids, int n, int vocab, const char *tag) {
    return lcfx_logits_kv(model, ids, n, vocab, tag, "f32");
}

/* ahascope's logits for every position of ids as one prefill, [n][vocab]. */
float *lcfx_aha_logits(Model *m, const int *ids, int n) {
    RunState s;
    Err e = {0};
    m->c.kv_dtype = DT_F32;
    if (fwd_init(&s, &m->c, n, 2, &e) != 0) { test_fail(__FILE__, __LINE__, "fwd_init: %s", e.msg); return NULL; }
    AttnConfig a = aha_defaults();
    float *all = malloc((size_t)n * m->c.vocab_size * sizeof *all);
    fwd_forward(m, &s, &a, ids, n, 0, all, NULL);
    fwd_free(&s);
    return all;
}

int lcfx_argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* ahascope's greedy continuation: the prompt as one prefill, then one
 * token a step (as ref greedy). ids holds the prompt and receives steps more. */
int lcfx_aha_greedy(Model *m, int *ids, int n_prompt, int steps) {
    RunState s;
    Err e = {0};
    m->c.kv_dtype = DT_F32;
    if (fwd_init(&s, &m->c, n_prompt, 2, &e) != 0) { test_fail(__FILE__, __LINE__, "fwd_init: %s", e.msg); return -1; }
    AttnConfig a = aha_defaults();
    fwd_forward(m, &s, &a, ids, n_prompt, 0, NULL, NULL);
    for (int k = 0; k < steps; k++) {
        ids[n_prompt + k] = lcfx_argmax(s.logits, m->c.vocab_size);
        if (k + 1 < steps) fwd_forward(m, &s, &a, &ids[n_prompt + k], 1, n_prompt + k, NULL, NULL);
    }
    fwd_free(&s);
    return 0;
}

/* max over rows and entries of |log_softmax(a) - log_softmax(b)|, in double. */
double lcfx_max_dlogprob(const float *a, const float *b, int rows, int vocab) {
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        const float *x = a + (size_t)r * vocab, *y = b + (size_t)r * vocab;
        double mx = x[0], my = y[0], sx = 0, sy = 0;
        for (int i = 1; i < vocab; i++) mx = fmax(mx, x[i]), my = fmax(my, y[i]);
        for (int i = 0; i < vocab; i++) sx += exp(x[i] - mx), sy += exp(y[i] - my);
        double lx = mx + log(sx), ly = my + log(sy);
        for (int i = 0; i < vocab; i++) {
            double d = fabs((x[i] - lx) - (y[i] - ly));
            if (!(d <= worst)) worst = d; /* NaN sticks */
        }
    }
    return worst;
}

/* The greedy ids as "1 2 3" for ref greedy's command line and messages. */
void lcfx_id_text(const int *ids, int n, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < n && k + 12 < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%d", i ? " " : "", ids[i]);
}

/* llama.cpp's greedy ids after the prompt, parsed from ref greedy. */
int lcfx_greedy(const char *model, const int *prompt, int n, int steps, int *out) {
    char args[4096], list[2048];
    lcfx_id_text(prompt, n, list, sizeof list);
    snprintf(args, sizeof args, "%s greedy %s %d %s --kv f32", lcfx_ref(), model, steps, list);
    int status = -1;
    char *text = test_run(args, &status);
    int got = 0;
    if (status == 0 && text) {
        char *p = text, *end;
        for (long v; got < steps && (v = strtol(p, &end, 10), end != p); p = end) out[got++] = (int)v;
    } else {
        test_fail(__FILE__, __LINE__, "%s: exit %d: %s", args, status, text ? text : "");
    }
    free(text);
    return got;
}
