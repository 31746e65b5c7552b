/* hub.c — `ahascope pull`: the Hub's listing, resumable checked downloads, the cache root.
 *
 * `ahascope pull`: the Hub's file listing, then each file through
 * one retrying, resuming, verifying download path (hub.h has the rules). */
#include "app/hub.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "app/progress.h"
#include "engine/clock.h"
#include "engine/files.h"
#include "engine/sha256.h"
#include "engine/textout.h"

#define MAX_JSON (64u << 20)    /* an API answer or a shard index */
#define MAX_FILES 100000        /* siblings listed by one repository */
#define MAX_SHARDS 4096
#define NAME_CAP 256

typedef struct {
    char name[NAME_CAP];
    long long size; /* -1: unknown */
    char sha[65];   /* "" unless the file is in LFS */
} HubFile;

typedef struct {
    HubFile *f;
    int n;
    long long total, done; /* bytes of this pull, for the overall bar */
    long long model_cap;   /* what config.json's shape allows a weights file (0: not known) */
} Listing;

/* Where the bytes of one request go: a file (appended to; a resume) or memory. */
typedef struct {
    CURL *c;
    FILE *f;
    char *mem;
    size_t n, max;
    long long have;     /* bytes already in f when the attempt began */
    long long got;      /* bytes written to f by this attempt */
    long long expect;   /* the file's size, or -1 */
    long long max_file; /* what f may reach when expect is -1 */
    long code;
    int checked, over;
    int too_big;        /* the server sent past expect (or max_file): refused, the partial discarded */
    int connected;      /* the request's last connection was made (or reused): a timeout after it is a stall */
    const char *label;  /* for the progress line */
    Listing *all;       /* overall progress, or NULL */
    int progress;
    double last_draw;
    volatile sig_atomic_t *stop;
} Sink;

enum { ATTEMPT_OK, ATTEMPT_RETRY, ATTEMPT_FAIL, ATTEMPT_STOP };

static int part_ok(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n == 0 || n > max || !strcmp(s, ".") || !strcmp(s, "..")) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return 0;
    }
    return 1;
}

int hub_repo_valid(const char *s) {
    const char *slash = s ? strchr(s, '/') : NULL;
    if (!slash || (size_t)(slash - s) > 96) return 0;
    char owner[100];
    snprintf(owner, sizeof owner, "%.*s", (int)(slash - s), s);
    return part_ok(owner, 96) && part_ok(slash + 1, 96);
}

int hub_rev_valid(const char *s) { return s && part_ok(s, 96); }

void hub_opts_default(HubOpts *o) {
    const char *ep = getenv("HF_ENDPOINT"), *tok = getenv("HF_TOKEN");
    snprintf(o->endpoint, sizeof o->endpoint, "%s", ep && *ep ? ep : "https://huggingface.co");
    size_t n = strlen(o->endpoint);
    while (n > 0 && o->endpoint[n - 1] == '/') o->endpoint[--n] = 0;
    o->token = tok && *tok ? tok : NULL;
    o->progress = isatty(STDERR_FILENO);
    o->tries = 5;
    o->backoff_ms = 1000;
    o->max_bytes = HUB_MAX_BYTES;
    o->max_bytes_set = 0;
    o->stall_s = HUB_STALL_S;
    o->connect_s = HUB_CONNECT_S;
    o->stop = NULL;
}

void hub_cache_dir(char *out, size_t cap) {
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && *x) snprintf(out, cap, "%s/ahascope", x);
    else snprintf(out, cap, "%s/.cache/ahascope", h && *h ? h : ".");
}

void hub_dir(const char *repo, const char *rev, char *out, size_t cap) {
    char cache[1024];
    hub_cache_dir(cache, sizeof cache);
    snprintf(out, cap, "%s/hub/%s/%s", cache, repo, rev);
}

int hub_cached(const char *repo, const char *rev, char *out, size_t cap) {
    char mark[1400];
    struct stat st;
    if (!hub_repo_valid(repo) || !hub_rev_valid(rev)) return -1;
    hub_dir(repo, rev, out, cap);
    snprintf(mark, sizeof mark, "%s/.complete", out);
    return stat(mark, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -1;
}

/* mkdir -p: every missing parent of dir, then dir. */
static int make_dirs(const char *dir, Err *e) {
    char p[1400];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return err_set(e, "%s: cannot create: %s", p, strerror(errno));
        if (!c) return 0;
        *s = c;
    }
}

