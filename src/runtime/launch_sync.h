/* ascLaunchKernelSync's per-thread streams (launch_sync.c). */
#ifndef ASC_LAUNCH_SYNC_H
#define ASC_LAUNCH_SYNC_H

/* Called by ascDeviceReset, which destroys every stream: the streams the
 * threads keep for ascLaunchKernelSync are then forgotten, not used or
 * destroyed again (their records may serve other streams by then). */
void asc__launch_sync_forget(void);

#endif /* ASC_LAUNCH_SYNC_H */
