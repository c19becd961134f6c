/* stridewise.launch._warm: the warm call path, compiled.
 *
 * fast_call does what _ops._fast_call does, step for step: key the arguments (torch tensors
 * and NumPy arrays inline, other types through their _arrays keyer), find the call's _Fast,
 * check the output's overlap with each input or allocate it, and launch. Launcher does what
 * backends.cuda.bind's run does: read the library's current device and stream, store the
 * pointers into the slot buffer and call cuLaunchKernelEx. The Python versions stay the
 * reference (and the path when this module is not built); tests compare the two.
 *
 * Why C: a warm call spent more time in Python than in the driver call it wraps; compiled,
 * a warm out= call costs what torch's does. The CUDA headers are not
 * needed: the driver entry point comes in as an address, and CUlaunchConfig is declared
 * below.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------------ Launcher */

typedef struct {            /* CUlaunchConfig (cuda.h), the ABI cuLaunchKernelEx takes */
    unsigned grid[3], block[3], smem;
    void *stream, *attrs;
    unsigned nattrs;
} LaunchConfig;

typedef int (*LaunchEx)(const LaunchConfig *, void *, void **, void **);
/* The library's current device and, when it is `index`, that device's current stream, in one
   C call (stridewise.launch._torch's sw_torch_cuda_current): 0, or -1 with a Python error. */
typedef int (*Current)(long index, long *device, void **stream);

enum { INVALID_CONTEXT = 201, MAX_POINTERS = 64 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    LaunchEx ex;
    LaunchConfig lc;
    void *kernel;
    void *params[1];        /* the one kernel parameter: the slot buffer */
    char *buf;
    Py_ssize_t nptr, at, size;     /* pointer slots; the values' offset; the buffer's size */
    long index;
    Current native;         /* or NULL: the `current` and `stream` callables */
    PyObject *current, *stream, *pack_values, *slow, *failed;
#ifdef Py_GIL_DISABLED
    PyMutex lock;           /* with a GIL, holding it keeps the buffer to one launch */
#endif
} Launcher;

static PyTypeObject LauncherType;
static PyObject *empty;     /* () */

/* ptrs[0..n) as a list of Python ints (what a Python launcher takes). */
static PyObject *
pointer_list(const uint64_t *ptrs, Py_ssize_t n)
{
    PyObject *list = PyList_New(n);
    for (Py_ssize_t i = 0; list != NULL && i < n; i++) {
        PyObject *p = PyLong_FromUnsignedLongLong(ptrs[i]);
        if (p == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, p);
    }
    return list;
}

/* The library's current device and, when it is the launcher's, its current stream. */
static int
current_device(Launcher *L, long *device, void **stream)
{
    if (L->native != NULL)
        return L->native(L->index, device, stream);
    PyObject *r = PyObject_CallNoArgs(L->current);
    if (r == NULL)
        return -1;
    *device = PyLong_AsLong(r);
    Py_DECREF(r);
    if (*device == -1 && PyErr_Occurred())
        return -1;
    if (*device != L->index)
        return 0;
    r = PyObject_CallNoArgs(L->stream);
    if (r == NULL)
        return -1;
    *stream = PyLong_AsVoidPtr(r);
    Py_DECREF(r);
    return *stream == NULL && PyErr_Occurred() ? -1 : 0;
}

/* *packed: `values` (a sequence of slot values, or NULL) packed by `pack` into at most `room`
   bytes, or NULL where there are none; 0, or -1 with a Python error. */
static int
pack_values(PyObject *pack, PyObject *values, Py_ssize_t room, PyObject **packed)
{
    *packed = NULL;
    if (values == NULL || PyObject_Length(values) <= 0)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *t = PySequence_Tuple(values);
    *packed = t ? PyObject_Call(pack, t, NULL) : NULL;
    Py_XDECREF(t);
    if (*packed == NULL)
        return -1;
    if (!PyBytes_Check(*packed) || PyBytes_GET_SIZE(*packed) > room) {
        Py_CLEAR(*packed);
        PyErr_SetString(PyExc_ValueError, "scalar values do not fill the record's value slots");
        return -1;
    }
    return 0;
}

