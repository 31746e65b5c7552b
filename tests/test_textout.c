/* test_textout.c — every JSON and CSV writer's output is valid UTF-8, the raw bytes kept as `<key>_hex`.
 *
 * Text into JSON and CSV: every writer's output is valid UTF-8 (a strict
 * parser reads it) even when token pieces are lone bytes of a character,
 * and the raw bytes stay available as "<key>_hex". */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "engine/textout.h"
#include "tests/test.h"

TEST(textout_json_and_csv_are_valid_utf8) {
    cJSON *o = cJSON_CreateObject();
    CHECK(textout_json_add(o, "piece", "a\xf0", 2) == 0);
    CHECK(textout_json_add(o, "ok", "caf\xc3\xa9", 5) == 0);
    char *s = cJSON_PrintUnformatted(o);
    CHECK_MSG(s && !strcmp(s, "{\"piece\":\"a\xef\xbf\xbd\",\"piece_hex\":\"61f0\",\"ok\":\"caf\xc3\xa9\"}"), "%s", s);
    free(s);
    cJSON_Delete(o);
    CHECK(!textout_valid("\xed\xa0\x80", 3) && !textout_valid("\xc0\xaf", 2) && textout_valid("\xf0\x9f\x98\x80", 4));
    FILE *f = fopen(test_tmp("field.csv"), "w+b");
    textout_csv(f, "x,\xff\"y");
    rewind(f);
    char buf[64] = {0};
    CHECK(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "\"x,\xef\xbf\xbd\"\"y\""), "%s", buf);
}

/* Strict checker: decode as UTF-8 (raising on any invalid byte), then parse
 * as JSON, JSON lines or CSV; print how many values carry U+FFFD and how
 * many *_hex keys there are. */
static const char *checker(void) {
    static const char py[] =
        "import csv, io, json, sys\n"
        "mode, path = sys.argv[1], sys.argv[2]\n"
        "text = open(path, 'rb').read().decode('utf-8')\n"
        "if mode == 'jsonl': [json.loads(l) for l in text.splitlines()]\n"
        "elif mode == 'json': json.loads(text)\n"
        "else: assert len(list(csv.reader(io.StringIO(text, newline='')))) > 1\n"
        "print('ok fffd=%d hex=%d' % (text.count('\\ufffd') > 0, text.count('_hex\"') > 0))\n";
    const char *p = test_tmp("strict.py");
    test_write_file(p, py, (long)strlen(py));
    return p;
}

static void check_strict(const char *mode, const char *file, const char *want) {
    int st;
    char *out = test_runf(&st, "/usr/bin/python3 %s %s %s", checker(), mode, file);
    CHECK_MSG(st == 0 && out && strstr(out, want), "%s %s: %s", mode, file, out);
    free(out);
}

#define PROMPT "'Caf\xc3\xa9 na\xc3\xafve \xf0\x9f\x98\x80 \xc3\xbc" "ber'"

TEST(textout_trace_export_query_are_strict_utf8) {
    SKIP_UNLESS_SHARED();
    const char *bin = getenv("AHASCOPE_BIN") ? getenv("AHASCOPE_BIN") : "./ahascope";
    const char *m = test_stories_model(), *db = test_tmp("utf8.db");
    char out[4][1100];
    const char *names[] = {"trace.jsonl", "export.json", "export.csv", "query.json"};
    for (int i = 0; i < 4; i++) snprintf(out[i], sizeof out[i], "%s", test_tmp(names[i]));
    int st;
    char *r = test_runf(&st, "%s trace --model %s --prompt " PROMPT " --steps 24 --seed 1 > %s", bin, m, out[0]);
    CHECK_MSG(st == 0, "trace: %s", r);
    free(r);
    r = test_runf(&st, "%s record --db %s --model %s --prompt " PROMPT " --steps 24 --seed 1", bin, db, m);
    CHECK_MSG(st == 0, "record: %s", r);
    free(r);
    r = test_runf(&st, "%s export --db %s --run 1 --json --out %s && %s export --db %s --run 1 --csv --out %s && "
                       "%s query --db %s --json 'SELECT pos, piece FROM tokens' > %s",
                  bin, db, out[1], bin, db, out[2], bin, db, out[3]);
    CHECK_MSG(st == 0, "export/query: %s", r);
    free(r);
    check_strict("jsonl", out[0], "ok fffd=1 hex=1");
    check_strict("json", out[1], "ok fffd=1 hex=1");
    check_strict("csv", out[2], "ok fffd=1");
    check_strict("json", out[3], "ok fffd=1 hex=1");
}
