/*
 * DLPack <-> ascTensor (include/asc/dlpack.h): what each conversion
 * borrows and copies, the read-only flag, who calls the deleter and when,
 * and the tensors it refuses.
 */
#include <stdlib.h>
#include <unistd.h>

#include "asc/dlpack.h"
#include "testutil.h"

typedef struct owner {
  int deleted;       /* deleter calls */
  int released;      /* release calls (export) */
} owner;

static void count_deleter_v(DLManagedTensorVersioned *m) {
  ((owner *)m->manager_ctx)->deleted++;
}

static void count_deleter_u(DLManagedTensor *m) {
  ((owner *)m->manager_ctx)->deleted++;
}

static void count_release(void *ctx) { ((owner *)ctx)->released++; }

/* A 2x3 float32 tensor of data, row-major strides unless strides. */
static DLTensor dl2x3(float *data, int64_t *shape, int64_t *strides) {
  DLTensor d;
  memset(&d, 0, sizeof d);
  shape[0] = 2;
  shape[1] = 3;
  d.data = data;
  d.device.device_type = kDLCPU;
  d.ndim = 2;
  d.dtype.code = kDLFloat;
  d.dtype.bits = 32;
  d.dtype.lanes = 1;
  d.shape = shape;
  d.strides = strides;
  return d;
}

static void test_versioned_read_only_and_owner(void **state) {
  float data[8] = {0};
  int64_t shape[2], strides[2] = {4, 1};
  owner o = {0, 0};
  DLManagedTensorVersioned m;
  ascTensor t;
  int ro = -1;
  (void)state;

  memset(&m, 0, sizeof m);
  m.version.major = 1;
  m.version.minor = 0;
  m.manager_ctx = &o;
  m.deleter = count_deleter_v;
  m.dl_tensor = dl2x3(data, shape, strides);
  m.dl_tensor.byte_offset = sizeof(float);
  ASSERT_OK(ascTensorFromDLManagedTensorVersioned(&t, &ro, &m));
  assert_int_equal(ro, 0);
  assert_ptr_equal(t.data, data + 1);
  assert_int_equal(t.dtype, ascFloat32);
  assert_int_equal(t.ndim, 2);
  assert_int_equal(t.shape[0], 2);
  assert_int_equal(t.shape[1], 3);
  assert_int_equal(t.strides[0], 4);
  assert_int_equal(t.strides[1], 1);
  m.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  ASSERT_OK(ascTensorFromDLManagedTensorVersioned(&t, &ro, &m));
  assert_int_equal(ro, 1);
  ASSERT_OK(ascTensorFromDLManagedTensorVersioned(&t, NULL, &m));
  /* a major version whose layout libasc cannot know */
  m.version.major = 2;
  ro = -1;
  memset(&t, 0x5a, sizeof t);
  ASSERT_ERR(ascTensorFromDLManagedTensorVersioned(&t, &ro, &m),
             ascErrorUnsupported);
  assert_int_equal(ro, -1);
  assert_int_equal(t.ndim, 0x5a5a5a5a);  /* unchanged */
  /* conversions borrow: only the consumer calls the deleter */
  assert_int_equal(o.deleted, 0);
  m.deleter(&m);
  assert_int_equal(o.deleted, 1);
  ASSERT_ERR(ascTensorFromDLManagedTensorVersioned(&t, &ro, NULL),
             ascErrorInvalidValue);
}

static void test_unversioned_layouts(void **state) {
  float data[6];
  int64_t shape[2];
  owner o = {0, 0};
  DLManagedTensor m;
  ascTensor t;
  (void)state;

  memset(&m, 0, sizeof m);
  m.manager_ctx = &o;
  m.deleter = count_deleter_u;
  /* NULL strides: row-major */
  m.dl_tensor = dl2x3(data, shape, NULL);
  ASSERT_OK(ascTensorFromDLManagedTensor(&t, &m));
  assert_int_equal(t.strides[0], 3);
  assert_int_equal(t.strides[1], 1);
  /* 0-d: one element, no shape needed */
  m.dl_tensor.ndim = 0;
  m.dl_tensor.shape = NULL;
  ASSERT_OK(ascTensorFromDLManagedTensor(&t, &m));
  assert_int_equal(t.ndim, 0);
  assert_int_equal(o.deleted, 0);
  ASSERT_ERR(ascTensorFromDLManagedTensor(&t, NULL), ascErrorInvalidValue);
}

