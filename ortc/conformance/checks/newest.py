"""The slots API 31 and API 32 added, and where the OrtApi table ends.

No public 1.31/1.32 C header states these slots' contracts yet, so each check records what the
libraries do: what a slot does with NULL arguments and what it returns on a CPU build.
"""

from __future__ import annotations

from typing import Any, cast

from .. import models
from .._capi import Ctx, code_name, short
from .._registry import Fail, Skip, check

PKG_README = ("https://github.com/microsoft/onnxruntime/tree/main/onnxruntime/core/session/"
              "model_package")
OBSERVED = "observed on the released libraries (no public header for API 31/32 yet)"


@check("api31.ep-context-read-func", "SessionOptionsSetEpContextDataReadFunc (API 31) refuses "
       "NULL options with INVALID_ARGUMENT; it accepts a read callback, and a NULL callback "
       "(which clears it) with any state; a CPU session over a model without EP-context nodes "
       "never calls the callback and runs.", OBSERVED,
       slots=("SessionOptionsSetEpContextDataReadFunc",))
def ep_context_read_func(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    null = ctx.error(a.SessionOptionsSetEpContextDataReadFunc(ffi.NULL, ffi.NULL, ffi.NULL),
                     "INVALID_ARGUMENT", "NULL options")
    calls: list[bytes] = []

    def read(state: Any, name: Any, allocator: Any, buffer: Any, size: Any) -> Any:
        calls.append(cast(bytes, ffi.string(name)))
        return ffi.NULL

    cb = ctx.keep(ffi.callback("OrtReadNamedBufferFunc", read))
    so = ctx.options()
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, cb, ffi.NULL), "set the callback")
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, ffi.NULL, ffi.cast("void*", 1)),
           "clear with a NULL callback and a non-NULL state")
    ctx.ok(a.SessionOptionsSetEpContextDataReadFunc(so, cb, ffi.NULL), "set it again")
    sess = ctx.session(models.add_model((2,)), so)
    got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                  ["z"])[0])
    if got != [4.0, 6.0]:
        raise Fail(f"wrong result {got}")
    if calls:
        raise Fail(f"the callback was called for {calls} on a model without EP-context nodes")
    return f"NULL options: {null}; set, cleared, set; session runs; callback not called"


@check("api31.model-package-api", "GetModelPackageApi (API 31) takes no arguments and returns "
       "the same non-NULL table on every call of a CPU build.", PKG_README,
       slots=("GetModelPackageApi",))
