"""The thread rules, exported: one record per ORT type, derived from the class declarations.

Execution providers decide whether one session may run concurrently: the table below says which
allow it (DESIGN.md "Thread rules"; research/thread-safety.md §4).
"""

from __future__ import annotations

from typing import Any, Sequence

from .threads import registry

__all__ = ["rules", "session_run_rule", "EP_CONCURRENT_RUN"]

#: provider -> (concurrent Run allowed?, why)
EP_CONCURRENT_RUN: dict[str, tuple[bool, str]] = {
    "CPUExecutionProvider": (True, "ORT docs: several threads may call Run on one session; "
                                   "research E1 (0 mismatches in 800 concurrent runs)"),
    "CUDAExecutionProvider": (True, "per-thread CUDA contexts since ORT PR #1149; not with "
                                    "enable_cuda_graph (one captured graph per session)"),
    "TensorrtExecutionProvider": (True, "concurrent Run supported since ORT 1.17"),
    "DmlExecutionProvider": (False, "DirectML sessions are not thread-safe for Run "
                                    "(ORT DirectML docs)"),
    "XnnpackExecutionProvider": (False, "ORT serializes Run inside the XNNPACK EP"),
    "WebGpuExecutionProvider": (False, "ORT serializes Run inside the WebGPU EP"),
}


def session_run_rule(providers: Sequence[str],
                     provider_options: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """Whether Run is shared for a session with these providers, and the reasons."""
    reasons = []
    shared = True
    for p in providers:
        ok, why = EP_CONCURRENT_RUN.get(
            p, (False, "undocumented for this provider; serialized by default"))
        opts = (provider_options or {}).get(p, {})
        if p == "CUDAExecutionProvider" and opts.get("enable_cuda_graph") in ("1", "True", "true"):
            ok, why = False, "enable_cuda_graph: one captured graph per session, replayed by Run"
        reasons.append(f"{p}: {'concurrent' if ok else 'exclusive'} ({why})")
        shared = shared and ok
    return {"run": "shared" if shared else "exclusive", "providers": list(providers),
            "reasons": reasons}


def rules() -> list[dict[str, Any]]:
    """One record per ORT type: type, python, send, sync, methods, parents, evidence."""
    from . import binding, env, memory, session, value  # noqa: F401 - register every class

    out = []
    for name, rec in sorted(registry.items(), key=lambda kv: kv[1].c_type):
        methods: dict[str, str] = {}
        for meth, rule in sorted(rec.methods.items()):
            methods[meth] = rule.kind
            for c_fn in rule.c_functions:
                # a C function used by a shared and an exclusive method is exclusive
                if methods.get(c_fn) != "exclusive":
                    methods[c_fn] = rule.kind
        out.append({"type": rec.c_type, "python": f"ortc.{name}", "send": rec.send,
                    "sync": rec.sync, "methods": methods, "parents": list(rec.parents),
                    "evidence": rec.evidence})
    return out
