// A PyTorch operator implemented by a libasc kernel through the C API:
// the "framework plugin" of docs/plugins.md.  The tensors reach the
// kernel as DLPack views of their storage (no copies); the launch runs
// on the calling thread with that thread taking part
// (ascLaunchKernelSync), so torch's intra-op threads can launch side by
// side without adding threads to the cores.
#include <ATen/DLConvertor.h>  // ATen's dlpack.h first: asc/dlpack.h uses it
#include <ATen/Parallel.h>
#include <torch/extension.h>

#include <asc/asc.h>
#include <asc/dlpack.h>

namespace {

ascKernel_t from_text = nullptr;  // kernel text compiled by libasc
ascKernel_t from_ascc = nullptr;  // an ascc-built module

void check(ascError_t e) {
  TORCH_CHECK(e == ascSuccess, "libasc: ", ascGetErrorName(e), ": ",
              ascGetLastErrorMessage());
}

// Launches kernel on x -> out.  The DLPack tensors share the storage of x
// and out; their deleters run once the launch is over.
void launch(ascKernel_t kernel, const at::Tensor &x, const at::Tensor &out,
            unsigned flags = ascLaunchJoin) {
  TORCH_CHECK(kernel != nullptr, "call load() first");
  TORCH_CHECK(x.device().is_cpu() && x.dim() == 2 &&
                  x.scalar_type() == at::kFloat,
              "expected a 2-D float32 CPU tensor");
  DLManagedTensor *dx = at::toDLPack(x), *dout = at::toDLPack(out);
  ascTensor tx, tout;
  ascError_t e = ascTensorFromDLManagedTensor(&tx, dx);
  if (e == ascSuccess)
    e = ascTensorFromDLManagedTensor(&tout, dout);
  if (e == ascSuccess) {
    void *args[] = {&tx, &tout};
    e = ascLaunchKernelSync(kernel, 1, args, flags);
  }
  dx->deleter(dx);
  dout->deleter(dout);
  check(e);
}

at::Tensor softmax_text(const at::Tensor &x) {
  at::Tensor out = at::empty(x.sizes(), x.options());
  launch(from_text, x, out);
  return out;
}

at::Tensor softmax_ascc(const at::Tensor &x) {
  at::Tensor out = at::empty(x.sizes(), x.options());
  launch(from_ascc, x, out);
  return out;
}

// Rows split over torch's intra-op threads, each launching the kernel on
// its slice from its own thread: joining the launch (the default), or
// handing it off to libasc's workers and sleeping.
at::Tensor softmax_parallel(const at::Tensor &x, bool hand_off) {
  at::Tensor out = at::empty(x.sizes(), x.options());
  unsigned flags = hand_off ? ascLaunchHandOff : ascLaunchJoin;
  at::parallel_for(0, x.size(0), 64, [&](int64_t lo, int64_t hi) {
    launch(from_text, x.slice(0, lo, hi), out.slice(0, lo, hi), flags);
  });
  return out;
}

void load(const std::string &text_path, const std::string &so_path) {
  ascModule_t text_mod, so_mod;
  check(ascModuleLoadPythonFile(&text_mod, text_path.c_str(), nullptr));
  check(ascModuleGetKernel(&from_text, text_mod, "softmax_rows"));
  check(ascModuleLoad(&so_mod, so_path.c_str()));
  check(ascModuleGetKernel(&from_ascc, so_mod, "softmax_rows"));
}

}  // namespace

TORCH_LIBRARY(asc_example, m) {
  m.def("softmax_text(Tensor x) -> Tensor");
  m.def("softmax_ascc(Tensor x) -> Tensor");
  m.def("softmax_parallel(Tensor x, bool hand_off=False) -> Tensor");
}

TORCH_LIBRARY_IMPL(asc_example, CPU, m) {
  m.impl("softmax_text", softmax_text);
  m.impl("softmax_ascc", softmax_ascc);
  m.impl("softmax_parallel", softmax_parallel);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("load", &load, "load(kernel_text_path, ascc_module_path)");
}
