"""Content digests: what names a table by what it holds (rules, arrays), in one place."""

from __future__ import annotations

import hashlib
import json


def text_digest(obj) -> str:
    """Short SHA-256 of a JSON-able object (sorted keys): a rule set's content digest.

    >>> text_digest({"b": 1, "a": [2]}) == text_digest({"a": [2], "b": 1})
    True
    """
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def array_digest(*arrays) -> str:
    """Short SHA-256 of numpy arrays' shapes, types and contents (in order): a table named
    by what it holds.

    >>> import numpy as np
    >>> array_digest(np.zeros(2)) == array_digest(np.zeros((1, 2)))
    False
    """
    h = hashlib.sha256()
    for a in arrays:
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a.ravel(order="C")).cast("B"))
    return h.hexdigest()[:16]
