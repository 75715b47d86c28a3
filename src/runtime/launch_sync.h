/* ascLaunchKernelSync's per-thread streams and the launches their
 * callers run themselves (launch_sync.c). */
#ifndef ASC_LAUNCH_SYNC_H
#define ASC_LAUNCH_SYNC_H

#include <stdbool.h>

#include "asc/asc.h"

/* Called by ascDeviceReset, which destroys every stream: the streams the
 * threads keep for ascLaunchKernelSync are then forgotten, not used or
 * destroyed again (their records may serve other streams by then). */
void asc__launch_sync_forget(void);

/* module.c: ascLaunchKernel on stream, asking for the launch to run on
 * the calling thread (asc__stream_launch's ran_here).  *done tells
 * whether it did; the call then returns what ascStreamSynchronize would
 * (the launch's outcome), and the stream has done its work.  Otherwise
 * the launch is queued (or failed) and the caller synchronises. */
ascError_t asc__launch_kernel_here(ascKernel_t kernel, uint32_t blockDim,
                                   void **args, ascStream_t stream,
                                   bool *done);

#endif /* ASC_LAUNCH_SYNC_H */
