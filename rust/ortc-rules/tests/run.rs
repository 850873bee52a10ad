//! Correct use runs: the library named by ORTC_LIBRARY, real models, real threads.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{add_model, env, identity_model, matmul_chain_model, model, node, sample, Init, Outputs};
use ortc_rules::{
    api, rules, run_rule, sys, Allocator, ConcurrentRun, Error, Graph, MemoryInfo, Model, Node,
    OpAttr, RunOptions, Session, SessionOptions, Value, ValueInfo,
};

fn options(threads: i32) -> SessionOptions {
    let mut o = SessionOptions::new().unwrap();
    o.set_intra_op_num_threads(threads).unwrap();
    o
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

#[test]
fn library_is_loaded_and_the_api_version_negotiated() {
    let api = env().api();
    assert_eq!(api.version, api.library_api.min(sys::DECLARED_API_VERSION));
    assert!(api.version >= api::MIN_API_VERSION);
    assert!(api.path.contains("onnxruntime"), "{}", api.path);
    assert!(env().providers().unwrap().iter().any(|p| p == "CPUExecutionProvider"));
}

#[test]
fn threads_on_one_arc_session_match_a_serial_run_bit_for_bit() {
    let model = matmul_chain_model(6, 48);
    let session = Arc::new(Session::new_concurrent(env(), &options(1), &model).unwrap());
    let inputs: Vec<Vec<f32>> = (0..16).map(|i| sample(100 + i, 48 * 48)).collect();
    let serial: Vec<Vec<u32>> = inputs
        .iter()
        .map(|x| {
            let v = Value::from_slice_copy(x, &[48, 48]).unwrap();
            bits(session.run(None, &[("x", &v)]).values()[0].as_slice::<f32>().unwrap())
        })
        .collect();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let session = Arc::clone(&session);
            let inputs = inputs.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for round in 0..5 {
                    for (i, x) in inputs.iter().enumerate() {
                        if (i + t + round) % 2 == 0 {
                            let v = Value::from_slice_copy(x, &[48, 48]).unwrap();
                            let out = session.run(None, &[("x", &v)]).values();
                            got.push((i, bits(out[0].as_slice::<f32>().unwrap())));
                        }
                    }
                }
                got
            })
        })
        .collect();
    let mut checked = 0;
    for h in handles {
        for (i, b) in h.join().unwrap() {
            assert_eq!(b, serial[i], "input {i}: a concurrent run differs from the serial one");
            checked += 1;
        }
    }
    assert_eq!(checked, 4 * 5 * 8);
}

