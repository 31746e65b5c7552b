#!/bin/sh
# Regenerates the TUI capture in README.md: opens `./ahascope tui` on the
# default model (stories260K, the shipped w = 16 routers) in a detached tmux
# session of a fixed size, steps a fixed number of tokens with a fixed seed,
# opens the head inspector, and pastes `tmux capture-pane -p` between the
# <!-- tui-capture:begin --> and <!-- tui-capture:end --> markers of README.md,
# and the inspector pane alone (the verdicts at the cursor token) between the
# <!-- inspector-capture:begin --> / :end markers of views/README.md; then the
# TUI on a random Gemma-3-1B-shaped folder between its <!-- gemma3-capture:begin
# --> / :end markers there.
#
#   sh views/capture_readme.sh          (from anywhere; needs ./ahascope and tmux)
#
# --mono draws local and global with different glyphs, so the capture reads
# without colour. The header at 100 columns shows no tok/s and no file name,
# so the same build on the same model gives the same text.
set -eu
cd "$(dirname "$0")/.."

COLS=100 ROWS=30 STEPS=24 SEED=1 PROMPT="Once upon a time"
G3COLS=160 # wide enough for the header's full form, "gemma3 · 22 local (w 512) + 4 global layers"
README=README.md
BEGIN='<!-- tui-capture:begin -->'
END='<!-- tui-capture:end -->'
VIEWS_README=views/README.md
VBEGIN='<!-- inspector-capture:begin -->'
VEND='<!-- inspector-capture:end -->'

command -v tmux >/dev/null 2>&1 || { echo "capture_readme.sh: tmux is not installed (make deps)" >&2; exit 1; }
[ -x ./ahascope ] || { echo "capture_readme.sh: ./ahascope is not built (run make)" >&2; exit 1; }
grep -qF "$BEGIN" "$README" && grep -qF "$END" "$README" ||
    { echo "capture_readme.sh: $README lacks the $BEGIN / $END markers" >&2; exit 1; }
grep -qF "$VBEGIN" "$VIEWS_README" && grep -qF "$VEND" "$VIEWS_README" ||
    { echo "capture_readme.sh: $VIEWS_README lacks the $VBEGIN / $VEND markers" >&2; exit 1; }
grep -qF '<!-- gemma3-capture:begin -->' "$VIEWS_README" && grep -qF '<!-- gemma3-capture:end -->' "$VIEWS_README" ||
    { echo "capture_readme.sh: $VIEWS_README lacks the gemma3-capture markers" >&2; exit 1; }
./ahascope info >/dev/null || { echo "capture_readme.sh: no default model (see engine/MODELS.md)" >&2; exit 1; }

tmp=$(mktemp -d)
sock="ahascope-capture-$$"
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM

# The pane's text once it contains $1; gives up after about 30 s.
wait_for() {
    tries=0
    while [ $tries -lt 300 ]; do
        tmux -L "$sock" capture-pane -p -t cap >"$tmp/screen" 2>/dev/null || true
        grep -qF "$1" "$tmp/screen" && return 0
        sleep 0.1
        tries=$((tries + 1))
    done
    echo "capture_readme.sh: the TUI never showed \"$1\"; last screen:" >&2
    cat "$tmp/screen" >&2
    exit 1
}

tmux -L "$sock" -f /dev/null new-session -d -s cap -x $COLS -y $ROWS \
    "LC_ALL=C.UTF-8 TERM=xterm-256color ./ahascope tui --db '$tmp/x.db' --seed $SEED --prompt '$PROMPT' --mono; sleep 30"
wait_for "pos 4/"                       # the prompt is in (BOS + 4 tokens)
step=0
while [ $step -lt $STEPS ]; do
    tmux -L "$sock" send-keys -t cap Space
    step=$((step + 1))
    wait_for "pos $((4 + step))/"       # one token per key, each step finished
done
tmux -L "$sock" send-keys -t cap Enter  # the head inspector
wait_for "inspector ·"
sleep 0.3
tmux -L "$sock" capture-pane -p -t cap | sed 's/[[:space:]]*$//' >"$tmp/capture"
tmux -L "$sock" send-keys -t cap q

# Replace what lies between markers $2 and $3 of file $1 by the text of $4.
paste_between() {
    awk -v begin="$2" -v end="$3" -v cap="$4" '
        $0 == begin { print; print "```text"; while ((getline line < cap) > 0) print line; print "```"; skip = 1; next }
        $0 == end   { skip = 0 }
        !skip       { print }
    ' "$1" >"$tmp/pasted"
    cat "$tmp/pasted" >"$1"
}

# the inspector pane: from its top border to the next bottom border
awk '/^┌ inspector/ { on = 1 } on { print } on && /^└/ { exit }' "$tmp/capture" >"$tmp/inspector"
[ -s "$tmp/inspector" ] || { echo "capture_readme.sh: no inspector pane in the capture" >&2; exit 1; }
paste_between "$README" "$BEGIN" "$END" "$tmp/capture"
paste_between "$VIEWS_README" "$VBEGIN" "$VEND" "$tmp/inspector"

# A random folder of Gemma-3-1B's attention shape (26 layers x 4 heads, 1 KV
# head, window 512 in 5 of every 6 layers; narrow and a small vocabulary, so
# it is quick), 16 steps at AHA's w 8, L5 H0 (a global layer) selected: the
# fixed-local layers beside the routed global ones, into views/README.md
# ($G3COLS columns: the header in full).
./ahascope bench --arch gemma3 --dims 128,256,26,4,1,512,1024 --head-dim 32 --window-layers 512,6 --dtype bf16 \
    --save-hf "$tmp/g3" --save-routers "$tmp/g3.st" >/dev/null
tmux -L "$sock" kill-server 2>/dev/null || true
sock="$sock-g3" # a fresh server: the first may still be exiting
tmux -L "$sock" -f /dev/null new-session -d -s cap -x $G3COLS -y $ROWS \
    "LC_ALL=C.UTF-8 TERM=xterm-256color ./ahascope tui --model '$tmp/g3' --routers '$tmp/g3.st' --seed $SEED --temperature 0 --window 8 --no-record --mono; sleep 30"
wait_for "pos 11/"                      # the prompt is in (12 tokens of the random vocabulary)
step=0
while [ $step -lt 16 ]; do
    tmux -L "$sock" send-keys -t cap Space
    step=$((step + 1))
    wait_for "pos $((11 + step))/"
done
tmux -L "$sock" send-keys -t cap Down Down Down Down Down
wait_for "L5 H0"
sleep 0.3
tmux -L "$sock" capture-pane -p -t cap | sed 's/[[:space:]]*$//' >"$tmp/gemma3"
tmux -L "$sock" send-keys -t cap q
paste_between "$VIEWS_README" '<!-- gemma3-capture:begin -->' '<!-- gemma3-capture:end -->' "$tmp/gemma3"
echo "capture_readme.sh: $README and $VIEWS_README updated ($COLS x $ROWS, $STEPS steps, seed $SEED)"
