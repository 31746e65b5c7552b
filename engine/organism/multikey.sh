#!/bin/sh
# engine/organism/multikey.sh — the multi-key line M2–M21 (README.md, "What
# was tried"), from the organism; not part of it.
#
#   sh engine/organism/multikey.sh BIN WORK [FROM]
#
# BIN: the ahascope binary; WORK: a scratch directory (items, each stage's
# model organism-M<k>.bin, curves, the log); FROM: the model M2 starts from
# (default: the committed organism.bin, the recipe's W7). ONLY_DATA=1 writes
# the items and stops (KEEP_ITEMS=1 keeps each stage's item files too).
# Every stage's items and batches have fixed seeds, so a rerun writes the
# same item files byte for byte; the weights may differ in the last bits, as
# the stages first ran on builds of several days. About 6 hours on a
# 2-core machine.
set -eu
# File names sort by byte (a locale's collation would put k3-980 before k3-98).
LC_ALL=C
export LC_ALL
BIN=$1 WORK=$2
HERE=$(cd "$(dirname "$0")" && pwd)
FROM=${3:-$HERE/organism.bin}
mkdir -p "$WORK"

# The untrained model (recipe step 1): its tokenizer writes every item.
[ -f "$WORK/init.bin" ] ||
    "$BIN" train --from-scratch --steps 0 --vocab-file "$HERE/words.txt" --seed 1 --out "$WORK/init.bin"

