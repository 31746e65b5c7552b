/* test_shard.c — evaluations split across processes, merged back to the unsharded table.
 *
 * Evaluations split across processes: `--shard I/N` on eval,
 * sweep and record --prompts, `merge`, then `--from-db` giving exactly the
 * unsharded table; sequence k the same tokens whichever shard samples it;
 * bad shard values and incomplete merges refused in one line. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "app/eval_forced.h"
#include "test.h"
#include "stories.h"


/* Run an ahascope command line (model added), returning its stdout+stderr
 * in a heap string; *st its exit status. */
static char *run(int *st, const char *fmt, ...) {
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s --model %s", test_bin(), args, test_stories_model());
    char *out = test_run(cmd, st);
    if (*st != 0) fprintf(stderr, "%s -> %d: %s\n", args, *st, out);
    return out;
}

/* Run and parse its --json output (NULL on failure); stderr is dropped. */
static cJSON *run_json(const char *fmt, ...) {
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    int st;
    char *out = test_runf(&st, "%s %s --model %s --json 2>/dev/null", test_bin(), args, test_stories_model());
    cJSON *j = st == 0 ? cJSON_Parse(out) : NULL;
    if (!j) fprintf(stderr, "%s -> %d: %s\n", args, st, out);
    free(out);
    return j;
}

/* Every row and every number of two eval tables agree to tol (relative
 * above 1), nulls with nulls; knob strings too when check_knob. */
static void same_tables(cJSON *a, cJSON *b, double tol, int check_knob) {
    CHECK(a && b);
    if (!a || !b) return;
    CHECK_INT(cJSON_GetArraySize(a), cJSON_GetArraySize(b));
    for (int i = 0; i < cJSON_GetArraySize(a) && i < cJSON_GetArraySize(b); i++) {
        cJSON *ra = cJSON_GetArrayItem(a, i), *rb = cJSON_GetArrayItem(b, i), *f;
        int numbers = 0, nulls = 0;
        cJSON_ArrayForEach(f, ra) {
            cJSON *g = cJSON_GetObjectItem(rb, f->string);
            if (cJSON_IsNumber(f)) {
                double x = f->valuedouble, y = cJSON_IsNumber(g) ? g->valuedouble : NAN;
                CHECK_MSG(fabs(x - y) <= tol * fmax(1, fabs(x)), "row %d %s: %.17g vs %.17g", i, f->string, x, y);
                numbers++;
            } else if (cJSON_IsNull(f)) {
                CHECK_MSG(cJSON_IsNull(g), "row %d %s: null vs a value", i, f->string);
                nulls++;
            } else if (cJSON_IsArray(f)) { /* per-sequence values: the same, in the same (unsharded) order */
                CHECK_MSG(cJSON_IsArray(g) && cJSON_GetArraySize(g) == cJSON_GetArraySize(f), "row %d %s: %d values "
                          "vs %d", i, f->string, cJSON_GetArraySize(f), cJSON_GetArraySize(g));
                for (int k = 0; cJSON_IsArray(g) && k < cJSON_GetArraySize(f) && k < cJSON_GetArraySize(g); k++) {
                    double x = cJSON_GetNumberValue(cJSON_GetArrayItem(f, k));
                    double y = cJSON_GetNumberValue(cJSON_GetArrayItem(g, k));
                    CHECK_MSG(fabs(x - y) <= tol * fmax(1, fabs(x)), "row %d %s[%d]: %.17g vs %.17g", i, f->string, k,
                              x, y);
                }
            }
            else if (check_knob || strcmp(f->string, "knob"))
                CHECK_MSG(cJSON_IsString(g) && !strcmp(f->valuestring, g->valuestring), "row %d %s", i, f->string);
        }
        CHECK(numbers >= 12 && numbers + nulls >= 16); /* KL, ppl, shares, bytes, precision/recall/F1, AUC, n_tokens */
    }
}

static const char *tmp(const char *name) { return test_tmp(name); }

/* Shards 1 then 0 merged: the eval table of the unsharded run, in JSON to
 * 1e-12 and in the printed table character for character. */
