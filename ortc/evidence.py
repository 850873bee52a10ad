"""Evidence for the thread rules: what each verdict rests on, of a stated kind.

Every record has a ``kind``:

* ``ort-doc``: ONNX Runtime's documentation or public header says it (``ref`` is a URL);
* ``ort-maintainer``: an ORT maintainer said it in an issue or pull request (``ref`` is the
  thread's URL; ``says`` names who and when);
* ``ort-behaviour``: ORT was seen doing it: a conformance check (``ref`` is ``check:<id>``,
  with the ``outcome`` and ``versions`` recorded in docs/CONFORMANCE.md) or a test in tests/
  that exercises ORT itself (``ref`` is ``tests/<file>.py::<test>``). For Send it must be a
  check that uses the type's objects on a thread other than their maker's (its ``crosses``;
  the send.* family does this for each type) or a test known to do so;
* ``guard``: a test showing ortc's own enforcement (a refusal, a wait). It shows what ortc does,
  not what ORT needs, so it never backs a Send/Sync verdict alone;
* ``policy``: ortc's conservative choice where nothing stronger exists, with its reason and
  ``changes_if`` (what evidence would change it);
* ``untested``: nothing here shows it; the record says what is assumed;
* ``ort-source``: ORT's implementation of the function, read at a stated commit or release
  (``ref`` is the file's URL at that commit, ``function`` the C++ function that implements the
  slot, ``release`` the ORT release or commit the reading holds for); a paraphrase of what the
  code does, never a copy;
* ``signature``: only the slot's C signature (an ABI fact: const or not, owned or borrowed
  out-pointers). It states no thread rule, so a slot whose verdict rests on it alone (or on
  the other generic records of :mod:`ortc.slot_rules`) is counted "unverified".

``backs`` names the verdicts a record supports: ``send``, ``sync``, ``not-send``, ``not-sync``,
``run`` (Run concurrency), ``lifetime``, ``exclusive``, ``shared``, and for an ownership transfer
(:data:`TRANSFER_EVIDENCE`) ``transfer`` (the call takes the argument) and ``on-failure`` (who
owns it after the call fails). tests/test_evidence.py
resolves every reference (URL shape, check id, test id) and fails when a Send/Sync verdict
rests on ``guard``/``untested`` records alone without a caveat saying so, or when a Send record
of kind ``ort-behaviour`` cites a check or test that never moves the type to another thread. A
record with no ``backs`` is context (what a one-thread check shows), not a verdict's support.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Evidence", "KINDS", "STRONG", "doc", "maintainer", "check", "test", "guard",
           "policy", "untested", "source", "signature", "TYPE_EVIDENCE", "CAVEATS", "EP_EVIDENCE", "CALLBACK_EVIDENCE",
           "COUNTER_REPORTS", "OPTION_EVIDENCE", "TRANSFER_EVIDENCE", "for_type", "for_transfer",
           "transfer_key", "find", "ALL_VERSIONS", "SUITE"]

KINDS = ("ort-source", "ort-doc", "ort-maintainer", "ort-behaviour", "guard", "policy",
         "untested", "signature")
#: kinds that can carry a Send/Sync verdict alone
STRONG = ("ort-source", "ort-doc", "ort-maintainer", "ort-behaviour")

#: the ORT releases of the committed conformance matrix (docs/CONFORMANCE.md)
ALL_VERSIONS = "1.16.2-1.32.0"
#: what a test in tests/ runs against
SUITE = "the library the test suite loads (CI: the current onnxruntime wheel; ORTC_LIBRARY=...)"


@dataclass(frozen=True)
class Evidence:
    kind: str
    ref: str
    says: str
    backs: tuple[str, ...] = ()
    #: ort-behaviour: the ORT versions it ran on (a range of the matrix, or SUITE)
    versions: str = ""
    #: ort-behaviour with a check ref: the matrix status the claim relies on: "pass", "known",
    #: or "known (race)" for a race a run may miss (known on some versions, pass elsewhere)
    outcome: str = ""
    #: policy: what would change the choice
    changes_if: str = ""
    #: ort-source: the C++ function that implements the slot (``OrtApis::X``, a method it calls)
    function: str = ""
    #: ort-source: the ORT release (or the commit) the reading holds for
    release: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "ref": self.ref, "says": self.says,
                               "backs": list(self.backs)}
        for key in ("versions", "outcome", "changes_if", "function", "release"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out

    def short(self) -> str:
        """One line for the Markdown: ``[kind] says (ref; versions)``."""
        where = [self.ref] if self.ref else []
        if self.outcome:
            where.append(f"{self.outcome} on {self.versions}")
        elif self.versions and self.versions != SUITE:
            where.append(self.versions)
        if self.changes_if:
            where.append(f"would change if {self.changes_if}")
        if self.function:
            where.insert(0, f"{self.function}, {self.release}")
        return f"[{self.kind}] {self.says}" + (f" ({'; '.join(where)})" if where else "")


def doc(url: str, says: str, *backs: str) -> Evidence:
    return Evidence("ort-doc", url, says, backs)


def maintainer(url: str, says: str, *backs: str) -> Evidence:
    return Evidence("ort-maintainer", url, says, backs)


def check(check_id: str, says: str, *backs: str, outcome: str = "pass",
          versions: str = ALL_VERSIONS) -> Evidence:
    return Evidence("ort-behaviour", f"check:{check_id}", says, backs, versions, outcome)


def test(test_id: str, says: str, *backs: str) -> Evidence:
    """A test in tests/ that exercises ORT itself (not only ortc's guard)."""
    return Evidence("ort-behaviour", test_id, says, backs, SUITE)


def guard(test_id: str, says: str, *backs: str) -> Evidence:
    return Evidence("guard", test_id, says, backs)


def policy(says: str, changes_if: str, *backs: str) -> Evidence:
    return Evidence("policy", "", says, backs, changes_if=changes_if)


def untested(says: str, *backs: str) -> Evidence:
    return Evidence("untested", "", says, backs)


def source(path: str, at: str, function: str, says: str, *backs: str, line: int = 0,
           release: str = "") -> Evidence:
    """ORT's implementation: ``path`` in microsoft/onnxruntime read at ``at`` (a commit, or a
    release tag), ``function`` the C++ function that implements the slot, ``says`` what it
    does in our words. ``release`` defaults to "main at <commit>"."""
    ref = f"{GH}/blob/{at}/{path}" + (f"#L{line}" if line else "")
    return Evidence("ort-source", ref, says, backs, function=function,
                    release=release or f"main at {at[:10]}")


def signature(says: str, *backs: str) -> Evidence:
    """The C signature only: an ABI fact, no thread rule (a verdict on it alone is
    unverified)."""
    return Evidence("signature", C_API, says, backs)


# -- where the evidence lives ------------------------------------------------------------------

GH = "https://github.com/microsoft/onnxruntime"
C_API = "https://onnxruntime.ai/docs/api/c/struct_ort_api.html"
HEADER = f"{GH}/blob/main/include/onnxruntime/core/session/onnxruntime_c_api.h"
DESIGN = "https://onnxruntime.ai/docs/reference/high-level-design.html"
DML_DOC = "https://onnxruntime.ai/docs/execution-providers/DirectML-ExecutionProvider.html"
IOBINDING_DOC = "https://onnxruntime.ai/docs/performance/tune-performance/iobinding.html"
COMPILE_API = "https://onnxruntime.ai/docs/api/c/struct_ort_compile_api.html"
EDITOR_API = "https://onnxruntime.ai/docs/api/c/struct_ort_model_editor_api.html"
EP_STRUCT = "https://onnxruntime.ai/docs/api/c/struct_ort_ep.html"
CXX_NODE = "https://onnxruntime.ai/docs/api/c/struct_ort_1_1_node.html"
COMPILE_OPTIONS_SRC = f"{GH}/blob/main/onnxruntime/core/session/model_compilation_options.h"
#: the model editor's implementation at a commit read for what its calls do with what they take
#: (the C reference says what is taken on success, not what a failed call leaves the caller)
EDITOR_SRC = (f"{GH}/blob/004550f4d0dfa3fd7d2f2af7e3c9d7f99342e6b6/onnxruntime/core/session/"
              "model_editor_c_api.cc")
ADD_CUSTOM_OP_DOMAINS = (f"{GH}/blob/c343143a49ca8fe39dd54c11a90febfa1cdd4d45/onnxruntime/core/"
                         "session/inference_session.h#L268")
_T = "tests/test_threads.py::"

# -- per type ------------------------------------------------------------------------------------

TYPE_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    "OrtEnv": (
        doc(C_API, "CreateEnv: every later creation returns the same ref-counted instance "
            "(one env per process)", "send", "sync"),
        check("env.same-pointer", "CreateEnv twice returns one pointer", "sync"),
        check("env.refcount", "releasing one of two references keeps the env working",
              "lifetime"),
        check("env.concurrent-create-release", "threads creating and releasing the env at once "
              "all get the one env, which stays usable", "send", "sync"),
        check("thread.concurrent-create", "concurrent CreateSession calls share the env",
              "sync", "shared"),
        check("env.run-after-last-release", "a Run after the last ReleaseEnv crashes "
              "(SIGSEGV): the env must outlive every session", "lifetime", outcome="known"),
        check("env.recreate-after-release", "after the last release a new CreateEnv gives a "
              "working env again", "lifetime"),
        check("thread.env-allocator-two-sessions", "two sessions using one arena registered on "
              "the env (CreateAndRegisterAllocator, session.use_env_allocators=1) run at once "
              "from four threads: every result equals the serial one, so sessions sharing an "
              "env allocator may run concurrently", "sync"),
        maintainer(f"{GH}/issues/13571", "adrianlizarraga (2022-11-08): create OrtEnv once per "
                   "process and one session per model, then use the session from many threads",
                   "sync"),
        policy("setters of env-global state (log level, allocator and EP-library registration, "
               "thread-pool callbacks) are exclusive: nothing documents them against concurrent "
               "session creation or runs", "ORT documents these setters as safe during runs",
               "exclusive"),
        test(f"{_T}test_session_works_after_everything_else_is_gone", "a session keeps "
             "working after every other ortc object is gone", "lifetime"),
        guard(f"{_T}test_exclusive_method_overlapping_a_call_inside_ort"
              "[Env.log_severity_level (set)]",
              "ortc refuses a log-level change while another call is inside ORT", "exclusive"),
    ),
    "OrtSession": (
        doc(DESIGN, "several threads may call Run on the same session", "sync", "run"),
        maintainer(f"{GH}/issues/114", "pranavsharma and yufenglee (2018-12-06): one session "
                   "may serve concurrent Run calls (C and C#)", "sync", "run"),
        maintainer(f"{GH}/issues/5558", "snnn (2020-10-21): Run is thread-safe, though not "
                   "const", "sync", "run"),
        check("thread.concurrent-run", "concurrent Runs on one CPU session equal serial runs",
              "sync", "run"),
        check("thread.per-thread-binding", "per-thread IoBindings on one session, each created "
              "concurrently, give every thread its result", "sync"),
        test(f"{_T}test_shared_run_stress_matches_serial", "8 threads x 25 runs through ortc "
             "equal serial results", "sync", "run"),
        maintainer(f"{GH}/pull/19301", "chilo-ms (2024-01-29): InferenceSession::Run is "
                   "guaranteed to be thread-safe, several threads may call it at once", "sync",
                   "run"),
        check("thread.concurrent-run", "the session is created on one thread and run on "
              "others", "send"),
        check("send.session", "a session created on a thread that then ended runs and is "
              "released on another", "send"),
        check("life.binding-after-session-release", "an IoBinding used after its session is "
              "released reads the freed session and, with freed memory poisoned, crashes on "
              "every version (unpoisoned, older versions may instead return an error or, on "
              "1.16.2, spin for ever): the session must outlive its bindings",
              "lifetime", outcome="known", versions="1.16.2-1.32.0"),
        check("life.session-value-after-session-release", "a tensor from a session allocator "
              "crashes once the session is gone: the session must outlive those values",
              "lifetime", outcome="known"),
        check("thread.release-session-during-run", "ReleaseSession called on one thread while "
              "a Run on the session is inside ORT on another returns at once, without waiting "
              "for the Run, which then uses the freed session: the process dies (SIGSEGV). No "
              "Run may be inside a session when it is released: a binding's close must wait "
              "for its runs or refuse", "lifetime", outcome="known"),
        check("thread.short-lived-threads-memory", "Run called once from each of 300 "
              "short-lived threads, one after another, grows resident memory by less than 4 KiB "
              "per thread beyond what 300 Runs on one thread grow it: ORT keeps no per-thread "
              "state that outlives a calling thread, so runs need no long-lived or pooled "
              "threads"),
        policy("SessionEndProfiling, SetEpDynamicOptions and SessionReleaseCapturedGraph are "
               "exclusive: nothing documents them against in-flight runs",
               "ORT documents them as safe during runs", "exclusive"),
        guard(f"{_T}test_slow_run_refuses_exclusive_calls", "ortc refuses an exclusive call "
              "while a run is in flight", "exclusive"),
        guard(f"{_T}test_exclusive_run_session", "a session whose providers do not allow "
              "concurrent Run has its runs serialized by ortc", "run"),
        guard(f"{_T}test_session_close_while_running", "close() during a run waits or is "
              "refused", "lifetime"),
    ),
    "OrtSessionOptions": (
        check("thread.concurrent-create", "8 concurrent CreateSession calls sharing one "
              "SessionOptions all succeed with identical results", "send", "sync", "shared"),
        check("session.options-released-early", "options may be released right after "
              "CreateSession; the session keeps its own copy", "lifetime"),
        doc(ADD_CUSTOM_OP_DOMAINS, "adding custom-op domains at session creation is marked "
            "'not thread safe': concurrent CreateSession with custom-op or EP-plugin domains is "
            "not safe even though plain concurrent creation is", "exclusive"),
        maintainer(f"{GH}/issues/27089", "the thread-safety request for concurrent session "
                   "initialization (custom-op domains race); open", "exclusive"),
        check("thread.create-with-custom-op-domain", "threads creating sessions at once from "
              "one SessionOptions that holds a custom-op domain new to the process: a few "
              "creations of 1200 (1 to 11 per version) fail with ORT's error that the domain "
              "already exists in its domain-version map (a race: not seen on 1.16.2 to 1.19.2 "
              "in the run of record, which is no verdict there; earlier runs saw it on "
              "1.19.2): create such sessions one at a time",
              "exclusive", outcome="known", versions="1.20.1-1.32.0"),
        doc(C_API, "SessionOptionsSetLoadCancellationFlag is meant to be set from another "
            "thread while CreateSession runs", "shared"),
        check("shared.load-cancel-from-another-thread", "the flag set from another thread while "
              "CreateSession runs with the options makes that creation fail as canceled",
              "shared", versions="1.22.1-1.32.0"),
        policy("setters mutate the options without a lock, so they are exclusive",
               "ORT documents the setters as thread-safe", "exclusive"),
        guard(f"{_T}test_concurrent_session_creation_shared_options", "ortc lets concurrent "
              "creations share options (shared leases)", "shared"),
        guard(f"{_T}test_exclusive_method_overlapping_a_call_inside_ort", "ortc refuses a "
              "setter while another call uses the options", "exclusive"),
    ),
    "OrtRunOptions": (
        doc(C_API, "RunOptionsSetTerminate may be called from another thread to stop the runs "
            "using these options", "sync", "shared"),
        check("thread.shared-run-options-terminate", "one RunOptions shared by concurrent runs: "
              "one terminate stops them all; after unset the options run again", "send", "sync"),
        check("run.terminate-flag", "a Run with the flag already set fails at once (one "
              "thread)"),
        policy("tag, log levels, config entries, LoRA activation and profiling setters are "
               "exclusive: runs read them without a lock", "ORT documents them as safe during "
               "runs", "exclusive"),
        guard(f"{_T}test_terminate_is_shared_with_running_runs", "ortc lets terminate() "
              "overlap running runs", "shared"),
    ),
    "OrtValue": (
        doc(C_API, "read functions take a const OrtValue*; GetTensorMutableData gives the "
            "caller a pointer to write through", "sync", "shared"),
        check("thread.shared-input-value", "one input value fed to concurrent Runs gives every "
              "run the right result", "sync"),
        check("run.preallocated-output", "a caller-allocated output passed to Run is filled "
              "in place: Run writes it", "exclusive"),
        check("binding.bound-output-written-by-every-run", "a value bound as an output is "
              "written by every RunWithBinding while bound", "exclusive"),
        check("value.user-memory-is-borrowed", "a tensor over caller memory reads that memory: "
              "the buffer must outlive the value", "lifetime"),
        check("life.output-after-session-release", "a CPU Run output stays readable after its "
              "session is released (not promised by the docs)", "lifetime"),
        check("life.session-value-after-session-release", "a value from a session allocator "
              "crashes after the session is released", "lifetime", outcome="known"),
        check("send.value", "tensors over caller memory, allocated by ORT and of strings, made "
              "on a thread that then ended, read, fed to a Run and released on another", "send"),
        test("tests/test_threads.py::test_shared_run_stress_matches_serial", "concurrent runs "
             "through ortc on shared numpy inputs (each thread's OrtValues are ortc's own: no "
             "value moves)"),
        guard("tests/test_binding.py::test_bound_output_value_is_exclusive_while_bound",
              "ortc refuses a read or write of a value while it is bound as an output",
              "exclusive"),
        guard(f"{_T}test_closing_a_run_input_value_waits_for_the_run", "closing a run's input "
              "waits for the run", "lifetime"),
    ),
    "OrtIoBinding": (
        doc(IOBINDING_DOC, "an IoBinding holds per-run state (bound inputs and outputs) that "
            "RunWithBinding reads and fills", "not-sync"),
        check("thread.shared-binding", "threads rebinding and running one IoBinding get wrong "
              "results, and some runs fail; the concurrent binds and runs can corrupt ORT's "
              "heap and crash the process (SIGSEGV, SIGABRT), which is why the check runs in a "
              "child process", "not-sync", outcome="known"),
        check("send.io-binding", "a binding made and bound on a thread that then ended runs, "
              "is rebound, run again and released on another", "send"),
        check("thread.per-thread-binding", "bindings made at once on one session by several "
              "threads (CreateIoBinding reads the session), each used on its own thread: all "
              "correct; no binding changes thread here", "shared"),
        check("binding.keeps-bound-value", "the binding keeps its own reference to a bound "
              "input", "lifetime"),
        check("life.binding-after-session-release", "use after the session's release reads "
              "freed memory: it crashes on every version once that memory is poisoned",
              "lifetime", outcome="known", versions="1.16.2-1.32.0"),
        guard(f"{_T}test_iobinding_shared_by_threads_is_refused", "ortc refuses a second "
              "thread inside one binding", "not-sync"),
        guard(f"{_T}test_iobinding_shared_by_threads_serialized", "with 'serialize', threads "
              "take turns and every result is right", "not-sync"),
        guard(f"{_T}test_iobinding_after_session_close_in_child", "ortc keeps the session "
              "alive for its binding", "lifetime"),
    ),
    "OrtMemoryInfo": (
        doc(C_API, "every getter takes a const OrtMemoryInfo*; there are no setters", "sync"),
        check("send.memory-info", "infos made on a thread that then ended are read, compared, "
              "used to create a tensor and released on another", "send"),
        check("alloc.memory-info", "created infos describe what they were created with (one "
              "thread)"),
        check("value.memory-info", "a tensor's memory info compares equal to the one it was "
              "created with (ORT copies it)", "lifetime"),
        test(f"{_T}test_shared_methods_stress_matches_serial", "shared getters from threads "
             "equal serial results", "sync"),
        doc(C_API, "infos returned by AllocatorGetInfo, GetTensorMemoryInfo and "
            "SessionGetMemoryInfoFor* are owned by their object: never release them, never "
            "keep them past it", "lifetime"),
    ),
    "OrtAllocator": (
        doc(C_API, "GetAllocatorWithDefaultOptions returns an allocator that must not be freed",
            "lifetime"),
        check("thread.default-allocator", "the default CPU allocator serves Alloc/Free from "
              "threads at once", "send", "sync"),
        check("thread.session-allocator", "a session's CPU arena serves Alloc/Free from "
              "threads at once", "send", "sync"),
        check("life.allocator-after-session-release", "allocating from a session allocator "
              "after its session is released", "lifetime"),
        policy("an allocator for non-CPU memory is not Sync (per instance): no device "
               "allocator has been tested from several threads here, and a peer binding "
               "reported CUDA allocator races (https://github.com/pykeio/ort/issues/348)",
               "a GPU run of thread.session-allocator passes", "not-sync"),
        guard("tests/test_memory.py::test_device_allocators_are_not_sync", "ortc marks device "
              "allocators not Sync", "not-sync"),
        test(f"{_T}test_shared_methods_stress_matches_serial", "shared allocator calls from "
             "threads through ortc", "sync"),
    ),
    "OrtLoraAdapter": (
        doc(f"{GH}/blob/main/onnxruntime/core/session/lora_adapters.h", "runs only read an "
            "adapter (const accessors)", "sync"),
        doc(C_API, "RunOptionsAddActiveLoraAdapter keeps the adapter by pointer: it must "
            "outlive the RunOptions", "lifetime"),
        check("send.lora-adapter", "an adapter loaded on a thread that then ended is made "
              "active, used by a Run and released on another", "send",
              versions="1.20.1-1.32.0"),
        check("create.lora-adapter-errors", "a missing file and bytes that are not an adapter "
              "fail with error statuses (one thread)", versions="1.20.1-1.32.0"),
        test("tests/test_lora.py::test_adapter_shared_by_threads", "runs on several threads "
             "with one adapter active give the adapter's results", "send", "sync"),
    ),
    "OrtTypeInfo": (
        doc(C_API, "every getter takes a const OrtTypeInfo*", "sync"),
        check("send.type-info", "infos from a session input and from a value, made on a "
              "thread that then ended, are read, cast and released on another", "send"),
        check("typeinfo.value-type-info", "GetTypeInfo of a value describes its element type "
              "and shape (one thread)"),
        doc(C_API, "CastTypeInfoTo* results are borrowed: valid until the type info is freed, "
            "never released", "lifetime"),
    ),
    "OrtTensorTypeAndShapeInfo": (
        doc(C_API, "getters take a const pointer; setters apply to infos the caller created",
            "send", "sync"),
        check("send.tensor-type-and-shape-info", "infos built by the caller or taken from a "
              "value on a thread that then ended are read, changed (the caller's) and released "
              "on another", "send"),
        check("typeinfo.build-shape", "a created info reads back what was set (one thread)",
              versions="1.17.1-1.32.0"),
    ),
    "OrtMapTypeInfo": (doc(C_API, "read-only getters; borrowed from its OrtTypeInfo",
                           "send", "sync", "lifetime"),),
    "OrtSequenceTypeInfo": (doc(C_API, "read-only getters; borrowed from its OrtTypeInfo",
                                "send", "sync", "lifetime"),),
    "OrtOptionalTypeInfo": (doc(C_API, "read-only getters; borrowed from its OrtTypeInfo",
                                "send", "sync", "lifetime"),),
    "OrtModelMetadata": (
        doc(C_API, "getters take a const OrtModelMetadata* and allocate their results with "
            "the allocator passed in", "send", "sync"),
        check("session.metadata-outlives-session", "metadata stays readable after its "
              "session is released (an independent copy)", "lifetime"),
    ),
    "OrtStatus": (
        doc(C_API, "a status carries an immutable code and message", "send", "sync"),
        check("send.status", "a status made on a thread that then ended reads back its code "
              "and message and is released on another", "send"),
        check("status.roundtrip", "the status keeps its own copy of the message: the caller's "
              "buffer need not outlive it", "lifetime"),
        check("shared.process-calls", "eight statuses made on one thread are read by four "
              "threads at once, 30 times each: every code and message right", "sync"),
    ),
    "OrtKernelContext": (
        doc(C_API, "a kernel context is valid only during the KernelCompute call it is passed "
            "to", "not-send", "lifetime"),
        check("kernel.parallel-for", "KernelContext_ParallelFor calls its function once per "
              "index, spread over the calling and pool threads, so the function must be "
              "thread-safe; it shows nothing about sharing the context itself",
              versions="1.19.2-1.32.0"),
        policy("not Sync: one compute call owns it, and nothing here uses one context from "
               "two threads at once", "ORT documents concurrent use of one context, or a check "
               "shows it", "not-sync"),
    ),
    "OrtKernelInfo": (
        doc(C_API, "a kernel info is valid only inside CreateKernel(V2); CopyKernelInfo makes a "
            "copy the kernel may keep", "not-send", "lifetime"),
        doc(C_API, "every KernelInfo getter takes a const OrtKernelInfo*", "sync"),
        check("kernel.info-concurrent-reads", "four threads read one info and its copy at "
              "once inside CreateKernelV2: every read as on the callback's thread", "sync",
              versions="1.17.1-1.32.0"),
        check("kernel.info-at-create", "CreateKernelV2 reads the node's attributes through the "
              "info during the call (one thread)", "lifetime", versions="1.19.2-1.32.0"),
    ),
    "OrtCustomOpDomain": (
        doc(C_API, "a custom-op domain must not be deleted until all sessions using it are "
            "released", "lifetime"),
        doc(ADD_CUSTOM_OP_DOMAINS, "adding domains at session creation is not thread-safe",
            "not-sync"),
        check("thread.create-with-custom-op-domain", "one domain, new to the process, used by "
              "four session creations at once (through one SessionOptions): a few creations of "
              "1200 fail because the domain already exists in ORT's domain-version map",
              "not-sync", outcome="known", versions="1.20.1-1.32.0"),
        policy("Send: a plain container with no thread affinity", "ORT ties it to a thread",
               "send"),
    ),
    "OrtThreadingOptions": (
        doc(C_API, "ORT copies the threading options at env creation", "send", "sync",
            "lifetime"),
        check("send.threading-options", "options made on a thread that then ended are filled, "
              "given to CreateEnvWithGlobalThreadPools and released on another; the env runs "
              "a session on its global pools", "send"),
        check("env.global-thread-pools", "options released right after the env is created: "
              "the env's sessions still run on the global pools", "lifetime"),
    ),
    "OrtArenaCfg": (
        doc(C_API, "an arena configuration is read at allocator/provider creation", "send",
            "sync"),
        policy("keep it alive for the session: device provider options keep it by pointer",
               "ORT documents that it is copied", "lifetime"),
    ),
    "OrtKeyValuePairs": (
        doc(C_API, "getters take a const OrtKeyValuePairs*; Add/Remove change it", "send",
            "sync"),
        check("send.key-value-pairs", "pairs made and filled on a thread that then ended are "
              "read, changed and released on another", "send", versions="1.22.1-1.32.0"),
        check("alloc.key-value-pairs", "pairs copy their keys and values: the caller's strings "
              "need not outlive them", "lifetime", versions="1.23.2-1.32.0"),
    ),
    "OrtPrepackedWeightsContainer": (
        doc(C_API, "designed to be shared by sessions; it must not be released before them",
            "sync", "lifetime"),
        check("send.prepacked-container", "a container made (and given to a session) on a "
              "thread that then ended serves a second session made on another, and is released "
              "there after both", "send"),
        check("session.prepacked-container", "two sessions made one after the other with one "
              "container both compute correctly (one thread)"),
        check("shared.create-session-variants", "eight threads create sessions at once, four "
              "of them through the two prepacked variants sharing one container: every result "
              "right; the container is released after the sessions", "sync", "lifetime"),
    ),
    "OrtCUDAProviderOptionsV2": (
        policy("not Sync: a plain struct filled by Update*; ortc creates, fills, appends and "
               "releases it inside one call", "never: it is a builder", "not-sync"),
        policy("Send: no thread affinity", "ORT ties it to a thread", "send"),
    ),
    "OrtTensorRTProviderOptionsV2": (
        policy("not Sync: a plain struct filled by Update*; ortc creates, fills, appends and "
               "releases it inside one call", "never: it is a builder", "not-sync"),
        policy("Send: no thread affinity", "ORT ties it to a thread", "send"),
    ),
    "OrtEpDevice": (
        doc(C_API, "GetEpDevices returns const EP devices and OrtApi has no function to "
            "release one: ORT owns them (registered on the env), the caller only reads them",
            "send", "sync", "lifetime"),
        check("send.ep-device", "the CPU EP device found on a thread that then ended reads the "
              "same on another, and a session appended to it there runs", "send",
              versions="1.23.2-1.32.0"),
        check("device.cpu-ep-device", "the CPU EP device reads back its names and metadata, "
              "and a session appended to it runs (one thread)", versions="1.23.2-1.32.0"),
        check("shared.env-reads", "four threads at once read the EP devices and append the CPU "
              "EP device found on the check's thread to their own options; every session runs "
              "(1.22.1 lists no EP device: nothing to read or append there)", "sync",
              versions="1.22.1-1.32.0"),
    ),
    "OrtHardwareDevice": (
        doc(C_API, "hardware devices come back as const pointers and OrtApi has no function "
            "to release one: ORT owns them, the caller only reads them", "send", "sync",
            "lifetime"),
        check("send.hardware-device", "hardware devices found on a thread that then ended read "
              "the same type, vendor, ids and metadata on another", "send",
              versions="1.23.2-1.32.0"),
        check("device.hardware-devices", "GetHardwareDevices lists the CPU (one thread)",
              versions="1.24.4-1.32.0"),
    ),
    "OrtSyncStream": (
        untested("a device stream; no device stream can be created on a CPU build", "send"),
        policy("not Sync: streams order device work and a stream shared by threads interleaves "
               "it", "a GPU check shows concurrent use is safe", "not-sync"),
    ),
    # -- callback-scoped ----------------------------------------------------------------------
    "OrtLogger": (
        doc(C_API, "KernelInfo_GetLogger and KernelContext_GetLogger hand out a logger that ORT "
            "owns and the caller never frees, for logging from CreateKernel and KernelCompute",
            "not-send", "lifetime"),
        doc(C_API, "Logger_LogMessage and Logger_GetLoggingSeverityLevel take a const "
            "OrtLogger*", "shared"),
        check("kernel.info-at-create", "CreateKernelV2 reads the level of the info's logger and "
              "logs through it (one thread)", versions="1.17.1-1.32.0"),
        check("kernel.compute-and-invoke", "KernelComputeV2 logs through its context's logger "
              "(one thread)", versions="1.17.1-1.32.0"),
        policy("not Send, as the kernel context: a borrow for one callback; nothing here logs "
               "through one OrtLogger after its callback returned", "ORT documents a logger as "
               "usable beyond its callback", "not-send"),
        check("thread.logger-concurrent-runs", "ORT logs through one session logger from "
              "concurrent runs' threads itself (the logger a kernel context hands out during "
              "those runs)", "sync", versions="1.17.1-1.32.0"),
        source("onnxruntime/core/session/custom_ops.cc",
               "5bca60d13ff1c21f176df856876e334b6ca61c17",
               "OrtApis::KernelInfo_GetLogger, OrtApis::Logger_LogMessage",
               "the kernel info hands out its own logger, the same one to every caller; logging "
               "reads a const logger and passes the message on: a Sync kernel info makes its "
               "logger reachable from several threads at once", "sync"),
    ),
    "OrtShapeInferContext": (
        doc(C_API, "the context InferOutputShapeFn receives is valid only during that call",
            "not-send", "lifetime"),
        check("kernel.shape-inference", "ORT calls the shape function during session creation; "
              "it reads the input count, the input's type and shape and an attribute, and sets "
              "the output's (one thread)", "lifetime", versions="1.17.1-1.32.0"),
        check("kernel.infer-info-ownership", "the tensor info GetInputTypeShape returns belongs "
              "to the context: releasing it aborts with a double free", "lifetime",
              outcome="known", versions="1.17.1-1.32.0"),
        policy("not Sync: one shape-inference call owns it, and nothing here uses one context "
               "from two threads at once", "ORT documents concurrent use, or a check shows it",
               "not-sync"),
    ),
    # -- caller-implemented ---------------------------------------------------------------------
    "OrtCustomOp": (
        doc(C_API, "CustomOpDomain_Add keeps the op by pointer: it must stay valid until the "
            "domain using it is released", "lifetime"),
        doc(DESIGN, "kernels are stateless and Compute may run concurrently for one kernel when "
            "runs overlap: ORT calls the struct's functions from the threads that run the "
            "session, several at once", "send", "sync"),
        check("kernel.compute-and-invoke", "ORT calls the struct's CreateKernelV2 at session "
              "creation and KernelComputeV2 inside Run (one thread)",
              versions="1.17.1-1.32.0"),
        check("send.op", "a struct made on the check's thread has its KernelComputeV2 called "
              "on four other threads whose runs overlap", "send", "sync",
              versions="1.17.1-1.32.0"),
        check("kernel.overlapping-compute", "two Runs at once on one session are inside the "
              "same kernel's KernelComputeV2 together (one kernel instance for the node): ORT "
              "does not serialize a kernel's compute, so the kernel's state must be Sync",
              "sync"),
    ),
    # -- custom-op helpers ----------------------------------------------------------------------
    "OrtOp": (
        doc(C_API, "CreateOp builds an operator inside CreateKernel that the kernel keeps, runs "
            "with InvokeOp from its compute and releases with ReleaseOp", "lifetime"),
        doc(C_API, "InvokeOp takes a const OrtOp*", "sync"),
        check("kernel.compute-and-invoke", "an op made in CreateKernelV2 is run by "
              "KernelComputeV2 with InvokeOp and gives LeakyRelu's result (session created and "
              "run on one thread)", versions="1.17.1-1.32.0"),
        check("send.op", "an op made in CreateKernelV2 while the session is created on one "
              "thread is invoked by the computes of four threads' overlapping runs: 40 results "
              "right", "send", "sync", versions="1.17.1-1.32.0"),
    ),
    "OrtOpAttr": (
        doc(C_API, "CreateOpAttr makes an attribute the caller releases with ReleaseOpAttr; "
            "ReadOpAttr and the OpAttr_* getters take a const OrtOpAttr*", "sync", "lifetime"),
        doc(EDITOR_API, "the C reference says CreateNode copies the attributes it is given "
            "(it does, and it also releases the caller's: the checks below)", "lifetime"),
        doc(CXX_NODE, "ORT's C++ wrapper says the node takes ownership of the attributes on "
            "success: the checks below agree", "exclusive"),
        check("editor.create-node-takes-attributes", "a successful CreateNode sets the caller's "
              "array entries to NULL (it released the attributes) and the node keeps its own "
              "copy: a new attribute made in the freed block leaves it alone, and the model "
              "built from it runs with the attribute's value", "lifetime", "exclusive",
              versions="1.22.1-1.32.0"),
        check("life.op-attr-release-after-create-node", "the caller's ReleaseOpAttr right after "
              "a successful CreateNode is a double free: the process dies (SIGSEGV or SIGABRT)",
              "exclusive", "lifetime", outcome="known", versions="1.22.1-1.32.0"),
        check("life.op-attr-release-after-add-node", "so is the caller's ReleaseOpAttr after "
              "the node is added to its graph: the process dies (SIGSEGV or SIGABRT)",
              "exclusive", "lifetime", outcome="known", versions="1.22.1-1.32.0"),
        check("kernel.compute-and-invoke", "an attribute made with CreateOpAttr is passed to "
              "CreateOp and released right after (one thread)", "lifetime",
              versions="1.17.1-1.32.0"),
        check("send.op-attr", "attributes made on a thread that then ended read back their "
              "value (name and type from API 23) there and on four threads at once, and are "
              "released there", "send", "sync", versions="1.17.1-1.32.0"),
    ),
    # -- graphs ---------------------------------------------------------------------------------
    "OrtModel": (
        doc(EDITOR_API, "the model owns the graph AddGraphToModel gives it; the caller releases "
            "the model with ReleaseModel when done", "lifetime"),
        doc(EDITOR_API, "CreateSessionFromModel takes a const OrtModel*", "sync"),
        check("send.model-editor", "a model assembled on a thread that then ended serves two "
              "CreateSessionFromModel calls at once on two other threads, and is released "
              "before those sessions run (they do not need it)", "send", "sync", "lifetime",
              versions="1.22.1-1.32.0"),
        check("editor.session-outlives-model", "a model released right after "
              "CreateSessionFromModel, freed memory poisoned: the session computes with an "
              "ORT-allocated initializer the model held as external data, whose memory still "
              "holds its values (the session keeps the value alive): the session needs nothing "
              "of the model", "lifetime", versions="1.22.1-1.32.0"),
    ),
    "OrtGraph": (
        doc(EP_STRUCT, "GetCapability and Compile receive const graphs that ORT owns, for the "
            "duration of the call", "lifetime"),
        doc(EDITOR_API, "the model owns a graph once AddGraphToModel has it: never release it "
            "after that", "lifetime"),
        doc(C_API, "every Graph_* getter takes a const OrtGraph*", "sync"),
        check("send.model-editor", "a model-editor graph made on a thread that then ended "
              "gets its inputs, outputs and node and goes into a model on another", "send",
              versions="1.22.1-1.32.0"),
        untested("a graph view lent to a plugin EP on another thread: no plugin EP exists on "
                 "the CPU build this project tests"),
    ),
    "OrtNode": (
        doc(C_API, "every Node_* getter takes a const OrtNode*; nodes read from a graph are "
            "returned as const pointers the graph owns", "sync", "lifetime"),
        doc(EDITOR_API, "the graph owns a node once AddNodeToGraph has it", "lifetime"),
        check("send.model-editor", "a node made on a thread that then ended is added to a "
              "graph on another", "send", versions="1.22.1-1.32.0"),
    ),
    "OrtValueInfo": (
        doc(C_API, "every ValueInfo getter takes a const OrtValueInfo*; value infos read from a "
            "graph or node are const pointers the graph owns; the type info is borrowed", "sync",
            "lifetime"),
        doc(EDITOR_API, "the graph owns the value infos SetGraphInputs and SetGraphOutputs are "
            "given", "lifetime"),
        check("send.model-editor", "value infos made on a thread that then ended read back "
              "their names and types on another and become the graph's inputs and output "
              "there", "send", versions="1.22.1-1.32.0"),
    ),
    "OrtExternalInitializerInfo": (
        doc(C_API, "CreateExternalInitializerInfo copies the path; the caller releases every "
            "info it creates or gets from ValueInfo_GetExternalInitializerInfo; the getters "
            "take a const pointer and the path they return belongs to the info", "sync",
            "lifetime"),
        check("send.external-initializer-info", "infos made on a thread that then ended "
              "(the path buffer gone with it) read back path, offset and size on another and "
              "are released there", "send", "lifetime", versions="1.23.2-1.32.0"),
    ),
    "OrtModelCompilationOptions": (
        doc(COMPILE_API, "made from an env and session options, filled by setters, read by "
            "CompileModel (a const pointer) and released after it", "lifetime"),
        doc(COMPILE_OPTIONS_SRC, "the options keep a pointer to the env, their own copy of the "
            "session options and a caller's input buffer by pointer", "lifetime"),
        policy("not Sync: the options carry the output destination (a path or the caller's "
               "buffer pointer), which two CompileModel calls with one options object would "
               "both write", "ORT documents concurrent compilation with one options object",
               "not-sync"),
        check("send.model-compilation-options", "options made on a thread that then ended "
              "(their session options released at once) are set, compiled with CompileModel "
              "and released on another; the compiled models run", "send", "lifetime",
              versions="1.22.1-1.32.0"),
    ),
    "OrtEpAssignedSubgraph": (
        doc(C_API, "Session_GetEpGraphAssignmentInfo returns records the session owns (recorded "
            "only with session.record_ep_graph_assignment_info); the getters take const "
            "pointers", "sync", "lifetime"),
        check("send.ep-assignment-info", "records fetched on a thread that then ended read "
              "the same on four threads at once while the session lives", "send", "sync",
              versions="1.24.4-1.32.0"),
    ),
    "OrtEpAssignedNode": (
        doc(C_API, "EpAssignedSubgraph_GetNodes returns const node records the subgraph record "
            "owns; the getters take const pointers", "sync", "lifetime"),
        check("send.ep-assignment-info", "node records fetched on a thread that then ended "
              "read the same on four threads at once", "send", "sync",
              versions="1.24.4-1.32.0"),
    ),
    "OrtDeviceEpIncompatibilityDetails": (
        doc(C_API, "the getters take a const pointer; the notes string belongs to the details; "
            "the caller releases the details", "sync", "lifetime"),
        check("send.device-ep-incompatibility-details", "details made on a thread that then "
              "ended read the same on four threads at once and are released there", "send",
              "sync", versions="1.24.4-1.32.0"),
    ),
}
for _c_type in ("OrtCANNProviderOptions", "OrtDnnlProviderOptions", "OrtROCMProviderOptions",
                "OrtNvTensorRtRtxProviderOptions"):
    TYPE_EVIDENCE[_c_type] = TYPE_EVIDENCE["OrtCUDAProviderOptionsV2"]