static void test_dtypes(void **state) {
  static const struct {
    uint8_t code, bits;
    ascDataType want;
  } ok[] = {{kDLBool, 8, ascBool},         {kDLInt, 8, ascInt8},
            {kDLInt, 64, ascInt64},        {kDLUInt, 16, ascUInt16},
            {kDLFloat, 16, ascFloat16},    {kDLBfloat, 16, ascBFloat16},
            {kDLFloat, 64, ascFloat64},    {kDLComplex, 64, ascComplex64},
            {kDLComplex, 128, ascComplex128}};
  int64_t shape[1] = {4};
  double data[4];
  DLTensor d;
  ascTensor t;
  (void)state;

  memset(&d, 0, sizeof d);
  d.data = data;
  d.device.device_type = kDLCPU;
  d.ndim = 1;
  d.shape = shape;
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    d.dtype.code = ok[i].code;
    d.dtype.bits = ok[i].bits;
    d.dtype.lanes = 1;
    ASSERT_OK(ascTensorFromDLTensor(&t, &d));
    assert_int_equal(t.dtype, ok[i].want);
  }
  d.dtype.code = kDLFloat;
  d.dtype.bits = 32;
  d.dtype.lanes = 4;          /* vector lanes */
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorUnsupported);
  assert_non_null(strstr(ascGetLastErrorMessage(), "4 lanes"));
  d.dtype.lanes = 1;
  d.dtype.bits = 8;           /* no float8 in libasc */
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorUnsupported);
  d.dtype.code = kDLOpaqueHandle;
  d.dtype.bits = 64;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorUnsupported);
}

static void test_refused(void **state) {
  float data[6];
  int64_t shape[9] = {2, 3, 1, 1, 1, 1, 1, 1, 1}, neg[2] = {-1, 3};
  int64_t huge[2] = {INT64_MAX / 2, 4};
  DLTensor d;
  ascTensor t;
  (void)state;

  d = dl2x3(data, shape, NULL);
  d.device.device_type = kDLCUDA;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorUnsupported);
  assert_non_null(strstr(ascGetLastErrorMessage(), "device type 2"));
  d.device.device_type = kDLCUDAHost;   /* pinned host memory is fine */
  ASSERT_OK(ascTensorFromDLTensor(&t, &d));
  d.device.device_type = kDLCPU;
  d.ndim = 9;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  d.ndim = -1;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  d.ndim = 2;
  d.shape = NULL;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  d.shape = neg;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  d.shape = huge;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  d.shape = shape;
  d.data = NULL;
  ASSERT_ERR(ascTensorFromDLTensor(&t, &d), ascErrorInvalidValue);
  shape[0] = 0;               /* no elements: NULL data is fine */
  ASSERT_OK(ascTensorFromDLTensor(&t, &d));
  assert_null(t.data);
  ASSERT_ERR(ascTensorFromDLTensor(NULL, &d), ascErrorInvalidValue);
  ASSERT_ERR(ascTensorFromDLTensor(&t, NULL), ascErrorInvalidValue);
}

static const char COPY_SRC[] =
    "import asc\n"
    "@asc.kernel\n"
    "def copy2(x, y):\n"
    "    for i in range(x.shape[0]):\n"
    "        for j in range(x.shape[1]):\n"
    "            y[i, j] = x[i, j] * 2\n";

/* A kernel launched on borrowed, non-contiguous memory; the read-only
 * flag checked against what the kernel writes. */
static void test_launch_and_writable(void **state) {
  ascModule_t m;
  ascKernel_t k;
  float src[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}}, dst[6] = {0};
  int64_t shape[2], strides[2] = {4, 1};  /* 2x3 of a 2x4 array */
  DLManagedTensorVersioned in;
  ascTensor x, y = {0};
  void *args[] = {&x, &y};
  int ro;
  (void)state;

  ASSERT_OK(ascModuleLoadPython(&m, COPY_SRC, NULL));
  ASSERT_OK(ascModuleGetKernel(&k, m, "copy2"));
  memset(&in, 0, sizeof in);
  in.version.major = 1;
  in.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  in.dl_tensor = dl2x3(&src[0][0], shape, strides);
  ASSERT_OK(ascTensorFromDLManagedTensorVersioned(&x, &ro, &in));
  assert_int_equal(ro, 1);
  ASSERT_OK(ascDLPackCheckWritable(k, 0, ro));  /* x is only read */
  ASSERT_ERR(ascDLPackCheckWritable(k, 1, 1), ascErrorInvalidValue);
  assert_non_null(strstr(ascGetLastErrorMessage(), "'y'"));
  ASSERT_OK(ascDLPackCheckWritable(k, 1, 0));
  ASSERT_ERR(ascDLPackCheckWritable(k, 2, 0), ascErrorInvalidValue);
  ASSERT_ERR(ascDLPackCheckWritable(NULL, 0, 0), ascErrorInvalidHandle);
  y.data = dst;
  y.dtype = ascFloat32;
  y.ndim = 2;
  y.shape[0] = 2;
  y.shape[1] = 3;
  y.strides[0] = 3;
  y.strides[1] = 1;
  ASSERT_OK(ascLaunchKernelSync(k, 1, args, 0));
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      assert_true(dst[i * 3 + j] == 2 * src[i][j]);
  ASSERT_OK(ascModuleUnload(m));
}

