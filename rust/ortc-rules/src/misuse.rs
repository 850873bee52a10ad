//! Misuse that does not compile: one `compile_fail` example per rule, each with the error
//! the compiler must give. `cargo test` (rustdoc) checks that every one fails to compile;
//! stable rustdoc ignores the code, so the repository's tests/test_rust.py compiles each
//! against the crate and checks it fails with the code it states. The per-type Send/Sync
//! refusals are generated with the verdicts, in [`crate::rules`].
//!
//! Most examples are the body of
//! `fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()>`.
//!
//! ## Run is exclusive unless the session's providers allow concurrent Run
//!
//! A `Session<ExclusiveRun>` (from `Session::new`) cannot run through a shared `Arc`
//! (E0596)...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*; use std::sync::Arc;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Arc::new(Session::new(env, opts, model)?);
//! let shared = Arc::clone(&session);
//! std::thread::spawn(move || shared.run(None, &[]).map(|_| ()));
//! # Ok(()) }
//! ```
//!
//! ...nor from two threads at once (E0499); wrap it in a `Mutex` to share it.
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut session = Session::new(env, opts, model)?;
//! std::thread::scope(|s| {
//!     s.spawn(|| session.run(None, &[]).map(|_| ()));
//!     s.spawn(|| session.run(None, &[]).map(|_| ()));
//! });
//! # Ok(()) }
//! ```
//!
//! The run policy is part of the type: an exclusive session is not a concurrent one (E0308);
//! `Session::new_concurrent` is the runtime gate that checks the providers.
//!
//! ```compile_fail,E0308
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session: Session<ConcurrentRun> = Session::new(env, opts, model)?;
//! # Ok(()) }
//! ```
//!
//! Exclusive calls of a concurrent session still need `&mut` (E0596):
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*; use std::sync::Arc;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Arc::new(Session::new_concurrent(env, opts, model)?);
//! session.end_profiling()?;
//! # Ok(()) }
//! ```
//!
//! ## Setters are exclusive, users of the object shared
//!
//! SessionOptions changed while another thread creates a session from it (E0502):
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut options = SessionOptions::new()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| Session::new_concurrent(env, &options, model).map(|_| ()));
//!     let _ = options.set_intra_op_num_threads(2);
//! });
//! # Ok(()) }
//! ```
//!
//! RunOptions retagged while a run uses them (E0502); `terminate` is shared and compiles.
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut run_options = RunOptions::new()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| session.run(Some(&run_options), &[]).map(|_| ()));
//!     let _ = run_options.terminate(); // fine: shared
//!     let _ = run_options.set_tag("late"); // refused: exclusive
//! });
//! # Ok(()) }
//! ```
//!
//! A Value written while a run reads it (E0502):
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut input = Value::from_slice_copy(&[1.0f32], &[1])?;
//! std::thread::scope(|s| {
//!     s.spawn(|| session.run(None, &[("x", &input)]).map(|_| ()));
//!     let _ = input.as_mut_slice::<f32>();
//! });
//! # Ok(()) }
//! ```
//!
//! ...or while a read of it is alive (E0502):
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut v = Value::from_slice_copy(&[1.0f32, 2.0], &[2])?;
//! let read = v.as_slice::<f32>()?;
//! let write = v.as_mut_slice::<f32>()?;
//! println!("{}", read[0]);
//! # Ok(()) }
//! ```
//!
//! ## IoBinding: exclusive calls, one per thread, borrows its session
//!
//! Every IoBinding call is exclusive, even `run` (E0596)...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*;
//! fn run_shared(binding: &IoBinding<'_>) -> Result<()> {
//!     binding.run(None)
//! }
//! ```
//!
//! ...so two threads cannot use one binding (E0499; sharing it by `&` is E0277, generated).
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| binding.run(None));
//!     s.spawn(|| binding.run(None));
//! });
//! # Ok(()) }
//! ```
//!
//! A binding does not outlive its session (E0505)...
//!
//! ```compile_fail,E0505
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! drop(session);
//! binding.run(None)?;
//! # Ok(()) }
//! ```
//!
//! ...nor escape the function that owns the session (E0515).
//!
//! ```compile_fail,E0515
//! # use ortc_rules::*;
//! fn binding_of(session: Session<ConcurrentRun>) -> IoBinding<'static> {
//!     session.io_binding().unwrap()
//! }
//! ```
//!
//! A binding of an exclusive session holds it exclusively: no other run meanwhile (E0499).
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut session = Session::new(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! session.run(None, &[])?;
//! binding.run(None)?;
//! # Ok(()) }
//! ```
//!
//! A bound value's buffer must live as long as the binding's session borrow (E0597).
//!
//! ```compile_fail,E0597
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! {
//!     let mut buf = [1.0f32; 4];
//!     let value = Value::from_slice(&mut buf, &[4])?;
//!     binding.bind_input("x", &value)?;
//! }
//! binding.run(None)?;
//! # Ok(()) }
//! ```
//!
//! A bound input is not written while the binding may still read it (E0502)...
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut x = Value::from_slice_copy(&[1.0f32], &[1])?;
//! let mut binding = session.io_binding()?;
//! binding.bind_input("x", &x)?;
//! x.as_mut_slice::<f32>()?[0] = 2.0;
//! binding.run(None)?;
//! # Ok(()) }
//! ```
//!
//! ...a bound output is not read behind the binding's back (E0502)...
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut y = Value::from_slice_copy(&[0.0f32], &[1])?;
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", &mut y)?;
//! binding.run(None)?;
//! let early = y.as_slice::<f32>()?[0];
//! binding.run(None)?;
//! # Ok(()) }
//! ```
//!
//! ...and the outputs of one run are gone before the next run writes them again (E0499).
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! binding.run(None)?;
//! let first = binding.outputs()?;
//! binding.run(None)?;
//! println!("{:?}", first[0].as_slice::<f32>()?);
//! # Ok(()) }
//! ```
//!
//! ## Values over a caller's buffer borrow it
//!
//! The value does not outlive the buffer (E0597)...
//!
//! ```compile_fail,E0597
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let value = {
//!     let mut buf = vec![0.0f32; 4];
//!     Value::from_slice(&mut buf, &[4])?
//! };
//! value.shape()?;
//! # Ok(()) }
//! ```
//!
//! ...and nobody else writes the buffer meanwhile (E0506).
//!
//! ```compile_fail,E0506
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut buf = [0.0f32; 4];
//! let value = Value::from_slice(&mut buf, &[4])?;
//! buf[0] = 1.0;
//! value.shape()?;
//! # Ok(()) }
//! ```
//!
//! ## Borrowed infos and allocators carry their owner's lifetime
//!
//! A tensor info cast from a TypeInfo dies with it (E0597):
//!
//! ```compile_fail,E0597
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let tensor = {
//!     let type_info = session.input_type_info(0)?;
//!     type_info.tensor_info()?.unwrap()
//! };
//! tensor.dims()?;
//! # Ok(()) }
//! ```
//!
//! A value's memory info dies with the value (E0505):
//!
//! ```compile_fail,E0505
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let value = Value::from_slice_copy(&[1.0f32], &[1])?;
//! let info = value.memory_info()?;
//! drop(value);
//! info.name()?;
//! # Ok(()) }
//! ```
//!
//! A session's allocator does not outlive the session (E0505):
//!
//! ```compile_fail,E0505
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let allocator = session.allocator(&MemoryInfo::cpu()?)?;
//! drop(session);
//! allocator.alloc_and_free(16)?;
//! # Ok(()) }
//! ```
//!
//! A value allocated by a session's allocator does not outlive the allocator, which frees
//! it (E0505):
//!
//! ```compile_fail,E0505
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let allocator = session.allocator(&MemoryInfo::cpu()?)?;
//! let value = Value::zeros::<f32>(&allocator, &[4])?;
//! drop(allocator);
//! value.shape()?;
//! # Ok(()) }
//! ```
//!
//! ## A kernel context stays inside its callback
//!
//! It cannot be kept after the callback returns (E0521)...
//!
//! ```compile_fail,E0521
//! # use ortc_rules::*;
//! # fn f(raw: *mut sys::OrtKernelContext) -> Result<()> {
//! let mut kept = None;
//! unsafe { KernelContext::scope(raw, |ctx| kept = Some(ctx))? };
//! # Ok(()) }
//! ```
//!
//! ...nor handed to another thread (E0277).
//!
//! ```compile_fail,E0277
//! # use ortc_rules::*;
//! # fn f(raw: *mut sys::OrtKernelContext) -> Result<()> {
//! unsafe {
//!     KernelContext::scope(raw, |ctx| {
//!         std::thread::scope(|s| { s.spawn(|| ctx.input_count()); });
//!     })?
//! };
//! # Ok(()) }
//! ```
//!
//! ## The same code, correct, compiles
//!
//! ```no_run
//! # use ortc_rules::*; use std::sync::{Arc, Mutex};
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! // concurrent session: &self run from many threads, terminate from any thread
//! let session = Arc::new(Session::new_concurrent(env, opts, model)?);
//! let run_options = Arc::new(RunOptions::new()?);
//! let (s2, r2) = (Arc::clone(&session), Arc::clone(&run_options));
//! let worker = std::thread::spawn(move || {
//!     let x = Value::from_slice_copy(&[1.0f32], &[1])?;
//!     s2.run(Some(&r2), &[("x", &x)]).map(|outputs| outputs.len())
//! });
//! run_options.terminate()?;
//! let _ = worker.join();
//! // one binding per thread
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         let session = &session;
//!         s.spawn(move || -> Result<()> {
//!             let x = Value::from_slice_copy(&[1.0f32], &[1])?;
//!             let mut binding = session.io_binding()?;
//!             binding.bind_input("x", &x)?;
//!             binding.run(None)
//!         });
//!     }
//! });
//! // exclusive session: shared behind a Mutex
//! let exclusive = Arc::new(Mutex::new(Session::new(env, opts, model)?));
//! let x = Value::from_slice_copy(&[1.0f32], &[1])?;
//! exclusive.lock().unwrap().run(None, &[("x", &x)])?;
//! # Ok(()) }
//! ```
