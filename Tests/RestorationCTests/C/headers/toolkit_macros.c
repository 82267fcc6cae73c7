/* toolkit_macros.c: the public headers compile after the macros that Qt,
 * X11 (Xlib.h, X.h) and GLib define, in C (C11) and C++ (C++17), with
 * -Wall -Wextra -Werror. A parameter or member named like one of these
 * macros would be rewritten by it and break the host's build (a `signals`
 * parameter becomes `public` in every Qt program). Compiled, never run. */

/* Qt (qobjectdefs.h, qglobal.h) */
#define signals public
#define slots
#define emit
#define foreach
#define forever
#define Q_OBJECT
#define Q_SIGNALS public
#define Q_SLOTS
#define Q_EMIT
#define Q_SIGNAL
#define Q_SLOT
/* X11 (X.h, Xlib.h) */
#define None 0L
#define Status int
#define Bool int
#define True 1
#define False 0
#define Success 0
#define Always 2
#define CurrentTime 0L
#define NoSymbol 0L
#define Above 0
#define Below 1
#define Complex 0
#define Convex 2
#define Nonconvex 1
#define KeyPress 2
#define FocusIn 9
#define DestroyAll 0
#define InputOutput 1
#define InputOnly 2
/* GLib (gmacros.h) */
#define TRUE 1
#define FALSE 0
#define MIN(a, b) (((a) < (b)) ? (a) : (b))
#define MAX(a, b) (((a) > (b)) ? (a) : (b))
#define ABS(a) (((a) < 0) ? -(a) : (a))
#define CLAMP(x, low, high) (((x) > (high)) ? (high) : (((x) < (low)) ? (low) : (x)))
#define G_GNUC_UNUSED
/* what GNU modes predefine (gnu11, gnu++17) */
#ifndef linux
#define linux 1
#endif
#ifndef unix
#define unix 1
#endif

#include "restoration.h"
#include "restoration_plugin.h"
#include "restoration_store.h"
/* Included twice: the guards hold. */
#include "restoration.h"
#include "restoration_store.h"
#include "restoration_plugin.h"

int toolkit_macros_compiled(void);
int toolkit_macros_compiled(void) { return RST_ENGINE_OPTIONS_VERSION; }
