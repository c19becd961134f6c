/* stridewise.launch._torch: torch tensors keyed and allocated in C++, for the warm call path.
 *
 * key (a capsule of sw_torch_key): one torch.Tensor's key segment and pointer, the items
 * _arrays._torch_key builds from six Python accessor calls: (dtype, shape, stride, device,
 * pointer % 16). launch/_warm.c's fast_call takes it when this module loads.
 * Allocator(template, shape, strides)(): (a new tensor of template's dtype and device with
 * that shape and those strides, its pointer), as _arrays.allocator's torch branch does with
 * new_empty_strided: torch's allocator for the device (for CUDA its caching allocator, on the
 * current stream), called as torch's own ops allocate their outputs, past the dispatcher.
 * cuda_current (a capsule of sw_torch_cuda_current): torch's current CUDA device and that
 * device's current stream in one call, for launch/_warm.c's Launcher.
 * bump (a capsule of sw_torch_bump): count an in-place write in a tensor's version counter.
 *
 * Why C++: the accessors, torch's Python argument parsing and getters were over a fifth of a
 * warm call on the H200's host; torch's own call does all of them in C++.
 * Optional, like _warm: setup.py builds it when torch is importable at build time, and it
 * loads only under the torch it was built against (SW_TORCH_VERSION), whose C++ ABI it uses.
 */
#include <Python.h>

#include <ATen/EmptyTensor.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/frontend/tracer.h>

#include <cstdint>
#include <cstring>
#include <vector>

#ifndef SW_TORCH_VERSION
#error "build through setup.py, which passes the torch version built against"
#endif

/* 1: items[0..5) hold new references and *ptr the data pointer; 0: x is not a plain strided
   torch.Tensor on a device with data (the Python accessors decide, as without this module);
   2: the call needs torch's dispatcher (x requires grad with grad mode on, is a dual tensor
   of forward-mode AD, is not on the CPU or a CUDA device, a dispatch mode is active, or
   torch.jit.trace is recording): _torch_ops.routed takes it. */
extern "C" int sw_torch_key(PyObject* x, PyObject** items, uint64_t* ptr) {
  if (!THPVariable_CheckExact(x)) return 0;
  try {
    const at::Tensor& t = THPVariable_Unpack(x);
    if (!t.defined() || t.layout() != at::kStrided || !t.has_storage()) return 0;
    const auto type = t.device().type();
    /* forward AD has one level (torch refuses nested ones), numbered 0 */
    if ((t.requires_grad() && c10::GradMode::is_enabled()) || t._fw_grad(0).defined() ||
        (type != c10::DeviceType::CPU && type != c10::DeviceType::CUDA) ||
        c10::impl::TorchDispatchModeTLS::stack_len() > 0 || torch::jit::tracer::isTracing())
      return 2;
    const uint64_t p = reinterpret_cast<uintptr_t>(t.data_ptr());
    const auto sizes = t.sizes();
    const auto strides = t.strides();
    const Py_ssize_t nd = static_cast<Py_ssize_t>(sizes.size());
    PyObject* shape = PyTuple_New(nd);
    PyObject* stride = PyTuple_New(nd);
    for (Py_ssize_t i = 0; shape && stride && i < nd; ++i) {
      PyTuple_SET_ITEM(shape, i, PyLong_FromLongLong(sizes[i]));
      PyTuple_SET_ITEM(stride, i, PyLong_FromLongLong(strides[i]));
    }
    items[0] = Py_NewRef(reinterpret_cast<PyObject*>(torch::getTHPDtype(t.scalar_type())));
    items[1] = shape;
    items[2] = stride;
    items[3] = PyLong_FromLong(t.get_device());
    /* + 16 for what _meaning.check_torch refuses (lazy negation or conjugation, autograd):
       such a tensor never matches a plain one's warm entry, so the full path refuses it */
    const bool marked = t.is_neg() || t.is_conj() || (t.requires_grad() && at::GradMode::is_enabled());
    /* + torch's default float (_meaning.torch_default_mark): a call that computes in it is
       typed again after torch.set_default_dtype */
    unsigned long dflt = 128;
    switch (c10::get_default_dtype_as_scalartype()) {
      case at::kFloat: dflt = 0; break;
      case at::kDouble: dflt = 32; break;
      case at::kHalf: dflt = 64; break;
      case at::kBFloat16: dflt = 96; break;
      default: break;
    }
    items[4] = PyLong_FromUnsignedLong(static_cast<unsigned long>(p % 16 + (marked ? 16 : 0)) + dflt);
    if (PyErr_Occurred()) {   /* out of memory: drop them all, and let the accessors try */
      for (int i = 0; i < 5; ++i) Py_XDECREF(items[i]);
      PyErr_Clear();
      return 0;
    }
    *ptr = p;
    return 1;
  } catch (...) {
    return 0;
  }
}

