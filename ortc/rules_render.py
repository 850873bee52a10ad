"""The thread rules rendered: JSON (``python -m ortc rules --format json``) and the Markdown of
``docs/THREAD_RULES.md``, from the records of :mod:`ortc.rules_table`, the evidence, the
execution-provider table, the slot table and the pickle/fork table. ``import ortc`` never
imports this module (only the ``rules`` command and the docs' generator do).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from . import evidence, slot_rules
from .conformance import matrix_table
from .process_rules import PICKLE_AND_FORK, markdown_lines as _pickle_and_fork_lines
from .providers import EP_CONCURRENT_RUN, _EXCLUSIVE_OPTIONS
from .rules_table import CALLBACKS, FAILURE_OWNERS, FUNCTION_TABLES, NO_ROW, rules, transfers

__all__ = ["render_json", "render_markdown", "POLICY_TABLE"]


def render_json() -> str:
    import json  # imported here: `import ortc` should not pay for the CLI's modules

    from .providers import MIN_CONCURRENT_VERSION

    return json.dumps({"types": rules(), "execution_providers": {
        p: {"concurrent_run": ok, "why": why,
            "since": ".".join(map(str, MIN_CONCURRENT_VERSION[p][0]))
            if p in MIN_CONCURRENT_VERSION else None,
            "evidence": [e.to_json() for e in evidence.EP_EVIDENCE.get(p, ())]}
        for p, (ok, why) in EP_CONCURRENT_RUN.items()},
        "callbacks": [{**cb, "evidence_records": [
            e.to_json() for e in evidence.CALLBACK_EVIDENCE.get(cb["type"], ())]}
            for cb in CALLBACKS],
        "transfers": transfers(), "failure_owners": FAILURE_OWNERS,
        "counter_reports": evidence.COUNTER_REPORTS,
        "slots": [r.to_json() for r in slot_rules.table()],
        "slot_coverage": slot_rules.coverage(),
        "sub_tables": {t: [r.to_json() for r in rows] for t, rows in slot_rules.SUB_TABLES.items()},
        "sub_table_coverage": slot_rules.sub_coverage(),
        "unclassified_tables": UNCLASSIFIED_TABLES,
        "sub_table_objects": {t: {o: {"send": se, "sync": sy, "why": why}
                                  for o, (se, sy, why) in objs.items()}
                              for t, objs in slot_rules.SUB_TABLE_OBJECTS.items()},
        "pickle_and_fork": PICKLE_AND_FORK, "function_tables": FUNCTION_TABLES,
        "no_row": NO_ROW}, indent=2) + "\n"


def _is_c(name: str) -> bool:
    return bool(name) and name[0].isupper() and "." not in name and "(" not in name


def _md(text: str) -> str:
    return text.replace("|", "\\|")


#: the Python enforcement policies, as a table (README.md shows it; tests check it is there)
POLICY_TABLE = """\
| situation | strict (default) | serialize | off |
|---|---|---|---|
| object with send=False used from a thread other than its creator | WrongThreadError | WrongThreadError | no check |
| object with sync=False entered while another thread is inside any of its methods | ConcurrentUseError | waits | no check |
| exclusive method while any other call is in flight, or a shared call during an exclusive one | ConcurrentUseError | waits | no check |
| close() while a call is in flight on another thread | ConcurrentUseError | waits | release deferred |
| a handle created before fork() used in the child | ForkedHandleError (a Session is rebuilt from its recipe instead) | same | same |
| a conflict inside an ORT callback (logger, RunAsync completion) | ConcurrentUseError | ConcurrentUseError (never waits) | no check |
"""


def _anchor(text: str) -> str:
    """GitHub's heading anchor for ``text``."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _link(ref: str, here: str = "docs") -> str:
    """A Markdown link for an evidence reference (from a page in ``here``)."""
    if ref.startswith("check:"):
        cid = ref[len("check:"):]
        return f"[`{cid}`](CONFORMANCE.md#{_anchor(cid)})"
    if ref.startswith("tests/"):
        path, _, name = ref.partition("::")
        return f"[`{ref}`](../{path})"
    if ref.startswith("http"):
        label = ref.split("://", 1)[1]
        label = re.sub(r"^github\.com/microsoft/onnxruntime/(issues|pull)/", r"ORT #", label)
        return f"[{label}]({ref})"
    return ref


