"""The thread rules' evidence resolves inside this repository and says what kind it is.

Every evidence record (ortc/evidence.py, and those the slot table cites) has a kind; a URL has
the shape of an ORT doc page or an issue/pull request; a check id exists in the conformance kit
and its recorded outcome on the versions it names is what docs/CONFORMANCE.md shows; a test id
names a test in tests/. A Send or Sync verdict that rests only on ortc's own guard or on nothing
tested must say so in a caveat. Nothing cites notes outside the repository.
"""

from __future__ import annotations

import glob
import os
import re
from typing import Any

import pytest

import ortc
from conftest import ROOT, conformance_matrix
from ortc import evidence as ev
from ortc import rules_render, rules_table, slot_rules
from ortc.conformance.checks import all_checks

DOC_URL = re.compile(r"^https://(github\.com/[\w.-]+/[\w.-]+/(issues|pull|blob|tree|discussions)/"
                     r"\S+|onnxruntime\.ai/docs/\S+|pkg\.go\.dev/\S+)$")
MAINTAINER_URL = re.compile(r"^https://github\.com/microsoft/onnxruntime/(issues|pull|discussions)"
                            r"/\d+(#\S+)?$")
TEST_ID = re.compile(r"^(tests/\w+\.py)::(\w+)(\[.*\])?$")
#: ORT's implementation at a commit (40 hex digits) or a release tag; "main" only when the
#: record says its commit was not recorded
SOURCE_URL = re.compile(r"^https://github\.com/microsoft/onnxruntime/blob/([0-9a-f]{40}|v\d+\.\d+"
                        r"\.\d+|main)/[\w./-]+\.(cc|h|cpp)(#L\d+(-L\d+)?)?$")


def all_records() -> list[tuple[str, ev.Evidence]]:
    out: list[tuple[str, ev.Evidence]] = []
    for name, table in (("type", ev.TYPE_EVIDENCE), ("provider", ev.EP_EVIDENCE),
                        ("provider option", ev.OPTION_EVIDENCE),
                        ("callback", ev.CALLBACK_EVIDENCE),
                        ("transfer", ev.TRANSFER_EVIDENCE)):
        for key, recs in table.items():
            out += [(f"{name} {key}", e) for e in recs]
    for rule in slot_rules.table():
        out += [(f"slot {rule.slot}", e) for e in rule.evidence]
    for rows in slot_rules.SUB_TABLES.values():
        out += [(f"sub-table function {r.slot}", e) for r in rows for e in r.evidence]
    return out


def test_exists(test_id: str) -> bool:
    m = TEST_ID.match(test_id)
    if not m:
        return False
    path = os.path.join(ROOT, m.group(1))
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        return re.search(rf"^def {m.group(2)}\(", f.read(), re.M) is not None


test_exists.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def reference_problems(records: list[tuple[str, ev.Evidence]]) -> list[str]:
    checks = {c.id for c in all_checks()}
    bad = []
    for where, e in records:
        if e.kind not in ev.KINDS or not e.says:
            bad.append(f"{where}: kind {e.kind!r} or empty text")
        elif e.kind == "ort-doc" and not DOC_URL.match(e.ref):
            bad.append(f"{where}: ort-doc needs a documentation URL, got {e.ref!r}")
        elif e.kind == "ort-maintainer" and not MAINTAINER_URL.match(e.ref):
            bad.append(f"{where}: ort-maintainer needs an ORT issue or PR URL, got {e.ref!r}")
        elif e.kind == "ort-behaviour":
            if e.ref.startswith("check:"):
                if e.ref[len("check:"):] not in checks or e.outcome not in ("pass", "known",
                                                                          "known (race)"):
                    bad.append(f"{where}: no conformance check {e.ref!r} / outcome {e.outcome!r}")
            elif not test_exists(e.ref):
                bad.append(f"{where}: no test {e.ref!r}")
            if not e.versions:
                bad.append(f"{where}: ort-behaviour without the versions it ran on")
        elif e.kind == "guard" and not test_exists(e.ref):
            bad.append(f"{where}: guard evidence must name a test here, got {e.ref!r}")
        elif e.kind == "policy" and (e.ref or not e.changes_if):
            bad.append(f"{where}: policy needs its reason and what would change it, no ref")
        elif e.kind == "untested" and e.ref:
            bad.append(f"{where}: untested evidence cites {e.ref!r}")
        elif e.kind == "ort-source":
            m = SOURCE_URL.match(e.ref)
            if not m or not e.function or not e.release:
                bad.append(f"{where}: ort-source needs ORT's file at a commit or tag, the "
                           f"function and the release, got {e.ref!r} / {e.function!r}")
            elif m.group(1) == "main" and "commit not recorded" not in e.release:
                bad.append(f"{where}: {e.ref!r} cites main without saying its commit is "
                           "not recorded")
        elif e.kind == "signature" and e.ref != ev.C_API:
            bad.append(f"{where}: a signature record cites the C API reference, not {e.ref!r}")
    return bad


