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
//! An EP-selection delegate is called by every thread creating a session with the options,
//! several at once when they share them: a delegate that is not `Sync` (here it counts its
//! calls in a `Cell`) is refused (E0277)...
//!
//! ```compile_fail,E0277
//! # use ortc_rules::*; use std::cell::Cell;
//! # fn f() -> Result<()> {
//! let calls = Cell::new(0usize);
//! let mut options = SessionOptions::new()?;
//! options.set_ep_selection_delegate(move |devices: &[EpDeviceInfo]| {
//!     calls.set(calls.get() + 1);
//!     (0..devices.len().min(1)).collect()
//! })?;
//! # Ok(()) }
//! ```
//!
//! ...while one that counts atomically compiles, and the options stay shareable.
//!
//! ```no_run
//! # use ortc_rules::*; use std::sync::atomic::{AtomicUsize, Ordering};
//! # fn f(env: &'static Env, model: &[u8]) -> Result<()> {
//! let calls = AtomicUsize::new(0);
//! let mut options = SessionOptions::new()?;
//! options.set_ep_selection_delegate(move |devices: &[EpDeviceInfo]| {
//!     calls.fetch_add(1, Ordering::Relaxed);
//!     devices.iter().position(|d| d.ep_name == "CPUExecutionProvider").into_iter().collect()
//! })?;
//! std::thread::scope(|s| {
//!     s.spawn(|| Session::new(env, &options, model).map(|_| ()));
//!     s.spawn(|| Session::new(env, &options, model).map(|_| ()));
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
//! ## IoBinding: exclusive calls, one per thread, run through its session
//!
//! Every IoBinding call is exclusive, and so is the binding in a run (E0596)...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*;
//! fn run_shared(session: &Session<ConcurrentRun>, binding: &IoBinding<'_>) -> Result<()> {
//!     session.run_with_binding(&mut *binding, None)
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
//!     s.spawn(|| session.run_with_binding(&mut binding, None));
//!     s.spawn(|| session.run_with_binding(&mut binding, None));
//! });
//! # Ok(()) }
//! ```
//!
//! A binding keeps its session alive but does not lend it: a run with it is a run of the
//! session. An exclusive session's binding runs through `&mut` (E0596)...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*; use std::sync::Arc;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Arc::new(Session::new(env, opts, model)?);
//! let mut binding = session.io_binding()?;
//! let shared = Arc::clone(&session);
//! std::thread::spawn(move || shared.run_with_binding(&mut binding, None));
//! # Ok(()) }
//! ```
//!
//! ...and no exclusive call of the session overlaps a run with a binding (E0502).
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| session.run_with_binding(&mut binding, None));
//!     let _ = session.end_profiling();
//! });
//! # Ok(()) }
//! ```
//!
//! A bound value's buffer lives as long as the binding (E0597).
//!
//! ```compile_fail,E0597
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! {
//!     let mut buf = [1.0f32; 4];
//!     binding.bind_output("y", Value::from_slice(&mut buf, &[4])?)?;
//! }
//! session.run_with_binding(&mut binding, None)?;
//! # Ok(()) }
//! ```
//!
//! An input bound shared (through an `Arc`: other bindings and runs may read it too) is not
//! written while bound (E0596); `Arc::get_mut` gives it back once the input is rebound or
//! cleared (below), and an input bound by value is rewritten between runs (`input_data_mut`).
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*; use std::sync::Arc;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let x = Arc::new(Value::from_slice_copy(&[1.0f32], &[1])?);
//! let mut binding = session.io_binding()?;
//! binding.bind_input("x", &x)?;
//! x.as_mut_slice::<f32>()?[0] = 2.0;
//! session.run_with_binding(&mut binding, None)?;
//! # Ok(()) }
//! ```
//!
//! A bound output is exclusive while bound: the binding takes it, and it is not used behind
//! the binding's back (E0382)...
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let y = Value::from_slice_copy(&[0.0f32], &[1])?;
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", y)?;
//! session.run_with_binding(&mut binding, None)?;
//! let early = y.as_slice::<f32>()?[0];
//! # Ok(()) }
//! ```
//!
//! ...it is read between runs through the binding, and the loan ends before the next run
//! writes it (E0502)...
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", Value::from_slice_copy(&[0.0f32], &[1])?)?;
//! session.run_with_binding(&mut binding, None)?;
//! let y = binding.output("y").unwrap();
//! session.run_with_binding(&mut binding, None)?;
//! println!("{:?}", y.as_slice::<f32>()?);
//! # Ok(()) }
//! ```
//!
//! ...so it is not read while a run is in flight, on any thread (E0502).
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", Value::from_slice_copy(&[0.0f32], &[1])?)?;
//! std::thread::scope(|s| {
//!     s.spawn(|| session.run_with_binding(&mut binding, None));
//!     let _ = binding.output("y");
//! });
//! # Ok(()) }
//! ```
//!
//! A bound value lends its data, not itself: it is not swapped out of the binding, to be used
//! during a later run (E0596).
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", Value::from_slice_copy(&[0.0f32], &[1])?)?;
//! let mut mine = Value::from_slice_copy(&[0.0f32], &[1])?;
//! std::mem::swap(&mut *binding.output("y").unwrap(), &mut mine);
//! # Ok(()) }
//! ```
//!
//! An input bound by value is rewritten between runs, not during one (E0499).
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! binding.bind_input_owned("x", Value::from_slice_copy(&[1.0f32], &[1])?)?;
//! let x = binding.input_data_mut::<f32>("x")?;
//! session.run_with_binding(&mut binding, None)?;
//! x[0] = 2.0;
//! # Ok(()) }
//! ```
//!
//! The values `outputs` returns share the outputs' memory: they are gone before the next run
//! writes it again (E0499).
//!
//! ```compile_fail,E0499
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let mut binding = session.io_binding()?;
//! session.run_with_binding(&mut binding, None)?;
//! let first = binding.outputs()?;
//! session.run_with_binding(&mut binding, None)?;
//! println!("{:?}", first[0].as_ref().map(|v| v.as_slice::<f32>()));
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
//! A value over a read-only buffer (`Value::from_slice_readonly`, an input: ORT never writes
//! one) leaves the buffer readable, but not writable while it lives (E0506)...
//!
//! ```compile_fail,E0506
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut buf = [0.0f32; 4];
//! let value = Value::from_slice_readonly(&buf, &[4])?;
//! buf[0] = 1.0;
//! value.shape()?;
//! # Ok(()) }
//! ```
//!
//! ...its data is not written through it (E0596)...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let buf = [0.0f32; 4];
//! let mut value = Value::from_slice_readonly(&buf, &[4])?;
//! value.as_mut_slice::<f32>()?[0] = 1.0;
//! # Ok(()) }
//! ```
//!
//! ...and it is not a Value a run may write, a bound output (E0308).
//!
//! ```compile_fail,E0308
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let session = Session::new_concurrent(env, opts, model)?;
//! let buf = [0.0f32; 1];
//! let mut binding = session.io_binding()?;
//! binding.bind_output("y", Value::from_slice_readonly(&buf, &[1])?)?;
//! # Ok(()) }
//! ```
//!
//! ## Borrowed infos carry their owner's lifetime
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
//! An allocator's memory info dies with the allocator (E0505). A value's memory info is
//! copied out as plain data (`MemoryInfoData`) instead: it may outlive the value, and it does
//! not hold off the value's `as_mut_slice` (the correct code below).
//!
//! ```compile_fail,E0505
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let allocator = Allocator::default_cpu()?;
//! let info = allocator.memory_info()?;
//! drop(allocator);
//! info.name()?;
//! # Ok(()) }
//! ```
//!
//! Allocators, and the values they allocate, need no such borrow: the rule is only that they
//! do not outlive their session, and they keep it alive (see below).
//!
//! ## The model editor: what is given away is moved
//!
//! A successful `CreateNode` takes the attributes it is given (it releases them): an attribute
//! moved into `Node::new` is not released again, nor used (E0382), the double free the
//! conformance kit shows crashing (life.op-attr-release-after-create-node).
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let alpha = OpAttr::float("alpha", 0.25)?;
//! let node = Node::new("LeakyRelu", "", "leaky", &["x"], &["y"], vec![alpha])?;
//! drop(alpha);
//! # Ok(()) }
//! ```
//!
//! A node belongs to the graph once added: it is not used, nor released, after (E0382).
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut graph = Graph::new()?;
//! let node = Node::new("Relu", "", "relu", &["x"], &["y"], vec![])?;
//! graph.add_node(node)?;
//! println!("{}", node.name()?);
//! # Ok(()) }
//! ```
//!
//! Nor are a graph's inputs once set (E0382)...
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut graph = Graph::new()?;
//! let x = ValueInfo::tensor("x", sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &[2])?;
//! let inputs = vec![x];
//! graph.set_inputs(inputs)?;
//! graph.set_outputs(inputs)?;
//! # Ok(()) }
//! ```
//!
//! ...an initializer once added (E0382)...
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut graph = Graph::new()?;
//! let w = Value::from_slice_copy(&[1.0f32, 2.0], &[2])?;
//! graph.add_initializer("w", w)?;
//! println!("{:?}", w.shape()?);
//! # Ok(()) }
//! ```
//!
//! ...or a graph once it is the model's (E0382).
//!
//! ```compile_fail,E0382
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut graph = Graph::new()?;
//! let model = Model::new(&[("", 17)], graph)?;
//! graph.add_node(Node::new("Relu", "", "relu", &["x"], &["y"], vec![])?)?;
//! # Ok(()) }
//! ```
//!
//! Changing a graph is exclusive (E0596): not through a shared reference, so not from two
//! threads at once...
//!
//! ```compile_fail,E0596
//! # use ortc_rules::*;
//! fn add(graph: &Graph, node: Node) -> Result<()> {
//!     graph.add_node(node)
//! }
//! ```
//!
//! ...and a model's graph is not replaced while a session is made from it (E0502); making
//! sessions from one model on several threads is shared and compiles.
//!
//! ```compile_fail,E0502
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions) -> Result<()> {
//! let mut model = Model::new(&[("", 17)], Graph::new()?)?;
//! std::thread::scope(|s| {
//!     s.spawn(|| Session::from_model(env, opts, &model).map(|_| ()));
//!     let _ = model.set_graph(Graph::new().unwrap());
//! });
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
//! // one binding per thread, one input value shared by all of them
//! let x = Arc::new(Value::from_slice_copy(&[1.0f32], &[1])?);
//! std::thread::scope(|s| {
//!     for _ in 0..2 {
//!         let (session, x) = (&session, &x);
//!         s.spawn(move || -> Result<()> {
//!             let mut binding = session.io_binding()?;
//!             binding.bind_input("x", x)?;
//!             session.run_with_binding(&mut binding, None)
//!         });
//!     }
//! });
//! // exclusive session: shared behind a Mutex
//! let exclusive = Arc::new(Mutex::new(Session::new(env, opts, model)?));
//! exclusive.lock().unwrap().run(None, &[("x", &x)])?;
//! # Ok(()) }
//! ```
//!
//! A bound output is read (and rewritten) between runs through its binding; an input bound by
//! value is rewritten between runs; the session's exclusive calls come between runs too, while
//! the binding lives; and the binding, which keeps its session alive, may leave the function
//! that made the session. A read-only buffer feeds a binding while its owner reads it, and an
//! input shared with a binding is written again once the binding lets it go.
//!
//! ```no_run
//! # use ortc_rules::*; use std::sync::Arc;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut session = Session::new(env, opts, model)?; // run and end_profiling: &mut self
//! let mut binding = session.io_binding()?;
//! binding.bind_input_owned("x", Value::from_slice_copy(&[1.0f32], &[1])?)?;
//! binding.bind_output("y", Value::from_slice_copy(&[0.0f32], &[1])?)?;
//! for step in 0..3 {
//!     binding.input_data_mut::<f32>("x")?[0] = step as f32;
//!     session.run_with_binding(&mut binding, None)?;
//!     let y = binding.output("y").unwrap().as_slice::<f32>()?[0]; // no run in flight
//!     binding.output_data_mut::<f32>("y")?[0] = 0.0;
//!     println!("{step}: {y}");
//! }
//! session.end_profiling()?; // the binding lives on: it keeps the session, it does not borrow it
//! session.run_with_binding(&mut binding, None)?;
//! // a caller's buffer as the output: the binding borrows the buffer, not the value; a
//! // read-only buffer as the input, read by its owner meanwhile
//! let mut out = [0.0f32; 1];
//! let input = [2.0f32];
//! let mut b2 = session.io_binding()?;
//! b2.bind_input("x", &Arc::new(Value::from_slice_readonly(&input, &[1])?))?;
//! b2.bind_output("y", Value::from_slice(&mut out, &[1])?)?;
//! session.run_with_binding(&mut b2, None)?;
//! let first = b2.output("y").unwrap().as_slice::<f32>()?[0];
//! println!("{} -> {first}", input[0]);
//! drop(b2);
//! assert_eq!(out[0], first);
//! // an input shared with the binding is the caller's again once cleared (or rebound)
//! let mut x = Arc::new(Value::from_slice_copy(&[1.0f32], &[1])?);
//! let mut b3 = session.io_binding()?;
//! b3.bind_input("x", &x)?;
//! b3.bind_output("y", Value::from_slice_copy(&[0.0f32], &[1])?)?;
//! session.run_with_binding(&mut b3, None)?;
//! b3.clear_inputs();
//! Arc::get_mut(&mut x).expect("no longer bound").as_mut_slice::<f32>()?[0] = 3.0;
//! b3.bind_input("x", &x)?;
//! session.run_with_binding(&mut b3, None)?;
//! # Ok(()) }
//!
//! fn binding_of(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<IoBinding<'static>> {
//!     let session = Session::new_concurrent(env, opts, model)?;
//!     session.io_binding() // the OrtSession lives on in the binding
//! }
//! ```
//!
//! A model is built from parts made anywhere (they are Send), each moved into what owns it;
//! sessions are made from the model on several threads at once (it is Sync) and outlive it.
//!
//! ```no_run
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions) -> Result<()> {
//! const FLOAT: sys::ONNXTensorElementDataType = sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
//! let parts = std::thread::spawn(|| -> Result<_> {
//!     let alpha = OpAttr::float("alpha", 0.25)?;
//!     let node = Node::new("LeakyRelu", "", "leaky", &["x"], &["y"], vec![alpha])?;
//!     Ok((ValueInfo::tensor("x", FLOAT, &[2])?, ValueInfo::tensor("y", FLOAT, &[2])?, node))
//! });
//! let (x, y, node) = parts.join().unwrap()?;
//! println!("{} -> {}", x.name()?, node.operator_type()?); // shared reads before giving them away
//! let mut graph = Graph::new()?;
//! graph.set_inputs(vec![x])?;
//! graph.set_outputs(vec![y])?;
//! graph.add_node(node)?;
//! let model = Model::new(&[("", 17)], graph)?;
//! let sessions = std::thread::scope(|s| {
//!     let a = s.spawn(|| Session::from_model_concurrent(env, opts, &model));
//!     let b = s.spawn(|| Session::from_model_concurrent(env, opts, &model));
//!     (a.join().unwrap(), b.join().unwrap())
//! });
//! drop(model); // the sessions do not need it
//! let (a, _b) = (sessions.0?, sessions.1?);
//! a.run(None, &[("x", &Value::from_slice_copy(&[-4.0f32, 2.0], &[2])?)])?;
//! # Ok(()) }
//! ```
//!
//! A value's memory info is plain data: it is kept while the value is written, and after it.
//!
//! ```no_run
//! # use ortc_rules::*;
//! # fn f() -> Result<()> {
//! let mut value = Value::from_slice_copy(&[1.0f32], &[1])?;
//! let info = value.memory_info()?;
//! value.as_mut_slice::<f32>()?[0] = 2.0;
//! drop(value);
//! assert!(info.is_cpu());
//! println!("{} {}", info.name, info.device_id);
//! # Ok(()) }
//! ```
//!
//! A value from a session's allocator lives alongside exclusive calls of the session (they
//! need `&mut Session`, which a value that keeps the session alive does not hold), and may
//! outlive the `Session` value itself.
//!
//! ```no_run
//! # use ortc_rules::*;
//! # fn f(env: &'static Env, opts: &SessionOptions, model: &[u8]) -> Result<()> {
//! let mut session = Session::new(env, opts, model)?;
//! let allocator = session.allocator(&MemoryInfo::cpu()?)?;
//! let mut x = Value::zeros::<f32>(&allocator, &[1])?;
//! x.as_mut_slice::<f32>()?[0] = 1.0;
//! let y = session.run(None, &[("x", &x)])?; // exclusive run, x alive
//! session.end_profiling()?; // exclusive call, x and the allocator alive
//! drop(allocator);
//! drop(session);
//! println!("{:?} {:?}", x.as_slice::<f32>()?, y[0].as_ref().map(|y| y.shape())); // x keeps the OrtSession alive
//! # Ok(()) }
//! ```
