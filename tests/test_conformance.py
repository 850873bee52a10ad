"""The conformance kit: the suite on the newest (in process) and oldest (child) library, the JSON
the runner writes, crash checks recorded with their signal, the hand-written ONNX models, slot
coverage, the matrix report, and ``build_ffi.py --compare``."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys

import onnx
import pytest

from ortc.conformance import _registry, coverage, models
from ortc.conformance.checks import all_checks
from ortc.conformance.wheels import fetch_library

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLDEST = "1.16.2"  # the oldest library in the matrix (from a sherpa-onnx wheel: ortc.conformance.wheels)
KEYS = {"id", "claim", "status", "evidence", "seconds", "detail"}


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT
    env.pop("ORTC_LIBRARY", None)
    env.update(extra)
    return env


def _cli(*args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ortc", "conformance", *args],
                          capture_output=True, text=True, env=_env(**env), timeout=timeout,
                          cwd=ROOT)


def _fails(results: list[dict[str, object]]) -> list[str]:
    return [f"{r['id']}: {r['detail']}" for r in results if r["status"] == "fail"]


def test_registry_declares_enough_well_formed_checks() -> None:
    checks = all_checks()
    assert len(checks) >= 60
    assert len({c.id for c in checks}) == len(checks)
    for c in checks:
        assert c.id and c.evidence and c.claim.endswith("."), c.id
        assert ":" in c.test and callable(c.func), c.id
        assert not c.crash or c.child, c.id
    families = {c.id.split(".")[0] for c in checks}
    assert {"ver", "env", "create", "run", "value", "life", "thread", "binding",
            "kernel"} <= families


def test_suite_in_process_has_no_unexpected_failure() -> None:
    from ortc.conformance.runner import run_checks

    results = [r.to_json() for r in run_checks(all_checks())]
    assert not _fails(results)
    assert {r["status"] for r in results} <= set(_registry.STATUSES)
    by_id = {r["id"]: r for r in results}
    # the hazards binding authors must know about stay visible on the installed (newest) library
    assert by_id["status.ok-is-null"]["status"] == "known"
    assert by_id["typeinfo.cast-wrong-kind"]["status"] == "known"
    # from 1.22 a lower-rank SetDimensions keeps the old rank (then fails the element count)
    lower = by_id["typeinfo.set-dimensions-lower-rank"]
    assert lower["status"] == "known" and "reads [5, -1, -1]" in lower["detail"], lower
    # decided the same way on every run (a barrier forces the interleaving; poisoned memory)
    assert by_id["thread.shared-binding"]["status"] == "known"
    assert by_id["life.binding-after-session-release"]["status"] == "known"


def test_cli_json_schema_and_crash_signals(tmp_path) -> None:
    out = tmp_path / "r.json"
    md = tmp_path / "r.md"
    proc = _cli("--only", "value.empty-optional", "--only", "env.run-after-last-release",
                "--only", "status.", "--json", str(out), "--markdown", str(md))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert {"path", "version", "api_version"} <= set(data["library"])
    assert data["checks"] and all(KEYS <= set(c) for c in data["checks"])
    crash_ids = {c.id for c in all_checks() if c.crash}
    crashed = [c for c in data["checks"] if c["id"] in crash_ids]
    assert crashed
    for c in crashed:
        assert c["status"] in ("known", "pass"), c
        if c["status"] == "known":
            assert "killed by SIG" in c["detail"], c
    # GetValueType on an empty optional output segfaults on the installed library
    gvt = next(c for c in data["checks"] if c["id"] == "value.empty-optional-getvaluetype")
    assert gvt["status"] == "known" and "SIGSEGV" in gvt["detail"]
    assert "| `status.roundtrip` | pass |" in md.read_text()
    # the table has a row per check
    assert "value.empty-optional-getvaluetype" in proc.stdout


def test_oldest_library_has_no_unexpected_failure(tmp_path) -> None:
    lib = fetch_library(OLDEST)
    out = tmp_path / "old.json"
    proc = _cli("--library", lib, "--json", str(out), "--quiet")
    data = json.loads(out.read_text())
    assert data["library"]["version"] == OLDEST
    assert not _fails(data["checks"]), proc.stderr[-2000:]
    assert proc.returncode == 0
    skipped = [c for c in data["checks"] if c["status"] == "skip"]
    assert skipped and all("needs API" in c["detail"] for c in skipped)


def test_unexpected_failure_sets_the_exit_status(monkeypatch, capsys) -> None:
    from ortc.conformance import cli

    def broken(_ctx: object) -> str:
        raise _registry.Fail("on purpose")

    def lacking(_ctx: object) -> str:
        return "never run"

    extra = [_registry.Check("zz.broken", "A check that fails.", "https://example.org/claim",
                             broken),
             _registry.Check("zz.lacking", "A check needing a slot from the future.", "none",
                             lacking, slots=("KernelContext_GetPreallocatedOutput",))]
    monkeypatch.setattr(_registry, "CHECKS", _registry.CHECKS + extra)
    import ortc.conformance.checks as checks_pkg
    monkeypatch.setattr(checks_pkg, "CHECKS", _registry.CHECKS)
    capsys.readouterr()
    assert cli.main(["--only", "zz.broken", "--quiet"]) == 1
    # even --quiet says which check failed, what happened and what its claim rests on (the
    # summary line alone left a build's shipper with an exit status 1 and no id)
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["FAIL zz.broken: on purpose", "  claim: A check that fails.",
                       "  evidence: https://example.org/claim"] and len(out) == 4, out
    assert re.fullmatch(r"1 checks in [\d.]+ s: 0 pass, 1 fail, 0 known, 0 not-seen, 0 skip",
                        out[3]), out
    assert cli.main(["--only", "zz.broken"]) == 1
    table = capsys.readouterr().out
    assert re.search(r"^zz\.broken +FAIL ", table, re.M) and \
        "\nFAIL zz.broken: on purpose\n" in table, table
    assert cli.main(["--only", "zz.lacking", "--quiet"]) == 0
    assert "FAIL" not in capsys.readouterr().out
    from ortc.conformance.runner import run_one
    res = run_one(extra[1])
    from ortc._loader import api
    assert res.status == ("skip" if api().version < 30 else "pass")


def test_models_are_valid_onnx() -> None:
    built = {
        "identity": models.identity_model(models.FLOAT),
        "transpose4": models.identity_model(22, op="Transpose", perm=[0, 1]),
        "add": models.add_model(), "mlp": models.mlp_model(), "chain": models.chain_model(3, 8),
        "loop": models.loop_model(),
        "optional": models.optional_out_model(), "metadata": models.metadata_model(),
        "overridable": models.overridable_model(), "type_error": models.type_error_model(),
        "sequence": models.sequence_model(),
        "custom": models.custom_op_model({"factor": 2, "bias": 0.5, "label": "x",
                                          "ints": [1, 2], "floats": [1.5], "words": ["a"],
                                          "table": ("tensor", models.tensor(
                                              "t", models.FLOAT, [1], b"\0\0\x80?"))}),
    }
    for name, data in built.items():
        m = onnx.load_from_string(data)
        if name != "custom":
            onnx.checker.check_model(m)
    meta = onnx.load_from_string(built["metadata"])
    assert (meta.graph.name, meta.model_version, meta.domain) == ("conformance_graph", 7,
                                                                  "org.ortc.test")
    assert {p.key: p.value for p in meta.metadata_props} == {"author": "ortc",
                                                             "purpose": "conformance"}
    custom = onnx.load_from_string(built["custom"]).graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in custom.attribute}
    assert attrs["ints"] == [1, 2] and attrs["floats"] == [1.5] and attrs["words"] == [b"a"]
    # the C enum and ONNX number the 2-bit and E8M0 types differently
    assert models.onnx_type(24) == onnx.TensorProto.UINT2
    assert models.onnx_type(26) == onnx.TensorProto.FLOAT8E8M0


def test_children_record_slot_coverage(tmp_path) -> None:
    path = tmp_path / "slots.jsonl"
    proc = _cli("--only", "status.roundtrip", "--only", "status.release-null", "--quiet",
                ORTC_SLOT_COVERAGE=str(path))
    assert proc.returncode == 0, proc.stderr
    names = coverage.read(str(path))
    assert {"CreateStatus", "GetErrorCode", "ReleaseStatus", "ReleaseValue"} <= names
    rep = coverage.report(names, 29)
    assert rep["covered"] >= 4 and rep["applicable"] + len(rep["not_on_cpu"]) == rep["total"]
    assert "CreateStatus" not in rep["missing"]


def test_matrix_report_renders_rows_and_versions() -> None:
    from ortc.conformance.cli import render_matrix

    runs = {"1.19.2": {"seconds": 1.0, "checks": [
                {"id": "ver.version-string", "status": "pass", "detail": "a"},
                {"id": "status.ok-is-null", "status": "known", "detail": "b"}]},
            "1.20.1": {"error": "cannot fetch"}}
    text = render_matrix(runs, coverage.report({"CreateStatus"}, 29))
    assert "| check | 1.19.2 | 1.20.1 |" in text
    assert "| `ver.version-string` | pass | – |" in text
    assert "1.20.1: not run (cannot fetch)" in text
    assert "## OrtApi slot coverage" in text


def test_reports_keep_ort_text_that_looks_like_markdown() -> None:
    """ORT's messages and C++ signatures (``seq<float>``, ``std::allocator<OrtValue>``,
    ``operator[](size_type)``) reach the Markdown reports as text: a ``<name>`` read as an HTML
    tag vanished from the rendered page, ``[](x)`` became an empty link."""
    from ortc.conformance.cli import _plain, render_markdown, render_matrix

    detail = "seq<float>; std::vector<OrtValue>::operator[](size_type) | `map<a, b>`"
    runs = {"1.32.0": {"seconds": 1.0, "checks": [
        {"id": "typeinfo.sequence-optional-map", "status": "pass", "detail": detail}]}}
    text = render_matrix(runs)
    want = "seq\\<float>; std::vector\\<OrtValue>::operator[]\\(size_type) \\| `map<a, b>`"
    assert f"- 1.32.0: pass: {want}" in text, text
    lib = {"version": "1.32.0", "path": "/x/libonnxruntime.so", "api_version": 32}
    one = render_markdown({"library": lib, "checks": [
        {"id": "x.y", "status": "fail", "seconds": 0.0, "claim": "c", "detail": detail}]})
    assert f"| `x.y` | **FAIL** | 0.00 | c | {want} |" in one
    assert _plain("[text](not a link)") == "[text]\\(not a link)"
    assert _plain("`code <x>`") == "`code <x>`"


def _official_style_header(slots: list[tuple[str, int]], api_version: int) -> str:
    """A header in the style of onnxruntime_c_api.h, written here from ortc's slot list."""
    lines = [f"#define ORT_API_VERSION {api_version}", "struct OrtApi;",
             "typedef struct OrtApi OrtApi;", "struct OrtApi {"]
    for i, (name, since) in enumerate(slots):
        doc = f"  /** \\brief Slot {i}.\n   *\n   * \\since Version 1.{since}.\n   */"
        if i % 7 == 3:
            doc = "  /// a slot documented without a version"
        lines.append(doc)
        if i == 5:
            lines.append("  /* commented out: ORT_API2_STATUS(NotASlot, _In_ int x); */")
        if name.startswith("Release") and i % 2:
            lines.append(f"  ORT_CLASS_RELEASE({name[len('Release'):]});")
        elif i % 5 == 1:
            lines.append(f"  const char*(ORT_API_CALL* {name})(_In_ const OrtValue* v)"
                         " NO_EXCEPTION;")
        elif i % 5 == 2:
            lines.append(f"  ORT_API_T(const char*, {name}, _In_ const OrtEpDevice* d);")
        else:
            lines.append(f"  ORT_API2_STATUS({name}, _In_ const OrtSession* s,\n"
                         f"                  _Out_ size_t* out);")
    lines.append("};")
    return "\n".join(lines) + "\n"


