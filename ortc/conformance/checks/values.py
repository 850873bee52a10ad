"""OrtValue: every element type, strings, sequences, maps, optionals, sparse tensors, type infos."""

from __future__ import annotations

import math
import struct
from typing import Any

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Check, Fail, Known, check, register

VALUE_DOC = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html (CreateTensorWithDataAsOrtValue)"

ELEMENT_TYPES = {
    1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32", 7: "INT64",
    9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64", 14: "COMPLEX64",
    15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ",
    19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
    24: "UINT2", 25: "INT2", 26: "FLOAT8E8M0",
}

#: types ONNX added after the library generation ORT 1.16 shipped with; an older library not
#: knowing them is a version fact, not a failure
_NEWER_TYPES = {21, 22, 23, 24, 25, 26}


def _nbytes(elem: int, count: int) -> int:
    size = models.ELEMENT_SIZES[elem]
    return int(math.ceil(count * size))


def _pattern(elem: int, n: int) -> bytes:
    if elem == 9:
        return bytes(i % 2 for i in range(n))
    return bytes((i * 37 + 11) % 256 for i in range(n))


def _roundtrip(elem: int) -> Any:
    name = ELEMENT_TYPES[elem]

    def decide(ctx: Ctx) -> str:
        a, ffi = ctx.api, ctx.ffi
        shape = [2, 3]
        nbytes = _nbytes(elem, 6)
        data = _pattern(elem, nbytes)
        buf = ctx.keep(ffi.new("uint8_t[]", data))
        dims = ffi.new("int64_t[]", shape)
        box = ffi.new("OrtValue**")
        err = ctx.status(a.CreateTensorWithDataAsOrtValue(ctx.cpu_info, buf, nbytes, dims, 2,
                                                          elem, box))
        if err:
            if elem in (14, 15) and code_name(err[0]) == "NOT_IMPLEMENTED":
                raise Known(f"ORT has no {name} tensors at all: {short(err[1], 80)}")
            if elem in _NEWER_TYPES:
                raise Known(f"this library does not create {name} tensors: "
                            f"{code_name(err[0])}: {short(err[1], 100)}")
            raise Fail(f"CreateTensorWithDataAsOrtValue: {code_name(err[0])}: {err[1][:200]}")
        val = box[0]
        ctx.defer(a.ReleaseValue, val)
        got_elem, got_dims = ctx.shape_of(val)
        if got_elem != elem and elem in _NEWER_TYPES:
            seen_as = ELEMENT_TYPES.get(got_elem, str(got_elem))
            raise Known(f"created as {name} ({elem}), reads back as {seen_as} ({got_elem}): this "
                        "library maps the C enum through ONNX's numbering, which orders these "
                        "types differently")
        if (got_elem, got_dims) != (elem, shape):
            raise Fail(f"type/shape read back as {got_elem} {got_dims}")
        p = ctx.out(a.GetTensorMutableData, "void*", val)
        if p != ffi.cast("void*", buf):
            raise Fail("GetTensorMutableData does not point at the caller's buffer")
        if ctx.has("GetTensorSizeInBytes"):
            size = ffi.new("size_t*")
            ctx.ok(a.GetTensorSizeInBytes(val, size))
            if size[0] != nbytes:
                raise Fail(f"GetTensorSizeInBytes {size[0]}, expected {nbytes}")
        # 4-bit ints have no CPU Identity kernel; a Transpose with the identity permutation
        # moves the same bytes
        op = "Transpose" if elem in (21, 22) else "Identity"
        if op == "Transpose":
            model = models.identity_model(elem, shape, op=op, perm=[0, 1])
        else:
            model = models.identity_model(models.onnx_type(elem), shape)
        sess, err = ctx.try_session(model)
        if err:
            raise Known(f"value round trip OK; no CPU {op} kernel for {name}: "
                        f"{code_name(err[0])}")
        ctx.defer(a.ReleaseSession, sess)
        out = ctx.run(sess, {"x": val}, ["y"])[0]
        o_elem, o_dims = ctx.shape_of(out)
        back = ctx.data(out, nbytes)
        if (o_elem, o_dims) != (elem, shape) or back != data:
            raise Fail(f"{op} output {o_elem} {o_dims}, bytes equal: {back == data}")
        return f"{nbytes} bytes in place; bit-identical through {op}"

    decide.__name__ = f"roundtrip_{name.lower()}"
    return decide


