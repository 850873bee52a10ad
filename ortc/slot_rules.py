"""A thread verdict for every OrtApi slot ortc declares.

Each slot gets a :class:`SlotRule`: the handles it **reads** (shared: may overlap other reads of
the same handle), the handles it **writes** (exclusive: nothing else may use that handle
meanwhile), the handles it **creates** or **releases** (a release is exclusive and last), its
**scope** (``any thread``, ``thread-local``, ``callback``: only inside the ORT callback that
received the context, ``process``: process-wide state), ``not thread-relevant`` for slots that
touch no handle, and what must **outlive** what.

Most verdicts are derived from the slot's declared signature (``ortc/_signatures.py``, an ABI
fact of ORT's C API): a ``const`` handle is read, a non-const one written, ``OrtX**`` is an
output. :data:`DECLARED` overrides the signature where ORT's documentation or behaviour says
otherwise (Run takes a non-const session and is still shared; RunWithBinding takes a const
binding and still writes it), and adds lifetimes. :func:`table` gives every slot's verdict;
:func:`coverage` counts them like the conformance kit's slot coverage; tests/test_slot_rules.py
fails when a declared slot has none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from . import evidence as ev
from ._signatures import SIGNATURES
from ._slots import SINCE, SLOTS

__all__ = ["SlotRule", "table", "rule", "coverage", "DECLARED", "HANDLE_TYPES", "params",
           "receiver", "SUB_TABLES", "sub_coverage"]

#: opaque ORT object types a slot can read, write, create or release
HANDLE_TYPES = frozenset({
    "OrtEnv", "OrtStatus", "OrtMemoryInfo", "OrtIoBinding", "OrtSession", "OrtValue",
    "OrtRunOptions", "OrtTypeInfo", "OrtTensorTypeAndShapeInfo", "OrtMapTypeInfo",
    "OrtSequenceTypeInfo", "OrtOptionalTypeInfo", "OrtSessionOptions", "OrtCustomOpDomain",
    "OrtModelMetadata", "OrtThreadingOptions", "OrtArenaCfg", "OrtPrepackedWeightsContainer",
    "OrtTensorRTProviderOptionsV2", "OrtNvTensorRtRtxProviderOptions", "OrtCUDAProviderOptionsV2",
    "OrtCANNProviderOptions", "OrtDnnlProviderOptions", "OrtROCMProviderOptions", "OrtOp",
    "OrtOpAttr", "OrtLogger", "OrtShapeInferContext", "OrtLoraAdapter", "OrtValueInfo",
    "OrtNode", "OrtGraph", "OrtModel", "OrtModelCompilationOptions", "OrtHardwareDevice",
    "OrtEpDevice", "OrtKeyValuePairs", "OrtSyncStream", "OrtExternalInitializerInfo",
    "OrtDeviceEpIncompatibilityDetails", "OrtEpAssignedSubgraph", "OrtEpAssignedNode",
    "OrtKernelInfo", "OrtKernelContext", "OrtAllocator", "OrtCustomOp",
})

_PTR = re.compile(r"^(const )?(Ort\w+)(\*+)( const\*+)?$")


def params(slot: str) -> list[tuple[str, str]]:
    """The handle parameters of ``slot`` as (type, use): ``read``, ``write``, ``out`` (a
    handle returned through ``OrtX**``, the caller's to release), ``borrowed`` (returned through
    ``const OrtX**``: owned by another object), ``read-array`` or ``write-array``."""
    out: list[tuple[str, str]] = []
    for p in SIGNATURES[slot]:
        m = _PTR.match(p.strip())
        if not m or m.group(2) not in HANDLE_TYPES:
            continue
        const, typ, stars, tail = m.groups()
        depth = len(stars) + (tail.count("*") if tail else 0)
        if depth == 1:
            out.append((typ, "read" if const else "write"))
        elif tail and depth == 2:  # OrtX* const* (an array of handles passed in)
            out.append((typ, "read-array" if const else "write-array"))
        else:  # returned: a const result is borrowed from its owner, a non-const one owned
            out.append((typ, "borrowed" if const else "out"))
    return out


def receiver(slot: str) -> str | None:
    """The handle a slot acts on: its first handle passed by pointer (``None`` if none)."""
    for typ, use in params(slot):
        if use in ("read", "write"):
            return typ
    return None


@dataclass(frozen=True)
class SlotRule:
    slot: str
    since: int
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    releases: tuple[str, ...] = ()
    #: any thread | thread-local | callback (one thread) | callback-sync | process
    scope: str = "any thread"
    #: False: the slot touches no ORT object and no process state
    relevant: bool = True
    outlives: str = ""
    note: str = ""
    #: "declared" (an entry of DECLARED) or "signature" (derived)
    source: str = "signature"
    evidence: tuple[ev.Evidence, ...] = field(default=())

    def verdict(self) -> str:
        """One line: what the slot reads, writes, creates, releases, and where it may run."""
        if not self.relevant:
            return "not thread-relevant"
        parts = []
        if self.releases:
            parts.append("releases " + ", ".join(self.releases) + " (exclusive, last use)")
        if self.writes:
            parts.append("writes " + ", ".join(self.writes) + " (exclusive)")
        if self.reads:
            parts.append("reads " + ", ".join(self.reads) + " (shared)")
        if self.creates:
            parts.append("creates " + ", ".join(self.creates))
        if self.scope != "any thread":
            parts.append({"thread-local": "per calling thread (thread-local state)",
                          "callback": "only inside the ORT callback that received the context, "
                                      "on its thread",
                          "callback-sync": "only while the ORT callback that received it runs "
                                           "(a CopyKernelInfo copy: until released); reads may "
                                           "overlap on several threads",
                          "process": "process-wide state, safe from any thread"}[self.scope])
        elif not parts:
            parts.append("safe from any thread")
        return "; ".join(parts)

    def basis(self) -> str:
        """What the verdict rests on (:data:`BASES`): ORT's ``implementation`` read at a stated
        commit, a conformance ``check`` or a test that runs ORT, a ``documented`` statement
        (ORT's documentation or a maintainer), else ``unverified`` (generic records, policy).
        Only records that back a verdict count: one with no ``backs`` is context."""
        kinds = {e.kind for e in self.evidence if e not in GENERIC and e.backs}
        if "ort-source" in kinds:
            return "implementation"
        if "ort-behaviour" in kinds:
            return "check"
        if kinds & {"ort-doc", "ort-maintainer"}:
            return "documented"
        return "unverified"

    def to_json(self) -> dict[str, Any]:
        return {"slot": self.slot, "since": self.since, "verdict": self.verdict(),
                "basis": self.basis(),
                "reads": list(self.reads), "writes": list(self.writes),
                "creates": list(self.creates), "releases": list(self.releases),
                "scope": self.scope, "relevant": self.relevant, "outlives": self.outlives,
                "note": self.note, "source": self.source,
                "evidence": [e.to_json() for e in self.evidence]}


# -- evidence shared by many slots ---------------------------------------------------------------

SIGNATURE = ev.signature("the slot's signature in ORT's C API (an ABI fact, declared in "
                         "include/ortc_api.h): a const handle is only read, so ortc reads it as "
                         "shared; a non-const one may be changed, so it is exclusive. ORT "
                         "documents no thread rule per function, so this alone verifies nothing",
                         "shared", "exclusive")
RELEASE = ev.doc(ev.C_API, "a Release function frees the object: nothing may use it during "
                 "or after the call", "exclusive")
NEWER = ev.policy("no public header states this slot yet (API 31/32): verdict from the "
                  "signature and the conformance check of the slot", "ORT publishes its "
                  "contract", "shared", "exclusive")
SCOPED = ev.doc(ev.C_API, "kernel and shape-inference contexts are passed to one callback "
                "invocation and valid only during it", "lifetime")
DEVICE_EP = ev.untested("no GPU or plugin execution provider exists on the CPU build this "
                        "project tests; the verdict follows the signature", "shared")

#: records that say nothing about one slot in particular: a verdict resting only on these (and on
#: ortc's policy, guard or untested records) is "unverified"
GENERIC: tuple[ev.Evidence, ...] = (SIGNATURE, RELEASE, NEWER, SCOPED, DEVICE_EP)
#: what a slot's verdict rests on, strongest first (:meth:`SlotRule.basis`)
BASES = ("implementation", "check", "documented", "unverified")

# -- ORT's implementation, read at a commit of microsoft/onnxruntime (paraphrased) ---------------

#: onnxruntime/core/graph/ep_api_types.cc: the graph, node and value-info views a plugin EP gets
EP_TYPES = ("onnxruntime/core/graph/ep_api_types.cc", "e31689fb9fd2805025375bd94956f0fd8817897d")
#: onnxruntime/core/session/custom_ops.cc: kernel info, kernel context, op attributes
CUSTOM_OPS = ("onnxruntime/core/session/custom_ops.cc", "5bca60d13ff1c21f176df856876e334b6ca61c17")
LORA = ("onnxruntime/core/session/lora_adapters.cc", "03a27cf2b7ae4e7a30219a55287211f32e22f7bc")
POLICY_CONTEXT = ("onnxruntime/core/session/provider_policy_context.cc",
                  "002fcdc290cf2b4149f3fa51ebdc0cc741899998")
#: main after the 1.23 release (the registration lock and shared-allocator clean-up it shows are
#: not in older sources). The copy first read is stored without a commit; 569bf140 is the stored
#: commit of that line whose text has every cited function (the env's mutex in RegisterAllocator,
#: UnregisterAllocator, CreateAndRegisterAllocator, RegisterExecutionProviderLibrary,
#: UnregisterExecutionProviderLibrary, CreateSharedAllocator and GetSharedAllocator; the
#: EpInfo destructor) doing what the citations say
ENVIRONMENT = ("onnxruntime/core/session/environment.cc", "569bf14052c90fb5c6f1d9c9626ba86887aa2686")
RUN_OPTIONS = ("onnxruntime/core/framework/run_options.cc", "main")
SESSION_OPTIONS = ("onnxruntime/core/session/abi_session_options.cc",
                   "5abba584239d2ac0b8d241bac49816e37d2d27e7")


def _src(where: tuple[str, ...], function: str, says: str, *backs: str,
         line: int = 0) -> ev.Evidence:
    """``where`` is (path, commit) or, for a stored version whose commit the reference index
    does not give, (path, "main", what the version read is)."""
    path, at = where[0], where[1]
    release = ""
    if at == "main":
        release = (where[2] if len(where) > 2 else "main after 1.23") + " (commit not recorded)"
    return ev.source(path, at, function, says, *backs, line=line, release=release)


_OVERRIDES: dict[str, dict[str, Any]] = {}
#: implementation readings that confirm a verdict without changing it (:func:`_cite`)
_CITED: dict[str, tuple[ev.Evidence, ...]] = {}


def _cite(slots: str, *records: ev.Evidence) -> None:
    """Add evidence to the verdicts of ``slots`` (derived or declared) without changing them."""
    for s in slots.split():
        assert s in SINCE, f"unknown slot {s}"
        _CITED[s] = _CITED.get(s, ()) + records


def _about(c_type: str, tag: str, kind: str | None = None) -> tuple[ev.Evidence, ...]:
    """A type's evidence records backing ``tag`` (of one kind, if given)."""
    out = tuple(e for e in ev.TYPE_EVIDENCE[c_type]
                if tag in e.backs and (kind is None or e.kind == kind))
    assert out, f"{c_type} has no {kind or ''} evidence for {tag}"
    return out


def _d(slots: str, **kw: Any) -> None:
    for s in slots.split():
        assert s in SINCE, f"unknown slot {s}"
        assert s not in _OVERRIDES, f"{s} declared twice (the second would replace the first)"
        _OVERRIDES[s] = kw


# Run: a non-const session, and still shared (per execution provider: ortc/providers.py).
_RUN_EV = (ev.find("OrtSession", ev.DESIGN, "check:thread.concurrent-run",
                   "check:thread.short-lived-threads-memory")
           + ev.find("OrtValue", "check:run.preallocated-output"))
_d("Run RunAsync", reads=("OrtSession", "OrtRunOptions", "OrtValue"), writes=("OrtValue",),
   note="shared on the session when every execution provider allows concurrent Run "
        "(ortc/providers.py); inputs are read; a preallocated output is written; any thread "
        "may call it, short-lived ones too (no memory kept per calling thread: "
        "thread.short-lived-threads-memory)",
   outlives="the env, the session and the inputs outlive the call (RunAsync: until its "
            "callback): ReleaseSession does not wait for a Run inside the session "
            "(thread.release-session-during-run)", evidence=_RUN_EV)
_d("RunWithBinding", reads=("OrtSession", "OrtRunOptions"), writes=("OrtIoBinding", "OrtValue"),
   note="the binding is written although declared const (it stores the run's outputs); each "
        "Value bound as an output is written",
   evidence=(*ev.find("OrtIoBinding", "check:thread.shared-binding"),
             ev.check("binding.bound-output-written-by-every-run", "bound outputs are written "
                      "by every run", "exclusive")))
_d("GetBoundOutputNames GetBoundOutputValues", writes=("OrtIoBinding",),
   note="declared const, but they read the outputs every RunWithBinding with this binding "
        "fills, and the values returned share the memory the next such run writes: "
        "exclusive with the binding's runs (ortc holds the binding exclusively, Rust takes "
        "&mut self while the values live); the binding is not Sync anyway",
   evidence=(*ev.find("OrtIoBinding", ev.IOBINDING_DOC, "check:thread.shared-binding"),
             ev.check("binding.bound-output-written-by-every-run", "bound outputs are written "
                      "by every run", "exclusive")))
_d("RunOptionsSetTerminate RunOptionsUnsetTerminate", reads=("OrtRunOptions",),
   note="meant to be called from another thread while runs use the options",
   evidence=ev.find("OrtRunOptions", ev.C_API, "check:thread.shared-run-options-terminate"))
_d("SessionOptionsSetLoadCancellationFlag", reads=("OrtSessionOptions",),
   note="meant to be set from another thread while CreateSession runs",
   evidence=(*ev.find("OrtSessionOptions", ev.C_API),
             ev.check("shared.load-cancel-from-another-thread", "set from another thread "
                      "while CreateSession runs with the options, the flag cancels that "
                      "creation", "shared", versions="1.22.1-1.32.0"),
             ev.check("create.load-canceled", "a creation with the flag already set fails "
                      "(one thread)", versions="1.22.1-1.32.0")))
_d("CreateIoBinding", reads=("OrtSession",), creates=("OrtIoBinding",),
   outlives="the session outlives the binding",
   evidence=(ev.check("thread.per-thread-binding", "bindings created concurrently on one "
                      "session", "shared"),
             *ev.find("OrtIoBinding", "check:life.binding-after-session-release")))
_d("CreateAllocator", reads=("OrtSession", "OrtMemoryInfo"), creates=("OrtAllocator",),
   outlives="the session outlives the allocator and every value allocated from it",
   evidence=(*ev.find("OrtSession", "check:life.session-value-after-session-release"),
             ev.check("shared.create-allocator", "four threads at once create, use and release "
                      "allocators of one session", "shared"),
             ev.check("alloc.session-allocator", "a session allocator allocates (one thread)")))
_d("GetTensorMutableData", writes=("OrtValue",),
   note="returns a pointer into the value to write through: exclusive; a caller that only "
        "reads through it makes a shared read (as GetTensorData)",
   evidence=ev.find("OrtValue", ev.C_API))
_d("CreateSession CreateSessionFromArray CreateSessionWithPrepackedWeightsContainer "
   "CreateSessionFromArrayWithPrepackedWeightsContainer",
   reads=("OrtEnv", "OrtSessionOptions", "OrtPrepackedWeightsContainer"), creates=("OrtSession",),
   note="concurrent creation is safe with plain options; NOT with custom-op or EP-plugin "
        "domains added to the options (ORT marks adding them not thread-safe; "
        "thread.create-with-custom-op-domain: on 1.20.1-1.32.0 a few of 1200 such creations "
        "fail with ORT's 'domain already exists' error): create such sessions one at a time",
   outlives="the env, custom-op domains, initializers added with AddInitializer, a prepacked "
            "weights container and model bytes used in place outlive the session",
   evidence=(ev.check("thread.concurrent-create", "concurrent CreateSessionFromArray calls "
                      "sharing one SessionOptions and the env all succeed alike", "shared"),
             ev.check("shared.create-session-variants", "eight threads create at once through "
                      "all four slots with one env, one SessionOptions and one prepacked "
                      "container: every result right", "shared"),
             *ev.find("OrtSessionOptions", ev.ADD_CUSTOM_OP_DOMAINS,
                      "check:thread.create-with-custom-op-domain"),
             *ev.find("OrtEnv", "check:env.run-after-last-release")))
_d("SessionEndProfiling SetEpDynamicOptions SessionReleaseCapturedGraph",
   writes=("OrtSession",), note="exclusive: undocumented against in-flight runs",
   evidence=_about("OrtSession", "exclusive", "policy"))
_d("UpdateEnvWithCustomLogLevel RegisterAllocator UnregisterAllocator "
   "CreateAndRegisterAllocator CreateAndRegisterAllocatorV2 RegisterExecutionProviderLibrary "
   "ReleaseSharedAllocator "
   "SetPerSessionThreadPoolCallbacks",
   writes=("OrtEnv",), note="changes env-wide state: do it before sessions are created or "
                            "runs start",
   evidence=_about("OrtEnv", "exclusive", "policy"))
_d("GetEpDevices GetNumHardwareDevices GetHardwareDevices "
   "EnableTelemetryEvents DisableTelemetryEvents SetLanguageProjection",
   reads=("OrtEnv",), note="reads env-wide state",
   outlives="EP and hardware devices, and shared allocators, belong to the env: never "
            "release them",
   evidence=(ev.check("shared.env-reads", "four threads at once: GetEpDevices, the telemetry "
                      "toggles, SetLanguageProjection; GetSharedAllocator from API 23, the "
                      "hardware devices from API 24; every answer as on one thread", "shared",
                      versions="1.22.1-1.32.0"),
             ev.check("device.cpu-ep-device", "GetEpDevices on the CPU build (one thread)",
                      versions="1.23.2-1.32.0"), *ev.find("OrtEpDevice", ev.C_API)))
_d("CopyTensors", reads=("OrtEnv",), note="reads env-wide state (the EPs' data transfers)",
   evidence=(SIGNATURE, ev.untested("the CPU build has no data transfer for CopyTensors (it "
                                    "reports NOT_IMPLEMENTED for CPU to CPU): never run "
                                    "concurrently here")))
_d("CreateEnv CreateEnvWithCustomLogger CreateEnvWithGlobalThreadPools "
   "CreateEnvWithCustomLoggerAndGlobalThreadPools CreateEnvWithOptions",
   creates=("OrtEnv",), scope="process",
   note="every creation returns the one process env (reference-counted); the arguments of "
        "later calls are ignored",
   outlives="a custom logger and its parameter stay valid until the last ReleaseEnv",
   evidence=(*ev.find("OrtEnv", ev.C_API, "check:env.concurrent-create-release"),
             ev.check("env.logger-first-wins", "the first logger wins", "lifetime")))
_d("ReleaseEnv", releases=("OrtEnv",), scope="process",
   note="drops one reference; the last one ends the env (ortc never calls it)",
   outlives="every session and object created through the env is released first",
   evidence=ev.find("OrtEnv", "check:env.run-after-last-release",
                     "check:env.recreate-after-release", "check:env.concurrent-create-release"))
_d("GetAvailableProviders ReleaseAvailableProviders GetBuildInfoString", scope="process",
   note="no handle: process-wide information, safe from any thread",
   evidence=(ev.check("shared.process-calls", "four threads at once, 30 times each: the same "
                      "provider list and build string as on one thread", "shared"),
             ev.check("ver.providers-cpu-last", "the provider list ends with the CPU provider "
                      "(one thread)")))
_d("GetAllocatorWithDefaultOptions", creates=("OrtAllocator",), scope="process",
   outlives="the default allocator is static: never release it",
   evidence=ev.find("OrtAllocator", ev.C_API, "check:thread.default-allocator"))
_d("SetCurrentGpuDeviceId GetCurrentGpuDeviceId", scope="thread-local",
   note="the current GPU device is per thread: set it on the thread that runs",
   evidence=(ev.doc(ev.C_API, "SetCurrentGpuDeviceId sets the current device of the GPU "
                    "execution provider (CUDA, TensorRT, ROCm)", "shared"),
             ev.policy("treated as per thread: the CUDA runtime's current device, which this "
                       "sets, belongs to the calling host thread; set it on the thread that "
                       "runs", "ORT documents it as process-wide", "shared")))
_d("CreateTensorWithDataAsOrtValue CreateTensorWithDataAndDeleterAsOrtValue "
   "CreateSparseTensorWithValuesAsOrtValue",
   reads=("OrtMemoryInfo",), creates=("OrtValue",),
   outlives="the caller's buffer outlives the value and every binding it is bound to (the "
            "deleter variant: ORT calls the deleter when the value goes)",
   evidence=(*ev.find("OrtValue", "check:value.user-memory-is-borrowed"),
             ev.check("value.deleter-called", "the deleter is called once at release",
                      "lifetime", versions="1.22.1-1.32.0")))
_d("CreateTensorAsOrtValue CreateSparseTensorAsOrtValue", reads=("OrtAllocator",),
   creates=("OrtValue",),
   outlives="the allocator (for a session allocator: its session) outlives the value",
   evidence=ev.find("OrtValue", "check:life.session-value-after-session-release"))
_d("BindOutput", writes=("OrtIoBinding",), reads=("OrtValue",),
   note="the bound Value is written by every run with the binding: exclusive for as long as "
        "it stays bound (ortc: the thread that binds it holds it exclusively until it is "
        "unbound or that thread ends; a run on another thread holds it for the run)",
   outlives="the binding keeps its own reference to the value; a value over caller memory "
            "keeps that memory in use",
   evidence=(ev.check("binding.bound-output-written-by-every-run", "written by every run",
                      "exclusive"),
             *ev.find("OrtValue", "tests/test_binding.py::"
                                  "test_bound_output_value_is_exclusive_while_bound")))
_d("RunOptionsAddActiveLoraAdapter", writes=("OrtRunOptions",), reads=("OrtLoraAdapter",),
   outlives="the adapter outlives the run options (kept by pointer)",
   evidence=_about("OrtLoraAdapter", "lifetime"))
_d("AddCustomOpDomain", writes=("OrtSessionOptions",), reads=("OrtCustomOpDomain",),
   note="options holding a custom-op domain must not serve concurrent session creations: "
        "create those sessions one at a time (thread.create-with-custom-op-domain)",
   outlives="the domain outlives every session created with these options",
   evidence=(*ev.find("OrtCustomOpDomain", ev.C_API, ev.ADD_CUSTOM_OP_DOMAINS),
             *ev.find("OrtSessionOptions", "check:thread.create-with-custom-op-domain")))
_d("AddInitializer AddExternalInitializers", writes=("OrtSessionOptions",), reads=("OrtValue",),
   outlives="the initializer values outlive every session created with these options",
   evidence=(ev.check("session.add-initializer", "an added initializer is used", "lifetime"),))
_d("CastTypeInfoToTensorInfo CastTypeInfoToMapTypeInfo CastTypeInfoToSequenceTypeInfo "
   "CastTypeInfoToOptionalTypeInfo", reads=("OrtTypeInfo",),
   outlives="the result is borrowed from the type info: never release it, never use it "
            "after the type info",
   evidence=(*_about("OrtTypeInfo", "lifetime"),
             ev.check("typeinfo.cast-wrong-kind", "a cast of the wrong kind returns OK with a "
                      "NULL result: test the pointer", "lifetime", outcome="known")))
_d("AllocatorGetInfo GetTensorMemoryInfo", reads=("OrtAllocator", "OrtValue"),
   outlives="the memory info is borrowed from its owner: never release it",
   evidence=_about("OrtMemoryInfo", "lifetime", "ort-doc"))
_d("SessionGetMemoryInfoForInputs SessionGetMemoryInfoForOutputs SessionGetEpDeviceForInputs "
   "SessionGetEpDeviceForOutputs", reads=("OrtSession",),
   outlives="the infos and devices are borrowed from the session: never release them",
   evidence=_about("OrtMemoryInfo", "lifetime", "ort-doc"))
_d("SetUserLoggingFunction", writes=("OrtSessionOptions",),
   outlives="the function and its parameter stay valid while any session created with these "
            "options lives; ORT calls it from any thread",
   evidence=ev.CALLBACK_EVIDENCE["OrtLoggingFunction"][:1])
_d("SessionOptionsSetCustomCreateThreadFn SessionOptionsSetCustomThreadCreationOptions "
   "SessionOptionsSetCustomJoinThreadFn", writes=("OrtSessionOptions",),
   outlives="the functions and options stay valid for the life of the sessions",
   evidence=(ev.check("session.custom-thread-functions", "ORT makes its pool threads "
                      "through the functions", "lifetime"),))
_d("SetGlobalCustomCreateThreadFn SetGlobalCustomThreadCreationOptions "
   "SetGlobalCustomJoinThreadFn", writes=("OrtThreadingOptions",),
   outlives="the functions and options stay valid for the env's life",
   evidence=(ev.check("env.global-custom-threads", "global pools made by custom functions",
                      "lifetime"),))
_d("SessionOptionsSetEpContextDataReadFunc", writes=("OrtSessionOptions",),
   outlives="the read function and its state stay valid while sessions are created with "
            "these options",
   evidence=(ev.check("api31.ep-context-read-func", "NULL options refused; set and cleared",
                      "exclusive", versions="1.31.1-1.32.0"), NEWER))
_d("GetModelPackageApi", relevant=False, note="returns a constant table",
   evidence=(ev.check("shared.process-calls", "four threads at once get the same table",
                      "shared", versions="1.31.1-1.32.0"),
             ev.check("api31.model-package-api", "one constant table (one thread)",
                      versions="1.31.1-1.32.0"), NEWER))
_d("EpDevice_GetMemoryCapacity", reads=("OrtEpDevice",),
   note="may ask the device's EP factory (not implemented by the CPU provider); whether a "
        "factory that implements it allows overlapping calls is up to that EP",
   evidence=(ev.check("shared.env-reads", "four threads at once ask the CPU EP device (made "
                      "by the check's thread) for its memory capacity: every call reports "
                      "NOT_IMPLEMENTED with the outputs untouched, as on one thread (only the "
                      "CPU provider's answer is exercised)", "shared", versions="1.32.0"),
             ev.check("api32.ep-device-memory-capacity", "NULL arguments refused; the CPU "
                      "device reports NOT_IMPLEMENTED (one thread)", versions="1.32.0"),
             NEWER))
# the kernel context's output getters of API 28/30, inside a compute and from four threads at once
_KCTX_OUT = "kernel.preallocated-output-and-sync-stream"
_d("KernelContext_GetPreallocatedOutput", reads=("OrtKernelContext",), creates=(),
   scope="callback",
   note="returns the output value the caller gave Run for the index, or NULL when it gave none "
        "(until GetOutput makes the output: from then on that value); allocates nothing",
   outlives="the value belongs to the context (it is the value GetOutput gives, over the "
            "caller's buffer when Run was given one), although it comes back through a "
            "non-const out-pointer: never release it, never use it after the compute returns",
   evidence=(ev.check(_KCTX_OUT, "inside a compute: NULL when Run was given no output (until "
                      "GetOutput made it, then GetOutput's value); with an output given, the "
                      "same OrtValue on every call, the one GetOutput then gives, over the "
                      "caller's buffer; four threads asking at once during the compute get the "
                      "compute's own answer", "shared", "lifetime", versions="1.30.0-1.32.0"),
             SCOPED))
# CreateOp reads the kernel info (Sync: while CreateKernel runs); InvokeOp runs inside a compute
# with that compute's context (one thread), reading the op and the inputs, writing the outputs.
_d("CreateOp", reads=("OrtKernelInfo", "OrtOpAttr"), scope="callback-sync",
   note="builds an operator inside CreateKernel from the kernel info; the kernel keeps the op "
        "and releases it",
   evidence=(ev.check("kernel.compute-and-invoke", "an op made in CreateKernelV2 with CreateOp "
                      "(one thread)", "lifetime", versions="1.19.2-1.32.0"), SCOPED))
_d("InvokeOp", reads=("OrtKernelContext", "OrtOp", "OrtValue"), writes=("OrtValue",),
   scope="callback",
   note="runs inside a kernel's compute, with its context: reads the op and the inputs, "
        "writes the outputs; one op may be invoked by several computes at once",
   evidence=(ev.check("send.op", "one op invoked by the computes of four threads' overlapping "
                      "runs: every result right", "shared", versions="1.17.1-1.32.0"),
             ev.check("kernel.compute-and-invoke", "InvokeOp inside a custom kernel (one "
                      "thread)", versions="1.19.2-1.32.0"), SCOPED))
_d("KernelContext_ParallelFor", reads=("OrtKernelContext",), scope="callback",
   note="runs the function on intra-op pool threads concurrently: it must be thread-safe",
   evidence=(SIGNATURE, ev.check("kernel.parallel-for", "each index exactly once, on pool "
                                 "threads at once: the function must be thread-safe (the "
                                 "context itself is used by the compute's thread only)",
                                 versions="1.19.2-1.32.0"), SCOPED))
_d("CreateStatus", creates=("OrtStatus",), relevant=False,
   note="a new status owned by the caller",
   evidence=(ev.check("shared.process-calls", "four threads at once each create, read and "
                      "release a status per round", "shared"),
             ev.check("status.roundtrip", "a created status reads back its code and message "
                      "(one thread)")))
_d("GetTrainingApi GetExecutionProviderApi GetModelEditorApi GetCompileApi GetEpApi "
   "GetInteropApi GetExperimentalFunction", relevant=False,
   note="returns a constant table or function (or NULL)",
   evidence=(ev.policy("not thread-relevant: each returns the address of a static table of "
                       "functions (or NULL)", "a check shows concurrent calls disagree",
                       "shared"),
             ev.check("shared.process-calls", "four threads at once get the model-editor, "
                      "compile, EP, interop (API 24), model-package (API 31) and training "
                      "tables: the same pointers as on one thread (GetExecutionProviderApi and "
                      "GetExperimentalFunction are not called)", "shared"),
             ev.check("ver.sub-tables", "the sub-tables exist on a CPU build (one thread)",
                      versions="1.22.1-1.32.0")))
_d("GetCompatibilityInfoFromModel GetCompatibilityInfoFromModelBytes", reads=("OrtAllocator",),
   note="reads a model file or bytes (no session): the model's ep_compatibility_info.<EP "
        "type> metadata entry, or NULL when it has none",
   outlives="the string returned comes from the caller's allocator: the caller frees it with "
            "that allocator",
   evidence=(ev.check("shared.compatibility-info", "four threads at once, with one allocator, "
                      "one model file and one byte buffer: every answer (the entry for two EP "
                      "types, NULL for a third) as on one thread, each string a new one freed "
                      "by the caller", "shared", "lifetime", versions="1.24.4-1.32.0"),))
# the getters of session options: reads of the options' fields, from several threads at once
_SO_GETTERS = ("shared.session-options-getters", "four threads at once read one options "
               "object set up on the check's thread: the config entries (new pairs each call, "
               "released by the caller), execution mode and memory-pattern flag, all as the "
               "setters stored them and as on one thread")
_cite("GetSessionOptionsConfigEntries",
      ev.check(_SO_GETTERS[0], _SO_GETTERS[1], "shared", "lifetime", versions="1.23.2-1.32.0"))
_cite("GetSessionExecutionMode GetMemPatternEnabled",
      ev.check(_SO_GETTERS[0], _SO_GETTERS[1], "shared", versions="1.27.0-1.32.0"),
      ev.check("session.options-setters", "after SetSessionExecutionMode and "
               "Enable/DisableMemPattern the getters read the last value set (one thread)",
               versions="1.27.0-1.32.0"))
_cite("MemoryInfoGetDeviceMemType MemoryInfoGetVendorId",
      ev.check("shared.memory-info-device", "four threads at once read the CPU memory info and "
               "two made by CreateMemoryInfo_V2: memory type and vendor id as made, as on one "
               "thread", "shared", versions="1.23.2-1.32.0"))
# the KernelInfo getters of API 24/25: read from several threads at once inside CreateKernelV2
_cite("KernelInfo_GetConfigEntries KernelInfo_GetOperatorDomain KernelInfo_GetOperatorType "
      "KernelInfo_GetOperatorSinceVersion",
      ev.check("kernel.info-concurrent-reads", "four threads at once, while CreateKernelV2 "
               "runs, read the operator's type, domain and since-version and the config entries "
               "(new pairs, released by the reader) of one kernel info and of its copy: all as "
               "on the callback's thread", "shared", versions="1.24.4-1.32.0"))
_cite("KernelInfoGetAttributeArray_string",
      ev.check("kernel.info-concurrent-reads", "four threads at once, while CreateKernelV2 "
               "runs, read a string-list attribute of one kernel info and of its copy (strings "
               "and array from the reader's allocator, freed by it): all as on the callback's "
               "thread", "shared", "lifetime", versions="1.25.1-1.32.0"))
# in-memory external data: the options keep the caller's buffers by pointer
_d("AddExternalInitializersFromFilesInMemory", writes=("OrtSessionOptions",),
   outlives="the buffers outlive every CreateSession with these options: the options keep "
            "them by pointer, not a copy (a session created after a buffer changed reads the "
            "new bytes); a session already created copied the data and no longer needs them",
   evidence=(ev.check("session.external-files-in-memory", "the options then serve the "
                      "model's external-data file from the buffer (they are changed: "
                      "exclusive); after the buffer is overwritten, the session already made "
                      "gives its old results and a new session from the same options reads the "
                      "new bytes (one thread)", "exclusive", "lifetime",
                      versions="1.19.2-1.32.0"),))
_d("ShapeInferContext_GetInputTypeShape", reads=("OrtShapeInferContext",), creates=(),
   scope="callback",
   outlives="the info belongs to the context although it comes back through an owned "
            "out-pointer: never release it (releasing it double-frees), never keep it past "
            "the callback",
   evidence=(SCOPED, ev.check("kernel.infer-info-ownership", "releasing the returned info "
                              "aborts with a double free", "lifetime", outcome="known",
                              versions="1.17.1-1.32.0")))
_d("Graph_GetGraphView", reads=("OrtGraph", "OrtNode"), creates=("OrtGraph",),
   outlives="the new view is the caller's to release (ReleaseGraph), before the source graph "
            "whose nodes it shows",
   evidence=(SIGNATURE, ev.doc(ev.C_API, "Graph_GetGraphView makes a new graph over some "
                               "nodes of a const source graph", "lifetime")))
_d("ShapeInferContext_SetOutputTypeShape", writes=("OrtShapeInferContext",), scope="callback",
   evidence=(SCOPED, ev.check("kernel.shape-inference", "called at session creation",
                              "lifetime", versions="1.19.2-1.32.0")))
_d("SessionOptionsAppendExecutionProvider_V2", writes=("OrtSessionOptions",),
   reads=("OrtEnv", "OrtEpDevice"), note="reads the env's EP devices (declared non-const)",
   outlives="the EP devices belong to the env",
   evidence=(ev.check("shared.env-reads", "four threads at once append the CPU EP device "
                      "to their own options and run: every session right (1.22.1 lists no EP "
                      "device: nothing appended there)", "shared", versions="1.22.1-1.32.0"),
             ev.check("device.cpu-ep-device", "a session appended to the CPU EP device runs "
                      "(one thread)", versions="1.23.2-1.32.0")))
_d("ReleaseKernelInfo", releases=("OrtKernelInfo",), scope="any thread",
   note="only for a copy made by CopyKernelInfo, which the kernel may keep and release "
        "anywhere", evidence=(RELEASE, SCOPED))
_d("SyncStream_GetHandle", reads=("OrtSyncStream",),
   note="returns the native stream handle (declared non-const, reads only)",
   evidence=(DEVICE_EP,))
_d("CreateValue", reads=("OrtValue",), creates=("OrtValue",),
   note="reads the element values; the new sequence or map is independent",
   evidence=(ev.check("shared.create-value", "four threads at once make sequences of the "
                      "same three tensors: every element reads back", "shared"),
             ev.check("value.sequence", "a sequence of tensors reads back (one thread)")))

# -- verdicts read from ORT's implementation --------------------------------------------------

# A const getter that loads lazily: a plugin EP's graph view keeps external initializers unloaded
# and the first ValueInfo_GetInitializerValue of one loads it into the graph's own value, through
# a const_cast and without a lock. Two threads asking at once (for one value info, or for two of
# the same graph) race on that value: exclusive on the value info and on its graph.
_d("ValueInfo_GetInitializerValue", reads=(), writes=("OrtValueInfo", "OrtGraph"),
   note="writes the owning graph: the first call for an external initializer of a plugin-EP "
        "graph view loads it into the graph's own value without a lock, so nothing else may use "
        "that graph (its value infos and nodes included) meanwhile; the graph stays Sync for "
        "every other getter",
   outlives="the value returned belongs to the graph: never release it, never use it after "
            "the graph",
   evidence=(_src(EP_TYPES, "EpValueInfo::GetInitializerValue -> EpGraph::GetInitializerValue",
                  "the value info asks its graph; for an initializer whose value is not yet "
                  "allocated (external data) the graph loads it in place, casting away the "
                  "const of its stored value, with no lock: a first call is a write to the "
                  "graph", "exclusive", "lifetime"),))

# An allocator kept without owning it: a non-NULL allocator given to CreateLoraAdapter(FromArray)
# is wrapped by pointer inside the adapter, which copies its parameters to the device with it and
# frees them through it when the adapter is released.
_LORA_ALLOCATOR = _src(LORA, "OrtApis::CreateLoraAdapter, OrtApis::CreateLoraAdapterFromArray, "
                       "lora::LoraAdapter::InitializeParamsValues",
                       "a non-NULL allocator is wrapped in an adapter-held allocator object that "
                       "keeps only the raw pointer (no reference is taken); the adapter allocates "
                       "device copies of its parameters from it and frees them through it when "
                       "it is released. The bytes of CreateLoraAdapterFromArray are copied; a "
                       "file is memory-mapped and kept by the adapter", "lifetime", "shared",
                       line=126)
_d("CreateLoraAdapter CreateLoraAdapterFromArray", reads=("OrtAllocator",),
   creates=("OrtLoraAdapter",),
   outlives="a non-NULL allocator outlives the adapter: the adapter keeps it by pointer without "
            "owning it and frees its device copies through it at ReleaseLoraAdapter (NULL, as "
            "ortc passes: nothing kept); the bytes given to CreateLoraAdapterFromArray are "
            "copied",
   evidence=(_LORA_ALLOCATOR, *ev.find("OrtLoraAdapter", "check:create.lora-adapter-errors")))
_cite("ReleaseLoraAdapter", _src(LORA, "OrtApis::ReleaseLoraAdapter", "deletes the adapter, "
                                 "freeing its device copies through the allocator it was given",
                                 "exclusive", "lifetime"))

# The EP-selection delegate is read from const options and called by every creating thread.
_DELEGATE_CALL = _src(POLICY_CONTEXT, "ProviderPolicyContext::SelectEpDevices",
                      "each CreateSession with the options reads the delegate and its state "
                      "from the (const) options and calls it, with no lock: threads creating "
                      "sessions from one SessionOptions call the delegate at once, with the same "
                      "state", "sync", "lifetime")
_d("SessionOptionsSetEpSelectionPolicyDelegate", writes=("OrtSessionOptions",),
   note="the delegate is called by every thread that creates a session with these options, "
        "concurrently when several share them: it and its state must be thread-safe (Rust: "
        "Fn + Send + Sync), or the options must not be shared while a delegate is set",
   outlives="the delegate's state stays valid while sessions may be created with these options "
            "(it is kept by pointer, not copied)",
   evidence=(_DELEGATE_CALL,
             *(e for e in ev.CALLBACK_EVIDENCE["EpSelectionDelegate"]
               if e.ref == "check:device.selection-delegate-concurrent"),
             ev.check("device.selection-delegate", "the delegate is called at creation (one "
                      "thread)", "lifetime", versions="1.23.2-1.32.0")))

# A stream kept by pointer: from RunOptionsSetSyncStream on, runs with these options use the
# stream, which is not Sync: the options are no longer Sync.
_d("RunOptionsSetSyncStream", writes=("OrtRunOptions",), reads=("OrtSyncStream",),
   note="per instance: from this call on the run options carry the stream, which is not Sync, "
        "so these run options are no longer Sync (never let two concurrent runs use them)",
   outlives="the stream outlives every run that uses these options: kept by pointer, not owned",
   evidence=(_src(RUN_OPTIONS, "OrtApis::RunOptionsSetSyncStream",
                  "stores the stream pointer in the run options, nothing more: no reference is "
                  "taken and no copy made", "exclusive", "lifetime", "not-sync"),
             *_about("OrtSyncStream", "not-sync", "policy")))

# A kernel context's outputs belong to the frame of the running kernel.
_GET_OUTPUT = _src(CUSTOM_OPS, "OrtApis::KernelContext_GetOutput",
                   "returns the frame's own output value for the index (allocating its tensor for "
                   "the shape on the first call): the value is the kernel context's, not the "
                   "caller's", "exclusive", "lifetime")
_d("KernelContext_GetOutput", writes=("OrtKernelContext",), creates=(), scope="callback",
   note="allocates or returns an output of the running kernel",
   outlives="the output belongs to the context (ORT's frame), although it comes back through a "
            "non-const out-pointer: never release it, never use it after the compute returns",
   evidence=(_GET_OUTPUT, SCOPED))

# Unregistering an EP library destroys the EP devices it made and unloads it.
_d("UnregisterExecutionProviderLibrary", writes=("OrtEnv",),
   note="changes env-wide state: do it before sessions are created or runs start; newer "
        "releases take the env's registration lock, which orders it against other "
        "registrations but not against users of the library's devices",
   outlives="destroys the library's EP devices (every OrtEpDevice GetEpDevices gave for it), "
            "releases the env's shared allocators for their memory and unloads the library: "
            "every such device, the sessions and options appended with them and allocators made "
            "for them are gone first",
   evidence=(_src(ENVIRONMENT, "Environment::UnregisterExecutionProviderLibrary, "
                  "Environment::EpInfo::~EpInfo",
                  "removes the library's devices from the env's list, unregisters the shared "
                  "allocators of their memory infos, then destroys its record, which deletes "
                  "the devices it owns and unloads the library", "exclusive", "lifetime"),
             *_about("OrtEnv", "exclusive", "policy")))

# -- verdicts confirmed by ORT's implementation (unchanged by the reading) --------------------

# custom_ops.cc: the kernel info is only read; what it hands out is new (the caller's) or its own.
_INFO_READ = _src(CUSTOM_OPS, "OrtApis::KernelInfo* (OpKernelInfo::GetAttr, GetAttrs, node())",
                  "each reads the const OpKernelInfo (an attribute, a count, a name of its node) "
                  "and copies the answer into the caller's buffer: nothing in the info changes, "
                  "so reads may overlap", "shared")
_cite("KernelInfoGetAttribute_float KernelInfoGetAttribute_int64 KernelInfoGetAttribute_string "
      "KernelInfoGetAttributeArray_float KernelInfoGetAttributeArray_int64 "
      "KernelInfo_GetInputCount KernelInfo_GetOutputCount KernelInfo_GetInputName "
      "KernelInfo_GetOutputName KernelInfo_GetNodeName", _INFO_READ)
_cite("KernelInfo_GetInputTypeInfo KernelInfo_GetOutputTypeInfo",
      _src(CUSTOM_OPS, "OrtApis::KernelInfo_GetInputTypeInfo, OrtApis::KernelInfo_GetOutputTypeInfo",
           "builds a new type info from the node argument's type: the caller owns and releases "
           "it; the info is only read", "shared", "lifetime"))
_cite("KernelInfoGetConstantInput_tensor",
      _src(CUSTOM_OPS, "OrtApis::KernelInfoGetConstantInput_tensor (TryGetConstantInput)",
           "points at the info's own constant input value: borrowed, never released by the "
           "caller", "shared", "lifetime"))
_cite("KernelInfo_GetLogger",
      _src(CUSTOM_OPS, "OrtApis::KernelInfo_GetLogger", "returns the logger of the kernel's "
           "execution provider, the same one to every caller: owned by ORT", "shared",
           "lifetime"))
_d("KernelInfoGetAttribute_tensor",
   outlives="the allocator outlives the returned value: the value's tensor keeps it by pointer "
            "(not owned) and frees its buffer through it when the value is released",
   evidence=(_src(CUSTOM_OPS, "OrtApis::KernelInfoGetAttribute_tensor",
                  "wraps the caller's allocator by pointer, without owning it, in the new "
                  "tensor it allocates for the attribute; the value the caller releases frees "
                  "its buffer through that allocator", "shared", "lifetime"), SCOPED))
_cite("KernelContext_GetInputCount KernelContext_GetOutputCount",
      _src(CUSTOM_OPS, "OrtApis::KernelContext_GetInputCount, OrtApis::KernelContext_GetOutputCount",
           "reads the counts of the const kernel context", "shared"))
_cite("KernelContext_GetInput",
      _src(CUSTOM_OPS, "OrtApis::KernelContext_GetInput", "points at the frame's input value: "
           "borrowed from the context for the compute call", "shared", "lifetime"))
_cite("KernelContext_GetGPUComputeStream KernelContext_GetResource",
      _src(CUSTOM_OPS, "OrtApis::KernelContext_GetGPUComputeStream, "
           "OrtApis::KernelContext_GetResource", "reads the native handle (or a resource) of the "
           "compute stream of the const context; NULL or an error without a stream", "shared"))
_cite("KernelContext_GetAllocator",
      _src(CUSTOM_OPS, "OrtApis::KernelContext_GetAllocator", "wraps the context's allocator "
           "for the memory info's device in a new OrtAllocator that holds a reference to it: "
           "the caller owns the wrapper and releases it with ReleaseAllocator", "shared",
           "lifetime"))
_cite("KernelContext_GetLogger",
      _src(CUSTOM_OPS, "OrtApis::KernelContext_GetLogger", "returns the run's logger: owned by "
           "ORT, borrowed for the compute call", "shared", "lifetime"))
_cite("Logger_LogMessage Logger_GetLoggingSeverityLevel",
      _src(CUSTOM_OPS, "OrtApis::Logger_LogMessage, OrtApis::Logger_GetLoggingSeverityLevel",
           "read the const logger (its level) and hand a message to its logging manager; the "
           "logger itself does not change", "shared"))
_cite("ReadOpAttr", _src(CUSTOM_OPS, "OrtApis::ReadOpAttr", "copies the const attribute's "
                         "value into the caller's buffer", "shared"))
_cite("ShapeInferContext_SetOutputTypeShape",
      _src(CUSTOM_OPS, "OrtApis::ShapeInferContext_SetOutputTypeShape", "sets the output's type "
           "and shape in the inference context (declared const, yet it writes)", "exclusive"))

# ep_api_types.cc: a plugin EP's graph view is built whole at creation; its getters copy what was
# built (the model editor's graph implements the same getters over its own storage).
_NODE_READ = _src(EP_TYPES, "EpNode getters (GetId, GetName, GetOpType, GetDomain, "
                  "GetSinceVersion, GetInputs, GetOutputs, GetImplicitInputs, GetAttributes, "
                  "GetAttribute, GetSubgraphs, GetGraph, GetEpName)",
                  "each reads what the node view built at creation (or the underlying const "
                  "node) and copies it, or pointers to the graph's own value infos, attributes "
                  "and subgraphs, out: nothing changes; the results are borrowed from the graph",
                  "shared", "lifetime")
_cite("Node_GetId Node_GetName Node_GetOperatorType Node_GetDomain Node_GetSinceVersion "
      "Node_GetNumInputs Node_GetInputs Node_GetNumOutputs Node_GetOutputs "
      "Node_GetNumImplicitInputs Node_GetImplicitInputs Node_GetNumAttributes Node_GetAttributes "
      "Node_GetAttributeByName Node_GetNumSubgraphs Node_GetSubgraphs Node_GetGraph "
      "Node_GetEpName", _NODE_READ)
_GRAPH_READ = _src(EP_TYPES, "EpGraph getters (GetName, GetModelPath, GetOnnxIRVersion, "
                   "GetNumOperatorSets, GetOperatorSets, GetInputs, GetOutputs, GetInitializers, "
                   "GetNodes, GetParentNode)",
                   "each reads the const graph viewer or what the view built at creation and "
                   "copies it out; strings and value infos returned are the graph's own "
                   "(borrowed). Only GetInitializerValue writes (see ValueInfo_GetInitializerValue)",
                   "shared", "lifetime")
_cite("Graph_GetName Graph_GetModelPath Graph_GetOnnxIRVersion Graph_GetNumOperatorSets "
      "Graph_GetOperatorSets Graph_GetNumInputs Graph_GetInputs Graph_GetNumOutputs "
      "Graph_GetOutputs Graph_GetNumInitializers Graph_GetInitializers Graph_GetNumNodes "
      "Graph_GetNodes Graph_GetParentNode", _GRAPH_READ)
_cite("ValueInfo_GetValueProducer ValueInfo_GetValueNumConsumers ValueInfo_GetValueConsumers",
      _src(EP_TYPES, "EpValueInfo::GetProducerInfo, GetConsumerInfos, GetNumConsumerInfos",
           "look the value up in the const graph viewer and return the graph's own node views: "
           "reads only", "shared", "lifetime"))
_cite("ValueInfo_IsRequiredGraphInput ValueInfo_IsOptionalGraphInput ValueInfo_IsGraphOutput "
      "ValueInfo_IsConstantInitializer ValueInfo_IsFromOuterScope",
      _src(EP_TYPES, "EpValueInfo::IsRequiredGraphInput, IsOptionalGraphInput, IsGraphOutput, "
           "IsConstantInitializer, IsFromOuterScope", "read flags set when the view was built",
           "shared"))
_cite("ValueInfo_GetExternalInitializerInfo",
      _src(EP_TYPES, "EpValueInfo::GetExternalInitializerInfo", "asks the const graph for the "
           "initializer's external-data record and returns a new one (the caller's to release), "
           "or NULL", "shared", "lifetime"))

# run_options.cc: plain fields, except the termination state (its own lock).
_RO_SET = _src(RUN_OPTIONS, "OrtApis::RunOptionsSet*, AddRunConfigEntry, "
               "RunOptionsEnableProfiling, RunOptionsDisableProfiling",
               "each assigns a plain field (or adds to the config map) of the options with no "
               "lock, while runs read those fields: exclusive", "exclusive")
_cite("RunOptionsSetRunLogVerbosityLevel RunOptionsSetRunLogSeverityLevel RunOptionsSetRunTag "
      "AddRunConfigEntry RunOptionsEnableProfiling RunOptionsDisableProfiling", _RO_SET)
_cite("RunOptionsGetRunLogVerbosityLevel RunOptionsGetRunLogSeverityLevel",
      _src(RUN_OPTIONS, "OrtApis::RunOptionsGetRunLog*Level", "read a field", "shared"))
_d("RunOptionsGetRunTag GetRunConfigEntry", reads=("OrtRunOptions",),
   outlives="the string returned points into the run options: it changes or dangles at the "
            "next RunOptionsSetRunTag / AddRunConfigEntry and at ReleaseRunOptions (copy it)",
   evidence=(_src(RUN_OPTIONS, "OrtApis::RunOptionsGetRunTag, OrtApis::GetRunConfigEntry",
                  "return a pointer to the options' own string (the tag, the map entry): a read, "
                  "whose result lives as long as that string", "shared", "lifetime"),))
_cite("RunOptionsSetTerminate RunOptionsUnsetTerminate",
      _src(RUN_OPTIONS, "OrtRunOptions::RequestTerminate, OrtRunOptions::ResetTerminate",
           "the termination state has its own mutex: setting or clearing it while runs read "
           "it is safe", "shared"))
_cite("RunOptionsAddActiveLoraAdapter",
      _src(RUN_OPTIONS, "OrtApis::RunOptionsAddActiveLoraAdapter", "appends the adapter's "
           "pointer to the options' list: kept, not owned, so the adapter outlives the options' "
           "runs", "exclusive", "lifetime"))
_cite("CreateRunOptions", _src(RUN_OPTIONS, "OrtApis::CreateRunOptions", "a new options object "
                               "the caller owns", "lifetime"))

# abi_session_options.cc: setters assign plain fields with no lock; getters read them.
_SO_SET = _src(SESSION_OPTIONS,
               "OrtApis::Set*/Enable*/Disable*/Add* of OrtSessionOptions",
               "each assigns a plain field of the options' value (or appends to a list) with no "
               "lock; CreateSession copies the options: a setter overlapping a creation or "
               "another call on the options is a data race", "exclusive")
_cite("SetSessionExecutionMode SetOptimizedModelFilePath EnableProfiling DisableProfiling "
      "EnableMemPattern DisableMemPattern EnableCpuMemArena DisableCpuMemArena SetSessionLogId "
      "SetSessionLogVerbosityLevel SetSessionLogSeverityLevel SetSessionGraphOptimizationLevel "
      "SetIntraOpNumThreads SetInterOpNumThreads AddFreeDimensionOverride "
      "AddFreeDimensionOverrideByName DisablePerSessionThreads AddSessionConfigEntry "
      "SetUserLoggingFunction", _SO_SET)
_SO_READ = _src(SESSION_OPTIONS,
                "OrtApis::CloneSessionOptions, HasSessionConfigEntry, GetSessionConfigEntry",
                "read the const options (a copy, a config lookup copied into the caller's "
                "buffer)", "shared")
_cite("CloneSessionOptions HasSessionConfigEntry GetSessionConfigEntry", _SO_READ)
# Setters of API 17-29 the stored abi_session_options.cc predates, seen acting on a CPU build:
# each stores state in the options that every later CreateSession reads (a write).
_cite("SetDeterministicCompute",
      ev.check("session.deterministic-compute", "the flag set is the one each later "
               "CreateSession copies into its session (the options line it logs reads 0, 1, 0 "
               "for default, true, false on one options object): state of the options that "
               "creations read", "exclusive", versions="1.17.1-1.32.0"))
_cite("SessionOptionsSetEpSelectionPolicy",
      ev.check("shared.selection-policy-create", "policies 0-6 are stored in the options and "
               "read by each creation (the session logs the policy last set, and runs on the "
               "CPU build); four threads create from one options object once the policy is "
               "set", "exclusive", versions="1.23.2-1.32.0"),
      ev.check("shared.selection-policy-create", "1.22.1: a policy makes creation fail",
               outcome="known", versions="1.22.1"))
#: ORT's design note on weightless models (its source-model buffer section)
WEIGHTLESS_NOTE = (f"{ev.GH}/blob/f5725e409464214e253d35c3b30562df4b86384b/docs/design/"
                   "Weightless_Mode.md")
_WEIGHTLESS_BUFFER = ev.check(
    "session.weightless-source-buffer", "the options keep the caller's pointer and size, not a "
    "copy: the EP table's getter reads back the very pointer of the last call (NULL and 0 "
    "before; a refused call keeps it); CloneSessionOptions carries it from 1.32.0 only",
    "exclusive", "lifetime", versions="1.29.0-1.32.0")
_d("SessionOptionsSetWeightlessSourceModelBuffer", writes=("OrtSessionOptions",),
   note="stores the caller's pointer and size in the options (a plugin EP reads them back at "
        "session creation); refuses a NULL pointer or a zero size",
   outlives="the buffer outlives the options, their clones (1.32.0 on: a clone carries the "
            "pointer) and every session created from them: kept by pointer, never copied",
   evidence=(_WEIGHTLESS_BUFFER,
             ev.doc(WEIGHTLESS_NOTE, "ORT's design note: the buffer must stay valid for the "
                    "session's lifetime", "lifetime")))
_cite("CreateSessionOptions ReleaseSessionOptions",
      _src(SESSION_OPTIONS,
           "OrtApis::CreateSessionOptions, OrtApis::ReleaseSessionOptions",
           "new and delete of the options object: the caller owns it", "lifetime"))
_cite("AddExternalInitializers",
      _src(SESSION_OPTIONS,
           "OrtApis::AddExternalInitializers", "copies each OrtValue handle into the options "
           "(sharing its tensor, so memory under a tensor made over the caller's buffer stays "
           "in use)", "lifetime"))

# environment.cc (main): registrations take the env's mutex in this source, older ones did not
# (so ortc keeps them exclusive); shared allocators belong to the env and die with their entry.
_ENV_REGISTER = _src(ENVIRONMENT, "Environment::RegisterAllocator, UnregisterAllocator, "
                     "CreateAndRegisterAllocator, RegisterExecutionProviderLibrary, "
                     "CreateSharedAllocator",
                     "each changes the env's shared-allocator list or library map under the "
                     "env's mutex in this source (older sources had no lock there); removing or "
                     "replacing an entry frees the allocator it held, an EP's own OrtAllocator "
                     "included", "exclusive", "lifetime")
_cite("RegisterAllocator UnregisterAllocator CreateAndRegisterAllocator "
      "CreateAndRegisterAllocatorV2 RegisterExecutionProviderLibrary ReleaseSharedAllocator",
      _ENV_REGISTER)
# what is registered is shared by the sessions that opt in, and they may run at once
_cite("CreateAndRegisterAllocator", *ev.find("OrtEnv", "check:thread.env-allocator-two-sessions"))
_d("CreateSharedAllocator", writes=("OrtEnv",),
   note="changes env-wide state: do it before sessions are created or runs start",
   outlives="replaces (and frees) a shared allocator already registered for that memory: an "
            "allocator GetSharedAllocator returned for it is gone; the new one belongs to the "
            "env (never released by the caller; ReleaseSharedAllocator ends it)",
   evidence=(_src(ENVIRONMENT, "Environment::CreateSharedAllocator, CreateSharedAllocatorImpl",
                  "under the env's mutex, erases any shared allocator registered for the memory "
                  "info (freeing it) and registers a new one made by the device's EP factory",
                  "exclusive", "lifetime"), *_about("OrtEnv", "exclusive", "policy")))
_d("GetSharedAllocator", reads=("OrtEnv",),
   note="reads env-wide state under the env's mutex (it may create the default CPU wrapper "
        "once, under that lock)",
   outlives="the allocator belongs to the env: never release it, and never use it after "
            "CreateSharedAllocator for the same memory, ReleaseSharedAllocator or "
            "UnregisterAllocator, which free it",
   evidence=(_src(ENVIRONMENT, "Environment::GetSharedAllocator", "looks the allocator up "
                  "under the env's mutex and returns the env's own pointer (a default CPU "
                  "wrapper made once on first use, under that lock)", "shared", "lifetime"),
             ev.check("shared.env-reads", "four threads at once read env-wide state, "
                      "GetSharedAllocator among them from API 23", "shared",
                      versions="1.22.1-1.32.0")))

# abi_key_value_pairs.h: a map plus two arrays of pointers into it, rebuilt by Add and Remove.
_KVP = ("onnxruntime/core/session/abi_key_value_pairs.h",
        "2f3354dfdae8960beaa1fbb1cea3a8c34e3dcef3")
_cite("AddKeyValuePair RemoveKeyValuePair",
      _src(_KVP, "OrtKeyValuePairs::Add, OrtKeyValuePairs::Remove", "change the map and the "
           "key and value arrays (rebuilt when an entry changes): exclusive, and every key or "
           "value pointer handed out before may dangle", "exclusive", "lifetime"))
_d("GetKeyValuePairs", reads=("OrtKeyValuePairs",),
   outlives="the key and value arrays belong to the pairs: valid until the next "
            "AddKeyValuePair or RemoveKeyValuePair, or the release",
   evidence=(_src(_KVP, "OrtKeyValuePairs (keys, values)", "keeps arrays of pointers into its "
                  "own strings for returning all entries: the caller reads the pairs' own "
                  "memory", "shared", "lifetime"),))

# -- onnxruntime_c_api.cc and the type-info files (paraphrased readings) -----------------------

#: the C API's main file, read at one commit of main (ORT 1.25 in development, OrtApi 24)
C_API_IMPL = ("onnxruntime/core/session/onnxruntime_c_api.cc",
              "003d03582b884c750c3b8832dde0a9a9cd1c7670")
TENSOR_TYPE = ("onnxruntime/core/framework/tensor_type_and_shape.cc",
               "02cd27d41137d16077956ebdc6bfde564a1927dc")
TYPE_INFO = ("onnxruntime/core/framework/onnxruntime_typeinfo.cc",
             "00ca168922183eeb0c1e0f93c04f2f707087f86d")
STATUS = ("onnxruntime/core/framework/error_code.cc", "01e5d2aa5fe85e5e5726645b9f3cc7eadc9fdd54")


def _life(slots: str, outlives: str, *records: ev.Evidence) -> None:
    """State a lifetime the implementation shows and cite it, keeping the slot's verdict (its
    declared one, if any, else the signature's)."""
    for s in slots.split():
        assert s in SINCE, f"unknown slot {s}"
        over = dict(_OVERRIDES.get(s, {}))
        over["outlives"] = "; ".join(x for x in (over.get("outlives", ""), outlives) if x)
        _OVERRIDES[s] = over
    _cite(slots, *records)


# KernelContext_GetSyncStream inside a CPU compute (kernel.preallocated-output-and-sync-stream)
_life("KernelContext_GetSyncStream", "on the CPU provider the answer is NULL: nothing to "
      "release; who owns a stream a device execution provider hands out is not shown here",
      ev.check(_KCTX_OUT, "inside a compute on the CPU provider: NULL, on the compute's thread "
               "and for four threads asking at once during the compute", "shared",
               versions="1.28.0-1.32.0"))


# Values: reads of a const value copy out or point into the value's own memory; writers go
# through a mutable tensor with no lock.
_cite("IsTensor HasValue IsSparseTensor GetTensorData GetStringTensorDataLength "
      "GetStringTensorElementLength GetStringTensorContent GetStringTensorElement "
      "GetTensorSizeInBytes GetValueCount GetSparseTensorFormat",
      _src(C_API_IMPL, "OrtApis::IsTensor, HasValue, IsSparseTensor, GetTensorData, "
           "GetStringTensor*, GetTensorSizeInBytes, GetValueCount, GetSparseTensorFormat",
           "each reads the const value (a flag, a size, the data pointer, or strings copied "
           "into the caller's buffer): nothing in the value changes, so reads may overlap",
           "shared"))
_cite("GetTensorTypeAndShape GetTypeInfo GetValueType GetSparseTensorValuesTypeAndShape "
      "GetSparseTensorIndicesTypeShape",
      _src(TENSOR_TYPE, "OrtApis::GetTensorTypeAndShape, GetTypeInfo, GetValueType, "
           "GetSparseTensorValuesTypeAndShape, GetSparseTensorIndicesTypeShape "
           "(OrtTypeInfo::FromOrtValue)", "build a new info from the const value's shape and "
           "type: the caller owns and releases it; the value is only read", "shared",
           "lifetime"))
_cite("TensorAt FillStringTensor FillStringTensorElement",
      _src(C_API_IMPL, "OrtApis::TensorAt, FillStringTensor, FillStringTensorElement",
           "take the tensor mutably (TensorAt hands back a writable pointer into its data; "
           "the fills assign strings, copied, into its elements) with no lock: exclusive",
           "exclusive"))
_life("GetResizedStringTensorElementBuffer",
      "the buffer returned is the element's own string storage: valid until that element is "
      "filled or resized again, or the value is released",
      _src(C_API_IMPL, "OrtApis::GetResizedStringTensorElementBuffer", "resizes one string "
           "element of the mutable tensor and returns a pointer into that string: exclusive, "
           "and the pointer lives as long as the element's storage", "exclusive", "lifetime"))
_life("GetValue",
      "the allocator outlives the value returned for a tensor (a sequence element, a map's "
      "keys or values): its tensor keeps the allocator by pointer, without owning it, and "
      "frees its buffer through it",
      _src(C_API_IMPL, "OrtApis::GetValue (CreateTensorAndPopulate -> CreateTensorImpl)",
           "copies the element (a tensor of a sequence, a map's keys or values) into a new "
           "tensor allocated from the caller's allocator, wrapped by pointer and not owned; a "
           "map element of a sequence is copied with no allocator; the source is only read",
           "shared", "lifetime"))
_cite("CreateOpaqueValue GetOpaqueValue",
      _src(C_API_IMPL, "OrtApis::CreateOpaqueValue, OrtApis::GetOpaqueValue",
           "the registered opaque type copies the caller's container into a new value, or the "
           "const value's content out into the caller's container: nothing is kept", "shared",
           "lifetime"))
_cite("FillSparseTensorCoo FillSparseTensorCsr FillSparseTensorBlockSparse",
      _src(C_API_IMPL, "OrtApis::FillSparseTensorCoo, FillSparseTensorCsr, "
           "FillSparseTensorBlockSparse (SparseTensor::Make*Data, Make*Strings)",
           "allocate the sparse tensor's buffer from its own allocator and copy the caller's "
           "values and indices into it (through a data transfer between the two memory infos): "
           "exclusive on the value, nothing of the caller's is kept", "exclusive", "lifetime"))
_life("UseCooIndices UseCsrIndices UseBlockSparseIndices",
      "the caller's index buffer outlives the value and every binding it is bound to: the "
      "sparse tensor indexes it in place (as it does the values given to "
      "CreateSparseTensorWithValuesAsOrtValue)",
      _src(C_API_IMPL, "OrtApis::UseCooIndices, UseCsrIndices, UseBlockSparseIndices "
           "(SparseTensor::Use*Indices)", "make the sparse tensor's index tensors over the "
           "caller's buffer, which is neither copied nor owned (only allowed on a tensor made "
           "over the caller's values, with no allocator): exclusive on the value, and the "
           "buffer is borrowed for the value's life", "exclusive", "lifetime"))
_life("GetSparseTensorValues GetSparseTensorIndices",
      "the pointer returned is into the value's own memory: valid while the value lives and "
      "is not refilled",
      _src(C_API_IMPL, "OrtApis::GetSparseTensorValues; GetSparseTensorIndices "
           "(tensor_type_and_shape.cc)", "return the raw data pointer of the const sparse "
           "tensor's values or indices: a read, borrowed from the value", "shared",
           "lifetime"))
_cite("ReleaseValue ReleaseRunOptions ReleaseSession ReleaseModelMetadata",
      _src(C_API_IMPL, "OrtApis::ReleaseValue, ReleaseRunOptions, ReleaseSession, "
           "ReleaseModelMetadata (DEFINE_RELEASE_ORT_OBJECT_FUNCTION)", "delete the object: "
           "exclusive and last", "exclusive", "lifetime"))
# ReleaseSession takes no lock against runs: a binding makes close wait for them, or refuses
_life("ReleaseSession", "no Run may be inside the session: ReleaseSession does not wait for a "
      "Run on another thread (it returns at once and that Run then uses the freed session, "
      "and the process dies), so a binding's close must wait for the session's runs or refuse",
      *ev.find("OrtSession", "check:thread.release-session-during-run"))

# IoBinding: every call goes through the binding's IOBinding object without a lock.
_cite("BindInput BindOutputToDevice ClearBoundInputs ClearBoundOutputs SynchronizeBoundInputs "
      "SynchronizeBoundOutputs",
      _src(C_API_IMPL, "OrtApis::BindInput, BindOutputToDevice, ClearBoundInputs, "
           "ClearBoundOutputs, SynchronizeBoundInputs, SynchronizeBoundOutputs (IOBinding)",
           "each changes the binding's IOBinding (its feeds, its outputs, or the streams it "
           "synchronises) through a non-const pointer with no lock: exclusive", "exclusive"))
_life("BindInput", "the binding keeps its own reference to the value (sharing its tensor): a "
      "value over caller memory keeps that memory in use until it is unbound or the binding "
      "released",
      _src(C_API_IMPL, "OrtApis::BindInput (IOBinding::BindInput)", "stores a copy of the "
           "OrtValue handle, which shares the value's tensor, in the binding's feeds",
           "lifetime"))
_cite("ReleaseIoBinding", _src(C_API_IMPL, "OrtApis::ReleaseIoBinding", "deletes the binding "
                                "and the IOBinding it owns", "exclusive", "lifetime"))

# Sessions: the getters read the const session's model definitions and copy them out.
_cite("SessionGetInputCount SessionGetOutputCount SessionGetOverridableInitializerCount "
      "SessionGetInputTypeInfo SessionGetOutputTypeInfo SessionGetOverridableInitializerTypeInfo "
      "SessionGetInputName SessionGetOutputName SessionGetOverridableInitializerName "
      "SessionGetModelMetadata SessionGetProfilingStartTimeNs",
      _src(C_API_IMPL, "OrtApis::SessionGet* (GetNodeDefListCountHelper, "
           "GetNodeDefTypeInfoHelper, GetNodeDefNameImpl), SessionGetModelMetadata, "
           "SessionGetProfilingStartTimeNs", "each reads the const session (its model's "
           "input, output or overridable-initializer definitions, its metadata, its "
           "profiler's start time) and copies the answer out: a new type info or metadata "
           "the caller releases, a name allocated from the caller's allocator (freed with it)",
           "shared", "lifetime"))
_cite("SessionEndProfiling",
      _src(C_API_IMPL, "OrtApis::SessionEndProfiling (InferenceSession::EndProfiling)",
           "ends the session's profiling through a non-const session and copies the file name "
           "out with the caller's allocator: it changes the session's profiler", "exclusive"))
_cite("SetEpDynamicOptions",
      _src(C_API_IMPL, "OrtApis::SetEpDynamicOptions (InferenceSession::SetEpDynamicOptions)",
           "hands the keys and values to the non-const session, which passes them to its "
           "execution providers; this layer takes no lock", "exclusive"))
_life("Session_GetEpGraphAssignmentInfo EpAssignedSubgraph_GetEpName EpAssignedSubgraph_GetNodes "
      "EpAssignedNode_GetName EpAssignedNode_GetDomain EpAssignedNode_GetOperatorType",
      "the records and strings returned belong to the session: valid until it is released",
      _src(C_API_IMPL, "OrtApis::Session_GetEpGraphAssignmentInfo, EpAssignedSubgraph_*, "
           "EpAssignedNode_*", "return the data of the const session's own list of assignment "
           "records, and pointers to their strings and node lists: reads, borrowed from the "
           "session", "shared", "lifetime"))

# Model metadata: a copy made at SessionGetModelMetadata, read by its getters.
_cite("ModelMetadataGetProducerName ModelMetadataGetGraphName ModelMetadataGetDomain "
      "ModelMetadataGetDescription ModelMetadataGetGraphDescription "
      "ModelMetadataLookupCustomMetadataMap ModelMetadataGetCustomMetadataMapKeys "
      "ModelMetadataGetVersion",
      _src(C_API_IMPL, "OrtApis::ModelMetadata*", "each reads a field of the const metadata "
           "and copies it into memory from the caller's allocator (the caller frees it with "
           "that allocator): reads only", "shared", "lifetime"))

# Allocators: the C functions call the allocator's own function pointers.
_cite("AllocatorAlloc AllocatorFree AllocatorGetStats",
      _src(C_API_IMPL, "OrtApis::AllocatorAlloc, AllocatorFree, AllocatorGetStats",
           "call the allocator's own Alloc, Free or GetStats with no lock of their own: calls "
           "may overlap exactly when that allocator's implementation allows it (ORT's CPU and "
           "arena allocators: the thread checks); GetStats returns new pairs the caller "
           "releases", "shared", "lifetime"))

# Type infos and tensor shape infos: plain objects, fields set by setters, read by getters.
_cite("GetOnnxTypeFromTypeInfo", _src(TYPE_INFO, "OrtApis::GetOnnxTypeFromTypeInfo",
                                      "reads a field of the const info", "shared"))
_life("GetDenotationFromTypeInfo", "the string returned belongs to the type info: valid until "
      "it is released",
      _src(TYPE_INFO, "OrtApis::GetDenotationFromTypeInfo", "returns a pointer to the const "
           "info's own denotation string", "shared", "lifetime"))
_cite("ReleaseTypeInfo", _src(TYPE_INFO, "OrtApis::ReleaseTypeInfo (~OrtTypeInfo)", "deletes "
                              "the info and the tensor, map or sequence info it owns (what the "
                              "CastTypeInfoTo* functions returned)", "exclusive", "lifetime"))
_cite("SetTensorElementType SetDimensions",
      _src(TENSOR_TYPE, "OrtApis::SetTensorElementType, OrtApis::SetDimensions", "assign the "
           "info's type or shape with no lock", "exclusive"))
_cite("GetTensorElementType GetDimensionsCount GetDimensions GetTensorShapeElementCount",
      _src(TENSOR_TYPE, "OrtApis::GetTensorElementType, GetDimensionsCount, GetDimensions, "
           "GetTensorShapeElementCount", "read the const info's fields, copying dimensions into "
           "the caller's array", "shared"))
_life("GetSymbolicDimensions", "the names returned belong to the info: valid until it is "
      "released (or its dimensions are set again)",
      _src(TENSOR_TYPE, "OrtApis::GetSymbolicDimensions", "fills the caller's array with "
           "pointers to the const info's own dimension-name strings", "shared", "lifetime"))
_cite("CreateTensorTypeAndShapeInfo ReleaseTensorTypeAndShapeInfo",
      _src(TENSOR_TYPE, "OrtApis::CreateTensorTypeAndShapeInfo, "
           "OrtApis::ReleaseTensorTypeAndShapeInfo", "new and delete: the caller owns the "
           "info", "lifetime"))

# Status: a malloc'd code and message.
_cite("GetErrorCode", _src(STATUS, "OrtGetErrorCode (OrtApis::GetErrorCode)", "reads the const "
                           "status's code", "shared"))
_life("GetErrorMessage", "the message is the status's own: valid until ReleaseStatus",
      _src(STATUS, "OrtGetErrorMessage (OrtApis::GetErrorMessage)", "returns a pointer to the "
           "message stored inside the const status", "shared", "lifetime"))
_cite("ReleaseStatus", _src(STATUS, "OrtReleaseStatus (OrtApis::ReleaseStatus)", "frees the "
                            "status and its message", "exclusive", "lifetime"))

# Custom-op domains and libraries.
_cite("CreateCustomOpDomain ReleaseCustomOpDomain",
      _src(C_API_IMPL, "OrtApis::CreateCustomOpDomain, OrtApis::ReleaseCustomOpDomain",
           "new (copying the domain name) and delete: the caller owns the domain", "lifetime"))
_life("CustomOpDomain_Add", "the op outlives the domain and every session created with "
      "options it was added to: the domain keeps it by pointer",
      _src(C_API_IMPL, "OrtApis::CustomOpDomain_Add", "appends the op's pointer to the "
           "domain's list with no lock: kept, not copied, not owned", "exclusive",
           "lifetime"))
_life("RegisterCustomOpsLibrary", "the library stays loaded until every session created with "
      "these options is released: the caller owns the handle returned and unloads it",
      _src(C_API_IMPL, "OrtApis::RegisterCustomOpsLibrary", "loads the library, returns its "
           "handle to the caller (ORT does not keep or unload it) and runs the library's "
           "RegisterCustomOps on the options, on the calling thread: the options are written",
           "exclusive", "lifetime"))
_cite("RegisterCustomOpsLibrary_V2 RegisterCustomOpsUsingFunction EnableOrtCustomOps",
      _src(C_API_IMPL, "OrtApis::RegisterCustomOpsLibrary_V2 "
           "(OrtSessionOptions::RegisterCustomOpsLibrary), RegisterCustomOpsUsingFunction, "
           "EnableOrtCustomOps", "hand the options to the options' own library registration, "
           "to a registration function found in the process, or to the built-in extensions' "
           "registration, which add custom-op domains to them on the calling thread: the "
           "options are written", "exclusive"))
_cite("CreateArenaCfg CreateArenaCfgV2 ReleaseArenaCfg CreatePrepackedWeightsContainer "
      "ReleasePrepackedWeightsContainer",
      _src(C_API_IMPL, "OrtApis::CreateArenaCfg, CreateArenaCfgV2, ReleaseArenaCfg, "
           "CreatePrepackedWeightsContainer, ReleasePrepackedWeightsContainer", "new (the "
           "arena settings copied from the arguments) and delete: the caller owns the object",
           "lifetime"))

# Graph views and model-editor objects: releases, names and copies.
_cite("ReleaseValueInfo ReleaseNode ReleaseGraph ReleaseModel ReleaseExternalInitializerInfo",
      _src(C_API_IMPL, "OrtApis::ReleaseValueInfo, ReleaseNode, ReleaseGraph, ReleaseModel, "
           "ReleaseExternalInitializerInfo", "delete the object: exclusive and last",
           "exclusive", "lifetime"))
_life("GetValueInfoName", "the name belongs to the value info: valid until it (or its graph) "
      "is released",
      _src(C_API_IMPL, "OrtApis::GetValueInfoName, OrtApis::GetValueInfoTypeInfo", "return the "
           "const value info's own name and type info: reads, borrowed from it", "shared",
           "lifetime"))
_cite("GetValueInfoTypeInfo",
      _src(C_API_IMPL, "OrtApis::GetValueInfoTypeInfo", "returns the const value info's own "
           "type info (an error if it has none): a read, borrowed from it", "shared",
           "lifetime"))
_cite("Graph_GetModelMetadata",
      _src(C_API_IMPL, "OrtApis::Graph_GetModelMetadata", "asks the const graph for a new "
           "metadata object the caller owns and releases", "shared", "lifetime"))
_cite("OpAttr_GetTensorAttributeAsOrtValue",
      _src(C_API_IMPL, "OrtApis::OpAttr_GetTensorAttributeAsOrtValue", "copies the const "
           "attribute's inline tensor into a new value on ORT's default CPU allocator: the "
           "caller owns it, nothing ties it to the attribute", "shared", "lifetime"))
_cite("OpAttr_GetType", _src(C_API_IMPL, "OrtApis::OpAttr_GetType", "reads the const "
                             "attribute's type", "shared"))
_life("OpAttr_GetName", "the name belongs to the attribute: valid until it (or its node) is "
      "released",
      _src(C_API_IMPL, "OrtApis::OpAttr_GetName", "returns the const attribute's own name "
           "string", "shared", "lifetime"))
_cite("CreateExternalInitializerInfo ExternalInitializerInfo_GetFileOffset "
      "ExternalInitializerInfo_GetByteSize",
      _src(C_API_IMPL, "OrtApis::CreateExternalInitializerInfo, "
           "ExternalInitializerInfo_GetFileOffset, ExternalInitializerInfo_GetByteSize",
           "a new record copying the path (the caller's), and reads of its fields", "shared",
           "lifetime"))
_life("ExternalInitializerInfo_GetFilePath", "the path belongs to the info: valid until it is "
      "released",
      _src(C_API_IMPL, "OrtApis::ExternalInitializerInfo_GetFilePath", "returns the const "
           "record's own path string", "shared", "lifetime"))

# Key-value pairs: the remaining functions.
_cite("CreateKeyValuePairs ReleaseKeyValuePairs",
      _src(C_API_IMPL, "OrtApis::CreateKeyValuePairs, OrtApis::ReleaseKeyValuePairs", "new and "
           "delete: the caller owns the pairs", "lifetime"))
_life("GetKeyValue", "the value returned points into the pairs: valid until the next "
      "AddKeyValuePair or RemoveKeyValuePair, or the release",
      _src(C_API_IMPL, "OrtApis::GetKeyValue", "looks the key up in the const pairs' map and "
           "returns a pointer to the stored value string (NULL if absent)", "shared",
           "lifetime"))

# Hardware and EP devices: plain records owned by the env (or the EP library that made them).
_DEVICE_FIELDS = _src(C_API_IMPL, "OrtApis::HardwareDevice_*, OrtApis::EpDevice_* (but "
                      "EpDevice_GetMemoryCapacity)", "each reads a field of the const device "
                      "record: a number, or a pointer to the record's own string, key-value "
                      "pairs, hardware device or memory info", "shared", "lifetime")
_life("HardwareDevice_Vendor HardwareDevice_Metadata EpDevice_EpName EpDevice_EpVendor "
      "EpDevice_EpMetadata EpDevice_EpOptions EpDevice_Device EpDevice_MemoryInfo",
      "what is returned belongs to the device: never release it; valid while the device is "
      "(until the EP library that made it is unregistered, or the env ends)", _DEVICE_FIELDS)
_cite("HardwareDevice_Type HardwareDevice_VendorId HardwareDevice_DeviceId", _DEVICE_FIELDS)
_life("CreateSyncStreamForEpDevice",
      "the stream is the caller's to release, and is the EP's own implementation: release it "
      "before the EP library that made the device is unregistered",
      _src(C_API_IMPL, "OrtApis::CreateSyncStreamForEpDevice", "reads the const device and "
           "asks its EP factory (through a non-const pointer to it: whether two such calls may "
           "overlap is up to the EP) for a stream implementation, wrapped in a new stream "
           "object", "shared", "lifetime"))
_cite("SyncStream_GetHandle ReleaseSyncStream",
      _src(C_API_IMPL, "OrtApis::SyncStream_GetHandle, OrtApis::ReleaseSyncStream", "read the "
           "stream's native handle; delete the stream (its EP implementation with it)",
           "shared", "lifetime"))
_cite("CopyTensors",
      _src(C_API_IMPL, "OrtApis::CopyTensors", "reads the env's data-transfer manager and the "
           "source tensors, writes each destination tensor (taken mutably) and queues on the "
           "stream if one is given: exclusive on destinations and stream", "exclusive",
           "shared"))
_cite("GetModelCompatibilityForEpDevices",
      _src(C_API_IMPL, "OrtApis::GetModelCompatibilityForEpDevices", "reads the const devices "
           "and, if their EP factory validates compatibility, calls it with their hardware "
           "devices (whether such calls may overlap is up to the EP)", "shared"))
_cite("GetHardwareDeviceEpIncompatibilityDetails",
      _src(C_API_IMPL, "OrtApis::GetHardwareDeviceEpIncompatibilityDetails", "asks the const "
           "env for a new details record the caller owns and releases", "shared",
           "lifetime"))
_cite("DeviceEpIncompatibilityDetails_GetReasonsBitmask "
      "DeviceEpIncompatibilityDetails_GetErrorCode ReleaseDeviceEpIncompatibilityDetails",
      _src(C_API_IMPL, "OrtApis::DeviceEpIncompatibilityDetails_*, "
           "ReleaseDeviceEpIncompatibilityDetails", "read the const record's fields; delete "
           "it", "shared", "lifetime"))
_life("DeviceEpIncompatibilityDetails_GetNotes", "the notes belong to the record: valid until "
      "it is released",
      _src(C_API_IMPL, "OrtApis::DeviceEpIncompatibilityDetails_GetNotes", "returns the const "
           "record's own notes string (NULL if empty)", "shared", "lifetime"))
_cite("UpdateEnvWithCustomLogLevel",
      _src(C_API_IMPL, "OrtApis::UpdateEnvWithCustomLogLevel", "sets the default logger's "
           "severity through the non-const env's logging manager while other threads may "
           "log: kept exclusive", "exclusive"))


# Memory infos and container type infos: plain immutable records, new and delete.
MEMORY_INFO = ("onnxruntime/core/framework/allocator.cc", "0077338cbd53ad9fb27fa666aa786e4212ce7f13")
MAP_TYPE = ("onnxruntime/core/framework/onnxruntime_map_type_info.cc",
            "00772ff127ac58a91a0fb6498dd786c320f986f6")
SEQUENCE_TYPE = ("onnxruntime/core/framework/onnxruntime_sequence_type_info.cc",
                 "9efc98126bf3c26c319148b29b37093dcda31c40")
_cite("CreateMemoryInfo ReleaseMemoryInfo",
      _src(MEMORY_INFO, "OrtApis::CreateMemoryInfo, OrtApis::ReleaseMemoryInfo", "new (for a "
           "known device name, else an error) and delete: the caller owns the info", "lifetime"))
_cite("MemoryInfoGetId MemoryInfoGetMemType MemoryInfoGetType CompareMemoryInfo "
      "MemoryInfoGetDeviceType",
      _src(MEMORY_INFO, "OrtApis::MemoryInfoGetId, GetMemType, GetType, CompareMemoryInfo, "
           "MemoryInfoGetDeviceType", "read fields of the const infos (compare two of them): "
           "nothing changes", "shared"))
_life("MemoryInfoGetName", "the name is ORT's (a constant device name kept by the info): valid "
      "at least while the info lives; never free it",
      _src(MEMORY_INFO, "OrtApis::MemoryInfoGetName", "returns the name pointer the const info "
           "holds (CreateMemoryInfo sets it to ORT's constant name of the device)", "shared",
           "lifetime"))
_cite("GetMapKeyType", _src(MAP_TYPE, "OrtApis::GetMapKeyType", "reads the const info's key "
                            "type", "shared"))
_cite("GetMapValueType GetSequenceElementType",
      _src(MAP_TYPE, "OrtApis::GetMapValueType (and GetSequenceElementType in "
           "onnxruntime_sequence_type_info.cc)", "clone the const info's value (element) type "
           "into a new type info the caller owns and releases: independent of the source",
           "shared", "lifetime"))
_cite("ReleaseMapTypeInfo", _src(MAP_TYPE, "OrtApis::ReleaseMapTypeInfo", "deletes the info "
                                 "and the value type info it owns", "exclusive", "lifetime"))
_cite("ReleaseSequenceTypeInfo", _src(SEQUENCE_TYPE, "OrtApis::ReleaseSequenceTypeInfo",
                                      "deletes the info and the element type info it owns",
                                      "exclusive", "lifetime"))

# -- the remaining OrtApi slots read from ORT's implementation (paraphrased) ------------------

#: the global thread-pool options: plain fields set by the SetGlobal* functions
THREAD_UTILS = ("onnxruntime/core/util/thread_utils.cc", "3618e5c66dca7a220cbd02c89634f317213cd0a7")
_cite("CreateThreadingOptions ReleaseThreadingOptions",
      _src(THREAD_UTILS, "OrtApis::CreateThreadingOptions, OrtApis::ReleaseThreadingOptions",
           "new and delete of a plain options record: the caller owns it", "lifetime"))
_cite("SetGlobalIntraOpNumThreads SetGlobalInterOpNumThreads SetGlobalSpinControl "
      "SetGlobalDenormalAsZero SetGlobalIntraOpThreadAffinity",
      _src(THREAD_UTILS, "OrtApis::SetGlobalIntraOpNumThreads, SetGlobalInterOpNumThreads, "
           "SetGlobalSpinControl, SetGlobalDenormalAsZero, SetGlobalIntraOpThreadAffinity",
           "each assigns fields of the intra-op and/or inter-op pool parameters in the options "
           "(the affinity string copied) with no lock: exclusive on the options", "exclusive"))

#: CreateCpuMemoryInfo lives with the CPU provider's factory
CPU_FACTORY = ("onnxruntime/core/providers/cpu/cpu_provider_factory.cc",
               "ca62ab1df3203b941934664c322f50f3d3a7b7a5")
_cite("CreateCpuMemoryInfo",
      _src(CPU_FACTORY, "OrtApis::CreateCpuMemoryInfo", "a new memory info for ORT's CPU device "
           "(name, allocator type and memory type copied in): the caller owns it and releases "
           "it with ReleaseMemoryInfo", "lifetime"))
#: a stored allocator.cc from after API 23 whose commit the index does not give
MEMORY_INFO_V2 = ("onnxruntime/core/framework/allocator.cc", "main",
                  "a version from API 23 or later")
_cite("CreateMemoryInfo_V2",
      _src(MEMORY_INFO_V2, "OrtApis::CreateMemoryInfo_V2", "maps the public device and memory "
           "types to ORT's and makes a new memory info (an error for an unknown device type): "
           "the caller owns it", "lifetime"))

#: ReleaseAllocator frees the wrapper ORT made for the caller
ALLOCATOR_ADAPTERS = ("onnxruntime/core/session/allocator_adapters.cc",
                      "4c2aea9788078689afbb7b9970e93c04913503f4")
_life("ReleaseAllocator", "only for an allocator ORT made for the caller (CreateAllocator, "
      "KernelContext_GetAllocator, KernelInfoGetAllocator): never the default allocator nor an "
      "allocator the env owns (GetSharedAllocator); what it wrapped stays with its owner",
      _src(ALLOCATOR_ADAPTERS, "OrtApis::ReleaseAllocator", "deletes the caller's OrtAllocator "
           "wrapper (which holds a shared reference to the session's or context's allocator, "
           "dropped with it): exclusive and last", "exclusive", "lifetime"))

#: GetOptionalContainedTypeInfo clones the contained type
OPTIONAL_TYPE = ("onnxruntime/core/framework/onnxruntime_optional_type_info.cc",
                 "ca28d729af42e755d456126c943d7af13ec8a708")
_cite("GetOptionalContainedTypeInfo",
      _src(OPTIONAL_TYPE, "OrtApis::GetOptionalContainedTypeInfo", "clones the const optional "
           "info's contained type into a new type info: the caller owns and releases it, "
           "independent of the source", "shared", "lifetime"))

#: a stored tensor_type_and_shape.cc from API 24 or later (HasShape) whose commit is not given
TENSOR_TYPE_V24 = ("onnxruntime/core/framework/tensor_type_and_shape.cc", "main",
                   "a version from API 24 or later")
_cite("TensorTypeAndShape_HasShape",
      _src(TENSOR_TYPE_V24, "OrtApis::TensorTypeAndShape_HasShape", "reads a flag of the const "
           "info", "shared"))
_cite("SetSymbolicDimensions",
      _src(TENSOR_TYPE_V24, "OrtApis::SetSymbolicDimensions", "rebuilds the info's shape and "
           "dimension names (the names copied) and stores them with no lock: exclusive, and "
           "names GetSymbolicDimensions returned before point at replaced strings",
           "exclusive", "lifetime"))
_life("GetTensorElementTypeAndShapeDataReference", "the shape pointer is into the value's own "
      "tensor shape: valid while the value lives and its tensor is not replaced (copy it to "
      "keep it)",
      _src(TENSOR_TYPE_V24, "OrtApis::GetTensorElementTypeAndShapeDataReference", "reads the "
           "const value's tensor (or sparse tensor) type and returns a pointer to its own "
           "dimensions array, not a copy", "shared", "lifetime"))

#: the GPU and accelerator provider options structs (and their Append functions)
PROVIDER_BRIDGE = ("onnxruntime/core/session/provider_bridge_ort.cc",
                   "defce5e8a67c23acc49288aae800db0bb14fb72f")
_cite("CreateTensorRTProviderOptions CreateCUDAProviderOptions CreateCANNProviderOptions "
      "CreateDnnlProviderOptions CreateROCMProviderOptions ReleaseTensorRTProviderOptions "
      "ReleaseCUDAProviderOptions ReleaseCANNProviderOptions ReleaseDnnlProviderOptions "
      "ReleaseROCMProviderOptions",
      _src(PROVIDER_BRIDGE, "OrtApis::Create*ProviderOptions, OrtApis::Release*ProviderOptions "
           "(TensorRT, CUDA, CANN, Dnnl, ROCM)", "new (defaults filled in; an error when the "
           "provider is not in the build) and delete (TensorRT: also the strings the options "
           "own): the caller owns the struct", "exclusive", "lifetime"))
_cite("UpdateTensorRTProviderOptions UpdateCUDAProviderOptions UpdateCANNProviderOptions "
      "UpdateDnnlProviderOptions UpdateROCMProviderOptions",
      _src(PROVIDER_BRIDGE, "OrtApis::Update*ProviderOptions", "copy the keys and values into "
           "a map and hand it to the provider library, which writes the fields of the caller's "
           "struct with no lock: exclusive on the options", "exclusive"))
_cite("GetTensorRTProviderOptionsAsString GetCUDAProviderOptionsAsString "
      "GetCANNProviderOptionsAsString GetDnnlProviderOptionsAsString "
      "GetROCMProviderOptionsAsString",
      _src(PROVIDER_BRIDGE, "OrtApis::Get*ProviderOptionsAsString", "the provider library "
           "reads the const struct into a map, which is joined into one string copied with the "
           "caller's allocator (the caller frees it with that allocator)", "shared",
           "lifetime"))
_OPTION_STREAM = _src(PROVIDER_BRIDGE, "OrtApis::UpdateTensorRTProviderOptionsWithValue, "
                      "OrtApis::UpdateCUDAProviderOptionsWithValue",
                      "for the key user_compute_stream, store the caller's pointer in the "
                      "struct (and mark it set): kept, not copied, not owned; other keys are "
                      "ignored; no lock", "exclusive", "lifetime")
_life("UpdateTensorRTProviderOptionsWithValue UpdateCUDAProviderOptionsWithValue",
      "a user_compute_stream given here is kept by pointer in the options, not owned: the "
      "stream outlives the options and every session created with options they were "
      "appended to", _OPTION_STREAM)
_life("GetTensorRTProviderOptionsByName GetCUDAProviderOptionsByName",
      "the pointer returned is the stream the caller stored (not ORT's): its lifetime is the "
      "caller's",
      _src(PROVIDER_BRIDGE, "OrtApis::GetTensorRTProviderOptionsByName, "
           "OrtApis::GetCUDAProviderOptionsByName", "read the stored user_compute_stream "
           "pointer of the const struct (NULL for any other key)", "shared", "lifetime"))
_APPEND = _src(PROVIDER_BRIDGE, "OrtApis::SessionOptionsAppendExecutionProvider_CUDA, _CUDA_V2, "
               "_ROCM, _OpenVINO, _TensorRT, _TensorRT_V2, _MIGraphX, _CANN, _Dnnl",
               "each asks the provider library for a factory built from the caller's struct "
               "and appends it to the options' factory list with no lock: exclusive on the "
               "options (an error when the library cannot be loaded)", "exclusive")
_cite("SessionOptionsAppendExecutionProvider_CUDA SessionOptionsAppendExecutionProvider_CUDA_V2 "
      "SessionOptionsAppendExecutionProvider_ROCM SessionOptionsAppendExecutionProvider_OpenVINO "
      "SessionOptionsAppendExecutionProvider_MIGraphX SessionOptionsAppendExecutionProvider_CANN "
      "SessionOptionsAppendExecutionProvider_Dnnl", _APPEND)
# TensorRT also puts its plugin custom-op domains on the options: the custom-op-domain rule of
# concurrent creation then applies to these options
_d("SessionOptionsAppendExecutionProvider_TensorRT SessionOptionsAppendExecutionProvider_TensorRT_V2",
   note="also adds TensorRT's plugin custom-op domains to the options: like options holding any "
        "custom-op domain, do not let them serve concurrent session creations "
        "(thread.create-with-custom-op-domain)",
   evidence=(_APPEND, _src(PROVIDER_BRIDGE, "AddTensorRTCustomOpDomainToSessionOption",
                           "after appending the factory, fetches TensorRT's plugin custom-op "
                           "domains from the provider and appends those not already present "
                           "to the options' custom-op domain list", "exclusive", "lifetime")))

#: the generic provider append (by name)
PROVIDER_REGISTRATION = ("onnxruntime/core/session/provider_registration.cc",
                         "97e39c1684ba3a9d977dfad587dc7f6316a0dea4")
_cite("SessionOptionsAppendExecutionProvider",
      _src(PROVIDER_REGISTRATION, "OrtApis::SessionOptionsAppendExecutionProvider",
           "copies the keys and values (length-checked) into a map, picks the provider by name "
           "and appends its factory to the options with no lock: exclusive on the options; "
           "nothing of the caller's is kept", "exclusive"))

#: the standalone operator API (OrtOp, OrtOpAttr) and kernel-info copies
STANDALONE_OP = ("onnxruntime/core/session/standalone_op_invoker.cc",
                 "f8b74ff7723b6e421b2cb37a824b64a2cc4647d6")
OP_KERNEL_INFO = ("include/onnxruntime/core/framework/op_kernel_info.h",
                  "ad694563b59c8a6a07c1e9bcca4875fae38f2e7e")
_life("CreateOpAttr", "the attribute is the caller's (release it with ReleaseOpAttr); for an "
      "unsupported type the call reports an error and still hands back a new attribute: "
      "release a non-NULL result even after an error",
      _src(STANDALONE_OP, "OrtApis::CreateOpAttr (standalone::CreateOpAttr)", "copies the name "
           "and the data (numbers, strings) into a new attribute; on an unsupported type it "
           "sets the error but still stores the new attribute in the out-pointer", "lifetime"))
_cite("ReleaseOpAttr",
      _src(STANDALONE_OP, "OrtApis::ReleaseOpAttr", "deletes the attribute: exclusive and last "
           "(CreateOp copied it into its node)", "exclusive", "lifetime"))
_cite("ReleaseOp",
      _src(STANDALONE_OP, "OrtApis::ReleaseOp", "removes the op's node from the process-wide "
           "node registry (under that registry's mutex) and deletes the kernel: exclusive and "
           "last on the op", "exclusive", "lifetime"))
_life("CopyKernelInfo", "the copy refers to the session's node, kernel definition, execution "
      "provider, constant initializers and allocators without owning them: release it "
      "(ReleaseKernelInfo) before the session that created the kernel is released",
      _src(STANDALONE_OP, "OrtApis::CopyKernelInfo", "copy-constructs a new OpKernelInfo from "
           "the const one: the caller owns the copy", "shared", "lifetime"),
      _src(OP_KERNEL_INFO, "OpKernelInfo (members)", "the info holds references to the node, "
           "kernel definition, execution provider, initializers, data-transfer manager and "
           "allocators and owns none of them, so a copy refers to the same session objects",
           "lifetime"))
_cite("ReleaseKernelInfo",
      _src(STANDALONE_OP, "OrtApis::ReleaseKernelInfo", "deletes the copy (not what it refers "
           "to): exclusive and last on the copy", "exclusive", "lifetime"))

#: custom_ops.cc at a later commit for the API 18-23 functions the CUSTOM_OPS commit predates:
#: c9f2c9c6 has KernelContext_ParallelFor, KernelContext_GetScratchBuffer and
#: KernelInfoGetAllocator as the citations paraphrase them
CUSTOM_OPS_V18 = ("onnxruntime/core/session/custom_ops.cc",
                  "c9f2c9c66fd914f3964e90879bf0e2fd10e6da76")
_cite("ShapeInferContext_GetInputCount",
      _src(CUSTOM_OPS, "OrtApis::ShapeInferContext_GetInputCount", "reads the count of input "
           "type infos the context built when it was made", "shared"))
_life("ShapeInferContext_GetAttribute", "the attribute is the node's own (inside ONNX's "
      "inference context): valid only during the shape-inference callback",
      _src(CUSTOM_OPS, "OrtApis::ShapeInferContext_GetAttribute", "returns a pointer to the "
           "node's attribute found through the inference context (an error if absent): a "
           "read, borrowed", "shared", "lifetime"))
_cite("KernelContext_ParallelFor",
      _src(CUSTOM_OPS_V18, "OrtApis::KernelContext_ParallelFor", "reads the const context's "
           "intra-op thread pool and runs the caller's function over the indices on it "
           "(batched or not) before returning: the function runs on several pool threads at "
           "once; the context is only read", "shared"))
_life("KernelContext_GetScratchBuffer", "the buffer is not tracked by ORT: free it with the "
      "allocator of the same memory info (KernelContext_GetAllocator) before the context's "
      "allocator goes",
      _src(CUSTOM_OPS_V18, "OrtApis::KernelContext_GetScratchBuffer", "allocates the bytes "
           "from the const context's allocator for the memory info's device, on the context's "
           "compute stream: the context is only read; the buffer is the caller's", "shared",
           "lifetime"))
_life("KernelInfoGetAllocator", "the allocator is the caller's wrapper (ReleaseAllocator); it "
      "shares ORT's allocator for that memory type",
      _src(CUSTOM_OPS_V18, "OrtApis::KernelInfoGetAllocator", "wraps the const info's "
           "allocator for the memory type in a new OrtAllocator holding a shared reference to "
           "it: the caller owns the wrapper", "shared", "lifetime"))


#: type families whose every slot runs inside an ORT callback
_CALLBACK_TYPES = ("OrtKernelContext", "OrtKernelInfo", "OrtShapeInferContext", "OrtLogger")
#: of those, the ones not Sync: used by the callback's own thread only (a kernel info and a
#: logger are Sync: their reads may overlap while the callback runs)
_ONE_THREAD_CALLBACK_TYPES = ("OrtKernelContext", "OrtShapeInferContext")
#: types whose slots need a GPU or plugin EP that the CPU build lacks
_DEVICE_TYPES = ("OrtSyncStream", "OrtDeviceEpIncompatibilityDetails",
                 "OrtCUDAProviderOptionsV2", "OrtTensorRTProviderOptionsV2",
                 "OrtCANNProviderOptions", "OrtDnnlProviderOptions", "OrtROCMProviderOptions",
                 "OrtNvTensorRtRtxProviderOptions")
#: read-only views handed out by a plugin EP or the model editor (ortc declares neither table)
_GRAPH_TYPES = ("OrtGraph", "OrtNode", "OrtValueInfo", "OrtOpAttr", "OrtModel",
                "OrtExternalInitializerInfo", "OrtEpAssignedSubgraph", "OrtEpAssignedNode")


def _derive(slot: str) -> SlotRule:
    reads: list[str] = []
    writes: list[str] = []
    creates: list[str] = []
    borrowed: list[str] = []
    for typ, use in params(slot):
        target = {"read": reads, "read-array": reads, "write": writes, "write-array": writes,
                  "out": creates, "borrowed": borrowed}[use]
        if typ not in target:
            target.append(typ)
    releases: tuple[str, ...] = ()
    if slot.startswith("Release") and len(params(slot)) == 1 and writes:
        releases, writes = tuple(writes), []
    if "OrtAllocator" in writes:  # an allocator argument is used (Alloc/Free), not changed
        writes.remove("OrtAllocator")
        reads.append("OrtAllocator")
    kept = tuple(creates)
    touched = set(reads) | set(writes) | set(releases)
    scope = ("callback" if touched & set(_ONE_THREAD_CALLBACK_TYPES) else
             "callback-sync" if touched & set(_CALLBACK_TYPES) else "any thread")
    if not (touched or kept or borrowed):
        # no handle at all: "not thread-relevant" is a judgement, so it must be declared
        return SlotRule(slot, SINCE[slot], relevant=False, evidence=())
    evidence: tuple[ev.Evidence, ...] = (RELEASE,) if releases else (SIGNATURE,)
    if touched & set(_DEVICE_TYPES):
        evidence += (DEVICE_EP,)
    if scope.startswith("callback"):
        evidence += (SCOPED,)
    outlives = ""
    if borrowed:
        outlives = (f"the returned {', '.join(borrowed)} is borrowed from "
                    f"{', '.join(sorted(touched)) or 'ORT'}: never release it, never use it "
                    f"after its owner")
    note = ""
    if touched & set(_GRAPH_TYPES):
        note = "a read-only view handed out by a plugin EP or the model editor"
    return SlotRule(slot, SINCE[slot], tuple(reads), tuple(writes), kept, releases, scope,
                    bool(touched or kept or borrowed), outlives, note, "signature", evidence)


def rule(slot: str) -> SlotRule:
    """The verdict for one slot."""
    if slot not in SINCE:
        raise KeyError(f"{slot!r} is not a declared OrtApi slot")
    base = _derive(slot)
    cited = _CITED.get(slot, ())
    over = _OVERRIDES.get(slot)
    if over is None:
        return replace(base, evidence=base.evidence + cited) if cited else base
    kw = {k: v for k, v in over.items() if k != "evidence"}
    evidence = (tuple(over.get("evidence", ())) or base.evidence) + cited
    # A type the declaration reads (writes) is not also written (read) by the signature's
    # pointer to it: kept in both, a slot read "writes X (exclusive); reads X (shared)".
    reads, writes = base.reads, base.writes
    if "reads" in kw and "writes" not in kw:
        writes = tuple(t for t in writes if t not in kw["reads"])
    if "writes" in kw and "reads" not in kw:
        reads = tuple(t for t in reads if t not in kw["writes"])
    merged = {"reads": reads, "writes": writes, "creates": base.creates,
              "releases": base.releases, "scope": base.scope, "relevant": base.relevant,
              "outlives": base.outlives, "note": base.note, **kw}
    if "relevant" not in kw and (merged["reads"] or merged["writes"] or merged["creates"]
                                 or merged["releases"] or merged["scope"] != "any thread"):
        merged["relevant"] = True
    for key in ("reads", "writes", "creates", "releases"):
        merged[key] = tuple(merged[key])
    return SlotRule(slot, SINCE[slot], source="declared", evidence=evidence, **merged)


#: the slots with a hand-declared verdict
DECLARED: frozenset[str] = frozenset(_OVERRIDES)


def table() -> list[SlotRule]:
    """Every declared slot's verdict, in ABI order."""
    return [rule(name) for name, _ in SLOTS]


def coverage() -> dict[str, Any]:
    """How the slots are classified: totals by source, by scope, by evidence kind, and the
    slots without a verdict (none, or a test fails)."""
    rows = table()
    kinds: dict[str, int] = {}
    for r in rows:
        for k in {e.kind for e in r.evidence}:
            kinds[k] = kinds.get(k, 0) + 1
    missing = [r.slot for r in rows if not r.evidence]
    return {
        "total": len(SLOTS), "classified": len(rows) - len(missing), "missing": missing,
        "declared": sum(r.source == "declared" for r in rows),
        "from_signature": sum(r.source == "signature" for r in rows),
        "not_thread_relevant": sum(not r.relevant for r in rows),
        "by_scope": {s: sum(r.scope == s for r in rows)
                     for s in ("any thread", "process", "thread-local", "callback", "callback-sync")},
        "by_evidence_kind": dict(sorted(kinds.items())),
        "by_basis": {b: sum(r.basis() == b for r in rows) for b in BASES},
        "verified": sum(r.basis() != "unverified" for r in rows),
        "unverified": sum(r.basis() == "unverified" for r in rows),
        "upto": max(v for _, v in SLOTS),
    }


# -- the other function tables: OrtCompileApi and OrtModelEditorApi ----------------------------

#: the compile table's functions and the model editor's, read at one commit of main each
COMPILE_API = ("onnxruntime/core/session/compile_api.cc",
               "06486e14b54bbda2c6ff2d4f61d212bd37a9eb7b")
COMPILE_OPTIONS = ("onnxruntime/core/session/model_compilation_options.cc",
                   "03876adc28b33270e71f12697c068a6deb7207a1")
MODEL_EDITOR = ("onnxruntime/core/session/model_editor_c_api.cc",
                "004550f4d0dfa3fd7d2f2af7e3c9d7f99342e6b6")
#: the record for a sub-table function read from its table's signature only
SUB_SIGNATURE = ev.signature("the function's signature in ORT's header (not declared by ortc, "
                             "which binds neither table): a const handle is only read, a "
                             "non-const one may be changed; verifies nothing alone",
                             "shared", "exclusive")


def _not_found(what: str) -> ev.Evidence:
    return ev.untested(f"{what}: the function is in the released library's table, but its "
                       "implementation is in no stored ORT source: verdict from the signature "
                       "(a const handle read, a non-const one written)", "shared", "exclusive")


def _sub(table: str, name: str, since: int, **kw: Any) -> SlotRule:
    return SlotRule(f"{table}.{name}", since, source="declared", **kw)


_MCO = "OrtModelCompilationOptions"
_MCO_SET = _src(COMPILE_OPTIONS, "ModelCompilationOptions::Set* (via OrtCompileAPI::"
                "ModelCompilationOptions_Set*)", "each assigns a field of the options' own "
                "copy of the session options (a path, a flag, a config entry) with no lock: "
                "exclusive; paths and names are copied", "exclusive")
_MCO_KEPT = _src(COMPILE_OPTIONS, "ModelCompilationOptions::SetInputModelFromBuffer, "
                 "SetInputModel, SetOutputModelBuffer, SetOutputModelWriteFunc, "
                 "SetOutputModelGetInitializerLocationFunc",
                 "store the caller's pointer (input bytes, an OrtModel, the output data and size "
                 "locations with the allocator wrapped by pointer and not owned, a function and "
                 "its state) in the options: nothing is copied; CompileModel uses them later",
                 "exclusive", "lifetime")
_COMPILE = _src(COMPILE_API, "OrtCompileAPI::CompileModel (onnxruntime::CompileModel)",
                "compiles from the const options with the env: reads them, but writes the "
                "output the options name (the caller's data and size locations, through the "
                "caller's allocator; or the write function with its state) on the calling "
                "thread: two compilations with one options would write one output at once, so "
                "the options are not Sync", "shared", "not-sync", "lifetime")
_KEEP = ("kept by pointer by the options, not copied: valid until the last CompileModel with "
         "them (or until the input or output is set again, or the options released)")



def _ep_context_entries(says: str, *backs: str) -> ev.Evidence:
    """check:ver.ep-context-entries, which calls the API 31 entries of the EP table and the
    compile table's SetEpContextDataWriteFunc by position in the libraries that have them."""
    return ev.check("ver.ep-context-entries", says, *backs, versions="1.31.1-1.32.0")


#: check:ver.sub-table-lengths on the table an API 31 entry was added to: it places the entry
#: (context for the row's API version, not for its verdict)
#: ORT's design notes for the compile table's API 31 and 32 entries (no stored implementation
#: has them): what each entry is, its C signature, and what it keeps
_IN_MEMORY_INITIALIZERS = (f"{ev.GH}/blob/1bd118d64f5673993fb3c408f2413542d7f79854/docs/design/"
                           "Compile_API_In_Memory_External_Initializers.md")
_WEIGHTLESS_MODE = (f"{ev.GH}/blob/31df48f376a748674a846235937953f1f7f0fa6b/docs/design/"
                    "Weightless_Mode.md")


def _initializer_entries(says: str, *backs: str) -> ev.Evidence:
    """check:api31.compile-external-initializers, which calls compile entries 17 and 18 by
    position in the libraries that have them."""
    return ev.check("api31.compile-external-initializers", says, *backs,
                    versions="1.31.1-1.32.0")


_EP_GROWS_AT_31 = ev.check("ver.sub-table-lengths", "the EP table of the 1.29.0 and 1.30.0 "
                           "libraries has 74 entries, that of 1.31.1 and 1.32.0 has 78: these "
                           "four entries came with API 31")

COMPILE_TABLE: tuple[SlotRule, ...] = (
    # ORT's order; the versions are those of the first released library whose table holds the
    # entry (MEASURED_TABLE_LENGTHS, check:ver.sub-table-lengths)
    _sub("OrtCompileApi", "ReleaseModelCompilationOptions", 22, releases=(_MCO,),
         evidence=(_src(COMPILE_API, "OrtCompileAPI::ReleaseModelCompilationOptions",
                        "deletes the options", "exclusive", "lifetime"),)),
    _sub("OrtCompileApi", "CreateModelCompilationOptionsFromSessionOptions", 22,
         reads=("OrtEnv", "OrtSessionOptions"), creates=(_MCO,),
         outlives="the env outlives the options (kept by reference); the session options are "
                  "copied and may be released at once",
         evidence=(_src(COMPILE_OPTIONS, "ModelCompilationOptions::ModelCompilationOptions",
                        "keeps a reference to the env and copies the session options, then "
                        "turns on EP-context generation in its copy", "shared", "lifetime"),)),
    *(_sub("OrtCompileApi", f"ModelCompilationOptions_{n}", v, writes=(_MCO,),
           evidence=(_MCO_SET,))
      for n, v in (("SetInputModelPath", 22),)),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetInputModelFromBuffer", 22, writes=(_MCO,),
         outlives="the model bytes are " + _KEEP, evidence=(_MCO_KEPT,)),
    *(_sub("OrtCompileApi", f"ModelCompilationOptions_{n}", v, writes=(_MCO,),
           evidence=(_MCO_SET,))
      for n, v in (("SetOutputModelPath", 22), ("SetOutputModelExternalInitializersFile", 22))),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetOutputModelBuffer", 22, writes=(_MCO,),
         reads=("OrtAllocator",),
         outlives="the allocator and the two locations the compiled model's data pointer and "
                  "size are written to are " + _KEEP + "; the buffer written there comes from "
                  "that allocator and is the caller's to free with it",
         evidence=(_MCO_KEPT, _src(COMPILE_API, "OrtCompileAPI::"
                                   "ModelCompilationOptions_SetOutputModelBuffer", "wraps the "
                                   "caller's allocator by pointer (no reference taken) before "
                                   "storing it", "lifetime"))),
    *(_sub("OrtCompileApi", f"ModelCompilationOptions_{n}", v, writes=(_MCO,),
           evidence=(_MCO_SET,))
      for n, v in (("SetEpContextEmbedMode", 22),)),
    _sub("OrtCompileApi", "CompileModel", 22, reads=("OrtEnv", _MCO),
         note="shared on the options in the C signature (const), but the options are not Sync: "
              "each compilation writes the output they name",
         outlives="every pointer the options keep (input bytes or model, output locations and "
                  "allocator, functions and state) is valid for the whole call",
         evidence=(_COMPILE,)),
    *(_sub("OrtCompileApi", f"ModelCompilationOptions_{n}", v, writes=(_MCO,),
           evidence=(_MCO_SET,))
      for n, v in (("SetFlags", 23), ("SetEpContextBinaryInformation", 23),
                   ("SetGraphOptimizationLevel", 23))),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetOutputModelWriteFunc", 23, writes=(_MCO,),
         outlives="the function and its state are " + _KEEP + "; ORT calls the function on "
                  "the thread running CompileModel", evidence=(_MCO_KEPT,)),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetOutputModelGetInitializerLocationFunc", 23,
         writes=(_MCO,), outlives="the function and its state are " + _KEEP + "; ORT calls the "
         "function on the thread running CompileModel", evidence=(_MCO_KEPT,)),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetInputModel", 25, writes=(_MCO,),
         reads=("OrtModel",),
         outlives="the OrtModel is " + _KEEP + "; it must not be changed meanwhile",
         evidence=(_MCO_KEPT,)),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetWeightlessEnabled", 29, writes=(_MCO,),
         note="deprecated from API 31 by a weightless-mode session option (and from API 32 "
              "by SetWeightlessMode)",
         evidence=(SUB_SIGNATURE, _not_found("the 16th entry, added in API 29 (the 1.29 "
                                             "library's table grows from 15 to 16)"),
                   ev.doc(_WEIGHTLESS_MODE, "ORT's design note: SetWeightlessEnabled(true) "
                          "sets the deprecated ep.enable_weightless entry of the options' "
                          "session options (a setter of the options, as the others)",
                          "exclusive"))),
    _sub("OrtCompileApi", "ModelCompilationOptions_SetEpContextDataWriteFunc", 31,
         writes=(_MCO,), outlives="the function and its state are " + _KEEP,
         evidence=(_src(COMPILE_API, "OrtCompileAPI::ModelCompilationOptions_"
                        "SetEpContextDataWriteFunc", "stores the function and its state in the "
                        "options; main at that commit lists it after SetInputModel, but no released "
                        "table has it there: the 1.31 library has it at index 16, after "
                        "SetWeightlessEnabled", "exclusive", "lifetime"),
                   _ep_context_entries("entry 16 of the compile table (the 17th) refuses NULL "
                                       "options with a message naming "
                                       "OrtModelCompilationOptions: this function's place in "
                                       "the released tables"))),
    # (OrtModelCompilationOptions*, const ORTCHAR_T* logical_file_name, size_t
    # initializer_size_threshold, OrtAllocator*, void** output_buffer, size_t* output_size)
    _sub("OrtCompileApi", "ModelCompilationOptions_SetOutputModelExternalInitializersBuffer", 31,
         writes=(_MCO,), reads=("OrtAllocator",),
         note="replaces an external-initializer file set before (one destination: the last "
              "setter wins)",
         outlives="the logical file name is copied; the allocator and the two locations the "
                  "initializer bytes and their size are written to are " + _KEEP + "; the bytes "
                  "come from that allocator and are the caller's to free with it (NULL and 0 "
                  "when nothing is externalized; untouched when CompileModel fails)",
         evidence=(ev.doc(_IN_MEMORY_INITIALIZERS, "ORT's design note names the function, gives "
                          "its signature and says the setter only records the allocator and the "
                          "two output locations, which must stay valid until CompileModel "
                          "returns; CompileModel allocates with that allocator and fills both; "
                          "the caller then owns the bytes and frees them with it; a file and a "
                          "buffer destination replace each other", "exclusive", "lifetime"),
                   _initializer_entries("entry 17 refuses NULL options naming "
                                        "OrtModelCompilationOptions, a NULL or absolute name, a "
                                        "NULL allocator or buffer location; the name is copied "
                                        "(overwritten right after the call, the compiled model "
                                        "still names it); the locations are written at "
                                        "CompileModel, not at the call", "exclusive",
                                        "lifetime"))),
    # (OrtModelCompilationOptions*, size_t alignment, size_t minimum_size)
    _sub("OrtCompileApi", "ModelCompilationOptions_SetOutputModelExternalInitializersAlignment",
         31, writes=(_MCO,),
         evidence=(ev.doc(_IN_MEMORY_INITIALIZERS, "ORT's design note names the function and "
                          "its signature: it stores a power-of-two alignment (0 turns it off) "
                          "and the size from which it applies in the options, for file and "
                          "buffer output alike", "exclusive"),
                   _initializer_entries("entry 18 refuses NULL options naming "
                                        "OrtModelCompilationOptions and an alignment that is "
                                        "not a power of two; with 4096 the compiled "
                                        "initializer bytes grow", "exclusive"))),
    # (OrtModelCompilationOptions*, OrtWeightlessSupport mode)
    _sub("OrtCompileApi", "ModelCompilationOptions_SetWeightlessMode", 32, writes=(_MCO,),
         note="supersedes SetWeightlessEnabled (deprecated)",
         evidence=(ev.doc(_WEIGHTLESS_MODE, "ORT's design note names the function as the "
                          "application's way to request one weightless mode (NONE, "
                          "EXTERNAL_ONLY or ALL) at compile time; other values are refused at "
                          "once", "exclusive"),
                   ev.check("api32.compile-weightless-mode", "entry 19 of the 1.32.0 compile "
                            "table accepts modes 0, 1 and 2 on options and refuses 3 and "
                            "unknown values naming the OrtWeightlessSupport values; the options "
                            "compile afterwards", "exclusive", versions="1.32.0"))),
)

