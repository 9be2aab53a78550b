//! The engine: defined, built, loaded and run, as an application does.
//!
//! The network is the smallest that runs a real kernel: an fp32 input
//! `[M, K]` times a constant `[K, N]` (`addMatrixMultiply`), plus a constant
//! `[1, N]` bias broadcast over the rows (`addElementWise`, sum). Inputs,
//! weights and bias are small integers (|x| ≤ 4), so every product and
//! partial sum is an integer far below 2^24, exact in fp32 whatever the
//! summation order, and the inputs are exact in TF32 too (TensorRT may pick
//! TF32 kernels for fp32 matrix multiplies): the output must equal the
//! host's result exactly. It is built with `buildSerializedNetwork`,
//! deserialised by a runtime as an application loads a plan file, run with
//! `setTensorAddress` + `enqueueV3` on the default stream (one launch: the
//! extra synchronisation TensorRT adds for it costs nothing here) and
//! copied back.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::time::Instant;

use super::abi::{
    ALLOCATION_STATIC, ELEMENTWISE_SUM, Layout, Logger, MATRIX_NONE, Network, Owned,
    implementation, vcall, virtual_fn,
};
use super::{
    K, M, N, Tensorrt, TensorrtResult, bias, engine_shape, input, max_error, plan, reference,
    tensorrt_version, weight,
};
use crate::machine::verify::ffi::{self, Runtime};

const INPUT_NAME: &CStr = c"x";
const OUTPUT_NAME: &CStr = c"y";

// --- the check --------------------------------------------------------------------

/// The version call, then a builder on `device` when there is one, then the
/// engine when this release's layout is known. `stage` names each step, so
/// that a step that hangs or crashes is named.
pub fn run_tensorrt(
    rt: Option<&Runtime>,
    t: &Tensorrt,
    device: Option<u32>,
    stage: &mut dyn FnMut(&str),
) -> TensorrtResult {
    let mut out = TensorrtResult::default();
    // SAFETY: `int32_t getInferLibVersion() noexcept`, no arguments.
    let code = unsafe { (t.getInferLibVersion)() };
    out.version = Some(tensorrt_version(code));
    let (Some(rt), Some(dev)) = (rt, device) else {
        return out;
    };
    out.device = Some(dev);
    let checks = plan(code, crate::os::ITANIUM_CXX_ABI);
    let abi = match checks.logger {
        Ok(abi) => abi,
        Err(why) => {
            out.engine_note = Some(why);
            return out;
        }
    };
    // SAFETY: a device index the runtime counted.
    let r = unsafe { (rt.cudaSetDevice)(dev as c_int) };
    if r != 0 {
        out.error = Some(rt.error("cudaSetDevice", r));
        out.builder = Some(false);
        return out;
    }
    let logger = Logger::leak(abi);
    // SAFETY: `void* createInferBuilder_INTERNAL(void* logger, int32_t
    // version)`: a logger object with the vtable its release calls
    // through, alive for the process, and the library's own version (what
    // code compiled against its headers passes).
    let builder = unsafe { (t.createInferBuilder_INTERNAL)(logger.as_ptr(), code) };
    out.builder = Some(!builder.is_null());
    if builder.is_null() {
        out.error = Some(logger.failure("createInferBuilder", "returned no builder"));
        return out;
    }
    match checks.engine {
        // Without a known layout the builder is left to the process's end,
        // as deleting it needs the layout too.
        Err(why) => out.engine_note = Some(why),
        Ok(layout) => {
            let engine = Engine {
                create_runtime: t.createInferRuntime_INTERNAL,
                code,
                logger,
                layout,
            };
            let mut owned = Owned(vec![builder]);
            if let Err(e) = engine.run(rt, builder, &mut owned, stage, &mut out) {
                out.error = Some(e);
            }
        }
    }
    out
}

/// What the engine steps share.
struct Engine {
    /// `createInferRuntime_INTERNAL`.
    create_runtime: unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void,
    code: c_int,
    logger: &'static Logger,
    layout: Layout,
}

