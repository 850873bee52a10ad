"""Session creation: what CreateSession and its options report for bad models, files and
settings (error codes and messages)."""

from __future__ import annotations

import os
from typing import Any

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Known, check
ERRORS_DOC = "https://onnxruntime.ai/docs/api/c/group___global.html (OrtErrorCode)"


def _path_session(ctx: Ctx, path: str) -> tuple[Any, Any]:
    box = ctx.ffi.new("OrtSession**")
    err = ctx.status(ctx.api.CreateSession(ctx.env, path.encode(), ctx.options(), box))
    if not err:
        ctx.defer(ctx.api.ReleaseSession, box[0])
    return box[0], err


def _expect_create_error(ctx: Ctx, model: bytes, expected: str | tuple[str, ...],
                         options: Any = None) -> str:
    sess, err = ctx.try_session(model, options)
    if err is None:
        ctx.api.ReleaseSession(sess)
        raise Fail("session creation succeeded")
    names = (expected,) if isinstance(expected, str) else expected
    got = code_name(err[0])
    if got not in names:
        raise Fail(f"expected {'/'.join(names)}, got {got}: {short(err[1], 300)}")
    return f"{got}: {short(err[1])}"

@check("create.missing-file", "CreateSession on a path that does not exist fails with "
       "NO_SUCHFILE.", ERRORS_DOC)
def missing_file(ctx: Ctx) -> str:
    path = os.path.join(ctx.tmpdir(), "absent.onnx")
    _, err = _path_session(ctx, path)
    if err is None:
        raise Fail("succeeded")
    if code_name(err[0]) != "NO_SUCHFILE":
        raise Fail(f"got {code_name(err[0])}: {short(err[1])}")
    return f"NO_SUCHFILE: {short(err[1])}"


@check("create.directory", "CreateSession on a directory fails with an error status (not a "
       "crash or a hang).", "none")
def directory(ctx: Ctx) -> str:
    _, err = _path_session(ctx, ctx.tmpdir())
    if err is None:
        raise Fail("succeeded")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.garbage-bytes", "CreateSessionFromArray on bytes that are not a protobuf fails "
       "with INVALID_PROTOBUF.", ERRORS_DOC)
def garbage(ctx: Ctx) -> str:
    return _expect_create_error(ctx, b"\xff\xfe this is not an onnx model \x00\x01" * 4,
                                "INVALID_PROTOBUF")


@check("create.truncated-model", "A model truncated in the middle fails with INVALID_PROTOBUF.",
       ERRORS_DOC)
def truncated(ctx: Ctx) -> str:
    m = models.mlp_model()
    return _expect_create_error(ctx, m[: len(m) // 2], "INVALID_PROTOBUF")


@check("create.empty-bytes", "CreateSessionFromArray with zero bytes fails with an error "
       "status.", "none")
def empty(ctx: Ctx) -> str:
    sess, err = ctx.try_session(b"")
    if err is None:
        ctx.api.ReleaseSession(sess)
        raise Fail("an empty model was accepted")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.unknown-operator", "A model using an operator no provider implements fails "
       "with INVALID_GRAPH.", ERRORS_DOC)
def unknown_op(ctx: Ctx) -> str:
    return _expect_create_error(ctx, models.unknown_op_model(), ("INVALID_GRAPH", "FAIL",
                                                                 "NOT_IMPLEMENTED"))


@check("create.type-error", "A graph whose types do not check (float + int64) fails with "
       "INVALID_GRAPH.", ERRORS_DOC)
def type_error(ctx: Ctx) -> str:
    return _expect_create_error(ctx, models.type_error_model(), ("INVALID_GRAPH", "FAIL"))


@check("create.future-ir-version", "A model with an IR version newer than the library "
       "supports fails with an error status.", "none")
def future_ir(ctx: Ctx) -> str:
    sess, err = ctx.try_session(models.identity_model(models.FLOAT, (1,), ir_version=99))
    if err is None:
        ctx.api.ReleaseSession(sess)
        raise Fail("accepted IR version 99")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.future-opset", "A model importing an opset newer than the library knows fails "
       "with an error status.", "none")
def future_opset(ctx: Ctx) -> str:
    sess, err = ctx.try_session(models.identity_model(models.FLOAT, (1,), opset=99))
    if err is None:
        ctx.api.ReleaseSession(sess)
        raise Known("opset 99 accepted (ORT only warns about an opset newer than it knows)")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.missing-external-data", "A model whose initializer lives in a missing external "
       "file fails with an error status at creation.", "none")
