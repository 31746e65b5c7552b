/* `ahascope pull OWNER/NAME [--file NAME.gguf]`: the flags; the download itself is app/hub.c. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/hub.h"

static volatile sig_atomic_t g_stop; /* Ctrl-C or SIGTERM: the transfer ends, its partial kept */

static void on_stop(int sig) { (void)sig, g_stop = 1; }

typedef struct {
    HubOpts hub;
    const char *rev;
    const char *file; /* --file: one .gguf instead of the safetensors model */
} PullOpts;

static int read_max_bytes(void *opts, const char *flag, const char *v, Err *e) {
    long n = 0;
    if (args_int(flag, v, 1, 1L << 50, &n, e)) return -1;
    ((PullOpts *)opts)->hub.max_bytes = n, ((PullOpts *)opts)->hub.max_bytes_set = 1;
    return 0;
}

#define P(field) offsetof(PullOpts, field)

static const ArgSpec PULL_ROWS[] = {
    {"--revision", ARG_STRING, P(rev), .metavar = "R", .help = "branch, tag or commit (default main)"},
    {"--file", ARG_STRING, P(file), .metavar = "NAME",
     .help = "pull one .gguf: its name, or a part of it (e.g. Q4_K_M, any case) exactly one .gguf holds"},
    {"--progress", ARG_FLAG, P(hub.progress), .help = "draw the progress bars even when stderr is not a terminal"},
    {"--max-bytes", ARG_CUSTOM, .metavar = "N", .fn = read_max_bytes,
     .help = "bytes a file may have when the listing gives no size (default: 8 bytes a parameter of config.json's "
             "shape plus 64 MiB, at most 64 GiB and the free space); a file never grows past the size the listing gives"},
    {"--stall", ARG_LONG, P(hub.stall_s), 1, 3600, "S",
     .help = "under 1024 bytes/s for S seconds is a stall, retried (default 30)"},
    {"--connect-timeout", ARG_LONG, P(hub.connect_s), 1, 3600, "S", .help = "seconds to connect (default 15)"},
    {"--tries", ARG_INT, P(hub.tries), 1, 100, "N",
     .help = "attempts per request, with pauses of 1, 2, 4 ... s between (default 5)"},
};
static const ArgsTable PULL_FLAGS = ARGS_TABLE(NULL, PullOpts, PULL_ROWS);

const ArgsTable *const PULL_TABLES[] = {&PULL_FLAGS, NULL};

static void pull_help(void) {
    puts("usage: ahascope pull OWNER/NAME [--revision R] [--file NAME] [--progress] [--max-bytes N]\n"
         "                     [--stall S] [--connect-timeout S] [--tries N]\n\n"
         "Download a model repository from the Hugging Face Hub into the cache,\n"
         "$XDG_CACHE_HOME/ahascope/hub/OWNER/NAME/R/ (default ~/.cache): config.json,\n"
         "generation_config.json, tokenizer.json, tokenizer_config.json, and model.safetensors or\n"
         "model.safetensors.index.json with every shard it names. Afterwards --model OWNER/NAME (or\n"
         "OWNER/NAME@R) on any command finds it there.\n"
         "With --file, one .gguf file of the repository instead (named, or picked by a part of its\n"
         "name such as Q4_K_M), placed in the same folder; --model OWNER/NAME:FILE finds it.\n\n"
         "Every large file is checked against the Hub's SHA-256 before it is placed; an interrupted\n"
         "pull (Ctrl-C: exit 130) resumes where it stopped (FILE.partial in the folder); transient\n"
         "errors and stalls are retried with growing pauses; the folder is used only once .complete is\n"
         "written, last.\n"
         "Environment: HF_TOKEN (gated or private repositories), HF_ENDPOINT (a mirror, default\n"
         "https://huggingface.co), XDG_CACHE_HOME.\n");
    args_help_tables(PULL_TABLES);
}

/* The repository, the one positional argument, among the flags. */
static int parse_pull(int argc, char **argv, PullOpts *p, const char **repo, Err *e) {
    Args a = {argc, argv, 1};
    void *const opts[] = {p};
    int r;
    while ((r = args_parse_table(&a, PULL_TABLES, opts, e)) == ARGS_POSITIONAL) {
        if (*repo || !strcmp(argv[a.i], "-")) return args_unknown(argv[a.i], e);
        *repo = argv[a.i++];
    }
    return r;
}

int cmd_pull(int argc, char **argv) {
    Err e;
    PullOpts p = {.rev = "main"};
    const char *repo = NULL;
    hub_opts_default(&p.hub);
    int r = parse_pull(argc, argv, &p, &repo, &e);
    if (r == ARGS_HELP) { pull_help(); return 0; }
    if (r != ARGS_DONE) return args_fail(&e);
    HubOpts o = p.hub;
    const char *rev = p.rev;
    if (!repo) { err_usage(&e, "which repository? ahascope pull OWNER/NAME"); return args_fail(&e); }
    if (!hub_repo_valid(repo)) { err_usage(&e, "%s: not a repository id (OWNER/NAME)", repo); return args_fail(&e); }
    if (!hub_rev_valid(rev)) { err_usage(&e, "--revision %s: not a branch, tag or commit name", rev); return args_fail(&e); }
    char dir[1200];
    o.stop = &g_stop;
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    int rc = p.file ? hub_pull_file(repo, rev, p.file, &o, dir, sizeof dir, &e) : hub_pull(repo, rev, &o, dir, sizeof dir, &e);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (rc) return g_stop ? (args_fail(&e), 130) : args_fail(&e);
    printf("%s\n", dir);
    return 0;
}
