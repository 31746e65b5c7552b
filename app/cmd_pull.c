/* `ahascope pull OWNER/NAME`: the flags; the download itself is app/hub.c. */
#include <stdio.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/hub.h"

static void pull_help(void) {
    puts("usage: ahascope pull OWNER/NAME [--revision R] [--progress]\n\n"
         "Download a model repository from the Hugging Face Hub into the cache,\n"
         "$XDG_CACHE_HOME/ahascope/hub/OWNER/NAME/R/ (default ~/.cache): config.json,\n"
         "generation_config.json, tokenizer.json, tokenizer_config.json, and model.safetensors or\n"
         "model.safetensors.index.json with every shard it names. Afterwards --model OWNER/NAME (or\n"
         "OWNER/NAME@R) on any command finds it there.\n\n"
         "--revision R   branch, tag or commit (default main)\n"
         "--progress     draw the progress bars even when stderr is not a terminal\n\n"
         "Every large file is checked against the Hub's SHA-256 before it is placed; an interrupted\n"
         "pull resumes where it stopped (FILE.partial in the folder); transient errors are retried\n"
         "with growing pauses; the folder is used only once .complete is written, last.\n"
         "Environment: HF_TOKEN (gated or private repositories), HF_ENDPOINT (a mirror, default\n"
         "https://huggingface.co), XDG_CACHE_HOME.");
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
        else if (f[0] != '-' && !repo) repo = f;
        else { args_unknown(f, &e); return args_fail(&e); }
    }
    if (!repo) { err_usage(&e, "which repository? ahascope pull OWNER/NAME"); return args_fail(&e); }
    if (!hub_repo_valid(repo)) { err_usage(&e, "%s: not a repository id (OWNER/NAME)", repo); return args_fail(&e); }
    if (!hub_rev_valid(rev)) { err_usage(&e, "--revision %s: not a branch, tag or commit name", rev); return args_fail(&e); }
    char dir[1200];
    if (hub_pull(repo, rev, &o, dir, sizeof dir, &e)) return args_fail(&e);
    printf("%s\n", dir);
    return 0;
}
