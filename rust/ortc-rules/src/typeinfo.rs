//! Type infos: an owned TypeInfo, and the tensor/map/sequence views borrowed from it.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::api::Api;
use crate::{sys, Error, Result};

/// The type of an input, output or value; owned (`ReleaseTypeInfo` on drop), read-only.
pub struct TypeInfo {
    pub(crate) ptr: NonNull<sys::OrtTypeInfo>,
    api: &'static Api,
}

/// A tensor's element type and shape, borrowed from its [`TypeInfo`] ("valid until type_info
/// is freed"): lives for `'a`, never released (no `Drop`).
pub struct TensorTypeAndShapeInfo<'a> {
    ptr: NonNull<sys::OrtTensorTypeAndShapeInfo>,
    api: &'static Api,
    _owner: PhantomData<&'a TypeInfo>,
}

/// A map's key and value types, borrowed from its [`TypeInfo`]; no `Drop`.
pub struct MapTypeInfo<'a> {
    ptr: NonNull<sys::OrtMapTypeInfo>,
    api: &'static Api,
    _owner: PhantomData<&'a TypeInfo>,
}

/// A sequence's element type, borrowed from its [`TypeInfo`]; no `Drop`.
pub struct SequenceTypeInfo<'a> {
    ptr: NonNull<sys::OrtSequenceTypeInfo>,
    api: &'static Api,
    _owner: PhantomData<&'a TypeInfo>,
}

impl TypeInfo {
    pub(crate) unsafe fn from_raw(api: &'static Api, p: *mut sys::OrtTypeInfo) -> Result<TypeInfo> {
        let ptr = NonNull::new(p).ok_or(Error::Invalid("ORT returned a NULL OrtTypeInfo".into()))?;
        Ok(TypeInfo { ptr, api })
    }

    /// The kind: `sys::ONNX_TYPE_TENSOR`, `ONNX_TYPE_SEQUENCE`, `ONNX_TYPE_MAP`, ...
    /// (shared: `GetOnnxTypeFromTypeInfo`).
    pub fn onnx_type(&self) -> Result<sys::ONNXType> {
        let mut t = 0;
        ort!(self.api, GetOnnxTypeFromTypeInfo(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// The tensor view, if this is a tensor (shared: `CastTypeInfoToTensorInfo`; borrowed).
    pub fn tensor_info(&self) -> Result<Option<TensorTypeAndShapeInfo<'_>>> {
        let mut p = std::ptr::null();
        ort!(self.api, CastTypeInfoToTensorInfo(self.ptr.as_ptr(), &mut p))?;
        Ok(NonNull::new(p as *mut _).map(|ptr| TensorTypeAndShapeInfo { ptr, api: self.api, _owner: PhantomData }))
    }

    /// The map view, if this is a map (shared: `CastTypeInfoToMapTypeInfo`; borrowed).
    pub fn map_info(&self) -> Result<Option<MapTypeInfo<'_>>> {
        let mut p = std::ptr::null();
        ort!(self.api, CastTypeInfoToMapTypeInfo(self.ptr.as_ptr(), &mut p))?;
        Ok(NonNull::new(p as *mut _).map(|ptr| MapTypeInfo { ptr, api: self.api, _owner: PhantomData }))
    }

    /// The sequence view, if this is a sequence (shared: `CastTypeInfoToSequenceTypeInfo`).
    pub fn sequence_info(&self) -> Result<Option<SequenceTypeInfo<'_>>> {
        let mut p = std::ptr::null();
        ort!(self.api, CastTypeInfoToSequenceTypeInfo(self.ptr.as_ptr(), &mut p))?;
        Ok(NonNull::new(p as *mut _).map(|ptr| SequenceTypeInfo { ptr, api: self.api, _owner: PhantomData }))
    }
}

impl Drop for TypeInfo {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseTypeInfo) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

/// A tensor info's element type and dimensions, -1 where unknown (shared:
/// `GetTensorElementType`, `GetDimensionsCount`, `GetDimensions`): what a value's and a value
/// info's `element_type_and_shape` read from the info they get.
pub(crate) fn element_type_and_dims(
    api: &Api,
    info: *const sys::OrtTensorTypeAndShapeInfo,
) -> Result<(sys::ONNXTensorElementDataType, Vec<i64>)> {
    let mut ty = 0;
    ort!(api, GetTensorElementType(info, &mut ty))?;
    let mut n = 0usize;
    ort!(api, GetDimensionsCount(info, &mut n))?;
    let mut dims = vec![0i64; n];
    ort!(api, GetDimensions(info, dims.as_mut_ptr(), n))?;
    Ok((ty, dims))
}

impl TensorTypeAndShapeInfo<'_> {
    /// The element type (shared: `GetTensorElementType`).
    pub fn element_type(&self) -> Result<sys::ONNXTensorElementDataType> {
        let mut t = 0;
        ort!(self.api, GetTensorElementType(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// The dimensions, -1 where unknown (shared: `GetDimensionsCount`, `GetDimensions`).
    pub fn dims(&self) -> Result<Vec<i64>> {
        let mut n = 0usize;
        ort!(self.api, GetDimensionsCount(self.ptr.as_ptr(), &mut n))?;
        let mut dims = vec![0i64; n];
        ort!(self.api, GetDimensions(self.ptr.as_ptr(), dims.as_mut_ptr(), n))?;
        Ok(dims)
    }
}

impl MapTypeInfo<'_> {
    /// The key's element type (shared: `GetMapKeyType`).
    pub fn key_type(&self) -> Result<sys::ONNXTensorElementDataType> {
        let mut t = 0;
        ort!(self.api, GetMapKeyType(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// The value type, an owned TypeInfo (shared: `GetMapValueType`).
    pub fn value_type(&self) -> Result<TypeInfo> {
        let mut p = std::ptr::null_mut();
        ort!(self.api, GetMapValueType(self.ptr.as_ptr(), &mut p))?;
        unsafe { TypeInfo::from_raw(self.api, p) }
    }
}

impl SequenceTypeInfo<'_> {
    /// The element type, an owned TypeInfo (shared: `GetSequenceElementType`).
    pub fn element_type(&self) -> Result<TypeInfo> {
        let mut p = std::ptr::null_mut();
        ort!(self.api, GetSequenceElementType(self.ptr.as_ptr(), &mut p))?;
        unsafe { TypeInfo::from_raw(self.api, p) }
    }
}
