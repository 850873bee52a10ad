"""The thread rules as records: one per ORT type, derived from the class declarations.

Each wrapper class declares ``send``/``sync`` and a one-line ``evidence`` summary, and each of
its methods is marked ``@shared`` or ``@exclusive`` with the C functions it calls
(:mod:`ortc.threads`). :func:`rules` (``ortc.rules()``) turns those declarations into records;
types that ortc reads into plain Python values and never wraps (type infos, metadata, statuses,
...) come from the declared table :data:`UNWRAPPED`, marked ``"wrapped": False``, so a binding
author gets the whole picture. What each verdict rests on, with its kind, is
:mod:`ortc.evidence`; every OrtApi slot's verdict is :mod:`ortc.slot_rules`. A C function is
listed under the type it acts on (its first handle parameter); a call that only takes a type as
an argument is in that type's ``used_by``. :mod:`ortc.rules_render` writes the records as JSON
and Markdown (``docs/THREAD_RULES.md``, a test fails when it is stale); ``python -m ortc rules
--format json|markdown|rust`` prints them.

Execution providers decide whether one session may run concurrently: see
:data:`ortc.providers.EP_CONCURRENT_RUN` and :func:`ortc.providers.session_run_rule`.
"""

from __future__ import annotations

from typing import Any

from . import binding as _binding  # noqa: F401
from . import lora as _lora  # noqa: F401
from . import session_options as _session_options  # noqa: F401
from . import value as _value  # noqa: F401
from . import evidence, slot_rules
from .threads import registry

# A handle class registers its rules when its module is imported, and `import ortc` leaves some
# of those modules for first use (binding, lora, session_options, value): the table imports
# them, or it would miss their rules.

__all__ = ["rules", "transfers", "UNWRAPPED", "CALLBACKS", "FUNCTION_TABLES", "NO_ROW",
           "TRANSFERS", "FAILURE_OWNERS"]

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
    "data": "OrtValue",
    "value": "OrtValue",
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
                 "AddInitializer": "shared", "AddExternalInitializers": "shared",
                 # a view of the tensor's device record, read without a copy
                 "OrtEpApi.Value_GetMemoryDevice": "shared"},
    # an EP device keeps the memory infos its factory adds (by pointer); the memory device is a
    # view of the memory info's own record
    "OrtMemoryInfo": {"OrtEpApi.EpDevice_AddAllocatorInfo": "shared",
                      "OrtEpApi.MemoryInfo_GetMemoryDevice": "shared"},
    # a session made from a model-editor model reads the env and the options as
    # CreateSession does (ortc itself does not call it; the OrtModel row has the model's use)
    # the compile and model-editor tables read the env and the options the same way; a compile
    # options object keeps the env by reference and copies the session options
    "OrtEnv": {"OrtModelEditorApi.CreateSessionFromModel": "shared",
               "OrtModelEditorApi.CreateModelEditorSession": "shared",
               "OrtModelEditorApi.CreateModelEditorSessionFromArray": "shared",
               "OrtCompileApi.CreateModelCompilationOptionsFromSessionOptions": "shared",
               "OrtCompileApi.CompileModel": "shared",
               "OrtModelPackageApi.CreateModelPackageOptionsFromSessionOptions": "shared",
               "OrtModelPackageApi.CreateSession": "shared"},
    "OrtSessionOptions": {"OrtModelEditorApi.CreateSessionFromModel": "shared",
                          "OrtModelEditorApi.CreateModelEditorSession": "shared",
                          "OrtModelEditorApi.CreateModelEditorSessionFromArray": "shared",
                          "OrtModelEditorApi.FinalizeModelEditorSession": "shared",
                          "OrtCompileApi.CreateModelCompilationOptionsFromSessionOptions":
                              "shared",
                          # a plugin EP copies the EP-context callbacks out of the options
                          "OrtEpApi.SessionOptionsGetEpContextConfig": "shared",
                          # ... and returns the weightless source buffer the options were given
                          "OrtEpApi.SessionOptionsGetWeightlessSourceModelBuffer": "shared",
                          # a model package reads the env and options as CreateSession does
                          "OrtModelPackageApi.CreateModelPackageOptionsFromSessionOptions":
                              "shared",
                          "OrtModelPackageApi.CreateSession": "shared"},
    # a model-editor session is built (applied to, finalized) before it runs, then only read
    "OrtSession": {"OrtModelEditorApi.SessionGetOpsetForDomain": "shared",
                   "OrtModelEditorApi.ApplyModelToModelEditorSession": "exclusive",
                   "OrtModelEditorApi.FinalizeModelEditorSession": "exclusive"},
    # a value info's initializer value is loaded into its graph on first use, without a lock
    # (the slot table's evidence): the call uses the owning graph exclusively
    "OrtGraph": {"ValueInfo_GetInitializerValue": "exclusive"},
    # runs with RunOptions that carry a stream use that stream (not Sync)
    "OrtSyncStream": {"Run": "exclusive", "RunAsync": "exclusive"},
    # a non-NULL allocator given to CreateLoraAdapter is kept (not owned) by the adapter; so are
    # the allocators compile options allocate the compiled model's buffer and (API 31) its
    # external initializers' buffer with
    "OrtAllocator": {"CreateLoraAdapter": "shared", "CreateLoraAdapterFromArray": "shared",
                     "OrtCompileApi.ModelCompilationOptions_SetOutputModelBuffer": "shared",
                     "OrtCompileApi.ModelCompilationOptions_"
                     "SetOutputModelExternalInitializersBuffer": "shared"},
}

