//! IoBinding: inputs and outputs bound ahead of runs; keeps its session alive, holds its bound
//! outputs, and is run through the session ([`Session::run_with_binding`]).
//!
//! [`Session::run_with_binding`]: crate::Session::run_with_binding

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::api::{c_string, default_allocator, Api};
use crate::memory::MemoryInfo;
use crate::session::SessionHandle;
use crate::value::{owned_outputs, Element, InputValue, Value};
use crate::{sys, Error, Result};

/// Inputs and outputs bound to a session. Stateful, so every call is exclusive (`&mut self`)
/// and it is Send but not Sync: one binding per thread. A run takes it by `&mut`
/// ([`Session::run_with_binding`](crate::Session::run_with_binding)), so nothing borrowed from
/// the binding lives across a run.
///
/// It must not outlive its session: it keeps the session alive (reference counting, not a
/// borrow), so the session's exclusive calls stay available between the binding's runs. The
/// binding never runs the session by itself: every run borrows the session as `run` does.
///
/// `'v` bounds the buffers of the values it holds.
///
/// * An output value ([`bind_output`](IoBinding::bind_output)) is written by every run, so it
///   is exclusive for as long as it is bound: the binding takes it (by value) and lends it
///   out between runs, [`output`](IoBinding::output) to read it,
///   [`output_data_mut`](IoBinding::output_data_mut) to write its data; a run cannot start
///   while such a loan lives. [`clear_outputs`](IoBinding::clear_outputs) gives the values
///   back.
/// * An input is read by every run (shared). Shared ([`bind_input`](IoBinding::bind_input)),
///   through an `Arc`: one value can feed several bindings and threads, and it is not written
///   while bound, for the binding holds a clone of the `Arc` until the input is rebound or
///   cleared ([`clear_inputs`](IoBinding::clear_inputs)) or the binding is dropped; then
///   `Arc::get_mut` gives the value back for writing. A [`ReadOnlyValue`](crate::ReadOnlyValue)
///   is bound this way. Bound by value ([`bind_input_owned`](IoBinding::bind_input_owned)),
///   the binding lends its data out between runs,
///   [`input_data_mut`](IoBinding::input_data_mut) to write the next run's data in place.
pub struct IoBinding<'v> {
    pub(crate) ptr: NonNull<sys::OrtIoBinding>,
    api: &'static Api,
    /// inputs bound by value, by name
    owned_inputs: Vec<(String, Value<'v>)>,
    /// inputs bound shared, by name: the binding's clone of each `Arc`, held while bound
    shared_inputs: Vec<(String, Arc<dyn InputValue<'v> + 'v>)>,
    /// outputs bound by value, by name
    owned_outputs: Vec<(String, Value<'v>)>,
    /// the session: kept alive, and compared by `run_with_binding`
    pub(crate) session: Arc<SessionHandle>,
}

fn find<T>(table: &[(String, T)], name: &str) -> Option<usize> {
    table.iter().position(|(n, _)| n == name)
}

/// Replace (or add) `name`'s entry in `table`; the one it replaces, if any.
fn put<T>(table: &mut Vec<(String, T)>, name: &str, value: Option<T>) -> Option<T> {
    let old = find(table, name).map(|i| table.remove(i).1);
    if let Some(v) = value {
        table.push((name.to_string(), v));
    }
    old
}

fn data_mut<'a, T: Element>(table: &'a mut [(String, Value<'_>)], name: &str, what: &str) -> Result<&'a mut [T]> {
    match find(table, name) {
        Some(i) => table[i].1.as_mut_slice::<T>(),
        None => Err(Error::Invalid(format!("no {what} {name:?} bound by value to this binding"))),
    }
}

impl<'v> IoBinding<'v> {
    pub(crate) fn new(api: &'static Api, session: &Arc<SessionHandle>) -> Result<IoBinding<'v>> {
        let mut p = std::ptr::null_mut();
        ort!(api, CreateIoBinding(session.ptr.as_ptr(), &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateIoBinding returned NULL".into()))?;
        Ok(IoBinding {
            ptr,
            api,
            owned_inputs: Vec::new(),
            owned_outputs: Vec::new(),
            shared_inputs: Vec::new(),
            session: Arc::clone(session),
        })
    }

    /// Bind input `name` to a value shared through an `Arc` (exclusive: `BindInput`): a
    /// [`Value`] or a [`ReadOnlyValue`](crate::ReadOnlyValue). The binding holds a clone of the
    /// `Arc` while the input is bound, so nobody writes the value meanwhile (`Arc::get_mut`
    /// is `None`); other bindings and runs may read it. Rebinding `name` or
    /// [`IoBinding::clear_inputs`] drops the clone (ORT drops its own reference then too), and
    /// the value is the caller's again. Returns the value this binding held for `name` by
    /// value, if it held one.
    pub fn bind_input<V: InputValue<'v> + 'v>(&mut self, name: &str, value: &Arc<V>) -> Result<Option<Value<'v>>> {
        let n = c_string("input name", name)?;
        ort!(self.api, BindInput(self.ptr.as_ptr(), n.as_ptr(), value.input_value().ptr.as_ptr()))?;
        let held: Arc<dyn InputValue<'v> + 'v> = Arc::clone(value) as Arc<dyn InputValue<'v> + 'v>;
        put(&mut self.shared_inputs, name, Some(held));
        Ok(put(&mut self.owned_inputs, name, None))
    }

    /// Bind input `name` to `value`, which the binding takes (exclusive: `BindInput`): runs
    /// read it, and between runs [`IoBinding::input_data_mut`] lends its data out to be
    /// rewritten.
    /// Returns the value this binding held for `name`, if it held one.
    pub fn bind_input_owned(&mut self, name: &str, value: Value<'v>) -> Result<Option<Value<'v>>> {
        let n = c_string("input name", name)?;
        ort!(self.api, BindInput(self.ptr.as_ptr(), n.as_ptr(), value.ptr.as_ptr()))?;
        put(&mut self.shared_inputs, name, None);
        Ok(put(&mut self.owned_inputs, name, Some(value)))
    }

    /// Bind output `name` to a preallocated value, which the binding takes (exclusive:
    /// `BindOutput`): every run writes into it, so it is the binding's while bound. Read it
    /// between runs with [`IoBinding::output`]. Returns the value this binding held for
    /// `name`, if it held one.
    pub fn bind_output(&mut self, name: &str, value: Value<'v>) -> Result<Option<Value<'v>>> {
        let n = c_string("output name", name)?;
        ort!(self.api, BindOutput(self.ptr.as_ptr(), n.as_ptr(), value.ptr.as_ptr()))?;
        Ok(put(&mut self.owned_outputs, name, Some(value)))
    }

    /// Let ORT allocate output `name` on the device `memory_info` describes (exclusive:
    /// `BindOutputToDevice`); read it with [`IoBinding::outputs`]. Returns the value this
    /// binding held for `name`, if it held one.
    pub fn bind_output_to_device(&mut self, name: &str, memory_info: &MemoryInfo) -> Result<Option<Value<'v>>> {
        let n = c_string("output name", name)?;
        ort!(self.api, BindOutputToDevice(self.ptr.as_ptr(), n.as_ptr(), memory_info.ptr.as_ptr()))?;
        Ok(put(&mut self.owned_outputs, name, None))
    }

    /// Forget the bound inputs (exclusive: `ClearBoundInputs`): give back those the binding
    /// took, and drop its clones of the shared ones (whose `Arc::get_mut` works again).
    pub fn clear_inputs(&mut self) -> Vec<(String, Value<'v>)> {
        match slot!(self.api, ClearBoundInputs) {
            Ok(f) => unsafe { f(self.ptr.as_ptr()) },
            // a table with CreateIoBinding has it: nothing was unbound, nothing is given back
            Err(_) => return Vec::new(),
        }
        self.shared_inputs.clear();
        std::mem::take(&mut self.owned_inputs)
    }

    /// Forget the bound outputs (exclusive: `ClearBoundOutputs`) and give back those the
    /// binding took.
    pub fn clear_outputs(&mut self) -> Vec<(String, Value<'v>)> {
        match slot!(self.api, ClearBoundOutputs) {
            Ok(f) => unsafe { f(self.ptr.as_ptr()) },
            Err(_) => return Vec::new(),
        }
        std::mem::take(&mut self.owned_outputs)
    }

    /// The value bound to output `name` by [`IoBinding::bind_output`], to read between runs:
    /// the loan ends before the next run, which writes it again. No C call.
    pub fn output(&self, name: &str) -> Option<&Value<'v>> {
        find(&self.owned_outputs, name).map(|i| &self.owned_outputs[i].1)
    }

    /// The elements of the value bound to output `name` by [`IoBinding::bind_output`],
    /// writable between runs. The data, not the value: a `&mut Value` could be swapped out of
    /// the binding, and then used while a run writes it.
    pub fn output_data_mut<T: Element>(&mut self, name: &str) -> Result<&mut [T]> {
        data_mut(&mut self.owned_outputs, name, "output")
    }

    /// The value bound to input `name` by [`IoBinding::bind_input_owned`], to read between
    /// runs.
    pub fn input(&self, name: &str) -> Option<&Value<'v>> {
        find(&self.owned_inputs, name).map(|i| &self.owned_inputs[i].1)
    }

    /// The elements of the value bound to input `name` by [`IoBinding::bind_input_owned`],
    /// writable between runs: the next run reads what is written (where the session reads the
    /// value's own memory, as on CPU; BindInput may copy an input for a device provider, so
    /// rebind it there). The data, not the value, as for [`IoBinding::output_data_mut`].
    pub fn input_data_mut<T: Element>(&mut self, name: &str) -> Result<&mut [T]> {
        data_mut(&mut self.owned_inputs, name, "input")
    }

    /// The output values of the last run (exclusive: `GetBoundOutputValues`), including those
    /// ORT allocated ([`IoBinding::bind_output_to_device`]). They share their data with the
    /// binding's outputs (and with a caller's buffer), so they borrow the binding: the next
    /// run, or a second call, waits until they are dropped. An output that shares memory with
    /// a bound input (a graph output that is a graph input) or with another output comes back
    /// as a copy that owns its data: writing it must not write an input that other bindings,
    /// runs or a read-only buffer's owner read (see `value::owned_outputs`). `None` for an
    /// output with no value (an optional output left empty).
    pub fn outputs(&mut self) -> Result<Vec<Option<Value<'_>>>> {
        let api = self.api;
        let alloc = default_allocator(api)?;
        let mut arr: *mut *mut sys::OrtValue = std::ptr::null_mut();
        let mut n = 0usize;
        ort!(api, GetBoundOutputValues(self.ptr.as_ptr(), alloc, &mut arr, &mut n))?;
        if arr.is_null() {
            return Ok(Vec::new());
        }
        let raw: Vec<*mut sys::OrtValue> = (0..n).map(|i| unsafe { *arr.add(i) }).collect();
        ort!(api, AllocatorFree(alloc, arr as *mut c_void))?;
        let inputs: Vec<&Value<'v>> = self
            .owned_inputs
            .iter()
            .map(|(_, v)| v)
            .chain(self.shared_inputs.iter().map(|(_, v)| v.input_value()))
            .collect();
        // owned, released once each; a value sharing an input's or another output's memory is
        // replaced by a copy. What is left shares memory with the binding's outputs: borrowed.
        Ok(owned_outputs(api, raw, &inputs)?)
    }
}

impl Drop for IoBinding<'_> {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseIoBinding) {
            unsafe { f(self.ptr.as_ptr()) }
        }
        // then the values it took and its clones of shared inputs, then (if it was the last
        // holder) the session
    }
}
