/* test_maps.c — every source folder's README.md maps each of its files on one line.
 *
 * A folder of a room (engine/, store/, views/, app/, tests/) or one of their
 * sub-folders that holds a .c or .h file has a README.md with a map: a
 * table whose header's first cell is `file`. maps_check() reads each map's
 * first cells (`a.c`, `a.h/.c` for a pair, `sub/` for a sub-folder) and
 * reports, one line each, a .c, .h, .py or .sh file of the folder no row
 * names, a file named on two rows, a name that is not in the folder, a glob
 * (one row would stand for many files) and a row whose sentence runs past
 * MAP_CELL_MAX characters (a map says what a file holds; the detail lives in
 * the file's own comment or the prose below the map), and a .c file that
 * does not open with a comment. The tests run it on
 * the checkout and, to prove it can fail, on a small planted tree. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/test.h"

enum { MAP_PATH = 512, MAP_CELL_MAX = 120, MAP_NAMES = 512 };

static const char *const MAP_ROOMS[] = {"engine", "store", "views", "app", "tests"};

typedef struct {
    char *out;
    size_t cap, len;
    int violations;
} MapReport;

static void map_report(MapReport *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void map_report(MapReport *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (r->len < r->cap) {
        int n = vsnprintf(r->out + r->len, r->cap - r->len, fmt, ap);
        if (n > 0) r->len += (size_t)n;
        if (r->len >= r->cap) r->len = r->cap - 1;
    }
    va_end(ap);
    r->violations++;
}

static int map_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int map_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int map_ends(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

static int map_is_source(const char *name) { return map_ends(name, ".c") || map_ends(name, ".h"); }

static int map_wanted(const char *name) {
    return map_is_source(name) || map_ends(name, ".py") || map_ends(name, ".sh");
}

/* The sorted names of dir's entries that pass keep (all when NULL). */
static int map_list(const char *dir, int (*keep)(const char *), char (*names)[256], int cap) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) && n < cap;)
        if (de->d_name[0] != '.' && (!keep || keep(de->d_name))) snprintf(names[n++], 256, "%s", de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, (int (*)(const void *, const void *))strcmp);
    return n;
}

typedef struct {
    char name[256];
    int line;
} MapEntry;

/* One name from a map's first cell: a file (a pair `a.h/.c` counts as two)
 * or a sub-folder, checked against the folder and added to the entries. */
static void map_take(MapReport *r, const char *dir, const char *readme, int line, const char *tok, MapEntry *e,
                     int *ne) {
    char names[2][256];
    int n = 0;
    const char *pair = strstr(tok, "/.");
    if (pair) {
        const char *dot = strrchr(tok, '.'); /* the pair's second extension */
        const char *first_dot = memchr(tok, '.', (size_t)(pair - tok));
        if (!first_dot) return;
        snprintf(names[n++], 256, "%.*s", (int)(pair - tok) & 255, tok);
        snprintf(names[n++], 256, "%.*s%s", (int)(first_dot - tok), tok, dot);
    } else if (strchr(tok, '*')) {
        map_report(r, "%s:%d: `%s` is a glob: give each file its own row\n", readme, line, tok);
        return;
    } else if (map_ends(tok, "/") && !strchr(tok, '.')) {
        char sub[MAP_PATH];
        snprintf(sub, sizeof sub, "%s/%s", dir, tok);
        if (!map_is_dir(sub)) map_report(r, "%s:%d: `%s` is not a folder of %s/\n", readme, line, tok, dir);
        return;
    } else if (strchr(tok, '.') && !strchr(tok, '/')) {
        snprintf(names[n++], 256, "%s", tok);
    } else {
        return; /* a word of the cell ("and"), not a name */
    }
    for (int i = 0; i < n; i++) {
        char path[2 * MAP_PATH];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!map_is_file(path)) {
            map_report(r, "%s:%d: `%s` is not a file of %s/\n", readme, line, names[i], dir);
            continue;
        }
        for (int k = 0; k < *ne; k++)
            if (!strcmp(e[k].name, names[i]))
                map_report(r, "%s:%d: `%s` has a row already (line %d)\n", readme, line, names[i], e[k].line);
        if (*ne < MAP_NAMES) {
            snprintf(e[*ne].name, sizeof e[*ne].name, "%.255s", names[i]);
            e[(*ne)++].line = line;
        }
    }
}