_ME = "OrtModelEditorApi"
_ME_TYPEINFO = ev.check("editor.type-info-constructors", "four threads at once each make a "
                        "tensor and a sparse-tensor info from one shape info, a map and an "
                        "optional from one tensor info and a sequence of maps, then change and "
                        "release every input right after the calls that took it: the OrtApi "
                        "getters read every made info as it was made, on every thread as on "
                        "one (the inputs are copied)", "shared", "lifetime",
                        versions="1.22.1-1.32.0")
MODEL_EDITOR_TABLE: tuple[SlotRule, ...] = (
    *(_sub(_ME, n, 22, reads=r, creates=("OrtTypeInfo",),
           outlives="the input info is copied: it may be changed or released right after the "
                    "call; the new type info is the caller's to release",
           evidence=(SUB_SIGNATURE, _ME_TYPEINFO))
      for n, r in (("CreateTensorTypeInfo", ("OrtTensorTypeAndShapeInfo",)),
                   ("CreateSparseTensorTypeInfo", ("OrtTensorTypeAndShapeInfo",)),
                   ("CreateMapTypeInfo", ("OrtTypeInfo",)),
                   ("CreateSequenceTypeInfo", ("OrtTypeInfo",)),
                   ("CreateOptionalTypeInfo", ("OrtTypeInfo",)))),
    _sub(_ME, "CreateValueInfo", 22, reads=("OrtTypeInfo",), creates=("OrtValueInfo",),
         outlives="the name and type info are copied (the type info may be released at once)",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::CreateValueInfo", "copies the name "
                        "and clones the const type info into a new value info the caller owns",
                        "shared", "lifetime"),)),
    _sub(_ME, "CreateNode", 22, releases=("OrtOpAttr",), creates=("OrtNode",),
         outlives="takes the attributes: each is copied, then released, and its array entry set "
                  "to NULL: never use or release them after the call",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::CreateNode", "copies the names and "
                        "each attribute into a new node, then releases the caller's attribute "
                        "and clears its entry", "exclusive", "lifetime"),)),
    _sub(_ME, "CreateGraph", 22, creates=("OrtGraph",),
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::CreateGraph", "a new, empty graph "
                        "the caller owns until it is added to a model", "lifetime"),)),
    *(_sub(_ME, n, 22, writes=("OrtGraph",), releases=("OrtValueInfo",),
           outlives="takes the value infos (entries set to NULL): never use or release them "
                    "after; the graph's previous ones are freed",
           evidence=(_src(MODEL_EDITOR, f"OrtModelEditorAPI::{n}", "with no lock, replaces the "
                          "graph's list: frees the old value infos, takes ownership of the "
                          "given ones (refusing duplicates and ones already owned) and clears "
                          "the caller's entries", "exclusive", "lifetime"),))
      for n in ("SetGraphInputs", "SetGraphOutputs")),
    _sub(_ME, "AddInitializerToGraph", 22, writes=("OrtGraph",), releases=("OrtValue",),
         outlives="takes the value: never release it after; a value made over the caller's "
                  "buffer still points at that buffer, which then outlives the graph, its "
                  "model and what is made from them",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::AddInitializerToGraph", "checks the "
                        "CPU tensor and its name, then the graph takes ownership of the value "
                        "(no copy of its data), with no lock", "exclusive", "lifetime"),)),
    _sub(_ME, "AddNodeToGraph", 22, writes=("OrtGraph",), releases=("OrtNode",),
         outlives="takes the node: never release it after",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::AddNodeToGraph", "appends the node "
                        "to the graph, which then owns it (refusing one already owned), with "
                        "no lock", "exclusive", "lifetime"),)),
    _sub(_ME, "CreateModel", 22, creates=("OrtModel",),
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::CreateModel", "a new model with a "
                        "copy of the domain names and opset versions", "lifetime"),)),
    _sub(_ME, "AddGraphToModel", 22, writes=("OrtModel",), releases=("OrtGraph",),
         outlives="takes the graph: never release it after",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::AddGraphToModel", "the model takes "
                        "ownership of the graph (one graph per model, refusing one already "
                        "owned), with no lock", "exclusive", "lifetime"),)),
    _sub(_ME, "CreateSessionFromModel", 22, reads=("OrtEnv", "OrtModel", "OrtSessionOptions"),
         creates=("OrtSession",),
         outlives="the env outlives the session; the model need not: it may be released right "
                  "after the call (the session keeps what it uses, the initializers' values "
                  "included); a caller's buffer under an initializer value still outlives the "
                  "session",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::CreateSessionFromModel", "creates a "
                        "session with a copy of the options, loads the const model into it and "
                        "initializes it", "shared", "lifetime"),
                   *ev.find("OrtModel", "check:editor.session-outlives-model"))),
    *(_sub(_ME, n, 22, reads=("OrtEnv", "OrtSessionOptions"), creates=("OrtSession",),
           note="the session is loaded but not initialized: finish it with "
                "FinalizeModelEditorSession before running",
           outlives="as CreateSession / CreateSessionFromArray (the env outlives the session)",
           evidence=(_src(MODEL_EDITOR, f"OrtModelEditorAPI::{n}", "loads the model as "
                          "CreateSession and CreateSessionFromArray do (CreateSessionAndLoadModel) "
                          "without initializing the session", "shared", "lifetime"),))
      for n in ("CreateModelEditorSession", "CreateModelEditorSessionFromArray")),
    _sub(_ME, "SessionGetOpsetForDomain", 22, reads=("OrtSession",),
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::SessionGetOpsetForDomain", "looks the "
                        "domain up in the const session's model graph", "shared"),)),
    _sub(_ME, "ApplyModelToModelEditorSession", 22, writes=("OrtSession", "OrtModel"),
         note="before FinalizeModelEditorSession only: the session is being built",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::ApplyModelToModelEditorSession",
                        "applies the model's changes to the non-const session "
                        "(InferenceSession::ApplyUpdates), taking the model non-const",
                        "exclusive"),)),
    _sub(_ME, "FinalizeModelEditorSession", 22, writes=("OrtSession",),
         reads=("OrtSessionOptions", "OrtPrepackedWeightsContainer"),
         outlives="a prepacked-weights container outlives the session",
         evidence=(_src(MODEL_EDITOR, "OrtModelEditorAPI::FinalizeModelEditorSession",
                        "initializes the non-const session with the options and the container "
                        "(InitializeSession), as session creation does", "exclusive",
                        "lifetime"),)),
)

