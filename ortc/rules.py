"""The thread rules, exported: one record per ORT type, derived from the class declarations.

Each wrapper class declares ``send``/``sync`` and a one-line ``evidence`` summary, and each of
its methods is marked ``@shared`` or ``@exclusive`` with the C functions it calls
(:mod:`ortc.threads`). :func:`rules` turns those declarations into records; types that ortc
reads into plain Python values and never wraps (type infos, metadata, statuses, ...) come from
the declared table :data:`UNWRAPPED`, marked ``"wrapped": False``, so a binding author gets the
whole picture. What each verdict rests on, with its kind, is :mod:`ortc.evidence`; every
OrtApi slot's verdict is :mod:`ortc.slot_rules`. A C function is listed under the type it acts
on (its first handle parameter); a call that only takes a type as an argument is in that
type's ``used_by``. ``python -m ortc rules --format json|markdown|rust`` prints them;
``docs/THREAD_RULES.md`` is the Markdown form (a test fails when it is stale).

Execution providers decide whether one session may run concurrently: see
:data:`EP_CONCURRENT_RUN` and :func:`session_run_rule`.
"""

from __future__ import annotations

import re
from typing import Any

from . import evidence, slot_rules
from .process_rules import PICKLE_AND_FORK, markdown_lines as _pickle_and_fork_lines
from .providers import EP_CONCURRENT_RUN, _EXCLUSIVE_OPTIONS, session_run_rule
from .threads import registry

__all__ = ["rules", "session_run_rule", "EP_CONCURRENT_RUN", "UNWRAPPED", "render_json",
           "render_markdown"]

ORT = "https://github.com/microsoft/onnxruntime"

# -- declared facts the markers cannot carry ---------------------------------------------------

#: names of handle arguments in the markers' ``args`` -> the C type they stand for
ARG_TYPES: dict[str, str] = {
    "binding": "OrtIoBinding",
    "run_options": "OrtRunOptions",
    "options": "OrtSessionOptions",
    "env": "OrtEnv",
    "feeds": "OrtValue",
    "memory_info": "OrtMemoryInfo",
    "other": "OrtMemoryInfo",
    "adapter": "OrtLoraAdapter",
}

#: C functions that create an object and use other handles while doing so (constructors are
#: not methods of an existing object, so no marker carries them): (C functions, python entry
#: point, {argument C type: how it is used}). ortc enters the arguments' guards accordingly.
CONSTRUCTOR_USES: list[tuple[tuple[str, ...], str, dict[str, str]]] = [
    (("CreateSession", "CreateSessionFromArray"), "Session()",
     {"OrtEnv": "shared", "OrtSessionOptions": "shared"}),
    (("CreateIoBinding",), "IoBinding()", {"OrtSession": "shared"}),
    (("CreateAllocator",), "Session.allocator()", {"OrtMemoryInfo": "shared"}),
    (("CreateValue",), "Value.from_sequence() / Value.from_map()", {"OrtValue": "shared"}),
]

#: uses of a type as another call's argument, beyond what the markers say
ARGUMENT_USES: dict[str, dict[str, str]] = {
    # a Run input is read by ORT; ortc holds a shared lease on an input Value during the run.
    # A Value bound as an output is written by every run with the binding (ortc's binding
    # holds it exclusively while it is bound).
    "OrtValue": {"Run": "shared", "RunAsync": "shared", "BindInput": "shared",
                 "BindOutput": "exclusive", "RunWithBinding": "exclusive",
                 "AddInitializer": "shared", "AddExternalInitializers": "shared"},
}

#: methods whose kind depends on the instance (``exclusive_when``), explained
_CONDITIONS: dict[str, str] = {
    "_run_exclusive": ("exclusive (&mut self) for a session whose execution providers do not "
                       "all allow concurrent Run (for TensorRT: ORT before 1.17); see "
                       "Session.thread_rules() and the provider table"),
}

#: per-type notes that apply to some instances only, or say what ortc does about a hazard
TYPE_NOTES: dict[str, list[str]] = {
    "OrtAllocator": [
        "Sync holds for the default CPU allocator and session CPU arenas (checks "
        "thread.default-allocator, thread.session-allocator). An allocator for non-CPU memory "
        "is Send only, per instance: no device allocator has been tested from several threads "
        "(policy).",
        "A value allocated from a session allocator must not outlive the session "
        "(life.session-value-after-session-release crashes): ortc's Allocator keeps its "
        "session alive.",
    ],
    "OrtEnv": [
        "ortc never calls ReleaseEnv and Env.close() is a no-op: a Run after the last release "
        "crashes (env.run-after-last-release), so the env must outlive every session. ORT "
        "itself can create a new env after the last release (env.recreate-after-release); "
        "ortc does not need to.",
        "Env creation is safe from any thread: every creation returns the one env "
        "(env.concurrent-create-release).",
    ],
    "OrtValue": [
        "Arrays returned by Value.numpy() are views: writing through them is a write to the "
        "value (exclusive) that the guard cannot see.",
        "A Value bound as an output (IoBinding.bind_output) or passed as a preallocated output "
        "is written by every run that uses it: it is exclusive for as long as it is bound. "
        "ortc's binding holds it exclusively from bind_output until the output is rebound or "
        "cleared or the binding closes: another thread's use meanwhile is a conflict (the "
        "binding's own thread may read it between runs).",
    ],
    "OrtSessionOptions": [
        "Concurrent session creation with one options object is safe for plain options "
        "(thread.concurrent-create) but NOT when the options carry custom-op or EP-plugin "
        "domains: ORT marks adding those domains at creation not thread-safe. Create such "
        "sessions one at a time.",
    ],
    "OrtIoBinding": [
        "A binding shared by threads gives wrong results (thread.shared-binding); no crash has "
        "been recorded on CPU.",
    ],
    "OrtMemoryInfo": [
        "Memory infos returned by AllocatorGetInfo, GetTensorMemoryInfo and "
        "SessionGetMemoryInfoFor* are borrowed from their owner: never release them.",
    ],
    "OrtTypeInfo": [
        "CastTypeInfoTo* results are borrowed: never release them, never use them after the "
        "type info.",
    ],
}

