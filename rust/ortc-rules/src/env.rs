//! The process-wide environment.

use std::ptr::NonNull;
use std::sync::OnceLock;

use crate::api::{api, Api};
use crate::{sys, Error, Result};

/// ORT's environment: one per process, created on first use and never released.
///
/// Every `CreateEnv` returns the same ref-counted instance; ORT cannot re-create it after the
/// last release, and a Run after `ReleaseEnv` crashes (see `rules::RULES`, `OrtEnv` note). So,
/// like ortc, this crate never calls `ReleaseEnv`: `Env` has no `Drop`, you only ever hold a
/// `&'static Env`, and every session trivially satisfies "must not outlive `OrtEnv`".
/// `UpdateEnvWithCustomLogLevel` is exclusive (`&mut self`), which a shared `'static`
/// environment can never offer: it is not exposed.
pub struct Env {
    pub(crate) ptr: NonNull<sys::OrtEnv>,
    pub(crate) api: &'static Api,
}

static ENV: OnceLock<std::result::Result<Env, String>> = OnceLock::new();

impl Env {
    /// The environment, created (and the library loaded) on first use.
    pub fn get() -> Result<&'static Env> {
        // A static needs Env: Send + Sync, which the generated verdicts grant (rules.rs).
        ENV.get_or_init(|| create().map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Library(e.clone()))
    }

    /// The loaded library: path, versions.
    pub fn api(&self) -> &'static Api {
        self.api
    }

    /// Execution providers compiled into the library (shared: `GetAvailableProviders`).
    pub fn providers(&self) -> Result<Vec<String>> {
        let api = self.api;
        let mut list: *mut *mut std::ffi::c_char = std::ptr::null_mut();
        let mut n: std::ffi::c_int = 0;
        ort!(api, GetAvailableProviders(&mut list, &mut n))?;
        let out = (0..n as usize)
            .map(|i| unsafe { std::ffi::CStr::from_ptr(*list.add(i)).to_string_lossy().into_owned() })
            .collect();
        ort!(api, ReleaseAvailableProviders(list, n))?;
        Ok(out)
    }
}

fn create() -> Result<Env> {
    let api = api()?;
    let mut env = std::ptr::null_mut();
    ort!(api, CreateEnv(sys::ORT_LOGGING_LEVEL_WARNING, c"ortc-rules".as_ptr(), &mut env))?;
    let ptr = NonNull::new(env).ok_or(Error::Invalid("CreateEnv returned NULL".into()))?;
    Ok(Env { ptr, api })
}