for _elem, _name in ELEMENT_TYPES.items():
    register(Check(
        f"value.roundtrip.{_name.lower()}",
        f"A tensor of element type {_name} over caller memory keeps its type, shape and bytes "
        f"(read in place) and comes back bit-identical from an Identity run.", VALUE_DOC,
        _roundtrip(_elem)))


@check("value.string-tensor", "String tensors fill, read back whole and per element, accept "
       "per-element replacement and survive an Identity run (empty and non-ASCII strings "
       "included).", VALUE_DOC, slots=("GetStringTensorElement", "FillStringTensorElement"))
def string_tensor(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    words = ["alpha", "", "γράμμα", "end"]
    val = ctx.string_tensor(words, [2, 2])
    if ctx.strings(val) != words:
        raise Fail(f"content {ctx.strings(val)}")
    ln = ffi.new("size_t*")
    ctx.ok(a.GetStringTensorElementLength(val, 2, ln))
    buf = ffi.new("char[]", ln[0])
    ctx.ok(a.GetStringTensorElement(val, ln[0], 2, buf))
    if ffi.buffer(buf, ln[0])[:].decode() != words[2]:
        raise Fail("GetStringTensorElement")
    ctx.ok(a.FillStringTensorElement(val, b"replaced", 1))
    detail = "fill/content/element"
    if ctx.has("GetResizedStringTensorElementBuffer"):
        p = ctx.out(a.GetResizedStringTensorElementBuffer, "char*", val, 3, 3)
        ffi.memmove(p, b"XYZ", 3)
        detail += "/resized buffer"
    want = ["alpha", "replaced", "γράμμα", "XYZ" if "resized" in detail else "end"]
    sess = ctx.session(models.identity_model(models.STRING, [2, 2]))
    out = ctx.run(sess, {"x": val}, ["y"])[0]
    if ctx.strings(out) != want:
        raise Fail(f"after Identity: {ctx.strings(out)}")
    return detail + "; Identity round trip"


@check("value.string-over-user-memory", "CreateTensorWithDataAsOrtValue refuses the STRING "
       "type with an error status.", "none")
def string_user_memory(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    buf = ctx.keep(ffi.new("char*[2]"))
    dims = ffi.new("int64_t[]", [2])
    box = ffi.new("OrtValue**")
    err = ctx.status(a.CreateTensorWithDataAsOrtValue(ctx.cpu_info, buf, ffi.sizeof(buf),
                                                      dims, 1, models.STRING, box))
    if err is None:
        a.ReleaseValue(box[0])
        raise Known("accepted a string tensor over caller memory")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("value.sequence", "CreateValue builds a sequence of tensors that reports its kind and "
       "count, hands out copies of its elements, and survives an Identity run.", VALUE_DOC)
def sequence(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    t1 = ctx.floats([1, 2])
    t2 = ctx.floats([3, 4, 5])
    seq = ctx.out(a.CreateValue, "OrtValue*", ffi.new("OrtValue*[]", [t1, t2]), 2, 2)
    ctx.defer(a.ReleaseValue, seq)
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetValueType(seq, kind))
    n = ffi.new("size_t*")
    ctx.ok(a.GetValueCount(seq, n))
    second = ctx.out(a.GetValue, "OrtValue*", seq, 1, ctx.allocator)
    ctx.defer(a.ReleaseValue, second)
    if int(kind[0]) != 2 or n[0] != 2 or ctx.read_floats(second) != [3.0, 4.0, 5.0]:
        raise Fail(f"kind {kind[0]}, count {n[0]}")
    if second == t2:
        raise Fail("GetValue returned the original element, not a copy")
    sess = ctx.session(models.sequence_model())
    out = ctx.run(sess, {"x": seq}, ["y"])[0]
    ctx.ok(a.GetValueCount(out, n))
    first = ctx.out(a.GetValue, "OrtValue*", out, 0, ctx.allocator)
    ctx.defer(a.ReleaseValue, first)
    if n[0] != 2 or ctx.read_floats(first) != [1.0, 2.0]:
        raise Fail(f"after Identity: count {n[0]}")
    return "kind SEQUENCE, count 2, copies, Identity round trip"


def _castmap_model() -> bytes:
    map_t = models.map_type(models.INT64, models.tensor_type(models.FLOAT, None))
    return models.model(
        [models.node("CastMap", ["x"], ["y"], domain="ai.onnx.ml", cast_to="TO_FLOAT",
                     map_form="SPARSE", max_map=4)],
        [models.value_info("x", map_t)],
        [models.value_info("y", models.tensor_type(models.FLOAT, (1, 4)))],
        opsets={"ai.onnx.ml": 3})


@check("value.map", "CreateValue builds a map from key and value tensors whose GetValue(0/1) "
       "return the keys and values, and a CastMap run reads it.", VALUE_DOC)
def map_value(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    keys, _ = ctx.tensor(models.INT64, [2], struct.pack("<2q", 1, 3))
    vals = ctx.floats([0.5, 1.5])
    mp = ctx.out(a.CreateValue, "OrtValue*", ffi.new("OrtValue*[]", [keys, vals]), 2, 3)
    ctx.defer(a.ReleaseValue, mp)
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetValueType(mp, kind))
    n = ffi.new("size_t*")
    ctx.ok(a.GetValueCount(mp, n))
    k = ctx.out(a.GetValue, "OrtValue*", mp, 0, ctx.allocator)
    ctx.defer(a.ReleaseValue, k)
    v = ctx.out(a.GetValue, "OrtValue*", mp, 1, ctx.allocator)
    ctx.defer(a.ReleaseValue, v)
    got_keys = list(struct.unpack("<2q", ctx.data(k, 16)))
    if int(kind[0]) != 3 or n[0] != 2 or got_keys != [1, 3] or ctx.read_floats(v) != [0.5, 1.5]:
        raise Fail(f"kind {kind[0]}, count {n[0]}, keys {got_keys}")
    sess, err = ctx.try_session(_castmap_model())
    if err:
        raise Known(f"map value OK; CastMap unavailable: {code_name(err[0])}")
    ctx.defer(a.ReleaseSession, sess)
    out = ctx.read_floats(ctx.run(sess, {"x": mp}, ["y"])[0])
    if out != [0.0, 0.5, 0.0, 1.5]:
        raise Fail(f"CastMap gave {out}")
    return "kind MAP, count 2, keys/values; CastMap -> [0, .5, 0, 1.5]"


@check("value.empty-optional-output", "An empty optional graph output comes back from Run as a "
       "non-NULL OrtValue for which HasValue reports 0.",
       "onnxruntime_c_api.h HasValue", slots=("HasValue",))
def empty_optional(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.optional_out_model())
    none, y = ctx.run(sess, {"x": ctx.floats([1, 2])}, ["none", "y"])
    if none == ffi.NULL:
        raise Known("Run returned NULL for the empty optional")
    has = ffi.new("int*")
    ctx.ok(a.HasValue(none, has))
    if has[0] != 0:
        raise Fail("HasValue says 1")
    return "non-NULL; HasValue 0"


@check("value.empty-optional-istensor", "IsTensor on an empty optional output reports 0 "
       "(it holds no tensor).", "none", slots=("HasValue",))
def empty_optional_istensor(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.optional_out_model())
    none, _ = ctx.run(sess, {"x": ctx.floats([1, 2])}, ["none", "y"])
    is_t = ffi.new("int*")
    err = ctx.status(a.IsTensor(none, is_t))
    if err:
        return f"status {code_name(err[0])}: {short(err[1], 80)}"
    if is_t[0]:
        raise Known("IsTensor reports 1 for an empty optional: test HasValue first")
    return "IsTensor 0"


@check("value.empty-optional-getvaluetype", "GetValueType on an empty optional output returns "
       "a status or a kind, without crashing.", "found by the ortc lead on ORT 1.32 (segfault)",
       crash=True, slots=("HasValue",))
def empty_optional_kind(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.optional_out_model())
    none, _ = ctx.run(sess, {"x": ctx.floats([1, 2])}, ["none", "y"])
    kind = ffi.new("enum ONNXType*")
    ctx.step("calling GetValueType on the empty optional")
    err = ctx.status(a.GetValueType(none, kind))
    return f"status {code_name(err[0])}" if err else f"kind {int(kind[0])}"


@check("value.empty-optional-gettypeinfo", "GetTypeInfo on an empty optional output returns "
       "a status or a type info, without crashing.", "none", crash=True, slots=("HasValue",))
def empty_optional_typeinfo(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.optional_out_model())
    none, _ = ctx.run(sess, {"x": ctx.floats([1, 2])}, ["none", "y"])
    box = ffi.new("OrtTypeInfo**")
    ctx.step("calling GetTypeInfo on the empty optional")
    err = ctx.status(a.GetTypeInfo(none, box))
    if err:
        return f"status {code_name(err[0])}: {short(err[1], 80)}"
    if box[0] == ffi.NULL:
        return "OK with a NULL type info"
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetOnnxTypeFromTypeInfo(box[0], kind))
    a.ReleaseTypeInfo(box[0])
    return f"type info of kind {int(kind[0])}"


@check("value.sparse-coo", "A COO sparse tensor filled with FillSparseTensorCoo reports its "
       "format, values and indices.", "onnxruntime_c_api.h (sparse tensors, API 9)",
       slots=("CreateSparseTensorAsOrtValue", "FillSparseTensorCoo"))
def sparse_coo(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dense = ffi.new("int64_t[]", [3, 3])
    sp = ctx.out(a.CreateSparseTensorAsOrtValue, "OrtValue*", ctx.allocator, dense, 2, 1)
    ctx.defer(a.ReleaseValue, sp)
    vshape = ffi.new("int64_t[]", [2])
    values = ffi.new("float[]", [1.5, -2.0])
    idx = ffi.new("int64_t[]", [1, 7])  # flat indices
    ctx.ok(a.FillSparseTensorCoo(sp, ctx.cpu_info, vshape, 1, values, idx, 2))
    is_sp = ffi.new("int*")
    ctx.ok(a.IsSparseTensor(sp, is_sp))
    fmt = ffi.new("enum OrtSparseFormat*")
    ctx.ok(a.GetSparseTensorFormat(sp, fmt))
    vinfo = ctx.out(a.GetSparseTensorValuesTypeAndShape, "OrtTensorTypeAndShapeInfo*", sp)
    count = ffi.new("size_t*")
    ctx.ok(a.GetTensorShapeElementCount(vinfo, count))
    a.ReleaseTensorTypeAndShapeInfo(vinfo)
    vp = ctx.out(a.GetSparseTensorValues, "void*", sp)
    got_v = list(ffi.cast("float*", vp)[0:2])
    iinfo = ctx.out(a.GetSparseTensorIndicesTypeShape, "OrtTensorTypeAndShapeInfo*", sp, 0)
    a.ReleaseTensorTypeAndShapeInfo(iinfo)
    n = ffi.new("size_t*")
    ip = ffi.new("void**")
    ctx.ok(a.GetSparseTensorIndices(sp, 0, n, ip))
    got_i = list(ffi.cast("int64_t*", ip[0])[0:n[0]])
    if (is_sp[0], int(fmt[0]), count[0], got_v, got_i) != (1, 1, 2, [1.5, -2.0], [1, 7]):
        raise Fail(f"sparse {is_sp[0]}, format {fmt[0]}, count {count[0]}, values {got_v}, "
                   f"indices {got_i}")
    return "COO: format, values [1.5, -2], indices [1, 7]"


@check("value.sparse-csr-user-memory", "A CSR sparse tensor over caller memory "
       "(CreateSparseTensorWithValuesAsOrtValue + UseCsrIndices) reports its inner and outer "
       "indices.", "onnxruntime_c_api.h (sparse tensors, API 9)",
       slots=("CreateSparseTensorWithValuesAsOrtValue", "UseCsrIndices"))
def sparse_csr(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dense = ffi.new("int64_t[]", [2, 3])
    vshape = ffi.new("int64_t[]", [2])
    values = ctx.keep(ffi.new("float[]", [4.0, 5.0]))
    sp = ctx.out(a.CreateSparseTensorWithValuesAsOrtValue, "OrtValue*", ctx.cpu_info, values,
                 dense, 2, vshape, 1, 1)
    ctx.defer(a.ReleaseValue, sp)
    inner = ctx.keep(ffi.new("int64_t[]", [0, 2]))
    outer = ctx.keep(ffi.new("int64_t[]", [0, 1, 2]))
    ctx.ok(a.UseCsrIndices(sp, inner, 2, outer, 3))
    fmt = ffi.new("enum OrtSparseFormat*")
    ctx.ok(a.GetSparseTensorFormat(sp, fmt))
    n = ffi.new("size_t*")
    ip = ffi.new("void**")
    ctx.ok(a.GetSparseTensorIndices(sp, 2, n, ip))  # outer
    got_outer = list(ffi.cast("int64_t*", ip[0])[0:n[0]])
    if int(fmt[0]) != 2 or got_outer != [0, 1, 2]:
        raise Fail(f"format {fmt[0]}, outer {got_outer}")
    return "CSR: format CSRC, outer [0, 1, 2]"


@check("value.opaque-unknown-type", "CreateOpaqueValue for an unregistered opaque type, and "
       "GetOpaqueValue on a tensor, fail with error statuses.", "none")
def opaque(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    data = ffi.new("int64_t*", 5)
    box = ffi.new("OrtValue**")
    err = ctx.status(a.CreateOpaqueValue(b"ortc.test", b"NoSuchOpaque", data, 8, box))
    if err is None:
        a.ReleaseValue(box[0])
        raise Known("accepted an unregistered opaque type")
    t = ctx.floats([1.0, 2.0])
    err2 = ctx.status(a.GetOpaqueValue(b"ortc.test", b"NoSuchOpaque", t, data, 8))
    if err2 is None:
        raise Known("GetOpaqueValue read a tensor as an opaque value")
    return f"create: {code_name(err[0])}; get from a tensor: {code_name(err2[0])}"


@check("value.tensor-at", "TensorAt returns the address of the element at the given indices "
       "(row-major).", VALUE_DOC)
def tensor_at(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    val, buf = ctx.tensor(1, [2, 3], bytes(24))
    loc = ffi.new("int64_t[]", [1, 2])
    p = ctx.out(a.TensorAt, "void*", val, loc, 2)
    offset = int(ffi.cast("uintptr_t", p)) - int(ffi.cast("uintptr_t", buf))
    if offset != 20:
        raise Fail(f"offset {offset}, expected 20")
    return "element [1, 2] at byte 20"


@check("value.user-memory-is-borrowed", "A tensor over caller memory reads that memory at Run "
       "time: changing the buffer after creation changes the result.",
       "onnxruntime_c_api.h CreateTensorWithDataAsOrtValue (p_data is owned by the caller)")
def borrowed(ctx: Ctx) -> str:
    sess = ctx.session(models.add_model((2,)))
    x, buf = ctx.tensor(1, [2], struct.pack("<2f", 1, 2))
    y = ctx.floats([10, 20])
    first = ctx.read_floats(ctx.run(sess, {"x": x, "y": y}, ["z"])[0])
    ctx.ffi.memmove(buf, struct.pack("<2f", 5, 6), 8)
    second = ctx.read_floats(ctx.run(sess, {"x": x, "y": y}, ["z"])[0])
    if (first, second) != ([11.0, 22.0], [15.0, 26.0]):
        raise Fail(f"{first} then {second}")
    return "[11, 22] then [15, 26]"


@check("value.buffer-too-small", "CreateTensorWithDataAsOrtValue with a buffer smaller than "
       "the shape needs fails with INVALID_ARGUMENT.", VALUE_DOC)
def too_small(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    buf = ffi.new("float[2]")
    dims = ffi.new("int64_t[]", [3])
    box = ffi.new("OrtValue**")
    return ctx.error(a.CreateTensorWithDataAsOrtValue(ctx.cpu_info, buf, 8, dims, 1, 1, box),
                     "INVALID_ARGUMENT", "CreateTensorWithDataAsOrtValue")


@check("value.negative-dim", "Creating a tensor with a negative dimension fails with "
       "INVALID_ARGUMENT.", VALUE_DOC)
def negative_dim(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dims = ffi.new("int64_t[]", [-1, 2])
    box = ffi.new("OrtValue**")
    err = ctx.status(a.CreateTensorAsOrtValue(ctx.allocator, dims, 2, 1, box))
    if err is None:
        a.ReleaseValue(box[0])
        raise Fail("a tensor of shape [-1, 2] was created")
    if code_name(err[0]) != "INVALID_ARGUMENT":
        raise Known(f"refused, but with {code_name(err[0])}: {short(err[1], 120)}")
    return f"INVALID_ARGUMENT: {short(err[1])}"


@check("value.zero-size", "A tensor with a zero dimension can be created over caller memory "
       "and by ORT, and passes through a Run.", "none")
def zero_size(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    x, _ = ctx.tensor(1, [0, 3], b"")
    dims = ffi.new("int64_t[]", [0, 3])
    y = ctx.out(a.CreateTensorAsOrtValue, "OrtValue*", ctx.allocator, dims, 2, 1)
    ctx.defer(a.ReleaseValue, y)
    sess = ctx.session(models.add_model(("n", 3)))
    out = ctx.run(sess, {"x": x, "y": y}, ["z"])[0]
    elem, shape = ctx.shape_of(out)
    if shape != [0, 3]:
        raise Fail(f"shape {shape}")
    p = ctx.out(a.GetTensorMutableData, "void*", out)
    return f"output [0, 3]; its data pointer is {'NULL' if p == ffi.NULL else 'non-NULL'}"


@check("value.deleter-called", "CreateTensorWithDataAndDeleterAsOrtValue hands the buffer to "
       "ORT: the given allocator's Free receives it when the value is released.",
       "onnxruntime_c_api.h CreateTensorWithDataAndDeleterAsOrtValue",
       slots=("CreateTensorWithDataAndDeleterAsOrtValue",))
def deleter(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    freed: list[int] = []

    def free(_this: Any, p: Any) -> None:
        freed.append(int(ffi.cast("uintptr_t", p)))

    def info(_this: Any) -> Any:
        return ctx.cpu_info

    def alloc(_this: Any, _size: int) -> Any:
        return ffi.NULL

    fields = dict(ffi.typeof("OrtAllocator").fields)
    allocator = ctx.keep(ffi.new("OrtAllocator*"))
    allocator.version = min(ctx.api_version, 22)
    allocator.Alloc = ctx.keep(ffi.callback(fields["Alloc"].type, alloc))
    allocator.Free = ctx.keep(ffi.callback(fields["Free"].type, free))
    allocator.Info = ctx.keep(ffi.callback(fields["Info"].type, info))
    buf = ctx.keep(ffi.new("float[]", [1.0, 2.0]))
    dims = ffi.new("int64_t[]", [2])
    val = ctx.out(a.CreateTensorWithDataAndDeleterAsOrtValue, "OrtValue*", allocator, buf, 8,
                  dims, 1, 1)
    got = ctx.read_floats(val)
    a.ReleaseValue(val)
    if freed != [int(ffi.cast("uintptr_t", buf))]:
        raise Fail(f"Free calls: {freed}")
    return f"read {got}; Free called once with the buffer"


@check("value.tensor-data-const", "GetTensorData (API 23) returns the same address as "
       "GetTensorMutableData.", "onnxruntime_c_api.h GetTensorData", slots=("GetTensorData",))
def tensor_data(ctx: Ctx) -> str:
    a = ctx.api
    val, buf = ctx.tensor(1, [2], bytes(8))
    p = ctx.out(a.GetTensorData, "void*", val)
    if p != ctx.ffi.cast("void*", buf):
        raise Fail("different address")
    return "same address"


@check("value.memory-info", "GetTensorMemoryInfo of a tensor over caller memory compares equal "
       "to the memory info it was created with.", "onnxruntime_c_api.h GetTensorMemoryInfo",
       slots=("GetTensorMemoryInfo",))
def memory_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    val, _ = ctx.tensor(1, [2], bytes(8))
    mi = ctx.out(a.GetTensorMemoryInfo, "OrtMemoryInfo*", val)
    same = ffi.new("int*")
    ctx.ok(a.CompareMemoryInfo(mi, ctx.cpu_info, same))
    if same[0] != 0:
        raise Fail(f"CompareMemoryInfo {same[0]}")
    return "equal (CompareMemoryInfo 0)"


@check("value.shape-reference", "GetTensorElementTypeAndShapeDataReference (API 24) gives the "
       "element type and a borrowed view of the dims.", "onnxruntime_c_api.h",
       slots=("GetTensorElementTypeAndShapeDataReference",))
def shape_reference(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    val, _ = ctx.tensor(7, [2, 1, 3], bytes(48))
    elem = ffi.new("ONNXTensorElementDataType*")
    dims = ffi.new("int64_t**")
    n = ffi.new("size_t*")
    ctx.ok(a.GetTensorElementTypeAndShapeDataReference(val, elem, dims, n))
    got = (int(elem[0]), [dims[0][i] for i in range(n[0])])
    if got != (7, [2, 1, 3]):
        raise Fail(f"got {got}")
    return "INT64 [2, 1, 3]"


@check("typeinfo.cast-wrong-kind", "Casting a sequence type info to a tensor info reports an "
       "error status.", "onnxruntime_c_api.h CastTypeInfoToTensorInfo")
def cast_wrong(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    sess = ctx.session(models.sequence_model())
    ti = ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, 0)
    ctx.defer(a.ReleaseTypeInfo, ti)
    box = ffi.new("OrtTensorTypeAndShapeInfo**")
    err = ctx.status(a.CastTypeInfoToTensorInfo(ti, box))
    if err is None:
        if box[0] == ffi.NULL:
            raise Known("returns success with a NULL tensor info: callers must test the "
                        "pointer, not only the status")
        raise Fail("returned a tensor info for a sequence type")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("typeinfo.sequence-optional-map", "Sequence, optional and map type infos cast to their "
       "kinds and describe their element types.", "onnxruntime_c_api.h",
       slots=("CastTypeInfoToOptionalTypeInfo",))
def container_types(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi

    def type_of(model: bytes, output: bool, index: int) -> Any:
        sess = ctx.session(model)
        fn = a.SessionGetOutputTypeInfo if output else a.SessionGetInputTypeInfo
        ti = ctx.out(fn, "OrtTypeInfo*", sess, index)
        ctx.defer(a.ReleaseTypeInfo, ti)
        return ti

    def kind(ti: Any) -> int:
        k = ffi.new("enum ONNXType*")
        ctx.ok(a.GetOnnxTypeFromTypeInfo(ti, k))
        return int(k[0])

    def elem_of(ti: Any) -> int:
        t = ctx.out(a.CastTypeInfoToTensorInfo, "OrtTensorTypeAndShapeInfo*", ti)
        e = ffi.new("ONNXTensorElementDataType*")
        ctx.ok(a.GetTensorElementType(t, e))
        return int(e[0])

    seq = type_of(models.sequence_model(), False, 0)
    sinfo = ctx.out(a.CastTypeInfoToSequenceTypeInfo, "OrtSequenceTypeInfo*", seq)
    inner = ctx.out(a.GetSequenceElementType, "OrtTypeInfo*", sinfo)
    ctx.defer(a.ReleaseTypeInfo, inner)
    opt = type_of(models.optional_out_model(), True, 0)
    oinfo = ctx.out(a.CastTypeInfoToOptionalTypeInfo, "OrtOptionalTypeInfo*", opt)
    contained = ctx.out(a.GetOptionalContainedTypeInfo, "OrtTypeInfo*", oinfo)
    ctx.defer(a.ReleaseTypeInfo, contained)
    got = [kind(seq), elem_of(inner), kind(opt), elem_of(contained)]
    mp_kind = None
    sess, err = ctx.try_session(_castmap_model())
    if err is None:
        ctx.defer(a.ReleaseSession, sess)
        mti = ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, 0)
        ctx.defer(a.ReleaseTypeInfo, mti)
        minfo = ctx.out(a.CastTypeInfoToMapTypeInfo, "OrtMapTypeInfo*", mti)
        key = ffi.new("ONNXTensorElementDataType*")
        ctx.ok(a.GetMapKeyType(minfo, key))
        vti = ctx.out(a.GetMapValueType, "OrtTypeInfo*", minfo)
        ctx.defer(a.ReleaseTypeInfo, vti)
        mp_kind = (kind(mti), int(key[0]), elem_of(vti))
    if got != [2, 1, 6, 1] or mp_kind not in (None, (3, 7, 1)):
        raise Fail(f"sequence/optional {got}, map {mp_kind}")
    return "seq<float>, optional<float>" + (", map<int64, float>" if mp_kind else "")


@check("typeinfo.denotation", "GetDenotationFromTypeInfo returns the type denotation written "
       "in the model.", "onnxruntime_c_api.h GetDenotationFromTypeInfo")
def denotation(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    t = models.tensor_type(models.FLOAT, (1,))
    with_den = t + models._bytes(6, "IMAGE")  # TypeProto.denotation
    m = models.model([models.node("Identity", ["x"], ["y"])],
                     [models.value_info("x", with_den)], [models.value_info("y", t)])
    sess = ctx.session(m)
    ti = ctx.out(a.SessionGetInputTypeInfo, "OrtTypeInfo*", sess, 0)
    ctx.defer(a.ReleaseTypeInfo, ti)
    p = ffi.new("char**")
    n = ffi.new("size_t*")
    ctx.ok(a.GetDenotationFromTypeInfo(ti, p, n))
    got = ffi.buffer(p[0], n[0])[:].decode() if n[0] else ""
    if got != "IMAGE":
        raise Fail(f"denotation {got!r}")
    return "IMAGE"


@check("typeinfo.build-shape", "A tensor type-and-shape info built by the caller reads back "
       "its type, dims, symbolic names and element count.", "onnxruntime_c_api.h",
       slots=("SetSymbolicDimensions",))
def build_shape(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    info = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
    ctx.defer(a.ReleaseTensorTypeAndShapeInfo, info)
    ctx.ok(a.SetTensorElementType(info, 11))
    ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [2, 3, 4]), 3))
    names = [ctx.keep(ffi.new("char[]", s)) for s in (b"b", b"", b"")]
    ctx.ok(a.SetSymbolicDimensions(info, ffi.new("char*[]", names), 3))
    count = ffi.new("size_t*")
    ctx.ok(a.GetTensorShapeElementCount(info, count))
    syms = ffi.new("char*[3]")
    ctx.ok(a.GetSymbolicDimensions(info, syms, 3))
    got = (count[0], [ctx.c_string(s) for s in syms])
    if got != (24, ["b", "", ""]):
        raise Fail(f"got {got}")
    detail = "DOUBLE [2, 3, 4] (b), 24 elements"
    if ctx.has("TensorTypeAndShape_HasShape"):
        if not a.TensorTypeAndShape_HasShape(info):
            raise Fail("HasShape false for a shaped info")
        detail += "; HasShape true"
    return detail


@check("typeinfo.element-count-symbolic", "GetTensorShapeElementCount on a shape with an "
       "unknown (-1) dim reports an error instead of a count.", "none")
def element_count_symbolic(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    info = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
    ctx.defer(a.ReleaseTensorTypeAndShapeInfo, info)
    ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [-1, 3]), 2))
    count = ffi.new("size_t*")
    err = ctx.status(a.GetTensorShapeElementCount(info, count))
    if err is None:
        raise Known(f"returns success with count {count[0]} for [-1, 3]")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("typeinfo.set-dimensions-lower-rank", "SetDimensions with fewer dims than the info "
       "already has replaces its shape: GetDimensionsCount and GetDimensions read back only "
       "the new dims, and GetTensorShapeElementCount counts them.",
       "onnxruntime_c_api.h SetDimensions (sets the shape); observed by this check")
def set_dimensions_lower_rank(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    info = ctx.out(a.CreateTensorTypeAndShapeInfo, "OrtTensorTypeAndShapeInfo*")
    ctx.defer(a.ReleaseTensorTypeAndShapeInfo, info)
    ctx.ok(a.SetTensorElementType(info, 1))
    ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [2, 3, 4]), 3), "SetDimensions([2, 3, 4])")
    ctx.ok(a.SetDimensions(info, ffi.new("int64_t[]", [5]), 1), "SetDimensions([5])")
    elem, dims = ctx.info_shape(info)
    count = ffi.new("size_t*")
    err = ctx.status(a.GetTensorShapeElementCount(info, count))
    counted = f"{count[0]}"
    if err:  # ORT's message names a source line and a function first: the end says what
        tail = " ".join(err[1].split())[-40:]
        counted = f"fails with {code_name(err[0])}: …{tail.partition(' ')[2] or tail}"
    said = f"[2, 3, 4] then [5]: GetDimensions reads {dims}, GetTensorShapeElementCount {counted}"
    if elem != 1:
        raise Fail(f"element type {elem} after SetDimensions; {said}")
    if dims == [5] and not err and count[0] == 5:
        return said
    if len(dims) == 3 and dims[0] == 5:  # the old rank kept, the new dims first
        raise Known(said.replace("GetDimensions reads", "the rank stays 3, GetDimensions reads"))
    raise Fail(said)


@check("typeinfo.value-type-info", "GetTypeInfo of a tensor value describes a tensor of its "
       "element type and shape.", "onnxruntime_c_api.h GetTypeInfo")
def value_type_info(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    val, _ = ctx.tensor(6, [4], bytes(16))
    ti = ctx.out(a.GetTypeInfo, "OrtTypeInfo*", val)
    ctx.defer(a.ReleaseTypeInfo, ti)
    kind = ffi.new("enum ONNXType*")
    ctx.ok(a.GetOnnxTypeFromTypeInfo(ti, kind))
    t = ctx.out(a.CastTypeInfoToTensorInfo, "OrtTensorTypeAndShapeInfo*", ti)
    e = ffi.new("ONNXTensorElementDataType*")
    ctx.ok(a.GetTensorElementType(t, e))
    is_t = ffi.new("int*")
    ctx.ok(a.IsTensor(val, is_t))
    if (int(kind[0]), int(e[0]), is_t[0]) != (1, 6, 1):
        raise Fail(f"kind {kind[0]}, elem {e[0]}, IsTensor {is_t[0]}")
    return "TENSOR of INT32; IsTensor 1"
