/* headsets.h — a head set as the command line names it, read into a 0/1
 * map of n_layers × n_heads query heads, for --static-heads (every command
 * that runs a model) and compare --heads.
 *
 * The forms: "l.h,l.h,..." itself; a file of them (calibrate writes one,
 * '#' comments allowed); "duo:FILE", a DuoAttention table
 * (engine/headset.h) taken by a budget or a threshold; "calib:DB#ID,..."
 * the heads calibrate would pick from those recorded runs to a budget.
 */
#ifndef AHASCOPE_HEADSETS_H
#define AHASCOPE_HEADSETS_H

#include <stdint.h>

#include "engine/err.h"
#include "engine/headset.h"

/* The shape the set is for: a model's, or a recorded run's. */
typedef struct {
    int n_layers, n_heads, n_kv_heads;
} AppHeadShape;

/* Read the head set spec names into a calloc'd [n_layers * n_heads] map
 * (*out), pick saying how a duo: table or a calib: set is cut (ignored by
 * the other forms). Errors name the file or the spec. */
int app_headset_load(const char *spec, const HeadPick *pick, const AppHeadShape *shape, uint8_t **out, Err *e);

#endif
