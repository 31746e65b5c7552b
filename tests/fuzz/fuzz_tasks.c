/* fuzz_tasks.c — libFuzzer harness: a task file of JSON lines (`eval --tasks`).
 *
 * Task files (engine/tasks/tasks_io.c): JSON lines as
 * `eval --tasks` reads them. A file that loads holds at least one item,
 * each with a prompt, a non-empty answer and non-negative positions. */
#include <stdlib.h>
#include <string.h>

#include "engine/tasks/tasks.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    TaskSet s;
    Err e;
    if (tasks_read_jsonl(fuzz_write("tasks.jsonl", data, size), &s, &e) != 0) return 0;
    if (s.n < 1) abort();
    for (int i = 0; i < s.n; i++) {
        const TaskItem *it = &s.item[i];
        if (!it->prompt || !it->answer || !*it->answer || it->question_pos < 0) abort();
        for (int k = 0; k < it->n_needle_pos; k++)
            if (it->needle_pos[k] < 0) abort();
    }
    tasks_free(&s);
    return 0;
}
