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