def _compare(header: str, tmp_path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "onnxruntime_c_api.h"
    path.write_text(header)
    return subprocess.run([sys.executable, os.path.join(ROOT, "build_ffi.py"), "--compare",
                           str(path)], capture_output=True, text=True, env=_env(), cwd=ROOT)


def test_build_ffi_compare_reports_matches_and_mismatches(tmp_path) -> None:
    from ortc._slots import SLOTS

    slots = list(SLOTS)
    same = _compare(_official_style_header(slots, max(v for _, v in slots)), tmp_path)
    assert same.returncode == 0, same.stdout
    assert "0 mismatches" in same.stdout
    # an older header: ortc's newer slots are notes, not mismatches
    older = [s for s in slots if s[1] <= 29]
    assert _compare(_official_style_header(older, 29), tmp_path).returncode == 0
    # swapped order and a wrong since-version are reported, by slot index and name
    bad = list(slots)
    bad[10], bad[11] = bad[11], bad[10]
    bad[40] = (bad[40][0], bad[40][1] + 1)
    proc = _compare(_official_style_header(bad, max(v for _, v in slots)), tmp_path)
    assert proc.returncode == 1
    assert f"slot 10: ortc declares {slots[10][0]}, the official header {slots[11][0]}" \
        in proc.stdout
    assert f"slot 40 {slots[40][0]}: since API {slots[40][1]} in ortc" in proc.stdout
    # a header missing a slot ortc declares for an API it covers
    short = _compare(_official_style_header(slots[:-30], max(v for _, v in slots)), tmp_path)
    assert short.returncode == 1 and "the official table ends" in short.stdout


def test_list_names_every_check() -> None:
    proc = _cli("--list", timeout=60)
    assert proc.returncode == 0
    listed = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert listed == {c.id for c in all_checks()}


def test_matrix_runner_survives_a_crashing_in_process_check(tmp_path) -> None:
    from ortc._loader import api
    from ortc.conformance.cli import _run_version

    (tmp_path / "crashing_checks.py").write_text(
        "import os, signal\n"
        "from ortc.conformance._registry import check\n"
        "@check('zz.crash-in-process', 'A check that kills its process.', 'none')\n"
        "def crash(ctx):\n"
        "    os.kill(os.getpid(), signal.SIGSEGV)\n"
        "@check('zz.after-the-crash', 'A check after it.', 'none')\n"
        "def after(ctx):\n"
        "    return 'ran'\n")
    old = dict(os.environ)
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{tmp_path}"
    os.environ["ORTC_CONFORMANCE_PLUGINS"] = "crashing_checks"
    try:
        import importlib
        sys.path.insert(0, str(tmp_path))
        importlib.import_module("crashing_checks")  # the parent needs the id too
        ids = ["status.roundtrip", "zz.crash-in-process", "zz.after-the-crash"]
        run = _run_version(api().info.path, ids=ids)
    finally:
        os.environ.clear()
        os.environ.update(old)
        sys.path.remove(str(tmp_path))
        _registry.CHECKS[:] = [c for c in _registry.CHECKS if not c.id.startswith("zz.")]
        _registry._IDS.difference_update({"zz.crash-in-process", "zz.after-the-crash"})
    got = {c["id"]: c for c in run["checks"]}
    assert got["zz.crash-in-process"]["status"] == "fail"
    assert "died during this check" in got["zz.crash-in-process"]["detail"]
    assert got["status.roundtrip"]["status"] == "pass"
    assert got["zz.after-the-crash"]["detail"] == "ran"  # by the restarted runner


HANGING_CHECKS = (
    "import time\n"
    "from ortc.conformance._registry import check\n"
    "@check('zz.before-the-hang', 'A check before it.', 'none')\n"
    "def before(ctx):\n"
    "    return 'ran'\n"
    "@check('zz.hang-in-process', 'A check that never returns.', 'none', timeout=2.0)\n"
    "def hang(ctx):\n"
    "    time.sleep(3600)\n"
    "@check('zz.after-the-hang', 'A check after it.', 'none')\n"
    "def after(ctx):\n"
    "    return 'ran'\n")
HANGING_IDS = ("zz.before-the-hang", "zz.hang-in-process", "zz.after-the-hang")


def test_matrix_runner_survives_a_hung_in_process_check(tmp_path) -> None:
    """An in-process check that never returns is not waited for: the runner's watchdog records
    it as a failure after the check's timeout and ends the runner, and the matrix restarts a
    runner on the checks after it."""
    import time

    from ortc._loader import api
    from ortc.conformance.cli import _run_version
    from ortc.conformance.runner import HUNG

    (tmp_path / "hanging_checks.py").write_text(HANGING_CHECKS)
    old = dict(os.environ)
    os.environ["PYTHONPATH"] = f"{ROOT}{os.pathsep}{tmp_path}"
    os.environ["ORTC_CONFORMANCE_PLUGINS"] = "hanging_checks"
    t0 = time.monotonic()
    try:
        import importlib
        sys.path.insert(0, str(tmp_path))
        importlib.import_module("hanging_checks")  # the parent needs the ids too
        run = _run_version(api().info.path, ids=list(HANGING_IDS), runner_timeout=120)
    finally:
        os.environ.clear()
        os.environ.update(old)
        sys.path.remove(str(tmp_path))
        sys.modules.pop("hanging_checks", None)
        _registry.CHECKS[:] = [c for c in _registry.CHECKS if not c.id.startswith("zz.")]
        _registry._IDS.difference_update(HANGING_IDS)
    assert time.monotonic() - t0 < 60
    got = {c["id"]: c for c in run["checks"]}
    assert got["zz.hang-in-process"]["status"] == "fail"
    assert got["zz.hang-in-process"]["detail"].startswith(f"{HUNG} 2 s")
    assert got["zz.before-the-hang"]["detail"] == "ran"
    assert got["zz.after-the-hang"]["detail"] == "ran"  # by the restarted runner


def test_a_hung_check_ends_a_run_with_its_report(tmp_path) -> None:
    """Run on one library, a hung in-process check ends the run after its timeout with the
    report of what ran (the hung check a failure, exit status 1), not a wait for ever."""
    (tmp_path / "hanging_checks.py").write_text(HANGING_CHECKS)
    out = tmp_path / "r.json"
    proc = _cli("--only", "zz.", "--json", str(out), timeout=60,
                PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}",
                ORTC_CONFORMANCE_PLUGINS="hanging_checks")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 checks not run: the last one hung" in proc.stdout
    assert re.search(r"^zz\.hang-in-process +FAIL ", proc.stdout, re.M), proc.stdout
    got = {c["id"]: c for c in json.loads(out.read_text())["checks"]}
    assert set(got) == {"zz.before-the-hang", "zz.hang-in-process"}
    assert got["zz.hang-in-process"]["status"] == "fail"