static int stopped(volatile sig_atomic_t *stop) { return stop && *stop; }

/* Sleep ms, or less when stop is set meanwhile (the signal that sets it
 * interrupts the sleep). */
static void sleep_ms(long ms, volatile sig_atomic_t *stop) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR && !stopped(stop)) {}
}

/* ---- progress ---- */

/* One line, redrawn in place: this file's bar, then the whole pull's. */
static void draw(Sink *s, long long now, int final) {
    double t = clock_now();
    if (!s->progress || (!final && t - s->last_draw < 0.1)) return;
    s->last_draw = t;
    char b1[21], b2[21];
    double f = s->expect > 0 ? (double)now / (double)s->expect : 0;
    progress_bar(b1, f > 1 ? 1 : f);
    fprintf(stderr, "\r%-28.28s [%s] %3d%% %8.1f MB", s->label, b1, (int)(f * 100), now / 1e6);
    if (s->all && s->all->total > 0) {
        double g = (double)(s->all->done + now) / (double)s->all->total;
        progress_bar(b2, g > 1 ? 1 : g);
        fprintf(stderr, "  all [%s] %3d%%", b2, (int)(g * 100));
    }
    fputs(final ? "\n" : "", stderr);
    fflush(stderr);
}

/* libcurl calls this at least once a second, data or not: the bars, and
 * the place a stop asked for by a signal ends the transfer. */
static int on_progress(void *u, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal, (void)ultotal, (void)ulnow;
    Sink *s = u;
    if (s->f) draw(s, s->have + (long long)dlnow, 0);
    return stopped(s->stop);
}

/* ---- one request ---- */

static size_t on_data(char *p, size_t size, size_t nmemb, void *u) {
    Sink *s = u;
    size_t n = size * nmemb;
    if (!s->checked) {
        s->checked = 1;
        curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->code);
        if (s->f && s->have > 0 && s->code == 200) { /* the server ignored Range: start over */
            if (ftruncate(fileno(s->f), 0) != 0 || fseek(s->f, 0, SEEK_SET) != 0) return 0;
            s->have = 0;
        }
    }
    if (s->code != 200 && s->code != 206) return n; /* an error page, not data */
    if (s->f) {
        long long cap = s->expect >= 0 ? s->expect : s->max_file;
        if (s->have + s->got + (long long)n > cap) return s->too_big = 1, 0;
        if (fwrite(p, 1, n, s->f) != n) return 0;
        s->got += (long long)n;
        return n;
    }
    if (n > s->max - s->n) return s->over = 1, 0;
    char *m = realloc(s->mem, s->n + n + 1);
    if (!m) return 0;
    memcpy(m + s->n, p, n);
    s->mem = m, s->n += n, s->mem[s->n] = 0;
    return n;
}

/* A new socket for the next connection: until it connects, a timeout is
 * the connect timeout's. */
static curl_socket_t on_open_socket(void *u, curlsocktype purpose, struct curl_sockaddr *a) {
    (void)purpose;
    ((Sink *)u)->connected = 0;
    return socket(a->family, a->socktype, a->protocol);
}

/* Called once a connection is made or reused, before the request goes out. */
static int on_connected(void *u, char *ip, char *local_ip, int port, int local_port) {
    (void)ip, (void)local_ip, (void)port, (void)local_port;
    ((Sink *)u)->connected = 1;
    return CURL_PREREQFUNC_OK;
}

static void setup(Sink *s, const HubOpts *o, const char *url, struct curl_slist *hdr, char *range) {
    CURL *c = s->c;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr); /* libcurl drops Authorization on a redirect to another host */
    curl_easy_setopt(c, CURLOPT_USERAGENT, "ahascope");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, o->connect_s);
    /* a trickle is a stall, not just silence: a server sending a byte a
     * second would otherwise hold the pull forever */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, (long)HUB_STALL_RATE);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, o->stall_s);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L); /* the callback also sees a stop */
    curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, s);
    curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, on_connected);
    curl_easy_setopt(c, CURLOPT_PREREQDATA, s);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
    if (s->f && s->have > 0) {
        snprintf(range, 32, "%lld-", s->have);
        curl_easy_setopt(c, CURLOPT_RANGE, range);
    }
}

