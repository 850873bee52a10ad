"""Generate the Rust crate's two generated modules (``rust/ortc-rules/src/{sys,rules}.rs``).

``sys.rs`` is the FFI declaration of the C API: every type, enum and struct of ``include/*.h``
and the ``OrtApi`` table with its slots in ABI order, read from the cffi declaration
(:mod:`ortc._ffi`, itself generated from ``include/``). cffi drops ``const``, so constness of
pointers is read back from the header text of each slot (a ``const T*`` parameter becomes
``*const T``); the ABI is the same either way.

``rules.rs`` is :func:`ortc.rules` as Rust: a ``RULES`` table (per type: Send, Sync,
shared and exclusive C functions, what it must not outlive, evidence), the ``TRANSFERS`` table
(calls that take an argument over, and who owns it after a failed call), the per-provider
concurrent-Run table, and the ``unsafe impl Send/Sync`` of the crate's hand-written wrapper
types, exactly per verdict, each with its reason. A negative verdict becomes a ``compile_fail``
doctest, so a verdict change that the wrappers do not follow fails ``cargo test``.

Regenerate with ``python -m ortc.rust_crate`` (or ``python -m ortc rules --format rust --out
rust/ortc-rules``); ``--check`` exits 1 when the committed files are stale.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import textwrap
from typing import Any

__all__ = ["CRATE", "render_sys", "render_rules", "run_rule_decisions", "build", "check",
           "main"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATE = os.path.join("rust", "ortc-rules")
HEADERS = ("include/ortc_types.h", "include/ortc_api.h")
COMMAND = "python -m ortc.rust_crate"

# -- sys.rs: the C declarations as Rust ------------------------------------------------------------

_PRIMITIVES = {
    "char": "c_char", "signed char": "i8", "unsigned char": "u8", "short": "i16",
    "unsigned short": "u16", "int": "c_int", "unsigned int": "c_uint", "long": "c_long",
    "unsigned long": "c_ulong", "long long": "i64", "unsigned long long": "u64",
    "float": "f32", "double": "f64", "_Bool": "bool", "size_t": "usize",
    "intptr_t": "isize", "uintptr_t": "usize", "ptrdiff_t": "isize",
    "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16",
    "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64",
}
_KEYWORDS = {"type", "fn", "impl", "ref", "mod", "move", "match", "use", "where", "self",
             "struct", "enum", "trait", "loop", "box", "in", "as", "const", "static"}
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _split_top(text: str) -> list[str]:
    """Split a C parameter list at commas outside parentheses."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _const_levels(decl: str) -> list[bool] | None:
    """For a plain declaration (``const char* const* names``): per pointer level, innermost
    first, whether the pointee is const. None for function-pointer declarations."""
    if "(" in decl:
        return None
    decl = re.sub(r"(\w+)\s*\[\s*\w*\s*\]", r"* \1", decl)  # a parameter array is a pointer
    tokens = re.findall(r"\w+|\*", decl)
    levels: list[bool] = []
    base_const = False
    seen_star = False
    for i, tok in enumerate(tokens):
        if tok == "*":
            # pointer k points at what came before: the base or the previous pointer
            if not seen_star:
                levels.append(base_const)
            seen_star = True
            nxt_const = i + 1 < len(tokens) and tokens[i + 1] == "const"
            levels.append(nxt_const)
        elif tok == "const" and not seen_star:
            base_const = True
    # the last entry is the constness of the outermost pointer itself: irrelevant
    return levels[:-1] if levels else []


def _function_fields(header: str, struct: str) -> dict[str, tuple[str, list[str]]]:
    """Function-pointer fields of ``struct`` in the header text: name -> (return, params)."""
    m = re.search(r"struct\s+" + struct + r"\s*\{(.*?)\n\s*\}\s*;", header, re.S)
    if not m:
        return {}
    out = {}
    for line in _COMMENT.sub("", m.group(1)).split(";"):
        fm = re.match(r"\s*(.*?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)\s*$", line, re.S)
        if fm:
            params = _split_top(fm.group(3))
            out[fm.group(2)] = (fm.group(1).strip(), [] if params == ["void"] else params)
    return out


