"""What :func:`ortc.version` reports (loaded on first use: see ``_LAZY`` in ``ortc/__init__``)."""

from __future__ import annotations

from dataclasses import dataclass

from . import __version__
from ._loader import load
from .env import available_providers

__all__ = ["VersionInfo", "version"]


@dataclass(frozen=True)
class VersionInfo:
    """What :func:`version` reports."""

    ortc: str
    library_path: str
    library_version: str
    api_version: int
    library_api: int
    declared_api: int
    providers: tuple[str, ...]
    source: str

    def __str__(self) -> str:
        return (f"ortc {self.ortc}: ONNX Runtime {self.library_version} at {self.library_path} "
                f"({self.source}); API {self.api_version} (library {self.library_api}, ortc "
                f"{self.declared_api}); providers: {', '.join(self.providers)}")


def version() -> VersionInfo:
    """The loaded library (loading it if needed): path, version, negotiated API, providers."""
    info = load()
    return VersionInfo(ortc=__version__, library_path=info.path, library_version=info.version,
                       api_version=info.api_version, library_api=info.library_api,
                       declared_api=info.declared_api, providers=tuple(available_providers()),
                       source=info.source)
