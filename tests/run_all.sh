#!/bin/sh
# Runs the test suite against the optimised build and the ASan+UBSan build,
# then the canary build's store, predictor and eval tests (built with one
# extra trace field and one extra predictor, -DAHASCOPE_CANARY: tests/README.md),
# then each fuzz harness over its seeds (tests/fuzz/run_corpus.sh, one test
# per harness), and prints the combined "N passed, N failed" line. Exit
# non-zero on any failure.
#
# Two lanes run at once, since CI has two cores and most tests use one: the
# sanitizer build's suite (the slowest, longer than the others together)
# in the background, its log shown when it ends; the optimised build, the
# canary build and the fuzz seeds in the foreground, which then runs every
# tenth of the sanitizer build's tests (AHASCOPE_TEST_SLICE, tests/runner.c)
# so both lanes end about together (a fifth left the foreground 190 s behind
# the background on a quiet 2-core host: 1150 s against 964). AHASCOPE_TEST_LANES=1 runs everything
# in one lane, one after the other.
set -u
total_p=0; total_f=0; total_s=0; rc=0
# The failing tests' names and first messages, repeated just above the last
# line: CI keeps only the end of the log.
failures=$(mktemp)
# The tests the canary build runs: what a new field or predictor passes through.
CANARY_TESTS="test_store test_decide.c test_aha.c test_eval.c test_calibrate.c test_trace.c"

# run_variant VARIANT LOG: the variant's runner, its output into LOG.
run_variant() {
    bin=./ahascope
    [ "$1" != build ] && bin=./$1/ahascope
    filter=
    [ "$1" = build-canary ] && filter=$CANARY_TESTS
    # shellcheck disable=SC2086 # the filter is a list of words
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        AHASCOPE_BIN=$bin ./$1/run_tests $filter >"$2" 2>&1
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
san_pid=
if [ "${AHASCOPE_TEST_LANES:-2}" != 1 ]; then
    echo "== build-san == (nine tenths in the background; its log follows the others)"
    AHASCOPE_TEST_SLICE=1-9/10 run_variant build-san "$logs/build-san" &
    san_pid=$!
fi
for variant in build build-canary; do
    echo "== $variant =="
    run_variant $variant "$logs/$variant"
    cat "$logs/$variant"
done
echo "== fuzz harnesses (seeds and regressions) =="
sh tests/fuzz/run_corpus.sh >"$logs/fuzz" 2>&1
cat "$logs/fuzz"
san_logs=build-san
if [ -n "$san_pid" ]; then
    echo "== build-san, the other tenth =="
    AHASCOPE_TEST_SLICE=0-0/10 run_variant build-san "$logs/build-san-tenth"
    cat "$logs/build-san-tenth"
    san_logs="build-san build-san-tenth"
    wait "$san_pid"
else
    run_variant build-san "$logs/build-san"
fi
echo "== build-san =="
cat "$logs/build-san"
for variant in build build-canary fuzz $san_logs; do count $variant "$logs/$variant"; done
rm -rf "$logs"
cat "$failures"; rm -f "$failures"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ $total_f -eq 0 ] && [ $rc -eq 0 ]
