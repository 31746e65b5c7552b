/* bench.h — the options of `ahascope bench`, the helpers its modes share
 * (bench_util.c) and the modes themselves, one file each.
 *
 * Calls go one way: app/cmd_bench.c parses the flags and calls one mode;
 * a mode measures, prints its figures and calls the helpers; the helpers
 * call no mode. Every mode takes the parsed options, returns 0 or -1 with
 * e set, and leaves the exit status to the command.
 */
#ifndef AHASCOPE_BENCH_H
#define AHASCOPE_BENCH_H

#include "engine/aha.h"
#include "engine/cost.h"
#include "engine/err.h"
#include "engine/gemm_half.h"
#include "engine/model.h"
#include "engine/pool.h"
#include "engine/routers.h"
#include "store/store.h"

#include <stdint.h>

typedef struct {
    const char *model, *shape, *dims, *save;
    int prompt_len, decode, runs, json, threads;
    int context, compare_full, tui;
    int tui_layers, tui_heads, tui_cols, tui_rows; /* --tui-heads LxH, --tui-size COLSxROWS */
    int tui_view;      /* --tui-view: 0 main, 1 the attention-pattern view open, 2 every head at the cursor (E) */
    int tui_tokens;          /* --tui-tokens N: positions in the frame's history (default 200) */
    int record;              /* --record: the store's writer speed and cost */
    const char *db;          /* --db FILE for --record (default: a temporary file) */
    const char *routers;
    int dtype;               /* --dtype: also time the random model's matrices in bf16/f16 */
    int max_ctx;             /* --context also caps a Hugging Face model's context */
    int kv_dtype;            /* --kv-dtype: the KV cache's type (-1: each model's own) */
    AttnConfig attn;
    int have_tau;            /* --tau given: it wins over the router file's */
    int have_window;         /* --window given: it wins over a model's own (faolmo: 128) */
    int bytes_only;          /* --bytes-only: the byte split of a step, nothing timed */
    const char *tokenizer;   /* --tokenizer PATH: time encoding instead (a tokenizer file or a model) */
    const char *text;        /* --text FILE: what --tokenizer encodes (default: generated text) */
    long text_bytes;         /* --bytes N: that many bytes of it (0: 1 MB generated, or the whole file) */
    int arch;                /* --arch: the random model's block layout (Arch; ARCH_LLAMA2C without it) */
    const char *save_hf;     /* --save-hf DIR: the random model as a Hugging Face folder */
    int head_dim;            /* --head-dim N: head size apart from dim / heads (0: dim / heads) */
    const char *window_layers; /* --window-layers W[,PATTERN]: the architecture's sliding window (mistral) */
    const char *save_routers; /* --save-routers FILE: random routers for the random model's shape */
    int gemm;                /* --gemm: time a layer's prefill products alone on every path */
    int long_mode;           /* --long: a long recorded run's bytes per decision and read times */
    int long_tokens;         /* --long-tokens N: its prompt's length (default 4096) */
    int synthetic;           /* --synthetic: --long's runs written from synthetic traces, no model */
    int train;               /* --train: a training step's tokens/s and share of the f32 FMA peak */
    int train_batch, train_seq; /* --batch B (default 4), --seq-len T (default the context - 1) */
} BenchOpts;

/* ---- helpers (bench_util.c) ---- */

/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int n);

/* The config of --dims, or of the named --shape (260K, 15M, 110M); a usage
 * error for an unknown shape or one no model can have. */
int bench_shape_config(const BenchOpts *b, Config *c, Err *e);

/* Load --model (a bare name is looked up as the default model is; a
 * folder's context is capped just past --context) and take its own window
 * unless --window was given. */
int bench_load_model(BenchOpts *b, Model *m, Err *e);

/* The model the timed modes run: --model, or random weights of the shape
 * (written to --save if given), with --kv-dtype, its own routers or
 * --routers (*rt, router_free it) set in b->attn. *resident gets the memory
 * a --model adds once run (throughput mode only; else 0). On error nothing
 * is left to free. */
int bench_open_model(BenchOpts *b, Model *m, Routers *rt, size_t *resident, Err *e);

/* The position the byte split is given at: --context, else throughput's
 * middle decode step, whose full-attention KV bytes are its kv_bytes. */
int bench_cost_position(const BenchOpts *b);

/* The byte split as `, "key": value` pairs that continue a JSON object;
 * with_position also gives the position and window (context mode has its own). */
void bench_print_cost_json(const CostStep *s, int with_position);

/* The byte split as text: the weights, each bound of the KV cache with its
 * share of the step, and the most routing can save. */
void bench_print_cost_text(const Config *c, const CostStep *s);

