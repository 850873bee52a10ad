"""``python -m ortc conformance``: run the checks on one library, or a version matrix.

    python -m ortc conformance [--library PATH] [--json FILE] [--markdown FILE] [--only PREFIX]
    python -m ortc conformance --matrix 1.19.2,1.32.0 [--output FILE] [--json FILE]
                               [--only PREFIX] [--coverage FILE]
    python -m ortc conformance --list

Exit status: 0 when every check passed or ended in a recorded state (known, not seen, skip);
1 when any check failed unexpectedly, or (--matrix) a version's library could not be fetched
or its runner died; 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any, Sequence

from ._registry import Result

__all__ = ["main", "MATRIX_VERSIONS", "render_markdown", "render_matrix"]

#: the newest patch of every minor release whose shared library PyPI carries: onnxruntime's
#: own wheels from 1.19; 1.16 and 1.17 from sherpa-onnx wheels (ortc.conformance.wheels.OTHER_SOURCES);
#: no PyPI wheel was found that carries a 1.18 libonnxruntime.so
MATRIX_VERSIONS = ("1.16.2", "1.17.1", "1.19.2", "1.20.1", "1.21.1", "1.22.1", "1.23.2", "1.24.4", "1.25.1",
                   "1.26.0", "1.27.0", "1.28.0", "1.29.0", "1.30.0", "1.31.1", "1.32.0")

#: an onnxruntime release number as --matrix takes it (1.19.2, or 1.19 for pip's newest 1.19)
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?")

_MARK = {"pass": "pass", "fail": "**FAIL**", "known": "known", "not-seen": "not seen",
         "skip": "skip"}


def _prog() -> str:
    from .._cmdline import prog

    return prog("conformance")


def _parser() -> argparse.ArgumentParser:
    from .._cmdline import _Parser

    ap = _Parser(prog=_prog(),
                                 description="Check what the ONNX Runtime C API does.")
    ap.add_argument("--library", help="libonnxruntime to test (default: ortc's usual search)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="write the results as a Markdown table")
    ap.add_argument("--only", action="append", default=[], metavar="PREFIX",
                    help="run only checks whose id starts with PREFIX (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the checks and exit")
    ap.add_argument("--quiet", action="store_true",
                    help="no progress line, header or table: only the summary line")
    ap.add_argument("--ids", metavar="FILE", help=argparse.SUPPRESS)  # matrix: ids to run
    ap.add_argument("--progress", metavar="FILE", help=argparse.SUPPRESS)  # matrix: JSON lines
    ap.add_argument("--matrix", metavar="VERSIONS",
                    help="comma-separated onnxruntime versions ('all' for 1.16..newest): fetch "
                         "each wheel's library and run the suite on it in a child process")
    ap.add_argument("--output", default=None, metavar="FILE",
                    help="with --matrix: the Markdown report (default for 'all': "
                         "docs/CONFORMANCE.md in an ortc checkout, else ./CONFORMANCE.md; for "
                         "some versions or with --only: ./CONFORMANCE-<versions>[-only-<prefixes>]"
                         ".md)")
    ap.add_argument("--coverage", metavar="FILE",
                    help="with --matrix: include the slot coverage recorded in FILE "
                         "(ORTC_SLOT_COVERAGE) in the report")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    argv_used = list(sys.argv[1:] if argv is None else argv)
    args = ap.parse_args(argv_used)
    # options of one mode given to the other were ignored without a word (found from outside)
    if args.matrix is not None:
        if args.list:
            ap.error("--list lists the checks of one library: without --matrix")
        # each version's library is fetched: an option about one library would be ignored
        for flag, value in (("--library", args.library), ("--markdown", args.markdown),
                            ("--quiet", args.quiet or None), ("--ids", args.ids),
                            ("--progress", args.progress)):
            if value is not None:
                ap.error(f"{flag} is not used with --matrix (the report is --output, "
                         "the data --json)")
        versions = matrix_versions(args.matrix)
        if not versions:
            ap.error(f"--matrix {args.matrix!r}: no version given (comma-separated versions, "
                     "or 'all')")
        # every version checked before the first download: a typo is not found after an
        # hour of other versions, and a version no wheel carries is not fetched at all
        from .wheels import no_source

        for v in versions:
            if not _VERSION.fullmatch(v):
                ap.error(f"--matrix: {v!r} is not an onnxruntime version (like 1.19.2; "
                         "comma-separated, or 'all')")
            why = no_source(v)
            if why is not None:
                ap.error(f"--matrix: {why}")
        ids = None
        if args.only:
            from .checks import all_checks

            ids = [c.id for c in all_checks() if any(c.id.startswith(p) for p in args.only)]
            if not ids:
                ap.error(f"--only {' '.join(args.only)}: no check matches")
        return _matrix(args, versions, ids, argv_used)
    for flag, value in (("--output", args.output), ("--coverage", args.coverage)):
        if value is not None:
            ap.error(f"{flag} goes with --matrix (without it: --json or --markdown)")
    from .. import _loader

    # the library under test: exactly --library (or ORTC_LIBRARY) when given, never another;
    # one that does not exist exits 2, one that does not load 1 (ortc._cmdline.run_command)
    if args.library:
        _loader.load(args.library, _how=f"--library {args.library}")
    from . import coverage
    from .checks import all_checks
    from .runner import library_dict, run_checks

    coverage.install_from_env()
    checks = [c for c in all_checks()
              if not args.only or any(c.id.startswith(p) for p in args.only)]
    if args.ids:
        with open(args.ids, encoding="utf-8") as f:
            wanted = set(f.read().split())
        checks = [c for c in checks if c.id in wanted]
    if args.list:
        for c in checks:
            print(f"{c.id:<44} {'[child] ' if c.child else ''}{c.claim}")
        return 0
    if not checks:
        print(f"{_prog()}: error: no check matches {args.only}", file=sys.stderr)
        return 2
    lib = library_dict()
    tty = sys.stderr.isatty() and not args.quiet

    def progress(i: int, n: int, chk: Any, res: Any) -> None:
        if args.progress:
            # one line before and one after each check: if this process dies, the parent
            # knows which check killed it and which results are in
            item = {"result": res.to_json()} if res else {"start": chk.id}
            with open(args.progress, "a", encoding="utf-8") as f:
                f.write(json.dumps(item) + "\n")
        if not tty:
            return
        line = f"[{i}/{n}] {chk.id}" + (f" {res.status}" if res else " ...")
        sys.stderr.write("\r\033[K" + line[:110])
        sys.stderr.flush()

    if not args.quiet:
        print(render_header(lib))
    t0 = time.perf_counter()

    def report(results: list[Any]) -> int:
        if tty:
            sys.stderr.write("\r\033[K")
        total = time.perf_counter() - t0
        data = {"library": lib, "seconds": round(total, 2),
                "checks": [r.to_json() for r in results]}
        if args.json:
            _write(args.json, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        if args.markdown:
            _write(args.markdown, render_markdown(data))
        coverage.flush()
        if not args.quiet:
            print(render_table(results))
        # --quiet drops the table, not the verdict: a failure is the verdict, so each one says
        # what happened and what the claim rests on (the table has only the claim, cut short)
        for r in results:
            if r.status == "fail":
                print(render_failure(r))
        counts = {s: sum(1 for r in results if r.status == s) for s in _MARK}
        print(f"{len(results)} checks in {total:.1f} s: " +
              ", ".join(f"{n} {s}" for s, n in counts.items()))
        if len(results) < len(checks):
            print(f"{len(checks) - len(results)} checks not run: the last one hung")
        return 1 if any(r.status == "fail" for r in results) else 0

    def hung(results: list[Any]) -> None:
        # a matrix runner (--progress) reports through its progress lines, and the matrix
        # restarts it on the checks after the hung one; an --json file would read as complete
        if not args.progress:
            report(results)

    return report(run_checks(checks, progress, hung))


def _write(path: str, text: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def render_header(lib: dict[str, Any]) -> str:
    """The library a report is about: what was actually loaded, and how it was chosen."""
    return (f"Library checked: {lib['path']}\n"
            f"ONNX Runtime {lib['version']}, API {lib['api_version']} (library "
            f"{lib['library_api']}, ortc {lib['declared_api']}), chosen by: {lib['source']}\n"
            f"Build: {lib.get('build_info') or 'unknown (no GetBuildInfoString)'}")


def render_table(results: Sequence[Any]) -> str:
    rows = [("id", "result", "seconds", "claim")]
    rows += [(r.id, r.status.upper() if r.status == "fail" else r.status, f"{r.seconds:.2f}",
              r.claim if len(r.claim) <= 90 else r.claim[:89] + "…") for r in results]
    w = [max(len(row[i]) for row in rows) for i in range(3)]
    out = []
    for k, row in enumerate(rows):
        out.append(f"{row[0]:<{w[0]}}  {row[1]:<{w[1]}}  {row[2]:>{w[2]}}  {row[3]}")
        if k == 0:
            out.append("-" * (sum(w) + 6 + 40))
    return "\n".join(out)


def render_failure(result: Result) -> str:
    """A failed check for the console: its id and what happened, then its claim and evidence."""
    return (f"FAIL {result.id}: {result.detail}\n"
            f"  claim: {result.claim}\n  evidence: {result.evidence}")


def _plain(text: str) -> str:
    """Free text (a claim, ORT's message, a C++ signature from its stderr) as Markdown shows it:
    ``<float>`` or ``<OrtValue>`` would be taken for HTML tags and vanish, ``operator[](x)`` for
    a link; code spans are left as written."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside code spans
        parts[i] = parts[i].replace("<", "\\<").replace("](", "]\\(")
    return "`".join(parts)


def _cell(text: str) -> str:
    return _plain(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(data: dict[str, Any]) -> str:
    lib = data["library"]
    lines = [f"# Conformance: ONNX Runtime {lib['version']}", "",
             f"Library `{lib['path']}`, API {lib['api_version']} (chosen by: "
             f"{lib.get('source', '?')}).", "",
             f"Build: {_cell(lib.get('build_info') or 'unknown')}.", "",
             "| id | result | seconds | claim | detail |", "|---|---|---|---|---|"]
    for c in data["checks"]:
        lines.append(f"| `{c['id']}` | {_MARK[c['status']]} | {c['seconds']:.2f} | "
                     f"{_cell(c['claim'])} | {_cell(c['detail'])} |")
    return "\n".join(lines) + "\n"


# ---- the version matrix ----

def matrix_versions(spec: str) -> list[str]:
    """The versions ``--matrix`` names: ``all`` or a comma-separated list (empty items
    dropped)."""
    if spec.strip() == "all":
        return list(MATRIX_VERSIONS)
    return [v.strip() for v in spec.split(",") if v.strip()]


def _matrix_command(argv: Sequence[str]) -> str:
    """The command line a report was made by, as given (the report says how to remake it)."""
    import shlex

    return " ".join(["python -m ortc conformance", *(shlex.quote(a) for a in argv)])


def _matrix(args: argparse.Namespace, versions: list[str], ids: Sequence[str] | None,
            argv: Sequence[str]) -> int:
    from .._cmdline import VERBOSE
    from .wheels import fetch_library, provenance

    runs: dict[str, dict[str, Any]] = {}
    worst = 0
    # pip's download progress on a terminal (it draws on stdout); elsewhere one line each
    progress = sys.stdout.isatty()
    for v in versions:
        print(f"[{v}] fetching ...", end="\n" if progress else "", flush=True)
        try:
            lib = fetch_library(v, progress=progress)
        except Exception as exc:  # noqa: BLE001 - recorded in the report
            first, _, details = str(exc).partition("\n")
            print(f" cannot fetch: {first}" + (f"\n{details}" if details and VERBOSE else ""))
            runs[v] = {"error": f"cannot fetch: {first}"[:400]}
            worst = 1
            continue
        print(" running ...", end="", flush=True)
        t0 = time.perf_counter()
        runs[v] = _run_version(lib, ids=ids)
        res = runs[v]
        # the report names the file each column is about, its hash and the wheel it came from
        res["origin"] = provenance(v, lib)
        if "checks" in res:
            counts = {s: sum(1 for c in res["checks"] if c["status"] == s) for s in _MARK}
            print(f" {time.perf_counter() - t0:.0f} s: " +
                  ", ".join(f"{n} {s}" for s, n in counts.items()))
            if counts["fail"]:
                worst = 1
        else:
            print(" " + res["error"])
            worst = 1
    if not any("checks" in r for r in runs.values()):
        # nothing ran: a report would be a table of empty columns
        print("no version ran: no report written")
        return 1
    cov = None
    if args.coverage:
        from . import coverage
        cov = coverage.report(coverage.read(args.coverage))
    output = args.output or default_matrix_output(versions, args.only)
    _write(output, render_matrix(runs, cov, _matrix_command(argv), ids))
    if args.json:
        _write(args.json, json.dumps(runs, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {output}")
    return worst


def _run_version(lib: str, max_restarts: int = 5, ids: Sequence[str] | None = None,
                 runner_timeout: float = 900.0) -> dict[str, Any]:
    """Run the suite on ``lib`` in child runners. A runner killed by a check that was meant to
    be safe in process is restarted on the checks it had not reached; the check it died in is
    recorded as a failure with the signal, so one crash never hides the other results. So is
    one that hung: the runner's watchdog records it and ends the runner (or, as a last resort,
    the runner is killed after ``runner_timeout`` seconds)."""
    from .checks import all_checks
    from .runner import HUNG

    todo = [c.id for c in all_checks() if ids is None or c.id in ids]
    results: dict[str, dict[str, Any]] = {}
    library: dict[str, Any] = {}
    env = dict(os.environ)
    env.pop("ORTC_LIBRARY", None)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for attempt in range(max_restarts + 1):
            ids, prog, out = (os.path.join(tmp, f"{n}{attempt}") for n in ("ids", "prog", "out"))
            with open(ids, "w", encoding="utf-8") as f:
                f.write("\n".join(todo))
            cmd = [sys.executable, "-m", "ortc", "conformance", "--library", lib, "--json", out,
                   "--quiet", "--ids", ids, "--progress", prog]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                      timeout=runner_timeout)
                rc, stderr = proc.returncode, proc.stderr or ""
            except subprocess.TimeoutExpired as exc:  # killed: its progress file tells where
                rc, stderr = None, exc.stderr if isinstance(exc.stderr, str) else (
                    (exc.stderr or b"").decode("utf-8", "replace"))
            if rc is not None and os.path.exists(out):
                with open(out, encoding="utf-8") as f:
                    data = json.load(f)
                library = data["library"]
                results.update({c["id"]: c for c in data["checks"]})
                break
            started, last = None, None
            if os.path.exists(prog):
                with open(prog, encoding="utf-8") as f:
                    for line in f:
                        item = json.loads(line)
                        if "start" in item:
                            started = item["start"]
                        else:
                            last = item["result"]
                            results[last["id"]] = last
                            started = None
            tail = " | ".join(stderr.strip().splitlines()[-2:])[-300:]
            if started is None:
                # the runner's watchdog ended it after a hung check it had recorded: go on
                if not (last and last["detail"].startswith(HUNG)):
                    return {"error": f"runner exited {rc}: {tail}"}
            else:
                chk = next(c for c in all_checks() if c.id == started)
                if rc is None:
                    why = (f"the in-process runner was still in this check when it was killed "
                           f"({runner_timeout:.0f} s for the whole run)")
                else:
                    sig = -rc
                    why = (f"the in-process runner died during this check (exit {rc}"
                           + (f", signal {sig}" if sig > 0 else "") + f"): {tail}")
                results[started] = {
                    "id": chk.id, "claim": chk.claim, "status": "fail",
                    "evidence": chk.evidence, "seconds": 0.0, "test": chk.test, "detail": why}
            todo = [i for i in todo if i not in results]
            if not todo:
                break
        else:
            return {"error": f"runner kept dying ({max_restarts + 1} times)"}
    order = [c.id for c in all_checks()]
    return {"library": library, "seconds": round(time.perf_counter() - t0, 2),
            "checks": [results[i] for i in order if i in results]}


def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_matrix_output(versions: Sequence[str] = MATRIX_VERSIONS,
                          only: Sequence[str] = ()) -> str:
    """docs/CONFORMANCE.md of an ortc checkout for the full matrix; for an installed ortc (no
    such file: the package's parent is site-packages) CONFORMANCE.md in the current directory,
    never a docs/ folder made inside site-packages. Some versions, or some checks (``--only``),
    write CONFORMANCE-<versions>[-only-<prefixes>].md in the current directory: the checkout's
    report of every check on every version is not replaced by a report of a few."""
    if only or list(versions) != list(MATRIX_VERSIONS):
        which = "all" if list(versions) == list(MATRIX_VERSIONS) else "_".join(versions)
        picked = "_".join(p.rstrip(".") or "all" for p in only)
        return os.path.abspath(f"CONFORMANCE-{which}" + (f"-only-{picked}" if only else "") +
                               ".md")
    checkout_doc = os.path.join(_repo_root(), "docs", "CONFORMANCE.md")
    if os.path.isfile(checkout_doc):
        return checkout_doc
    return os.path.abspath("CONFORMANCE.md")


#: the command the committed docs/CONFORMANCE.md is made by
FULL_MATRIX_COMMAND = "python -m ortc conformance --matrix all --coverage FILE"


def render_matrix(runs: dict[str, dict[str, Any]], cov: dict[str, Any] | None = None,
                  command: str = FULL_MATRIX_COMMAND, ids: Sequence[str] | None = None) -> str:
    """docs/CONFORMANCE.md: one row per check, one column per version, then the details.
    ``command`` is the command line that made it; ``ids`` the checks run (default: all)."""
    from .checks import all_checks
    from .wheels import OTHER_SOURCES

    versions = list(runs)
    checks = [c for c in all_checks() if ids is None or c.id in ids]
    others = sorted(OTHER_SOURCES)
    packages = sorted({pkg for pkg, _ in OTHER_SOURCES.values()})
    by_version = {v: {c["id"]: c for c in r.get("checks", [])} for v, r in runs.items()}
    lines = [
        "# ONNX Runtime C API conformance",
        "",
        f"Generated by `{command}` "
        "(ortc/conformance); do not edit by hand. Each row is a claim about the C API, "
        "checked by calling the OrtApi slots through cffi against the libonnxruntime.so of "
        "each version (the onnxruntime wheel; for "
        f"{' and '.join(others)}, whose onnxruntime wheels carry no shared library, the one in "
        f"a {', '.join(packages)} wheel: ortc.conformance.wheels.OTHER_SOURCES; no other "
        "library before 1.19, and no 1.18 one, was found on PyPI) "
        "(Linux x86_64, CPU provider).",
        "",
        "Results: **pass** the claim holds; **known** it does not, and that is a recorded fact "
        "(a crash with its signal, a documented hazard, a feature the version lacks; the "
        "details below say which); **not seen** a race the check provokes did not show in its "
        "tries on that version (no verdict: it is not shown to be safe there); **skip** the "
        "library's API is older than a slot the check needs; **FAIL** an unexpected result.",
        "",
    ]
    header = "| check | " + " | ".join(versions) + " |"
    lines += [header, "|---|" + "---|" * len(versions)]
    for c in checks:
        cells = []
        for v in versions:
            got = by_version[v].get(c.id)
            cells.append(_MARK[got["status"]] if got else "–")
        lines.append(f"| `{c.id}` | " + " | ".join(cells) + " |")
    for v, r in runs.items():
        if "error" in r:
            lines.append(f"\n{v}: not run ({_cell(r['error'])})")
    lines += ["", "## Run times", "",
              "| version | seconds | pass | known | not seen | skip | fail |",
              "|---|---|---|---|---|---|---|"]
    for v, r in runs.items():
        if "checks" in r:
            cs = r["checks"]
            lines.append(f"| {v} | {r.get('seconds', 0):.1f} | " + " | ".join(
                str(sum(1 for c in cs if c["status"] == s))
                for s in ("pass", "known", "not-seen", "skip", "fail")) + " |")
    lines += _libraries_section(runs)
    lines += ["", "## Where ORT does not do what the claim says", "",
              "Every check with a `known` result on some version, with what happened (newest "
              "version first). These are the findings a binding author needs.", ""]
    for c in checks:
        knowns = [(v, by_version[v][c.id]) for v in versions
                  if c.id in by_version[v] and by_version[v][c.id]["status"] == "known"]
        if not knowns:
            continue
        vs = [v for v, _ in knowns]
        span = vs[0] if len(vs) == 1 else (f"{vs[0]}…{vs[-1]}" if _contiguous(vs, versions)
                                           else ", ".join(vs))
        lines.append(f"- `{c.id}` ({span}): {_cell(c.claim)} **Observed:** "
                     f"{_cell(_normalise(knowns[-1][1]['detail']))}")
    lines += ["", "## Checks", "",
              "Claim, evidence, the function that decides it, and what each version did "
              "(versions with the same detail are grouped)."]
    for c in checks:
        lines += ["", f"### `{c.id}`", "", _plain(c.claim), "",
                  f"- evidence: {_plain(c.evidence)}", f"- decided by: `{c.test}`"
                  + (" (in a child process)" if c.child else "")]
        if c.crosses:  # what a Send verdict may cite this check for
            lines.append("- crosses threads: " + ", ".join(f"`{t}`" for t in c.crosses)
                         + " (made on one thread, used on another)")
        groups: dict[tuple[str, str], list[str]] = {}
        for v in versions:
            got = by_version[v].get(c.id)
            if got:
                groups.setdefault((got["status"], _normalise(got["detail"])), []).append(v)
        for (status, detail), vs in groups.items():
            span = vs[0] if len(vs) == 1 else f"{vs[0]}…{vs[-1]}" if _contiguous(vs, versions) \
                else ", ".join(vs)
            lines.append(f"- {span}: {_MARK[status]}" + (f": {_cell(detail)}" if detail else ""))
    if cov is not None:
        lines += _coverage_section(cov)
    return "\n".join(lines) + "\n"


def _libraries_section(runs: dict[str, dict[str, Any]]) -> list[str]:
    """Per version: the library file checked, the wheel it was taken from (and the member
    inside it), and the sha256 of both, so a column can be traced to its bytes."""
    lines = ["", "## Libraries checked", "",
             "| version | library file | from | library sha256 |", "|---|---|---|---|"]
    for v, r in runs.items():
        o = r.get("origin")
        lib = r.get("library") or {}
        if not o:
            lines.append(f"| {v} | {os.path.basename(lib.get('path', '')) or '–'} | "
                         "not recorded | – |")
            continue
        if o.get("wheel", "unrecorded") == "unrecorded":
            where = "unrecorded (fetched before sources were kept)"
        else:
            where = (f"`{o['member']}` in {o['wheel']} ({o['package']} {o['version']} from "
                     f"{o.get('index', 'PyPI')}; wheel sha256 `{o['wheel_sha256']}`)")
        lines.append(f"| {v} | `{o['file']}` | {_cell(where)} | `{o['sha256']}` |")
    return lines


def _normalise(detail: str) -> str:
    """Drop timings and addresses so equal behaviour groups across versions."""
    import re
    detail = re.sub(r"\b\d+ ms\b", "N ms", detail)
    detail = re.sub(r"0x[0-9a-f]{6,}", "0x…", detail)
    detail = re.sub(r"/[^\s]*/libonnxruntime[^\s]*", "libonnxruntime", detail)
    detail = re.sub(r"(\.(?:cc|h)):\d+", r"\1", detail)  # source line numbers move
    detail = re.sub(r"\d+ messages", "N messages", detail)
    return detail


def _contiguous(vs: list[str], versions: list[str]) -> bool:
    idx = [versions.index(v) for v in vs]
    return idx == list(range(idx[0], idx[0] + len(idx)))


def _coverage_section(cov: dict[str, Any]) -> list[str]:
    lines = ["", "## OrtApi slot coverage", "",
             f"Slots up to API {cov['upto']}: {cov['total']}. Not usable on a CPU-only build: "
             f"{len(cov['not_on_cpu'])} (listed below with the reason). Of the remaining "
             f"{cov['applicable']}, the test suite plus the conformance kit call "
             f"**{cov['covered']} ({cov['percent']}%)**.", "",
             "Reproduce: `ORTC_SLOT_COVERAGE=/tmp/slots.jsonl python -m pytest -q tests/` "
             "(tests/_coverage_plugin.py instruments the OrtApi facade; conformance children "
             "record their own calls), then `python -m ortc.conformance.coverage "
             "/tmp/slots.jsonl`. The number above was measured against ORT 1.32.0 with the "
             "long API-misuse fuzz test deselected.", ""]
    if cov["missing"]:
        lines += ["Applicable but not called:", ""]
        lines += [f"- `{n}`: {why}" for n, why in sorted(cov["missing"].items())]
        lines.append("")
    by_reason: dict[str, list[str]] = {}
    for n, why in cov["not_on_cpu"].items():
        by_reason.setdefault(why, []).append(n)
    lines += ["Not applicable on a CPU-only build:", ""]
    for why, names in by_reason.items():
        lines.append(f"- {why}: " + ", ".join(f"`{n}`" for n in names))
    return lines
