//! How TensorRT's C++ objects are laid out, and the calls through them.
//!
//! Reading the headers (Itanium C++ ABI, what GCC builds TensorRT with on
//! Linux): every `apiv::V…` class derives from `VRoot`, whose only member is
//! a virtual destructor, which takes the first two slots (complete-object
//! and deleting destructor); the class's own virtual functions follow in
//! declaration order, overloads included. So `VNetworkDefinition::addInput`,
//! its first function, is slot 2. The tables below were counted that way
//! from `NvInferImpl.h` and checked against the compiler: a C++ program
//! including each release's headers printed the slot of every function
//! used (an Itanium pointer to a virtual member holds 1 + its byte offset in
//! the vtable), static-asserted each signature, and printed the offset of
//! `mImpl` (8; `ILayer`'s `mLayer` too) and the vtable size of each public
//! class (2 for all but the network and the config, whose other virtual
//! functions come after the destructor pair: `delete` is slot 1). The
//! releases checked: 8.5.1–8.5.3, 8.6.0, 8.6.1 and 9.0–9.3 (one layout),
//! 10.0–10.16 (identical in every slot used) and 11.0–11.1. Within a major
//! TensorRT only appends; between majors slots move (10 dropped
//! implicit-batch functions, 11 dropped more), and signatures change: 8.x
//! and 9.x pass `Dims` (`Dims32`) by value, 10 and later pass `Dims64
//! const&`; `createExecutionContext` gained an allocation strategy in 10;
//! `deserializeCudaEngine` lost its plugin-factory argument in 10; 11's
//! `ILogger` derives from `IVersionedInterface`, whose two virtual functions
//! and destructor come before `log`. 8.0 to 8.4 lack `enqueueV3`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::{Mutex, PoisonError};

/// How `ILogger` is laid out: which entries of the vtable cudaenv's logger
/// object must fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoggerAbi {
    /// `log` first, then the destructor (TensorRT 5 to 10; MSVC's single
    /// destructor entry also comes after `log`).
    Plain,
    /// TensorRT 11 (`ILogger : IVersionedInterface`): `getAPILanguage`,
    /// `getInterfaceInfo`, the destructor pair, then `log`.
    Versioned,
}

/// The engine check's layouts, one per run of releases with the same slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// TensorRT 8.5 to 9.x: `Dims32` by value; the first with `enqueueV3`.
    V8,
    /// TensorRT 10.x: `Dims64 const&`, `createExecutionContext(strategy)`.
    V10,
    /// TensorRT 11.x: 10's signatures, fewer builder and context functions.
    V11,
}

/// The `apiv::V…` slots the engine check calls (Itanium ABI).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slots {
    pub host_memory_data: usize,
    pub host_memory_size: usize,
    pub tensor_set_name: usize,
    pub layer_get_output: usize,
    pub network_add_input: usize,
    pub network_mark_output: usize,
    pub network_add_element_wise: usize,
    pub network_add_matrix_multiply: usize,
    pub network_add_constant: usize,
    pub builder_create_builder_config: usize,
    pub builder_create_network_v2: usize,
    pub builder_build_serialized_network: usize,
    pub runtime_deserialize_cuda_engine: usize,
    pub engine_create_execution_context: usize,
    pub context_set_tensor_address: usize,
    pub context_enqueue_v3: usize,
}

/// 8.5.1 to 9.3 (`NvInferImpl.h`): VHostMemory data/size; VTensor setName;
/// VLayer getOutput; VNetworkDefinition addInput, markOutput,
/// addElementWise (after the 10 legacy layer functions),
/// addMatrixMultiply, addConstant; VBuilder createBuilderConfig,
/// createNetworkV2, buildSerializedNetwork; VRuntime deserializeCudaEngine
/// (its first function); VCudaEngine createExecutionContext (after the 9
/// binding functions); VExecutionContext setTensorAddress, enqueueV3.
const SLOTS_8: Slots = Slots {
    host_memory_data: 2,
    host_memory_size: 3,
    tensor_set_name: 2,
    layer_get_output: 8,
    network_add_input: 2,
    network_mark_output: 3,
    network_add_element_wise: 13,
    network_add_matrix_multiply: 27,
    network_add_constant: 28,
    builder_create_builder_config: 9,
    builder_create_network_v2: 11,
    builder_build_serialized_network: 17,
    runtime_deserialize_cuda_engine: 2,
    engine_create_execution_context: 11,
    context_set_tensor_address: 32,
    context_enqueue_v3: 44,
};