def model_package_api(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    tables = {int(ffi.cast("uintptr_t", a.GetModelPackageApi())) for _ in range(3)}
    if tables == {0}:
        raise Fail("NULL")
    if len(tables) != 1:
        raise Fail(f"{len(tables)} distinct tables")
    return "one non-NULL table"


def _cpu_ep_device(ctx: Ctx) -> Any:
    a, ffi = ctx.api, ctx.ffi
    devs = ffi.new("OrtEpDevice***")
    n = ffi.new("size_t*")
    ctx.ok(a.GetEpDevices(ctx.env, devs, n))
    for i in range(n[0]):
        if ctx.c_string(a.EpDevice_EpName(devs[0][i])) == "CPUExecutionProvider":
            return devs[0][i]
    raise Fail(f"no CPUExecutionProvider among {n[0]} EP devices")


@check("api32.ep-device-memory-capacity", "EpDevice_GetMemoryCapacity (API 32) refuses a NULL "
       "device and two NULL outputs with INVALID_ARGUMENT; for the CPU provider's EP device it "
       "returns NOT_IMPLEMENTED and leaves both outputs untouched.", OBSERVED,
       slots=("EpDevice_GetMemoryCapacity", "GetEpDevices"))
def ep_device_memory_capacity(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    first, second = ffi.new("size_t*", 12345), ffi.new("size_t*", 12345)
    null_dev = ctx.error(a.EpDevice_GetMemoryCapacity(ffi.NULL, 0, first, second),
                         "INVALID_ARGUMENT", "NULL device")
    dev = _cpu_ep_device(ctx)
    null_outs = ctx.error(a.EpDevice_GetMemoryCapacity(dev, 0, ffi.NULL, ffi.NULL),
                          "INVALID_ARGUMENT", "two NULL outputs")
    cpu = []
    for mem_type in (0, 5):  # OrtDeviceMemoryType DEFAULT, HOST_ACCESSIBLE
        for outs in ((first, second), (first, ffi.NULL), (ffi.NULL, second)):
            st = ctx.status(a.EpDevice_GetMemoryCapacity(dev, mem_type, *outs))
            if st is None:
                raise Fail(f"CPU device, memory type {mem_type}: OK with outputs "
                           f"{first[0]}, {second[0]} (a new behaviour: record it)")
            cpu.append(f"{code_name(st[0])}: {short(st[1], 80)}")
    if any(not c.startswith("NOT_IMPLEMENTED") for c in cpu) or (first[0], second[0]) != (
            12345, 12345):
        raise Fail(f"CPU device: {sorted(set(cpu))}; outputs {first[0]}, {second[0]}")
    return f"NULL device: {null_dev}; NULL outputs: {null_outs}; CPU device: {cpu[0]}"


@check("ver.table-length", "ortc declares no more OrtApi slots than the library's table holds: "
       "the interop table (GetInteropApi, API 24), a static table the library lays out after "
       "OrtApi, starts at or after the end of the slots ortc declares up to the library's "
       "API version; the gap is not always zero, so this bounds the table's length.",
       OBSERVED, slots=("GetInteropApi",))
def table_length(ctx: Ctx) -> str:
    from ..._slots import SLOTS

    a, ffi = ctx.api, ctx.ffi
    if ctx.api_version != _library_api(ctx):
        raise Fail(f"ortc negotiated API {ctx.api_version}, the library offers "
                   f"{_library_api(ctx)}: the table end cannot be compared")
    start = int(ffi.cast("uintptr_t", a.table))
    interop = int(ffi.cast("uintptr_t", a.GetInteropApi()))
    room, rest = divmod(interop - start, ffi.sizeof("void*"))
    declared = sum(1 for _, since in SLOTS if since <= ctx.api_version)
    if interop <= start or rest or room < declared:
        raise Fail(f"the interop table starts {interop - start} bytes after OrtApi "
                   f"(room for {room} slots); ortc declares {declared} up to API "
                   f"{ctx.api_version}")
    return (f"{declared} slots declared up to API {ctx.api_version}; the interop table "
            f"follows {room - declared} pointer(s) later")


def _library_api(ctx: Ctx) -> int:
    base = ctx.api.base
    return int(ctx.c_string(base.GetVersionString()).split(".")[1])


def _model_package(ctx: Ctx) -> str:
    """A one-component package: variant ``cpu`` (CPU EP, an Add model) and ``other`` (an EP no
    library has), inline in manifest.json, plus a second component ``aux``; the format is that
    of ORT's model_package library (manifest.json, components, variants, executor_info)."""
    import json
    import os

    root = ctx.tmpdir()
    for sub in ("cpu", "other"):
        os.makedirs(os.path.join(root, sub))
    with open(os.path.join(root, "cpu", "model.onnx"), "wb") as f:
        f.write(models.add_model((2,)))
    ort = {"ort": {"model_file": "model.onnx"}}
    manifest = {"schema_version": "1.3", "components": {
        "main": {"variants": {"cpu": {"ep": "CPUExecutionProvider", "executor_info": ort},
                              "other": {"ep": "NoSuchExecutionProvider", "executor_info": ort}}},
        "aux": {"variants": {"x": {"variant_directory": "other"}}}}}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    return root


@check("api31.model-package-table", "The 16 entries of the model-package table (API 31) open a "
       "package directory and answer as ORT's model_package_api.cc and model_package_context.cc "
       "say: schema version 1 for \"1.3\" (the major), the component and variant names in "
       "manifest order, the variant's EP name, and a NULL EP-name output refused "
       "(INVALID_ARGUMENT); the component-name and variant-name arrays are the context's (one "
       "address on two threads, not a per-thread array); ResolveStringRef's result is one string "
       "of the context that the next call, from any thread, overwrites; SelectComponent picks the "
       "CPU variant for options given the CPU EP device; the selected variant's folder path comes "
       "back at one address on every call (a copy the call makes into the component context); "
       "a session created from the component context (with NULL options and with the caller's) "
       "runs the variant's model after the component context, the package context and the "
       "options are released.", PKG_README,
       slots=("GetModelPackageApi", "SessionOptionsAppendExecutionProvider_V2", "GetEpDevices"),
       crosses=("OrtModelPackageContext",))
def model_package_table(ctx: Ctx) -> str:
    import threading

    a, ffi = ctx.api, ctx.ffi
    table = ffi.cast("void**", a.GetModelPackageApi())
    st = "OrtStatus*"

    def entry(i: int, sig: str) -> Any:
        return ffi.cast(sig, table[i])

    create_opts = entry(0, st + "(*)(OrtEnv*, OrtSessionOptions*, void**)")
    release_opts = entry(1, "void(*)(void*)")
    create_ctx = entry(2, st + "(*)(const char*, void**)")
    release_ctx = entry(3, "void(*)(void*)")
    schema = entry(4, st + "(*)(void*, int64_t*)")
    comp_count = entry(5, st + "(*)(void*, size_t*)")
    comp_names = entry(6, st + "(*)(void*, char***, size_t*)")
    var_count = entry(7, st + "(*)(void*, const char*, size_t*)")
    var_names = entry(8, st + "(*)(void*, const char*, char***, size_t*)")
    var_ep = entry(9, st + "(*)(void*, const char*, const char*, char**)")
    resolve = entry(10, st + "(*)(void*, const char*, const char*, int, char**)")
    select = entry(11, st + "(*)(void*, const char*, void*, void**)")
    release_cc = entry(12, "void(*)(void*)")
    selected_name = entry(13, st + "(*)(void*, char**)")
    selected_folder = entry(14, st + "(*)(void*, char**)")
    create_session = entry(15, st + "(*)(OrtEnv*, void*, OrtSessionOptions*, OrtSession**)")

    root = _model_package(ctx)
    box = ffi.new("void**")
    ctx.ok(create_ctx(root.encode(), box), "CreateModelPackageContext")
    pkg = box[0]
    released: list[Any] = []

    def release_pkg() -> None:
        if not released:
            release_ctx(pkg)

    ctx.defer(release_pkg)
    version, n = ffi.new("int64_t*"), ffi.new("size_t*")
    ctx.ok(schema(pkg, version), "ModelPackage_GetSchemaVersion")
    ctx.ok(comp_count(pkg, n), "ModelPackage_GetComponentCount")
    if version[0] != 1 or n[0] != 2:
        raise Fail(f"schema version {version[0]}, {n[0]} components (expected 1 and 2)")

    def names_on_a_thread(fn: Any, *args: Any) -> tuple[int, list[str]]:
        got: list[Any] = []

        def run() -> None:
            arr, count = ffi.new("char***"), ffi.new("size_t*")
            ctx.ok(fn(*args, arr, count), "a names query")
            got.append((int(ffi.cast("uintptr_t", arr[0])),
                        [ctx.c_string(arr[0][i]) for i in range(count[0])]))

        t = threading.Thread(target=run)
        t.start()
        t.join()
        if not got:
            raise Fail("a names query failed on its thread")
        return cast("tuple[int, list[str]]", got[0])

    arrays = {}
    for what, fn, args, want in (("component", comp_names, (pkg,), ["main", "aux"]),
                                 ("variant", var_names, (pkg, b"main"), ["cpu", "other"])):
        first, second = names_on_a_thread(fn, *args), names_on_a_thread(fn, *args)
        if first[1] != want or second[1] != want:
            raise Fail(f"{what} names {first[1]} then {second[1]} (expected {want})")
        if first[0] != second[0]:
            raise Fail(f"the {what}-name arrays of two threads are apart: a per-thread array "
                       "(a new behaviour: record it)")
        arrays[what] = first[0]
    ctx.ok(var_count(pkg, b"main", n), "ModelPackage_GetVariantCount")
    ep = ffi.new("char**")
    ctx.ok(var_ep(pkg, b"main", b"cpu", ep), "ModelPackage_GetVariantEpName")
    if n[0] != 2 or ctx.c_string(ep[0]) != "CPUExecutionProvider":
        raise Fail(f"{n[0]} variants, EP {ctx.c_string(ep[0])!r}")
    null_ep = ctx.error(var_ep(pkg, b"main", b"cpu", ffi.NULL), "INVALID_ARGUMENT",
                        "ModelPackage_GetVariantEpName with a NULL output")

    mine, theirs = ffi.new("char**"), ffi.new("char**")
    ctx.ok(resolve(pkg, ffi.NULL, b"cpu/model.onnx", 1, mine), "ModelPackage_ResolveStringRef")
    if not ctx.c_string(mine[0]).endswith("model.onnx"):
        raise Fail(f"resolved {ctx.c_string(mine[0])!r}")

    def resolve_other() -> None:
        ctx.ok(resolve(pkg, ffi.NULL, b"other", 0, theirs), "ResolveStringRef on a thread")

    t = threading.Thread(target=resolve_other)
    t.start()
    t.join()
    if theirs[0] == ffi.NULL or not ctx.c_string(mine[0]).endswith("other"):
        raise Fail("the first ResolveStringRef result was not overwritten by another thread's "
                   f"call: now {ctx.c_string(mine[0])!r} (a per-thread string: record it)")

    so = ctx.options()
    devs = ffi.new("OrtEpDevice*[1]", [_cpu_ep_device(ctx)])
    ctx.ok(a.SessionOptionsAppendExecutionProvider_V2(so, ctx.env, devs, 1, ffi.NULL, ffi.NULL,
                                                      0), "append the CPU EP device")
    ctx.ok(create_opts(ctx.env, so, box), "CreateModelPackageOptionsFromSessionOptions")
    opts = box[0]
    try:
        ctx.ok(select(pkg, b"main", opts, box), "SelectComponent")
    finally:
        release_opts(opts)
    component = box[0]
    try:
        name, folder, again = ffi.new("char**"), ffi.new("char**"), ffi.new("char**")
        ctx.ok(selected_name(component, name), "ModelPackageComponent_GetSelectedVariantName")
        ctx.ok(selected_folder(component, folder), "GetSelectedVariantFolderPath")
        ctx.ok(selected_folder(component, again), "GetSelectedVariantFolderPath again")
        if ctx.c_string(name[0]) != "cpu" or not ctx.c_string(folder[0]).endswith("cpu"):
            raise Fail(f"selected {ctx.c_string(name[0])!r} in {ctx.c_string(folder[0])!r}")
        if folder[0] != again[0]:
            raise Fail("two folder-path calls returned two addresses (a new behaviour)")
        release_pkg()
        released.append(True)
        sessions = []
        for label, options in (("NULL options", ffi.NULL), ("the caller's options", so)):
            out = ffi.new("OrtSession**")
            ctx.ok(create_session(ctx.env, component, options, out), f"CreateSession ({label})")
            ctx.defer(a.ReleaseSession, out[0])
            sessions.append(out[0])
    finally:
        release_cc(component)
    for sess in sessions:
        got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats([1, 2]), "y": ctx.floats([3, 4])},
                                      ["z"])[0])
        if got != [4.0, 6.0]:
            raise Fail(f"wrong result {got}")
    return (f"schema 1, names shared by threads, {null_ep}; ResolveStringRef overwritten by "
            "another thread; variant 'cpu' selected; two sessions run after every context is "
            "released")


