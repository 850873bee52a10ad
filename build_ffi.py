#!/usr/bin/env python3
"""Generate ortc's cffi layer from the declarations in include/.

Outputs (committed; a test regenerates them and fails when they differ):
  ortc/_ffi.py    cffi out-of-line ABI module (no C compiler, no pycparser at run time)
  ortc/_slots.py  OrtApi slot names in ABI order with the API version that added each
  ortc/_enums.py  IntEnums for the C enums, prefixes dropped (ElementType.FLOAT, ...)
  ortc/_signatures.py  each OrtApi slot's parameter types (the thread-rule table reads them)

Usage: python build_ffi.py [--out DIR] [--check] [--compare HEADER]
The output is a pure function of include/ortc_types.h and include/ortc_api.h, read in that order.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.abspath(__file__))
HEADERS = ("include/ortc_types.h", "include/ortc_api.h")

# C enum -> (Python name, prefix dropped from its constants)
ENUMS = {
    "OrtLoggingLevel": ("LoggingLevel", "ORT_LOGGING_LEVEL_"),
    "OrtErrorCode": ("ErrorCode", "ORT_"),
    "ONNXTensorElementDataType": ("ElementType", "ONNX_TENSOR_ELEMENT_DATA_TYPE_"),
    "ONNXType": ("ValueKind", "ONNX_TYPE_"),
    "OrtSparseFormat": ("SparseFormat", "ORT_SPARSE_"),
    "OrtSparseIndicesFormat": ("SparseIndicesFormat", "ORT_SPARSE_"),
    "GraphOptimizationLevel": ("GraphOptimizationLevel", "ORT_"),
    "ExecutionMode": ("ExecutionMode", "ORT_"),
    "OrtLanguageProjection": ("LanguageProjection", "ORT_PROJECTION_"),
    "OrtAllocatorType": ("AllocatorType", "Ort"),
    "OrtMemType": ("MemType", "OrtMemType"),
    "OrtMemoryInfoDeviceType": ("DeviceType", "OrtMemoryInfoDeviceType_"),
    "OrtCudnnConvAlgoSearch": ("CudnnConvAlgoSearch", "OrtCudnnConvAlgoSearch"),
    "OrtOpAttrType": ("OpAttrType", "ORT_OP_ATTR_"),
    "OrtCustomOpInputOutputCharacteristic": ("CustomOpCharacteristic", "INPUT_OUTPUT_"),
    "OrtExecutionProviderDevicePolicy": ("DevicePolicy", "OrtExecutionProviderDevicePolicy_"),
    "OrtHardwareDeviceType": ("HardwareDeviceType", "OrtHardwareDeviceType_"),
    "OrtDeviceMemoryType": ("DeviceMemoryType", "OrtDeviceMemoryType_"),
}

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_MARKER = re.compile(r"/\*\s*@api\s+(\d+)\s*\*/")
_SLOT = re.compile(r"\(\s*\*\s*(\w+)\s*\)\s*\(")


def read_headers(root: str = ROOT) -> list[str]:
    out = []
    for rel in HEADERS:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            out.append(f.read())
    return out


def cdef_text(sources: list[str]) -> str:
    """The headers with comments and preprocessor lines removed: what cffi's cdef reads."""
    lines = []
    for src in sources:
        for line in _COMMENT.sub("", src).splitlines():
            if line.lstrip().startswith("#"):
                continue
            if line.strip():
                lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


#: prefix of the per-slot pointer typedefs that only the cffi declarations carry
SLOT_TYPEDEF_PREFIX = "ortc_slot_"


def loader_cdef(api_header: str) -> str:
    """What the cffi declarations add to the headers for ortc/_loader.py, which reads the OrtApi
    table slot by slot: one pointer typedef per slot (``ortc_slot_Run`` ...), so that cffi
    builds the types of the slots a process uses instead of the whole table's on first access
    (realizing ``OrtApi`` is 1.3 ms), and ``OrtGetApiBase`` returning ``const void*`` (its
    typed result, ``OrtApiBase``, points at ``OrtApi``). The headers themselves are unchanged."""
    m = re.search(r"struct\s+OrtApi\s*\{(.*?)\n\s*\}\s*;", api_header, re.S)
    if not m:
        raise SystemExit("no `struct OrtApi { ... };` block in include/ortc_api.h")
    body = _COMMENT.sub("", m.group(1))
    out = []
    for field in re.finditer(r"^(.*?)\(\s*\*\s*(\w+)\s*\)\s*(\(.*?\))\s*;\s*$", body, re.M):
        ret, name, params = field.group(1).strip(), field.group(2), field.group(3)
        out.append(f"typedef {ret} (*{SLOT_TYPEDEF_PREFIX}{name}){params};")
    return "\n".join(out) + "\n"