#: who owns a taken argument after the call fails (a transfer's ``failure_owner``)
FAILURE_OWNERS: dict[str, str] = {
    "caller": "still the caller's: a failed call takes nothing",
    "per-entry": "an array entry the call set to NULL was taken; one left non-NULL is still the "
                 "caller's (to release once)",
    "unstated": "not settled for every ORT release: never release it after a failed call (a "
                "leak is the safe side of a double free)",
}

#: calls that take an argument over: from the call on, ORT releases it and the caller must never
#: release it again (in Rust: the wrapper is moved in). ``function`` as the rows name it
#: (``Table.Function`` for a sub-table), ``argument`` the C type taken, ``parameter`` its C
#: parameter name, ``on_success`` what ORT does with it, ``failure_owner`` one of
#: FAILURE_OWNERS and ``on_failure`` why. Evidence: ortc.evidence.TRANSFER_EVIDENCE.
TRANSFERS: list[dict[str, str]] = [
    {"function": "OrtModelEditorApi.CreateNode", "argument": "OrtOpAttr",
     "parameter": "attributes",
     "on_success": "copies each attribute into the node, releases the caller's and sets its "
                   "array entry to NULL: releasing it again is a double free that crashes",
     "failure_owner": "per-entry",
     "on_failure": "not documented; the entries are taken one after another, each released "
                   "and set to NULL, so a failed call leaves the entries it had not reached "
                   "non-NULL and the caller's"},
    {"function": "OrtModelEditorApi.SetGraphInputs", "argument": "OrtValueInfo",
     "parameter": "inputs",
     "on_success": "the graph owns every value info and sets each array entry to NULL",
     "failure_owner": "per-entry",
     "on_failure": "newer releases document all or nothing (none taken, the previous inputs "
                   "kept); older sources take the entries one by one, setting each to NULL: "
                   "the per-entry rule reads both right (out of memory in the middle aside)"},
    {"function": "OrtModelEditorApi.SetGraphOutputs", "argument": "OrtValueInfo",
     "parameter": "outputs",
     "on_success": "the graph owns every value info and sets each array entry to NULL",
     "failure_owner": "per-entry",
     "on_failure": "as SetGraphInputs"},
    {"function": "OrtModelEditorApi.AddNodeToGraph", "argument": "OrtNode", "parameter": "node",
     "on_success": "the graph owns the node: never release it",
     "failure_owner": "unstated",
     "on_failure": "the C reference does not say. Checked: from 1.27.0 a node the graph "
                   "already holds is refused and the refusal takes nothing; 1.22.1-1.26.0 take "
                   "such a node twice and crash when the graph is released (never add a node "
                   "twice). Other failures: the source cited returns every error before taking "
                   "the node, older ones could fail after the graph had it"},
    {"function": "OrtModelEditorApi.AddGraphToModel", "argument": "OrtGraph",
     "parameter": "graph",
     "on_success": "the model owns the graph: never release it",
     "failure_owner": "unstated",
     "on_failure": "the C reference does not say. Checked: from 1.27.0 a model that already "
                   "has a graph refuses a second one, which stays the caller's; 1.22.1-1.26.0 "
                   "take the second in place of the first. The source cited refuses, before "
                   "taking the graph, a NULL argument and a graph already in a model too"},
    {"function": "OrtModelEditorApi.AddInitializerToGraph", "argument": "OrtValue",
     "parameter": "tensor",
     "on_success": "the graph owns the value: never release it (every release checked, "
                   "1.22.1-1.32.0, takes it: a release after the call is read by the graph or "
                   "crashes; a source between two pull requests copied it instead, which would "
                   "leave a moved-in value leaked, never freed twice)",
     "failure_owner": "caller",
     "on_failure": "every check runs before the value is taken, so a refused value is still "
                   "the caller's"},
]

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
        "An allocator registered on the env (CreateAndRegisterAllocator) is shared by every "
        "session created with session.use_env_allocators=1; such sessions may run at once "
        "(thread.env-allocator-two-sessions). Registering and unregistering are env setters "
        "(exclusive): do them while no session is being created or run.",
    ],
    "OrtCustomOp": [
        "ORT does not serialize a kernel's compute: two runs of one session are inside the same "
        "kernel's KernelComputeV2 at once (kernel.overlapping-compute), so the kernel and any "
        "state it keeps must be Sync.",
    ],
    "OrtValue": [
        "Arrays returned by Value.numpy() are views: writing through them is a write to the "
        "value (exclusive) that the guard cannot see.",
        "A Value bound as an output (IoBinding.bind_output) or passed as a preallocated output "
        "is written by every run that uses it: it is exclusive for as long as it is bound. "
        "ortc's binding holds it exclusively from bind_output until the output is rebound or "
        "cleared or the binding closes: another thread's use meanwhile is a conflict (the "
        "binding's own thread may read it between runs).",
        "A Value given to the model editor's AddInitializerToGraph belongs to the graph once "
        "the call succeeds: never release it after that (onnxruntime_c_api.h, "
        "AddInitializerToGraph).",
    ],
    "OrtSessionOptions": [
        "Concurrent session creation with one options object is safe for plain options "
        "(thread.concurrent-create) but NOT when the options carry custom-op or EP-plugin "
        "domains: ORT marks adding those domains at creation not thread-safe, and on "
        "1.20.1-1.32.0 a few of 1200 concurrent creations with a custom-op domain fail with "
        "ORT's 'domain already exists' error (thread.create-with-custom-op-domain). Create "
        "such sessions one at a time.",
        "An EP-selection delegate set on the options is called by every thread creating a "
        "session with them, several at once (device.selection-delegate-concurrent): it and its "
        "state must be Sync.",
    ],
    "OrtSession": [
        "ReleaseSession does not wait for a Run inside the session on another thread: it "
        "returns at once and the Run then uses the freed session, which kills the process "
        "(thread.release-session-during-run, every version). ortc never releases a session "
        "while a run is inside it (its close() is refused, waits or defers the release, by "
        "guard mode); a binding must make close wait for the runs or refuse it.",
        "Run may be called from short-lived threads (a thread per request): memory does not "
        "grow per calling thread (thread.short-lived-threads-memory).",
    ],
    "OrtIoBinding": [
        "A binding shared by threads gives wrong results, failed runs, and can crash the "
        "process (thread.shared-binding): never share one between threads.",
    ],
    "OrtMemoryInfo": [
        "Memory infos returned by AllocatorGetInfo, GetTensorMemoryInfo and "
        "SessionGetMemoryInfoFor* are borrowed from their owner: never release them.",
    ],
    "OrtTypeInfo": [
        "CastTypeInfoTo* results are borrowed: never release them, never use them after the "
        "type info.",
    ],
    "OrtOpAttr": [
        "Attributes returned by Node_GetAttributes, Node_GetAttributeByName and "
        "ShapeInferContext_GetAttribute belong to their node or context: never release them.",
        "Model editor: a successful CreateNode takes the attributes it is given: it copies each "
        "into the node, releases the caller's and sets the caller's array entries to NULL "
        "(editor.create-node-takes-attributes). An attribute passed to it is given away "
        "(exclusive): releasing it again, at once or after AddNodeToGraph, is a double free "
        "that crashes (life.op-attr-release-after-create-node, "
        "life.op-attr-release-after-add-node); releasing the array's entries, now NULL, does "
        "nothing. The C reference says only that it copies them; ORT's C++ wrapper, which "
        "gives its attributes up on success, matches what ORT does.",
    ],
    "OrtGraph": [
        "ValueInfo_GetInitializerValue writes the graph that owns the value info: a plugin-EP "
        "graph view loads an external initializer into its own value on the first call, "
        "without a lock. Every other getter only reads.",
        "Per instance: a view a plugin EP receives is borrowed from the session being created "
        "and valid only during that GetCapability/Compile call; a view from Graph_GetGraphView "
        "is the caller's to release, before its source graph; a model-editor graph is the "
        "caller's until AddGraphToModel gives it to the model (never released after that).",
    ],
    "OrtNode": [
        "A node from CreateNode belongs to the graph after AddNodeToGraph: never release it "
        "after that. Nodes read from a graph are borrowed from it.",
    ],
    "OrtValueInfo": [
        "ValueInfo_GetInitializerValue is exclusive, on the value info and on the graph that "
        "owns it (it may load the initializer into the graph): never overlap it with another "
        "call on that graph, its nodes or value infos.",
        "A value info from CreateValueInfo belongs to the graph after SetGraphInputs/"
        "SetGraphOutputs: never release it after that. Those read from a graph or node are "
        "borrowed from the graph.",
    ],
    "OrtLoraAdapter": [
        "Per instance: an adapter created with a non-NULL allocator keeps that allocator by "
        "pointer, without owning it, and frees its device copies through it when released: the "
        "allocator must outlive the adapter (ortc passes NULL: nothing kept).",
    ],
    "OrtRunOptions": [
        "Per instance: RunOptions given a stream by RunOptionsSetSyncStream carry that stream "
        "(kept by pointer) into every run that uses them; a stream is not Sync, so such "
        "RunOptions are not Sync either, and the stream must outlive those runs. ortc does not "
        "wrap streams, so its RunOptions never carry one.",
    ],
    "OrtEpDevice": [
        "An EP device of a plugin library dies with UnregisterExecutionProviderLibrary of that "
        "library (the env deletes it and unloads the library): unregister only after every "
        "device, session and option appended with it is gone.",
    ],
    "OrtKernelContext": [
        "The value KernelContext_GetOutput returns belongs to the context (ORT's frame), "
        "although it comes back through a non-const out-pointer: never release it.",
    ],
    "OrtShapeInferContext": [
        "The tensor info ShapeInferContext_GetInputTypeShape returns belongs to the context "
        "although it comes back through an owned out-pointer: releasing it double-frees "
        "(kernel.infer-info-ownership).",
    ],
    "OrtModelCompilationOptions": [
        "Its functions are in OrtCompileApi (GetCompileApi), not OrtApi. Two CompileModel calls "
        "with one options object write the same output (file or caller buffer): not Sync.",
    ],
}

