/* tasks_io.c — task items to and from JSON lines (tasks.h). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/files.h"
#include "engine/tasks/tasks.h"
#include "engine/textout.h"

/* One item as a cJSON object; NULL when out of memory. */
static cJSON *item_json(const TaskItem *it) {
    cJSON *o = cJSON_CreateObject(), *pos = cJSON_CreateArray(), *nd = cJSON_CreateArray(), *refs = cJSON_CreateArray();
    int bad = !o || !pos || !nd || !refs;
    for (int i = 0; !bad && i < it->n_needle_pos; i++) bad |= !cJSON_AddItemToArray(pos, cJSON_CreateNumber(it->needle_pos[i]));
    for (int i = 0; !bad && i < it->n_needles; i++)
        bad |= !cJSON_AddItemToArray(nd, textout_json(it->needles[i], strlen(it->needles[i])));
    for (int i = 0; !bad && i < it->n_refs; i++)
        bad |= !cJSON_AddItemToArray(refs, textout_json(it->refs[i], strlen(it->refs[i])));
    int far = it->n_needle_pos ? it->n_tokens - 1 - it->needle_pos[0] : -1;
    if (bad || !cJSON_AddStringToObject(o, "task", task_name(it->kind)) ||
        textout_json_add(o, "prompt", it->prompt, strlen(it->prompt)) ||
        textout_json_add(o, "answer", it->answer, strlen(it->answer))) {
        cJSON_Delete(o), cJSON_Delete(pos), cJSON_Delete(nd), cJSON_Delete(refs);
        return NULL;
    }
    cJSON_AddItemToObject(o, "answers", refs);
    if (!cJSON_AddStringToObject(o, "metric", task_metric_name(it->metric)) ||
        !cJSON_AddNumberToObject(o, "n_tokens", it->n_tokens)) {
        cJSON_Delete(o), cJSON_Delete(pos), cJSON_Delete(nd);
        return NULL;
    }
    cJSON_AddItemToObject(o, "needle_pos", pos);
    cJSON_AddItemToObject(o, "needles", nd);
    if (!cJSON_AddNumberToObject(o, "question_pos", it->question_pos) ||
        !cJSON_AddNumberToObject(o, "needle_distance", far)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

int tasks_write_jsonl(const char *path, const TaskItem *items, int n, Err *e) {
    FileAtomic a;
    FILE *f = file_atomic_open(&a, path, e);
    if (!f) return -1;
    for (int i = 0; i < n; i++) {
        cJSON *o = item_json(&items[i]);
        char *s = o ? cJSON_PrintUnformatted(o) : NULL;
        cJSON_Delete(o);
        if (!s) {
            file_atomic_abort(&a);
            return err_set(e, "out of memory writing %s", path);
        }
        fputs(s, f), fputc('\n', f);
        free(s);
    }
    return file_atomic_commit(&a, e);
}

/* A string member of o, or NULL. */
static const char *str_of(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A non-negative integer member, or -1 (absent, fractional, negative or huge). */
static long pos_of(const cJSON *v) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e9 || v->valuedouble != (double)(long)v->valuedouble)
        return -1;
    return (long)v->valuedouble;
}

/* Member key's string, taken from o (which then holds NULL there): a
 * prompt of many MiB is not copied. */
static char *take_str(cJSON *o, const char *key) {
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char *t = v->valuestring;
    v->valuestring = NULL;
    return t;
}

/* The metric and references of line ln's object into it (its kind set):
 * metric a word of TASK_METRICS or the kind's; answers 1 to TASK_MAX_REFS
 * non-empty strings, or none (the answer alone, copied by the caller). */
static int refs_from(const cJSON *o, const char *path, int ln, TaskItem *it, Err *e) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metric"), *a = cJSON_GetObjectItemCaseSensitive(o, "answers");
    it->metric = task_metric(it->kind);
    if (m && (!cJSON_IsString(m) || task_metric_parse(m->valuestring, &it->metric)))
        return err_set(e, "%s: line %d: bad metric (exact, all or part)", path, ln);
    if (!a) return 0;
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 1 || n > TASK_MAX_REFS)
        return err_set(e, "%s: line %d: bad answers (a list of 1 to %d strings)", path, ln, TASK_MAX_REFS);
    const cJSON *v;
    cJSON_ArrayForEach(v, a) {
        if (!cJSON_IsString(v) || !*v->valuestring)
            return err_set(e, "%s: line %d: answers holds something not a non-empty string", path, ln);
        if (!(it->refs[it->n_refs++] = strdup(v->valuestring))) return err_set(e, "out of memory reading %s", path);
    }
    return 0;
}