class _Types:
    """cffi ctypes -> Rust type text."""

    def __init__(self, ffi: Any) -> None:
        self.ffi = ffi
        self.structs: set[str] = set()
        self.enums: set[str] = set()

    def rust(self, tp: Any, consts: list[bool] | None = None) -> str:
        kind = tp.kind
        if kind == "primitive":
            if tp.cname not in _PRIMITIVES:
                raise SystemExit(f"no Rust type for C primitive {tp.cname}")
            return _PRIMITIVES[tp.cname]
        if kind == "void":
            return "c_void"
        if kind == "enum":
            name: str = tp.cname.split()[-1]
            self.enums.add(name)
            return name
        if kind == "union":
            raise SystemExit(f"{tp.cname}: unions are not supported by this generator yet")
        if kind == "struct":
            name = tp.cname.split()[-1]
            self.structs.add(name)
            return name
        if kind == "pointer":
            depth, inner = 0, tp
            while inner.kind == "pointer":
                depth, inner = depth + 1, inner.item
            if consts is not None and len(consts) != depth:
                raise SystemExit(f"pointer depth of {tp.cname} disagrees with the header")
            text = self.rust(inner)
            for level in range(depth):
                const = consts[level] if consts is not None else False
                text = f"*{'const' if const else 'mut'} {text}"
            return text
        if kind == "function":
            return self.fn(tp)
        if kind == "array":
            return f"[{self.rust(tp.item)}; {tp.length}]"
        raise SystemExit(f"no Rust type for {tp.cname} ({kind})")

    def fn(self, tp: Any, header: tuple[str, list[str]] | None = None) -> str:
        if tp.ellipsis:
            raise SystemExit(f"variadic function pointer {tp.cname} is not supported")
        args = []
        for i, arg in enumerate(tp.args):
            consts = None
            if header is not None and len(header[1]) == len(tp.args):
                consts = _const_levels(header[1][i])
            args.append(self.rust(arg, consts))
        ret = ""
        if tp.result.kind != "void":
            consts = _const_levels(header[0] + " x") if header is not None else None
            ret = " -> " + self.rust(tp.result, consts)
        return f"Option<unsafe extern \"C\" fn({', '.join(args)}){ret}>"


def _field_name(name: str) -> str:
    return f"r#{name}" if name in _KEYWORDS else name


def _struct_fields(ffi: Any, name: str) -> list[tuple[str, Any]] | None:
    """Fields of a struct, None when it is opaque (declared, never defined)."""
    tp = ffi.typeof(f"struct {name}")
    try:
        ffi.sizeof(tp)
    except Exception:  # an incomplete type: reading .fields would abort the interpreter
        return None
    return list(tp.fields)


