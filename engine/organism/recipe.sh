#!/bin/sh
# engine/organism/recipe.sh — the organism, from nothing (engine/organism/README.md).
#
#   sh engine/organism/recipe.sh BIN WORK OUT
#
# BIN: the ahascope binary; WORK: a scratch directory (task files, the
# checkpoints, logs); OUT: where organism.bin, tok512.bin and curve.tsv go
# (engine/organism for `make organism`). Every step has a fixed seed, so a
# rerun on the same build writes the same task files and draws the same
# batches; the weights then differ only by the float sums' thread order.
set -eu
BIN=$1 WORK=$2 OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" "$OUT"

# 1. The vocabulary and the untrained model, which task files are written with.
"$BIN" train --from-scratch --steps 0 --vocab-file "$HERE/words.txt" --seed 1 --out "$WORK/init.bin"

# 2. Task items. gen CONTEXT N SEED FILE TASK-FLAGS...: where the generator
# cannot land a context exactly with a tokenizer, up to eight fewer ids are
# tried; a context none of them fits is skipped with a note.
# (POSIX sh has no local variables: each function's names are its own.)
gen() {
    c=$1 k=$2 s=$3 f=$4
    shift 4
    for less in 0 1 2 3 4 5 6 7 8; do
        "$BIN" tasks "$@" --context $((c - less)) --n "$k" --seed "$s" --model "$WORK/init.bin" --out "$f" \
            2>/dev/null && return 0
    done
    echo "recipe: note: no '$*' items at context $c (nor up to eight less): skipped" >&2
}
# stage NAME CONTEXTS SPEC...: for every context, N items of every SPEC
# ("N:TASK-FLAGS"), each file seeded by its name, interleaved line by line
# into WORK/NAME.jsonl so that the held-out eighth at its end holds every
# kind and context.
stage() {
    name=$1 contexts=$2
    shift 2
    d="$WORK/items-$name"
    rm -rf "$d"; mkdir -p "$d"
    for c in $contexts; do
        i=0
        for spec in "$@"; do
            i=$((i + 1))
            f="$d/$i-$c.jsonl"
            # shellcheck disable=SC2086
            gen "$c" "${spec%%:*}" "$(printf '%s' "$name-$i-$c" | cksum | cut -d' ' -f1)" "$f" ${spec#*:}
        done
    done
    paste -d '\n' "$d"/*.jsonl | grep -v '^$' >"$WORK/$name.jsonl"
}
# "match" teaches key matching: four key-value statements, then four questions
# about keys drawn with replacement, each with its value written out, then
# the scored question; no filler, 224-240 tokens. Because a key can be asked
# twice and the final one early, answering by elimination does not pay: the
# model has to find the asked statement (engine/organism/README.md, "What
# was tried").
stage match "224 228 232 236 240" "3750:--task multikey --keys 4 --reask 4"
# long NAME SCALE: the later stages' form at 21 lengths from 150 to 1 016
# tokens, filler between the statements: SCALE x 50 two-key items with three
# questions asked again, 50 three-key with four, 100 four-key with six (none
# fit below about 300 tokens) and 60 passkey at each length.
long() {
    stage "$1" "150 180 210 240 270 300 340 380 420 460 500 550 600 650 700 760 820 880 940 1000 1016" \
        "$(($2 * 50)):--task multikey --keys 2 --reask 3" "$(($2 * 50)):--task multikey --keys 3 --reask 4" \
        "$(($2 * 100)):--task multikey --keys 4 --reask 6" "$(($2 * 60)):--task passkey"
}
# "reach" carries the matching into filler and out to the full context;
# "settle" is the same form with other items, "polish" three times as many
# again, so that at 3 000 steps of 8 each is seen about once and a half.
long reach 1
long settle 1
long polish 3
[ "${ONLY_DATA:-0}" = 1 ] && { echo "recipe: task items written in $WORK"; exit 0; }

# 3. Training: match from random weights, each later stage a cycle of its own
# from the one before's weights (--init: fresh AdamW moments, its own warm-up
# and cosine), the rate lower each time. Answers weighted 10, each step's
# items of about one length.
printf 'stage\tstep\tseq_len\tbatch\tloss\n' >"$WORK/curve.tsv"
# train NAME SEQ-LEN BATCH STEPS LR SEED [INIT]
train() {
    init=""
    [ -n "${7:-}" ] && init="--init $WORK/$7"
    rm -f "$WORK/organism.bin.ckpt" "$WORK/curve-$1.tsv"
    # shellcheck disable=SC2086
    "$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/$1.jsonl" --seq-len "$2" --batch "$3" \
        --steps "$4" $init --lr "$5" --answer-weight 10 --by-length --seed "$6" --curve "$WORK/curve-$1.tsv" \
        --out "$WORK/organism.bin" 2>>"$WORK/train.log" ||
        { echo "recipe: stage $1 failed: $WORK/train.log" >&2; tail -n 3 "$WORK/train.log" >&2; exit 1; }
    cp "$WORK/organism.bin" "$WORK/organism-$1.bin"
    sed "s/^/$1\t/" "$WORK/curve-$1.tsv" | grep -v "step" >>"$WORK/curve.tsv"
}
train match 255 16 4000 1e-3 5
train reach 1023 8 3000 1e-3 5 organism-match.bin
train settle 1023 8 3000 3e-4 5 organism-reach.bin
train polish 1023 8 3000 1.5e-4 5 organism-settle.bin
last=polish
cp "$WORK/organism-$last.bin" "$OUT/organism.bin"
cp "$WORK/tok512.bin" "$OUT/tok512.bin"
cp "$WORK/curve.tsv" "$OUT/curve.tsv"
echo "recipe: $OUT/organism.bin (after stage $last), tok512.bin and curve.tsv written"
