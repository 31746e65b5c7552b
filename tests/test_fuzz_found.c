/* test_fuzz_found.c — unit tests for defects the fuzz harnesses of
 * tests/fuzz/ found; each input also sits in tests/fuzz/regress/. */
#include <string.h>
#include <sys/stat.h>

#include "engine/model.h"
#include "engine/safetensors.h"
#include "test.h"

/* A folder holding config.json (text) and a one-tensor model.safetensors. */
static const char *hf_folder(const char *name, const char *config) {
    const char *dir = test_tmp(name);
    char path[1100];
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/config.json", dir);
    CHECK(test_write_file(path, config, (long)strlen(config)) == 0);
    static float zeros[16];
    int64_t shape[1] = {16};
    StWriter w;
    Err e;
    st_writer_init(&w);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(st_writer_add(&w, "model.norm.weight", ST_F32, 1, shape, zeros, &e) == 0);
    CHECK_MSG(st_write(&w, path, &e) == 0, "%s", e.msg);
    st_writer_free(&w);
    return dir;
}

/* fuzz_config: a config at the size limits beside a tiny file had the loader
 * allocate 2.4 GB of norm vectors before looking at a single tensor. */
TEST(fuzz_hf_config_larger_than_its_files_is_refused_first) {
    const char *dir = hf_folder("hf_big", "{\"model_type\":\"llama\",\"hidden_size\":65536,\"intermediate_size\":262144,"
                                          "\"num_hidden_layers\":1024,\"num_attention_heads\":64,\"head_dim\":1024,"
                                          "\"vocab_size\":4194304,\"max_position_embeddings\":64,"
                                          "\"tie_word_embeddings\":false}");
    Model m;
    Err e = {0};
    CHECK(model_load_hf(&m, dir, 0, &e) != 0);
    CHECK_MSG(strstr(e.msg, "config.json: describes at least") && strstr(e.msg, "safetensors files hold"),
              "message: %s", e.msg);
}
