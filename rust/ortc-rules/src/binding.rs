//! IoBinding: inputs and outputs bound ahead of a run; borrows its session.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::api::{c_string, default_allocator, Api};
use crate::memory::MemoryInfo;
use crate::session::RunOptions;
use crate::value::Value;
use crate::{sys, Error, Result};

/// Inputs and outputs bound to a session. Stateful, so every call is exclusive
/// (`&mut self`) and it is Send but not Sync: one binding per thread. It borrows its session
/// for `'s` (shared for a `Session<ConcurrentRun>`, exclusively for a `Session<ExclusiveRun>`),
/// so the session cannot be dropped while the binding exists. Bound values stay borrowed for
/// `'s` too (ORT keeps them, and reads or writes their buffers, in every later run): a bound
/// input cannot be written meanwhile, a bound output not even read except through
/// [`IoBinding::outputs`].
pub struct IoBinding<'s> {
    ptr: NonNull<sys::OrtIoBinding>,
    session: NonNull<sys::OrtSession>,
    api: &'static Api,
    _session: PhantomData<&'s ()>,
}

impl<'s> IoBinding<'s> {
    pub(crate) fn new(api: &'static Api, session: NonNull<sys::OrtSession>) -> Result<IoBinding<'s>> {
        let mut p = std::ptr::null_mut();
        ort!(api, CreateIoBinding(session.as_ptr(), &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateIoBinding returned NULL".into()))?;
        Ok(IoBinding { ptr, session, api, _session: PhantomData })
    }

    /// Bind input `name` to `value` (exclusive: `BindInput`). The value stays borrowed
    /// (shared) for `'s`, and its buffer must live that long (`'b: 's`).
    pub fn bind_input<'b: 's>(&mut self, name: &str, value: &'s Value<'b>) -> Result<()> {
        let n = c_string("input name", name)?;
        ort!(self.api, BindInput(self.ptr.as_ptr(), n.as_ptr(), value.ptr.as_ptr()))
    }

    /// Bind output `name` to a preallocated value (exclusive: `BindOutput`); every run writes
    /// into it, so it stays borrowed exclusively for `'s`.
    pub fn bind_output<'b: 's>(&mut self, name: &str, value: &'s mut Value<'b>) -> Result<()> {
        let n = c_string("output name", name)?;
        ort!(self.api, BindOutput(self.ptr.as_ptr(), n.as_ptr(), value.ptr.as_ptr()))
    }

    /// Let ORT allocate output `name` on the device `memory_info` describes (exclusive:
    /// `BindOutputToDevice`).
    pub fn bind_output_to_device(&mut self, name: &str, memory_info: &MemoryInfo) -> Result<()> {
        let n = c_string("output name", name)?;
        ort!(self.api, BindOutputToDevice(self.ptr.as_ptr(), n.as_ptr(), memory_info.ptr.as_ptr()))
    }

    /// Forget the bound inputs (exclusive: `ClearBoundInputs`).
    pub fn clear_inputs(&mut self) {
        if let Ok(f) = slot!(self.api, ClearBoundInputs) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }

    /// Forget the bound outputs (exclusive: `ClearBoundOutputs`).
    pub fn clear_outputs(&mut self) {
        if let Ok(f) = slot!(self.api, ClearBoundOutputs) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }

    /// Run the session with this binding (`RunWithBinding`: the binding exclusive, the run
    /// options shared). For a `Session<ExclusiveRun>` the binding holds the session's
    /// exclusive borrow, so this is the only run of that session meanwhile.
    pub fn run(&mut self, run_options: Option<&RunOptions>) -> Result<()> {
        let ro = run_options.map_or(std::ptr::null(), |r| r.ptr.as_ptr() as *const _);
        ort!(self.api, RunWithBinding(self.session.as_ptr(), ro, self.ptr.as_ptr()))
    }

    /// The output values of the last run (exclusive: `GetBoundOutputValues`). They share
    /// their data with the binding's outputs (and with a caller's buffer bound by
    /// [`IoBinding::bind_output`]), so they borrow the binding: the next run, or a second call,
    /// waits until they are dropped.
    pub fn outputs(&mut self) -> Result<Vec<Value<'_>>> {
        let api = self.api;
        let alloc = default_allocator(api)?;
        let mut arr: *mut *mut sys::OrtValue = std::ptr::null_mut();
        let mut n = 0usize;
        ort!(api, GetBoundOutputValues(self.ptr.as_ptr(), alloc, &mut arr, &mut n))?;
        if arr.is_null() {
            return Ok(Vec::new());
        }
        let out = (0..n).map(|i| unsafe { Value::from_raw_borrowed(api, *arr.add(i)) }).collect();
        ort!(api, AllocatorFree(alloc, arr as *mut c_void))?;
        Ok(out)
    }
}

impl Drop for IoBinding<'_> {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseIoBinding) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}