#: ORT types that ortc does not wrap as handles (it copies them into plain Python values, uses
#: them only inside one call, or does not expose them). ``wrapped`` is False for every one;
#: their evidence records are in ortc/evidence.py.
UNWRAPPED: list[dict[str, Any]] = [
    {"type": "OrtTypeInfo", "python": "ortc.TypeInfo (an immutable copy)",
     "send": True, "sync": True,
     "methods": {"GetOnnxTypeFromTypeInfo": "shared", "CastTypeInfoToTensorInfo": "shared",
                 "CastTypeInfoToMapTypeInfo": "shared",
                 "CastTypeInfoToSequenceTypeInfo": "shared",
                 "CastTypeInfoToOptionalTypeInfo": "shared",
                 "GetDenotationFromTypeInfo": "shared", "ReleaseTypeInfo": "exclusive"},
     "other_tables": {"OrtModelEditorApi.CreateTensorTypeInfo": "shared",
                      "OrtModelEditorApi.CreateSparseTensorTypeInfo": "shared",
                      "OrtModelEditorApi.CreateMapTypeInfo": "shared",
                      "OrtModelEditorApi.CreateSequenceTypeInfo": "shared",
                      "OrtModelEditorApi.CreateOptionalTypeInfo": "shared",
                      "OrtModelEditorApi.CreateValueInfo": "shared"},
     "parents": [],
     "evidence": "read-only; infos returned by session and value getters are independent "
                 "objects the caller owns; ortc converts and releases them at once "
                 "(ortc/typeinfo.py take_type_info)"},
    {"type": "OrtTensorTypeAndShapeInfo", "python": "ortc.TypeInfo (an immutable copy)",
     "send": True, "sync": True,
     "methods": {"GetTensorElementType": "shared", "GetDimensionsCount": "shared",
                 "GetDimensions": "shared", "GetSymbolicDimensions": "shared",
                 "GetTensorShapeElementCount": "shared", "SetTensorElementType": "exclusive",
                 "SetDimensions": "exclusive", "SetSymbolicDimensions": "exclusive",
                 "ReleaseTensorTypeAndShapeInfo": "exclusive"},
     "other_tables": {"OrtModelEditorApi.CreateTensorTypeInfo": "shared",
                      "OrtModelEditorApi.CreateSparseTensorTypeInfo": "shared"},
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
     "other_tables": {"OrtEpApi.KernelInfo_GetEp": "shared", "OrtEpApi.CreateIfKernel": "shared",
                      "OrtEpApi.CreateLoopKernel": "shared",
                      "OrtEpApi.CreateScanKernel": "shared"},
     "parents": [],
     "evidence": "valid only inside CreateKernel(V2); CopyKernelInfo makes a copy the kernel "
                 "may keep (then Send and Sync, read-only)"},
    {"type": "OrtCustomOpDomain", "python": None, "send": True, "sync": False,
     "methods": {"CustomOpDomain_Add": "exclusive", "AddCustomOpDomain": "shared",
                 "ReleaseCustomOpDomain": "exclusive"},
     "parents": ["OrtCustomOp"],
     "evidence": "mutated while being built; it must outlive every session using it, and the "
                 "custom ops added to it must outlive it; adding domains at session creation "
                 "is not thread-safe"},
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
     # an EP library reads pairs it is given (copying them into its devices) and hands out a
     # copy of the env's config entries, the caller's
     "other_tables": {"OrtEpApi.CreateEpDevice": "shared",
                      "OrtEpApi.CreateHardwareDevice": "shared",
                      "OrtEpApi.GetEnvConfigEntries": "shared"},
     "parents": [],
     "evidence": "a plain container: getters read, Add/Remove change it; ortc copies one into "
                 "a dict and releases it at once (ortc/_cstr.py read_key_values)"},
    {"type": "OrtPrepackedWeightsContainer", "python": None, "send": True, "sync": True,
     "methods": {"CreateSessionWithPrepackedWeightsContainer": "shared",
                 "CreateSessionFromArrayWithPrepackedWeightsContainer": "shared",
                 "ReleasePrepackedWeightsContainer": "exclusive"},
     "other_tables": {"OrtModelEditorApi.FinalizeModelEditorSession": "shared"},
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
     # an EP factory builds its devices with the EP table before ORT owns them
     "other_tables": {"OrtEpApi.CreateEpDevice": "shared",
                      "OrtEpApi.EpDevice_AddAllocatorInfo": "exclusive",
                      "OrtEpApi.ReleaseEpDevice": "exclusive",
                      "OrtInteropApi.CreateExternalResourceImporterForDevice": "shared",
                      "OrtInteropApi.InitGraphicsInteropForEpDevice": "shared",
                      "OrtInteropApi.DeinitGraphicsInteropForEpDevice": "shared"},
     "parents": ["OrtEnv"],
     "evidence": "owned by the env and only read; never released by the caller (an EP "
                 "factory builds its own with the EP table, and releases only those ORT did "
                 "not take)"},
    {"type": "OrtHardwareDevice", "python": None, "send": True, "sync": True,
     "methods": {"HardwareDevice_Type": "shared", "HardwareDevice_VendorId": "shared",
                 "HardwareDevice_Vendor": "shared", "HardwareDevice_DeviceId": "shared",
                 "HardwareDevice_Metadata": "shared"},
     "other_tables": {"OrtEpApi.CreateEpDevice": "shared",
                      "OrtEpApi.CreateHardwareDevice": "shared",
                      "OrtEpApi.ReleaseHardwareDevice": "exclusive"},
     "parents": ["OrtEnv"],
     "evidence": "owned by the env and only read; never released by the caller"},
    {"type": "OrtSyncStream", "python": None, "send": True, "sync": False,
     "methods": {"SyncStream_GetHandle": "shared", "RunOptionsSetSyncStream": "shared",
                 "ReleaseSyncStream": "exclusive"},
     "other_tables": {"OrtEpApi.SyncStream_GetImpl": "shared",
                      "OrtEpApi.SyncStream_GetSyncId": "shared",
                      "OrtEpApi.GetSyncIdForLastWaitOnSyncStream": "shared",
                      "OrtInteropApi.WaitSemaphore": "exclusive",
                      "OrtInteropApi.SignalSemaphore": "exclusive"},
     "parents": ["OrtEpDevice"],
     "evidence": "a device stream (none exists on a CPU build); not Sync by policy"},
    # -- objects that live inside one ORT callback ------------------------------------------
    {"type": "OrtLogger", "python": None, "send": False, "sync": True,
     "methods": {"Logger_LogMessage": "shared", "Logger_GetLoggingSeverityLevel": "shared"},
     "parents": ["OrtKernelInfo", "OrtKernelContext"],
     "evidence": "borrowed from the kernel info (in CreateKernel) or the kernel context (in "
                 "KernelCompute) it came from; ORT owns it. Not Send: use it only while that "
                 "callback runs. Sync: a kernel info (Sync) hands the same logger to every "
                 "thread that asks, and ORT logs through a session's logger from concurrent "
                 "runs itself"},
    {"type": "OrtShapeInferContext", "python": None, "send": False, "sync": False,
     "methods": {"ShapeInferContext_GetInputCount": "shared",
                 "ShapeInferContext_GetInputTypeShape": "shared",
                 "ShapeInferContext_GetAttribute": "shared",
                 "ShapeInferContext_SetOutputTypeShape": "exclusive"},
     "parents": [],
     "evidence": "valid only during the InferOutputShapeFn call it is passed to, on the calling "
                 "thread; what its getters return belongs to it"},
    # -- caller-implemented ---------------------------------------------------------------------
    {"type": "OrtCustomOp", "python": None, "send": True, "sync": True,
     "methods": {"CustomOpDomain_Add": "shared"},
     "parents": [],
     "evidence": "a struct of functions the caller implements, not an ORT object: the verdicts "
                 "are what ORT requires of it. ORT keeps it by pointer and calls it from the "
                 "threads that create sessions and run them, at once; it must outlive the "
                 "domains it is added to"},
    # -- custom-op helpers ----------------------------------------------------------------------
    {"type": "OrtOp", "python": None, "send": True, "sync": True,
     "methods": {"ReleaseOp": "exclusive", "InvokeOp": "shared"},
     "parents": [],
     "evidence": "made by CreateOp inside CreateKernel and kept by the kernel, which runs it "
                 "with InvokeOp from every compute (concurrent runs invoke one op at once) and "
                 "releases it in KernelDestroy"},
    {"type": "OrtOpAttr", "python": None, "send": True, "sync": True,
     "methods": {"ReadOpAttr": "shared", "OpAttr_GetType": "shared", "OpAttr_GetName": "shared",
                 "OpAttr_GetTensorAttributeAsOrtValue": "shared", "ReleaseOpAttr": "exclusive",
                 "CreateOp": "shared"},
     "other_tables": {"OrtModelEditorApi.CreateNode": "exclusive"},
     "parents": [],
     "evidence": "a read-only attribute after CreateOpAttr; one made by the caller is the "
                 "caller's to release (CreateOp copies what it needs) unless it gives it to "
                 "the model editor's CreateNode, which copies and releases it; those a node or "
                 "a shape-inference context hands out are borrowed from it"},
    # -- graphs: plugin-EP views and the model editor --------------------------------------------
    {"type": "OrtModel", "python": None, "send": True, "sync": True,
     "methods": {"ReleaseModel": "exclusive"},
     "other_tables": {"OrtModelEditorApi.CreateModel": "shared",
                      "OrtModelEditorApi.AddGraphToModel": "exclusive",
                      "OrtModelEditorApi.CreateSessionFromModel": "shared",
                      "OrtModelEditorApi.ApplyModelToModelEditorSession": "exclusive",
                      "OrtCompileApi.ModelCompilationOptions_SetInputModel": "shared"},
     "parents": [],
     "evidence": "a model the caller builds with the model editor; it owns the graph added to "
                 "it; sessions created from it do not need it afterwards (they keep what they "
                 "use, initializer values included; a caller's buffer under such a value still "
                 "outlives them); compile options given it by SetInputModel keep it by pointer "
                 "until their last CompileModel"},
    {"type": "OrtGraph", "python": None, "send": True, "sync": True,
     "methods": {"Graph_GetName": "shared", "Graph_GetModelPath": "shared",
                 "Graph_GetOnnxIRVersion": "shared", "Graph_GetNumOperatorSets": "shared",
                 "Graph_GetOperatorSets": "shared", "Graph_GetNumInputs": "shared",
                 "Graph_GetInputs": "shared", "Graph_GetNumOutputs": "shared",
                 "Graph_GetOutputs": "shared", "Graph_GetNumInitializers": "shared",
                 "Graph_GetInitializers": "shared", "Graph_GetNumNodes": "shared",
                 "Graph_GetNodes": "shared", "Graph_GetParentNode": "shared",
                 "Graph_GetGraphView": "shared", "Graph_GetModelMetadata": "shared",
                 "ReleaseGraph": "exclusive"},
     "other_tables": {"OrtModelEditorApi.CreateGraph": "shared",
                      "OrtModelEditorApi.SetGraphInputs": "exclusive",
                      "OrtModelEditorApi.SetGraphOutputs": "exclusive",
                      "OrtModelEditorApi.AddInitializerToGraph": "exclusive",
                      "OrtModelEditorApi.AddNodeToGraph": "exclusive",
                      "OrtModelEditorApi.AddGraphToModel": "exclusive"},
     "parents": ["OrtSession", "OrtModel"],
     "evidence": "either a read-only view ORT lends a plugin EP for one GetCapability/Compile "
                 "call (borrowed from the session being created), a view made by "
                 "Graph_GetGraphView (the caller's, over its source graph), or a model-editor "
                 "graph the caller builds (owned by the model once added to it)"},
    {"type": "OrtNode", "python": None, "send": True, "sync": True,
     "methods": {"Node_GetId": "shared", "Node_GetName": "shared",
                 "Node_GetOperatorType": "shared", "Node_GetDomain": "shared",
                 "Node_GetSinceVersion": "shared", "Node_GetNumInputs": "shared",
                 "Node_GetInputs": "shared", "Node_GetNumOutputs": "shared",
                 "Node_GetOutputs": "shared", "Node_GetNumImplicitInputs": "shared",
                 "Node_GetImplicitInputs": "shared", "Node_GetNumAttributes": "shared",
                 "Node_GetAttributes": "shared", "Node_GetAttributeByName": "shared",
                 "Node_GetNumSubgraphs": "shared", "Node_GetSubgraphs": "shared",
                 "Node_GetGraph": "shared", "Node_GetEpName": "shared",
                 "ReleaseNode": "exclusive", "Graph_GetGraphView": "shared"},
     # a plugin EP reads the nodes of the graph view it is lent while it says which it takes
     "other_tables": {"OrtModelEditorApi.CreateNode": "shared",
                      "OrtModelEditorApi.AddNodeToGraph": "exclusive",
                      "OrtEpApi.EpGraphSupportInfo_AddNodesToFuse": "shared",
                      "OrtEpApi.EpGraphSupportInfo_AddSingleNode": "shared",
                      "OrtEpApi.EpGraphSupportInfo_LookUpKernel": "shared"},
     "parents": ["OrtGraph"],
     "evidence": "a node of a graph: read-only and borrowed from its graph, or made by "
                 "CreateNode and owned by the graph once added to it"},
    {"type": "OrtValueInfo", "python": None, "send": True, "sync": True,
     "methods": {"GetValueInfoName": "shared", "GetValueInfoTypeInfo": "shared",
                 "ValueInfo_GetValueProducer": "shared", "ValueInfo_GetValueNumConsumers": "shared",
                 "ValueInfo_GetValueConsumers": "shared",
                 "ValueInfo_GetInitializerValue": "exclusive",
                 "ValueInfo_GetExternalInitializerInfo": "shared",
                 "ValueInfo_IsRequiredGraphInput": "shared",
                 "ValueInfo_IsOptionalGraphInput": "shared", "ValueInfo_IsGraphOutput": "shared",
                 "ValueInfo_IsConstantInitializer": "shared",
                 "ValueInfo_IsFromOuterScope": "shared", "ReleaseValueInfo": "exclusive"},
     "other_tables": {"OrtModelEditorApi.CreateValueInfo": "shared",
                      "OrtModelEditorApi.SetGraphInputs": "exclusive",
                      "OrtModelEditorApi.SetGraphOutputs": "exclusive"},
     "parents": ["OrtGraph"],
     "evidence": "a value of a graph (input, output, initializer, node edge): read-only and "
                 "owned by its graph, or made by CreateValueInfo and owned by the graph once "
                 "set as its input or output; its type info is borrowed from it"},
    {"type": "OrtExternalInitializerInfo", "python": None, "send": True, "sync": True,
     "methods": {"ExternalInitializerInfo_GetFilePath": "shared",
                 "ExternalInitializerInfo_GetFileOffset": "shared",
                 "ExternalInitializerInfo_GetByteSize": "shared",
                 "ReleaseExternalInitializerInfo": "exclusive"},
     "parents": [],
     "evidence": "an immutable path, offset and size; CreateExternalInitializerInfo copies the "
                 "path; each one (created, or returned by ValueInfo_GetExternalInitializerInfo) "
                 "is the caller's to release; the path it returns belongs to it"},
    # -- compilation and EP assignment -------------------------------------------------------------
    {"type": "OrtModelCompilationOptions", "python": None, "send": True, "sync": False,
     "methods": {},
     "other_tables": {
         "OrtCompileApi.CreateModelCompilationOptionsFromSessionOptions": "shared",
         "OrtCompileApi.ModelCompilationOptions_SetInputModelPath": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetInputModelFromBuffer": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelPath": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelExternalInitializersFile":
             "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelBuffer": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetEpContextEmbedMode": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetFlags": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetEpContextBinaryInformation": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetGraphOptimizationLevel": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelWriteFunc": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelGetInitializerLocationFunc":
             "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetInputModel": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetWeightlessEnabled": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetEpContextDataWriteFunc": "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelExternalInitializersBuffer":
             "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetOutputModelExternalInitializersAlignment":
             "exclusive",
         "OrtCompileApi.ModelCompilationOptions_SetWeightlessMode": "exclusive",
         "OrtCompileApi.CompileModel": "shared",
         "OrtCompileApi.ReleaseModelCompilationOptions": "exclusive"},
     "parents": ["OrtEnv"],
     "evidence": "a builder filled by setters (exclusive), then read by CompileModel; it keeps "
                 "a pointer to the env and its own copy of the session options; an input "
                 "model given as a buffer or as an OrtModel (SetInputModel), the output "
                 "buffer's allocator and locations (of the model and, from API 31, of the "
                 "external initializers), and the write functions with their state are kept "
                 "by pointer and used at CompileModel"},
    {"type": "OrtEpAssignedSubgraph", "python": None, "send": True, "sync": True,
     "methods": {"EpAssignedSubgraph_GetEpName": "shared", "EpAssignedSubgraph_GetNodes": "shared"},
     "parents": ["OrtSession"],
     "evidence": "read-only records of which EP got which nodes, owned by the session that "
                 "recorded them (session config session.record_ep_graph_assignment_info); never "
                 "released by the caller"},
    {"type": "OrtEpAssignedNode", "python": None, "send": True, "sync": True,
     "methods": {"EpAssignedNode_GetName": "shared", "EpAssignedNode_GetDomain": "shared",
                 "EpAssignedNode_GetOperatorType": "shared"},
     "parents": ["OrtEpAssignedSubgraph"],
     "evidence": "read-only, owned by its subgraph record (and so by the session); never "
                 "released by the caller"},
    {"type": "OrtDeviceEpIncompatibilityDetails", "python": None, "send": True, "sync": True,
     "methods": {"DeviceEpIncompatibilityDetails_GetReasonsBitmask": "shared",
                 "DeviceEpIncompatibilityDetails_GetNotes": "shared",
                 "DeviceEpIncompatibilityDetails_GetErrorCode": "shared",
                 "ReleaseDeviceEpIncompatibilityDetails": "exclusive"},
     "other_tables": {"OrtEpApi.DeviceEpIncompatibilityDetails_SetDetails": "exclusive"},
     "parents": [],
     "evidence": "an immutable answer the caller owns and releases; the notes string belongs "
                 "to it"},
    # -- provider option structs (builders) -------------------------------------------------------
    {"type": "OrtCANNProviderOptions", "python": None, "send": True, "sync": False,
     "methods": {"UpdateCANNProviderOptions": "exclusive",
                 "GetCANNProviderOptionsAsString": "shared",
                 "SessionOptionsAppendExecutionProvider_CANN": "shared",
                 "ReleaseCANNProviderOptions": "exclusive"},
     "parents": [],
     "evidence": "a plain options struct filled by Update*, read by the append call; ortc "
                 "does not expose it"},
    {"type": "OrtDnnlProviderOptions", "python": None, "send": True, "sync": False,
     "methods": {"UpdateDnnlProviderOptions": "exclusive",
                 "GetDnnlProviderOptionsAsString": "shared",
                 "SessionOptionsAppendExecutionProvider_Dnnl": "shared",
                 "ReleaseDnnlProviderOptions": "exclusive"},
     "parents": [],
     "evidence": "a plain options struct filled by Update*, read by the append call; ortc "
                 "does not expose it"},
    {"type": "OrtROCMProviderOptions", "python": None, "send": True, "sync": False,
     "methods": {"UpdateROCMProviderOptions": "exclusive",
                 "GetROCMProviderOptionsAsString": "shared",
                 "SessionOptionsAppendExecutionProvider_ROCM": "shared",
                 "ReleaseROCMProviderOptions": "exclusive"},
     "parents": [],
     "evidence": "a plain options struct filled by Update*, read by the append call; ortc "
                 "does not expose it"},
    {"type": "OrtNvTensorRtRtxProviderOptions", "python": None, "send": True, "sync": False,
     "methods": {},
     "parents": [],
     "evidence": "declared by the C API but taken by no OrtApi function (the NvTensorRtRtx "
                 "provider is appended by name with string options); the verdicts are those "
                 "of the other option structs"},
]