TEST(shard_two_merged_give_the_unsharded_eval_table) {
    SKIP_UNLESS_SHARED();
    const char *flags = "eval --self 3 --seq-len 40 --routers random:3 --window 8 --theta 0.2";
    char all[1100], s0[1100], s1[1100], m[1100];
    snprintf(all, sizeof all, "%s", tmp("e_all.db")), snprintf(s0, sizeof s0, "%s", tmp("e_s0.db"));
    snprintf(s1, sizeof s1, "%s", tmp("e_s1.db")), snprintf(m, sizeof m, "%s", tmp("e_merged.db"));
    cJSON *live = run_json("%s --db %s", flags, all);
    cJSON *j0 = run_json("%s --db %s --shard 0/2", flags, s0), *j1 = run_json("%s --db %s --shard 1/2", flags, s1);
    CHECK(j0 && j1);
    /* the shards split the three sequences' tokens 2 + 1 */
    CHECK_NEAR(cJSON_GetObjectItem(cJSON_GetArrayItem(j0, 0), "n_tokens")->valuedouble +
                   cJSON_GetObjectItem(cJSON_GetArrayItem(j1, 0), "n_tokens")->valuedouble, 3 * 39, 0);
    int st;
    free(test_runf(&st, "%s merge --out %s %s %s", test_bin(), m, s1, s0));
    CHECK_INT(st, 0);
    cJSON *merged = run_json("eval --from-db %s", m);
    same_tables(live, merged, 1e-12, 1);
    char *a = test_runf(&st, "%s eval --from-db %s --model %s 2>&1", test_bin(), all, test_stories_model());
    char *b = test_runf(&st, "%s eval --from-db %s --model %s 2>&1", test_bin(), m, test_stories_model());
    CHECK_MSG(a && b && !strcmp(a, b), "unsharded:\n%s\nmerged:\n%s", a, b);
    free(a), free(b);
    cJSON_Delete(live), cJSON_Delete(j0), cJSON_Delete(j1), cJSON_Delete(merged);
}

/* --from-db of an unsharded file is the table the run printed, on --data
 * chunks and a QAdA policy (AUC, confusion and bytes from the decisions). */
TEST(shard_from_db_of_an_unsharded_eval_is_the_live_table) {
    SKIP_UNLESS_SHARED();
    char txt[1100], db[1100];
    snprintf(txt, sizeof txt, "%s", tmp("story.txt")), snprintf(db, sizeof db, "%s", tmp("live.db"));
    const char *story = "Once upon a time there was a little girl named Lily. She liked to play in the park with her "
                        "dog. One day the sun was hot and the dog was tired, so they sat under a big tree and ate "
                        "an apple. Lily was happy and the dog was happy too. They went home and slept.\n";
    char body[4096] = "";
    for (int i = 0; i < 4; i++) strcat(body, story);
    test_write_file(txt, body, (long)strlen(body));
    cJSON *live = run_json("eval --data %s --seq-len 32 --policy qada --window 8 --db %s", txt, db);
    cJSON *back = run_json("eval --from-db %s", db);
    same_tables(live, back, 1e-12, 1);
    cJSON_Delete(live), cJSON_Delete(back);
}

/* A sweep in three shards, merged out of order, re-summarised: every point
 * of the unsharded sweep, labels at the sweep's θ, not each point's. */
TEST(shard_sweep_merged_gives_the_unsharded_points) {
    SKIP_UNLESS_SHARED();
    const char *flags = "sweep --policy oracle,local --window 8,16 --theta 0.1,0.5 --self 3 --seq-len 36";
    char db[3][1100], all[1100], m[1100];
    snprintf(all, sizeof all, "%s", tmp("sw_all.db")), snprintf(m, sizeof m, "%s", tmp("sw_m.db"));
    cJSON *live = run_json("%s --db %s", flags, all);
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "sw_%d.db", i);
        snprintf(db[i], sizeof db[i], "%s", tmp(name));
        cJSON_Delete(run_json("%s --db %s --shard %d/3", flags, db[i], i));
    }
    int st;
    free(test_runf(&st, "%s merge --out %s %s %s %s", test_bin(), m, db[2], db[0], db[1]));
    CHECK_INT(st, 0);
    cJSON *merged = run_json("sweep --from-db %s", m), *back = run_json("sweep --from-db %s", all);
    same_tables(live, merged, 1e-12, 1);
    same_tables(live, back, 1e-12, 1);
    CHECK_INT(cJSON_GetArraySize(live), 6);
    cJSON_Delete(live), cJSON_Delete(merged), cJSON_Delete(back);
}

