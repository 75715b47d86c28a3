/*
 * The stream-order interface of pool.h.  Until streams exist, the only
 * stream is the default one and every operation on it completes before the
 * call that enqueues it returns, so every position is reached as soon as it
 * exists.
 */
#include "pool.h"

ascError_t asc__order_stream(asc__device *d, ascStream_t s, void **key) {
  if (s != NULL)
    return asc__error(ascErrorInvalidHandle, "stream %p is not a live stream",
                      (void *)s);
  *key = d;
  return ascSuccess;
}

uint64_t asc__order_now(void *key) {
  ASC_UNUSED(key);
  return 0;
}

bool asc__order_reached(void *key, uint64_t pos) {
  ASC_UNUSED(key);
  ASC_UNUSED(pos);
  return true;
}

bool asc__order_follows(void *waiter, void *key, uint64_t pos) {
  ASC_UNUSED(waiter);
  ASC_UNUSED(key);
  ASC_UNUSED(pos);
  return true;
}

bool asc__order_wait(void *waiter, void *key) {
  ASC_UNUSED(waiter);
  ASC_UNUSED(key);
  return true;
}
