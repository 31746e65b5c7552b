/* keep.h — what `y`, `Y` and `S` keep of a whole table: the heads sorted by
 * a run rate (`H`), the attention pattern (`A`) and the text pane (`R`'s
 * summary), as plain text, as CSV and as SVG.
 *
 * Every text and CSV starts with one line naming where it came from (the
 * run id, the seed, the model and the settings, view_keep_head), so a table
 * pasted elsewhere still says which run it describes. The CSV holds raw
 * numbers (rates and weights as fractions, an empty field for n/a) so that
 * it compares with SQL over the database; the text holds what the pane
 * prints. Pure: the app writes the bytes where they go. Each function
 * returns a malloc'd string, NULL when out of memory or with nothing to keep.
 */
#ifndef AHASCOPE_VIEW_KEEP_H
#define AHASCOPE_VIEW_KEEP_H

#include <stddef.h>

#include "views/heads.h"
#include "views/pattern.h"
#include "views/view.h"

/* "# ahascope run 7 seed 1 model M policy aha window 8 sinks 4 tau 0.50
 * theta 0.1000 pos 28" (no newline; "run -" and "seed -" when unknown). The
 * model name is one line, as the header prints it. */
void view_keep_head(const ViewModel *m, char *buf, size_t n);

/* Every head in the order the pane shows them: rank, head, the rates (and
 * the weights on the marks when marks exist), positions decided. csv 1:
 * "layer,head,global_rate,…,n" with fractions; 0: aligned text. */
char *view_heads_table(const ViewHeads *hs, const ViewModel *m, int csv);

/* The pattern's data, a query bin a row: csv 1 "query,key,weight" for
 * every cell holding a weight (the bin's first positions; -1 cells left
 * out), 0 a line a row "pos 12 g: 0:0.412 9:0.211 …". */
char *view_pattern_table(const ViewPattern *p, const ViewModel *m, int csv);

/* The text pane's whole text (csv 0), or as CSV (csv 1): rules of dashes
 * dropped, a row's columns split at tabs or runs of two or more spaces,
 * fields quoted where they hold a comma or a quote. NULL with the pane closed. */
char *view_text_table(const ViewModel *m, int csv);

/* The pattern as an SVG heatmap: rows the query positions, columns the
 * keys, darker for more weight (square root, as on screen), pooled to at
 * most VIEW_KEEP_SVG_CELLS a side. */
#define VIEW_KEEP_SVG_CELLS 256
char *view_pattern_svg(const ViewPattern *p, const ViewModel *m);

/* The H pane's sorted column as an SVG bar chart, a bar a head in the
 * pane's order (heads with n/a left out, their count said in the title). */
char *view_heads_svg(const ViewHeads *hs, const ViewModel *m);

#endif