def parse_slots(api_header: str) -> list[tuple[str, int]]:
    """(slot, since) in ABI order from the `struct OrtApi { ... };` block."""
    m = re.search(r"struct\s+OrtApi\s*\{(.*?)\n\s*\}\s*;", api_header, re.S)
    if not m:
        raise SystemExit("include/ortc_api.h: no `struct OrtApi { ... };` block")
    since = 0
    slots: list[tuple[str, int]] = []
    for line in m.group(1).splitlines():
        mk = _MARKER.search(line)
        if mk:
            v = int(mk.group(1))
            if v <= since:
                raise SystemExit(f"@api markers must ascend: {v} after {since}")
            since = v
            continue
        code = _COMMENT.sub("", line).strip()
        if not code:
            continue
        sm = _SLOT.search(code)
        if not sm:
            raise SystemExit(f"cannot parse OrtApi slot line: {line.strip()!r}")
        if since == 0:
            raise SystemExit("the first OrtApi slot has no /* @api N */ marker above it")
        slots.append((sm.group(1), since))
    names = [n for n, _ in slots]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate OrtApi slot names")
    return slots


def parse_enums(text: str) -> dict[str, list[tuple[str, int]]]:
    """C enums (typedef'd or tagged) with explicit values."""
    enums: dict[str, list[tuple[str, int]]] = {}
    body_re = re.compile(
        r"typedef\s+enum\s+(\w+)?\s*\{(.*?)\}\s*(\w+)\s*;|enum\s+(\w+)\s*\{(.*?)\}\s*;", re.S)
    for m in body_re.finditer(text):
        name = m.group(3) or m.group(4)
        body = m.group(2) if m.group(2) is not None else m.group(5)
        members: list[tuple[str, int]] = []
        nxt = 0
        known: dict[str, int] = {}
        for item in body.split(","):
            item = item.strip()
            if not item:
                continue
            if "=" in item:
                key, val = (s.strip() for s in item.split("=", 1))
                value = known[val] if val in known else int(val, 0)
            else:
                key, value = item, nxt
            known[key] = value
            members.append((key, value))
            nxt = value + 1
        enums[name] = members
    return enums


def render_slots(slots: list[tuple[str, int]], by_table: list[str]) -> str:
    top = max(v for _, v in slots)
    rows = "\n".join(f"    ({name!r}, {since})," for name, since in slots)
    return (
        "# Generated by build_ffi.py from include/ortc_api.h; do not edit.\n"
        '"""OrtApi slots in ABI order, each with the API version that added it."""\n\n'
        f"DECLARED_API_VERSION = {top}\n\n"
        "SLOTS: tuple[tuple[str, int], ...] = (\n" + rows + "\n)\n\n"
        "SINCE: dict[str, int] = dict(SLOTS)\n\n"
        "#: slots whose own pointer type cffi cannot build first (it reaches itself through a\n"
        "#: struct's field); the loader reads them through the typed table\n"
        "TYPED_BY_TABLE: frozenset[str] = frozenset({"
        + ", ".join(repr(n) for n in sorted(by_table)) + "})\n")


# Builds each slot's typedef first, in a fresh FFI, until one aborts the process (cffi asserts
# when a function type's parameters lead back to that type through a struct: AllocatorGetStats'
# type is also OrtAllocator's GetStats field); prints the index reached.
_PROBE = """
import sys
path, start, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
with open(path, encoding="utf-8") as f:
    code = compile(f.read(), path, "exec")
for i in range(start, len(names)):
    ns = {}
    exec(code, ns)
    print(i, flush=True)
    ns["ffi"].typeof("%s" + names[i])
print("done", flush=True)
""" % SLOT_TYPEDEF_PREFIX


def slots_typed_by_table(ffi_path: str, names: list[str]) -> list[str]:
    """The slots whose typedef cffi cannot build first on its own (see _PROBE)."""
    import subprocess

    found: list[str] = []
    start = 0
    while True:
        proc = subprocess.run([sys.executable, "-c", _PROBE, ffi_path, str(start), *names],
                              capture_output=True, text=True)
        reached = proc.stdout.split()
        if reached[-1:] == ["done"]:
            return found
        if not reached:
            raise SystemExit(f"probing the slot types failed: {proc.stderr[-2000:]}")
        found.append(names[int(reached[-1])])
        start = int(reached[-1]) + 1


