"""A griffe extension (mkdocs.yml's mkdocstrings ``extensions``): the package's docstrings
head their doctests ``Example:``, which Google style reads as a note of prose; as
``Examples:`` their ``>>>`` lines and outputs are shown as code, as the reader runs them."""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension, Object

HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.M)


class ExampleSections(Extension):
    def on_instance(self, *, obj: Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = HEADING.sub(r"\1Examples:", obj.docstring.value)
