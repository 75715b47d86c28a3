/* Error model: names and strings from the X-macro, per-thread last error,
 * messages, version. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/runtime.h"

typedef struct err_entry {
  ascError_t code;
  const char *name;
  const char *msg;
} err_entry;

static const err_entry all_errors[] = {
#define ENTRY_(name, value, msg) {name, #name, msg},
    ASC_ERROR_MAP(ENTRY_)
#undef ENTRY_
};

static void test_every_code_has_name_and_string(void **state) {
  (void)state;
  assert_true(ASC_ARRAY_SIZE(all_errors) >= 19);
  for (size_t i = 0; i < ASC_ARRAY_SIZE(all_errors); i++) {
    const err_entry *e = &all_errors[i];
    assert_string_equal(ascGetErrorName(e->code), e->name);
    assert_string_equal(ascGetErrorString(e->code), e->msg);
    assert_string_not_equal(ascGetErrorString(e->code),
                            "unrecognized error code");
    /* Codes are distinct. */
    for (size_t j = 0; j < i; j++)
      assert_int_not_equal(all_errors[j].code, e->code);
  }
  assert_string_equal(ascGetErrorName(ascSuccess), "ascSuccess");
  assert_string_equal(ascGetErrorString(ascErrorOutOfMemory), "out of memory");
}

static void test_unknown_codes(void **state) {
  /* The first code past the map: codes are 0 .. count - 1. */
  static const int bad[] = {-1, (int)ASC_ARRAY_SIZE(all_errors), 100, 12345,
                            INT32_MIN, INT32_MAX};
  (void)state;
  for (size_t i = 0; i < ASC_ARRAY_SIZE(bad); i++) {
    assert_string_equal(ascGetErrorName((ascError_t)bad[i]),
                        "unrecognized error code");
    assert_string_equal(ascGetErrorString((ascError_t)bad[i]),
                        "unrecognized error code");
  }
}

static void test_get_clears_peek_does_not(void **state) {
  (void)state;
  (void)ascGetLastError();
  assert_int_equal(ascPeekAtLastError(), ascSuccess);
  assert_int_equal(ascGetLastError(), ascSuccess);

  assert_int_equal(ascGetVersion(NULL), ascErrorInvalidValue);
  assert_int_equal(ascPeekAtLastError(), ascErrorInvalidValue);
  assert_int_equal(ascPeekAtLastError(), ascErrorInvalidValue);
  assert_int_equal(ascGetLastError(), ascErrorInvalidValue);
  assert_int_equal(ascGetLastError(), ascSuccess);
  assert_int_equal(ascPeekAtLastError(), ascSuccess);
}

static void test_successful_calls_keep_last_error(void **state) {
  int v = 0;
  (void)state;
  (void)ascGetLastError();
  assert_int_equal(ascGetVersion(NULL), ascErrorInvalidValue);
  assert_int_equal(ascGetVersion(&v), ascSuccess);
  assert_int_equal(ascPeekAtLastError(), ascErrorInvalidValue);
  (void)ascGetLastError();
}

static void test_message_stable_until_next_failure(void **state) {
  const char *m1;
  char copy[256];
  int v;
  (void)state;

  assert_int_equal(asc__error(ascErrorInternal, "first %d", 1),
                   ascErrorInternal);
  m1 = ascGetLastErrorMessage();
  assert_string_equal(m1, "first 1");
  snprintf(copy, sizeof copy, "%s", m1);
  /* Successful calls and reading the error leave the message alone. */
  assert_int_equal(ascGetVersion(&v), ascSuccess);
  assert_int_equal(ascGetLastError(), ascErrorInternal);
  assert_string_equal(ascGetLastErrorMessage(), copy);
  /* The next failure replaces it. */
  assert_int_equal(ascGetVersion(NULL), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "version"));
  assert_string_not_equal(ascGetLastErrorMessage(), copy);
  (void)ascGetLastError();
}

static void test_long_message_kept_whole(void **state) {
  char big[3000];
  (void)state;
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  asc__error(ascErrorCompile, "%s|end", big);
  assert_int_equal(strlen(ascGetLastErrorMessage()), sizeof big - 1 + 4);
  assert_string_equal(ascGetLastErrorMessage() + sizeof big - 1, "|end");
  asc__error_text(ascErrorCompile, "diag: line 1\n  ^");
  assert_string_equal(ascGetLastErrorMessage(), "diag: line 1\n  ^");
  assert_int_equal(ascGetLastError(), ascErrorCompile);
}

typedef struct thread_probe {
  ascError_t seen_before;
  ascError_t seen_after;
  char message[128];
} thread_probe;

static void *other_thread(void *arg) {
  thread_probe *t = arg;
  t->seen_before = ascPeekAtLastError();
  asc__error(ascErrorTimeout, "thread message");
  t->seen_after = ascPeekAtLastError();
  snprintf(t->message, sizeof t->message, "%s", ascGetLastErrorMessage());
  return NULL;
}

static void test_per_thread_isolation(void **state) {
  pthread_t th;
  thread_probe t;
  (void)state;

  memset(&t, 0, sizeof t);
  asc__error(ascErrorNotReady, "main message");
  assert_int_equal(pthread_create(&th, NULL, other_thread, &t), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  /* The other thread started clean and its failure stayed there. */
  assert_int_equal(t.seen_before, ascSuccess);
  assert_int_equal(t.seen_after, ascErrorTimeout);
  assert_string_equal(t.message, "thread message");
  assert_int_equal(ascPeekAtLastError(), ascErrorNotReady);
  assert_string_equal(ascGetLastErrorMessage(), "main message");
  assert_int_equal(ascGetLastError(), ascErrorNotReady);
}

static void test_version(void **state) {
  int v = -1;
  (void)state;
  assert_int_equal(ascGetVersion(&v), ascSuccess);
  assert_int_equal(v, ASC_VERSION_MAJOR * 10000 + ASC_VERSION_MINOR * 100 +
                          ASC_VERSION_PATCH);
  assert_true(v >= 100); /* at least 0.1.0 */
  assert_int_equal(ascGetVersion(NULL), ascErrorInvalidValue);
  (void)ascGetLastError();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_code_has_name_and_string),
      cmocka_unit_test(test_unknown_codes),
      cmocka_unit_test(test_get_clears_peek_does_not),
      cmocka_unit_test(test_successful_calls_keep_last_error),
      cmocka_unit_test(test_message_stable_until_next_failure),
      cmocka_unit_test(test_long_message_kept_whole),
      cmocka_unit_test(test_per_thread_isolation),
      cmocka_unit_test(test_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