def _split_params(params: str) -> list[str]:
    """Top-level comma split (function-pointer parameters hold commas of their own)."""
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += (ch == "(") - (ch == ")")
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _param_type(param: str) -> str:
    """A parameter's type without its name: ``const OrtEnv* env`` -> ``const OrtEnv*``."""
    if "(" in param:  # a function pointer: keep it whole, minus the name inside (*name)
        return re.sub(r"\(\s*\*\s*\w+\s*\)", "(*)", param)
    m = re.match(r"(.*?[\s*])(\w+)$", param)
    return re.sub(r"\s+", " ", (m.group(1) if m else param)).replace(" *", "*").strip()


def parse_signatures(api_header: str) -> dict[str, tuple[str, ...]]:
    """slot -> its parameter types, in order, from the `struct OrtApi { ... };` block."""
    m = re.search(r"struct\s+OrtApi\s*\{(.*?)\n\s*\}\s*;", api_header, re.S)
    assert m is not None
    out: dict[str, tuple[str, ...]] = {}
    for line in _COMMENT.sub("", m.group(1)).splitlines():
        sm = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)\s*;", line)
        if sm:
            params = [] if sm.group(2).strip() in ("", "void") else _split_params(sm.group(2))
            out[sm.group(1)] = tuple(_param_type(p) for p in params)
    return out


def render_signatures(sigs: dict[str, tuple[str, ...]]) -> str:
    rows = "\n".join(f"    {name!r}: {types!r}," for name, types in sigs.items())
    return (
        "# Generated by build_ffi.py from include/ortc_api.h; do not edit.\n"
        '"""Each OrtApi slot\'s parameter types, as declared (``const`` kept)."""\n\n'
        "SIGNATURES: dict[str, tuple[str, ...]] = {\n" + rows + "\n}\n")


#: the enums made at import: a first session's TypeInfo records hold two, and every error class
#: its ErrorCode. The others are made on first use (an IntEnum costs about 0.1 ms to create;
#: ortc's own code on a first session's path passes ORT's numbers as ints)
EAGER_ENUMS = ("ErrorCode", "ElementType", "ValueKind")


def _enum_members(prefix: str, members: list[tuple[str, int]]) -> list[tuple[str, int]]:
    out = []
    for key, value in members:
        short = key[len(prefix):] if key.startswith(prefix) else key
        # one casing for every member: OrtArenaAllocator -> ARENA_ALLOCATOR,
        # OrtMemTypeCPUInput -> CPU_INPUT, like the ORT_*-prefixed enums
        if not short.isupper():
            short = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_",
                           short).upper()
        if not short.isidentifier() or short[0].isdigit():
            short = "_" + short
        out.append((short, value))
    return out


