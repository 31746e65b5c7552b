/* train_logfit.c — L2-regularised logistic regression of a layer's heads at once (`ahascope fit`). */
#include "train_logfit.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LAPACK's Cholesky factor and solve, which OpenBLAS carries. */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda, double *b,
             const int *ldb, int *info);

typedef struct {
    const LogfitProblem *p;
    int D;                 /* d + 1: the bias is the last coordinate */
    double *bound;         /* [D][D] Cholesky factor of the bound matrix */
    double *theta;         /* [k][D] the iterate, kept in double */
    double *g, *step;      /* [k][D] gradient, bound-Newton step */
    float *wf, *sf;        /* [k][d] float copies of the weights and the step, for sgemm */
    float *z, *r, *c;      /* [n][k] scores, then residuals ω(p − y)/n, curvatures ω p(1 − p)/n */
    float *gf;             /* [k][d] Xᵀ-residual products */
} Fit;

static double weight(const LogfitProblem *p, size_t i, int h) { return p->wt ? p->wt[i * p->k + h] : 1.0; }

static double softplus(double z) { return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z)); }

double logfit_loss(const LogfitProblem *p, const float *w_h, float b_h, int h) {
    double sum = 0, reg = 0;
    for (size_t i = 0; i < (size_t)p->n; i++) {
        double z = b_h;
        for (int j = 0; j < p->d; j++) z += (double)p->x[i * p->d + j] * w_h[j];
        sum += weight(p, i, h) * (softplus(z) - p->y[i * p->k + h] * z);
    }
    for (int j = 0; j < p->d; j++) reg += (double)w_h[j] * w_h[j];
    reg += LOGFIT_BIAS_EPS * (double)b_h * b_h;
    return sum / p->n + 0.5 * p->l2 * reg;
}

/* The bound matrix (1/4n) X̃ᵀ diag(ω_max) X̃ + penalty, Cholesky-factored:
 * above every head's Hessian at every point, so a step by its inverse
 * never overshoots a quadratic model of any head. */
static int factor_bound(Fit *f, Err *e) {
    const LogfitProblem *p = f->p;
    int d = p->d, D = f->D;
    size_t n = (size_t)p->n;
    float *xs = malloc(n * d * sizeof(float)), *gram = malloc((size_t)d * d * sizeof(float));
    double *col = calloc((size_t)D, sizeof(double));
    if (!xs || !gram || !col) { free(xs), free(gram), free(col); return err_set(e, "out of memory for the fit"); }
    for (size_t i = 0; i < n; i++) {
        double om = 0;
        for (int h = 0; h < p->k; h++) om = fmax(om, weight(p, i, h));
        float s = (float)sqrt(om);
        for (int j = 0; j < d; j++) xs[i * d + j] = s * p->x[i * d + j], col[j] += om * p->x[i * d + j];
        col[d] += om;
    }
    cblas_ssyrk(CblasRowMajor, CblasUpper, CblasTrans, d, (int)n, 1.0f, xs, d, 0.0f, gram, d);
    double q = 0.25 / (double)n;
    for (int a = 0; a < d; a++)
        for (int b = a; b < d; b++) f->bound[(size_t)a * D + b] = f->bound[(size_t)b * D + a] = q * gram[(size_t)a * d + b];
    for (int j = 0; j <= d; j++) f->bound[(size_t)j * D + d] = f->bound[(size_t)d * D + j] = q * col[j];
    for (int j = 0; j < d; j++) f->bound[(size_t)j * D + j] += p->l2;
    f->bound[(size_t)d * D + d] += p->l2 * LOGFIT_BIAS_EPS;
    free(xs), free(gram), free(col);
    int info = 0;
    dpotrf_("U", &D, f->bound, &D, &info);
    return info == 0 ? 0 : err_set(e, "the fit's bound matrix is singular (info %d): raise --l2", info);
}

static void to_float(const Fit *f, const double *src, float *dst) {
    int d = f->p->d;
    for (int h = 0; h < f->p->k; h++)
        for (int j = 0; j < d; j++) dst[(size_t)h * d + j] = (float)src[(size_t)h * f->D + j];
}

/* out [n][k] = X · vᵀ + bias column of v (v is [k][D] in double). */
static void scores(const Fit *f, const double *v, float *vf, float *out) {
    const LogfitProblem *p = f->p;
    to_float(f, v, vf);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p->n, p->k, p->d, 1.0f, p->x, p->d, vf, p->d, 0.0f, out, p->k);
    for (size_t i = 0; i < (size_t)p->n; i++)
        for (int h = 0; h < p->k; h++) out[i * p->k + h] += (float)v[(size_t)h * f->D + p->d];
}