#: the function tables besides OrtApi classified function by function, with the API version
#: each function appeared in (its table's version, which follows ORT's API version)
SUB_TABLES: dict[str, tuple[SlotRule, ...]] = {
    "OrtCompileApi": COMPILE_TABLE,
    "OrtModelEditorApi": MODEL_EDITOR_TABLE,
}


def sub_coverage() -> dict[str, dict[str, int]]:
    """Per classified sub-table: its functions and how many verdicts rest on what."""
    out: dict[str, dict[str, int]] = {}
    for t, rows in SUB_TABLES.items():
        by = {b: sum(r.basis() == b for r in rows) for b in BASES}
        out[t] = {"total": len(rows), **by,
                  "verified": len(rows) - by["unverified"], "unverified": by["unverified"]}
    return out


# -- the plugin-EP, interop and model-package tables ---------------------------------------------

#: ep_api.cc read at two versions: a commit whose table ends at API 23, and the stored main whose
#: table ends at API 25 (its commit not recorded)
EP_API = ("onnxruntime/core/session/plugin_ep/ep_api.cc", "c9f2c9c66fd914f3964e90879bf0e2fd10e6da76")
#: interop_api.cc with the table through API 24: the stored version at 89ad6c73 is the text the
#: citations were read from (the index holds it as the same file version)
INTEROP_API = ("onnxruntime/core/session/interop_api.cc",
               "89ad6c73b8c7981b03639272a750b1f40256418a")
