/*
 * ascLaunchKernelSync: a launch its caller waits for, on a stream of the
 * calling thread's own (docs/plugins.md); and ascLaunchKernelAndSynchronize,
 * the launch and the wait on any stream, which it uses to join.
 *
 * A framework calls its operators from its own threads and expects the
 * result when the call returns.  One stream per thread keeps concurrent
 * callers from queueing behind each other, and makes the stream's error
 * this launch's error.  A joining caller runs a one-block launch itself
 * the moment it is queued on the idle stream (asc__launch_kernel_here);
 * otherwise the waiting is ascStreamSynchronize's, and the caller runs
 * blocks and loop chunks of its launch like any synchronising thread
 * (docs/streams.md).  A handing-off caller waits on a blocking-sync event,
 * which parks at once and lends nothing.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "base/alloc.h"
#include "base/error.h"
#include "runtime/launch_sync.h"
#include "runtime/stream.h"
#include "runtime/stream_internal.h"

typedef struct {
  ascStream_t stream;
  ascEvent_t done;   /* blocking-sync event of hand-offs; NULL until one */
  uint64_t epoch;    /* sync_epoch when stream and done were made */
  int device;
} sync_state;

/* Counts device resets: a thread's state from an older epoch refers to
 * destroyed handles. */
static _Atomic uint64_t sync_epoch;
static pthread_key_t sync_key;
static pthread_once_t sync_key_once = PTHREAD_ONCE_INIT;
static int sync_key_err;

void asc__launch_sync_forget(void) { atomic_fetch_add(&sync_epoch, 1); }

static void release_handles(sync_state *t) {
  if (t->epoch == atomic_load(&sync_epoch)) {
    if (t->stream != NULL)
      (void)ascStreamDestroy(t->stream);
    if (t->done != NULL)
      (void)ascEventDestroy(t->done);
  }
  t->stream = NULL;
  t->done = NULL;
}

/* At thread exit: the thread's stream and event go with it. */
static void sync_state_destroy(void *p) {
  sync_state *t = p;
  release_handles(t);
  (void)ascGetLastError();
  asc__free(t);
}

static void sync_key_create(void) {
  sync_key_err = pthread_key_create(&sync_key, sync_state_destroy);
}

/* The calling thread's state, with a live stream on the current device. */
static ascError_t thread_state(sync_state **out) {
  sync_state *t = NULL;
  ascError_t err;
  int dev;

  pthread_once(&sync_key_once, sync_key_create);
  if (sync_key_err != 0)
    return asc__error(ascErrorInternal,
                      "ascLaunchKernelSync: cannot create a thread key");
  err = ascGetDevice(&dev);
  if (err != ascSuccess)
    return err;
  t = pthread_getspecific(sync_key);
  if (t == NULL) {
    t = asc__calloc(1, sizeof *t);
    if (t == NULL)
      return asc__error(ascErrorOutOfMemory,
                        "ascLaunchKernelSync: cannot allocate thread state");
    if (pthread_setspecific(sync_key, t) != 0) {
      asc__free(t);
      return asc__error(ascErrorOutOfMemory,
                        "ascLaunchKernelSync: cannot set thread state");
    }
  }
  if (t->stream != NULL &&
      (t->epoch != atomic_load(&sync_epoch) || t->device != dev))
    release_handles(t);
  if (t->stream == NULL) {
    t->epoch = atomic_load(&sync_epoch);
    t->device = dev;
    err = ascStreamCreateWithFlags(&t->stream, ascStreamNonBlocking);
    if (err != ascSuccess) {
      t->stream = NULL;
      return err;
    }
  }
  *out = t;
  return ascSuccess;
}

/* Sleeps until t's stream has run what is queued on it, without running
 * any of it, and returns the error the event carries (a kernel's
 * exception is reported there); ascErrorNotReady if the event could not
 * be used (the caller then joins). */
static ascError_t hand_off(sync_state *t) {
  if (t->done == NULL &&
      ascEventCreateWithFlags(&t->done, ascEventBlockingSync |
                                            ascEventDisableTiming) !=
          ascSuccess) {
    t->done = NULL;
    (void)ascGetLastError();
    return ascErrorNotReady;
  }
  if (ascEventRecord(t->done, t->stream) != ascSuccess) {
    (void)ascGetLastError();
    return ascErrorNotReady;
  }
  return ascEventSynchronize(t->done);
}

ascError_t ascLaunchKernelAndSynchronize(ascKernel_t kernel,
                                         uint32_t blockDim, void **args,
                                         ascStream_t stream) {
  bool done;
  ascError_t err;

  if (asc__in_callback())
    return asc__not_permitted("ascLaunchKernelAndSynchronize");
  err = asc__launch_kernel_here(kernel, blockDim, args, stream, &done);
  if (err != ascSuccess || done)
    return err;
  return ascStreamSynchronize(stream);
}

ascError_t ascLaunchKernelSync(ascKernel_t kernel, uint32_t blockDim,
                               void **args, unsigned int flags) {
  sync_state *t = NULL;
  ascError_t err;

  if ((flags & ~(unsigned)ascLaunchHandOff) != 0)
    return asc__error(ascErrorInvalidValue,
                      "ascLaunchKernelSync: unknown flags 0x%x",
                      flags & ~(unsigned)ascLaunchHandOff);
  if (asc__in_callback())
    return asc__not_permitted("ascLaunchKernelSync");
  err = thread_state(&t);
  if (err != ascSuccess)
    return err;
  /* The thread's stream is idle between its calls: a launch of one
   * block runs right here. */
  if (!(flags & ascLaunchHandOff))
    return ascLaunchKernelAndSynchronize(kernel, blockDim, args, t->stream);
  err = ascLaunchKernel(kernel, blockDim, args, t->stream);
  if (err != ascSuccess)
    return err;
  err = hand_off(t);
  if (err != ascSuccess && err != ascErrorNotReady) {
    /* reported through the event: the stream keeps no copy to report
     * again, and the message of err stays this thread's last */
    (void)ascStreamSynchronize(t->stream);
    return err;
  }
  return ascStreamSynchronize(t->stream);
}
