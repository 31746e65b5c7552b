#!/bin/sh
# engine/organism/recipe.sh — the organism, from nothing (engine/organism/README.md).
#
#   sh engine/organism/recipe.sh BIN WORK OUT
#
# BIN: the ahascope binary; WORK: a scratch directory (task files, the
# stage checkpoint, logs); OUT: where organism.bin, tok512.bin and
# curve.tsv go (engine/organism for `make organism`). Every step has a
# fixed seed, so a rerun on the same build writes the same task files; the
# weights then differ only by the float sums' thread order.
#
# Knobs (environment, defaults in brackets): STEPS1 [9000] steps of stage
# 1, STEPS2 [1800] of stage 2, N_ITEMS [2000] items per task and context.
set -eu
BIN=$1 WORK=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
STEPS1=${STEPS1:-9000} STEPS2=${STEPS2:-1800} N_ITEMS=${N_ITEMS:-2000}
TOTAL=$((STEPS1 + STEPS2))
mkdir -p "$WORK" "$OUT"

# 1. The vocabulary and the untrained model, which task files are written with.
"$BIN" train --from-scratch --steps 0 --vocab-file "$HERE/words.txt" --seed 1 --out "$WORK/init.bin"

# 2. Task items. gen KIND CONTEXT N SEED FILE: the generator cannot land
# every context exactly with every tokenizer, so up to eight fewer ids are
# tried; a context none of them fits is skipped with a note.
gen() {
    for k in 0 1 2 3 4 5 6 7 8; do
        "$BIN" tasks --task "$1" --context $(($2 - k)) --n "$3" --seed "$4" --model "$WORK/init.bin" --out "$5" \
            2>/dev/null && return 0
    done
    echo "recipe: note: no $1 items at context $2 (nor up to eight less): skipped" >&2
}
# stage FILE CONTEXTS...: passkey, multi-key needle, variable tracking and
# the local control at each context, interleaved line by line so that the
# held-out eighth at the end holds every kind.
stage() {
    dst=$1; shift
    d="$WORK/items-$(basename "$dst" .jsonl)"
    rm -rf "$d"; mkdir -p "$d"
    for c in "$@"; do
        gen passkey "$c" "$N_ITEMS" "$((1000 + c))" "$d/pk$c.jsonl"
        gen multikey "$c" "$N_ITEMS" "$((2000 + c))" "$d/mk$c.jsonl"
        gen vt "$c" "$((N_ITEMS / 2))" "$((3000 + c))" "$d/vt$c.jsonl"
        gen local "$c" "$((N_ITEMS / 5))" "$((4000 + c))" "$d/lc$c.jsonl"
    done
    paste -d '\n' "$d"/*.jsonl | grep -v '^$' >"$dst"
}
stage "$WORK/stage1.jsonl" 160 192 232 248
stage "$WORK/stage2.jsonl" 256 384 512 640 768 896 1016
[ "${ONLY_DATA:-0}" = 1 ] && { echo "recipe: task items written in $WORK"; exit 0; }

# 3. Training: one AdamW run and one learning-rate schedule over both
# stages (warm-up, cosine), short items first. Stage 1 stops after STEPS1
# with a checkpoint (exit 130, "stopped"), stage 2 resumes it at the full
# context.
rm -f "$WORK/organism.bin.ckpt" "$WORK/curve.tsv"
set +e
"$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/stage1.jsonl" --seq-len 255 --batch 8 \
    --steps "$TOTAL" --stop-after "$STEPS1" --lr 3e-3 --seed 1 --curve "$WORK/curve.tsv" --out "$WORK/organism.bin" \
    2>"$WORK/stage1.log"
rc=$?
set -e
[ $rc -eq 130 ] || { echo "recipe: stage 1 failed (exit $rc): $WORK/stage1.log" >&2; tail -n 3 "$WORK/stage1.log" >&2; exit 1; }
"$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/stage2.jsonl" --seq-len 1023 --batch 4 \
    --steps "$TOTAL" --resume "$WORK/organism.bin.ckpt" --lr 3e-3 --seed 1 --curve "$WORK/curve.tsv" \
    --out "$WORK/organism.bin" 2>"$WORK/stage2.log"
cp "$WORK/organism.bin" "$OUT/organism.bin"
cp "$WORK/tok512.bin" "$OUT/tok512.bin"
cp "$WORK/curve.tsv" "$OUT/curve.tsv"
echo "recipe: $OUT/organism.bin and $OUT/tok512.bin written"
