# Restoration: the two commands of the README, and a few more.
#   make demo       build, then run the countries app twice: save, exit, relaunch, restore through plugins
#   make test       every test (Swift and C, the installed library), then all again under AddressSanitizer,
#                   then the thread tests under ThreadSanitizer, then the GTK 4 example under Xvfb: what CI runs
#   make            the release library, restorectl and the manual pages, as `make install` installs them
#   make install    PREFIX=/usr/local DESTDIR= BUILDDIR= (librestoration.so.1, headers, restoration.pc, restorectl, man pages);
#                   BUILDDIR=/some/dir builds there, outside the checkout, which is then only read (it may be read-only)
#   make uninstall  the same variables; removes exactly what install put there
SHELL := /bin/bash
CONFIG ?= debug
SWIFT_BUILD := swift build -c $(CONFIG)
DEMO_DIR ?= demo-state

# Installation directories (GNU names; DESTDIR stages a package).
PREFIX       ?= /usr/local
prefix       ?= $(PREFIX)
exec_prefix  ?= $(prefix)
bindir       ?= $(exec_prefix)/bin
libdir       ?= $(exec_prefix)/lib
includedir   ?= $(prefix)/include
mandir       ?= $(prefix)/share/man
pkgconfigdir ?= $(libdir)/pkgconfig
INSTALL      ?= install

# One version, defined in the header: rst_version(), the file name, the
# SONAME (its major number) and restoration.pc all come from it.
VERSION := $(shell sed -n 's/^\#define RST_VERSION_STRING "\(.*\)"/\1/p' Include/restoration.h)
SOMAJOR := $(firstword $(subst ., ,$(VERSION)))
SONAME  := librestoration.so.$(SOMAJOR)

# Release products for installation, in their own scratch folder: the
# library carries the Swift runtime (its target links with -static-stdlib)
# and libstdc++, libgcc, libffi and libsodium (Sources/librestoration/static/:
# it needs only libc and libm), restorectl the Swift runtime too
# (--static-swift-stdlib), so neither needs a Swift toolchain. The tests and
# Tests/perf build the library with the same Package.swift settings.
# With BUILDDIR every build product goes there and nothing is written to the
# checkout: SwiftPM writes Package.resolved beside Package.swift, so the
# package is first copied to $(BUILDDIR)/src (build folders left out) and
# built from that copy.
BUILDDIR ?=
ifeq ($(strip $(BUILDDIR)),)
DIST     := .build-install
PKG      := $(CURDIR)
else
override BUILDDIR := $(abspath $(BUILDDIR))
DIST     := $(BUILDDIR)
PKG      := $(BUILDDIR)/src
endif
DIST_BIN := $(DIST)/release
# ldconfig refreshes the loader's cache only for a real install into a
# system prefix: not for a private PREFIX, not when staging with DESTDIR.
LDCONFIG ?= ldconfig
SYSTEM_PREFIXES := /usr /usr/local
RUN_LDCONFIG := $(if $(DESTDIR),,$(filter $(SYSTEM_PREFIXES),$(patsubst %/,%,$(prefix))))
# The manual's date: SOURCE_DATE_EPOCH (reproducible builds), else the last commit.
MAN_DATE := $(shell date -u -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} +%Y-%m-%d)

.PHONY: all deps deps-gtk build demo test test-sqlite test-swift test-install test-asan test-tsan test-gtk fuzz bench install uninstall dist clean

all: dist

# A fresh machine may lack libffi's headers (Debian: libffi-dev) and pkg-config,
# libsodium's (libsodium-dev: sealed values),
# and GLib's (libglib2.0-dev: restore-bench's GVariant baseline). Each is
# installed only when pkg-config cannot find it.
deps:
	@if ! pkg-config --exists libffi 2>/dev/null; then \
	  echo "installing libffi-dev pkg-config"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libffi-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libffi-dev pkg-config; fi; \
	fi
	@if ! pkg-config --exists libsodium 2>/dev/null; then \
	  echo "installing libsodium-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libsodium-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libsodium-dev pkg-config; fi; \
	fi
	@if ! pkg-config --exists sqlite3 2>/dev/null; then \
	  echo "installing libsqlite3-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libsqlite3-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libsqlite3-dev pkg-config; fi; \
	fi
	@if ! pkg-config --exists glib-2.0 2>/dev/null; then \
	  echo "installing libglib2.0-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libglib2.0-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libglib2.0-dev pkg-config; fi; \
	fi

