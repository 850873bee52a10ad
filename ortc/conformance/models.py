"""The few ONNX models the conformance kit needs, written as protobuf bytes by hand.

onnx is not a run-time dependency of ortc, so this module carries a tiny protobuf writer for the
parts of ``ModelProto`` the checks use (graph, nodes, attributes, typed value infos, tensors,
metadata, opsets). Field numbers are those of onnx.proto3; tests/test_conformance.py parses the
output with the onnx package (when installed) to keep this honest.
"""

from __future__ import annotations

import struct
from typing import Any, Sequence, Union

__all__ = [
    "FLOAT", "INT64", "STRING", "BOOL", "ELEMENT_SIZES",
    "tensor_type", "seq_type", "map_type", "optional_type", "value_info", "node", "attr",
    "tensor", "graph", "model",
    "identity_model", "add_model", "mlp_model", "chain_model", "loop_model", "optional_out_model",
    "metadata_model", "overridable_model", "unknown_op_model", "type_error_model",
    "sequence_model", "mlp_reference", "custom_op_model", "onnx_type", "LORA_BIAS_ADAPTER",
]

FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL = 1, 2, 3, 4, 5, 6, 7, 8, 9
FLOAT16, DOUBLE, UINT32, UINT64, COMPLEX64, COMPLEX128, BFLOAT16 = 10, 11, 12, 13, 14, 15, 16

#: bytes per element (0.5 for the packed 4-bit types, 0.25 for 2-bit ones; None for strings)
ELEMENT_SIZES: dict[int, Any] = {
    1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 8: None, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8,
    14: 8, 15: 16, 16: 2, 17: 1, 18: 1, 19: 1, 20: 1, 21: 0.5, 22: 0.5, 23: 0.5, 24: 0.25,
    25: 0.25, 26: 1,
}

Dim = Union[int, str, None]

# ORT's C enum and ONNX's TensorProto number the newest types differently:
# C UINT2=24, INT2=25, FLOAT8E8M0=26; ONNX FLOAT8E8M0=24, UINT2=25, INT2=26.
_C_TO_ONNX = {24: 25, 25: 26, 26: 24}


def onnx_type(c_elem: int) -> int:
    """The TensorProto data type for an ONNXTensorElementDataType value of the C API."""
    return _C_TO_ONNX.get(c_elem, c_elem)


# ---- wire format ----

def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int64 fields: two's complement, ten bytes
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def _int(field: int, n: int) -> bytes:
    return _key(field, 0) + _varint(n)


