"""ortc.rules(): the exported thread rules, their formats, the generated docs, and the
execution-provider table behind Session.run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import models
import ortc
from conftest import ROOT, conformance_matrix, run_python
from ortc import rules_cli, rules_render, rules_table
from ortc._handle import Handle
from ortc._slots import SLOTS
from ortc.providers import EP_CONCURRENT_RUN, session_run_rule
from ortc.threads import exclusive, registry, shared

KEYS = {"type", "python", "send", "sync", "methods", "parents", "evidence"}


def by_type() -> dict[str, dict[str, Any]]:
    return {r["type"]: r for r in ortc.rules()}


def test_records_have_the_keys() -> None:
    recs = ortc.rules()
    assert len({r["type"] for r in recs}) == len(recs), "one record per type"
    assert [r["type"] for r in recs] == sorted(r["type"] for r in recs)
    for r in recs:
        assert KEYS <= set(r), r["type"]
        assert r["type"].startswith("Ort") or r["type"] in ("RunAsyncCallbackFn",)
        assert isinstance(r["send"], bool) and isinstance(r["sync"], bool)
        assert r["evidence"], r["type"]
        assert set(r["methods"].values()) <= {"shared", "exclusive"}, r["type"]
        assert all(isinstance(p, str) for p in r["parents"])
    json.dumps(recs)  # plain data


def test_wrapped_records_follow_the_declarations() -> None:
    recs = by_type()
    for name, rec in registry.items():
        r = recs[rec.c_type]
        cls = rec.cls
        assert r["wrapped"] is True and r["python"] == f"ortc.{name}"
        assert (r["send"], r["sync"]) == (cls.send, cls.sync)  # type: ignore[attr-defined]
        assert r["parents"] == list(cls.parents)  # type: ignore[attr-defined]
        assert r["evidence"].startswith(cls.evidence)  # type: ignore[attr-defined]
        for meth, rule in rec.methods.items():
            assert r["methods"][meth] == rule.kind


def test_the_headline_verdicts() -> None:
    r = by_type()
    b = r["OrtIoBinding"]
    assert (b["send"], b["sync"]) == (True, False)
    # a call that takes the binding as an argument is not one of its methods: it is a use
    assert "RunWithBinding" not in b["methods"] and b["used_by"]["RunWithBinding"] == "exclusive"
    assert b["used_by"]["Session.run_with_binding"] == "exclusive"
    assert b["methods"]["bind_input"] == "exclusive" and b["parents"] == ["OrtSession"]
    s = r["OrtSession"]
    assert (s["send"], s["sync"]) == (True, True)
    assert s["methods"]["Run"] == "shared" and s["methods"]["run"] == "shared"
    assert "exclusive" in s["conditions"]["Run"] and "thread_rules" in s["conditions"]["run"]
    assert s["methods"]["SessionEndProfiling"] == "exclusive"
    assert s["methods"]["ReleaseSession"] == "exclusive" and s["methods"]["close"] == "exclusive"
    assert s["parents"] == ["OrtEnv"]
    assert "ModelMetadataGetProducerName" not in s["methods"], "belongs to OrtModelMetadata"
    ro = r["OrtRunOptions"]
    assert ro["methods"]["RunOptionsSetTerminate"] == "shared"
    assert ro["methods"]["RunOptionsSetRunTag"] == "exclusive"
    assert ro["used_by"]["Run"] == "shared" and ro["used_by"]["RunWithBinding"] == "shared"
    assert "Run" not in ro["methods"] and "Session.run" not in ro["methods"]
    so = r["OrtSessionOptions"]
    assert so["used_by"]["CreateSession"] == "shared" and "CreateSession" not in so["methods"]
    assert so["methods"]["SetIntraOpNumThreads"] == "exclusive"
    assert so["methods"]["intra_op_num_threads (set)"] == "exclusive"
    v = r["OrtValue"]
    assert v["used_by"]["Run"] == "shared" and "Run" not in v["methods"]
    assert v["used_by"]["BindInput"] == "shared" and "BindInput" not in v["methods"]
    assert v["used_by"]["BindOutput"] == "exclusive"  # written by every run while bound
    assert v["methods"]["fill"] == "exclusive"
    assert r["OrtEnv"]["methods"]["CreateSession"] == "shared"  # the env is its receiver
    # functions that take no env are not the env's (Env.providers calls them)
    assert not {"GetAvailableProviders", "ReleaseAvailableProviders"} & set(
        r["OrtEnv"]["methods"]) and r["OrtEnv"]["methods"]["providers"] == "shared"
    assert "close" not in r["OrtEnv"]["methods"] and r["OrtEnv"]["notes"]
    assert r["OrtKernelContext"]["send"] is False


def test_unwrapped_types_are_declared_and_marked() -> None:
    r = by_type()
    for t in ("OrtTypeInfo", "OrtTensorTypeAndShapeInfo", "OrtModelMetadata", "OrtStatus",
              "OrtKernelContext", "OrtKernelInfo", "OrtCustomOpDomain",
              "OrtThreadingOptions", "OrtArenaCfg", "OrtKeyValuePairs",
              "OrtPrepackedWeightsContainer"):
        assert r[t]["wrapped"] is False, t
    assert not ({x["type"] for x in rules_table.UNWRAPPED} & {rec.c_type
                                                            for rec in registry.values()})


def test_every_opaque_type_has_a_row_or_a_reason() -> None:
    """The README says ortc declares the thread rules of every ORT object: every handle type an
    OrtApi slot takes has a row, and every opaque type the C header declares is a row, a
    function table (not an object) or listed with the reason it has none."""
    from ortc import slot_rules

    rows = set(by_type())
    assert slot_rules.HANDLE_TYPES <= rows, sorted(slot_rules.HANDLE_TYPES - rows)
    with open(os.path.join(ROOT, "include", "ortc_types.h"), encoding="utf-8") as f:
        declared = set(re.findall(r"^typedef struct (Ort\w+) \1;", f.read(), re.M))
    assert len(declared) > 50
    accounted = rows | set(rules_table.FUNCTION_TABLES) | set(rules_table.NO_ROW)
    assert declared <= accounted, sorted(declared - accounted)
    assert not (set(rules_table.FUNCTION_TABLES) | set(rules_table.NO_ROW)) & rows
    md = rules_render.render_markdown()
    for name in (*rules_table.FUNCTION_TABLES, *rules_table.NO_ROW):
        assert f"`{name}`" in md.split("## Session.run per execution provider")[0], name


def test_callback_scoped_types_are_neither_send_nor_sync() -> None:
    """Like the kernel context, a shape-inference context lives inside the ORT callback that
    received it, on its thread. A logger lives inside its callback too (not Send) but is Sync:
    the Sync kernel info hands the same logger to every thread that asks, and ORT logs through
    a session's logger from concurrent runs itself."""
    r = by_type()
    for t in ("OrtKernelContext", "OrtShapeInferContext"):
        assert (r[t]["send"], r[t]["sync"]) == (False, False), t
    assert (r["OrtLogger"]["send"], r["OrtLogger"]["sync"]) == (False, True)
    assert r["OrtShapeInferContext"]["methods"]["ShapeInferContext_SetOutputTypeShape"] \
        == "exclusive"
    assert set(r["OrtLogger"]["parents"]) == {"OrtKernelInfo", "OrtKernelContext"}
    # borrowed views name their owners; a custom-op domain must not outlive its ops
    assert r["OrtValueInfo"]["parents"] == ["OrtGraph"]
    assert r["OrtEpAssignedSubgraph"]["parents"] == ["OrtSession"]
    assert r["OrtCustomOpDomain"]["parents"] == ["OrtCustomOp"]
    mco = r["OrtModelCompilationOptions"]
    assert mco["methods"] == {} and mco["other_tables"]["OrtCompileApi.CompileModel"] == "shared"
    assert (mco["send"], mco["sync"]) == (True, False) and mco["parents"] == ["OrtEnv"]


