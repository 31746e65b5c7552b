/* test_layers.c — the rooms' layering from the sources' includes, and no circle of calls between files.
 *
 * The rooms' layering, read off the sources' quoted
 * includes, and the files' calls, read off the compiled objects' symbols.
 *
 * Rooms rank engine < store, views < app; store and views are peers and
 * neither may include the other; a sub-folder belongs to its room; tests/ is
 * not checked. layers_check() reads every .c and .h below the four rooms of a
 * tree and reports, one line each, an include of a higher (or peer) room and
 * every cycle of includes, naming the including file and line.
 *
 * Includes alone let two files of one room call each other (each includes
 * the other's header, no header includes a header back), so calls_check()
 * also reads each .c's object with `nm -P`: an edge runs from A to B when
 * A's object leaves undefined a symbol B's object defines, and every circle
 * of such edges is reported, naming the files round it. Symbols no project
 * object defines (libc, the sanitizers' runtime under build-san/) make no
 * edge, so the check reads the same in both builds. The tests run both on
 * the checkout (the objects beside the test binary) and, to prove they can
 * fail, on small planted trees and graphs. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/test.h"

enum { LAYERS_PATH = 512 };

typedef struct {
    int from, to, line;
    char text[LAYERS_PATH];  /* the include as written */
} LayerEdge;

/* A symbol of an object, with the file whose object holds it. */
typedef struct {
    char *name;
    int file;
} LayerSym;

typedef struct {
    LayerSym *v;
    int n, cap;
} LayerSyms;

typedef struct {
    const char *root;
    char (*files)[LAYERS_PATH];  /* relative to root */
    int nfiles, capfiles;
    LayerEdge *edges;  /* includes (text: as written), or calls (text: a symbol) */
    int nedges, capedges;
    char *out;  /* the report, one violation a line */
    size_t outcap, outlen;
    int violations;
    int calls;           /* the edges are calls, not includes */
    const char *objdir;  /* calls: where the objects are, laid out as the sources */
    int objects;         /* calls: objects read */
    LayerSyms defs, refs; /* calls: globals defined, symbols left undefined */
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

static int layers_is_source(const char *name) {
    size_t n = strlen(name);
    return n > 2 && name[n - 2] == '.' && (name[n - 1] == 'c' || name[n - 1] == 'h');
}

/* Every quoted include of one source file: an edge each, and a report for
 * an include of a higher or peer room. */
static void layers_scan_file(Layers *L, const char *rel) {
    char full[2 * LAYERS_PATH], line[4096], inc[LAYERS_PATH], target[LAYERS_PATH];
    if (!layers_is_source(rel)) return;
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

typedef void (*LayersEach)(Layers *L, const char *rel);

/* Every file below rel (a room or one of its sub-folders), in name order,
 * handed to each. */
static void layers_scan_dir(Layers *L, const char *rel, LayersEach each) {
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
        if (S_ISDIR(st.st_mode)) layers_scan_dir(L, child, each);
        else if (S_ISREG(st.st_mode)) each(L, child);
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
            if (L->calls)
                layers_report(L, "%s: calls %s, defined in %s (a circle of calls: %s)\n", L->files[v], e->text,
                              L->files[e->to], loop);
            else
                layers_report(L, "%s:%d: includes \"%s\" (a cycle: %s)\n", L->files[v], e->line, e->text, loop);
        }
    }
    state[v] = 2;
}

/* Report every cycle among L's files and edges, whatever they stand for;
 * returns L's violations so far. */
static int layers_cycles(Layers *L) {
    char *state = calloc((size_t)L->nfiles + 1, 1);
    int *path = calloc((size_t)L->nfiles + 1, sizeof *path);
    for (int v = 0; v < L->nfiles; v++)
        if (!state[v]) layers_visit(L, v, state, path, 0);
    free(state), free(path);
    return L->violations;
}

