/* headsets.h — a head set as the command line names it, read into a 0/1
 * map of n_layers × n_heads query heads, for --static-heads (every command
 * that runs a model) and compare --heads.
 *
 * The forms: "l.h,l.h,..." itself; a file of them (calibrate writes one,
 * '#' comments allowed); "duo:FILE", a DuoAttention table
 * (engine/headset.h) taken by a budget or a threshold; the published
 * tables of engine/headtab.h ("retrieval-json:", "prulong:", "moa:",
 * "windows:"); "calib:DB#ID,..." the heads calibrate would pick from those
 * recorded runs to a budget.
 */
#ifndef AHASCOPE_HEADSETS_H
#define AHASCOPE_HEADSETS_H

#include <stdint.h>

#include "engine/err.h"
#include "engine/headset.h"
#include "engine/headtab.h"

/* The shape the set is for: a model's, or a recorded run's; context, the N
 * at which a moa: table's spans rank (the model's context length). */
typedef HeadShape AppHeadShape;

/* Read the head set spec names into a calloc'd [n_layers * n_heads] map
 * (*out), pick saying how a table or a calib: set is cut (ignored by a
 * list). moa: and windows: tables rank their heads by their window at
 * shape->context keys: a zero budget (a run's) takes none. Errors name the
 * file or the spec. */
int app_headset_load(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, Err *e);

/* The same, and in *scores (when not NULL) a malloc'd value per query head
 * that ranked them: a table's value (a KV head's for its group), a
 * Retrieval-Head mean, a span at shape->context, an oracle rate; NULL for
 * a list, which ranks nothing. */
int app_headset_scored(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, float **scores,
                       Err *e);

/* The per-head windows a moa: or windows: spec gives (AttnConfig.head_span)
 * in a malloc'd *ab; *ab NULL for every other form. */
int app_headset_spans(const char *spec, const AppHeadShape *shape, float **ab, Err *e);

/* How spec is cut: the budget or threshold given, or PruLong's > 0.5 when a
 * prulong: table came with neither. */
HeadPick app_headset_pick(const char *spec, const HeadPick *given, int have_budget, int have_threshold);

#endif
