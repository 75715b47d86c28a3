/*
 * A program outside the libasc tree, built against an installed libasc:
 * with CMake (find_package(asc), see CMakeLists.txt) or with make and
 * pkg-config (see Makefile).  Exits 0 when every call behaves.
 */
#include <stdio.h>
#include <string.h>

#include <asc/asc.h>

#define CHECK(call)                                                     \
  do {                                                                  \
    ascError_t e_ = (call);                                             \
    if (e_ != ascSuccess) {                                             \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, ascGetErrorName(e_), \
              ascGetLastErrorMessage());                                \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main(void) {
  ascDeviceProp prop;
  unsigned char *buf = NULL;
  int version = 0;
  size_t n = 1 << 20;

  CHECK(ascGetVersion(&version));
  if (version != ASC_VERSION_MAJOR * 10000 + ASC_VERSION_MINOR * 100 +
                     ASC_VERSION_PATCH) {
    fprintf(stderr, "header says %s but the library says %d\n",
            ASC_VERSION_STRING, version);
    return 1;
  }
  CHECK(ascGetDeviceProperties(&prop, 0));
  CHECK(ascMalloc((void **)&buf, n));
  CHECK(ascMemset(buf, 7, n));
  if (buf[0] != 7 || buf[n - 1] != 7) {
    fprintf(stderr, "ascMemset did not fill the block\n");
    return 1;
  }
  CHECK(ascFree(buf));
  if (ascFree(buf) != ascErrorInvalidValue) {
    fprintf(stderr, "a double free was not rejected\n");
    return 1;
  }
  printf("libasc %s: %s, %d cores, %d NUMA node(s): ok\n", ASC_VERSION_STRING,
         prop.name, prop.cores, prop.numaNodes);
  return 0;
}
