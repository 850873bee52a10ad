"""Every declared OrtApi slot has a thread verdict with evidence (ortc/slot_rules.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

import ortc
from conftest import ROOT
from ortc import rules_render, slot_rules
from ortc._slots import DECLARED_API_VERSION, SINCE, SLOTS


def test_every_declared_slot_has_a_verdict() -> None:
    cov = slot_rules.coverage()
    assert cov["missing"] == []
    assert cov["total"] == cov["classified"] == len(SLOTS) >= 429
    assert cov["upto"] == DECLARED_API_VERSION >= 32
    for r in slot_rules.table():
        assert r.verdict() and r.evidence, r.slot
        assert r.source in ("declared", "signature")
        # a slot that touches no handle is "not thread-relevant" only by a declared judgement
        assert r.relevant or r.slot in slot_rules.DECLARED, r.slot


def test_a_slot_without_a_verdict_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new slot that takes no handle gets no derived verdict: it needs a declared one."""
    monkeypatch.setattr(slot_rules, "SLOTS", SLOTS + (("OrtcProbeSlot", 33),))
    monkeypatch.setitem(slot_rules.SINCE, "OrtcProbeSlot", 33)
    monkeypatch.setitem(slot_rules.SIGNATURES, "OrtcProbeSlot", ("int", "size_t*"))
    assert slot_rules.coverage()["missing"] == ["OrtcProbeSlot"]
    # one that takes a handle is derived from its signature
    monkeypatch.setitem(slot_rules.SIGNATURES, "OrtcProbeSlot", ("const OrtSession*", "int*"))
    assert slot_rules.coverage()["missing"] == []
    assert slot_rules.rule("OrtcProbeSlot").reads == ("OrtSession",)


def test_declared_verdicts_name_declared_slots() -> None:
    assert slot_rules.DECLARED <= set(SINCE)


@pytest.mark.parametrize("slot, reads, writes", [
    ("Run", {"OrtSession", "OrtRunOptions", "OrtValue"}, {"OrtValue"}),
    ("RunWithBinding", {"OrtSession", "OrtRunOptions"}, {"OrtIoBinding", "OrtValue"}),
    ("RunOptionsSetTerminate", {"OrtRunOptions"}, set()),
    ("RunOptionsSetRunTag", set(), {"OrtRunOptions"}),
    ("SessionGetInputTypeInfo", {"OrtSession"}, set()),
    ("CreateTensorWithDataAsOrtValue", {"OrtMemoryInfo"}, set()),
    ("FillStringTensor", set(), {"OrtValue"}),
    ("FillSparseTensorCoo", {"OrtMemoryInfo"}, {"OrtValue"}),
    ("SessionEndProfiling", set(), {"OrtSession"}),
    ("RegisterAllocator", set(), {"OrtEnv"}),
    ("GetEpDevices", {"OrtEnv"}, set()),
    ("CopyTensors", {"OrtEnv"}, set()),
    ("SessionOptionsSetLoadCancellationFlag", {"OrtSessionOptions"}, set()),
    ("BindOutput", {"OrtValue"}, {"OrtIoBinding"}),
])
def test_known_verdicts(slot: str, reads: set[str], writes: set[str]) -> None:
    r = slot_rules.rule(slot)
    assert reads <= set(r.reads) and writes <= set(r.writes), (slot, r.verdict())
    if slot != "Run":  # Run reads its inputs and writes preallocated outputs: both OrtValues
        assert not (set(r.reads) & writes), slot


def test_scopes_lifetimes_and_borrowed_results() -> None:
    assert slot_rules.rule("SetCurrentGpuDeviceId").scope == "thread-local"
    assert slot_rules.rule("GetAvailableProviders").scope == "process"
    assert slot_rules.rule("CreateEnv").scope == "process"
    assert slot_rules.rule("KernelContext_GetInput").scope == "callback"
    assert "borrowed" in slot_rules.rule("KernelContext_GetInput").outlives
    assert "never release" in slot_rules.rule("CastTypeInfoToTensorInfo").outlives
    assert "never release" in slot_rules.rule("AllocatorGetInfo").outlives
    assert "never release" in slot_rules.rule("GetEpDevices").outlives
    assert "session outlives" in slot_rules.rule("CreateAllocator").outlives
    assert "buffer outlives" in slot_rules.rule("CreateTensorWithDataAsOrtValue").outlives
    assert slot_rules.rule("ReleaseSession").releases == ("OrtSession",)
    assert not slot_rules.rule("GetModelEditorApi").relevant


def test_api_31_and_32_slots_cite_their_checks() -> None:
    for slot, check in (("SessionOptionsSetEpContextDataReadFunc", "api31.ep-context-read-func"),
                        ("GetModelPackageApi", "api31.model-package-api"),
                        ("EpDevice_GetMemoryCapacity", "api32.ep-device-memory-capacity")):
        r = slot_rules.rule(slot)
        assert r.since in (31, 32) and f"check:{check}" in {e.ref for e in r.evidence}


def test_api_31_table_entries_cite_the_checks_that_call_them() -> None:
    """The EP table's EP-context entries and the compile table's SetEpContextDataWriteFunc cite
    ver.ep-context-entries on the libraries that have them (1.31.1, 1.32.0), the EP ones also
    ver.sub-table-lengths for the version they came with; the checks only add to the
    implementation each rests on, and back no "shared" (they call on one thread)."""
    v = {r.slot: r for rows in slot_rules.SUB_TABLES.values() for r in rows}
    for slot in ("OrtEpApi.SessionOptionsGetEpContextConfig", "OrtEpApi.ReleaseEpContextConfig",
                 "OrtEpApi.EpContextConfigGetEpContextDataReadFunc",
                 "OrtEpApi.EpContextConfigGetEpContextDataWriteFunc",
                 "OrtCompileApi.ModelCompilationOptions_SetEpContextDataWriteFunc"):
        r = v[slot]
        checks = {e.ref: e for e in r.evidence if e.kind == "ort-behaviour"}
        entries = checks["check:ver.ep-context-entries"]
        assert entries.versions == "1.31.1-1.32.0" and "shared" not in entries.backs, slot
        assert ("check:ver.sub-table-lengths" in checks) == slot.startswith("OrtEpApi."), slot
        assert r.basis() == "implementation", slot
        assert "not yet in the committed matrix" not in str(r.to_json()), slot
    config = v["OrtEpApi.SessionOptionsGetEpContextConfig"].evidence
    assert any(e.ref == "check:ver.ep-context-entries" and "lifetime" in e.backs
               for e in config)


