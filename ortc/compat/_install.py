"""Make ``import onnxruntime`` resolve to ortc.compat for the rest of the process."""

from __future__ import annotations

import sys
import types
import warnings

#: module names applications import, all served by ortc.compat
ALIASES = ("onnxruntime.capi.onnxruntime_pybind11_state", "onnxruntime.capi._pybind_state",
           "onnxruntime.capi.onnxruntime_inference_collection")


def install() -> types.ModuleType:
    """Register ortc.compat as ``onnxruntime`` (and the ``onnxruntime.capi`` modules) in
    ``sys.modules``. Code that imported the real onnxruntime before keeps what it has."""
    compat = _package()
    if "onnxruntime.capi.onnxruntime_pybind11_state" in sys.modules and \
            sys.modules["onnxruntime.capi.onnxruntime_pybind11_state"] is not compat:
        warnings.warn("ortc.compat.install(): onnxruntime's own module was imported before; "
                      "objects taken from it stay onnxruntime's", RuntimeWarning, stacklevel=2)
    for name in [n for n in sys.modules if n == "onnxruntime" or n.startswith("onnxruntime.")]:
        del sys.modules[name]
    for alias in ALIASES:
        sys.modules[alias] = compat
    sys.modules["onnxruntime.capi"] = compat.capi
    sys.modules["onnxruntime"] = compat
    return compat


def make_capi(compat: types.ModuleType) -> types.ModuleType:
    """The ``onnxruntime.capi`` stand-in: its submodules applications name are ortc.compat."""
    capi = types.ModuleType("onnxruntime.capi", "ortc.compat's stand-in for onnxruntime.capi")
    capi.__path__ = []  # a package, so "import onnxruntime.capi.X" looks X up in sys.modules
    for alias in ALIASES:
        setattr(capi, alias.rsplit(".", 1)[1], compat)
    return capi


def installed() -> bool:
    return sys.modules.get("onnxruntime") is _package()


def _package() -> types.ModuleType:
    # ortc.compat itself, imported before this module is used (it imports this module)
    return sys.modules[__name__.rpartition(".")[0]]