def test_a_checks_own_threads_are_waited_for_a_bounded_time() -> None:
    import threading
    import time


    from ortc.conformance._capi import join_all

    release = threading.Event()
    t = threading.Thread(target=release.wait, daemon=True)
    t.start()
    t0 = time.monotonic()
    with pytest.raises(_registry.Fail, match="1 of 1 threads still running after 0 s"):
        join_all([t], 0.2)
    assert time.monotonic() - t0 < 5
    release.set()
    join_all([t], 5)


def test_a_use_after_release_reads_poison_in_a_child(tmp_path) -> None:
    """The lifetime checks poison freed memory in their child (never in the runner's process):
    on 1.16.2 an IoBinding used after its session's release returned an error, crashed or spun
    for ever from one run to the next; with the poison it crashes every time."""
    from ortc.conformance._capi import Ctx

    assert Ctx().poison_freed_memory() is False
    lib = fetch_library(OLDEST)
    for n in range(3):
        out = tmp_path / f"r{n}.json"
        proc = _cli("--library", lib, "--only", "life.binding-after-session-release",
                    "--quiet", "--json", str(out), timeout=120)
        assert proc.returncode == 0, proc.stderr
        (res,) = json.loads(out.read_text())["checks"]
        assert res["status"] == "known" and "SIGSEGV" in res["detail"], res
        assert "freed memory poisoned" in res["detail"], res


