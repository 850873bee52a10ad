"""Sparse tensors over caller memory and filled by ORT: COO, CSR and block-sparse (the first
sparse checks, on ORT-allocated COO and CSR over user memory, are in checks/values.py)."""

from __future__ import annotations

from .._capi import Ctx
from .._registry import Fail, check


@check("value.sparse-coo-user-memory", "A COO sparse tensor over caller memory "
       "(CreateSparseTensorWithValuesAsOrtValue + UseCooIndices) reports its indices.",
       "onnxruntime_c_api.h (sparse tensors, API 9)", slots=("UseCooIndices",))
def sparse_coo_user(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dense = ffi.new("int64_t[]", [4])
    vshape = ffi.new("int64_t[]", [2])
    values = ctx.keep(ffi.new("float[]", [7.0, 8.0]))
    sp = ctx.out(a.CreateSparseTensorWithValuesAsOrtValue, "OrtValue*", ctx.cpu_info, values,
                 dense, 1, vshape, 1, 1)
    ctx.defer(a.ReleaseValue, sp)
    idx = ctx.keep(ffi.new("int64_t[]", [0, 3]))
    ctx.ok(a.UseCooIndices(sp, idx, 2))
    n = ffi.new("size_t*")
    ip = ffi.new("void**")
    ctx.ok(a.GetSparseTensorIndices(sp, 0, n, ip))
    got = list(ffi.cast("int64_t*", ip[0])[0:n[0]])
    if got != [0, 3]:
        raise Fail(f"indices {got}")
    return "COO indices [0, 3] over caller memory"


@check("value.sparse-csr-fill", "FillSparseTensorCsr copies values and inner/outer indices "
       "into an ORT-allocated sparse tensor.", "onnxruntime_c_api.h (sparse tensors, API 9)",
       slots=("FillSparseTensorCsr",))
def sparse_csr_fill(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dense = ffi.new("int64_t[]", [2, 2])
    sp = ctx.out(a.CreateSparseTensorAsOrtValue, "OrtValue*", ctx.allocator, dense, 2, 1)
    ctx.defer(a.ReleaseValue, sp)
    vshape = ffi.new("int64_t[]", [2])
    ctx.ok(a.FillSparseTensorCsr(sp, ctx.cpu_info, vshape, 1, ffi.new("float[]", [1.0, 2.0]),
                                 ffi.new("int64_t[]", [0, 1]), 2,
                                 ffi.new("int64_t[]", [0, 1, 2]), 3))
    n = ffi.new("size_t*")
    ip = ffi.new("void**")
    ctx.ok(a.GetSparseTensorIndices(sp, 1, n, ip))  # inner
    inner = list(ffi.cast("int64_t*", ip[0])[0:n[0]])
    vp = ctx.out(a.GetSparseTensorValues, "void*", sp)
    vals = list(ffi.cast("float*", vp)[0:2])
    if inner != [0, 1] or vals != [1.0, 2.0]:
        raise Fail(f"inner {inner}, values {vals}")
    return "CSR filled: inner [0, 1], values [1, 2]"


@check("value.sparse-block", "Block-sparse tensors can be filled (FillSparseTensorBlockSparse) "
       "and built over caller memory (UseBlockSparseIndices), and report BLOCK_SPARSE.",
       "onnxruntime_c_api.h (sparse tensors, API 9)",
       slots=("FillSparseTensorBlockSparse", "UseBlockSparseIndices"))
def sparse_block(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    dense = ffi.new("int64_t[]", [4, 4])
    sp = ctx.out(a.CreateSparseTensorAsOrtValue, "OrtValue*", ctx.allocator, dense, 2, 1)
    ctx.defer(a.ReleaseValue, sp)
    # one 2x2 block at block coordinates (1, 0)
    vshape = ffi.new("int64_t[]", [2, 2, 1])
    ishape = ffi.new("int64_t[]", [2, 1])
    ctx.ok(a.FillSparseTensorBlockSparse(sp, ctx.cpu_info, vshape, 3,
                                         ffi.new("float[]", [1.0, 2.0, 3.0, 4.0]), ishape, 2,
                                         ffi.new("int32_t[]", [1, 0])))
    fmt = ffi.new("enum OrtSparseFormat*")
    ctx.ok(a.GetSparseTensorFormat(sp, fmt))
    values = ctx.keep(ffi.new("float[]", [5.0, 6.0, 7.0, 8.0]))
    sp2 = ctx.out(a.CreateSparseTensorWithValuesAsOrtValue, "OrtValue*", ctx.cpu_info, values,
                  dense, 2, vshape, 3, 1)
    ctx.defer(a.ReleaseValue, sp2)
    idx = ctx.keep(ffi.new("int32_t[]", [0, 1]))
    ctx.ok(a.UseBlockSparseIndices(sp2, ishape, 2, idx))
    fmt2 = ffi.new("enum OrtSparseFormat*")
    ctx.ok(a.GetSparseTensorFormat(sp2, fmt2))
    if (int(fmt[0]), int(fmt2[0])) != (4, 4):
        raise Fail(f"formats {fmt[0]}, {fmt2[0]}")
    return "both BLOCK_SPARSE"