#: where the names of functions with no stored implementation come from: bindings generated
#: from the released headers (named here, not cited as evidence: they are not ORT's)
RELEASED_HEADER_BINDING = ("https://github.com/yuzawa-san/onnxruntime-java/blob/"
                           "b78611851ce944c30e8d06d66317a0ba902412ba/src/main/java/com/jyuzawa/"
                           "onnxruntime_extern/")


def _ep25(function: str, says: str, *backs: str) -> ev.Evidence:
    return ev.source(EP_API[0], "main", function, says, *backs,
                     release="main with the table through API 25 (commit not recorded)")


#: the experimental twins of the EP-context config functions (reached by name through
#: GetExperimentalFunction), read at one commit of main
EXPERIMENTAL_API = ("onnxruntime/core/session/experimental_c_api.cc",
                    "a3cd1baca73c1af442df0de907134238b0ad374a")


def _epctx(function: str, says: str, *backs: str) -> ev.Evidence:
    return ev.source(EXPERIMENTAL_API[0], EXPERIMENTAL_API[1], f"{function}_SinceV28", says,
                     *backs, release=f"main at {EXPERIMENTAL_API[1][:10]} (the experimental "
                     "twin of the table entry; the entry in the 1.31.1 and 1.32.0 libraries "
                     "refuses the same NULL arguments with the same messages: the "
                     "ver.ep-context-entries record beside this one)")


