# Restoration: the two commands of the README, and a few more.
#   make demo    build, then run the countries app twice: save, exit, relaunch, restore through plugins
#   make test    every test (Swift and C), then all of them again under AddressSanitizer, then the
#                thread tests under ThreadSanitizer: what CI runs
SHELL := /bin/bash
CONFIG ?= debug
SWIFT_BUILD := swift build -c $(CONFIG)
DEMO_DIR ?= demo-state

.PHONY: deps build demo test test-asan test-tsan fuzz bench clean

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
	$(MAKE) test-tsan

# Every test again under AddressSanitizer (Swift and the C programs, which are
# then built with clang -fsanitize=address). XCTest's and Foundation's own
# leaks are suppressed; print_suppressions=0 keeps LSan's "Suppressions used"
# table out of the stderr of the child processes the tests check.
# .ci/asan-exports.map re-exports the ASan runtime (see that file).
test-asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
	  swift test --sanitize=address --scratch-path .build-asan \
	  -Xlinker --version-script=$(CURDIR)/.ci/asan-exports.map

# The thread tests under ThreadSanitizer: librestoration.so alone built with
# --sanitize=thread, then each C program of TSAN_PROGRAMS (4 threads
# registering and unregistering while another saves, to the file and to
# buffers, and restores; a second engine saving the same archive) built with
# clang -fsanitize=thread and run TSAN_RUNS times. The toolchain's TSan
# runtime intercepts libdispatch, hence -ldispatch -lBlocksRuntime.
# Suppressions: .ci/tsan.supp (Swift runtime and Foundation only, each explained).
TSAN_PROGRAMS ?= threads
TSAN_RUNS ?= 3
TSAN_SECONDS ?= 1.5
test-tsan: deps
	swift build --sanitize=thread --scratch-path .build-tsan --product restoration
	@BIN=$$(swift build --sanitize=thread --scratch-path .build-tsan --show-bin-path); \
	SWIFTLIB=$$(dirname $$(dirname $$(readlink -f $$(command -v swift))))/lib/swift/linux; \
	OUT=.build-tsan/ctests; mkdir -p $$OUT; pass=0; fail=0; \
	for p in $(TSAN_PROGRAMS); do \
	  if ! clang -fsanitize=thread -g -O1 -std=c11 -Wall -Wextra -Werror -IInclude Tests/RestorationCTests/C/$$p.c \
	      -L$$BIN -lrestoration -Wl,-rpath,$$BIN -L$$SWIFTLIB -ldispatch -lBlocksRuntime -Wl,-rpath,$$SWIFTLIB \
	      -lpthread -lm -o $$OUT/$$p; then echo "tsan: $$p: FAILED to compile"; fail=$$((fail+1)); continue; fi; \
	  for i in $$(seq 1 $(TSAN_RUNS)); do \
	    d=$$(mktemp -d); \
	    if TSAN_OPTIONS="suppressions=$(CURDIR)/.ci/tsan.supp halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
	       SWIFT_BACKTRACE=enable=no $$OUT/$$p $$d $(TSAN_SECONDS) > $$OUT/$$p.$$i.log 2>&1 \
	       && ! grep -q "WARNING: ThreadSanitizer" $$OUT/$$p.$$i.log; then \
	      pass=$$((pass+1)); echo "tsan: $$p run $$i passed: $$(grep -m1 "^$$p: " $$OUT/$$p.$$i.log)"; \
	    else \
	      fail=$$((fail+1)); echo "tsan: $$p run $$i FAILED ($$OUT/$$p.$$i.log):"; cat $$OUT/$$p.$$i.log; \
	    fi; \
	    rm -rf $$d; \
	  done; \
	done; \
	echo "tsan: $$pass passed, $$fail failed"; \
	test $$fail -eq 0

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
