/* Part of the plugin SDK (installed with the devel headers): fill a blobrt_error and
 * return a status. Header-only and C99-compatible so a plugin needs nothing from libblobrt. */
#ifndef BLOBRT_PLUGIN_ERROR_H
#define BLOBRT_PLUGIN_ERROR_H

#include <stdarg.h>
#include <stdio.h>

#include "blobrt/plugin_abi.h"

static inline int blobrt_fail(blobrt_error* err, int status, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static inline int blobrt_fail(blobrt_error* err, int status, const char* format, ...) {
  if (err) {
    va_list args;
    va_start(args, format);
    vsnprintf(err->message, sizeof err->message, format, args);
    va_end(args);
  }
  return status;
}

#endif