static int is_transient(CURLcode rc) {
    return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_PARTIAL_FILE ||
           rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING || rc == CURLE_SSL_CONNECT_ERROR;
}

/* What an HTTP status means for the pull; e says it in one line. */
static int judge_status(Sink *s, const char *what, const HubOpts *o, Err *e) {
    long c = s->code;
    if (c == 200 || c == 206) return ATTEMPT_OK;
    if (c == 401 || c == 403)
        return err_set(e, "%s: HTTP %ld: not authorised (a gated or private repository: set HF_TOKEN%s)", what, c,
                       o->token ? ", this one was refused" : ""), ATTEMPT_FAIL;
    if (c == 404) return err_set(e, "%s: HTTP 404: not found on %s", what, o->endpoint), ATTEMPT_FAIL;
    if (c == 416 && s->f) { /* more bytes kept than the file has: start over */
        if (ftruncate(fileno(s->f), 0) == 0 && fseek(s->f, 0, SEEK_SET) == 0) s->have = 0;
        return err_set(e, "%s: HTTP 416: the partial download does not fit", what), ATTEMPT_RETRY;
    }
    err_set(e, "%s: HTTP %ld from %s", what, c, o->endpoint);
    return c == 429 || c >= 500 ? ATTEMPT_RETRY : ATTEMPT_FAIL;
}

/* A file that came whole must have the Hub's size: short is a truncated
 * transfer (retried from where it stopped), long is refused. */
static int judge_size(Sink *s, const char *what, Err *e) {
    if (!s->f || s->expect < 0) return ATTEMPT_OK;
    if (fflush(s->f) != 0) return err_set(e, "%s: write error: %s", what, strerror(errno)), ATTEMPT_FAIL;
    long long got = (long long)ftello(s->f);
    if (got == s->expect) return ATTEMPT_OK;
    if (got < s->expect)
        return err_set(e, "%s: transfer ended at %lld of %lld bytes", what, got, s->expect), ATTEMPT_RETRY;
    if (ftruncate(fileno(s->f), 0) == 0) fseek(s->f, 0, SEEK_SET);
    return err_set(e, "%s: %lld bytes, the Hub lists %lld", what, got, s->expect), ATTEMPT_FAIL;
}

static int attempt(Sink *s, const HubOpts *o, const char *url, const char *what, struct curl_slist *hdr, Err *e) {
    char range[32];
    if (s->f) {
        if (fseek(s->f, 0, SEEK_END) != 0) return err_set(e, "%s: cannot seek", what), ATTEMPT_FAIL;
        s->have = (long long)ftello(s->f);
    } else s->n = 0;
    s->checked = 0, s->code = 0, s->over = 0, s->got = 0, s->too_big = 0, s->connected = 0;
    if (s->f && s->expect >= 0 && s->have == s->expect) return ATTEMPT_OK; /* whole, but never checked and renamed */
    setup(s, o, url, hdr, range);
    CURLcode rc = curl_easy_perform(s->c);
    if (!s->checked) curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->code);
    if (s->f) draw(s, (long long)ftello(s->f), 1);
    if (stopped(s->stop)) return err_set(e, "%s: interrupted", what), ATTEMPT_STOP;
    if (s->over) return err_set(e, "%s: answer over %zu bytes", what, s->max), ATTEMPT_FAIL;
    if (s->too_big && s->expect >= 0)
        return err_set(e, "%s: the server sent more than the %lld bytes the Hub lists; refused", what, s->expect),
               ATTEMPT_FAIL;
    if (s->too_big)
        return err_set(e, "%s: more than %lld bytes and the listing gives no size (--max-bytes); refused", what,
                       s->max_file), ATTEMPT_FAIL;
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        if (!s->connected)
            err_set(e, "%s: no connection to %s within %ld s (--connect-timeout)", what, o->endpoint, o->connect_s);
        else err_set(e, "%s: stalled: under %d bytes/s for %ld s (--stall)", what, HUB_STALL_RATE, o->stall_s);
        return ATTEMPT_RETRY;
    }
    if (rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_COULDNT_RESOLVE_PROXY)
        return err_set(e, "%s: cannot reach %s (offline? %s)", what, o->endpoint, curl_easy_strerror(rc)), ATTEMPT_FAIL;
    if (rc != CURLE_OK && s->code != 0 && s->code != 200 && s->code != 206) return judge_status(s, what, o, e);
    if (is_transient(rc)) {
        err_set(e, "%s: %s (%s)", what, curl_easy_strerror(rc),
                rc == CURLE_COULDNT_CONNECT ? "offline, or the endpoint is down?" : "transient");
        return ATTEMPT_RETRY;
    }
    if (rc != CURLE_OK) return err_set(e, "%s: %s", what, curl_easy_strerror(rc)), ATTEMPT_FAIL;
    int st = judge_status(s, what, o, e);
    return st == ATTEMPT_OK ? judge_size(s, what, e) : st;
}