/* The trimmed length of the table cell starting at s and ending at the next '|'. */
static size_t map_cell_len(const char *s, const char **end) {
    const char *bar = strchr(s, '|');
    const char *stop = bar ? bar : s + strlen(s);
    while (s < stop && *s == ' ') s++;
    const char *t = stop;
    while (t > s && (t[-1] == ' ' || t[-1] == '\n')) t--;
    *end = stop;
    size_t chars = 0; /* characters, not bytes: `·` and `‖` count once */
    for (const char *p = s; p < t; p++) chars += ((unsigned char)*p & 0xC0) != 0x80;
    return chars;
}

/* A .c file opens with a comment, so its first line says what it holds. */
static void map_check_opening(MapReport *r, const char *dir, const char *name) {
    char path[2 * MAP_PATH];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    char line[16] = "";
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = 0;
        fclose(f);
    }
    if (strncmp(line, "/* ", 3)) map_report(r, "%s: does not open with a comment saying what it holds\n", path);
}

/* Check one folder's map against the folder. */
static void map_check_dir(MapReport *r, const char *dir) {
    char readme[MAP_PATH];
    snprintf(readme, sizeof readme, "%s/README.md", dir);
    char *text = test_read_file(readme, NULL);
    if (!text) {
        map_report(r, "%s/: holds sources but no README.md with a map\n", dir);
        return;
    }
    static MapEntry entries[MAP_NAMES];
    int ne = 0, in_map = 0, maps = 0, line = 0;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = 0;
        line++;
        if (p[0] != '|') {
            in_map = 0;
        } else if (!in_map) {
            const char *c = p + 1 + strspn(p + 1, " ");
            in_map = !strncmp(c, "file ", 5) || !strncmp(c, "file|", 5);
            maps += in_map;
            in_map = in_map ? 2 : -1; /* 2: the header and the rule line still to pass */
        } else if (in_map == 2) {
            in_map = 1;
        } else if (in_map == 1) {
            const char *end;
            map_cell_len(p + 1, &end);
            char cell[1024];
            snprintf(cell, sizeof cell, "%.*s", (int)(end - (p + 1)), p + 1);
            for (char *tok = strtok(cell, " ,`;()"); tok; tok = strtok(NULL, " ,`;()"))
                map_take(r, dir, readme, line, tok, entries, &ne);
            if (*end == '|') {
                const char *end2;
                size_t n = map_cell_len(end + 1, &end2);
                if (n > MAP_CELL_MAX)
                    map_report(r, "%s:%d: the row says %zu characters (at most %d: one short sentence)\n", readme,
                               line, n, MAP_CELL_MAX);
            }
        }
        if (!nl) break;
        p = nl + 1;
    }
    free(text);
    if (!maps) {
        map_report(r, "%s: no map (a table whose first header cell is `file`)\n", readme);
        return;
    }
    static char names[MAP_NAMES][256];
    int n = map_list(dir, map_wanted, names, MAP_NAMES);
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int k = 0; k < ne && !found; k++) found = !strcmp(entries[k].name, names[i]);
        if (!found) map_report(r, "%s: no row names `%s`\n", readme, names[i]);
        if (map_ends(names[i], ".c")) map_check_opening(r, dir, names[i]);
    }
}

static int map_has_source(const char *dir) {
    static char names[MAP_NAMES][256];
    return map_list(dir, map_is_source, names, MAP_NAMES) > 0;
}

/* Check every room of the tree at root and its sub-folders: returns the
 * number of violations and writes one line per violation into out. */