impl Engine {
    fn run(
        &self,
        rt: &Runtime,
        builder: *mut c_void,
        owned: &mut Owned,
        stage: &mut dyn FnMut(&str),
        out: &mut TensorrtResult,
    ) -> Result<(), String> {
        stage(&format!("TensorRT engine {}: building", engine_shape()));
        out.engine_built = Some(false);
        let serialized = self.build(builder, owned, out)?;
        let context = self.load(serialized, owned)?;
        out.engine_built = Some(true);
        stage(&format!(
            "TensorRT engine {}: running on GPU {}",
            engine_shape(),
            out.device.unwrap_or(0)
        ));
        let got = self.execute(rt, context)?;
        out.max_error = Some(max_error(&got, &reference()));
        Ok(())
    }

    /// The network defined and built into a serialised engine (`IHostMemory`).
    fn build(
        &self,
        builder: *mut c_void,
        owned: &mut Owned,
        out: &mut TensorrtResult,
    ) -> Result<*mut c_void, String> {
        let s = self.layout.slots();
        let weights: Vec<f32> = (0..K * N).map(|i| weight(i / N, i % N)).collect();
        let biases: Vec<f32> = (0..N).map(bias).collect();
        let network = self.define(builder, owned, &weights, &biases)?;
        // SAFETY: `IBuilderConfig* VBuilder::createBuilderConfig()`.
        let config = unsafe {
            vcall!(
                builder,
                s.builder_create_builder_config,
                fn() -> *mut c_void
            )
        };
        if config.is_null() {
            return Err(self
                .logger
                .failure("createBuilderConfig", "returned no config"));
        }
        owned.push(config);
        let started = Instant::now();
        // SAFETY: `IHostMemory* VBuilder::buildSerializedNetwork(
        // INetworkDefinition& network, IBuilderConfig& config)`: both
        // created by this builder; the weights are alive until it returns.
        let serialized = unsafe {
            vcall!(
                builder,
                s.builder_build_serialized_network,
                fn(*mut c_void, *mut c_void) -> *mut c_void,
                network,
                config
            )
        };
        out.build_ms = Some(started.elapsed().as_secs_f64() * 1e3);
        if serialized.is_null() {
            return Err(self
                .logger
                .failure("buildSerializedNetwork", "built no engine"));
        }
        Ok(owned.push(serialized))
    }

    /// `x [M, K]` · constant `[K, N]` + constant `[1, N]` → `y`.
    fn define(
        &self,
        builder: *mut c_void,
        owned: &mut Owned,
        weights: &[f32],
        biases: &[f32],
    ) -> Result<*mut c_void, String> {
        let s = self.layout.slots();
        let flags = self.layout.network_flags();
        // SAFETY: `INetworkDefinition* VBuilder::createNetworkV2(
        // NetworkDefinitionCreationFlags flags)` (a uint32_t).
        let ptr = unsafe {
            vcall!(
                builder,
                s.builder_create_network_v2,
                fn(u32) -> *mut c_void,
                flags
            )
        };
        if ptr.is_null() {
            return Err(self
                .logger
                .failure("createNetworkV2", "returned no network"));
        }
        let net = Network {
            ptr: owned.push(ptr),
            layout: self.layout,
        };
        // SAFETY: the calls below are on this live network, with tensors it
        // returned; each declaration is named at its call.
        unsafe {
            let x = net.add_input(INPUT_NAME, &[M, K]);
            if x.is_null() {
                return Err(self.logger.failure("addInput", "returned no tensor"));
            }
            let w = net.constant(&[K, N], weights)?;
            // `IMatrixMultiplyLayer* addMatrixMultiply(ITensor& input0,
            // MatrixOperation op0, ITensor& input1, MatrixOperation op1)`.
            let mm = vcall!(
                net.ptr,
                s.network_add_matrix_multiply,
                fn(*mut c_void, i32, *mut c_void, i32) -> *mut c_void,
                x,
                MATRIX_NONE,
                w,
                MATRIX_NONE
            );
            let xw = net.output(mm, "addMatrixMultiply")?;
            let b = net.constant(&[1, N], biases)?;
            // `IElementWiseLayer* addElementWise(ITensor& input1, ITensor&
            // input2, ElementWiseOperation op)`.
            let add = vcall!(
                net.ptr,
                s.network_add_element_wise,
                fn(*mut c_void, *mut c_void, i32) -> *mut c_void,
                xw,
                b,
                ELEMENTWISE_SUM
            );
            let y = net.output(add, "addElementWise")?;
            // `void VTensor::setName(char const* name)`, through the tensor's
            // `mImpl`.
            vcall!(
                y,
                s.tensor_set_name,
                fn(*const c_char) -> (),
                OUTPUT_NAME.as_ptr()
            );
            // `void markOutput(ITensor& tensor)`.
            vcall!(net.ptr, s.network_mark_output, fn(*mut c_void) -> (), y);
        }
        Ok(net.ptr)
    }

