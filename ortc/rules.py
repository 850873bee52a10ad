"""The thread rules, exported: one record per ORT type, derived from the class declarations.

Each wrapper class declares ``send``/``sync`` and an ``evidence`` string, and each of its
methods is marked ``@shared`` or ``@exclusive`` with the C functions it calls
(:mod:`ortc.threads`). :func:`rules` turns those declarations into records; types that ortc
reads into plain Python values and never wraps (type infos, metadata, statuses, ...) come from
the declared table :data:`UNWRAPPED`, marked ``"wrapped": False``, so a binding author gets the
whole picture. ``python -m ortc rules --format json|markdown|rust`` prints them;
``docs/THREAD_RULES.md`` is the Markdown form (a test fails when it is stale).

Execution providers decide whether one session may run concurrently: see
:data:`EP_CONCURRENT_RUN` and :func:`session_run_rule`.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from .providers import EP_CONCURRENT_RUN, _EXCLUSIVE_OPTIONS, session_run_rule
from .threads import registry

__all__ = ["rules", "session_run_rule", "EP_CONCURRENT_RUN", "UNWRAPPED", "render",
           "render_json", "render_markdown", "render_rust", "main", "main_rules"]

RESEARCH = "shared/research/thread-safety.md"
ORT = "https://github.com/microsoft/onnxruntime"
HEADER = "include/onnxruntime/core/session/onnxruntime_c_api.h"

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
    # a Run input is read by ORT; ortc holds a shared lease on an input Value during the run
    "OrtValue": {"Run": "shared", "RunAsync": "shared", "BindInput": "shared",
                 "BindOutput": "exclusive", "AddInitializer": "shared",
                 "AddExternalInitializers": "shared"},
}

#: tests in this repository that show a type's rules, added to its evidence
_T = "tests/test_threads.py::"
TEST_EVIDENCE: dict[str, list[str]] = {
    "OrtEnv": [f"{_T}test_session_works_after_everything_else_is_gone",
               f"{_T}test_exclusive_method_overlapping_a_call_inside_ort[Env.log_severity (set)]"],
    "OrtSession": [f"{_T}test_shared_run_stress_matches_serial",
                   f"{_T}test_slow_run_refuses_exclusive_calls",
                   f"{_T}test_exclusive_run_session",
                   f"{_T}test_session_close_while_running"],
    "OrtSessionOptions": [f"{_T}test_concurrent_session_creation_shared_options",
                          f"{_T}test_exclusive_method_overlapping_a_call_inside_ort"],
    "OrtRunOptions": [f"{_T}test_terminate_is_shared_with_running_runs",
                      f"{_T}test_exclusive_method_overlapping_a_call_inside_ort"],
    "OrtValue": [f"{_T}test_slow_run_refuses_exclusive_calls",
                 f"{_T}test_closing_a_run_input_value_waits_for_the_run"],
    "OrtIoBinding": [f"{_T}test_iobinding_shared_by_threads_is_refused",
                     f"{_T}test_iobinding_shared_by_threads_serialized",
                     f"{_T}test_iobinding_after_session_close_in_child"],
    "OrtMemoryInfo": [f"{_T}test_shared_methods_stress_matches_serial"],
    "OrtAllocator": [f"{_T}test_shared_methods_stress_matches_serial"],
}

#: methods whose kind depends on the instance (``exclusive_when``), explained
_CONDITIONS: dict[str, str] = {
    "_run_exclusive": ("exclusive (&mut self) for a session whose execution providers do not "
                       "all allow concurrent Run; see Session.thread_rules() and the provider "
                       "table"),
}

#: per-type notes that apply to some instances only
TYPE_NOTES: dict[str, list[str]] = {
    "OrtAllocator": [
        "Sync holds for the default CPU allocator (stateless, E7) and session CPU arenas (the "
        "arena has a mutex, E8). A device allocator (CUDA, ...) is undocumented: ortc makes "
        "every allocator for non-CPU memory Send only, per instance, until a GPU run tests "
        "it (issue 6 item 8).",
    ],
    "OrtEnv": [
        "ortc never calls ReleaseEnv: ORT cannot re-create its env after the last release, and "
        "a Run after it crashes (research E10). Env.close() is a no-op.",
    ],
    "OrtValue": [
        "Arrays returned by Value.numpy() are views: writing through them is a write to the "
        "value (exclusive) that the guard cannot see.",
    ],
}

_TS = f"{RESEARCH} §1"

#: ORT types that ortc does not wrap as handles (it copies them into plain Python values, uses
#: them only inside one call, or does not expose them). Declared here, by hand, from the
#: research; ``wrapped`` is False for every one of them.
UNWRAPPED: list[dict[str, Any]] = [
    {"type": "OrtTypeInfo", "python": "ortc.TypeInfo (a frozen dataclass copy)",
     "send": True, "sync": True,
     "methods": {"GetOnnxTypeFromTypeInfo": "shared", "CastTypeInfoToTensorInfo": "shared",
                 "CastTypeInfoToMapTypeInfo": "shared",
                 "CastTypeInfoToSequenceTypeInfo": "shared",
                 "CastTypeInfoToOptionalTypeInfo": "shared",
                 "GetDenotationFromTypeInfo": "shared", "ReleaseTypeInfo": "exclusive"},
     "parents": [],
     "evidence": f"every getter takes const OrtTypeInfo* ({HEADER}); infos returned by session "
                 f"and value getters are independent objects the caller owns ({_TS}); ortc "
                 f"converts and releases them at once (ortc/typeinfo.py take_type_info)"},
    {"type": "OrtTensorTypeAndShapeInfo", "python": "ortc.TypeInfo (a frozen dataclass copy)",
     "send": True, "sync": True,
     "methods": {"GetTensorElementType": "shared", "GetDimensionsCount": "shared",
                 "GetDimensions": "shared", "GetSymbolicDimensions": "shared",
                 "GetTensorShapeElementCount": "shared", "SetTensorElementType": "exclusive",
                 "SetDimensions": "exclusive", "SetSymbolicDimensions": "exclusive",
                 "ReleaseTensorTypeAndShapeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": f"getters take const pointers; setters only on infos you created; a "
                 f"CastTypeInfoToTensorInfo result is borrowed: 'valid until type_info is "
                 f"freed' ({HEADER}; {_TS})"},
    {"type": "OrtMapTypeInfo", "python": "ortc.TypeInfo (kind MAP)", "send": True, "sync": True,
     "methods": {"GetMapKeyType": "shared", "GetMapValueType": "shared",
                 "ReleaseMapTypeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": f"read-only; the cast result is borrowed from its OrtTypeInfo ({_TS})"},
    {"type": "OrtSequenceTypeInfo", "python": "ortc.TypeInfo (kind SEQUENCE)",
     "send": True, "sync": True,
     "methods": {"GetSequenceElementType": "shared", "ReleaseSequenceTypeInfo": "exclusive"},
     "parents": ["OrtTypeInfo"],
     "evidence": f"read-only; the cast result is borrowed from its OrtTypeInfo ({_TS})"},
    {"type": "OrtOptionalTypeInfo", "python": "ortc.TypeInfo (kind OPTIONAL)",
     "send": True, "sync": True,
     "methods": {"GetOptionalContainedTypeInfo": "shared"},
     "parents": ["OrtTypeInfo"],
     "evidence": f"read-only; the cast result is borrowed from its OrtTypeInfo ({_TS})"},
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
     "evidence": f"SessionGetModelMetadata returns an independent heap copy "
                 f"(new ModelMetadata(*p.second), onnxruntime/core/session/onnxruntime_c_api.cc); "
                 f"getters allocate their results with the allocator passed in ({_TS})"},
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
     "evidence": f"valid only during one KernelCompute call on the calling thread; "
                 f"KernelContext_GetSyncStream: 'Do not retain or dereference it after the run' "
                 f"({HEADER}); GetOutput allocates outputs ({RESEARCH} §3.11). Not Send: a scoped "
                 f"borrow that must not escape the callback"},
    {"type": "OrtKernelInfo", "python": None, "send": False, "sync": True,
     "methods": {"KernelInfoGetAttribute_float": "shared", "KernelInfoGetAttribute_int64": "shared",
                 "KernelInfoGetAttribute_string": "shared", "KernelInfo_GetInputCount": "shared",
                 "KernelInfo_GetOutputCount": "shared", "KernelInfo_GetNodeName": "shared",
                 "CopyKernelInfo": "shared", "ReleaseKernelInfo": "exclusive"},
     "parents": [],
     "evidence": f"valid only inside CreateKernel(V2); CopyKernelInfo makes a copy the kernel "
                 f"may keep (then Send and Sync, read-only) ({RESEARCH} §3.11)"},
    {"type": "OrtCustomOpDomain", "python": None, "send": True, "sync": False,
     "methods": {"CustomOpDomain_Add": "exclusive", "AddCustomOpDomain": "shared",
                 "ReleaseCustomOpDomain": "exclusive"},
     "parents": [],
     "evidence": f"mutated while being built; 'must not be deleted until all sessions using it "
                 f"are released' ({HEADER}); AddCustomOpDomains 'is not thread safe' "
                 f"(inference_session.h; ORT #27089, #20089, #22663). Sessions must not outlive "
                 f"it"},
    {"type": "OrtThreadingOptions", "python": None, "send": True, "sync": True,
     "methods": {"SetGlobalIntraOpNumThreads": "exclusive",
                 "SetGlobalInterOpNumThreads": "exclusive", "SetGlobalSpinControl": "exclusive",
                 "SetGlobalDenormalAsZero": "exclusive",
                 "CreateEnvWithGlobalThreadPools": "shared",
                 "ReleaseThreadingOptions": "exclusive"},
     "parents": [],
     "evidence": f"copied by ORT at env creation ({HEADER}); custom thread create/join "
                 f"functions must stay valid for the env's life ({_TS})"},
    {"type": "OrtArenaCfg", "python": None, "send": True, "sync": True,
     "methods": {"CreateAndRegisterAllocator": "shared", "ReleaseArenaCfg": "exclusive"},
     "parents": [],
     "evidence": f"immutable after creation; kept as a raw pointer in CUDA/ROCm provider "
                 f"options (default_memory_arena_cfg), so keep it alive for the session "
                 f"({_TS})"},
    {"type": "OrtKeyValuePairs", "python": "dict (copied)", "send": True, "sync": True,
     "methods": {"GetKeyValue": "shared", "GetKeyValuePairs": "shared",
                 "AddKeyValuePair": "exclusive", "RemoveKeyValuePair": "exclusive",
                 "ReleaseKeyValuePairs": "exclusive"},
     "parents": [],
     "evidence": f"a plain container without locks: getters take const OrtKeyValuePairs*, "
                 f"Add/Remove mutate ({HEADER}, inferred); ortc copies one into a dict and "
                 f"releases it at once (ortc/_cstr.py read_key_values)"},
    {"type": "OrtPrepackedWeightsContainer", "python": None, "send": True, "sync": True,
     "methods": {"CreateSessionWithPrepackedWeightsContainer": "shared",
                 "CreateSessionFromArrayWithPrepackedWeightsContainer": "shared",
                 "ReleasePrepackedWeightsContainer": "exclusive"},
     "parents": [],
     "evidence": f"designed to be shared by sessions; 'must not be released until the sessions "
                 f"using it are released' ({HEADER}); concurrent creation untested ({_TS})"},
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
]

#: C callbacks: who calls them, from which threads (Rust: the closure bounds)
CALLBACKS: list[dict[str, str]] = [
    {"type": "OrtLoggingFunction", "threads": "any: the calling thread of CreateSession/Run "
     "and ORT's own pool threads, concurrently, without a lock held by ORT",
     "rust": "Fn(...) + Send + Sync + 'static (kept until the env's last release)",
     "ortc": "ortc/env.py _log_from_ort: catches everything, never waits on a guard (inside "
             "threads.ort_callback), inert after interpreter exit",
     "evidence": f"UserLoggingSink::SendImpl calls the function directly; research E4, E4b; "
                 f"tests/test_threads.py::test_log_callback_never_waits_on_a_guard"},
    {"type": "RunAsyncCallbackFn", "threads": "one of the session's intra-op pool threads",
     "rust": "FnOnce(...) + Send + 'static (inputs, outputs and user data kept until it runs)",
     "ortc": "Session.run_async where available",
     "evidence": f"{HEADER}: 'Run the model asynchronously in a thread owned by intra op "
                 f"thread pool'; research E5, E5b (needs intra_op_num_threads >= 2)"},
    {"type": "OrtThreadPoolCallbacksConfig", "threads": "any pool thread, concurrently",
     "rust": "Fn(...) + Send + Sync + 'static", "ortc": "not exposed",
     "evidence": f"{HEADER}: 'Subject to concurrent invocations from multiple threads and must "
                 f"be thread-safe'"},
    {"type": "OrtCustomOp.KernelCompute", "threads": "any thread running the session, "
     "concurrently for the same kernel when runs overlap",
     "rust": "kernel state must be Sync (&self in compute)", "ortc": "not exposed",
     "evidence": f"ORT design doc: Compute() is const, kernels are stateless ({RESEARCH} §3.11)"},
]


# -- the records ---------------------------------------------------------------------------------

def _merge(methods: dict[str, str], name: str, kind: str) -> None:
    # a name used shared by one path and exclusive by another is exclusive
    if methods.get(name) != "exclusive":
        methods[name] = kind


def _release_function(c_type: str) -> str:
    return "Release" + c_type[len("Ort"):]


def rules() -> list[dict[str, Any]]:
    """One record per ORT type, sorted by type: ``type`` (the C name), ``python`` (the class,
    or what ortc turns the type into), ``send``, ``sync``, ``methods`` (Python method names and
    C function names -> ``"shared"`` or ``"exclusive"``), ``parents`` (the C types it must not
    outlive), ``evidence``; also ``wrapped``, ``conditions`` (methods whose kind depends on the
    instance), ``arguments`` (how a method uses the handles passed to it) and ``notes``.

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
        conditions: dict[str, str] = {}
        arguments: dict[str, dict[str, str]] = {}
        for meth, rule in sorted(rec.methods.items()):
            methods[meth] = rule.kind
            for c_fn in rule.c_functions:
                if c_fn not in foreign:
                    _merge(methods, c_fn, rule.kind)
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
        evidence = rec.evidence
        tests = TEST_EVIDENCE.get(rec.c_type, [])
        if tests:
            evidence += "; tests: " + ", ".join(tests)
        records[rec.c_type] = {
            "type": rec.c_type, "python": f"ortc.{name}", "wrapped": True, "send": rec.send,
            "sync": rec.sync, "methods": methods, "parents": list(rec.parents),
            "evidence": evidence, "conditions": conditions, "arguments": arguments,
            "notes": list(TYPE_NOTES.get(rec.c_type, [])),
        }
    for item in UNWRAPPED:
        records[item["type"]] = {**item, "wrapped": False, "methods": dict(item["methods"]),
                                 "parents": list(item["parents"]), "conditions": {},
                                 "arguments": {},
                                 "notes": list(TYPE_NOTES.get(item["type"], []))}
    # Handles passed as arguments: the C function counts on the argument's type too.
    for name, rec in registry.items():
        for meth, rule in rec.methods.items():
            for arg, kind in rule.args:
                target = records.get(ARG_TYPES.get(arg, ""))
                if target is None:
                    continue
                _merge(target["methods"], f"{name}.{meth}", kind)
                for c_fn in rule.c_functions:
                    _merge(target["methods"], c_fn, kind)
    for c_fns, entry, uses in CONSTRUCTOR_USES:
        for c_type, kind in uses.items():
            target = records[c_type]
            _merge(target["methods"], entry, kind)
            for c_fn in c_fns:
                _merge(target["methods"], c_fn, kind)
    for c_type, uses in ARGUMENT_USES.items():
        for c_fn, kind in uses.items():
            _merge(records[c_type]["methods"], c_fn, kind)
    out = []
    for c_type in sorted(records):
        r = records[c_type]
        r["methods"] = dict(sorted(r["methods"].items(), key=lambda kv: (kv[0][:1].isupper(),
                                                                         kv[0])))
        out.append(r)
    return out


