#include "base/fastmath.h"

#include <string.h>

#include "base/base.h"

static const struct {
  const char *name;
  unsigned bit;
} flags[] = {
    {"contract", ASC_FASTMATH_CONTRACT}, {"reassoc", ASC_FASTMATH_REASSOC},
    {"nnan", ASC_FASTMATH_NNAN},         {"ninf", ASC_FASTMATH_NINF},
    {"nsz", ASC_FASTMATH_NSZ},           {"arcp", ASC_FASTMATH_ARCP},
    {"afn", ASC_FASTMATH_AFN},
};

unsigned asc__fastmath_bit(const char *name, size_t len) {
  for (size_t i = 0; i < ASC_ARRAY_SIZE(flags); i++)
    if (strlen(flags[i].name) == len && memcmp(flags[i].name, name, len) == 0)
      return flags[i].bit;
  return 0;
}

void asc__fastmath_names(asc__buf *out, unsigned mask) {
  const char *sep = "";
  for (size_t i = 0; i < ASC_ARRAY_SIZE(flags); i++)
    if (mask & flags[i].bit) {
      asc__buf_printf(out, "%s%s", sep, flags[i].name);
      sep = ",";
    }
}