def _ev_line(e: evidence.Evidence, matrix: Optional[matrix_table.Matrix] = None) -> str:
    where = [_link(e.ref)] if e.ref else []
    if e.outcome:
        where.append(f"{e.outcome} on {e.versions}")
        if matrix is not None and e.ref.startswith("check:") and "race" not in e.outcome:
            # the versions the record leaves out, with another outcome: said, not hidden
            # behind "pass on 1.23.2-1.32.0"
            where += [f"{cell} on {vs}" for cell, vs in
                      matrix_table.spans(matrix, e.ref[len("check:"):], skip=e.outcome)]
    if e.changes_if:
        where.append(f"would change if {e.changes_if}")
    if e.function:
        where.insert(0, f"`{e.function}`, {e.release}")
    return f"**{e.kind}**: {e.says}" + (f" ({'; '.join(where)})" if where else "")


def _type_link(c_type: str) -> str:
    return f"[`{c_type}`](#{_anchor(c_type)})"


def _refs(*refs: str) -> str:
    return ", ".join(_link(r if ":" in r or r.startswith("tests/") else f"check:{r}")
                     for r in refs)


def _by_version(matrix: Optional[matrix_table.Matrix]) -> str:
    """The answer on ORT versions, from the committed matrix: every check whose outcome
    changes with the version, the rest one outcome each."""
    if matrix is None:
        return ("- By ORT version: the outcome of each check per version is in "
                "[CONFORMANCE.md](CONFORMANCE.md) (not found beside this copy of ortc); slots "
                "newer than the library do not exist (ortc raises `NotSupportedError`).")
    items = []
    for cid in matrix_table.varying(matrix):
        where = ", ".join(f"{cell} on {vs}" for cell, vs in matrix_table.spans(matrix, cid))
        items.append(f"{_refs(cid)} ({where})")
    return (f"- By ORT version, {len(items)} checks of [CONFORMANCE.md](CONFORMANCE.md) change "
            "outcome (read from its matrix): " + "; ".join(items) + ". A pass on older "
            "versions where newer ones crash is no promise: do not rely on it. Slots newer "
            "than the library do not exist (ortc raises `NotSupportedError`; a check that "
            "needs one is skipped there). Every other check in [CONFORMANCE.md]"
            "(CONFORMANCE.md) has one outcome on all versions that have its slots (a race "
            "`not seen` on a version is no outcome).")