#: function tables: static arrays of function pointers the library owns, not objects. They
#: have no row: a table pointer may be read from any thread and is never released (the slot
#: table marks the getters "not thread-relevant"); what matters is the objects their functions
#: take: an OrtApi type has a row, which lists the sub-table functions using it as
#: ``Table.Function``; an object only one sub-table hands out is declared in
#: ortc.slot_rules.SUB_TABLE_OBJECTS instead.
FUNCTION_TABLES: dict[str, str] = {
    "OrtApiBase": "OrtGetApiBase()",
    "OrtApi": "OrtApiBase.GetApi",
    "OrtModelEditorApi": "GetModelEditorApi",
    "OrtCompileApi": "GetCompileApi",
    "OrtEpApi": "GetEpApi",
    "OrtInteropApi": "GetInteropApi",
    "OrtTrainingApi": "GetTrainingApi",
    "OrtModelPackageApi": "GetModelPackageApi",
}

_INTEROP_OBJECT = ("an object only OrtInteropApi hands out: declared with its Send and Sync in "
                   "that table's section, which lists every function that uses it")

#: opaque types the C header declares that have no row, and why
NO_ROW: dict[str, str] = {
    "OrtThreadPoolParams": "declared by the header, taken by no function",
    "OrtExternalMemoryHandle": _INTEROP_OBJECT,
    "OrtExternalSemaphoreHandle": _INTEROP_OBJECT,
    "OrtExternalResourceImporter": _INTEROP_OBJECT,
}

