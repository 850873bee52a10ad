//! SessionOptions, Session and RunOptions; how a session's execution providers decide
//! whether `run` takes `&self` or `&mut self`.

use std::ffi::{c_char, CString};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::api::{api, c_string, default_allocator, take_allocated_string, Api};
use crate::binding::IoBinding;
use crate::editor::Model;
use crate::memory::{Allocator, DeviceAllocator, MemoryInfo};
use crate::typeinfo::TypeInfo;
use crate::value::{owned_outputs, Value};
use crate::{rules, sys, Env, Error, Result};

// -- SessionOptions --------------------------------------------------------------------------

/// Session config keys that make ORT use the caller's model bytes in place instead of copying
/// them, so the bytes would have to outlive the session, which `Session::new(&[u8])` does not
/// ask: [`SessionOptions::add_config_entry`] refuses them (with any value but `"0"`).
///
/// * `session.use_ort_model_bytes_directly`: an ORT-format model given as bytes is kept by
///   pointer, not copied (`InferenceSession::LoadOrtModel` copies the bytes only when the key is
///   not `"1"`: <https://github.com/microsoft/onnxruntime/blob/v1.16.3/onnxruntime/core/session/inference_session.cc>;
///   the key and its rule, in ORT's words, in
///   <https://github.com/microsoft/onnxruntime/blob/v1.16.3/include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h>;
///   ORT's guide: <https://onnxruntime.ai/docs/performance/model-optimizations/ort-format-models.html#load-ort-format-model-from-an-in-memory-byte-array>).
/// * `session.use_ort_model_bytes_for_initializers`: the initializers point into those bytes
///   for the session's whole life (the same header).
///
/// pykeio/ort sets both only in `commit_from_memory_directly`, whose session borrows the bytes
/// (`InMemorySession<'_>`: <https://github.com/pykeio/ort/blob/v2.0.0-rc.10/src/session/builder/impl_commit.rs>).
pub const BORROWING_CONFIG_KEYS: &[&str] = &["session.use_ort_model_bytes_directly", "session.use_ort_model_bytes_for_initializers"];

/// Options for creating sessions. Shared (`&self`) while sessions are created from it, on any
/// number of threads; its setters are exclusive (`&mut self`).
pub struct SessionOptions {
    ptr: NonNull<sys::OrtSessionOptions>,
    api: &'static Api,
    /// execution providers appended, with their options: they decide the session's Run rule
    providers: Vec<(String, Vec<(String, String)>)>,
    /// the EP-selection delegate ORT holds by pointer (its state): kept until the options go
    delegate: Option<Box<Box<EpSelector>>>,
}

/// An EP-selection delegate: given the devices ORT offers, the indices of those to use, in
/// priority order. `Send + Sync`: ORT calls it from every thread creating a session with the
/// options, several at once when threads share one `SessionOptions` (which is `Sync`).
type EpSelector = dyn Fn(&[EpDeviceInfo]) -> Vec<usize> + Send + Sync;

/// An execution-provider device ORT offers an EP-selection delegate
/// ([`SessionOptions::set_ep_selection_delegate`]), copied out as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpDeviceInfo {
    /// the execution provider's name (`EpDevice_EpName`), e.g. "CPUExecutionProvider"
    pub ep_name: String,
    /// its vendor (`EpDevice_EpVendor`)
    pub ep_vendor: String,
}

