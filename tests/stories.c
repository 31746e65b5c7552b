/* stories.c — loading the shared stories260K fixture (stories.h). */
#include "tests/stories.h"

#include "tests/test.h"

int test_load_stories(Model *m, Tokenizer *tok, Err *e) {
    if (model_load(m, test_stories_model(), e) != 0) return -1;
    if (tok && tok_load(tok, test_stories_tokenizer(), m->c.vocab_size, e) != 0) {
        model_free(m); /* leaves m zeroed: a caller's later model_free is harmless */
        return -1;
    }
    return 0;
}