# -- rendering -----------------------------------------------------------------------------------

def render_json() -> str:
    import json  # imported here: `import ortc` should not pay for the CLI's modules

    return json.dumps({"types": rules(), "execution_providers": {
        p: {"concurrent_run": ok, "why": why} for p, (ok, why) in EP_CONCURRENT_RUN.items()},
        "callbacks": CALLBACKS}, indent=2) + "\n"


def _is_c(name: str) -> bool:
    return bool(name) and name[0].isupper() and "." not in name and "(" not in name


def _md(text: str) -> str:
    return text.replace("|", "\\|")


_POLICY_TABLE = """\
| situation | strict (default) | serialize | off |
|---|---|---|---|
| object with send=False used from a thread other than its creator | WrongThreadError | WrongThreadError | no check |
| object with sync=False entered while another thread is inside any of its methods | ConcurrentUseError | waits | no check |
| exclusive method while any other call is in flight, or a shared call during an exclusive one | ConcurrentUseError | waits | no check |
| close() while a call is in flight on another thread | ConcurrentUseError | waits | release deferred |
| a handle created before fork() used in the child | ForkedHandleError | same | same |
| a conflict inside an ORT callback (logger, RunAsync completion) | ConcurrentUseError | ConcurrentUseError (never waits) | no check |
"""