def test_every_c_function_is_an_ort_api_slot() -> None:
    slots = {name for name, _ in SLOTS}
    for r in ortc.rules():
        for name in r["methods"]:
            if name[:1].isupper() and "." not in name and "(" not in name:
                assert name in slots, f"{r['type']}: {name} is not an OrtApi function"
    for c_fns, _, uses in rules_table.CONSTRUCTOR_USES:
        assert set(c_fns) <= slots
    for arg, c_type in rules_table.ARG_TYPES.items():
        assert c_type in by_type()


def _editor_declarations() -> dict[str, list[str]]:
    """The model editor's sub-table as the project declares it (the Rust crate's EditorTable,
    in ABI order; the C headers here leave the table opaque): function -> parameter types."""
    with open(os.path.join(ROOT, "rust", "ortc-rules", "src", "editor.rs"), encoding="utf-8") as f:
        body = f.read().split("pub(crate) struct EditorTable {")[1].split("\n}")[0]
    out = {}
    for m in re.finditer(r"^    (?:pub )?(\w+): Option<\s*unsafe extern \"C\" fn\((.*?)\)",
                         body, re.M | re.S):
        out[m.group(1)] = [p.strip() for p in m.group(2).split(",") if p.strip()]
    return out


def transfer_problems(transfers: list[dict[str, Any]]) -> list[str]:
    """Transfers that name no real C function, no argument of its type the call could take
    (a non-const pointer to it, or an array of them), no row, or no stated failure owner."""
    editor = _editor_declarations()
    slots = {name for name, _ in SLOTS}
    from ortc._signatures import SIGNATURES

    rows = by_type()
    bad = []
    for t in transfers:
        fn, c_type, where = t["function"], t["argument"], f"{t['function']}({t['argument']})"
        table, _, name = fn.rpartition(".")
        if table == "OrtModelEditorApi" and name in editor:
            params = editor[name]
            takes = any(re.fullmatch(r"\*mut (\*mut )?sys::" + c_type, p) for p in params)
        elif not table and name in slots:
            params = list(SIGNATURES[name])
            takes = any(re.fullmatch(c_type + r"\*\*?", p.replace(" ", "")) for p in params)
        else:
            bad.append(f"{where}: no such C function declared here")
            continue
        if not takes:
            bad.append(f"{where}: {fn} takes no non-const {c_type} ({params})")
        if c_type not in rows:
            bad.append(f"{where}: {c_type} has no row")
        elif rows[c_type]["taken_by"].get(fn) != t["failure_owner"]:
            bad.append(f"{where}: the {c_type} row does not say it is taken")
        elif {**rows[c_type]["methods"], **rows[c_type]["other_tables"],
              **rows[c_type]["used_by"]}.get(fn) != "exclusive":
            bad.append(f"{where}: a call that takes its argument uses it exclusively")
        if not re.fullmatch(r"[a-z_]+", t["parameter"]):
            bad.append(f"{where}: parameter {t['parameter']!r} is not a C parameter name")
        if t["failure_owner"] not in rules_table.FAILURE_OWNERS or not t["on_failure"]:
            bad.append(f"{where}: after a failed call: {t['failure_owner']!r}, "
                       f"{t['on_failure']!r} (say 'unstated' where nothing settles it)")
        if not t["on_success"]:
            bad.append(f"{where}: says nothing of a successful call")
    return bad


