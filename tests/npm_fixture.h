/* npm_fixture.h — the real tokenizers that tests/hftok_npm/install.sh puts
 * in $AHASCOPE_NPM_DIR (default build/npm): DIR/index.json names them, and
 * DIR/<name>.expected.json holds the reference ids and, relative to DIR, the
 * paths of the package's tokenizer.json and tokenizer_config.json. */
#ifndef AHASCOPE_TESTS_NPM_FIXTURE_H
#define AHASCOPE_TESTS_NPM_FIXTURE_H

#include <cjson/cJSON.h>

#include "engine/tokenize/tokenize.h"

/* What to run when the fixtures are missing (for skip messages). */
#define NPM_FIXTURE_HOWTO "create them with: sh tests/hftok_npm/install.sh build/npm (needs node, npm and the npm registry)"

/* $AHASCOPE_NPM_DIR, or "build/npm". */
const char *npm_dir(void);

/* 1 if npm_dir()/index.json exists (install.sh has run to the end). */
int npm_available(void);

/* 1 if the fixtures are there; otherwise counts the test as skipped, saying
 * how to create them, and returns 0. */
int npm_skip_unless_available(void);

/* Parse npm_dir()/<name>.expected.json; NULL (with a test failure) if it is
 * missing or malformed. */
cJSON *npm_expected(const char *name);

/* Load the real tokenizer of <name>, plus its tokenizer_config.json when the
 * package ships one; NULL (with a test failure) on any error. */
HfTok *npm_tokenizer(const char *name, const cJSON *expected);

#endif
