/* tui_open.c — what `ahascope tui` opens (app/tui_open.h): a task item
 * made the run's prompt and the screen's marks, then the controller. */
#include "app/tui_open.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/tasks/tasks.h"
#include "views/explain.h"

/* The needle's positions as runs, "41-67" or "12-20, 88-95": what the
 * status line can hold of a list of every position. */
static void pos_runs(const TaskItem *it, char *buf, size_t cap) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < it->n_needle_pos && o + 24 < cap;) {
        int j = i;
        while (j + 1 < it->n_needle_pos && it->needle_pos[j + 1] == it->needle_pos[j] + 1) j++;
        o += (size_t)(j > i ? snprintf(buf + o, cap - o, "%s%d-%d", o ? ", " : "", it->needle_pos[i], it->needle_pos[j])
                            : snprintf(buf + o, cap - o, "%s%d", o ? ", " : "", it->needle_pos[i]));
        i = j + 1;
    }
}

/* --tasks FILE --item K: the item's prompt becomes the run's, its needle
 * and question the screen's marks (into marks[], n_needle_pos + 1 long),
 * its facts the status line's note. Errors name the file. */
static int tui_task_item(TuiOpts *t, const TaskItem *it, const char *file, long k, ViewMark **marks, char *note,
                         size_t cap, Err *e) {
    if (!(*marks = malloc((size_t)(it->n_needle_pos + 1) * sizeof **marks))) return err_set(e, "out of memory");
    for (int i = 0; i < it->n_needle_pos; i++) (*marks)[i] = (ViewMark){it->needle_pos[i], VIEW_MARK_NEEDLE};
    (*marks)[it->n_needle_pos] = (ViewMark){it->question_pos, VIEW_MARK_QUESTION};
    char runs[96];
    pos_runs(it, runs, sizeof runs);
    snprintf(note, cap, "item %ld of %.200s: needle at pos %s, question at pos %d, answer \xc2\xab%.24s\xc2\xbb", k, file, runs,
             it->question_pos, it->answer);
    t->run.prompt = it->prompt, t->run.have_prompt = 1;
    t->marks = *marks, t->n_marks = it->n_needle_pos + 1, t->item_note = note;
    return 0;
}

int tui_open(TuiOpts *t, const char *tasks, long item, Err *e) {
    TaskItem one = {0}; /* the item alone: the file's other lines are never parsed */
    ViewMark *marks = NULL;
    char note[512]; /* the status line shows what fits */
    int rc = -1;
    if (tasks && (tasks_read_item(tasks, item < 0 ? 0 : item, &one, e) ||
                  tui_task_item(t, &one, tasks, item < 0 ? 0 : item, &marks, note, sizeof note, e))) {
        rc = -1;
    } else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        err_set(e, "needs a terminal on stdin and stdout (for headless runs use 'ahascope record')");
    } else {
        setlocale(LC_ALL, "");
        rc = tui_run(t, e) == 0 ? 0 : -1;
    }
    free(marks);
    task_item_free(&one);
    return rc;
}
