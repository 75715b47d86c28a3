/*
 * The fixture of the jit-layer tests (test_driver.c, test_jit.c): a
 * temporary directory under the build tree for the group (setup,
 * teardown) and a fresh disk cache in it per call (new_cache).  Define
 * JIT_FIXTURE_NAME (a string) before including; include after cmocka.h,
 * jit/cache.h and runtime/runtime.h.
 */
#ifndef ASC_TESTS_JIT_FIXTURE_H
#define ASC_TESTS_JIT_FIXTURE_H

static char base[4096];
static int dir_seq;

static int setup(void **state) {
  ASC_UNUSED(state);
  snprintf(base, sizeof base, "%s/test-tmp-" JIT_FIXTURE_NAME "-XXXXXX",
           ASC_BINARY_DIR);
  return mkdtemp(base) == NULL ? -1 : 0;
}

static int teardown(void **state) {
  char *argv[] = {(char *)"rm", (char *)"-rf", base, NULL};
  asc__buf out;
  int st;
  ASC_UNUSED(state);
  asc__buf_init(&out);
  asc__run_process(argv, 20000, &out, &st);
  asc__buf_free(&out);
  return 0;
}

static asc__cache *new_cache(void) {
  char dir[4200];
  asc__cache *c;
  snprintf(dir, sizeof dir, "%s/c%d", base, dir_seq++);
  assert_int_equal(asc__cache_open(&c, dir), ascSuccess);
  return c;
}

#endif /* ASC_TESTS_JIT_FIXTURE_H */