/* Launch over ptrs[0..nptr) and values (a sequence of slot values, or NULL). */
static PyObject *
launcher_run(Launcher *L, const uint64_t *ptrs, PyObject *values)
{
    PyObject *r;
    long device;
    void *stream = NULL;
    if (current_device(L, &device, &stream) < 0)
        return NULL;
    if (device == L->index) {
        PyObject *packed;
        if (pack_values(L->pack_values, values, L->size - L->at, &packed) < 0)
            return NULL;
#ifdef Py_GIL_DISABLED
        PyMutex_Lock(&L->lock);
#endif
        L->lc.stream = stream;
        memcpy(L->buf, ptrs, sizeof(uint64_t) * L->nptr);
        if (packed != NULL)
            memcpy(L->buf + L->at, PyBytes_AS_STRING(packed), PyBytes_GET_SIZE(packed));
        int err = L->ex(&L->lc, L->kernel, L->params, NULL);   /* copies the parameters */
#ifdef Py_GIL_DISABLED
        PyMutex_Unlock(&L->lock);
#endif
        Py_XDECREF(packed);
        if (err == 0)
            Py_RETURN_NONE;
        if (err != INVALID_CONTEXT)
            return PyObject_CallFunction(L->failed, "i", err);   /* raises */
    }
    /* another device current, or no context: the Python launch that pushes the context */
    PyObject *list = pointer_list(ptrs, L->nptr);
    if (list == NULL)
        return NULL;
    r = PyObject_CallFunctionObjArgs(L->slow, list, values ? values : empty, NULL);
    Py_DECREF(list);
    return r;
}

/* Sequence of Python ints -> ptrs (exactly nptr of them). */
static int
read_pointers(PyObject *seq, uint64_t *ptrs, Py_ssize_t nptr)
{
    PyObject *fast = PySequence_Fast(seq, "pointers must be a sequence of ints");
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n != nptr) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "this launcher takes %zd pointers, got %zd", nptr, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        ptrs[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fast, i));
        if (ptrs[i] == (uint64_t)-1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* launcher(pointers, values): as backends.cuda.bind's run. */
static PyObject *
launcher_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Launcher *L = (Launcher *)self;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a launcher takes (pointers, values)");
        return NULL;
    }
    uint64_t ptrs[MAX_POINTERS];
    if (read_pointers(args[0], ptrs, L->nptr) < 0)
        return NULL;
    return launcher_run(L, ptrs, args[1]);
}

static PyObject *
launcher_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ex", "kernel", "grid", "block", "buffer", "nptr", "at", "index",
                            "current", "stream", "pack_values", "slow", "failed", "native", NULL};
    unsigned long long ex, kernel;
    unsigned grid, block;
    Py_buffer buffer;
    Py_ssize_t nptr, at;
    long index;
    PyObject *current, *stream, *pack_values, *slow, *failed, *native = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KKIIy*nnlOOOOO|O", names, &ex, &kernel, &grid,
                                     &block, &buffer, &nptr, &at, &index, &current, &stream,
                                     &pack_values, &slow, &failed, &native))
        return NULL;
    Current fn = NULL;
    if (native != Py_None && (fn = (Current)PyCapsule_GetPointer(native, "stridewise.launch._torch.cuda_current")) == NULL) {
        PyBuffer_Release(&buffer);
        return NULL;
    }
    if (nptr < 0 || nptr > MAX_POINTERS || at < 8 * nptr || at > buffer.len || ex == 0) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError, "launcher: bad pointer count, value offset or entry point");
        return NULL;
    }
    Launcher *L = (Launcher *)type->tp_alloc(type, 0);
    if (L == NULL) {
        PyBuffer_Release(&buffer);
        return NULL;
    }
    L->buf = PyMem_Malloc(buffer.len ? buffer.len : 1);
    if (L->buf == NULL) {
        PyBuffer_Release(&buffer);
        Py_DECREF(L);
        return PyErr_NoMemory();
    }
    memcpy(L->buf, buffer.buf, buffer.len);
    PyBuffer_Release(&buffer);
    L->vectorcall = launcher_vectorcall;
    L->ex = (LaunchEx)(uintptr_t)ex;
    L->kernel = (void *)(uintptr_t)kernel;
    L->params[0] = L->buf;
    L->lc.grid[0] = grid, L->lc.grid[1] = L->lc.grid[2] = 1;
    L->lc.block[0] = block, L->lc.block[1] = L->lc.block[2] = 1;
    L->nptr = nptr, L->at = at, L->index = index, L->native = fn;
    L->size = buffer.len;
    L->current = Py_NewRef(current), L->stream = Py_NewRef(stream);
    L->pack_values = Py_NewRef(pack_values), L->slow = Py_NewRef(slow), L->failed = Py_NewRef(failed);
    return (PyObject *)L;
}