def _answers(recs: list[dict[str, Any]],
             matrix: Optional[matrix_table.Matrix] = None) -> list[str]:
    both = [r["type"] for r in recs if r["send"] and r["sync"]]
    send_only = [r["type"] for r in recs if r["send"] and not r["sync"]]
    sync_only = [r["type"] for r in recs if not r["send"] and r["sync"]]
    neither = [r["type"] for r in recs if not r["send"] and not r["sync"]]
    gh = evidence.GH
    out = [
        "## Answers first",
        "",
        "Each answer names its evidence: a conformance check (its results on ORT "
        f"{evidence.ALL_VERSIONS} are in [CONFORMANCE.md](CONFORMANCE.md)), a test here, or ORT's "
        "own documentation and maintainers. The kinds are explained under "
        "[Evidence](#evidence-kinds).",
        "",
        "**Which types are Send (may move to another thread)?** All of them except those "
        "that only live inside one ORT callback: " + ", ".join(_type_link(t) for t in neither
                                                               + sync_only) + ". For "
        "[`OrtCustomOp`](#ortcustomop), a struct the caller implements, Send and Sync are "
        "what ORT requires of it.",
        "",
        "**Which are Sync (shared functions may run on several threads at once)?** "
        + ", ".join(_type_link(t) for t in both + sync_only) + ". Not Sync: "
        + ", ".join(_type_link(t) for t in send_only + neither) + ", and an "
        "[`OrtAllocator`](#ortallocator) for non-CPU memory (per instance, by policy). "
        "Each type's section lists the kinds of evidence behind its two verdicts.",
        "",
        "**Which calls may overlap?**",
        "",
        "- `Run`, `RunAsync` and `RunWithBinding` on one session, from many threads: yes on "
        "CPU (" + _refs("thread.concurrent-run") + f"; [ORT's design]({evidence.DESIGN}); "
        f"[ORT #114]({gh}/issues/114)), per execution provider below. Each thread needs its own "
        "output values and its own IoBinding.",
        "- One input `OrtValue` fed to concurrent runs: yes (" + _refs(
            "thread.shared-input-value") + "). A value a run writes (a bound or preallocated "
        "output) is exclusive while bound: every run writes it (" + _refs(
            "binding.bound-output-written-by-every-run", "run.preallocated-output") + ").",
        "- `RunOptionsSetTerminate` from any thread while runs use the options: yes ("
        + _refs("thread.shared-run-options-terminate") + "). Other RunOptions setters: no.",
        "- `CreateSession` on several threads with one env and one SessionOptions: yes ("
        + _refs("thread.concurrent-create") + "), **except** when the options carry custom-op "
        f"or EP-plugin domains: ORT marks adding them [not thread-safe]"
        f"({evidence.ADD_CUSTOM_OP_DOMAINS}), and a few of 1200 such creations fail with "
        "ORT's 'domain already exists' error (" + _refs("thread.create-with-custom-op-domain")
        + "). An EP-selection delegate set on the options is called by the creating threads "
        "at once (" + _refs("device.selection-delegate-concurrent") + "): it must be Sync.",
        "- Env creation and release on several threads: yes, there is one env ("
        + _refs("env.concurrent-create-release", "env.same-pointer") + "). Env setters "
        "(log level, allocator and EP-library registration) while sessions run: not documented; "
        "exclusive by policy.",
        "- Alloc/Free on the default CPU allocator or a session's CPU arena from many threads: "
        "yes (" + _refs("thread.default-allocator", "thread.session-allocator") + "). "
        "Sessions sharing an arena registered on the env run at once: yes ("
        + _refs("thread.env-allocator-two-sessions") + ").",
        "- One custom kernel's compute entered by concurrent runs: yes, ORT does not serialize "
        "it (" + _refs("kernel.overlapping-compute") + "): a kernel's state must be Sync.",
        "- Run from many short-lived threads (a thread per request): memory does not grow per "
        "thread (" + _refs("thread.short-lived-threads-memory") + ").",
        "- One `OrtIoBinding` on two threads: **no**: wrong results, failed runs, and a "
        "corrupted heap that can crash the process (" + _refs("thread.shared-binding") + ").",
        "- Any setter of SessionOptions, RunOptions or a Value while another call uses the "
        "object: no (exclusive).",
        "",
        "**Which lifetimes must hold?**",
        "",
        "- The env outlives every session: a Run after the last `ReleaseEnv` crashes ("
        + _refs("env.run-after-last-release") + "). ORT can create a new env after that ("
        + _refs("env.recreate-after-release") + ").",
        "- No Run is inside a session when it is released: `ReleaseSession` does not wait for "
        "a Run on another thread, which then uses the freed session and kills the process ("
        + _refs("thread.release-session-during-run") + "). A binding's close must wait for "
        "the runs or refuse.",
        "- A session outlives its IoBindings (a binding used after its session's release "
        "reads freed memory and crashes: "
        + _refs("life.binding-after-session-release") + "), its allocators and every value "
        "allocated from them (" + _refs("life.session-value-after-session-release") + ").",
        "- A caller's buffer outlives the tensor created over it and any binding it is bound "
        "to (" + _refs("value.user-memory-is-borrowed") + "); a LoRA adapter outlives the "
        "RunOptions it is active in; custom-op domains, a prepacked-weights container and "
        "initializers added with `AddInitializer` outlive the sessions created with them "
        f"([C API]({evidence.C_API})).",
        "- Borrowed objects are never released and never used after their owner: memory infos "
        "from `AllocatorGetInfo`/`GetTensorMemoryInfo`/`SessionGetMemoryInfoFor*`, "
        "`CastTypeInfoTo*` results, EP and hardware devices, a kernel context's inputs and "
        "outputs, the default allocator. The [slot table](#every-ortapi-slot) marks each "
        "borrowed result.",
        "- Graphs: a graph, node or value info given to the model editor's AddGraphToModel, "
        "AddNodeToGraph or SetGraphInputs/SetGraphOutputs belongs to the receiver from then "
        "on (never released by the caller), and an attribute given to CreateNode is copied "
        "and released by it (releasing it again crashes: "
        + _refs("life.op-attr-release-after-create-node") + "); what each such call leaves "
        "the caller when it fails is in [Ownership transfers](#ownership-transfers); the "
        "graph views a plugin EP receives are borrowed "
        "for that one call; EP-assignment records belong to their session; compilation options "
        "keep a pointer to the env (see each type's section).",
        "- Not needed: SessionOptions may be released right after `CreateSession` ("
        + _refs("session.options-released-early") + "); model metadata is a copy ("
        + _refs("session.metadata-outlives-session") + "); CPU run outputs stay readable "
        "after their session (" + _refs("life.output-after-session-release") + ", not "
        "promised by ORT).",
        "",
        "**What differs by execution provider and by ORT version?**",
        "",
        "- Concurrent Run per provider: the [table below](#sessionrun-per-execution-provider). "
        "TensorRT allows it from ORT 1.17 on; ortc checks the loaded library's version. CUDA "
        "is exclusive by policy (no GPU run recorded here), DirectML by its documentation; "
        "a provider not listed is exclusive.",
        _by_version(matrix),
        "",
        "**Reports that seem to contradict these verdicts**, and why the verdicts stand:",
        "",
    ]
    for c in evidence.COUNTER_REPORTS:
        out.append(f"- {_link(c['url'])}: {c['reports']}. Verdict: {c['verdict']}. It stands "
                   f"because {c['why_it_stands']}. It would change with {c['would_change']}.")
    out += ["", "### Evidence kinds", "",
            "- **ort-source**: ORT's implementation of the function, read at a stated commit "
            "(a URL to the file at that commit, the C++ function, the release it holds for); "
            "paraphrased.",
            "- **ort-doc**: ORT's documentation or C API reference says it (a URL).",
            "- **ort-maintainer**: an ORT maintainer said it in an issue or pull request.",
            "- **ort-behaviour**: ORT was seen doing it: a conformance check (with the outcome "
            "and the ORT versions in CONFORMANCE.md) or a test here that runs ORT itself.",
            "- **guard**: a test of ortc's own enforcement; it never backs a Send/Sync verdict "
            "alone.",
            "- **policy**: ortc's conservative choice, with its reason and what would change "
            "it.",
            "- **untested**: nothing here shows it; said so.",
            "- **signature**: only the slot's C signature (const or not, owned or borrowed "
            "out-pointers): an ABI fact, no thread rule. A slot resting on it alone is "
            "unverified.", ""]
    return out


