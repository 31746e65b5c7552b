#!/bin/sh
# Runs the test suite against the optimised build and the ASan+UBSan build,
# then the canary build's store, predictor and eval tests (built with one
# extra trace field and one extra predictor, -DAHASCOPE_CANARY: tests/README.md),
# then each fuzz harness over its seeds (tests/fuzz/run_corpus.sh, one test
# per harness), and prints the combined "N passed, N failed" line. Exit
# non-zero on any failure.
#
# Three lanes run at once, since CI has two cores and the tmux tests mostly
# wait on a screen: the tmux tests (TMUX_TESTS) of the optimised build and
# then the sanitizer build's, in one background lane; eight tenths of the
# sanitizer build's other tests (the slowest part) in a second; and in the
# foreground the optimised build's other tests, the canary build, the fuzz
# seeds and the sanitizer build's last two tenths (AHASCOPE_TEST_SLICE,
# tests/runner.c), so the two busy lanes end about together. Each lane's log
# is shown when it ends. AHASCOPE_TEST_LANES=1 runs everything in one lane,
# one after the other.
set -u
total_p=0; total_f=0; total_s=0; rc=0
# The failing tests' names and first messages, repeated just above the last
# line: CI keeps only the end of the log.
failures=$(mktemp)
# The tests the canary build runs: what a new field or predictor passes through.
CANARY_TESTS="test_store test_decide.c test_aha.c test_eval.c test_calibrate.c test_trace.c"
# The files whose tests drive the TUI through tmux, and the filter that leaves them out.
TMUX_TESTS="test_tui test_friction"
NOT_TMUX="-test_tui -test_friction"

# run_variant VARIANT LOG [WORD...]: the variant's runner, filtered by the
# WORDs (the canary build: CANARY_TESTS), its output into LOG.
run_variant() {
    v=$1; log=$2; shift 2
    bin=./ahascope
    [ "$v" != build ] && bin=./$v/ahascope
    [ "$v" = build-canary ] && set -- $CANARY_TESTS
    # shellcheck disable=SC2086 # the filter is a list of words
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        AHASCOPE_BIN=$bin ./$v/run_tests "$@" >"$log" 2>&1
}

# count NAME LOG: add LOG's "N passed, N failed, N skipped" line to the totals.
count() {
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
    grep '^FAILED ' "$2" | sed "s/^/$1: /" >>"$failures"
    if [ -z "$line" ]; then
        echo "$1: the test runner did not finish (crash?)" | tee -a "$failures"
        total_f=$((total_f + 1)); rc=1; return
    fi
    set -- $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/')
    total_p=$((total_p + $1)); total_f=$((total_f + $2)); total_s=$((total_s + ${3:-0}))
    [ "$2" -ne 0 ] && rc=1
}

logs=$(mktemp -d)
if [ "${AHASCOPE_TEST_LANES:-3}" = 1 ]; then
    for variant in build build-canary build-san; do
        echo "== $variant =="
        run_variant $variant "$logs/$variant"
        cat "$logs/$variant"
    done
    sh tests/fuzz/run_corpus.sh >"$logs/fuzz" 2>&1
    cat "$logs/fuzz"
    lane_logs="build build-canary build-san fuzz"
else
    echo "== the tmux tests, and eight tenths of build-san's others, run in the background; their logs follow =="
    # shellcheck disable=SC2086
    ( run_variant build "$logs/build-tmux" $TMUX_TESTS; run_variant build-san "$logs/build-san-tmux" $TMUX_TESTS ) &
    tmux_pid=$!
    # shellcheck disable=SC2086
    AHASCOPE_TEST_SLICE=2-9/10 run_variant build-san "$logs/build-san" $NOT_TMUX &
    san_pid=$!
    # shellcheck disable=SC2086
    run_variant build "$logs/build" $NOT_TMUX
    run_variant build-canary "$logs/build-canary"
    sh tests/fuzz/run_corpus.sh >"$logs/fuzz" 2>&1
    # shellcheck disable=SC2086
    AHASCOPE_TEST_SLICE=0-1/10 run_variant build-san "$logs/build-san-fifth" $NOT_TMUX
    wait "$san_pid"
    wait "$tmux_pid"
    lane_logs="build build-tmux build-canary fuzz build-san build-san-fifth build-san-tmux"
    for variant in $lane_logs; do
        echo "== $variant =="
        cat "$logs/$variant"
    done
fi
for variant in $lane_logs; do count $variant "$logs/$variant"; done
rm -rf "$logs"
cat "$failures"; rm -f "$failures"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ $total_f -eq 0 ] && [ $rc -eq 0 ]
