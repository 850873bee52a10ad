"""``python -m ortc rules``: the thread rules as JSON, Markdown, or the Rust crate's module.

The command sits apart from :mod:`ortc.rules_table` (the table), :mod:`ortc.rules_render` (its
JSON and Markdown) and :mod:`ortc.rust_crate` (the crate generator, which reads the table), so
the imports run one way: rules_table <- rules_render, rust_crate <- here.
"""

from __future__ import annotations

import sys

from .rules_render import render_json, render_markdown
from .rust_crate import build, render_rules

__all__ = ["render", "render_rust", "main", "main_rules"]


def render_rust() -> str:
    """The Rust crate's generated rules module (``rust/ortc-rules/src/rules.rs``): the table as
    data and the crate's ``unsafe impl Send/Sync`` per verdict (:mod:`ortc.rust_crate`)."""
    return render_rules()


def render(fmt: str) -> str:
    """The rules as ``json``, ``markdown`` or ``rust`` text."""
    if fmt == "json":
        return render_json()
    if fmt in ("markdown", "md"):
        return render_markdown()
    if fmt == "rust":
        return render_rust()
    raise ValueError(f"unknown format {fmt!r}: expected json, markdown or rust")


def main(argv: list[str] | None = None) -> int:
    """``python -m ortc rules [--format json|markdown|rust] [--output FILE]``."""
    from ._cmdline import _Parser, prog

    parser = _Parser(prog=prog("rules"),
                                     description="Print ORT's thread rules as ortc enforces them.")
    parser.add_argument("--format", choices=("json", "markdown", "rust"), default="markdown")
    parser.add_argument("--output", "-o", help="write to this file instead of stdout")
    parser.add_argument("--out", metavar="CRATE",
                        help="with --format rust: regenerate the crate's generated files "
                             "(src/sys.rs, src/rules.rs) in this folder, e.g. rust/ortc-rules")
    args = parser.parse_args(argv)
    if args.out:
        if args.format != "rust":
            parser.error("--out needs --format rust")
        for path in build(args.out):
            print("wrote", path)
        return 0
    text = render(args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


main_rules = main