# -- the compile table's API 31 and API 32 entries, called by position ---------------------------

#: OrtCompileApi positions (the table only grows at its end): the API 22 functions used here and
#: the entries API 31 and API 32 added after SetEpContextDataWriteFunc (16)
_CO = "OrtModelCompilationOptions*"
_COMPILE_ENTRIES = {
    "Release": (0, f"void(*)({_CO})"),
    "CreateFromSessionOptions": (1, f"OrtStatus*(*)(const OrtEnv*, const OrtSessionOptions*, "
                                    f"{_CO}*)"),
    "SetInputModelFromBuffer": (3, f"OrtStatus*(*)({_CO}, const void*, size_t)"),
    "SetOutputModelBuffer": (6, f"OrtStatus*(*)({_CO}, OrtAllocator*, void**, size_t*)"),
    "CompileModel": (8, f"OrtStatus*(*)(const OrtEnv*, const {_CO})"),
    "SetOutputModelExternalInitializersBuffer": (
        17, f"OrtStatus*(*)({_CO}, const char*, size_t, OrtAllocator*, void**, size_t*)"),
    "SetOutputModelExternalInitializersAlignment": (18, f"OrtStatus*(*)({_CO}, size_t, size_t)"),
    "SetWeightlessMode": (19, f"OrtStatus*(*)({_CO}, int)"),
}