# The GTK 4 example and its test under Xvfb (Debian: libgtk-4-dev, xvfb); idempotent.
deps-gtk:
	@if ! pkg-config --exists gtk4 2>/dev/null || ! command -v Xvfb >/dev/null; then \
	  echo "installing libgtk-4-dev xvfb"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libgtk-4-dev xvfb; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libgtk-4-dev xvfb; fi; \
	fi
	@# The test's screenshots (xwd from x11-apps, ImageMagick's convert) and its window resize (xdotool).
	@if ! command -v xwd >/dev/null || ! [ -x /usr/bin/convert ] || ! command -v xdotool >/dev/null; then \
	  echo "installing x11-apps imagemagick xdotool"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq x11-apps imagemagick xdotool; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq x11-apps imagemagick xdotool; fi; \
	fi
	@# The manual pages' check (mandoc -T lint).
	@if ! command -v mandoc >/dev/null; then \
	  echo "installing mandoc"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq mandoc; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq mandoc; fi; \
	fi

# In-tree builds: the library's SONAME is librestoration.so.1, so the bin
# folder also gets that name, and programs linked there with -lrestoration
# and an rpath run.
build: deps
	$(SWIFT_BUILD) --product restoration
	$(SWIFT_BUILD) --product countries_detail
	$(SWIFT_BUILD) --product CountriesPanesPlugin
	@BIN=$$($(SWIFT_BUILD) --show-bin-path); ln -sf librestoration.so $$BIN/$(SONAME)

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

# Every test; each part appends "<part>: N passed, M failed" to
# $(TEST_SUMMARY), and the last line is the total over all of them.
TEST_SUMMARY ?= $(CURDIR)/.build/test-summary.txt
test: deps
	@mkdir -p $(dir $(TEST_SUMMARY)); : > $(TEST_SUMMARY)
	@rc=0; \
	$(MAKE) --no-print-directory test-swift TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-install TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-asan TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-tsan TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-gtk TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-death TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-etcd TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-qt TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-sqlite TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-python TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	$(MAKE) --no-print-directory test-docs TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	echo; echo "== summary"; cat $(TEST_SUMMARY); \
	awk '{ for (i = 1; i < NF; i++) { if ($$(i+1) ~ /^passed,?$$/) p += $$i; if ($$(i+1) ~ /^failed/) f += $$i } } \
	     END { printf "%d passed, %d failed\n", p, f }' $(TEST_SUMMARY); \
	exit $$rc

# Examples/sqlite-store with a real engine (Debian libsqlite3-dev, from `deps`):
# first launch, relaunch, SIGKILL during saves (RECOVER), generations and
# fallback as slots, two processes at once, and the store contract.
test-sqlite: deps
	Tests/sqlite/run.sh $(TEST_SUMMARY)

# The Python package (Python/) as a user installs it: the library in-tree, a
# fresh venv with /usr/bin/python3 (Debian's, with tkinter), pip install
# ./Python, then pytest (the Tkinter example under Xvfb, C and Python on one
# archive, mypy --strict). Needs python3-tk python3-venv python3-dev xvfb.
.PHONY: test-python deps-python
deps-python:
	@if ! /usr/bin/python3 -c 'import tkinter, venv, cffi, pytest, os, sys, sysconfig; \
	       sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null \
	   || ! command -v Xvfb >/dev/null || ! command -v xwd >/dev/null || ! command -v convert >/dev/null; then \
	  echo "installing python3-tk python3-venv python3-dev python3-cffi python3-pytest xvfb x11-apps imagemagick"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq python3-tk python3-venv python3-dev python3-cffi python3-pytest xvfb x11-apps imagemagick; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq python3-tk python3-venv python3-dev python3-cffi python3-pytest xvfb x11-apps imagemagick; fi; \
	fi
test-python: deps-python
	CONFIG=$(CONFIG) Python/tests/run.sh $(TEST_SUMMARY)

# The docs as a reader follows them (Tests/docs/links.sh): every relative link
# of README.md and docs/*.md resolves inside the repository, anchors included,
# every document named exists, the manual pages name only pages we ship and
# pass `mandoc -T lint`. Needs python3 and mandoc (installed when missing).
.PHONY: test-docs
test-docs:
	@if ! command -v python3 >/dev/null 2>&1 || ! command -v mandoc >/dev/null 2>&1; then \
	  echo "installing python3 mandoc"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq python3 mandoc; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq python3 mandoc; fi; \
	fi
	Tests/docs/links.sh $(TEST_SUMMARY)

