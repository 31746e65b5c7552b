/* train_logfit.h — L2-regularised logistic regression of k heads that read
 * one input matrix, the way `ahascope fit` learns one layer's routers: every
 * head's scores are one matrix product, so all heads fit together.
 *
 * Head h minimises, over its weights w_h [d] and bias b_h,
 *   L_h = (1/n) Σ_i ω_ih [softplus(z_ih) − y_ih z_ih] + (l2/2)(|w_h|² + ε b_h²),
 *   z_ih = x_i · w_h + b_h,   ε = LOGFIT_BIAS_EPS,
 * (ε keeps a head whose labels are all 0 or all 1 at a finite bias). The
 * solver is deterministic: a fixed number of iterations of the bound
 * Newton step (the Hessian of every head is below the one matrix
 * (1/4n) X̃ᵀ diag(max_h ω_ih) X̃ + l2, factored once), each step stretched
 * by the exact curvature along it. No randomness, no data-dependent
 * iteration count: the same input gives the same bits.
 */
#ifndef AHASCOPE_TRAIN_LOGFIT_H
#define AHASCOPE_TRAIN_LOGFIT_H

#include "err.h"

#define LOGFIT_BIAS_EPS 1e-3 /* the bias's share of the L2 penalty */

typedef struct {
    int n, d, k;      /* rows, features, heads */
    const float *x;   /* [n][d] inputs */
    const float *y;   /* [n][k] labels in {0, 1} (anything where the weight is 0) */
    const float *wt;  /* [n][k] weights ≥ 0, or NULL for all 1 */
    double l2;        /* penalty on the weights (> 0 keeps the problem strictly convex) */
    int iters;        /* iterations (≥ 1) */
} LogfitProblem;

/* Fit every head: w [k][d] and b [k] receive the solution (their contents
 * on entry are ignored: the fit starts from zero). Returns 0, or -1 (out of
 * memory, a bad shape or a singular bound matrix) with e set. */
int logfit_solve(const LogfitProblem *p, float *w, float *b, Err *e);

/* L_h of head h at (w_h, b_h), in double (tests compare it with a reference). */
double logfit_loss(const LogfitProblem *p, const float *w_h, float b_h, int h);

#endif
