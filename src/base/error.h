/* Per-thread last error: code and message (ascGetLastError...). */
#ifndef ASC_BASE_ERROR_H
#define ASC_BASE_ERROR_H

#include "base/base.h"

/* ---------------------------------------------------------------- errors */

/* Records code and a formatted message as this thread's last error and
 * returns code, so failing paths read `return asc__error(...)`. */
ascError_t asc__error(ascError_t code, const char *fmt, ...) ASC_PRINTF(2, 3);
ascError_t asc__verror(ascError_t code, const char *fmt, va_list ap);
/* As asc__error, with a message that may be long (compile diagnostics). */
ascError_t asc__error_text(ascError_t code, const char *text);

/* Sets this thread's last error code and leaves its message alone: for
 * code that must not disturb the caller's error state. */
void asc__error_restore(ascError_t code);

/* Returns from the calling function with the error of call, a step of a
 * chain of checks each of which has set the last error when it fails. */
#define ASC_TRY(call)                                                         \
  do {                                                                        \
    ascError_t asc_try_err_ = (call);                                         \
    if (asc_try_err_ != ascSuccess)                                           \
      return asc_try_err_;                                                    \
  } while (0)

#endif /* ASC_BASE_ERROR_H */
