"""Saving results so they can be reproduced: Parquet summary + ``manifest.json``.

Files are written by :func:`dicelab.files.write_output`: a regular file through a
temporary name in its directory and a rename, so an interrupted run never leaves a
half-written file behind, and never in place of a symbolic link or a device.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from dicelab.errors import UserError
from dicelab.files import (
    check_output,
    make_output_dir,
    same_directory,
    write_output,
)

if TYPE_CHECKING:
    import pandas as pd


class SimulationResult(Protocol):
    """What every game's simulation runner returns."""

    game: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary (what ``--json`` prints)."""

    def to_frame(self) -> pd.DataFrame:
        """One row per seat: the summary saved as Parquet."""

    def manifest(self) -> dict[str, Any]:
        """Everything needed to reproduce the run (policies, rules, seed, games, ...)."""


def frame_row(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """One flat Parquet row from a JSON summary, the same way for both games.

    Nested dicts become ``<key>_<subkey>`` columns; a 95% interval ``X_ci95: [lo, hi]``
    becomes ``X_ci95_lo`` and ``X_ci95_hi``; other lists are dropped (a row holds scalars
    only).

    >>> frame_row({"win_rate": 0.5, "win_rate_ci95": [0.4, 0.6],
    ...            "mean_box_scores": {"ones": 2.1}})
    {'win_rate': 0.5, 'win_rate_ci95_lo': 0.4, 'win_rate_ci95_hi': 0.6, 'mean_box_scores_ones': 2.1}
    """
    row: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            row.update(frame_row(value, f"{name}_"))
        elif isinstance(value, list | tuple):
            if len(value) == 2 and key.endswith("_ci95"):
                row[f"{name}_lo"], row[f"{name}_hi"] = value
        else:
            row[name] = value
    return row


def policy_params(spec) -> dict[str, Any]:
    """A parsed policy's (:class:`dicelab.registry.PolicySpec`) family and parameters, as
    results and manifests record them.

    >>> from dicelab.registry import parse_policy
    >>> policy_params(parse_policy("threshold-300"))
    {'family': 'threshold', 'threshold': 300}
    """
    return {"family": spec.family, **spec.params}


def played_by(names: Sequence[str], params: Sequence[dict[str, Any]], *,
              kernels: Iterable[str | None], threads: int | None, executor: str,
              workers: int | None, seats: bool = False) -> dict[str, Any]:
    """What played a run and how, as every manifest of a run of policies records it: the
    policies with their parameters, then :func:`provenance` (the game kernel, the threads,
    the executor and its workers).

    ``seats``: the policies are a simulation's seats, ``policies`` a list of ``{"seat",
    "name", "params"}``; else (a tournament's or a compare's policies) ``policies`` lists
    the names and ``policy_params`` maps each to its parameters.

    >>> played_by(["a", "b"], [{"family": "x"}, {"family": "y"}], kernels=["k", "k"],
    ...           threads=2, executor="local", workers=None)["kernel"]
    'k'
    """
    policies: dict[str, Any] = (
        {"policies": [{"seat": s, "name": n, "params": p}
                      for s, (n, p) in enumerate(zip(names, params, strict=True))]}
        if seats else
        {"policies": list(names),
         "policy_params": dict(zip(names, params, strict=True))})
    return {**policies, **provenance(kernels, threads=threads, executor=executor,
                                     workers=workers)}


#: The fields :func:`provenance` gives every manifest: what ran the work, and where.
PROVENANCE = ("kernel", "threads", "executor", "workers")


def provenance(kernels: Iterable[str | None] | str | None, *, threads: int | None = None,
               executor: str = "local", workers: int | None = None) -> dict[str, Any]:
    """How a run was computed, as every manifest records it (the one builder of these
    fields, :data:`PROVENANCE`; :func:`save_run` gives them to every manifest):

    * ``kernel``: the game kernel that played every game, the list of those that played
      when they differ (a compare's pairs, a tournament's tables), ``None`` when no game
      was played (an exact evaluation). ``kernels``: each table's or pair's (``None``:
      none played it), or one kernel;
    * ``threads``: the threads that did the work in this process
      (:func:`dicelab.parallel.threads_used`: one where only the Python referee played;
      ``threads``, default numba's, otherwise);
    * ``executor`` (``"local"`` or ``"dask"``) and ``workers`` (the Dask workers; None
      locally).

    >>> provenance(["referee", "referee"], threads=2)
    {'kernel': 'referee', 'threads': 1, 'executor': 'local', 'workers': None}
    >>> provenance(["general", "lanes-16", None], threads=2)["kernel"]
    ['general', 'lanes-16']
    """
    from dicelab.parallel import threads_used

    if kernels is None or isinstance(kernels, str):
        kernels = [kernels]
    used = list(dict.fromkeys(k for k in kernels if k is not None))
    return {"kernel": used[0] if len(used) == 1 else (used or None),
            "threads": threads_used(used, threads), "executor": executor,
            "workers": workers}


def run_provenance(result: SimulationResult, run: dict[str, Any]) -> dict[str, Any]:
    """:func:`provenance` of ``result``, whose manifest is ``run``: what ``run`` records of
    it already (a run of policies: :func:`played_by`), else the result's ``kernels`` or
    ``kernel``, ``threads``, ``executor`` and ``workers`` attributes where it has them
    (none: no game kernel, this process's threads, locally)."""
    def given(name: str, default: Any = None) -> Any:
        return run[name] if name in run else getattr(result, name, default)

    kernels = run["kernel"] if "kernel" in run else getattr(
        result, "kernels", getattr(result, "kernel", None))
    return provenance(kernels, threads=given("threads"),
                      executor=given("executor", "local") or "local",
                      workers=given("workers"))


def versions() -> dict[str, str]:
    import numba
    import numpy
    import pandas as pd

    import dicelab

    return {
        "dicelab": dicelab.__version__,
        "numba": numba.__version__,
        "numpy": numpy.__version__,
        "pandas": pd.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }


def atomic_write_text(path: Path, text: str, option: str = "--out") -> Path:
    """Write ``text`` (UTF-8) with :func:`dicelab.files.write_output` (a regular file
    through a temporary file and a rename)."""
    return write_output(path, text.encode("utf-8"), option)


def atomic_write_parquet(path: Path, frame: pd.DataFrame, option: str = "--out") -> Path:
    import io

    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return write_output(path, buf.getvalue(), option)


#: The files :func:`save_run` writes into an output directory.
RUN_FILES = ("summary.parquet", "manifest.json")


def check_out_dir(out: Path | str, files: tuple[str, ...] = RUN_FILES,
                  option: str = "--out", *, parents: bool | None = None) -> Path:
    """Fail before any work is done if ``out`` could not become a writable directory
    (it is made only once the run succeeded, by :func:`prepare_out_dir`) or one of
    the ``files`` to be written in it could not be written. Errors name ``option``.
    :func:`dicelab.files.check_output` (``directory=True``) checks, by the rule of every
    output path: ``out``'s parent must exist, unless ``parents`` (default: ``out`` is a
    directory dicelab chose, ``option`` a description such as "the results directory",
    not an option's name)."""
    if str(out).strip() == "":
        raise UserError(f"{option} needs a directory name")
    return check_output(out, option, directory=True, files=files, parents=parents)


def check_png_path(path: Path | str, option: str = "--plot", *, json_out: bool = False,
                   creates: Path | str | None = None) -> Path:
    """Fail before any work is done if ``path`` cannot become a PNG file (its name must
    end in .png, and :func:`dicelab.files.check_output` must accept it, ``json_out`` and
    ``creates``, the run's ``--out``, as there)."""
    return check_output(path, option, suffix=".png", json_out=json_out, creates=creates)


def prepare_out_dir(out: Path | str, option: str = "--out") -> Path:
    """Make ``out`` (checked by :func:`check_out_dir` before the run, which decided
    whether its parents may be made: :func:`dicelab.files.make_output_dir`)."""
    return make_output_dir(out, option)


def prepare_out_dir_of(path: Path | str, out: Path | str | None) -> None:
    """Create the ``--out`` directory ``out`` now if ``path``, another output of the run
    (a ``--plot``, a ``--log``) written before the run's own files, goes in it
    (``creates`` of :func:`dicelab.files.check_output`)."""
    if out is not None and same_directory(Path(path).parent, out):
        prepare_out_dir(Path(out))


def policy_code(*named) -> dict[str, str]:
    """The SHA-256 of the file of each user's policy named anywhere in ``named`` (a
    command line, a manifest's fields), by the name given, a policy named as another's
    parameter too (``optimal-win:vs=my.py:rule``: under ``my.py:rule``), or an option's
    value written with ``=`` (``--strategy=my.py:rule``): the name stays
    when the file's code changes, so a manifest records which code played. Empty when the
    run names no user's policy."""
    from dicelab.user_policy import references, source_digest

    out: dict[str, str] = {}

    def walk(x) -> None:
        if isinstance(x, str):
            if x.startswith("-") and "=" in x:  # an option and its value: --vs=my.py:rule
                x = x.split("=", 1)[1]
            for ref in references(x) if ":" in x else ():
                if ref not in out and (code := source_digest(ref)) is not None:
                    out[ref] = code
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v)

    walk(named)
    return out


def save_run(out: Path, result: SimulationResult, command: list[str] | None = None,
             name: str = "summary", figures: tuple[str, ...] = (),
             summary: dict | None = None) -> dict[str, Path]:
    """Write ``<out>/<name>.parquet`` (``result``'s table) and ``<out>/manifest.json``,
    which lists them and ``figures`` (the names of pictures already written there) and
    holds ``summary`` (what the command reported; default ``result.to_dict()``) and, as
    every manifest, :data:`PROVENANCE` (:func:`run_provenance`: the kernel, threads,
    executor and workers that computed it); returns the paths."""
    command = command if command is not None else list(sys.argv)
    run = result.manifest()
    manifest = {
        "command": command,
        **run,
        **run_provenance(result, run),  # the same fields in every manifest
        "versions": versions(),
        **({"policy_code": code} if (code := policy_code(command, run)) else {}),
        "files": {"summary": f"{name}.parquet", **({"figures": list(figures)} if figures
                                                    else {})},
        "summary": result.to_dict() if summary is None else summary,
    }
    out = prepare_out_dir(out)  # once the manifest is made: nothing on a failure
    pq = out / f"{name}.parquet"
    mf = out / "manifest.json"
    atomic_write_parquet(pq, result.to_frame())
    atomic_write_text(mf, json.dumps(_nan_to_none(manifest), indent=2,
                                     default=_json_default) + "\n")
    return {"summary": pq, "manifest": mf}


class ScriptParser(argparse.ArgumentParser):
    """An experiment script's options: a bad one is one ``error: ...`` line on stderr and
    exit code 2, as on the command line (argparse's own adds its usage lines)."""

    def error(self, message: str):
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)


