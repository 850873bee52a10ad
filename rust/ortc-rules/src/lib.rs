//! DOCS_PLACEHOLDER
#![deny(unsafe_op_in_unsafe_fn)]

#[macro_use]
pub mod api;
pub mod rules;
pub mod sys;

mod binding;
mod env;
mod kernel;
mod memory;
mod session;
mod typeinfo;
mod value;

pub mod misuse;

pub use binding::IoBinding;
pub use env::Env;
pub use kernel::KernelContext;
pub use memory::{Allocator, DeviceAllocator, MemoryInfo, MemoryInfoRef};
pub use session::{provider_names, run_rule, ConcurrentRun, ExclusiveRun, RunOptions, RunPolicy, RunRule, Session, SessionOptions};
pub use typeinfo::{MapTypeInfo, SequenceTypeInfo, TensorTypeAndShapeInfo, TypeInfo};
pub use value::{Element, Value};

/// What can go wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// ORT returned an `OrtStatus` (code: `sys::ORT_*`).
    Ort { code: sys::OrtErrorCode, message: String },
    /// The library could not be loaded (the message says how to set `ORTC_LIBRARY`).
    Library(String),
    /// A slot newer than the loaded library's table.
    NotSupported { slot: &'static str, since: u32, version: u32 },
    /// `Session::new_concurrent` with a provider that does not allow concurrent Run: the
    /// reasons, one per provider.
    ExclusiveRun(Vec<String>),
    /// Bad input from the caller.
    Invalid(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Ort { code, message } => write!(f, "ONNX Runtime error {code}: {message}"),
            Error::Library(m) => write!(f, "{m}"),
            Error::NotSupported { slot, since, version } => {
                write!(f, "{slot} needs ORT API {since}, the loaded library's table is API {version}")
            }
            Error::ExclusiveRun(reasons) => write!(
                f,
                "this session's providers do not all allow concurrent Run (use Session::new, whose run takes &mut self): {}",
                reasons.join("; ")
            ),
            Error::Invalid(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for Error {}

/// `Result<T, Error>`.
pub type Result<T> = std::result::Result<T, Error>;
