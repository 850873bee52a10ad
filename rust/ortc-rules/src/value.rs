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
    /// Take ownership of a value ORT returned (NULL for an output that has none is refused).
    pub(crate) unsafe fn from_raw(api: &'static Api, ptr: *mut sys::OrtValue) -> Value<'static> {
        Value { ptr: NonNull::new(ptr).expect("ORT returned a NULL OrtValue"), api, _allocator: None, _buf: PhantomData }
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
        let mut v = unsafe { Value::from_raw(api, p) };
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
        let mut v = unsafe { Value::from_raw(api, p) };
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
        let v = unsafe { Value::from_raw(api, p) };
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
    /// A value ORT returned that shares data with something living for `'buf`.
    pub(crate) unsafe fn from_raw_borrowed(api: &'static Api, ptr: *mut sys::OrtValue) -> Value<'buf> {
        Value { ptr: NonNull::new(ptr).expect("ORT returned a NULL OrtValue"), api, _allocator: None, _buf: PhantomData }
    }

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

    fn data_ptr<T: Element>(&self) -> Result<(*mut T, usize)> {
        let (ty, shape) = self.element_type_and_shape()?;
        if ty != T::TYPE {
            return Err(Error::Invalid(format!("the tensor holds element type {ty}, not {} ({})", T::TYPE, std::any::type_name::<T>())));
        }
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

    /// The elements, read-only (shared).
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let (p, n) = self.data_ptr::<T>()?;
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }

    /// The elements, writable (exclusive: `&mut self`).
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