/* One request with retries and doubling pauses. */
static int request(Sink *s, const HubOpts *o, const char *url, const char *what, Err *e) {
    struct curl_slist *hdr = NULL;
    char auth[1100];
    if (o->token) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %.1000s", o->token);
        hdr = curl_slist_append(NULL, auth);
    }
    long pause = o->backoff_ms;
    int st;
    s->stop = o->stop;
    for (int t = 1;; t++) {
        st = attempt(s, o, url, what, hdr, e);
        if (st != ATTEMPT_RETRY || t >= o->tries) break;
        char safe[4 * sizeof e->msg]; /* the message quotes a server's words */
        fprintf(stderr, "ahascope pull: %s; try %d of %d in %.1f s\n", textout_term(e->msg, safe, sizeof safe), t + 1,
                o->tries, pause / 1000.0);
        sleep_ms(pause, o->stop);
        if (stopped(o->stop)) {
            st = ATTEMPT_STOP;
            err_set(e, "%s: interrupted", what);
            break;
        }
        pause *= 2;
    }
    curl_slist_free_all(hdr);
    return st == ATTEMPT_OK ? 0 : -1;
}

/* ---- files ---- */

/* Compare a placed file's bytes with the Hub's checksum. */
static int verify(const char *path, const char *what, const char *sha, Err *e) {
    char got[65];
    if (!sha || !*sha) return 0;
    if (sha256_file(path, got, e)) return -1;
    if (strcmp(got, sha) != 0)
        return err_set(e, "%s: SHA-256 %.12s... does not match the Hub's %.12s...; nothing placed", what, got, sha);
    return 0;
}

/* The partial download, created or kept, never through a symlink and
 * only if it is a regular file (appends go to its end; a restart truncates). */
static FILE *open_partial(const char *part, Err *e) {
    struct stat st;
    int fd = open(part, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return err_set(e, "%s: cannot write: %s", part, strerror(errno)), NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(e, "%s: not a regular file; remove it", part), NULL;
    }
    FILE *f = fdopen(fd, "a+");
    if (!f) close(fd), err_set(e, "%s: cannot write: %s", part, strerror(errno));
    return f;
}

/* A positive whole-number member of a config, or 0. */
static long long config_int(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= 1e7 ? (long long)v->valuedouble : 0;
}

/* The most bytes a weights file of the model config.json (in dir)
 * describes can hold: its parameters (embeddings and head, then per layer
 * attention and MLP) at 4 bytes, twice over, plus 64 MiB of header; 0 when
 * the config lacks the shape. */
static long long model_cap(const char *dir) {
    char path[1400];
    size_t len;
    Err e = {0};
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = file_read_all(path, "config", "a model's config.json", (size_t)1 << 20, &len, &e);
    cJSON *c = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    long long d = config_int(c, "hidden_size"), L = config_int(c, "num_hidden_layers"),
              f = config_int(c, "intermediate_size"), v = config_int(c, "vocab_size");
    cJSON_Delete(c);
    if (!d || !L || !f || !v) return 0;
    return 8 * (2 * v * d + L * (4 * d * d + 3 * d * f + 2 * d)) + (64LL << 20);
}

/* What a file the listing gives no size for may reach: --max-bytes when
 * given, else the least of HUB_MAX_BYTES, the model's cap and the free
 * space where it is written (so a server that never ends cannot fill it). */
