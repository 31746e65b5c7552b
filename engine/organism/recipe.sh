#!/bin/sh
# engine/organism/recipe.sh — the organism, from nothing (engine/organism/README.md).
#
#   sh engine/organism/recipe.sh BIN WORK OUT
#
# BIN: the ahascope binary; WORK: a scratch directory (task files, the
# checkpoint, logs); OUT: where organism.bin, tok512.bin and curve.tsv go
# (engine/organism for `make organism`). Every step has a fixed seed, so a
# rerun on the same build writes the same task files and draws the same
# batches; the weights then differ only by the float sums' thread order.
set -eu
BIN=$1 WORK=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUT"

# 1. The vocabulary and the untrained model, which task files are written with.
"$BIN" train --from-scratch --steps 0 --vocab-file "$HERE/words.txt" --seed 1 --out "$WORK/init.bin"

# 2. Task items. gen KIND CONTEXT N SEED FILE: where the generator cannot
# land a context exactly with a tokenizer, up to eight fewer ids are
# tried; a context none of them fits is skipped with a note.
# (POSIX sh has no local variables: each function's names are its own.)
gen() {
    for less in 0 1 2 3 4 5 6 7 8; do
        "$BIN" tasks --task "$1" --context $(($2 - less)) --n "$3" --seed "$4" --model "$WORK/init.bin" --out "$5" \
            2>/dev/null && return 0
    done
    echo "recipe: note: no $1 items at context $2 (nor up to eight less): skipped" >&2
}
# stage NAME N KIND:C1,C2,... ...: N items of each kind at each of its
# contexts (variable tracking N/2, the local control N/5), every file
# seeded apart, interleaved line by line into WORK/NAME.jsonl so that the
# held-out eighth at its end holds every kind and context.
stage() {
    name=$1 n=$2
    shift 2
    d="$WORK/items-$name"
    rm -rf "$d"; mkdir -p "$d"
    for spec in "$@"; do
        kind=${spec%%:*}
        case $kind in vt) k=$((n / 2)) ;; local) k=$((n / 5)) ;; *) k=$n ;; esac
        for c in $(echo "${spec#*:}" | tr ',' ' '); do
            gen "$kind" "$c" "$k" "$(printf '%s' "$name-$kind-$c" | cksum | cut -d' ' -f1)" "$d/$kind-$c.jsonl"
        done
    done
    paste -d '\n' "$d"/*.jsonl | grep -v '^$' >"$WORK/$name.jsonl"
}
# Each stage mixes training documents (`recall`: facts stated in filler
# and asked again later with the answer written out, so one item holds a
# retrieval at many distances) with items of the kinds the model is scored
# on (passkey, multi-key needle, the local control), whose one answer counts
# --answer-weight times. R1 and R1b hold items of four lengths; W1-W3 of
# every length from 64 to 248 (a few items each), W4 up to 504 and W5-W7
# up to 1 016, because a model trained on a few lengths answers at those
# lengths only (engine/organism/README.md).
# The stage names seed the items.
S1="recall:128,192,248 passkey:64,128,192,248 multikey:128,192,248 local:128,248"
SW="recall:$(seq -s, 128 248) passkey:$(seq -s, 64 248) multikey:$(seq -s, 120 248) local:$(seq -s, 64 248)"
for name in R1 R1b; do
    # shellcheck disable=SC2086
    stage $name 3000 $S1
done
for name in W1 W2 W3; do
    # shellcheck disable=SC2086
    stage $name 64 $SW
done
# W4: every length up to 504, fewer items of each
stage W4 24 "recall:$(seq -s, 128 504)" "passkey:$(seq -s, 64 504)" "multikey:$(seq -s, 120 504)" "local:$(seq -s, 64 504)"
# W5 and W6: every third length up to 1 016, W6 at the lengths W5 skipped
stage W5 24 "recall:$(seq -s, 128 3 1016)" "passkey:$(seq -s, 64 3 1016)" "multikey:$(seq -s, 120 3 1016)" \
    "local:$(seq -s, 64 3 1016)"
stage W6 24 "recall:$(seq -s, 129 3 1016)" "passkey:$(seq -s, 65 3 1016)" "multikey:$(seq -s, 121 3 1016)" \
    "local:$(seq -s, 65 3 1016)"
# W7: every length 700-1 016, where W6 still missed, and passkey at every sixth length below
stage W7 24 "recall:$(seq -s, 700 1016)" "passkey:$(seq -s, 700 1016),$(seq -s, 64 6 699)" \
    "multikey:$(seq -s, 700 1016)" "local:$(seq -s, 700 4 1016)"
[ "${ONLY_DATA:-0}" = 1 ] && { echo "recipe: task items written in $WORK"; exit 0; }

# 3. Training. R1 is the first 1 500 steps of a schedule planned over 5 500
# (AdamW at 3e-3, 10% warm-up, cosine to a tenth), stopped there (exit 130,
# "stopped", the model so far written); every later stage is a cycle of its
# own from the one before's weights (--init: fresh AdamW moments, its own
# warm-up and cosine).
printf 'stage\tstep\tseq_len\tbatch\tloss\n' >"$WORK/curve.tsv"
# train NAME SEQ-LEN BATCH STEPS LR SEED [STOP-AFTER] [INIT]
train() {
    stop="" init=""
    [ -n "${7:-}" ] && stop="--stop-after $7"
    [ -n "${8:-}" ] && init="--init $WORK/$8"
    rm -f "$WORK/organism.bin.ckpt" "$WORK/curve-$1.tsv"
    set +e
    # shellcheck disable=SC2086
    "$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/$1.jsonl" --seq-len "$2" --batch "$3" \
        --steps "$4" $stop $init --lr "$5" --answer-weight 10 --seed "$6" --curve "$WORK/curve-$1.tsv" \
        --out "$WORK/organism.bin" 2>>"$WORK/train.log"
    rc=$?
    set -e
    want=0
    [ -n "${7:-}" ] && want=130
    [ $rc -eq $want ] || { echo "recipe: stage $1 failed (exit $rc): $WORK/train.log" >&2; tail -n 3 "$WORK/train.log" >&2; exit 1; }
    cp "$WORK/organism.bin" "$WORK/organism-$1.bin"
    sed "s/^/$1\t/" "$WORK/curve-$1.tsv" | grep -v "step" >>"$WORK/curve.tsv"
}
train R1 255 16 5500 3e-3 1 1500
train R1b 255 16 1500 2e-3 2 "" organism-R1.bin
train W1 255 16 2500 1.5e-3 8 "" organism-R1b.bin
train W2 255 16 2500 1e-3 9 "" organism-W1.bin
train W3 255 16 2500 7e-4 10 "" organism-W2.bin
train W4 511 8 2500 7e-4 11 "" organism-W3.bin
train W5 1023 4 2500 5e-4 12 "" organism-W4.bin
train W6 1023 4 2500 3e-4 13 "" organism-W5.bin
train W7 1023 4 2000 3e-4 14 "" organism-W6.bin
last=W7
cp "$WORK/organism-$last.bin" "$OUT/organism.bin"
cp "$WORK/tok512.bin" "$OUT/tok512.bin"
cp "$WORK/curve.tsv" "$OUT/curve.tsv"
echo "recipe: $OUT/organism.bin (after stage $last), tok512.bin and curve.tsv written"
