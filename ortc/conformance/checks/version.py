"""Version negotiation, build information and OrtStatus."""

from __future__ import annotations

import functools
import os
from typing import Any

from .._capi import Ctx, code_name, short, stderr_captured
from .._registry import Fail, Known, Skip, check

C_API_H = "https://onnxruntime.ai/docs/api/c/struct_ort_api_base.html"
OBSERVED = "observed on the released libraries: no header states a table's length"


def _base(ctx: Ctx):  # type: ignore[no-untyped-def]
    return ctx.api.base


def _minor(ctx: Ctx) -> int:
    return int(ctx.c_string(_base(ctx).GetVersionString()).split(".")[1])


@check("ver.version-string",
       "GetVersionString returns MAJOR.MINOR.PATCH and MINOR is the newest API version GetApi "
       "accepts.", C_API_H)
def version_string(ctx: Ctx) -> str:
    base = _base(ctx)
    text = ctx.c_string(base.GetVersionString())
    parts = text.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise Fail(f"version string {text!r} is not MAJOR.MINOR.PATCH")
    minor = int(parts[1])
    if base.GetApi(minor) == ctx.ffi.NULL:
        raise Fail(f"GetApi({minor}) returned NULL for ONNX Runtime {text}")
    def above_minor() -> Any:
        return base.GetApi(minor + 1)

    above, _ = stderr_captured(above_minor)
    if above != ctx.ffi.NULL:
        raise Fail(f"GetApi({minor + 1}) returned a table for ONNX Runtime {text}")
    return f"{text}: API {minor} is the newest"


@check("ver.getapi-above-null",
       "GetApi for a version above the library's, or for 0, returns NULL.", C_API_H)
def getapi_above(ctx: Ctx) -> str:
    base = _base(ctx)
    minor = _minor(ctx)
    for v in (minor + 1, minor + 50, 0, 2**31):
        got, _ = stderr_captured(functools.partial(base.GetApi, v))
        if got != ctx.ffi.NULL:
            raise Fail(f"GetApi({v}) returned a table")
    return f"GetApi({minor + 1}), GetApi({minor + 50}), GetApi(0), GetApi(2**31): NULL"


@check("ver.getapi-quiet",
       "GetApi for an unsupported version returns NULL without writing to stderr.",
       "onnxruntime/core/session/onnxruntime_c_api.cc (GetApi prints before returning NULL)")
def getapi_quiet(ctx: Ctx) -> str:
    base = _base(ctx)
    minor = _minor(ctx)
    _, text = stderr_captured(lambda: base.GetApi(minor + 1))
    if text.strip():
        raise Known(f"writes to stderr: {short(text)}")
    return "nothing written"


@check("ver.getapi-same-table",
       "GetApi returns the same table for every supported version (older tables are prefixes).",
       "onnxruntime/core/session/onnxruntime_c_api.cc (one static ort_api_1_to_N)")
def getapi_same(ctx: Ctx) -> str:
    base = _base(ctx)
    minor = _minor(ctx)
    tables = {int(ctx.ffi.cast("uintptr_t", base.GetApi(v))) for v in range(1, minor + 1)}
    if len(tables) != 1:
        raise Fail(f"{len(tables)} distinct tables for versions 1..{minor}")
    return f"versions 1..{minor}: one table"


@check("ver.build-info", "GetBuildInfoString returns a non-empty description of the build.",
       C_API_H, slots=("GetBuildInfoString",))
def build_info(ctx: Ctx) -> str:
    text = ctx.c_string(ctx.api.GetBuildInfoString())
    if not text.strip():
        raise Fail("empty build info")
    return short(text, 120)


@check("ver.providers-cpu-last",
       "GetAvailableProviders lists CPUExecutionProvider, and lists it last.",
       "https://onnxruntime.ai/docs/execution-providers/", slots=("GetAvailableProviders",))
