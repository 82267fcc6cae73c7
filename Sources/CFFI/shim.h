/* libffi types through static-inline accessors: ffi_type_* are mutable C
 * globals, which Swift 6 refuses to touch directly, and some are macros. */
#ifndef RESTORATION_CFFI_SHIM_H
#define RESTORATION_CFFI_SHIM_H
#include <ffi.h>
static inline ffi_type *cffi_void(void)    { return &ffi_type_void; }
static inline ffi_type *cffi_pointer(void) { return &ffi_type_pointer; }
static inline ffi_type *cffi_uint32(void)  { return &ffi_type_uint32; }
static inline ffi_type *cffi_sint32(void)  { return &ffi_type_sint32; }
static inline ffi_type *cffi_sint64(void)  { return &ffi_type_sint64; }
static inline ffi_type *cffi_uint64(void)  { return &ffi_type_uint64; }
static inline ffi_type *cffi_double(void)  { return &ffi_type_double; }
#endif