/* 0: *device is torch's current CUDA device and, when that is `index`, *stream its current
   stream (as torch._C._cuda_getDevice and _cuda_getCurrentRawStream); -1: a Python error. */
extern "C" int sw_torch_cuda_current(long index, long* device, void** stream) {
  try {
    const auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    const c10::Device d = impl->getDevice();
    *device = d.index();
    if (*device == index) *stream = impl->getStream(d).native_handle();
    return 0;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return -1;
  }
}

/* 0 after counting an in-place write into torch.Tensor x, as torch's own ops do (autograd
   compares a saved tensor's version); -1 with a Python error (an inference tensor outside
   inference mode, as torch refuses). */
extern "C" int sw_torch_bump(PyObject* x) {
  try {
    THPVariable_Unpack(x).unsafeGetTensorImpl()->bump_version();
    return 0;
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
    return -1;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return -1;
  }
}

struct Allocator {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  std::vector<int64_t>* sizes;
  std::vector<int64_t>* strides;
  c10::Allocator* memory;
  c10::DispatchKeySet keys;
  c10::Device device;
  c10::ScalarType dtype;
};

static PyObject* allocator_call(PyObject* self, PyObject* const*, size_t nargsf, PyObject* kw) {
  if (PyVectorcall_NARGS(nargsf) != 0 || kw != nullptr) {
    PyErr_SetString(PyExc_TypeError, "Allocator() takes no arguments");
    return nullptr;
  }
  HANDLE_TH_ERRORS
  auto* a = reinterpret_cast<Allocator*>(self);
  c10::OptionalDeviceGuard guard(a->device);
  at::Tensor t = at::detail::empty_strided_generic(*a->sizes, *a->strides, a->memory, a->keys, a->dtype);
  PyObject* p = PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(t.data_ptr()));
  if (p == nullptr) return nullptr;
  return Py_BuildValue("(NN)", THPVariable_Wrap(std::move(t)), p);
  END_HANDLE_TH_ERRORS
}

static int int_tuple(PyObject* seq, std::vector<int64_t>* to, const char* name) {
  PyObject* fast = PySequence_Fast(seq, name);
  if (fast == nullptr) return -1;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    to->push_back(PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i)));
    if (PyErr_Occurred()) break;
  }
  Py_DECREF(fast);
  return PyErr_Occurred() ? -1 : 0;
}

static PyObject* allocator_new(PyTypeObject* type, PyObject* args, PyObject* kw) {
  PyObject *tmpl, *shape, *strides;
  static const char* names[] = {"template", "shape", "strides", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO:Allocator", const_cast<char**>(names), &tmpl,
                                   &shape, &strides))
    return nullptr;
  if (!THPVariable_Check(tmpl)) {
    PyErr_SetString(PyExc_TypeError, "Allocator: template must be a torch.Tensor");
    return nullptr;
  }
  auto* a = reinterpret_cast<Allocator*>(type->tp_alloc(type, 0));
  if (a == nullptr) return nullptr;
  a->vectorcall = allocator_call;
  a->sizes = new std::vector<int64_t>();
  a->strides = new std::vector<int64_t>();
  const at::Tensor& t = THPVariable_Unpack(tmpl);
  a->device = t.device();
  a->dtype = t.scalar_type();
  a->keys = c10::DispatchKeySet(c10::computeDispatchKey(a->dtype, t.layout(), a->device));
  a->memory = c10::GetAllocator(a->device.type());
  if (t.layout() != at::kStrided || !t.has_storage() || a->memory == nullptr) {
    Py_DECREF(a);
    PyErr_SetString(PyExc_TypeError, "Allocator: template must be a strided tensor with storage");
    return nullptr;
  }
  if (int_tuple(shape, a->sizes, "Allocator: shape must be a sequence of ints") < 0 ||
      int_tuple(strides, a->strides, "Allocator: strides must be a sequence of ints") < 0) {
    Py_DECREF(a);
    return nullptr;
  }
  if (a->sizes->size() != a->strides->size()) {
    Py_DECREF(a);
    PyErr_SetString(PyExc_ValueError, "Allocator: shape and strides differ in length");
    return nullptr;
  }
  return reinterpret_cast<PyObject*>(a);
}

