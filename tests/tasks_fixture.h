/* tasks_fixture.h — what the task tests (test_tasks.c, test_tasks_ruler.c)
 * share: the text a span of an item's ids decodes to. */
#ifndef AHASCOPE_TASKS_FIXTURE_H
#define AHASCOPE_TASKS_FIXTURE_H

#include "engine/tokenize/tokenize.h"

/* The text ids[from..to) decode to, each after its predecessor; malloc'd
 * (NULL out of memory). Defined in test_tasks.c. */
char *tasks_fixture_decode_span(const Tokenizer *tok, const int *ids, int from, int to);

#endif