def render_sys(root: str = ROOT) -> str:
    from ._ffi import ffi
    from ._slots import DECLARED_API_VERSION, SLOTS

    types_h, api_h = (open(os.path.join(root, rel), encoding="utf-8").read() for rel in HEADERS)
    header = types_h + "\n" + api_h
    code = _COMMENT.sub("", header)
    names = list(dict.fromkeys(re.findall(r"\bstruct\s+(\w+)", code)))
    enums = list(dict.fromkeys(re.findall(r"\benum\s+(\w+)\s*\{", code)))
    conv = _Types(ffi)
    out = [
        f"// Generated by `{COMMAND}` from include/ortc_types.h and include/ortc_api.h; "
        "do not edit.",
        "//! The C API's declarations for FFI: types, enums, and the `OrtApi` function table",
        "//! with its slots in ABI order (generated from the project's `include/*.h`).",
        "//!",
        "//! Read a slot only when [`SLOT_SINCE`] says the negotiated API version has it: the",
        "//! table ends at the library's version, and a newer slot lies past its end.",
        "#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]",
        "#![allow(clippy::all)]",
        "",
        "#[allow(unused_imports)]",
        "use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};",
        "",
        f"/// The highest API version these declarations cover.",
        f"pub const DECLARED_API_VERSION: u32 = {DECLARED_API_VERSION};",
        "",
    ]
    for name in enums:
        rel = ffi.typeof(f"enum {name}").relements
        out += [f"/// C enum `{name}`.", f"pub type {name} = c_int;"]
        for key, value in sorted(rel.items(), key=lambda kv: (kv[1], kv[0])):
            out.append(f"pub const {key}: {name} = {value};")
        out.append("")
    defined: list[str] = []
    for name in names:
        fields = _struct_fields(ffi, name)
        if fields is None:
            out += [f"/// Opaque C type `{name}` (only ever behind a pointer).", "#[repr(C)]",
                    f"pub struct {name} {{",
                    "    _private: [u8; 0],",
                    "    _not_send_sync: std::marker::PhantomData<(*mut u8, std::marker::PhantomPinned)>,",
                    "}", ""]
        else:
            defined.append(name)
    for name in defined:
        fields = _struct_fields(ffi, name) or []
        fn_decls = _function_fields(header, name)
        doc = (f"The C function table `{name}`: slot i is field i, in ABI order; each field's "
               "comment gives the API version that added it." if name == "OrtApi"
               else f"C struct `{name}`.")
        out += [f"/// {doc}", "#[repr(C)]", f"pub struct {name} {{"]
        since = dict(SLOTS) if name == "OrtApi" else {}
        for fname, field in fields:
            tp = field.type
            text = (conv.fn(tp, fn_decls.get(fname)) if tp.kind == "function"
                    else conv.rust(tp))
            if since:
                out.append(f"    /// API {since[fname]}")
            out.append(f"    pub {_field_name(fname)}: {text},")
        out += ["}", ""]
    # Layout checks, compiled into the crate: the table is one pointer per slot, and every
    # struct has the size cffi computed from the same declarations (for 64-bit targets).
    out += ["// Layout: what cffi computed from the same declarations, checked by the compiler.",
            f"const _: () = assert!(std::mem::size_of::<OrtApi>() == {len(SLOTS)} * "
            "std::mem::size_of::<usize>());"]
    if ffi.sizeof("void *") == 8:
        for name in defined:
            out += ["#[cfg(target_pointer_width = \"64\")]",
                    f"const _: () = assert!(std::mem::size_of::<{name}>() == "
                    f"{ffi.sizeof(f'struct {name}')});"]
    out.append("")
    missing = [n for n in conv.structs if n not in names]
    if missing:
        raise SystemExit(f"structs used but not declared: {missing}")
    rows = "\n".join(f"    (\"{n}\", {v})," for n, v in SLOTS)
    out += [
        "/// Every `OrtApi` slot in ABI order with the API version that added it.",
        "pub const SLOT_SINCE: &[(&str, u32)] = &[",
        rows,
        "];",
        "",
        "/// The API version that added each slot, as constants (a wrapper checks one before",
        "/// reading its slot).",
        "pub mod since {",
        *(f"    pub const {n}: u32 = {v};" for n, v in SLOTS),
        "}",
        "",
        "/// The loader's entry point, looked up by name with `dlsym`.",
        "pub type OrtGetApiBaseFn = unsafe extern \"C\" fn() -> *const OrtApiBase;",
        "",
    ]
    return "\n".join(out)


# -- rules.rs: the rules table as Rust ---------------------------------------------------------

#: the crate's wrapper types per C type: (impl generics, type path, verdict override). An
#: override may only withhold Send or Sync, never grant one; it names its reason.
WRAPPERS: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "OrtEnv": [("", "crate::Env", {})],
    "OrtSessionOptions": [("", "crate::SessionOptions", {})],
    "OrtSession": [("<P: crate::RunPolicy>", "crate::Session<P>", {})],
    "OrtRunOptions": [("", "crate::RunOptions", {})],
    "OrtValue": [("<'buf>", "crate::Value<'buf>", {})],
    "OrtIoBinding": [("<'v>", "crate::IoBinding<'v>", {})],
    "OrtMemoryInfo": [("", "crate::MemoryInfo", {}), ("<'a>", "crate::MemoryInfoRef<'a>", {})],
    "OrtAllocator": [
        ("", "crate::Allocator", {}),
        ("", "crate::DeviceAllocator", {
            "sync": False,
            "why": "an allocator for non-CPU memory is not Sync (the note above; ortc makes "
                   "it Send only, per instance: tests/test_memory.py::"
                   "test_device_allocators_are_not_sync)"}),
    ],
    "OrtTypeInfo": [("", "crate::TypeInfo", {})],
    "OrtTensorTypeAndShapeInfo": [("<'a>", "crate::TensorTypeAndShapeInfo<'a>", {})],
    "OrtMapTypeInfo": [("<'a>", "crate::MapTypeInfo<'a>", {})],
    "OrtSequenceTypeInfo": [("<'a>", "crate::SequenceTypeInfo<'a>", {})],
    "OrtKernelContext": [("<'c>", "crate::KernelContext<'c>", {})],
    "OrtOpAttr": [("", "crate::OpAttr", {})],
    "OrtValueInfo": [("", "crate::ValueInfo", {})],
    "OrtNode": [("", "crate::Node", {})],
    "OrtGraph": [("", "crate::Graph", {})],
    "OrtModel": [("", "crate::Model", {})],
}