def test_every_report_names_the_library_it_checked(tmp_path) -> None:
    import ortc

    info = ortc.load()
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    proc = _cli("--only", "status.roundtrip", "--json", str(out), "--markdown", str(md),
                "--library", info.path)
    assert proc.returncode == 0, proc.stderr
    head = proc.stdout.splitlines()[:3]
    assert head[0] == f"Library checked: {info.path}", head
    assert head[1].startswith(f"ONNX Runtime {info.version}, API {info.api_version}") \
        and head[1].endswith("chosen by: explicit"), head
    assert head[2] == f"Build: {info.build_info}" and info.build_info, head
    lib = json.loads(out.read_text())["library"]
    assert (lib["path"], lib["version"], lib["build_info"], lib["source"]) == (
        info.path, info.version, info.build_info, "explicit")
    text = md.read_text()
    assert f"Library `{info.path}`" in text and info.build_info in text


def test_a_library_that_cannot_be_loaded_is_a_one_line_error(tmp_path) -> None:
    # never a fallback to the library a search would find (that would check the wrong one);
    # a library that does not exist exits 2, one that does not load 1, however it was named
    (tmp_path / "garbage.so").write_bytes(b"\x7fELF garbage")
    garbage = str(tmp_path / "garbage.so")
    for args, env, code, want in (
            (["--library", "typo"], {}, 2, "--library typo: cannot load library 'typo'"),
            (["--library", str(tmp_path / "x.so")], {}, 2, f"{tmp_path / 'x.so'}: no such file"),
            ([], {"ORTC_LIBRARY": "/path/with/a/typo"}, 2,
             "ORTC_LIBRARY=/path/with/a/typo: /path/with/a/typo: no such file"),
            ([], {"ORTC_LIBRARY": "typo"}, 2, "ORTC_LIBRARY=typo: cannot load library 'typo'"),
            (["--library", garbage], {}, 1, f"--library {garbage}: cannot load library"),
            ([], {"ORTC_LIBRARY": garbage}, 1, f"ORTC_LIBRARY={garbage}: cannot load library")):
        proc = _cli("--only", "status.roundtrip", *args, **env)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.startswith("python -m ortc conformance: error: ") and want in proc.stderr, \
            proc.stderr