# items STAGE FILE-PREFIX KEYS FIRST STEP LAST N SEED-BASE: N items at each
# length FIRST, FIRST+STEP, … LAST, seeded SEED-BASE + the length, into
# WORK/items-STAGE/PREFIX-LENGTH.jsonl. KEYS 0 means passkey.
items() {
    d="$WORK/items-$1"
    mkdir -p "$d"
    if [ "$3" = 0 ]; then task="--task passkey"; else task="--task multikey --keys $3"; fi
    for c in $(seq "$4" "$5" "$6"); do
        # shellcheck disable=SC2086
        "$BIN" tasks $task --context "$c" --n "$7" --seed $(($8 + c)) --model "$WORK/init.bin" \
            --out "$d/$2-$c.jsonl"
    done
}
# Shuffling draws from a file of "y" lines (made once below): shuf takes the
# same order from it as from an endless stream of them, and the lines come
# through a pipe because shuf orders a file it can measure differently.
# interleave STAGE [shuffle]: the stage's files line by line in name order
# (two to four keys, then passkey), as M2–M7 had them; shuffled after (M8).
interleave() {
    paste -d '\n' "$WORK/items-$1"/*.jsonl | grep -v '^$' |
        if [ "${2:-}" = shuffle ]; then shuf --random-source="$WORK/y"; else cat; fi >"$WORK/$1.jsonl"
}
# shuffled STAGE [k4-first]: the stage's files one after the other in name
# order (two, three, four keys, passkey), or four keys first, then three,
# two and passkey, and shuffled (M9 on; the order is the one each stage had).
shuffled() {
    d="$WORK/items-$1"
    if [ "${2:-}" = k4-first ]; then
        cat "$d"/k4-*.jsonl "$d"/k3-*.jsonl "$d"/k2-*.jsonl "$d"/pk-*.jsonl
    else
        cat "$d"/*.jsonl
    fi | shuf --random-source="$WORK/y" >"$WORK/$1.jsonl"
}
# The four forms the stages take, by the seed base B (four keys B+1000,
# three B+2000, two B+3000, passkey B+4000, each + the length):
short_form() { # M9–M13: every length to 248, 85 640 items; $3 the order
    items "$1" k4 4 113 1 248 400 $(($2 + 1000))
    items "$1" k3 3 98 1 248 100 $(($2 + 2000))
    items "$1" k2 2 81 2 248 60 $(($2 + 3000))
    items "$1" pk 0 64 1 248 60 $(($2 + 4000))
    shuffled "$1" "${3:-}"
}
to504_form() { # M14: every length to 504, 76 180 items
    items "$1" k4 4 113 1 504 100 $(($2 + 1000))
    items "$1" k3 3 98 2 504 60 $(($2 + 2000))
    items "$1" k2 2 81 3 504 50 $(($2 + 3000))
    items "$1" pk 0 64 1 504 40 $(($2 + 4000))
    shuffled "$1" k4-first
}
full_form() { # M15–M21: every third length to 1 016, 29 360 items
    items "$1" k4 4 113 3 1016 40 $(($2 + 1000))
    items "$1" k3 3 98 6 1016 30 $(($2 + 2000))
    items "$1" k2 2 81 9 1016 30 $(($2 + 3000))
    items "$1" pk 0 64 3 1016 30 $(($2 + 4000))
    shuffled "$1" k4-first
}

rm -rf "$WORK"/items-M*
yes | head -c 16777216 >"$WORK/y"
items M2 k2 2 81 1 200 128 7000
items M2 pk 0 80 8 200 64 8000
interleave M2
for spec in M3:9000 M4:10000 M5:11000; do
    s=${spec%%:*} b=${spec#*:}
    items "$s" k2 2 81 1 200 128 "$b"
    items "$s" pk 0 84 8 200 64 $((b + 500))
    interleave "$s"
done
for spec in M6:12000 M7:17000; do
    s=${spec%%:*} b=${spec#*:}
    items "$s" k2 2 81 1 200 32 "$b"
    items "$s" k3 3 110 1 248 48 $((b + 1000))
    items "$s" k4 4 140 1 248 48 $((b + 2000))
    items "$s" pk 0 64 4 248 64 $((b + 3000))
    interleave "$s"
done
items M8 k4 4 113 1 200 160 21000
items M8 k3 3 98 2 200 48 22000
items M8 k2 2 81 3 200 32 23000
items M8 pk 0 64 4 200 48 24000
interleave M8 shuffle
for spec in M9:30000 M10:40000 M11:50000 M12:60000; do
    short_form "${spec%%:*}" "${spec#*:}"
done
short_form M13 70000 k4-first
to504_form M14 80000
for spec in M15:90000 M16:100000 M17:110000 M18:121000 M19:131000 M20:141000 M21:151000; do
    full_form "${spec%%:*}" "${spec#*:}"
done
[ "${KEEP_ITEMS:-0}" = 1 ] || rm -rf "$WORK"/items-M*
rm -f "$WORK/y"
[ "${ONLY_DATA:-0}" = 1 ] && { echo "multikey: items written in $WORK"; exit 0; }

# train STAGE FROM SEQ-LEN BATCH STEPS LR ANSWER-WEIGHT SEED [--by-length]:
# one stage from FROM's weights (--init: fresh AdamW moments, a schedule
# of its own: 10% warm-up, cosine to a tenth).
train() {
    by=${9:-}
    # shellcheck disable=SC2086
    "$BIN" train --from-scratch --vocab-file "$HERE/words.txt" --data "$WORK/$1.jsonl" --seq-len "$3" \
        --batch "$4" --steps "$5" --init "$2" --lr "$6" --answer-weight "$7" --seed "$8" $by \
        --curve "$WORK/curve-$1.tsv" --out "$WORK/organism-$1.bin" 2>>"$WORK/multikey.log" ||
        { echo "multikey: stage $1 failed: $WORK/multikey.log" >&2; exit 1; }
}
m() { echo "$WORK/organism-$1.bin"; }
train M2 "$FROM" 207 16 2000 1e-3 10 22
train M3 "$(m M2)" 207 16 3000 1e-3 10 23
train M4 "$(m M3)" 207 16 3000 7e-4 10 24
train M5 "$(m M4)" 207 16 3000 5e-4 10 25
train M6 "$(m M5)" 255 16 3000 5e-4 10 26
train M7 "$(m M6)" 255 16 3000 5e-4 10 27
train M8 "$(m M7)" 207 20 4000 7e-4 30 28
train M9 "$(m M8)" 255 16 8000 7e-4 30 29
train M10 "$(m M9)" 255 16 8000 5e-4 30 30
train M11 "$(m M10)" 255 16 8000 5e-4 30 31
train M12 "$(m M11)" 255 16 8000 5e-4 30 32
train M13 "$(m M12)" 255 16 8000 5e-4 30 33 --by-length
train M14 "$(m M13)" 511 8 8000 5e-4 30 34 --by-length
train M15 "$(m M14)" 1023 4 4000 5e-4 30 35 --by-length
train M16 "$(m M15)" 1023 4 4000 3e-4 30 36 --by-length
train M17 "$(m M16)" 1023 4 4000 3e-4 30 37 --by-length
train M18 "$(m M17)" 1023 4 4000 3e-4 30 39 --by-length
train M19 "$(m M18)" 1023 4 4000 1.5e-4 30 40 --by-length
train M20 "$(m M19)" 1023 4 4000 1.5e-4 30 41 --by-length
train M21 "$(m M20)" 1023 4 4000 1e-4 30 42 --by-length
echo "multikey: $(m M21) written"
