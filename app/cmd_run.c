/* `ahascope run` (what `make run` does): make sure a model is at hand,
 * downloading stories260K into the cache when none is found, then run the
 * main job: for now, a story from the default model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "app/args.h"
#include "app/commands.h"
#include "app/hub.h"
#include "app/setup.h"
#include "engine/textout.h"

/* karpathy/tinyllamas keeps it in a subfolder, outside what `pull` fetches:
 * each file goes through hub_fetch (so HF_ENDPOINT applies here too). */
#define UPSTREAM "karpathy/tinyllamas/resolve/main/stories260K"

static const struct { const char *name, *sha256; } FILES[] = {
    {"stories260K.bin", "b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696"},
    {"tok512.bin", "037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312"},
};

/* Each file to FILE.partial, checked against its sha256, then renamed. */
static int download_default(const char *dir, Err *e) {
    HubOpts o;
    hub_opts_default(&o);
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char url[1200], dest[1200];
        char safe[4 * 900 + 1];
        fprintf(stderr, "ahascope run: downloading %s into %s\n", FILES[i].name, textout_term(dir, safe, sizeof safe));
        snprintf(url, sizeof url, "%s/%s/%s", o.endpoint, UPSTREAM, FILES[i].name);
        snprintf(dest, sizeof dest, "%.900s/%s", dir, FILES[i].name);
        if (hub_fetch(&o, url, dest, FILES[i].sha256, e) != 0) {
            char why[512];
            snprintf(why, sizeof why, "%s", e->msg);
            return err_set(e, "%.300s. Copy stories260K.bin and tok512.bin from %s/%s into %s, or pass --model PATH",
                           why, o.endpoint, UPSTREAM, dir);
        }
    }
    return 0;
}

int cmd_run(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (args_is_help(argv[i])) {
            puts("usage: ahascope run [tui flags]          on a terminal\n"
                 "       ahascope run [generate flags]     otherwise\n\n"
                 "The main job (`make run`): find the default model ($AHASCOPE_MODELS, ../shared/models,\n"
                 "the cache), downloading stories260K there if none is found, then open the TUI on it with\n"
                 "the prompt \"Once upon a time\" (unless --prompt or --prompt-file says otherwise) at temperature 0.8\n"
                 "(any flag of `ahascope tui` may follow).\n"
                 "Without a terminal it tells the story as text instead (any flag of `ahascope generate`).");
            return 0;
        }
    char path[1024];
    Err e;
    if (app_find_model(path, sizeof path) != 0) {
        char cache[1024];
        hub_cache_dir(cache, sizeof cache);
        if (download_default(cache, &e) != 0) return args_fail(&e);
        if (app_find_model(path, sizeof path) != 0) {
            err_set(&e, "downloaded the model but cannot find it in %s", cache);
            return args_fail(&e);
        }
    }
    int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO), own_prompt = 0;
    for (int i = 1; i < argc; i++) own_prompt |= !strcmp(argv[i], "--prompt-file"); /* the default would conflict */
    char *gen[64] = {tty ? "tui" : "generate", "--model", path, "--temperature", "0.8", "--prompt", "Once upon a time"};
    int n = own_prompt ? 5 : 7;
    for (int i = 1; i < argc && n < 63; i++) gen[n++] = argv[i];
    gen[n] = NULL;
    return tty ? cmd_tui(n, gen) : cmd_generate(n, gen);
}
