/* test_pull.c — `ahascope pull` against `hub_server.py`: resumes, checksums, every bound.
 *
 * `ahascope pull OWNER/NAME` against tests/hub_server.py, a
 * local stand-in for the Hub (nothing leaves the machine): the listing, a
 * redirect, a truncated transfer retried and resumed with Range, a server
 * that ignores Range, a resume of a partial an earlier run left, a wrong
 * checksum refused with nothing placed, 401 naming HF_TOKEN, a 503 retried,
 * 404, a sharded repository, and `--model OWNER/NAME` then running from
 * the cache; the bounds on what a broken endpoint can do (a body past the
 * listed size or --max-bytes, a trickle or a silent server past --stall, a
 * connection never accepted past --connect-timeout) and Ctrl-C keeping
 * the partial for the next pull; `pull --file` picking one .gguf (and
 * `--model OWNER/NAME:FILE` running it), and `--model ollama:NAME[:TAG]`
 * over a fake ollama store, hostile manifests refused. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sha256.h"
#include "test.h"

#define TINY_DIMS "64,128,2,4,2,300,64" /* dim, hidden, layers, heads, kv heads, vocab, context */

typedef struct {
    char root[1024], log[1100], cache[1100], env[2400];
    long pid;
    int port;
} Hub;

static const char *python(void) { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static int lines(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

/* The last line of s (a static copy), where a command's error is. */
static const char *last_line(const char *s) {
    static char buf[2048];
    size_t n = s ? strlen(s) : 0;
    while (n > 0 && s[n - 1] == '\n') n--;
    size_t b = n;
    while (b > 0 && s[b - 1] != '\n') b--;
    snprintf(buf, sizeof buf, "%.*s", (int)(n - b), s ? s + b : "");
    return buf;
}

/* A tiny llama folder as alice/NAME for each name, a server over them, and
 * the environment a pull into a fresh cache needs. Returns 0 when up. */
static int hub_start(Hub *h, const char *tag, const char *const *names, int n) {
    int st;
    snprintf(h->root, sizeof h->root, "%s", test_tmp(tag));
    snprintf(h->log, sizeof h->log, "%s/log", h->root);
    snprintf(h->cache, sizeof h->cache, "%s/cache", h->root);
    free(test_runf(&st, "mkdir -p %s/alice && %s bench --arch llama --dims " TINY_DIMS " --save-hf %s/alice/tiny", h->root,
                   test_bin(), h->root));
    for (int i = 0; i < n && st == 0; i++) free(test_runf(&st, "cp -r %s/alice/tiny %s/alice/%s", h->root, h->root, names[i]));
    if (st != 0) return test_fail(__FILE__, __LINE__, "could not make the tiny model folders"), -1;
    char *out = test_runf(&st, "%s tests/hub_server.py %s %s >%s/port 2>/dev/null </dev/null & echo $!", python(), h->root,
                          h->log, h->root);
    h->pid = out ? atol(out) : 0;
    free(out);
    char port[1100];
    snprintf(port, sizeof port, "%s/port", h->root);
    for (int i = 0; i < 100 && h->port <= 0; i++) {
        char *p = test_read_file(port, NULL);
        h->port = p ? atoi(p) : 0;
        free(p);
        if (h->port <= 0) usleep(50000);
    }
    snprintf(h->env, sizeof h->env, "env -u HF_TOKEN HF_ENDPOINT=http://127.0.0.1:%d XDG_CACHE_HOME=%s", h->port, h->cache);
    if (h->port <= 0) return test_fail(__FILE__, __LINE__, "the test hub server did not start"), -1;
    return 0;
}

static void hub_stop(Hub *h) {
    if (h->pid > 0) free(test_runf(NULL, "kill %ld", h->pid));
}

/* `ahascope ARGS` with the hub's environment (extra: more VAR=VALUE). */
static char *hub_run(Hub *h, int *st, const char *extra, const char *args) {
    return test_runf(st, "%s %s %s %s", h->env, extra, test_bin(), args);
}

/* The cache's file of alice/NAME at main ("" file: the folder), in one of
 * four rotating buffers. */
static const char *cached(const Hub *h, const char *name, const char *file) {
    static char buf[4][1400];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "%s/ahascope/hub/alice/%s/main%s%s", h->cache, name, *file ? "/" : "", file);
    return b;
}

/* A pull through a redirect whose first transfer is cut short: retried with
 * Range from where it stopped, verified, placed, marked complete; then
 * `--model alice/tiny` runs from the cache. */
TEST(pull_redirect_truncation_resume_then_run_from_cache) {
    Hub h = {0};
    if (hub_start(&h, "pull1", NULL, 0)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny");
    CHECK_MSG(st == 0, "pull failed: %s", out ? out : "");
    free(out);
    char src[1200];
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    CHECK(test_same_file(src, cached(&h, "tiny", "model.safetensors")));
    CHECK(exists(cached(&h, "tiny", ".complete")));
    CHECK(exists(cached(&h, "tiny", "tokenizer.json")));
    CHECK(!exists(cached(&h, "tiny", "model.safetensors.partial")));
    char *log = test_read_file(h.log, NULL);
    CHECK(log && strstr(log, "/alice/tiny/resolve/main/model.safetensors range=None"));
    CHECK(log && strstr(log, "/cdn/alice/tiny/model.safetensors range=None")); /* the redirect was followed */
    CHECK(log && strstr(log, "/cdn/alice/tiny/model.safetensors range=bytes=187528-")); /* resumed at half */
    free(log);
    out = hub_run(&h, &st, "", "generate --model alice/tiny --prompt hello --steps 6 --temperature 0");
    CHECK_MSG(st == 0 && out && strlen(out) > 5, "generate from the cache: %s", out ? out : "");
    free(out);
    out = hub_run(&h, &st, "", "pull alice/tiny"); /* complete already: no request */
    CHECK_INT(st, 0);
    free(out);
    log = test_read_file(h.log, NULL);
    CHECK_INT(lines(log), 9);
    free(log);
    hub_stop(&h);
}

/* A server that answers a Range request with the whole file (200): the
 * partial is discarded and the file comes whole, not appended twice.
 * --progress draws the file's bar and the whole pull's without a terminal. */
TEST(pull_starts_over_when_the_server_ignores_range) {
    Hub h = {0};
    const char *names[] = {"tiny-norange"};
    if (hub_start(&h, "pull2", names, 1)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-norange --progress");
    CHECK_MSG(st == 0, "pull failed: %s", out ? out : "");
    CHECK_MSG(out && strstr(out, "model.safetensors") && strstr(out, "##] 100%") && strstr(out, "all [####"),
              "no progress bars: %s", out ? out : "");
    free(out);
    char src[1200];
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    CHECK(test_same_file(src, cached(&h, "tiny-norange", "model.safetensors")));
    hub_stop(&h);
}

/* A FILE.partial left by an interrupted run is continued with Range. */
TEST(pull_resumes_a_partial_an_earlier_run_left) {
    Hub h = {0};
    if (hub_start(&h, "pull3", NULL, 0)) return hub_stop(&h);
    char src[1200];
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    long n;
    char *bytes = test_read_file(src, &n);
    free(test_runf(NULL, "mkdir -p %s", cached(&h, "tiny", "")));
    CHECK(bytes && test_write_file(cached(&h, "tiny", "model.safetensors.partial"), bytes, 1000) == 0);
    free(bytes);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny");
    CHECK_MSG(st == 0, "pull failed: %s", out ? out : "");
    free(out);
    CHECK(test_same_file(src, cached(&h, "tiny", "model.safetensors")));
    char *log = test_read_file(h.log, NULL);
    CHECK(log && strstr(log, "/cdn/alice/tiny/model.safetensors range=bytes=1000-"));
    CHECK(log && !strstr(log, "/cdn/alice/tiny/model.safetensors range=None"));
    free(log);
    hub_stop(&h);
}

/* The Hub's SHA-256 disagrees with the bytes: refused in one line, nothing
 * placed, the folder not complete, and --model says to pull. */
TEST(pull_refuses_a_wrong_checksum_and_places_nothing) {
    Hub h = {0};
    const char *names[] = {"tiny-badsum"};
    if (hub_start(&h, "pull4", names, 1)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-badsum");
    CHECK(st != 0);
    const char *last = last_line(out);
    CHECK_MSG(strstr(last, "model.safetensors") && strstr(last, "SHA-256"), "got: %s", out ? out : "");
    free(out);
    CHECK(!exists(cached(&h, "tiny-badsum", "model.safetensors")));
    CHECK(!exists(cached(&h, "tiny-badsum", "model.safetensors.partial")));
    CHECK(!exists(cached(&h, "tiny-badsum", ".complete")));
    out = hub_run(&h, &st, "", "info --model alice/tiny-badsum");
    CHECK(st != 0);
    CHECK_MSG(out && strstr(out, "run: ahascope pull alice/tiny-badsum") && lines(out) == 1, "got: %s", out ? out : "");
    free(out);
    hub_stop(&h);
}

/* 401 without a token: one line naming HF_TOKEN; with it, the pull works. */
TEST(pull_unauthorised_names_hf_token_and_sends_it) {
    Hub h = {0};
    const char *names[] = {"tiny-gated"};
    if (hub_start(&h, "pull5", names, 1)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-gated");
    CHECK(st != 0);
    CHECK_MSG(out && strstr(out, "HF_TOKEN") && strstr(out, "401") && lines(out) == 1, "got: %s", out ? out : "");
    free(out);
    CHECK(!exists(cached(&h, "tiny-gated", ".complete")));
    out = hub_run(&h, &st, "HF_TOKEN=secret", "pull alice/tiny-gated");
    CHECK_MSG(st == 0, "pull with the token: %s", out ? out : "");
    free(out);
    CHECK(exists(cached(&h, "tiny-gated", ".complete")));
    hub_stop(&h);
}

/* A 503 is retried; a 404 ends the pull in one line. */
TEST(pull_retries_5xx_and_reports_404) {
    Hub h = {0};
    const char *names[] = {"tiny-flaky"};
    if (hub_start(&h, "pull6", names, 1)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-flaky");
    CHECK_MSG(st == 0 && strstr(out, "503"), "got: %s", out ? out : "");
    free(out);
    CHECK(exists(cached(&h, "tiny-flaky", ".complete")));
    out = hub_run(&h, &st, "", "pull alice/missing");
    CHECK(st != 0);
    CHECK_MSG(out && strstr(out, "alice/missing") && strstr(out, "404") && lines(out) == 1, "got: %s", out ? out : "");
    free(out);
    out = hub_run(&h, &st, "", "pull ../etc");
    CHECK(st != 0);
    CHECK_MSG(out && strstr(out, "not a repository id") && lines(out) == 1, "got: %s", out ? out : "");
    free(out);
    hub_stop(&h);
}

/* A repository with model.safetensors.index.json: the index, then every
 * shard it names; the pulled folder generates what the unsharded one does. */
TEST(pull_fetches_the_index_and_every_shard) {
    Hub h = {0};
    if (hub_start(&h, "pull7", NULL, 0)) return hub_stop(&h);
    int st;
    free(test_runf(&st, "%s tests/hub_server.py --shard %s/alice/tiny %s/alice/tiny-sharded", python(), h.root, h.root));
    CHECK_INT(st, 0);
    char *out = hub_run(&h, &st, "", "pull alice/tiny-sharded");
    CHECK_MSG(st == 0, "pull failed: %s", out ? out : "");
    free(out);
    CHECK(exists(cached(&h, "tiny-sharded", "model.safetensors.index.json")));
    CHECK(exists(cached(&h, "tiny-sharded", "model-00001-of-00002.safetensors")));
    CHECK(exists(cached(&h, "tiny-sharded", "model-00002-of-00002.safetensors")));
    CHECK(exists(cached(&h, "tiny-sharded", ".complete")));
    const char *gen = "generate --prompt hello --steps 8 --temperature 0 --model";
    char args[1400];
    snprintf(args, sizeof args, "%s alice/tiny-sharded 2>/dev/null", gen);
    char *a = hub_run(&h, &st, "", args);
    CHECK_INT(st, 0);
    snprintf(args, sizeof args, "%s %s/alice/tiny 2>/dev/null", gen, h.root);
    char *b = hub_run(&h, &st, "", args);
    CHECK_MSG(a && b && *a && !strcmp(a, b), "sharded pull: %s\nthe source folder: %s", a ? a : "", b ? b : "");
    free(a), free(b);
    hub_stop(&h);
}

/* A FILE.partial planted as a symlink is refused, never written through. */
TEST(pull_never_writes_through_a_planted_partial_symlink) {
    Hub h = {0};
    if (hub_start(&h, "pull8", NULL, 0)) return hub_stop(&h);
    char target[1200];
    snprintf(target, sizeof target, "%s/target", h.root);
    CHECK(test_write_file(target, "keep", 4) == 0);
    free(test_runf(NULL, "mkdir -p %s && ln -s %s %s", cached(&h, "tiny", ""), target,
                   cached(&h, "tiny", "config.json.partial")));
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny");
    CHECK(st != 0);
    CHECK_MSG(out && strstr(out, "config.json.partial") && lines(out) == 1, "got: %s", out ? out : "");
    free(out);
    char *t = test_read_file(target, NULL);
    CHECK(t && !strcmp(t, "keep"));
    free(t);
    CHECK(!exists(cached(&h, "tiny", ".complete")));
    hub_stop(&h);
}

/* The size of path, -1 when it is not there. */
static long long size_of(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* A body longer than the listing's size is cut off at that size and
 * refused, the partial removed: the file used to grow without end. */
TEST(pull_refuses_more_bytes_than_the_listing_gives) {
    Hub h = {0};
    const char *names[] = {"tiny-endless"};
    if (hub_start(&h, "pull9", names, 1)) return hub_stop(&h);
    int st;
    double t0 = clock_now();
    char *out = hub_run(&h, &st, "", "pull alice/tiny-endless");
    CHECK(st == 1 && clock_now() - t0 < 20);
    CHECK_MSG(out && lines(out) == 1 && strstr(out, "model.safetensors: the server sent more than the 375056 bytes"
                                                     " the Hub lists; refused"), "got: %s", out ? out : "");
    free(out);
    CHECK(!exists(cached(&h, "tiny-endless", "model.safetensors.partial")));
    CHECK(!exists(cached(&h, "tiny-endless", ".complete")));
    hub_stop(&h);
}

/* With no size in the listing, --max-bytes bounds the file: an endless
 * body is refused at it, a file under it comes whole. */
TEST(pull_max_bytes_bounds_a_file_the_listing_gives_no_size) {
    Hub h = {0};
    const char *names[] = {"tiny-endless-nosize", "tiny-nosize"};
    if (hub_start(&h, "pull10", names, 2)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-endless-nosize --max-bytes 1000000");
    CHECK_MSG(st == 1 && out && lines(out) == 1 &&
                  strstr(out, "more than 1000000 bytes and the listing gives no size (--max-bytes); refused"),
              "got: %s", out ? out : "");
    free(out);
    CHECK(!exists(cached(&h, "tiny-endless-nosize", "model.safetensors.partial")));
    out = hub_run(&h, &st, "", "pull alice/tiny-nosize --max-bytes 100000");
    CHECK_MSG(st == 1 && strstr(last_line(out), "more than 100000 bytes"), "got: %s", out ? out : "");
    free(out);
    out = hub_run(&h, &st, "", "pull alice/tiny-nosize --max-bytes 1000000");
    CHECK_MSG(st == 0, "got: %s", out ? out : "");
    free(out);
    char src[1200];
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    CHECK(test_same_file(src, cached(&h, "tiny-nosize", "model.safetensors")));
    out = hub_run(&h, &st, "", "pull alice/tiny --max-bytes 0");
    CHECK_MSG(st == 2 && strstr(out, "--max-bytes"), "got: %s", out ? out : "");
    free(out);
    hub_stop(&h);
}

/* Without --max-bytes a file the listing gives no size for was bounded
 * only by 64 GiB (5.4 GB in 12 s from an endless server): the model's
 * config.json shape bounds it now (8 bytes a parameter plus 64 MiB). */
TEST(pull_default_bound_follows_the_model_shape) {
    Hub h = {0};
    const char *names[] = {"tiny-endless-nosize"};
    if (hub_start(&h, "pull11", names, 1)) return hub_stop(&h);
    int st;
    char *out = hub_run(&h, &st, "timeout 60", "pull alice/tiny-endless-nosize 2>&1");
    const char *msg = out ? last_line(out) : "";
    long long cap = atoll(strstr(msg, "more than ") ? strstr(msg, "more than ") + 10 : "0");
    CHECK_MSG(st == 1 && strstr(msg, "bytes and the listing gives no size (--max-bytes); refused"), "got: %s", msg);
    CHECK_MSG(cap > (64LL << 20) && cap < (80LL << 20), "cap %lld: not the tiny model's shape", cap);
    CHECK(!exists(cached(&h, "tiny-endless-nosize", "model.safetensors.partial")));
    free(out);
    hub_stop(&h);
}

/* A server trickling a byte every 0.2 s is a stall after --stall seconds
 * (it never finished before); the partial stays and the retry, or the next
 * pull, resumes it. */
TEST(pull_stall_bounds_a_trickling_server) {
    Hub h = {0};
    const char *names[] = {"tiny-trickle"};
    if (hub_start(&h, "pull11", names, 1)) return hub_stop(&h);
    int st;
    double t0 = clock_now();
    char *out = hub_run(&h, &st, "", "pull alice/tiny-trickle --stall 2 --tries 1");
    double dt = clock_now() - t0;
    CHECK_MSG(st == 1 && dt < 10 && out && lines(out) == 1 &&
                  strstr(out, "model.safetensors: stalled: under 1024 bytes/s for 2 s (--stall)"),
              "after %.1f s: %s", dt, out ? out : "");
    free(out);
    long long kept = size_of(cached(&h, "tiny-trickle", "model.safetensors.partial"));
    CHECK_MSG(kept >= 4096, "partial of %lld bytes", kept);
    out = hub_run(&h, &st, "", "pull alice/tiny-trickle --stall 2");
    CHECK_MSG(st == 0, "got: %s", out ? out : "");
    free(out);
    char src[1200], want[128];
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    CHECK(test_same_file(src, cached(&h, "tiny-trickle", "model.safetensors")));
    snprintf(want, sizeof want, "/cdn/alice/tiny-trickle/model.safetensors range=bytes=%lld-", kept);
    char *log = test_read_file(h.log, NULL);
    CHECK_MSG(log && strstr(log, want), "no '%s' in %s", want, log ? log : "");
    free(log);
    hub_stop(&h);
}

/* A server that accepts and never answers is a stall too: with --stall 1
 * and two tries the pull ends in seconds (five minutes before). */
TEST(pull_stall_bounds_a_server_that_never_answers) {
    Hub h = {0};
    const char *names[] = {"tiny-dead"};
    if (hub_start(&h, "pull12", names, 1)) return hub_stop(&h);
    int st;
    double t0 = clock_now();
    char *out = hub_run(&h, &st, "", "pull alice/tiny-dead --stall 1 --tries 2");
    double dt = clock_now() - t0;
    CHECK_MSG(st == 1 && dt < 8 && out && lines(out) == 2 && strstr(out, "try 2 of 2") &&
                  strstr(last_line(out), "alice/tiny-dead: stalled: under 1024 bytes/s for 1 s (--stall)"),
              "after %.1f s: %s", dt, out ? out : "");
    free(out);
    hub_stop(&h);
}

/* An endpoint whose connections are never accepted ends at
 * --connect-timeout, saying so. */
TEST(pull_connect_timeout_bounds_an_unreachable_endpoint) {
    char portfile[1100];
    snprintf(portfile, sizeof portfile, "%s", test_tmp("blackhole_port"));
    char *pid = test_runf(NULL, "%s tests/hub_server.py --blackhole >%s 2>/dev/null </dev/null & echo $!", python(),
                          portfile);
    long bh = pid ? atol(pid) : 0;
    free(pid);
    int port = 0;
    for (int i = 0; i < 100 && port <= 0; i++) {
        char *p = test_read_file(portfile, NULL);
        port = p ? atoi(p) : 0;
        free(p);
        if (port <= 0) usleep(50000);
    }
    CHECK_MSG(port > 0, "the blackhole did not start");
    int st;
    double t0 = clock_now();
    char *out = test_runf(&st, "env -u HF_TOKEN HF_ENDPOINT=http://127.0.0.1:%d XDG_CACHE_HOME=%s %s pull alice/tiny"
                          " --connect-timeout 1 --tries 1", port, test_tmp("blackhole_cache"), test_bin());
    double dt = clock_now() - t0;
    char want[200];
    snprintf(want, sizeof want, "alice/tiny: no connection to http://127.0.0.1:%d within 1 s (--connect-timeout)", port);
    CHECK_MSG(st == 1 && dt < 5 && out && lines(out) == 1 && strstr(out, want), "after %.1f s: %s", dt, out ? out : "");
    free(out);
    if (bh > 0) free(test_runf(NULL, "kill %ld", bh));
}

/* Ctrl-C used to be ignored during a transfer: now it ends the pull in a
 * second with exit 130 and one line, keeping FILE.partial, which the next
 * pull resumes (Range from its size) to the Hub's SHA-256. */
TEST(pull_sigint_keeps_the_partial_and_the_next_pull_resumes_it) {
    Hub h = {0};
    const char *names[] = {"tiny-trickle"};
    if (hub_start(&h, "pull13", names, 1)) return hub_stop(&h);
    const char *err = test_tmp("pull13.err");
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d", h.port);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("HF_TOKEN");
        setenv("HF_ENDPOINT", endpoint, 1);
        setenv("XDG_CACHE_HOME", h.cache, 1);
        int nul = open("/dev/null", O_WRONLY), fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(nul, 1), dup2(fd, 2);
        execl(test_bin(), test_bin(), "pull", "alice/tiny-trickle", (char *)NULL);
        _exit(127);
    }
    int started = 0;
    for (double end = clock_now() + 20; !started && clock_now() < end; usleep(20000)) {
        char *log = test_read_file(h.log, NULL);
        started = log && strstr(log, "/cdn/alice/tiny-trickle/model.safetensors range=None");
        free(log);
    }
    CHECK(started);
    usleep(600000); /* the first 4096 bytes are in, the rest trickles */
    double t0 = clock_now();
    if (pid > 0) kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    double dt = clock_now() - t0;
    char *msg = test_read_file(err, NULL);
    long long kept = size_of(cached(&h, "tiny-trickle", "model.safetensors.partial"));
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 130 && dt < 2.5, "status %d after %.1f s", status, dt);
    char want[1500];
    snprintf(want, sizeof want, "ahascope pull: alice/tiny-trickle: model.safetensors: interrupted; %s keeps %lld bytes,"
             " which the next pull resumes\n", cached(&h, "tiny-trickle", "model.safetensors.partial"), kept);
    CHECK_MSG(msg && !strcmp(msg, want), "got: %swant: %s", msg ? msg : "", want);
    free(msg);
    CHECK_MSG(kept >= 4096, "partial of %lld bytes", kept);
    CHECK(!exists(cached(&h, "tiny-trickle", ".complete")));
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/tiny-trickle");
    CHECK_MSG(st == 0, "got: %s", out ? out : "");
    free(out);
    char src[1200], a[65], b[65];
    Err e;
    snprintf(src, sizeof src, "%s/alice/tiny/model.safetensors", h.root);
    CHECK(sha256_file(src, a, &e) == 0 && sha256_file(cached(&h, "tiny-trickle", "model.safetensors"), b, &e) == 0 &&
          !strcmp(a, b));
    snprintf(want, sizeof want, "/cdn/alice/tiny-trickle/model.safetensors range=bytes=%lld-", kept);
    char *log = test_read_file(h.log, NULL);
    CHECK_MSG(log && strstr(log, want), "no '%s' in %s", want, log ? log : "");
    free(log);
    hub_stop(&h);
}

/* ---- ollama's store ----------------------------------------------------------- */

/* A fake $OLLAMA_MODELS holding a copy of stories260K.gguf as the blob of
 * library/stories:latest; the manifest's text is written by the caller. */
static void ollama_store(char *root, size_t cap, char hex[65]) {
    snprintf(root, cap, "%s", test_tmp("ollama"));
    const char *gguf = test_shared("models/stories260K/stories260K.gguf");
    int st;
    char *out = test_runf(&st, "sha256sum %s | cut -c1-64", gguf);
    snprintf(hex, 65, "%.64s", out ? out : "");
    free(out);
    free(test_runf(&st, "mkdir -p %s/blobs %s/manifests/registry.ollama.ai/library/stories && cp %s %s/blobs/sha256-%s", root,
                   root, gguf, root, hex));
    CHECK(st == 0);
}

static void ollama_manifest(const char *root, const char *tag, const char *text) {
    char path[1400];
    snprintf(path, sizeof path, "%s/manifests/registry.ollama.ai/library/stories/%s", root, tag);
    CHECK(test_write_file(path, text, (long)strlen(text)) == 0);
}

/* --model ollama:stories runs the blob its manifest names, the same text as
 * the GGUF itself; :TAG picks another manifest. */
TEST(pull_ollama_model_runs_the_manifests_blob) {
    SKIP_UNLESS_SHARED();
    char root[1100], hex[65], man[600];
    ollama_store(root, sizeof root, hex);
    snprintf(man, sizeof man, "{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.license\","
             "\"digest\":\"sha256:%064d\"},{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:%s\"}]}", 0, hex);
    ollama_manifest(root, "latest", man);
    ollama_manifest(root, "q8", man);
    const char *gen = "generate --prompt Once --steps 12 --temperature 0 --model";
    int st, st2, st3;
    char *a = test_runf(&st, "OLLAMA_MODELS=%s %s %s ollama:stories 2>&1", root, test_bin(), gen);
    char *b = test_runf(&st2, "%s %s %s 2>&1", test_bin(), gen, test_shared("models/stories260K/stories260K.gguf"));
    char *c = test_runf(&st3, "OLLAMA_MODELS=%s %s %s ollama:stories:q8 2>&1", root, test_bin(), gen);
    CHECK_MSG(st == 0 && st2 == 0 && st3 == 0 && a && b && c && !strcmp(a, b) && !strcmp(a, c) && strstr(a, "Once upon"),
              "ollama: %s\ngguf: %s", a, b);
    free(a), free(b), free(c);
}

/* A missing manifest names its path; a hostile one (not JSON, over 1 MiB,
 * no model layer, a digest with '/' or "..") and a bad name are refused,
 * each in one line. */
TEST(pull_ollama_refuses_hostile_manifests) {
    SKIP_UNLESS_SHARED();
    char root[1100], hex[65], cmd[1600], want[1300];
    ollama_store(root, sizeof root, hex);
    snprintf(cmd, sizeof cmd, "OLLAMA_MODELS=%s %s info --model ollama:stories:nope", root, test_bin());
    snprintf(want, sizeof want, "no ollama manifest %s/manifests/registry.ollama.ai/library/stories/nope", root);
    CHECK_REFUSAL(cmd, 1, NULL, want, 1);
    static const char *const bad[] = {
        "not json {",
        "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"sha256:ab\"}]}",
        "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256:../../../../etc/passwd\"}]}",
        "{\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"sha256/../x\"}]}",
        "{\"layers\":7}",
    };
    static const char *const needle[] = {"not a JSON manifest", "no model layer", "no model layer", "no model layer", "no model layer"};
    snprintf(cmd, sizeof cmd, "OLLAMA_MODELS=%s %s info --model ollama:stories", root, test_bin());
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ollama_manifest(root, "latest", bad[i]);
        CHECK_REFUSAL(cmd, 1, NULL, needle[i], 1);
    }
    char *huge = malloc((2 << 20) + 1);
    memset(huge, ' ', 2 << 20), huge[2 << 20] = 0;
    ollama_manifest(root, "latest", huge);
    free(huge);
    CHECK_REFUSAL(cmd, 1, NULL, "ollama manifest", 1);
    snprintf(cmd, sizeof cmd, "OLLAMA_MODELS=%s %s info --model ollama:../../x", root, test_bin());
    CHECK_REFUSAL(cmd, 1, NULL, "not an ollama model name", 1);
}

/* ---- pull --file: one GGUF ------------------------------------------------------ */

/* alice/NAME holding two copies of stories260K.gguf, as a quantised
 * repository holds one file per quantisation, and a README. */
static void gguf_repo(const Hub *h, const char *name) {
    int st;
    const char *g = test_shared("models/stories260K/stories260K.gguf");
    free(test_runf(&st, "mkdir -p %s/alice/%s && cp %s %s/alice/%s/stories-Q4_K_M.gguf && cp %s %s/alice/%s/stories-Q8_0.gguf && "
                   "echo hi > %s/alice/%s/README.md", h->root, name, g, h->root, name, g, h->root, name, h->root, name));
    CHECK(st == 0);
}

/* --file q4_k_m picks the one .gguf holding it (any case), fetched through
 * the redirect, cut short and resumed, checked and placed; then
 * --model alice/gg:Q4_K_M runs it, the same text as the GGUF itself. */
TEST(pull_file_picks_one_gguf_then_runs_it) {
    SKIP_UNLESS_SHARED();
    Hub h = {0};
    if (hub_start(&h, "pullgg", NULL, 0)) return hub_stop(&h);
    gguf_repo(&h, "gg");
    int st;
    char *out = hub_run(&h, &st, "", "pull alice/gg --file q4_k_m 2>&1");
    CHECK_MSG(st == 0 && out && strstr(out, cached(&h, "gg", "stories-Q4_K_M.gguf")), "pull --file: %s", out ? out : "");
    free(out);
    CHECK(test_same_file(test_shared("models/stories260K/stories260K.gguf"), cached(&h, "gg", "stories-Q4_K_M.gguf")));
    CHECK(!exists(cached(&h, "gg", "stories-Q8_0.gguf")) && !exists(cached(&h, "gg", "README.md")));
    char *log = test_read_file(h.log, NULL);
    CHECK(log && strstr(log, "/cdn/alice/gg/stories-Q4_K_M.gguf range=bytes=")); /* resumed after the cut */
    free(log);
    const char *gen = "generate --prompt Once --steps 12 --temperature 0 --model";
    char *a = hub_run(&h, &st, "", "generate --prompt Once --steps 12 --temperature 0 --model alice/gg:Q4_K_M 2>&1");
    int st2;
    char *b = test_runf(&st2, "%s %s %s 2>&1", test_bin(), gen, test_shared("models/stories260K/stories260K.gguf"));
    CHECK_MSG(st == 0 && st2 == 0 && a && b && !strcmp(a, b), "from the cache: %s\nthe gguf: %s", a, b);
    free(a), free(b);
    log = test_read_file(h.log, NULL);
    int before = lines(log);
    free(log);
    out = hub_run(&h, &st, "", "pull alice/gg --file stories-Q4_K_M.gguf 2>&1"); /* placed already: only the listing */
    CHECK_MSG(st == 0 && out && strstr(out, cached(&h, "gg", "stories-Q4_K_M.gguf")), "%s", out ? out : "");
    free(out);
    log = test_read_file(h.log, NULL);
    CHECK_INT(lines(log), before + 2); /* the revision and the tree, no file */
    free(log);
    hub_stop(&h);
}

/* Zero or several matches, a wrong checksum and an unpulled :FILE are one
 * line each, naming the candidates or what to run. */
TEST(pull_file_refusals_list_the_candidates) {
    SKIP_UNLESS_SHARED();
    Hub h = {0};
    if (hub_start(&h, "pullgg2", NULL, 0)) return hub_stop(&h);
    gguf_repo(&h, "gg");
    gguf_repo(&h, "gg-badsum");
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "%s %s pull alice/gg --file .GGUF", h.env, test_bin());
    CHECK_REFUSAL(cmd, 1, NULL, "'.GGUF' matches 2 .gguf files: stories-Q4_K_M.gguf, stories-Q8_0.gguf", 1);
    snprintf(cmd, sizeof cmd, "%s %s pull alice/gg --file Q5_K", h.env, test_bin());
    CHECK_REFUSAL(cmd, 1, NULL, "no .gguf file matches 'Q5_K' (there are: stories-Q4_K_M.gguf, stories-Q8_0.gguf)", 1);
    snprintf(cmd, sizeof cmd, "%s %s pull alice/gg-badsum --file Q8_0", h.env, test_bin());
    CHECK_REFUSAL(cmd, 1, NULL, "does not match the Hub's", 0); /* after the retry line of the cut transfer */
    CHECK(!exists(cached(&h, "gg-badsum", "stories-Q8_0.gguf")) && !exists(cached(&h, "gg-badsum", "stories-Q8_0.gguf.partial")));
    snprintf(cmd, sizeof cmd, "%s %s info --model alice/gg:Q8_0", h.env, test_bin());
    CHECK_REFUSAL(cmd, 1, NULL, "run: ahascope pull alice/gg --file Q8_0", 1);
    hub_stop(&h);
}