/* Each prompt and its sampled tokens, one line per run, sorted. */
static char *runs_of(const char *db) {
    int st;
    char *out = test_runf(&st, "%s query --db %s --csv \"SELECT r.prompt || ':' || (SELECT group_concat(token_id, ' ')"
                               " FROM (SELECT token_id FROM tokens t WHERE t.run_id = r.run_id ORDER BY pos)) AS s"
                               " FROM runs r ORDER BY s\"", test_bin(), db);
    CHECK_INT(st, 0);
    return out;
}

/* record --prompts: the shards' runs are disjoint and together exactly the
 * unsharded runs (the same prompts, the same sampled tokens). */
TEST(shard_record_prompts_split_into_disjoint_runs) {
    SKIP_UNLESS_SHARED();
    char txt[1100], all[1100], s0[1100], s1[1100], m[1100];
    snprintf(txt, sizeof txt, "%s", tmp("prompts.txt")), snprintf(all, sizeof all, "%s", tmp("p_all.db"));
    snprintf(s0, sizeof s0, "%s", tmp("p_s0.db")), snprintf(s1, sizeof s1, "%s", tmp("p_s1.db"));
    snprintf(m, sizeof m, "%s", tmp("p_m.db"));
    const char *lines = "Once upon a time\n\nLily went\r\nThe dog\nA cat sat\nTom\n";
    test_write_file(txt, lines, (long)strlen(lines));
    const char *flags = "record --steps 16 --seed 5 --temperature 1";
    int st;
    char *o = run(&st, "%s --prompts %s --db %s", flags, txt, all);
    CHECK_MSG(st == 0 && !strcmp(o, "1\n2\n3\n4\n5\n"), "%s", o); /* five prompts, the empty line skipped */
    free(o);
    free(run(&st, "%s --prompts %s --db %s --shard 0/2", flags, txt, s0));
    free(run(&st, "%s --prompts %s --db %s --shard 1/2", flags, txt, s1));
    free(test_runf(&st, "%s merge --out %s %s %s", test_bin(), m, s0, s1));
    char *ra = runs_of(all), *r0 = runs_of(s0), *r1 = runs_of(s1), *rm = runs_of(m);
    /* lines 1, 3, 5 (k = line-1 even) to shard 0; 4 and 6 to shard 1 */
    CHECK_MSG(strstr(r0, "Once upon a time:") && strstr(r0, "Lily went:") && strstr(r0, "A cat sat:") &&
              !strstr(r0, "The dog") && !strstr(r0, "Tom"), "%s", r0);
    CHECK_MSG(strstr(r1, "The dog:") && strstr(r1, "Tom:") && !strstr(r1, "Lily"), "%s", r1);
    CHECK_MSG(!strcmp(ra, rm), "unsharded:\n%s\nmerged:\n%s", ra, rm);
    free(ra), free(r0), free(r1), free(rm);
}

/* Sequence k of --self is the same tokens however the set is sharded. */
TEST(shard_self_sequence_depends_on_its_index_only) {
    SKIP_UNLESS_SHARED();
    Model m;
    Tokenizer tok;
    Err e;
    CHECK_MSG(test_load_stories(&m, &tok, &e) == 0, "%s", e.msg);
    EvalData all = {0}, one = {0}, two = {0};
    ArgsShard whole = {0, 1}, s1of3 = {1, 3}, s0of2 = {0, 2};
    CHECK(eval_data_self_each(&all, &m, &tok, 5, 40, 77, &whole, &e) == 0);
    CHECK(eval_data_self_each(&one, &m, &tok, 5, 40, 77, &s1of3, &e) == 0);
    CHECK(eval_data_self_each(&two, &m, &tok, 5, 40, 77, &s0of2, &e) == 0);
    CHECK_INT(one.n, 2); /* sequences 1 and 4 */
    CHECK_INT(two.n, 3); /* sequences 0, 2, 4 */
    const int from_one[] = {1, 4}, from_two[] = {0, 2, 4};
    for (int i = 0; i < one.n; i++)
        CHECK(one.len[i] == all.len[from_one[i]] &&
              !memcmp(one.seq[i], all.seq[from_one[i]], (size_t)one.len[i] * sizeof(int)));
    for (int i = 0; i < two.n; i++)
        CHECK(two.len[i] == all.len[from_two[i]] &&
              !memcmp(two.seq[i], all.seq[from_two[i]], (size_t)two.len[i] * sizeof(int)));
    CHECK(memcmp(all.seq[0], all.seq[1], 40 * sizeof(int)) != 0); /* and they are not one sequence repeated */
    CHECK_MSG(!strcmp(one.desc, "self:5:40:77 shard 1/3"), "%s", one.desc);
    eval_data_free(&all), eval_data_free(&one), eval_data_free(&two);
    tok_free(&tok);
    model_free(&m);
}

