"""Saving results so they can be reproduced: Parquet summary + ``manifest.json``.

Files are written to a temporary name in the target directory and renamed into
place, so an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dicelab.errors import UserError

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

    Nested dicts become ``<key>_<subkey>`` columns; an interval ``X_ci: [lo, hi]`` (or
    ``ci95`` inside ``X``) becomes ``X_lo`` and ``X_hi``; other lists are dropped
    (a row holds scalars only).

    >>> frame_row({"win_rate": 0.5, "win_rate_ci": [0.4, 0.6], "boxes": {"ones": {"mean": 2}}})
    {'win_rate': 0.5, 'win_rate_lo': 0.4, 'win_rate_hi': 0.6, 'boxes_ones_mean': 2}
    """
    row: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            row.update(frame_row(value, f"{name}_"))
        elif isinstance(value, list | tuple):
            if len(value) == 2 and (key.endswith("_ci") or key == "ci95"):
                stem = name[:-3] if key.endswith("_ci") else name[:-len("_ci95")]
                row[f"{stem}_lo"], row[f"{stem}_hi"] = value
        else:
            row[name] = value
    return row


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _publish(tmp: str, path: Path) -> None:
    """Give a finished temporary file the permissions a new file gets (the user's umask,
    not mkstemp's 0600) and rename it into place."""
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, path)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        _publish(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_parquet(path: Path, frame: pd.DataFrame) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        _publish(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_out_dir(out: Path | str) -> Path:
    """Fail before any work is done if ``out`` could not become a writable directory
    (it is created only once the run succeeded, by :func:`prepare_out_dir`)."""
    if str(out).strip() == "":
        raise UserError("--out needs a directory name")
    out = Path(out)
    for part in out.parts:
        if len(os.fsencode(part)) > 255:
            raise UserError(f"--out {out}: a name in it is longer than the file system "
                            "allows (255 bytes)")
    if out.exists():
        if not out.is_dir():
            raise UserError(f"--out {out}: exists and is not a directory")
        if not os.access(out, os.W_OK | os.X_OK):
            raise UserError(f"--out {out}: directory is not writable")
        return out
    # create the missing directories once to see that it can be done, then remove them
    missing = []
    parent = out
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"--out {out}: {parent} is not a directory")
    try:
        out.mkdir(parents=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create directory ({exc.strerror})") from None
    for d in missing:
        with contextlib.suppress(OSError):
            d.rmdir()
    return out


def check_png_path(path: Path | str, option: str = "--plot") -> Path:
    """Fail before any work is done if ``path`` cannot become a PNG file (its name must
    end in .png and its directory must exist)."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise UserError(f"{option} {path}: the file name must end in .png")
    if not path.parent.is_dir():
        raise UserError(f"{option} {path}: directory {path.parent} does not exist")
    if path.is_dir():
        raise UserError(f"{option} {path}: is a directory")
    return path


def prepare_out_dir(out: Path) -> Path:
    """Create ``out`` (checked by :func:`check_out_dir` before the run)."""
    out = check_out_dir(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create directory ({exc.strerror})") from None
    if not os.access(out, os.W_OK):
        raise UserError(f"--out {out}: directory is not writable")
    return out


def save_run(out: Path, result: SimulationResult, command: list[str] | None = None,
             name: str = "summary") -> dict[str, Path]:
    """Write ``<out>/<name>.parquet`` and ``<out>/manifest.json``; returns the paths."""
    out = prepare_out_dir(out)
    manifest = {
        "command": command if command is not None else list(sys.argv),
        **result.manifest(),
        "versions": versions(),
        "files": {"summary": f"{name}.parquet"},
        "summary": result.to_dict(),
    }
    pq = out / f"{name}.parquet"
    mf = out / "manifest.json"
    atomic_write_parquet(pq, result.to_frame())
    atomic_write_text(mf, json.dumps(manifest, indent=2, default=_json_default) + "\n")
    return {"summary": pq, "manifest": mf}


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


def _nan_to_none(obj):
    import math

    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_nan_to_none(v) for v in obj]
    return obj
