"""A model may read external data only from files inside its folder (docs/RELIABILITY.md,
"Files a model can make ortc read"), whatever library ortc has loaded: ORT checks locations
only from 1.25.1, and 1.16.2 returns the bytes of ``../secret`` as a model's output."""

from __future__ import annotations

import io
import json
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

import models
import ortc
import ortc.batch
from conftest import run_python
from ortc.conformance.wheels import fetch_library
from ortc.session import EXTERNAL_DATA_FOLDER_KEY

DATA = b"inside!!"
SECRET = b"SECRET!!"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp/secret.bin (outside), tmp/m/ (the model's folder, also the current folder) with
    w.bin, sub/w.bin, a symlink to the secret and a symlinked folder outside."""
    (tmp_path / "secret.bin").write_bytes(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "w.bin").write_bytes(SECRET)
    m = tmp_path / "m"
    (m / "sub").mkdir(parents=True)
    (m / "w.bin").write_bytes(DATA)
    (m / "sub" / "w.bin").write_bytes(DATA)
    (m / "link.bin").symlink_to(tmp_path / "secret.bin")
    (m / "inner_link.bin").symlink_to(m / "sub" / "w.bin")
    (m / "linked_dir").symlink_to(tmp_path / "outside")
    os.mkfifo(m / "fifo.bin")
    monkeypatch.chdir(m)
    return m


def _sources(m: Path, model: bytes) -> dict[str, Any]:
    path = m / "model.onnx"
    path.write_bytes(model)
    return {"path": str(path), "pathlib": path, "relative path": "model.onnx", "bytes": model,
            "bytearray": bytearray(model), "memoryview": memoryview(model),
            "file object": io.BytesIO(model)}


INSIDE = ["w.bin", "sub/w.bin", "./w.bin", "sub/../w.bin", "inner_link.bin"]
ESCAPES = {
    "../secret.bin": "leaves its folder",
    "sub/../../secret.bin": "leaves its folder",
    "link.bin": "through a symbolic link",
    "linked_dir/w.bin": "through a symbolic link",
    "ABSOLUTE": "is an absolute path",
    "fifo.bin": "is not a regular file",
    "*/_ORT_MEM_ADDR_/*": "memory address",
    "w.bin\0../../secret.bin": "NUL",
}


@pytest.mark.parametrize("location", INSIDE)
def test_external_data_inside_the_models_folder_loads_from_every_source(tree: Path,
                                                                        location: str) -> None:
    for kind, source in _sources(tree, models.external_data_model(location)).items():
        [y] = ortc.Session(source).run(None, {})
        assert bytes(y) == DATA, kind


@pytest.mark.parametrize("place", models.EXTERNAL_DATA_PLACES)
@pytest.mark.parametrize("location", sorted(ESCAPES))
def test_a_location_outside_the_folder_is_refused_naming_it(tree: Path, location: str,
                                                             place: str) -> None:
    if location == "ABSOLUTE":
        location = str(tree.parent / "secret.bin")
    why = ESCAPES.get(location, "is an absolute path")
    for kind, source in _sources(tree, models.external_data_model(location, place=place)).items():
        with pytest.raises(ortc.InvalidArgument) as info:
            ortc.Session(source)
        text = str(info.value)
        assert f"external data location {location!r}" in text and why in text, (kind, text)


def test_every_source_of_a_session_is_checked(tree: Path) -> None:
    """Keywords, options, providers, ortc.compat and an unpickled recipe all go through it."""
    import ortc.compat as ort

    bad = models.external_data_model("../secret.bin")
    path = tree / "bad.onnx"
    path.write_bytes(bad)
    attempts = [
        lambda: ortc.Session(str(path), intra_op_num_threads=1),
        lambda: ortc.Session(bad, ortc.SessionOptions()),
        lambda: ortc.Session(bad, providers=["CPUExecutionProvider"]),
        lambda: ort.InferenceSession(str(path)),
        lambda: ort.InferenceSession(bad),
    ]
    for attempt in attempts:
        with pytest.raises(ortc.InvalidArgument, match="external data location '../secret.bin'"):
            attempt()
    # a session's pickle is a recipe: unpickled elsewhere, its model is checked there again
    blob = pickle.dumps(ortc.Session(models.external_data_model("w.bin")))
    os.chdir(tree / "sub")
    assert bytes(pickle.loads(blob).run(None, {})[0]) == DATA
    (tree / "sub" / "w.bin").unlink()
    (tree / "sub" / "w.bin").symlink_to(tree.parent / "secret.bin")
    # (the ORT session the first copy ran on is still kept, idle: it read the file before the
    # link, and is not this copy's)
    again = pickle.loads(blob)  # built at its first use, where the check runs
    with pytest.raises(ortc.InvalidArgument, match="through a symbolic link"):
        again.run(None, {})


def test_a_folder_the_caller_names_for_bytes_is_where_the_data_must_be(tree: Path,
                                                                        tmp_path: Path) -> None:
    weights = tmp_path / "weights"
    weights.mkdir()
    (weights / "w.bin").write_bytes(b"named!!!")
    (weights / "escape.bin").symlink_to(tmp_path / "secret.bin")
    os.chdir(tmp_path)  # the current folder holds no w.bin: only the named folder has it
    opts = ortc.SessionOptions()
    opts.add_session_config_entry(EXTERNAL_DATA_FOLDER_KEY, str(weights))
    [y] = ortc.Session(models.external_data_model("w.bin"), opts).run(None, {})
    assert bytes(y) == b"named!!!"
    for location, why in [("escape.bin", "through a symbolic link"),
                          ("../secret.bin", "leaves its folder")]:
        with pytest.raises(ortc.InvalidArgument, match=why) as info:
            ortc.Session(models.external_data_model(location), opts)
        assert str(weights) in str(info.value)
    # a model from a path may be read from the named folder too (newer libraries): both count
    (tree / "escape.bin").write_bytes(DATA)
    path = tree / "model.onnx"
    path.write_bytes(models.external_data_model("escape.bin"))
    with pytest.raises(ortc.InvalidArgument, match="through a symbolic link"):
        ortc.Session(str(path), opts)
    assert bytes(ortc.Session(str(path)).run(None, {})[0]) == DATA


class _CountingBuffer:
    """Bytes that count what a reader searches and reads of them."""

    def __init__(self, data: bytes) -> None:
        self.data, self.searched, self.read = data, 0, 0

    def __len__(self) -> int:
        return len(self.data)

    def find(self, sub: bytes, start: int, end: int) -> int:
        self.searched += end - start
        return self.data.find(sub, start, end)

    def __getitem__(self, index: Any) -> Any:
        got = self.data[index]
        self.read += len(got) if isinstance(got, bytes) else 1
        return got


def test_the_check_never_reads_tensor_data() -> None:
    """What a model costs to check follows its messages, not its weights: 4 MB of raw data
    (holding the bytes ``location`` too) are neither searched nor read."""
    from ortc._model_proto import external_locations

    weights = np.frombuffer(b"location" * (1 << 19), np.uint8)
    plain = models.make_model([models.helper.make_node("Identity", ["w"], ["y"])], [], ["y"],
                              [models.numpy_helper.from_array(weights, "w")]).SerializeToString()
    mixed = onnx.ModelProto.FromString(plain)
    mixed.graph.initializer.append(models._external_tensor("e", "../secret.bin", 8))
    for model, expected in [(plain, []), (mixed.SerializeToString(), [("e", "../secret.bin")])]:
        buf = _CountingBuffer(model)
        assert external_locations(buf) == expected
        assert buf.searched + buf.read < 1 << 16, (buf.searched, buf.read)
    # a small model is one search, whatever it holds
    buf = _CountingBuffer(models.add_model())
    assert external_locations(buf) == [] and buf.read == 0 and buf.searched == len(buf)
    with pytest.raises(ortc.InvalidArgument, match="'../secret.bin'"):
        ortc.Session(mixed.SerializeToString())


def test_unknown_fields_and_groups_do_not_hide_a_location(tree: Path) -> None:
    """protobuf keeps unknown fields (groups too) that ortc's reader must skip as it does."""
    bad = models.external_data_model("../secret.bin")
    group = bytes([0x9B, 0x06]) + b"\x0a\x08location" + bytes([0x9C, 0x06])  # field 99, group
    for model in (group + bad, bad + group):
        with pytest.raises(ortc.InvalidArgument, match="'../secret.bin'"):
            ortc.Session(model)
    good = models.external_data_model("w.bin")
    assert bytes(ortc.Session(group + good).run(None, {})[0]) == DATA
    # a malformed model that names a location is refused as ORT refuses malformed models
    with pytest.raises(ortc.InvalidProtobuf, match="external data could not be checked"):
        ortc.Session(bad[:-3])


OLD_VERSION = "1.16.2"


def test_the_oldest_library_reads_nothing_outside_the_models_folder(tmp_path: Path) -> None:
    """ORT 1.16.2 reads any location it is given (the control below shows it, with ortc's
    check bypassed); through ortc it reads none outside the folder."""
    old = fetch_library(OLD_VERSION)
    code = r'''
import json, os, sys, models, ortc, ortc.session
out = {"version": ortc.version().library_version, "refused": {}, "bypassed": {}}
places = ["initializer", "sparse", "constant", "function"]
for place in places:
    for loc in ["../secret.bin", os.path.abspath("../secret.bin"), "link.bin"]:
        model = models.external_data_model(loc, place=place)
        open("model.onnx", "wb").write(model)
        for src in ("model.onnx", model):
            key = f"{place} {loc} {type(src).__name__}"
            try:
                ortc.Session(src)
                out["refused"][key] = "loaded"
            except ortc.InvalidArgument as e:
                out["refused"][key] = "external data location" in str(e)
check = ortc.session._check_external_data
ortc.session._check_external_data = lambda *a: None
s = ortc.Session(models.external_data_model("../secret.bin"))
out["bypassed"] = bytes(s.run(None, {})[0]).decode()
print(json.dumps(out))
'''
    (tmp_path / "secret.bin").write_bytes(SECRET)
    m = tmp_path / "m"
    m.mkdir()
    (m / "link.bin").symlink_to(tmp_path / "secret.bin")
    proc = run_python(code, env={"ORTC_LIBRARY": old}, cwd=str(m))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["version"] == OLD_VERSION
    assert out["bypassed"] == SECRET.decode()  # the library itself would read it
    assert len(out["refused"]) == 24 and all(v is True for v in out["refused"].values()), out


def test_unpickled_copies_read_the_external_data_of_where_they_are_built(tree: Path) -> None:
    """One ORT session serves the unpickled copies of a recipe in a process (kept while one
    is in use, and idle after), keyed by the model, not by its external data: a copy of a
    model from bytes unpickled in another folder, or after its data file was replaced,
    reads the files there and then, as a copy built in another process would."""
    (tree / "other").mkdir()
    (tree / "other" / "w.bin").write_bytes(b"other!!!")
    blob = pickle.dumps(ortc.Session(models.external_data_model("w.bin")))
    here = pickle.loads(blob)
    assert bytes(here.run(None, {})[0]) == DATA
    os.chdir(tree / "other")
    there = pickle.loads(blob)  # while ``here``'s session is in use
    assert bytes(there.run(None, {})[0]) == b"other!!!"
    assert bytes(here.run(None, {})[0]) == DATA  # its own session, as it was built
    del here, there  # one of the two sessions stays idle
    (tree / "other" / "new.bin").write_bytes(b"renewed!")
    os.replace(tree / "other" / "new.bin", tree / "other" / "w.bin")
    assert bytes(pickle.loads(blob).run(None, {})[0]) == b"renewed!"
    # a path recipe's data file replaced while a copy is in use: the next copy reads the new
    path = tree / "sub" / "model.onnx"
    path.write_bytes(models.external_data_model("w.bin"))
    blob = pickle.dumps(ortc.Session(str(path)))
    first = pickle.loads(blob)
    assert bytes(first.run(None, {})[0]) == DATA
    (tree / "sub" / "w.bin").write_bytes(b"longer data!")  # (another size: another file)
    assert bytes(pickle.loads(blob).run(None, {})[0]) == b"longer d"  # (8 bytes are read)
    (tree / "sub" / "w.bin").write_bytes(b"newdata!")
    os.utime(tree / "sub" / "w.bin", ns=(1, 1))  # another modification time
    assert bytes(pickle.loads(blob).run(None, {})[0]) == b"newdata!"
    assert bytes(first.run(None, {})[0]) == DATA