def test_every_reference_resolves() -> None:
    records = all_records()
    assert len(records) > 400
    assert reference_problems(records) == []


@pytest.mark.parametrize("broken", [
    ev.check("no.such-check", "x", "sync"),
    ev.test("tests/test_threads.py::test_that_does_not_exist", "x", "sync"),
    ev.guard("tests/nowhere.py::test_x", "x", "sync"),
    ev.doc("onnxruntime_c_api.h", "a file name is not a URL", "sync"),
    ev.maintainer("https://example.com/comment", "not an ORT thread", "sync"),
    ev.Evidence("policy", "", "a policy that cannot change", ("sync",)),
    ev.Evidence("rumour", "", "an unknown kind", ("sync",)),
    ev.source("onnxruntime/core/session/custom_ops.cc", "main", "OrtApis::X", "main, unsaid"),
    ev.Evidence("ort-source", f"{ev.GH}/blob/{'a' * 40}/x.cc", "no function named",
                release="1.23"),
    ev.source("onnxruntime/core/session/custom_ops.cc", "deadbeef", "OrtApis::X",
              "a short commit is not a commit"),
])
def test_a_broken_reference_is_reported(broken: ev.Evidence) -> None:
    assert len(reference_problems([("probe", broken)])) == 1


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def test_check_evidence_matches_the_committed_matrix() -> None:
    """A record citing a check says which outcome on which versions; the matrix agrees."""
    versions, rows = conformance_matrix()
    bad = []
    for where, e in all_records():
        if not e.ref.startswith("check:"):
            continue
        cid = e.ref[len("check:"):]
        if cid not in rows:
            bad.append(f"{where}: {cid} is not in docs/CONFORMANCE.md (regenerate the matrix)")
            continue
        lo, _, hi = e.versions.partition("-")
        hi = hi or lo
        claimed = [v for v in versions if _key(lo) <= _key(v) <= _key(hi)]
        if not claimed:
            bad.append(f"{where}: {cid}: versions {e.versions!r} match no matrix column")
        got = {v: rows[cid][versions.index(v)] for v in claimed}
        if e.outcome == "known (race)":  # a race a run may miss: seen somewhere, never a fail
            if "known" not in got.values() or set(got.values()) - {"known", "pass"}:
                bad.append(f"{where}: {cid}: {got}, the record says a race seen there")
            continue
        for v, status in got.items():
            if status != e.outcome:
                bad.append(f"{where}: {cid} on {v}: {status}, the record says {e.outcome}")
    assert bad == []


def unbacked(rec: dict[str, Any], records: tuple[ev.Evidence, ...]) -> list[str]:
    """Send/Sync verdicts of ``rec`` resting on no strong evidence and not saying so. A 'no'
    may rest on ortc's policy (it is the conservative side); guard and untested never count."""
    missing = []
    for verdict in ("send", "sync"):
        tag = verdict if rec[verdict] else "not-" + verdict
        kinds = {e.kind for e in records if tag in e.backs}
        strong = kinds & set(ev.STRONG)
        if not rec[verdict]:
            strong |= kinds & {"policy"}
        if not strong and verdict not in rec["caveats"]:
            missing.append(f"{rec['type']} {tag}: only {sorted(kinds) or 'nothing'}")
    return missing


def test_send_sync_verdicts_rest_on_evidence_or_say_so() -> None:
    bad = []
    for rec in ortc.rules():
        assert rec["evidence_records"] == [e.to_json() for e in ev.for_type(rec["type"])]
        bad += unbacked(rec, ev.for_type(rec["type"]))
    assert bad == []


def test_a_verdict_on_guard_alone_is_reported() -> None:
    rec = {"type": "OrtProbe", "send": True, "sync": True, "caveats": {}}
    only_guard = (ev.guard("tests/test_threads.py::test_exclusive_run_session", "x", "send",
                           "sync"),)
    assert len(unbacked(rec, only_guard)) == 2
    assert unbacked({**rec, "caveats": {"send": "said", "sync": "said"}}, only_guard) == []
    assert len(unbacked({**rec, "sync": False}, (ev.policy("x", "y", "not-sync"),))) == 1


