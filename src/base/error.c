/*
 * Error model: one X-macro list in asc.h, per-thread last error and
 * message.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* This thread's last error.  The message buffer is the only thing a
 * thread owns here; it is freed when the thread exits. */
typedef struct err_tls {
  ascError_t last_error;
  char *message;            /* owned; "" when NULL */
} err_tls;

static _Thread_local err_tls tls_state;
static pthread_key_t tls_key;
static pthread_once_t tls_key_once = PTHREAD_ONCE_INIT;

static void tls_destroy(void *p) {
  err_tls *t = p;
  free(t->message);
  t->message = NULL;
}

static void tls_key_create(void) { pthread_key_create(&tls_key, tls_destroy); }

static err_tls *tls_get(void) { return &tls_state; }

const char *ascGetErrorName(ascError_t error) {
  switch (error) {
#define NAME_CASE_(name, value, msg) \
  case name:                         \
    return #name;
    ASC_ERROR_MAP(NAME_CASE_)
#undef NAME_CASE_
  }
  return "unrecognized error code";
}

const char *ascGetErrorString(ascError_t error) {
  switch (error) {
#define STRING_CASE_(name, value, msg) \
  case name:                           \
    return msg;
    ASC_ERROR_MAP(STRING_CASE_)
#undef STRING_CASE_
  }
  return "unrecognized error code";
}

ascError_t ascGetLastError(void) {
  err_tls *t = tls_get();
  ascError_t e = t->last_error;
  t->last_error = ascSuccess;
  return e;
}

ascError_t ascPeekAtLastError(void) { return tls_get()->last_error; }

const char *ascGetLastErrorMessage(void) {
  err_tls *t = tls_get();
  return t->message ? t->message : "";
}

/* The message buffer uses libc directly: recording an out-of-memory error
 * must not itself go through the failure-injection hook. */
static void set_message(err_tls *t, const char *text, size_t len) {
  char *m;

  pthread_once(&tls_key_once, tls_key_create);
  m = realloc(t->message, len + 1);
  if (m == NULL) {
    /* Keep the old buffer; an empty message beats none. */
    if (t->message != NULL)
      t->message[0] = '\0';
    return;
  }
  memcpy(m, text, len);
  m[len] = '\0';
  t->message = m;
  pthread_setspecific(tls_key, t);
}

ascError_t asc__verror(ascError_t code, const char *fmt, va_list ap) {
  err_tls *t = tls_get();
  char small[512];
  va_list ap2;
  int n;

  t->last_error = code;
  va_copy(ap2, ap);
  n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    set_message(t, "", 0);
    return code;
  }
  if ((size_t)n < sizeof small) {
    set_message(t, small, (size_t)n);
  } else {
    char *big = malloc((size_t)n + 1);
    if (big != NULL) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      set_message(t, big, (size_t)n);
      free(big);
    } else {
      set_message(t, small, sizeof small - 1);
    }
  }
  va_end(ap2);
  return code;
}

ascError_t asc__error(ascError_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  asc__verror(code, fmt, ap);
  va_end(ap);
  return code;
}

ascError_t asc__error_text(ascError_t code, const char *text) {
  err_tls *t = tls_get();
  t->last_error = code;
  set_message(t, text, strlen(text));
  return code;
}

void asc__error_restore(ascError_t code) { tls_get()->last_error = code; }
