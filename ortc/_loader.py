"""The one place that finds, loads and negotiates with the ONNX Runtime library.

An explicit choice is loaded or refused, never replaced by a guess: :func:`load` with a path,
else ``ORTC_LIBRARY``; a choice that cannot be loaded raises :class:`LibraryNotFoundError`
naming the path and why. Only when nothing was chosen does ortc search: the library inside an
installed onnxruntime / onnxruntime-gpu wheel (its ``onnxruntime/capi`` folder, found with
``importlib.util.find_spec`` without importing the package; package metadata only as a
fallback), then the system's loader. The library is opened once and kept for the life of the
process; every wrapper reaches ORT through the one :class:`Api` facade built here.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, cast

from ._ffi import ffi
from ._slots import DECLARED_API_VERSION, SINCE, SLOTS
from .errors import LibraryNotFoundError, NotSupportedError

__all__ = ["Api", "LibraryInfo", "load", "api", "library_info", "candidate_paths"]

# Wheels that ship libonnxruntime in <package>/capi. The GPU wheel installs the same package name.
_DISTRIBUTIONS = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino",
                  "onnxruntime-qnn", "ort-nightly", "ort-nightly-gpu")

if sys.platform == "darwin":
    _PATTERNS = ("libonnxruntime.*.dylib", "libonnxruntime.dylib")
    _SYSTEM_NAMES = ("libonnxruntime.dylib",)
elif sys.platform == "win32":
    _PATTERNS = ("onnxruntime.dll",)
    _SYSTEM_NAMES = ("onnxruntime.dll",)
else:
    # The wheel's file is versioned (libonnxruntime.so.1.32.0); the plain name is a dev symlink.
    _PATTERNS = ("libonnxruntime.so.*", "libonnxruntime.so")
    _SYSTEM_NAMES = ("libonnxruntime.so", "libonnxruntime.so.1")


@dataclass(frozen=True)
class LibraryInfo:
    """What was loaded: the file, ORT's version string, and the API versions."""

    path: str
    version: str
    #: the highest API version the library offers (ORT 1.N offers API N)
    library_api: int
    #: the highest API version ortc declares
    declared_api: int
    #: min(declared, library): the table ortc uses
    api_version: int
    #: how the library was chosen ("explicit", "ORTC_LIBRARY", "onnxruntime package", "system")
    source: str
    #: every place searched, in order
    searched: tuple[str, ...]
    #: ORT's build description (GetBuildInfoString: git commit, build type, ...)
    build_info: str = ""


class Api:
    """The OrtApi table as plain attributes: one cdata function pointer per usable slot.

    A slot newer than the library is a callable raising :class:`NotSupportedError`; reading it
    from the raw table would read past the table's end.
    """

    version: int
    info: LibraryInfo

    def __init__(self, table: Any, version: int, info: LibraryInfo, lib: Any) -> None:
        self.table = table
        self.version = version
        self.info = info
        self.lib = lib  # pins the dlopen handle for as long as any wrapper holds the facade
        self.available: dict[str, int] = {}
        for name, since in SLOTS:
            if since <= version:
                setattr(self, name, getattr(table, name))
                self.available[name] = since
            else:
                setattr(self, name, _unsupported(name, since, info))
        #: the one-call tensor type-and-shape query exists (API 23+)
        self.fast_shape = "GetTensorElementTypeAndShapeDataReference" in self.available

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not slots (slots are set in __init__); it also tells
        # type checkers that slots are dynamic attributes.
        raise AttributeError(f"OrtApi has no slot {name!r}")

    def has(self, name: str) -> bool:
        """Whether slot ``name`` exists in the negotiated table."""
        return name in self.available

    def instrument(self, wrap: Callable[[str, Any], Any],
                   names: Any = None) -> Callable[[], None]:
        """Replace slots with ``wrap(name, original)`` (slot counting, fault injection in tests).

        Wrappers read slots from this facade at call time, so the replacement is seen
        everywhere. Returns a function that restores the originals.
        """
        chosen = list(self.available) if names is None else list(names)
        saved = {n: getattr(self, n) for n in chosen}
        for n, fn in saved.items():
            setattr(self, n, wrap(n, fn))

        def undo() -> None:
            for n, fn in saved.items():
                setattr(self, n, fn)

        return undo