#: a Send or Sync verdict whose records are guard/untested only, stated as such
CAVEATS: dict[str, dict[str, str]] = {
    "OrtSyncStream": {"send": "Send rests on no test: no stream exists on a CPU build; ortc "
                              "does not wrap streams"},
    "OrtCUDAProviderOptionsV2": {"send": "Send rests on policy only: a plain options struct; "
                                         "ortc never lets one leave the call that fills it"},
    "OrtTensorRTProviderOptionsV2": {"send": "Send rests on policy only: a plain options "
                                             "struct; ortc never lets one leave the call that "
                                             "fills it"},
    "OrtCustomOpDomain": {"send": "Send rests on policy only: nothing ties a domain to its "
                                  "creating thread, and no test moves one; ortc does not wrap "
                                  "domains"},
    **{t: {"send": "Send rests on policy only: a plain options struct, like the CUDA one; "
                   "ortc does not expose it"}
       for t in ("OrtCANNProviderOptions", "OrtDnnlProviderOptions", "OrtROCMProviderOptions",
                 "OrtNvTensorRtRtxProviderOptions")},
}

# -- per execution provider ------------------------------------------------------------------

EP_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    "CPUExecutionProvider": tuple(e for e in TYPE_EVIDENCE["OrtSession"] if "run" in e.backs
                                  and e.kind in STRONG),
    "CUDAExecutionProvider": (
        policy("exclusive: no GPU run is recorded here; CUDA runs had races in the past "
               f"({GH}/issues/3828, {GH}/issues/4829; https://github.com/pykeio/ort/issues/348)",
               "a GPU run of thread.concurrent-run passes on the CUDA provider", "run"),
    ),
    "TensorrtExecutionProvider": (
        maintainer(f"{GH}/pull/19301", "the TensorRT provider's concurrent-Run fix (its "
                   "compute is locked and synchronized), released in 1.17.0; the report it "
                   f"fixes: {GH}/issues/19275", "run"),
        policy("before 1.17 (the loaded library's version) Run is exclusive", "the fix is "
               "shown to be in an older release", "run"),
    ),
    "DmlExecutionProvider": (
        doc(DML_DOC, "DirectML sessions do not support concurrent Run; different sessions may "
            "run at once", "run"),
    ),
    "XnnpackExecutionProvider": (
        policy("listed as concurrent: the provider reports that it does not support concurrent "
               "Run, and ORT then serializes runs itself (read in ORT's source, not tested "
               "here)", "a run shows overlapping XNNPACK runs misbehave", "run"),
    ),
    "WebGpuExecutionProvider": (
        policy("listed as concurrent: ORT serializes runs of one session itself (as for "
               "XNNPACK; read in ORT's source, not tested here); concurrent runs of different "
               f"WebGPU sessions crash ({GH}/issues/32561)", "a run shows one session's "
               "overlapping runs misbehave", "run"),
    ),
    "QNNExecutionProvider": (
        maintainer(f"{GH}/pull/18981", "a mutex makes concurrent Run on one QNN session safe",
                   "run"),
    ),
}