#[test]
fn one_input_value_shared_by_concurrent_runs() {
    let session = Session::new_concurrent(env(), &options(1), &add_model(4)).unwrap();
    let a = Value::from_slice_copy(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    std::thread::scope(|s| {
        for k in 0..4 {
            let (session, a) = (&session, &a); // Session and Value are Sync: shared borrows
            s.spawn(move || {
                let b = Value::from_slice_copy(&[k as f32; 4], &[4]).unwrap();
                let out = session.run(None, &[("a", a), ("b", &b)]).values();
                assert_eq!(out[0].as_slice::<f32>().unwrap(), &[1.0 + k as f32, 2.0 + k as f32, 3.0 + k as f32, 4.0 + k as f32]);
            });
        }
    });
}

#[test]
fn terminate_from_another_thread_stops_a_run_in_flight() {
    let session = Arc::new(Session::new_concurrent(env(), &options(1), &matmul_chain_model(3000, 256)).unwrap());
    let run_options = Arc::new(RunOptions::new().unwrap());
    let x = sample(1, 256 * 256);
    let started = Instant::now();
    let runner = {
        let (session, run_options) = (Arc::clone(&session), Arc::clone(&run_options));
        std::thread::spawn(move || {
            let v = Value::from_slice_copy(&x, &[256, 256]).unwrap();
            let t0 = Instant::now();
            let r = session.run(Some(&run_options), &[("x", &v)]).map(|_| ());
            (r, t0.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(!runner.is_finished(), "the slow run ended within 300 ms: the model is not slow enough");
    run_options.terminate().unwrap(); // shared: &RunOptions from another thread
    let (result, ran) = runner.join().unwrap();
    match result {
        Err(Error::Ort { message, .. }) => assert!(message.to_lowercase().contains("terminat"), "{message}"),
        other => panic!("the run was not stopped: {other:?} after {ran:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    // the same options run again once the flag is cleared
    run_options.unset_terminate().unwrap();
    let small = Session::new_concurrent(env(), &options(1), &add_model(1)).unwrap();
    let one = Value::from_slice_copy(&[1.0f32], &[1]).unwrap();
    let out = small.run(Some(&run_options), &[("a", &one), ("b", &one)]).values();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0]);
}

#[test]
fn one_io_binding_per_thread() {
    let session = Session::new_concurrent(env(), &options(1), &add_model(3)).unwrap();
    let cpu = MemoryInfo::cpu().unwrap();
    std::thread::scope(|s| {
        for k in 0..4 {
            let (session, cpu) = (&session, &cpu);
            s.spawn(move || {
                // bound inputs are shared with the binding (an Arc) while bound
                let a = Arc::new(Value::from_slice_copy(&[k as f32, 1.0, 2.0], &[3]).unwrap());
                let b = Arc::new(Value::from_slice_copy(&[10.0f32; 3], &[3]).unwrap());
                let mut binding = session.io_binding().unwrap();
                binding.bind_input("a", &a).unwrap();
                binding.bind_input("b", &b).unwrap();
                binding.bind_output_to_device("c", cpu).unwrap();
                for _ in 0..20 {
                    session.run_with_binding(&mut binding, None).unwrap();
                    let out = binding.outputs().values();
                    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[10.0 + k as f32, 11.0, 12.0]);
                }
            });
        }
    });
}

#[test]
fn io_binding_writes_into_a_callers_buffer() {
    let mut session = Session::new(env(), &options(1), &add_model(2)).unwrap();
    let mut out_buf = [0.0f32; 2];
    {
        let a = Arc::new(Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap());
        let mut binding = session.io_binding().unwrap(); // keeps the session alive, no borrow
        binding.bind_input("a", &a).unwrap();
        binding.bind_input("b", &a).unwrap();
        binding.bind_output("c", Value::from_slice(&mut out_buf, &[2]).unwrap()).unwrap();
        session.run_with_binding(&mut binding, None).unwrap(); // &mut session: exclusive run
        assert_eq!(binding.output("c").unwrap().as_slice::<f32>().unwrap(), &[2.0, 4.0]);
        // the exclusive session runs on its own between the binding's runs
        let one = Value::from_slice_copy(&[1.0f32, 1.0], &[2]).unwrap();
        assert_eq!(session.run(None, &[("a", &one), ("b", &one)]).values()[0].as_slice::<f32>().unwrap(), &[2.0, 2.0]);
    }
    assert_eq!(out_buf, [2.0, 4.0]);
}

#[test]
fn a_bound_output_is_read_between_runs() {
    // The table: a bound output is the binding's while bound (every run writes it), and the
    // binding's holder reads it when no run is in flight.
    let mut session = Session::new(env(), &options(1), &add_model(3)).unwrap();
    let b = Arc::new(Value::from_slice_copy(&[10.0f32, 20.0, 30.0], &[3]).unwrap());
    let mut binding = session.io_binding().unwrap();
    binding.bind_input_owned("a", Value::from_slice_copy(&[0.0f32; 3], &[3]).unwrap()).unwrap();
    binding.bind_input("b", &b).unwrap();
    binding.bind_output("c", Value::from_slice_copy(&[0.0f32; 3], &[3]).unwrap()).unwrap();
    for step in 0..5 {
        let k = step as f32;
        binding.input_data_mut::<f32>("a").unwrap().copy_from_slice(&[k, 2.0 * k, 3.0 * k]);
        session.run_with_binding(&mut binding, None).unwrap();
        let c = binding.output("c").unwrap();
        assert_eq!(c.as_slice::<f32>().unwrap(), &[10.0 + k, 20.0 + 2.0 * k, 30.0 + 3.0 * k]);
        // the same memory as GetBoundOutputValues' value
        let outs = binding.outputs().values();
        assert_eq!(outs[0].as_slice::<f32>().unwrap(), &[10.0 + k, 20.0 + 2.0 * k, 30.0 + 3.0 * k]);
        drop(outs);
        binding.output_data_mut::<f32>("c").unwrap().fill(-1.0);
        // an exclusive call of the session between runs, while the binding lives
        session.end_profiling().unwrap();
    }
    // rebinding hands the old value back; clearing hands back the rest
    let old = binding.bind_output("c", Value::from_slice_copy(&[0.0f32; 3], &[3]).unwrap()).unwrap().unwrap();
    assert_eq!(old.as_slice::<f32>().unwrap(), &[-1.0; 3]);
    let given_back = binding.clear_outputs();
    assert_eq!(given_back.len(), 1);
    assert_eq!(given_back[0].0, "c");
    assert!(binding.output("c").is_none());
    assert!(matches!(binding.input_data_mut::<f32>("b"), Err(Error::Invalid(_)))); // shared
    assert!(matches!(binding.input_data_mut::<i64>("a"), Err(Error::Invalid(_)))); // wrong type
    assert_eq!(binding.input("a").unwrap().as_slice::<f32>().unwrap(), &[4.0, 8.0, 12.0]);
    assert_eq!(binding.clear_inputs().len(), 1); // "a"; "b" was shared
}

#[test]
fn a_binding_keeps_its_session_alive() {
    // ORT 1.23.2 and later crash when a binding is used after its session's release
    // (life.binding-after-session-release): the binding holds the session, so dropping the
    // Session value does not release it.
    let a = Arc::new(Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap());
    let session = Session::new_concurrent(env(), &options(1), &add_model(2)).unwrap();
    let mut binding = session.io_binding().unwrap();
    binding.bind_input("a", &a).unwrap();
    binding.bind_input("b", &a).unwrap();
    binding.bind_output("c", Value::from_slice_copy(&[0.0f32; 2], &[2]).unwrap()).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    drop(session);
    binding.bind_output_to_device("c", &MemoryInfo::cpu().unwrap()).unwrap();
    binding.clear_inputs();
    binding.bind_input("a", &a).unwrap();
    assert!(binding.outputs().is_ok());
    drop(binding); // the OrtSession is released here
}

#[test]
fn a_shared_input_is_given_back_when_cleared_or_rebound() {
    // The table: an input is read by every run with its binding (shared), so it is not written
    // while bound; once cleared or rebound ORT holds no reference to it (BindInput replaces,
    // ClearBoundInputs drops) and neither does the binding: the value is writable again.
    let mut session = Session::new(env(), &options(1), &add_model(2)).unwrap();
    let mut a = Arc::new(Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap());
    let b = Arc::new(Value::from_slice_copy(&[10.0f32, 20.0], &[2]).unwrap());
    let mut binding = session.io_binding().unwrap();
    binding.bind_input("a", &a).unwrap();
    binding.bind_input("b", &b).unwrap();
    binding.bind_output("c", Value::from_slice_copy(&[0.0f32; 2], &[2]).unwrap()).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    assert_eq!(binding.output("c").unwrap().as_slice::<f32>().unwrap(), &[11.0, 22.0]);
    assert!(Arc::get_mut(&mut a).is_none()); // bound: the binding holds it
    // cleared: written in place while the binding lives, then bound again
    assert!(binding.clear_inputs().is_empty());
    Arc::get_mut(&mut a).unwrap().as_mut_slice::<f32>().unwrap().copy_from_slice(&[3.0, 4.0]);
    binding.bind_input("a", &a).unwrap();
    binding.bind_input("b", &b).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    assert_eq!(binding.output("c").unwrap().as_slice::<f32>().unwrap(), &[13.0, 24.0]);
    // rebound to another value: the first is the caller's again
    binding.bind_input("a", &b).unwrap();
    Arc::get_mut(&mut a).unwrap().as_mut_slice::<f32>().unwrap()[0] = 5.0;
    session.run_with_binding(&mut binding, None).unwrap();
    assert_eq!(binding.output("c").unwrap().as_slice::<f32>().unwrap(), &[20.0, 40.0]);
    // bound by value: the shared one it replaces is given back too
    binding.bind_input_owned("b", Value::from_slice_copy(&[0.5f32, 0.5], &[2]).unwrap()).unwrap();
    binding.bind_input("a", &a).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    assert_eq!(binding.output("c").unwrap().as_slice::<f32>().unwrap(), &[5.5, 4.5]);
    drop(binding);
    assert!(Arc::get_mut(&mut a).is_some());
    assert_eq!(Arc::try_unwrap(b).ok().unwrap().as_slice::<f32>().unwrap(), &[10.0, 20.0]);
}

#[test]
fn a_read_only_buffer_is_read_by_its_owner_while_runs_read_it() {
    // ORT never writes an input: a tensor over a read-only buffer borrows it shared, so the
    // buffer is read (by its owner and other threads) while the value lives and is run.
    let session = Session::new_concurrent(env(), &options(1), &add_model(3)).unwrap();
    let data = [1.0f32, 2.0, 3.0];
    let x = Value::from_slice_readonly(&data, &[3]).unwrap();
    assert_eq!(x.as_slice::<f32>().unwrap(), &data); // a Value's reads
    assert_eq!(data[0], 1.0); // the buffer stays readable
    std::thread::scope(|s| {
        for k in 0..3 {
            let (session, x, data) = (&session, &x, &data);
            s.spawn(move || {
                let b = Value::from_slice_copy(&[k as f32; 3], &[3]).unwrap();
                let out = session.run(None, &[("a", x), ("b", &b)]).values();
                let want: Vec<f32> = data.iter().map(|v| v + k as f32).collect();
                assert_eq!(out[0].as_slice::<f32>().unwrap(), &want[..]);
            });
        }
    });
    // a binding input, shared through an Arc
    let shared = Arc::new(x);
    let mut binding = session.io_binding().unwrap();
    binding.bind_input("a", &shared).unwrap();
    binding.bind_input("b", &shared).unwrap();
    binding.bind_output_to_device("c", &MemoryInfo::cpu().unwrap()).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    assert_eq!(data.iter().sum::<f32>(), 6.0); // read while bound
    assert_eq!(binding.outputs().values()[0].as_slice::<f32>().unwrap(), &[2.0, 4.0, 6.0]);
    drop(binding);
    drop(shared);
    assert_eq!(data, [1.0, 2.0, 3.0]); // never written
}

#[test]
fn a_values_memory_info_is_plain_data() {
    // The table: a value's memory info must not outlive the value. Copied out at once, it
    // does not: what memory_info returns borrows nothing, so the value is written and dropped
    // while it lives.
    let mut v = Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap();
    let info = v.memory_info().unwrap();
    v.as_mut_slice::<f32>().unwrap()[0] = 3.0; // exclusive call while the info lives
    let again = v.memory_info().unwrap();
    drop(v);
    assert_eq!(info, again);
    assert_eq!(info.name, "Cpu");
    assert!(info.is_cpu());
    assert_eq!(info.device_id, 0);
    let cpu = MemoryInfo::cpu().unwrap();
    assert_eq!(cpu.as_ref().to_data().unwrap().name, info.name);
    let mut buf = [0.0f32; 2];
    let over = Value::from_slice(&mut buf, &[2]).unwrap();
    assert!(over.memory_info().unwrap().is_cpu());
}

#[test]
fn a_binding_runs_only_with_its_own_session() {
    let s1 = Session::new_concurrent(env(), &options(1), &add_model(1)).unwrap();
    let s2 = Session::new_concurrent(env(), &options(1), &add_model(1)).unwrap();
    let mut binding = s1.io_binding().unwrap();
    match s2.run_with_binding(&mut binding, None) {
        Err(Error::Invalid(m)) => assert!(m.contains("another session"), "{m}"),
        other => panic!("another session's binding ran: {other:?}"),
    }
}

#[test]
fn a_session_allocators_values_live_alongside_exclusive_calls() {
    // The table: a session's allocator and its values must not outlive the session
    // (life.session-value-after-session-release crashes); nothing more. They keep it alive,
    // so &mut Session calls go on while they live, and the Session value may go first.
    let mut session = Session::new(env(), &options(1), &add_model(2)).unwrap();
    let allocator = session.allocator(&MemoryInfo::cpu().unwrap()).unwrap();
    let mut a = Value::zeros::<f32>(&allocator, &[2]).unwrap();
    a.as_mut_slice::<f32>().unwrap().copy_from_slice(&[1.0, 2.0]);
    let out = session.run(None, &[("a", &a), ("b", &a)]).values(); // exclusive run
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0, 4.0]);
    session.end_profiling().unwrap(); // exclusive call
    drop(session);
    assert!(allocator.alloc_and_free(64).unwrap());
    drop(allocator);
    assert_eq!(a.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    let b = std::thread::spawn(move || {
        a.as_mut_slice::<f32>().unwrap()[0] = 5.0;
        a
    })
    .join()
    .unwrap();
    assert_eq!(b.as_slice::<f32>().unwrap(), &[5.0, 2.0]);
    drop(b); // frees through the allocator, then releases it and the session
}

fn make_session() -> Session<ConcurrentRun> {
    let mut opts = SessionOptions::new().unwrap();
    opts.set_intra_op_num_threads(1).unwrap();
    opts.add_config_entry("session.use_env_allocators", "0").unwrap();
    assert_eq!(opts.config_entry("session.use_env_allocators").unwrap().as_deref(), Some("0"));
    Session::new_concurrent(env(), &opts, &add_model(2)).unwrap()
    // opts is released here; ORT copied what it needed
}

#[test]
fn a_session_outlives_the_options_it_was_created_with() {
    let session = make_session();
    let a = Value::from_slice_copy(&[1.5f32, -2.0], &[2]).unwrap();
    let out = session.run(None, &[("a", &a), ("b", &a)]).values();
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &[3.0, -4.0]);
}

#[test]
fn an_exclusive_session_is_shared_behind_a_mutex() {
    let session = Arc::new(Mutex::new(Session::new(env(), &options(1), &add_model(1)).unwrap()));
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let session = Arc::clone(&session);
            std::thread::spawn(move || {
                let v = Value::from_slice_copy(&[k as f32], &[1]).unwrap();
                let out = session.lock().unwrap().run(None, &[("a", &v), ("b", &v)]).values();
                assert_eq!(out[0].as_slice::<f32>().unwrap(), &[2.0 * k as f32]);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

fn round_trip<T: ortc_rules::Element + PartialEq + std::fmt::Debug>(data: [T; 6]) {
    let mut session = Session::new(env(), &options(1), &identity_model(T::TYPE)).unwrap();
    // owned copy
    let v = Value::from_slice_copy(&data, &[2, 3]).unwrap();
    let out = session.run(None, &[("x", &v)]).values();
    assert_eq!(out[0].as_slice::<T>().unwrap(), &data);
    assert_eq!(out[0].shape().unwrap(), vec![2, 3]);
    assert_eq!(out[0].element_type_and_shape().unwrap().0, T::TYPE);
    // borrowed buffer, no copy
    let mut buf = data;
    let v = Value::from_slice(&mut buf, &[2, 3]).unwrap();
    let out = session.run(None, &[("x", &v)]).values();
    assert_eq!(out[0].as_slice::<T>().unwrap(), &data);
    // asking for the wrong element type is an error, not a reinterpretation
    let wrong = if T::TYPE == sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 { out[0].as_slice::<i8>().map(|_| ()) } else { out[0].as_slice::<u8>().map(|_| ()) };
    assert!(matches!(wrong, Err(Error::Invalid(_))));
}

#[test]
fn values_round_trip_for_the_main_element_types() {
    round_trip([1.5f32, -2.25, 0.0, f32::MAX, f32::MIN_POSITIVE, -0.0]);
    round_trip([1.5f64, -2.25, 0.0, f64::MAX, f64::MIN_POSITIVE, -0.0]);
    round_trip([i8::MIN, -1, 0, 1, 2, i8::MAX]);
    round_trip([u8::MIN, 1, 2, 3, 200, u8::MAX]);
    round_trip([i16::MIN, -1, 0, 1, 2, i16::MAX]);
    round_trip([u16::MIN, 1, 2, 3, 60000, u16::MAX]);
    round_trip([i32::MIN, -1, 0, 1, 2, i32::MAX]);
    round_trip([u32::MIN, 1, 2, 3, 4_000_000_000, u32::MAX]);
    round_trip([i64::MIN, -1, 0, 1, 2, i64::MAX]);
    round_trip([u64::MIN, 1, 2, 3, 1 << 63, u64::MAX]);
    round_trip([true, false, true, true, false, false]);
}

#[test]
fn strings_round_trip() {
    let mut session = Session::new(env(), &options(1), &identity_model(sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)).unwrap();
    let data = ["", "a", "héllo", "two words", "x".repeat(300).leak(), "z"];
    let v = Value::from_strings(&data, &[2, 3]).unwrap();
    let out = session.run(None, &[("x", &v)]).values();
    assert_eq!(out[0].strings().unwrap(), data.map(String::from).to_vec());
}

#[test]
fn type_infos_memory_infos_and_allocators() {
    let session = Session::new_concurrent(env(), &options(1), &add_model(5)).unwrap();
    assert_eq!(session.input_names(), ["a", "b"]);
    assert_eq!(session.output_names(), ["c"]);
    let ti = session.input_type_info(0).unwrap();
    assert_eq!(ti.onnx_type().unwrap(), sys::ONNX_TYPE_TENSOR);
    assert!(ti.map_info().unwrap().is_none());
    let tensor = ti.tensor_info().unwrap().unwrap(); // borrowed from ti
    assert_eq!(tensor.dims().unwrap(), vec![5]);
    assert_eq!(tensor.element_type().unwrap(), sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);

    let v = Value::from_slice_copy(&[0.0f32; 5], &[5]).unwrap();
    assert_eq!(v.memory_info().unwrap().name, "Cpu");
    assert!(v.type_info().unwrap().tensor_info().unwrap().is_some());

    let cpu = MemoryInfo::cpu().unwrap();
    let alloc = session.allocator(&cpu).unwrap(); // Allocator: Send + Sync
    std::thread::scope(|s| {
        for _ in 0..4 {
            let alloc = &alloc;
            s.spawn(move || {
                for n in 1..200 {
                    assert!(alloc.alloc_and_free(n * 16).unwrap());
                }
            });
        }
    });
    let z = Value::zeros::<i32>(&alloc, &[2, 2]).unwrap();
    assert_eq!(z.as_slice::<i32>().unwrap(), &[0; 4]);
    assert_eq!(alloc.memory_info().unwrap().name().unwrap(), "Cpu");
    let default = Allocator::default_cpu().unwrap();
    assert!(default.alloc_and_free(64).unwrap());

    // memory of another device gets a DeviceAllocator (Send, not Sync), never an Allocator
    let cuda = MemoryInfo::new("Cuda", sys::OrtDeviceAllocator, 0, sys::OrtMemTypeDefault).unwrap();
    assert!(!cuda.is_cpu().unwrap());
    match session.allocator(&cuda) {
        Err(Error::Invalid(m)) => assert!(m.contains("device_allocator"), "{m}"),
        other => panic!("a device memory info got a Sync allocator: {:?}", other.map(|_| ())),
    };
}

#[test]
fn the_run_rule_follows_the_provider_table() {
    const NEW: &str = "1.32.0";
    let cpu = run_rule(&[("CPUExecutionProvider", vec![])], NEW);
    assert!(cpu.concurrent, "{:?}", cpu.reasons);
    for p in ["DmlExecutionProvider", "CUDAExecutionProvider", "SomeUnknownExecutionProvider"] {
        let r = run_rule(&[(p, vec![]), ("CPUExecutionProvider", vec![])], NEW);
        assert!(!r.concurrent, "{p}: {:?}", r.reasons);
        assert!(r.reasons[0].starts_with(&format!("{p}: exclusive")), "{:?}", r.reasons);
    }
    let trt = run_rule(&[("TensorrtExecutionProvider", vec![])], NEW);
    assert!(trt.concurrent);
    let graphs = run_rule(&[("TensorrtExecutionProvider", vec![("trt_cuda_graph_enable", "1")])], NEW);
    assert!(!graphs.concurrent && graphs.reasons[0].contains("trt_cuda_graph_enable=1"), "{:?}", graphs.reasons);
    // every provider the generated table lists gets its verdict on a new library
    for (p, ok, _) in rules::EP_CONCURRENT_RUN {
        assert_eq!(run_rule(&[(p, vec![])], NEW).concurrent, *ok, "{p}");
    }
}

#[test]
fn tensorrt_concurrent_run_needs_ort_1_17() {
    // TensorRT's concurrent-Run fix shipped in 1.17: with an older library it is exclusive,
    // and the reason names the version
    for (version, concurrent) in [("1.16.2", false), ("1.16.3", false), ("1.17.0", true), ("1.32.0", true)] {
        let r = run_rule(&[("TensorrtExecutionProvider", vec![]), ("CPUExecutionProvider", vec![])], version);
        assert_eq!(r.concurrent, concurrent, "{version}: {:?}", r.reasons);
        assert_eq!(r.reasons[0].contains("before ORT 1.17"), !concurrent, "{:?}", r.reasons);
    }
}

#[test]
fn the_run_rule_decides_as_ortc_does() {
    // ortc's session_run_rule answers, generated into rules.rs: providers, options, versions
    assert!(rules::RUN_RULE_DECISIONS.len() > 20);
    for (p, opts, version, concurrent) in rules::RUN_RULE_DECISIONS {
        let r = run_rule(&[(p, opts.to_vec())], version);
        assert_eq!(r.concurrent, *concurrent, "{p} {opts:?} on {version}: {:?}", r.reasons);
    }
}

#[test]
fn a_sessions_run_rule_reads_the_loaded_library_version() {
    let opts = options(1);
    let expected = run_rule(&[("CPUExecutionProvider", vec![])], &env().api().library_version);
    assert_eq!(opts.run_rule(), expected);
}

#[test]
fn new_concurrent_refuses_a_provider_without_concurrent_run() {
    // The Azure provider ships in the CPU wheel and is not in the concurrent-Run table.
    let mut opts = options(1);
    opts.append_execution_provider("AzureExecutionProvider", &[]).unwrap();
    assert_eq!(opts.providers(), ["AzureExecutionProvider", "CPUExecutionProvider"]);
    match Session::new_concurrent(env(), &opts, &add_model(1)) {
        Err(Error::ExclusiveRun(reasons)) => assert!(reasons[0].starts_with("AzureExecutionProvider: exclusive"), "{reasons:?}"),
        other => panic!("expected ExclusiveRun, got {:?}", other.map(|_| ())),
    }
    // the same options make an exclusive session, whose run takes &mut self
    let mut session = Session::new(env(), &opts, &add_model(1)).unwrap();
    assert!(!session.run_rule().concurrent);
    let v = Value::from_slice_copy(&[2.0f32], &[1]).unwrap();
    assert_eq!(session.run(None, &[("a", &v), ("b", &v)]).values()[0].as_slice::<f32>().unwrap(), &[4.0]);
}

#[test]
fn bad_input_is_an_error_not_a_crash() {
    let session = Session::new_concurrent(env(), &options(1), &add_model(2)).unwrap();
    let v = Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap();
    assert!(matches!(session.run(None, &[("nope", &v), ("b", &v)]), Err(Error::Ort { .. })));
    assert!(matches!(session.run(None, &[("a\0", &v)]), Err(Error::Invalid(_))));
    assert!(matches!(Value::from_slice_copy(&[1.0f32; 3], &[2]), Err(Error::Invalid(_))));
    assert!(matches!(Value::from_slice_copy(&[1.0f32; 3], &[-3]), Err(Error::Invalid(_))));
    assert!(matches!(Session::new(env(), &options(1), b"not a model"), Err(Error::Ort { .. })));
}

#[test]
fn the_generated_rules_table_matches_the_types() {
    fn rule(t: &str) -> &'static rules::Rule {
        rules::RULES.iter().find(|r| r.c_type == t).unwrap()
    }
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    // positive verdicts compile (negative ones are compile_fail doctests)
    assert!(rule("OrtSession").send && rule("OrtSession").sync);
    send_sync::<Session<ConcurrentRun>>();
    send_sync::<Session<ortc_rules::ExclusiveRun>>();
    assert!(rule("OrtIoBinding").send && !rule("OrtIoBinding").sync);
    send::<ortc_rules::IoBinding<'static>>();
    assert!(rule("OrtValue").send && rule("OrtValue").sync);
    send_sync::<Value<'static>>();
    send_sync::<ortc_rules::ReadOnlyValue<'static>>(); // it holds a Value: the same traits
    send_sync::<ortc_rules::MemoryInfoData>(); // plain data
    send_sync::<RunOptions>();
    send_sync::<SessionOptions>();
    send_sync::<MemoryInfo>();
    send_sync::<Allocator>();
    send::<ortc_rules::DeviceAllocator>();
    assert!(!rule("OrtKernelContext").send && !rule("OrtKernelContext").sync);
    assert!(rule("OrtSession").conditional.contains(&"Run"));
    assert!(rule("OrtIoBinding").must_not_outlive.contains(&"OrtSession"));
    for t in ["OrtModel", "OrtGraph", "OrtNode", "OrtValueInfo", "OrtOpAttr"] {
        assert!(rule(t).send && rule(t).sync, "{t}");
    }
    send_sync::<Model>();
    send_sync::<Graph>();
    send_sync::<Node>();
    send_sync::<ValueInfo>();
    send_sync::<OpAttr>();
}

// -- the model editor ---------------------------------------------------------------------------

const FLOAT: sys::ONNXTensorElementDataType = sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

/// A graph y = LeakyRelu(x) with alpha 0.25 (not the operator's default 0.01, so a lost
/// attribute gives another answer), its parts moved in as they are added.
fn leaky_relu_graph() -> Graph {
    let mut graph = Graph::new().unwrap();
    graph.set_inputs(vec![ValueInfo::tensor("x", FLOAT, &[2]).unwrap()]).unwrap();
    graph.set_outputs(vec![ValueInfo::tensor("y", FLOAT, &[2]).unwrap()]).unwrap();
    let alpha = OpAttr::float("alpha", 0.25).unwrap();
    let node = Node::new("LeakyRelu", "", "leaky", &["x"], &["y"], vec![alpha]).unwrap();
    graph.add_node(node).unwrap();
    graph
}

#[test]
fn a_model_built_in_code_runs_with_its_attributes() {
    let model = Model::new(&[("", 17)], leaky_relu_graph()).unwrap();
    let mut session = Session::from_model(env(), &options(1), &model).unwrap();
    drop(model); // the session does not need it
    assert_eq!(session.input_names(), ["x"]);
    assert_eq!(session.output_names(), ["y"]);
    let x = Value::from_slice_copy(&[-4.0f32, 2.0], &[2]).unwrap();
    let y = session.run(None, &[("x", &x)]).values();
    assert_eq!(y[0].as_slice::<f32>().unwrap(), [-1.0, 2.0]); // alpha 0.25, not 0.01
}

#[test]
fn model_editor_parts_read_back_what_they_were_made_with() {
    let attr = OpAttr::float("alpha", 0.25).unwrap();
    assert_eq!(attr.name().unwrap(), "alpha");
    assert_eq!(attr.attr_type().unwrap(), sys::ORT_OP_ATTR_FLOAT);
    assert_eq!(attr.read_float().unwrap(), 0.25);
    assert_eq!(OpAttr::ints("axes", &[0, 1]).unwrap().attr_type().unwrap(), sys::ORT_OP_ATTR_INTS);
    assert_eq!(OpAttr::string("mode", "constant").unwrap().attr_type().unwrap(), sys::ORT_OP_ATTR_STRING);
    let info = ValueInfo::tensor("x", FLOAT, &[-1, 3]).unwrap();
    assert_eq!(info.name().unwrap(), "x");
    assert_eq!(info.element_type_and_shape().unwrap(), (FLOAT, vec![-1, 3]));
    let node = Node::new("LeakyRelu", "", "leaky", &["x"], &["y"], vec![attr]).unwrap();
    assert_eq!(node.name().unwrap(), "leaky");
    assert_eq!(node.operator_type().unwrap(), "LeakyRelu");
    // a node, attributes, value infos and a graph never added are released by their owner
    drop((node, info, Graph::new().unwrap()));
}

#[test]
fn model_editor_parts_cross_threads_and_sessions_share_one_model() {
    // made on one thread, assembled on a second (all Send), sessions made from the model on two
    // threads at once (Model is Sync: CreateSessionFromModel is shared)
    let (inputs, outputs, node) = std::thread::spawn(|| {
        let inputs = vec![ValueInfo::tensor("a", FLOAT, &[2]).unwrap()];
        let outputs = vec![ValueInfo::tensor("z", FLOAT, &[2]).unwrap()];
        let node = Node::new("Add", "", "add", &["a", "b"], &["z"], vec![]).unwrap();
        (inputs, outputs, node)
    })
    .join()
    .unwrap();
    let model = std::thread::spawn(move || {
        let mut graph = Graph::new().unwrap();
        graph.set_inputs(inputs).unwrap();
        graph.set_outputs(outputs).unwrap();
        graph.add_initializer("b", Value::from_slice_copy(&[10.0f32, 20.0], &[2]).unwrap()).unwrap();
        graph.add_node(node).unwrap();
        Model::new(&[("", 17)], graph).unwrap()
    })
    .join()
    .unwrap();
    let opts = options(1);
    let sessions: Vec<Session<ConcurrentRun>> = std::thread::scope(|s| {
        let made: Vec<_> = (0..2).map(|_| s.spawn(|| Session::from_model_concurrent(env(), &opts, &model).unwrap())).collect();
        made.into_iter().map(|h| h.join().unwrap()).collect()
    });
    drop(model);
    for session in &sessions {
        let a = Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap();
        assert_eq!(session.run(None, &[("a", &a)]).values()[0].as_slice::<f32>().unwrap(), [11.0, 22.0]);
    }
}

#[test]
fn a_refused_model_editor_call_is_an_error_not_a_crash() {
    // an initializer from a session's allocator would lose the session it keeps alive
    let session = Session::new_concurrent(env(), &options(1), &add_model(2)).unwrap();
    let allocator = session.allocator(&MemoryInfo::cpu().unwrap()).unwrap();
    let mut graph = Graph::new().unwrap();
    let v = Value::zeros::<f32>(&allocator, &[2]).unwrap();
    assert!(matches!(graph.add_initializer("w", v), Err(Error::Invalid(_))));
    // a bad name is refused before ORT sees the value, which is released once, here
    assert!(matches!(graph.add_initializer("s\0", Value::from_slice_copy(&[1.0f32], &[1]).unwrap()), Err(Error::Invalid(_))));
    // a node ORT cannot place: an error from session creation, not a crash
    graph.add_node(Node::new("NoSuchOp", "", "n", &["x"], &["y"], vec![OpAttr::int("k", 1).unwrap()]).unwrap()).unwrap();
    let model = Model::new(&[("", 17)], graph).unwrap();
    assert!(matches!(Session::from_model(env(), &options(1), &model), Err(Error::Ort { .. })));
}

#[test]
fn a_second_graph_refused_by_a_model_is_released_once_by_its_owner() {
    // ONNX Runtime 1.27.0 and later refuse a model that has a graph a second one, which is then
    // still the caller's (check editor.add-graph-twice-refused): set_graph releases it, once,
    // and the model keeps running its first graph; 1.22.1-1.26.0 take it in place of the first
    let mut model = Model::new(&[("", 17)], leaky_relu_graph()).unwrap();
    let replaced = model.set_graph(Graph::new().unwrap());
    let x = Value::from_slice_copy(&[-4.0f32, 2.0], &[2]).unwrap();
    match Session::from_model(env(), &options(1), &model) {
        Ok(mut session) => {
            assert!(replaced.is_err(), "a session from the model, yet the second graph was taken");
            assert_eq!(session.run(None, &[("x", &x)]).values()[0].as_slice::<f32>().unwrap(), [-1.0, 2.0]);
        }
        // the empty graph took the first one's place: no session from it
        Err(_) => assert!(replaced.is_ok(), "no session from a model that kept its graph"),
    }
}

// -- no unsound safe API -------------------------------------------------------------------------

#[test]
fn config_keys_that_keep_the_model_bytes_are_refused() {
    // With these ORT reads the bytes given to Session::new after it returns (an ORT-format
    // model used in place): the safe API cannot let a borrowed &[u8] go first.
    let mut opts = options(1);
    for key in ["session.use_ort_model_bytes_directly", "session.use_ort_model_bytes_for_initializers"] {
        assert!(ortc_rules::BORROWING_CONFIG_KEYS.contains(&key));
        for value in ["1", "true", ""] {
            match opts.add_config_entry(key, value) {
                Err(Error::Invalid(m)) => assert!(m.contains(key) && m.contains("outlive"), "{m}"),
                other => panic!("{key}={value:?} accepted: {other:?}"),
            }
            assert_eq!(opts.config_entry(key).unwrap(), None, "{key} reached ORT");
        }
        // "0" (ORT's default: the bytes are copied) stays allowed
        opts.add_config_entry(key, "0").unwrap();
        assert_eq!(opts.config_entry(key).unwrap().as_deref(), Some("0"));
    }
    let mut session = Session::new(env(), &opts, &add_model(1)).unwrap();
    let one = Value::from_slice_copy(&[1.0f32], &[1]).unwrap();
    assert_eq!(session.run(None, &[("a", &one), ("b", &one)]).values()[0].as_slice::<f32>().unwrap(), &[2.0]);
}

extern "C" {
    fn mmap(addr: *mut std::ffi::c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut std::ffi::c_void;
    fn mprotect(addr: *mut std::ffi::c_void, len: usize, prot: i32) -> i32;
    fn munmap(addr: *mut std::ffi::c_void, len: usize) -> i32;
}

/// `text` placed so that its last byte ends a readable page and the next page is unmapped for
/// reading: whoever reads past the `&str` (to a NUL it does not have) faults.
fn str_before_a_guard_page(text: &str, f: impl FnOnce(&str)) {
    const PAGE: usize = 4096;
    let (read_write, none, private_anon) = (0x1 | 0x2, 0x0, 0x02 | 0x20);
    unsafe {
        let base = mmap(std::ptr::null_mut(), 2 * PAGE, read_write, private_anon, -1, 0) as *mut u8;
        assert!(!base.is_null() && base as isize != -1, "mmap failed");
        assert_eq!(mprotect(base.add(PAGE) as *mut _, PAGE, none), 0);
        let start = base.add(PAGE - text.len());
        std::ptr::copy_nonoverlapping(text.as_ptr(), start, text.len());
        f(std::str::from_utf8(std::slice::from_raw_parts(start, text.len())).unwrap());
        munmap(base as *mut _, 2 * PAGE);
    }
}

#[test]
fn a_string_attribute_is_not_read_past_its_end() {
    // ORT 1.16's CreateOpAttr reads a string attribute up to its NUL, ignoring the length
    // (tests/test_rust.py runs this test on that library too): the crate hands it a
    // NUL-terminated copy, so nothing after the &str is read
    str_before_a_guard_page("constant", |mode| {
        let attr = OpAttr::string("mode", mode).unwrap();
        if env().api().version >= 17 {
            assert_eq!(attr.read_string().unwrap(), "constant");
        }
    });
    // a value cut out of a longer string keeps only its own bytes
    let long = String::from("constant_and_more");
    let attr = OpAttr::string("mode", &long[..8]).unwrap();
    if env().api().version >= 17 {
        assert_eq!(attr.read_string().unwrap(), "constant");
    }
    assert!(matches!(OpAttr::string("mode", "a\0b"), Err(Error::Invalid(_))));
}

const F32: i32 = sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

/// Outputs `x` (the graph input itself: a pass-through) and `y = Neg(x)`, float [2, 3].
fn pass_through_model() -> Vec<u8> {
    model(&[node("Neg", &["x"], &["y"])], &[("x", F32, &[2, 3])], &[("x", F32, &[2, 3]), ("y", F32, &[2, 3])], &[])
}

const SIX: [f32; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

#[test]
fn an_output_that_is_an_input_owns_its_data() {
    // ORT hands back the feed's own tensor for a graph output that is a graph input: as a
    // Value<'static> it outlived the caller's buffer and wrote into the inputs it aliased
    let mut session = Session::new(env(), &options(1), &pass_through_model()).unwrap();
    let mut buf = SIX;
    let out = {
        let x = Value::from_slice(&mut buf, &[2, 3]).unwrap();
        session.run(None, &[("x", &x)]).values()
    };
    assert_ne!(out[0].as_slice::<f32>().unwrap().as_ptr(), buf.as_ptr(), "the output is the caller's buffer");
    buf.fill(-1.0); // the buffer is the caller's again
    assert_eq!(out[0].as_slice::<f32>().unwrap(), &SIX);
    assert_eq!(out[1].as_slice::<f32>().unwrap(), &SIX.map(|v| -v));
    drop(out);
    // an output written does not write an input another thread may be reading
    let shared = Value::from_slice_copy(&SIX, &[2, 3]).unwrap();
    let mut outs = session.run(None, &[("x", &shared)]).values();
    outs[0].as_mut_slice::<f32>().unwrap().fill(9.0);
    assert_eq!(shared.as_slice::<f32>().unwrap(), &SIX);
    // nor a read-only buffer
    let data = SIX;
    let ro = Value::from_slice_readonly(&data, &[2, 3]).unwrap();
    let mut outs = session.run(None, &[("x", &ro)]).values();
    outs[0].as_mut_slice::<f32>().unwrap().fill(7.0);
    assert_eq!(data, SIX);
    assert_eq!(ro.as_slice::<f32>().unwrap(), &SIX);
}

#[test]
fn a_bound_pass_through_output_is_a_copy() {
    // the same through a binding: GetBoundOutputValues hands back the bound input's tensor
    let session = Session::new_concurrent(env(), &options(1), &pass_through_model()).unwrap();
    let cpu = MemoryInfo::cpu().unwrap();
    let data = SIX;
    let ro = Arc::new(Value::from_slice_readonly(&data, &[2, 3]).unwrap());
    let mut binding = session.io_binding().unwrap();
    binding.bind_input("x", &ro).unwrap();
    binding.bind_output_to_device("x", &cpu).unwrap();
    binding.bind_output_to_device("y", &cpu).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    let mut outs = binding.outputs().values();
    assert_ne!(outs[0].as_slice::<f32>().unwrap().as_ptr(), data.as_ptr(), "the output is the bound input's buffer");
    outs[0].as_mut_slice::<f32>().unwrap().fill(7.0);
    assert_eq!(outs[1].as_slice::<f32>().unwrap(), &SIX.map(|v| -v));
    drop(outs);
    assert_eq!(data, SIX);
    assert_eq!(ro.as_slice::<f32>().unwrap(), &SIX);
    // an input bound by value: the binding's, and still not written through an output
    binding.bind_input_owned("x", Value::from_slice_copy(&SIX, &[2, 3]).unwrap()).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    binding.outputs().values()[0].as_mut_slice::<f32>().unwrap().fill(5.0);
    assert_eq!(binding.input("x").unwrap().as_slice::<f32>().unwrap(), &SIX);
}

#[test]
fn an_output_that_is_an_initializer_is_the_callers_copy() {
    // ORT copies an initializer that is a graph output into the fetch: writing the output
    // leaves the session's initializer (read by every run) alone
    let m = model(&[node("Neg", &["x"], &["y"])], &[("x", F32, &[2, 3])], &[("y", F32, &[2, 3]), ("w", F32, &[2, 3])],
                  &[Init { name: "w".into(), dims: vec![2, 3], data: SIX.to_vec() }]);
    let session = Session::new_concurrent(env(), &options(1), &m).unwrap();
    let x = Value::from_slice_copy(&SIX, &[2, 3]).unwrap();
    let mut first = session.run(None, &[("x", &x)]).values();
    first[1].as_mut_slice::<f32>().unwrap().fill(0.0);
    let second = session.run(None, &[("x", &x)]).values();
    assert_eq!(second[1].as_slice::<f32>().unwrap(), &SIX);
    assert_ne!(first[1].as_slice::<f32>().unwrap().as_ptr(), second[1].as_slice::<f32>().unwrap().as_ptr());
}

#[test]
fn a_string_pass_through_output_is_a_copy() {
    let s = sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING;
    let m = model(&[], &[("x", s, &[2])], &[("x", s, &[2])], &[]);
    let mut session = Session::new(env(), &options(1), &m).unwrap();
    let x = Value::from_strings(&["a", "bc"], &[2]).unwrap();
    let out = session.run(None, &[("x", &x)]).values();
    drop(x);
    assert_eq!(out[0].strings().unwrap(), ["a", "bc"]);
}

#[test]
fn an_output_with_no_value_is_none() {
    // an optional output left empty: ORT hands back an OrtValue that holds nothing, and ORT's
    // tensor queries fail on it (the crate once failed the whole run reading it)
    let m = common::empty_optional_model();
    let mut session = Session::new(env(), &options(1), &m).unwrap();
    assert_eq!(session.output_names(), ["y", "none"]);
    let x = Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap();
    let out = session.run(None, &[("x", &x)]).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].as_ref().unwrap().as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert!(out[1].is_none());
    // the same through a binding
    let session = Session::new_concurrent(env(), &options(1), &m).unwrap();
    let cpu = MemoryInfo::cpu().unwrap();
    let mut binding = session.io_binding().unwrap();
    binding.bind_input_owned("x", Value::from_slice_copy(&[3.0f32, 4.0], &[2]).unwrap()).unwrap();
    binding.bind_output_to_device("y", &cpu).unwrap();
    binding.bind_output_to_device("none", &cpu).unwrap();
    session.run_with_binding(&mut binding, None).unwrap();
    let outs = binding.outputs().unwrap();
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[0].as_ref().unwrap().as_slice::<f32>().unwrap(), &[3.0, 4.0]);
    assert!(outs[1].is_none());
}

#[test]
fn the_ep_selection_delegate_is_called_by_concurrent_creations() {
    // ORT calls the delegate from every thread creating a session with the options, several
    // at once with shared options: the delegate is Fn + Send + Sync (a Cell-counting one does
    // not compile: misuse.rs). Each call waits until a second one is inside (a guard timeout
    // only keeps a serializing library from hanging the test).
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Condvar;
    if env().api().version < sys::since::SessionOptionsSetEpSelectionPolicyDelegate {
        // a library without the slot: refused, not read past its table
        let r = options(1).set_ep_selection_delegate(|_| Vec::new());
        assert!(matches!(r, Err(Error::NotSupported { .. })), "{r:?}");
        return;
    }
    let inside = Arc::new((Mutex::new((0usize, 0usize)), Condvar::new())); // (now, most at once)
    let calls = Arc::new(AtomicUsize::new(0));
    let offered = Arc::new(Mutex::new(Vec::new()));
    let mut opts = options(1);
    {
        let (inside, calls, offered) = (Arc::clone(&inside), Arc::clone(&calls), Arc::clone(&offered));
        opts.set_ep_selection_delegate(move |devices| {
            calls.fetch_add(1, Ordering::SeqCst);
            *offered.lock().unwrap() = devices.to_vec();
            let (lock, cv) = &*inside;
            let mut g = lock.lock().unwrap();
            g.0 += 1;
            g.1 = g.1.max(g.0);
            cv.notify_all();
            let (mut g, _) = cv.wait_timeout_while(g, Duration::from_secs(30), |g| g.1 < 2).unwrap();
            g.0 -= 1;
            devices.iter().position(|d| d.ep_name == "CPUExecutionProvider").into_iter().collect()
        })
        .unwrap();
    }
    let model = add_model(2);
    let outputs: Vec<Vec<f32>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (opts, model) = (&opts, &model); // one SessionOptions, shared
                s.spawn(move || {
                    let mut session = Session::new(env(), opts, model).unwrap();
                    let a = Value::from_slice_copy(&[1.0f32, 2.0], &[2]).unwrap();
                    session.run(None, &[("a", &a), ("b", &a)]).values()[0].as_slice::<f32>().unwrap().to_vec()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(outputs, vec![vec![2.0f32, 4.0]; 4]);
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    assert!(inside.0.lock().unwrap().1 >= 2, "the delegate was never called by two creations at once");
    assert!(offered.lock().unwrap().iter().any(|d| d.ep_name == "CPUExecutionProvider"));
    // the providers are chosen at creation: the Run gate cannot vouch for concurrent Run
    assert!(!opts.run_rule().concurrent);
    assert!(matches!(Session::new_concurrent(env(), &opts, &model), Err(Error::ExclusiveRun(_))));
    // a delegate's bad choice, or its panic, fails that creation: nothing unwinds into ORT
    let mut bad = options(1);
    bad.set_ep_selection_delegate(|devices| vec![devices.len()]).unwrap();
    match Session::new(env(), &bad, &model) {
        Err(Error::Ort { message, .. }) => assert!(message.contains("chose device"), "{message}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    bad.set_ep_selection_delegate(|_| panic!("no device for me")).unwrap();
    assert!(matches!(Session::new(env(), &bad, &model), Err(Error::Ort { .. })));
}