def test_every_transfer_names_a_real_function_and_argument() -> None:
    """The ownership transfers: each names a C function the project declares, a C type it takes
    through a non-const pointer, that type's row (which lists the call as taking it, and as an
    exclusive use), its parameter, and who owns the argument after a failed call."""
    transfers = rules_table.transfers()
    assert len(transfers) >= 6
    assert len({(t["function"], t["argument"]) for t in transfers}) == len(transfers)
    assert transfer_problems(transfers) == []
    taken = {(fn, r["type"]) for r in ortc.rules() for fn in r["taken_by"]}
    assert taken == {(t["function"], t["argument"]) for t in transfers}
    value = by_type()["OrtValue"]
    assert value["taken_by"] == {"OrtModelEditorApi.AddInitializerToGraph": "caller"}
    assert value["used_by"]["OrtModelEditorApi.AddInitializerToGraph"] == "exclusive"


@pytest.mark.parametrize("change, found", [
    ({"function": "OrtModelEditorApi.AddNodeToGraphs"}, "no such C function"),
    ({"argument": "OrtModel"}, "takes no non-const OrtModel"),
    ({"function": "OrtModelEditorApi.CreateSessionFromModel", "argument": "OrtModel"},
     "takes no non-const OrtModel"),
    ({"failure_owner": "probably the caller"}, "after a failed call"),
    ({"parameter": "The node"}, "not a C parameter name"),
])
def test_a_wrong_transfer_is_reported(change: dict[str, str], found: str) -> None:
    t = {**next(t for t in rules_table.TRANSFERS
                if t["function"] == "OrtModelEditorApi.AddNodeToGraph"), **change}
    assert any(found in p for p in transfer_problems([t])), transfer_problems([t])


