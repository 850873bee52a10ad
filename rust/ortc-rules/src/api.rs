//! The one place that loads the library and negotiates the API version, like ortc's
//! `_loader.py`: `dlopen` the file named by `ORTC_LIBRARY`, look up `OrtGetApiBase`, ask for
//! `GetApi(min(declared, library))`. Every wrapper reaches ORT through [`api()`] and the
//! `ort!` macro, which refuses a slot the negotiated table does not have.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use crate::sys;
use crate::{Error, Result};

// The platform loader, declared here rather than taken from a crate. glibc 2.34+ has these in
// libc itself (std links libc), so no -ldl is needed; older glibc would need `-l dl`.
extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;

/// The oldest API this crate's wrappers rely on without checking (ORT 1.16, the oldest
/// version ortc's conformance kit covers). Newer slots are checked per call.
pub const MIN_API_VERSION: u32 = 16;

/// The environment variable naming the library (the one ortc itself honours).
pub const LIBRARY_VARIABLE: &str = "ORTC_LIBRARY";

/// The loaded library and its negotiated table.
pub struct Api {
    table: &'static sys::OrtApi,
    /// min(declared, library): the table in use
    pub version: u32,
    /// the highest API version the library offers (ORT 1.N offers API N)
    pub library_api: u32,
    /// ORT's version string
    pub library_version: String,
    /// the file loaded
    pub path: String,
}

// The table is a static array of function pointers inside the library, never written after
// GetApi returns: reading it from any thread is safe.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

impl Api {
    /// The raw table (read a slot only if `sys::since::SLOT <= self.version`; `ort!` does).
    pub fn table(&self) -> &'static sys::OrtApi {
        self.table
    }

    /// An `OrtStatus*` as a Result: reads code and message and releases the status.
    pub(crate) fn status(&self, status: *mut sys::OrtStatus) -> Result<()> {
        if status.is_null() {
            return Ok(());
        }
        // API 1 slots: always present.
        unsafe {
            let code = (self.table.GetErrorCode.expect("GetErrorCode"))(status);
            let msg = (self.table.GetErrorMessage.expect("GetErrorMessage"))(status);
            let message = if msg.is_null() {
                String::new()
            } else {
                CStr::from_ptr(msg).to_string_lossy().into_owned()
            };
            (self.table.ReleaseStatus.expect("ReleaseStatus"))(status);
            Err(Error::Ort { code, message })
        }
    }
}

/// Read a slot of the negotiated table, or `Error::NotSupported` when the library's table is
/// older than the slot (reading it would read past the table's end).
macro_rules! slot {
    ($api:expr, $name:ident) => {{
        let api: &$crate::api::Api = $api;
        if $crate::sys::since::$name > api.version {
            Err($crate::Error::NotSupported {
                slot: stringify!($name),
                since: $crate::sys::since::$name,
                version: api.version,
            })
        } else {
            api.table().$name.ok_or($crate::Error::NotSupported {
                slot: stringify!($name),
                since: $crate::sys::since::$name,
                version: api.version,
            })
        }
    }};
}

/// Call a slot returning `OrtStatus*`: `ort!(api, Run(...))` is a `Result<()>`.
macro_rules! ort {
    ($api:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        let api: &$crate::api::Api = $api;
        let f = slot!(api, $name)?;
        #[allow(unused_unsafe)]
        let status = unsafe { f($($arg),*) };
        api.status(status)
    }};
}

/// Call a slot of the model editor's table (`GetModelEditorApi`, API 22; the table is declared
/// in `editor.rs`): `editor!(api, CreateGraph(&mut g))` is a `Result<()>`, and
/// `Error::NotSupported` on a library without the table.
macro_rules! editor {
    ($api:expr, $name:ident ( $($arg:expr),* $(,)? )) => {{
        let api: &$crate::api::Api = $api;
        let f = $crate::editor::table(api)?.$name.ok_or($crate::Error::NotSupported {
            slot: concat!("OrtModelEditorApi.", stringify!($name)),
            since: $crate::sys::since::GetModelEditorApi,
            version: api.version,
        })?;
        #[allow(unused_unsafe)]
        let status = unsafe { f($($arg),*) };
        api.status(status)
    }};
}