def _interop(function: str, says: str, *backs: str) -> ev.Evidence:
    return ev.source(INTEROP_API[0], INTEROP_API[1], function, says, *backs,
                     release=f"main at {INTEROP_API[1][:10]}, the table through API 24")


_E = "OrtEpApi"
_X = "OrtExecutionProviderApi::"
_MD = "OrtMemoryDevice"
_KDB = "OrtKernelDefBuilder"
_KD = "OrtKernelDef"
_SCHEMA = "OrtOpSchema"
_TC = "OrtOpSchemaTypeConstraint"
_PE = "OrtProfilingEvent"
_ECC = "OrtEpContextConfig"
_DEVICE_VIEW = ("a view into ORT's device record of the memory info or tensor (no copy): valid "
                "while that memory info or value lives")
_KDB_SET = _ep25(f"{_X}KernelDefBuilder_* setters", "each sets a field of the non-const builder "
                 "(names, versions, memory types, type constraints, aliases copied in) with no "
                 "lock", "exclusive")
_KD_READ = _ep25(f"{_X}KernelDef_* getters", "read fields of the const definition; the strings "
                 "returned are the definition's own", "shared", "lifetime")
_SCHEMA_READ = _ep25(f"{_X}OpSchema_*, OpSchemaTypeConstraint_* getters", "read the const "
                     "schema record (built eagerly by GetOpSchema) and the ONNX schema it points "
                     "to; names, constraints, type lists and index arrays returned point into "
                     "them", "shared", "lifetime")
