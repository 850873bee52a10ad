//! MemoryInfo (owned, borrowed from its owner, or copied out as plain data) and allocators
//! (CPU: Sync; device: not).

use std::ffi::{c_char, CStr};
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::api::{api, c_string, Api};
use crate::session::SessionHandle;
use crate::{sys, Error, Result};

/// A memory description this crate created (`CreateCpuMemoryInfo` / `CreateMemoryInfo`);
/// released on drop. Immutable: Send and Sync, every getter `&self`.
pub struct MemoryInfo {
    pub(crate) ptr: NonNull<sys::OrtMemoryInfo>,
    api: &'static Api,
}

/// A memory description owned by something else (a value's, an allocator's): valid for
/// `'a`, the owner's borrow, and never released (no `Drop`).
pub struct MemoryInfoRef<'a> {
    ptr: NonNull<sys::OrtMemoryInfo>,
    api: &'static Api,
    _owner: PhantomData<&'a ()>,
}

/// What a memory info says, copied out as plain data ([`MemoryInfoRef::to_data`],
/// [`Value::memory_info`](crate::Value::memory_info)): it borrows nothing, so it may outlive the
/// info's owner and leaves the owner's exclusive calls free (a value's `as_mut_slice`). Every
/// field is read with the info's shared getters; nothing here is released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryInfoData {
    /// the memory's name, "Cpu", "Cuda", ... (`MemoryInfoGetName`)
    pub name: String,
    /// the device id (`MemoryInfoGetId`)
    pub device_id: i32,
    /// the memory type (`MemoryInfoGetMemType`)
    pub mem_type: sys::OrtMemType,
    /// the allocator type (`MemoryInfoGetType`)
    pub allocator_type: sys::OrtAllocatorType,
    /// the device type (`MemoryInfoGetDeviceType`)
    pub device_type: sys::OrtMemoryInfoDeviceType,
}

impl MemoryInfoData {
    /// Whether this is CPU memory (by its device type).
    pub fn is_cpu(&self) -> bool {
        self.device_type == sys::OrtMemoryInfoDeviceType_CPU
    }
}

impl MemoryInfo {
    /// CPU memory, arena allocator, default memory type.
    pub fn cpu() -> Result<MemoryInfo> {
        let api = api()?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateCpuMemoryInfo(sys::OrtArenaAllocator, sys::OrtMemTypeDefault, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateCpuMemoryInfo returned NULL".into()))?;
        Ok(MemoryInfo { ptr, api })
    }

    /// Memory named `name` ("Cpu", "Cuda", ...) on device `device_id`.
    pub fn new(name: &str, allocator_type: sys::OrtAllocatorType, device_id: i32, mem_type: sys::OrtMemType) -> Result<MemoryInfo> {
        let api = api()?;
        let n = c_string("memory name", name)?;
        let mut p = std::ptr::null_mut();
        ort!(api, CreateMemoryInfo(n.as_ptr(), allocator_type, device_id, mem_type, &mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateMemoryInfo returned NULL".into()))?;
        Ok(MemoryInfo { ptr, api })
    }

    /// This description, borrowed.
    pub fn as_ref(&self) -> MemoryInfoRef<'_> {
        MemoryInfoRef { ptr: self.ptr, api: self.api, _owner: PhantomData }
    }

    /// The memory's name (shared: `MemoryInfoGetName`).
    pub fn name(&self) -> Result<String> {
        self.as_ref().name()
    }

    /// Whether this is CPU memory (by its device type).
    pub fn is_cpu(&self) -> Result<bool> {
        self.as_ref().is_cpu()
    }
}

impl Drop for MemoryInfo {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseMemoryInfo) {
            unsafe { f(self.ptr.as_ptr()) }
        }
    }
}

