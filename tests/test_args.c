/* test_args.c — the flag tables (app/args.h) against the parser and --help.
 *
 * Each command whose flags are tables (app/commands.h's COMMAND_FLAGS) is
 * held to its rows: every row is a line of its --help, the parser takes
 * every row with a value in bounds and refuses one out of bounds, a flag
 * without its value and a flag no row names, each as a usage error (exit
 * 2, one line "ahascope CMD: ..."). A flag added to a parser but not to
 * the help, or the reverse, cannot pass. */
#include <stdlib.h>
#include <string.h>

#include "app/args.h"
#include "app/commands.h"
#include "engine/decide.h"
#include "test.h"

/* A scratch options struct for each table of a command (calloc'd, of the
 * table's size), the destinations the parser writes into. */
static void **scratch_opts(const ArgsTable *const *tables) {
    int n = 0;
    while (tables[n]) n++;
    void **opts = calloc(n + 1, sizeof *opts);
    for (int k = 0; k < n; k++) opts[k] = calloc(1, tables[k]->size + 16);
    return opts;
}

static void free_opts(void **opts) {
    for (int k = 0; opts[k]; k++) free(opts[k]);
    free(opts);
}

/* Parse argv (cmd first) by tables into fresh scratch structs: the
 * parser's return; e gets its error. */
static int parse_words(const ArgsTable *const *tables, int argc, const char **argv, Err *e) {
    void **opts = scratch_opts(tables);
    Args a = {argc, (char **)argv, 1};
    memset(e, 0, sizeof *e);
    int r = args_parse_table(&a, tables, (void *const *)opts, e);
    free_opts(opts);
    return r;
}

/* A value in bounds for a row with no reader of its own ("" for a custom
 * one, whose values only its reader knows), and one out of them (NULL
 * for a row without bounds). */
static const char *good_value(const ArgSpec *s, char *buf, size_t cap) {
    switch (s->kind) {
    case ARG_INT:
    case ARG_LONG: snprintf(buf, cap, "%.0f", s->min); return buf;
    case ARG_FLOAT:
    case ARG_DOUBLE: snprintf(buf, cap, "%g", s->min); return buf;
    case ARG_CHOICE: snprintf(buf, cap, "%.*s", (int)strcspn(s->metavar, "|"), s->metavar); return buf;
    case ARG_STRING: return "x";
    default: return "";
    }
}

static const char *bad_value(const ArgSpec *s, char *buf, size_t cap) {
    switch (s->kind) {
    case ARG_INT:
    case ARG_LONG: snprintf(buf, cap, "%.0f", s->max + 1); return buf;
    case ARG_FLOAT:
    case ARG_DOUBLE: snprintf(buf, cap, "%g", s->max * 2 + 1); return buf;
    case ARG_CHOICE: return "frobnicate";
    default: return NULL;
    }
}

/* The line of help that documents flag: it starts "  FLAG" followed by a
 * space or the line's end. */
static int help_has_row(const char *help, const char *flag) {
    size_t n = strlen(flag);
    for (const char *p = help; (p = strstr(p, flag)); p += n)
        if (p - help >= 3 && !strncmp(p - 3, "\n  ", 3) && (p[n] == ' ' || p[n] == '\n')) return 1;
    return 0;
}

/* One command's rows in process: no row shadowed by another of the same
 * name, each taken with a value in bounds, each refused without its value
 * or out of bounds. Returns how many rows it walked. */
static int check_rows_in_process(const CommandFlags *c) {
    int rows = 0;
    for (int k = 0; c->tables[k]; k++)
        for (int r = 0; r < c->tables[k]->n; r++, rows++) {
            const ArgSpec *s = &c->tables[k]->rows[r];
            char buf[64];
            Err e;
            CHECK_MSG(!strncmp(s->name, "--", 2) && s->help && *s->help, "%s %s: no name or help", c->name, s->name);
            CHECK_MSG(args_find(c->tables, s->name) == s, "%s %s: an earlier row of the same name shadows it", c->name,
                      s->name);
            CHECK_MSG((s->kind == ARG_FLAG) == !s->metavar || s->kind == ARG_CUSTOM,
                      "%s %s: a value's placeholder disagrees with its kind", c->name, s->name);
            int takes = s->kind != ARG_FLAG && (s->kind != ARG_CUSTOM || s->metavar);
            if (s->kind != ARG_CUSTOM) {
                const char *argv[] = {c->name, s->name, good_value(s, buf, sizeof buf)};
                int st = parse_words(c->tables, takes ? 3 : 2, argv, &e);
                CHECK_MSG(st == ARGS_DONE, "%s %s %s refused: %s", c->name, s->name, takes ? argv[2] : "", e.msg);
            }
            if (takes) {
                const char *argv[] = {c->name, s->name};
                CHECK_MSG(parse_words(c->tables, 2, argv, &e) == -1 && e.usage && strstr(e.msg, "needs a value"),
                          "%s %s without a value: %s", c->name, s->name, e.msg);
            }
            const char *bad = bad_value(s, buf, sizeof buf);
            if (bad) {
                const char *argv[] = {c->name, s->name, bad};
                CHECK_MSG(parse_words(c->tables, 3, argv, &e) == -1 && e.usage && strstr(e.msg, s->name),
                          "%s %s %s taken: %s", c->name, s->name, bad, e.msg);
            }
        }
    return rows;
}