/* Decode figures of one model: tok/s, bandwidth, and the share of it the
 * decode step's bytes (weights, plus the KV cache full attention reads)
 * reach. */
typedef struct {
    double prefill_tok_s, decode_tok_s, bandwidth_gbs, roofline_frac, roofline_frac_weights;
    double decode_cpu_share; /* CPU time the process got while decoding / (wall time × threads); median */
    double decode_steal_share; /* the hypervisor's steal time over the decode / (wall time × online CPUs); median */
    size_t weight_bytes, kv_bytes;
} Throughput;

/* Sets t's weight_bytes and kv_bytes: what a decode step reads after a
 * plen-token prompt, the KV cache (full attention) averaged over the dec
 * decoded positions. */
void bench_step_bytes(const Config *c, int plen, int dec, Throughput *t);

/* roofline_frac of one run: decode at tok_s reading t's weight and KV bytes,
 * against the faster of the bandwidth passes just before and after it
 * (bw[1], bw[2] of the run's three; bw[0] precedes its prefill). The host's
 * load moves decode and probe together and pairing them cancels most of it;
 * the faster pass, because one caught in a slow phase flatters the decode. */
double bench_roofline(const Throughput *t, double tok_s, const double *bw);

/* rf[i], the roofline of decode step i of n, which took secs[i] and read
 * t's bytes, against the faster of the bandwidth passes bw[i] and bw[i+1]
 * just before and after it (bw holds n + 1 passes, GB/s). Throughput mode's
 * roofline_frac is the median of these over every step of every run. */
void bench_paired_rooflines(const Throughput *t, const double *secs, const double *bw, int n, double *rf);

/* t's roofline_frac from R values rf[0..R) (runs' or steps'; their median; sorts rf),
 * and roofline_frac_weights, the weights' share of it. */
void bench_set_roofline(Throughput *t, double *rf, int R);

/* A read-bandwidth probe: the pool's threads sum buf (n floats, far larger
 * than the caches) in 64 chunks, each claimed as a thread frees up. */
typedef struct {
    float *buf;
    size_t n;
    float sums[64];       /* one per chunk: the pass claims 64 chunks */
} BenchStream;

/* Allocate and fill the probe's 256 MB buffer; 0 on success (mem_big_free s->buf). */
int bench_stream_init(BenchStream *s);

/* One pass of the probe; GB/s. Called between timed runs, so bandwidth and
 * decode see the same machine (it is shared and noisy). */
double bench_stream_pass(Pool *pool, BenchStream *s);

/* GFLOP/s of path's multiply instruction alone on every thread of pool
 * (NULL: this one): the peak a measured rate is set against. */
double bench_peak_gflops(Pool *pool, GemmPath path);

/* n pseudo-random token ids below vocab from *seed, the first one 1 (BOS). */
void bench_random_tokens(int *ids, int n, int vocab, uint64_t *seed);

/* ---- modes, one file each ---- */

/* Default mode (bench_throughput.c): medians over b->runs of prefill and
 * decode tok/s, the bandwidth and the paired roofline, the CPU and steal
 * the decode got, and the byte split at the middle decode step; resident
 * is what bench_open_model measured. Prints its figures. */
int bench_throughput(const Model *m, const BenchOpts *b, size_t resident, Err *e);

/* --context N (bench_context.c): the median time of one decode step at
 * position N under b->attn, the keys its gates read, and with
 * --compare-full / --profile the full and unprofiled steps beside it.
 * Prints its figures. */
int bench_context(const Model *m, const BenchOpts *b, Err *e);

/* --bytes-only (bench_bytes.c): the byte split of a step from the config
 * of --model or --shape/--dims alone, nothing built or timed. Prints it. */
int bench_bytes_only(BenchOpts *b, Err *e);

/* --save-hf / --save-routers (bench_save.c): the random model written as a
 * Hugging Face folder, random routers for its shape, and --save's llama2.c
 * file from the same weights; nothing timed. */
int bench_save(const BenchOpts *b, Err *e);

/* --tui (bench_tui.c): the median time of a full TUI frame of the
 * --tui-heads shape (default 16x16) on a --tui-size screen (default 200x60)
 * with --tui-tokens positions (default 200; past the timeline's columns it
 * draws them in bins), with the attention-pattern view open under
 * --tui-view pattern. Prints it. */
int bench_tui(const BenchOpts *b, Err *e);

/* Render `frames` full frames of a synthetic n_layers × n_heads trace of
 * n_tokens tokens into an off-screen cols×rows xterm-256color terminal that
 * writes to /dev/null, moving cursor and selection every frame; *median_ms
 * gets the median frame time. Call it while no other curses screen is in
 * use: it ends its own and leaves none current. */