FORBIDDEN = [
    (re.compile(r"shared/research|thread-safety\.md|experiments\.log"), "a research note"),
    (re.compile(r"\b(research|experiment)s? E\d", re.I), "a research experiment"),
    (re.compile(r"\bissue \d+ item\b"), "a project issue"),
]


def test_no_citation_outside_the_repository() -> None:
    files = [os.path.join(ROOT, "README.md")]
    for pattern in ("docs/*.md", "ortc/**/*.py", "tests/*.py", "bench/*.py", "examples/*.py"):
        files += glob.glob(os.path.join(ROOT, pattern), recursive=True)
    bad = []
    for path in files:
        if os.path.basename(path) in ("test_evidence.py", "_ffi.py"):
            continue
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for rx, what in FORBIDDEN:
                    if rx.search(line):
                        bad.append(f"{os.path.relpath(path, ROOT)}:{n}: cites {what}")
    assert bad == []


#: tests in tests/ that use objects of these types on a thread other than their maker's (the
#: only tests a Send verdict may cite as seen behaviour; checks declare it with ``crosses``)
CROSSING_TESTS: dict[str, frozenset[str]] = {
    # the adapter is made on the main thread and made active in RunOptions on four others
    "tests/test_lora.py::test_adapter_shared_by_threads": frozenset({"OrtLoraAdapter"}),
}


def send_problems(table: dict[str, tuple[ev.Evidence, ...]]) -> list[str]:
    """Send records of kind ort-behaviour whose check or test never moves that type's objects
    to another thread: a check on one thread shows what the object does, not that it may
    move."""
    crosses = {c.id: set(c.crosses) for c in all_checks()}
    bad = []
    for c_type, recs in table.items():
        for e in recs:
            if "send" not in e.backs or e.kind != "ort-behaviour":
                continue
            if e.ref.startswith("check:"):
                moved = crosses.get(e.ref[len("check:"):], set())
            else:
                moved = set(CROSSING_TESTS.get(e.ref, ()))
            if c_type not in moved:
                bad.append(f"{c_type}: Send cites {e.ref}, which does not use a {c_type} on "
                           f"another thread (it crosses with {sorted(moved) or 'nothing'})")
    return bad


def test_send_evidence_crosses_threads() -> None:
    assert send_problems(ev.TYPE_EVIDENCE) == []


@pytest.mark.parametrize("ref", ["status.roundtrip", "thread.per-thread-binding"])
def test_send_on_a_check_that_stays_on_one_thread_is_reported(ref: str) -> None:
    c_type = "OrtStatus" if ref.startswith("status") else "OrtIoBinding"
    assert len(send_problems({c_type: (ev.check(ref, "x", "send"),)})) == 1
    unlisted = ev.test("tests/test_threads.py::test_shared_run_stress_matches_serial", "x",
                       "send")
    assert len(send_problems({"OrtValue": (unlisted,)})) == 1


def test_every_send_check_moves_the_type_it_is_named_for() -> None:
    """The send.* family: each check crosses with the type it is about, and some type's Send
    verdict cites it."""
    family = [c for c in all_checks() if c.id.startswith("send.")]
    cited = {e.ref for recs in ev.TYPE_EVIDENCE.values() for e in recs if "send" in e.backs}
    assert len(family) >= 13
    for c in family:
        assert c.crosses, c.id
        assert f"check:{c.id}" in cited, f"{c.id} backs no Send verdict"


def test_every_provider_rule_has_evidence() -> None:
    from ortc.providers import _EXCLUSIVE_OPTIONS, EP_CONCURRENT_RUN

    assert set(ev.EP_EVIDENCE) == set(EP_CONCURRENT_RUN)
    assert set(ev.OPTION_EVIDENCE) == {k for opts in _EXCLUSIVE_OPTIONS.values() for k in opts}
    assert {cb["type"] for cb in rules_table.CALLBACKS} == set(ev.CALLBACK_EVIDENCE)


