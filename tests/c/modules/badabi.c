/* A module built for another ABI version: loading must fail cleanly. */
#include "asc/kernel_abi.h"

__attribute__((visibility("default"))) const asc_module_desc asc_module_v1 = {
    ASC_KABI_VERSION + 100, 0, NULL};