def _rs_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _comment(text: str, prefix: str = "// ") -> list[str]:
    return [prefix + line for line in textwrap.wrap(text, 96 - len(prefix),
                                                    break_long_words=False,
                                                    break_on_hyphens=False)]


def _static_type(path: str) -> str:
    """``crate::Value<'buf>`` -> ``ortc_rules::Value<'static>`` (doctests name a concrete type)."""
    t = path.replace("crate::", "ortc_rules::")
    t = re.sub(r"'\w+", "'static", t)
    return t.replace("<P>", "<ortc_rules::ConcurrentRun>")


def _is_c(name: str) -> bool:
    return bool(name) and name[0].isupper() and "." not in name and "(" not in name


def run_rule_decisions() -> list[tuple[str, list[tuple[str, str]], str, bool]]:
    """ortc's Run decision (:func:`ortc.providers.session_run_rule`) for every listed provider
    and one not listed, with no options and with each exclusive option set and unset, on ORT
    versions on both sides of every minimum version: the cases the Rust ``run_rule`` must
    decide the same way."""
    from .providers import (_EXCLUSIVE_OPTIONS, EP_CONCURRENT_RUN, MIN_CONCURRENT_VERSION,
                            session_run_rule)

    versions = {"1.16.2", "1.32.0"}
    for (major, minor), _ in MIN_CONCURRENT_VERSION.values():
        versions |= {f"{major}.{minor - 1}.3", f"{major}.{minor}.0", f"{major}.{minor}.1"}
    out = []
    for p in [*EP_CONCURRENT_RUN, "SomeUnlistedExecutionProvider"]:
        option_sets: list[list[tuple[str, str]]] = [[]]
        for key in _EXCLUSIVE_OPTIONS.get(p, {}):
            option_sets += [[(key, "1")], [(key, "0")]]
        for opts in option_sets:
            for version in sorted(versions, key=lambda v: tuple(map(int, v.split(".")))):
                rule = session_run_rule([p], {p: dict(opts)}, version)
                out.append((p, opts, version, rule["run"] == "shared"))
    return out