_PE_READ = _ep25(f"{_X}ProfilingEvent_* getters", "read the const event record; the name and "
                 "argument values returned are the event's own strings", "shared", "lifetime")
_MD_READ = _src(EP_API, f"{_X}MemoryDevice_* getters", "read fields of the const device record "
                "(type, memory type, vendor, id); AreEqual compares two", "shared")
_OWNED_BY = "the strings and records returned point into {0}: valid while {0} lives"

EP_TABLE: tuple[SlotRule, ...] = (
    _sub(_E, "CreateEpDevice", 22, reads=("OrtHardwareDevice", "OrtKeyValuePairs"),
         creates=("OrtEpDevice",),
         note="called by an EP factory (in its GetSupportedDevices) on the thread ORT calls it "
              "on; ORT owns the devices the factory hands back",
         outlives="the new EP device keeps the hardware device and the factory by pointer: both "
                  "outlive it; the metadata and options pairs are copied (release them at once)",
         evidence=(_src(EP_API, f"{_X}CreateEpDevice", "stores the hardware device and factory "
                        "pointers in a new EP device, copies the metadata and option pairs, asks "
                        "the factory for its name, vendor and (API 23+) version", "shared",
                        "lifetime"),)),
    _sub(_E, "ReleaseEpDevice", 22, releases=("OrtEpDevice",),
         note="only for a device ORT has not taken: one GetSupportedDevices hands back is ORT's",
         evidence=(_src(EP_API, f"{_X}ReleaseEpDevice", "deletes the device", "exclusive",
                        "lifetime"),)),
    *(_sub(_E, n, 23, writes=("OrtEpGraphSupportInfo",), reads=("OrtNode",), scope="callback",
           note="inside OrtEp::GetCapability, on its thread: the support info is ORT's, lent "
                "for that call",
           evidence=(_src(EP_API, f"{_X}{n}", f"appends {what} to the non-const support info "
                          "with no lock (OrtEpGraphSupportInfo::AddNodesToFuse / AddSingleNode)",
                          "exclusive"),))
      for n, what in (("EpGraphSupportInfo_AddNodesToFuse", "a group of nodes to fuse"),
                      ("EpGraphSupportInfo_AddSingleNode", "one node"))),
    _sub(_E, "NodeComputeContext_NodeName", 23, reads=("OrtNodeComputeContext",),
         scope="callback", outlives="the name is ORT's, valid only during the CreateState call "
                                    "that received the context",
         evidence=(_src(EP_API, f"{_X}NodeComputeContext_NodeName", "returns the context's "
                        "node-name pointer (no copy)", "shared", "lifetime"),)),
    _sub(_E, "EpDevice_AddAllocatorInfo", 23, writes=("OrtEpDevice",), reads=("OrtMemoryInfo",),
         note="while the factory still builds the device (before ORT owns it and shares it "
              "between threads)",
         outlives="the memory info is kept by pointer, not copied: it outlives the EP device "
                  "(keep it for the library's life)",
         evidence=(_src(EP_API, f"{_X}EpDevice_AddAllocatorInfo", "stores the caller's memory "
                        "info pointer in the device's default, read-only or host-accessible "
                        "slot (no copy, no lock, no null check)", "exclusive", "lifetime"),)),
    _sub(_E, "MemoryInfo_GetMemoryDevice", 23, reads=("OrtMemoryInfo",),
         outlives="the memory device is " + _DEVICE_VIEW,
         evidence=(_src(EP_API, f"{_X}MemoryInfo_GetMemoryDevice", "returns the address of the "
                        "const memory info's device field", "shared", "lifetime"),)),
    _sub(_E, "Value_GetMemoryDevice", 23, reads=("OrtValue",),
         outlives="the memory device is " + _DEVICE_VIEW + " (NULL for a non-tensor)",
         evidence=(_src(EP_API, f"{_X}Value_GetMemoryDevice", "returns the address of the const "
                        "tensor's location device (NULL when the value is no tensor)", "shared",
                        "lifetime"),)),
    *(_sub(_E, f"MemoryDevice_{n}", 23, reads=(_MD,), evidence=(_MD_READ,))
      for n in ("AreEqual", "GetDeviceType", "GetMemoryType", "GetVendorId", "GetDeviceId")),
    _sub(_E, "SyncStream_GetImpl", 23, reads=("OrtSyncStream",),
         outlives="the stream implementation returned is the EP's own, held by the stream",
         evidence=(_src(EP_API, f"{_X}SyncStream_GetImpl", "returns the implementation the "
                        "const plugin stream wraps", "shared", "lifetime"),)),
    _sub(_E, "SyncStream_GetSyncId", 23, reads=("OrtSyncStream",),
         note="reads the stream's counter with no lock: a stream is not Sync, so no other thread "
              "may use it meanwhile",
         evidence=(_src(EP_API, f"{_X}SyncStream_GetSyncId", "reads the const stream's sync "
                        "counter (Stream::GetSyncId)", "shared"),)),
    _sub(_E, "GetSyncIdForLastWaitOnSyncStream", 23, reads=("OrtSyncStream",),
         evidence=(_src(EP_API, f"{_X}GetSyncIdForLastWaitOnSyncStream", "looks the producer "
                        "up in the const consumer stream's wait record (0 when either is NULL)",
                        "shared"),)),
    _sub(_E, "CreateHardwareDevice", 24, reads=("OrtKeyValuePairs",),
         creates=("OrtHardwareDevice",),
         outlives="the vendor name and metadata are copied; the device is the caller's until "
                  "released, and outlives every EP device made over it",
         evidence=(_ep25(f"{_X}CreateHardwareDevice", "a new device record with a copy of the "
                         "vendor name and metadata", "lifetime"),)),
    _sub(_E, "ReleaseHardwareDevice", 24, releases=("OrtHardwareDevice",),
         note="only a device made by CreateHardwareDevice: the env's own are never released",
         evidence=(_ep25(f"{_X}ReleaseHardwareDevice", "deletes the device", "exclusive"),)),
    _sub(_E, "CreateKernelRegistry", 24, creates=("OrtKernelRegistry",),
         evidence=(_ep25(f"{_X}CreateKernelRegistry", "a new, empty registry the caller owns",
                         "lifetime"),)),
    _sub(_E, "ReleaseKernelRegistry", 24, releases=("OrtKernelRegistry",),
         note="not while an EP that returned it from GetKernelRegistry lives",
         evidence=(_ep25(f"{_X}ReleaseKernelRegistry", "deletes the registry", "exclusive"),)),
    _sub(_E, "KernelRegistry_AddKernel", 24, writes=("OrtKernelRegistry",), reads=(_KD,),
         outlives="the create function's state is kept by pointer: it outlives the registry "
                  "(and every session whose EP uses it); ORT calls the function when it creates "
                  "kernels, on the threads creating sessions",
         evidence=(_ep25(f"{_X}KernelRegistry_AddKernel", "turns the const definition, the "
                         "function and its state into a create-info and registers it in the "
                         "non-const registry (KernelRegistry::Register) with no lock",
                         "exclusive", "lifetime"),)),
    _sub(_E, "CreateKernelDefBuilder", 24, creates=(_KDB,),
         evidence=(_ep25(f"{_X}CreateKernelDefBuilder", "a new builder the caller owns",
                         "lifetime"),)),
    _sub(_E, "ReleaseKernelDefBuilder", 24, releases=(_KDB,),
         evidence=(_ep25(f"{_X}ReleaseKernelDefBuilder", "deletes the builder", "exclusive"),)),
    *(_sub(_E, f"KernelDefBuilder_{n}", 24, writes=(_KDB,),
           reads=("OrtDataType",) if n == "AddTypeConstraint" else (), evidence=(_KDB_SET,))
      for n in ("SetOperatorType", "SetDomain", "SetSinceVersion", "SetExecutionProvider",
                "SetInputMemType", "SetOutputMemType", "AddTypeConstraint",
                "AddInputOutputAliases", "AddInputOutputMutableAliases")),
    _sub(_E, "KernelDefBuilder_Build", 24, writes=(_KDB,), creates=(_KD,),
         evidence=(_ep25(f"{_X}KernelDefBuilder_Build", "builds a new definition the caller "
                         "owns from the non-const builder (KernelDefBuilder::Build)",
                         "exclusive", "lifetime"),)),
    _sub(_E, "ReleaseKernelDef", 24, releases=(_KD,),
         evidence=(_ep25(f"{_X}ReleaseKernelDef", "deletes the definition", "exclusive"),)),
    *(_sub(_E, f"KernelDef_{n}", 24, reads=(_KD,),
           outlives=_OWNED_BY.format("the definition") if n.startswith("Get") and n in (
               "GetOperatorType", "GetDomain", "GetExecutionProvider") else "",
           evidence=(_KD_READ,))
      for n in ("GetOperatorType", "GetDomain", "GetSinceVersion", "GetExecutionProvider",
                "GetInputMemType", "GetOutputMemType")),
    _sub(_E, "GetTensorDataType", 24, scope="process",
         outlives="the data type is one of ORT's static type records: never released, valid "
                  "for the library's life",
         evidence=(_ep25(f"{_X}GetTensorDataType", "returns ORT's static tensor-type record for "
                         "the element type (DataTypeImpl::TensorTypeFromONNXEnum)", "shared",
                         "lifetime"),)),
    _sub(_E, "EpGraphSupportInfo_LookUpKernel", 24, reads=("OrtEpGraphSupportInfo", "OrtNode"),
         scope="callback",
         outlives="the definition returned is ORT's (the registry's): never released, valid "
                  "while the EP's registry lives",
         evidence=(_ep25(f"{_X}EpGraphSupportInfo_LookUpKernel", "looks the node up with the "
                         "support info's kernel lookup and returns the registered definition "
                         "(NULL if none); refuses a model-editor node", "shared", "lifetime"),)),
    _sub(_E, "SharedPrePackedWeightCache_StoreWeightData", 24,
         writes=("OrtSharedPrePackedWeightCache",), scope="callback",
         note="inside OrtKernelImpl::PrePackWeight, with the cache ORT passed to it",
         outlives="on success ORT takes the buffers over (the caller must not free them); on "
                  "failure the caller keeps them",
         evidence=(_ep25(f"{_X}SharedPrePackedWeightCache_StoreWeightData", "stores the "
                         "buffer pointers and sizes in the non-const cache; on an exception it "
                         "lets go of them all so the caller still owns them", "exclusive",
                         "lifetime"),)),
    _sub(_E, "KernelInfo_GetEp", 24, reads=("OrtKernelInfo",),
         outlives="the OrtEp returned is the plugin EP instance itself: borrowed, valid while "
                  "the session's EP lives",
         evidence=(_ep25(f"{_X}KernelInfo_GetEp", "returns the plugin EP behind the const kernel "
                         "info's execution provider (fails when it is not a plugin EP)",
                         "shared", "lifetime"),)),
    _sub(_E, "DeviceEpIncompatibilityDetails_SetDetails", 24,
         writes=("OrtDeviceEpIncompatibilityDetails",), scope="callback",
         note="inside OrtEpFactory::GetHardwareDeviceIncompatibilityDetails, before ORT returns "
              "the details to the caller",
         evidence=(_ep25(f"{_X}DeviceEpIncompatibilityDetails_SetDetails", "assigns the bitmask, "
                         "error code and a copy of the notes to the non-const details",
                         "exclusive", "lifetime"),)),
    _sub(_E, "CreateIfKernel", 24, reads=("OrtKernelInfo",), creates=("OrtKernelImpl",),
         scope="callback",
         note="inside the kernel create function ORT calls with the kernel info",
         evidence=(_ep25(f"{_X}CreateIfKernel", "makes ORT's If kernel from the const kernel "
                         "info; the caller owns it (ReleaseKernelImpl)", "shared", "lifetime"),)),
    *(_sub(_E, f"Create{k}Kernel", 24, reads=("OrtKernelInfo",), creates=("OrtKernelImpl",),
           scope="callback",
           outlives=f"the kernel keeps the {k} helper by pointer (its Release function is "
                    "required): the helper outlives the kernel",
           evidence=(_ep25(f"{_X}Create{k}Kernel", f"checks the {k} helper's functions, then "
                           f"makes ORT's {k} kernel from the const kernel info and the helper"
                           + (" (opset 9 or later)" if k == "Scan" else ""), "shared",
                           "lifetime"),))
      for k in ("Loop", "Scan")),
    _sub(_E, "ReleaseKernelImpl", 24, releases=("OrtKernelImpl",),
         evidence=(_ep25(f"{_X}ReleaseKernelImpl", "calls the kernel's own Release",
                         "exclusive"),)),
    _sub(_E, "GetEnvConfigEntries", 24, creates=("OrtKeyValuePairs",), scope="process",
         note="reads the process's env (fails when none exists)",
         evidence=(_ep25(f"{_X}GetEnvConfigEntries", "copies the current env's config entries "
                         "into new pairs the caller owns", "shared", "lifetime"),)),
    _sub(_E, "GetOpSchema", 25, creates=(_SCHEMA,), scope="process",
         evidence=(_ep25(f"{_X}GetOpSchema", "looks the operator up in ONNX's process-wide "
                         "schema registry and builds a schema record the caller owns (NULL when "
                         "none); the record points at the registry's schema", "shared",
                         "lifetime"),)),
    _sub(_E, "ReleaseOpSchema", 25, releases=(_SCHEMA,),
         note="also ends every type constraint, name and index array read from it",
         evidence=(_ep25(f"{_X}ReleaseOpSchema", "deletes the schema record", "exclusive"),)),
    *(_sub(_E, f"OpSchema_{n}", 25, reads=(_SCHEMA,),
           outlives=_OWNED_BY.format("the schema") if n in (
               "GetInputName", "GetOutputName", "GetInputTypeConstraint",
               "GetOutputTypeConstraint", "GetTypeConstraint") else "",
           evidence=(_SCHEMA_READ,))
      for n in ("GetSinceVersion", "GetNumInputs", "GetInputName", "GetInputTypeConstraint",
                "GetNumOutputs", "GetOutputName", "GetOutputTypeConstraint",
                "GetTypeConstraintCount", "GetTypeConstraint")),
    *(_sub(_E, f"OpSchemaTypeConstraint_{n}", 25, reads=(_TC,),
           outlives=_OWNED_BY.format("the schema the constraint came from"),
           evidence=(_SCHEMA_READ,))
      for n in ("GetTypeParamName", "GetAllowedTypes", "GetInputIndices", "GetOutputIndices")),
    _sub(_E, "CreateProfilingEvent", 25, creates=(_PE,),
         outlives="the name and arguments are copied",
         evidence=(_ep25(f"{_X}CreateProfilingEvent", "checks the category and arguments and "
                         "makes a new event record the caller owns, copying the strings",
                         "lifetime"),)),
    _sub(_E, "ReleaseProfilingEvent", 25, releases=(_PE,),
         evidence=(_ep25(f"{_X}ReleaseProfilingEvent", "deletes the event record",
                         "exclusive"),)),
    *(_sub(_E, f"ProfilingEvent_{n}", 25, reads=(_PE,),
           outlives=_OWNED_BY.format("the event") if n in ("GetName", "GetArgValue") else "",
           evidence=(_PE_READ,))
      for n in ("GetCategory", "GetName", "GetTimestampUs", "GetDurationUs", "GetArgValue")),
    _sub(_E, "ProfilingEventsContainer_AddEvents", 25, writes=("OrtProfilingEventsContainer",),
         reads=(_PE,), scope="callback",
         note="inside OrtEpProfilerImpl::EndProfiling, with the container ORT passed to it",
         outlives="the events are copied into the container: release them after",
         evidence=(_ep25(f"{_X}ProfilingEventsContainer_AddEvents", "appends a copy of each "
                         "const event to the non-const container's list with no lock",
                         "exclusive", "lifetime"),)),
    _sub(_E, "SessionOptionsGetWeightlessSourceModelBuffer", 29, reads=("OrtSessionOptions",),
         outlives="the buffer returned is the one the options were given (borrowed): valid "
                  "while the caller of SessionOptionsSetWeightlessSourceModelBuffer keeps it",
         evidence=(SUB_SIGNATURE, _not_found("the 74th entry, added in API 29 (the 1.29 "
                                             "library's table grows from 73 to 74)"),
                   ev.check("session.weightless-source-buffer", "called by position (entry "
                            "73) on options: NULL and 0 before any set, then the very pointer "
                            "and size the last SessionOptionsSetWeightlessSourceModelBuffer "
                            "gave (one thread)", "lifetime", versions="1.29.0-1.32.0"))),
    # the four API 31 entries (the EP table grows from 74 to 78: check:ver.sub-table-lengths),
    # named by their refusal messages in the 1.31.1 and 1.32.0 libraries
    # (check:ver.ep-context-entries): their bodies are those of the experimental twins
    _sub(_E, "SessionOptionsGetEpContextConfig", 31, reads=("OrtSessionOptions",),
         creates=(_ECC,), note="called by a plugin EP while it is created, with the session's "
                               "options",
         outlives="the config is a snapshot: it copies the read and write callbacks and their "
                  "state pointers out of the options (later changes to the options are not "
                  "seen) and is the caller's to release; the states stay the application's",
         evidence=(_epctx("OrtEpApi_SessionOptions_GetEpContextConfig", "refuses NULL options "
                          "or output, then copies the write callback and state (when the "
                          "options' EP-context generation settings hold one) and the read "
                          "callback and state out of the const options into a new config the "
                          "caller owns", "shared", "lifetime"),
                   _ep_context_entries("entry 74 of the EP table refuses NULL options naming "
                                       "OrtSessionOptions, and a config it makes still holds "
                                       "the read callback and state after the options clear "
                                       "theirs: a snapshot", "lifetime"),
                   _EP_GROWS_AT_31)),
    _sub(_E, "ReleaseEpContextConfig", 31, releases=(_ECC,),
         evidence=(_epctx("OrtEpApi_ReleaseEpContextConfig", "deletes the config (NULL is a "
                          "no-op)", "exclusive"),
                   _ep_context_entries("entry 75 of the EP table releases the config entry 74 "
                                       "made"),
                   _EP_GROWS_AT_31)),
    *(_sub(_E, f"EpContextConfigGetEpContextData{k}Func", 31, reads=(_ECC,),
           outlives=f"the {k.lower()} callback and its state are the application's, as set on "
                    "the options: ORT gives no lifetime beyond the application's own promise",
           evidence=(_epctx(f"OrtEpApi_EpContextConfig_GetEpContextData{k}Func", "refuses a "
                            "NULL config or output, then reads the callback and its state from "
                            "the const config (a NULL state when no callback is set)", "shared",
                            "lifetime"),
                     _ep_context_entries(says, *backs), _EP_GROWS_AT_31))
      for k, says, backs in (
          ("Read", "entry 76 of the EP table returns the very callback and state the config "
                   "was made with, after the options cleared theirs, and refuses a NULL "
                   "callback output", ("lifetime",)),
          ("Write", "entry 77 of the EP table refuses a NULL callback output and returns no "
                    "write callback from a config made without one", ()))),
)