def test_every_marker_argument_names_a_type() -> None:
    for name, rec in registry.items():
        for meth, rule in rec.methods.items():
            for arg, _ in rule.args:
                assert arg in rules_table.ARG_TYPES, f"{name}.{meth}: argument {arg!r}"


def test_cited_tests_exist() -> None:
    """Evidence that cites a test in this repository names one that exists."""
    text = json.dumps(ortc.rules()) + json.dumps(rules_table.CALLBACKS) + json.dumps(
        EP_CONCURRENT_RUN)
    cited = set(re.findall(r"(tests/[\w/]+\.py)::(\w+)", text))
    assert cited
    for path, func in cited:
        with open(os.path.join(ROOT, path)) as f:
            assert re.search(rf"^def {func}\(", f.read(), re.M), f"{path}::{func}"


def test_rules_follow_a_new_declaration() -> None:
    """Derived, not kept by hand: a new wrapper class appears with its markers."""

    class Gadget(Handle):
        """Thread rules: test only."""

        c_type = "OrtGadgetForTest"
        send = True
        sync = False
        evidence = "a test declaration"
        parents = ("OrtSession",)

        @shared("SessionGetInputCount")
        def look(self) -> None: ...

        @exclusive("SetIntraOpNumThreads", args={"run_options": "shared"})
        def poke(self, run_options: Any) -> None: ...

    try:
        r = by_type()["OrtGadgetForTest"]
        assert r["python"] == "ortc.Gadget" and r["sync"] is False
        assert r["methods"]["look"] == "shared" and r["methods"]["poke"] == "exclusive"
        assert r["c_functions"] == {"look": ["SessionGetInputCount"],
                                    "poke": ["SetIntraOpNumThreads"]}
        # those C functions act on a session and on options, not on a gadget
        assert "SessionGetInputCount" not in r["methods"]
        assert r["arguments"] == {"poke": {"run_options": "shared"}}
        assert by_type()["OrtRunOptions"]["used_by"]["Gadget.poke"] == "shared"
    finally:
        del registry["Gadget"]


# -- formats -------------------------------------------------------------------------------