/// The `EpSelectionDelegate` ORT calls: reads the devices, asks the Rust delegate (`state`),
/// writes its choice. A panic or a bad index becomes an error status: nothing unwinds into ORT.
unsafe extern "C" fn select_ep_devices(devices: *mut *mut sys::OrtEpDevice, num_devices: usize, _model_metadata: *mut sys::OrtKeyValuePairs,
                                       _runtime_metadata: *mut sys::OrtKeyValuePairs, selected: *mut *mut sys::OrtEpDevice,
                                       max_selected: usize, num_selected: *mut usize, state: *mut std::ffi::c_void) -> *mut sys::OrtStatus {
    let Ok(api) = api() else { return std::ptr::null_mut() }; // loaded: these options exist
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> std::result::Result<(), String> {
        let text = |f: Option<unsafe extern "C" fn(*const sys::OrtEpDevice) -> *const c_char>, d: *mut sys::OrtEpDevice| -> String {
            match f {
                Some(f) => {
                    let s = unsafe { f(d) };
                    if s.is_null() { String::new() } else { unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned() }
                }
                None => String::new(),
            }
        };
        let (name_of, vendor_of) = (slot!(api, EpDevice_EpName).ok(), slot!(api, EpDevice_EpVendor).ok());
        let raw: &[*mut sys::OrtEpDevice] = if num_devices == 0 { &[] } else { unsafe { std::slice::from_raw_parts(devices, num_devices) } };
        let infos: Vec<EpDeviceInfo> = raw.iter().map(|&d| EpDeviceInfo { ep_name: text(name_of, d), ep_vendor: text(vendor_of, d) }).collect();
        // the state is the Box<EpSelector> the options own (set_ep_selection_delegate)
        let choose = unsafe { &*(state as *const Box<EpSelector>) };
        let chosen = choose(&infos);
        if chosen.len() > max_selected {
            return Err(format!("the EP-selection delegate chose {} devices; ORT takes at most {max_selected}", chosen.len()));
        }
        for (k, &i) in chosen.iter().enumerate() {
            if i >= num_devices {
                return Err(format!("the EP-selection delegate chose device {i} of {num_devices}"));
            }
            unsafe { *selected.add(k) = raw[i] };
        }
        unsafe { *num_selected = chosen.len() };
        Ok(())
    }));
    let message = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(m)) => m,
        Err(_) => "the EP-selection delegate panicked".to_string(),
    };
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    match slot!(api, CreateStatus) {
        Ok(f) => unsafe { f(sys::ORT_FAIL, message.as_ptr()) },
        Err(_) => std::ptr::null_mut(),
    }
}

impl SessionOptions {
    /// Default options (CPU execution provider).
    pub fn new() -> Result<Self> {
        let api = api()?;
        let mut ptr = std::ptr::null_mut();
        ort!(api, CreateSessionOptions(&mut ptr))?;
        let ptr = NonNull::new(ptr).ok_or(Error::Invalid("CreateSessionOptions returned NULL".into()))?;
        Ok(SessionOptions { ptr, api, providers: Vec::new(), delegate: None })
    }

    /// Threads of the intra-op pool (exclusive: `SetIntraOpNumThreads`).
    pub fn set_intra_op_num_threads(&mut self, n: i32) -> Result<()> {
        ort!(self.api, SetIntraOpNumThreads(self.ptr.as_ptr(), n))
    }

    /// Threads of the inter-op pool (exclusive: `SetInterOpNumThreads`).
    pub fn set_inter_op_num_threads(&mut self, n: i32) -> Result<()> {
        ort!(self.api, SetInterOpNumThreads(self.ptr.as_ptr(), n))
    }

    /// Graph optimization level, `sys::ORT_ENABLE_ALL` etc. (exclusive).
    pub fn set_graph_optimization_level(&mut self, level: sys::GraphOptimizationLevel) -> Result<()> {
        ort!(self.api, SetSessionGraphOptimizationLevel(self.ptr.as_ptr(), level))
    }

    /// A session config entry (exclusive: `AddSessionConfigEntry`).
    ///
    /// Refused ([`Error::Invalid`]): the keys of [`BORROWING_CONFIG_KEYS`] with any value but
    /// `"0"`. With them ORT keeps reading the model bytes given to [`Session::new`] after it
    /// returns, which a `&[u8]` borrowed for the call does not allow.
    pub fn add_config_entry(&mut self, key: &str, value: &str) -> Result<()> {
        if BORROWING_CONFIG_KEYS.contains(&key) && value != "0" {
            return Err(Error::Invalid(format!(
                "session config {key}={value:?} makes ONNX Runtime read the model bytes after \
                 Session::new returns (the bytes must outlive the session): not available \
                 through this safe API"
            )));
        }
        let (k, v) = (c_string("config key", key)?, c_string("config value", value)?);
        ort!(self.api, AddSessionConfigEntry(self.ptr.as_ptr(), k.as_ptr(), v.as_ptr()))
    }

