"""Execution providers: their names, and whether each lets one session run concurrently.

The generic append slot takes a provider's short name (``"XNNPACK"``), ORT reports the long one
(``"XnnpackExecutionProvider"``); :func:`provider_names` maps a user's spelling to both.
:func:`session_run_rule` decides, from a session's providers and their options, whether
``Session.run`` is shared or exclusive; :mod:`ortc.rules` only exports it.
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

from . import _loader

__all__ = ["PROVIDERS", "provider_names", "EP_CONCURRENT_RUN", "MIN_CONCURRENT_VERSION",
           "session_run_rule", "run_is_exclusive"]

# The generic SessionOptionsAppendExecutionProvider takes these short names (ORT 1.32 also
# takes the long ones; older libraries only the short ones). CUDA and TensorRT have their own
# slots. short name -> the name ORT reports for the provider.
PROVIDERS = {
    "CPU": "CPUExecutionProvider", "CUDA": "CUDAExecutionProvider",
    "TensorRT": "TensorrtExecutionProvider", "DML": "DmlExecutionProvider",
    "QNN": "QNNExecutionProvider", "OpenVINO": "OpenVINOExecutionProvider",
    "SNPE": "SNPEExecutionProvider", "XNNPACK": "XnnpackExecutionProvider",
    "WEBNN": "WebNNExecutionProvider", "WebGPU": "WebGpuExecutionProvider",
    "AZURE": "AzureExecutionProvider", "JS": "JsExecutionProvider",
    "VitisAI": "VitisAIExecutionProvider", "CoreML": "CoreMLExecutionProvider",
    "MIGraphX": "MIGraphXExecutionProvider",
}
_BY_LOWER = {k.lower(): k for k in PROVIDERS} | {v.lower(): k for k, v in PROVIDERS.items()}


def provider_names(name: str) -> tuple[str, str]:
    """(the short name ORT's append takes, the provider's full name) for a user's name."""
    short = _BY_LOWER.get(name.lower())
    if short is None:  # unknown here: let ORT judge the name as given
        bare = name[:-len("ExecutionProvider")] if name.endswith("ExecutionProvider") else name
        return bare, bare + "ExecutionProvider"
    return short, PROVIDERS[short]


# -- execution providers ----------------------------------------------------------------------

#: provider -> (concurrent Run allowed on one session?, why). A provider not listed is treated
#: as exclusive ("undocumented; serialized by default").
EP_CONCURRENT_RUN: dict[str, tuple[bool, str]] = {
    "CPUExecutionProvider": (
        True, "ORT's design: several threads may call Run on one session "
              "(https://onnxruntime.ai/docs/reference/high-level-design.html); check "
              "thread.concurrent-run passes on ORT 1.16-1.32"),
    "CUDAExecutionProvider": (
        False, "policy: no GPU run is recorded in this project, and concurrent CUDA runs had "
               "races (ORT #3828, #4829; pykeio/ort #348); serialized until a GPU run of "
               "thread.concurrent-run passes"),
    "TensorrtExecutionProvider": (
        True, "concurrent Run is safe from ORT 1.17 on: the provider locks and synchronizes "
              "its compute (ORT PR #19301, fixing #19275); exclusive with an older library"),
    "DmlExecutionProvider": (
        False, "DirectML sessions do not support concurrent Run (DirectML provider docs, "
               "https://onnxruntime.ai/docs/execution-providers/DirectML-ExecutionProvider.html)"),
    "XnnpackExecutionProvider": (
        True, "policy: the provider reports no concurrent-Run support and ORT then serializes "
              "runs itself (read in ORT's source, not tested here): safe, no overlap"),
    "WebGpuExecutionProvider": (
        True, "policy: ORT serializes one session's runs itself, as for XNNPACK (read in "
              "ORT's source, not tested here); concurrent runs of different WebGPU sessions "
              "crash (ORT #32561)"),
    "QNNExecutionProvider": (
        True, "concurrent Run on one session is safe: a mutex (ORT PR #18981)"),
}

#: provider -> (the first ORT version whose provider allows concurrent Run, why): with an
#: older library the provider is exclusive whatever EP_CONCURRENT_RUN says
MIN_CONCURRENT_VERSION: dict[str, tuple[tuple[int, int], str]] = {
    "TensorrtExecutionProvider": ((1, 17), "before ORT 1.17 concurrent TensorRT runs on one "
                                           "session corrupted outputs (ORT #19275)"),
}