#: provider options that make Run exclusive (ortc/providers.py _EXCLUSIVE_OPTIONS)
OPTION_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    "enable_cuda_graph": (
        maintainer(f"{GH}/pull/10423", "hariharans29: with CUDA graphs enabled Run is no "
                   "longer thread-safe; calls to Run must be serialized", "run"),),
    "trt_cuda_graph_enable": (
        maintainer(f"{GH}/pull/10423", "the same CUDA-graph capture: one graph per session, "
                   "so Run must be serialized", "run"),),
}

# -- callbacks ---------------------------------------------------------------------------------

CALLBACK_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    "OrtLoggingFunction": (
        check("env.logger-caller-threads", "the env logger is called on every thread that "
              "calls into ORT, concurrently", "sync"),
        check("thread.logger-pool-thread", "and on an intra-op pool thread during RunAsync",
              "sync"),
        check("thread.logger-concurrent-runs", "a session logger is called from concurrent "
              "runs' threads", "sync", versions="1.17.1-1.32.0"),
        guard(f"{_T}test_log_callback_never_waits_on_a_guard", "ortc's logger never waits on "
              "a guard", "sync"),
    ),
    "RunAsyncCallbackFn": (
        doc(C_API, "RunAsync runs the model in a thread owned by the intra-op pool", "send"),
        check("thread.run-async-callback-thread", "the callback runs on another OS thread",
              "send"),
        check("thread.run-async-needs-pool", "with intra_op_num_threads=1 RunAsync is refused",
              "send"),
    ),
    "OrtThreadPoolCallbacksConfig": (
        doc(C_API, "the work callbacks are subject to concurrent invocation from several "
            "threads and must be thread-safe", "sync"),
    ),
    "OrtAllocator (caller-implemented)": (
        check("alloc.register-custom", "ORT calls a caller's allocator registered on the env "
              "from its runs", "sync"),
        untested("calls from several threads at once (the implementation must be thread-safe "
                 "because session arenas and runs may share it)", "sync"),
    ),
    "deleter of CreateTensorWithDataAndDeleterAsOrtValue": (
        check("value.deleter-called", "the deleter is called once, when the value goes",
              "send", versions="1.22.1-1.32.0"),
    ),
    "OrtCustomCreateThreadFn / OrtCustomJoinThreadFn": (
        check("session.custom-thread-functions", "ORT makes its pool threads through the "
              "functions", "send"),
        check("env.global-custom-threads", "global pools too", "send"),
    ),
    "EpSelectionDelegate": (
        check("device.selection-delegate", "the delegate is called during session creation",
              "send", versions="1.23.2-1.32.0"),
        source("onnxruntime/core/session/provider_policy_context.cc",
               "002fcdc290cf2b4149f3fa51ebdc0cc741899998",
               "ProviderPolicyContext::SelectEpDevices", "every session creation calls the "
               "delegate read from the const options, with the options' state and no lock: "
               "threads sharing one SessionOptions are inside it at once", "sync"),
        check("device.selection-delegate-concurrent", "four threads creating sessions at once "
              "from one SessionOptions are all inside its delegate together: it and its state "
              "must be Sync", "sync", versions="1.22.1-1.32.0"),
    ),
    "OrtCustomOp.KernelCompute": (
        doc(DESIGN, "kernels are stateless: Compute may run concurrently for one kernel when "
            "runs overlap", "sync"),
        check("kernel.compute-and-invoke", "KernelComputeV2 runs inside Run", "send",
              versions="1.19.2-1.32.0"),
        check("kernel.overlapping-compute", "two Runs at once are inside one kernel's "
              "KernelComputeV2 together", "sync"),
    ),
}

