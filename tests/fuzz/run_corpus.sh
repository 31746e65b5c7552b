#!/bin/sh
# Runs every fuzz harness once over its seeds (build-fuzz/seeds/NAME) and its
# committed regression inputs (tests/fuzz/regress/NAME): no new inputs, a few
# seconds in all (an input over 30 s fails as a hang). One harness is one
# test; prints "N passed, N failed, N skipped" last, like the C runner, and
# exits non-zero on any failure.
# Without the harnesses (no clang) each is counted as skipped, saying why.
set -u
p=0; f=0; s=0
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    [ "$name" = fuzz_util ] && continue
    n=${name#fuzz_}
    bin=build-fuzz/$name
    if [ ! -x "$bin" ]; then
        echo "SKIP $name: build-fuzz/$name not built (needs clang: make fuzz-build)"
        s=$((s + 1)); continue
    fi
    set -- $(find build-fuzz/seeds/"$n" tests/fuzz/regress/"$n" -type f ! -name '.*' 2>/dev/null | sort)
    if [ $# -eq 0 ]; then
        echo "FAIL $name: no seeds in build-fuzz/seeds/$n"
        f=$((f + 1)); continue
    fi
    log=$(mktemp)
    if "$bin" -runs=1 -timeout=30 "$@" >"$log" 2>&1; then
        echo "ok   $name ($# inputs)"
        p=$((p + 1))
    else
        echo "FAIL $name: (log follows)"
        tail -n 40 "$log"
        f=$((f + 1))
    fi
    rm -f "$log"
done
echo "$p passed, $f failed, $s skipped"
[ $f -eq 0 ]