/* Residuals and curvatures at the iterate, then the gradient of every head. */
static void gradient(Fit *f) {
    const LogfitProblem *p = f->p;
    int k = p->k, d = p->d, D = f->D;
    scores(f, f->theta, f->wf, f->z);
    for (size_t i = 0; i < (size_t)p->n * k; i++) {
        double pr = 1.0 / (1.0 + exp(-(double)f->z[i])), om = weight(p, i / k, (int)(i % k)) / p->n;
        f->r[i] = (float)(om * (pr - p->y[i]));
        f->c[i] = (float)(om * pr * (1 - pr));
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, d, p->n, 1.0f, f->r, k, p->x, d, 0.0f, f->gf, d);
    for (int h = 0; h < k; h++) {
        double gb = 0;
        for (size_t i = 0; i < (size_t)p->n; i++) gb += f->r[i * k + h];
        for (int j = 0; j < d; j++) f->g[(size_t)h * D + j] = f->gf[(size_t)h * d + j] + p->l2 * f->theta[(size_t)h * D + j];
        f->g[(size_t)h * D + d] = gb + p->l2 * LOGFIT_BIAS_EPS * f->theta[(size_t)h * D + d];
    }
}

/* One iteration: the bound-Newton step of every head, stretched by the
 * ratio of the bound's curvature along it to the true one (≥ 1, capped). */
static void iterate(Fit *f) {
    const LogfitProblem *p = f->p;
    int k = p->k, d = p->d, D = f->D, info = 0;
    gradient(f);
    memcpy(f->step, f->g, (size_t)k * D * sizeof(double));
    dpotrs_("U", &D, &k, f->bound, &D, f->step, &D, &info);
    scores(f, f->step, f->sf, f->z); /* z now holds X̃ · step */
    for (int h = 0; h < k; h++) {
        double *s = f->step + (size_t)h * D, num = 0, den = 0;
        for (int j = 0; j < D; j++) num += f->g[(size_t)h * D + j] * s[j], den += p->l2 * s[j] * s[j] * (j < d ? 1 : LOGFIT_BIAS_EPS);
        for (size_t i = 0; i < (size_t)p->n; i++) den += (double)f->c[i * k + h] * f->z[i * k + h] * f->z[i * k + h];
        double alpha = den > 0 && num > 0 ? num / den : 1;
        alpha = alpha < 1 ? 1 : alpha > 16 ? 16 : alpha;
        for (int j = 0; j < D; j++) f->theta[(size_t)h * D + j] -= alpha * s[j];
    }
}

static void fit_free(Fit *f) {
    free(f->bound), free(f->theta), free(f->g), free(f->step), free(f->wf), free(f->sf);
    free(f->z), free(f->r), free(f->c), free(f->gf);
}

int logfit_solve(const LogfitProblem *p, float *w, float *b, Err *e) {
    if (p->n < 1 || p->d < 1 || p->k < 1 || p->iters < 1 || !(p->l2 >= 0))
        return err_set(e, "logistic fit: bad shape (n %d, d %d, k %d, iters %d)", p->n, p->d, p->k, p->iters);
    Fit f = {.p = p, .D = p->d + 1};
    size_t D = (size_t)f.D, k = (size_t)p->k, nk = (size_t)p->n * k;
    f.bound = malloc(D * D * sizeof(double));
    f.theta = calloc(k * D, sizeof(double));
    f.g = malloc(k * D * sizeof(double)), f.step = malloc(k * D * sizeof(double));
    f.wf = malloc(k * p->d * sizeof(float)), f.sf = malloc(k * p->d * sizeof(float));
    f.gf = malloc(k * p->d * sizeof(float));
    f.z = malloc(nk * sizeof(float)), f.r = malloc(nk * sizeof(float)), f.c = malloc(nk * sizeof(float));
    int rc = f.bound && f.theta && f.g && f.step && f.wf && f.sf && f.gf && f.z && f.r && f.c
                 ? factor_bound(&f, e) : err_set(e, "out of memory for the fit");
    for (int it = 0; rc == 0 && it < p->iters; it++) iterate(&f);
    if (rc == 0) {
        to_float(&f, f.theta, w);
        for (size_t h = 0; h < k; h++) b[h] = (float)f.theta[h * D + p->d];
    }
    fit_free(&f);
    return rc;
}
