/*
 * Numbers from the environment (base/env.c): one parser for every
 * ASC_* number, so " -1", "+5", "10Q" or an overflow never become a
 * surprise limit.
 */
#include <stdlib.h>

#include "base/env.h"
#include "testutil.h"

static uint64_t read_as(const char *value, uint64_t dflt, uint64_t min,
                        uint64_t max, unsigned flags) {
  asc__env_num n = {"ASC_TEST_ENV_NUMBER", dflt, min, max, flags, true};
  if (value != NULL)
    setenv(n.name, value, 1);
  else
    unsetenv(n.name);
  return asc__env_u64(&n);
}

static void test_plain_numbers(void **state) {
  (void)state;
  assert_int_equal(read_as(NULL, 7, 1, 100, 0), 7);
  assert_int_equal(read_as("", 7, 1, 100, 0), 7);
  assert_int_equal(read_as("42", 7, 1, 100, 0), 42);
  assert_int_equal(read_as("1", 7, 1, 100, 0), 1);
  assert_int_equal(read_as("100", 7, 1, 100, 0), 100);
  assert_int_equal(read_as("0", 7, 0, 100, 0), 0);
}

/* What strtoull alone would accept, and out-of-range values. */
static void test_rejected(void **state) {
  static const char *bad[] = {" -1", "-1", "+5", " 5", "5 ", "0x10", "10Q",
                              "abc", "1e3", "18446744073709551616", "0",
                              "101", "5K"};
  (void)state;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(read_as(bad[i], 7, 1, 100, 0), 7);
}

static void test_suffixes_and_clamp(void **state) {
  (void)state;
  assert_int_equal(read_as("64K", 1, 1, UINT64_MAX, ASC__ENV_SUFFIXES),
                   65536);
  assert_int_equal(read_as("2MiB", 1, 1, UINT64_MAX, ASC__ENV_SUFFIXES),
                   2u << 20);
  assert_int_equal(read_as("1gb", 1, 1, UINT64_MAX, ASC__ENV_SUFFIXES),
                   1u << 30);
  assert_int_equal(read_as("16777216T", 1, 1, UINT64_MAX, ASC__ENV_SUFFIXES),
                   1);   /* 2^64: overflow, the default */
  assert_int_equal(read_as("5000", 1, 0, 1000, ASC__ENV_CLAMP), 1000);
  assert_int_equal(read_as("-5", 1, 0, 1000, ASC__ENV_CLAMP), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_numbers),
      cmocka_unit_test(test_rejected),
      cmocka_unit_test(test_suffixes_and_clamp),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
