/* `ahascope pull OWNER/NAME`: the flags; the download itself is app/hub.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/hub.h"

static volatile sig_atomic_t g_stop; /* Ctrl-C or SIGTERM: the transfer ends, its partial kept */

static void on_stop(int sig) { (void)sig, g_stop = 1; }

static void pull_help(void) {
    puts("usage: ahascope pull OWNER/NAME [--revision R] [--progress] [--max-bytes N] [--stall S]\n"
         "                     [--connect-timeout S] [--tries N]\n\n"
         "Download a model repository from the Hugging Face Hub into the cache,\n"
         "$XDG_CACHE_HOME/ahascope/hub/OWNER/NAME/R/ (default ~/.cache): config.json,\n"
         "generation_config.json, tokenizer.json, tokenizer_config.json, and model.safetensors or\n"
         "model.safetensors.index.json with every shard it names. Afterwards --model OWNER/NAME (or\n"
         "OWNER/NAME@R) on any command finds it there.\n\n"
         "--revision R   branch, tag or commit (default main)\n"
         "--progress     draw the progress bars even when stderr is not a terminal\n"
         "--max-bytes N  bytes a file may have when the listing gives no size (default 64 GiB);\n"
         "               a file never grows past the size the listing gives\n"
         "--stall S      under 1024 bytes/s for S seconds is a stall, retried (default 30)\n"
         "--connect-timeout S  seconds to connect (default 15)\n"
         "--tries N      attempts per request, with pauses of 1, 2, 4 ... s between (default 5)\n\n"
         "Every large file is checked against the Hub's SHA-256 before it is placed; an interrupted\n"
         "pull (Ctrl-C: exit 130) resumes where it stopped (FILE.partial in the folder); transient\n"
         "errors and stalls are retried with growing pauses; the folder is used only once .complete is\n"
         "written, last.\n"
         "Environment: HF_TOKEN (gated or private repositories), HF_ENDPOINT (a mirror, default\n"
         "https://huggingface.co), XDG_CACHE_HOME.");
}

/* One of the bounds: --max-bytes, --stall, --connect-timeout, --tries. */
static int pull_bound(HubOpts *o, const char *flag, const char *v, Err *e) {
    long n;
    if (!v) return -1;
    if (!strcmp(flag, "--max-bytes")) {
        if (args_int(flag, v, 1, 1L << 50, &n, e)) return -1;
        o->max_bytes = n;
        return 0;
    }
    int tries = !strcmp(flag, "--tries");
    if (args_int(flag, v, 1, tries ? 100 : 3600, &n, e)) return -1;
    if (tries) o->tries = (int)n;
    else if (!strcmp(flag, "--stall")) o->stall_s = n;
    else o->connect_s = n;
    return 0;
}

int cmd_pull(int argc, char **argv) {
    Args a = {argc, argv, 1};
    Err e;
    HubOpts o;
    const char *repo = NULL, *rev = "main";
    hub_opts_default(&o);
    while (a.i < argc) {
        const char *f = argv[a.i++];
        if (args_is_help(f)) { pull_help(); return 0; }
        if (!strcmp(f, "--revision")) { if (!(rev = args_value(&a, &e))) return args_fail(&e); }
        else if (!strcmp(f, "--progress")) o.progress = 1;
        else if (!strcmp(f, "--max-bytes") || !strcmp(f, "--stall") || !strcmp(f, "--connect-timeout") ||
                 !strcmp(f, "--tries")) {
            if (pull_bound(&o, f, args_value(&a, &e), &e)) return args_fail(&e);
        } else if (f[0] != '-' && !repo) repo = f;
        else { args_unknown(f, &e); return args_fail(&e); }
    }
    if (!repo) { err_usage(&e, "which repository? ahascope pull OWNER/NAME"); return args_fail(&e); }
    if (!hub_repo_valid(repo)) { err_usage(&e, "%s: not a repository id (OWNER/NAME)", repo); return args_fail(&e); }
    if (!hub_rev_valid(rev)) { err_usage(&e, "--revision %s: not a branch, tag or commit name", rev); return args_fail(&e); }
    char dir[1200];
    o.stop = &g_stop;
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    int rc = hub_pull(repo, rev, &o, dir, sizeof dir, &e);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (rc) return g_stop ? (args_fail(&e), 130) : args_fail(&e);
    printf("%s\n", dir);
    return 0;
}