#: C callbacks: who calls them, from which threads (Rust: the closure bounds); their evidence
#: records are ortc.evidence.CALLBACK_EVIDENCE
CALLBACKS: list[dict[str, str]] = [
    {"type": "OrtLoggingFunction", "threads": "any: the calling thread of CreateSession/Run "
     "and ORT's own pool threads, concurrently, without a lock held by ORT",
     "rust": "Fn(...) + Send + Sync + 'static (kept until the env's last release)",
     "ortc": "ortc/env.py _log_from_ort: catches everything, never waits on a guard (inside "
             "threads.ort_callback), inert after interpreter exit; on ORT's own threads it "
             "waits on no Python lock: their messages are queued and a Python thread logs "
             "them, in order",
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
    {"type": "EpSelectionDelegate", "threads": "every thread calling CreateSession with the "
     "options, during that creation: several at once when threads share one SessionOptions",
     "rust": "Fn + Send + Sync (state valid while the options can create sessions); or options "
             "that carry a delegate are not Sync",
     "ortc": "not exposed",
     "evidence": "device.selection-delegate; ORT's SelectEpDevices calls it with no lock"},
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
    # each reference once: two policy records read "evidence: policy, policy"
    refs = list(dict.fromkeys(e.ref or e.kind for e in evidence.for_type(c_type)))
    return text + (f"; evidence: {', '.join(refs)}" if refs else "")


def rules() -> list[dict[str, Any]]:
    """One record per ORT type, sorted by type: ``type`` (the C name), ``python`` (the class,
    or what ortc turns the type into), ``send``, ``sync``, ``methods`` (Python method names and
    the C functions acting on this type -> ``"shared"`` or ``"exclusive"``), ``parents`` (the C
    types it must not outlive), ``evidence`` (a summary); also ``other_tables`` (functions of a sub-table
    such as OrtCompileApi acting on this type, as ``Table.Function``), ``wrapped``, ``conditions``
    (methods whose kind depends on the instance), ``arguments`` (how a method uses the handles
    passed to it), ``used_by`` (calls of other objects that take this type as an argument, and
    how), ``taken_by`` (calls that take this type over, :data:`TRANSFERS`, -> who owns it after
    a failed call), ``c_functions`` (each Python method's C functions), ``notes``,
    ``evidence_records`` (ortc/evidence.py, each of a stated kind), ``basis`` (the evidence
    kinds behind the Send and Sync verdicts) and ``caveats`` (a Send/Sync verdict that rests
    on no strong evidence, said plainly).

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
            "sync": rec.sync, "methods": methods, "other_tables": {},
            "parents": list(rec.parents),
            "evidence": _summary(rec.evidence, rec.c_type), "conditions": conditions,
            "arguments": arguments, "used_by": used_by, "c_functions": c_functions,
            "notes": list(TYPE_NOTES.get(rec.c_type, [])),
        }
    for item in UNWRAPPED:
        own = {m: k for m, k in item["methods"].items()
               if slot_rules.receiver(m) == item["type"]}
        others = {m: k for m, k in item["methods"].items() if m not in own}
        records[item["type"]] = {**item, "wrapped": False, "methods": own,
                                 "other_tables": dict(item.get("other_tables", {})),
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
    # a call that takes an argument over uses it exclusively (nothing else may hold it), and
    # the argument's row says who takes it
    for t in TRANSFERS:
        target = records[t["argument"]]
        if t["function"] not in {**target["methods"], **target["other_tables"]}:
            _merge(target["used_by"], t["function"], "exclusive")
        target.setdefault("taken_by", {})[t["function"]] = t["failure_owner"]
    out = []
    for c_type in sorted(records):
        r = records[c_type]
        for key in ("methods", "used_by"):
            r[key] = dict(sorted(r[key].items(), key=lambda kv: (kv[0][:1].isupper(), kv[0])))
        r["taken_by"] = dict(sorted(r.get("taken_by", {}).items()))
        r["evidence_records"] = [e.to_json() for e in evidence.for_type(c_type)]
        r["basis"] = _basis(c_type, r["send"], r["sync"])
        r["caveats"] = dict(evidence.CAVEATS.get(c_type, {}))
        out.append(r)
    return out


def transfers() -> list[dict[str, Any]]:
    """:data:`TRANSFERS` with each one's evidence records (``evidence_records``, of
    :data:`ortc.evidence.TRANSFER_EVIDENCE`), sorted by function and argument."""
    return [{**t, "evidence_records": [e.to_json() for e in
                                       evidence.for_transfer(t["function"], t["argument"])]}
            for t in sorted(TRANSFERS, key=lambda t: (t["function"], t["argument"]))]