def render_rules() -> str:
    from .providers import (_EXCLUSIVE_OPTIONS, _TRUE, EP_CONCURRENT_RUN,
                            MIN_CONCURRENT_VERSION, PROVIDERS)
    from . import slot_rules
    from .rules_table import FAILURE_OWNERS, rules, transfers

    recs = rules()
    out = [
        f"// Generated by `{COMMAND}` from ortc.rules() (ortc/rules_table.py, ortc/providers.py, "
        "ortc/threads.py markers); do not edit.",
        "//! ONNX Runtime's thread rules as data and as trait impls.",
        "//!",
        "//! [`RULES`] has one record per C type, [`SUB_TABLE_OBJECTS`] the Send and Sync of the",
        "//! objects only one function table besides OrtApi hands out (they have no record); the",
        "//! `unsafe impl Send`/`Sync` below are the",
        "//! verdicts applied to this crate's wrapper types, each with its reason. A type without",
        "//! an impl holds a raw pointer, so the compiler refuses to move it (`!Send`) or share",
        "//! it (`!Sync`); the `compile_fail` example on each `*_IS_NOT_SEND`/`*_IS_NOT_SYNC`",
        "//! constant below checks that.",
        "#![allow(clippy::all)]",
        "",
        "/// One ORT type's thread rules.",
        "#[derive(Debug, Clone, Copy)]",
        "pub struct Rule {",
        "    /// the C type",
        "    pub c_type: &'static str,",
        "    /// may move to another thread",
        "    pub send: bool,",
        "    /// may be used from several threads at once (through `&self`)",
        "    pub sync: bool,",
        "    /// C functions that may overlap (`&self`)",
        "    pub shared: &'static [&'static str],",
        "    /// C functions that need sole access (`&mut self`, or `Drop` for the release)",
        "    pub exclusive: &'static [&'static str],",
        "    /// C types this one must not outlive (in the wrapper: a lifetime, or an `Arc` that",
        "    /// keeps the owner alive where a borrow would also block the owner's exclusive calls)",
        "    pub must_not_outlive: &'static [&'static str],",
        "    /// C functions whose kind depends on the instance (Run: the execution providers)",
        "    pub conditional: &'static [&'static str],",
        "    /// why: URLs, test ids, conformance check ids",
        "    pub evidence: &'static str,",
        "    /// caveats that apply to some instances",
        "    pub notes: &'static [&'static str],",
        "}",
        "",
        "/// One record per ORT type, sorted by C type.",
        "pub const RULES: &[Rule] = &[",
    ]
    for r in recs:
        shared = [m for m, k in r["methods"].items() if k == "shared" and _is_c(m)]
        exclusive = [m for m, k in r["methods"].items() if k == "exclusive" and _is_c(m)]
        cond = [m for m in r["conditions"] if _is_c(m)]
        out += [
            "    Rule {",
            f"        c_type: {_rs_str(r['type'])},",
            f"        send: {'true' if r['send'] else 'false'},",
            f"        sync: {'true' if r['sync'] else 'false'},",
            f"        shared: &[{', '.join(_rs_str(m) for m in shared)}],",
            f"        exclusive: &[{', '.join(_rs_str(m) for m in exclusive)}],",
            f"        must_not_outlive: &[{', '.join(_rs_str(p) for p in r['parents'])}],",
            f"        conditional: &[{', '.join(_rs_str(m) for m in cond)}],",
            f"        evidence: {_rs_str(r['evidence'])},",
            f"        notes: &[{', '.join(_rs_str(n) for n in r['notes'])}],",
            "    },",
        ]
    out += ["];", "",
            "/// An object only one function table besides OrtApi hands out: no OrtApi function",
            "/// and no other table takes it, so it has no [`Rule`]; every function that uses it",
            "/// is in its table. This crate wraps none of them: the verdicts are what a binding",
            "/// of that table must apply.",
            "#[derive(Debug, Clone, Copy)]",
            "pub struct SubTableObject {",
            "    /// the function table that hands it out",
            "    pub table: &'static str,",
            "    /// the C type",
            "    pub c_type: &'static str,",
            "    /// may move to another thread",
            "    pub send: bool,",
            "    /// may be used from several threads at once",
            "    pub sync: bool,",
            "    /// why",
            "    pub why: &'static str,",
            "}",
            "",
            "/// Every object only one sub-table hands out, by table.",
            "pub const SUB_TABLE_OBJECTS: &[SubTableObject] = &["]
    for table, objs in slot_rules.SUB_TABLE_OBJECTS.items():
        for c_type, (send, sync, why) in objs.items():
            out += [
                "    SubTableObject {",
                f"        table: {_rs_str(table)},",
                f"        c_type: {_rs_str(c_type)},",
                f"        send: {'true' if send else 'false'},",
                f"        sync: {'true' if sync else 'false'},",
                f"        why: {_rs_str(why)},",
                "    },",
            ]
    out += ["];", "",
            "/// A call that takes an argument over: from the call on ORT releases it, and the",
            "/// caller never releases it again (a wrapper is moved into the call).",
            "#[derive(Debug, Clone, Copy)]",
            "pub struct Transfer {",
            "    /// the C function (`Table.Function` for a sub-table's)",
            "    pub function: &'static str,",
            "    /// the C type taken",
            "    pub c_type: &'static str,",
            "    /// its C parameter",
            "    pub parameter: &'static str,",
            "    /// what ORT does with it when the call succeeds",
            "    pub on_success: &'static str,",
            "    /// who owns it after a failed call: "
            + ", ".join(f'"{k}"' for k in FAILURE_OWNERS) + " (see [`FAILURE_OWNERS`])",
            "    pub failure_owner: &'static str,",
            "    /// why",
            "    pub on_failure: &'static str,",
            "    /// URLs and conformance check ids",
            "    pub evidence: &'static [&'static str],",
            "}",
            "",
            "/// What each `Transfer::failure_owner` means for the caller.",
            "pub const FAILURE_OWNERS: &[(&str, &str)] = &["]
    out += [f"    ({_rs_str(k)}, {_rs_str(v)})," for k, v in FAILURE_OWNERS.items()]
    out += ["];", "", "/// Every ownership transfer the rules table knows, sorted by function.",
            "pub const TRANSFERS: &[Transfer] = &["]
    for t in transfers():
        refs = list(dict.fromkeys(e["ref"] for e in t["evidence_records"] if e["ref"]))
        out += [
            "    Transfer {",
            f"        function: {_rs_str(t['function'])},",
            f"        c_type: {_rs_str(t['argument'])},",
            f"        parameter: {_rs_str(t['parameter'])},",
            f"        on_success: {_rs_str(t['on_success'])},",
            f"        failure_owner: {_rs_str(t['failure_owner'])},",
            f"        on_failure: {_rs_str(t['on_failure'])},",
            f"        evidence: &[{', '.join(_rs_str(r) for r in refs)}],",
            "    },",
        ]
    out += ["];", "",
            "/// Execution providers and whether one session may run concurrently on them",
            "/// (provider, concurrent Run allowed, why). A provider not listed is exclusive.",
            "pub const EP_CONCURRENT_RUN: &[(&str, bool, &str)] = &["]
    for p, (ok, why) in EP_CONCURRENT_RUN.items():
        out.append(f"    ({_rs_str(p)}, {'true' if ok else 'false'}, {_rs_str(why)}),")
    out += ["];", "",
            "/// Providers whose concurrent Run needs a minimum ORT version: (provider, major,",
            "/// minor, why). With an older library the provider is exclusive whatever",
            "/// [`EP_CONCURRENT_RUN`] says.",
            "pub const EP_MIN_CONCURRENT_VERSION: &[(&str, u32, u32, &str)] = &["]
    for p, ((major, minor), why) in MIN_CONCURRENT_VERSION.items():
        out.append(f"    ({_rs_str(p)}, {major}, {minor}, {_rs_str(why)}),")
    out += ["];", "",
            "/// ortc's `session_run_rule` decisions, for `run_rule` to be tested against:",
            "/// (provider, its options, ORT version, concurrent Run allowed).",
            "pub const RUN_RULE_DECISIONS: &[(&str, &[(&str, &str)], &str, bool)] = &["]
    for p, case_opts, version, ok in run_rule_decisions():
        pairs = ", ".join(f"({_rs_str(k)}, {_rs_str(v)})" for k, v in case_opts)
        out.append(f"    ({_rs_str(p)}, &[{pairs}], {_rs_str(version)}, "
                   f"{'true' if ok else 'false'}),")
    out += ["];", "",
            "/// Provider options that make Run exclusive when set to a true value",
            "/// (provider, option key, why).",
            "pub const EXCLUSIVE_PROVIDER_OPTIONS: &[(&str, &str, &str)] = &["]
    for p, opts in _EXCLUSIVE_OPTIONS.items():
        for key, why in opts.items():
            out.append(f"    ({_rs_str(p)}, {_rs_str(key)}, {_rs_str(why)}),")
    out += ["];", "",
            "/// Option values that count as true for [`EXCLUSIVE_PROVIDER_OPTIONS`].",
            f"pub const TRUE_VALUES: &[&str] = &[{', '.join(_rs_str(v) for v in _TRUE)}];",
            "",
            "/// Provider names: (the short name the generic append slot takes, the full name",
            "/// ORT reports).",
            "pub const PROVIDER_NAMES: &[(&str, &str)] = &["]
    out += [f"    ({_rs_str(k)}, {_rs_str(v)})," for k, v in PROVIDERS.items()]
    out += ["];", ""]
    by_type = {r["type"]: r for r in recs}
    unknown = [t for t in WRAPPERS if t not in by_type]
    if unknown:
        raise SystemExit(f"wrapper types for C types the rules do not know: {unknown}")
    out += ["// -- the verdicts applied to the wrapper types " + "-" * 50, ""]
    for c_type, wrappers in WRAPPERS.items():
        r = by_type[c_type]
        for generics, path, override in wrappers:
            verdicts = {}
            for trait in ("Send", "Sync"):
                verdict = bool(r[trait.lower()])
                if override.get(trait.lower(), verdict) is True and not verdict:
                    raise SystemExit(f"{path}: an override may not grant {trait}")
                verdicts[trait] = verdict and override.get(trait.lower(), True)
            out += _comment(f"{path} ({c_type}): Send {'yes' if verdicts['Send'] else 'no'}, "
                            f"Sync {'yes' if verdicts['Sync'] else 'no'}. "
                            f"Evidence: {r['evidence']}")
            for note in r["notes"]:
                out += _comment(f"Note: {note}")
            conditional = sorted(m for m in r["conditions"] if _is_c(m))
            if conditional:
                why = r["conditions"][conditional[0]]
                how = (" Here the type parameter P carries it: ConcurrentRun runs through "
                       "&self, ExclusiveRun through &mut self." if "<P>" in path else "")
                out += _comment(f"Conditional ({', '.join(conditional)}): {why}.{how}")
            for trait in ("Send", "Sync"):
                if verdicts[trait]:
                    out.append(f"unsafe impl{generics} {trait} for {path} {{}}")
                elif r[trait.lower()]:
                    out += _comment(f"not {trait}: {override['why']}")
                    out += _doc_refusal(path, trait)
                else:
                    out += _comment(f"not {trait}: {c_type} is {trait.lower()}=false in the "
                                    f"rules table (the raw pointer inside keeps it !{trait})")
                    out += _doc_refusal(path, trait)
            if out[-1]:
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def _doc_refusal(path: str, trait: str) -> list[str]:
    """A compile_fail doctest that the type is not ``trait`` (E0277), attached to a const."""
    t = _static_type(path)
    short = path.split("::")[-1].split("<")[0]
    const = re.sub(r"(?<!^)(?=[A-Z])", "_", short).upper() + f"_IS_NOT_{trait.upper()}"
    if trait == "Sync":
        body = [f"fn share(x: &{t}) {{",
                "    // two threads using one object at once: refused",
                "    std::thread::scope(|s| { s.spawn(|| { let _ = &x; }); let _ = &x; });",
                "}"]
    else:
        body = [f"fn hand_over(x: {t}) {{",
                "    // moving the object to another thread: refused",
                "    std::thread::spawn(move || drop(x));",
                "}"]
    return ([f"/// `{path}` is not {trait}: the compiler refuses it (E0277).",
             "///", "/// ```compile_fail,E0277"]
            + [f"/// {line}" for line in body]
            + ["/// ```", f"pub const {const}: () = ();", ""])


