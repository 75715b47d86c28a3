/*
 * An XLA FFI handler that runs a libasc kernel: what asc.jax registers as
 * the CPU custom call "asc_launch" (docs/plugins.md).  Written against the
 * C header of XLA's FFI that jaxlib ships (jax.ffi.include_dir()); asc.jax
 * compiles it on first use and keeps the result in the kernel cache.
 *
 * One handler serves every kernel.  Its attributes say which:
 *   kernel  u64    the ascKernel_t (asc.Kernel._handle)
 *   blocks  i64    blockDim of the launch
 *   flags   i64    ascLaunchKernelSync flags (0: the XLA thread joins)
 *   pmap    i64[]  for each kernel parameter, its operand: k >= 0 is
 *                  input k, k < 0 is result -1 - k
 * Tensor parameters get the buffer as a row-major ascTensor; scalar
 * parameters get a 0-d input buffer, of the annotated dtype for annotated
 * scalars (asc.jax casts it), as a typed ascScalar for generic ones.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "asc/asc.h"
#include "xla/ffi/api/c_api.h"

#define MAX_PARAMS 64

/* The thread that ran the last launch (its kernel thread id), for tests
 * that check where XLA runs custom calls. */
static _Atomic int64_t last_tid;

__attribute__((visibility("default"))) int64_t asc_xla_last_thread(void) {
  return atomic_load(&last_tid);
}

static XLA_FFI_Error *ffi_error(const XLA_FFI_CallFrame *cf,
                                XLA_FFI_Error_Code code, const char *msg) {
  XLA_FFI_Error_Create_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  a.message = msg;
  a.errc = code;
  return cf->api->XLA_FFI_Error_Create(&a);
}

static int dtype_from_xla(XLA_FFI_DataType t) {
  switch (t) {
  case XLA_FFI_DataType_PRED: return ascBool;
  case XLA_FFI_DataType_S8: return ascInt8;
  case XLA_FFI_DataType_S16: return ascInt16;
  case XLA_FFI_DataType_S32: return ascInt32;
  case XLA_FFI_DataType_S64: return ascInt64;
  case XLA_FFI_DataType_U8: return ascUInt8;
  case XLA_FFI_DataType_U16: return ascUInt16;
  case XLA_FFI_DataType_U32: return ascUInt32;
  case XLA_FFI_DataType_U64: return ascUInt64;
  case XLA_FFI_DataType_F16: return ascFloat16;
  case XLA_FFI_DataType_BF16: return ascBFloat16;
  case XLA_FFI_DataType_F32: return ascFloat32;
  case XLA_FFI_DataType_F64: return ascFloat64;
  case XLA_FFI_DataType_C64: return ascComplex64;
  case XLA_FFI_DataType_C128: return ascComplex128;
  default: return -1;
  }
}

/* The attribute called name, of the given type; NULL if absent. */
static void *find_attr(const XLA_FFI_CallFrame *cf, const char *name,
                       XLA_FFI_AttrType type) {
  size_t n = strlen(name);
  for (int64_t i = 0; i < cf->attrs.size; i++) {
    const XLA_FFI_ByteSpan *s = cf->attrs.names[i];
    if (s->len == n && memcmp(s->ptr, name, n) == 0 &&
        cf->attrs.types[i] == type)
      return cf->attrs.attrs[i];
  }
  return NULL;
}

static int64_t scalar_i64(const XLA_FFI_Scalar *s) {
  switch (s->dtype) {
  case XLA_FFI_DataType_S32: return *(const int32_t *)s->value;
  case XLA_FFI_DataType_U32: return *(const uint32_t *)s->value;
  case XLA_FFI_DataType_U64: return (int64_t)*(const uint64_t *)s->value;
  default: return *(const int64_t *)s->value;
  }
}

static void fill_tensor(ascTensor *t, const XLA_FFI_Buffer *b, int dt) {
  int64_t acc = 1;
  memset(t, 0, sizeof *t);
  t->data = b->data;
  t->dtype = (ascDataType)dt;
  t->ndim = (int32_t)b->rank;
  for (int64_t d = b->rank - 1; d >= 0; d--) {
    t->shape[d] = b->dims[d];
    t->strides[d] = acc;
    acc *= b->dims[d] > 0 ? b->dims[d] : 1;
  }
}

static void read_scalar(ascScalar *s, const void *p, int dt) {
  memset(s, 0, sizeof *s);
  s->dtype = (ascDataType)dt;
  switch (dt) {
  case ascBool: s->value.i = *(const uint8_t *)p != 0; break;
  case ascInt8: s->value.i = *(const int8_t *)p; break;
  case ascInt16: s->value.i = *(const int16_t *)p; break;
  case ascInt32: s->value.i = *(const int32_t *)p; break;
  case ascInt64: s->value.i = *(const int64_t *)p; break;
  case ascUInt8: s->value.u = *(const uint8_t *)p; break;
  case ascUInt16: s->value.u = *(const uint16_t *)p; break;
  case ascUInt32: s->value.u = *(const uint32_t *)p; break;
  case ascUInt64: s->value.u = *(const uint64_t *)p; break;
  case ascFloat32: s->value.f = *(const float *)p; break;
  default: s->value.f = *(const double *)p; break;
  }
}