def render_enums(enums: dict[str, list[tuple[str, int]]]) -> str:
    head = [
        "# Generated by build_ffi.py from include/ortc_types.h; do not edit.",
        '"""The C API\'s enums as IntEnums, with their C prefixes dropped.',
        "",
        "Those a first session's records and the error classes hold are made at import; the others",
        "on first use (module ``__getattr__``), from the same members: creating an IntEnum costs",
        "about 0.1 ms. Code on a first session's path reads those as ``_enums.Name`` where it needs",
        "one, not at its import.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from enum import IntEnum",
        "from typing import TYPE_CHECKING, Any",
        "",
    ]
    names: list[str] = []
    eager: list[str] = []
    typed: list[str] = []
    table: list[str] = []
    for c_name, (py_name, prefix) in ENUMS.items():
        if c_name not in enums:
            continue
        names.append(py_name)
        members = _enum_members(prefix, enums[c_name])
        if py_name in EAGER_ENUMS:
            eager += ["", f"class {py_name}(IntEnum):", f'    """C enum ``{c_name}``."""', ""]
            eager += [f"    {k} = {v}" for k, v in members] + [""]
        else:
            typed += ["", f"    class {py_name}(IntEnum):", f'        """C enum ``{c_name}``."""',
                      ""]
            typed += [f"        {k} = {v}" for k, v in members]
            table.append(f"    {py_name!r}: ({c_name!r}, (" +
                         "".join(f"({k!r}, {v}), " for k, v in members).rstrip(" ") + ")),")
    out = head + ["__all__ = [" + ", ".join(repr(n) for n in names) + "]", ""] + eager
    out += ["", "if TYPE_CHECKING:  # made by __getattr__ at run time"] + typed + [""]
    out += ["", "class _Members(type(IntEnum)):  # type: ignore[misc]",
            '    """The type of the enums made on first use: onnxruntime spells their members with',
            "    an ORT_ prefix (GraphOptimizationLevel.ORT_ENABLE_ALL), and such a name says which",
            '    member to use (only a missing name comes to __getattr__)."""',
            "",
            "    if not TYPE_CHECKING:  # a type checker must still flag a missing member",
            "        def __getattr__(cls, name: str) -> Any:",
            "            members = cls.__dict__.get(\"_member_map_\") or {}",
            "            if name in members:  # before 3.12, the enum type found members here",
            "                return members[name]",
            "            if name.startswith(\"ORT_\") and name[4:] in members:",
            "                raise AttributeError(f\"{cls.__name__} has no member {name!r}: ortc drops \"",
            "                                     f\"onnxruntime's ORT_ prefix, use {cls.__name__}.{name[4:]}\")",
            "            raise AttributeError(f\"type object {cls.__name__!r} has no attribute {name!r}\")",
            "", "",
            "class _Enum(IntEnum, metaclass=_Members):",
            '    """The base of the enums made on first use."""',
            "", "",
            "_make_enum: Any = _Enum  # its functional form (Enum(name, members)), untyped for mypy",
            "", ""]
    out += ["_ON_FIRST_USE: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {"]
    out += table + ["}", "", "",
                    "def __getattr__(name: str) -> Any:",
                    "    entry = _ON_FIRST_USE.get(name)",
                    "    if entry is None:",
                    "        raise AttributeError(f\"module {__name__!r} has no attribute {name!r}\")",
                    "    c_name, members = entry",
                    "    made = _make_enum(name, members, module=__name__, qualname=name)",
                    "    made.__doc__ = f\"C enum ``{c_name}``.\"",
                    "    return globals().setdefault(name, made)  # threads racing here get one class",
                    "", "",
                    "def __dir__() -> list[str]:",
                    "    return sorted(set(globals()) | set(_ON_FIRST_USE))", ""]
    return "\n".join(out).rstrip() + "\n"


def build(out_dir: str, root: str = ROOT) -> list[str]:
    """Write the generated files into out_dir/ortc; return their paths."""
    import cffi

    types_h, api_h = read_headers(root)
    cdef = cdef_text([types_h, api_h]).replace(
        "const OrtApiBase* OrtGetApiBase(void);", "const void* OrtGetApiBase(void);")
    typedefs = loader_cdef(api_h)
    if typedefs.count("\n") != len(parse_slots(api_h)):
        raise SystemExit("every OrtApi slot needs its one-line declaration for loader_cdef")
    cdef += typedefs
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source("ortc._ffi", None)
    pkg = os.path.join(out_dir, "ortc")
    os.makedirs(pkg, exist_ok=True)
    ffi_path = os.path.join(pkg, "_ffi.py")
    with tempfile.TemporaryDirectory() as tmp:
        ffi.emit_python_code(os.path.join(tmp, "_ffi.py"))
        with open(os.path.join(tmp, "_ffi.py"), encoding="utf-8") as f:
            generated = f.read()
    # cffi writes its own first line ("# auto-generated file"); ours names the source.
    with open(ffi_path, "w", encoding="utf-8") as f:
        f.write("# Generated by build_ffi.py from include/*.h (cffi out-of-line ABI mode); "
                "do not edit.\n" + generated)
    slots_path = os.path.join(pkg, "_slots.py")
    with open(slots_path, "w", encoding="utf-8") as f:
        slots = parse_slots(api_h)
        f.write(render_slots(slots, slots_typed_by_table(ffi_path, [n for n, _ in slots])))
    enums_path = os.path.join(pkg, "_enums.py")
    with open(enums_path, "w", encoding="utf-8") as f:
        f.write(render_enums(parse_enums(_COMMENT.sub("", types_h))))
    sigs_path = os.path.join(pkg, "_signatures.py")
    with open(sigs_path, "w", encoding="utf-8") as f:
        f.write(render_signatures(parse_signatures(api_h)))
    return [ffi_path, slots_path, enums_path, sigs_path]