static long long no_size_cap(const HubOpts *o, const char *dest, const Listing *all) {
    if (o->max_bytes_set) return o->max_bytes;
    long long cap = o->max_bytes;
    if (all && all->model_cap > 0 && all->model_cap < cap) cap = all->model_cap;
    char dir[1400];
    struct statvfs fs;
    file_parent(dest, dir, sizeof dir);
    if (statvfs(dir, &fs) == 0 && (long long)fs.f_bavail * (long long)fs.f_frsize < cap)
        cap = (long long)fs.f_bavail * (long long)fs.f_frsize;
    return cap > 0 ? cap : 1;
}

static int fetch_one(CURL *c, const HubOpts *o, const char *url, const char *dest, const char *what,
                     const HubFile *hf, Listing *all, Err *e) {
    char part[1400];
    const char *label = strrchr(dest, '/') ? strrchr(dest, '/') + 1 : dest;
    snprintf(part, sizeof part, "%s.partial", dest);
    FILE *f = open_partial(part, e);
    if (!f) return -1;
    Sink s = {.c = c, .f = f, .expect = hf ? hf->size : -1, .max_file = no_size_cap(o, dest, all), .label = label, .all = all,
              .progress = o->progress};
    int rc = request(&s, o, url, what, e);
    if (fclose(f) != 0 && rc == 0) rc = err_set(e, "%s: write error: %s", part, strerror(errno));
    if (rc && s.too_big) unlink(part); /* not the file listed, nor worth resuming */
    if (rc && stopped(o->stop)) { /* what arrived stays, for the next pull to resume */
        struct stat st;
        long long kept = stat(part, &st) == 0 ? (long long)st.st_size : 0;
        err_set(e, "%s: interrupted; %s keeps %lld bytes, which the next pull resumes", what, part, kept);
    }
    if (rc == 0 && verify(part, what, hf ? hf->sha : NULL, e) != 0) rc = -1, unlink(part);
    if (rc == 0 && rename(part, dest) != 0) rc = err_set(e, "%s: cannot rename into place: %s", dest, strerror(errno));
    return rc;
}

int hub_fetch(const HubOpts *o, const char *url, const char *dest, const char *sha256, Err *e) {
    HubFile hf = {.size = -1};
    char dir[1400];
    snprintf(hf.sha, sizeof hf.sha, "%s", sha256 ? sha256 : "");
    file_parent(dest, dir, sizeof dir);
    if (make_dirs(dir, e)) return -1;
    CURL *c = curl_easy_init();
    if (!c) return err_set(e, "cannot start libcurl");
    int rc = fetch_one(c, o, url, dest, dest, &hf, NULL, e);
    curl_easy_cleanup(c);
    return rc;
}

/* ---- the listing ---- */

static cJSON *get_json(CURL *c, const HubOpts *o, const char *url, const char *what, Err *e) {
    Sink s = {.c = c, .max = MAX_JSON};
    cJSON *j = NULL;
    if (request(&s, o, url, what, e) == 0) {
        j = s.mem ? cJSON_Parse(s.mem) : NULL;
        if (!j) err_set(e, "%s: the Hub's answer is not JSON", what);
    }
    free(s.mem);
    return j;
}

static HubFile *listing_find(Listing *l, const char *name) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->f[i].name, name)) return &l->f[i];
    return NULL;
}

static int is_hex64(const char *s) {
    if (strlen(s) != 64) return 0;
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* siblings[].rfilename from the revision endpoint: the files there are. */
static int read_siblings(const cJSON *info, Listing *l, const char *what, Err *e) {
    const cJSON *sib = cJSON_GetObjectItemCaseSensitive(info, "siblings"), *it;
    if (!cJSON_IsArray(sib)) return err_set(e, "%s: no siblings in the Hub's answer", what);
    int n = cJSON_GetArraySize(sib);
    if (n > MAX_FILES) return err_set(e, "%s: %d files listed (at most %d)", what, n, MAX_FILES);
    l->f = calloc((size_t)n + 1, sizeof *l->f);
    if (!l->f) return err_set(e, "out of memory");
    cJSON_ArrayForEach(it, sib) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "rfilename");
        if (!cJSON_IsString(r) || strlen(r->valuestring) >= NAME_CAP) continue; /* nothing we would fetch */
        snprintf(l->f[l->n].name, NAME_CAP, "%s", r->valuestring);
        l->f[l->n++].size = -1;
    }
    return 0;
}