static int
launcher_traverse(Launcher *L, visitproc visit, void *arg)
{
    Py_VISIT(L->current);
    Py_VISIT(L->stream);
    Py_VISIT(L->pack_values);
    Py_VISIT(L->slow);
    Py_VISIT(L->failed);
    return 0;
}

static int
launcher_clear(Launcher *L)
{
    Py_CLEAR(L->current);
    Py_CLEAR(L->stream);
    Py_CLEAR(L->pack_values);
    Py_CLEAR(L->slow);
    Py_CLEAR(L->failed);
    return 0;
}

static void
launcher_dealloc(Launcher *L)
{
    PyObject_GC_UnTrack(L);
    launcher_clear(L);
    PyMem_Free(L->buf);
    Py_TYPE(L)->tp_free((PyObject *)L);
}

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stridewise.launch._warm.Launcher",
    .tp_doc = "Launcher(ex, kernel, grid, block, buffer, nptr, at, index, current, stream, "
              "pack_values, slow, failed, native=None)\n\nbackends.cuda.bind's launcher, compiled: "
              "launcher(pointers, values). native: a capsule that reads the current device and "
              "stream in C, in place of current and stream.",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = launcher_new,
    .tp_traverse = (traverseproc)launcher_traverse,
    .tp_clear = (inquiry)launcher_clear,
    .tp_dealloc = (destructor)launcher_dealloc,
};

/* -------------------------------------------------------------------------- HostLauncher */

/* A CPU kernel's entry point: extern "C" void entry(const sw::Slot *slots). */
typedef void (*HostEntry)(const void *);

enum { HOST_SLOTS = 128, HOST_GIL_MIN = 4096 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    HostEntry entry;
    char *buf;              /* the record with its static slots filled */
    Py_ssize_t nptr, at, size;
    PyObject *owner, *pack_values;   /* the loaded entry (keeps its library), values' packer */
} HostLauncher;

static PyTypeObject HostLauncherType;

/* Run the entry over a private copy of the record (threads may share a signature), with the
   pointers and packed values stored; the GIL is released where the call is long enough for
   another thread to use it (n >= HOST_GIL_MIN elements; ctypes released it for every call). */
static PyObject *
host_run(HostLauncher *L, const uint64_t *ptrs, PyObject *values)
{
    PyObject *packed;
    if (pack_values(L->pack_values, values, L->size - L->at, &packed) < 0)
        return NULL;
    uint64_t local[HOST_SLOTS];
    char *slots = L->size <= (Py_ssize_t)sizeof local ? (char *)local : PyMem_Malloc(L->size);
    if (slots == NULL) {
        Py_XDECREF(packed);
        return PyErr_NoMemory();
    }
    memcpy(slots, L->buf, L->size);
    memcpy(slots, ptrs, sizeof(uint64_t) * L->nptr);
    if (packed != NULL)
        memcpy(slots + L->at, PyBytes_AS_STRING(packed), PyBytes_GET_SIZE(packed));
    Py_XDECREF(packed);
    int64_t n;
    memcpy(&n, slots + sizeof(uint64_t) * L->nptr, sizeof n);     /* the record's n */
    if (n >= HOST_GIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        L->entry(slots);
        Py_END_ALLOW_THREADS
    } else {
        L->entry(slots);
    }
    if (slots != (char *)local)
        PyMem_Free(slots);
    Py_RETURN_NONE;
}

static PyObject *
host_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    HostLauncher *L = (HostLauncher *)self;
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a launcher takes (pointers, values)");
        return NULL;
    }
    uint64_t ptrs[MAX_POINTERS];
    if (read_pointers(args[0], ptrs, L->nptr) < 0)
        return NULL;
    return host_run(L, ptrs, args[1]);
}