def test_matrix_report_default_path_of_an_installed_ortc(tmp_path, monkeypatch) -> None:
    """An installed ortc (site-packages/ortc) has no docs/CONFORMANCE.md beside it: the report
    goes to the current directory, not to a docs/ folder made in the Python installation."""
    from ortc.conformance import cli

    installed = tmp_path / "lib" / "python3.11"
    monkeypatch.setattr(cli, "_repo_root", lambda: str(installed))
    monkeypatch.chdir(tmp_path)
    assert cli.default_matrix_output() == str(tmp_path / "CONFORMANCE.md")
    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "docs" / "CONFORMANCE.md").write_text("# report\n")
    monkeypatch.setattr(cli, "_repo_root", lambda: str(checkout))
    assert cli.default_matrix_output() == str(checkout / "docs" / "CONFORMANCE.md")
    monkeypatch.undo()
    assert cli.default_matrix_output() == os.path.join(ROOT, "docs", "CONFORMANCE.md")


def test_a_matrix_of_some_versions_does_not_replace_the_checkouts_report(tmp_path,
                                                                         monkeypatch) -> None:
    """``--matrix 1.20.1`` in a checkout wrote its one column over docs/CONFORMANCE.md (every
    version's report); a matrix of some versions now writes CONFORMANCE-<versions>.md in the
    current directory, and only ``all`` (or the full list) writes the checkout's report."""
    from ortc.conformance import cli

    monkeypatch.chdir(tmp_path)
    assert cli.default_matrix_output(["1.20.1"]) == str(tmp_path / "CONFORMANCE-1.20.1.md")
    assert cli.default_matrix_output(["1.19.2", "1.32.0"]) == str(
        tmp_path / "CONFORMANCE-1.19.2_1.32.0.md")
    assert cli.default_matrix_output(list(cli.MATRIX_VERSIONS)) == os.path.join(
        ROOT, "docs", "CONFORMANCE.md")


