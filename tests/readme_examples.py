#!/usr/bin/env python3
"""Run the command lines of a Markdown file (README.md by default) and fail
when one is broken.

The convention (README.md follows it, and so can any other document):
  - Every fenced block whose info string is exactly `sh` is an example. The
    blocks run in document order, all in ONE fresh scratch directory (a later
    block may use a file an earlier one wrote), each with
    `bash -e -o pipefail`, stdin from /dev/null, no terminal, and a timeout.
  - In that directory `./ahascope` is the binary under test, `engine` and
    `tests` are the checkout's engine/ and tests/ folders; AHASCOPE_MODELS
    points at the shared models, so commands without --model find stories260K.
  - A line is not run when it contains `path/to/` (a placeholder), starts
    with `make` (set-up, which runs this test) or ends with the comment
    `# interactive` (a TUI launch). Lines joined by a trailing backslash, and
    a here-document's body, count as one line. Other fences never run.

Usage: readme_examples.py [--bin PATH] [--timeout S] [--keep DIR] [FILE.md]
Prints a line per block run ("FILE:LINE ok (0.4 s)"), per line skipped, per
failure (the failing line, its exit status, then the tail of the block's
output) and a final count. Exits 1 if any block failed, 2 on a usage error,
0 otherwise.
Standard library only: `python3` may be any interpreter on PATH.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
INTERACTIVE = re.compile(r"(^|\s)#\s*interactive\s*$")
TAIL_LINES = 15


class Block:
    def __init__(self, fence_line):
        self.fence_line = fence_line  # line number of the opening fence
        self.lines = []  # (line number, text) of the block's content


def sh_blocks(text):
    """The `sh` blocks of a Markdown text. A fence may be indented (inside a
    list item); that indentation is removed from its content lines."""
    blocks, cur, opener = [], None, None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if opener is None:
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                opener = (m.group(2), len(m.group(1)))
                cur = Block(n) if m.group(3).strip() == "sh" else None
            continue
        fence, indent = opener
        if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3).strip():
            if cur:
                blocks.append(cur)
            opener = cur = None
            continue
        if cur:
            strip = len(line) - len(line.lstrip(" "))
            cur.lines.append((n, line[min(indent, strip):]))
    if cur:  # an unclosed fence runs to the end of the document
        blocks.append(cur)
    return blocks


def logical_lines(block):
    """Group a block's lines into logical lines: a trailing backslash joins
    the next line, and a here-document's body belongs to its command."""
    groups, i, lines = [], 0, block.lines
    while i < len(lines):
        j = i
        while lines[j][1].endswith("\\") and j + 1 < len(lines):
            j += 1
        command = " ".join(t.rstrip("\\").strip() for _, t in lines[i:j + 1])
        for dash, _, word in HEREDOC.findall(command):
            while j + 1 < len(lines):
                j += 1
                body = lines[j][1].lstrip("\t") if dash else lines[j][1]
                if body == word:
                    break
        groups.append((lines[i:j + 1], command))
        i = j + 1
    return groups


def skip_reason(command):
    c = command.strip()
    if "path/to/" in c:
        return "placeholder"
    if c == "make" or c.startswith("make "):
        return "set-up"
    if INTERACTIVE.search(c):
        return "interactive"
    return None


