"""Every declared OrtApi slot has a thread verdict with evidence (ortc/slot_rules.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


def test_slot_table_agrees_with_the_type_records() -> None:
    """A C function a type record calls shared reads that type in the slot table; exclusive
    writes or releases it (for a type that is not Sync every call is exclusive anyway)."""
    bad = []
    for rec in ortc.rules():
        for name, kind in rec["methods"].items():
            if not rules_render._is_c(name):
                continue
            r = slot_rules.rule(name)
            t = rec["type"]
            if kind == "shared" and t not in r.reads + r.creates:
                bad.append(f"{t}.{name}: shared, slot table: {r.verdict()}")
            if kind == "exclusive" and rec["sync"] and t not in r.writes + r.releases:
                bad.append(f"{t}.{name}: exclusive, slot table: {r.verdict()}")
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
