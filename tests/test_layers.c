/* test_layers.c — the rooms' layering, read off the sources' quoted includes.
 *
 * Rooms rank engine < store, views < app; store and views are peers and
 * neither may include the other; a sub-folder belongs to its room; tests/ is
 * not checked. layers_check() reads every .c and .h below the four rooms of a
 * tree and reports, one line each, an include of a higher (or peer) room and
 * every cycle of includes, naming the including file and line. The tests run
 * it on the checkout and, to prove it can fail, on small planted trees. */
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/test.h"

enum { LAYERS_PATH = 512 };

typedef struct {
    int from, to, line;
    char text[LAYERS_PATH];  /* the include as written */
} LayerEdge;

typedef struct {
    const char *root;
    char (*files)[LAYERS_PATH];  /* relative to root */
    int nfiles, capfiles;
    LayerEdge *edges;
    int nedges, capedges;
    char *out;  /* the report, one violation a line */
    size_t outcap, outlen;
    int violations;
} Layers;

static const char *const ROOMS[] = {"engine", "store", "views", "app"};
static const int RANKS[] = {0, 1, 1, 2};

/* The room a root-relative path lies in (its first component), or -1. */
static int layers_room(const char *rel) {
    size_t n = strcspn(rel, "/");
    for (int i = 0; i < 4; i++)
        if (strlen(ROOMS[i]) == n && !strncmp(rel, ROOMS[i], n) && rel[n] == '/') return i;
    return -1;
}

static void layers_report(Layers *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void layers_report(Layers *L, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (L->outlen < L->outcap) {
        int n = vsnprintf(L->out + L->outlen, L->outcap - L->outlen, fmt, ap);
        if (n > 0) L->outlen += (size_t)n;
        if (L->outlen >= L->outcap) L->outlen = L->outcap - 1;
    }
    va_end(ap);
    L->violations++;
}

/* Collapse "." and ".." in a relative path, in place; -1 if it climbs out. */
static int layers_normalise(char *p) {
    char *parts[64];
    int n = 0;
    for (char *tok = strtok(p, "/"); tok; tok = strtok(NULL, "/")) {
        if (!strcmp(tok, ".")) continue;
        if (!strcmp(tok, "..")) {
            if (n == 0) return -1;
            n--;
        } else if (n < 64) {
            parts[n++] = tok;
        }
    }
    char buf[LAYERS_PATH] = "";
    for (int i = 0; i < n; i++) {
        if (i) strncat(buf, "/", sizeof buf - strlen(buf) - 1);
        strncat(buf, parts[i], sizeof buf - strlen(buf) - 1);
    }
    strcpy(p, buf);
    return 0;
}

static int layers_is_file(const Layers *L, const char *rel) {
    char full[2 * LAYERS_PATH];
    struct stat st;
    snprintf(full, sizeof full, "%s/%s", L->root, rel);
    return stat(full, &st) == 0 && S_ISREG(st.st_mode);
}

/* The file an include names, as the compiler finds it: beside the including
 * file first, then from the top (-I.). 0 with the root-relative path in
 * `rel`, or -1 when neither exists. */
static int layers_resolve(const Layers *L, const char *from, const char *inc, char *rel) {
    const char *slash = strrchr(from, '/');
    int n = snprintf(rel, LAYERS_PATH, "%.*s/%s", slash ? (int)(slash - from) : 0, from, inc);
    if (n < LAYERS_PATH && layers_normalise(rel) == 0 && layers_is_file(L, rel)) return 0;
    snprintf(rel, LAYERS_PATH, "%s", inc);
    if (layers_normalise(rel) == 0 && layers_is_file(L, rel)) return 0;
    return -1;
}

static int layers_index(Layers *L, const char *rel) {
    for (int i = 0; i < L->nfiles; i++)
        if (!strcmp(L->files[i], rel)) return i;
    if (L->nfiles == L->capfiles) {
        L->capfiles = L->capfiles ? 2 * L->capfiles : 256;
        L->files = realloc(L->files, (size_t)L->capfiles * sizeof *L->files);
    }
    snprintf(L->files[L->nfiles], LAYERS_PATH, "%s", rel);
    return L->nfiles++;
}

static void layers_add_edge(Layers *L, int from, int to, int line, const char *text) {
    if (L->nedges == L->capedges) {
        L->capedges = L->capedges ? 2 * L->capedges : 1024;
        L->edges = realloc(L->edges, (size_t)L->capedges * sizeof *L->edges);
    }
    LayerEdge *e = &L->edges[L->nedges++];
    *e = (LayerEdge){from, to, line, ""};
    snprintf(e->text, sizeof e->text, "%s", text);
}

/* The quoted include on one line, copied into inc; 0 if there is none. */
static int layers_include_of(const char *line, char *inc) {
    const char *p = line + strspn(line, " \t");
    if (*p != '#') return 0;
    p += 1 + strspn(p + 1, " \t");
    if (strncmp(p, "include", 7)) return 0;
    p += 7 + strspn(p + 7, " \t");
    if (*p != '"') return 0;
    size_t n = strcspn(p + 1, "\"\n");
    if (p[1 + n] != '"' || n >= LAYERS_PATH) return 0;
    memcpy(inc, p + 1, n);
    inc[n] = 0;
    return 1;
}

/* Every quoted include of one source file: an edge each, and a report for
 * an include of a higher or peer room. */
static void layers_scan_file(Layers *L, const char *rel) {
    char full[2 * LAYERS_PATH], line[4096], inc[LAYERS_PATH], target[LAYERS_PATH];
    snprintf(full, sizeof full, "%s/%s", L->root, rel);
    FILE *f = fopen(full, "r");
    if (!f) return;
    int from = layers_index(L, rel), room = layers_room(rel);
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        if (!layers_include_of(line, inc) || layers_resolve(L, rel, inc, target)) continue;
        int to_room = layers_room(target);
        if (to_room >= 0 && to_room != room && RANKS[to_room] >= RANKS[room])
            layers_report(L, "%s:%d: includes \"%s\" (room %s may not include room %s)\n", rel, lineno, inc,
                          ROOMS[room], ROOMS[to_room]);
        layers_add_edge(L, from, layers_index(L, target), lineno, inc);
    }
    fclose(f);
}