def render_markdown() -> str:
    recs = rules()
    lines = [
        "# ortc thread rules",
        "",
        "<!-- Generated by `python -m ortc rules --format markdown > docs/THREAD_RULES.md`;",
        "     tests/test_rules.py fails when this file is stale. Do not edit by hand. -->",
        "",
        "Which ONNX Runtime C API objects may move between threads (**Send**), which may be used",
        "from several threads at once (**Sync**), and which functions may overlap (**shared**,",
        "Rust `&self`) or need sole access (**exclusive**, Rust `&mut self`). Wrapped types are",
        "derived from ortc's class declarations (`ortc/threads.py` markers) and enforced at run",
        "time; the others are declared in `ortc/rules.py` from the research",
        f"(`{RESEARCH}`). `python -m ortc rules --format json|rust` prints the same data.",
        "",
        "## Enforcement",
        "",
        "Policy: `ortc.set_thread_checks('strict'|'serialize'|'off')` or `ORTC_THREAD_CHECKS`.",
        "The same thread re-entering an object (a callback) is never a conflict. Handles passed",
        "as arguments count too (a run holds its RunOptions and input Values shared, its",
        "IoBinding exclusive; a session being created holds its SessionOptions and the Env).",
        "",
        _POLICY_TABLE,
        "## Summary",
        "",
        "| ORT type | ortc | Send | Sync | must not outlive |",
        "|---|---|---|---|---|",
    ]
    for r in recs:
        python = r["python"] or "not exposed"
        wrapped = "" if r["wrapped"] else " (not wrapped)"
        lines.append(f"| `{r['type']}` | {_md(python)}{wrapped} | {'yes' if r['send'] else 'no'} "
                     f"| {'yes' if r['sync'] else 'no'} | "
                     f"{', '.join(f'`{p}`' for p in r['parents']) or '-'} |")
    lines += ["", "## Session.run per execution provider", "",
              "Run is shared only when every provider of the session allows concurrent Run; "
              "otherwise it is exclusive for that session (`Session.thread_rules()` says which "
              "and why). A provider not listed is exclusive: undocumented, serialized by "
              "default.", "",
              "| provider | concurrent Run | why |", "|---|---|---|"]
    for p, (ok, why) in EP_CONCURRENT_RUN.items():
        lines.append(f"| {p} | {'yes' if ok else 'no (exclusive)'} | {_md(why)} |")
    for p, opts in _EXCLUSIVE_OPTIONS.items():
        for key, why in opts.items():
            lines.append(f"| {p} with `{key}` | no (exclusive) | {_md(why)} |")
    lines += ["", "## Types", ""]
    for r in recs:
        lines += [f"### {r['type']}", ""]
        python = r["python"] or "not exposed by ortc"
        lines.append(f"- ortc: {python}{'' if r['wrapped'] else ' (not wrapped: declared in ortc/rules.py)'}")
        lines.append(f"- Send: {'yes' if r['send'] else 'no'}; Sync: {'yes' if r['sync'] else 'no'}")
        if r["parents"]:
            lines.append(f"- must not outlive: {', '.join(r['parents'])}")
        for kind in ("shared", "exclusive"):
            c_fns = [m for m, k in r["methods"].items() if k == kind and _is_c(m)]
            py = [m for m, k in r["methods"].items() if k == kind and not _is_c(m)]
            if py:
                lines.append(f"- {kind} (Python): {', '.join(f'`{m}`' for m in py)}")
            if c_fns:
                lines.append(f"- {kind} (C): {', '.join(f'`{m}`' for m in c_fns)}")
        for meth, why in r["conditions"].items():
            if not _is_c(meth):
                lines.append(f"- `{meth}`: {why}")
        for meth, args in r["arguments"].items():
            lines.append(f"- `{meth}` uses its arguments: "
                         + ", ".join(f"`{a}` {k}" for a, k in args.items()))
        for note in r["notes"]:
            lines.append(f"- note: {note}")
        lines += [f"- evidence: {r['evidence']}", ""]
    lines += ["## Callbacks", "", "| callback | called from | Rust bound | ortc | evidence |",
              "|---|---|---|---|---|"]
    for cb in CALLBACKS:
        lines.append(f"| `{cb['type']}` | {_md(cb['threads'])} | {_md(cb['rust'])} | "
                     f"{_md(cb['ortc'])} | {_md(cb['evidence'])} |")
    return "\n".join(lines) + "\n"