# What LifecycleRecipeTests compiles the docs' recipes against (GTK 4, Qt 6,
# libuv, ncurses), so a fresh machine's `make test` has them before swift test.
.PHONY: deps-recipes
deps-recipes: deps-gtk deps-qt
	@if ! pkg-config --exists libuv 2>/dev/null || ! pkg-config --exists ncursesw 2>/dev/null; then \
	  echo "installing libuv1-dev libncurses-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libuv1-dev libncurses-dev; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libuv1-dev libncurses-dev; fi; \
	fi

# swift test (XCTest suites, C programs through the ABI, the docs' recipes), then the fuzz corpus replay.
test-swift: deps deps-recipes
	@set -o pipefail; rc=0; swift test 2>&1 | tee .build/swift-test.log || rc=1; \
	Tests/count-xctest.sh swift .build/swift-test.log >> $(TEST_SUMMARY); \
	swift run restore-fuzz Sources/restore-fuzz/corpus || { rc=1; echo "fuzz-replay: 0 passed, 1 failed" >> $(TEST_SUMMARY); }; \
	[ $$rc = 0 ] && echo "fuzz-replay: 1 passed, 0 failed" >> $(TEST_SUMMARY); exit $$rc

# The installed library as a C user gets it: make install into a temporary
# prefix, an out-of-tree host and plugin built with pkg-config alone, run
# with the Swift toolchain hidden (see Tests/install/run.sh).
test-install: deps
	Tests/install/run.sh $(TEST_SUMMARY)

# Every test again under AddressSanitizer (Swift and the C programs, which are
# then built with clang -fsanitize=address). XCTest's and Foundation's own
# leaks are suppressed; print_suppressions=0 keeps LSan's "Suppressions used"
# table out of the stderr of the child processes the tests check.
# .ci/asan-exports.map re-exports the ASan runtime (see that file).
test-asan: deps
	@set -o pipefail; mkdir -p .build-asan; rc=0; \
	LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp:print_suppressions=0 \
	  swift test --sanitize=address --scratch-path .build-asan \
	  -Xlinker --version-script=$(CURDIR)/.ci/asan-exports.map 2>&1 | tee .build-asan/swift-test.log || rc=1; \
	Tests/count-xctest.sh asan .build-asan/swift-test.log >> $(TEST_SUMMARY); exit $$rc

# restoration-gtk and Examples/gtk-notes under Xvfb: change, kill -9,
# relaunch (RECOVER, every widget back, the list's top row drawn), the model
# reversed, SIGTERM, close; screenshots in .build/gtk-test/.
test-gtk: deps-gtk
	Tests/gtk/run.sh $(TEST_SUMMARY)

# restorectl test on the examples (every kill point, the round trip;
# gtk-notes and qt-notes under Xvfb) and the negative controls of
# Tests/deathtest/broken.c and broken-gtk.c.
.PHONY: test-death
test-death: deps deps-recipes
	Tests/deathtest/run.sh $(TEST_SUMMARY)

# The thread tests under ThreadSanitizer: librestoration.so alone built with
# --sanitize=thread, then each C program of TSAN_PROGRAMS (4 threads
# registering and unregistering while another saves, to the file and to
# buffers, and restores; a second engine saving the same archive) built with
# clang -fsanitize=thread and run TSAN_RUNS times. The toolchain's TSan
# runtime intercepts libdispatch, hence -ldispatch -lBlocksRuntime.
# Suppressions: .ci/tsan.supp (Swift runtime and Foundation only, each explained).
TSAN_PROGRAMS ?= threads autosave_threads deferred
TSAN_RUNS ?= 3
TSAN_SECONDS ?= 1.5
test-tsan: deps
	swift build --sanitize=thread --scratch-path .build-tsan --product restoration
	@BIN=$$(swift build --sanitize=thread --scratch-path .build-tsan --show-bin-path); \
	ln -sf librestoration.so $$BIN/$(SONAME); \
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
	echo "tsan: $$pass passed, $$fail failed" | tee -a $(TEST_SUMMARY); \
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
	swift build -c release --product restoration
	Tests/perf/footprint.sh "$$(swift build -c release --show-bin-path)"