/// 10.0 to 10.16: the implicit-batch and legacy-layer functions are gone,
/// `VRuntime` opens with `getPImpl`.
const SLOTS_10: Slots = Slots {
    network_add_element_wise: 9,
    network_add_matrix_multiply: 22,
    network_add_constant: 23,
    builder_create_builder_config: 7,
    builder_create_network_v2: 8,
    builder_build_serialized_network: 14,
    runtime_deserialize_cuda_engine: 3,
    engine_create_execution_context: 5,
    context_set_tensor_address: 24,
    context_enqueue_v3: 37,
    ..SLOTS_8
};

/// 11.0 and 11.1: `VBuilder` lost `platformHasFastFp16/Int8` and
/// `platformHasTf32`, `VExecutionContext` one function before
/// `setTensorAddress`.
const SLOTS_11: Slots = Slots {
    builder_create_builder_config: 5,
    builder_create_network_v2: 6,
    builder_build_serialized_network: 11,
    context_set_tensor_address: 23,
    context_enqueue_v3: 36,
    ..SLOTS_10
};

impl Layout {
    pub fn slots(self) -> &'static Slots {
        match self {
            Layout::V8 => &SLOTS_8,
            Layout::V10 => &SLOTS_10,
            Layout::V11 => &SLOTS_11,
        }
    }

    /// `createNetworkV2`'s flags: explicit batch (`1 << kEXPLICIT_BATCH`, 0)
    /// before 10; from 10 every network is explicit-batch and bit 0 means
    /// something else (11: the ignored `kSTRONGLY_TYPED`).
    pub(super) fn network_flags(self) -> u32 {
        match self {
            Layout::V8 => 1,
            Layout::V10 | Layout::V11 => 0,
        }
    }
}

// --- the logger -------------------------------------------------------------------

/// `ILogger::Severity::kERROR`; `kINTERNAL_ERROR` is 0.
const SEVERITY_ERROR: c_int = 1;
/// `APILanguage::kCPP` (11's `IVersionedInterface::getAPILanguage`).
const API_LANGUAGE_CPP: c_int = 0;
/// TensorRT's errors a logger keeps (the last ones).
const KEPT_ERRORS: usize = 8;

/// A C++ `nvinfer1::ILogger` as TensorRT sees it: a pointer to a vtable,
/// then (unseen by TensorRT) the errors it logged.
#[repr(C)]
pub(super) struct Logger {
    vtable: *const usize,
    errors: Mutex<Vec<String>>,
}

impl Logger {
    /// A logger laid out as `abi` says, alive for the rest of the process:
    /// TensorRT keeps the first logger it is given (the child exits after
    /// its checks).
    pub(super) fn leak(abi: LoggerAbi) -> &'static Logger {
        let dtor = logger_drop as *const () as usize;
        let log = logger_log as *const () as usize;
        let table: Vec<usize> = match abi {
            LoggerAbi::Plain => vec![log, dtor, dtor],
            LoggerAbi::Versioned => vec![
                logger_api_language as *const () as usize,
                logger_interface_info as *const () as usize,
                dtor,
                dtor,
                log,
            ],
        };
        Box::leak(Box::new(Logger {
            vtable: Box::leak(table.into_boxed_slice()).as_ptr(),
            errors: Mutex::new(Vec::new()),
        }))
    }

    pub(super) fn as_ptr(&'static self) -> *mut c_void {
        (self as *const Logger).cast_mut().cast()
    }

    pub(super) fn last_error(&self) -> Option<String> {
        let errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        errors.last().cloned()
    }

    /// `call` and what went wrong, with TensorRT's last logged error.
    pub(super) fn failure(&self, call: &str, what: &str) -> String {
        match self.last_error() {
            Some(e) => format!("{call} {what} (TensorRT: {})", e.trim()),
            None => format!("{call} {what}"),
        }
    }
}

