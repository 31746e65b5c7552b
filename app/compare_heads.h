/* compare_heads.h — `ahascope compare --heads A B` (or --heads A --heads
 * B): how much two head sets overlap (Jaccard) and how alike the scores
 * that ranked them are (Spearman), each named as --static-heads takes it. */
#ifndef AHASCOPE_COMPARE_HEADS_H
#define AHASCOPE_COMPARE_HEADS_H

#include "app/args.h"

/* 1 if argv asks compare for head sets (it holds --heads), not for runs. */
int app_compare_wants_heads(int argc, char **argv);

/* The heads form of compare: flags, the two sets read against the model's
 * shape, their sizes, intersection, union, Jaccard, rank correlations and
 * the heads in one only, on stdout. Returns the exit status. */
int app_compare_heads(int argc, char **argv);

/* Its flags' table (NULL-terminated, app/args.h), which its help lists. */
extern const ArgsTable *const COMPARE_HEADS_TABLES[];

/* Its synopsis line and its paragraph with the flags, for compare's own --help. */
void app_compare_heads_usage(void);
void app_compare_heads_help(void);

#endif
