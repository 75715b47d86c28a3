/* Devices: count, current device per host thread, properties, and core
 * discovery on synthetic, XML and narrowed topologies (each in a child
 * process, as the topology is loaded once per process). */
#include <hwloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/runtime.h"
#include "subproc.h"

#define SYNTH_2x4 "HWLOC_SYNTHETIC=pack:2 core:4 pu:1"

/* ---------------------------------------------------------------- child */

/* How many of hwloc's plugins (hwloc_pci.so, hwloc_gl.so, ...) this
 * process has mapped. */
static int mapped_hwloc_plugins(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[1024];
  int n = 0;
  if (f == NULL)
    return -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (strstr(line, "/hwloc/hwloc_") != NULL && strstr(line, "r-xp") != NULL)
      n++;
  fclose(f);
  return n;
}

/* Prints what the runtime made of this process's topology. */
static int child_props(void) {
  ascDeviceProp p;
  ascError_t e = ascInit(0);
  int count = -1;

  printf("init=%s\n", ascGetErrorName(e));
  printf("message=%s\n", ascGetLastErrorMessage());
  if (e != ascSuccess)
    return 0;
  e = ascGetDeviceCount(&count);
  printf("count_status=%s\ncount=%d\n", ascGetErrorName(e), count);
  e = ascGetDeviceProperties(&p, 0);
  printf("props_status=%s\n", ascGetErrorName(e));
  printf("cores=%d\nnuma=%d\nsockets=%d\nfirstCore=%d\n", p.cores,
         p.numaNodes, p.sockets, p.firstCore);
  printf("l1=%zu\nl2=%zu\nl3=%zu\nmem=%zu\nsimd=%d\n", p.l1CacheSize,
         p.l2CacheSize, p.l3CacheSize, p.totalGlobalMem, p.simdWidth);
  printf("hwloc_plugins=%d\n", mapped_hwloc_plugins());
  printf("plugins_path=%s\n", getenv("HWLOC_PLUGINS_PATH") != NULL
                                   ? getenv("HWLOC_PLUGINS_PATH")
                                   : "(unset)");
  return 0;
}

static int child_main(const char *mode) {
  if (strcmp(mode, "props") == 0)
    return child_props();
  fprintf(stderr, "unknown child mode %s\n", mode);
  return 2;
}

/* Runs child_props in a child with env set; asserts it exited cleanly. */
static void run_props(const char *const *env, char *out, size_t outsz) {
  int rc = subproc_run("props", env, out, outsz);
  if (rc != 0)
    print_error("child output:\n%s\n", out);
  assert_int_equal(rc, 0);
}

static void expect_str(const char *out, const char *key, const char *want) {
  char buf[512];
  const char *got = subproc_get(out, key, buf, sizeof buf);
  if (got == NULL)
    print_error("no %s= in child output:\n%s\n", key, out);
  assert_non_null(got);
  assert_string_equal(got, want);
}

/* --------------------------------------------------------- this process */

static void test_count_and_init(void **state) {
  int n = -1;
  (void)state;
  assert_int_equal(ascInit(0), ascSuccess);
  assert_int_equal(ascInit(1), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "flags"));
  assert_int_equal(ascGetLastError(), ascErrorInvalidValue);
  assert_int_equal(ascGetDeviceCount(&n), ascSuccess);
  assert_int_equal(n, 1);
  assert_int_equal(ascGetDeviceCount(NULL), ascErrorInvalidValue);
  assert_int_equal(ascGetLastError(), ascErrorInvalidValue);
}

static void test_set_get_device(void **state) {
  int dev = -1;
  (void)state;
  assert_int_equal(ascGetDevice(&dev), ascSuccess);
  assert_int_equal(dev, 0);
  assert_int_equal(ascSetDevice(0), ascSuccess);
  assert_int_equal(ascGetDevice(NULL), ascErrorInvalidValue);
  assert_int_equal(ascSetDevice(1), ascErrorInvalidDevice);
  assert_non_null(strstr(ascGetLastErrorMessage(), "device 1"));
  assert_int_equal(ascSetDevice(-1), ascErrorInvalidDevice);
  assert_int_equal(ascSetDevice(INT32_MAX), ascErrorInvalidDevice);
  /* A failed set leaves the current device alone. */
  assert_int_equal(ascGetDevice(&dev), ascSuccess);
  assert_int_equal(dev, 0);
  (void)ascGetLastError();
}

typedef struct dev_probe {
  int before, after;
  ascError_t set_err;
} dev_probe;

static void *device_thread(void *arg) {
  dev_probe *p = arg;
  p->before = -1;
  p->after = -1;
  (void)ascGetDevice(&p->before);
  /* The only device is 0; an invalid ordinal must not leak elsewhere. */
  p->set_err = ascSetDevice(5);
  (void)ascGetDevice(&p->after);
  return NULL;
}