#: ORT's design notes that name the compile table's API 31 and API 32 entries
IN_MEMORY_INITIALIZERS = ("https://github.com/microsoft/onnxruntime/blob/"
                          "1bd118d64f5673993fb3c408f2413542d7f79854/docs/design/"
                          "Compile_API_In_Memory_External_Initializers.md")
WEIGHTLESS_MODE = ("https://github.com/microsoft/onnxruntime/blob/"
                   "31df48f376a748674a846235937953f1f7f0fa6b/docs/design/Weightless_Mode.md")


def _compile_entries(ctx: Ctx, api: int, entries: str) -> dict[str, Any]:
    """The compile table's functions by name; Skip below API ``api`` (its table is shorter)."""
    if ctx.api_version < api:
        raise Skip(f"needs API {api} (OrtCompileApi {entries}); the library offers "
                   f"{ctx.api_version}")
    ffi = ctx.ffi
    table = ffi.cast("void**", ctx.api.GetCompileApi())
    return {n: ffi.cast(sig, table[i]) for n, (i, sig) in _COMPILE_ENTRIES.items()}


def _compile_options(ctx: Ctx, fn: dict[str, Any]) -> Any:
    opts = ctx.out(fn["CreateFromSessionOptions"], _CO, ctx.env, ctx.options())
    ctx.defer(fn["Release"], opts)
    return opts