def missing_external(ctx: Ctx) -> str:
    t = models.tensor_type(models.FLOAT, (2,))
    # TensorProto: dims, data_type, name, external_data {location}, data_location = EXTERNAL
    init = (models._packed(1, [2]) + models._int(2, models.FLOAT) + models._bytes(8, "w")
            + models._bytes(13, models._bytes(1, "location") + models._bytes(2, "nope.bin"))
            + models._int(14, 1))
    m = models.model([models.node("Add", ["x", "w"], ["y"])], [models.value_info("x", t)],
                     [models.value_info("y", t)], [init])
    d = ctx.tmpdir()
    path = os.path.join(d, "ext.onnx")
    with open(path, "wb") as f:
        f.write(m)
    _, err = _path_session(ctx, path)
    if err is None:
        raise Fail("succeeded without the external file")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.unknown-provider", "SessionOptionsAppendExecutionProvider with an unknown "
       "provider name fails with an error status.", "none",
       slots=("SessionOptionsAppendExecutionProvider",))
def unknown_provider(ctx: Ctx) -> str:
    so = ctx.options()
    err = ctx.status(ctx.api.SessionOptionsAppendExecutionProvider(
        so, b"NoSuchExecutionProvider", ctx.ffi.NULL, ctx.ffi.NULL, 0))
    if err is None:
        raise Fail("accepted")
    return f"{code_name(err[0])}: {short(err[1])}"


@check("create.cuda-on-cpu-build", "Appending the CUDA provider on a CPU-only build fails with "
       "an error status (no silent CPU fallback).", "none",
       slots=("CreateCUDAProviderOptions", "SessionOptionsAppendExecutionProvider_CUDA_V2"))
def cuda_on_cpu(ctx: Ctx) -> str:
    a = ctx.api
    box = ctx.ffi.new("OrtCUDAProviderOptionsV2**")
    err = ctx.status(a.CreateCUDAProviderOptions(box))
    if err is not None:
        return f"CreateCUDAProviderOptions: {code_name(err[0])}: {short(err[1])}"
    ctx.defer(a.ReleaseCUDAProviderOptions, box[0])
    err = ctx.status(a.SessionOptionsAppendExecutionProvider_CUDA_V2(ctx.options(), box[0]))
    if err is None:
        raise Known("accepted: this build has the CUDA provider")
    return f"append: {code_name(err[0])}: {short(err[1])}"


@check("create.load-canceled", "Session creation with the load-cancellation flag set fails with "
       "MODEL_LOAD_CANCELED.", "onnxruntime_c_api.h SessionOptionsSetLoadCancellationFlag",
       slots=("SessionOptionsSetLoadCancellationFlag",))
def load_canceled(ctx: Ctx) -> str:
    so = ctx.options()
    ctx.ok(ctx.api.SessionOptionsSetLoadCancellationFlag(so, True))
    return _expect_create_error(ctx, models.mlp_model(), "MODEL_LOAD_CANCELED", so)


@check("create.bad-thread-count", "SetIntraOpNumThreads(-1) is refused with an error status, "
       "at the setter or at session creation.", "none")
def bad_threads(ctx: Ctx) -> str:
    a = ctx.api
    so = ctx.out(a.CreateSessionOptions, "OrtSessionOptions*")
    ctx.defer(a.ReleaseSessionOptions, so)
    err = ctx.status(a.SetIntraOpNumThreads(so, -1))
    if err is not None:
        return f"setter: {code_name(err[0])}: {short(err[1])}"
    sess, err = ctx.try_session(models.add_model(), so)
    if err is None:
        a.ReleaseSession(sess)
        raise Known("-1 accepted by the setter and by CreateSession")
    return f"creation: {code_name(err[0])}: {short(err[1])}"


@check("create.file-and-bytes-agree", "CreateSession from a file and CreateSessionFromArray "
       "from the same bytes give sessions with the same inputs and outputs.", "none")
def file_and_bytes(ctx: Ctx) -> str:
    m = models.mlp_model()
    path = os.path.join(ctx.tmpdir(), "mlp.onnx")
    with open(path, "wb") as f:
        f.write(m)
    s1, err = _path_session(ctx, path)
    if err:
        raise Fail(f"from file: {code_name(err[0])}: {err[1][:200]}")
    s2 = ctx.session(m)
    if io_names(ctx, s1) != io_names(ctx, s2):
        raise Fail(f"{io_names(ctx, s1)} != {io_names(ctx, s2)}")
    return f"both {io_names(ctx, s1)}"


def io_names_of(ctx: Ctx, sess: Any, kind: str) -> list[str]:
    a = ctx.api
    n = ctx.ffi.new("size_t*")
    ctx.ok(getattr(a, f"SessionGet{kind}Count")(sess, n))
    out = []
    for i in range(n[0]):
        p = ctx.out(getattr(a, f"SessionGet{kind}Name"), "char*", sess, i, ctx.allocator)
        out.append(ctx.take_string(p))
    return out


def io_names(ctx: Ctx, sess: Any) -> tuple[list[str], list[str]]:
    return io_names_of(ctx, sess, "Input"), io_names_of(ctx, sess, "Output")
