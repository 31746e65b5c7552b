#!/bin/sh
# Regenerates the TUI capture in README.md: opens `./ahascope tui` on the
# default model (stories260K, the shipped w = 16 routers) in a detached tmux
# session of a fixed size, steps a fixed number of tokens with a fixed seed,
# opens the head inspector, and pastes `tmux capture-pane -p` between the
# <!-- tui-capture:begin --> and <!-- tui-capture:end --> markers of README.md.
#
#   sh views/capture_readme.sh          (from anywhere; needs ./ahascope and tmux)
#
# --mono draws local and global with different glyphs, so the capture reads
# without colour. The header at 100 columns shows no tok/s and no file name,
# so the same build on the same model gives the same text.
set -eu
cd "$(dirname "$0")/.."

COLS=100 ROWS=30 STEPS=24 SEED=1 PROMPT="Once upon a time"
README=README.md
BEGIN='<!-- tui-capture:begin -->'
END='<!-- tui-capture:end -->'

command -v tmux >/dev/null 2>&1 || { echo "capture_readme.sh: tmux is not installed (make deps)" >&2; exit 1; }
[ -x ./ahascope ] || { echo "capture_readme.sh: ./ahascope is not built (run make)" >&2; exit 1; }
grep -qF "$BEGIN" "$README" && grep -qF "$END" "$README" ||
    { echo "capture_readme.sh: $README lacks the $BEGIN / $END markers" >&2; exit 1; }
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
    tmux -L "$sock" send-keys -t cap n
    step=$((step + 1))
    wait_for "pos $((4 + step))/"       # one token per key, each step finished
done
tmux -L "$sock" send-keys -t cap Enter  # the head inspector
wait_for "inspector ·"
sleep 0.3
tmux -L "$sock" capture-pane -p -t cap | sed 's/[[:space:]]*$//' >"$tmp/capture"
tmux -L "$sock" send-keys -t cap q

awk -v begin="$BEGIN" -v end="$END" -v cap="$tmp/capture" '
    $0 == begin { print; print "```text"; while ((getline line < cap) > 0) print line; print "```"; skip = 1; next }
    $0 == end   { skip = 0 }
    !skip       { print }
' "$README" >"$tmp/README.md"
cat "$tmp/README.md" >"$README"
echo "capture_readme.sh: $README updated ($COLS x $ROWS, $STEPS steps, seed $SEED)"