def test_a_matrix_of_some_checks_does_not_replace_the_checkouts_report(tmp_path,
                                                                      monkeypatch) -> None:
    """``--matrix all --only thread.`` wrote the rows of the thread checks alone over
    docs/CONFORMANCE.md, the report of every check; with ``--only`` the report goes to
    CONFORMANCE-<versions>-only-<prefixes>.md in the current directory."""
    from ortc.conformance import cli

    monkeypatch.chdir(tmp_path)
    assert cli.default_matrix_output(list(cli.MATRIX_VERSIONS), ["thread."]) == str(
        tmp_path / "CONFORMANCE-all-only-thread.md")
    assert cli.default_matrix_output(["1.20.1"], ["thread.", "life."]) == str(
        tmp_path / "CONFORMANCE-1.20.1-only-thread_life.md")


def test_a_race_not_seen_is_reported_apart_from_pass() -> None:
    """A check that provokes a race and does not see it ends in ``not seen``, which the matrix
    shows as such (not as ``pass``, read as "safe in this version"), counts in its own column
    and does not fail the run."""
    from ortc.conformance import cli
    from ortc.conformance._registry import STATUSES, NotSeen

    assert NotSeen("x").status == "not-seen" and "not-seen" in STATUSES
    check = {"id": "thread.shared-binding", "claim": "c", "status": "not-seen", "evidence": "e",
             "seconds": 1.0, "test": "t", "detail": "no wrong result in 1600 runs"}
    run = {"library": {}, "seconds": 1.0, "checks": [check]}
    text = cli.render_matrix({"1.19.2": run})
    assert "| `thread.shared-binding` | not seen |" in text
    assert "| version | seconds | pass | known | not seen | skip | fail |" in text
    assert "| 1.19.2 | 1.0 | 0 | 0 | 1 | 0 | 0 |" in text
    assert "- 1.19.2: not seen: no wrong result in 1600 runs" in text