static void layers_free(Layers *L) {
    for (int i = 0; i < L->defs.n; i++) free(L->defs.v[i].name);
    for (int i = 0; i < L->refs.n; i++) free(L->refs.v[i].name);
    free(L->defs.v), free(L->refs.v), free(L->files), free(L->edges);
}

/* Check the tree at root: returns the number of violations (0: clean) and
 * writes one line per violation into out (cap bytes, NUL-terminated). */
static int layers_check(const char *root, char *out, size_t cap) {
    Layers L = {.root = root, .out = out, .outcap = cap};
    out[0] = 0;
    for (int i = 0; i < 4; i++) layers_scan_dir(&L, ROOMS[i], layers_scan_file);
    int n = layers_cycles(&L);
    layers_free(&L);
    return n;
}

static void syms_add(LayerSyms *s, const char *name, int file) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n].name = strdup(name);
    s->v[s->n++].file = file;
}

static int syms_cmp(const void *a, const void *b) {
    return strcmp(((const LayerSym *)a)->name, ((const LayerSym *)b)->name);
}

/* The symbols of one .c's object, objdir/<rel without .c>.o, as `nm -P`
 * lists them: the globals it defines (any upper-case type but U; lower
 * case is local to the file) and those it leaves to others (U). A source
 * without an object (app/main.c when only the tests were built) is left
 * out: no object, no calls to read. */
static void calls_scan_object(Layers *L, const char *rel) {
    size_t n = strlen(rel);
    if (n < 3 || strcmp(rel + n - 2, ".c")) return;
    char obj[2 * LAYERS_PATH], cmd[3 * LAYERS_PATH], line[2 * LAYERS_PATH], name[LAYERS_PATH], type;
    struct stat st;
    snprintf(obj, sizeof obj, "%s/%.*s.o", L->objdir, (int)(n - 2), rel);
    if (stat(obj, &st) != 0) return;
    snprintf(cmd, sizeof cmd, "nm -P '%s' 2>/dev/null", obj);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    int file = layers_index(L, rel);
    L->objects++;
    while (fgets(line, sizeof line, p))
        if (sscanf(line, "%511s %c", name, &type) == 2) {
            if (type == 'U') syms_add(&L->refs, name, file);
            else if (isupper((unsigned char)type)) syms_add(&L->defs, name, file);
        }
    pclose(p);
}

/* An edge for each pair of files where the first's object uses a symbol
 * the second's defines, named by the first such symbol nm lists. */
static void calls_link(Layers *L) {
    if (L->defs.n == 0) return; /* nothing defined, nothing to call (and no array to sort) */
    qsort(L->defs.v, (size_t)L->defs.n, sizeof *L->defs.v, syms_cmp);
    char *seen = calloc((size_t)L->nfiles * (size_t)L->nfiles + 1, 1);
    for (int i = 0; i < L->refs.n; i++) {
        int from = L->refs.v[i].file;
        const LayerSym *hit = bsearch(&L->refs.v[i], L->defs.v, (size_t)L->defs.n, sizeof *L->defs.v, syms_cmp);
        if (!hit) continue; /* libc, a library, the sanitizers: not the project's */
        size_t pair = (size_t)from * (size_t)L->nfiles + (size_t)hit->file;
        if (hit->file == from || seen[pair]) continue;
        seen[pair] = 1;
        layers_add_edge(L, from, hit->file, 0, L->refs.v[i].name);
    }
    free(seen);
}

/* Check the calls between the .c files of the tree at root, whose objects
 * are under objdir: returns the number of circles (0: none; a tree with no
 * object found counts one) and writes a line for each into out. */
static int calls_check(const char *root, const char *objdir, char *out, size_t cap) {
    Layers L = {.root = root, .out = out, .outcap = cap, .calls = 1, .objdir = objdir};
    out[0] = 0;
    for (int i = 0; i < 4; i++) layers_scan_dir(&L, ROOMS[i], calls_scan_object);
    if (L.objects == 0) layers_report(&L, "%s: no object of any source under %s (build first)\n", objdir, root);
    calls_link(&L);
    int n = layers_cycles(&L);
    layers_free(&L);
    return n;
}