    /// A session config entry's value, if set (shared: `HasSessionConfigEntry`,
    /// `GetSessionConfigEntry`).
    pub fn config_entry(&self, key: &str) -> Result<Option<String>> {
        let k = c_string("config key", key)?;
        let mut has = 0;
        ort!(self.api, HasSessionConfigEntry(self.ptr.as_ptr(), k.as_ptr(), &mut has))?;
        if has == 0 {
            return Ok(None);
        }
        let mut len = 0usize;
        ort!(self.api, GetSessionConfigEntry(self.ptr.as_ptr(), k.as_ptr(), std::ptr::null_mut(), &mut len))?;
        let mut buf = vec![0u8; len];
        ort!(self.api, GetSessionConfigEntry(self.ptr.as_ptr(), k.as_ptr(), buf.as_mut_ptr() as *mut c_char, &mut len))?;
        buf.truncate(len.saturating_sub(1));
        Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
    }

    /// Append an execution provider through the generic slot
    /// (`SessionOptionsAppendExecutionProvider`; exclusive). `name` is the short name
    /// ("XNNPACK") or the full one ("XnnpackExecutionProvider"). The provider and its options
    /// are remembered: they decide whether sessions made from these options may run
    /// concurrently ([`run_rule`]).
    pub fn append_execution_provider(&mut self, name: &str, options: &[(&str, &str)]) -> Result<()> {
        let (short, full) = provider_names(name);
        let c_name = c_string("provider", &short)?;
        let keys: Vec<CString> = options.iter().map(|(k, _)| c_string("option key", k)).collect::<Result<_>>()?;
        let vals: Vec<CString> = options.iter().map(|(_, v)| c_string("option value", v)).collect::<Result<_>>()?;
        let kp: Vec<*const c_char> = keys.iter().map(|k| k.as_ptr()).collect();
        let vp: Vec<*const c_char> = vals.iter().map(|v| v.as_ptr()).collect();
        ort!(self.api, SessionOptionsAppendExecutionProvider(self.ptr.as_ptr(), c_name.as_ptr(), kp.as_ptr(), vp.as_ptr(), kp.len()))?;
        self.providers.push((full, options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()));
        Ok(())
    }

    /// Let `delegate` choose the execution-provider devices of every session made from these
    /// options (exclusive: `SessionOptionsSetEpSelectionPolicyDelegate`, API 22): given the
    /// devices ORT offers, it returns the indices of those to use, in priority order.
    ///
    /// `Send + Sync + 'static`: ORT keeps the delegate by pointer in the options and calls it
    /// from every thread creating a session with them, several at once when threads share
    /// the options (a `&SessionOptions` across threads); the options own it until they are
    /// dropped or it is replaced. A panic or an index out of range fails that creation.
    /// The delegate decides the providers when the session is made, so the Run gate cannot
    /// see them: [`Session::new_concurrent`] refuses these options ([`SessionOptions::run_rule`]).
    pub fn set_ep_selection_delegate<F>(&mut self, delegate: F) -> Result<()>
    where
        F: Fn(&[EpDeviceInfo]) -> Vec<usize> + Send + Sync + 'static,
    {
        let state: Box<Box<EpSelector>> = Box::new(Box::new(delegate));
        let ptr = &*state as *const Box<EpSelector> as *mut std::ffi::c_void;
        ort!(self.api, SessionOptionsSetEpSelectionPolicyDelegate(self.ptr.as_ptr(), Some(select_ep_devices), ptr))?;
        // ORT holds the new state now; the one it held before (if any) may go
        self.delegate = Some(state);
        Ok(())
    }

    /// The providers a session made from these options would use, in priority order (the CPU
    /// provider is always last).
    pub fn providers(&self) -> Vec<String> {
        let mut out: Vec<String> = self.providers.iter().map(|(p, _)| p.clone()).collect();
        if !out.iter().any(|p| p == "CPUExecutionProvider") {
            out.push("CPUExecutionProvider".into());
        }
        out
    }

    /// Whether sessions made from these options may run concurrently on the loaded library's
    /// ORT version, and why.
    pub fn run_rule(&self) -> RunRule {
        if self.delegate.is_some() {
            return RunRule {
                concurrent: false,
                reasons: vec!["an EP-selection delegate chooses the providers when each session is made: \
                               the Run gate cannot check them"
                    .into()],
            };
        }
        let mut provs: Vec<(String, Vec<(String, String)>)> = self.providers.clone();
        if !provs.iter().any(|(p, _)| p == "CPUExecutionProvider") {
            provs.push(("CPUExecutionProvider".into(), Vec::new()));
        }
        let borrowed: Vec<(&str, Vec<(&str, &str)>)> = provs
            .iter()
            .map(|(p, o)| (p.as_str(), o.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()))
            .collect();
        run_rule(&borrowed, &self.api.library_version)
    }
}