#: the function tables besides OrtApi whose functions have no per-function verdict yet (the
#: classified ones are ortc.slot_rules.SUB_TABLES)
UNCLASSIFIED_TABLES: dict[str, str] = {
    t: "; ".join(f"{n} entries added in API {v} that no stored source names ({seen})"
                 for v, n, seen in entries)
    for t, entries in slot_rules.UNNAMED_ENTRIES.items()
}


def _verified_lines() -> list[str]:
    """The opening count: how many slot verdicts rest on ORT's implementation, a check or a
    documented statement, against those resting only on generic records."""
    cov = slot_rules.coverage()
    b = cov["by_basis"]
    return [
        f"**Verified: {cov['verified']} of {cov['total']} OrtApi slots** (through API "
        f"{cov['upto']}) have a verdict resting on ORT's implementation read at a stated "
        f"commit ({b['implementation']}), a conformance check or a test that runs ORT "
        f"({b['check']}), or a documented statement ({b['documented']}). **Unverified: "
        f"{cov['unverified']}**: their verdict rests only on generic records (the slot's C "
        "signature, the generic Release, callback-scope and device records) or on ortc's "
        "policy; each says **unverified** in the [slot table](#every-ortapi-slot).",
        "",
        "Classified function by function in [Other function tables](#other-function-tables), "
        "counted apart from the slots above: "
        + "; ".join(f"`{t}` ({c['total']} functions: {c['verified']} verified, "
                    f"{c['unverified']} unverified)"
                    for t, c in slot_rules.sub_coverage().items())
        + ". Entries of released tables that no stored source names, so without a row: "
        + ("; ".join(f"`{t}` ({why})" for t, why in UNCLASSIFIED_TABLES.items()) or "none")
        + ".",
        "",
    ]