# -- ownership transfers (ortc/rules_table.py TRANSFERS) ----------------------------------------

def transfer_key(function: str, c_type: str) -> str:
    """The key of a transfer's records: ``Table.Function(OrtType)``."""
    return f"{function}({c_type})"


_EDITOR = "OrtModelEditorApi."

TRANSFER_EVIDENCE: dict[str, tuple[Evidence, ...]] = {
    transfer_key(_EDITOR + "CreateNode", "OrtOpAttr"): (
        check("editor.create-node-takes-attributes", "a successful CreateNode sets the "
              "caller's array entries to NULL, having released the attributes; the node keeps "
              "its own copy", "transfer", versions="1.22.1-1.32.0"),
        check("life.op-attr-release-after-create-node", "releasing the attribute again after "
              "a successful CreateNode is a double free that kills the process", "transfer",
              outcome="known", versions="1.22.1-1.32.0"),
        doc(CXX_NODE, "ORT's C++ wrapper gives its attributes up to the node on success",
            "transfer"),
        doc(EDITOR_SRC, "CreateNode copies, releases and sets to NULL one array entry after "
            "another; an entry it has not reached when it fails is left as it was",
            "on-failure"),
    ),
    transfer_key(_EDITOR + "SetGraphInputs", "OrtValueInfo"): (
        doc(EDITOR_API, "the graph takes ownership of the value infos it is given as inputs: "
            "the caller must not release them", "transfer"),
        doc(EDITOR_SRC, "SetGraphInputs checks the whole array first (duplicates, value infos "
            "already owned by a graph), then takes the entries one by one, setting each to "
            "NULL", "transfer", "on-failure"),
        maintainer(f"{GH}/pull/28800", "the model editor's ownership pull request (merged) "
                   "documents the inputs and outputs as all or nothing: on failure "
                   "the graph keeps its previous ones and none of the value infos is taken",
                   "on-failure"),
    ),
    transfer_key(_EDITOR + "SetGraphOutputs", "OrtValueInfo"): (
        doc(EDITOR_API, "the graph takes ownership of the value infos it is given as outputs: "
            "the caller must not release them", "transfer"),
        doc(EDITOR_SRC, "SetGraphOutputs works as SetGraphInputs: checks first, then each entry "
            "taken and set to NULL", "transfer", "on-failure"),
        maintainer(f"{GH}/pull/28800", "the same pull request documents SetGraphOutputs as all "
                   "or nothing: a failed call takes none of the value infos", "on-failure"),
    ),
    transfer_key(_EDITOR + "AddNodeToGraph", "OrtNode"): (
        doc(EDITOR_API, "the graph owns a node once AddNodeToGraph has it", "transfer"),
        check("send.model-editor", "a node made on one thread and added to a graph on another "
              "ends up in a model whose sessions run", "transfer",
              versions="1.22.1-1.32.0"),
        doc(EDITOR_SRC, "at this commit every error is returned before the node is taken (a "
            "node already in a graph is refused); the C reference says nothing of a failed "
            "call, and earlier sources did not refuse a node added twice", "on-failure"),
        maintainer(f"{GH}/pull/28123", "a merged pull request: AddNodeToGraph now "
                   "refuses a node already added to a graph instead of taking it a second time",
                   "on-failure"),
        check("editor.add-node-twice-refused", "a node given twice is refused, and the refusal "
              "takes nothing: the graph holds the node once, and the model runs and is "
              "released", "on-failure", versions="1.27.0-1.32.0"),
        check("editor.add-node-twice-refused", "a node given twice is taken twice: the process "
              "crashes when the model holding the graph is released (a node is never to be "
              "added twice)", "transfer", outcome="known", versions="1.22.1-1.26.0"),
    ),
    transfer_key(_EDITOR + "AddGraphToModel", "OrtGraph"): (
        doc(EDITOR_API, "the model owns the graph AddGraphToModel gives it: never release it "
            "after that", "transfer"),
        check("send.model-editor", "a graph given to a model on another thread serves that "
              "model's sessions", "transfer", versions="1.22.1-1.32.0"),
        doc(EDITOR_SRC, "at this commit every error (a NULL argument, a model that already has "
            "a graph, a graph already in a model) is returned before the graph is taken; the C "
            "reference says nothing of a failed call", "on-failure"),
        maintainer(f"{GH}/pull/28123", "a merged pull request: AddGraphToModel now "
                   "refuses a model that already has a graph and a graph already in a model",
                   "on-failure"),
        check("editor.add-graph-twice-refused", "a second graph for a model that has one is "
              "refused, and stays the caller's: released by the caller, no crash, and the model "
              "runs its first graph", "on-failure", versions="1.27.0-1.32.0"),
        check("editor.add-graph-twice-refused", "a second graph for a model that has one is "
              "taken in place of the first (the model no longer runs the first graph)",
              "transfer", outcome="known", versions="1.22.1-1.26.0"),
    ),
    transfer_key(_EDITOR + "AddInitializerToGraph", "OrtValue"): (
        doc(EDITOR_API, "ORT takes ownership of the value: the caller must not release it",
            "transfer"),
        doc(EDITOR_SRC, "every check (name, tensor type, CPU memory, a name or value already "
            "added, external data under 128 bytes) runs before the value is taken", "transfer",
            "on-failure"),
        check("life.value-release-after-add-initializer", "a value released by the caller "
              "after a successful AddInitializerToGraph is still read by the graph: the model "
              "computes with a new value made in its memory, or the process crashes when the "
              "model is released", "transfer", outcome="known", versions="1.22.1-1.32.0"),
        maintainer(f"{GH}/pull/28123", "a merged pull request made the graph copy the "
                   "value instead, the caller keeping and releasing it; the later ownership "
                   f"pull request ({GH}/pull/28800) made the graph take it again. No release "
                   "checked here copies it (the check above)", "transfer"),
    ),
}


