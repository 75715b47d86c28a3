/*
 * The builtins table (see builtins.h).
 */
#include <math.h>
#include <string.h>

#include "compiler/front/builtins.h"

static const asc__builtin entries[] = {
#define X(id, name, ns, kind, mn, mx, params)                                  \
  {ASC_BI_##id, name, ns, kind, mn, mx, params},
    ASC_BUILTINS(X)
#undef X
};

const asc__builtin *asc__builtin_get(asc__builtin_id id) {
  if (id <= ASC_BI_NONE || id >= ASC_BI_COUNT)
    return NULL;
  return &entries[id - 1];
}

const asc__builtin *asc__builtin_lookup(asc__namespace ns, const char *name) {
  if (ns == ASC_NS_ASC && strcmp(name, "bool") == 0)
    return asc__builtin_get(ASC_BI_DT_BOOL);
  for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
    if ((entries[i].ns & (unsigned)ns) != 0 &&
        strcmp(entries[i].name, name) == 0)
      return &entries[i];
  return NULL;
}

ascDataType asc__builtin_dtype(const asc__builtin *b) {
  switch (b->id) {
  case ASC_BI_DT_BOOL: return ascBool;
  case ASC_BI_DT_INT8: return ascInt8;
  case ASC_BI_DT_INT16: return ascInt16;
  case ASC_BI_DT_INT32: return ascInt32;
  case ASC_BI_DT_INT64: return ascInt64;
  case ASC_BI_DT_UINT8: return ascUInt8;
  case ASC_BI_DT_UINT16: return ascUInt16;
  case ASC_BI_DT_UINT32: return ascUInt32;
  case ASC_BI_DT_UINT64: return ascUInt64;
  case ASC_BI_DT_FLOAT16: return ascFloat16;
  case ASC_BI_DT_BFLOAT16: return ascBFloat16;
  case ASC_BI_DT_FLOAT32: return ascFloat32;
  case ASC_BI_DT_FLOAT64: return ascFloat64;
  default: return ascDataTypeCount;
  }
}

double asc__builtin_value(const asc__builtin *b) {
  switch (b->id) {
  case ASC_BI_PI: return 3.141592653589793;
  case ASC_BI_E: return 2.718281828459045;
  case ASC_BI_INF: return HUGE_VAL;
  case ASC_BI_NAN: return NAN;
  default: return 0.0;
  }
}

int asc__builtin_param_index(const asc__builtin *b, const char *name) {
  const char *p = b->params;
  size_t n = strlen(name);
  int i = 0;

  while (*p != '\0') {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == n && memcmp(p, name, n) == 0)
      return i;
    if (e == NULL)
      break;
    p = e + 1;
    i++;
  }
  return -1;
}
