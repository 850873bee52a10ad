"""The distribution is complete: the sdist carries what building, testing and regenerating
need; a wheel built from that sdist installs into a fresh venv and every CLI subcommand works
from outside the source tree (bench says in one line that it needs a source checkout, and runs
from an unpacked sdist).

No network: the sdist and wheel are built without build isolation (setuptools comes from the
test extra) and the fresh venv reads the wheel's dependencies (numpy, cffi, onnxruntime) from
this interpreter's site-packages through a .pth file; ortc itself comes only from the wheel.
That .pth file also shows the venv an ortc installed the ordinary way (a decoy: its package
refuses to import), as a developer's site-packages may have one: pip must install the wheel
anyway (it saw ortc 0.1.0 installed and installed nothing), so the tests pass whether or not
ortc is installed where they run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

import models
import ortc
from conftest import ROOT

# what a source checkout needs beyond the package: building (build_ffi.py regenerates the cffi
# layer from include/), testing (helpers and data), benchmarking, make
SDIST_MUST_HAVE = ("LICENSE", "README.md", "Makefile", "pyproject.toml", "MANIFEST.in",
                   "build_ffi.py", "include/", "tests/conftest.py", "tests/models.py",
                   "tests/data/", "bench/runner.py", "bench/floor.c", "tools/with-pypy",
                   "rust/ortc-rules/Cargo.toml", "rust/ortc-rules/src/lib.rs", "ortc/py.typed")
_SKIP_COPY = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info", "target",
                                    "__pycache__", ".pytest_cache", ".hypothesis", ".cache",
                                    ".mypy_cache")


def _run(cmd: list[str], cwd: Path | str, env: dict[str, str] | None = None,
         timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("dist")
    # a copy of the tree, so building writes nothing (egg-info, build/) into the checkout
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=_SKIP_COPY, symlinks=True)
    out = tmp / "out"
    proc = _run([sys.executable, "-c", "import sys\nfrom setuptools import build_meta as b\n"
                 "print(b.build_sdist(sys.argv[1]))", str(out)], cwd=src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sdist = out / proc.stdout.strip().splitlines()[-1]
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        tar.extractall(tmp / "unpacked")
    unpacked = tmp / "unpacked" / sdist.name[:-len(".tar.gz")]
    # the wheel is built from the unpacked sdist: proof that the sdist builds
    proc = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                 "-w", str(out), str(unpacked)], cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [wheel] = out.glob("ortc-*.whl")
    venv = tmp / "venv"
    proc = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    python = venv / "bin" / "python"
    purelib = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                   cwd=tmp).stdout.strip()
    # the dependencies, from here; ortc's editable-install hook there is not run (.pth files
    # in a folder a .pth adds are not read)
    decoy = tmp / "decoy"   # an ortc installed the ordinary way, of the wheel's version
    (decoy / "ortc").mkdir(parents=True)
    (decoy / "ortc" / "__init__.py").write_text("raise ImportError('the decoy ortc')\n")
    (decoy / f"ortc-{ortc.__version__}.dist-info").mkdir()
    (decoy / f"ortc-{ortc.__version__}.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: ortc\nVersion: {ortc.__version__}\n")
    (decoy / f"ortc-{ortc.__version__}.dist-info" / "RECORD").write_text("")
    Path(purelib, "zz_deps.pth").write_text(f"{decoy}\n{sysconfig.get_path('purelib')}\n")
    # --ignore-installed: into the venv, whatever ortc the venv already sees (without it pip
    # finds the same version installed and does nothing)
    proc = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                 "--no-deps", "--no-index", "--ignore-installed", str(wheel)], cwd=tmp)
    if "no such option: --python" in proc.stderr:  # pip < 22.3: install with the venv's view
        proc = _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                     "--ignore-installed", "--prefix", str(venv), str(wheel)], cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    work = tmp / "elsewhere"   # outside the source tree and the sdist
    work.mkdir()
    (work / "add.onnx").write_bytes(models.add_model())
    return {"sdist": sdist, "names": names, "unpacked": unpacked, "wheel": wheel,
            "venv": venv, "python": python, "work": work}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ORTC_LIBRARY")}
    return env


def _ortc(d: dict[str, Any], *args: str, cwd: Path | None = None
          ) -> subprocess.CompletedProcess[str]:
    return _run([str(d["venv"] / "bin" / "ortc"), *args], cwd=cwd or d["work"], env=_env())


def test_sdist_can_build_test_and_regenerate(dist: dict[str, Any]) -> None:
    top = dist["unpacked"].name + "/"
    names = {n[len(top):] + ("/" if n.endswith(tuple("/")) else "") for n in dist["names"]
             if n.startswith(top)}
    folders = {n.rsplit("/", 1)[0] + "/" for n in names if "/" in n}
    for must in SDIST_MUST_HAVE:
        assert must in names or must in folders, f"the sdist lacks {must}"
    assert not any("__pycache__" in n or n.endswith(".pyc") or "/target/" in n for n in names)
    # build_ffi.py --check regenerates the cffi layer in memory and compares it
    proc = _run([sys.executable, "build_ffi.py", "--check"], cwd=dist["unpacked"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # its tests run there (helpers, data and conftest included), on the installed wheel
    proc = _run([str(dist["python"]), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                 "tests/test_syntax.py", "tests/test_malformed.py", "-k", "syntax or recorded"],
                cwd=dist["unpacked"], env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "skipped" not in proc.stdout, proc.stdout


def test_wheel_metadata_and_license(dist: dict[str, Any]) -> None:
    with zipfile.ZipFile(dist["wheel"]) as z:
        names = z.namelist()
        meta = next(z.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: MIT" in meta
    # full project metadata; the extras ask for the onnxruntime wheels that carry the library
    for line in ("Classifier: Typing :: Typed", "Classifier: Operating System :: POSIX :: Linux",
                 "Classifier: Programming Language :: Python :: Implementation :: PyPy",
                 "Requires-Python: >=3.9", "Project-URL: ONNX Runtime C API, "
                 "https://onnxruntime.ai/docs/api/c/",
                 "Requires-Dist: onnxruntime>=1.19; extra == \"cpu\"",
                 "Requires-Dist: onnxruntime-gpu>=1.19; extra == \"gpu\""):
        assert line + "\n" in meta, (line, meta[:3000])
    assert "Keywords: " in meta and "onnxruntime" in meta.split("Keywords: ", 1)[1].split("\n")[0]
    assert "Classifier: License" not in meta  # the SPDX expression says it
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    assert "ortc/py.typed" in names and "ortc/conformance/checks/__init__.py" in names
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        assert "Copyright (c) 2026 the ortc authors" in f.read()


def test_installed_ortc_is_the_wheel(dist: dict[str, Any]) -> None:
    proc = _run([str(dist["python"]), "-c", "import ortc, sys; print(ortc.__file__)"],
                cwd=dist["work"], env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(dist["venv"])), proc.stdout


def test_every_subcommand_from_an_installed_wheel(dist: dict[str, Any]) -> None:
    model = str(dist["work"] / "add.onnx")
    proc = _ortc(dist, "--version")
    assert (proc.returncode, proc.stdout) == (0, f"ortc {ortc.__version__}\n"), proc
    proc = _ortc(dist, "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: ortc ")
    proc = _ortc(dist)  # no command: a usage error
    assert proc.returncode == 2 and proc.stderr.startswith("usage: ortc "), proc
    proc = _ortc(dist, "version", "--json")
    assert proc.returncode == 0, proc.stderr
    v = json.loads(proc.stdout)
    assert v["source"] == "onnxruntime package" and v["library_version"] == ortc.version().library_version
    proc = _ortc(dist, "info", model)
    assert proc.returncode == 0 and "inputs:" in proc.stdout, proc.stderr
    proc = _ortc(dist, "run", model)
    assert proc.returncode == 0 and proc.stdout.startswith("c = "), proc.stderr
    proc = _ortc(dist, "rules", "--format", "rust")
    assert proc.returncode == 0 and "Send" in proc.stdout, proc.stderr
    proc = _ortc(dist, "conformance", "--only", "status.")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("Library checked: ") and " pass" in proc.stdout
    proc = _ortc(dist, "bench", "--smoke")
    assert proc.returncode == 2 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("ortc bench: needs a source checkout") and "make bench" in line
    # --help works for every subcommand from a wheel (bench's says where its options are)
    for command in ("version", "info", "run", "rules", "conformance", "bench"):
        proc = _ortc(dist, command, "--help")
        assert proc.returncode == 0 and proc.stdout.startswith(f"usage: ortc {command} "), \
            (command, proc.stdout, proc.stderr)
    assert "source checkout" not in proc.stderr and "unpacked sdist" in proc.stdout


def test_bench_runs_from_an_unpacked_sdist(dist: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = _ortc(dist, "bench", "--smoke", "--no-threads", "--no-import", "--no-c",
                 "--json", str(out), cwd=dist["unpacked"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(json.loads(out.read_text())["models"]) == ["tiny"]