impl<'a> MemoryInfoRef<'a> {
    pub(crate) unsafe fn from_raw(api: &'static Api, p: *const sys::OrtMemoryInfo) -> Result<MemoryInfoRef<'a>> {
        let ptr = NonNull::new(p as *mut _).ok_or(Error::Invalid("ORT returned a NULL OrtMemoryInfo".into()))?;
        Ok(MemoryInfoRef { ptr, api, _owner: PhantomData })
    }

    /// The memory's name (shared: `MemoryInfoGetName`).
    pub fn name(&self) -> Result<String> {
        let mut s: *const c_char = std::ptr::null();
        ort!(self.api, MemoryInfoGetName(self.ptr.as_ptr(), &mut s))?;
        Ok(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
    }

    /// The device id (shared: `MemoryInfoGetId`).
    pub fn device_id(&self) -> Result<i32> {
        let mut id = 0;
        ort!(self.api, MemoryInfoGetId(self.ptr.as_ptr(), &mut id))?;
        Ok(id)
    }

    /// The memory type (shared: `MemoryInfoGetMemType`).
    pub fn mem_type(&self) -> Result<sys::OrtMemType> {
        let mut t = 0;
        ort!(self.api, MemoryInfoGetMemType(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// The allocator type (shared: `MemoryInfoGetType`).
    pub fn allocator_type(&self) -> Result<sys::OrtAllocatorType> {
        let mut t = 0;
        ort!(self.api, MemoryInfoGetType(self.ptr.as_ptr(), &mut t))?;
        Ok(t)
    }

    /// The device type (shared: `MemoryInfoGetDeviceType`).
    pub fn device_type(&self) -> Result<sys::OrtMemoryInfoDeviceType> {
        let mut t = 0;
        let f = slot!(self.api, MemoryInfoGetDeviceType)?;
        unsafe { f(self.ptr.as_ptr(), &mut t) };
        Ok(t)
    }

    /// Whether this is CPU memory (shared: `MemoryInfoGetDeviceType`).
    pub fn is_cpu(&self) -> Result<bool> {
        Ok(self.device_type()? == sys::OrtMemoryInfoDeviceType_CPU)
    }

    /// Everything this info says, copied out (shared: every getter): plain data that does not
    /// borrow the info's owner.
    pub fn to_data(&self) -> Result<MemoryInfoData> {
        Ok(MemoryInfoData {
            name: self.name()?,
            device_id: self.device_id()?,
            mem_type: self.mem_type()?,
            allocator_type: self.allocator_type()?,
            device_type: self.device_type()?,
        })
    }
}

/// The `OrtAllocator` of an [`Allocator`], reference-counted: held by the allocator and by
/// every value it allocated (ORT frees a value's memory through it), and holding the session
/// it came from. `ReleaseAllocator` runs when the last holder is dropped, then the session may
/// go.
pub(crate) struct AllocatorHandle {
    pub(crate) ptr: NonNull<sys::OrtAllocator>,
    pub(crate) api: &'static Api,
    /// a session's allocator is released; the default one is static inside ORT
    owned: bool,
    /// the session a session allocator must not outlive (kept alive, not borrowed)
    _session: Option<Arc<SessionHandle>>,
}

impl Drop for AllocatorHandle {
    fn drop(&mut self) {
        if self.owned {
            if let Ok(f) = slot!(self.api, ReleaseAllocator) {
                unsafe { f(self.ptr.as_ptr()) }
            }
        }
        // then `_session` drops: the session goes after its allocator
    }
}

/// An allocator for CPU memory: ORT's default one (never released) or a session's. Send and
/// Sync: the default allocator is stateless and a session's CPU arena has a mutex.
///
/// A session's allocator must not outlive its session, nor must the values it allocates: the
/// allocator keeps the session alive and each such value keeps the allocator alive (reference
/// counting, no lifetime), so the session's exclusive calls (`&mut Session`) stay available
/// while they live, as the rules table allows; only a run in flight excludes them.
pub struct Allocator {
    pub(crate) handle: Arc<AllocatorHandle>,
}

/// An allocator for memory of another device (CUDA, ...): Send, not Sync. It keeps its
/// session alive; released on drop.
pub struct DeviceAllocator {
    ptr: NonNull<sys::OrtAllocator>,
    api: &'static Api,
    _session: Arc<SessionHandle>,
}

impl Allocator {
    /// ORT's default CPU allocator (`GetAllocatorWithDefaultOptions`: static, never freed).
    pub fn default_cpu() -> Result<Allocator> {
        let api = api()?;
        let mut p = std::ptr::null_mut();
        ort!(api, GetAllocatorWithDefaultOptions(&mut p))?;
        let ptr = NonNull::new(p).ok_or(Error::Invalid("GetAllocatorWithDefaultOptions returned NULL".into()))?;
        Ok(Allocator { handle: Arc::new(AllocatorHandle { ptr, api, owned: false, _session: None }) })
    }

    pub(crate) unsafe fn from_session(api: &'static Api, p: *mut sys::OrtAllocator, session: Arc<SessionHandle>) -> Result<Allocator> {
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateAllocator returned NULL".into()))?;
        Ok(Allocator { handle: Arc::new(AllocatorHandle { ptr, api, owned: true, _session: Some(session) }) })
    }

    /// Where its memory lives (shared: `AllocatorGetInfo`), borrowed from the allocator.
    pub fn memory_info(&self) -> Result<MemoryInfoRef<'_>> {
        let mut mi = std::ptr::null();
        ort!(self.handle.api, AllocatorGetInfo(self.handle.ptr.as_ptr(), &mut mi))?;
        unsafe { MemoryInfoRef::from_raw(self.handle.api, mi) }
    }

    /// Allocate `size` bytes and free them again (shared: `AllocatorAlloc`, `AllocatorFree`);
    /// returns whether the allocation succeeded. A smoke test of the allocator from any thread.
    pub fn alloc_and_free(&self, size: usize) -> Result<bool> {
        let mut p = std::ptr::null_mut();
        ort!(self.handle.api, AllocatorAlloc(self.handle.ptr.as_ptr(), size, &mut p))?;
        let ok = !p.is_null();
        if ok {
            ort!(self.handle.api, AllocatorFree(self.handle.ptr.as_ptr(), p))?;
        }
        Ok(ok)
    }
}

impl DeviceAllocator {
    pub(crate) unsafe fn from_session(api: &'static Api, p: *mut sys::OrtAllocator, session: Arc<SessionHandle>) -> Result<DeviceAllocator> {
        let ptr = NonNull::new(p).ok_or(Error::Invalid("CreateAllocator returned NULL".into()))?;
        Ok(DeviceAllocator { ptr, api, _session: session })
    }

    /// Where its memory lives (`AllocatorGetInfo`), borrowed from the allocator.
    pub fn memory_info(&self) -> Result<MemoryInfoRef<'_>> {
        let mut mi = std::ptr::null();
        ort!(self.api, AllocatorGetInfo(self.ptr.as_ptr(), &mut mi))?;
        unsafe { MemoryInfoRef::from_raw(self.api, mi) }
    }
}

impl Drop for DeviceAllocator {
    fn drop(&mut self) {
        if let Ok(f) = slot!(self.api, ReleaseAllocator) {
            unsafe { f(self.ptr.as_ptr()) }
        }
        // then `_session` drops: the session goes after its allocator
    }
}