def _unsupported(name: str, since: int, info: LibraryInfo) -> Callable[..., Any]:
    def missing(*_args: Any) -> Any:
        raise NotSupportedError(
            f"{name} needs ORT API {since}, the loaded library has {info.library_api} "
            f"(ONNX Runtime {info.version} at {info.path})")

    missing.__name__ = name
    return missing


_lock = threading.Lock()
_api: Api | None = None


_INSTALL_HINT = ("install onnxruntime's library with `pip install onnxruntime` (or "
                 "onnxruntime-gpu), point ORTC_LIBRARY at a libonnxruntime file, or call "
                 "ortc.load(path)")


def _capi_hits(capi: str) -> list[str]:
    from fnmatch import fnmatch  # not glob: it imports more, for nothing a folder listing needs

    try:
        names = os.listdir(capi)
    except OSError:
        return []
    hits: list[str] = []
    for pattern in _PATTERNS:
        hits += sorted(os.path.join(capi, n) for n in names
                       if fnmatch(n, pattern) and "providers" not in n)
    return hits


def _package_candidates(searched: list[str]) -> list[str]:
    """Libraries in installed onnxruntime wheels; onnxruntime itself is never imported."""
    import importlib.util

    found: list[str] = []
    try:
        # a top-level find_spec runs no package code: it only locates onnxruntime/__init__.py
        spec = importlib.util.find_spec("onnxruntime")
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        capi = os.path.join(folder, "capi")
        hits = _capi_hits(capi)
        searched.append(f"package onnxruntime: {capi} "
                        f"({', '.join(map(os.path.basename, hits)) or 'no library'})")
        found += hits
    if found:
        return found
    if spec is None:
        searched.append("package onnxruntime: not importable")
    # fallback: the wheels' metadata (slower to import; reaches installs find_spec misses)
    from importlib import metadata

    for dist_name in _DISTRIBUTIONS:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            continue
        capi = str(dist.locate_file(os.path.join("onnxruntime", "capi")))
        hits = _capi_hits(capi)
        searched.append(f"package {dist_name} {dist.version} (metadata): {capi} "
                        f"({', '.join(map(os.path.basename, hits)) or 'no library'})")
        found += hits
    return found


def candidate_paths() -> tuple[list[tuple[str, str]], list[str]]:
    """What a search (nothing chosen) tries, in order, as (path, source), and a log of every
    place searched. ``ORTC_LIBRARY`` is not searched: it is a choice (see :func:`load`)."""
    searched: list[str] = []
    out = [(p, "onnxruntime package") for p in _package_candidates(searched)]
    for name in _SYSTEM_NAMES:
        searched.append(f"system loader: {name}")
        out.append((name, "system"))
    return out, searched


