/* stories.h — the suite's everyday model, loaded in one place.
 *
 * Most tests of the engine, the store and the command line run on the shared
 * stories260K checkpoint and its 512-piece tokenizer (test_stories_model()
 * and test_stories_tokenizer() in test.h name them); tests that need them in
 * memory load them here, so the paths and the vocabulary size are written once.
 */
#ifndef AHASCOPE_TEST_STORIES_H
#define AHASCOPE_TEST_STORIES_H

#include "engine/model.h"
#include "engine/tokenize/tokenize.h"

/* Load stories260K into m and, when tok is not NULL, its tokenizer sized to
 * the model's vocabulary. 0, or -1 with e filled and the model not held
 * (model_free on it stays safe, so callers free as after a success). */
int test_load_stories(Model *m, Tokenizer *tok, Err *e);

#endif