static void test_export(void **state) {
  double data[12];
  ascTensor t = test_tensor1(data, ascFloat64, 6), back;
  owner o = {0, 0};
  DLManagedTensorVersioned *v = NULL;
  DLManagedTensor *u = NULL;
  int ro;
  (void)state;

  t.ndim = 2;
  t.shape[0] = 3;
  t.shape[1] = 2;
  t.strides[0] = 4;
  t.strides[1] = -1;
  t.data = data + 1;
  ASSERT_OK(ascTensorToDLManagedTensorVersioned(
      &v, &t, DLPACK_FLAG_BITMASK_READ_ONLY, count_release, &o));
  assert_int_equal(v->version.major, 1);
  assert_int_equal(v->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  assert_int_equal(v->dl_tensor.device.device_type, kDLCPU);
  assert_int_equal(v->dl_tensor.dtype.code, kDLFloat);
  assert_int_equal(v->dl_tensor.dtype.bits, 64);
  assert_int_equal(v->dl_tensor.strides[1], -1);
  /* the wrapper owns copies: changing t changes nothing */
  t.shape[0] = 99;
  assert_int_equal(v->dl_tensor.shape[0], 3);
  ASSERT_OK(ascTensorFromDLManagedTensorVersioned(&back, &ro, v));
  assert_int_equal(ro, 1);
  assert_ptr_equal(back.data, data + 1);
  assert_int_equal(back.shape[0], 3);
  assert_int_equal(back.strides[0], 4);
  assert_int_equal(o.released, 0);
  v->deleter(v);
  assert_int_equal(o.released, 1);

  t.shape[0] = 3;
  ASSERT_OK(ascTensorToDLManagedTensor(&u, &t, NULL, NULL));
  ASSERT_OK(ascTensorFromDLManagedTensor(&back, u));
  assert_int_equal(back.strides[1], -1);
  u->deleter(u);               /* no release: nothing else to free */

  /* refused exports call nothing */
  v = NULL;
  t.ndim = 9;
  ASSERT_ERR(ascTensorToDLManagedTensorVersioned(&v, &t, 0, count_release,
                                                 &o),
             ascErrorInvalidValue);
  assert_null(v);
  t.ndim = 1;
  t.dtype = ascDataTypeCount;
  ASSERT_ERR(ascTensorToDLManagedTensor(&u, &t, count_release, &o),
             ascErrorInvalidValue);
  ASSERT_ERR(ascTensorToDLManagedTensor(NULL, &t, count_release, &o),
             ascErrorInvalidValue);
  ASSERT_ERR(ascTensorToDLManagedTensorVersioned(&v, NULL, 0, count_release,
                                                 &o),
             ascErrorInvalidValue);
  assert_int_equal(o.released, 1);
}

/* The deleter runs in stream order: not while a launch before it still
 * runs, once it has finished. */
static void test_delete_async(void **state) {
  ascModule_t m = test_load_kernels();
  ascKernel_t gate = test_kernel(m, "gate");
  int32_t flag = 0;
  ascTensor ft = test_tensor1(&flag, ascInt32, 1);
  void *args[] = {&ft};
  owner o = {0, 0};
  DLManagedTensorVersioned v;
  DLManagedTensor u;
  ascStream_t s;
  (void)state;

  memset(&v, 0, sizeof v);
  memset(&u, 0, sizeof u);
  v.version.major = 1;
  v.manager_ctx = u.manager_ctx = &o;
  v.deleter = count_deleter_v;
  u.deleter = count_deleter_u;
  ASSERT_OK(ascStreamCreate(&s));
  ASSERT_OK(ascLaunchKernel(gate, 1, args, s));
  ASSERT_OK(ascDLPackDeleteAsync(&v, s));
  ASSERT_OK(ascDLPackDeleteAsyncUnversioned(&u, s));
  usleep(20000);
  assert_int_equal(o.deleted, 0);
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(o.deleted, 2);
  /* a NULL deleter is allowed */
  v.deleter = NULL;
  ASSERT_OK(ascDLPackDeleteAsync(&v, s));
  ASSERT_OK(ascStreamSynchronize(s));
  assert_int_equal(o.deleted, 2);
  ASSERT_ERR(ascDLPackDeleteAsync(NULL, s), ascErrorInvalidValue);
  ASSERT_ERR(ascDLPackDeleteAsyncUnversioned(NULL, s), ascErrorInvalidValue);
  ASSERT_OK(ascStreamDestroy(s));
  ASSERT_ERR(ascDLPackDeleteAsync(&v, s), ascErrorInvalidHandle);
  ASSERT_OK(ascModuleUnload(m));
}

static int teardown(void **state) {
  (void)state;
  (void)ascDeviceReset();
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_versioned_read_only_and_owner),
      cmocka_unit_test(test_unversioned_layouts),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_refused),
      cmocka_unit_test_teardown(test_launch_and_writable, teardown),
      cmocka_unit_test(test_export),
      cmocka_unit_test_teardown(test_delete_async, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
