# Restoration: the two commands of the README, and a few more.
#   make demo    build, then run the countries app twice: save, exit, relaunch, restore through plugins
#   make test    every test (Swift and C), then all of them again under AddressSanitizer: what CI runs
SHELL := /bin/bash
CONFIG ?= debug
SWIFT_BUILD := swift build -c $(CONFIG)
DEMO_DIR ?= demo-state

.PHONY: deps build demo test test-asan fuzz bench clean

# A fresh machine may lack libffi's headers (Debian: libffi-dev).
deps:
	@if ! pkg-config --exists libffi 2>/dev/null; then \
	  echo "installing libffi-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libffi-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libffi-dev pkg-config; fi; \
	fi

build: deps
	$(SWIFT_BUILD) --product restoration
	$(SWIFT_BUILD) --product countries_detail
	$(SWIFT_BUILD) --product CountriesPanesPlugin

demo: build
	@set -e; BIN=$$($(SWIFT_BUILD) --show-bin-path); \
	rm -rf $(DEMO_DIR); mkdir -p $(DEMO_DIR)/plugins; chmod 755 $(DEMO_DIR) $(DEMO_DIR)/plugins; \
	install -m 644 $$BIN/libcountries_detail.so $$BIN/libCountriesPanesPlugin.so $(DEMO_DIR)/plugins/; \
	cc -std=c11 -Wall -Wextra -Werror -IInclude Examples/countries-c/countries.c \
	   -L$$BIN -lrestoration -Wl,-rpath,$$BIN -o $(DEMO_DIR)/countries; \
	echo; ./$(DEMO_DIR)/countries $(DEMO_DIR) first; \
	echo; ./$(DEMO_DIR)/countries $(DEMO_DIR) relaunch; \
	echo; echo "== the saved archive, as restorectl sees it"; \
	$(SWIFT_BUILD) --product restorectl >/dev/null && $$BIN/restorectl inspect $(DEMO_DIR)/countries.rst

test: deps
	swift test
	swift run restore-fuzz Sources/restore-fuzz/corpus
	$(MAKE) test-asan

# Every test again under AddressSanitizer (Swift and the C programs, which are
# then built with clang -fsanitize=address). XCTest's and Foundation's own
# leaks are suppressed; print_suppressions=0 keeps LSan's "Suppressions used"
# table out of the stderr of the child processes the tests check.
# .ci/asan-exports.map re-exports the ASan runtime (see that file).
test-asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
	  swift test --sanitize=address --scratch-path .build-asan \
	  -Xlinker --version-script=$(CURDIR)/.ci/asan-exports.map

# libFuzzer + AddressSanitizer on the codec and a whole restore
# (Sources/restore-fuzz). FUZZ_SECONDS=600 make fuzz for a longer run; new
# inputs collect in fuzz-out/corpus, crashes in fuzz-out/.
FUZZ_SECONDS ?= 60
fuzz: deps
	swift build -c release --product restore-fuzz --scratch-path .build-fuzz \
	  --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
	mkdir -p fuzz-out/corpus
	SWIFT_BACKTRACE=enable=no .build-fuzz/release/restore-fuzz -max_total_time=$(FUZZ_SECONDS) \
	  -artifact_prefix=fuzz-out/ fuzz-out/corpus Sources/restore-fuzz/corpus

bench: deps
	swift run -c release restore-bench

clean:
	rm -rf .build $(DEMO_DIR)