    /// The plan deserialised by a runtime, as an application loads a plan
    /// file, and an execution context for it.
    fn load(&self, plan: *mut c_void, owned: &mut Owned) -> Result<*mut c_void, String> {
        let s = self.layout.slots();
        // SAFETY: `void* VHostMemory::data() const`, `std::size_t size()
        // const`, on the plan the builder returned.
        let (data, size) = unsafe {
            (
                vcall!(plan, s.host_memory_data, fn() -> *mut c_void),
                vcall!(plan, s.host_memory_size, fn() -> usize),
            )
        };
        // SAFETY: `void* createInferRuntime_INTERNAL(void* logger, int32_t
        // version)`, with the builder's logger and version.
        let runtime = unsafe { (self.create_runtime)(self.logger.as_ptr(), self.code) };
        if runtime.is_null() {
            return Err(self
                .logger
                .failure("createInferRuntime", "returned no runtime"));
        }
        owned.push(runtime);
        let sl = s.runtime_deserialize_cuda_engine;
        // SAFETY: `ICudaEngine* deserializeCudaEngine(void const* blob,
        // std::size_t size, IPluginFactory* pluginFactory)` (8.x, 9.x, whose
        // inline wrapper passes a null factory) / `(void const* blob,
        // std::size_t size)` (10, 11), on the plan's bytes.
        let engine = unsafe {
            match self.layout {
                Layout::V8 => vcall!(
                    runtime,
                    sl,
                    fn(*const c_void, usize, *mut c_void) -> *mut c_void,
                    data,
                    size,
                    std::ptr::null_mut()
                ),
                Layout::V10 | Layout::V11 => vcall!(
                    runtime,
                    sl,
                    fn(*const c_void, usize) -> *mut c_void,
                    data,
                    size
                ),
            }
        };
        if engine.is_null() {
            return Err(self
                .logger
                .failure("deserializeCudaEngine", "returned no engine"));
        }
        owned.push(engine);
        let sl = s.engine_create_execution_context;
        // SAFETY: `IExecutionContext* createExecutionContext()` (8.x, 9.x) /
        // `(ExecutionContextAllocationStrategy strategy)` (10, 11; kSTATIC,
        // the wrapper's default), on the engine just loaded.
        let context = unsafe {
            match self.layout {
                Layout::V8 => vcall!(engine, sl, fn() -> *mut c_void),
                Layout::V10 | Layout::V11 => {
                    vcall!(engine, sl, fn(i32) -> *mut c_void, ALLOCATION_STATIC)
                }
            }
        };
        if context.is_null() {
            return Err(self
                .logger
                .failure("createExecutionContext", "returned no context"));
        }
        Ok(owned.push(context))
    }

