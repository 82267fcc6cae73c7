/* librestoration.so's own definitions of the Swift runtime's two argv entry
 * points (argv.c). Nothing to call: the Swift standard library's
 * CommandLine reaches them by name. */
#ifndef RESTORATION_LIBRARY_ARGV_H
#define RESTORATION_LIBRARY_ARGV_H
#endif