static PyObject *
host_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"entry", "owner", "buffer", "nptr", "at", "pack_values", NULL};
    unsigned long long entry;
    PyObject *owner, *pack_values;
    Py_buffer buffer;
    Py_ssize_t nptr, at;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KOy*nnO", names, &entry, &owner, &buffer, &nptr,
                                     &at, &pack_values))
        return NULL;
    if (entry == 0 || nptr < 1 || nptr > MAX_POINTERS || at < 8 * nptr || at > buffer.len) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError, "HostLauncher: entry, nptr or at out of range");
        return NULL;
    }
    HostLauncher *L = (HostLauncher *)type->tp_alloc(type, 0);
    if (L == NULL || (L->buf = PyMem_Malloc(buffer.len ? buffer.len : 1)) == NULL) {
        PyBuffer_Release(&buffer);
        Py_XDECREF(L);
        return PyErr_NoMemory();
    }
    memcpy(L->buf, buffer.buf, buffer.len);
    L->size = buffer.len;
    PyBuffer_Release(&buffer);
    L->vectorcall = host_vectorcall;
    L->entry = (HostEntry)(uintptr_t)entry;
    L->nptr = nptr;
    L->at = at;
    L->owner = Py_NewRef(owner);
    L->pack_values = Py_NewRef(pack_values);
    return (PyObject *)L;
}

static int
host_traverse(HostLauncher *L, visitproc visit, void *arg)
{
    Py_VISIT(L->owner);
    Py_VISIT(L->pack_values);
    return 0;
}

static int
host_clear(HostLauncher *L)
{
    Py_CLEAR(L->owner);
    Py_CLEAR(L->pack_values);
    return 0;
}

static void
host_dealloc(HostLauncher *L)
{
    PyObject_GC_UnTrack(L);
    host_clear(L);
    PyMem_Free(L->buf);
    Py_TYPE(L)->tp_free((PyObject *)L);
}