    /// One inference: the input copied in, the output (first filled with
    /// NaNs, so that a kernel that writes nothing is caught) copied back.
    fn execute(&self, rt: &Runtime, context: *mut c_void) -> Result<Vec<f32>, String> {
        let host_x: Vec<f32> = (0..M * K).map(|i| input(i / K, i % K)).collect();
        let mut host_y = vec![0f32; M * N];
        let (bx, by) = (size_of_val(&host_x[..]), size_of_val(&host_y[..]));
        let mut buffers = Device {
            rt,
            ptrs: Vec::new(),
        };
        let x = buffers.alloc(bx)?;
        let y = buffers.alloc(by)?;
        let check = |call: &str, r: c_int| {
            if r == 0 {
                Ok(())
            } else {
                Err(rt.error(call, r))
            }
        };
        // SAFETY: `x` holds `bx` bytes, as does `host_x`.
        check("cudaMemcpy", unsafe {
            (rt.cudaMemcpy)(
                x,
                host_x.as_ptr().cast(),
                bx,
                ffi::CUDA_MEMCPY_HOST_TO_DEVICE,
            )
        })?;
        // SAFETY: `y` holds `by` bytes.
        check("cudaMemset", unsafe { (rt.cudaMemset)(y, 0xff, by) })?;
        let s = self.layout.slots();
        for (name, ptr) in [(INPUT_NAME, x), (OUTPUT_NAME, y)] {
            // SAFETY: `bool setTensorAddress(char const* tensorName, void*
            // data)` on the live context; the buffers outlive the run.
            let ok = unsafe {
                vcall!(
                    context,
                    s.context_set_tensor_address,
                    fn(*const c_char, *mut c_void) -> u8,
                    name.as_ptr(),
                    ptr
                )
            };
            if ok == 0 {
                let call = format!("setTensorAddress(\"{}\")", name.to_string_lossy());
                return Err(self.logger.failure(&call, "failed"));
            }
        }
        // SAFETY: `bool enqueueV3(cudaStream_t stream)`: every I/O tensor
        // has an address; the default stream.
        let ok = unsafe {
            vcall!(
                context,
                s.context_enqueue_v3,
                fn(ffi::CudaStream) -> u8,
                std::ptr::null_mut()
            )
        };
        if ok == 0 {
            return Err(self.logger.failure("enqueueV3", "failed"));
        }
        // SAFETY: no arguments.
        check("cudaDeviceSynchronize", unsafe {
            (rt.cudaDeviceSynchronize)()
        })?;
        // SAFETY: `y` holds `by` bytes, as does `host_y`.
        check("cudaMemcpy", unsafe {
            (rt.cudaMemcpy)(
                host_y.as_mut_ptr().cast(),
                y,
                by,
                ffi::CUDA_MEMCPY_DEVICE_TO_HOST,
            )
        })?;
        Ok(host_y)
    }
}

/// Device buffers, freed when dropped.
struct Device<'a> {
    rt: &'a Runtime,
    ptrs: Vec<*mut c_void>,
}

impl Device<'_> {
    fn alloc(&mut self, bytes: usize) -> Result<*mut c_void, String> {
        let mut p = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; freed on drop.
        let r = unsafe { (self.rt.cudaMalloc)(&mut p, bytes) };
        if r != 0 {
            return Err(self.rt.error("cudaMalloc", r));
        }
        self.ptrs.push(p);
        Ok(p)
    }
}

impl Drop for Device<'_> {
    fn drop(&mut self) {
        for p in self.ptrs.drain(..) {
            // SAFETY: allocated by `alloc` on the current device.
            unsafe { (self.rt.cudaFree)(p) };
        }
    }
}

#[cfg(test)]
mod tests {
    //! A stand-in TensorRT made of fake objects laid out as the headers
    //! say (`{ vptr; mImpl }`, `mImpl` with its own vtable): it records
    //! every call with the arguments it received, so the test sees that
    //! each layout's signatures (Dims by value or by reference, the extra
    //! arguments) arrive intact, and that every object is deleted, last
    //! created first.

    use std::cell::{Cell, RefCell};
    use std::ptr::null_mut;

    use super::super::abi::{Dims32, Dims64, LoggerAbi, Weights};
    use super::*;

    thread_local! {
        static CALLS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        static LAYOUT: Cell<Layout> = const { Cell::new(Layout::V8) };
    }

    fn record(call: String) {
        CALLS.with(|c| c.borrow_mut().push(call));
    }

    /// A fake `apiv::V…` object.
    #[repr(C)]
    struct Imp {
        vtable: *const usize,
        name: String,
    }

    /// A fake public object.
    #[repr(C)]
    struct Public {
        vtable: *const usize,
        imp: *mut Imp,
    }

    /// The name of a fake `apiv` object (`this` of the calls).
    fn imp_name(this: *mut c_void) -> String {
        // SAFETY: every `this` the code passes is an `Imp` made by `object`.
        unsafe { (*this.cast::<Imp>()).name.clone() }
    }

    /// The name of a fake public object (the arguments of the calls).
    fn name(public: *mut c_void) -> String {
        // SAFETY: every public object the code holds is made by `object`.
        imp_name(unsafe { (*public.cast::<Public>()).imp.cast() })
    }

    extern "C" fn unexpected(this: *mut c_void) -> *mut c_void {
        record(format!("unexpected call on {}", imp_name(this)));
        null_mut()
    }

    extern "C" fn deleted(public: *mut c_void) {
        record(format!("delete {}", name(public)));
    }