def test_matrix_of_a_version_without_a_source_names_the_sources(tmp_path) -> None:
    """``--matrix 1.17.3`` failed with '... has no libonnxruntime.so' and no hint, while the
    report said 1.16 and 1.17 come from sherpa-onnx (only 1.16.2 and 1.17.1 do). It is known
    before any download (no network here): refused up front, a usage error, with nothing
    fetched and no report, even after a version that could be fetched."""
    out = tmp_path / "m.md"
    for spec, v in (("1.17.3,1.18.1", "1.17.3"), ("1.20.1,1.18.1", "1.18.1")):
        proc = subprocess.run([sys.executable, "-m", "ortc", "conformance", "--matrix", spec,
                               "--output", str(out)], capture_output=True, text=True,
                              env=dict(_env(), ORTC_LIB_CACHE=str(tmp_path / "cache")),
                              cwd=str(tmp_path), timeout=120)
        assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
        [line] = proc.stderr.splitlines()
        assert line.startswith("python -m ortc conformance: error: --matrix: the onnxruntime "
                               f"{v} wheel has no libonnxruntime.so"), line
        assert "1.16.2, 1.17.1" in line, line
    assert not out.exists() and not (tmp_path / "cache").exists()
    text = cli_render_with_error()
    assert "for 1.16.2 and 1.17.1, whose onnxruntime wheels" in text
    from ortc.conformance import wheels

    assert wheels.no_source("1.17.1") is None and wheels.no_source("1.20.1") is None
    # README said the status is non-zero only when a check fails; a failed fetch exits 1
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = " ".join(f.read().split())
    assert "non-zero only when a check fails" not in readme
    assert "with `--matrix` also when a version's library cannot be fetched" in readme


def cli_render_with_error() -> str:
    from ortc.conformance.cli import render_matrix

    return render_matrix({"1.20.1": {"error": "cannot fetch: x"}})


def test_matrix_honours_only_and_names_its_command(tmp_path, monkeypatch, capsys) -> None:
    """--only was ignored with --matrix (every check ran), and every report said it was made
    by '--matrix all --coverage FILE'. The checks are filtered in each version's runner and
    the report's rows, and the report names the command that made it."""
    import ortc
    from ortc.conformance import cli, wheels

    monkeypatch.setattr(wheels, "fetch_library",
                        lambda v, progress=False: ortc.version().library_path)
    out = tmp_path / "m.md"
    code = cli.main(["--matrix", "9.99.0", "--only", "ver.version", "--only", "status.ok",
                     "--output", str(out)])
    assert code == 0, capsys.readouterr()
    text = out.read_text()
    rows = re.findall(r"^\| `([\w.-]+)` \|", text, re.M)
    assert rows and all(r.startswith(("ver.version", "status.ok")) for r in rows), rows
    assert ("Generated by `python -m ortc conformance --matrix 9.99.0 --only ver.version "
            "--only status.ok --output " + str(out) + "`") in text
    assert "--matrix all --coverage FILE" not in text


TRACKER_IDS = ("thread.release-session-during-run", "thread.short-lived-threads-memory",
               "thread.create-with-custom-op-domain", "thread.env-allocator-two-sessions",
               "kernel.overlapping-compute", "device.selection-delegate-concurrent")