/* Fill it from line number ln's object; errors name the file, line, field. */
static int item_from(cJSON *o, const char *path, int ln, TaskItem *it, Err *e) {
    memset(it, 0, sizeof *it);
    const char *prompt = str_of(o, "prompt"), *answer = str_of(o, "answer"), *task = str_of(o, "task");
    const cJSON *np = cJSON_GetObjectItemCaseSensitive(o, "needle_pos");
    long q = pos_of(cJSON_GetObjectItemCaseSensitive(o, "question_pos"));
    const char *missing = !prompt ? "prompt (a string)" : !answer || !*answer ? "answer (a non-empty string)"
                        : !cJSON_IsArray(np) ? "needle_pos (a list of token positions)"
                        : q < 0 ? "question_pos (a token position)" : NULL;
    if (missing) return err_set(e, "%s: line %d: missing or bad %s", path, ln, missing);
    it->kind = TASK_COUNT;
    for (int k = 0; task && k < TASK_COUNT; k++)
        if (!strcmp(task, task_name((TaskKind)k))) it->kind = (TaskKind)k;
    if (refs_from(o, path, ln, it, e)) return -1;
    long nt = pos_of(cJSON_GetObjectItemCaseSensitive(o, "n_tokens"));
    it->n_tokens = nt < 0 ? 0 : (int)nt, it->question_pos = (int)q;
    int n = cJSON_GetArraySize(np);
    if (!(it->prompt = take_str(o, "prompt")) || !(it->answer = strdup(answer)) ||
        !(it->needle_pos = malloc((size_t)(n ? n : 1) * sizeof *it->needle_pos)))
        return err_set(e, "out of memory reading %s", path);
    const cJSON *v;
    cJSON_ArrayForEach(v, np) {
        long p = pos_of(v);
        if (p < 0) return err_set(e, "%s: line %d: needle_pos holds something not a token position", path, ln);
        it->needle_pos[it->n_needle_pos++] = (int)p;
    }
    if (it->n_refs == 0 && !(it->refs[it->n_refs++] = strdup(answer))) return err_set(e, "out of memory reading %s", path);
    return 0;
}

/* A file read line by line with every line bounded, so a huge file costs
 * its longest line, never its size. */
typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap, len;
    int ln;
} LineIn;

/* The next line into r->buf (NUL-terminated, without its newline) and
 * r->len: 0 with a line, 1 at the end, -1 on error. getc_unlocked keeps
 * NUL bytes countable, which fgets would hide. */