#: provider options that make Run exclusive whatever the provider's row says
_EXCLUSIVE_OPTIONS: dict[str, dict[str, str]] = {
    "CUDAExecutionProvider": {
        "enable_cuda_graph": "CUDA graphs: one captured graph per session, replayed by every "
                             "Run; 'calls to Run() need to be serialized' (ORT PR #10423)"},
    "TensorrtExecutionProvider": {
        "trt_cuda_graph_enable": "CUDA graphs: one captured graph per session (ORT PR #10423)"},
}

_TRUE = ("1", "true", "True", "TRUE", "yes")


@functools.lru_cache(maxsize=16)  # (a session asks once per first run: one library, one answer)
def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def session_run_rule(providers: Sequence[str],
                     provider_options: dict[str, dict[str, str]] | None = None,
                     ort_version: str | None = None) -> dict[str, Any]:
    """Whether Run is shared for a session with these providers, and the reasons.

    Returns ``{"run": "shared"|"exclusive", "providers": [...], "reasons": [...]}``. Run is
    shared only when every provider allows concurrent runs with the options given and with the
    ORT version (``ort_version``; default: the loaded library's).
    """
    if ort_version is None:
        ort_version = _loader.library_info().version
    reasons = []
    shared = True
    for p in providers:
        ok, why = _provider_run_rule(p, provider_options, ort_version)
        reasons.append(f"{p}: {'concurrent' if ok else 'exclusive'} ({why})")
        shared = shared and ok
    return {"run": "shared" if shared else "exclusive", "providers": list(providers),
            "reasons": reasons}


#: run_is_exclusive's answers for providers given without options (the usual session), by
#: their names: (the table rows each answer was worked out from, the answer). One library per
#: process, so the names and their rows decide; the rows are compared (by identity first: one
#: lookup each) so that an answer never outlives a change of EP_CONCURRENT_RUN or
#: MIN_CONCURRENT_VERSION (a test's, an application's), which session_run_rule reads at once
_EXCLUSIVE_WITHOUT_OPTIONS: dict[tuple[str, ...], tuple[tuple[Any, ...], bool]] = {}


def run_is_exclusive(providers: Sequence[str],
                     provider_options: dict[str, dict[str, str]] | None = None) -> bool:
    """Whether :func:`session_run_rule` makes Run exclusive for a session with these providers
    and options, with the loaded library (its decision without the reasons' text: every new
    session asks it, so the answer for providers without options is kept)."""
    if not provider_options:
        names = tuple(providers)
        rows = tuple([(EP_CONCURRENT_RUN.get(p), MIN_CONCURRENT_VERSION.get(p)) for p in names])
        known = _EXCLUSIVE_WITHOUT_OPTIONS.get(names)
        if known is None or known[0] != rows:
            known = _EXCLUSIVE_WITHOUT_OPTIONS[names] = (rows, _run_is_exclusive(names, None))
        return known[1]
    return _run_is_exclusive(providers, provider_options)


def _run_is_exclusive(providers: Sequence[str],
                      provider_options: dict[str, dict[str, str]] | None) -> bool:
    ort_version = _loader.library_info().version
    return not all([_provider_run_rule(p, provider_options, ort_version)[0]
                    for p in providers])


def _provider_run_rule(provider: str, provider_options: dict[str, dict[str, str]] | None,
                       ort_version: str) -> tuple[bool, str]:
    """(whether ``provider`` lets Run be concurrent, why) with its options and that version."""
    ok, why = EP_CONCURRENT_RUN.get(
        provider, (False, "undocumented for this provider; serialized by default"))
    gate = MIN_CONCURRENT_VERSION.get(provider)
    if ok and gate is not None and _version_tuple(ort_version) < gate[0]:
        ok, why = False, f"ORT {ort_version}: {gate[1]}"
    exclusive_options = _EXCLUSIVE_OPTIONS.get(provider)
    if exclusive_options and provider_options:
        opts = provider_options.get(provider, {})
        for key, reason in exclusive_options.items():
            if str(opts.get(key, "")) in _TRUE:
                ok, why = False, f"{key}={opts[key]}: {reason}"
    return ok, why
