/* Temporary: commands not yet written. */
#include <stdio.h>
#include "app/commands.h"
int cmd_run(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "ahascope: run: not built yet\n"); return 1; }