static void test_device_per_thread(void **state) {
  pthread_t th;
  dev_probe p;
  int dev = -1;
  (void)state;
  (void)ascGetLastError();
  assert_int_equal(pthread_create(&th, NULL, device_thread, &p), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(p.before, 0);
  assert_int_equal(p.set_err, ascErrorInvalidDevice);
  assert_int_equal(p.after, 0);
  /* The other thread's failure is not this thread's last error. */
  assert_int_equal(ascPeekAtLastError(), ascSuccess);
  assert_int_equal(ascGetDevice(&dev), ascSuccess);
  assert_int_equal(dev, 0);
}

static void test_properties_sane(void **state) {
  ascDeviceProp p;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  (void)state;

  memset(&p, 0xa5, sizeof p);
  assert_int_equal(ascGetDeviceProperties(&p, 0), ascSuccess);
  assert_true(p.cores >= 1);
  assert_true(p.cores <= ncpu);
  assert_true(p.numaNodes >= 1);
  assert_true(p.sockets >= 1);
  assert_true(p.firstCore >= 0);
  assert_true(p.firstCore < ncpu);
  assert_true(p.simdWidth == 8 || p.simdWidth == 16 || p.simdWidth == 32 ||
              p.simdWidth == 64);
  assert_true(p.totalGlobalMem > ((size_t)64 << 20));
  assert_non_null(memchr(p.name, '\0', sizeof p.name));
  assert_true(strlen(p.name) > 0);

  assert_int_equal(ascGetDeviceProperties(NULL, 0), ascErrorInvalidValue);
  assert_int_equal(ascGetDeviceProperties(&p, 1), ascErrorInvalidDevice);
  assert_int_equal(ascGetDeviceProperties(&p, -1), ascErrorInvalidDevice);
  (void)ascGetLastError();
}

static void test_data_types(void **state) {
  (void)state;
  assert_int_equal(ascDataTypeSize(ascFloat32), 4);
  assert_int_equal(ascDataTypeSize(ascBFloat16), 2);
  assert_int_equal(ascDataTypeSize(ascBool), 1);
  assert_int_equal(ascDataTypeSize(ascDataTypeCount), 0);
  assert_int_equal(ascDataTypeSize((ascDataType)-1), 0);
  assert_string_equal(ascDataTypeName(ascUInt16), "uint16");
  assert_null(ascDataTypeName(ascDataTypeCount));
  assert_int_equal(ascDataTypeSize(ascComplex64), 8);
  assert_int_equal(ascDataTypeSize(ascComplex128), 16);
  assert_string_equal(ascDataTypeName(ascComplex64), "complex64");
  assert_string_equal(ascDataTypeName(ascComplex128), "complex128");
}

/* ------------------------------------------------------ child processes */

static void test_synthetic_two_sockets(void **state) {
  static const char *const env[] = {SYNTH_2x4, NULL};
  char out[SUBPROC_OUT_MAX];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  expect_str(out, "props_status", "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "count"), 1);
  assert_int_equal(subproc_get_ll(out, "cores"), 8);
  assert_int_equal(subproc_get_ll(out, "sockets"), 2);
  assert_int_equal(subproc_get_ll(out, "numa"), 1);
  assert_int_equal(subproc_get_ll(out, "firstCore"), 0);
}

static void test_synthetic_two_numa_nodes(void **state) {
  static const char *const env[] = {
      "HWLOC_SYNTHETIC=pack:2 numa:1 core:4 pu:2", NULL};
  char out[SUBPROC_OUT_MAX];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  /* Hyperthreads do not add workers: one per core. */
  assert_int_equal(subproc_get_ll(out, "cores"), 8);
  assert_int_equal(subproc_get_ll(out, "numa"), 2);
  assert_int_equal(subproc_get_ll(out, "sockets"), 2);
}

static void test_visible_cores_single(void **state) {
  static const char *const env[] = {SYNTH_2x4, "ASC_VISIBLE_CORES=1", NULL};
  char out[SUBPROC_OUT_MAX];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "cores"), 1);
  assert_int_equal(subproc_get_ll(out, "firstCore"), 1);
}

static void test_visible_cores_list(void **state) {
  static const char *const env[] = {SYNTH_2x4, "ASC_VISIBLE_CORES=3,5-6",
                                    NULL};
  char out[SUBPROC_OUT_MAX];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "cores"), 3);
  assert_int_equal(subproc_get_ll(out, "firstCore"), 3);
  /* Still the whole machine's sockets. */
  assert_int_equal(subproc_get_ll(out, "sockets"), 2);
}

static void test_visible_cores_empty_intersection(void **state) {
  static const char *const env[] = {SYNTH_2x4, "ASC_VISIBLE_CORES=8-100",
                                    NULL};
  char out[SUBPROC_OUT_MAX];
  char msg[512];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascErrorNoDevice");
  assert_non_null(subproc_get(out, "message", msg, sizeof msg));
  assert_non_null(strstr(msg, "ASC_VISIBLE_CORES"));
  assert_non_null(strstr(msg, "8-100"));
}