/* Bad shard values, what --shard cannot go with, and merges that lack or
 * repeat a shard: one line naming the problem, usage errors exit 2. */
TEST(shard_bad_values_and_incomplete_merges_are_refused) {
    SKIP_UNLESS_SHARED();
    const struct { const char *args, *needle; int status; } bad[] = {
        {"eval --shard 3/2", "shard 3 of 2 does not exist", 2},
        {"eval --shard 0/0", "'0/0' is not I/N", 2},
        {"eval --shard a/b", "'a/b' is not I/N", 2},
        {"sweep --policy full --window 8 --shard 2/2", "does not exist", 2},
        {"record --db /nonexistent/x.db --prompts /dev/null --shard 1", "is not I/N", 2},
        {"record --db /nonexistent/x.db --shard 0/2 --seed 1", "splits the lines of --prompts", 2},
        {"record --db /nonexistent/x.db --prompts /dev/null --prompt-file /dev/null", "all give the prompt", 2},
        {"fit --window 8 --out /nonexistent/r.st --shard 3/3", "does not exist", 2},
        {"fit --window 8 --out r.st --from-shards a.st --self 8", "--from-shards fits on the shards' examples", 2},
        {"eval --shard 0/2 --match-budget aha --routers random", "--match-budget needs every sequence", 2},
        {"eval --from-db x.db --shard 0/2", "--from-db reads", 2},
        {"eval --self 2 --shard 4/5", "shard 4/5 has no sequences", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st;
        char *out = test_runf(&st, "%s %s --model %s 2>&1", test_bin(), bad[i].args, test_stories_model());
        int lines = 0;
        for (char *c = out; *c; c++) lines += *c == '\n';
        CHECK_MSG(st == bad[i].status && strstr(out, bad[i].needle) && !strncmp(out, "ahascope ", 9) && lines == 1,
                  "%s -> %d %s", bad[i].args, st, out);
        free(out);
    }
    /* a shard missing, then a shard merged twice */
    const char *flags = "eval --self 2 --seq-len 24 --policy local --window 8";
    char s0[1100], s1[1100], m[1100], m2[1100];
    snprintf(s0, sizeof s0, "%s", tmp("b_s0.db")), snprintf(s1, sizeof s1, "%s", tmp("b_s1.db"));
    snprintf(m, sizeof m, "%s", tmp("b_m.db")), snprintf(m2, sizeof m2, "%s", tmp("b_m2.db"));
    cJSON_Delete(run_json("%s --db %s --shard 0/2", flags, s0));
    cJSON_Delete(run_json("%s --db %s --shard 1/2", flags, s1));
    int st;
    free(test_runf(&st, "%s merge --out %s %s", test_bin(), m, s0));
    char *out = test_runf(&st, "%s eval --from-db %s --model %s 2>&1", test_bin(), m, test_stories_model());
    CHECK_MSG(st == 1 && strstr(out, "lacks shard 1/2") && strstr(out, m), "%d %s", st, out);
    free(out);
    free(test_runf(&st, "%s merge --out %s %s %s %s", test_bin(), m2, s0, s1, s0));
    out = test_runf(&st, "%s eval --from-db %s --model %s 2>&1", test_bin(), m2, test_stories_model());
    CHECK_MSG(st == 1 && strstr(out, "repeats shard 0/2"), "%d %s", st, out);
    free(out);
}

/* fit: the data pass in three shards, combined out of order, gives the
 * router file of the unsharded fit byte for byte; shard files that do not
 * belong together are refused naming the file. */
TEST(shard_fit_combined_is_the_unsharded_fit) {
    SKIP_UNLESS_SHARED();
    const char *flags = "fit --window 8 --iters 8 --weight err";
    const char *data = "--self 12 --seq-len 40";
    char full[1100], comb[1100], f[3][1100], list[4000];
    snprintf(full, sizeof full, "%s", tmp("fit_full.safetensors"));
    snprintf(comb, sizeof comb, "%s", tmp("fit_comb.safetensors"));
    int st;
    free(run(&st, "%s %s --out %s", flags, data, full));
    CHECK_INT(st, 0);
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "fit_s%d.safetensors", i);
        snprintf(f[i], sizeof f[i], "%s", tmp(name));
        free(run(&st, "%s %s --shard %d/3 --out %s", flags, data, i, f[i]));
        CHECK_INT(st, 0);
    }
    snprintf(list, sizeof list, "%s,%s,%s", f[2], f[0], f[1]);
    free(run(&st, "%s --from-shards %s --out %s", flags, list, comb));
    CHECK_INT(st, 0);
    CHECK_MSG(test_same_file(full, comb), "%s and %s differ", full, comb);
    /* which files (indices into f, 3 = the router file), the extra flags, the refusal */
    const struct { int files[3], n; const char *extra, *needle; } bad[] = {
        {{0, 1}, 2, "", "every shard of N is needed"},
        {{0, 1, 0}, 3, "", "given twice"},
        {{0, 1, 2}, 3, "--theta 0.5", "theta_logit is"},
        {{3}, 1, "", "not a fit shard file"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int k = 0;
        for (int j = 0; j < bad[i].n; j++)
            k += snprintf(list + k, sizeof list - k, "%s%s", j ? "," : "", bad[i].files[j] == 3 ? full : f[bad[i].files[j]]);
        char *out = test_runf(&st, "%s %s %s --from-shards %s --out %s --model %s 2>&1", test_bin(), flags, bad[i].extra,
                              list, tmp("fit_bad.safetensors"), test_stories_model());
        CHECK_MSG(st == 1 && strstr(out, bad[i].needle) && strstr(out, ".safetensors"), "%zu: %d %s", i, st, out);
        free(out);
    }
    /* a shard whose examples overflow the fit: the refusal names the shard files, not the data
     * string they were cut from (it named "self:12:40:…" before) */
    char huge[1100];
    snprintf(huge, sizeof huge, "%s", tmp("fit_huge.safetensors"));
    free(test_runf(&st, "python3 -c \"import json,struct,sys; b=bytearray(open(sys.argv[1],'rb').read()); "
                        "n=struct.unpack('<Q',b[:8])[0]; a,e=json.loads(b[8:8+n])['x']['data_offsets']; "
                        "b[8+n+a:8+n+e]=struct.pack('<f',1e38)*((e-a)//4); open(sys.argv[2],'wb').write(b)\" %s %s",
                   f[0], huge));
    CHECK_INT(st, 0);
    snprintf(list, sizeof list, "%s,%s,%s", huge, f[1], f[2]);
    char *out = test_runf(&st, "%s %s --from-shards %s --out %s --model %s 2>&1", test_bin(), flags, list,
                          tmp("fit_bad.safetensors"), test_stories_model());
    char named[1200];
    snprintf(named, sizeof named, "ahascope fit: %s ... ", huge);
    CHECK_MSG(st == 1 && strstr(out, "not finite") && strstr(out, named), "%d %s", st, out);
    free(out);
}

/* A prompts file that is not one: every refusal names the file. */
TEST(shard_record_prompts_refuses_bad_files) {
    SKIP_UNLESS_SHARED();
    char path[1100], db[1100], big[70000];
    snprintf(path, sizeof path, "%s", tmp("bad_prompts.txt")), snprintf(db, sizeof db, "%s", tmp("bad_p.db"));
    memset(big, 'a', sizeof big);
    const struct { const char *data; long len; const char *needle; } bad[] = {
        {"\n\n\r\n", 4, "no prompt"}, {"ok\nnul\0here\n", 12, "NUL byte"}, {big, sizeof big, ":1: a prompt longer"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_write_file(path, bad[i].data, bad[i].len);
        int st;
        char *out = test_runf(&st, "%s record --db %s --prompts %s --steps 4 --model %s 2>&1", test_bin(), db, path, test_stories_model());
        CHECK_MSG(st == 1 && strstr(out, bad[i].needle) && strstr(out, path), "%zu: %d %s", i, st, out);
        free(out);
    }
}