def _open(path: str, source: str, searched: list[str]) -> Api:
    try:
        lib: Any = ffi.dlopen(path)  # its symbols are not declared to type checkers
    except OSError as exc:
        msg = str(exc)  # cffi's text names the path already ("cannot load library '...': ...")
        raise LibraryNotFoundError(msg if path in msg else f"cannot load {path}: {msg}") from exc
    try:
        get_base = lib.OrtGetApiBase
    except (AttributeError, ffi.error) as exc:  # cffi raises ffi.error for a missing symbol
        raise LibraryNotFoundError(f"{path} is not an ONNX Runtime library (it has no "
                                   f"OrtGetApiBase)") from exc
    base = get_base()
    version = cast(bytes, ffi.string(base.GetVersionString())).decode()
    try:
        library_api = int(version.split(".")[1])
    except (IndexError, ValueError):
        library_api = DECLARED_API_VERSION
    negotiated = min(DECLARED_API_VERSION, library_api)
    table: Any = ffi.NULL  # the OrtApi struct: its slots are read by name
    # A build may report a version whose table it cannot give (a custom build): step down.
    while negotiated >= 1:
        table = base.GetApi(negotiated)
        if table != ffi.NULL:
            break
        negotiated -= 1
    if table == ffi.NULL:
        raise LibraryNotFoundError(f"{path} (ONNX Runtime {version}) offers no API version "
                                   f"up to {DECLARED_API_VERSION}")
    build_info = ""
    if negotiated >= _SINCE_BUILD_INFO:
        build_info = cast(bytes, ffi.string(table.GetBuildInfoString())).decode(
            errors="replace").strip()
    real = os.path.realpath(path) if os.path.exists(path) else path
    info = LibraryInfo(path=real, version=version, library_api=library_api,
                       declared_api=DECLARED_API_VERSION, api_version=negotiated,
                       source=source, searched=tuple(searched), build_info=build_info)
    return Api(table, negotiated, info, lib)


_SINCE_BUILD_INFO = SINCE["GetBuildInfoString"]


def _open_chosen(path: str, source: str, how: str) -> Api:
    """Load the library the user chose, or raise LibraryNotFoundError saying why: no search."""
    if os.path.isdir(path):
        raise LibraryNotFoundError(f"{how}: {path} is a directory, not a library file")
    if not os.path.exists(path) and (os.sep in path or (os.altsep or os.sep) in path):
        raise LibraryNotFoundError(f"{how}: {path}: no such file")
    # a bare name (libonnxruntime.so.1) is the system loader's to find
    try:
        return _open(path, source, [how])
    except LibraryNotFoundError as exc:
        raise LibraryNotFoundError(f"{how}: {exc}") from None


def load(path: str | os.PathLike[str] | None = None, *, _how: str | None = None) -> LibraryInfo:
    """Load the ONNX Runtime library (once per process) and return what was loaded.

    With ``path``, load exactly that file; else the file ``ORTC_LIBRARY`` names; either way a
    file that cannot be loaded raises :class:`LibraryNotFoundError` (no fallback). With
    neither, search as the module docstring says. Calling it again with another path after a
    library is loaded raises ``RuntimeError``: ORT keeps process-wide state, so one process
    uses one library.

    >>> ortc.load("/opt/ort/lib/libonnxruntime.so.1.32.0")  # doctest: +SKIP
    """
    global _api
    with _lock:
        if _api is not None:
            if path is not None and os.path.realpath(os.fspath(path)) != _api.info.path:
                raise RuntimeError(f"ortc already loaded {_api.info.path}; one process uses one "
                                   f"ONNX Runtime library (start a new process for another)")
            return _api.info
        if path is not None:
            p = os.fspath(path)
            _api = _open_chosen(p, "explicit", _how or f"ortc.load({p!r})")
            return _api.info
        env = os.environ.get("ORTC_LIBRARY")
        if env:
            _api = _open_chosen(env, "ORTC_LIBRARY", f"ORTC_LIBRARY={env}")
            return _api.info
        candidates, searched = candidate_paths()
        searched.insert(0, "ORTC_LIBRARY: not set")
        errors: list[str] = []
        for cand, source in candidates:
            try:
                _api = _open(cand, source, searched)
                return _api.info
            except LibraryNotFoundError as exc:
                errors.append(str(exc))
        raise LibraryNotFoundError(
            "no ONNX Runtime library found. Searched:\n  " + "\n  ".join(searched)
            + "\nErrors:\n  " + "\n  ".join(errors) + "\nTo fix: " + _INSTALL_HINT + ".")


def api() -> Api:
    """The facade of the loaded library, loading it on first use."""
    a = _api
    if a is None:
        load()
        a = _api
    assert a is not None
    return a


def library_info() -> LibraryInfo:
    return api().info