static int line_next(LineIn *r, Err *e) {
    size_t n = 0;
    int c, any = 0;
    while ((c = getc_unlocked(r->f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (n + 1 >= r->cap) {
            if (r->cap > TASK_LINE_MAX)
                return err_set(e, "%s: line %d is longer than %d MiB (a prompt holds at most %d MiB)", r->path,
                               r->ln + 1, TASK_LINE_MAX >> 20, TASK_PROMPT_MAX >> 20);
            size_t cap = 2 * r->cap;
            if (cap > TASK_LINE_MAX + 2) cap = TASK_LINE_MAX + 2;
            char *p = realloc(r->buf, cap);
            if (!p) return err_set(e, "out of memory reading %s", r->path);
            r->buf = p, r->cap = cap;
        }
        r->buf[n++] = (char)c;
    }
    if (ferror(r->f)) return err_set(e, "%s: read error after line %d", r->path, r->ln);
    if (!any) return 1;
    r->ln++, r->len = n, r->buf[n] = 0;
    return 0;
}

/* Whether the line's strings hold the escape \u0000, which cJSON would
 * decode to a NUL that silently ends the string. */
static int has_nul_escape(const char *s, size_t n) {
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') in = !in;
        else if (in && s[i] == '\\' && i + 1 < n) {
            if (s[i + 1] == 'u' && i + 5 < n && !memcmp(s + i + 2, "0000", 4)) return 1;
            i++; /* an escaped quote or backslash is not a delimiter */
        }
    }
    return 0;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The first member name o holds twice, or NULL (names sorted, so a line
 * of many members costs n log n). */
static const char *dup_key(const cJSON *o, int *oom) {
    int n = cJSON_GetArraySize(o), k = 0;
    const char *dup = NULL;
    const char **names = malloc((size_t)(n ? n : 1) * sizeof *names);
    if (!names) return *oom = 1, NULL;
    for (const cJSON *v = o->child; v; v = v->next) names[k++] = v->string ? v->string : "";
    qsort(names, (size_t)k, sizeof *names, name_cmp);
    for (int i = 1; i < k && !dup; i++)
        if (!strcmp(names[i - 1], names[i])) dup = names[i];
    free(names);
    return dup;
}

/* Positions past the prompt: at or past n_tokens when the item gives it,
 * else past its bytes plus BOS (no token holds less than a byte). */
static int pos_check(const TaskItem *it, const char *path, int ln, Err *e) {
    long end = it->n_tokens > 0 ? it->n_tokens : (long)strlen(it->prompt) + 2;
    const char *what = it->n_tokens > 0 ? "n_tokens" : "the prompt's bytes";
    for (int i = 0; i < it->n_needle_pos; i++)
        if (it->needle_pos[i] >= end)
            return err_set(e, "%s: line %d: needle_pos %d is past the prompt (%s: %ld)", path, ln, it->needle_pos[i],
                           what, end);
    if (it->question_pos >= end)
        return err_set(e, "%s: line %d: question_pos %d is past the prompt (%s: %ld)", path, ln, it->question_pos,
                       what, end);
    return 0;
}

/* The object on r's current line, refused with its line number when the
 * line is not exactly one well-formed object with unique keys. */
static cJSON *line_object(const LineIn *r, Err *e) {
    const char *path = r->path;
    int ln = r->ln, oom = 0;
    if (ln == 1 && r->len >= 3 && !memcmp(r->buf, "\xef\xbb\xbf", 3)) {
        err_set(e, "%s: line 1 begins with a byte-order mark (save the file as UTF-8 without one)", path);
        return NULL;
    }
    if (memchr(r->buf, 0, r->len)) return err_set(e, "%s: line %d holds a NUL byte", path, ln), NULL;
    if (has_nul_escape(r->buf, r->len)) {
        err_set(e, "%s: line %d: a string holds \\u0000 (a NUL would cut it short)", path, ln);
        return NULL;
    }
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(r->buf, r->len, &end, 0);
    if (!cJSON_IsObject(o)) return cJSON_Delete(o), err_set(e, "%s: line %d is not a JSON object", path, ln), NULL;
    if (end && strspn(end, " \t\r") != strlen(end)) {
        cJSON_Delete(o);
        return err_set(e, "%s: line %d: text after the object (one object a line)", path, ln), NULL;
    }
    const char *dup = dup_key(o, &oom);
    if (oom || dup) {
        if (dup) err_set(e, "%s: line %d: key \"%.60s\" appears twice", path, ln, dup);
        else err_set(e, "out of memory reading %s", path);
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The item on r's current line into it: every check of the format. */
static int line_item(const LineIn *r, TaskItem *it, Err *e) {
    cJSON *o = line_object(r, e);
    if (!o) return memset(it, 0, sizeof *it), -1;
    int rc = item_from(o, r->path, r->ln, it, e);
    cJSON_Delete(o);
    if (rc == 0 && strlen(it->prompt) > TASK_PROMPT_MAX)
        rc = err_set(e, "%s: line %d: the prompt is %zu bytes, past the %d MiB a prompt may hold", r->path, r->ln,
                     strlen(it->prompt), TASK_PROMPT_MAX >> 20);
    return rc ? rc : pos_check(it, r->path, r->ln, e);
}

static int line_blank(const LineIn *r) { return strspn(r->buf, " \t\r") == r->len; }

/* Open path for line reading (a regular file, never a FIFO). */
static int line_open(LineIn *r, const char *path, Err *e) {
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = file_fopen_regular(path, "task file", "JSON lines from `ahascope tasks`", e);
    if (r->f && !(r->buf = malloc(r->cap = 4096))) return fclose(r->f), r->f = NULL, err_set(e, "out of memory reading %s", path);
    return r->f ? 0 : -1;
}

static void line_close(LineIn *r) {
    if (r->f) fclose(r->f);
    free(r->buf);
}

/* A file of no items: empty (no line at all) or blank lines only. */
static int none_error(const char *path, int lines, Err *e) {
    if (lines == 0) return err_set(e, "%s: empty task file (expected JSON lines from `ahascope tasks`)", path);
    return err_set(e, "%s: no task items (expected JSON lines from `ahascope tasks`)", path);
}

/* Room for one more item in s, refusing past TASK_MAX_ITEMS or past
 * TASK_KEPT_MAX bytes of prompts and answers kept. */
static int set_room(TaskSet *s, int *cap, size_t kept, const LineIn *r, Err *e) {
    if (s->n >= TASK_MAX_ITEMS)
        return err_set(e, "%s: line %d: more than %d items (split the file)", r->path, r->ln, TASK_MAX_ITEMS);
    if (kept > TASK_KEPT_MAX)
        return err_set(e, "%s: line %d: the items so far hold more than %d MiB of text (split the file)", r->path,
                       r->ln, (int)(TASK_KEPT_MAX >> 20));
    if (s->n < *cap) return 0;
    TaskItem *p = realloc(s->item, (size_t)(*cap = *cap ? 2 * *cap : 64) * sizeof *p);
    if (!p) return err_set(e, "out of memory reading %s", r->path);
    s->item = p;
    return 0;
}

int tasks_read_jsonl(const char *path, TaskSet *s, Err *e) {
    memset(s, 0, sizeof *s);
    LineIn r;
    if (line_open(&r, path, e)) return -1;
    int cap = 0, rc = 0, got;
    size_t kept = 0;
    while (rc == 0 && (got = line_next(&r, e)) == 0) {
        if (line_blank(&r)) continue;
        if ((rc = set_room(s, &cap, kept, &r, e))) break;
        TaskItem *it = &s->item[s->n++]; /* counted even when half-filled, so tasks_free releases it */
        rc = line_item(&r, it, e);
        if (rc == 0) kept += strlen(it->prompt) + strlen(it->answer);
    }
    if (rc == 0 && got < 0) rc = -1;
    line_close(&r);
    if (rc == 0 && s->n == 0) rc = none_error(path, r.ln, e);
    if (rc) tasks_free(s);
    return rc;
}

int tasks_read_item(const char *path, long k, TaskItem *it, Err *e) {
    memset(it, 0, sizeof *it);
    LineIn r;
    if (line_open(&r, path, e)) return -1;
    long seen = 0;
    int got, rc = 1;
    while (rc == 1 && (got = line_next(&r, e)) == 0)
        if (!line_blank(&r) && seen++ == k) rc = line_item(&r, it, e);
    if (rc == 1)
        rc = got < 0 ? -1 : seen == 0 ? none_error(path, r.ln, e)
                        : err_set(e, "%s: no item %ld: the file holds %ld (counted from 0)", path, k, seen);
    line_close(&r);
    if (rc) task_item_free(it);
    return rc;
}

void tasks_free(TaskSet *s) {
    for (int i = 0; i < s->n; i++) task_item_free(&s->item[i]);
    free(s->item);
    memset(s, 0, sizeof *s);
}