static void test_visible_cores_malformed(void **state) {
  static const char *const bad[] = {"abc", "1-", "3-1", "1,,2", "-1",
                                    "1;2", "2-x", "99999"};
  char out[SUBPROC_OUT_MAX];
  char var[64], msg[512];
  (void)state;
  for (size_t i = 0; i < ASC_ARRAY_SIZE(bad); i++) {
    const char *env[] = {SYNTH_2x4, var, NULL};
    snprintf(var, sizeof var, "ASC_VISIBLE_CORES=%s", bad[i]);
    run_props(env, out, sizeof out);
    expect_str(out, "init", "ascErrorInvalidValue");
    assert_non_null(subproc_get(out, "message", msg, sizeof msg));
    assert_non_null(strstr(msg, bad[i]));
  }
}

static void test_xml_topology(void **state) {
  char path[] = "/tmp/asc-test-topo-XXXXXX";
  char var[128], out[SUBPROC_OUT_MAX];
  const char *env[] = {var, NULL};
  hwloc_topology_t topo;
  int fd;
  (void)state;

  fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(hwloc_topology_init(&topo), 0);
  assert_int_equal(
      hwloc_topology_set_synthetic(
          topo, "pack:1 l3:1(size=8388608) l2:3(size=1048576) "
                "l1d:1(size=49152) core:1 pu:2"),
      0);
  assert_int_equal(hwloc_topology_load(topo), 0);
  assert_int_equal(hwloc_topology_export_xml(topo, path, 0), 0);
  hwloc_topology_destroy(topo);

  snprintf(var, sizeof var, "HWLOC_XMLFILE=%s", path);
  run_props(env, out, sizeof out);
  unlink(path);
  expect_str(out, "init", "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "cores"), 3);
  assert_int_equal(subproc_get_ll(out, "sockets"), 1);
  assert_int_equal(subproc_get_ll(out, "l3"), 8388608);
  assert_int_equal(subproc_get_ll(out, "l2"), 1048576);
  assert_int_equal(subproc_get_ll(out, "l1"), 49152);
  assert_int_equal(subproc_get_ll(out, "firstCore"), 0);
}

/* The runtime loads the topology without hwloc's plugins (I/O, OpenCL,
 * GL and libxml2 readers it does not use: tens of milliseconds of a
 * process's first call), and leaves the environment as it was. */
static void test_topology_without_hwloc_plugins(void **state) {
  char out[SUBPROC_OUT_MAX];
  ascDeviceProp p;
  (void)state;
  assert_int_equal(ascGetDeviceProperties(&p, 0), ascSuccess);
  run_props(NULL, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  assert_int_equal(subproc_get_ll(out, "cores"), p.cores);
  assert_int_equal(subproc_get_ll(out, "hwloc_plugins"), 0);
  expect_str(out, "plugins_path", "(unset)");
}

/* A plugin path the user set is theirs: used and kept. */
static void test_user_hwloc_plugins_path_kept(void **state) {
  static const char *const env[] = {
      "HWLOC_PLUGINS_PATH=/nonexistent/asc-no-plugins", NULL};
  char out[SUBPROC_OUT_MAX];
  (void)state;
  run_props(env, out, sizeof out);
  expect_str(out, "init", "ascSuccess");
  assert_true(subproc_get_ll(out, "cores") >= 1);
  expect_str(out, "plugins_path", "/nonexistent/asc-no-plugins");
}

static void test_xml_missing_file(void **state) {
  static const char *const env[] = {
      "HWLOC_XMLFILE=/nonexistent/asc-no-such-topology.xml", NULL};
  char out[SUBPROC_OUT_MAX];
  char init[64];
  (void)state;
  /* hwloc falls back to the real machine or fails; either way the child
   * reports a status instead of crashing. */
  run_props(env, out, sizeof out);
  assert_non_null(subproc_get(out, "init", init, sizeof init));
  assert_true(strcmp(init, "ascSuccess") == 0 ||
              strcmp(init, "ascErrorNotInitialized") == 0);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_count_and_init),
      cmocka_unit_test(test_set_get_device),
      cmocka_unit_test(test_device_per_thread),
      cmocka_unit_test(test_properties_sane),
      cmocka_unit_test(test_data_types),
      cmocka_unit_test(test_synthetic_two_sockets),
      cmocka_unit_test(test_synthetic_two_numa_nodes),
      cmocka_unit_test(test_visible_cores_single),
      cmocka_unit_test(test_visible_cores_list),
      cmocka_unit_test(test_visible_cores_empty_intersection),
      cmocka_unit_test(test_visible_cores_malformed),
      cmocka_unit_test(test_xml_topology),
      cmocka_unit_test(test_xml_missing_file),
      cmocka_unit_test(test_topology_without_hwloc_plugins),
      cmocka_unit_test(test_user_hwloc_plugins_path_kept),
  };
  if (argc >= 3 && strcmp(argv[1], "--child") == 0)
    return child_main(argv[2]);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
