/* The hardware CRC-32C instruction, for RestorationArchive's checksum.
 * Internal to the library (not installed; hidden from librestoration's
 * exports). The rest of the codec is Swift; this is the one thing Swift
 * cannot reach portably: a CPU instruction chosen at run time. */
#ifndef RESTORATION_CRC32C_HW_H
#define RESTORATION_CRC32C_HW_H
#include <stddef.h>
#include <stdint.h>

/** 1 when this CPU has the CRC-32C instruction (x86-64: SSE4.2), else 0.
 *  Detected at run time; cheap after the first call. */
int restoration_crc32c_hw_available(void);

/** Runs the raw, reflected CRC-32C register `reg` (no pre/post inversion)
 *  over `n` bytes at `p` with the CPU instruction. Only call it when
 *  restoration_crc32c_hw_available() returned 1. */
uint32_t restoration_crc32c_hw_run(uint32_t reg, const void *p, size_t n);

#endif