# ---------------------------------------------------------------------------
# Installation

# The release library, restorectl, the manual pages (docs/man: restorectl.1
# with its .Dd set to MAN_DATE) and restoration.pc.
dist: deps
ifneq ($(PKG),$(CURDIR))
	@# The package's files (Package.resolved too, when the checkout has one),
	@# copied with their mtimes, so rebuilds stay incremental; a file gone from
	@# the checkout goes from the copy too.
	@mkdir -p $(PKG)
	tar -C $(CURDIR) --exclude='./.build*' --exclude=./.git --exclude=./.swiftpm \
	  --exclude=./fuzz-out --exclude=./$(DEMO_DIR) $(if $(filter $(CURDIR)/%,$(BUILDDIR)),--exclude=./$(patsubst $(CURDIR)/%,%,$(BUILDDIR))) \
	  -cf - . | tar -C $(PKG) -xf -
	@cd $(PKG) && find . -type f ! -name Package.resolved ! -path './.swiftpm/*' | while read -r f; do \
	  [ -e "$(CURDIR)/$$f" ] || rm -f "$$f"; done
endif
	swift build -c release --package-path $(PKG) --scratch-path $(DIST) --static-swift-stdlib --product restoration
	swift build -c release --package-path $(PKG) --scratch-path $(DIST) --static-swift-stdlib --product restorectl
	@mkdir -p $(DIST)/man
	sed -e "s|^\.Dd .*|.Dd $$(LC_ALL=C date -u -d $(MAN_DATE) '+%B %-d, %Y')|" docs/man/restorectl.1 > $(DIST)/man/restorectl.1
	sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@DATE@|$(MAN_DATE)|g' docs/man/restoration.3 > $(DIST)/man/restoration.3
	@ln -sf librestoration.so $(DIST_BIN)/$(SONAME)

$(DIST)/restoration.pc: restoration.pc.in Include/restoration.h FORCE
	@mkdir -p $(DIST)
	sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(libdir)|g' \
	    -e 's|@INCLUDEDIR@|$(includedir)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@
FORCE:

install: dist $(DIST)/restoration.pc
	$(INSTALL) -d $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(includedir) \
	  $(DESTDIR)$(bindir) $(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man3
	$(INSTALL) -m 755 $(DIST_BIN)/librestoration.so $(DESTDIR)$(libdir)/librestoration.so.$(VERSION)
	ln -sf librestoration.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/librestoration.so
	$(INSTALL) -m 644 Include/restoration.h Include/restoration_plugin.h Include/restoration_store.h $(DESTDIR)$(includedir)/
	$(INSTALL) -m 644 $(DIST)/restoration.pc $(DESTDIR)$(pkgconfigdir)/restoration.pc
	$(INSTALL) -m 755 $(DIST_BIN)/restorectl $(DESTDIR)$(bindir)/restorectl
	$(INSTALL) -m 644 $(DIST)/man/restorectl.1 $(DESTDIR)$(mandir)/man1/restorectl.1
	$(INSTALL) -m 644 $(DIST)/man/restoration.3 $(DESTDIR)$(mandir)/man3/restoration.3
	$(call refresh_loader_cache)

uninstall:
	rm -f $(DESTDIR)$(libdir)/librestoration.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME) \
	  $(DESTDIR)$(libdir)/librestoration.so $(DESTDIR)$(pkgconfigdir)/restoration.pc \
	  $(DESTDIR)$(includedir)/restoration.h $(DESTDIR)$(includedir)/restoration_plugin.h \
	  $(DESTDIR)$(includedir)/restoration_store.h \
	  $(DESTDIR)$(bindir)/restorectl $(DESTDIR)$(mandir)/man1/restorectl.1 \
	  $(DESTDIR)$(mandir)/man3/restoration.3
	$(call refresh_loader_cache)

# A real install into a system prefix runs ldconfig (as root; otherwise it
# says to); a private PREFIX or a DESTDIR stage does not touch the cache.
define refresh_loader_cache
$(if $(RUN_LDCONFIG),@if [ "$$(id -u)" = 0 ]; then echo "$(LDCONFIG)"; $(LDCONFIG); \
  else echo "note: run ldconfig as root to refresh the loader's cache for $(libdir)"; fi,\
  @echo "not running ldconfig: $(if $(DESTDIR),staged in DESTDIR $(DESTDIR),$(prefix) is not a system prefix)")