def _slot_kind(slot: str, c_type: str) -> str | None:
    """How the slot table uses ``c_type`` in ``slot``: exclusive (written or released),
    shared (only read, or created), None (not at all)."""
    r = slot_rules.rule(slot)
    if c_type in r.writes + r.releases:
        return "exclusive"
    if c_type in r.reads + r.creates:
        return "shared"
    return None


def test_slot_table_agrees_with_the_type_records() -> None:
    """Every C function a type section lists is shared there exactly when the slot table only
    reads that type, and exclusive exactly when it writes or releases it, Sync or not (the
    type sections once said RunOptionsSetTerminate, CreateIoBinding and SyncStream_GetHandle
    were shared while the slot table wrote their handle, and the reverse for the IoBinding's
    output getters)."""
    bad = []
    checked = 0
    for rec in ortc.rules():
        for name, kind in rec["methods"].items():
            if not rules_render._is_c(name):
                continue
            checked += 1
            got = _slot_kind(name, rec["type"])
            if got != kind:
                bad.append(f"{rec['type']}.{name}: {kind} in the type section, slot table: "
                           f"{slot_rules.rule(name).verdict()}")
    assert bad == []
    assert checked > 150


def test_no_slot_both_reads_and_writes_its_receiver() -> None:
    """A slot's own handle is read (shared) or written (exclusive), never both: a declared
    verdict overrides the signature for the types it names."""
    bad = [f"{r.slot}: {r.verdict()}" for r in slot_rules.table()
           if (t := slot_rules.receiver(r.slot)) and t in r.reads and t in r.writes]
    assert bad == []


@pytest.mark.parametrize("slot, c_type, kind", [
    ("RunOptionsSetTerminate", "OrtRunOptions", "shared"),
    ("RunOptionsUnsetTerminate", "OrtRunOptions", "shared"),
    ("CreateIoBinding", "OrtSession", "shared"),
    ("SyncStream_GetHandle", "OrtSyncStream", "shared"),
    ("GetBoundOutputNames", "OrtIoBinding", "exclusive"),
    ("GetBoundOutputValues", "OrtIoBinding", "exclusive"),
    ("SessionOptionsSetLoadCancellationFlag", "OrtSessionOptions", "shared"),
    ("GetTensorMutableData", "OrtValue", "exclusive"),
])
def test_reconciled_verdicts(slot: str, c_type: str, kind: str) -> None:
    """The verdicts whose two tables disagreed, each as its evidence says (see the slot's
    evidence records): terminate and the load-cancellation flag are meant to be set from
    another thread, bindings are created concurrently on one session, the stream getter only
    reads its handle; the output getters read what every run with the binding writes."""
    assert _slot_kind(slot, c_type) == kind, slot_rules.rule(slot).verdict()
    methods = {m: k for r in ortc.rules() for m, k in r["methods"].items()
               if r["type"] == c_type}
    if slot in methods:
        assert methods[slot] == kind


def test_shared_verdicts_rest_on_checks_that_use_more_than_one_thread() -> None:
    """A check that calls a slot on one thread shows what it does, not that calls may overlap:
    a record backing "shared" with a conformance check cites one that uses the objects on
    threads other than their maker's (``crosses``). GetEpDevices once cited
    device.cpu-ep-device and CreateStatus status.roundtrip, both on one thread."""
    from ortc import evidence as ev
    from ortc.conformance.checks import all_checks

    crosses = {c.id: c.crosses for c in all_checks()}
    records = [(f"slot {r.slot}", e) for r in slot_rules.table() for e in r.evidence]
    records += [(f"type {t}", e) for t, recs in ev.TYPE_EVIDENCE.items() for e in recs]
    bad = sorted({f"{where}: {e.ref}" for where, e in records
                  if e.kind == "ort-behaviour" and "shared" in e.backs
                  and e.ref.startswith("check:") and not crosses.get(e.ref[len("check:"):])})
    assert bad == []


