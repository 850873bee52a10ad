//! OrtValue: tensors owned by ORT, or over a caller's buffer.

use std::ffi::{c_char, c_void};
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::api::{api, c_string, default_allocator, Api};
use crate::memory::{Allocator, AllocatorHandle, MemoryInfo, MemoryInfoData, MemoryInfoRef};
use crate::typeinfo::TypeInfo;
use crate::{sys, Error, Result};

/// A tensor element type: a plain Rust number with its ONNX element type. Sealed.
pub trait Element: private::Sealed + Copy + Send + Sync + 'static {
    /// the ONNX element type (`sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_*`)
    const TYPE: sys::ONNXTensorElementDataType;
}
mod private {
    pub trait Sealed {}
    pub trait SealedInput {}
}
macro_rules! element {
    ($($t:ty => $c:ident),* $(,)?) => {$(
        impl private::Sealed for $t {}
        impl Element for $t { const TYPE: sys::ONNXTensorElementDataType = sys::$c; }
    )*};
}
element! {
    f32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, f64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
    i8 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, u8 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
    i16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, u16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,
    i32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, u32 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
    i64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, u64 => ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,
    bool => ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
}

/// An OrtValue. `Value<'static>` owns its data (ORT allocated it: run outputs,
/// [`Value::from_slice_copy`]) or keeps alive what its data needs (an allocator and its
/// session: [`Value::zeros`]); `Value<'buf>` borrows what its data lives in: a caller's
/// buffer ([`Value::from_slice`]), an IoBinding's outputs
/// ([`IoBinding::outputs`](crate::IoBinding::outputs)). Over a caller's read-only buffer it is
/// a [`ReadOnlyValue`] ([`Value::from_slice_readonly`]), which only reads.
///
/// Send and Sync: reads take `&self` and may overlap (one input shared by concurrent runs);
/// writes ([`Value::as_mut_slice`]) take `&mut self`.
pub struct Value<'buf> {
    pub(crate) ptr: NonNull<sys::OrtValue>,
    api: &'static Api,
    /// the allocator ORT frees this value's memory through (it keeps its session alive):
    /// dropped after `ReleaseValue`
    _allocator: Option<Arc<AllocatorHandle>>,
    _buf: PhantomData<&'buf mut [u8]>,
}

/// Bytes per element of a numeric ONNX element type, as `(numerator, denominator)`: the
/// 4- and 2-bit types pack several elements in a byte. `None` for strings and unknown types.
fn element_bytes(ty: sys::ONNXTensorElementDataType) -> Option<(usize, usize)> {
    use sys::*;
    Some(match ty {
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 | ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL
        | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ
        | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ
        | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E8M0 => (1, 1),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16
        | ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 => (2, 1),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 | ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 => (4, 1),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 | ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64
        | ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 => (8, 1),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 => (16, 1),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 | ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 => (1, 2),
        ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 | ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 => (1, 4),
        _ => return None,
    })
}

fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0.saturating_add(b.1) && b.0 < a.0.saturating_add(a.1)
}