impl Drop for SessionOptions {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseSessionOptions) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

/// (short name for the append slot, full name ORT reports) for a user's spelling.
pub fn provider_names(name: &str) -> (String, String) {
    for (short, full) in rules::PROVIDER_NAMES {
        if short.eq_ignore_ascii_case(name) || full.eq_ignore_ascii_case(name) {
            return (short.to_string(), full.to_string());
        }
    }
    let bare = name.strip_suffix("ExecutionProvider").unwrap_or(name);
    (bare.to_string(), format!("{bare}ExecutionProvider"))
}

// -- the Run rule ------------------------------------------------------------------------------

/// Whether one session may run concurrently, with a reason per provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRule {
    /// every provider allows concurrent Run
    pub concurrent: bool,
    /// one line per provider: "name: concurrent|exclusive (why)"
    pub reasons: Vec<String>,
}

/// The leading numbers of a version string ("1.17.0-dev" -> [1, 17, 0]), as ortc reads them.
fn version_numbers(version: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for piece in version.split('.') {
        let digits: String = piece.chars().filter(|c| c.is_ascii_digit()).collect();
        match digits.parse() {
            Ok(n) => out.push(n),
            Err(_) => break,
        }
    }
    out
}

/// The Run rule for a session with these providers and options on ORT `ort_version` (the
/// library's version string), from the generated tables (`rules::EP_CONCURRENT_RUN`,
/// `rules::EP_MIN_CONCURRENT_VERSION`, `rules::EXCLUSIVE_PROVIDER_OPTIONS`); the same decision
/// as ortc's `session_run_rule` (`rules::RUN_RULE_DECISIONS` lists ortc's answers, and the
/// tests compare). A provider not listed is exclusive.
pub fn run_rule(providers: &[(&str, Vec<(&str, &str)>)], ort_version: &str) -> RunRule {
    let have = version_numbers(ort_version);
    let mut concurrent = true;
    let mut reasons = Vec::new();
    for (p, opts) in providers {
        let (mut ok, mut why) = rules::EP_CONCURRENT_RUN
            .iter()
            .find(|(name, _, _)| name == p)
            .map(|(_, ok, why)| (*ok, why.to_string()))
            .unwrap_or((false, "undocumented for this provider; serialized by default".into()));
        for (prov, major, minor, reason) in rules::EP_MIN_CONCURRENT_VERSION {
            if ok && prov == p && have < vec![*major, *minor] {
                ok = false;
                why = format!("ORT {ort_version}: {reason}");
            }
        }
        for (prov, key, reason) in rules::EXCLUSIVE_PROVIDER_OPTIONS {
            if prov != p {
                continue;
            }
            if let Some((_, v)) = opts.iter().find(|(k, _)| k == key) {
                if rules::TRUE_VALUES.contains(v) {
                    ok = false;
                    why = format!("{key}={v}: {reason}");
                }
            }
        }
        reasons.push(format!("{p}: {} ({why})", if ok { "concurrent" } else { "exclusive" }));
        concurrent &= ok;
    }
    RunRule { concurrent, reasons }
}

/// How a session's `run` is called: [`ConcurrentRun`] (`&self`, any number of threads) or
/// [`ExclusiveRun`] (`&mut self`). Sealed: only these two exist.
pub trait RunPolicy: private::Sealed + Send + Sync + 'static {
    /// whether `run` takes `&self`
    const CONCURRENT: bool;
}

/// Run takes `&self`: every provider of the session allows concurrent Run (checked when the
/// session is created, [`Session::new_concurrent`]).
pub struct ConcurrentRun;
/// Run takes `&mut self`: some provider does not allow concurrent Run, or none was checked.
pub struct ExclusiveRun;
impl RunPolicy for ConcurrentRun {
    const CONCURRENT: bool = true;
}
impl RunPolicy for ExclusiveRun {
    const CONCURRENT: bool = false;
}
mod private {
    pub trait Sealed {}
    impl Sealed for super::ConcurrentRun {}
    impl Sealed for super::ExclusiveRun {}
}