def transfer_evidence_problems(transfers: list[dict[str, Any]],
                               table: dict[str, tuple[ev.Evidence, ...]]) -> list[str]:
    """Transfers whose taking rests on no documentation or seen behaviour, or whose failure
    owner is stated ("caller", "per-entry") without a record backing it; evidence for no
    transfer."""
    bad = []
    keys = {ev.transfer_key(t["function"], t["argument"]) for t in transfers}
    bad += [f"{k}: evidence for no transfer" for k in sorted(set(table) - keys)]
    for t in transfers:
        key = ev.transfer_key(t["function"], t["argument"])
        recs = table.get(key, ())
        for tag in ("transfer", "on-failure"):
            if tag == "on-failure" and t["failure_owner"] == "unstated":
                continue
            if not any(tag in e.backs and e.kind in ev.STRONG for e in recs):
                bad.append(f"{key}: {tag} rests on no ort-doc/ort-maintainer/ort-behaviour "
                           "record")
    return bad


def test_every_transfer_rests_on_evidence() -> None:
    """Each ownership transfer cites ORT (its documentation or source, a maintainer, or a
    conformance check) for what the call takes, and for who owns the argument after a failed
    call unless it says "unstated"; every reference resolves (test_every_reference_resolves
    reads these records too)."""
    transfers = rules_table.transfers()
    assert transfer_evidence_problems(transfers, ev.TRANSFER_EVIDENCE) == []
    for t in transfers:
        assert t["evidence_records"] == [
            e.to_json() for e in ev.for_transfer(t["function"], t["argument"])]
    refs = {e.ref for recs in ev.TRANSFER_EVIDENCE.values() for e in recs}
    assert "check:editor.create-node-takes-attributes" in refs


def test_a_transfer_without_evidence_is_reported() -> None:
    node = next(t for t in rules_table.transfers() if t["argument"] == "OrtNode")
    assert len(transfer_evidence_problems([node], {})) == 1  # unstated: only the taking
    stated = {**node, "failure_owner": "caller"}
    key = ev.transfer_key(node["function"], "OrtNode")
    only_transfer = {key: tuple(e for e in ev.TRANSFER_EVIDENCE[key]
                                if "on-failure" not in e.backs)}
    assert len(transfer_evidence_problems([stated], only_transfer)) == 1
    assert len(transfer_evidence_problems([], {key: ()})) == 1  # an orphan record


def test_counter_reports_are_discussed() -> None:
    urls = {c["url"] for c in ev.COUNTER_REPORTS}
    assert {f"{ev.GH}/issues/13571", f"{ev.GH}/issues/15087"} <= urls
    md = rules_render.render_markdown()
    for c in ev.COUNTER_REPORTS:
        assert c["url"] in md and c["why_it_stands"] in md and c["would_change"]


def test_the_env_note_agrees_with_the_recreate_check() -> None:
    env = next(r for r in ortc.rules() if r["type"] == "OrtEnv")
    notes = " ".join(env["notes"])
    assert "env.recreate-after-release" in notes and "cannot re-create" not in notes
    refs = {e["ref"] for e in env["evidence_records"]}
    assert {"check:env.recreate-after-release", "check:env.run-after-last-release"} <= refs
    _, rows = conformance_matrix()
    assert set(rows["env.recreate-after-release"]) == {"pass"}
    assert set(rows["env.run-after-last-release"]) == {"known"}


def test_a_shared_binding_is_stated_as_wrong_results_and_a_possible_crash() -> None:
    """The check puts every thread's binds before any run, so each version shows the race
    (known, every run); its runs can also corrupt ORT's heap (it runs in a child for that):
    the README and the evidence must not promise that nothing crashes."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        row = next(line for line in f if line.startswith("| `OrtIoBinding` |"))
    assert "thread.shared-binding" in row and "wrong results" in row and "crash" in row
    assert "no crash" not in row
    _, rows = conformance_matrix()
    assert set(rows["thread.shared-binding"]) == {"known"}
    record = next(e for e in ev.TYPE_EVIDENCE["OrtIoBinding"]
                  if e.ref == "check:thread.shared-binding")
    assert "crash" in record.says and "no crash" not in record.says


def test_custom_op_domain_caveat_is_stated() -> None:
    rule = slot_rules.rule("CreateSession")
    assert "custom-op" in rule.note and ev.ADD_CUSTOM_OP_DOMAINS in {e.ref for e in rule.evidence}
    so = next(r for r in ortc.rules() if r["type"] == "OrtSessionOptions")
    assert any("custom-op" in n for n in so["notes"])
    assert ev.ADD_CUSTOM_OP_DOMAINS in rules_render.render_markdown().split("## Summary")[0]