/// Outputs ORT returned (owned from here: each raw pointer is released once), none of them
/// sharing memory with `inputs` or with another output: one that does is replaced by a copy
/// that owns its data.
///
/// Why: ORT hands back the feed's own tensor for a graph output that is a graph input (a
/// pass-through: the execution frame puts each feed's value in the slot of its name, and
/// fetches read those slots: `IExecutionFrame::Init` in
/// <https://github.com/microsoft/onnxruntime/blob/v1.16.3/onnxruntime/core/framework/execution_frame.cc>;
/// tests/run.rs `an_output_that_is_an_input_owns_its_data` on 1.16.2 and 1.32.0). Such an
/// output, as a `Value<'static>`, would outlive the caller's buffer, and `as_mut_slice` on it
/// would write into a value others read (a shared input, a read-only buffer). A copy is the
/// sound choice that keeps `Value<'static>`: tying every output to every input's lifetime
/// would hold off the inputs' owners for the outputs' whole life, though ORT aliases only
/// pass-throughs. The same frame code copies an initializer that is a graph output into the
/// fetch, so outputs never share the session's initializers; the comparison between outputs
/// covers two outputs over one buffer. Pointer equality of the `OrtValue`s themselves is
/// checked as well: one that is an input's own `OrtValue` is copied and not released.
///
/// An output with no value is `None`: a NULL pointer, or an `OrtValue` that holds nothing (an
/// optional output left empty: `HasValue` false; it is released here, and never read further,
/// for ORT's type queries fail or crash on it). The crate once panicked on a NULL output and
/// failed the whole run on an empty one.
pub(crate) fn owned_outputs(api: &'static Api, raw: Vec<*mut sys::OrtValue>, inputs: &[&Value<'_>]) -> Result<Vec<Option<Value<'static>>>> {
    enum Output {
        Owned(Value<'static>),
        Input(usize),
        Nothing,
    }
    let input_ptrs: Vec<*mut sys::OrtValue> = inputs.iter().map(|v| v.ptr.as_ptr()).collect();
    // owned from here, so an error below releases the rest
    let pending: Vec<Output> = raw
        .into_iter()
        .map(|p| match input_ptrs.iter().position(|&i| i == p) {
            Some(k) => Output::Input(k),
            None => unsafe { Value::from_raw(api, p) }.map_or(Output::Nothing, Output::Owned),
        })
        .collect();
    let mut taken: Vec<(usize, usize)> = Vec::new();
    for v in inputs {
        taken.extend(v.data_range()?);
    }
    let mut out = Vec::with_capacity(pending.len());
    for output in pending {
        let value = match output {
            Output::Input(k) => inputs[k].deep_copy()?,
            Output::Owned(v) if !v.has_value()? => {
                out.push(None); // `v` is released here
                continue;
            }
            Output::Owned(v) => match v.data_range()? {
                Some(r) if taken.iter().any(|&t| overlaps(r, t)) => v.deep_copy()?, // `v` is released here
                _ => v,
            },
            Output::Nothing => {
                out.push(None);
                continue;
            }
        };
        taken.extend(value.data_range()?);
        out.push(Some(value));
    }
    Ok(out)
}

fn shape_len(shape: &[i64]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        if d < 0 {
            Err(Error::Invalid(format!("negative dimension {d} in shape {shape:?}")))
        } else {
            acc.checked_mul(d as usize).ok_or_else(|| Error::Invalid(format!("shape {shape:?} overflows")))
        }
    })
}

impl Value<'static> {
    /// Take ownership of a value ORT returned; `None` for NULL (no value: a caller that
    /// expects one says so with an error, an output may be NULL).
    pub(crate) unsafe fn from_raw(api: &'static Api, ptr: *mut sys::OrtValue) -> Option<Value<'static>> {
        Some(Value { ptr: NonNull::new(ptr)?, api, _allocator: None, _buf: PhantomData })
    }

    /// [`Value::from_raw`] for a call that succeeded and must have returned a value.
    pub(crate) unsafe fn from_created(api: &'static Api, ptr: *mut sys::OrtValue, what: &str) -> Result<Value<'static>> {
        unsafe { Value::from_raw(api, ptr) }.ok_or_else(|| Error::Invalid(format!("{what} returned a NULL OrtValue")))
    }

    /// A tensor holding a copy of `data` in ORT's default CPU allocator.
    pub fn from_slice_copy<T: Element>(data: &[T], shape: &[i64]) -> Result<Value<'static>> {
        if shape_len(shape)? != data.len() {
            return Err(Error::Invalid(format!("{} elements do not fill shape {shape:?}", data.len())));
        }
        let api = api()?;
        let alloc = default_allocator(api)?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateTensorAsOrtValue(alloc, shape.as_ptr(), shape.len(), T::TYPE, &mut p))?;
        let mut v = unsafe { Value::from_created(api, p, "CreateTensorAsOrtValue") }?;
        v.as_mut_slice::<T>()?.copy_from_slice(data);
        Ok(v)
    }

    /// A zeroed tensor of `shape` allocated by `allocator`. ORT frees it through that
    /// allocator, and a session's allocator must not outlive its session, nor its values: the
    /// value keeps the allocator (and so the session) alive. It borrows neither, so the
    /// session's exclusive calls stay available while the value lives.
    pub fn zeros<T: Element>(allocator: &Allocator, shape: &[i64]) -> Result<Value<'static>> {
        let handle = &allocator.handle;
        let api = handle.api;
        let n = shape_len(shape)?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateTensorAsOrtValue(handle.ptr.as_ptr(), shape.as_ptr(), shape.len(), T::TYPE, &mut p))?;
        let mut v = unsafe { Value::from_created(api, p, "CreateTensorAsOrtValue") }?;
        v._allocator = Some(Arc::clone(handle));
        let data = v.as_mut_slice::<T>()?;
        debug_assert_eq!(data.len(), n);
        unsafe { std::ptr::write_bytes(data.as_mut_ptr(), 0, n) };
        Ok(v)
    }

    /// A string tensor (`FillStringTensor`).
    pub fn from_strings(data: &[&str], shape: &[i64]) -> Result<Value<'static>> {
        if shape_len(shape)? != data.len() {
            return Err(Error::Invalid(format!("{} strings do not fill shape {shape:?}", data.len())));
        }
        let api = api()?;
        let alloc = default_allocator(api)?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateTensorAsOrtValue(alloc, shape.as_ptr(), shape.len(), sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING, &mut p))?;
        let v = unsafe { Value::from_created(api, p, "CreateTensorAsOrtValue") }?;
        let cs: Vec<_> = data.iter().map(|s| c_string("string element", s)).collect::<Result<_>>()?;
        let ptrs: Vec<*const c_char> = cs.iter().map(|c| c.as_ptr()).collect();
        ort!(api, FillStringTensor(v.ptr.as_ptr(), ptrs.as_ptr(), ptrs.len()))?;
        Ok(v)
    }
}

