//! Test support: the library, and small ONNX models written here as protobuf bytes (std only,
//! so the tests need no model files and no Python).
#![allow(dead_code)]

use ortc_rules::{sys, Env, Value};

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

/// `x` float [2] -> `none`, an optional(tensor(float)) output with no value (an `Optional` node
/// without input, opset 17), and `y = Identity(x)`.
pub fn empty_optional_model() -> Vec<u8> {
    let tensor_type = |elem: i32| {
        let mut tensor = Vec::new();
        int(&mut tensor, 1, elem as i64);
        let mut ty = Vec::new();
        bytes(&mut ty, 1, &tensor); // TypeProto.tensor_type
        ty
    };
    let mut optional = Vec::new();
    bytes(&mut optional, 1, &tensor_type(F)); // Optional.elem_type
    let mut optional_type = Vec::new();
    bytes(&mut optional_type, 9, &optional); // TypeProto.optional_type
    let mut attr = Vec::new();
    bytes(&mut attr, 1, b"type");
    bytes(&mut attr, 14, &tensor_type(F)); // AttributeProto.tp
    int(&mut attr, 20, 13); // AttributeProto.type = TYPE_PROTO
    let mut none = Vec::new();
    bytes(&mut none, 2, b"none");
    bytes(&mut none, 3, b"optional");
    bytes(&mut none, 4, b"Optional");
    bytes(&mut none, 5, &attr);
    let mut m = model(&[node("Identity", &["x"], &["y"])], &[("x", F, &[2])], &[("y", F, &[2])], &[]);
    // the graph is ModelProto field 7, written by `model` before the opset: rebuild it with the
    // extra node and output appended
    let mut vi = Vec::new();
    bytes(&mut vi, 1, b"none");
    bytes(&mut vi, 2, &optional_type);
    let mut extra = Vec::new();
    bytes(&mut extra, 1, &none);
    bytes(&mut extra, 12, &vi);
    m = append_to_graph(&m, &extra);
    m
}

/// ModelProto bytes with `extra` (encoded GraphProto fields) appended to its graph (field 7).
fn append_to_graph(model: &[u8], extra: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < model.len() {
        let (key, n) = read_varint(&model[i..]);
        let start = i;
        i += n;
        match key & 7 {
            0 => i += read_varint(&model[i..]).1,
            2 => {
                let (len, n) = read_varint(&model[i..]);
                i += n;
                if key >> 3 == 7 {
                    let mut graph = model[i..i + len as usize].to_vec();
                    graph.extend_from_slice(extra);
                    bytes(&mut out, 7, &graph);
                    i += len as usize;
                    continue;
                }
                i += len as usize;
            }
            w => panic!("wire type {w} not written by `model`"),
        }
        out.extend_from_slice(&model[start..i]);
    }
    out
}

fn read_varint(buf: &[u8]) -> (u64, usize) {
    let (mut v, mut shift) = (0u64, 0);
    for (k, b) in buf.iter().enumerate() {
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return (v, k + 1);
        }
        shift += 7;
    }
    panic!("truncated varint")
}

/// Every output of a run (or of `IoBinding::outputs`) as a value: the tests' models have no
/// optional outputs, so each has one.
pub trait Outputs<'a> {
    fn values(self) -> Vec<Value<'a>>;
}

impl<'a> Outputs<'a> for ortc_rules::Result<Vec<Option<Value<'a>>>> {
    fn values(self) -> Vec<Value<'a>> {
        self.unwrap().into_iter().enumerate().map(|(i, v)| v.unwrap_or_else(|| panic!("output {i} has no value"))).collect()
    }
}
