"""Fetch the shared library of a given onnxruntime release (for tests and the version matrix).

``fetch_library("1.16.3")`` runs ``pip download --no-deps`` for that onnxruntime wheel and
extracts only ``libonnxruntime.so.*`` into a cache folder, so other ORT versions can be loaded
in child processes (``ORTC_LIBRARY=...``) without installing them. Beside the library,
``SOURCE.json`` records the wheel it came from (file name, sha256, the member extracted) and
the library's sha256; :func:`provenance` reads it back for the matrix report.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import zipfile

from .._loader import FIRST_WHEEL_WITH_LIBRARY, elf_truncation

__all__ = ["cache_dir", "fetch_library", "no_source", "provenance", "sha256_of"]

#: the file beside a fetched library that records the wheel it was taken from
SOURCE_FILE = "SOURCE.json"


#: ORT versions whose onnxruntime wheel has no libonnxruntime.so (1.16-1.18 link ORT statically
#: into their Python extension), and a PyPI wheel that ships that release's shared library
OTHER_SOURCES: dict[str, tuple[str, str]] = {
    "1.16.2": ("sherpa-onnx", "1.8.11"),   # sherpa_onnx/lib/libonnxruntime.so.1.16.2
    "1.17.1": ("sherpa-onnx", "1.9.30"),   # sherpa_onnx/lib/libonnxruntime.so.1.17.1
}


def no_source(version: str) -> str | None:
    """Why ``version``'s library cannot be fetched, said before any download (an onnxruntime
    wheel before 1.19 has no libonnxruntime.so, and only the versions of OTHER_SOURCES have
    another wheel here), or None when a wheel may have it."""
    try:
        minor = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return None
    if minor >= FIRST_WHEEL_WITH_LIBRARY or version in OTHER_SOURCES:
        return None
    return (f"the onnxruntime {version} wheel has no libonnxruntime.so (wheels before "
            f"{'.'.join(map(str, FIRST_WHEEL_WITH_LIBRARY))} link ORT into their extension); "
            f"older versions with another source: {', '.join(sorted(OTHER_SOURCES))} "
            "(ortc.conformance.wheels.OTHER_SOURCES)")


def cache_dir() -> str:
    """Where fetched libraries live: ``$ORTC_LIB_CACHE`` or ``~/.cache/ortc/libs``."""
    return os.environ.get("ORTC_LIB_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "ortc", "libs")


def _platforms() -> list[str]:
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return [f"manylinux_2_{v}_{arch}" for v in (28, 27, 17)] + [f"manylinux2014_{arch}"]


def fetch_library(version: str, package: str = "onnxruntime", cache: str | None = None,
                  progress: bool = False) -> str:
    """Path of ``libonnxruntime.so.<version>`` from the ``package==version`` wheel (cached);
    for the versions in :data:`OTHER_SOURCES`, from the wheel named there. ``progress``: pip
    shows its download progress (on this process's stdout: for a terminal). A failure's
    message is one line, pip's own output on the lines after it; it leaves no folder behind."""
    if not sys.platform.startswith("linux"):
        raise RuntimeError("fetch_library supports Linux wheels only")
    dest = os.path.join(cache or cache_dir(), f"{package}-{version}")
    wheel_package, wheel_version = package, version
    if package == "onnxruntime" and version in OTHER_SOURCES:
        wheel_package, wheel_version = OTHER_SOURCES[version]
    found = [p for p in glob.glob(os.path.join(dest, "libonnxruntime.so*"))
             if not p.endswith(".part")]
    if found and elf_truncation(found[0]) is None:
        return found[0]
    for damaged in found:  # cut short (a full disk): fetched again, not run into a crash
        os.remove(damaged)
    return _download(package, version, wheel_package, wheel_version, dest, progress)


def _download(package: str, version: str, wheel_package: str, wheel_version: str, dest: str,
              progress: bool, keep: str | None = None) -> str:
    """pip-download the wheel, extract the library into ``dest`` and record where it came
    from (SOURCE_FILE). With ``keep`` (a library already in ``dest``) nothing is extracted:
    only the record is written, and only when the wheel's library has ``keep``'s hash."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
               "-d", tmp, f"{wheel_package}=={wheel_version}"]
        if not progress:
            cmd.insert(4, "--quiet")
        for plat in _platforms():
            cmd += ["--platform", plat]
        # with progress, pip's stdout (its progress bar) is the terminal's; its errors are
        # read either way
        proc = subprocess.run(cmd, stdout=None if progress else subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        wheels = glob.glob(os.path.join(tmp, "*.whl"))
        if proc.returncode != 0 or not wheels:
            said = (proc.stderr or "").strip()
            why = ("no such release for this platform on the package index"
                   if "No matching distribution" in said or "Could not find a version" in said
                   else said.splitlines()[-1] if said else f"exit status {proc.returncode}")
            raise RuntimeError(f"pip download {wheel_package}=={wheel_version} failed: {why}"
                               + (f"\n{said[-2000:]}" if said else ""))
        os.makedirs(dest, exist_ok=True)  # only for a wheel in hand: no empty folder left
        with zipfile.ZipFile(wheels[0]) as zf:
            members = [m for m in zf.namelist()
                       if os.path.basename(m).startswith("libonnxruntime.so")
                       and "providers" not in m
                       and (package != "onnxruntime" or wheel_package == package
                            or os.path.basename(m) == f"libonnxruntime.so.{version}")]
            if not members:
                raise RuntimeError(f"{os.path.basename(wheels[0])} has no libonnxruntime.so")
            member = sorted(members, key=len)[-1]  # the versioned file
            with zf.open(member) as src:
                data = src.read()
        digest = hashlib.sha256(data).hexdigest()
        target = keep or os.path.join(dest, os.path.basename(member))
        if keep is None:
            with open(target + ".part", "wb") as out:
                out.write(data)
            os.replace(target + ".part", target)
        elif sha256_of(keep) != digest:
            raise RuntimeError(f"{os.path.basename(wheels[0])} holds another {member} than "
                               f"{keep}: no source recorded")
        record = {"package": wheel_package, "version": wheel_version,
                  "wheel": os.path.basename(wheels[0]), "wheel_sha256": sha256_of(wheels[0]),
                  "member": member, "file": os.path.basename(target), "sha256": digest,
                  "index": "PyPI (pip download)"}
        with open(os.path.join(dest, SOURCE_FILE), "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1)
    return target


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def provenance(version: str, library: str, package: str = "onnxruntime",
               backfill: bool = True) -> dict[str, str]:
    """Where ``library`` (fetched by :func:`fetch_library` for ``version``) came from: its
    file name, sha256, and the wheel (name, sha256, the member it was extracted from) as
    recorded at the fetch. A library fetched before the record was kept gets its record now
    (``backfill``: the wheel is downloaded again and its library compared by hash); when that
    is impossible the record says so, with the file's own hash."""
    folder = os.path.dirname(os.path.abspath(library))
    record_path = os.path.join(folder, SOURCE_FILE)
    digest = sha256_of(library)
    if not os.path.isfile(record_path) and backfill and \
            os.path.basename(folder) == f"{package}-{version}":
        wheel_package, wheel_version = OTHER_SOURCES.get(version, (package, version)) \
            if package == "onnxruntime" else (package, version)
        try:
            _download(package, version, wheel_package, wheel_version, folder, False,
                      keep=library)
        except Exception:  # noqa: BLE001 - said in the record below
            pass
    record: dict[str, str] = {}
    if os.path.isfile(record_path):
        with open(record_path, encoding="utf-8") as f:
            record = json.load(f)
    if record.get("sha256") != digest:  # no record, or one about another file
        record = {"wheel": "unrecorded", "package": "", "version": ""}
    record.update(file=os.path.basename(library), path=os.path.abspath(library), sha256=digest)
    return record