# -- driver ------------------------------------------------------------------------------------

def build(out_dir: str, root: str = ROOT) -> list[str]:
    """Write ``src/sys.rs`` and ``src/rules.rs`` under out_dir; return their paths."""
    src = os.path.join(out_dir, "src")
    os.makedirs(src, exist_ok=True)
    paths = []
    for name, text in (("sys.rs", render_sys(root)), ("rules.rs", render_rules())):
        path = os.path.join(src, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        paths.append(path)
    return paths


def check(root: str = ROOT) -> list[str]:
    """The generated files that differ from a fresh generation (relative to the crate)."""
    crate = os.path.join(root, CRATE)
    stale = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in build(tmp, root):
            rel = os.path.relpath(path, tmp)
            mine = os.path.join(crate, rel)
            new = open(path, encoding="utf-8").read()
            old = open(mine, encoding="utf-8").read() if os.path.exists(mine) else None
            if old != new:
                stale.append(rel)
    return stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"{COMMAND}", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(ROOT, CRATE),
                    help="the crate folder that receives src/sys.rs and src/rules.rs")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when the committed generated files are stale")
    args = ap.parse_args(argv)
    if args.check:
        stale = check()
        if stale:
            print(f"stale generated Rust files in {CRATE} (run {COMMAND}): " + ", ".join(stale))
            return 1
        print("generated Rust files are up to date")
        return 0
    for path in build(args.out):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