// -- Session -----------------------------------------------------------------------------------

/// The `OrtSession` itself, reference-counted: held by its [`Session`] and by everything that
/// must not outlive it (its [`IoBinding`]s, [`Allocator`]s, [`DeviceAllocator`]s and the values
/// those allocate). `ReleaseSession` runs when the last holder is dropped, so it is exclusive
/// by construction. Only a `Session` runs the model: a holder keeps it alive, it does not
/// lend it, so `&mut Session` still excludes every run.
///
/// Not Send or Sync by itself (the raw pointer): each holder gets its verdict in `rules.rs`.
pub(crate) struct SessionHandle {
    pub(crate) ptr: NonNull<sys::OrtSession>,
    pub(crate) api: &'static Api,
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseSession) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

/// A loaded model. `P` says how `run` is called: `Session<ConcurrentRun>` runs through `&self`
/// (share it in an `Arc`), `Session<ExclusiveRun>` through `&mut self` (wrap it in a `Mutex`
/// to share it). Both are Send and Sync: the rest of the API (metadata, allocators, bindings)
/// is shared either way.
///
/// Every run, with or without an [`IoBinding`], goes through the session (`run`,
/// [`run_with_binding`](Session::run_with_binding)), so an exclusive call
/// ([`end_profiling`](Session::end_profiling), or `run` of an exclusive session) is refused by
/// the borrow checker while a run is in flight, and only then. What must merely outlive the
/// session (bindings, allocators, the values they allocate) keeps it alive by reference
/// counting instead of borrowing it: dropping the `Session` leaves the `OrtSession` to the
/// last of them.
pub struct Session<P: RunPolicy = ExclusiveRun> {
    handle: Arc<SessionHandle>,
    pub(crate) api: &'static Api,
    inputs: Vec<String>,
    outputs: Vec<String>,
    rule: RunRule,
    _policy: PhantomData<P>,
}

fn create(env: &Env, options: &SessionOptions, model: &[u8]) -> Result<(Arc<SessionHandle>, Vec<String>, Vec<String>)> {
    let api = env.api;
    let mut ptr = std::ptr::null_mut();
    // CreateSessionFromArray: the env and the options are used shared (&Env, &SessionOptions)
    ort!(api, CreateSessionFromArray(env.ptr.as_ptr(), model.as_ptr() as *const _, model.len(), options.ptr.as_ptr(), &mut ptr))?;
    let ptr = NonNull::new(ptr).ok_or(Error::Invalid("CreateSessionFromArray returned NULL".into()))?;
    finish(api, ptr)
}

fn create_from_model(env: &Env, options: &SessionOptions, model: &Model) -> Result<(Arc<SessionHandle>, Vec<String>, Vec<String>)> {
    let api = env.api;
    let mut ptr = std::ptr::null_mut();
    // CreateSessionFromModel: the env, the options and the model are used shared; the session
    // does not need the model afterwards
    editor!(api, CreateSessionFromModel(env.ptr.as_ptr(), model.ptr.as_ptr(), options.ptr.as_ptr(), &mut ptr))?;
    let ptr = NonNull::new(ptr).ok_or(Error::Invalid("CreateSessionFromModel returned NULL".into()))?;
    finish(api, ptr)
}

/// A new session's handle and its input and output names.
fn finish(api: &'static Api, ptr: NonNull<sys::OrtSession>) -> Result<(Arc<SessionHandle>, Vec<String>, Vec<String>)> {
    // owned from here: an error below releases it
    let handle = Arc::new(SessionHandle { ptr, api });
    let names = |input: bool| -> Result<Vec<String>> {
        let alloc = default_allocator(api)?;
        let mut n = 0usize;
        if input {
            ort!(api, SessionGetInputCount(ptr.as_ptr(), &mut n))?;
        } else {
            ort!(api, SessionGetOutputCount(ptr.as_ptr(), &mut n))?;
        }
        (0..n)
            .map(|i| {
                let mut s = std::ptr::null_mut();
                if input {
                    ort!(api, SessionGetInputName(ptr.as_ptr(), i, alloc, &mut s))?;
                } else {
                    ort!(api, SessionGetOutputName(ptr.as_ptr(), i, alloc, &mut s))?;
                }
                take_allocated_string(api, alloc, s)
            })
            .collect()
    };
    let inputs = names(true)?;
    let outputs = names(false)?;
    Ok((handle, inputs, outputs))
}

