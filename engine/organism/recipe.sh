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
# A curriculum: the answer a few tokens after its statement first (a model
# this small learns to copy there within a few hundred steps, and not at
# all in thousands when the first items are 250 tokens long), then longer
# haystacks, the multi-key and variable-tracking items, the full context.
stage A 4000 passkey:44,48,52,56 local:44,48,52,56
stage B 3000 passkey:64,80,96,112,120 local:64,80,96,112,120 multikey:112,120
stage B2m 6000 multikey:116,120
stage B2p 3000 passkey:64,96,120 local:120
paste -d '\n' "$WORK/B2m.jsonl" "$WORK/B2p.jsonl" | grep -v '^$' >"$WORK/B2.jsonl"
if [ "${FULL:-0}" = 1 ]; then
    stage C 2000 passkey:160,192,232,248 local:160,192,232,248 multikey:160,192,232,248 vt:160,192,232,248
    C=256,384,512,640,768,896,1016
    stage D 2000 passkey:$C local:$C multikey:$C vt:$C
    # the second cycle: the needle far away, at half the context, then at all of it
    H=256,320,384,448,504
    stage E 3000 passkey:$H multikey:$H local:256,504
    stage F 2000 passkey:512,640,768,896,1016 multikey:512,640,896,1016 vt:512,640,896 local:512,1016
fi
[ "${ONLY_DATA:-0}" = 1 ] && { echo "recipe: task items written in $WORK"; exit 0; }

# 3. Training: one AdamW run, one learning-rate schedule planned over four
# stages (10% warm-up, cosine over 5 500 steps), each stage resuming the one
# before from its checkpoint. A stage that is not the last stops at its
# step with exit 130 ("stopped", the model so far written); each answer
# target counts 30 times in the loss, so the few tokens that need the far
# context are not drowned by the filler. Stages A and B run the first
# 2 500 steps of it; B2 then trains B's model on (below). Stages C and D,
# and a second cycle after them (FULL=1), took the model further from the
# goal, not nearer (engine/organism/README.md).
TOTAL=5500
rm -f "$WORK/organism.bin.ckpt" "$WORK/curve.tsv"
train() { # data seq-len batch stop-after [init] (TOTAL: the cycle's last step)
    resume=""
    [ -f "$WORK/organism.bin.ckpt" ] && resume="--resume $WORK/organism.bin.ckpt"
    [ $# -ge 5 ] && resume="--init $5"
    stop=""
    [ "$4" -lt $TOTAL ] && stop="--stop-after $4"
    set +e
    # shellcheck disable=SC2086
    "$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/$1.jsonl" --seq-len "$2" --batch "$3" \
        --steps $TOTAL $stop $resume --lr ${LR:-3e-3} --answer-weight 30 --seed ${SEED:-1} --curve "$WORK/curve.tsv" \
        --out "$WORK/organism.bin" 2>>"$WORK/train.log"
    rc=$?
    set -e
    want=130
    [ "$4" -lt $TOTAL ] || want=0
    [ $rc -eq $want ] || { echo "recipe: stage $1 failed (exit $rc): $WORK/train.log" >&2; tail -n 3 "$WORK/train.log" >&2; exit 1; }
    cp "$WORK/organism.bin" "$WORK/organism-$1.bin"
}
train A 63 32 1000
train B 127 16 2500
# B2: a cycle of its own from B's weights (--init: fresh moments, 2 000
# steps at 2e-3), on items of B's lengths, more than half of them
# multi-key: it took passkey at 96-120 tokens from 80% to 100% (multi-key
# stayed at 0%). The organism is B2's model.
TOTAL_AB=$TOTAL TOTAL=2000
mv "$WORK/organism.bin.ckpt" "$WORK/organism-B.ckpt"
LR=2e-3 SEED=2 train B2 127 16 $TOTAL "$WORK/organism-B.bin"
TOTAL=$TOTAL_AB
final=organism-B2.bin last=B2
if [ "${FULL:-0}" = 1 ]; then
    cp "$WORK/organism-B.ckpt" "$WORK/organism.bin.ckpt" # C goes on from B, in B's schedule
    train C 255 8 4500
    train D 1023 4 $TOTAL
    # 4. A second cycle from the first one's weights (--init: fresh AdamW
    # moments, a schedule of its own), because after the first the model
    # answered passkey items at 248 tokens about half the time and at 1016
    # never, multi-key needle items never. It made things worse (FINDINGS).
    TOTAL=3000
    rm -f "$WORK/organism.bin.ckpt"
    train E 511 8 1500 "$WORK/organism-D.bin"
    train F 1023 4 $TOTAL
    final=organism.bin last=F
fi
cp "$WORK/$final" "$OUT/organism.bin"
cp "$WORK/tok512.bin" "$OUT/tok512.bin"
cp "$WORK/curve.tsv" "$OUT/curve.tsv"
echo "recipe: $OUT/organism.bin (after stage $last), tok512.bin and curve.tsv written"
