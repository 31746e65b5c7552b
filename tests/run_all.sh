#!/bin/sh
# Runs the test suite against the optimised build and the ASan+UBSan build,
# then the canary build's store, predictor and eval tests (built with one
# extra trace field and one extra predictor, -DAHASCOPE_CANARY: tests/README.md),
# then each fuzz harness over its seeds (tests/fuzz/run_corpus.sh, one test
# per harness), and prints the combined "N passed, N failed" line. Exit
# non-zero on any failure.
set -u
total_p=0; total_f=0; total_s=0; rc=0
# The failing tests' names and first messages, repeated just above the last
# line: CI keeps only the end of the log.
failures=$(mktemp)
# The tests the canary build runs: what a new field or predictor passes through.
CANARY_TESTS="test_store test_decide.c test_aha.c test_eval.c test_calibrate.c test_trace.c"
for variant in build build-san build-canary; do
    bin=./ahascope
    [ "$variant" != build ] && bin=./$variant/ahascope
    filter=
    [ "$variant" = build-canary ] && filter=$CANARY_TESTS
    echo "== $variant =="
    out=$(mktemp)
    # shellcheck disable=SC2086 # the filter is a list of words
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
        AHASCOPE_BIN=$bin ./$variant/run_tests $filter 2>&1 | tee "$out"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    grep '^FAILED ' "$out" | sed "s/^/$variant: /" >>"$failures"
    rm -f "$out"
    if [ -z "$line" ]; then
        echo "$variant: the test runner did not finish (crash?)" | tee -a "$failures"
        total_f=$((total_f + 1)); rc=1; continue
    fi
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p'); s=${s:-0}
    total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
    [ "$f" -ne 0 ] && rc=1
done
echo "== fuzz harnesses (seeds and regressions) =="
out=$(mktemp)
sh tests/fuzz/run_corpus.sh 2>&1 | tee "$out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
rm -f "$out"
if [ -z "$line" ]; then
    echo "fuzz: the corpus runner did not finish"
    total_f=$((total_f + 1)); rc=1
else
    set -- $(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
    total_p=$((total_p + $1)); total_f=$((total_f + $2)); total_s=$((total_s + $3))
    [ "$2" -ne 0 ] && rc=1
fi
cat "$failures"; rm -f "$failures"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ $total_f -eq 0 ] && [ $rc -eq 0 ]