def test_every_handle_class_in_the_package_is_in_a_fresh_processes_table() -> None:
    """A handle class registers its rules when its module is imported; a module ``import
    ortc`` leaves for first use (IoBinding's) must still reach the table. Every class of the
    package deriving from Handle, found in the sources, is in the table of a fresh process."""
    import ast

    declared = set()
    for name in os.listdir(os.path.join(ROOT, "ortc")):
        if name.endswith(".py"):
            with open(os.path.join(ROOT, "ortc", name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            declared |= {f"ortc.{node.name}" for node in ast.walk(tree)
                         if isinstance(node, ast.ClassDef)
                         and any(isinstance(b, ast.Name) and b.id == "Handle" for b in node.bases)}
    assert {"ortc.Session", "ortc.IoBinding", "ortc.Value"} <= declared, declared
    proc = run_python("import json, ortc\n"
                      "print(json.dumps([r['python'] for r in ortc.rules() if r['wrapped']]))")
    assert proc.returncode == 0, proc.stderr
    assert declared <= set(json.loads(proc.stdout)), proc.stdout


def test_cli_json() -> None:
    proc = subprocess.run([sys.executable, "-m", "ortc", "rules", "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {r["type"] for r in data["types"]} == set(by_type())
    # the ownership transfers, with their evidence, and what each failure owner means
    assert data["transfers"] == rules_table.transfers()
    assert set(data["failure_owners"]) == {t["failure_owner"] for t in data["transfers"]} \
        == {"caller", "per-entry", "unstated"}
    assert all(t["evidence_records"] for t in data["transfers"])
    assert data["execution_providers"]["CPUExecutionProvider"]["concurrent_run"] is True
    assert data["callbacks"]


def test_main_formats(capsys: Any, tmp_path: Any) -> None:
    assert rules_cli.main(["--format", "markdown"]) == 0
    assert capsys.readouterr().out == rules_render.render_markdown()
    out = tmp_path / "rules.rs"
    assert rules_cli.main_rules(["--format", "rust", "-o", str(out)]) == 0
    assert out.read_text() == rules_cli.render_rust()
    with pytest.raises(ValueError):
        rules_cli.render("yaml")
    with pytest.raises(SystemExit):
        rules_cli.main(["--format", "yaml"])


def test_rust_rules_module() -> None:
    """``--format rust`` prints the crate's generated rules module: the verdicts as impls on the
    crate's wrapper types (tests/test_rust.py builds and tests the crate)."""
    rust = rules_cli.render_rust()
    assert rust.startswith("// Generated by `python -m ortc.rust_crate`")
    assert "unsafe impl<'v> Send for crate::IoBinding<'v> {}" in rust
    assert "Sync for crate::IoBinding" not in rust.replace("// ", "")
    assert "unsafe impl<P: crate::RunPolicy> Sync for crate::Session<P> {}" in rust
    assert "unsafe impl Sync for crate::Allocator {}" in rust
    assert "unsafe impl Send for crate::DeviceAllocator {}" in rust
    assert "Sync for crate::DeviceAllocator" not in rust.replace("// ", "")
    assert "for crate::KernelContext" not in rust
    # a refused trait is a compile_fail doctest with the error code
    assert "pub const IO_BINDING_IS_NOT_SYNC: () = ();" in rust
    assert "pub const KERNEL_CONTEXT_IS_NOT_SEND: () = ();" in rust
    assert rust.count("```compile_fail,E0277") == 4
    # the evidence sits right above each group of impls
    lines = rust.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("unsafe impl") and not lines[i - 1].startswith("unsafe impl"):
            assert lines[i - 1].startswith("// "), line
    for r in rules_table.rules():
        assert f'c_type: "{r["type"]}",' in rust
    # the objects only one sub-table hands out: each with its table's Send and Sync, none in
    # RULES
    from ortc import slot_rules

    body = rust.split("pub const SUB_TABLE_OBJECTS: &[SubTableObject] = &[")[1].split("\n];")[0]
    got = re.findall(r'table: "(\w+)",\n\s+c_type: "(\w+)",\n\s+send: (true|false),\n'
                     r'\s+sync: (true|false),', body)
    assert got == [(t, o, str(se).lower(), str(sy).lower())
                   for t, objs in slot_rules.SUB_TABLE_OBJECTS.items()
                   for o, (se, sy, _) in objs.items()]
    assert len(got) > 15
    rules_part = rust.split("pub const RULES: &[Rule] = &[")[1].split("\n];")[0]
    assert not {o for _, o, _, _ in got} & set(re.findall(r'c_type: "(\w+)"', rules_part))
    # each transfer, with who owns the argument after a failed call
    body = rust.split("pub const TRANSFERS: &[Transfer] = &[")[1].split("\n];")[0]
    got = re.findall(r'function: "([\w.]+)",\n\s+c_type: "(\w+)",.*?failure_owner: "([\w-]+)"',
                     body, re.S)
    assert got == [(t["function"], t["argument"], t["failure_owner"])
                   for t in rules_table.transfers()]


def test_main_writes_the_crate_files(tmp_path: Any, capsys: Any) -> None:
    assert rules_cli.main(["--format", "rust", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "src" / "rules.rs").read_text() == rules_cli.render_rust()
    assert (tmp_path / "src" / "sys.rs").read_text().startswith("// Generated by")
    with pytest.raises(SystemExit):
        rules_cli.main(["--format", "json", "--out", str(tmp_path)])


def test_docs_are_current() -> None:
    """docs/THREAD_RULES.md is generated; regenerate it with
    ``python -m ortc rules --format markdown -o docs/THREAD_RULES.md``."""
    with open(os.path.join(ROOT, "docs", "THREAD_RULES.md"), encoding="utf-8") as f:
        assert f.read() == rules_render.render_markdown(), \
            "docs/THREAD_RULES.md is stale: python -m ortc rules --format markdown " \
            "-o docs/THREAD_RULES.md"


def test_markdown_has_every_type() -> None:
    md = rules_render.render_markdown()
    for t in by_type():
        assert f"### {t}" in md and f"| [`{t}`](#{t.lower()}) |" in md
    assert "| CPUExecutionProvider | yes |" in md
    assert md.index("## Answers first") < md.index("## Types") < md.index("## Every OrtApi slot")
    # every transfer in the table of transfers and in its argument's section
    transfers = md.split("## Ownership transfers")[1].split("## Types")[0]
    for t in rules_table.transfers():
        assert (f"| `{t['function']}` | [`{t['argument']}`](#{t['argument'].lower()}) "
                f"`{t['parameter']}` |") in transfers
        assert f"**{t['failure_owner']}**: " in transfers
        section = md.split(f"### {t['argument']}\n")[1].split("\n### ")[0]
        assert f"`{t['function']}` (after a failed call: {t['failure_owner']})" in section
    # the Python enforcement table lives in the README, not in the C-level rules
    assert "WrongThreadError" not in md
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        assert rules_render.POLICY_TABLE in f.read()


# -- Session.run per execution provider ----------------------------------------------------

@pytest.mark.parametrize("providers, options, run", [
    (["CPUExecutionProvider"], None, "shared"),
    (["TensorrtExecutionProvider", "CPUExecutionProvider"], None, "shared"),
    (["XnnpackExecutionProvider", "CPUExecutionProvider"], None, "shared"),
    (["QNNExecutionProvider", "CPUExecutionProvider"], None, "shared"),
    (["DmlExecutionProvider", "CPUExecutionProvider"], None, "exclusive"),
    (["CUDAExecutionProvider", "CPUExecutionProvider"], None, "exclusive"),
    (["CUDAExecutionProvider"], {"CUDAExecutionProvider": {"enable_cuda_graph": "1"}},
     "exclusive"),
    (["TensorrtExecutionProvider"], {"TensorrtExecutionProvider": {"trt_cuda_graph_enable": "1"}},
     "exclusive"),
    (["TensorrtExecutionProvider"], {"TensorrtExecutionProvider": {"trt_cuda_graph_enable": "0"}},
     "shared"),
    (["SomeNewExecutionProvider", "CPUExecutionProvider"], None, "exclusive"),
])
def test_session_run_rule(providers: list[str], options: Any, run: str) -> None:
    rule = session_run_rule(providers, options)
    assert rule["run"] == run
    assert rule["providers"] == providers and len(rule["reasons"]) == len(providers)
    for p, why in zip(providers, rule["reasons"]):
        assert why.startswith(p)
    if options:
        key = next(iter(next(iter(options.values()))))
        assert (key in " ".join(rule["reasons"])) == (run == "exclusive")


def test_unknown_provider_reason() -> None:
    rule = session_run_rule(["SomeNewExecutionProvider"])
    assert "undocumented" in rule["reasons"][0] and "serialized by default" in rule["reasons"][0]


def test_session_thread_rules_for_cpu() -> None:
    with ortc.Session(models.add_model(), intra_op_num_threads=1) as s:
        rules = s.thread_rules()
        assert rules["run"] == "shared" and rules["providers"] == ["CPUExecutionProvider"]
        assert "CPUExecutionProvider: concurrent" in rules["reasons"][0]
        assert s._run_exclusive is False


def test_session_thread_rules_in_a_child_with_a_patched_table() -> None:
    """The session reads the table at creation: a provider marked exclusive makes its run
    exclusive (checked in a child so the module table stays untouched here)."""
    code = r'''
import sys, numpy as np, ortc, models
sys.modules["ortc.providers"].EP_CONCURRENT_RUN["CPUExecutionProvider"] = (False, "pretend")
s = ortc.Session(models.add_model(), intra_op_num_threads=1)
assert s.thread_rules()["run"] == "exclusive" and s._run_exclusive
a = np.ones(1, np.float32)
assert s.run(None, {"a": a, "b": a})[0].tolist() == [2.0]
print("ok")
'''
    proc = run_python(code)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_a_session_follows_the_table_as_it_is_when_the_session_is_made(monkeypatch) -> None:
    """The answer for providers without options is kept per name tuple (a session per call
    asks it every time), and must still follow the table: a session made after a row changed
    (an item set, the table replaced, a version gate added) was shared by a kept answer while
    its own thread_rules() said exclusive (tests/test_threads.py's exclusive-run test passed
    alone and failed after any other session's run)."""
    import ortc.providers as providers

    a = np.ones(1, np.float32)

    def made() -> ortc.Session:
        s = ortc.Session(models.add_model(), intra_op_num_threads=1)
        assert s.run(None, {"a": a, "b": a})[0].tolist() == [2.0]
        assert s._run_exclusive is (s.thread_rules()["run"] == "exclusive")
        return s

    assert made()._run_exclusive is False  # the answer is kept from here on
    monkeypatch.setitem(providers.EP_CONCURRENT_RUN, "CPUExecutionProvider", (False, "pretend"))
    assert made()._run_exclusive is True
    monkeypatch.undo()
    assert made()._run_exclusive is False
    monkeypatch.setattr(providers, "EP_CONCURRENT_RUN",
                        {**providers.EP_CONCURRENT_RUN,
                         "CPUExecutionProvider": (False, "a new table")})
    assert made()._run_exclusive is True
    monkeypatch.undo()
    monkeypatch.setitem(providers.MIN_CONCURRENT_VERSION, "CPUExecutionProvider",
                        ((999, 0), "pretend"))
    assert made()._run_exclusive is True
    monkeypatch.undo()
    assert made()._run_exclusive is False


def test_run_rule_is_exported_in_rules_module() -> None:
    assert EP_CONCURRENT_RUN["CPUExecutionProvider"][0] is True
    assert EP_CONCURRENT_RUN["DmlExecutionProvider"][0] is False
    assert np.all([isinstance(v[1], str) and v[1] for v in EP_CONCURRENT_RUN.values()])


@pytest.mark.parametrize("version, run", [("1.16.2", "exclusive"), ("1.16.3", "exclusive"),
                                          ("1.17.0", "shared"), ("1.32.0", "shared")])
def test_tensorrt_concurrent_run_needs_ort_1_17(version: str, run: str) -> None:
    """TensorRT's concurrent-Run fix shipped in 1.17 (PR 19301): with an older library a
    TensorRT session's run is exclusive, and the reason names the version."""
    rule = session_run_rule(["TensorrtExecutionProvider", "CPUExecutionProvider"],
                                      None, version)
    assert rule["run"] == run
    assert ("before ORT 1.17" in rule["reasons"][0]) == (run == "exclusive")


def test_session_rule_reads_the_loaded_library_version(monkeypatch: Any) -> None:
    from ortc import _loader

    info = _loader.library_info()
    monkeypatch.setattr(_loader, "library_info", lambda: type(info)(
        **{**{n: getattr(info, n) for n in info.__slots__}, "version": "1.16.2"}))
    assert session_run_rule(["TensorrtExecutionProvider"])["run"] == "exclusive"


# -- what differs by ORT version, from the committed matrix ----------------------------------

def _version_answer(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("- By ORT version"))


def test_version_answer_names_every_check_whose_outcome_changes() -> None:
    """'Every other check has one outcome on all versions' was hand-written while ten other
    checks changed outcome with the version: the answer now names each such check of the
    committed matrix, and no other."""
    versions, rows = conformance_matrix()
    answer = _version_answer(rules_render.render_markdown())
    changing = {cid for cid, cells in rows.items()
                if len(set(cells) - {"skip", "–", "not seen"}) > 1}
    assert {"env.fork-child-exits", "run.kernel-shape-error", "device.selection-delegate",
            "alloc.env-registered", "kernel.scratch-buffer"} <= changing
    named = set(re.findall(r"\[`([\w.-]+)`\]\(CONFORMANCE\.md#", answer))
    assert named == changing
    assert f"{len(changing)} checks" in answer
    assert "Every other check in [CONFORMANCE.md](CONFORMANCE.md) has one outcome" in answer
    assert "[`env.fork-child-exits`](CONFORMANCE.md#envfork-child-exits) (pass on " \
           f"{versions[0]}-1.28.0, known on 1.29.0-{versions[-1]})" in answer


def test_version_answer_follows_the_matrix_file(tmp_path: Any) -> None:
    """Computed, not kept by hand: another matrix gives another answer; without one the
    answer points at CONFORMANCE.md and claims nothing."""
    path = tmp_path / "CONFORMANCE.md"
    path.write_text("| check | 1.20.1 | 1.21.1 | 1.22.1 |\n|---|---|---|---|\n"
                    "| `a.same` | pass | pass | pass |\n"
                    "| `b.changes` | skip | known | pass |\n"
                    "| `c.race` | known | not seen | known |\n", encoding="utf-8")
    answer = _version_answer(rules_render.render_markdown(str(path)))
    assert "1 checks" in answer and "(known on 1.21.1, pass on 1.22.1)" in answer
    assert "a.same" not in answer and "c.race" not in answer
    gone = _version_answer(rules_render.render_markdown(str(tmp_path / "missing.md")))
    assert "one outcome" not in gone and "CONFORMANCE.md" in gone


def test_evidence_lines_show_the_other_versions_outcomes() -> None:
    """A record that relies on 'pass on 1.23.2-1.32.0' no longer hides the 'known' of an
    older version in the Markdown."""
    md = rules_render.render_markdown()
    assert "(CONFORMANCE.md#devicecpu-ep-device); pass on 1.23.2-1.32.0; known on 1.22.1)" in md
    assert ("(CONFORMANCE.md#lifebinding-after-session-release); known on 1.16.2-1.32.0)"
            in md)
    # no evidence line ends at "pass on 1.23.2-1.32.0" while 1.22.1 had an outcome: each
    # names what 1.22.1 did (a check whose slots 1.22.1 lacks has nothing more to say)
    versions, rows = conformance_matrix()
    old = versions.index("1.22.1")
    ends = re.findall(r"\[`([\w.-]+)`\]\(CONFORMANCE\.md#[\w-]+\); pass on "
                      r"1\.23\.2-1\.32\.0\)", md)
    for cid in ends:
        assert cid not in rows or rows[cid][old] in ("skip", "–", "not seen"), cid
