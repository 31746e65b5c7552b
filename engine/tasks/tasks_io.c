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
static int item_from(const cJSON *o, const char *path, int ln, TaskItem *it, Err *e) {
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
    if (!(it->prompt = strdup(prompt)) || !(it->answer = strdup(answer)) ||
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

int tasks_read_jsonl(const char *path, TaskSet *s, Err *e) {
    memset(s, 0, sizeof *s);
    size_t len;
    char *text = file_read_all(path, "task file", "JSON lines from `ahascope tasks`", (size_t)1 << 30, &len, e);
    if (!text) return -1;
    int cap = 0, ln = 0, rc = 0;
    for (char *line = text, *next; rc == 0 && line < text + len; line = next) {
        char *nl = memchr(line, '\n', (size_t)(text + len - line));
        next = nl ? nl + 1 : text + len;
        if (nl) *nl = 0;
        ln++;
        if (strspn(line, " \t\r") == strlen(line)) continue;
        if (strlen(line) != (size_t)((nl ? nl : text + len) - line)) {
            rc = err_set(e, "%s: line %d holds a NUL byte", path, ln);
            break;
        }
        cJSON *o = cJSON_Parse(line);
        if (!cJSON_IsObject(o)) rc = err_set(e, "%s: line %d is not a JSON object", path, ln);
        if (rc == 0 && s->n == cap) {
            TaskItem *p = realloc(s->item, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *p);
            if (!p) rc = err_set(e, "out of memory reading %s", path);
            else s->item = p;
        }
        if (rc == 0) {
            rc = item_from(o, path, ln, &s->item[s->n], e);
            s->n++; /* counted even when half-filled, so tasks_free releases it */
        }
        cJSON_Delete(o);
    }
    free(text);
    if (rc == 0 && s->n == 0) rc = err_set(e, "%s: no task items (expected JSON lines from `ahascope tasks`)", path);
    if (rc) tasks_free(s);
    return rc;
}

void tasks_free(TaskSet *s) {
    for (int i = 0; i < s->n; i++) task_item_free(&s->item[i]);
    free(s->item);
    memset(s, 0, sizeof *s);
}
