/* hub.h — models from the Hugging Face Hub, downloaded into the cache.
 *
 * A repository OWNER/NAME at a revision lands in
 * $XDG_CACHE_HOME/ahascope/hub/OWNER/NAME/REVISION/ (hub_cache_dir). Nothing
 * half-written is ever used: each file arrives as FILE.partial (kept between
 * runs, so a later pull resumes it with a Range request), is checked against
 * the Hub's size and, for large (LFS) files, SHA-256, and only then renamed
 * to FILE; the folder counts as a model only once `.complete` is written,
 * last. Requests retry transient failures (5xx, 429, timeouts, truncated
 * transfers) with doubling pauses; 401/403, 404 and being offline end the
 * pull with one line saying which. The endpoint is $HF_ENDPOINT (a mirror),
 * default https://huggingface.co; $HF_TOKEN is sent as a bearer token. No
 * state outlives a call.
 *
 * Nothing a server does can make a pull unbounded: a file may not grow
 * past the size the listing gives (or, when it gives none, max_bytes when
 * set, else what config.json's shape holds, within the free space), a
 * connection must be made within connect_s, a transfer slower than
 * HUB_STALL_RATE for stall_s is a stall (retried like a timeout), and
 * *stop, set by the caller's signal handler, ends the transfer within a
 * second, keeping FILE.partial for the next pull to resume.
 */
#ifndef AHASCOPE_HUB_H
#define AHASCOPE_HUB_H

#include <signal.h>
#include <stddef.h>

#include "engine/err.h"

#define HUB_MAX_BYTES (64LL << 30) /* default max_bytes: the largest single file a model repository holds */
#define HUB_STALL_RATE 1024        /* bytes per second under which a transfer is stalled */
#define HUB_STALL_S 30             /* default stall_s */
#define HUB_CONNECT_S 15           /* default connect_s */

typedef struct {
    char endpoint[512]; /* no trailing '/' */
    const char *token;  /* bearer token, or NULL */
    int progress;       /* draw per-file and overall bars on stderr */
    int tries;          /* attempts per request, >= 1 */
    long backoff_ms;    /* pause before the second attempt; doubles after each */
    long long max_bytes; /* bytes a file may have when the listing gives no size */
    int max_bytes_set;   /* max_bytes given (--max-bytes): else the model's shape and the free space bound it too */
    long stall_s;       /* seconds under HUB_STALL_RATE that make a stall */
    long connect_s;     /* seconds a connection may take */
    volatile sig_atomic_t *stop; /* nonzero (set by a signal handler) stops the pull; NULL: never */
} HubOpts;

/* Defaults from the environment: HF_ENDPOINT, HF_TOKEN, bars only when
 * stderr is a terminal, 5 tries starting at a 1 s pause, HUB_MAX_BYTES,
 * HUB_STALL_S, HUB_CONNECT_S, no stop flag. */
void hub_opts_default(HubOpts *o);

/* The cache directory every download lands under, and where models are
 * looked for last: $XDG_CACHE_HOME/ahascope, or ~/.cache/ahascope. */
void hub_cache_dir(char *out, size_t cap);

/* Whether s has the shape of a repository id, OWNER/NAME (letters, digits,
 * '-', '_', '.', neither part empty, "." or "..", at most 96 bytes each), so
 * it can name cache folders and URLs without escaping. */
int hub_repo_valid(const char *s);

/* Whether s can be a revision (a branch, tag or commit): the characters of
 * a repository part, at most 96 bytes, not "." or "..". */
int hub_rev_valid(const char *s);

/* The cache folder of repo at rev (whether or not it exists). */
void hub_dir(const char *repo, const char *rev, char *out, size_t cap);

/* The folder of a complete pull of repo at rev into out. Returns 0 if there
 * is one, -1 if nothing complete is cached. */
int hub_cached(const char *repo, const char *rev, char *out, size_t cap);

/* Download repo at rev (config.json, generation_config.json, tokenizer.json,
 * tokenizer_config.json, model.safetensors or the index and every shard it
 * names) into its cache folder, written to dir. Returns 0 when the folder is
 * complete (already, or now), -1 with e set. */
int hub_pull(const char *repo, const char *rev, const HubOpts *o, char *dir, size_t cap, Err *e);

/* One .gguf file of repo at rev into its cache folder, the path written to
 * path: pattern is the file's name, or a part of it (any case) that exactly
 * one .gguf of the listing holds; zero or several is an error listing the
 * candidates. Checked against the listing's size and SHA-256 like the
 * safetensors; already placed (the right size) means nothing is fetched. */
int hub_pull_file(const char *repo, const char *rev, const char *pattern, const HubOpts *o, char *path, size_t cap, Err *e);

/* The pulled .gguf of repo at rev that pattern picks (as hub_pull_file
 * picks, among the files in the cache folder) into out; -1 with e saying
 * to pull when there is none, or listing the candidates. */
int hub_cached_file(const char *repo, const char *rev, const char *pattern, char *out, size_t cap, Err *e);

/* One file from url into dest the same way (dest.partial, resume, retries,
 * then rename; missing directories made), checked against sha256 (64 hex
 * digits) unless it is NULL. */
int hub_fetch(const HubOpts *o, const char *url, const char *dest, const char *sha256, Err *e);

#endif