static int layers_is_source(const char *name) {
    size_t n = strlen(name);
    return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* Every .c and .h below rel (a room or one of its sub-folders). */
static void layers_scan_dir(Layers *L, const char *rel) {
    char full[2 * LAYERS_PATH];
    snprintf(full, sizeof full, "%s/%s", L->root, rel);
    DIR *d = opendir(full);
    if (!d) return;
    char (*names)[256] = NULL;
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        names = realloc(names, (size_t)(n + 1) * sizeof *names);
        snprintf(names[n++], 256, "%s", de->d_name);
    }
    closedir(d);
    /* sorted, so the report reads the same on every file system */
    qsort(names, (size_t)n, sizeof *names, (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++) {
        char child[LAYERS_PATH];
        struct stat st;
        snprintf(child, sizeof child, "%s/%s", rel, names[i]);
        snprintf(full, sizeof full, "%s/%s", L->root, child);
        if (stat(full, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) layers_scan_dir(L, child);
        else if (S_ISREG(st.st_mode) && layers_is_source(names[i])) layers_scan_file(L, child);
    }
    free(names);
}

/* Depth-first search for cycles: a back edge to a file still on the path
 * closes one, reported at that edge with the whole loop spelled out. */
static void layers_visit(Layers *L, int v, char *state, int *path, int depth) {
    state[v] = 1;
    path[depth] = v;
    for (int i = 0; i < L->nedges; i++) {
        LayerEdge *e = &L->edges[i];
        if (e->from != v) continue;
        if (state[e->to] == 0) {
            layers_visit(L, e->to, state, path, depth + 1);
        } else if (state[e->to] == 1) {
            char loop[4096] = "";
            int start = depth;
            while (path[start] != e->to) start--;
            for (int k = start; k <= depth; k++) {
                strncat(loop, L->files[path[k]], sizeof loop - strlen(loop) - 1);
                strncat(loop, " -> ", sizeof loop - strlen(loop) - 1);
            }
            strncat(loop, L->files[e->to], sizeof loop - strlen(loop) - 1);
            layers_report(L, "%s:%d: includes \"%s\" (a cycle: %s)\n", L->files[v], e->line, e->text, loop);
        }
    }
    state[v] = 2;
}

/* Check the tree at root: returns the number of violations (0: clean) and
 * writes one line per violation into out (cap bytes, NUL-terminated). */
static int layers_check(const char *root, char *out, size_t cap) {
    Layers L = {.root = root, .out = out, .outcap = cap};
    out[0] = 0;
    for (int i = 0; i < 4; i++) layers_scan_dir(&L, ROOMS[i]);
    char *state = calloc((size_t)L.nfiles + 1, 1);
    int *path = calloc((size_t)L.nfiles + 1, sizeof *path);
    for (int v = 0; v < L.nfiles; v++)
        if (!state[v]) layers_visit(&L, v, state, path, 0);
    free(state), free(path), free(L.files), free(L.edges);
    return L.violations;
}

/* Write `text` to root/rel, creating its folders. */
static void plant(const char *root, const char *rel, const char *text) {
    char full[2 * LAYERS_PATH];
    int st;
    snprintf(full, sizeof full, "%s/%s", root, rel);
    free(test_runf(&st, "mkdir -p \"$(dirname '%s')\"", full));
    CHECK_INT(test_write_file(full, text, (long)strlen(text)), 0);
}

TEST(layers_the_checkout_includes_only_lower_rooms_and_no_cycles) {
    static char out[1 << 16];
    int n = layers_check(".", out, sizeof out);
    CHECK_MSG(n == 0, "%d include(s) break the layering:\n%s", n, out);
}

TEST(layers_a_clean_tree_passes) {
    const char *root = test_tmp("layers-clean");
    static char out[4096];
    plant(root, "engine/e.h", "#pragma once\n");
    plant(root, "engine/tokenize/t.h", "#include \"../e.h\"\n#include \"engine/e.h\"\n");
    plant(root, "store/s.h", "#include \"engine/e.h\"\n");
    plant(root, "views/v.c", "#include <stdio.h>\n#include \"../engine/tokenize/t.h\"\n");
    plant(root, "app/tui/a.c", "#include \"store/s.h\"\n#include \"views/v.c\"\n#include \"../a.h\"\n");
    plant(root, "app/a.h", "# include \"engine/e.h\"\n");
    plant(root, "tests/x.c", "#include \"app/a.h\"\n");
    CHECK_INT(layers_check(root, out, sizeof out), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
}

TEST(layers_a_planted_include_of_a_higher_room_fails_naming_file_and_line) {
    const char *root = test_tmp("layers-up");
    static char out[4096];
    plant(root, "app/version.h", "#define V 1\n");
    plant(root, "views/v.h", "#pragma once\n");
    plant(root, "store/s.h", "#pragma once\n");
    plant(root, "store/writer.c", "#include <stdio.h>\n\n#include \"app/version.h\"\n");
    plant(root, "engine/tokenize/t.c", "/* x */\n#include \"../../store/s.h\"\n");
    plant(root, "store/peer.c", "#include \"views/v.h\"\n");
    plant(root, "views/peer.c", "#include \"store/s.h\"\n");
    CHECK_INT(layers_check(root, out, sizeof out), 4);
    CHECK_MSG(strstr(out, "store/writer.c:3: includes \"app/version.h\" (room store may not include room app)\n"),
              "%s", out);
    CHECK_MSG(strstr(out, "engine/tokenize/t.c:2: includes \"../../store/s.h\" (room engine may not include room store)\n"),
              "%s", out);
    CHECK_MSG(strstr(out, "store/peer.c:1: includes \"views/v.h\" (room store may not include room views)\n"), "%s", out);
    CHECK_MSG(strstr(out, "views/peer.c:1: includes \"store/s.h\" (room views may not include room store)\n"), "%s", out);
}

TEST(layers_a_planted_include_cycle_fails_naming_file_and_line) {
    const char *root = test_tmp("layers-cycle");
    static char out[4096];
    plant(root, "engine/a.h", "#include \"b.h\"\n");
    plant(root, "engine/b.h", "#pragma once\n#include \"engine/a.h\"\n");
    plant(root, "store/x.h", "#include \"y.h\"\n");
    plant(root, "store/y.h", "#include \"z.h\"\n");
    plant(root, "store/z.h", "\n\n#include \"x.h\"\n");
    CHECK_INT(layers_check(root, out, sizeof out), 2);
    CHECK_MSG(strstr(out, "engine/b.h:2: includes \"engine/a.h\" (a cycle: engine/a.h -> engine/b.h -> engine/a.h)\n"),
              "%s", out);
    CHECK_MSG(strstr(out, "store/z.h:3: includes \"x.h\" (a cycle: store/x.h -> store/y.h -> store/z.h -> store/x.h)\n"),
              "%s", out);
}
