/* Temporary: commands not yet written. */
#include <stdio.h>
#include "app/commands.h"
int cmd_generate(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "ahascope: generate: not built yet\n"); return 1; }
int cmd_bench(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "ahascope: bench: not built yet\n"); return 1; }
int cmd_run(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "ahascope: run: not built yet\n"); return 1; }
