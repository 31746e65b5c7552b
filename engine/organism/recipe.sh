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
# Two stages. Each mixes training documents (`recall`: facts stated in
# filler and asked again later with the answer written out, so one item
# holds a retrieval at many distances) with items of the kinds the model is
# scored on (passkey, multi-key needle, the local control), whose one answer
# counts --answer-weight times. R1 teaches copying on short items; R2
# stretches it to the full context.
stage R1 3000 recall:128,192,248 passkey:64,128,192,248 multikey:128,192,248 local:128,248
C=256,384,512,640,768,896,1016
stage R2 1200 recall:$C passkey:$C multikey:$C local:512,1016
[ "${ONLY_DATA:-0}" = 1 ] && { echo "recipe: task items written in $WORK"; exit 0; }

# 3. Training: one AdamW run, one learning-rate schedule (10% warm-up,
# cosine to a tenth) planned over both stages; R1 stops at its step with
# exit 130 ("stopped", the model so far written) and R2 resumes from its
# checkpoint with the longer sequences.
TOTAL=${TOTAL:-5500} R1_STEPS=${R1_STEPS:-1500}
rm -f "$WORK/organism.bin.ckpt" "$WORK/curve.tsv"
train() { # data seq-len batch stop-after
    resume=""
    [ -f "$WORK/organism.bin.ckpt" ] && resume="--resume $WORK/organism.bin.ckpt"
    stop=""
    [ "$4" -lt $TOTAL ] && stop="--stop-after $4"
    set +e
    # shellcheck disable=SC2086
    "$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/$1.jsonl" --seq-len "$2" --batch "$3" \
        --steps $TOTAL $stop $resume --lr ${LR:-3e-3} --answer-weight 10 --seed ${SEED:-1} --curve "$WORK/curve.tsv" \
        --out "$WORK/organism.bin" 2>>"$WORK/train.log"
    rc=$?
    set -e
    want=130
    [ "$4" -lt $TOTAL ] || want=0
    [ $rc -eq $want ] || { echo "recipe: stage $1 failed (exit $rc): $WORK/train.log" >&2; tail -n 3 "$WORK/train.log" >&2; exit 1; }
    cp "$WORK/organism.bin" "$WORK/organism-$1.bin"
}
train R1 255 16 $R1_STEPS
train R2 1023 4 $TOTAL
final=organism-R2.bin last=R2
cp "$WORK/$final" "$OUT/organism.bin"
cp "$WORK/tok512.bin" "$OUT/tok512.bin"
cp "$WORK/curve.tsv" "$OUT/curve.tsv"
echo "recipe: $OUT/organism.bin (after stage $last), tok512.bin and curve.tsv written"
