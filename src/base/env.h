/*
 * Numbers from the environment, read one way everywhere: a decimal
 * number (optionally with a binary K/M/G/T suffix), inside a range.  An
 * unset or empty variable gives the default silently; anything else that
 * is not such a number gives the default with one warning on stderr per
 * variable and process: a typo must not silently leave a limit at a
 * surprise value.
 */
#ifndef ASC_BASE_ENV_H
#define ASC_BASE_ENV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum {
  ASC__ENV_SUFFIXES = 1u << 0,  /* accept 64K, 1MiB, 2G, 1TB ... */
  ASC__ENV_CLAMP = 1u << 1      /* a value above max gives max, no warning */
};

typedef struct asc__env_num {
  const char *name;             /* the variable */
  uint64_t dflt, min, max;
  unsigned flags;               /* ASC__ENV_* */
  atomic_bool warned;           /* one warning per process */
} asc__env_num;

/* The variable's value as spec says; never fails. */
uint64_t asc__env_u64(asc__env_num *spec);

#endif /* ASC_BASE_ENV_H */