/* The parser takes exactly the rows: each with a value, and nothing else. */
TEST(args_every_table_row_parses_and_nothing_else) {
    int commands = 0, rows = 0;
    for (const CommandFlags *c = COMMAND_FLAGS; c->name; c++, commands++) {
        rows += check_rows_in_process(c);
        Err e;
        const char *argv[] = {c->name, "--frobnicate"};
        CHECK_MSG(parse_words(c->tables, 2, argv, &e) == -1 && e.usage && strstr(e.msg, "unknown flag '--frobnicate'"),
                  "%s --frobnicate: %s", c->name, e.msg);
        const char *help[] = {c->name, "--help"};
        CHECK_INT(parse_words(c->tables, 2, help, &e), ARGS_HELP);
    }
    CHECK_MSG(commands >= 1 && rows >= 10, "only %d commands, %d rows in COMMAND_FLAGS", commands, rows);
}

/* Every line of help that starts like a row's ("  --name" and a space)
 * names a row of the command's tables (compare's two forms share one
 * --help): no flag is documented that the parser refuses. */
static void check_help_lines_are_rows(const CommandFlags *c, const char *help) {
    for (const char *p = help; (p = strstr(p, "\n  --")); p += 3) {
        char name[64];
        size_t n = strcspn(p + 3, " \n");
        if (p[3 + n] != ' ' || n >= sizeof name) continue; /* "--a, --b and" prose, not a row */
        snprintf(name, sizeof name, "%.*s", (int)n, p + 3);
        if (strspn(name + 2, "abcdefghijklmnopqrstuvwxyz0123456789-") != n - 2) continue; /* "--dims's shape" */
        int found = 0;
        for (const CommandFlags *d = COMMAND_FLAGS; d->name && !found; d++)
            found = !strcmp(d->name, c->name) && args_find(d->tables, name);
        CHECK_MSG(found, "%s --help shows %s as a flag line, but no row of its tables is", c->name, name);
    }
}

/* Every row is a line of the command's --help, and the binary refuses a
 * value out of a row's bounds with the convention's one line and exit 2. */
TEST(args_every_table_row_is_in_help_and_bounded) {
    for (const CommandFlags *c = COMMAND_FLAGS; c->name; c++) {
        int st;
        char *help = test_runf(&st, "%s %s --help 2>&1 </dev/null", test_bin(), c->name);
        CHECK_MSG(st == 0 && help, "%s --help: %d", c->name, st);
        if (help) check_help_lines_are_rows(c, help);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "ahascope %s: ", c->name);
        for (int k = 0; help && c->tables[k]; k++)
            for (int r = 0; r < c->tables[k]->n; r++) {
                const ArgSpec *s = &c->tables[k]->rows[r];
                CHECK_MSG(help_has_row(help, s->name), "%s --help has no line for %s", c->name, s->name);
                char buf[64], cmd[512];
                const char *bad = bad_value(s, buf, sizeof buf);
                if (!bad || !strcmp(c->name, "run")) continue; /* run looks for its model first */
                snprintf(cmd, sizeof cmd, "%s %s %s %s </dev/null", test_bin(), c->name, s->name, bad);
                CHECK_REFUSAL(cmd, 2, prefix, s->name, 1);
            }
        free(help);
    }
}

/* Every command `ahascope --help` lists has its tables in COMMAND_FLAGS,
 * but run, which hands its flags to tui or generate. */
TEST(args_every_command_has_tables) {
    int st;
    char *out = test_runf(&st, "%s --help", test_bin());
    const char *at = out && st == 0 ? strstr(out, "commands:\n") : NULL;
    CHECK_MSG(at, "ahascope --help: %d %s", st, out ? out : "");
    int listed = 0;
    for (const char *p = at ? at + 10 : NULL; p && *p == ' '; listed++) {
        char name[32];
        p += strspn(p, " ");
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, " \n"), p);
        int found = !strcmp(name, "run");
        for (const CommandFlags *c = COMMAND_FLAGS; c->name && !found; c++) found = !strcmp(c->name, name);
        CHECK_MSG(found, "command '%s' has no flag table in COMMAND_FLAGS (app/command_flags.c)", name);
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    CHECK_MSG(listed >= 19, "only %d commands listed", listed);
    free(out);
}

typedef struct {
    int on, n, n_given, choice;
    long big;
    double x;
    const char *s;
} Toy;