def exited(pid):
    """True once the child has exited; it is left a zombie (not reaped), so
    its pid and process group cannot be reused while we kill stragglers."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def kill_group(pgid, sig):
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_script(script, name, cwd, env, out_path, timeout):
    """Run a bash script in its own session (no controlling terminal, its own
    process group); bash names it `name` in its messages. Returns (exit
    status or None on timeout, seconds)."""
    t0 = time.monotonic()
    with open(out_path, "wb") as out, open(os.devnull, "rb") as devnull:
        p = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script, name], cwd=cwd, env=env,
                             stdin=devnull, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
    timed_out, deadline = False, t0 + timeout
    try:
        while not exited(p.pid):
            if time.monotonic() > deadline:
                # SIGTERM first, so a program can clean up; SIGKILL 2 s later
                kill_group(p.pid, signal.SIGKILL if timed_out else signal.SIGTERM)
                timed_out, deadline = True, time.monotonic() + 2
            time.sleep(0.02)
    finally:
        # whatever the block left running in the background dies with it
        kill_group(p.pid, signal.SIGKILL)
    status = p.wait()
    if status < 0:
        status = 128 - status
    return (None if timed_out else status), time.monotonic() - t0


def tail(path, n):
    with open(path, "rb") as f:
        data = f.read()
    lines = data.decode("utf-8", "replace").rstrip("\n").split("\n")
    return [] if lines == [""] else lines[-n:]


def count(n, noun):
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def absolute(path, base):
    return os.path.normpath(os.path.join(base, os.path.expanduser(path)))


def link(target, name):
    if os.path.islink(name):
        os.unlink(name)
    if os.path.exists(name):
        print("readme_examples: %s exists and is not a symlink" % name)
        raise SystemExit(2)
    os.symlink(target, name)


def stop(signum, frame):
    # Killed runner: unwind, so the running block's group is killed and the
    # scratch directory removed (the block is in a session of its own).
    raise SystemExit(128 + signum)


def main():
    sys.stdout.reconfigure(line_buffering=True)  # progress shows as blocks finish, even in a pipe
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, stop)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=os.path.join(CHECKOUT, "README.md"))
    ap.add_argument("--bin", help="binary under test (default $AHASCOPE_BIN, else ./ahascope of the checkout)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per block (default 120)")
    ap.add_argument("--keep", metavar="DIR", help="use DIR as the scratch directory and keep it")
    args = ap.parse_args()

    cwd = os.getcwd()
    binary = absolute(args.bin or os.environ.get("AHASCOPE_BIN") or os.path.join(CHECKOUT, "ahascope"), cwd)
    if not os.access(binary, os.X_OK):
        print("readme_examples: no executable binary at %s (build it with make)" % binary)
        return 2
    shared = absolute(os.environ.get("AHASCOPE_SHARED") or os.path.join(CHECKOUT, "..", "shared"), cwd)
    try:
        with open(args.file, encoding="utf-8") as f:
            blocks = sh_blocks(f.read())
    except OSError as e:
        print("readme_examples: %s" % e)
        return 2
    name = args.file

    env = dict(os.environ)
    env["AHASCOPE_MODELS"] = os.path.join(shared, "models")
    env["AHASCOPE_SHARED"] = shared
    env["AHASCOPE_BIN"] = binary

    meta = tempfile.mkdtemp(prefix="readme-examples-meta-")  # logs, outside the scratch dir
    scratch = absolute(args.keep, cwd) if args.keep else tempfile.mkdtemp(prefix="readme-examples-")
    ok = failed = skipped = 0
    try:
        os.makedirs(scratch, exist_ok=True)
        link(binary, os.path.join(scratch, "ahascope"))
        link(os.path.join(CHECKOUT, "engine"), os.path.join(scratch, "engine"))
        link(os.path.join(CHECKOUT, "tests"), os.path.join(scratch, "tests"))
        for k, block in enumerate(blocks):
            err_file = os.path.join(meta, "err%d" % k)
            # Line L of the script is line L of the document (bash's messages
            # and $LINENO then name document lines): the trap that records the
            # failing line sits on line 1, a fence line at the earliest, and
            # lines not run are blank.
            script = ["trap '[ -s %s ] || echo $LINENO >%s' ERR" % (shlex.quote(err_file), shlex.quote(err_file))]
            script += [""] * (block.fence_line - 1)
            commands, runs = {}, []
            for group, command in logical_lines(block):
                why = skip_reason(command)
                if why:
                    print("%s:%d skipped (%s): %s" % (name, group[0][0], why, command))
                    skipped += 1
                for n, text in group:
                    commands[n] = (group[0][0], command)
                    script.append("" if why else text)
                if not why and command.strip() and not command.strip().startswith("#"):
                    runs.append((group[0][0], command))
            if not runs:
                continue
            log = os.path.join(meta, "out%d" % k)
            status, secs = run_script("\n".join(script) + "\n", name, scratch, env, log, args.timeout)
            if status == 0:
                ok += 1
                print("%s:%d ok (%.1f s)" % (name, block.fence_line, secs))
                continue
            failed += 1
            line, command = runs[0]
            if status is not None and os.path.exists(err_file):
                with open(err_file) as f:
                    reported = f.read().strip()
                if reported.isdigit():
                    line, command = commands.get(int(reported), runs[0])
            what = "timed out after %g s" % args.timeout if status is None else "exit %d" % status
            print("%s:%d FAILED (%s, %.1f s): %s" % (name, line, what, secs, command))
            for text in tail(log, TAIL_LINES):
                print("    " + text)
    finally:
        shutil.rmtree(meta, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("%s: %s run: %d ok, %d failed; %s skipped" % (name, count(ok + failed, "block"), ok, failed, count(skipped, "line")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