impl Session<ExclusiveRun> {
    /// A session whose `run` takes `&mut self`: always allowed, whatever the providers.
    pub fn new(env: &Env, options: &SessionOptions, model: &[u8]) -> Result<Self> {
        let (handle, inputs, outputs) = create(env, options, model)?;
        Ok(Session { handle, api: env.api, inputs, outputs, rule: options.run_rule(), _policy: PhantomData })
    }

    /// A session whose `run` takes `&mut self`, made from a model built with the model editor
    /// (`CreateSessionFromModel`: the model is used shared, `&Model`, so several threads may
    /// make sessions from one model at once; the session does not need it afterwards).
    pub fn from_model(env: &Env, options: &SessionOptions, model: &Model) -> Result<Self> {
        let (handle, inputs, outputs) = create_from_model(env, options, model)?;
        Ok(Session { handle, api: env.api, inputs, outputs, rule: options.run_rule(), _policy: PhantomData })
    }

    /// Run the model (`Run`, exclusive for this session: `&mut self`). Inputs by name; returns
    /// every output, in the model's order: `None` for one with no value (an optional output
    /// left empty).
    pub fn run(&mut self, run_options: Option<&RunOptions>, inputs: &[(&str, &Value<'_>)]) -> Result<Vec<Option<Value<'static>>>> {
        self.run_inner(run_options, inputs)
    }

    /// Run the model with `binding`'s inputs and outputs (`RunWithBinding`: exclusive for this
    /// session, `&mut self`; the binding exclusive, `&mut`; the run options shared). The
    /// binding must be one of this session's ([`Session::io_binding`]): another session's is
    /// refused with [`Error::Invalid`].
    pub fn run_with_binding(&mut self, binding: &mut IoBinding<'_>, run_options: Option<&RunOptions>) -> Result<()> {
        self.run_with_binding_inner(binding, run_options)
    }
}

impl Session<ConcurrentRun> {
    /// A session whose `run` takes `&self`, or `Error::ExclusiveRun` when a provider of these
    /// options does not allow concurrent Run (the reasons say which and why). The runtime gate
    /// is here, once, at creation; after it the type carries the answer.
    pub fn new_concurrent(env: &Env, options: &SessionOptions, model: &[u8]) -> Result<Self> {
        let rule = options.run_rule();
        if !rule.concurrent {
            return Err(Error::ExclusiveRun(rule.reasons));
        }
        let (handle, inputs, outputs) = create(env, options, model)?;
        Ok(Session { handle, api: env.api, inputs, outputs, rule, _policy: PhantomData })
    }

    /// A session whose `run` takes `&self`, made from a model built with the model editor
    /// (`CreateSessionFromModel`, the model used shared), or `Error::ExclusiveRun`: the same
    /// gate as [`Session::new_concurrent`].
    pub fn from_model_concurrent(env: &Env, options: &SessionOptions, model: &Model) -> Result<Self> {
        let rule = options.run_rule();
        if !rule.concurrent {
            return Err(Error::ExclusiveRun(rule.reasons));
        }
        let (handle, inputs, outputs) = create_from_model(env, options, model)?;
        Ok(Session { handle, api: env.api, inputs, outputs, rule, _policy: PhantomData })
    }

    /// Run the model (`Run`, shared for this session: `&self`, from any number of threads).
    /// Inputs by name; returns every output, in the model's order: `None` for one with no value
    /// (an optional output left empty).
    pub fn run(&self, run_options: Option<&RunOptions>, inputs: &[(&str, &Value<'_>)]) -> Result<Vec<Option<Value<'static>>>> {
        self.run_inner(run_options, inputs)
    }

    /// Run the model with `binding`'s inputs and outputs (`RunWithBinding`: shared for this
    /// session, `&self`, from any number of threads, each with its own binding; the binding
    /// exclusive, `&mut`; the run options shared). The binding must be one of this session's
    /// ([`Session::io_binding`]): another session's is refused with [`Error::Invalid`].
    pub fn run_with_binding(&self, binding: &mut IoBinding<'_>, run_options: Option<&RunOptions>) -> Result<()> {
        self.run_with_binding_inner(binding, run_options)
    }
}

impl<P: RunPolicy> Session<P> {
    fn ptr(&self) -> *mut sys::OrtSession {
        self.handle.ptr.as_ptr()
    }

    fn run_inner(&self, run_options: Option<&RunOptions>, inputs: &[(&str, &Value<'_>)]) -> Result<Vec<Option<Value<'static>>>> {
        let api = self.api;
        let in_names: Vec<CString> = inputs.iter().map(|(n, _)| c_string("input name", n)).collect::<Result<_>>()?;
        let in_ptrs: Vec<*const c_char> = in_names.iter().map(|n| n.as_ptr()).collect();
        let in_vals: Vec<*const sys::OrtValue> = inputs.iter().map(|(_, v)| v.ptr.as_ptr() as *const _).collect();
        let out_names: Vec<CString> = self.outputs.iter().map(|n| c_string("output name", n)).collect::<Result<_>>()?;
        let out_ptrs: Vec<*const c_char> = out_names.iter().map(|n| n.as_ptr()).collect();
        let mut outs: Vec<*mut sys::OrtValue> = vec![std::ptr::null_mut(); out_ptrs.len()];
        let ro = run_options.map_or(std::ptr::null(), |r| r.ptr.as_ptr() as *const _);
        ort!(api, Run(self.ptr(), ro, in_ptrs.as_ptr(), in_vals.as_ptr(), in_vals.len(), out_ptrs.as_ptr(), out_ptrs.len(), outs.as_mut_ptr()))?;
        // an output may be an input's own tensor (a pass-through): copied, never lent as 'static
        let fed: Vec<&Value<'_>> = inputs.iter().map(|(_, v)| *v).collect();
        owned_outputs(api, outs, &fed)
    }

    fn run_with_binding_inner(&self, binding: &mut IoBinding<'_>, run_options: Option<&RunOptions>) -> Result<()> {
        if !Arc::ptr_eq(&binding.session, &self.handle) {
            return Err(Error::Invalid("this IoBinding was made by another session: run it with that one".into()));
        }
        let ro = run_options.map_or(std::ptr::null(), |r| r.ptr.as_ptr() as *const _);
        ort!(self.api, RunWithBinding(self.ptr(), ro, binding.ptr.as_ptr()))
    }

    /// An IoBinding for this session (shared: `CreateIoBinding`; one per thread, IoBinding is
    /// Send, not Sync). It keeps the session alive; it is run with
    /// [`run_with_binding`](Session::run_with_binding), which borrows the session as `run`
    /// does. `'v` is how long the values bound by reference (and the buffers of bound values)
    /// live.
    pub fn io_binding<'v>(&self) -> Result<IoBinding<'v>> {
        IoBinding::new(self.api, &self.handle)
    }

    /// Input names, in the model's order.
    pub fn input_names(&self) -> &[String] {
        &self.inputs
    }

    /// Output names, in the model's order.
    pub fn output_names(&self) -> &[String] {
        &self.outputs
    }

    /// Whether this session's providers allow concurrent Run, and why (decided from the
    /// options it was created with).
    pub fn run_rule(&self) -> &RunRule {
        &self.rule
    }

    /// Type of input `index` (shared: `SessionGetInputTypeInfo`; an owned TypeInfo).
    pub fn input_type_info(&self, index: usize) -> Result<TypeInfo> {
        let mut ti = std::ptr::null_mut();
        ort!(self.api, SessionGetInputTypeInfo(self.ptr(), index, &mut ti))?;
        unsafe { TypeInfo::from_raw(self.api, ti) }
    }

    /// Type of output `index` (shared: `SessionGetOutputTypeInfo`).
    pub fn output_type_info(&self, index: usize) -> Result<TypeInfo> {
        let mut ti = std::ptr::null_mut();
        ort!(self.api, SessionGetOutputTypeInfo(self.ptr(), index, &mut ti))?;
        unsafe { TypeInfo::from_raw(self.api, ti) }
    }

    /// The session's allocator for CPU memory (shared: `CreateAllocator`); Send and Sync. It
    /// must not outlive the session, nor must the values it allocates: it keeps the session
    /// alive (reference counting, not a borrow), so exclusive calls of the session stay
    /// available while it and its values live. Memory of another device:
    /// [`Session::device_allocator`].
    pub fn allocator(&self, memory_info: &MemoryInfo) -> Result<Allocator> {
        if !memory_info.is_cpu()? {
            return Err(Error::Invalid(format!(
                "{} memory: an allocator for non-CPU memory is not Sync; use Session::device_allocator",
                memory_info.name()?
            )));
        }
        let mut a = std::ptr::null_mut();
        ort!(self.api, CreateAllocator(self.ptr(), memory_info.ptr.as_ptr(), &mut a))?;
        unsafe { Allocator::from_session(self.api, a, Arc::clone(&self.handle)) }
    }

    /// The session's allocator for memory of any device (shared: `CreateAllocator`); Send
    /// only, not Sync (no device allocator has been shown safe to share). It keeps the session
    /// alive.
    pub fn device_allocator(&self, memory_info: &MemoryInfo) -> Result<DeviceAllocator> {
        let mut a = std::ptr::null_mut();
        ort!(self.api, CreateAllocator(self.ptr(), memory_info.ptr.as_ptr(), &mut a))?;
        unsafe { DeviceAllocator::from_session(self.api, a, Arc::clone(&self.handle)) }
    }

    /// Stop profiling and return the profile file's name (exclusive: `SessionEndProfiling`:
    /// no run in flight, which `&mut self` guarantees since every run borrows the session).
    pub fn end_profiling(&mut self) -> Result<String> {
        let alloc = default_allocator(self.api)?;
        let mut s = std::ptr::null_mut();
        ort!(self.api, SessionEndProfiling(self.ptr(), alloc, &mut s))?;
        take_allocated_string(self.api, alloc, s)
    }
}

// -- RunOptions --------------------------------------------------------------------------------

/// Options of one or more runs. Shared by the runs using it and by `terminate` from any
/// thread; its setters are exclusive.
pub struct RunOptions {
    pub(crate) ptr: NonNull<sys::OrtRunOptions>,
    api: &'static Api,
}

impl RunOptions {
    /// Default run options.
    pub fn new() -> Result<Self> {
        let api = api()?;
        let mut ptr = std::ptr::null_mut();
        ort!(api, CreateRunOptions(&mut ptr))?;
        let ptr = NonNull::new(ptr).ok_or(Error::Invalid("CreateRunOptions returned NULL".into()))?;
        Ok(RunOptions { ptr, api })
    }

    /// Ask every run using these options to stop (shared: `RunOptionsSetTerminate` "can be
    /// called from another thread"). A stopped run returns an error.
    pub fn terminate(&self) -> Result<()> {
        ort!(self.api, RunOptionsSetTerminate(self.ptr.as_ptr()))
    }

    /// Let runs with these options run again (shared: `RunOptionsUnsetTerminate`).
    pub fn unset_terminate(&self) -> Result<()> {
        ort!(self.api, RunOptionsUnsetTerminate(self.ptr.as_ptr()))
    }

    /// The run tag (shared: `RunOptionsGetRunTag`).
    pub fn tag(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, RunOptionsGetRunTag(self.ptr.as_ptr(), &mut s))?;
        Ok(if s.is_null() { String::new() } else { unsafe { std::ffi::CStr::from_ptr(s) }.to_string_lossy().into_owned() })
    }

    /// Set the run tag (exclusive: `RunOptionsSetRunTag`).
    pub fn set_tag(&mut self, tag: &str) -> Result<()> {
        let t = c_string("tag", tag)?;
        ort!(self.api, RunOptionsSetRunTag(self.ptr.as_ptr(), t.as_ptr()))
    }

    /// A run config entry (exclusive: `AddRunConfigEntry`).
    pub fn add_config_entry(&mut self, key: &str, value: &str) -> Result<()> {
        let (k, v) = (c_string("config key", key)?, c_string("config value", value)?);
        ort!(self.api, AddRunConfigEntry(self.ptr.as_ptr(), k.as_ptr(), v.as_ptr()))
    }
}

impl Drop for RunOptions {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseRunOptions) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}