@check("api31.compile-external-initializers", "Entries 17 and 18 of the compile table (API 31) "
       "are SetOutputModelExternalInitializersBuffer and "
       "SetOutputModelExternalInitializersAlignment: both refuse NULL options naming "
       "OrtModelCompilationOptions; 17 refuses a NULL or absolute logical file name, a NULL "
       "allocator and a NULL buffer location, 18 an alignment that is not a power of two "
       "(INVALID_ARGUMENT). The name is copied at the call (overwriting the caller's string "
       "after it changes nothing), the allocator and the two locations are kept and used at "
       "CompileModel: it writes the external-initializer bytes, allocated with that allocator, "
       "and their size there, and the model it writes names the logical file; an alignment of "
       "4096 makes that buffer larger; a session given the buffer as that in-memory file runs "
       "the model right.", IN_MEMORY_INITIALIZERS,
       slots=("GetCompileApi", "AddExternalInitializersFromFilesInMemory",
              "GetAllocatorWithDefaultOptions", "AllocatorFree"))
def compile_external_initializers(ctx: Ctx) -> str:
    a, ffi = ctx.api, ctx.ffi
    fn = _compile_entries(ctx, 31, "entries 17 and 18")
    to_buffer = fn["SetOutputModelExternalInitializersBuffer"]
    align = fn["SetOutputModelExternalInitializersAlignment"]
    alloc = ctx.allocator
    data, size = ffi.new("void**"), ffi.new("size_t*")
    refused = [ctx.error(to_buffer(ffi.NULL, b"w.bin", 0, alloc, data, size), "INVALID_ARGUMENT",
                         "17 with NULL options"),
               ctx.error(align(ffi.NULL, 4096, 0), "INVALID_ARGUMENT", "18 with NULL options")]
    if any("OrtModelCompilationOptions" not in r for r in refused):
        raise Fail(f"NULL options refused without naming them: {refused}")
    opts = _compile_options(ctx, fn)
    bad = [ctx.error(to_buffer(opts, ffi.NULL, 0, alloc, data, size), "INVALID_ARGUMENT",
                     "17 with a NULL name"),
           ctx.error(to_buffer(opts, b"/abs.bin", 0, alloc, data, size), "INVALID_ARGUMENT",
                     "17 with an absolute name"),
           ctx.error(to_buffer(opts, b"w.bin", 0, ffi.NULL, data, size), "INVALID_ARGUMENT",
                     "17 with a NULL allocator"),
           ctx.error(to_buffer(opts, b"w.bin", 0, alloc, ffi.NULL, size), "INVALID_ARGUMENT",
                     "17 with a NULL buffer location"),
           ctx.error(align(opts, 3, 0), "INVALID_ARGUMENT", "18 with alignment 3")]
    model = models.mlp_model()
    src = ctx.keep(ffi.from_buffer(model))

    def compile_once(alignment: int) -> tuple[bytes, bytes]:
        opts = _compile_options(ctx, fn)
        ctx.ok(fn["SetInputModelFromBuffer"](opts, src, len(model)), "SetInputModelFromBuffer")
        out, out_size = ffi.new("void**"), ffi.new("size_t*")
        ctx.ok(fn["SetOutputModelBuffer"](opts, alloc, out, out_size), "SetOutputModelBuffer")
        name = ffi.new("char[]", b"weights.bin")
        ext, ext_size = ffi.new("void**"), ffi.new("size_t*")
        ctx.ok(to_buffer(opts, name, 0, alloc, ext, ext_size), "entry 17")
        name[0:11] = b"XXXXXXXXXXX"  # the options must hold their own copy
        if alignment:
            ctx.ok(align(opts, alignment, 0), "entry 18")
        if ext[0] != ffi.NULL or ext_size[0]:
            raise Fail("entry 17 wrote the buffer before CompileModel")
        ctx.ok(fn["CompileModel"](ctx.env, opts), "CompileModel")
        try:
            if out[0] == ffi.NULL or ext[0] == ffi.NULL or not ext_size[0]:
                raise Fail(f"CompileModel left an output unset (model {out_size[0]} bytes, "
                           f"external initializers {ext_size[0]} bytes)")
            return (bytes(ffi.buffer(out[0], out_size[0])),
                    bytes(ffi.buffer(ext[0], ext_size[0])))
        finally:
            for p in (out[0], ext[0]):
                if p != ffi.NULL:
                    ctx.ok(a.AllocatorFree(alloc, p), "AllocatorFree")

    plain_model, plain = compile_once(0)
    aligned_model, aligned = compile_once(4096)
    for m in (plain_model, aligned_model):
        if b"weights.bin" not in m or b"XXXXXXXXXXX" in m:
            raise Fail("the compiled model does not name the logical file given at the call")
    if len(aligned) <= len(plain):
        raise Fail(f"alignment 4096: {len(aligned)} bytes, unaligned {len(plain)}")
    x = [[(i * 7 % 11) / 11.0 - 0.4 for i in range(32)]]
    want = models.mlp_reference(x)[0]
    for m, blob in ((plain_model, plain), (aligned_model, aligned)):
        so = ctx.options()
        names = ffi.new("const char*[]", [ffi.new("char[]", b"weights.bin")])
        keep = ffi.new("char[]", blob)
        ctx.ok(a.AddExternalInitializersFromFilesInMemory(
            so, names, ffi.new("char*[]", [keep]), ffi.new("size_t[]", [len(blob)]), 1),
            "AddExternalInitializersFromFilesInMemory")
        sess = ctx.session(m, so)
        got = ctx.read_floats(ctx.run(sess, {"x": ctx.floats(x[0], [1, 32])}, ["y"])[0])
        if any(abs(g - w) > 1e-3 for g, w in zip(got, want)):
            raise Fail("the compiled model with its in-memory initializers computes wrong")
    return (f"{refused[0]}; {bad[0]}; {bad[1]}; {bad[2]}; {bad[3]}; {bad[4]}; compiled: "
            f"{len(plain)} bytes of initializers ({len(aligned)} aligned to 4096), written at "
            "CompileModel, the model names the copied file name; both run right")