/* Sizes and LFS checksums from the tree endpoint. */
static int read_tree(const cJSON *tree, Listing *l, const char *what, Err *e) {
    const cJSON *it;
    if (!cJSON_IsArray(tree)) return err_set(e, "%s: the tree is not a list", what);
    cJSON_ArrayForEach(it, tree) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path"), *sz = cJSON_GetObjectItemCaseSensitive(it, "size");
        const cJSON *lfs = cJSON_GetObjectItemCaseSensitive(it, "lfs");
        const cJSON *oid = cJSON_GetObjectItemCaseSensitive(lfs, "oid");
        HubFile *f = cJSON_IsString(p) ? listing_find(l, p->valuestring) : NULL;
        if (!f) continue;
        if (cJSON_IsNumber(sz) && sz->valuedouble >= 0 && sz->valuedouble < 1e15) f->size = (long long)sz->valuedouble;
        if (!lfs) continue;
        if (!cJSON_IsString(oid) || !is_hex64(oid->valuestring))
            return err_set(e, "%s: %s: the Hub gives no valid SHA-256 for this large file", what, f->name);
        snprintf(f->sha, sizeof f->sha, "%s", oid->valuestring);
    }
    return 0;
}

static int list_repo(CURL *c, const HubOpts *o, const char *repo, const char *rev, Listing *l, Err *e) {
    char url[1400];
    snprintf(url, sizeof url, "%s/api/models/%s/revision/%s", o->endpoint, repo, rev);
    cJSON *info = get_json(c, o, url, repo, e);
    if (!info) return -1;
    int rc = read_siblings(info, l, repo, e);
    cJSON_Delete(info);
    if (rc) return -1;
    snprintf(url, sizeof url, "%s/api/models/%s/tree/%s", o->endpoint, repo, rev);
    cJSON *tree = get_json(c, o, url, repo, e);
    if (!tree) return -1;
    rc = read_tree(tree, l, repo, e);
    cJSON_Delete(tree);
    return rc;
}

/* ---- the pull ---- */

typedef struct {
    char name[MAX_SHARDS + 8][NAME_CAP];
    int n;
} Wanted;

static int want(Wanted *w, Listing *l, const char *name, int required, const char *repo, Err *e) {
    if (!listing_find(l, name)) return required ? err_set(e, "%s: the repository has no %s", repo, name) : 0;
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->name[i], name)) return 0;
    if (w->n >= MAX_SHARDS + 8) return err_set(e, "%s: more than %d files to fetch", repo, MAX_SHARDS);
    snprintf(w->name[w->n++], NAME_CAP, "%s", name);
    return 0;
}

/* The shards model.safetensors.index.json names in its weight_map. */
static int want_shards(Wanted *w, Listing *l, const char *index, const char *repo, Err *e) {
    size_t len;
    char *text = file_read_all(index, "shard index", "a JSON file", MAX_JSON, &len, e);
    if (!text) return -1;
    cJSON *j = cJSON_Parse(text), *it;
    free(text);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(j, "weight_map");
    int rc = cJSON_IsObject(map) ? 0 : err_set(e, "%s: no weight_map object", index);
    const cJSON *walk = rc ? NULL : map;
    cJSON_ArrayForEach(it, walk) {
        const char *s = cJSON_IsString(it) ? it->valuestring : "";
        if (!part_ok(s, NAME_CAP - 1)) { rc = err_set(e, "%s: shard name \"%.60s\" is not a plain file name", index, s); break; }
        if ((rc = want(w, l, s, 1, repo, e)) != 0) break;
    }
    cJSON_Delete(j);
    return rc;
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
}

/* Fetch a listed file into dir unless an earlier pull already placed it. */
static int fetch_listed(CURL *c, const HubOpts *o, const char *repo, const char *rev, const char *dir,
                        const char *name, Listing *l, Err *e) {
    char url[1400], dest[1400], what[600];
    HubFile *f = listing_find(l, name);
    snprintf(what, sizeof what, "%s: %s", repo, name);
    snprintf(dest, sizeof dest, "%s/%s", dir, name);
    long long have = file_size(dest);
    snprintf(url, sizeof url, "%s/%s/resolve/%s/%s", o->endpoint, repo, rev, name);
    int placed = have >= 0 && (f->size < 0 || have == f->size); /* placed only after its checks passed */
    int rc = placed ? 0 : fetch_one(c, o, url, dest, what, f, l, e);
    if (f->size > 0) l->done += f->size;
    return rc;
}

