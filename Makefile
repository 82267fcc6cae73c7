# Restoration: the two commands of the README, and a few more.
#   make demo       build, then run the countries app twice: save, exit, relaunch, restore through plugins
#   make test       every test (Swift and C, the installed library), then all again under AddressSanitizer,
#                   then the thread tests under ThreadSanitizer, then the GTK 4 example under Xvfb: what CI runs
#   make            the release library, restorectl and the manual pages, as `make install` installs them
#   make install    PREFIX=/usr/local DESTDIR= (librestoration.so.1, headers, restoration.pc, restorectl, man pages)
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
# library carries the Swift runtime (its target links with -static-stdlib),
# restorectl too (--static-swift-stdlib), so neither needs a Swift toolchain.
DIST     := .build-install
DIST_BIN := $(DIST)/release
# The manual's date: SOURCE_DATE_EPOCH (reproducible builds), else the last commit.
MAN_DATE := $(shell date -u -d @$${SOURCE_DATE_EPOCH:-$$(git log -1 --format=%ct 2>/dev/null || date +%s)} +%Y-%m-%d)

.PHONY: all deps deps-gtk build demo test test-swift test-install test-asan test-tsan test-gtk fuzz bench install uninstall dist clean

all: dist

# A fresh machine may lack libffi's headers (Debian: libffi-dev) and pkg-config,
# and GLib's (libglib2.0-dev: restore-bench's GVariant baseline). Each is
# installed only when pkg-config cannot find it.
deps:
	@if ! pkg-config --exists libffi 2>/dev/null; then \
	  echo "installing libffi-dev pkg-config"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq libffi-dev pkg-config; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq libffi-dev pkg-config; fi; \
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
	$(MAKE) --no-print-directory test-qt TEST_SUMMARY=$(TEST_SUMMARY) || rc=1; \
	echo; echo "== summary"; cat $(TEST_SUMMARY); \
	awk '{ for (i = 1; i < NF; i++) { if ($$(i+1) ~ /^passed,?$$/) p += $$i; if ($$(i+1) ~ /^failed/) f += $$i } } \
	     END { printf "%d passed, %d failed\n", p, f }' $(TEST_SUMMARY); \
	exit $$rc

# swift test (XCTest suites, C programs through the ABI), then the fuzz corpus replay.
test-swift: deps
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

# Examples/gtk-notes under Xvfb: change, kill -9, relaunch (RECOVER, every
# piece of state back), SIGTERM; writes .build/gtk-notes-restored.png.
test-gtk: deps-gtk
	Tests/gtk/run.sh $(TEST_SUMMARY)

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

# ---------------------------------------------------------------------------
# Installation

# The release library, restorectl, restorectl.1 (generated from its --help by
# swift-argument-parser's generate-manual) and restoration.pc.
dist: deps
	swift build -c release --scratch-path $(DIST) --static-swift-stdlib --product restoration
	swift build -c release --scratch-path $(DIST) --static-swift-stdlib --product restorectl
	swift build -c release --scratch-path $(DIST) --static-swift-stdlib --product generate-manual
	@mkdir -p $(DIST)/man
	$(DIST_BIN)/generate-manual $(DIST_BIN)/restorectl --date $(MAN_DATE) \
	  --authors "The Restoration developers" -o $(DIST)/man
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
	$(INSTALL) -m 644 Include/restoration.h Include/restoration_plugin.h $(DESTDIR)$(includedir)/
	$(INSTALL) -m 644 $(DIST)/restoration.pc $(DESTDIR)$(pkgconfigdir)/restoration.pc
	$(INSTALL) -m 755 $(DIST_BIN)/restorectl $(DESTDIR)$(bindir)/restorectl
	$(INSTALL) -m 644 $(DIST)/man/restorectl.1 $(DESTDIR)$(mandir)/man1/restorectl.1
	$(INSTALL) -m 644 $(DIST)/man/restoration.3 $(DESTDIR)$(mandir)/man3/restoration.3
	@# A real install into a system folder refreshes the loader's cache; a staged one does not.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(libdir)/librestoration.so.$(VERSION) $(DESTDIR)$(libdir)/$(SONAME) \
	  $(DESTDIR)$(libdir)/librestoration.so $(DESTDIR)$(pkgconfigdir)/restoration.pc \
	  $(DESTDIR)$(includedir)/restoration.h $(DESTDIR)$(includedir)/restoration_plugin.h \
	  $(DESTDIR)$(bindir)/restorectl $(DESTDIR)$(mandir)/man1/restorectl.1 \
	  $(DESTDIR)$(mandir)/man3/restoration.3
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

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

# QT_RST_LIB: the folder of the librestoration.so to link with; empty: the release build (dist).
QT_LIB := $(QT_OUT)/librestoration-qt.so.$(QT_LIB_VERSION)
ifeq ($(QT_HAVE),yes)
qt: $(QT_LIB) $(QT_OUT)/restoration-qt.pc
else
qt:
	@echo "restoration-qt: skipped (pkg-config finds no Qt6Widgets; make deps-qt installs it)"
endif

$(QT_LIB): Toolkits/qt/restoration-qt.cpp Toolkits/qt/restoration-qt.h Include/restoration.h | $(if $(QT_RST_LIB),,dist)
	@mkdir -p $(QT_OUT)
	g++ -std=c++17 -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra -Werror $(QT_CXXFLAGS) \
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
endif

uninstall-qt:
	rm -f $(DESTDIR)$(libdir)/librestoration-qt.so.$(QT_LIB_VERSION) $(DESTDIR)$(libdir)/$(QT_SONAME) \
	  $(DESTDIR)$(libdir)/librestoration-qt.so $(DESTDIR)$(includedir)/restoration-qt.h \
	  $(DESTDIR)$(pkgconfigdir)/restoration-qt.pc

# Examples/qt-notes under Xvfb: change, kill -9, relaunch (RECOVER, every
# widget back, the same row at the top of the list), SIGTERM and a closed
# window right after a change; screenshots in .build/qt-notes-*.png.
test-qt: deps-qt
	Tests/qt/run.sh $(TEST_SUMMARY)

# Qt 6 (Debian: qt6-base-dev), Xvfb and ImageMagick's import (screenshots); idempotent.
deps-qt:
	@if ! pkg-config --exists Qt6Widgets 2>/dev/null || ! command -v Xvfb >/dev/null || ! command -v import >/dev/null; then \
	  echo "installing qt6-base-dev xvfb imagemagick"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq qt6-base-dev xvfb imagemagick; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq qt6-base-dev xvfb imagemagick; fi; \
	fi