endef

# ---------------------------------------------------------------------------
# restoration-etcd (Stores/etcd, docs/ROAMING.md): a C store over etcd v3's
# JSON gateway with libcurl, json-c and libcrypto (SHA-256), outside SwiftPM.
#   make etcd          .build/etcd/librestoration-etcd.so.1 against the in-tree librestoration (the tests')
#   make test-etcd     Tests/etcd/run.sh: real clusters started and stopped by the test
#   make etcd-fuzz     the parser under libFuzzer (clang -fsanitize=fuzzer), ETCD_FUZZ_SECONDS=60
#   make install / uninstall include it when libcurl and json-c are present (pkg-config)
.PHONY: etcd dist-etcd install-etcd uninstall-etcd test-etcd deps-etcd etcd-fuzz
ETCD_VERSION := $(shell sed -n 's/^\#define RST_ETCD_VERSION_STRING "\(.*\)"/\1/p' Stores/etcd/restoration_etcd.h)
ETCD_SONAME  := librestoration-etcd.so.$(firstword $(subst ., ,$(ETCD_VERSION)))
ETCD_LIB     := librestoration-etcd.so.$(ETCD_VERSION)
ETCD_HAVE    := $(shell pkg-config --exists libcurl json-c libcrypto 2>/dev/null && echo yes)
ETCD_SRC     := Stores/etcd/etcd_store.c Stores/etcd/etcd_parse.c
# $(call etcd_lib,OUT,LIBDIR,FLAGS): compiles the library into OUT against LIBDIR's librestoration.
etcd_lib = mkdir -p $(1) && cc -std=c11 -Wall -Wextra $(3) -O2 -g -fPIC -fvisibility=hidden -IInclude -IStores/etcd \
  $$(pkg-config --cflags libcurl json-c libcrypto) -shared $(ETCD_SRC) -Wl,-soname,$(ETCD_SONAME) -Wl,--no-undefined \
  -L$(2) -lrestoration $$(pkg-config --libs libcurl json-c libcrypto) -lpthread -o $(1)/$(ETCD_LIB) && \
  ln -sf $(ETCD_LIB) $(1)/$(ETCD_SONAME) && ln -sf $(ETCD_SONAME) $(1)/librestoration-etcd.so

# etcd (server and etcdctl), libcurl's and json-c's headers; idempotent.
deps-etcd:
	@if ! pkg-config --exists libcurl json-c libcrypto 2>/dev/null || ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null \
	    || ! command -v jq >/dev/null || ! command -v openssl >/dev/null; then \
	  echo "installing etcd-server etcd-client libcurl4-openssl-dev libjson-c-dev libssl-dev jq openssl"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq etcd-server etcd-client libcurl4-openssl-dev libjson-c-dev libssl-dev jq openssl; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq etcd-server etcd-client libcurl4-openssl-dev libjson-c-dev libssl-dev jq openssl; fi; \
	fi

etcd: deps
	$(SWIFT_BUILD) --product restoration
	@BIN=$$($(SWIFT_BUILD) --show-bin-path); ln -sf librestoration.so $$BIN/$(SONAME); \
	$(call etcd_lib,.build/etcd,$$BIN,-Werror)

test-etcd: deps deps-etcd
	Tests/etcd/run.sh $(TEST_SUMMARY)