def test_issue_tracker_checks_on_the_installed_library(tmp_path) -> None:
    """The checks of what users hit in ORT's tracker decide the same way on every run of the
    installed library: the concurrency they count is forced by a gauge that waits for the
    other threads, the release during Run is a crash in a child, and the custom-op-domain
    race is either seen (with ORT's own message) or reported apart from pass."""
    out = tmp_path / "t.json"
    args = [a for i in TRACKER_IDS for a in ("--only", i)]
    proc = _cli(*args, "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {c["id"]: c for c in json.loads(out.read_text())["checks"]}
    assert set(got) == set(TRACKER_IDS)
    release = got["thread.release-session-during-run"]
    assert release["status"] == "known" and "killed by SIG" in release["detail"], release
    # the child dies after ReleaseSession returned (while the Run goes on in freed memory), or
    # inside ReleaseSession itself: ORT frees what the Run is using either way
    assert "ReleaseSession returned after" in release["detail"] or \
        "after step: ReleaseSession" in release["detail"], release
    memory = got["thread.short-lived-threads-memory"]
    assert memory["status"] == "pass" and "bound 4096 B" in memory["detail"], memory
    race = got["thread.create-with-custom-op-domain"]
    assert race["status"] in ("known", "not-seen"), race
    if race["status"] == "known":
        assert "DomainToVersion" in race["detail"], race
    assert got["thread.env-allocator-two-sessions"]["status"] == "pass"
    compute = got["kernel.overlapping-compute"]
    assert compute["status"] == "pass" and "both Runs" in compute["detail"], compute
    delegate = got["device.selection-delegate-concurrent"]
    assert delegate["status"] == "pass" and delegate["detail"].startswith(
        "4 of 4 creating threads were inside the delegate at once"), delegate


def test_gauge_tells_overlap_from_serialized_calls() -> None:
    """The gauge the tracker checks count with: threads entering together are all counted
    inside at once; calls made one after another count one, each waiting its hold time."""
    import threading

    from ortc.conformance.checks.tracker import _Gauge

    together = _Gauge(want=3, hold=5.0)

    def enter() -> None:
        with together:
            pass

    ts = [threading.Thread(target=enter) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert (together.most, together.entries, together.inside) == (3, 3, 0)
    alone = _Gauge(want=2, hold=0.05)
    for _ in range(3):
        with alone:
            pass
    assert (alone.most, alone.entries, alone.inside) == (1, 3, 0)


def test_matrix_report_names_each_library_its_source_and_hash(tmp_path) -> None:
    """Each column of the report is traced to its bytes: the library file, the wheel (and the
    member in it) it was extracted from, and the sha256 of both. A library with no record
    beside it, or a record about other bytes, is said to be unrecorded, with its own hash."""
    import hashlib

    from ortc.conformance.cli import render_matrix
    from ortc.conformance.wheels import SOURCE_FILE, provenance

    folder = tmp_path / "onnxruntime-9.9.9"
    folder.mkdir()
    lib = folder / "libonnxruntime.so.9.9.9"
    lib.write_bytes(b"not really a library")
    digest = hashlib.sha256(b"not really a library").hexdigest()
    assert provenance("9.9.9", str(lib), backfill=False)["wheel"] == "unrecorded"
    record = {"package": "onnxruntime", "version": "9.9.9", "wheel": "onnxruntime-9.9.9.whl",
              "wheel_sha256": "ab" * 32, "member": "onnxruntime/capi/libonnxruntime.so.9.9.9",
              "file": lib.name, "sha256": digest, "index": "PyPI (pip download)"}
    (folder / SOURCE_FILE).write_text(json.dumps(record))
    origin = provenance("9.9.9", str(lib), backfill=False)
    assert origin["sha256"] == digest and origin["wheel"] == "onnxruntime-9.9.9.whl"
    lib.write_bytes(b"other bytes")  # the record no longer describes the file
    changed = provenance("9.9.9", str(lib), backfill=False)
    assert changed["wheel"] == "unrecorded"
    assert changed["sha256"] == hashlib.sha256(b"other bytes").hexdigest()
    text = render_matrix({"9.9.9": {"seconds": 1.0, "origin": origin, "checks": [
        {"id": "ver.version-string", "status": "pass", "detail": "a"}]},
        "9.9.8": {"seconds": 1.0, "origin": changed, "checks": []}})
    assert "## Libraries checked" in text
    assert (f"| 9.9.9 | `libonnxruntime.so.9.9.9` | `onnxruntime/capi/libonnxruntime.so.9.9.9` "
            f"in onnxruntime-9.9.9.whl (onnxruntime 9.9.9 from PyPI (pip download); wheel "
            f"sha256 `{'ab' * 32}`) | `{digest}` |") in text
    assert "| 9.9.8 | `libonnxruntime.so.9.9.9` | unrecorded" in text


def test_sub_table_lengths_on_the_installed_library(tmp_path) -> None:
    """The tables the installed library hands out are as long as the rules' rows (and the
    unnamed entries they declare) say for its API version, measured in the library itself."""
    out = tmp_path / "t.json"
    proc = _cli("--only", "ver.sub-table-lengths", "--json", str(out), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [check] = json.loads(out.read_text())["checks"]
    assert check["id"] == "ver.sub-table-lengths" and check["status"] == "pass", check