_I = "OrtInteropApi"
_IMP = "OrtExternalResourceImporter"
_FWD = ("forwards to the EP's importer implementation with no lock of ORT's: whether two "
        "threads may call it at once is the EP's to say")
INTEROP_TABLE: tuple[SlotRule, ...] = (
    _sub(_I, "CreateExternalResourceImporterForDevice", 24, reads=("OrtEpDevice",),
         creates=(_IMP,),
         outlives="the importer keeps the EP device by pointer: the device (and so the env and "
                  "the EP library) outlives it; NULL when the EP offers none",
         evidence=(_interop("OrtInteropAPI::CreateExternalResourceImporterForDevice", "asks the "
                            "device's factory (API 24+) for an importer and wraps it with the "
                            "device pointer; the caller owns the wrapper", "shared",
                            "lifetime"),)),
    _sub(_I, "ReleaseExternalResourceImporter", 24, releases=(_IMP,),
         note="after every memory and semaphore handle imported with it is released",
         evidence=(_interop("OrtInteropAPI::ReleaseExternalResourceImporter", "deletes the "
                            "wrapper, which calls the EP importer's Release", "exclusive"),)),
    *(_sub(_I, n, 24, reads=(_IMP,), note=_FWD,
           evidence=(_interop(f"OrtInteropAPI::{n}", "asks the const importer's EP "
                              "implementation; false when it has no such function",
                              "shared"),))
      for n in ("CanImportMemory", "CanImportSemaphore")),
    *(_sub(_I, f"Import{k}", 24, writes=(_IMP,), creates=(f"OrtExternal{k}Handle",), note=_FWD,
           outlives=f"the {k.lower()} handle is the EP's object, the caller's to release with "
                    f"ReleaseExternal{k}Handle before the importer",
           evidence=(_interop(f"OrtInteropAPI::Import{k}", "calls the EP implementation's "
                              f"Import{k} through the non-const importer and returns its handle "
                              "(a NULL handle is an error)", "exclusive", "lifetime"),))
      for k in ("Memory", "Semaphore")),
    *(_sub(_I, f"ReleaseExternal{k}Handle", 24, releases=(f"OrtExternal{k}Handle",),
           evidence=(_interop(f"OrtInteropAPI::ReleaseExternal{k}Handle", "calls the handle's "
                              "own Release function", "exclusive"),))
      for k in ("Memory", "Semaphore")),
    _sub(_I, "CreateTensorFromMemory", 24, writes=(_IMP,), reads=("OrtExternalMemoryHandle",),
         creates=("OrtValue",), note=_FWD,
         outlives="the tensor lies over the imported memory: the memory handle (and the "
                  "external allocation under it) outlives the tensor",
         evidence=(_interop("OrtInteropAPI::CreateTensorFromMemory", "calls the EP "
                            "implementation with the const memory handle and descriptor; the "
                            "value it makes is the caller's", "exclusive", "lifetime"),)),
    *(_sub(_I, n, 24, writes=(_IMP, "OrtExternalSemaphoreHandle", "OrtSyncStream"), note=_FWD,
           evidence=(_interop(f"OrtInteropAPI::{n}", f"calls the EP implementation's {n} with "
                              "the non-const semaphore handle and stream", "exclusive"),))
      for n in ("WaitSemaphore", "SignalSemaphore")),
    *(_sub(_I, n, 25, reads=("OrtEpDevice",),
           evidence=(SUB_SIGNATURE, _not_found(f"{n}, added in API 25 (the 1.25 library's "
                                               "table grows from 11 to 13)")))
      for n in ("InitGraphicsInteropForEpDevice", "DeinitGraphicsInteropForEpDevice")),
)