def test_the_rules_carry_the_slot_table() -> None:
    proc = subprocess.run([sys.executable, "-m", "ortc", "rules", "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [s["slot"] for s in data["slots"]] == [n for n, _ in SLOTS]
    assert data["slot_coverage"]["missing"] == []
    md = rules_render.render_markdown()
    assert f"with a verdict: **{len(SLOTS)}**" in md
    for name, _ in SLOTS:
        assert f"| `{name}` |" in md, name


# -- a type's Sync verdict against its functions' verdicts -----------------------------------------

def sync_contradictions(rows: dict[str, dict[str, object]]) -> list[str]:
    """Slots whose verdict contradicts the Sync verdict of the type they act on: a shared read
    of a Sync type confined to one thread (the callback scope), or one that hands out a borrow
    of a type that is not Sync (threads sharing the owner would share the borrow). A kernel-info
    read once did the latter: KernelInfo_GetLogger lent a non-Sync logger from a Sync info."""
    bad = []
    for r in slot_rules.table():
        t = slot_rules.receiver(r.slot)
        if t is None or t not in rows or not rows[t]["sync"]:
            continue
        if t not in r.reads or t in r.writes:
            continue
        if r.scope == "callback":
            bad.append(f"{r.slot}: {t} is Sync but the slot is confined to one thread")
        for typ, use in slot_rules.params(r.slot):
            if use == "borrowed" and typ in rows and not rows[typ]["sync"]:
                bad.append(f"{r.slot}: {t} is Sync but lends a {typ}, which is not")
    return bad


def test_sync_types_allow_what_their_functions_say() -> None:
    rows = {r["type"]: r for r in ortc.rules()}
    assert sync_contradictions(rows) == []


def test_a_sync_contradiction_is_reported() -> None:
    rows = {r["type"]: dict(r) for r in ortc.rules()}
    rows["OrtLogger"]["sync"] = False
    assert sync_contradictions(rows) == [
        "KernelInfo_GetLogger: OrtKernelInfo is Sync but lends a OrtLogger, which is not"]
    rows = {r["type"]: dict(r) for r in ortc.rules()}
    rows["OrtKernelContext"]["sync"] = True
    assert "KernelContext_GetInputCount: OrtKernelContext is Sync but the slot is confined to " \
           "one thread" in sync_contradictions(rows)


# -- the verdicts read from ORT's implementation -------------------------------------------------

def _impl(slot: str) -> list[str]:
    return [e.function for e in slot_rules.rule(slot).evidence if e.kind == "ort-source"]


def test_lazy_initializer_load_writes_the_graph() -> None:
    """ValueInfo_GetInitializerValue loads an external initializer into the graph's value on
    first use, without a lock: exclusive on the value info and its graph, in the slot table and
    in both rows."""
    r = slot_rules.rule("ValueInfo_GetInitializerValue")
    assert set(r.writes) == {"OrtValueInfo", "OrtGraph"} and not r.reads
    assert any("EpGraph::GetInitializerValue" in f for f in _impl(r.slot))
    rows = {x["type"]: x for x in ortc.rules()}
    assert rows["OrtValueInfo"]["methods"]["ValueInfo_GetInitializerValue"] == "exclusive"
    assert rows["OrtGraph"]["used_by"]["ValueInfo_GetInitializerValue"] == "exclusive"


@pytest.mark.parametrize("slot, words", [
    ("CreateLoraAdapter", ("allocator outlives the adapter", "without owning")),
    ("CreateLoraAdapterFromArray", ("allocator outlives the adapter", "copied")),
    ("RunOptionsSetSyncStream", ("stream outlives", "not owned")),
    ("KernelContext_GetOutput", ("belongs to the context", "never release")),
    ("UnregisterExecutionProviderLibrary", ("destroys the library's EP devices",)),
    ("SessionOptionsSetEpSelectionPolicyDelegate", ("state stays valid",)),
])
def test_kept_pointers_and_ownership_state_their_lifetimes(slot: str,
                                                          words: tuple[str, ...]) -> None:
    r = slot_rules.rule(slot)
    for w in words:
        assert w in r.outlives, (slot, r.outlives)
    assert _impl(slot) and r.basis() == "implementation", slot


def test_kernel_context_output_is_not_the_callers() -> None:
    r = slot_rules.rule("KernelContext_GetOutput")
    assert r.creates == () and r.writes == ("OrtKernelContext",) and r.scope == "callback"


def test_options_with_a_stream_or_a_delegate_are_not_shared_blindly() -> None:
    """RunOptions that carry a stream are not Sync; the EP-selection delegate runs on every
    creating thread at once, so its Rust bound is Sync."""
    assert "no longer Sync" in slot_rules.rule("RunOptionsSetSyncStream").note
    assert "Sync" in slot_rules.rule("SessionOptionsSetEpSelectionPolicyDelegate").note
    from ortc.rules_table import CALLBACKS, TYPE_NOTES

    delegate, = [c for c in CALLBACKS if c["type"] == "EpSelectionDelegate"]
    assert "Send + Sync" in delegate["rust"] and "at once" in delegate["threads"]
    assert any("RunOptionsSetSyncStream" in n for n in TYPE_NOTES["OrtRunOptions"])


# -- verified and unverified verdicts ----------------------------------------------------------

def test_a_verdict_on_generic_records_alone_is_unverified() -> None:
    from ortc import evidence as ev

    bare = slot_rules.SlotRule("Probe", 1, reads=("OrtSession",),
                               evidence=(slot_rules.SIGNATURE,))
    assert bare.basis() == "unverified"
    pol = ev.policy("a choice", "a check", "shared")
    assert slot_rules.SlotRule("Probe", 1, evidence=(slot_rules.SIGNATURE, pol)).basis() \
        == "unverified"
    src = ev.source("onnxruntime/core/session/custom_ops.cc", "a" * 40, "OrtApis::Probe", "x",
                    "shared")
    assert slot_rules.SlotRule("Probe", 1, evidence=(pol, src)).basis() == "implementation"
    chk = ev.check("thread.concurrent-run", "x", "shared")
    assert slot_rules.SlotRule("Probe", 1, evidence=(slot_rules.SCOPED, chk)).basis() == "check"
    assert slot_rules.SlotRule("Probe", 1, evidence=(slot_rules.SCOPED,)).basis() == "unverified"
    # a record that backs no verdict is context (a one-thread check shows no thread rule)
    context = ev.check("thread.concurrent-run", "x")
    assert slot_rules.SlotRule("Probe", 1, evidence=(slot_rules.SIGNATURE, context)).basis() \
        == "unverified"
    assert slot_rules.SIGNATURE.kind == "signature"


def test_thread_rules_open_with_the_verified_count() -> None:
    cov = slot_rules.coverage()
    assert sum(cov["by_basis"].values()) == cov["total"]
    assert cov["verified"] + cov["unverified"] == cov["total"]
    assert cov["by_basis"]["implementation"] >= 8
    md = rules_render.render_markdown()
    head = md.split("## Answers first")[0]
    assert f"**Verified: {cov['verified']} of {cov['total']} OrtApi slots**" in head
    assert f"**Unverified: {cov['unverified']}**" in head
    for table in ("OrtCompileApi", "OrtEpApi", "OrtInteropApi", "OrtModelPackageApi"):
        assert f"`{table}`" in head, table
    rows = [line for line in md.splitlines() if line.startswith("| `")
            and line.split("`")[1] in slot_rules.SINCE]
    marked = {line.split("`")[1] for line in rows if "| **unverified** |" in line}
    assert marked == {r.slot for r in slot_rules.table() if r.basis() == "unverified"}


def test_the_unverified_slots_are_those_a_cpu_build_cannot_show() -> None:
    """Three options setters rest on checks that see them act on a CPU build; what is left
    needs an EP the CPU build lacks (it only refuses) or a build option releases lack."""
    unverified = {r.slot for r in slot_rules.table() if r.basis() == "unverified"}
    assert unverified == {"SessionOptionsAppendExecutionProvider_OpenVINO_V2",
                          "SessionOptionsAppendExecutionProvider_VitisAI",
                          "SessionReleaseCapturedGraph", "SetPerSessionThreadPoolCallbacks"}
    cited = {"SetDeterministicCompute": "check:session.deterministic-compute",
             "SessionOptionsSetEpSelectionPolicy": "check:shared.selection-policy-create",
             "SessionOptionsSetWeightlessSourceModelBuffer":
                 "check:session.weightless-source-buffer"}
    for slot, ref in cited.items():
        r = slot_rules.rule(slot)
        assert r.basis() == "check" and r.writes == ("OrtSessionOptions",), slot
        assert any(e.ref == ref and "exclusive" in e.backs for e in r.evidence), slot
    buffer = slot_rules.rule("SessionOptionsSetWeightlessSourceModelBuffer")
    assert "kept by pointer" in buffer.outlives and "every session" in buffer.outlives
    assert any(e.kind == "ort-doc" and "lifetime" in e.backs for e in buffer.evidence)


# -- the compile and model-editor tables ---------------------------------------------------------

#: the functions of each table, in ORT's table order, with the API version each appeared in
COMPILE_FUNCTIONS = {
    "ReleaseModelCompilationOptions": 22, "CreateModelCompilationOptionsFromSessionOptions": 22,
    "ModelCompilationOptions_SetInputModelPath": 22,
    "ModelCompilationOptions_SetInputModelFromBuffer": 22,
    "ModelCompilationOptions_SetOutputModelPath": 22,
    "ModelCompilationOptions_SetOutputModelExternalInitializersFile": 22,
    "ModelCompilationOptions_SetOutputModelBuffer": 22,
    "ModelCompilationOptions_SetEpContextEmbedMode": 22, "CompileModel": 22,
    "ModelCompilationOptions_SetFlags": 23,
    "ModelCompilationOptions_SetEpContextBinaryInformation": 23,
    "ModelCompilationOptions_SetGraphOptimizationLevel": 23,
    "ModelCompilationOptions_SetOutputModelWriteFunc": 23,
    "ModelCompilationOptions_SetOutputModelGetInitializerLocationFunc": 23,
    "ModelCompilationOptions_SetInputModel": 25,
    "ModelCompilationOptions_SetWeightlessEnabled": 29,
    "ModelCompilationOptions_SetEpContextDataWriteFunc": 31,
    "ModelCompilationOptions_SetOutputModelExternalInitializersBuffer": 31,
    "ModelCompilationOptions_SetOutputModelExternalInitializersAlignment": 31,
    "ModelCompilationOptions_SetWeightlessMode": 32,
}
MODEL_EDITOR_FUNCTIONS = (
    "CreateTensorTypeInfo", "CreateSparseTensorTypeInfo", "CreateMapTypeInfo",
    "CreateSequenceTypeInfo", "CreateOptionalTypeInfo", "CreateValueInfo", "CreateNode",
    "CreateGraph", "SetGraphInputs", "SetGraphOutputs", "AddInitializerToGraph",
    "AddNodeToGraph", "CreateModel", "AddGraphToModel", "CreateSessionFromModel",
    "CreateModelEditorSession", "CreateModelEditorSessionFromArray", "SessionGetOpsetForDomain",
    "ApplyModelToModelEditorSession", "FinalizeModelEditorSession")


def test_compile_and_model_editor_tables_are_classified_with_their_versions() -> None:
    tables = slot_rules.SUB_TABLES
    # in ORT's order (a dict keeps it), each with the first released library that has it
    assert [(r.slot, r.since) for r in tables["OrtCompileApi"]] == [
        (f"OrtCompileApi.{n}", v) for n, v in COMPILE_FUNCTIONS.items()]
    assert {r.slot: r.since for r in tables["OrtModelEditorApi"]} == {
        f"OrtModelEditorApi.{n}": 22 for n in MODEL_EDITOR_FUNCTIONS}
    for rows in tables.values():
        for r in rows:
            assert r.evidence and r.relevant and r.verdict(), r.slot
            assert not (set(r.reads) & set(r.writes)), r.slot
    cov = slot_rules.sub_coverage()
    # SetWeightlessEnabled: no stored source implements it, ORT's weightless-mode design note
    # says what it sets; the API 31/32 entries rest on design notes and checks
    assert cov["OrtCompileApi"]["unverified"] == 0
    assert cov["OrtCompileApi"]["documented"] == 1 and cov["OrtCompileApi"]["check"] == 3
    assert cov["OrtModelEditorApi"]["verified"] >= 15


def test_sub_table_verdicts_agree_with_the_type_rows() -> None:
    """A row's other_tables entry is shared exactly when the sub-table function only reads (or
    creates) the row's type, exclusive when it writes or releases (takes) it."""
    bad = []
    checked = 0
    verdicts = {r.slot: r for rows in slot_rules.SUB_TABLES.values() for r in rows}
    for rec in ortc.rules():
        for name, kind in rec.get("other_tables", {}).items():
            r = verdicts.get(name)
            assert r is not None, f"{rec['type']} lists {name}, which no sub-table classifies"
            checked += 1
            t = rec["type"]
            got = ("exclusive" if t in r.writes + r.releases else
                   "shared" if t in r.reads + r.creates else None)
            if got != kind:
                bad.append(f"{t}.{name}: {kind} in the row, {r.verdict()} in the table")
    assert bad == [] and checked > 20


def sub_table_uses_missing(
        rows: list[dict[str, Any]],
        objects: dict[str, dict[str, tuple[bool, bool, str]]] | None = None) -> list[str]:
    """Sub-table functions (of every table in SUB_TABLES) whose use of a type is not where the
    rules put it. A type with a row lists each function that uses it there (other_tables, or
    used_by for a wrapped type's argument): exclusive when the function writes or releases it,
    shared when it reads it, and shared when it creates an unwrapped type (a wrapped type's
    constructors are not uses of an object). A type without a row is an object only that one
    table hands out: it is declared with its Send and Sync in that table's SUB_TABLE_OBJECTS
    (``objects``), where the table's own section lists every function that uses it, and no
    OrtApi slot and no other table takes it (else it would need a row); a type declared there
    has no row."""
    objects = slot_rules.SUB_TABLE_OBJECTS if objects is None else objects
    by_type = {r["type"]: r for r in rows}
    bad = []
    for table, objs in objects.items():
        for t in objs:
            others = [o for o, d in objects.items() if t in d and o != table]
            if others:
                bad.append(f"{t}: declared in SUB_TABLE_OBJECTS[{table}] and "
                           f"[{', '.join(others)}]: an object two tables take needs a row")
            if t in by_type:
                bad.append(f"{t}: declared in SUB_TABLE_OBJECTS[{table}] and has a row")
            elif t in slot_rules.HANDLE_TYPES:
                bad.append(f"{t}: declared in SUB_TABLE_OBJECTS[{table}], but an OrtApi slot "
                           "takes it: it needs a row")
    for table, sub_rows in slot_rules.SUB_TABLES.items():
        for r in sub_rows:
            for kind, types in (("exclusive", r.writes + r.releases), ("shared", r.reads),
                                ("shared", r.creates)):
                for t in types:
                    row = by_type.get(t)
                    if row is None:
                        if t not in objects.get(table, {}):
                            elsewhere = [o for o, d in objects.items() if t in d]
                            bad.append(f"{r.slot}: {t} has no row and is not declared in "
                                       f"SUB_TABLE_OBJECTS[{table}]"
                                       + (f" (declared in {', '.join(elsewhere)})"
                                          if elsewhere else ""))
                        continue
                    if kind == "shared" and t in r.creates and row["wrapped"]:
                        continue
                    got = {**row["methods"], **row["other_tables"], **row["used_by"]}.get(r.slot)
                    if got != kind:
                        bad.append(f"{t} row: {r.slot} is {got}, the table says {kind}")
    return bad


def test_every_type_a_sub_table_function_uses_lists_it() -> None:
    """The functions of all five sub-tables are in the rows of every OrtApi type they use, with
    the table's kind (the compile functions added in API 23-25 and the EP table's reads of
    pairs, nodes, memory infos and values included); the objects only one table hands out are
    declared in its SUB_TABLE_OBJECTS instead."""
    rows = ortc.rules()
    assert sub_table_uses_missing(rows) == []
    by_type = {r["type"]: r for r in rows}
    mco = by_type["OrtModelCompilationOptions"]
    for n in ("SetInputModel", "SetOutputModelWriteFunc",
              "SetOutputModelGetInitializerLocationFunc", "SetEpContextDataWriteFunc"):
        assert mco["other_tables"][f"OrtCompileApi.ModelCompilationOptions_{n}"] == "exclusive"
    model = by_type["OrtModel"]
    assert model["other_tables"]["OrtCompileApi.ModelCompilationOptions_SetInputModel"] == "shared"
    assert by_type["OrtKeyValuePairs"]["other_tables"]["OrtEpApi.GetEnvConfigEntries"] == "shared"
    assert by_type["OrtNode"]["other_tables"][
        "OrtEpApi.EpGraphSupportInfo_AddSingleNode"] == "shared"
    assert by_type["OrtEpDevice"]["other_tables"][
        "OrtInteropApi.InitGraphicsInteropForEpDevice"] == "shared"
    assert by_type["OrtMemoryInfo"]["used_by"]["OrtEpApi.EpDevice_AddAllocatorInfo"] == "shared"
    for t in ("OrtEnv", "OrtSessionOptions"):
        assert by_type[t]["used_by"]["OrtModelPackageApi.CreateSession"] == "shared", t
    # every table's functions are checked, and each of the three newer tables has objects of
    # its own
    assert set(slot_rules.SUB_TABLE_OBJECTS) == {"OrtEpApi", "OrtInteropApi",
                                                 "OrtModelPackageApi"}


def _drop(rows: list[dict[str, Any]], c_type: str, key: str, suffix: str) -> list[dict[str, Any]]:
    """``rows`` with the entries of ``c_type``'s ``key`` that end with ``suffix`` left out."""
    return [{**r, key: {k: v for k, v in r[key].items() if not k.endswith(suffix)}}
            if r["type"] == c_type else r for r in rows]


def test_a_sub_table_function_missing_from_a_row_is_reported() -> None:
    rows = ortc.rules()
    assert sub_table_uses_missing(
        _drop(rows, "OrtModelCompilationOptions", "other_tables", "_SetInputModel")) == [
        "OrtModelCompilationOptions row: OrtCompileApi.ModelCompilationOptions_SetInputModel "
        "is None, the table says exclusive"]
    # the newer tables' uses too: an unwrapped row's other_tables, a wrapped one's used_by
    assert sub_table_uses_missing(
        _drop(rows, "OrtKeyValuePairs", "other_tables", ".CreateHardwareDevice")) == [
        "OrtKeyValuePairs row: OrtEpApi.CreateHardwareDevice is None, the table says shared"]
    assert sub_table_uses_missing(_drop(rows, "OrtEnv", "used_by", "Api.CreateSession")) == [
        "OrtEnv row: OrtModelPackageApi.CreateSession is None, the table says shared"]


def test_a_row_less_object_must_be_declared_by_its_table() -> None:
    """An object without a row that its table does not declare is reported at every function
    that uses it, also when another table declares it; one declared by two tables, one declared
    and given a row, and one declared although an OrtApi slot takes it are reported."""
    rows = ortc.rules()
    objs = {t: dict(d) for t, d in slot_rules.SUB_TABLE_OBJECTS.items()}
    sem = objs["OrtInteropApi"].pop("OrtExternalSemaphoreHandle")
    assert sub_table_uses_missing(rows, objs) == [
        f"OrtInteropApi.{n}: OrtExternalSemaphoreHandle has no row and is not declared in "
        "SUB_TABLE_OBJECTS[OrtInteropApi]"
        for n in ("ImportSemaphore", "ReleaseExternalSemaphoreHandle", "WaitSemaphore",
                  "SignalSemaphore")]
    objs["OrtModelPackageApi"]["OrtExternalSemaphoreHandle"] = sem
    assert sub_table_uses_missing(rows, objs)[0].endswith(
        "not declared in SUB_TABLE_OBJECTS[OrtInteropApi] (declared in OrtModelPackageApi)")
    objs["OrtInteropApi"]["OrtExternalSemaphoreHandle"] = sem
    assert sub_table_uses_missing(rows, objs) == [
        f"OrtExternalSemaphoreHandle: declared in SUB_TABLE_OBJECTS[{a}] and [{b}]: an object "
        "two tables take needs a row"
        for a, b in (("OrtInteropApi", "OrtModelPackageApi"),
                     ("OrtModelPackageApi", "OrtInteropApi"))]
    objs = {t: dict(d) for t, d in slot_rules.SUB_TABLE_OBJECTS.items()}
    objs["OrtEpApi"]["OrtNode"] = (True, True, "a row's type declared again")
    assert sub_table_uses_missing(rows, objs) == [
        "OrtNode: declared in SUB_TABLE_OBJECTS[OrtEpApi] and has a row"]
    objs = {t: dict(d) for t, d in slot_rules.SUB_TABLE_OBJECTS.items()}
    objs["OrtEpApi"]["OrtStatus"] = (True, True, "an OrtApi type whose row went missing")
    assert sub_table_uses_missing([r for r in rows if r["type"] != "OrtStatus"], objs) == [
        "OrtStatus: declared in SUB_TABLE_OBJECTS[OrtEpApi], but an OrtApi slot takes it: it "
        "needs a row"]


def test_the_model_row_and_create_session_from_model_agree() -> None:
    """Both say a session made from a model does not need the model, on the same check."""
    rule = next(r for r in slot_rules.SUB_TABLES["OrtModelEditorApi"]
                if r.slot.endswith(".CreateSessionFromModel"))
    assert "the model need not" in rule.outlives and "keep the model" not in rule.outlives
    assert "check:editor.session-outlives-model" in {e.ref for e in rule.evidence}
    model = next(r for r in ortc.rules() if r["type"] == "OrtModel")
    assert "do not need it afterwards" in model["evidence"]
    assert "check:editor.session-outlives-model" in {e["ref"] for e in model["evidence_records"]}


def test_sub_table_lifetimes_from_the_implementation() -> None:
    v = {r.slot.split(".")[1]: r for rows in slot_rules.SUB_TABLES.values() for r in rows}
    assert "kept by pointer" in v["ModelCompilationOptions_SetInputModelFromBuffer"].outlives
    assert "allocator" in v["ModelCompilationOptions_SetOutputModelBuffer"].outlives
    assert "not Sync" in v["CompileModel"].note
    assert v["CreateNode"].releases == ("OrtOpAttr",)
    assert v["AddNodeToGraph"].releases == ("OrtNode",)
    # the type-info constructors rest on a check that changes and releases their inputs
    for n in ("CreateTensorTypeInfo", "CreateSparseTensorTypeInfo", "CreateMapTypeInfo",
              "CreateSequenceTypeInfo", "CreateOptionalTypeInfo"):
        assert v[n].basis() == "check" and "copied" in v[n].outlives
        assert "check:editor.type-info-constructors" in {e.ref for e in v[n].evidence}
    assert v["CompileModel"].basis() == "implementation"


def test_the_rules_carry_the_sub_tables() -> None:
    data = json.loads(rules_render.render_json())
    assert set(data["sub_tables"]) == {"OrtCompileApi", "OrtModelEditorApi", "OrtEpApi",
                                       "OrtInteropApi", "OrtModelPackageApi"}
    # left without a row: the model editor's eight API 32 entries, which no stored source
    # names (the compile table's API 31 and 32 entries have rows)
    assert set(data["unclassified_tables"]) == {"OrtModelEditorApi"}
    assert "8 entries added in API 32" in data["unclassified_tables"]["OrtModelEditorApi"]
    md = rules_render.render_markdown()
    head = md.split("## Answers first")[0]
    assert "`OrtEpApi` (78 functions: 78 verified, 0 unverified)" in head
    assert "`OrtCompileApi` (20 functions: 20 verified, 0 unverified)" in head
    assert "without a row: `OrtModelEditorApi` (8 entries added in API 32" in head
    for t, rows in slot_rules.SUB_TABLES.items():
        assert f"### {t}" in md
        for r in rows:
            assert f"| `{r.slot}` | {r.since} |" in md, r.slot


# -- the plugin-EP, interop and model-package tables ----------------------------------------------

#: OrtEpApi in ORT's table order: (first function of a run, API version) -- each function
#: appeared in the version of the last run that starts at or before it
EP_FUNCTIONS = (
    "CreateEpDevice", "ReleaseEpDevice",
    "EpGraphSupportInfo_AddNodesToFuse", "EpGraphSupportInfo_AddSingleNode",
    "NodeComputeContext_NodeName", "EpDevice_AddAllocatorInfo", "MemoryInfo_GetMemoryDevice",
    "Value_GetMemoryDevice", "MemoryDevice_AreEqual", "MemoryDevice_GetDeviceType",
    "MemoryDevice_GetMemoryType", "MemoryDevice_GetVendorId", "MemoryDevice_GetDeviceId",
    "SyncStream_GetImpl", "SyncStream_GetSyncId", "GetSyncIdForLastWaitOnSyncStream",
    "CreateHardwareDevice", "ReleaseHardwareDevice", "CreateKernelRegistry",
    "ReleaseKernelRegistry", "KernelRegistry_AddKernel", "CreateKernelDefBuilder",
    "ReleaseKernelDefBuilder", "KernelDefBuilder_SetOperatorType", "KernelDefBuilder_SetDomain",
    "KernelDefBuilder_SetSinceVersion", "KernelDefBuilder_SetExecutionProvider",
    "KernelDefBuilder_SetInputMemType", "KernelDefBuilder_SetOutputMemType",
    "KernelDefBuilder_AddTypeConstraint", "KernelDefBuilder_AddInputOutputAliases",
    "KernelDefBuilder_AddInputOutputMutableAliases", "KernelDefBuilder_Build", "ReleaseKernelDef",
    "KernelDef_GetOperatorType", "KernelDef_GetDomain", "KernelDef_GetSinceVersion",
    "KernelDef_GetExecutionProvider", "KernelDef_GetInputMemType", "KernelDef_GetOutputMemType",
    "GetTensorDataType", "EpGraphSupportInfo_LookUpKernel",
    "SharedPrePackedWeightCache_StoreWeightData", "KernelInfo_GetEp",
    "DeviceEpIncompatibilityDetails_SetDetails", "CreateIfKernel", "CreateLoopKernel",
    "CreateScanKernel", "ReleaseKernelImpl", "GetEnvConfigEntries", "GetOpSchema",
    "ReleaseOpSchema", "OpSchema_GetSinceVersion", "OpSchema_GetNumInputs",
    "OpSchema_GetInputName", "OpSchema_GetInputTypeConstraint", "OpSchema_GetNumOutputs",
    "OpSchema_GetOutputName", "OpSchema_GetOutputTypeConstraint",
    "OpSchema_GetTypeConstraintCount", "OpSchema_GetTypeConstraint",
    "OpSchemaTypeConstraint_GetTypeParamName", "OpSchemaTypeConstraint_GetAllowedTypes",
    "OpSchemaTypeConstraint_GetInputIndices", "OpSchemaTypeConstraint_GetOutputIndices",
    "CreateProfilingEvent", "ReleaseProfilingEvent", "ProfilingEvent_GetCategory",
    "ProfilingEvent_GetName", "ProfilingEvent_GetTimestampUs", "ProfilingEvent_GetDurationUs",
    "ProfilingEvent_GetArgValue", "ProfilingEventsContainer_AddEvents",
    "SessionOptionsGetWeightlessSourceModelBuffer", "SessionOptionsGetEpContextConfig",
    "ReleaseEpContextConfig", "EpContextConfigGetEpContextDataReadFunc",
    "EpContextConfigGetEpContextDataWriteFunc")
#: the table's length at the end of each API version (ep_api.cc's version markers; 29 and 31:
#: the lengths the 1.29 and 1.31 libraries' tables grow to)
EP_VERSION_ENDS = {22: 2, 23: 16, 24: 50, 25: 73, 29: 74, 31: 78}
INTEROP_FUNCTIONS = (
    "CreateExternalResourceImporterForDevice", "ReleaseExternalResourceImporter",
    "CanImportMemory", "ImportMemory", "ReleaseExternalMemoryHandle", "CreateTensorFromMemory",
    "CanImportSemaphore", "ImportSemaphore", "ReleaseExternalSemaphoreHandle", "WaitSemaphore",
    "SignalSemaphore", "InitGraphicsInteropForEpDevice", "DeinitGraphicsInteropForEpDevice")
INTEROP_VERSION_ENDS = {24: 11, 25: 13}
MODEL_PACKAGE_FUNCTIONS = (
    "CreateModelPackageOptionsFromSessionOptions", "ReleaseModelPackageOptions",
    "CreateModelPackageContext", "ReleaseModelPackageContext", "ModelPackage_GetSchemaVersion",
    "ModelPackage_GetComponentCount", "ModelPackage_GetComponentNames",
    "ModelPackage_GetVariantCount", "ModelPackage_GetVariantNames",
    "ModelPackage_GetVariantEpName", "ModelPackage_ResolveStringRef", "SelectComponent",
    "ReleaseModelPackageComponentContext", "ModelPackageComponent_GetSelectedVariantName",
    "ModelPackageComponent_GetSelectedVariantFolderPath", "CreateSession")


def _versions(names: tuple[str, ...], ends: dict[int, int]) -> list[tuple[str, int]]:
    out, start = [], 0
    for version, end in sorted(ends.items()):
        out += [(n, version) for n in names[start:end]]
        start = end
    assert start == len(names)
    return out


@pytest.mark.parametrize("table, names, ends", [
    ("OrtEpApi", EP_FUNCTIONS, EP_VERSION_ENDS),
    ("OrtInteropApi", INTEROP_FUNCTIONS, INTEROP_VERSION_ENDS),
    ("OrtModelPackageApi", MODEL_PACKAGE_FUNCTIONS, {31: 16}),
])
def test_every_function_of_the_table_in_order_with_its_version(
        table: str, names: tuple[str, ...], ends: dict[int, int]) -> None:
    rows = slot_rules.SUB_TABLES[table]
    assert [(r.slot, r.since) for r in rows] == [
        (f"{table}.{n}", v) for n, v in _versions(names, ends)]
    for r in rows:
        assert r.evidence and r.relevant and r.verdict(), r.slot
        assert not (set(r.reads) & set(r.writes)), r.slot
        # a Release function releases exactly one object and does nothing else
        if r.slot.split(".")[1].startswith("Release"):
            assert len(r.releases) == 1 and not r.reads and not r.writes, r.slot


def test_new_tables_count_what_rests_on_the_implementation() -> None:
    cov = slot_rules.sub_coverage()
    assert (cov["OrtEpApi"]["implementation"], cov["OrtEpApi"]["unverified"]) == (77, 0)
    assert (cov["OrtInteropApi"]["implementation"], cov["OrtInteropApi"]["unverified"]) == (11, 2)
    assert (cov["OrtModelPackageApi"]["implementation"],
            cov["OrtModelPackageApi"]["unverified"]) == (16, 0)
    md = rules_render.render_markdown()
    for t in ("OrtEpApi", "OrtInteropApi", "OrtModelPackageApi"):
        c = cov[t]
        assert f"`{t}` ({c['total']} functions: {c['verified']} verified, " \
               f"{c['unverified']} unverified)" in md
        marked = {line.split("`")[1] for line in md.splitlines()
                  if line.startswith(f"| `{t}.") and "| **unverified** |" in line}
        assert marked == {r.slot for r in slot_rules.SUB_TABLES[t] if r.basis() == "unverified"}


def test_model_package_getters_that_fill_a_cache_write_their_context() -> None:
    """ORT's model-package implementation fills caches of the context in const getters with no
    lock (the names arrays, ResolveStringRef's result, the folder path); the released libraries
    show those results are the context's (check:api31.model-package-table): such a getter
    writes its context, which is then not Sync, and its result lives until the next call."""
    v = {r.slot.split(".")[1]: r for r in slot_rules.MODEL_PACKAGE_TABLE}
    ctx, comp = "OrtModelPackageContext", "OrtModelPackageComponentContext"
    for name in ("ModelPackage_GetComponentNames", "ModelPackage_GetVariantNames",
                 "ModelPackage_ResolveStringRef"):
        assert v[name].writes == (ctx,) and not v[name].reads, name
    for name in ("ModelPackage_GetSchemaVersion", "ModelPackage_GetComponentCount",
                 "ModelPackage_GetVariantCount", "ModelPackage_GetVariantEpName"):
        assert v[name].reads == (ctx,) and not v[name].writes, name
    assert v["ModelPackageComponent_GetSelectedVariantFolderPath"].writes == (comp,)
    assert v["ModelPackageComponent_GetSelectedVariantName"].reads == (comp,)
    assert comp in v["CreateSession"].writes
    assert "next ResolveStringRef" in v["ModelPackage_ResolveStringRef"].outlives
    assert "next GetVariantNames" in v["ModelPackage_GetVariantNames"].outlives
    assert "may be released after" in v["SelectComponent"].outlives
    objs = slot_rules.SUB_TABLE_OBJECTS["OrtModelPackageApi"]
    assert objs[ctx][1] is False and objs[comp][1] is False
    assert objs["OrtModelPackageOptions"] == (True, True, objs["OrtModelPackageOptions"][2])
    for r in slot_rules.MODEL_PACKAGE_TABLE:
        refs = {e.ref for e in r.evidence}
        assert r.basis() == "implementation", r.slot
        assert not any(e.kind == "untested" for e in r.evidence), r.slot
        assert any("model_package" in ref for ref in refs), r.slot
    cited = {e.ref for r in slot_rules.MODEL_PACKAGE_TABLE for e in r.evidence}
    assert "check:api31.model-package-table" in cited


def test_sub_table_objects_agree_with_the_verdicts() -> None:
    """An object some function of its table writes (outside a callback that lends it) is not
    Sync; every object a new table's function names is either a row's type or declared with
    its Send/Sync here."""
    row_types = {rec["type"] for rec in ortc.rules()}
    for table in ("OrtEpApi", "OrtInteropApi", "OrtModelPackageApi"):
        objs = slot_rules.SUB_TABLE_OBJECTS[table]
        for r in slot_rules.SUB_TABLES[table]:
            for t in r.reads + r.writes + r.creates + r.releases:
                assert t in row_types or any(t in o for o in
                                             slot_rules.SUB_TABLE_OBJECTS.values()), (r.slot, t)
            for t in r.writes:
                if t in objs:
                    assert not objs[t][1] or r.scope == "callback", (r.slot, t)
        # a callback-lent object is never Send
        for r in slot_rules.SUB_TABLES[table]:
            if r.scope == "callback":
                for t in r.writes:
                    if t in objs:
                        assert objs[t][0] is False, (r.slot, t)


def test_ep_table_lifetimes_from_the_implementation() -> None:
    v = {r.slot: r for rows in slot_rules.SUB_TABLES.values() for r in rows}
    assert "kept by pointer" in v["OrtEpApi.EpDevice_AddAllocatorInfo"].outlives
    assert "hardware device" in v["OrtEpApi.CreateEpDevice"].outlives
    assert "state is kept by pointer" in v["OrtEpApi.KernelRegistry_AddKernel"].outlives
    assert v["OrtEpApi.EpGraphSupportInfo_AddNodesToFuse"].writes == ("OrtEpGraphSupportInfo",)
    assert v["OrtEpApi.EpGraphSupportInfo_AddNodesToFuse"].scope == "callback"
    assert "ORT takes the buffers" in v[
        "OrtEpApi.SharedPrePackedWeightCache_StoreWeightData"].outlives
    assert "outlives the tensor" in v["OrtInteropApi.CreateTensorFromMemory"].outlives
    assert "OrtSyncStream" in v["OrtInteropApi.WaitSemaphore"].writes
    assert v["OrtModelPackageApi.CreateSession"].writes == ("OrtModelPackageComponentContext",)


def test_every_table_is_as_long_as_the_released_libraries_measured() -> None:
    """Rows plus declared unnamed entries give, at every API version, the length the conformance
    check measured in that version's library; a row placed at the wrong version fails here."""
    for table in slot_rules.SUB_TABLES:
        first = min(slot_rules.MEASURED_TABLE_LENGTHS[table])
        assert min(r.since for r in slot_rules.SUB_TABLES[table]) == first, table
        for api in range(first, 33):
            assert slot_rules.table_length(table, api) == slot_rules.measured_length(
                table, api), (table, api)
    # the 1.24 library's compile table has 14 entries: SetInputModel came with 1.25
    assert slot_rules.table_length("OrtCompileApi", 24) == 14
    assert slot_rules.measured_length("OrtCompileApi", 21) is None