/// `ILogger::log(Severity, AsciiChar const*)`, which TensorRT may call from
/// any of its threads. Errors are kept; the rest is dropped.
unsafe extern "C" fn logger_log(this: *const Logger, severity: c_int, msg: *const c_char) {
    if severity > SEVERITY_ERROR || msg.is_null() {
        return;
    }
    // SAFETY: `this` is the leaked logger TensorRT was given; `msg` is a
    // NUL-terminated string alive for the call (`ILogger::log`'s contract).
    let (logger, text) = unsafe { (&*this, CStr::from_ptr(msg).to_string_lossy()) };
    let mut errors = logger.errors.lock().unwrap_or_else(PoisonError::into_inner);
    if errors.len() == KEPT_ERRORS {
        errors.remove(0);
    }
    errors.push(text.into_owned());
}

/// The destructors: the logger is never destroyed by TensorRT, and lives on.
unsafe extern "C" fn logger_drop(_this: *mut c_void) {}

/// `IVersionedInterface::getAPILanguage() const` (TensorRT 11).
unsafe extern "C" fn logger_api_language(_this: *const c_void) -> c_int {
    API_LANGUAGE_CPP
}

/// `InterfaceInfo { char const* kind; int32_t major; int32_t minor; }`
/// (`NvInferRuntimeBase.h`, 11): trivially copyable, 16 bytes, so returned
/// in two registers as a C struct is.
#[repr(C)]
struct InterfaceInfo {
    kind: *const c_char,
    major: i32,
    minor: i32,
}

/// `IVersionedInterface::getInterfaceInfo() const`: what `ILogger`'s
/// header answers, `{"ILogger", 1, 0}`.
unsafe extern "C" fn logger_interface_info(_this: *const c_void) -> InterfaceInfo {
    InterfaceInfo {
        kind: c"ILogger".as_ptr(),
        major: 1,
        minor: 0,
    }
}

// --- calling through the vtables --------------------------------------------------

/// The function in entry `slot` of the vtable of the C++ object at `obj`.
///
/// # Safety
/// `obj` is a live polymorphic object whose vtable has an entry `slot`,
/// and `F` is the `extern "C"` type of that virtual function with `this`
/// first (Itanium: a member function is a plain function of `this` and its
/// arguments).
pub(super) unsafe fn virtual_fn<F: Copy>(obj: *const c_void, slot: usize) -> F {
    const { assert!(size_of::<F>() == size_of::<usize>()) };
    // SAFETY: per the caller; the vtable pointer is the object's first word.
    unsafe {
        let vtable = *obj.cast::<*const usize>();
        std::mem::transmute_copy::<usize, F>(&*vtable.add(slot))
    }
}

/// The `apiv::V…` object behind a public TensorRT object: `mImpl` (an
/// `ILayer`'s `mLayer`), the word after its vtable pointer.
///
/// # Safety
/// `public` is a live public TensorRT object (8.0 and later).
pub(super) unsafe fn implementation(public: *mut c_void) -> *mut c_void {
    // SAFETY: per the caller: `{ vptr; mImpl }`, the layout the probe of
    // every release's headers found.
    unsafe { *public.cast::<*mut c_void>().add(1) }
}

/// Calls what a public object's inline method calls: `mImpl`'s virtual
/// function at `slot`, with `mImpl` as `this`. An `unsafe` macro: the
/// caller states which declaration the slot and the types come from.
macro_rules! vcall {
    ($obj:expr, $slot:expr, fn($($t:ty),*) -> $r:ty $(, $a:expr)*) => {{
        let this = implementation($obj);
        let f: unsafe extern "C" fn(*mut c_void $(, $t)*) -> $r = virtual_fn(this, $slot);
        f(this $(, $a)*)
    }};
}
pub(super) use vcall;

/// `delete obj` on a public TensorRT object: its deleting destructor, the
/// second entry of its vtable (Itanium: `virtual ~INoCopy()`, the first
/// virtual function, takes the complete-object then the deleting entry).
///
/// # Safety
/// `obj` is a live public TensorRT object the caller owns, and nothing
/// uses it afterwards.
unsafe fn delete(obj: *mut c_void) {
    // SAFETY: per the caller.
    unsafe {
        let d: unsafe extern "C" fn(*mut c_void) = virtual_fn(obj, 1);
        d(obj);
    }
}