#: ORT's order of the interop table (the rows above are grouped by what they do)
_INTEROP_ORDER = ("CreateExternalResourceImporterForDevice", "ReleaseExternalResourceImporter",
                  "CanImportMemory", "ImportMemory", "ReleaseExternalMemoryHandle",
                  "CreateTensorFromMemory", "CanImportSemaphore", "ImportSemaphore",
                  "ReleaseExternalSemaphoreHandle", "WaitSemaphore", "SignalSemaphore",
                  "InitGraphicsInteropForEpDevice", "DeinitGraphicsInteropForEpDevice")
INTEROP_TABLE = tuple(sorted(INTEROP_TABLE,
                             key=lambda r: _INTEROP_ORDER.index(r.slot.split(".")[1])))

_P = "OrtModelPackageApi"
_MPO = "OrtModelPackageOptions"
_MPC = "OrtModelPackageContext"
_MPCC = "OrtModelPackageComponentContext"
#: the released table's bodies: no stored source has the 1.31/1.32 file, whose functions are
#: OrtModelPackageAPI::*; main after 1.32 moved the same bodies, under their table names with a
#: _SinceV28 suffix, to the experimental API in this file. The released libraries refuse NULL
#: arguments with the same messages (one more: GetVariantEpName also refuses a NULL output) and
#: behave as these bodies say (check:api31.model-package-table)
MODEL_PACKAGE_API = ("onnxruntime/core/session/model_package_api.cc", "main",
                     "main after 1.32, the table's bodies as experimental twins")
#: the package and component contexts: the version whose package-context constructor has the
#: two parsing lambdas the 1.31.1 and 1.32.0 libraries name in their messages
MODEL_PACKAGE_CONTEXT = ("onnxruntime/core/session/model_package/model_package_context.cc",
                         "main", "main after 1.32")
#: the options: a snapshot of the EP choice (vectors and a flag; no env or options reference),
#: the class whose ResolveEpSelection(env, session options) the released libraries name
MODEL_PACKAGE_OPTIONS = ("onnxruntime/core/session/model_package/model_package_options.h",
                         "0a1f8a0f23fe301037c1b7b61a0333cbdd7852db")


def _mp_check(says: str, *backs: str) -> ev.Evidence:
    return ev.check("api31.model-package-table", says, *backs, versions="1.31.1-1.32.0")


def _mp_api(function: str, says: str, *backs: str) -> ev.Evidence:
    return _src(MODEL_PACKAGE_API, f"OrtModelPackageApi_{function}_SinceV28", says, *backs)


def _mp_ctx(function: str, says: str, *backs: str) -> ev.Evidence:
    return _src(MODEL_PACKAGE_CONTEXT, function, says, *backs)


def _mp(name: str, *evidence: ev.Evidence, **kw: Any) -> SlotRule:
    return _sub(_P, name, 31, evidence=evidence, **kw)


_MP_CACHE = ("with no lock: two threads in it at once race on that cache, so the context is "
             "not Sync")
MODEL_PACKAGE_TABLE: tuple[SlotRule, ...] = (
    _mp("CreateModelPackageOptionsFromSessionOptions",
        _mp_api("CreateModelPackageOptionsFromSessionOptions", "builds the options from the "
                "env and the const session options: they resolve the EP choice (the EP devices "
                "appended, or the selection policy, or the CPU EP) into vectors of their own",
                "shared", "lifetime"),
        _src(MODEL_PACKAGE_OPTIONS, "ModelPackageOptions", "holds only the EP infos, the "
             "execution and selected device lists and a policy flag: no reference to the env "
             "or to the session options", "lifetime"),
        reads=("OrtEnv", "OrtSessionOptions"), creates=(_MPO,),
        outlives="the session options are read once and may be released at once; the EP "
                 "devices the options name are the env's, so the env outlives the options and "
                 "every component context selected with them"),
    _mp("ReleaseModelPackageOptions",
        _mp_api("ReleaseModelPackageOptions", "deletes the options (NULL is a no-op)",
                "exclusive"),
        _mp_check("the options are released right after SelectComponent, and the component "
                  "context still makes sessions that run", "lifetime"),
        releases=(_MPO,),
        note="a component context copied what it needs: the options may go right after "
             "SelectComponent"),
    _mp("CreateModelPackageContext",
        _mp_api("CreateModelPackageContext", "refuses a NULL path or output, then makes a new "
                "context from the path alone", "lifetime"),
        _mp_ctx("ModelPackageContext::ModelPackageContext", "opens the package directory "
                "(manifest.json, component files), keeps the package handle open for the "
                "context's life, and converts every component and variant into the context's "
                "own records", "lifetime"),
        creates=(_MPC,),
        note="reads the package directory: files changed meanwhile are not seen afterwards "
             "except through ResolveStringRef"),
    _mp("ReleaseModelPackageContext",
        _mp_api("ReleaseModelPackageContext", "deletes the context (closing its package "
                "handle; NULL is a no-op)", "exclusive"),
        _mp_check("the package context is released before CreateSession, and the component "
                  "context selected from it still makes sessions that run", "lifetime"),
        releases=(_MPC,),
        note="also ends every name, EP name and resolved path read from it; a component "
             "context holds a copy of its component and may outlive it"),
    _mp("ModelPackage_GetSchemaVersion",
        _mp_api("ModelPackage_GetSchemaVersion", "reads the schema version (the manifest's "
                "major) from the const context", "shared"),
        _mp_check("a manifest of schema version \"1.3\" answers 1"),
        reads=(_MPC,)),
    _mp("ModelPackage_GetComponentCount",
        _mp_api("ModelPackage_GetComponentCount", "reads the size of the const context's "
                "component list", "shared"),
        reads=(_MPC,)),
    _mp("ModelPackage_GetComponentNames",
        _mp_api("ModelPackage_GetComponentNames", "returns the context's array of name "
                "pointers (GetComponentNamePtrs)", "exclusive", "lifetime"),
        _mp_ctx("ModelPackageContext::GetComponentNamePtrs", "a const method that fills the "
                "context's pointer array over the names on its first call, " + _MP_CACHE,
                "exclusive", "not-sync"),
        _mp_check("two threads get the same array address: the context's array, not a "
                  "per-thread one", "lifetime"),
        writes=(_MPC,), note="the first call fills a cache in the context",
        outlives=_OWNED_BY.format("the context")),
    _mp("ModelPackage_GetVariantCount",
        _mp_api("ModelPackage_GetVariantCount", "looks the component up in the const "
                "context's index and reads its variant count", "shared"),
        reads=(_MPC,)),
    _mp("ModelPackage_GetVariantNames",
        _mp_api("ModelPackage_GetVariantNames", "returns the context's array of the "
                "component's variant names (GetVariantNames, GetVariantNamePtrs)",
                "exclusive", "lifetime"),
        _mp_ctx("ModelPackageContext::GetVariantNames, GetVariantNamePtrs", "const methods "
                "that, on every call, clear and refill the context's per-component lists of "
                "name copies and name pointers (adding the component's entry to a map on its "
                "first call) " + _MP_CACHE, "exclusive", "not-sync", "lifetime"),
        _mp_check("two threads get the same array address for one component: the "
                  "context's array", "lifetime"),
        writes=(_MPC,), note="every call rebuilds a cache in the context",
        outlives="the array and names are the context's, rebuilt by the next GetVariantNames "
                 "of the same component on that context (from any thread): copy them before "
                 "it"),
    _mp("ModelPackage_GetVariantEpName",
        _mp_api("ModelPackage_GetVariantEpName", "finds the variant in the const context and "
                "returns a pointer to its EP name (NULL when the variant names none)",
                "shared", "lifetime"),
        _mp_check("the variant's EP name; a NULL output refused with INVALID_ARGUMENT (the "
                  "released body checks the output too)"),
        reads=(_MPC,), outlives=_OWNED_BY.format("the context")),
    _mp("ModelPackage_ResolveStringRef",
        _mp_api("ModelPackage_ResolveStringRef", "asks the const context to resolve the "
                "reference and returns the pointer it gives", "exclusive", "lifetime"),
        _mp_ctx("ModelPackageContext::ResolveStringRef", "a const method that resolves through "
                "the open package handle, then copies the result into one string of the "
                "context and returns it, " + _MP_CACHE, "exclusive", "not-sync", "lifetime"),
        _mp_check("a result read on one thread changes to another thread's result after that "
                  "thread's call: one string per context, overwritten by every call",
                  "exclusive", "lifetime"),
        writes=(_MPC,), note="every call overwrites one string in the context",
        outlives="the path is the context's, overwritten by the next ResolveStringRef on that "
                 "context from any thread: copy it before"),
    _mp("SelectComponent",
        _mp_api("SelectComponent", "finds the component in the const context, makes a "
                "component context from a copy of its record and the const options' EP "
                "infos, and selects a variant (asking the EP factories about each "
                "candidate's compatibility)", "shared", "lifetime"),
        _mp_ctx("ModelPackageComponentContext::ModelPackageComponentContext, ResolveVariant",
                "the component context keeps its own copy of the component record and of the "
                "options' EP infos (EP device pointers included) and marks the selected "
                "variant in its copy", "lifetime"),
        _mp_check("the CPU variant is selected for options given the CPU EP device; the "
                  "component context outlives the options and the package context",
                  "lifetime"),
        reads=(_MPC, _MPO), creates=(_MPCC,),
        outlives="the component context copies what it uses: the package context and the "
                 "options may be released after the call; the env (whose EP devices it "
                 "names) outlives it"),
    _mp("ReleaseModelPackageComponentContext",
        _mp_api("ReleaseModelPackageComponentContext", "deletes the component context (NULL "
                "is a no-op)", "exclusive"),
        _mp_check("sessions made from the component context run after it is released",
                  "lifetime"),
        releases=(_MPCC,),
        note="also ends the variant name and folder path read from it; sessions made from it "
             "may outlive it"),
    _mp("ModelPackageComponent_GetSelectedVariantName",
        _mp_api("ModelPackageComponent_GetSelectedVariantName", "returns a pointer to the "
                "selected variant's name in the const component context", "shared",
                "lifetime"),
        _mp_ctx("ModelPackageComponentContext::GetSelectedVariantName", "reads the selected "
                "variant of the context's own record", "shared"),
        reads=(_MPCC,), outlives=_OWNED_BY.format("the component context")),
    _mp("ModelPackageComponent_GetSelectedVariantFolderPath",
        _mp_api("ModelPackageComponent_GetSelectedVariantFolderPath", "returns the path the "
                "const component context hands out", "exclusive", "lifetime"),
        _mp_ctx("ModelPackageComponentContext::GetSelectedVariantFolderPath", "a const method "
                "that copies the selected variant's folder into a path member of the context "
                "on every call and returns that member, " + _MP_CACHE, "exclusive",
                "not-sync", "lifetime"),
        _mp_check("two calls return the same address: the context's member"),
        writes=(_MPCC,), note="every call overwrites a path in the component context",
        outlives="the path is the component context's, rewritten by the next call on it: "
                 "valid while the context lives and no other thread calls this"),
    _mp("CreateSession",
        _mp_api("CreateSession", "takes the component context non-const: reads the selected "
                "variant's model path and options (filling the context's option caches on "
                "first use), builds the session options (a fresh copy with the variant's "
                "options merged, or a copy of the caller's with the variant's path options "
                "added), rebuilds the context's provider list for this session, then creates "
                "and initializes the session with the env", "exclusive", "shared",
                "lifetime"),
        _mp_ctx("ModelPackageComponentContext::RebuildProviderListForSession, "
                "GetSelectedVariantFileSessionOptions", "the first replaces the context's "
                "provider list (a non-const method); the second fills key/value caches of the "
                "context in a const method, both with no lock", "exclusive", "not-sync"),
        _mp_check("sessions made with NULL options and with the caller's run after the "
                  "component context, the package context and the options are released",
                  "lifetime"),
        reads=("OrtEnv", "OrtSessionOptions"), writes=(_MPCC,), creates=("OrtSession",),
        note="writes the component context (its provider list and option caches): one thread "
             "at a time per component context",
        outlives="the env outlives the session; the session options are copied and the "
                 "component context may be released right after"),
)

SUB_TABLES["OrtEpApi"] = EP_TABLE
SUB_TABLES["OrtInteropApi"] = INTEROP_TABLE
SUB_TABLES["OrtModelPackageApi"] = MODEL_PACKAGE_TABLE

#: entries the newest released libraries hand out that no stored source names (so no row):
#: table -> ((API version, how many, how they were seen), ...)
UNNAMED_ENTRIES: dict[str, tuple[tuple[int, int, str], ...]] = {
    "OrtModelEditorApi": (
        (32, 8, "entries 20 to 27 of the 1.32.0 table (20 entries through 1.31.1)"),
    ),
}

#: each table's length in the released libraries of the conformance matrix, by API version
#: (measured by check:ver.sub-table-lengths: the run of code pointers from the table's start up
#: to the next table the library hands out, the same method that finds OrtApi's declared length);
#: a version not listed has the length of the newest listed one before it
MEASURED_TABLE_LENGTHS: dict[str, dict[int, int]] = {
    "OrtCompileApi": {22: 9, 23: 14, 24: 14, 25: 15, 29: 16, 31: 19, 32: 20},
    "OrtModelEditorApi": {22: 20, 32: 28},
    "OrtEpApi": {22: 2, 23: 16, 24: 50, 25: 73, 29: 74, 31: 78},
    "OrtInteropApi": {24: 11, 25: 13},
    "OrtModelPackageApi": {31: 16},
}


def table_length(table: str, api: int) -> int:
    """How many entries ``table`` has at API version ``api`` by ortc's account: its rows and the
    unnamed entries declared up to that version."""
    rows = sum(r.since <= api for r in SUB_TABLES[table])
    return rows + sum(n for v, n, _ in UNNAMED_ENTRIES.get(table, ()) if v <= api)


def measured_length(table: str, api: int) -> int | None:
    """The table's measured length at ``api`` (None before the table existed)."""
    known = [v for v in MEASURED_TABLE_LENGTHS[table] if v <= api]
    return MEASURED_TABLE_LENGTHS[table][max(known)] if known else None


#: the objects only these tables hand out: (Send, Sync, why). Such an object has no type row:
#: no OrtApi slot and no other table takes it, so its table's section (the rows above) already
#: lists every function that uses it, with its verdict; a type an OrtApi slot or a second table
#: takes has a row instead, which lists the sub-table functions using it (tests/
#: test_slot_rules.py sub_table_uses_missing). ortc binds none of these objects; the verdicts say
#: what a binding of these tables must enforce (the Rust crate's rules.rs carries them)
SUB_TABLE_OBJECTS: dict[str, dict[str, tuple[bool, bool, str]]] = {
    "OrtEpApi": {
        "OrtEpGraphSupportInfo": (False, False, "lent by ORT for one GetCapability call and "
                                  "written by the Add functions with no lock"),
        "OrtNodeComputeContext": (False, True, "lent for one CreateState call; only read"),
        _MD: (True, True, "a view of an immutable device record, borrowed from its memory "
              "info or tensor"),
        "OrtKernelRegistry": (True, False, "a builder: AddKernel registers with no lock; once "
                              "returned to ORT from GetKernelRegistry it is only read"),
        _KDB: (True, False, "a builder: every setter writes it"),
        _KD: (True, True, "immutable once built"),
        "OrtDataType": (True, True, "ORT's static type records, never released"),
        "OrtSharedPrePackedWeightCache": (False, False, "lent for one PrePackWeight call and "
                                          "written by StoreWeightData"),
        "OrtKernelImpl": (True, True, "a kernel ORT may compute from concurrent runs of one "
                          "session (as a custom op's kernel); those made by CreateIf/Loop/"
                          "ScanKernel are ORT's implementation, owned by the caller"),
        _SCHEMA: (True, True, "an immutable record over ONNX's schema registry"),
        _TC: (True, True, "immutable, borrowed from its schema"),
        _PE: (True, True, "an immutable record"),
        "OrtProfilingEventsContainer": (False, False, "lent for one EndProfiling call and "
                                        "appended to with no lock"),
        _ECC: (True, True, "a snapshot of two callbacks and their states, only read after "
                           "creation"),
    },
    "OrtInteropApi": {
        _IMP: (True, False, "ORT's wrapper adds no lock around the EP's importer, and Import*/"
                            "CreateTensorFromMemory take it non-const"),
        "OrtExternalMemoryHandle": (True, True, "read (const) by CreateTensorFromMemory; the "
                                    "EP's object"),
        "OrtExternalSemaphoreHandle": (True, False, "Wait/SignalSemaphore take it non-const"),
    },
    "OrtModelPackageApi": {
        _MPO: (True, True, "a snapshot of the EP choice, only read after creation"),
        _MPC: (True, False, "GetComponentNames, GetVariantNames and ResolveStringRef fill "
                            "caches of the context with no lock"),
        _MPCC: (True, False, "GetSelectedVariantFolderPath and CreateSession write it with no "
                             "lock"),
    },
}
