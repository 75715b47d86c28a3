/* Growable buffers (base/buf.h): a buffer in the caller's storage stays
 * there while it fits, moves to the heap when it outgrows it, and a
 * failed move leaves it marked out of memory with its text intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"

static void test_buf_on_storage(void **state) {
  char small[16];
  asc__buf b;
  (void)state;
  asc__buf_init_on(&b, small, sizeof small);
  assert_string_equal(asc__buf_str(&b), "");
  asc__buf_puts(&b, "k(f32[1]");
  asc__buf_printf(&b, ", i%d)", 64);
  assert_ptr_equal(b.data, small);
  assert_string_equal(asc__buf_str(&b), "k(f32[1], i64)");
  /* 15 characters and the terminator fill it; one more moves it */
  asc__buf_puts(&b, "!");
  assert_ptr_equal(b.data, small);
  asc__buf_puts(&b, " aliased");
  assert_ptr_not_equal(b.data, small);
  assert_false(b.oom);
  assert_string_equal(asc__buf_str(&b), "k(f32[1], i64)! aliased");
  asc__buf_free(&b);
  assert_null(b.data);
  /* freeing one that never moved leaves the storage alone */
  asc__buf_init_on(&b, small, sizeof small);
  asc__buf_puts(&b, "abc");
  asc__buf_free(&b);
  assert_string_equal(small, "abc");
}

static bool fail_all(size_t size, void *ud) {
  (void)size;
  (void)ud;
  return true;
}

static void test_buf_on_storage_oom(void **state) {
  char small[8];
  asc__buf b;
  (void)state;
  asc__buf_init_on(&b, small, sizeof small);
  asc__buf_puts(&b, "abcd");
  asc__set_alloc_fail_hook(fail_all, NULL);
  asc__buf_puts(&b, "efghijkl");
  asc__set_alloc_fail_hook(NULL, NULL);
  assert_true(b.oom);
  assert_ptr_equal(b.data, small);
  assert_string_equal(asc__buf_str(&b), "abcd");
  asc__buf_puts(&b, "x");
  assert_string_equal(asc__buf_str(&b), "abcd");
  asc__buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buf_on_storage),
      cmocka_unit_test(test_buf_on_storage_oom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