def providers(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    names = ffi.new("char***")
    count = ffi.new("int*")
    ctx.ok(a.GetAvailableProviders(names, count))
    got = [ctx.c_string(names[0][i]) for i in range(count[0])]
    ctx.ok(a.ReleaseAvailableProviders(names[0], count[0]))
    if "CPUExecutionProvider" not in got:
        raise Fail(f"providers {got}")
    if got[-1] != "CPUExecutionProvider":
        raise Fail(f"CPU is not last: {got}")
    return ", ".join(got)


@check("status.roundtrip",
       "CreateStatus keeps the code and a copy of the message; GetErrorCode/GetErrorMessage "
       "return them.", C_API_H)
def status_roundtrip(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    msg = ffi.new("char[]", b"conformance message")
    st = a.CreateStatus(2, msg)
    msg[0] = b"X"  # the status must hold its own copy
    try:
        code = int(a.GetErrorCode(st))
        text = ctx.c_string(a.GetErrorMessage(st))
    finally:
        a.ReleaseStatus(st)
    if code != 2 or text != "conformance message":
        raise Fail(f"got code {code}, message {text!r}")
    return "code and copied message returned"


@check("status.ok-is-null",
       "CreateStatus(ORT_OK, NULL) returns NULL, the value every slot uses for success.",
       "onnxruntime/core/framework/error_code.cc (CreateStatus always allocates)")
def status_ok(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    st = a.CreateStatus(0, ffi.NULL)
    if st == ffi.NULL:
        return "NULL"
    code = int(a.GetErrorCode(st))
    a.ReleaseStatus(st)
    raise Known(f"returns a non-NULL status with code {code}: a caller testing the pointer "
                "reads it as a failure")


@check("status.release-null",
       "ReleaseStatus(NULL) and the other Release* functions accept NULL as a no-op.",
       "none", child=True)
def release_null(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    names = []
    for n in a.available:
        t = ffi.typeof(getattr(a.table, n))
        if n.startswith("Release") and t.result.cname == "void" and len(t.args) == 1:
            names.append(n)
    for n in names:
        ctx.step(f"{n}(NULL)")
        getattr(a, n)(ffi.NULL)
    return f"{len(names)} Release* functions accept NULL"


@check("ver.sub-tables", "The sub-API getters answer on a CPU inference build: the model "
       "editor, compile, EP and interop tables exist, the training table is NULL, and unknown "
       "provider or experimental-function names are refused.", C_API_H,
       slots=("GetModelEditorApi", "GetCompileApi", "GetEpApi", "GetExecutionProviderApi"))
def sub_tables(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    got = {}
    for name in ("GetModelEditorApi", "GetCompileApi", "GetEpApi", "GetInteropApi"):
        if ctx.has(name):
            got[name[3:]] = getattr(a, name)() != ffi.NULL
    training = a.GetTrainingApi(ctx.api_version)
    p = ffi.new("void**")
    err = ctx.status(a.GetExecutionProviderApi(b"NoSuchProvider", ctx.api_version, p))
    detail = ", ".join(f"{k}: {'table' if v else 'NULL'}" for k, v in got.items())
    if ctx.has("GetExperimentalFunction"):
        fn = a.GetExperimentalFunction(b"ortc_no_such_function")
        detail += f"; GetExperimentalFunction(unknown): {'NULL' if fn == ffi.NULL else 'a pointer'}"
        if fn != ffi.NULL:
            raise Fail(detail)
    if not all(got.values()) or training != ffi.NULL or err is None:
        raise Fail(f"{detail}; training {'NULL' if training == ffi.NULL else 'table'}; "
                   f"unknown EP api: {err}")
    return (f"{detail}; training: NULL; GetExecutionProviderApi(unknown): "
            f"{code_name(err[0])}")


#: the getters of the function tables besides OrtApi, by the table each returns
_TABLE_GETTERS = {"OrtModelEditorApi": "GetModelEditorApi", "OrtCompileApi": "GetCompileApi",
                  "OrtEpApi": "GetEpApi", "OrtInteropApi": "GetInteropApi",
                  "OrtModelPackageApi": "GetModelPackageApi"}


def _code_ranges(path: str) -> list[tuple[int, int]]:
    """The executable mappings of the library file ``path`` in this process."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and os.path.realpath(parts[5]) == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def table_lengths(ctx: Ctx) -> dict[str, int]:
    """Each table's length in the loaded library: the run of pointers into the library's code
    from the table's start, stopped by the first word that is not one (a NULL, padding, a data
    pointer) or by the start of another table the library hands out (OrtApiBase, OrtApi or a
    sub-table): ORT lays its static tables out next to each other, so a run alone may run on
    into the next one."""
    a, ffi = ctx.api, ctx.ffi
    code = _code_ranges(ctx.info.path)
    if not code:
        raise Skip(f"no executable mapping of {ctx.info.path} in /proc/self/maps")
    starts = {"OrtApiBase": int(ffi.cast("uintptr_t", a.base)),
              "OrtApi": int(ffi.cast("uintptr_t", a.table))}
    for table, getter in _TABLE_GETTERS.items():
        if ctx.has(getter):
            starts[table] = int(ffi.cast("uintptr_t", getattr(a, getter)()))
    others = set(starts.values())
    size = ffi.sizeof("void*")
    out = {}
    for table, start in starts.items():
        if table == "OrtApiBase" or start == 0:
            continue
        words = ffi.cast("uintptr_t*", start)
        n = 0
        while (n == 0 or start + n * size not in others) and any(
                lo <= int(words[n]) < hi for lo, hi in code):
            n += 1
        out[table] = n
    return out


@check("ver.sub-table-lengths", "Each function table the library hands out (OrtApi, and the "
       "model editor, compile, EP, interop and model-package tables) is as long as ortc's account "
       "of it at the library's API version: OrtApi holds the slots ortc declares up to that "
       "version, each other table its classified functions plus the entries ortc declares "
       "unnamed. The length is the run of code pointers from the table's start up to the next "
       "table; that the same method gives OrtApi's declared length is what vouches for it.",
       OBSERVED)
def sub_table_lengths(ctx: Ctx) -> str:
    from ..._slots import SLOTS
    from ...slot_rules import table_length

    if ctx.api_version != _minor(ctx):
        raise Fail(f"ortc negotiated API {ctx.api_version}, the library offers {_minor(ctx)}")
    got = table_lengths(ctx)
    want = {"OrtApi": sum(1 for _, since in SLOTS if since <= ctx.api_version)}
    want.update((t, table_length(t, ctx.api_version)) for t in got if t != "OrtApi")
    wrong = [f"{t}: {got[t]} entries, ortc accounts for {want[t]}" for t in got
             if got[t] != want[t]]
    if wrong:
        raise Fail("; ".join(wrong))
    return ", ".join(f"{t} {n}" for t, n in got.items())


def _entry(ctx: Ctx, getter: str, index: int, ctype: str) -> Any:
    table = ctx.ffi.cast("void**", getattr(ctx.api, getter)())
    return ctx.ffi.cast(ctype, table[index])


@check("ver.ep-context-entries", "The API 31 entries of the EP table are the EP-context config "
       "functions and the compile table's 17th is SetEpContextDataWriteFunc: entry 74 of the EP "
       "table refuses NULL session options and otherwise makes a config that copies the read "
       "callback and its state out of the options (a snapshot: clearing the options' callback "
       "afterwards leaves the config's), entry 76 returns that read callback and refuses a NULL "
       "read output, entry 77 refuses a NULL write output and returns no write callback, entry 75 "
       "releases the config; compile entry 16 refuses NULL options.", OBSERVED,
       slots=("GetEpApi", "GetCompileApi", "SessionOptionsSetEpContextDataReadFunc"))
def ep_context_entries(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    status2, status3 = "OrtStatus*(*)(void*, void*)", "OrtStatus*(*)(void*, void*, void*)"
    get_config = _entry(ctx, "GetEpApi", 74, status2)
    release = _entry(ctx, "GetEpApi", 75, "void(*)(void*)")
    read_func = _entry(ctx, "GetEpApi", 76, status3)
    write_func = _entry(ctx, "GetEpApi", 77, status3)
    set_write = _entry(ctx, "GetCompileApi", 16, status3)
    found = [ctx.error(get_config(ffi.NULL, ffi.new("void**")), "INVALID_ARGUMENT",
                       "EP entry 74 with NULL options"),
             ctx.error(set_write(ffi.NULL, ffi.NULL, ffi.NULL), "INVALID_ARGUMENT",
                       "compile entry 16 with NULL options")]
    if "OrtSessionOptions" not in found[0] or "OrtModelCompilationOptions" not in found[1]:
        raise Fail(f"unexpected refusals: {found}")

    def read(state: Any, name: Any, allocator: Any, buffer: Any, size: Any) -> Any:
        return ffi.NULL

    cb = ctx.keep(ffi.callback("OrtReadNamedBufferFunc", read))
    state = ffi.cast("void*", 0x1234)
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, cb, state), "set the read callback")
    box = ffi.new("void**")
    ctx.ok(get_config(so, box), "EP entry 74")
    config = box[0]
    try:
        ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, ffi.NULL, ffi.NULL), "clear it")
        fn, st = ffi.new("void**"), ffi.new("void**")
        ctx.ok(read_func(config, fn, st), "EP entry 76")
        if int(ffi.cast("uintptr_t", fn[0])) != int(ffi.cast("uintptr_t", cb)) or \
                int(ffi.cast("uintptr_t", st[0])) != 0x1234:
            raise Fail("entry 76 did not return the callback and state the config was made with")
        null_read = ctx.error(read_func(config, ffi.NULL, st), "INVALID_ARGUMENT",
                              "EP entry 76 with a NULL output")
        null_write = ctx.error(write_func(config, ffi.NULL, st), "INVALID_ARGUMENT",
                               "EP entry 77 with a NULL output")
        if "read_func" not in null_read or "write_func" not in null_write:
            raise Fail(f"unexpected refusals: {null_read}; {null_write}")
        ctx.ok(write_func(config, fn, st), "EP entry 77")
        if fn[0] != ffi.NULL:
            raise Fail("entry 77 returned a write callback none was set for")
    finally:
        release(config)
    return (f"{found[0]}; {found[1]}; the config kept the read callback after the options "
            f"cleared theirs; {null_read}; {null_write}")