/// The public objects the check created, deleted in reverse order
/// (context, engine, runtime, plan, config, network, builder), as
/// TensorRT's samples release them.
pub(super) struct Owned(pub(super) Vec<*mut c_void>);

impl Owned {
    pub(super) fn push(&mut self, obj: *mut c_void) -> *mut c_void {
        self.0.push(obj);
        obj
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        while let Some(obj) = self.0.pop() {
            // SAFETY: each was returned (non-null) by the TensorRT call
            // that creates it, owned by the caller as the headers say, and
            // is dropped only after the objects created from it.
            unsafe { delete(obj) };
        }
    }
}

/// `nvinfer1::Dims32` (8.x, 9.x: `int32_t nbDims; int32_t d[8]`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(super) struct Dims32 {
    pub(super) nb_dims: i32,
    pub(super) d: [i32; 8],
}

/// `nvinfer1::Dims64` (10 and later: `int32_t nbDims; int64_t d[8]`).
#[repr(C)]
#[derive(Debug)]
pub(super) struct Dims64 {
    pub(super) nb_dims: i32,
    pub(super) d: [i64; 8],
}

/// `nvinfer1::Weights { DataType type; void const* values; int64_t count; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Weights {
    pub(super) data_type: i32,
    pub(super) values: *const c_void,
    pub(super) count: i64,
}

/// `DataType::kFLOAT`, `MatrixOperation::kNONE`, `ElementWiseOperation::kSUM`,
/// `ExecutionContextAllocationStrategy::kSTATIC`: 0 in every release.
const FLOAT: i32 = 0;
pub(super) const MATRIX_NONE: i32 = 0;
pub(super) const ELEMENTWISE_SUM: i32 = 0;
pub(super) const ALLOCATION_STATIC: i32 = 0;

/// A network under construction, and how its release passes things.
pub(super) struct Network {
    pub(super) ptr: *mut c_void,
    pub(super) layout: Layout,
}

impl Network {
    fn slots(&self) -> &'static Slots {
        self.layout.slots()
    }

    /// `addInput(name, kFLOAT, dims)`.
    ///
    /// # Safety
    /// `self.ptr` is a live `INetworkDefinition` of `self.layout`.
    pub(super) unsafe fn add_input(&self, name: &CStr, dims: &[usize]) -> *mut c_void {
        let s = self.slots().network_add_input;
        // SAFETY: `ITensor* addInput(char const* name, DataType type, Dims
        // dimensions)` (8.x, 9.x) / `(…, Dims const& dimensions)` (10, 11).
        unsafe {
            match self.layout {
                Layout::V8 => vcall!(
                    self.ptr,
                    s,
                    fn(*const c_char, i32, Dims32) -> *mut c_void,
                    name.as_ptr(),
                    FLOAT,
                    dims32(dims)
                ),
                Layout::V10 | Layout::V11 => vcall!(
                    self.ptr,
                    s,
                    fn(*const c_char, i32, *const Dims64) -> *mut c_void,
                    name.as_ptr(),
                    FLOAT,
                    &dims64(dims)
                ),
            }
        }
    }

    /// `addConstant(dims, weights)`'s output tensor; `values` must outlive
    /// the build (TensorRT keeps the pointer until then).
    ///
    /// # Safety
    /// As `add_input`.
    pub(super) unsafe fn constant(
        &self,
        dims: &[usize],
        values: &[f32],
    ) -> Result<*mut c_void, String> {
        let w = Weights {
            data_type: FLOAT,
            values: values.as_ptr().cast(),
            count: values.len() as i64,
        };
        let s = self.slots().network_add_constant;
        // SAFETY: `IConstantLayer* addConstant(Dims dimensions, Weights
        // weights)` (8.x, 9.x) / `(Dims const& dimensions, Weights weights)`
        // (10, 11).
        let layer = unsafe {
            match self.layout {
                Layout::V8 => vcall!(
                    self.ptr,
                    s,
                    fn(Dims32, Weights) -> *mut c_void,
                    dims32(dims),
                    w
                ),
                Layout::V10 | Layout::V11 => vcall!(
                    self.ptr,
                    s,
                    fn(*const Dims64, Weights) -> *mut c_void,
                    &dims64(dims),
                    w
                ),
            }
        };
        // SAFETY: a layer the network just returned (null checked inside).
        unsafe { self.output(layer, "addConstant") }
    }

    /// A layer's first output (`ILayer::getOutput(0)`), or which call
    /// returned no layer.
    ///
    /// # Safety
    /// `layer` is null or a live layer of this network.
    pub(super) unsafe fn output(
        &self,
        layer: *mut c_void,
        call: &str,
    ) -> Result<*mut c_void, String> {
        if layer.is_null() {
            return Err(format!("{call} returned no layer"));
        }
        // SAFETY: `ITensor* VLayer::getOutput(int32_t index) const`, called
        // through the layer's `mLayer` (the word after its vtable pointer,
        // for every layer class: they derive from `ILayer` alone).
        let t = unsafe {
            vcall!(
                layer,
                self.slots().layer_get_output,
                fn(i32) -> *mut c_void,
                0
            )
        };
        if t.is_null() {
            Err(format!("{call}'s layer has no output"))
        } else {
            Ok(t)
        }
    }
}

