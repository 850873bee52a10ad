//! Test support: the library, and small ONNX models written here as protobuf bytes (std only,
//! so the tests need no model files and no Python).
#![allow(dead_code)]

use ortc_rules::{sys, Env};

/// The environment, or a panic that says how to name the library.
pub fn env() -> &'static Env {
    Env::get().unwrap_or_else(|e| panic!("{e}"))
}

// -- a minimal protobuf writer for ONNX's ModelProto ----------------------------------------

fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn int(buf: &mut Vec<u8>, field: u32, v: i64) {
    varint(buf, (field as u64) << 3);
    varint(buf, v as u64);
}

fn bytes(buf: &mut Vec<u8>, field: u32, data: &[u8]) {
    varint(buf, ((field as u64) << 3) | 2);
    varint(buf, data.len() as u64);
    buf.extend_from_slice(data);
}

/// A graph node: op, inputs, outputs.
pub struct Node<'a> {
    pub op: &'a str,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

pub fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> Node<'static> {
    let op: &'static str = Box::leak(op.to_string().into_boxed_str());
    Node { op, inputs: inputs.iter().map(|s| s.to_string()).collect(), outputs: outputs.iter().map(|s| s.to_string()).collect() }
}

/// A float initializer.
pub struct Init {
    pub name: String,
    pub dims: Vec<i64>,
    pub data: Vec<f32>,
}

fn value_info(name: &str, elem: i32, dims: &[i64]) -> Vec<u8> {
    let mut shape = Vec::new();
    for &d in dims {
        let mut dim = Vec::new();
        int(&mut dim, 1, d);
        bytes(&mut shape, 1, &dim);
    }
    let mut tensor = Vec::new();
    int(&mut tensor, 1, elem as i64);
    bytes(&mut tensor, 2, &shape);
    let mut ty = Vec::new();
    bytes(&mut ty, 1, &tensor);
    let mut vi = Vec::new();
    bytes(&mut vi, 1, name.as_bytes());
    bytes(&mut vi, 2, &ty);
    vi
}

/// ModelProto bytes (IR 8, opset 17) with these nodes, inputs, outputs and initializers.
pub fn model(nodes: &[Node], inputs: &[(&str, i32, &[i64])], outputs: &[(&str, i32, &[i64])], inits: &[Init]) -> Vec<u8> {
    let mut graph = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let mut nb = Vec::new();
        for s in &n.inputs {
            bytes(&mut nb, 1, s.as_bytes());
        }
        for s in &n.outputs {
            bytes(&mut nb, 2, s.as_bytes());
        }
        bytes(&mut nb, 3, format!("n{i}").as_bytes());
        bytes(&mut nb, 4, n.op.as_bytes());
        bytes(&mut graph, 1, &nb);
    }
    bytes(&mut graph, 2, b"g");
    for init in inits {
        let mut t = Vec::new();
        for &d in &init.dims {
            int(&mut t, 1, d);
        }
        int(&mut t, 2, sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT as i64);
        bytes(&mut t, 8, init.name.as_bytes());
        let raw: Vec<u8> = init.data.iter().flat_map(|f| f.to_le_bytes()).collect();
        bytes(&mut t, 9, &raw);
        bytes(&mut graph, 5, &t);
    }
    for (name, elem, dims) in inputs {
        bytes(&mut graph, 11, &value_info(name, *elem, dims));
    }
    for (name, elem, dims) in outputs {
        bytes(&mut graph, 12, &value_info(name, *elem, dims));
    }
    let mut m = Vec::new();
    int(&mut m, 1, 8);
    bytes(&mut m, 2, b"ortc-rules tests");
    bytes(&mut m, 7, &graph);
    let mut opset = Vec::new();
    bytes(&mut opset, 1, b"");
    int(&mut opset, 2, 17);
    bytes(&mut m, 8, &opset);
    m
}

const F: i32 = sys::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;

/// `c = a + b`, float [n].
pub fn add_model(n: i64) -> Vec<u8> {
    model(&[node("Add", &["a", "b"], &["c"])], &[("a", F, &[n]), ("b", F, &[n])], &[("c", F, &[n])], &[])
}

/// `y = x` for element type `elem`, shape [2, 3].
pub fn identity_model(elem: i32) -> Vec<u8> {
    model(&[node("Identity", &["x"], &["y"])], &[("x", elem, &[2, 3])], &[("y", elem, &[2, 3])], &[])
}

/// A deterministic pseudo-random float in [-1, 1) (an LCG: tests need no rand crate).
pub fn sample(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// `x` [size, size] -> `y`: `n` chained MatMul + Tanh sharing one seeded weight. Cost is
/// 2 * n * size^3 FLOP: slow on purpose for large `n`.
pub fn matmul_chain_model(n: usize, size: i64) -> Vec<u8> {
    let gain = 1.5 / (size as f32).sqrt();
    let w: Vec<f32> = sample(7, (size * size) as usize).iter().map(|v| v * gain * 1.7).collect();
    let mut nodes = Vec::new();
    let mut cur = "x".to_string();
    for i in 0..n {
        let out = if i == n - 1 { "y".to_string() } else { format!("t{i}") };
        nodes.push(node("MatMul", &[&cur, "w"], &[&format!("m{i}")]));
        nodes.push(node("Tanh", &[&format!("m{i}")], &[&out]));
        cur = out;
    }
    model(&nodes, &[("x", F, &[size, size])], &[("y", F, &[size, size])],
          &[Init { name: "w".into(), dims: vec![size, size], data: w }])
}
