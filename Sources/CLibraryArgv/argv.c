/* The command line for the Swift runtime linked into librestoration.so,
 * taken from the loader instead of /proc/self/maps.
 *
 * The static Swift runtime (libswiftCore.a) defines these two functions,
 * which the standard library's CommandLine calls, in CommandLine.cpp.o,
 * whose static constructor finds the process's argv at every start by
 * reading /proc/self/maps and parsing it line by line with sscanf (about
 * 120,000 instructions in a small C program, more with every mapping of a
 * bigger host: a GTK or Qt program has hundreds). Objects come before
 * archives on the link line, so with the two defined here that member is
 * never extracted and its constructor never runs.
 *
 * The same argv, for free: glibc calls every ELF constructor of the main
 * program and of every shared library (loaded at start or by dlopen) with
 * argc, argv and envp. The library itself never reads CommandLine; this
 * keeps `CommandLine.arguments` what it was for any code that does.
 * Hidden: librestoration exports rst_* only (exports.map). Linked into
 * the `restoration` product alone (Package.swift). */
#include "library_argv.h"

#include <stddef.h>

#define ARGV_HIDDEN __attribute__((visibility("hidden")))

static char **loaderArgv;
static int loaderArgc;
static char **overrideArgv;
static int overrideArgc;
static char *emptyArgv[1];

__attribute__((constructor)) static void capture_argv(int argc, char **argv, char **envp) {
    (void)envp;
    if (argv != NULL && argc >= 0) {
        loaderArgv = argv;
        loaderArgc = argc;
    }
}

/* The runtime's: an override (set by _swift_stdlib_overrideUnsafeArgvArgc)
 * first, then the process's argv. */
ARGV_HIDDEN char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);
ARGV_HIDDEN void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (overrideArgv != NULL) {
        *outArgLen = overrideArgc;
        return overrideArgv;
    }
    if (loaderArgv != NULL) {
        *outArgLen = loaderArgc;
        return loaderArgv;
    }
    *outArgLen = 0;
    return emptyArgv;
}

void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc) {
    overrideArgv = argv;
    overrideArgc = argc;
}