def for_transfer(function: str, c_type: str) -> tuple[Evidence, ...]:
    return TRANSFER_EVIDENCE.get(transfer_key(function, c_type), ())


# -- reports that seem to contradict a verdict, and why it stands --------------------------------

COUNTER_REPORTS: list[dict[str, str]] = [
    {"url": f"{GH}/issues/13571",
     "reports": "random wrong results from concurrent Run on one CPU session (ORT 1.13.1); "
                "no reproducer model was attached",
     "verdict": "OrtSession Sync / Run shared on CPU",
     "why_it_stands": "a maintainer answered with the supported pattern (one env, one session "
                      "shared by threads); thread.concurrent-run and thread.shared-input-value "
                      "pass on every version of the matrix; each thread must use its own "
                      "output values and its own IoBinding (the most common cause of wrong "
                      "results, see thread.shared-binding)",
     "would_change": "a model that gives wrong results from concurrent CPU runs on a "
                     "supported version"},
    {"url": f"{GH}/issues/15087",
     "reports": "a crash in the CPU memory arena (BFCArena); disabling the arena and memory "
                "patterns and using one thread were reported to avoid it",
     "verdict": "OrtAllocator Sync for session CPU arenas; Run shared on CPU",
     "why_it_stands": "thread.session-allocator (8 threads of Alloc/Free on one arena) and "
                      "thread.concurrent-run pass on every version of the matrix; the report "
                      "does not show the crash is a thread race",
     "would_change": "a reproducer of the crash under concurrent runs or allocations"},
]


def for_type(c_type: str) -> tuple[Evidence, ...]:
    return TYPE_EVIDENCE.get(c_type, ())


def find(c_type: str, *refs: str) -> tuple[Evidence, ...]:
    """The records of ``c_type`` citing each of ``refs`` (a URL, ``check:<id>`` or a test
    id), in that order: for reusing a type's evidence elsewhere without copying it."""
    out = []
    for ref in refs:
        hits = [e for e in TYPE_EVIDENCE[c_type] if e.ref == ref]
        if not hits:
            raise KeyError(f"{c_type} has no evidence citing {ref!r}")
        out.append(hits[0])
    return tuple(out)
