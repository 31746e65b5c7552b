#!/bin/sh
# Installs llama.cpp's prebuilt CPU libraries from npm into DIR, for
# tests/llamacpp/ref.c (which dlopens them) and tests/test_llamacpp.c.
#   sh tests/llamacpp/install.sh build/llamacpp
# Needs npm and network access to the npm registry. The version is pinned:
# @node-llama-cpp/linux-x64@3.22.1 ships llama.cpp release v0.5.0, whose
# llama.h/ggml.h ref.c's own declarations were written against.
set -eu
DIR=${1:?usage: sh tests/llamacpp/install.sh DIR}
PKG=@node-llama-cpp/linux-x64@3.22.1
mkdir -p "$DIR"
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error --ignore-scripts "$PKG"
LIB="$DIR/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
for f in libllama.v0.5.0.so libggml.v0.5.0.so libggml-base.so; do
    [ -f "$LIB/$f" ] || { echo "note: $PKG installed but $LIB/$f is missing"; exit 1; }
done
echo "note: llama.cpp v0.5.0 CPU libraries in $LIB"