static const ArgSpec TOY_ROWS[] = {
    {"--on", ARG_FLAG, offsetof(Toy, on), .help = "a switch"},
    {"--n", ARG_INT, offsetof(Toy, n), 1, 10, "N", .also = ARG_ALSO(Toy, n_given), .help = "a count"},
    {"--big", ARG_LONG, offsetof(Toy, big), 0, 1e12, "B", .help = "a long"},
    {"--x", ARG_DOUBLE, offsetof(Toy, x), -1, 1, "X", .help = "a number"},
    {"--s", ARG_STRING, offsetof(Toy, s), .metavar = "TEXT", .help = "a string"},
    {"--pick", ARG_CHOICE, offsetof(Toy, choice), .metavar = "red|green|blue", .help = "a word"},
};
static const ArgsTable TOY = ARGS_TABLE(NULL, Toy, TOY_ROWS);

/* Parse one command line of words into t; the parser's return. */
static int toy_parse(Toy *t, Err *e, int argc, const char **argv) {
    const ArgsTable *const tables[] = {&TOY, NULL};
    void *const opts[] = {t};
    Args a = {argc, (char **)argv, 1};
    memset(t, 0, sizeof *t);
    memset(e, 0, sizeof *e);
    return args_parse_table(&a, tables, opts, e);
}

/* The walker's kinds store what they read, strictly, and stop where the
 * convention says: --help, a positional argument, an unknown flag. */
TEST(args_table_kinds_store_strictly) {
    Toy t;
    Err e;
    const char *ok[] = {"toy", "--on", "--n", "7", "--big", "1000000000000", "--x", "-0.5", "--s", "hi", "--pick", "blue"};
    CHECK_INT(toy_parse(&t, &e, 12, ok), ARGS_DONE);
    CHECK(t.on == 1 && t.n == 7 && t.n_given == 1 && t.big == 1000000000000L && t.x == -0.5 && !strcmp(t.s, "hi") &&
          t.choice == 2);
    const char *bad[][3] = {{"toy", "--n", "7x"}, {"toy", "--n", ""}, {"toy", "--n", "11"}, {"toy", "--x", "1.5"},
                            {"toy", "--x", "nan"}, {"toy", "--pick", "Blue"}, {"toy", "--frob", "1"}};
    const char *why[] = {"not a whole number", "not a whole number", "out of range [1, 10]", "out of range",
                         "not a number", "--pick: expected red, green or blue (got 'Blue')", "unknown flag '--frob'"};
    for (int i = 0; i < 7; i++) {
        CHECK_INT(toy_parse(&t, &e, 3, bad[i]), -1);
        CHECK_MSG(e.usage && strstr(e.msg, why[i]), "%s %s: %s", bad[i][1], bad[i][2], e.msg);
    }
    const char *missing[] = {"toy", "--on", "--n"};
    CHECK(toy_parse(&t, &e, 3, missing) == -1 && !strcmp(e.msg, "--n needs a value"));
    const char *pos[] = {"toy", "--on", "file.txt", "--n", "2"};
    Args a = {5, (char **)pos, 1};
    const ArgsTable *const tables[] = {&TOY, NULL};
    void *const opts[] = {&t};
    memset(&t, 0, sizeof t);
    CHECK_INT(args_parse_table(&a, tables, opts, &e), ARGS_POSITIONAL);
    CHECK_INT(a.i, 2);
    a.i++;
    CHECK(args_parse_table(&a, tables, opts, &e) == ARGS_DONE && t.on && t.n == 2);
    const char *help[] = {"toy", "--n", "3", "-h", "--nope"};
    CHECK_INT(toy_parse(&t, &e, 5, help), ARGS_HELP);
}

/* The predictor lists of --help prose come from engine/predictors.h. */
TEST(args_pred_words_follow_the_predictor_list) {
    char buf[256];
    args_pred_words(buf, sizeof buf, ARGS_PRED_THETA, 0, ", ", " and ");
    CHECK_MSG(!strcmp(buf, "oracle, qada, qada_bulk, qada_rem and qada_rem_bulk"), "%s", buf);
    args_pred_words(buf, sizeof buf, ARGS_PRED_THETA | ARGS_PRED_FIELD, ARGS_PRED_LABEL, ", ", ", ");
    CHECK_MSG(!strcmp(buf, "qada_logit, qada_bulk_logit, qada_rem_logit, qada_rem_bulk_logit"), "%s", buf);
    args_pred_words(buf, sizeof buf, ARGS_PRED_POLICY, 0, "|", "|");
    char words[256];
    aha_policy_list(words, sizeof words, "|");
    CHECK_MSG(!strcmp(buf, words), "%s vs %s", buf, words);
    args_pred_words(buf, sizeof buf, ARGS_PRED_SQL, ARGS_PRED_LABEL, "|", "|"); /* compare --predictor's words */
    decide_list(words, sizeof words, DECIDE_N_SQL, "|");
    CHECK_MSG(!strcmp(buf, words), "%s vs %s", buf, words);
    char text[512];
    args_expand("for {estimators}; {w} stays", text, sizeof text);
    CHECK_MSG(!strcmp(text, "for qada, qada_bulk, qada_rem and qada_rem_bulk; {w} stays"), "%s", text);
}
