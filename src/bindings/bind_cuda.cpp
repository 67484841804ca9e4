// Bindings of the GPU runtime: whether a GPU is usable and which, moving tensors between host
// and device, and NVRTC for tests that compile CUDA without a GPU.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings/numpy_buffer.hpp"
#include "jit/cuda/cuda_engine.hpp"
#include "jit/cuda/nvrtc.hpp"
#include "runtime/cuda/cuda_driver.hpp"
#include "runtime/cuda/device_arrays.hpp"
#include "util/errors.hpp"

namespace py = pybind11;

namespace coiter::bindings {

namespace {

// (address, length, NumPy dtype name) of a GPU array, as device_addresses gives them.
using DeviceArray = std::tuple<uintptr_t, int64_t, std::string>;

cuda::ForeignArray foreign(const DeviceArray& a) {
  return cuda::ForeignArray{static_cast<cuda::CUdeviceptr>(std::get<0>(a)), std::get<1>(a),
                            dtypeFromName(std::get<2>(a))};
}

}  // namespace

void bindCuda(py::module_& m) {
  m.def("cuda_set_library_directories", &cuda::setLibraryDirectories, py::arg("directories"),
        "Directories searched for libnvrtc and libcuda after the system's (the nvidia-* wheels').");
  m.def(
      "cuda_status",
      [] {
        py::dict out;
        std::string why;
        bool gpu = cuda::available(&why);
        out["available"] = gpu;
        out["problem"] = why;
        if (gpu) {
          const cuda::Device& d = cuda::device();
          out["name"] = d.name;
          out["arch"] = d.arch();
          out["multiprocessors"] = d.multiprocessors;
          out["memory"] = d.memory;
          out["driver_version"] = d.driverVersion;
        }
        std::string nvrtcWhy;
        bool nvrtc = cuda::nvrtcAvailable(&nvrtcWhy);
        out["nvrtc"] = nvrtc ? py::object(py::str(cuda::nvrtcVersion())) : py::object(py::none());
        out["nvrtc_problem"] = nvrtcWhy;
        return out;
      },
      "Whether a GPU and NVRTC are usable, and what they are.");
  m.def(
      "cuda_compile",
      [](const std::string& source, const std::string& arch) {
        std::vector<uint8_t> code = cuda::compileCuda(source, arch);
        return py::bytes(reinterpret_cast<const char*>(code.data()), code.size());
      },
      py::arg("source"), py::arg("arch"), "NVRTC: a cubin (arch sm_XY) or PTX (compute_XY) of CUDA C++ source.");
  m.def("cuda_target_architecture", &cuda::targetArchitecture);
  m.def(
      "cuda_last_kernel_seconds", [] { return cuda::lastKernelSeconds(); },
      "GPU time of the last kernel this thread ran on the GPU (CUDA events), in seconds.");
  m.def(
      "device_addresses",
      [](const TensorStorage& s) {
        // The device address of each array of a tensor on the GPU (zero-copy views for CuPy).
        const DeviceCopy* copy = s.deviceCopy();
        if (!copy) throw ArgumentError("the tensor is not on a GPU; call to('cuda') first");
        // (address, length, NumPy dtype name) of each array, read without downloading it.
        auto address = [&](const Buffer& b) {
          return py::make_tuple(reinterpret_cast<uintptr_t>(copy->deviceAddress(b.data())), b.length(),
                                dtypeName(b.dtype()));
        };
        py::dict out;
        out["values"] = address(s.valuesAnywhere());
        py::list levels;
        for (const auto& level : s.levelsAnywhere()) {
          py::dict arrays;
          for (const auto& [name, buffer] : level.arrays) arrays[py::str(name)] = address(buffer);
          levels.append(arrays);
        }
        out["levels"] = levels;
        return out;
      },
      py::arg("storage"));
  m.def(
      "to_device", [](const TensorStorage& s) { return cuda::upload(s); }, py::arg("storage"),
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "cuda_synchronize_stream",
      [](uintptr_t stream) {
        cuda::check(cuda::driver().cuStreamSynchronize(reinterpret_cast<cuda::CUstream>(stream)),
                    "cuStreamSynchronize (the stream an operand's producer named)");
      },
      py::arg("stream"), py::call_guard<py::gil_scoped_release>(),
      "Waits for the work queued on a CUDA stream (a handle from __cuda_array_interface__).");
  m.def(
      "adopt_device_arrays",
      [](const Format& format, const std::vector<int64_t>& shape, const std::string& indexType,
         const std::vector<std::map<std::string, DeviceArray>>& arrays,
         const std::vector<std::map<std::string, int64_t>>& parameters, const DeviceArray& values,
         const py::object& owner) {
        std::vector<std::map<std::string, cuda::ForeignArray>> levels(arrays.size());
        for (size_t k = 0; k < arrays.size(); ++k) {
          for (const auto& [name, array] : arrays[k]) levels[k][name] = foreign(array);
        }
        std::shared_ptr<void> held = keepAlive(owner);
        py::gil_scoped_release release;
        return cuda::adoptDeviceArrays(format, shape, dtypeFromName(indexType), levels, parameters, foreign(values),
                                       held);
      },
      py::arg("format"), py::arg("shape"), py::arg("index_dtype"), py::arg("arrays"), py::arg("parameters"),
      py::arg("values"), py::arg("owner"),
      "A GPU tensor over GPU memory that `owner` keeps alive, each array (address, length, dtype name), already "
      "checked on the GPU against the format (coiter/interop_cupy.py): zero-copy from CuPy.");
  m.def(
      "to_host", [](const TensorStorage& s) { return cuda::hostStorage(s); }, py::arg("storage"),
      py::call_guard<py::gil_scoped_release>());
}

}  // namespace coiter::bindings