static int pull_files(CURL *c, const HubOpts *o, const char *repo, const char *rev, const char *dir, Listing *l,
                      Wanted *w, Err *e) {
    static const char *const META[] = {"config.json", "generation_config.json", "tokenizer.json",
                                       "tokenizer_config.json"};
    for (int i = 0; i < 4; i++)
        if (want(w, l, META[i], i == 0, repo, e)) return -1;
    const char *index = "model.safetensors.index.json";
    int sharded = !listing_find(l, "model.safetensors");
    if (want(w, l, sharded ? index : "model.safetensors", 0, repo, e)) return -1;
    if (sharded && !listing_find(l, index))
        return err_set(e, "%s: neither model.safetensors nor %s (only safetensors models can be pulled)", repo, index);
    for (int i = 0; i < w->n; i++) {
        HubFile *f = listing_find(l, w->name[i]);
        if (f->size > 0) l->total += f->size;
    }
    for (int i = 0; i < w->n; i++) {
        if (fetch_listed(c, o, repo, rev, dir, w->name[i], l, e)) return -1;
        if (i == 0) l->model_cap = model_cap(dir); /* config.json comes first */
        if (sharded && !strcmp(w->name[i], index)) {
            char path[1400];
            snprintf(path, sizeof path, "%s/%s", dir, index);
            if (want_shards(w, l, path, repo, e)) return -1;
            for (int k = 0; k < w->n; k++) {
                HubFile *f = listing_find(l, w->name[k]);
                if (k > i && f->size > 0) l->total += f->size;
            }
        }
    }
    return 0;
}

/* `.complete`, written last and atomically: the names of the files placed. */
static int mark_complete(const char *dir, const Wanted *w, Err *e) {
    char path[1400];
    FileAtomic a;
    snprintf(path, sizeof path, "%s/.complete", dir);
    if (!file_atomic_open(&a, path, e)) return -1;
    for (int i = 0; i < w->n; i++) fprintf(a.f, "%s\n", w->name[i]);
    return file_atomic_commit(&a, e);
}

int hub_pull(const char *repo, const char *rev, const HubOpts *o, char *dir, size_t cap, Err *e) {
    if (!hub_repo_valid(repo)) return err_set(e, "%s: not a repository id (OWNER/NAME)", repo);
    if (!hub_rev_valid(rev)) return err_set(e, "%s: not a revision (a branch, tag or commit)", rev);
    if (hub_cached(repo, rev, dir, cap) == 0) return 0;
    if (make_dirs(dir, e)) return -1;
    CURL *c = curl_easy_init();
    Listing l = {0};
    Wanted *w = calloc(1, sizeof *w);
    int rc = !c || !w ? err_set(e, "out of memory") : list_repo(c, o, repo, rev, &l, e);
    if (rc == 0) rc = pull_files(c, o, repo, rev, dir, &l, w, e);
    if (rc == 0) rc = mark_complete(dir, w, e);
    free(w);
    free(l.f);
    if (c) curl_easy_cleanup(c);
    return rc;
}

/* ---- one GGUF file of a repository ---- */

static int ends_gguf(const char *name) {
    size_t n = strlen(name);
    return n > 5 && !strcasecmp(name + n - 5, ".gguf");
}

/* Whether name is what pattern picks: the name itself, or (any case) a
 * .gguf whose name holds it. */
static int gguf_matches(const char *name, const char *pattern) {
    return ends_gguf(name) && (!strcmp(name, pattern) || strcasestr(name, pattern) != NULL);
}

/* "a, b, c" of up to 8 names, for the message of a pattern that picks zero
 * or several files. */
static void add_name(char *list, size_t cap, int k, const char *name) {
    size_t n = strlen(list);
    if (k < 8) snprintf(list + n, cap - n, "%s%s", k ? ", " : "", name);
    else if (k == 8) snprintf(list + n, cap - n, ", ...");
}