/* The folder of the running test binary, where make put the objects it was
 * linked from (build/ or build-san/); -1 if it cannot be read. */
static int calls_objdir(char *dir, size_t cap) {
    ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
    if (n <= 0) return -1;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (!slash) return -1;
    *slash = 0;
    return 0;
}

TEST(layers_the_checkout_includes_only_lower_rooms_and_no_cycles) {
    static char out[1 << 16];
    int n = layers_check(".", out, sizeof out);
    CHECK_MSG(n == 0, "%d include(s) break the layering:\n%s", n, out);
}

TEST(layers_a_clean_tree_passes) {
    const char *root = test_tmp("layers-clean");
    static char out[4096];
    test_plant(root, "engine/e.h", "#pragma once\n");
    test_plant(root, "engine/tokenize/t.h", "#include \"../e.h\"\n#include \"engine/e.h\"\n");
    test_plant(root, "store/s.h", "#include \"engine/e.h\"\n");
    test_plant(root, "views/v.c", "#include <stdio.h>\n#include \"../engine/tokenize/t.h\"\n");
    test_plant(root, "app/tui/a.c", "#include \"store/s.h\"\n#include \"views/v.c\"\n#include \"../a.h\"\n");
    test_plant(root, "app/a.h", "# include \"engine/e.h\"\n");
    test_plant(root, "tests/x.c", "#include \"app/a.h\"\n");
    CHECK_INT(layers_check(root, out, sizeof out), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
}

TEST(layers_a_planted_include_of_a_higher_room_fails_naming_file_and_line) {
    const char *root = test_tmp("layers-up");
    static char out[4096];
    test_plant(root, "app/version.h", "#define V 1\n");
    test_plant(root, "views/v.h", "#pragma once\n");
    test_plant(root, "store/s.h", "#pragma once\n");
    test_plant(root, "store/writer.c", "#include <stdio.h>\n\n#include \"app/version.h\"\n");
    test_plant(root, "engine/tokenize/t.c", "/* x */\n#include \"../../store/s.h\"\n");
    test_plant(root, "store/peer.c", "#include \"views/v.h\"\n");
    test_plant(root, "views/peer.c", "#include \"store/s.h\"\n");
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
    test_plant(root, "engine/a.h", "#include \"b.h\"\n");
    test_plant(root, "engine/b.h", "#pragma once\n#include \"engine/a.h\"\n");
    test_plant(root, "store/x.h", "#include \"y.h\"\n");
    test_plant(root, "store/y.h", "#include \"z.h\"\n");
    test_plant(root, "store/z.h", "\n\n#include \"x.h\"\n");
    CHECK_INT(layers_check(root, out, sizeof out), 2);
    CHECK_MSG(strstr(out, "engine/b.h:2: includes \"engine/a.h\" (a cycle: engine/a.h -> engine/b.h -> engine/a.h)\n"),
              "%s", out);
    CHECK_MSG(strstr(out, "store/z.h:3: includes \"x.h\" (a cycle: store/x.h -> store/y.h -> store/z.h -> store/x.h)\n"),
              "%s", out);
}

TEST(layers_the_checkout_has_no_circle_of_calls_between_files) {
    static char out[1 << 16];
    char dir[LAYERS_PATH];
    if (calls_objdir(dir, sizeof dir)) {
        CHECK_MSG(0, "cannot read the test binary's folder (/proc/self/exe)");
        return;
    }
    int n = calls_check(".", dir, out, sizeof out);
    CHECK_MSG(n == 0, "%d circle(s) of calls between files (objects in %s):\n%s", n, dir, out);
}

/* The cycle finder alone, on graphs given edge by edge: a ladder with a
 * shortcut has no circle; one edge back closes exactly one, spelled out. */
TEST(layers_the_circle_finder_reports_a_planted_circle_and_nothing_else) {
    static char out[4096];
    Layers L = {.calls = 1, .out = out, .outcap = sizeof out};
    const char *names[] = {"views/a.c", "views/b.c", "views/c.c", "views/d.c"};
    for (int i = 0; i < 4; i++) layers_index(&L, names[i]);
    layers_add_edge(&L, 0, 1, 0, "b_fn");
    layers_add_edge(&L, 1, 2, 0, "c_fn");
    layers_add_edge(&L, 2, 3, 0, "d_fn");
    layers_add_edge(&L, 0, 3, 0, "d_other");
    CHECK_INT(layers_cycles(&L), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
    layers_add_edge(&L, 2, 0, 0, "a_fn");
    CHECK_INT(layers_cycles(&L), 1);
    CHECK_MSG(strstr(out, "views/c.c: calls a_fn, defined in views/a.c (a circle of calls: views/a.c -> views/b.c -> "
                          "views/c.c -> views/a.c)\n"), "%s", out);
    layers_free(&L);
}

/* Compile root/rel into objdir as make lays objects out, with extra flags. */
static void plant_object(const char *root, const char *objdir, const char *rel, const char *flags) {
    int st;
    size_t n = strlen(rel);
    free(test_runf(&st, "mkdir -p \"$(dirname '%s/%s')\" && cc -std=c11 %s -c '%s/%s' -o '%s/%.*s.o' 2>&1", objdir, rel,
                   flags, root, rel, objdir, (int)(n - 2), rel));
    CHECK_MSG(st == 0, "cc %s failed", rel);
}

/* A tree whose calls climb a ladder (app -> views pin -> geom -> model,
 * app -> engine), compiled; with `circle` set, the model calls the pin
 * back. Returns calls_check's count. */
static int plant_calls(const char *name, int circle, const char *flags, char *out, size_t cap) {
    const char *root = test_tmp(name);
    char objdir[LAYERS_PATH];
    snprintf(objdir, sizeof objdir, "%s/build", root);
    const char *const files[][2] = {
        {"engine/e.c", "#include <stdio.h>\nstatic int local(void) { return 3; }\n"
                       "int eng(void) { return printf(\"x\") + local(); }\n"},
        {"views/model.c", circle ? "int pin_cell(void);\nint view_base(void) { return 1; }\n"
                                   "int model_fit(void) { return pin_cell(); }\n"
                                 : "int view_base(void) { return 1; }\n"},
        {"views/geom.c", "int view_base(void);\nint geom_w(void) { return view_base() + 1; }\n"},
        {"views/pin.c", "int geom_w(void);\nint pin_cell(void) { return 2 * geom_w(); }\n"},
        {"app/a.c", "int eng(void);\nint pin_cell(void);\nint main(void) { return eng() + pin_cell(); }\n"},
    };
    for (int i = 0; i < 5; i++) {
        test_plant(root, files[i][0], files[i][1]);
        plant_object(root, objdir, files[i][0], flags);
    }
    return calls_check(root, objdir, out, cap);
}

TEST(layers_a_planted_circle_of_calls_fails_naming_the_files) {
    static char out[4096];
    CHECK_INT(plant_calls("calls-ladder", 0, "-O1", out, sizeof out), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
    /* sanitizer objects reference their runtime, which no project object defines */
    CHECK_INT(plant_calls("calls-ladder-san", 0, "-O1 -fsanitize=address,undefined", out, sizeof out), 0);
    CHECK_MSG(out[0] == 0, "%s", out);
    CHECK_INT(plant_calls("calls-circle", 1, "-O1", out, sizeof out), 1);
    CHECK_MSG(strstr(out, "views/pin.c: calls geom_w, defined in views/geom.c (a circle of calls: views/geom.c -> "
                          "views/model.c -> views/pin.c -> views/geom.c)\n"), "%s", out);
    /* no objects where they are looked for: a failure, not a pass */
    static char none[1024];
    CHECK_INT(calls_check(test_tmp("calls-circle"), test_tmp("calls-nowhere"), none, sizeof none), 1);
    CHECK_MSG(strstr(none, "no object of any source"), "%s", none);
}