/// A tensor over a caller's read-only buffer ([`Value::from_slice_readonly`]): the buffer is
/// borrowed shared for `'buf`, so the caller (and anyone else) goes on reading it while the
/// value lives; nobody writes it. The type only allows being an input, which ORT reads and
/// never writes: it derefs to [`Value`] for every read (`&self`), and there is no way to a
/// `&mut Value` (`as_mut_slice`) or a `Value` (a bound output, which every run writes).
///
/// A run input as `&*v` (or `&v` where a `&Value` is expected); a binding input through an
/// `Arc` ([`IoBinding::bind_input`](crate::IoBinding::bind_input)). Send and Sync exactly
/// when [`Value`] is (the generated verdicts): it holds one, and its elements are `Sync`.
pub struct ReadOnlyValue<'buf> {
    value: Value<'buf>,
    _buf: PhantomData<&'buf [u8]>,
}

impl<'buf> Deref for ReadOnlyValue<'buf> {
    type Target = Value<'buf>;

    fn deref(&self) -> &Value<'buf> {
        &self.value
    }
}

/// A value an [`IoBinding`](crate::IoBinding) can hold as a shared input, through an `Arc`:
/// a [`Value`] or a [`ReadOnlyValue`]. Sealed.
pub trait InputValue<'buf>: private::SealedInput + Send + Sync {
    /// the value ORT reads
    fn input_value(&self) -> &Value<'buf>;
}

impl private::SealedInput for Value<'_> {}
impl<'buf> InputValue<'buf> for Value<'buf> {
    fn input_value(&self) -> &Value<'buf> {
        self
    }
}

impl private::SealedInput for ReadOnlyValue<'_> {}
impl<'buf> InputValue<'buf> for ReadOnlyValue<'buf> {
    fn input_value(&self) -> &Value<'buf> {
        &self.value
    }
}