ETCD_FUZZ_SECONDS ?= 60
etcd-fuzz:
	@mkdir -p .build/etcd/fuzz-corpus .build/etcd/fuzz-out && cp -n Stores/etcd/fuzz/corpus/* .build/etcd/fuzz-corpus/
	/opt/swift/usr/bin/clang -g -O1 -fsanitize=fuzzer,address -IStores/etcd Stores/etcd/fuzz/etcd_fuzz.c Stores/etcd/etcd_parse.c \
	  $$(pkg-config --cflags --libs json-c) -o .build/etcd/etcd-fuzz
	.build/etcd/etcd-fuzz -max_total_time=$(ETCD_FUZZ_SECONDS) -artifact_prefix=.build/etcd/fuzz-out/ .build/etcd/fuzz-corpus

all: dist-etcd
install: install-etcd
uninstall: uninstall-etcd
dist-etcd: dist
	@if [ "$(ETCD_HAVE)" = yes ]; then \
	  $(call etcd_lib,$(DIST)/etcd,$(DIST_BIN)) && \
	  sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(libdir)|g' -e 's|@INCLUDEDIR@|$(includedir)|g' \
	      -e 's|@VERSION@|$(ETCD_VERSION)|g' Stores/etcd/restoration-etcd.pc.in > $(DIST)/etcd/restoration-etcd.pc && \
	  echo "restoration-etcd $(ETCD_VERSION): $(DIST)/etcd/$(ETCD_LIB)"; \
	else echo "restoration-etcd: libcurl, json-c or libcrypto not found (pkg-config; make deps-etcd): not built"; fi

install-etcd: dist-etcd
	@if [ -f $(DIST)/etcd/$(ETCD_LIB) ]; then set -ex; \
	  $(INSTALL) -d $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(includedir); \
	  $(INSTALL) -m 755 $(DIST)/etcd/$(ETCD_LIB) $(DESTDIR)$(libdir)/$(ETCD_LIB); \
	  ln -sf $(ETCD_LIB) $(DESTDIR)$(libdir)/$(ETCD_SONAME); \
	  ln -sf $(ETCD_SONAME) $(DESTDIR)$(libdir)/librestoration-etcd.so; \
	  $(INSTALL) -m 644 Stores/etcd/restoration_etcd.h $(DESTDIR)$(includedir)/; \
	  $(INSTALL) -m 644 $(DIST)/etcd/restoration-etcd.pc $(DESTDIR)$(pkgconfigdir)/restoration-etcd.pc; \
	fi

uninstall-etcd:
	rm -f $(DESTDIR)$(libdir)/$(ETCD_LIB) $(DESTDIR)$(libdir)/$(ETCD_SONAME) $(DESTDIR)$(libdir)/librestoration-etcd.so \
	  $(DESTDIR)$(includedir)/restoration_etcd.h $(DESTDIR)$(pkgconfigdir)/restoration-etcd.pc

# ---------------------------------------------------------------------------
# restoration-gtk (Toolkits/gtk, docs/GTK.md): a plain C library over
# librestoration and GTK 4 (4.8 or later), outside SwiftPM.
#   make gtk          .build/gtk/librestoration-gtk.so.1 against the in-tree librestoration (the tests')
#   make dist-gtk     the same against the release library, in $(DIST)/gtk (part of `make`)
#   make install-gtk / uninstall-gtk   part of `make install` / `make uninstall`
# Without GTK 4's headers (pkg-config gtk4) dist-gtk and install-gtk say so
# and do nothing; `make deps-gtk` installs them.
.PHONY: gtk dist-gtk install-gtk uninstall-gtk
GTK_VERSION := $(shell sed -n 's/^\#define RST_GTK_VERSION_STRING "\(.*\)"/\1/p' Toolkits/gtk/restoration-gtk.h)
GTK_SONAME  := librestoration-gtk.so.$(firstword $(subst ., ,$(GTK_VERSION)))
GTK_LIB     := librestoration-gtk.so.$(GTK_VERSION)
# The toolkits' manual pages (mdoc) take their date as "Month D, YYYY": the same day as MAN_DATE.
MAN_MDOC_DATE := $(shell LC_ALL=C date -u -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} '+%B %-d, %Y')
# $(call gtk_lib,OUT,LIBDIR,FLAGS): one shell line compiling the library into OUT against LIBDIR's
# librestoration (-Werror in the tree only: a newer GTK's deprecations must not break a package build).
gtk_lib = mkdir -p $(1) && cc -std=c11 -Wall -Wextra $(3) -O2 -g -fPIC -fvisibility=hidden -IInclude \
  $$(pkg-config --cflags gtk4) -shared Toolkits/gtk/restoration-gtk.c -Wl,-soname,$(GTK_SONAME) \
  -L$(2) -lrestoration $$(pkg-config --libs gtk4) -lm -o $(1)/$(GTK_LIB) && \
  ln -sf $(GTK_LIB) $(1)/$(GTK_SONAME) && ln -sf $(GTK_SONAME) $(1)/librestoration-gtk.so

gtk: deps deps-gtk
	$(SWIFT_BUILD) --product restoration
	@BIN=$$($(SWIFT_BUILD) --show-bin-path); ln -sf librestoration.so $$BIN/$(SONAME); \
	$(call gtk_lib,.build/gtk,$$BIN,-Werror)

all: dist-gtk
dist-gtk: dist
	@if pkg-config --exists gtk4; then \
	  $(call gtk_lib,$(DIST)/gtk,$(DIST_BIN)) && \
	  sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(libdir)|g' -e 's|@INCLUDEDIR@|$(includedir)|g' \
	      -e 's|@VERSION@|$(GTK_VERSION)|g' Toolkits/gtk/restoration-gtk.pc.in > $(DIST)/gtk/restoration-gtk.pc && \
	  echo "restoration-gtk $(GTK_VERSION): $(DIST)/gtk/$(GTK_LIB)"; \
	else echo "restoration-gtk: GTK 4 not found (pkg-config gtk4; make deps-gtk): not built"; fi

install: install-gtk
install-gtk: dist-gtk
	@if [ -f $(DIST)/gtk/$(GTK_LIB) ]; then set -ex; \
	  $(INSTALL) -d $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(includedir); \
	  $(INSTALL) -m 755 $(DIST)/gtk/$(GTK_LIB) $(DESTDIR)$(libdir)/$(GTK_LIB); \
	  ln -sf $(GTK_LIB) $(DESTDIR)$(libdir)/$(GTK_SONAME); \
	  ln -sf $(GTK_SONAME) $(DESTDIR)$(libdir)/librestoration-gtk.so; \
	  $(INSTALL) -m 644 Toolkits/gtk/restoration-gtk.h $(DESTDIR)$(includedir)/; \
	  $(INSTALL) -m 644 $(DIST)/gtk/restoration-gtk.pc $(DESTDIR)$(pkgconfigdir)/restoration-gtk.pc; \
	  $(INSTALL) -d $(DESTDIR)$(mandir)/man3; \
	  sed -e 's|@VERSION@|$(GTK_VERSION)|g' -e 's|@DATE@|$(MAN_MDOC_DATE)|g' docs/man/restoration-gtk.3 \
	    > $(DESTDIR)$(mandir)/man3/restoration-gtk.3; \
	  chmod 644 $(DESTDIR)$(mandir)/man3/restoration-gtk.3; \
	fi

uninstall: uninstall-gtk
uninstall-gtk:
	rm -f $(DESTDIR)$(libdir)/$(GTK_LIB) $(DESTDIR)$(libdir)/$(GTK_SONAME) $(DESTDIR)$(libdir)/librestoration-gtk.so \
	  $(DESTDIR)$(includedir)/restoration-gtk.h $(DESTDIR)$(pkgconfigdir)/restoration-gtk.pc \
	  $(DESTDIR)$(mandir)/man3/restoration-gtk.3

clean:
	rm -rf .build $(DIST) $(DEMO_DIR)

# ---------------------------------------------------------------------------
# restoration-qt (Toolkits/qt): a C++ library that restores a Qt 6 widget
# tree (docs/QT.md), its example Examples/qt-notes and their test under Xvfb.
#   make qt          librestoration-qt.so.1 in $(QT_OUT) (part of `make`; skipped, with
#                    a message, when pkg-config finds no Qt6Widgets: make deps-qt)
#   make test-qt     Examples/qt-notes under Xvfb (Tests/qt/run.sh)
# make install / uninstall include it when it was built.
QT_LIB_VERSION := $(shell sed -n 's/^\#define RESTORATION_QT_VERSION_STRING "\(.*\)"/\1/p' Toolkits/qt/restoration-qt.h)
QT_SONAME   := librestoration-qt.so.$(firstword $(subst ., ,$(QT_LIB_VERSION)))
QT_OUT      ?= $(DIST)/qt
QT_RST_LIB  ?=
QT_CXXFLAGS ?= -O2 -g
QT_HAVE     := $(shell pkg-config --exists Qt6Widgets 2>/dev/null && echo yes)
.PHONY: qt install-qt uninstall-qt test-qt deps-qt
all: qt
install: install-qt
uninstall: uninstall-qt

# QT_RST_LIB: the folder of the librestoration.so to link with (the tests' in-tree build, then
# with -Werror); empty: the release build (dist), without -Werror, so that a newer Qt's
# deprecations cannot break a package build.
QT_LIB := $(QT_OUT)/librestoration-qt.so.$(QT_LIB_VERSION)
ifeq ($(QT_HAVE),yes)
qt: $(QT_LIB) $(QT_OUT)/restoration-qt.pc
else
qt:
	@echo "restoration-qt: skipped (pkg-config finds no Qt6Widgets; make deps-qt installs it)"
endif

$(QT_LIB): Toolkits/qt/restoration-qt.cpp Toolkits/qt/restoration-qt.h Include/restoration.h | $(if $(QT_RST_LIB),,dist)
	@mkdir -p $(QT_OUT)
	g++ -std=c++17 -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra $(if $(QT_RST_LIB),-Werror) $(QT_CXXFLAGS) \
	  -IInclude $$(pkg-config --cflags Qt6Widgets) Toolkits/qt/restoration-qt.cpp -o $@ \
	  -Wl,-soname,$(QT_SONAME) -Wl,--no-undefined -L$(or $(QT_RST_LIB),$(DIST_BIN)) -lrestoration $$(pkg-config --libs Qt6Widgets)
	ln -sf librestoration-qt.so.$(QT_LIB_VERSION) $(QT_OUT)/$(QT_SONAME)
	ln -sf $(QT_SONAME) $(QT_OUT)/librestoration-qt.so

# Written each time: it carries the prefix of this make invocation.
$(QT_OUT)/restoration-qt.pc: Toolkits/qt/restoration-qt.pc.in FORCE
	@mkdir -p $(QT_OUT)
	sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(libdir)|g' -e 's|@INCLUDEDIR@|$(includedir)|g' \
	    -e 's|@VERSION@|$(QT_LIB_VERSION)|g' $< > $@

install-qt: qt
ifeq ($(QT_HAVE),yes)
	$(INSTALL) -d $(DESTDIR)$(libdir) $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(includedir)
	$(INSTALL) -m 755 $(QT_OUT)/librestoration-qt.so.$(QT_LIB_VERSION) $(DESTDIR)$(libdir)/
	ln -sf librestoration-qt.so.$(QT_LIB_VERSION) $(DESTDIR)$(libdir)/$(QT_SONAME)
	ln -sf $(QT_SONAME) $(DESTDIR)$(libdir)/librestoration-qt.so
	$(INSTALL) -m 644 Toolkits/qt/restoration-qt.h $(DESTDIR)$(includedir)/
	$(INSTALL) -m 644 $(QT_OUT)/restoration-qt.pc $(DESTDIR)$(pkgconfigdir)/
	$(INSTALL) -d $(DESTDIR)$(mandir)/man3
	sed -e 's|@VERSION@|$(QT_LIB_VERSION)|g' -e 's|@DATE@|$(MAN_MDOC_DATE)|g' docs/man/restoration-qt.3 \
	  > $(DESTDIR)$(mandir)/man3/restoration-qt.3
	chmod 644 $(DESTDIR)$(mandir)/man3/restoration-qt.3
endif

uninstall-qt:
	rm -f $(DESTDIR)$(libdir)/librestoration-qt.so.$(QT_LIB_VERSION) $(DESTDIR)$(libdir)/$(QT_SONAME) \
	  $(DESTDIR)$(libdir)/librestoration-qt.so $(DESTDIR)$(includedir)/restoration-qt.h \
	  $(DESTDIR)$(pkgconfigdir)/restoration-qt.pc $(DESTDIR)$(mandir)/man3/restoration-qt.3

# Examples/qt-notes under Xvfb: change, kill -9, relaunch (RECOVER, every
# widget back, the same row at the top of the list), SIGTERM and a closed
# window right after a change; screenshots in .build/qt-notes-*.png.
test-qt: deps-qt
	Tests/qt/run.sh $(TEST_SUMMARY)

# Qt 6 (Debian: qt6-base-dev), Xvfb, ImageMagick's import (screenshots) and mandoc (the manual page's check); idempotent.
deps-qt:
	@if ! pkg-config --exists Qt6Widgets 2>/dev/null || ! command -v Xvfb >/dev/null || ! command -v import >/dev/null; then \
	  echo "installing qt6-base-dev xvfb imagemagick"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq qt6-base-dev xvfb imagemagick; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq qt6-base-dev xvfb imagemagick; fi; \
	fi
	@if ! command -v mandoc >/dev/null; then \
	  echo "installing mandoc"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq mandoc; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq mandoc; fi; \
	fi