int bench_tui_frames(int cols, int rows, int n_layers, int n_heads, int n_tokens, int frames, double *median_ms,
                     Err *e);

/* --tokenizer: the median time over b->runs of encoding b->text (or
 * b->text_bytes of generated English-like text, default 1 MB) with the
 * tokenizer.bin, tokenizer.json or model's tokenizer b->tokenizer names.
 * Prints its figures. */
int bench_tokenizer(const BenchOpts *b, Err *e);

/* --dtype with --shape/--dims: the model's random weights in f32 and in
 * b->dtype, decode steps interleaved one for one. Prints its figures. */
int bench_dtypes(const Model *m32, const BenchOpts *b, Err *e);

/* Median over n paired measurements of rec[i] / plain[i], minus 1: the
 * relative cost of recording (NAN when n is 0). */
double bench_paired_overhead(const double *plain, const double *rec, int n);

/* --record: decision rows/s into a file database, and the cost of
 * recording a run over the same run unrecorded. Prints its figures. */
int bench_record(const Model *m, const BenchOpts *b, Err *e);

/* --gemm: one layer of c's shape, its seven prefill products with random
 * bf16 weights at T = b->prompt_len, timed through fwd_matmul on every
 * path the machine runs, against each path's instruction peak measured in
 * the same run. Prints its figures. */
int bench_gemm(const Config *c, const BenchOpts *b, Err *e);

/* --train (bench_train.c): training steps of B × T tokens on m, timed as
 * `train` runs them: random --dims/--shape models as --from-scratch does
 * (full attention, cross-entropy, every weight), a --model as --train all
 * does (the full-attention teacher, the routed student, every weight and
 * the routers); the median tok/s over b->runs, the FLOP rate, and its
 * share of the f32 FMA peak measured after each run. Prints its figures. */
int bench_train(const Model *m, const BenchOpts *b, Err *e);

/* --long (bench_long.c): a --long-tokens prompt of random ids recorded
 * as the TUI records (--profile, attention top-k, and a child run under
 * another window) and as record --profile, each into a fresh scratch
 * database; the bytes per decision of each, the medians over b->runs of a
 * run's summary, head rates, diff and first replay frame, and the share
 * recording adds to a step, beside the storage work's goals. Prints them. */
int bench_long(const Model *m, const BenchOpts *b, Err *e);

/* The longest a read of a long run may take at 1 M decisions (2 s at 10 M). */
#define BENCH_GOAL_READ_S 0.5

/* What --long times on a run, in seconds: compare's summary, the
 * head_rates view, the diff against its child, a replay's first frame. */
typedef struct {
    double compare_s, head_rates_s, diff_s, first_frame_s;
} BenchLongReads;

/* Medians over b->runs of each read of run 1 of the database at path, its
 * child being run 2 (bench_long.c). */
int bench_long_reads(const BenchOpts *b, const char *path, BenchLongReads *r, Err *e);

/* The run row both --long modes write: model name, c's shape, attn's
 * settings, n steps, a child of parent when parent > 0 (bench_long.c). */
void bench_long_run_info(StoreRunInfo *r, const char *model, const Config *c, const AttnConfig *attn, int64_t parent,
                         int n);

/* The scratch directory of --long (bench_scratch.c):
 * $TMPDIR/ahascope-long-PID-XXXXXX and the paths of its databases with
 * SQLite's files beside them, all made before any signal can come. */
#define BENCH_SCRATCH_FILES 8
typedef struct {
    char dir[300];
    char path[BENCH_SCRATCH_FILES][340];
    int n;
} BenchScratch;

/* Remove every dead run's scratch directory (its PID gone), make this
 * run's for the n database names, and until bench_scratch_close have
 * SIGINT and SIGTERM remove it before the process dies of them. s must
 * outlive the close. */
int bench_scratch_open(BenchScratch *s, const char *const *names, int n, Err *e);

/* The path of database i of the names given to bench_scratch_open. */
const char *bench_scratch_file(const BenchScratch *s, int i);

/* Remove the directory and its files, and give the signals back. */
void bench_scratch_close(BenchScratch *s);

/* --long --synthetic (bench_long_synth.c): a parent run of --long-tokens
 * positions of the --dims/--shape shape and its child (window doubled, a
 * fixed share of gates flipped), written from synthetic traces with fixed
 * seeds through the store's writer as the TUI records (--profile,
 * attention top-k), no model; the parent's bytes per decision, the writing
 * time and bench_long_reads. Prints them. */
int bench_long_synthetic(const BenchOpts *b, Err *e);

#endif