impl<'buf> Value<'buf> {
    /// A tensor over the caller's buffer, without a copy (`CreateTensorWithDataAsOrtValue`).
    /// The value borrows the buffer mutably for `'buf`: ORT may write it (as a bound output),
    /// and the buffer can be neither read, written nor freed by anyone else meanwhile.
    pub fn from_slice<T: Element>(data: &'buf mut [T], shape: &[i64]) -> Result<Value<'buf>> {
        if shape_len(shape)? != data.len() {
            return Err(Error::Invalid(format!("{} elements do not fill shape {shape:?}", data.len())));
        }
        let api = api()?;
        let info = MemoryInfo::cpu()?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateTensorWithDataAsOrtValue(info.ptr.as_ptr(), data.as_mut_ptr() as *mut c_void,
                                                 std::mem::size_of_val(data), shape.as_ptr(), shape.len(), T::TYPE, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateTensorWithDataAsOrtValue returned NULL".into()))?;
        Ok(Value { ptr, api, _allocator: None, _buf: PhantomData })
    }

    /// A tensor over the caller's read-only buffer, without a copy
    /// (`CreateTensorWithDataAsOrtValue`), for an input: ORT reads an input and never writes
    /// it. The buffer is borrowed shared for `'buf`: it stays readable by everyone while the
    /// value lives, and nobody writes it. The [`ReadOnlyValue`] it returns cannot become an
    /// output nor be written.
    pub fn from_slice_readonly<T: Element>(data: &'buf [T], shape: &[i64]) -> Result<ReadOnlyValue<'buf>> {
        if shape_len(shape)? != data.len() {
            return Err(Error::Invalid(format!("{} elements do not fill shape {shape:?}", data.len())));
        }
        let api = api()?;
        let info = MemoryInfo::cpu()?;
        let mut p = std::ptr::null_mut();
        // the C function takes a `void*`; the type this returns never lets ORT write through it
        ort!(api, CreateTensorWithDataAsOrtValue(info.ptr.as_ptr(), data.as_ptr() as *mut c_void,
                                                 std::mem::size_of_val(data), shape.as_ptr(), shape.len(), T::TYPE, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateTensorWithDataAsOrtValue returned NULL".into()))?;
        Ok(ReadOnlyValue { value: Value { ptr, api, _allocator: None, _buf: PhantomData }, _buf: PhantomData })
    }

    /// Whether ORT frees this value's memory through a session's allocator (which it keeps
    /// alive).
    pub(crate) fn has_allocator(&self) -> bool {
        self._allocator.is_some()
    }

    /// Give the value away (to a call that takes it): its `Drop` will not run. The allocator it
    /// keeps alive, if any, is not released either: callers refuse such values first.
    pub(crate) fn into_raw(self) -> *mut sys::OrtValue {
        std::mem::ManuallyDrop::new(self).ptr.as_ptr()
    }

    /// Whether the value holds something (shared: `HasValue`): false for an optional left
    /// empty, which [`owned_outputs`] turns into `None`.
    pub(crate) fn has_value(&self) -> Result<bool> {
        let mut out = 0;
        ort!(self.api, HasValue(self.ptr.as_ptr(), &mut out))?;
        Ok(out != 0)
    }

    /// Whether the value is a tensor (shared: `IsTensor`).
    pub fn is_tensor(&self) -> Result<bool> {
        let mut out = 0;
        ort!(self.api, IsTensor(self.ptr.as_ptr(), &mut out))?;
        Ok(out != 0)
    }

    /// Element type and shape (shared: `GetTensorTypeAndShape`; the info is read and released).
    pub fn element_type_and_shape(&self) -> Result<(sys::ONNXTensorElementDataType, Vec<i64>)> {
        let api = self.api;
        let mut info = std::ptr::null_mut();
        ort!(api, GetTensorTypeAndShape(self.ptr.as_ptr(), &mut info))?;
        let out = crate::typeinfo::element_type_and_dims(api, info);
        if let Ok(f) = slot!(api, ReleaseTensorTypeAndShapeInfo) {
            unsafe { f(info) }
        }
        out
    }

    /// The shape.
    pub fn shape(&self) -> Result<Vec<i64>> {
        Ok(self.element_type_and_shape()?.1)
    }

    /// The full type (shared: `GetTypeInfo`; an owned TypeInfo).
    pub fn type_info(&self) -> Result<TypeInfo> {
        let mut ti = std::ptr::null_mut();
        ort!(self.api, GetTypeInfo(self.ptr.as_ptr(), &mut ti))?;
        unsafe { TypeInfo::from_raw(self.api, ti) }
    }

    /// Where the data lives (shared: `GetTensorMemoryInfo`), copied out as plain data. The
    /// OrtMemoryInfo ORT returns is borrowed from the value (never released, never kept past
    /// it): it is read at once, so what this returns borrows nothing and the value's exclusive
    /// calls (`as_mut_slice`) and its release are free while it lives.
    pub fn memory_info(&self) -> Result<MemoryInfoData> {
        let mut mi = std::ptr::null();
        ort!(self.api, GetTensorMemoryInfo(self.ptr.as_ptr(), &mut mi))?;
        let borrowed: MemoryInfoRef<'_> = unsafe { MemoryInfoRef::from_raw(self.api, mi) }?;
        borrowed.to_data()
    }

    /// Refuse a tensor whose memory is not the host's: a slice over device memory would be
    /// read and written by the CPU at an address that is not the host's (or not readable
    /// from it). The tensor's own OrtMemoryInfo decides (`GetTensorMemoryInfo`, then
    /// `MemoryInfoGetDeviceType`: CPU device memory only).
    fn require_host_memory(&self) -> Result<()> {
        let info = self.memory_info()?;
        if !info.is_cpu() {
            return Err(Error::Invalid(format!(
                "the tensor's data lives in {} memory (device type {}, device {}), not the host's: \
                 no host slice over it",
                info.name, info.device_type, info.device_id
            )));
        }
        Ok(())
    }

    fn data_ptr<T: Element>(&self) -> Result<(*mut T, usize)> {
        let (ty, shape) = self.element_type_and_shape()?;
        if ty != T::TYPE {
            return Err(Error::Invalid(format!("the tensor holds element type {ty}, not {} ({})", T::TYPE, std::any::type_name::<T>())));
        }
        self.require_host_memory()?;
        let n = shape_len(&shape)?;
        let mut p = std::ptr::null_mut();
        // GetTensorMutableData is exclusive in the rules table; `as_slice` only reads through
        // the pointer (a shared read, like GetTensorData), `as_mut_slice` writes (&mut self).
        ort!(self.api, GetTensorMutableData(self.ptr.as_ptr(), &mut p))?;
        if n == 0 {
            return Ok((NonNull::<T>::dangling().as_ptr(), 0));
        }
        Ok((p as *mut T, n))
    }

    /// Where this tensor's data is, as `(address, bytes)`, to tell whether two values share
    /// memory; `None` for a value that is not a tensor or has no elements. Only the address is
    /// read (`GetTensorMutableData` as a shared read, as in `as_slice`); nothing is read
    /// through it. A string tensor's range starts at its first element and covers one byte per
    /// element: two string tensors over the same elements start at the same address.
    pub(crate) fn data_range(&self) -> Result<Option<(usize, usize)>> {
        if !self.is_tensor()? {
            return Ok(None);
        }
        let (ty, shape) = self.element_type_and_shape()?;
        let n = shape_len(&shape)?;
        if n == 0 {
            return Ok(None);
        }
        let bytes = if ty == sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
            n
        } else {
            let (num, den) = element_bytes(ty)
                .ok_or_else(|| Error::Invalid(format!("element type {ty}: its size is not known to this crate")))?;
            n.checked_mul(num).ok_or_else(|| Error::Invalid(format!("shape {shape:?} overflows")))?.div_ceil(den)
        };
        let mut p = std::ptr::null_mut();
        ort!(self.api, GetTensorMutableData(self.ptr.as_ptr(), &mut p))?;
        Ok(Some((p as usize, bytes)))
    }

    /// A copy of this host tensor that owns its data (ORT's default CPU allocator): numbers
    /// byte for byte, strings element by element.
    pub(crate) fn deep_copy(&self) -> Result<Value<'static>> {
        self.require_host_memory()?;
        let (ty, shape) = self.element_type_and_shape()?;
        if ty == sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
            let strings = self.strings()?;
            let refs: Vec<&str> = strings.iter().map(|s| s.as_str()).collect();
            return Value::from_strings(&refs, &shape);
        }
        let api = self.api;
        let alloc = default_allocator(api)?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateTensorAsOrtValue(alloc, shape.as_ptr(), shape.len(), ty, &mut p))?;
        let copy = unsafe { Value::from_created(api, p, "CreateTensorAsOrtValue") }?;
        if let (Some((from, bytes)), Some((to, _))) = (self.data_range()?, copy.data_range()?) {
            // distinct buffers of the same type and shape: `copy` was just allocated
            unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, bytes) };
        }
        Ok(copy)
    }

    /// The elements, read-only (shared). [`Error::Invalid`] for a tensor of another element
    /// type or whose memory is not the host's (its memory info's device type is not CPU).
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let (p, n) = self.data_ptr::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }

    /// The elements, writable (exclusive: `&mut self`); refused as [`Value::as_slice`] is.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        let (p, n) = self.data_ptr::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }

    /// The strings of a string tensor (shared: `GetStringTensorDataLength`,
    /// `GetStringTensorContent`).
    pub fn strings(&self) -> Result<Vec<String>> {
        let (ty, shape) = self.element_type_and_shape()?;
        if ty != sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING {
            return Err(Error::Invalid(format!("the tensor holds element type {ty}, not strings")));
        }
        let n = shape_len(&shape)?;
        let mut total = 0usize;
        ort!(self.api, GetStringTensorDataLength(self.ptr.as_ptr(), &mut total))?;
        let mut buf = vec![0u8; total];
        let mut offsets = vec![0usize; n];
        ort!(self.api, GetStringTensorContent(self.ptr.as_ptr(), buf.as_mut_ptr() as *mut c_void, total, offsets.as_mut_ptr(), n))?;
        Ok((0..n)
            .map(|i| {
                let end = if i + 1 < n { offsets[i + 1] } else { total };
                String::from_utf8_lossy(&buf[offsets[i]..end]).into_owned()
            })
            .collect())
    }
}