def _snake(c_name: str) -> str:
    parts = []
    for part in c_name.split("_"):
        part = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", part)
        parts.append(re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", part).lower())
    return "_".join(p for p in parts if p)


def _rust_name(c_type: str) -> str:
    return c_type[len("Ort"):] if c_type.startswith("Ort") else c_type


def _comment(text: str, indent: str = "") -> list[str]:
    import textwrap

    return [f"{indent}// {line}" for line in textwrap.wrap(text, 96 - len(indent))]


def render_rust() -> str:
    """A Rust prototype: a wrapper struct per type, ``unsafe impl Send/Sync`` with the reason,
    and a trait whose methods show each C function's receiver (``&self`` shared,
    ``&mut self`` exclusive; the release function is ``Drop``)."""
    out = [
        "// Generated by `python -m ortc rules --format rust`: a prototype of ONNX Runtime's",
        "// thread rules for a Rust binding. Each wrapper holds a NonNull (so it is !Send and",
        "// !Sync unless a reason below says otherwise); each trait method is one C function",
        "// with the receiver its rule needs: &self (shared) or &mut self (exclusive).",
        "#![allow(dead_code, non_camel_case_types)]",
        "use std::ptr::NonNull;",
        "",
    ]
    for r in rules():
        c_type, name = r["type"], _rust_name(r["type"])
        out.append(f"#[repr(C)] pub struct {c_type} {{ _private: [u8; 0] }}")
        doc = f"{c_type}: ortc {r['python'] or 'does not expose it'}"
        if r["parents"]:
            doc += f"; must not outlive {', '.join(r['parents'])}"
        out += [f"/// {doc}", f"pub struct {name} {{ ptr: NonNull<{c_type}> }}"]
        reason = r["evidence"]
        if r["send"]:
            out += _comment(f"Send: {reason}")
            out.append(f"unsafe impl Send for {name} {{}}")
        else:
            out += _comment(f"not Send (NonNull keeps it !Send): {reason}")
        if r["sync"]:
            out += _comment("; ".join(["Sync: shared functions below take &self and may "
                                       "overlap", *r["notes"]]))
            out.append(f"unsafe impl Sync for {name} {{}}")
        else:
            out += _comment("not Sync: every call needs sole access (&mut self)")
        releases = [m for m in r["methods"] if _is_c(m) and m.startswith("Release")]
        release = releases[0] if releases else ""
        out.append(f"pub trait {name}Fns {{")
        for meth, kind in r["methods"].items():
            if not _is_c(meth) or meth == release:
                continue
            receiver = "&self" if kind == "shared" else "&mut self"
            cond = r["conditions"].get(meth)
            if cond:
                out += _comment(f"{meth}: {cond}", "    ")
            out.append(f"    fn {_snake(meth)}({receiver}); // OrtApi::{meth}: {kind}")
        out.append("}")
        if release in r["methods"]:
            if c_type == "OrtEnv":
                out += _comment(f"{release}: never called by ortc (see the notes)", "")
            out.append(f"impl Drop for {name} {{ fn drop(&mut self) {{ /* OrtApi::{release} */ "
                       f"}} }}")
        out.append("")
    return "\n".join(out)


def render(fmt: str) -> str:
    """The rules as ``json``, ``markdown`` or ``rust`` text."""
    if fmt == "json":
        return render_json()
    if fmt in ("markdown", "md"):
        return render_markdown()
    if fmt == "rust":
        return render_rust()
    raise ValueError(f"unknown format {fmt!r}: expected json, markdown or rust")


def main(argv: list[str] | None = None) -> int:
    """``python -m ortc rules [--format json|markdown|rust] [--output FILE]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m ortc rules",
                                     description="Print ORT's thread rules as ortc enforces them.")
    parser.add_argument("--format", choices=("json", "markdown", "rust"), default="markdown")
    parser.add_argument("--output", "-o", help="write to this file instead of stdout")
    args = parser.parse_args(argv)
    text = render(args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


main_rules = main