def run_script(out: Path | str, compute: Callable[[], SimulationResult],
               command: list[str], *, parents: bool = False
               ) -> tuple[SimulationResult, Path] | int:
    """An experiment script's run: ``out`` checked before any work (:func:`check_out_dir`:
    its parent must exist, unless ``parents``, for a default directory the script chose),
    ``compute()``, then the run saved there (:func:`save_run`). Returns ``(run, out)``, or
    the script's exit code after its one message on stderr: 2 and ``error: ...`` for a
    user error (nothing written), 130 for Ctrl-C."""
    try:
        out = check_out_dir(out, parents=parents)
        run = compute()
        save_run(out, run, command)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    return run, out


def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def to_json(obj: Any) -> str:
    """JSON text for results (numpy scalars and arrays allowed; NaN becomes null)."""
    return json.dumps(_nan_to_none(obj), default=_json_default)


#: Where :func:`echo_json` writes while :func:`json_stdout` holds standard output.
_JSON_OUT: ContextVar[TextIO | None] = ContextVar("json_out", default=None)


@contextmanager
def json_stdout(active: bool = True) -> Iterator[None]:
    """While a ``--json`` command runs (``active``), what anything else prints to standard
    output (a user's policy debugging with ``print``, say) goes to standard error, so the
    JSON that :func:`echo_json` writes stays the only thing on standard output."""
    if not active:
        yield
        return
    real = sys.stdout
    token = _JSON_OUT.set(real)
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = real
        _JSON_OUT.reset(token)


def echo_json(obj: Any) -> None:
    """Print ``obj`` as one line of JSON (:func:`to_json`) on standard output."""
    out = _JSON_OUT.get() or sys.stdout
    out.write(to_json(obj) + "\n")
    out.flush()


def _nan_to_none(obj):
    import math

    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nan_to_none(v) for v in obj]
    return obj