def _transfer_lines(matrix: Optional[matrix_table.Matrix]) -> list[str]:
    """The ownership transfers: per call and argument, what ORT does with it and who owns it
    after a failed call, with the evidence."""
    lines = ["", "## Ownership transfers", "",
             "Calls that take an argument over: from the call on ORT releases it, and the caller "
             "must never release it again (in Rust the wrapper is moved into the call). After "
             "a failed call the argument is: "
             + "; ".join(f"**{k}**: {why}" for k, why in FAILURE_OWNERS.items()) + ".", "",
             "| call | argument | on success | after a failed call | evidence |",
             "|---|---|---|---|---|"]
    for t in transfers():
        evs = "; ".join(_ev_line(e, matrix) + (f" [backs: {', '.join(e.backs)}]" if e.backs
                                               else "")
                        for e in evidence.for_transfer(t["function"], t["argument"]))
        lines.append(f"| `{t['function']}` | {_type_link(t['argument'])} `{t['parameter']}` | "
                     f"{_md(t['on_success'])} | **{t['failure_owner']}**: {_md(t['on_failure'])} "
                     f"| {_md(evs)} |")
    return lines


def render_markdown(matrix_path: Optional[str] = None) -> str:
    """THREAD_RULES.md; version differences are read from the matrix in ``matrix_path``
    (default: the checkout's docs/CONFORMANCE.md)."""
    recs = rules()
    matrix = matrix_table.read(matrix_path)
    lines = [
        "# ortc thread rules",
        "",
        "<!-- Generated by `python -m ortc rules --format markdown > docs/THREAD_RULES.md`;",
        "     tests/test_rules.py fails when this file is stale. Do not edit by hand. -->",
        "",
        "Which ONNX Runtime C API objects may move between threads (**Send**), which may be used",
        "from several threads at once (**Sync**), which functions may overlap (**shared**, Rust",
        "`&self`) or need sole access (**exclusive**, Rust `&mut self`), and what must outlive",
        "what. Wrapped types come from ortc's class declarations (`ortc/threads.py` markers,",
        "enforced at run time: see the README's thread-rules section); the others are declared",
        "in `ortc/rules_table.py`; the evidence is `ortc/evidence.py`; every OrtApi slot's",
        "verdict is `ortc/slot_rules.py`. `python -m ortc rules --format json|rust` prints the",
        "same data.",
        "",
    ]
    lines += _verified_lines()
    lines += _answers(recs, matrix)
    lines += ["## Summary", "",
              "| ORT type | ortc | Send | Sync | evidence kinds (Send / Sync) | must not outlive |",
              "|---|---|---|---|---|---|"]
    for r in recs:
        python = r["python"] or "not exposed"
        wrapped = "" if r["wrapped"] else " (not wrapped)"
        basis = " / ".join(", ".join(r["basis"][v]) or "none" for v in ("send", "sync"))
        lines.append(f"| {_type_link(r['type'])} | {_md(python)}{wrapped} | "
                     f"{'yes' if r['send'] else 'no'} | {'yes' if r['sync'] else 'no'} | "
                     f"{basis} | {', '.join(f'`{p}`' for p in r['parents']) or '-'} |")
    lines += ["", "Not in the table: the function tables "
              + ", ".join(f"`{t}`" for t in FUNCTION_TABLES) + " are static arrays of "
              "function pointers the library owns, not objects: a table pointer may be read "
              "from any thread and is never released (their getters are \"not "
              "thread-relevant\" in the slot table); the functions of every sub-table appear "
              "in the rows of the OrtApi types they use (as `OrtCompileApi` functions under "
              "[`OrtModelCompilationOptions`](#ortmodelcompilationoptions), `OrtEpApi` ones "
              "under [`OrtNode`](#ortnode)). An object that only one sub-table hands out (no "
              "OrtApi function and no other table takes it) has no row: it is declared with its "
              "Send and Sync at the head of that table's section under "
              "[Other function tables](#other-function-tables), whose rows list every function "
              "that uses it; an object two tables took would get a row. Other opaque types "
              "the C header declares without a row: "
              + "; ".join(f"`{t}` ({why})" for t, why in NO_ROW.items()) + "."]
    lines += ["", "## Session.run per execution provider", "",
              "Run is shared only when every provider of the session allows concurrent Run "
              "(with the loaded ORT version and the options given); otherwise it is exclusive "
              "for that session (`Session.thread_rules()` says which and why). A provider not "
              "listed is exclusive: undocumented, serialized by default.", "",
              "| provider | concurrent Run | from ORT | why | evidence |", "|---|---|---|---|---|"]
    from .providers import MIN_CONCURRENT_VERSION
    for p, (ok, why) in EP_CONCURRENT_RUN.items():
        gate = MIN_CONCURRENT_VERSION.get(p)
        since = f"{gate[0][0]}.{gate[0][1]}" if gate and ok else "-"
        evs = "; ".join(_ev_line(e, matrix) for e in evidence.EP_EVIDENCE.get(p, ()))
        lines.append(f"| {p} | {'yes' if ok else 'no (exclusive)'} | {since} | {_md(why)} | "
                     f"{_md(evs)} |")
    for p, opts in _EXCLUSIVE_OPTIONS.items():
        for key, why in opts.items():
            evs = "; ".join(_ev_line(e, matrix)
                            for e in evidence.OPTION_EVIDENCE.get(key, ()))
            lines.append(f"| {p} with `{key}` | no (exclusive) | - | {_md(why)} | {_md(evs)} |")
    lines += _transfer_lines(matrix)
    lines += ["", "## Types", ""]
    for r in recs:
        lines += [f"### {r['type']}", ""]
        python = r["python"] or "not exposed by ortc"
        declared = "" if r["wrapped"] else " (not wrapped: declared in ortc/rules_table.py)"
        lines.append(f"- ortc: {python}{declared}")
        send, sync = (", ".join(r["basis"][v]) or "no evidence" for v in ("send", "sync"))
        lines.append(f"- Send: {'yes' if r['send'] else 'no'} ({send}); "
                     f"Sync: {'yes' if r['sync'] else 'no'} ({sync})")
        for verdict, text in r["caveats"].items():
            lines.append(f"- caveat ({verdict}): {text}")
        if r["parents"]:
            lines.append(f"- must not outlive: {', '.join(r['parents'])}")
        for kind in ("shared", "exclusive"):
            c_fns = [m for m, k in r["methods"].items() if k == kind and _is_c(m)]
            py = [m for m, k in r["methods"].items() if k == kind and not _is_c(m)]
            if py:
                lines.append(f"- {kind} (Python): {', '.join(f'`{m}`' for m in py)}")
            if c_fns:
                lines.append(f"- {kind} (C): {', '.join(f'`{m}`' for m in c_fns)}")
            tables: dict[str, list[str]] = {}
            for m, k in r["other_tables"].items():
                if k == kind:
                    table, _, fn = m.partition(".")
                    tables.setdefault(table, []).append(fn)
            for table, fns in tables.items():
                lines.append(f"- {kind} ({table}): {', '.join(f'`{f}`' for f in fns)}")
        if r["used_by"]:
            lines.append("- used as an argument by: " + ", ".join(
                f"`{m}` ({k})" for m, k in r["used_by"].items()))
        if r["taken_by"]:
            lines.append("- taken over by (ORT releases it; never release it after): " + ", ".join(
                f"`{fn}` (after a failed call: {owner})" for fn, owner in r["taken_by"].items()))
        for meth, why in r["conditions"].items():
            if not _is_c(meth):
                lines.append(f"- `{meth}`: {why}")
        for meth, args in r["arguments"].items():
            lines.append(f"- `{meth}` uses its arguments: "
                         + ", ".join(f"`{a}` {k}" for a, k in args.items()))
        for note in r["notes"]:
            lines.append(f"- note: {note}")
        lines.append(f"- in short: {_md(r['evidence'].split('; evidence: ')[0])}")
        recs_ev = evidence.for_type(r["type"])
        if recs_ev:
            lines.append("- evidence:")
            lines += [f"  - {_ev_line(e, matrix)}"
                      + (f" [backs: {', '.join(e.backs)}]" if e.backs else "")
                      for e in recs_ev]
        lines.append("")
    lines += _pickle_and_fork_lines()
    lines += ["## Callbacks", "", "| callback | called from | Rust bound | ortc | evidence |",
              "|---|---|---|---|---|"]
    for cb in CALLBACKS:
        evs = "; ".join(_ev_line(e, matrix)
                        for e in evidence.CALLBACK_EVIDENCE.get(cb["type"], ()))
        lines.append(f"| `{cb['type']}` | {_md(cb['threads'])} | {_md(cb['rust'])} | "
                     f"{_md(cb['ortc'])} | {_md(evs or cb['evidence'])} |")
    cov = slot_rules.coverage()
    lines += ["", "## Every OrtApi slot", "",
              f"Slots declared up to API {cov['upto']}: {cov['total']}; with a verdict: "
              f"**{cov['classified']}**; declared by hand: {cov['declared']}; derived from the "
              f"signature: {cov['from_signature']}; not thread-relevant: "
              f"{cov['not_thread_relevant']}. By scope: "
              + ", ".join(f"{k} {v}" for k, v in cov["by_scope"].items())
              + ". Slots citing each evidence kind: "
              + ", ".join(f"{k} {v}" for k, v in cov["by_evidence_kind"].items())
              + ". What each verdict rests on (its strongest record, generic ones aside): "
              + ", ".join(f"{k} {v}" for k, v in cov["by_basis"].items()) + ".",
              "",
              "A verdict derived from the signature reads a `const` handle as shared and a "
              "non-const one as exclusive (ORT documents no thread rule per function); "
              "\"declared\" verdicts override it where documentation or behaviour says more. "
              "The \"rests on\" column says whether ORT's implementation, a check or a "
              "documented statement confirms the verdict, or nothing specific does "
              "(**unverified**). "
              "`python -m ortc rules --format json` carries the same table (`slots`).",
              "",
              "| slot | API | verdict | rests on | must outlive / borrowed | note | evidence |",
              "|---|---|---|---|---|---|---|"]
    for sr in slot_rules.table():
        evs = "; ".join("**signature**" if e == slot_rules.SIGNATURE else _ev_line(e, matrix)
                        for e in sr.evidence)
        basis = sr.basis()
        basis = "**unverified**" if basis == "unverified" else basis
        lines.append(f"| `{sr.slot}` | {sr.since} | {_md(sr.verdict())} | {basis} | "
                     f"{_md(sr.outlives)} | {_md(sr.note)} | {_md(evs)} |")
    lines += _sub_table_lines(matrix)
    return "\n".join(lines) + "\n"