@check("api32.compile-weightless-mode", "Entry 19 of the compile table (API 32) is "
       "SetWeightlessMode: on options it accepts OrtWeightlessSupport NONE, EXTERNAL_ONLY and "
       "ALL (0, 1, 2) and refuses any other value (3, the capability-only value, and unknown "
       "ones) with INVALID_ARGUMENT naming the valid values; the options still compile a CPU "
       "model afterwards (NONE).", WEIGHTLESS_MODE, slots=("GetCompileApi",))
def compile_weightless_mode(ctx: Ctx) -> str:
    fn = _compile_entries(ctx, 32, "entry 19")
    mode = fn["SetWeightlessMode"]
    opts = _compile_options(ctx, fn)
    refused = [ctx.error(mode(opts, v), "INVALID_ARGUMENT", f"19 with {v}") for v in (3, 7, -1)]
    if any("OrtWeightlessSupport" not in r for r in refused):
        raise Fail(f"refusals that do not name the valid values: {refused}")
    for v in (1, 2, 0):
        ctx.ok(mode(opts, v), f"entry 19 with {v}")
    model = models.add_model((2,))
    src = ctx.keep(ctx.ffi.from_buffer(model))
    ctx.ok(fn["SetInputModelFromBuffer"](opts, src, len(model)), "SetInputModelFromBuffer")
    out, out_size = ctx.ffi.new("void**"), ctx.ffi.new("size_t*")
    alloc = ctx.allocator
    ctx.ok(fn["SetOutputModelBuffer"](opts, alloc, out, out_size), "SetOutputModelBuffer")
    ctx.ok(fn["CompileModel"](ctx.env, opts), "CompileModel")
    ctx.ok(ctx.api.AllocatorFree(alloc, out[0]), "AllocatorFree")
    return f"{refused[0]} (also 7, -1); 0, 1, 2 accepted; compiled with NONE"