static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();

/// The loaded API, loading the library on first use.
pub fn api() -> Result<&'static Api> {
    API.get_or_init(load).as_ref().map_err(|e| Error::Library(e.clone()))
}

fn library_api_of(version: &str) -> Option<u32> {
    // ORT 1.N offers API N
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}

fn load() -> std::result::Result<Api, String> {
    let path = std::env::var(LIBRARY_VARIABLE).map_err(|_| {
        format!(
            "{LIBRARY_VARIABLE} is not set: set it to the path of libonnxruntime.so, for \
             example ORTC_LIBRARY=$(python -c 'import ortc; print(ortc.version().library_path)') \
             (`make test` sets it to the onnxruntime wheel's library)"
        )
    })?;
    let c_path = CString::new(path.clone()).map_err(|_| format!("{LIBRARY_VARIABLE} contains a NUL byte"))?;
    unsafe {
        let handle = dlopen(c_path.as_ptr(), RTLD_NOW);
        if handle.is_null() {
            let err = dlerror();
            let why = if err.is_null() { String::from("unknown error") } else {
                CStr::from_ptr(err).to_string_lossy().into_owned()
            };
            return Err(format!("cannot load {path} (from {LIBRARY_VARIABLE}): {why}"));
        }
        // The handle is never closed: the library stays loaded for the life of the process,
        // as in ortc (ORT cannot be unloaded safely while its threads exist).
        let sym = dlsym(handle, c"OrtGetApiBase".as_ptr());
        if sym.is_null() {
            return Err(format!("{path} has no OrtGetApiBase: not an ONNX Runtime library"));
        }
        let get_base: sys::OrtGetApiBaseFn = std::mem::transmute(sym);
        let base = get_base();
        if base.is_null() {
            return Err(format!("{path}: OrtGetApiBase returned NULL"));
        }
        let base = &*base;
        let version_string = match base.GetVersionString {
            Some(f) => CStr::from_ptr(f()).to_string_lossy().into_owned(),
            None => return Err(format!("{path}: OrtApiBase has no GetVersionString")),
        };
        let library_api = library_api_of(&version_string)
            .ok_or_else(|| format!("{path}: cannot read the API version from ORT {version_string}"))?;
        let version = library_api.min(sys::DECLARED_API_VERSION);
        if version < MIN_API_VERSION {
            return Err(format!(
                "{path}: ONNX Runtime {version_string} offers API {library_api}; this crate \
                 needs API {MIN_API_VERSION} or newer"
            ));
        }
        let get_api = base.GetApi.ok_or_else(|| format!("{path}: OrtApiBase has no GetApi"))?;
        let table = get_api(version);
        if table.is_null() {
            return Err(format!("{path}: GetApi({version}) returned NULL (ORT {version_string})"));
        }
        Ok(Api { table: &*table, version, library_api, library_version: version_string, path })
    }
}

/// A Rust string as a C string, or `Error::Invalid` naming the argument.
pub(crate) fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::Invalid(format!("{what} {s:?} contains a NUL byte")))
}

/// Copy a C string allocated by ORT's default allocator into a String and free it.
pub(crate) fn take_allocated_string(api: &Api, alloc: *mut sys::OrtAllocator, s: *mut c_char) -> Result<String> {
    if s.is_null() {
        return Ok(String::new());
    }
    let out = unsafe { CStr::from_ptr(s).to_string_lossy().into_owned() };
    ort!(api, AllocatorFree(alloc, s as *mut c_void))?;
    Ok(out)
}

/// ORT's default CPU allocator (static inside ORT, never freed).
pub(crate) fn default_allocator(api: &Api) -> Result<*mut sys::OrtAllocator> {
    let mut alloc = std::ptr::null_mut();
    ort!(api, GetAllocatorWithDefaultOptions(&mut alloc))?;
    Ok(alloc)
}
