/* test_fuzz_found.c — each defect the fuzz harnesses found, as a unit test.
 *
 * Unit tests for defects the fuzz harnesses of
 * tests/fuzz/ found; each input also sits in tests/fuzz/regress/. */
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/model.h"
#include "engine/safetensors.h"
#include "store/store.h"
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

/* fuzz_store: a runs row claiming 4096 x 4096 heads passed the reader's
 * shape check, so the TUI's replay sized 64 traces of 600 MB each from it;
 * and a refused row leaked its prompt. */
TEST(fuzz_store_run_of_absurd_shape_is_refused_without_leaking) {
    const char *db = test_tmp("shape.db");
    Err e;
    Store *s = store_open(db, STORE_WRITE, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    StoreRunInfo r;
    memset(&r, 0, sizeof r);
    r.n_layers = 2, r.n_heads = 2, r.prompt = "a prompt that must not leak";
    r.program_version = "test";
    snprintf(r.policy, sizeof r.policy, "aha");
    CHECK(store_run_begin(s, &r, &e) == 0);
    CHECK(store_close(s, &e) == 0);
    sqlite3 *raw;
    CHECK(sqlite3_open(db, &raw) == SQLITE_OK);
    CHECK(sqlite3_exec(raw, "UPDATE runs SET n_layers=4096, n_heads=4096", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(raw);
    s = store_open(db, STORE_READ, 1000, &e);
    CHECK_MSG(s != NULL, "%s", e.msg);
    if (!s) return;
    StoreRunInfo info;
    CHECK(store_run_info(s, r.run_id, &info, &e) != 0);
    CHECK_MSG(strstr(e.msg, "n_layers = 4096 is impossible"), "message: %s", e.msg);
    CHECK(info.prompt == NULL);
    store_close(s, &e);
}
