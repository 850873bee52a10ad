"""Execution providers: their names, and whether each lets one session run concurrently.

The generic append slot takes a provider's short name (``"XNNPACK"``), ORT reports the long one
(``"XnnpackExecutionProvider"``); :func:`provider_names` maps a user's spelling to both.
:func:`session_run_rule` decides, from a session's providers and their options, whether
``Session.run`` is shared or exclusive; :mod:`ortc.rules` only exports it.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["PROVIDERS", "provider_names", "EP_CONCURRENT_RUN", "session_run_rule"]

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
        True, "ORT docs: several threads may call Run on one session "
              "(onnxruntime.ai/docs/api/c-api, Threading; issue #114); research E1: 0 wrong of "
              "320 concurrent runs; tests/test_threads.py::test_shared_run_stress_matches_serial"),
    "CUDAExecutionProvider": (
        False, "undocumented on a GPU in this project (issue 6 item 8: no device evidence "
               "recorded yet); serialized by default. ORT's CUDA EP reports "
               "ConcurrentRunSupported() true, but concurrent CUDA runs had races "
               "(ORT #3828, #4829; pykeio/ort #348)"),
    "TensorrtExecutionProvider": (
        True, "concurrent Run supported since ORT 1.17: the EP locks its engine "
              "(ORT #19275, PR #19301)"),
    "DmlExecutionProvider": (
        False, "DirectML sessions do not support concurrent Run (DirectML EP docs, quoted in "
               "ORT #22147; crashes #17686)"),
    "XnnpackExecutionProvider": (
        True, "the EP reports ConcurrentRunSupported() false, so ORT itself serializes Run "
              "with a lock (inference_session.cc RegisterExecutionProvider): safe, no overlap"),
    "WebGpuExecutionProvider": (
        True, "the EP reports ConcurrentRunSupported() false, so ORT itself serializes Run "
              "(research §4); concurrency across sessions is a separate problem (#32561)"),
    "QNNExecutionProvider": (
        True, "concurrent Run on one session supported since ORT PR #18981 (a mutex)"),
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


def session_run_rule(providers: Sequence[str],
                     provider_options: dict[str, dict[str, str]] | None = None) -> dict[str, Any]:
    """Whether Run is shared for a session with these providers, and the reasons.

    Returns ``{"run": "shared"|"exclusive", "providers": [...], "reasons": [...]}``. Run is
    shared only when every provider allows concurrent runs with the options given.
    """
    reasons = []
    shared = True
    for p in providers:
        ok, why = EP_CONCURRENT_RUN.get(
            p, (False, "undocumented for this provider; serialized by default"))
        opts = (provider_options or {}).get(p, {})
        for key, reason in _EXCLUSIVE_OPTIONS.get(p, {}).items():
            if str(opts.get(key, "")) in _TRUE:
                ok, why = False, f"{key}={opts[key]}: {reason}"
        reasons.append(f"{p}: {'concurrent' if ok else 'exclusive'} ({why})")
        shared = shared and ok
    return {"run": "shared" if shared else "exclusive", "providers": list(providers),
            "reasons": reasons}