static PyTypeObject HostLauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stridewise.launch._warm.HostLauncher",
    .tp_doc = "HostLauncher(entry, owner, buffer, nptr, at, pack_values)\n\nbackends.cpu.bind's "
              "launcher, compiled: launcher(pointers, values) calls the CPU kernel's entry "
              "(address `entry`, kept loaded by `owner`) over a copy of `buffer`.",
    .tp_basicsize = sizeof(HostLauncher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(HostLauncher, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = host_new,
    .tp_traverse = (traverseproc)host_traverse,
    .tp_clear = (inquiry)host_clear,
    .tp_dealloc = (destructor)host_dealloc,
};

/* ----------------------------------------------------------------------------- fast_call */

/* _arrays._KEYERS, _torch_key, _numpy_key, keyer */
static PyObject *keyers, *torch_key, *numpy_key, *find_keyer;
static PyObject *s_data_ptr, *s_dtype, *s_shape, *s_stride, *s_strides, *s_get_device, *s_alloc,
                *s_extents, *s_out_mod, *s_params, *s_launch, *s_slot_value;

enum { MAX_KEY = 512, MAX_ARGS = MAX_POINTERS - 1 };

typedef struct {            /* a call being keyed: owned key items, pointers, scalars */
    PyObject *key[MAX_KEY];
    Py_ssize_t nkey;
    uint64_t ptrs[MAX_POINTERS];
    Py_ssize_t nptr;
    PyObject *scalars[MAX_ARGS];   /* borrowed from args */
    Py_ssize_t nscalars;
} Keying;

static void
keying_clear(Keying *k)
{
    for (Py_ssize_t i = 0; i < k->nkey; i++)
        Py_DECREF(k->key[i]);
    k->nkey = 0;
}

static int
push(Keying *k, PyObject *item)     /* steals item */
{
    if (item == NULL)
        return -1;
    k->key[k->nkey++] = item;
    return 0;
}

/* A torch tensor's key items and pointer: stridewise.launch._torch's sw_torch_key when that module
   loads (it is looked up once, on the first torch tensor), else a stand-in that declines. */
typedef int (*TorchKey)(PyObject *, PyObject **, uint64_t *);

static int
no_torch_key(PyObject *x, PyObject **items, uint64_t *ptr)
{
    return 0;
}

/* Count an in-place write into torch tensor x (stridewise.launch._torch's sw_torch_bump, or
   _torch_ops.bump): 0, or -1 with a Python error. */
typedef int (*TorchBump)(PyObject *);

static int
torch_bump(PyObject *x)
{
    static TorchBump fn = NULL;
    static PyObject *py = NULL;
    if (fn == NULL && py == NULL) {
        PyObject *module = PyImport_ImportModule("stridewise.launch._torch");
        fn = module ? (TorchBump)PyCapsule_Import("stridewise.launch._torch.bump", 0) : NULL;
        Py_XDECREF(module);
        if (fn == NULL) {
            PyErr_Clear();
            module = PyImport_ImportModule("stridewise.integrations.torch_ops");
            py = module ? PyObject_GetAttrString(module, "bump") : NULL;
            Py_XDECREF(module);
            if (py == NULL)
                return -1;
        }
    }
    if (fn != NULL)
        return fn(x);
    PyObject *r = PyObject_CallOneArg(py, x);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

static TorchKey
torch_key_fn(void)
{
    static TorchKey fn = NULL;
    if (fn == NULL) {
        /* imported first: PyCapsule_Import reads "_torch" as the package's attribute, so a
           process whose first call came before anything imported stridewise.launch._torch keyed
           every tensor through the (slower) accessors */
        PyObject *module = PyImport_ImportModule("stridewise.launch._torch");
        fn = module ? (TorchKey)PyCapsule_Import("stridewise.launch._torch.key", 0) : NULL;
        Py_XDECREF(module);
        if (fn == NULL) {
            PyErr_Clear();    /* not built, or built for another torch: the accessors key */
            fn = no_torch_key;
        }
    }
    return fn;
}

/* A buffer exporter's data pointer and writeability (a NumPy array's, without the dict that
   __array_interface__ builds; no format is asked for, so ml_dtypes' dtypes export too):
   0, or -1 with a Python error. */
static int
buffer_pointer(PyObject *x, uint64_t *ptr, int *writeable)
{
    Py_buffer view;
    if (PyObject_GetBuffer(x, &view, PyBUF_STRIDES) < 0)
        return -1;
    *ptr = (uint64_t)(uintptr_t)view.buf;
    *writeable = !view.readonly;
    PyBuffer_Release(&view);
    return 0;
}

static PyObject *
data_pointer(PyObject *module, PyObject *x)
{
    uint64_t ptr;
    int writeable;
    if (buffer_pointer(x, &ptr, &writeable) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(ptr);
}

/* The keyer of x's type (a new reference), as _fast_call finds it: NULL with no error when
   x has none. */
static PyObject *
keyer_of(PyObject *x)
{
    PyObject *keyer = PyDict_GetItemWithError(keyers, (PyObject *)Py_TYPE(x));
    if (keyer != NULL)
        return Py_NewRef(keyer);
    if (PyErr_Occurred())
        return NULL;
    keyer = PyObject_CallOneArg(find_keyer, x);   /* registers torch.Tensor on first sight */
    if (keyer == Py_None)
        Py_CLEAR(keyer);
    return keyer;
}

/* One argument's key segment through its keyer: 1 on success, 0 when the call cannot take
   the fast path, -1 on an error. */
static int
key_with(Keying *k, PyObject *keyer, PyObject *x, int is_out)
{
    if (k->nkey + 16 > MAX_KEY || k->nptr >= MAX_POINTERS || k->nscalars >= MAX_ARGS)
        return 0;
    if (keyer == torch_key) {    /* inline, as _fast_call: (dtype, shape, stride(), device, p % 16) */
        PyObject *items[5];
        int got = torch_key_fn()(x, items, &k->ptrs[k->nptr]);
        if (got == 2)            /* it needs the dispatcher: _torch_ops.routed */
            return 0;
        if (got) {               /* stridewise.launch._torch's, in C++ */
            k->nptr++;
            for (int i = 0; i < 5; i++)
                k->key[k->nkey++] = items[i];
            return 1;
        }
        /* not keyed in C++: the Python keyer (it marks torch's lazy bits and autograd) */
    }
    if (keyer == numpy_key) {    /* inline, as _numpy_key: (ndarray, dtype, shape, strides,
                                    writeable, p % 16) */
        uint64_t ptr;
        int writeable;
        if (buffer_pointer(x, &ptr, &writeable) == 0) {
            k->ptrs[k->nptr++] = ptr;
            if (push(k, Py_NewRef((PyObject *)Py_TYPE(x))) || push(k, PyObject_GetAttr(x, s_dtype)) ||
                push(k, PyObject_GetAttr(x, s_shape)) || push(k, PyObject_GetAttr(x, s_strides)) ||
                push(k, PyBool_FromLong(writeable)) ||
                push(k, PyLong_FromUnsignedLong((unsigned long)(ptr % 16))))
                return -1;
            return 1;
        }
        PyErr_Clear();           /* an array that exports no buffer: the Python keyer */
    }
    PyObject *r = PyObject_CallOneArg(keyer, x);
    if (r == NULL)
        return -1;
    PyObject *seg, *p;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 || !PyTuple_Check(seg = PyTuple_GET_ITEM(r, 0))
        || k->nkey + PyTuple_GET_SIZE(seg) > MAX_KEY) {
        Py_DECREF(r);
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seg); i++)
        push(k, Py_NewRef(PyTuple_GET_ITEM(seg, i)));
    p = PyTuple_GET_ITEM(r, 1);
    int ok = 1;
    if (p != Py_None) {
        k->ptrs[k->nptr] = PyLong_AsUnsignedLongLong(p);
        if (k->ptrs[k->nptr] == (uint64_t)-1 && PyErr_Occurred())
            ok = -1;
        k->nptr++;
    } else if (is_out) {
        ok = 0;
    } else {
        k->scalars[k->nscalars++] = x;
    }
    Py_DECREF(r);
    return ok;
}

static int
key_one(Keying *k, PyObject *x, int is_out)
{
    PyObject *keyer = keyer_of(x);
    if (keyer == NULL)
        return PyErr_Occurred() ? -1 : 0;
    int ok = key_with(k, keyer, x, is_out);
    Py_DECREF(keyer);
    return ok;
}

/* The call's launch once keyed: overlap check or allocation, then the launcher. */
static PyObject *
run_fast(Keying *k, PyObject *fast, PyObject *args, PyObject *out, int inplace)
{
    PyObject *alloc = PyObject_GetAttr(fast, s_alloc), *result = NULL, *values = NULL, *r;
    if (alloc == NULL)
        return NULL;
    if (alloc == Py_None) {
        if (inplace) {
            if (k->nptr == 0 || k->nptr >= MAX_POINTERS)
                goto none;
            result = PySequence_GetItem(args, 0);
            memmove(k->ptrs + 1, k->ptrs, sizeof(uint64_t) * k->nptr++);
        } else {
            result = Py_NewRef(out);
        }
        if (result == NULL)
            goto done;
        PyObject *extents = PyObject_GetAttr(fast, s_extents);
        if (extents == NULL)
            goto fail;
        if (!PyTuple_Check(extents) || PyTuple_GET_SIZE(extents) != k->nptr - 1) {
            Py_DECREF(extents);
            goto none;
        }
        for (Py_ssize_t i = 1; i < k->nptr; i++) {
            PyObject *e = PyTuple_GET_ITEM(extents, i - 1);
            long long below = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 0));
            long long above = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 1));
            int same = PyObject_IsTrue(PyTuple_GET_ITEM(e, 2));
            long long d = (long long)(k->ptrs[i] - k->ptrs[0]);
            if (PyErr_Occurred()) {
                Py_DECREF(extents);
                goto fail;
            }
            if (below < d && d < above && !(same && d == 0)) {
                Py_DECREF(extents);       /* may overlap: the full check decides, or raises */
                goto none;
            }
        }
        Py_DECREF(extents);
    } else {
        r = PyObject_CallNoArgs(alloc);
        if (r == NULL)
            goto done;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 || k->nptr >= MAX_POINTERS) {
            Py_DECREF(r);
            goto none;
        }
        result = Py_NewRef(PyTuple_GET_ITEM(r, 0));
        uint64_t o = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(r, 1));
        Py_DECREF(r);
        if (o == (uint64_t)-1 && PyErr_Occurred())
            goto fail;
        PyObject *mod = PyObject_GetAttr(fast, s_out_mod);
        long want = mod ? PyLong_AsLong(mod) : -1;
        Py_XDECREF(mod);
        if (PyErr_Occurred())
            goto fail;
        if ((long)(o % 16) != want)
            goto none;
        memmove(k->ptrs + 1, k->ptrs, sizeof(uint64_t) * k->nptr++);
        k->ptrs[0] = o;
    }
    if (k->nscalars) {     /* [dt.slot_value(v) for dt, v in zip(fast.params, scalars)] */
        PyObject *params = PyObject_GetAttr(fast, s_params);
        if (params == NULL)
            goto fail;
        Py_ssize_t n = PyObject_Length(params);
        values = n < 0 ? NULL : PyList_New(n < k->nscalars ? n : k->nscalars);
        for (Py_ssize_t i = 0; values != NULL && i < PyList_GET_SIZE(values); i++) {
            PyObject *dt = PySequence_GetItem(params, i);
            PyObject *v = dt ? PyObject_CallMethodOneArg(dt, s_slot_value, k->scalars[i]) : NULL;
            Py_XDECREF(dt);
            if (v == NULL)
                Py_CLEAR(values);
            else
                PyList_SET_ITEM(values, i, v);
        }
        Py_DECREF(params);
        if (values == NULL)
            goto fail;
    }
    PyObject *launch = PyObject_GetAttr(fast, s_launch);
    if (launch == NULL)
        goto fail;
    if (Py_IS_TYPE(launch, &LauncherType) && ((Launcher *)launch)->nptr == k->nptr) {
        r = launcher_run((Launcher *)launch, k->ptrs, values);
    } else if (Py_IS_TYPE(launch, &HostLauncherType) && ((HostLauncher *)launch)->nptr == k->nptr) {
        r = host_run((HostLauncher *)launch, k->ptrs, values);
    } else {
        PyObject *list = pointer_list(k->ptrs, k->nptr);
        r = list ? PyObject_CallFunctionObjArgs(launch, list, values ? values : empty, NULL) : NULL;
        Py_XDECREF(list);
    }
    Py_DECREF(launch);
    if (r == NULL)
        goto fail;
    Py_DECREF(r);
    goto done;