#: ORT types that ortc does not wrap as handles (it copies them into plain Python values, uses
#: them only inside one call, or does not expose them). ``wrapped`` is False for every one;
#: their evidence records are in ortc/evidence.py.
UNWRAPPED: list[dict[str, Any]] = [
    {"type": "OrtTypeInfo", "python": "ortc.TypeInfo (a frozen dataclass copy)",
     "send": True, "sync": True,
     "methods": {"GetOnnxTypeFromTypeInfo": "shared", "CastTypeInfoToTensorInfo": "shared",
                 "CastTypeInfoToMapTypeInfo": "shared",
                 "CastTypeInfoToSequenceTypeInfo": "shared",
                 "CastTypeInfoToOptionalTypeInfo": "shared",
                 "GetDenotationFromTypeInfo": "shared", "ReleaseTypeInfo": "exclusive"},
     "parents": [],
     "evidence": "read-only; infos returned by session and value getters are independent "
                 "objects the caller owns; ortc converts and releases them at once "
                 "(ortc/typeinfo.py take_type_info)"},
    {"type": "OrtTensorTypeAndShapeInfo", "python": "ortc.TypeInfo (a frozen dataclass copy)",
     "send": True, "sync": True,
     "methods": {"GetTensorElementType": "shared", "GetDimensionsCount": "shared",
                 "GetDimensions": "shared", "GetSymbolicDimensions": "shared",
                 "GetTensorShapeElementCount": "shared", "SetTensorElementType": "exclusive",
                 "SetDimensions": "exclusive", "SetSymbolicDimensions": "exclusive",
                 "ReleaseTensorTypeAndShapeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": "getters read; setters only on infos the caller created; a "
                 "CastTypeInfoToTensorInfo result is borrowed from its type info"},
    {"type": "OrtMapTypeInfo", "python": "ortc.TypeInfo (kind MAP)", "send": True, "sync": True,
     "methods": {"GetMapKeyType": "shared", "GetMapValueType": "shared",
                 "ReleaseMapTypeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": "read-only; the cast result is borrowed from its OrtTypeInfo"},
    {"type": "OrtSequenceTypeInfo", "python": "ortc.TypeInfo (kind SEQUENCE)",
     "send": True, "sync": True,
     "methods": {"GetSequenceElementType": "shared", "ReleaseSequenceTypeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": "read-only; the cast result is borrowed from its OrtTypeInfo"},
    {"type": "OrtOptionalTypeInfo", "python": "ortc.TypeInfo (kind OPTIONAL)",
     "send": True, "sync": True,
     "methods": {"GetOptionalContainedTypeInfo": "shared"},
     "parents": ["OrtTypeInfo"],
     "evidence": "read-only; the cast result is borrowed from its OrtTypeInfo"},
    {"type": "OrtModelMetadata", "python": "ortc.ModelMetadata (a frozen dataclass copy)",
     "send": True, "sync": True,
     "methods": {"ModelMetadataGetProducerName": "shared", "ModelMetadataGetGraphName": "shared",
                 "ModelMetadataGetDomain": "shared", "ModelMetadataGetDescription": "shared",
                 "ModelMetadataGetGraphDescription": "shared",
                 "ModelMetadataGetVersion": "shared",
                 "ModelMetadataGetCustomMetadataMapKeys": "shared",
                 "ModelMetadataLookupCustomMetadataMap": "shared",
                 "ReleaseModelMetadata": "exclusive"},
     "parents": [],
     "evidence": "an independent copy of the session's metadata; getters allocate their "
                 "results with the allocator passed in"},
    {"type": "OrtStatus", "python": "ortc.OrtError subclasses (exceptions)",
     "send": True, "sync": True,
     "methods": {"GetErrorCode": "shared", "GetErrorMessage": "shared",
                 "ReleaseStatus": "exclusive"},
     "parents": [],
     "evidence": "an immutable code and message; ortc reads both and releases the status at "
                 "once in its one chokepoint (ortc/_status.py)"},
    {"type": "OrtKernelContext", "python": None, "send": False, "sync": False,
     "methods": {"KernelContext_GetInputCount": "shared", "KernelContext_GetOutputCount": "shared",
                 "KernelContext_GetInput": "shared", "KernelContext_GetGPUComputeStream": "shared",
                 "KernelContext_GetLogger": "shared", "KernelContext_GetAllocator": "shared",
                 "KernelContext_ParallelFor": "shared", "KernelContext_GetScratchBuffer": "shared",
                 "KernelContext_GetOutput": "exclusive"},
     "parents": [],
     "evidence": "valid only during one KernelCompute call on the calling thread; GetOutput "
                 "allocates outputs. Not Send: a scoped borrow that must not escape the "
                 "callback"},
    {"type": "OrtKernelInfo", "python": None, "send": False, "sync": True,
     "methods": {"KernelInfoGetAttribute_float": "shared", "KernelInfoGetAttribute_int64": "shared",
                 "KernelInfoGetAttribute_string": "shared", "KernelInfo_GetInputCount": "shared",
                 "KernelInfo_GetOutputCount": "shared", "KernelInfo_GetNodeName": "shared",
                 "CopyKernelInfo": "shared", "ReleaseKernelInfo": "exclusive"},
     "parents": [],
     "evidence": "valid only inside CreateKernel(V2); CopyKernelInfo makes a copy the kernel "
                 "may keep (then Send and Sync, read-only)"},
    {"type": "OrtCustomOpDomain", "python": None, "send": True, "sync": False,
     "methods": {"CustomOpDomain_Add": "exclusive", "AddCustomOpDomain": "shared",
                 "ReleaseCustomOpDomain": "exclusive"},
     "parents": [],
     "evidence": "mutated while being built; it must outlive every session using it; adding "
                 "domains at session creation is not thread-safe"},
    {"type": "OrtThreadingOptions", "python": None, "send": True, "sync": True,
     "methods": {"SetGlobalIntraOpNumThreads": "exclusive",
                 "SetGlobalInterOpNumThreads": "exclusive", "SetGlobalSpinControl": "exclusive",
                 "SetGlobalDenormalAsZero": "exclusive",
                 "CreateEnvWithGlobalThreadPools": "shared",
                 "ReleaseThreadingOptions": "exclusive"},
     "parents": [],
     "evidence": "copied by ORT at env creation; custom thread create/join functions must "
                 "stay valid for the env's life"},
    {"type": "OrtArenaCfg", "python": None, "send": True, "sync": True,
     "methods": {"CreateAndRegisterAllocator": "shared", "ReleaseArenaCfg": "exclusive"},
     "parents": [],
     "evidence": "immutable after creation; device provider options keep it by pointer, so "
                 "keep it alive for the session"},
    {"type": "OrtKeyValuePairs", "python": "dict (copied)", "send": True, "sync": True,
     "methods": {"GetKeyValue": "shared", "GetKeyValuePairs": "shared",
                 "AddKeyValuePair": "exclusive", "RemoveKeyValuePair": "exclusive",
                 "ReleaseKeyValuePairs": "exclusive"},
     "parents": [],
     "evidence": "a plain container: getters read, Add/Remove change it; ortc copies one into "
                 "a dict and releases it at once (ortc/_cstr.py read_key_values)"},
    {"type": "OrtPrepackedWeightsContainer", "python": None, "send": True, "sync": True,
     "methods": {"CreateSessionWithPrepackedWeightsContainer": "shared",
                 "CreateSessionFromArrayWithPrepackedWeightsContainer": "shared",
                 "ReleasePrepackedWeightsContainer": "exclusive"},
     "parents": [],
     "evidence": "designed to be shared by sessions, and released after them"},
    {"type": "OrtCUDAProviderOptionsV2", "python": None, "send": True, "sync": False,
     "methods": {"UpdateCUDAProviderOptions": "exclusive",
                 "SessionOptionsAppendExecutionProvider_CUDA_V2": "shared",
                 "ReleaseCUDAProviderOptions": "exclusive"},
     "parents": [],
     "evidence": "a plain struct filled by Update*; ortc creates, fills, appends and releases "
                 "it inside SessionOptions.append_execution_provider"},
    {"type": "OrtTensorRTProviderOptionsV2", "python": None, "send": True, "sync": False,
     "methods": {"UpdateTensorRTProviderOptions": "exclusive",
                 "SessionOptionsAppendExecutionProvider_TensorRT_V2": "shared",
                 "ReleaseTensorRTProviderOptions": "exclusive"},
     "parents": [],
     "evidence": "a plain struct filled by Update*; ortc creates, fills, appends and releases "
                 "it inside SessionOptions.append_execution_provider"},
    {"type": "OrtEpDevice", "python": None, "send": True, "sync": True,
     "methods": {"EpDevice_EpName": "shared", "EpDevice_EpVendor": "shared",
                 "EpDevice_EpMetadata": "shared", "EpDevice_EpOptions": "shared",
                 "EpDevice_Device": "shared", "EpDevice_MemoryInfo": "shared",
                 "EpDevice_GetMemoryCapacity": "shared"},
     "parents": ["OrtEnv"],
     "evidence": "owned by the env and only read; never released by the caller"},
    {"type": "OrtHardwareDevice", "python": None, "send": True, "sync": True,
     "methods": {"HardwareDevice_Type": "shared", "HardwareDevice_VendorId": "shared",
                 "HardwareDevice_Vendor": "shared", "HardwareDevice_DeviceId": "shared",
                 "HardwareDevice_Metadata": "shared"},
     "parents": ["OrtEnv"],
     "evidence": "owned by the env and only read; never released by the caller"},
    {"type": "OrtSyncStream", "python": None, "send": True, "sync": False,
     "methods": {"SyncStream_GetHandle": "shared", "RunOptionsSetSyncStream": "shared",
                 "ReleaseSyncStream": "exclusive"},
     "parents": ["OrtEpDevice"],
     "evidence": "a device stream (none exists on a CPU build); not Sync by policy"},
]

#: C callbacks: who calls them, from which threads (Rust: the closure bounds); their evidence
#: records are ortc.evidence.CALLBACK_EVIDENCE
CALLBACKS: list[dict[str, str]] = [
    {"type": "OrtLoggingFunction", "threads": "any: the calling thread of CreateSession/Run "
     "and ORT's own pool threads, concurrently, without a lock held by ORT",
     "rust": "Fn(...) + Send + Sync + 'static (kept until the env's last release)",
     "ortc": "ortc/env.py _log_from_ort: catches everything, never waits on a guard (inside "
             "threads.ort_callback), inert after interpreter exit",
     "evidence": "env.logger-caller-threads, thread.logger-pool-thread, "
                 "thread.logger-concurrent-runs"},
    {"type": "RunAsyncCallbackFn", "threads": "one of the session's intra-op pool threads",
     "rust": "FnOnce(...) + Send + 'static (inputs, outputs and user data kept until it runs)",
     "ortc": "Session.run_async where available",
     "evidence": "thread.run-async-callback-thread, thread.run-async-needs-pool "
                 "(needs intra_op_num_threads >= 2)"},
    {"type": "OrtThreadPoolCallbacksConfig", "threads": "any pool thread, concurrently",
     "rust": "Fn(...) + Send + Sync + 'static", "ortc": "not exposed",
     "evidence": "ORT's C API: the work callbacks may be invoked concurrently and must be "
                 "thread-safe"},
    {"type": "OrtCustomOp.KernelCompute", "threads": "any thread running the session, "
     "concurrently for the same kernel when runs overlap",
     "rust": "kernel state must be Sync (&self in compute)", "ortc": "not exposed",
     "evidence": "ORT's design: kernels are stateless, Compute may run concurrently"},
    {"type": "OrtAllocator (caller-implemented)", "threads": "any thread that allocates for "
     "ORT: runs, session creation, pool threads, concurrently",
     "rust": "Alloc/Free/Info: Fn + Send + Sync; the struct outlives its registration",
     "ortc": "not exposed", "evidence": "alloc.register-custom (ORT calls a registered "
                                        "allocator from its runs)"},
    {"type": "deleter of CreateTensorWithDataAndDeleterAsOrtValue", "threads": "the thread "
     "that releases the value's last reference (any thread)",
     "rust": "FnOnce + Send", "ortc": "not exposed",
     "evidence": "value.deleter-called"},
    {"type": "OrtCustomCreateThreadFn / OrtCustomJoinThreadFn", "threads": "the thread "
     "creating the session or env (create); the releasing thread (join)",
     "rust": "Fn + Send + Sync + 'static (valid for the pools' life)", "ortc": "not exposed",
     "evidence": "session.custom-thread-functions, env.global-custom-threads"},
    {"type": "EpSelectionDelegate", "threads": "the thread calling CreateSession, during it",
     "rust": "Fn + Send (state valid until creation returns)", "ortc": "not exposed",
     "evidence": "device.selection-delegate"},
]


# -- the records ---------------------------------------------------------------------------------

def _merge(methods: dict[str, str], name: str, kind: str) -> None:
    # a name used shared by one path and exclusive by another is exclusive
    if methods.get(name) != "exclusive":
        methods[name] = kind


def _release_function(c_type: str) -> str:
    return "Release" + c_type[len("Ort"):]


def _basis(c_type: str, send: bool, sync: bool) -> dict[str, list[str]]:
    """For the Send and Sync verdicts of a type: the kinds of the evidence backing each."""
    recs = evidence.for_type(c_type)
    out: dict[str, list[str]] = {}
    for verdict, value in (("send", send), ("sync", sync)):
        tag = verdict if value else "not-" + verdict
        out[verdict] = sorted({e.kind for e in recs if tag in e.backs})
    return out


def _summary(text: str, c_type: str) -> str:
    refs = [e.ref or e.kind for e in evidence.for_type(c_type)]
    return text + (f"; evidence: {', '.join(refs)}" if refs else "")


def rules() -> list[dict[str, Any]]:
    """One record per ORT type, sorted by type: ``type`` (the C name), ``python`` (the class,
    or what ortc turns the type into), ``send``, ``sync``, ``methods`` (Python method names and
    the C functions acting on this type -> ``"shared"`` or ``"exclusive"``), ``parents`` (the C
    types it must not outlive), ``evidence`` (a summary); also ``wrapped``, ``conditions``
    (methods whose kind depends on the instance), ``arguments`` (how a method uses the handles
    passed to it), ``used_by`` (calls of other objects that take this type as an argument, and
    how), ``c_functions`` (each Python method's C functions), ``notes``, ``evidence_records``
    (ortc/evidence.py, each of a stated kind), ``basis`` (the evidence kinds behind the Send
    and Sync verdicts) and ``caveats`` (a Send/Sync verdict that rests on no strong evidence,
    said plainly).

    >>> [r for r in ortc.rules() if r["type"] == "OrtIoBinding"][0]["sync"]
    False
    """
    # Every wrapper class registered itself when ortc's package __init__ imported it, which
    # happens before any ortc.* module (this one included) can be imported.
    # C functions of the declared (unwrapped) types: a wrapper method that calls one on a
    # temporary object (Session.metadata reads an OrtModelMetadata) does not make it its own.
    foreign = {c_fn for item in UNWRAPPED for c_fn in item["methods"]}
    records: dict[str, dict[str, Any]] = {}
    for name, rec in sorted(registry.items(), key=lambda kv: kv[1].c_type):
        methods: dict[str, str] = {}
        used_by: dict[str, str] = {}
        conditions: dict[str, str] = {}
        arguments: dict[str, dict[str, str]] = {}
        c_functions: dict[str, list[str]] = {}
        for meth, rule in sorted(rec.methods.items()):
            methods[meth] = rule.kind
            c_functions[meth] = list(rule.c_functions)
            for c_fn in rule.c_functions:
                if c_fn in foreign:
                    continue
                owner = slot_rules.receiver(c_fn)
                if owner == rec.c_type:
                    _merge(methods, c_fn, rule.kind)
                elif any(t == rec.c_type for t, _ in slot_rules.params(c_fn)):
                    _merge(used_by, c_fn, rule.kind)
                # else: a function that takes no handle of this type (GetAvailableProviders
                # behind Env.providers): the slot table has its verdict, not this type
            if rule.exclusive_when is not None:
                why = _CONDITIONS.get(rule.exclusive_when,
                                      f"exclusive when {rule.exclusive_when} is true")
                conditions[meth] = why
                for c_fn in rule.c_functions:
                    conditions[c_fn] = why
            if rule.args:
                arguments[meth] = dict(rule.args)
        # close() follows the guard's rule for release: exclusive, and last (Env.close() is a
        # no-op: ortc never releases the env)
        if rec.c_type != "OrtEnv":
            methods["close"] = "exclusive"
        methods[_release_function(rec.c_type)] = "exclusive"
        records[rec.c_type] = {
            "type": rec.c_type, "python": f"ortc.{name}", "wrapped": True, "send": rec.send,
            "sync": rec.sync, "methods": methods, "parents": list(rec.parents),
            "evidence": _summary(rec.evidence, rec.c_type), "conditions": conditions,
            "arguments": arguments, "used_by": used_by, "c_functions": c_functions,
            "notes": list(TYPE_NOTES.get(rec.c_type, [])),
        }
    for item in UNWRAPPED:
        own = {m: k for m, k in item["methods"].items()
               if slot_rules.receiver(m) == item["type"]}
        others = {m: k for m, k in item["methods"].items() if m not in own}
        records[item["type"]] = {**item, "wrapped": False, "methods": own,
                                 "parents": list(item["parents"]), "conditions": {},
                                 "evidence": _summary(item["evidence"], item["type"]),
                                 "arguments": {}, "used_by": others, "c_functions": {},
                                 "notes": list(TYPE_NOTES.get(item["type"], []))}
    # Handles passed as arguments: the call uses the argument's type too, but is not one of
    # its methods (Run is a session's function that reads its RunOptions).
    for name, rec in registry.items():
        for meth, rule in rec.methods.items():
            for arg, kind in rule.args:
                target = records.get(ARG_TYPES.get(arg, ""))
                if target is None:
                    continue
                _merge(target["used_by"], f"{name}.{meth}", kind)
                for c_fn in rule.c_functions:
                    _merge(target["used_by"], c_fn, kind)
    for c_fns, entry, uses in CONSTRUCTOR_USES:
        for c_type, kind in uses.items():
            target = records[c_type]
            _merge(target["used_by"], entry, kind)
            for c_fn in c_fns:
                _merge(target["methods" if slot_rules.receiver(c_fn) == c_type else "used_by"],
                       c_fn, kind)
    for c_type, uses in ARGUMENT_USES.items():
        for c_fn, kind in uses.items():
            _merge(records[c_type]["used_by"], c_fn, kind)
    out = []
    for c_type in sorted(records):
        r = records[c_type]
        for key in ("methods", "used_by"):
            r[key] = dict(sorted(r[key].items(), key=lambda kv: (kv[0][:1].isupper(), kv[0])))
        r["evidence_records"] = [e.to_json() for e in evidence.for_type(c_type)]
        r["basis"] = _basis(c_type, r["send"], r["sync"])
        r["caveats"] = dict(evidence.CAVEATS.get(c_type, {}))
        out.append(r)
    return out


# -- rendering -----------------------------------------------------------------------------------

def render_json() -> str:
    import json  # imported here: `import ortc` should not pay for the CLI's modules

    from .providers import MIN_CONCURRENT_VERSION

    return json.dumps({"types": rules(), "execution_providers": {
        p: {"concurrent_run": ok, "why": why,
            "since": ".".join(map(str, MIN_CONCURRENT_VERSION[p][0]))
            if p in MIN_CONCURRENT_VERSION else None,
            "evidence": [e.to_json() for e in evidence.EP_EVIDENCE.get(p, ())]}
        for p, (ok, why) in EP_CONCURRENT_RUN.items()},
        "callbacks": [{**cb, "evidence_records": [
            e.to_json() for e in evidence.CALLBACK_EVIDENCE.get(cb["type"], ())]}
            for cb in CALLBACKS],
        "counter_reports": evidence.COUNTER_REPORTS,
        "slots": [r.to_json() for r in slot_rules.table()],
        "slot_coverage": slot_rules.coverage(),
        "pickle_and_fork": PICKLE_AND_FORK}, indent=2) + "\n"


def _is_c(name: str) -> bool:
    return bool(name) and name[0].isupper() and "." not in name and "(" not in name


def _md(text: str) -> str:
    return text.replace("|", "\\|")


#: the Python enforcement policies, as a table (README.md shows it; tests check it is there)
POLICY_TABLE = """\
| situation | strict (default) | serialize | off |
|---|---|---|---|
| object with send=False used from a thread other than its creator | WrongThreadError | WrongThreadError | no check |
| object with sync=False entered while another thread is inside any of its methods | ConcurrentUseError | waits | no check |
| exclusive method while any other call is in flight, or a shared call during an exclusive one | ConcurrentUseError | waits | no check |
| close() while a call is in flight on another thread | ConcurrentUseError | waits | release deferred |
| a handle created before fork() used in the child | ForkedHandleError (a Session is rebuilt from its recipe instead) | same | same |
| a conflict inside an ORT callback (logger, RunAsync completion) | ConcurrentUseError | ConcurrentUseError (never waits) | no check |
"""


def _anchor(text: str) -> str:
    """GitHub's heading anchor for ``text``."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _link(ref: str, here: str = "docs") -> str:
    """A Markdown link for an evidence reference (from a page in ``here``)."""
    if ref.startswith("check:"):
        cid = ref[len("check:"):]
        return f"[`{cid}`](CONFORMANCE.md#{_anchor(cid)})"
    if ref.startswith("tests/"):
        path, _, name = ref.partition("::")
        return f"[`{ref}`](../{path})"
    if ref.startswith("http"):
        label = ref.split("://", 1)[1]
        label = re.sub(r"^github\.com/microsoft/onnxruntime/(issues|pull)/", r"ORT #", label)
        return f"[{label}]({ref})"
    return ref


def _ev_line(e: evidence.Evidence) -> str:
    where = [_link(e.ref)] if e.ref else []
    if e.outcome:
        where.append(f"{e.outcome} on {e.versions}")
    if e.changes_if:
        where.append(f"would change if {e.changes_if}")
    return f"**{e.kind}**: {e.says}" + (f" ({'; '.join(where)})" if where else "")


def _type_link(c_type: str) -> str:
    return f"[`{c_type}`](#{_anchor(c_type)})"


def _refs(*refs: str) -> str:
    return ", ".join(_link(r if ":" in r or r.startswith("tests/") else f"check:{r}")
                     for r in refs)


def _answers(recs: list[dict[str, Any]]) -> list[str]:
    both = [r["type"] for r in recs if r["send"] and r["sync"]]
    send_only = [r["type"] for r in recs if r["send"] and not r["sync"]]
    sync_only = [r["type"] for r in recs if not r["send"] and r["sync"]]
    neither = [r["type"] for r in recs if not r["send"] and not r["sync"]]
    gh = evidence.GH
    out = [
        "## Answers first",
        "",
        "Each answer names its evidence: a conformance check (its results on ORT "
        f"{evidence.ALL_VERSIONS} are in [CONFORMANCE.md](CONFORMANCE.md)), a test here, or ORT's "
        "own documentation and maintainers. The kinds are explained under "
        "[Evidence](#evidence-kinds).",
        "",
        "**Which types are Send (may move to another thread)?** All of them except the two "
        "that only live inside one ORT callback: " + ", ".join(_type_link(t) for t in neither
                                                               + sync_only) + ".",
        "",
        "**Which are Sync (shared functions may run on several threads at once)?** "
        + ", ".join(_type_link(t) for t in both + sync_only) + ". Not Sync: "
        + ", ".join(_type_link(t) for t in send_only + neither) + ", and an "
        "[`OrtAllocator`](#ortallocator) for non-CPU memory (per instance, by policy). "
        "Each type's section lists the kinds of evidence behind its two verdicts.",
        "",
        "**Which calls may overlap?**",
        "",
        "- `Run`, `RunAsync` and `RunWithBinding` on one session, from many threads: yes on "
        "CPU (" + _refs("thread.concurrent-run") + f"; [ORT's design]({evidence.DESIGN}); "
        f"[ORT #114]({gh}/issues/114)), per execution provider below. Each thread needs its own "
        "output values and its own IoBinding.",
        "- One input `OrtValue` fed to concurrent runs: yes (" + _refs(
            "thread.shared-input-value") + "). A value a run writes (a bound or preallocated "
        "output) is exclusive while bound: every run writes it (" + _refs(
            "binding.bound-output-written-by-every-run", "run.preallocated-output") + ").",
        "- `RunOptionsSetTerminate` from any thread while runs use the options: yes ("
        + _refs("thread.shared-run-options-terminate") + "). Other RunOptions setters: no.",
        "- `CreateSession` on several threads with one env and one SessionOptions: yes ("
        + _refs("thread.concurrent-create") + "), **except** when the options carry custom-op "
        f"or EP-plugin domains: ORT marks adding them [not thread-safe]"
        f"({evidence.ADD_CUSTOM_OP_DOMAINS}).",
        "- Env creation and release on several threads: yes, there is one env ("
        + _refs("env.concurrent-create-release", "env.same-pointer") + "). Env setters "
        "(log level, allocator and EP-library registration) while sessions run: not documented; "
        "exclusive by policy.",
        "- Alloc/Free on the default CPU allocator or a session's CPU arena from many threads: "
        "yes (" + _refs("thread.default-allocator", "thread.session-allocator") + ").",
        "- One `OrtIoBinding` on two threads: **no**, wrong results (" + _refs(
            "thread.shared-binding") + "; no crash recorded on CPU).",
        "- Any setter of SessionOptions, RunOptions or a Value while another call uses the "
        "object: no (exclusive).",
        "",
        "**Which lifetimes must hold?**",
        "",
        "- The env outlives every session: a Run after the last `ReleaseEnv` crashes ("
        + _refs("env.run-after-last-release") + "). ORT can create a new env after that ("
        + _refs("env.recreate-after-release") + ").",
        "- A session outlives its IoBindings (use after release crashes on 1.23 and later: "
        + _refs("life.binding-after-session-release") + "), its allocators and every value "
        "allocated from them (" + _refs("life.session-value-after-session-release") + ").",
        "- A caller's buffer outlives the tensor created over it and any binding it is bound "
        "to (" + _refs("value.user-memory-is-borrowed") + "); a LoRA adapter outlives the "
        "RunOptions it is active in; custom-op domains, a prepacked-weights container and "
        "initializers added with `AddInitializer` outlive the sessions created with them "
        f"([C API]({evidence.C_API})).",
        "- Borrowed objects are never released and never used after their owner: memory infos "
        "from `AllocatorGetInfo`/`GetTensorMemoryInfo`/`SessionGetMemoryInfoFor*`, "
        "`CastTypeInfoTo*` results, EP and hardware devices, a kernel context's inputs and "
        "outputs, the default allocator. The [slot table](#every-ortapi-slot) marks each "
        "borrowed result.",
        "- Not needed: SessionOptions may be released right after `CreateSession` ("
        + _refs("session.options-released-early") + "); model metadata is a copy ("
        + _refs("session.metadata-outlives-session") + "); CPU run outputs stay readable "
        "after their session (" + _refs("life.output-after-session-release") + ", not "
        "promised by ORT).",
        "",
        "**What differs by execution provider and by ORT version?**",
        "",
        "- Concurrent Run per provider: the [table below](#sessionrun-per-execution-provider). "
        "TensorRT allows it from ORT 1.17 on; ortc checks the loaded library's version. CUDA "
        "is exclusive by policy (no GPU run recorded here), DirectML by its documentation; "
        "a provider not listed is exclusive.",
        "- By ORT version: using an IoBinding after its session's release crashes from 1.23.2 "
        "on (earlier versions survive it: do not rely on that); "
        "`KernelContext_GetScratchBuffer` crashes on 1.19-1.22 (" + _refs(
            "kernel.scratch-buffer") + "); slots newer than the library do not exist (ortc "
        "raises `NotSupportedError`). Every other check in [CONFORMANCE.md](CONFORMANCE.md) "
        "has one outcome on all versions that have its slots.",
        "",
        "**Reports that seem to contradict these verdicts**, and why the verdicts stand:",
        "",
    ]
    for c in evidence.COUNTER_REPORTS:
        out.append(f"- {_link(c['url'])}: {c['reports']}. Verdict: {c['verdict']}. It stands "
                   f"because {c['why_it_stands']}. It would change with {c['would_change']}.")
    out += ["", "### Evidence kinds", "",
            "- **ort-doc**: ORT's documentation or C API reference says it (a URL).",
            "- **ort-maintainer**: an ORT maintainer said it in an issue or pull request.",
            "- **ort-behaviour**: ORT was seen doing it: a conformance check (with the outcome "
            "and the ORT versions in CONFORMANCE.md) or a test here that runs ORT itself.",
            "- **guard**: a test of ortc's own enforcement; it never backs a Send/Sync verdict "
            "alone.",
            "- **policy**: ortc's conservative choice, with its reason and what would change "
            "it.",
            "- **untested**: nothing here shows it; said so.", ""]
    return out


def render_markdown() -> str:
    recs = rules()
    lines = [
        "# ortc thread rules",
        "",
        "<!-- Generated by `python -m ortc rules --format markdown > docs/THREAD_RULES.md`;",
        "     tests/test_rules.py fails when this file is stale. Do not edit by hand. -->",
        "",
        "Which ONNX Runtime C API objects may move between threads (**Send**), which may be used",
        "from several threads at once (**Sync**), which functions may overlap (**shared**, Rust",
        "`&self`) or need sole access (**exclusive**, Rust `&mut self`), and what must outlive",
        "what. Wrapped types come from ortc's class declarations (`ortc/threads.py` markers,",
        "enforced at run time: see the README's thread-rules section); the others are declared",
        "in `ortc/rules.py`; the evidence is `ortc/evidence.py`; every OrtApi slot's verdict is",
        "`ortc/slot_rules.py`. `python -m ortc rules --format json|rust` prints the same data.",
        "",
    ]
    lines += _answers(recs)
    lines += ["## Summary", "",
              "| ORT type | ortc | Send | Sync | evidence kinds (Send / Sync) | must not outlive |",
              "|---|---|---|---|---|---|"]
    for r in recs:
        python = r["python"] or "not exposed"
        wrapped = "" if r["wrapped"] else " (not wrapped)"
        basis = " / ".join(", ".join(r["basis"][v]) or "none" for v in ("send", "sync"))
        lines.append(f"| {_type_link(r['type'])} | {_md(python)}{wrapped} | "
                     f"{'yes' if r['send'] else 'no'} | {'yes' if r['sync'] else 'no'} | "
                     f"{basis} | {', '.join(f'`{p}`' for p in r['parents']) or '-'} |")
    lines += ["", "## Session.run per execution provider", "",
              "Run is shared only when every provider of the session allows concurrent Run "
              "(with the loaded ORT version and the options given); otherwise it is exclusive "
              "for that session (`Session.thread_rules()` says which and why). A provider not "
              "listed is exclusive: undocumented, serialized by default.", "",
              "| provider | concurrent Run | from ORT | why | evidence |", "|---|---|---|---|---|"]
    from .providers import MIN_CONCURRENT_VERSION
    for p, (ok, why) in EP_CONCURRENT_RUN.items():
        gate = MIN_CONCURRENT_VERSION.get(p)
        since = f"{gate[0][0]}.{gate[0][1]}" if gate and ok else "-"
        evs = "; ".join(_ev_line(e) for e in evidence.EP_EVIDENCE.get(p, ()))
        lines.append(f"| {p} | {'yes' if ok else 'no (exclusive)'} | {since} | {_md(why)} | "
                     f"{_md(evs)} |")
    for p, opts in _EXCLUSIVE_OPTIONS.items():
        for key, why in opts.items():
            evs = "; ".join(_ev_line(e) for e in evidence.OPTION_EVIDENCE.get(key, ()))
            lines.append(f"| {p} with `{key}` | no (exclusive) | - | {_md(why)} | {_md(evs)} |")
    lines += ["", "## Types", ""]
    for r in recs:
        lines += [f"### {r['type']}", ""]
        python = r["python"] or "not exposed by ortc"
        declared = "" if r["wrapped"] else " (not wrapped: declared in ortc/rules.py)"
        lines.append(f"- ortc: {python}{declared}")
        send, sync = (", ".join(r["basis"][v]) or "no evidence" for v in ("send", "sync"))
        lines.append(f"- Send: {'yes' if r['send'] else 'no'} ({send}); "
                     f"Sync: {'yes' if r['sync'] else 'no'} ({sync})")
        for verdict, text in r["caveats"].items():
            lines.append(f"- caveat ({verdict}): {text}")
        if r["parents"]:
            lines.append(f"- must not outlive: {', '.join(r['parents'])}")
        for kind in ("shared", "exclusive"):
            c_fns = [m for m, k in r["methods"].items() if k == kind and _is_c(m)]
            py = [m for m, k in r["methods"].items() if k == kind and not _is_c(m)]
            if py:
                lines.append(f"- {kind} (Python): {', '.join(f'`{m}`' for m in py)}")
            if c_fns:
                lines.append(f"- {kind} (C): {', '.join(f'`{m}`' for m in c_fns)}")
        if r["used_by"]:
            lines.append("- used as an argument by: " + ", ".join(
                f"`{m}` ({k})" for m, k in r["used_by"].items()))
        for meth, why in r["conditions"].items():
            if not _is_c(meth):
                lines.append(f"- `{meth}`: {why}")
        for meth, args in r["arguments"].items():
            lines.append(f"- `{meth}` uses its arguments: "
                         + ", ".join(f"`{a}` {k}" for a, k in args.items()))
        for note in r["notes"]:
            lines.append(f"- note: {note}")
        lines.append(f"- in short: {_md(r['evidence'].split('; evidence: ')[0])}")
        recs_ev = evidence.for_type(r["type"])
        if recs_ev:
            lines.append("- evidence:")
            lines += [f"  - {_ev_line(e)}" + (f" [backs: {', '.join(e.backs)}]" if e.backs else "")
                      for e in recs_ev]
        lines.append("")
    lines += _pickle_and_fork_lines()
    lines += ["## Callbacks", "", "| callback | called from | Rust bound | ortc | evidence |",
              "|---|---|---|---|---|"]
    for cb in CALLBACKS:
        evs = "; ".join(_ev_line(e) for e in evidence.CALLBACK_EVIDENCE.get(cb["type"], ()))
        lines.append(f"| `{cb['type']}` | {_md(cb['threads'])} | {_md(cb['rust'])} | "
                     f"{_md(cb['ortc'])} | {_md(evs or cb['evidence'])} |")
    cov = slot_rules.coverage()
    lines += ["", "## Every OrtApi slot", "",
              f"Slots declared up to API {cov['upto']}: {cov['total']}; with a verdict: "
              f"**{cov['classified']}**; declared by hand: {cov['declared']}; derived from the "
              f"signature: {cov['from_signature']}; not thread-relevant: "
              f"{cov['not_thread_relevant']}. By scope: "
              + ", ".join(f"{k} {v}" for k, v in cov["by_scope"].items())
              + ". Slots citing each evidence kind: "
              + ", ".join(f"{k} {v}" for k, v in cov["by_evidence_kind"].items()) + ".",
              "",
              "A verdict derived from the signature reads a `const` handle as shared and a "
              "non-const one as exclusive (ORT documents no thread rule per function); "
              "\"declared\" verdicts override it where documentation or behaviour says more. "
              "`python -m ortc rules --format json` carries the same table (`slots`).",
              "",
              "| slot | API | verdict | must outlive / borrowed | note | evidence |",
              "|---|---|---|---|---|---|"]
    for sr in slot_rules.table():
        evs = "; ".join(_ev_line(e) if sr.source == "declared" or e.kind != "ort-doc"
                        else f"**{e.kind}**: signature" for e in sr.evidence)
        lines.append(f"| `{sr.slot}` | {sr.since} | {_md(sr.verdict())} | {_md(sr.outlives)} "
                     f"| {_md(sr.note)} | {_md(evs)} |")
    return "\n".join(lines) + "\n"
