"""Make ``import onnxruntime`` resolve to ortc.compat for the rest of the process.

The onnxruntime wheel's pure-Python subpackages (``onnxruntime.quantization``, ``.tools``,
``.transformers``, ``.backend``, ``.datasets``) are loaded from the wheel's own files when it is
installed: their ``import onnxruntime`` is then ortc.compat. Its ``capi`` directory is never
read (its extension must not load)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
import types
import warnings
from typing import Any, Sequence

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
    if not any(isinstance(f, WheelSubpackages) for f in sys.meta_path):
        # after the path finders: they look for these names in ortc/compat first, and fail
        sys.meta_path.append(WheelSubpackages())
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


def wheel_directory() -> str | None:
    """The directory of the onnxruntime package on ``sys.path`` (its ``__init__`` is not run:
    the path finder only locates it), or None when there is none."""
    spec = importlib.machinery.PathFinder.find_spec("onnxruntime")
    if spec is None or not spec.origin or os.path.basename(spec.origin) != "__init__.py":
        return None
    return os.path.dirname(spec.origin)


class WheelSubpackages:
    """A meta path finder for ``onnxruntime.<name>``, a package or module of the onnxruntime
    wheel other than ``capi``, while ortc.compat is installed as ``onnxruntime``: the wheel's
    file, loaded as that name (its own submodules are then found through its ``__path__``,
    its ``import onnxruntime`` in ``sys.modules``)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> Any:
        parent, _, name = fullname.rpartition(".")
        if parent != "onnxruntime" or name == "capi" or not installed():
            return None
        root = wheel_directory()
        if root is None:
            return None
        package = os.path.join(root, name)
        init = os.path.join(package, "__init__.py")
        if os.path.isfile(init):
            return importlib.util.spec_from_file_location(
                fullname, init, submodule_search_locations=[package])
        if os.path.isfile(package + ".py") and name != "__init__":
            return importlib.util.spec_from_file_location(fullname, package + ".py")
        return None

    def invalidate_caches(self) -> None:
        pass
