"""CPython's line table rewritten: a large graph's chunks of code without their positions.

CPython (3.11 on) keeps each instruction's line and columns, for tracebacks, in a table
(``co_linetable``) as large as the bytecode itself. A large graph's chunks
(``chunks.py``) are not kept for reading, so that table is only memory: half of what
their code takes. ``without_positions`` replaces it by entries of "line of the ``def``,
no columns", in the table's documented format (CPython's InternalDocs/code_objects.md).
A traceback through a chunk still names its file, ``<chaingrad.compile: forward_0>``,
and its function.

Example:
    >>> import sys
    >>> def f(x):
    ...     return (x + 1) * (x - 1)
    >>> g = f.__code__.replace()
    >>> f.__code__ = without_positions(f.__code__)
    >>> f(3)
    8
    >>> sys.version_info[:2] not in KNOWN_LOCATION_TABLES or (
    ...     len(f.__code__.co_linetable) < len(g.co_linetable))
    True
"""

from __future__ import annotations

import sys
from types import CodeType

KNOWN_LOCATION_TABLES = {(3, 11), (3, 12), (3, 13), (3, 14)}
"""The Python versions whose location table ``without_positions`` writes."""


def without_positions(code: CodeType) -> CodeType:
    """``code`` with one line number for all its instructions and no columns.

    Its table is entries of "line of the ``def``, no columns", one per 8 code units (the
    most an entry covers): a byte of code 13 with the units it covers, then the change of
    line, 0. On other versions than ``KNOWN_LOCATION_TABLES``, ``code`` as it is.
    """
    if sys.version_info[:2] not in KNOWN_LOCATION_TABLES:
        return code
    units = len(code.co_code) // 2
    full, rest = divmod(units, 8)
    table = bytes([0x80 | 13 << 3 | 7, 0]) * full
    if rest:
        table += bytes([0x80 | 13 << 3 | rest - 1, 0])
    return code.replace(co_linetable=table)