static XLA_FFI_Error *execute(XLA_FFI_CallFrame *cf) {
  const XLA_FFI_Scalar *ka = find_attr(cf, "kernel", XLA_FFI_AttrType_SCALAR);
  const XLA_FFI_Scalar *ba = find_attr(cf, "blocks", XLA_FFI_AttrType_SCALAR);
  const XLA_FFI_Scalar *fa = find_attr(cf, "flags", XLA_FFI_AttrType_SCALAR);
  const XLA_FFI_Array *pm = find_attr(cf, "pmap", XLA_FFI_AttrType_ARRAY);
  union {
    ascTensor t;
    ascScalar s;
  } slots[MAX_PARAMS];
  void *argv[MAX_PARAMS];
  char msg[1024];
  ascKernelInfo info;
  ascKernel_t kernel;
  const int64_t *map;
  ascError_t e;

  if (ka == NULL || ba == NULL || pm == NULL ||
      pm->dtype != XLA_FFI_DataType_S64)
    return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     "asc_launch: needs the attributes kernel, blocks and "
                     "pmap (an int64 array)");
  kernel = (ascKernel_t)(uintptr_t)scalar_i64(ka);
  memset(&info, 0, sizeof info);
  e = ascKernelGetInfo(&info, kernel);
  if (e != ascSuccess)
    return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     ascGetLastErrorMessage());
  if (info.numResults != 0 || info.numParams > MAX_PARAMS ||
      (int64_t)pm->size != info.numParams) {
    snprintf(msg, sizeof msg,
             "asc_launch: kernel '%s' has %d parameters and returns %d "
             "values; the call maps %zu parameters (kernels that return "
             "values, or have more than %d parameters, are not supported)",
             info.name, info.numParams, info.numResults, pm->size,
             MAX_PARAMS);
    return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
  }
  map = pm->data;
  for (int i = 0; i < info.numParams; i++) {
    const ascKernelParamInfo *p = &info.params[i];
    int64_t k = map[i];
    const XLA_FFI_Buffer *b;
    int dt;
    if (k >= 0 ? k >= cf->args.size : -1 - k >= cf->rets.size) {
      snprintf(msg, sizeof msg, "asc_launch: parameter '%s' maps to "
               "operand %lld, which the call does not have",
               p->name, (long long)k);
      return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
    }
    b = k >= 0 ? cf->args.args[k] : cf->rets.rets[-1 - k];
    dt = dtype_from_xla(b->dtype);
    if (dt < 0) {
      snprintf(msg, sizeof msg, "asc_launch: parameter '%s' gets XLA "
               "type %d, which is not a libasc dtype", p->name,
               (int)b->dtype);
      return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
    }
    if (p->isTensor) {
      /* JAX's inputs are immutable: only results may be written */
      if (k >= 0 && p->isWritten) {
        snprintf(msg, sizeof msg, "asc_launch: kernel '%s' writes "
                 "parameter '%s', but it is an input (read-only in JAX); "
                 "make it an output", info.name, p->name);
        return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
      }
      fill_tensor(&slots[i].t, b, dt);
      argv[i] = &slots[i].t;
    } else if (b->rank != 0) {
      snprintf(msg, sizeof msg, "asc_launch: scalar parameter '%s' gets "
               "a %lld-d buffer", p->name, (long long)b->rank);
      return ffi_error(cf, XLA_FFI_Error_Code_INVALID_ARGUMENT, msg);
    } else if (p->generic || p->dtype == ascDataTypeCount) {
      read_scalar(&slots[i].s, b->data, dt);
      argv[i] = &slots[i].s;
    } else {
      argv[i] = b->data;    /* the annotated type's own bytes */
    }
  }
  atomic_store(&last_tid, (int64_t)syscall(SYS_gettid));
  e = ascLaunchKernelSync(kernel, (uint32_t)scalar_i64(ba), argv,
                          fa != NULL ? (unsigned)scalar_i64(fa) : 0);
  if (e != ascSuccess)
    return ffi_error(cf,
                     e == ascErrorKernelException || e == ascErrorInvalidValue
                         ? XLA_FFI_Error_Code_INVALID_ARGUMENT
                         : XLA_FFI_Error_Code_INTERNAL,
                     ascGetLastErrorMessage());
  return NULL;
}

__attribute__((visibility("default"))) XLA_FFI_Error *
asc_xla_launch(XLA_FFI_CallFrame *cf) {
  /* XLA first asks which FFI version the handler was built against */
  const XLA_FFI_Extension_Base *ext = cf->extension_start;
  if (ext != NULL && ext->type == XLA_FFI_Extension_Metadata) {
    XLA_FFI_Metadata *md = ((const XLA_FFI_Metadata_Extension *)ext)->metadata;
    md->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    md->api_version.major_version = XLA_FFI_API_MAJOR;
    md->api_version.minor_version = XLA_FFI_API_MINOR;
    md->traits = 0;
    return NULL;
  }
  if (cf->stage != XLA_FFI_ExecutionStage_EXECUTE)
    return NULL;
  return execute(cf);
}
