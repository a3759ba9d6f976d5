"""Comparing a fresh run with results committed from another machine.

The rule (docs/design/reproducibility.md): integers (Monte Carlo counts and sums,
thresholds, seeds) reproduce bit for bit anywhere; floats of the exact solvers agree
within ``config.CROSS_MACHINE_RTOL`` of the quantity's scale, because the kernels are
compiled for the host CPU. A comparison with a run on this machine, in this process,
stays exact (``check_exact=True``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dicelab.config import CROSS_MACHINE_RTOL


def _close(a: float, b: float, scale: float) -> bool:
    return math.isclose(a, b, rel_tol=CROSS_MACHINE_RTOL, abs_tol=CROSS_MACHINE_RTOL * scale)


def assert_frame_reproduces(committed: pd.DataFrame, fresh: pd.DataFrame) -> None:
    """Same columns, dtypes and integer values; float columns within the tolerance of the
    column's largest magnitude (a value near 0, such as a gap to the optimum, is compared
    on the scale of its column)."""
    assert list(committed.columns) == list(fresh.columns)
    assert len(committed) == len(fresh)
    for col in committed.columns:
        a, b = committed[col].to_numpy(), fresh[col].to_numpy()
        assert a.dtype == b.dtype, (col, a.dtype, b.dtype)
        if np.issubdtype(a.dtype, np.floating):
            scale = float(np.nanmax(np.abs(np.concatenate([a, b])))) if a.size else 0.0
            bad = [i for i in range(a.size) if not _close(float(a[i]), float(b[i]), scale)]
            assert not bad, f"{col}: rows {bad[:5]} differ beyond {CROSS_MACHINE_RTOL:g}"
        else:
            np.testing.assert_array_equal(a, b, err_msg=col)


def assert_record_reproduces(committed, fresh, scale: float | None = None) -> None:
    """A JSON-like record (a manifest's summary): the same keys and integers, floats
    within the tolerance of their own magnitude (or ``scale``)."""
    if isinstance(committed, dict):
        assert isinstance(fresh, dict) and committed.keys() == fresh.keys()
        for k in committed:
            assert_record_reproduces(committed[k], fresh[k], scale)
    elif isinstance(committed, list | tuple):
        assert isinstance(fresh, list | tuple) and len(committed) == len(fresh)
        for a, b in zip(committed, fresh, strict=True):
            assert_record_reproduces(a, b, scale)
    elif isinstance(committed, float) or isinstance(fresh, float):
        s = max(abs(committed), abs(fresh)) if scale is None else scale
        assert _close(float(committed), float(fresh), s), (committed, fresh)
    else:
        assert committed == fresh, (committed, fresh)