/* The one file pattern picks among names[0..n) (stride bytes apart): its
 * index, or -1 with e naming what was found. An exact name wins outright. */
static int pick_gguf(const char *names, int n, size_t stride, const char *pattern, const char *where, Err *e) {
    char hits[1200] = "", all[1200] = "";
    int found = -1, n_hits = 0, n_all = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names + (size_t)i * stride;
        if (!strcmp(name, pattern) && ends_gguf(name)) return i;
        if (ends_gguf(name)) add_name(all, sizeof all, n_all++, name);
        if (gguf_matches(name, pattern)) add_name(hits, sizeof hits, n_hits++, name), found = i;
    }
    if (n_hits == 1) return found;
    if (n_hits > 1) return err_set(e, "%s: '%s' matches %d .gguf files: %s; name one", where, pattern, n_hits, hits), -1;
    if (!n_all) return err_set(e, "%s: no .gguf file", where), -1;
    return err_set(e, "%s: no .gguf file matches '%s' (there are: %s)", where, pattern, all), -1;
}

int hub_pull_file(const char *repo, const char *rev, const char *pattern, const HubOpts *o, char *path, size_t cap, Err *e) {
    if (!hub_repo_valid(repo)) return err_set(e, "%s: not a repository id (OWNER/NAME)", repo);
    if (!hub_rev_valid(rev)) return err_set(e, "%s: not a revision (a branch, tag or commit)", rev);
    if (!pattern || !*pattern || strchr(pattern, '/')) return err_set(e, "--file '%s': not a file name or pattern", pattern ? pattern : "");
    char dir[1200], what[600];
    hub_dir(repo, rev, dir, sizeof dir);
    CURL *c = curl_easy_init();
    Listing l = {0};
    int rc = !c ? err_set(e, "cannot start libcurl") : list_repo(c, o, repo, rev, &l, e), k = -1;
    if (rc == 0 && (k = pick_gguf(l.f[0].name, l.n, sizeof l.f[0], pattern, repo, e)) < 0) rc = -1;
    HubFile *f = rc == 0 ? &l.f[k] : NULL;
    if (rc == 0 && !part_ok(f->name, NAME_CAP - 1)) rc = err_set(e, "%s: %s is not a plain file name", repo, f->name);
    if (rc == 0) {
        char url[1400];
        snprintf(path, cap, "%s/%s", dir, f->name);
        snprintf(what, sizeof what, "%s: %s", repo, f->name);
        snprintf(url, sizeof url, "%s/%s/resolve/%s/%s", o->endpoint, repo, rev, f->name);
        long long have = file_size(path);
        l.total = f->size > 0 ? f->size : 0;
        if (!(have >= 0 && (f->size < 0 || have == f->size))) /* placed only after its checks passed */
            rc = make_dirs(dir, e) || fetch_one(c, o, url, path, what, f, &l, e) ? -1 : 0;
    }
    free(l.f);
    if (c) curl_easy_cleanup(c);
    return rc;
}

int hub_cached_file(const char *repo, const char *rev, const char *pattern, char *out, size_t cap, Err *e) {
    char dir[1200];
    hub_dir(repo, rev, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d) return err_set(e, "%s:%s: not pulled into %s; run: ahascope pull %s --file %s", repo, pattern, dir, repo, pattern);
    char (*names)[NAME_CAP] = NULL;
    int n = 0, k = -1;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < MAX_FILES) {
        if (strlen(de->d_name) >= NAME_CAP || !ends_gguf(de->d_name)) continue; /* .partial files end otherwise */
        char (*grown)[NAME_CAP] = realloc(names, ((size_t)n + 1) * sizeof *names);
        if (!grown) break;
        names = grown;
        snprintf(names[n++], NAME_CAP, "%s", de->d_name);
    }
    closedir(d);
    char where[1400];
    snprintf(where, sizeof where, "%s:%s (in %s)", repo, pattern, dir);
    if (n == 0) err_set(e, "%s:%s: not pulled into %s; run: ahascope pull %s --file %s", repo, pattern, dir, repo, pattern);
    else if ((k = pick_gguf(names[0], n, sizeof names[0], pattern, where, e)) >= 0) snprintf(out, cap, "%s/%s", dir, names[k]);
    free(names);
    return k >= 0 ? 0 : -1;
}
