/* npm_fixture.c — see npm_fixture.h. */
#include "tests/npm_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "tests/test.h"

const char *npm_dir(void) {
    const char *d = getenv("AHASCOPE_NPM_DIR");
    return d && *d ? d : "build/npm";
}

int npm_available(void) {
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/index.json", npm_dir());
    return stat(path, &st) == 0;
}

cJSON *npm_expected(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.expected.json", npm_dir(), name);
    long n = 0;
    char *text = test_read_file(path, &n);
    if (!text) {
        test_fail(__FILE__, __LINE__, "%s is missing (rerun sh tests/hftok_npm/install.sh %s)", path, npm_dir());
        return NULL;
    }
    cJSON *root = cJSON_ParseWithLength(text, (size_t)n);
    free(text);
    if (!root || !cJSON_IsArray(cJSON_GetObjectItem(root, "cases")) ||
        !cJSON_IsString(cJSON_GetObjectItem(root, "tokenizer"))) {
        test_fail(__FILE__, __LINE__, "%s is not an expected-ids file", path);
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

HfTok *npm_tokenizer(const char *name, const cJSON *expected) {
    char path[2048];
    Err e = {0};
    HfTok *t = NULL;
    snprintf(path, sizeof path, "%s/%s", npm_dir(), cJSON_GetObjectItem(expected, "tokenizer")->valuestring);
    if (hftok_load(&t, path, &e) != 0) {
        test_fail(__FILE__, __LINE__, "%s: %s", name, e.msg);
        return NULL;
    }
    const cJSON *cfg = cJSON_GetObjectItem(expected, "tokenizer_config");
    if (cJSON_IsString(cfg)) {
        snprintf(path, sizeof path, "%s/%s", npm_dir(), cfg->valuestring);
        if (hftok_load_config(t, path, &e) != 0) {
            test_fail(__FILE__, __LINE__, "%s: %s", name, e.msg);
            hftok_free(t);
            return NULL;
        }
    }
    return t;
}

int npm_skip_unless_available(void) {
    if (npm_available()) return 1;
    char why[512];
    snprintf(why, sizeof why, "no npm tokenizer fixtures in %s; %s", npm_dir(), NPM_FIXTURE_HOWTO);
    test_skip(why);
    return 0;
}
