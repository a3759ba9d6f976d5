"""Count the Farkle solver modules' lines of code, beside an older checkout's.

    .venv/bin/python benchmarks/solver_lines.py [--old DIR]

A line of code is a physical line holding a token other than a comment, a docstring (a
string standing alone as a statement: module, class and function docstrings) or the
line structure itself (blank lines, NEWLINE/INDENT/DEDENT). Both trees are counted the
same way; raw line counts (``wc -l``) are shown beside.

The solver modules: before the engine, ``turn_dp``, ``two_player``, ``penalty_game``,
``penalty_response``, ``penalty_pair``, ``head_to_head``, ``exact``, ``policies``,
``policy_table`` and ``advise``; with it, the engine (``engine/``: model, turn, game)
and the solvers on it (``solve``, ``solitaire``, ``fixed``, ``exact``, ``policies``,
``policy_table``, ``advise``). The rules, the simulation kernels and the referee are
not solvers and are counted by neither.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import benchopts

HERE = Path(__file__).resolve().parent

OLD = ("turn_dp", "two_player", "penalty_game", "penalty_response", "penalty_pair",
       "head_to_head", "exact", "policies", "policy_table", "advise")
NEW = ("engine/__init__", "engine/model", "engine/turn", "engine/game", "solve",
       "solitaire", "fixed", "exact", "policies", "policy_table", "advise")


def docstring_lines(tree: ast.AST) -> set[int]:
    """Lines of every string that stands alone as a statement."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            out.update(range(node.lineno, node.end_lineno + 1))
    return out


def code_lines(text: str) -> int:
    """Physical lines with a token of code (see the module's docstring)."""
    skip = docstring_lines(ast.parse(text))
    lines: set[int] = set()
    structure = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                 tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in structure:
            continue
        for line in range(tok.start[0], tok.end[0] + 1):
            if line not in skip:
                lines.add(line)
    return len(lines)


def count(root: Path, names: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """(module, lines of code, raw lines) of each module under ``root`` that exists."""
    rows = []
    for name in names:
        path = root / f"{name}.py"
        if path.exists():
            text = path.read_text()
            rows.append((name, code_lines(text), text.count("\n")))
    return rows


def main() -> None:
    ap = benchopts.Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, default=None,
                    help="a checkout from before the engine (its src/dicelab/farkle)")
    args = ap.parse_args()
    if args.old is not None and not (args.old / "src/dicelab/farkle").is_dir():
        ap.error(f"--old {args.old}: no src/dicelab/farkle there (a dicelab checkout)")
    trees = [("this tree", HERE.parent / "src/dicelab/farkle", NEW)]
    if args.old is not None:
        trees.insert(0, ("before the engine", args.old / "src/dicelab/farkle", OLD))
    for label, root, names in trees:
        rows = count(root, names)
        print(f"{label}: {root}")
        for name, code, raw in rows:
            print(f"  {name:20s} {code:6d} code {raw:6d} raw")
        print(f"  {'total':20s} {sum(r[1] for r in rows):6d} code "
              f"{sum(r[2] for r in rows):6d} raw")


if __name__ == "__main__":
    main()