def _bytes(field: int, data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return _key(field, 2) + _varint(len(data)) + data


def _float(field: int, x: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", x)


def _packed(field: int, values: Sequence[int]) -> bytes:
    return _bytes(field, b"".join(_varint(v) for v in values))


# ---- messages ----

def tensor_type(elem: int, shape: Sequence[Dim] | None = ()) -> bytes:
    """TypeProto for a tensor; ``shape=None`` leaves the rank unknown."""
    body = _int(1, elem)
    if shape is not None:
        dims = b""
        for d in shape:
            if isinstance(d, int):
                dims += _bytes(1, _int(1, d))
            elif isinstance(d, str):
                dims += _bytes(1, _bytes(2, d))
            else:
                dims += _bytes(1, b"")
        body += _bytes(2, dims)
    return _bytes(1, body)


def seq_type(elem_type: bytes) -> bytes:
    return _bytes(4, _bytes(1, elem_type))


def map_type(key_elem: int, value_type: bytes) -> bytes:
    return _bytes(5, _int(1, key_elem) + _bytes(2, value_type))


def optional_type(elem_type: bytes) -> bytes:
    return _bytes(9, _bytes(1, elem_type))


def value_info(name: str, type_proto: bytes) -> bytes:
    return _bytes(1, name) + _bytes(2, type_proto)


def attr(name: str, value: Any) -> bytes:
    """AttributeProto for an int, float, str/bytes, TypeProto (``("type", bytes)``), TensorProto
    (``("tensor", bytes)``), GraphProto (``("graph", bytes)``, see :func:`graph`), or a list of
    ints, floats or strs."""
    out = _bytes(1, name)
    if isinstance(value, bool) or isinstance(value, int):
        return out + _int(3, int(value)) + _int(20, 2)
    if isinstance(value, float):
        return out + _float(2, value) + _int(20, 1)
    if isinstance(value, (str, bytes)):
        return out + _bytes(4, value) + _int(20, 3)
    if isinstance(value, tuple) and value and value[0] == "type":
        return out + _bytes(14, value[1]) + _int(20, 13)  # tp / TYPE_PROTO
    if isinstance(value, tuple) and value and value[0] == "tensor":
        return out + _bytes(5, value[1]) + _int(20, 4)  # t / TENSOR
    if isinstance(value, tuple) and value and value[0] == "graph":
        return out + _bytes(6, value[1]) + _int(20, 5)  # g / GRAPH
    if isinstance(value, list) and value and isinstance(value[0], float):
        return out + _bytes(7, struct.pack(f"<{len(value)}f", *value)) + _int(20, 6)
    if isinstance(value, list) and value and isinstance(value[0], str):
        return out + b"".join(_bytes(9, v) for v in value) + _int(20, 8)
    if isinstance(value, list):
        return out + _packed(8, value) + _int(20, 7)
    raise TypeError(f"unsupported attribute value {value!r}")


def node(op: str, inputs: Sequence[str], outputs: Sequence[str], *, domain: str = "",
         name: str = "", **attrs: Any) -> bytes:
    out = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    if name:
        out += _bytes(3, name)
    out += _bytes(4, op)
    out += b"".join(_bytes(5, attr(k, v)) for k, v in attrs.items())
    if domain:
        out += _bytes(7, domain)
    return out


def tensor(name: str, elem: int, dims: Sequence[int], raw: bytes) -> bytes:
    """TensorProto with raw_data (not for strings)."""
    return _packed(1, dims) + _int(2, elem) + _bytes(8, name) + _bytes(9, raw)


def _newest_supported() -> tuple[int, int]:
    """(opset, IR version) for models: 21 and 10, or what an older library reads (ORT 1.16
    reads IR 9 / opset 19, 1.17 IR 9 / opset 20: their releases predate IR 10 and opset 21)."""
    try:
        from .._loader import api

        minor = api().info.library_api
    except Exception:  # noqa: BLE001 - no library yet: the newest
        return 21, 10
    if minor <= 16:
        return 19, 9
    if minor == 17:
        return 20, 9
    return 21, 10


def graph(nodes: Sequence[bytes], inputs: Sequence[bytes], outputs: Sequence[bytes],
          initializers: Sequence[bytes] = (), *, name: str = "g", doc: str = "") -> bytes:
    """Serialized GraphProto: a model's main graph, or a subgraph for a graph attribute."""
    g = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, name)
    g += b"".join(_bytes(5, t) for t in initializers)
    if doc:
        g += _bytes(10, doc)
    return g + b"".join(_bytes(11, i) for i in inputs) + b"".join(_bytes(12, o) for o in outputs)


def model(nodes: Sequence[bytes], inputs: Sequence[bytes], outputs: Sequence[bytes],
          initializers: Sequence[bytes] = (), *, opset: int | None = None,
          ir_version: int | None = None,
          opsets: dict[str, int] | None = None, graph_name: str = "g",
          producer: str = "ortc.conformance", doc: str = "", domain: str = "",
          model_version: int = 0, graph_doc: str = "",
          metadata: dict[str, str] | None = None) -> bytes:
    """Serialized ModelProto (opset and IR version default to the newest the library reads)."""
    if opset is None or ir_version is None:
        newest_opset, newest_ir = _newest_supported()
        opset = newest_opset if opset is None else opset
        ir_version = newest_ir if ir_version is None else ir_version
    g = graph(nodes, inputs, outputs, initializers, name=graph_name, doc=graph_doc)
    m = _int(1, ir_version) + _bytes(2, producer) + _bytes(3, "1")
    if domain:
        m += _bytes(4, domain)
    if model_version:
        m += _int(5, model_version)
    if doc:
        m += _bytes(6, doc)
    m += _bytes(7, g)
    for dom, ver in ({"": opset} | (opsets or {})).items():
        m += _bytes(8, (_bytes(1, dom) if dom else b"") + _int(2, ver))
    for k, v in (metadata or {}).items():
        m += _bytes(14, _bytes(1, k) + _bytes(2, v))
    return m


# ---- the models ----

def identity_model(elem: int, shape: Sequence[Dim] | None = (2, 3), *, op: str = "Identity",
                   opset: int | None = None, ir_version: int | None = None,
                   **attrs: Any) -> bytes:
    """x -> y through one data-movement node (Identity, or e.g. Transpose for 4-bit types)."""
    t = tensor_type(elem, shape)
    return model([node(op, ["x"], ["y"], **attrs)], [value_info("x", t)], [value_info("y", t)],
                 opset=opset, ir_version=ir_version)


def add_model(shape: Sequence[Dim] = ("n",), elem: int = FLOAT) -> bytes:
    """z = x + y."""
    t = tensor_type(elem, shape)
    return model([node("Add", ["x", "y"], ["z"])],
                 [value_info("x", t), value_info("y", t)], [value_info("z", t)])


def _weights(rows: int, cols: int, seed: int) -> list[float]:
    # deterministic, small, no numpy: a linear congruential sequence in [-0.5, 0.5)
    out, s = [], seed * 2654435761 % (1 << 32) or 1
    for _ in range(rows * cols):
        s = (1103515245 * s + 12345) % (1 << 31)
        out.append(s / (1 << 31) - 0.5)
    return out


def mlp_model(width: int = 32, layers: int = 3) -> bytes:
    """x [batch, width] -> y [batch, width]: ``layers`` of MatMul + Add + Relu."""
    nodes, inits, prev = [], [], "x"
    for i in range(layers):
        w = _weights(width, width, 7 + i)
        b = _weights(1, width, 101 + i)
        inits.append(tensor(f"w{i}", FLOAT, [width, width], struct.pack(f"<{len(w)}f", *w)))
        inits.append(tensor(f"b{i}", FLOAT, [width], struct.pack(f"<{len(b)}f", *b)))
        out = "y" if i == layers - 1 else f"h{i}"
        nodes += [node("MatMul", [prev, f"w{i}"], [f"m{i}"]),
                  node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  node("Relu", [f"a{i}"], [out])]
        prev = out
    t = tensor_type(FLOAT, ("batch", width))
    return model(nodes, [value_info("x", t)], [value_info("y", t)], inits)


def mlp_reference(x: list[list[float]], width: int = 32, layers: int = 3) -> list[list[float]]:
    """What :func:`mlp_model` computes, in plain Python (float64; compare with a tolerance)."""
    h = x
    for i in range(layers):
        w = _weights(width, width, 7 + i)
        b = _weights(1, width, 101 + i)
        h = [[max(0.0, sum(row[k] * w[k * width + j] for k in range(width)) + b[j])
              for j in range(width)] for row in h]
    return h


def chain_model(nodes_count: int = 60, size: int = 128) -> bytes:
    """x [size, size] -> y: ``nodes_count`` MatMuls by one shared weight (each scaled to stay
    finite). Slow enough that a Run is still in flight when another thread acts on it."""
    w = [(1.0 / size) if (i + j) % 3 else (-1.0 / size) for i in range(size) for j in range(size)]
    init = tensor("w", FLOAT, [size, size], struct.pack(f"<{len(w)}f", *w))
    nodes, prev = [], "x"
    for i in range(nodes_count):
        out = "y" if i == nodes_count - 1 else f"h{i}"
        nodes.append(node("MatMul", [prev, "w"], [out]))
        prev = out
    t = tensor_type(FLOAT, (size, size))
    return model(nodes, [value_info("x", t)], [value_info("y", t)], [init])


def loop_model(width: int = 4) -> bytes:
    """x float [width] and ``trips`` (int64 scalar) -> y = x + trips: one Loop whose body adds
    1. A Run lasts as many body runs as its caller asks for, on any machine (ORT checks the
    RunOptions' terminate flag before each node, also inside a Loop's body)."""
    t = tensor_type(FLOAT, (width,))
    one = tensor("one", FLOAT, [1], struct.pack("<f", 1.0))
    body = graph([node("Identity", ["cond_in"], ["cond_out"]),
                  node("Add", ["v_in", "one"], ["v_out"])],
                 [value_info("i", tensor_type(INT64, ())),
                  value_info("cond_in", tensor_type(BOOL, ())), value_info("v_in", t)],
                 [value_info("cond_out", tensor_type(BOOL, ())), value_info("v_out", t)],
                 [one], name="body")
    go = tensor("go", BOOL, [], b"\x01")
    return model([node("Loop", ["trips", "go", "x"], ["y"], body=("graph", body))],
                 [value_info("x", t), value_info("trips", tensor_type(INT64, ()))],
                 [value_info("y", t)], [go])


def optional_out_model() -> bytes:
    """x float [2] -> ``none``: an empty optional(tensor(float)), and y = x."""
    t = tensor_type(FLOAT, (2,))
    return model([node("Optional", [], ["none"], type=("type", t)),
                  node("Identity", ["x"], ["y"])],
                 [value_info("x", t)],
                 [value_info("none", optional_type(t)), value_info("y", t)])


def metadata_model() -> bytes:
    t = tensor_type(FLOAT, (1,))
    return model([node("Identity", ["x"], ["y"])], [value_info("x", t)], [value_info("y", t)],
                 graph_name="conformance_graph", producer="ortc-conformance", doc="model doc",
                 domain="org.ortc.test", model_version=7, graph_doc="graph doc",
                 metadata={"author": "ortc", "purpose": "conformance"})


def overridable_model() -> bytes:
    """y = x + bias; ``bias`` (float [3] = 1, 2, 3) is an initializer that is also an input."""
    t = tensor_type(FLOAT, (3,))
    bias = tensor("bias", FLOAT, [3], struct.pack("<3f", 1.0, 2.0, 3.0))
    return model([node("Add", ["x", "bias"], ["y"])],
                 [value_info("x", t), value_info("bias", t)], [value_info("y", t)], [bias])


#: a LoRA adapter (ORT's own flatbuffer format, ``.onnx_adapter``) that sets ``bias`` of
#: :func:`overridable_model` to [100, 200, 300]: written once by onnxruntime's AdapterFormat
#: (tests/models.py lora_adapter_bytes), kept as bytes because onnxruntime's Python package is
#: no dependency of the kit
LORA_BIAS_ADAPTER = bytes.fromhex(
    "08000000544f5254e4ffffff0100000001000000010000000400000001000000100000000c00140004000800"
    "0c0010000c000000300000001c00000001000000040000000c0000000000c842000048430000964301000000"
    "030000000000000000000000040000006269617300000000")


def unknown_op_model() -> bytes:
    t = tensor_type(FLOAT, (1,))
    return model([node("NoSuchOperatorXyz", ["x"], ["y"])], [value_info("x", t)],
                 [value_info("y", t)])


def type_error_model() -> bytes:
    """Add of a float and an int64 input: fails type checking at load."""
    return model([node("Add", ["x", "y"], ["z"])],
                 [value_info("x", tensor_type(FLOAT, (1,))),
                  value_info("y", tensor_type(INT64, (1,)))],
                 [value_info("z", tensor_type(FLOAT, (1,)))])


def sequence_model() -> bytes:
    """seq(tensor(float)) -> the same sequence, through Identity."""
    t = seq_type(tensor_type(FLOAT, None))
    return model([node("Identity", ["x"], ["y"])], [value_info("x", t)], [value_info("y", t)])


def custom_op_model(attrs: dict[str, Any], domain: str = "ortc.test", op: str = "Twice"
                    ) -> bytes:
    """y = op(x) from a custom-op domain (float [n] -> float [n]) with the given attributes."""
    t = tensor_type(FLOAT, ("n",))
    return model([node(op, ["x"], ["y"], domain=domain, name="custom_node", **attrs)],
                 [value_info("x", t)], [value_info("y", t)], opsets={domain: 1})