none:
    Py_CLEAR(result);
    result = Py_NewRef(Py_None);
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_DECREF(alloc);
    Py_XDECREF(values);
    return result;
}

/* fast_call(op, args, out, convention, algorithm, inplace, calls): as _ops._fast_call. */
static PyObject *
fast_call(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "fast_call(op, args, out, convention, algorithm, inplace, calls)");
        return NULL;
    }
    if (keyers == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "stridewise.launch._warm.configure was not called");
        return NULL;
    }
    PyObject *args = a[1], *out = a[2], *calls = a[6], *result = NULL;
    int inplace = PyObject_IsTrue(a[5]);
    if (inplace < 0)
        return NULL;
    Keying k;
    k.nkey = k.nptr = k.nscalars = 0;
    for (int i = 0; i < 4; i++)
        push(&k, Py_NewRef(a[i == 0 ? 0 : i + 2]));   /* op, convention, algorithm, inplace */
    int ok = 1;
    if (out == Py_None) {
        push(&k, Py_NewRef(Py_None));
    } else {
        if (PyList_CheckExact(out) || PyTuple_CheckExact(out)) {
            if (PySequence_Fast_GET_SIZE(out) != 1)
                Py_RETURN_NONE;
            out = PySequence_Fast_GET_ITEM(out, 0);
        }
        ok = key_one(&k, out, 1);
    }
    PyObject *seq = ok == 1 ? PySequence_Fast(args, "args must be a sequence") : NULL;
    if (ok == 1 && seq == NULL)
        ok = -1;
    for (Py_ssize_t i = 0; ok == 1 && i < PySequence_Fast_GET_SIZE(seq); i++)
        ok = key_one(&k, PySequence_Fast_GET_ITEM(seq, i), 0);
    Py_XDECREF(seq);
    if (ok != 1) {
        keying_clear(&k);
        if (ok < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *key = PyTuple_New(k.nkey);
    if (key == NULL) {
        keying_clear(&k);
        return NULL;
    }
    memcpy(&PyTuple_GET_ITEM(key, 0), k.key, sizeof(PyObject *) * k.nkey);   /* steals */
    k.nkey = 0;
    if (calls == Py_None) {   /* _fast_key's answer: (key, pointers, scalars or None) */
        PyObject *ptrs = pointer_list(k.ptrs, k.nptr), *scalars = Py_NewRef(Py_None);
        if (k.nscalars) {
            Py_DECREF(scalars);
            scalars = PyList_New(k.nscalars);
            for (Py_ssize_t i = 0; scalars != NULL && i < k.nscalars; i++)
                PyList_SET_ITEM(scalars, i, Py_NewRef(k.scalars[i]));
        }
        result = ptrs && scalars ? PyTuple_Pack(3, key, ptrs, scalars) : NULL;
        Py_XDECREF(ptrs);
        Py_XDECREF(scalars);
        Py_DECREF(key);
        return result;
    }
    PyObject *fast = PyDict_GetItemWithError(calls, key);   /* borrowed */
    Py_DECREF(key);
    if (fast == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    Py_INCREF(fast);
    result = run_fast(&k, fast, args, out, inplace);
    Py_DECREF(fast);
    if (result != NULL && result != Py_None && (inplace || out != Py_None)) {
        /* an in-place write counts, as torch's own do */
        PyObject *keyer = PyDict_GetItemWithError(keyers, (PyObject *)Py_TYPE(result));
        if ((keyer == NULL && PyErr_Occurred()) || (keyer == torch_key && torch_bump(result) < 0))
            Py_CLEAR(result);
    }
    return result;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *k, *t, *n, *f;
    if (!PyArg_ParseTuple(args, "O!OOO", &PyDict_Type, &k, &t, &n, &f))
        return NULL;
    Py_XSETREF(keyers, Py_NewRef(k));
    Py_XSETREF(torch_key, Py_NewRef(t));
    Py_XSETREF(numpy_key, Py_NewRef(n));
    Py_XSETREF(find_keyer, Py_NewRef(f));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"fast_call", (PyCFunction)(void (*)(void))fast_call, METH_FASTCALL,
     "fast_call(op, args, out, convention, algorithm, inplace, calls)\n\n"
     "_ops._fast_call, compiled: the result, or None when the call needs the full pipeline;\n"
     "with calls None, (key, pointers, scalars or None)."},
    {"data_pointer", data_pointer, METH_O,
     "data_pointer(array)\n\nThe data pointer of a buffer exporter (a NumPy array), through the "
     "buffer protocol."},
    {"configure", configure, METH_VARARGS,
     "configure(keyers, torch_key, numpy_key, keyer)\n\n_arrays' keyer table, torch and NumPy "
     "keyers and keyer lookup."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "stridewise.launch._warm",
    "The warm call path, compiled (see _ops._fast_call and backends.cuda.bind).", -1, methods,
};

PyMODINIT_FUNC
PyInit__warm(void)
{
    const char *names[] = {"data_ptr", "dtype", "shape", "stride", "strides", "get_device",
                           "alloc", "extents", "out_mod", "params", "launch", "slot_value"};
    PyObject **slots[] = {&s_data_ptr, &s_dtype, &s_shape, &s_stride, &s_strides, &s_get_device,
                          &s_alloc, &s_extents, &s_out_mod, &s_params, &s_launch, &s_slot_value};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        if ((*slots[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return NULL;
    if ((empty = PyTuple_New(0)) == NULL || PyType_Ready(&LauncherType) < 0
        || PyType_Ready(&HostLauncherType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    /* the interface version _compiled expects: a module built from older sources is not used */
    if (PyModule_AddIntConstant(m, "ABI", 5) < 0 ||
        PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) < 0 ||
        PyModule_AddObjectRef(m, "HostLauncher", (PyObject *)&HostLauncherType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#ifdef Py_GIL_DISABLED
    PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED);
#endif
    return m;
}
