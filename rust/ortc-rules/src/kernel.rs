//! The kernel context a custom operator's compute callback receives: a scoped borrow.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::api::{api, Api};
use crate::{sys, Error, Result};

/// The `OrtKernelContext*` of one `KernelCompute` call: valid only during that call, on the
/// calling thread. Neither Send nor Sync, and reachable only inside [`KernelContext::scope`],
/// whose closure cannot let it escape. Registering custom operators is not part of this
/// prototype; this type shows how a binding would hand the context to user code.
pub struct KernelContext<'c> {
    ptr: NonNull<sys::OrtKernelContext>,
    api: &'static Api,
    _call: PhantomData<&'c mut sys::OrtKernelContext>,
}

impl KernelContext<'_> {
    /// Lend `raw` to `f` for the duration of the call.
    ///
    /// # Safety
    /// `raw` must be the context ORT passed to the compute callback that is running now.
    pub unsafe fn scope<R>(raw: *mut sys::OrtKernelContext, f: impl for<'c> FnOnce(&mut KernelContext<'c>) -> R) -> Result<R> {
        let ptr = NonNull::new(raw).ok_or(Error::Invalid("NULL OrtKernelContext".into()))?;
        let mut ctx = KernelContext { ptr, api: api()?, _call: PhantomData };
        Ok(f(&mut ctx))
    }

    /// Number of inputs (shared: `KernelContext_GetInputCount`).
    pub fn input_count(&self) -> Result<usize> {
        let mut n = 0;
        ort!(self.api, KernelContext_GetInputCount(self.ptr.as_ptr(), &mut n))?;
        Ok(n)
    }

    /// Number of outputs (shared: `KernelContext_GetOutputCount`).
    pub fn output_count(&self) -> Result<usize> {
        let mut n = 0;
        ort!(self.api, KernelContext_GetOutputCount(self.ptr.as_ptr(), &mut n))?;
        Ok(n)
    }
}