def _sub_table_lines(matrix: Optional[matrix_table.Matrix]) -> list[str]:
    """The classified function tables besides OrtApi, one row per function, as the slot table:
    the API version it appeared in, its verdict, what it rests on, lifetimes, evidence."""
    lines = ["", "## Other function tables", "",
             "Functions of the tables ORT hands out besides OrtApi (ortc binds none of them), "
             "with the same verdicts and evidence standard as the slots: reads are shared, "
             "writes and releases exclusive (a release here is also a function that takes the "
             "handle over), and the API version is the one the function appeared in (where "
             "no source marks it, the first release whose table is that long). A function whose "
             "implementation is in no stored ORT source is named as a binding generated from "
             "the released headers names it (" + slot_rules.RELEASED_HEADER_BINDING + ") and "
             "says **unverified**. Entries without a row: "
             + ("; ".join(f"`{t}` ({why})" for t, why in UNCLASSIFIED_TABLES.items()) or "none")
             + ". `python -m ortc rules --format json` carries the same (`sub_tables`, "
             "`sub_table_objects`).", ""]
    for table, rows in slot_rules.SUB_TABLES.items():
        cov = slot_rules.sub_coverage()[table]
        lines += [f"### {table}", "",
                  f"{cov['total']} functions; what each verdict rests on: "
                  + ", ".join(f"{b} {cov[b]}" for b in slot_rules.BASES) + ".", ""]
        objs = slot_rules.SUB_TABLE_OBJECTS.get(table, {})
        if objs:
            lines += ["Objects only this table hands out (no type row: the functions below are "
                      "every use of them):", "",
                      "| object | Send | Sync | why |", "|---|---|---|---|"]
            lines += [f"| `{o}` | {'yes' if se else 'no'} | {'yes' if sy else 'no'} | "
                      f"{_md(why)} |" for o, (se, sy, why) in objs.items()]
            lines.append("")
        lines += ["| function | API | verdict | rests on | must outlive / borrowed | note | "
                  "evidence |", "|---|---|---|---|---|---|---|"]
        for sr in rows:
            evs = "; ".join(_ev_line(e, matrix) for e in sr.evidence)
            basis = sr.basis()
            basis = "**unverified**" if basis == "unverified" else basis
            lines.append(f"| `{sr.slot}` | {sr.since} | {_md(sr.verdict())} | {basis} | "
                         f"{_md(sr.outlives)} | {_md(sr.note)} | {_md(evs)} |")
        lines.append("")
    return lines