    /// A public object whose `mImpl` answers `slots` (leaked: a test's
    /// objects are few).
    fn object(name: &str, slots: &[(usize, usize)]) -> *mut c_void {
        let mut table = vec![unexpected as *const () as usize; 64];
        for (slot, f) in slots {
            table[*slot] = *f;
        }
        let imp = Box::leak(Box::new(Imp {
            vtable: Box::leak(table.into_boxed_slice()).as_ptr(),
            name: name.into(),
        }));
        let public = vec![
            unexpected as *const () as usize,
            deleted as *const () as usize,
        ];
        let public = Box::leak(Box::new(Public {
            vtable: Box::leak(public.into_boxed_slice()).as_ptr(),
            imp,
        }));
        (public as *mut Public).cast()
    }

    fn slots() -> &'static super::super::abi::Slots {
        LAYOUT.with(Cell::get).slots()
    }

    fn tensor(name: &str) -> *mut c_void {
        object(
            name,
            &[(slots().tensor_set_name, t_set_name as *const () as usize)],
        )
    }

    fn layer(name: &str) -> *mut c_void {
        object(
            name,
            &[(slots().layer_get_output, l_get_output as *const () as usize)],
        )
    }

    extern "C" fn t_set_name(this: *mut c_void, n: *const c_char) {
        // SAFETY: a C string of the code's.
        let n = unsafe { CStr::from_ptr(n) }.to_string_lossy();
        record(format!("setName({}, {n})", imp_name(this)));
    }

    extern "C" fn l_get_output(this: *mut c_void, index: i32) -> *mut c_void {
        tensor(&format!("{}.out{index}", imp_name(this)))
    }

    fn input_call(n: *const c_char, data_type: i32, dims: &[i64]) -> *mut c_void {
        // SAFETY: a C string of the code's.
        let n = unsafe { CStr::from_ptr(n) }.to_string_lossy();
        record(format!("addInput({n}, {data_type}, {dims:?})"));
        tensor(&n)
    }

    extern "C" fn n_add_input_8(
        _: *mut c_void,
        n: *const c_char,
        t: i32,
        d: Dims32,
    ) -> *mut c_void {
        let dims: Vec<i64> = d.d[..d.nb_dims as usize]
            .iter()
            .map(|x| *x as i64)
            .collect();
        input_call(n, t, &dims)
    }

    extern "C" fn n_add_input_10(
        _: *mut c_void,
        n: *const c_char,
        t: i32,
        d: *const Dims64,
    ) -> *mut c_void {
        // SAFETY: a reference the code passed.
        let d = unsafe { &*d };
        input_call(n, t, &d.d[..d.nb_dims as usize])
    }

    fn constant_call(dims: &[i64], w: Weights) -> *mut c_void {
        // SAFETY: the weights' values, `count` floats the code keeps alive.
        let values =
            unsafe { std::slice::from_raw_parts(w.values.cast::<f32>(), w.count as usize) };
        let sum: f32 = values.iter().sum();
        record(format!(
            "addConstant({dims:?}, type {}, {} values, sum {sum})",
            w.data_type, w.count
        ));
        layer(&format!("constant{dims:?}"))
    }

    extern "C" fn n_add_constant_8(_: *mut c_void, d: Dims32, w: Weights) -> *mut c_void {
        let dims: Vec<i64> = d.d[..d.nb_dims as usize]
            .iter()
            .map(|x| *x as i64)
            .collect();
        constant_call(&dims, w)
    }

    extern "C" fn n_add_constant_10(_: *mut c_void, d: *const Dims64, w: Weights) -> *mut c_void {
        // SAFETY: a reference the code passed.
        let d = unsafe { &*d };
        constant_call(&d.d[..d.nb_dims as usize], w)
    }

    extern "C" fn n_matmul(
        _: *mut c_void,
        a: *mut c_void,
        op_a: i32,
        b: *mut c_void,
        op_b: i32,
    ) -> *mut c_void {
        record(format!(
            "addMatrixMultiply({}, {op_a}, {}, {op_b})",
            name(a),
            name(b)
        ));
        layer("matmul")
    }

    extern "C" fn n_sum(_: *mut c_void, a: *mut c_void, b: *mut c_void, op: i32) -> *mut c_void {
        record(format!("addElementWise({}, {}, {op})", name(a), name(b)));
        layer("sum")
    }

    extern "C" fn n_mark_output(_: *mut c_void, t: *mut c_void) {
        record(format!("markOutput({})", name(t)));
    }

    extern "C" fn b_network(_: *mut c_void, flags: u32) -> *mut c_void {
        record(format!("createNetworkV2({flags})"));
        let s = slots();
        let v8 = LAYOUT.with(Cell::get) == Layout::V8;
        let (input, constant) = if v8 {
            (
                n_add_input_8 as *const () as usize,
                n_add_constant_8 as *const () as usize,
            )
        } else {
            (
                n_add_input_10 as *const () as usize,
                n_add_constant_10 as *const () as usize,
            )
        };
        object(
            "network",
            &[
                (s.network_add_input, input),
                (s.network_add_constant, constant),
                (
                    s.network_add_matrix_multiply,
                    n_matmul as *const () as usize,
                ),
                (s.network_add_element_wise, n_sum as *const () as usize),
                (s.network_mark_output, n_mark_output as *const () as usize),
            ],
        )
    }

    extern "C" fn b_config(_: *mut c_void) -> *mut c_void {
        record("createBuilderConfig()".into());
        object("config", &[])
    }

    static PLAN_BYTES: [u8; 4] = *b"plan";

    extern "C" fn h_data(_: *mut c_void) -> *mut c_void {
        PLAN_BYTES.as_ptr().cast_mut().cast()
    }

    extern "C" fn h_size(_: *mut c_void) -> usize {
        PLAN_BYTES.len()
    }

    extern "C" fn b_build(_: *mut c_void, net: *mut c_void, config: *mut c_void) -> *mut c_void {
        record(format!(
            "buildSerializedNetwork({}, {})",
            name(net),
            name(config)
        ));
        let s = slots();
        object(
            "plan",
            &[
                (s.host_memory_data, h_data as *const () as usize),
                (s.host_memory_size, h_size as *const () as usize),
            ],
        )
    }

    fn plan_bytes(blob: *const c_void, size: usize) -> String {
        // SAFETY: the plan's bytes, as `h_data`/`h_size` gave them.
        let b = unsafe { std::slice::from_raw_parts(blob.cast::<u8>(), size) };
        String::from_utf8_lossy(b).into_owned()
    }

    fn engine(context: usize) -> *mut c_void {
        object(
            "engine",
            &[(slots().engine_create_execution_context, context)],
        )
    }

    extern "C" fn r_deserialize_8(
        _: *mut c_void,
        blob: *const c_void,
        size: usize,
        factory: *mut c_void,
    ) -> *mut c_void {
        record(format!(
            "deserializeCudaEngine({}, factory {factory:?})",
            plan_bytes(blob, size)
        ));
        engine(e_context_8 as *const () as usize)
    }

    extern "C" fn r_deserialize_10(
        _: *mut c_void,
        blob: *const c_void,
        size: usize,
    ) -> *mut c_void {
        record(format!("deserializeCudaEngine({})", plan_bytes(blob, size)));
        engine(e_context_10 as *const () as usize)
    }

    extern "C" fn e_context_8(_: *mut c_void) -> *mut c_void {
        record("createExecutionContext()".into());
        object("context", &[])
    }

    extern "C" fn e_context_10(_: *mut c_void, strategy: i32) -> *mut c_void {
        record(format!("createExecutionContext({strategy})"));
        object("context", &[])
    }

    extern "C" fn create_runtime(_logger: *mut c_void, version: c_int) -> *mut c_void {
        record(format!("createInferRuntime({version})"));
        let f = if LAYOUT.with(Cell::get) == Layout::V8 {
            r_deserialize_8 as *const () as usize
        } else {
            r_deserialize_10 as *const () as usize
        };
        object("runtime", &[(slots().runtime_deserialize_cuda_engine, f)])
    }

    fn builder() -> *mut c_void {
        let s = slots();
        object(
            "builder",
            &[
                (s.builder_create_network_v2, b_network as *const () as usize),
                (
                    s.builder_create_builder_config,
                    b_config as *const () as usize,
                ),
                (
                    s.builder_build_serialized_network,
                    b_build as *const () as usize,
                ),
            ],
        )
    }

    /// Builds and loads the engine against the stand-in, as `run` does up
    /// to the GPU, and returns the calls it saw.
    fn build_and_load(layout: Layout, code: c_int) -> (Vec<String>, TensorrtResult) {
        LAYOUT.with(|l| l.set(layout));
        CALLS.with(|c| c.borrow_mut().clear());
        let engine = Engine {
            create_runtime,
            code,
            logger: Logger::leak(LoggerAbi::Plain),
            layout,
        };
        let mut out = TensorrtResult::default();
        let b = builder();
        let mut owned = Owned(vec![b]);
        let serialized = engine.build(b, &mut owned, &mut out).unwrap();
        engine.load(serialized, &mut owned).unwrap();
        drop(owned);
        (CALLS.with(|c| c.borrow().clone()), out)
    }

    fn network_calls(flags: u32) -> Vec<String> {
        // The weights' sum and the bias's, as the host computes them.
        let w: f32 = (0..K * N).map(|i| weight(i / N, i % N)).sum();
        let b: f32 = (0..N).map(bias).sum();
        vec![
            format!("createNetworkV2({flags})"),
            "addInput(x, 0, [32, 64])".into(),
            format!("addConstant([64, 32], type 0, 2048 values, sum {w})"),
            "addMatrixMultiply(x, 0, constant[64, 32].out0, 0)".into(),
            format!("addConstant([1, 32], type 0, 32 values, sum {b})"),
            "addElementWise(matmul.out0, constant[1, 32].out0, 0)".into(),
            "setName(sum.out0, y)".into(),
            "markOutput(sum.out0)".into(),
            "createBuilderConfig()".into(),
            "buildSerializedNetwork(network, config)".into(),
        ]
    }

    fn deletes() -> Vec<String> {
        [
            "context", "engine", "runtime", "plan", "config", "network", "builder",
        ]
        .iter()
        .map(|o| format!("delete {o}"))
        .collect()
    }

    #[test]
    fn tensorrt_8_gets_dims_by_value_and_a_null_plugin_factory() {
        let (calls, out) = build_and_load(Layout::V8, 8600);
        let mut want = network_calls(1);
        want.extend([
            "createInferRuntime(8600)".to_string(),
            "deserializeCudaEngine(plan, factory 0x0)".into(),
            "createExecutionContext()".into(),
        ]);
        want.extend(deletes());
        assert_eq!(calls, want);
        assert!(out.build_ms.is_some());
    }

    #[test]
    fn tensorrt_10_and_11_get_dims_by_reference_and_a_static_context() {
        for (layout, code) in [(Layout::V10, 100100), (Layout::V11, 110100)] {
            let (calls, _) = build_and_load(layout, code);
            let mut want = network_calls(0);
            want.extend([
                format!("createInferRuntime({code})"),
                "deserializeCudaEngine(plan)".into(),
                "createExecutionContext(0)".into(),
            ]);
            want.extend(deletes());
            assert_eq!(calls, want, "{layout:?}");
        }
    }

    #[test]
    fn a_call_that_returns_nothing_is_named_with_tensorrts_error() {
        LAYOUT.with(|l| l.set(Layout::V10));
        CALLS.with(|c| c.borrow_mut().clear());
        let logger = Logger::leak(LoggerAbi::Plain);
        let engine = Engine {
            create_runtime,
            code: 100100,
            logger,
            layout: Layout::V10,
        };
        // A builder without `buildSerializedNetwork`: the stand-in answers null.
        let s = slots();
        let b = object(
            "builder",
            &[
                (s.builder_create_network_v2, b_network as *const () as usize),
                (
                    s.builder_create_builder_config,
                    b_config as *const () as usize,
                ),
            ],
        );
        // SAFETY: `log`, entry 0 of the plain logger's table.
        unsafe {
            let log: unsafe extern "C" fn(*mut c_void, c_int, *const c_char) =
                virtual_fn(logger.as_ptr(), 0);
            log(
                logger.as_ptr(),
                1,
                c"Error Code 10: Could not find any implementation".as_ptr(),
            );
        }
        let mut owned = Owned(vec![b]);
        let mut out = TensorrtResult::default();
        let e = engine.build(b, &mut owned, &mut out).unwrap_err();
        assert_eq!(
            e,
            "buildSerializedNetwork built no engine (TensorRT: Error Code 10: Could not find \
             any implementation)"
        );
        drop(owned);
        let calls = CALLS.with(|c| c.borrow().clone());
        assert_eq!(
            calls[calls.len() - 4..],
            [
                "unexpected call on builder",
                "delete config",
                "delete network",
                "delete builder"
            ]
        );
    }
}