static void allocator_dealloc(PyObject* self) {
  auto* a = reinterpret_cast<Allocator*>(self);
  delete a->sizes;
  delete a->strides;
  Py_TYPE(self)->tp_free(self);
}

static PyTypeObject AllocatorType = {PyVarObject_HEAD_INIT(nullptr, 0)};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "stridewise.launch._torch",
    "torch tensors keyed and allocated in C++ for the warm call path (see _arrays).", -1, nullptr,
};

PyMODINIT_FUNC PyInit__torch(void) {
  PyObject* torch = PyImport_ImportModule("torch");
  if (torch == nullptr) return nullptr;
  PyObject* version = PyObject_GetAttrString(torch, "__version__");
  Py_DECREF(torch);
  if (version == nullptr) return nullptr;
  const char* running = PyUnicode_AsUTF8(version);
  if (running == nullptr || strcmp(running, SW_TORCH_VERSION) != 0) {
    if (running != nullptr)
      PyErr_Format(PyExc_ImportError,
                   "stridewise.launch._torch was built against torch %s, and torch %s is running: "
                   "reinstall stridewise (pip install --no-build-isolation -e .) to rebuild it",
                   SW_TORCH_VERSION, running);
    Py_DECREF(version);
    return nullptr;
  }
  Py_DECREF(version);
  AllocatorType.tp_name = "stridewise.launch._torch.Allocator";
  AllocatorType.tp_basicsize = sizeof(Allocator);
  AllocatorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL;
  AllocatorType.tp_doc =
      "Allocator(template, shape, strides)\n\n"
      "A callable returning (new tensor of template's dtype and device with shape and strides,\n"
      "its data pointer), from torch's allocator for the device, past the dispatcher.";
  AllocatorType.tp_new = allocator_new;
  AllocatorType.tp_dealloc = allocator_dealloc;
  AllocatorType.tp_vectorcall_offset = offsetof(Allocator, vectorcall);
  AllocatorType.tp_call = PyVectorcall_Call;
  if (PyType_Ready(&AllocatorType) < 0) return nullptr;
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  PyObject* key = PyCapsule_New(reinterpret_cast<void*>(&sw_torch_key), "stridewise.launch._torch.key", nullptr);
  PyObject* current = PyCapsule_New(reinterpret_cast<void*>(&sw_torch_cuda_current),
                                    "stridewise.launch._torch.cuda_current", nullptr);
  PyObject* bump = PyCapsule_New(reinterpret_cast<void*>(&sw_torch_bump), "stridewise.launch._torch.bump", nullptr);
  int err = key == nullptr || PyModule_AddObjectRef(m, "key", key) < 0 || current == nullptr ||
            PyModule_AddObjectRef(m, "cuda_current", current) < 0 || bump == nullptr ||
            PyModule_AddObjectRef(m, "bump", bump) < 0 ||
            PyModule_AddObjectRef(m, "Allocator", reinterpret_cast<PyObject*>(&AllocatorType)) < 0 ||
            PyModule_AddStringConstant(m, "built_for", SW_TORCH_VERSION) < 0;
  Py_XDECREF(key);
  Py_XDECREF(current);
  Py_XDECREF(bump);
  if (err) Py_CLEAR(m);
  return m;
}