impl Drop for Value<'_> {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseValue) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tensor whose OrtMemoryInfo names device memory: what a CUDA or DirectML run hands
    /// back. Made here over a host buffer with a "Cuda" memory info (ORT records the info and
    /// does not touch the buffer), since a CPU build cannot allocate device memory.
    fn tensor_said_to_be_on_a_device(data: &mut [f32]) -> Value<'_> {
        let api = api().unwrap();
        let info = MemoryInfo::new("Cuda", sys::OrtDeviceAllocator, 0, sys::OrtMemTypeDefault).unwrap();
        let shape = [data.len() as i64];
        let mut p = std::ptr::null_mut();
        let mut create = || -> Result<()> {
            ort!(api, CreateTensorWithDataAsOrtValue(info.ptr.as_ptr(), data.as_mut_ptr() as *mut c_void,
                                                     std::mem::size_of_val(data), shape.as_ptr(), 1, sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &mut p))
        };
        create().unwrap();
        Value { ptr: NonNull::new(p).unwrap(), api, _allocator: None, _buf: PhantomData }
    }

    #[test]
    fn a_host_slice_only_over_host_memory() {
        let mut buf = [1.0f32, 2.0];
        let mut v = tensor_said_to_be_on_a_device(&mut buf);
        assert!(!v.memory_info().unwrap().is_cpu());
        for err in [v.as_slice::<f32>().map(|_| ()).unwrap_err(), v.as_mut_slice::<f32>().map(|_| ()).unwrap_err()] {
            match err {
                Error::Invalid(m) => assert!(m.contains("not the host's") && m.contains("Cuda"), "{m}"),
                other => panic!("{other:?}"),
            }
        }
        // nor copied as if it were host memory
        assert!(matches!(v.deep_copy(), Err(Error::Invalid(_))));
        // host memory still is
        let host = Value::from_slice_copy(&[3.0f32], &[1]).unwrap();
        assert_eq!(host.as_slice::<f32>().unwrap(), &[3.0]);
    }

    #[test]
    fn a_null_output_is_none_not_a_panic() {
        // ORT may hand back NULL for an output with no value: `from_raw` panicked on it
        let api = api().unwrap();
        let mut p = std::ptr::null_mut();
        let alloc = default_allocator(api).unwrap();
        let shape = [1i64];
        let mut create = || -> Result<()> {
            ort!(api, CreateTensorAsOrtValue(alloc, shape.as_ptr(), 1, sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &mut p))
        };
        create().unwrap();
        let out = owned_outputs(api, vec![std::ptr::null_mut(), p, std::ptr::null_mut()], &[]).unwrap();
        assert_eq!(out.len(), 3);
        assert!(out[0].is_none() && out[2].is_none());
        assert_eq!(out[1].as_ref().unwrap().shape().unwrap(), [1]);
    }
}
