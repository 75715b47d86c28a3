/*
 * Numbers from the environment (env.h).
 */
#include "base/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Parses s as env.h describes into *out; false if it is not a number in
 * range. */
static bool parse(const char *s, const asc__env_num *spec, uint64_t *out) {
  char *end;
  unsigned long long v;
  int shift = 0;

  if (*s < '0' || *s > '9') /* strtoull would take "-1", " 5", "+5" */
    return false;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno != 0)
    return false;
  if ((spec->flags & ASC__ENV_SUFFIXES) && *end != '\0') {
    switch (*end) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: return false;
    }
    end++;
    if (*end == 'i')
      end++;
    if (*end == 'B' || *end == 'b')
      end++;
  }
  if (*end != '\0' || v > (UINT64_MAX >> shift))
    return false;
  v <<= shift;
  if (v < spec->min)
    return false;
  if (v > spec->max) {
    if (!(spec->flags & ASC__ENV_CLAMP))
      return false;
    v = spec->max;
  }
  *out = v;
  return true;
}

uint64_t asc__env_u64(asc__env_num *spec) {
  const char *s = getenv(spec->name);
  uint64_t v;

  if (s == NULL || *s == '\0')
    return spec->dflt;
  if (parse(s, spec, &v))
    return v;
  if (!atomic_exchange(&spec->warned, true))
    fprintf(stderr,
            "libasc: warning: %s=%s is not a number from %llu to %llu%s; "
            "using the default %llu\n",
            spec->name, s, (unsigned long long)spec->min,
            (unsigned long long)spec->max,
            (spec->flags & ASC__ENV_SUFFIXES)
                ? " (with an optional K, M, G or T suffix)"
                : "",
            (unsigned long long)spec->dflt);
  return spec->dflt;
}