fn dims32(d: &[usize]) -> Dims32 {
    let mut out = Dims32 {
        nb_dims: d.len() as i32,
        d: [0; 8],
    };
    for (o, x) in out.d.iter_mut().zip(d) {
        *o = *x as i32;
    }
    out
}

fn dims64(d: &[usize]) -> Dims64 {
    let mut out = Dims64 {
        nb_dims: d.len() as i32,
        d: [0; 8],
    };
    for (o, x) in out.d.iter_mut().zip(d) {
        *o = *x as i64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slots as counted in each release's `NvInferImpl.h` (and printed
    /// by the compiler from those headers), pinned so that a change to a
    /// table is a change someone reviews against the headers.
    #[test]
    fn each_layout_has_the_slots_of_its_headers() {
        let s8 = Layout::V8.slots();
        assert_eq!(
            [
                s8.host_memory_data,
                s8.host_memory_size,
                s8.tensor_set_name,
                s8.layer_get_output,
                s8.network_add_input,
                s8.network_mark_output,
                s8.network_add_element_wise,
                s8.network_add_matrix_multiply,
                s8.network_add_constant,
                s8.builder_create_builder_config,
                s8.builder_create_network_v2,
                s8.builder_build_serialized_network,
                s8.runtime_deserialize_cuda_engine,
                s8.engine_create_execution_context,
                s8.context_set_tensor_address,
                s8.context_enqueue_v3,
            ],
            [2, 3, 2, 8, 2, 3, 13, 27, 28, 9, 11, 17, 2, 11, 32, 44]
        );
        let s10 = Layout::V10.slots();
        assert_eq!(
            [
                s10.network_add_element_wise,
                s10.network_add_matrix_multiply,
                s10.network_add_constant,
                s10.builder_create_builder_config,
                s10.builder_create_network_v2,
                s10.builder_build_serialized_network,
                s10.runtime_deserialize_cuda_engine,
                s10.engine_create_execution_context,
                s10.context_set_tensor_address,
                s10.context_enqueue_v3,
            ],
            [9, 22, 23, 7, 8, 14, 3, 5, 24, 37]
        );
        let s11 = Layout::V11.slots();
        assert_eq!(
            [
                s11.builder_create_builder_config,
                s11.builder_create_network_v2,
                s11.builder_build_serialized_network,
                s11.context_set_tensor_address,
                s11.context_enqueue_v3,
            ],
            [5, 6, 11, 23, 36]
        );
        // What did not move: the first functions of their classes, and
        // the network's oldest ones.
        for s in [s10, s11] {
            assert_eq!(
                (s.host_memory_data, s.host_memory_size, s.tensor_set_name),
                (2, 3, 2)
            );
            assert_eq!(
                (
                    s.layer_get_output,
                    s.network_add_input,
                    s.network_mark_output
                ),
                (8, 2, 3)
            );
        }
        assert_eq!(
            (
                s11.network_add_matrix_multiply,
                s11.runtime_deserialize_cuda_engine,
                s11.engine_create_execution_context
            ),
            (22, 3, 5)
        );
        // `VRoot`'s destructor pair comes first in every class.
        for s in [s8, s10, s11] {
            let all = [
                s.host_memory_data,
                s.tensor_set_name,
                s.layer_get_output,
                s.network_add_input,
                s.builder_create_builder_config,
                s.runtime_deserialize_cuda_engine,
                s.engine_create_execution_context,
                s.context_set_tensor_address,
            ];
            assert!(all.iter().all(|&x| x >= 2), "{s:?}");
        }
        assert_eq!(Layout::V8.network_flags(), 1 << 0);
        assert_eq!(Layout::V10.network_flags(), 0);
        assert_eq!(Layout::V11.network_flags(), 0);
    }

    #[test]
    fn dims_and_weights_have_the_headers_sizes() {
        assert_eq!(size_of::<Dims32>(), 36);
        assert_eq!(size_of::<Dims64>(), 72);
        assert_eq!(std::mem::offset_of!(Dims64, d), 8);
        assert_eq!(size_of::<Weights>(), 24);
        assert_eq!(std::mem::offset_of!(Weights, count), 16);
        assert_eq!(size_of::<InterfaceInfo>(), 16);
        let d = dims32(&[32, 64]);
        assert_eq!((d.nb_dims, &d.d[..3]), (2, &[32, 64, 0][..]));
        let d = dims64(&[1, 32]);
        assert_eq!((d.nb_dims, &d.d[..3]), (2, &[1, 32, 0][..]));
    }

    /// Calls the logger as TensorRT does: through its vtable, at the slot
    /// the release's `ILogger` declares `log`.
    fn log(logger: &'static Logger, slot: usize, severity: c_int, msg: &CStr) {
        // SAFETY: `log`'s entry of the table `Logger::leak` built.
        unsafe {
            let f: unsafe extern "C" fn(*mut c_void, c_int, *const c_char) =
                virtual_fn(logger.as_ptr(), slot);
            f(logger.as_ptr(), severity, msg.as_ptr());
        }
    }

    #[test]
    fn the_logger_keeps_tensorrts_last_errors_and_drops_the_rest() {
        let plain = Logger::leak(LoggerAbi::Plain);
        log(plain, 0, 3, c"[MemUsageChange] Init CUDA");
        assert_eq!(plain.last_error(), None);
        assert_eq!(plain.failure("enqueueV3", "failed"), "enqueueV3 failed");
        log(plain, 0, 1, c"1: [network.cpp::addInput] Error Code 3");
        log(plain, 0, 2, c"a warning");
        assert_eq!(
            plain.failure("addInput", "returned no tensor"),
            "addInput returned no tensor (TensorRT: 1: [network.cpp::addInput] Error Code 3)"
        );
        for i in 0..20 {
            log(
                plain,
                0,
                0,
                &std::ffi::CString::new(format!("internal {i}")).unwrap(),
            );
        }
        let kept = plain.errors.lock().unwrap().clone();
        assert_eq!(kept.len(), KEPT_ERRORS);
        assert_eq!(kept.last().unwrap(), "internal 19");

        // 11's logger: `log` after `IVersionedInterface`'s entries.
        let versioned = Logger::leak(LoggerAbi::Versioned);
        log(versioned, 4, 1, c"boom");
        assert_eq!(versioned.last_error().as_deref(), Some("boom"));
        // SAFETY: entries 0 and 1 of the versioned table.
        let (language, info) = unsafe {
            let lang: unsafe extern "C" fn(*const c_void) -> c_int =
                virtual_fn(versioned.as_ptr(), 0);
            let info: unsafe extern "C" fn(*const c_void) -> InterfaceInfo =
                virtual_fn(versioned.as_ptr(), 1);
            (lang(versioned.as_ptr()), info(versioned.as_ptr()))
        };
        assert_eq!(language, API_LANGUAGE_CPP);
        // SAFETY: a static C string.
        let kind = unsafe { CStr::from_ptr(info.kind) };
        assert_eq!((kind, info.major, info.minor), (c"ILogger", 1, 0));
    }
}