static int maps_check(const char *root, char *out, size_t cap) {
    MapReport r = {out, cap, 0, 0};
    out[0] = 0;
    for (size_t i = 0; i < sizeof MAP_ROOMS / sizeof MAP_ROOMS[0]; i++) {
        char dir[MAP_PATH];
        snprintf(dir, sizeof dir, "%.200s/%s", root, MAP_ROOMS[i]);
        if (!map_is_dir(dir)) continue;
        if (map_has_source(dir)) map_check_dir(&r, dir);
        static char subs[MAP_NAMES][256];
        int n = map_list(dir, NULL, subs, MAP_NAMES);
        for (int k = 0; k < n; k++) {
            char sub[MAP_PATH];
            snprintf(sub, sizeof sub, "%.200s/%.255s", dir, subs[k]);
            if (map_is_dir(sub) && map_has_source(sub)) map_check_dir(&r, sub);
        }
    }
    return r.violations;
}

TEST(maps_every_source_folder_lists_each_file_on_one_line) {
    static char out[1 << 16];
    int n = maps_check(".", out, sizeof out);
    CHECK_MSG(n == 0, "%d map fault(s):\n%s", n, out);
}

TEST(maps_a_clean_tree_passes) {
    const char *root = test_tmp("maps-clean");
    static char out[4096];
    test_plant(root, "engine/a.h", "\n");
    test_plant(root, "engine/a.c", "/* a.c — one. */\n");
    test_plant(root, "engine/b.c", "/* b.c — two. */\n");
    test_plant(root, "engine/gen.py", "\n");
    test_plant(root, "engine/sub/s.c", "/* s.c — the sub-folder's. */\n");
    test_plant(root, "engine/sub/README.md", "| file | holds |\n|---|---|\n| s.c | the sub-folder's one file |\n");
    test_plant(root, "engine/README.md",
          "# engine\n\n| file | holds |\n|---|---|\n| `a.h/.c` | the pair |\n| `b.c`, `gen.py` | two on a row |\n"
          "| `sub/` | a sub-folder |\n\n| key | action |\n|---|---|\n| `x.c` | not a map |\n");
    test_plant(root, "store/notes.txt", "no sources, no map needed\n");
    CHECK_INT(maps_check(root, out, sizeof out), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
}

TEST(maps_a_planted_fault_is_reported_naming_the_line) {
    const char *root = test_tmp("maps-bad");
    static char out[4096];
    test_plant(root, "engine/a.c", "/* a.c — one. */\n");
    test_plant(root, "engine/b.c", "#include <stdio.h>\n");
    test_plant(root, "engine/run.sh", "\n");
    test_plant(root, "engine/README.md",
          "| file | holds |\n|---|---|\n| `a.c` | one |\n| `a.c`, `gone.c` | again, and a removed file |\n"
          "| `cmd_*.c` | many |\n| `nowhere/` | no such folder |\n"
          "| `b.c` | a sentence that goes on and on, past what one short line of a map should ever hold, "
          "with every detail of the file spelled out in a cell nobody reads to its end |\n");
    test_plant(root, "store/s.c", "\n");
    test_plant(root, "views/v.c", "\n");
    test_plant(root, "views/README.md", "# views\n\nNo table at all.\n");
    CHECK_INT(maps_check(root, out, sizeof out), 9);
    const char *want[] = {
        "engine/README.md:4: `a.c` has a row already (line 3)\n",
        "engine/README.md:4: `gone.c` is not a file of ",
        "engine/README.md:5: `cmd_*.c` is a glob: give each file its own row\n",
        "engine/README.md:6: `nowhere/` is not a folder of ",
        "engine/README.md:7: the row says 159 characters (at most 120: one short sentence)\n",
        "engine/README.md: no row names `run.sh`\n",
        "engine/b.c: does not open with a comment saying what it holds\n",
        "store/: holds sources but no README.md with a map\n",
        "views/README.md: no map (a table whose first header cell is `file`)\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) CHECK_MSG(strstr(out, want[i]), "no \"%s\" in:\n%s", want[i], out);
}