_OFFICIAL_SLOT = re.compile(
    r"ORT_API2_STATUS\(\s*(?P<status>\w+)"
    r"|ORT_API_T\(\s*[^,()]+(?:\([^()]*\))?[^,()]*,\s*(?P<typed>\w+)"
    r"|ORT_CLASS_RELEASE\(\s*(?P<release>\w+)\s*\)"
    r"|\(\s*ORT_API_CALL\s*\*\s*(?P<plain>\w+)\s*\)")
_SINCE = re.compile(r"\\since\s+Version\s+1\.(\d+)")


def parse_official_slots(text: str) -> list[tuple[str, int | None]]:
    r"""(slot, since) in ABI order from an official onnxruntime_c_api.h.

    Slots are the ORT_API2_STATUS / ORT_API_T / ORT_CLASS_RELEASE / ``(ORT_API_CALL* Name)``
    declarations of ``struct OrtApi``, read outside comments; a slot's since-version is the last
    ``\since Version 1.N`` in the comments between it and the slot before it (None if absent).
    """
    m = re.search(r"struct\s+OrtApi\s*\{(.*?)\n\};", text, re.S)
    if not m:
        raise SystemExit("no `struct OrtApi { ... };` block in the header")
    body = m.group(1)
    # blank out comments, keeping offsets, so declarations are only found in code
    code = _COMMENT.sub(lambda c: " " * len(c.group(0)), body)
    out: list[tuple[str, int | None]] = []
    prev = 0
    for d in _OFFICIAL_SLOT.finditer(code):
        name = d.group("status") or d.group("typed") or d.group("plain")
        if d.group("release"):
            name = "Release" + d.group("release")
        since = _SINCE.findall(body[prev:d.start()])
        out.append((name, int(since[-1]) if since else None))
        prev = d.end()
    return out


def compare(header: str, root: str = ROOT) -> int:
    """Compare ortc's declared slots (names, order, since) with an official header; 0 if equal."""
    with open(header, encoding="utf-8", errors="replace") as f:
        text = f.read()
    official = parse_official_slots(text)
    mv = re.search(r"#define\s+ORT_API_VERSION\s+(\d+)", text)
    header_api = int(mv.group(1)) if mv else None
    ours = parse_slots(read_headers(root)[1])
    problems: list[str] = []
    notes: list[str] = []
    for i, (name, since) in enumerate(ours):
        if i >= len(official):
            if header_api is not None and since > header_api:
                notes.append(f"slot {i} {name}: API {since}, newer than the header's "
                             f"{header_api}")
            else:
                problems.append(f"slot {i} {name}: the official table ends at "
                                f"{len(official)} slots")
            continue
        oname, osince = official[i]
        if oname != name:
            problems.append(f"slot {i}: ortc declares {name}, the official header {oname}")
        elif osince is None:
            notes.append(f"slot {i} {name}: the official header gives no \\since (ortc: {since})")
        elif osince != since:
            problems.append(f"slot {i} {name}: since API {since} in ortc, {osince} officially")
    extra = official[len(ours):]
    for line in problems:
        print("MISMATCH " + line)
    print(f"{len(ours)} slots declared by ortc, {len(official)} in {header}"
          + (f" (API {header_api})" if header_api else "") + f"; {len(problems)} mismatches; "
          f"{len(notes)} notes (slots without an official \\since, or newer than the header)"
          + (f"; {len(extra)} newer slots not declared by ortc "
             f"({', '.join(n for n, _ in extra[:5])}{', ...' if len(extra) > 5 else ''})"
             if extra else ""))
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=ROOT, help="folder that receives ortc/_ffi.py etc.")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the committed generated files are stale")
    ap.add_argument("--compare", metavar="HEADER",
                    help="compare the declared OrtApi slots (names, order, since) with an "
                         "official onnxruntime_c_api.h; exit 1 on a mismatch")
    args = ap.parse_args(argv)
    if args.compare:
        return compare(args.compare)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            stale = []
            for path in build(tmp):
                rel = os.path.relpath(path, tmp)
                mine = os.path.join(ROOT, rel)
                with open(path, encoding="utf-8") as a:
                    new = a.read()
                old = open(mine, encoding="utf-8").read() if os.path.exists(mine) else None
                if old != new:
                    stale.append(rel)
        if stale:
            print("stale generated files (run python build_ffi.py): " + ", ".join(stale))
            return 1
        print("generated files are up to date")
        return 0
    for path in build(args.out):
        print("wrote", os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
