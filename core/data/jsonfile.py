"""Reading a benchmark's JSON file with errors that name the file and the expected layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, TypeVar

T = TypeVar("T")


def load_json_layout(path: str | Path, parse: Callable[[object], T], layout: str) -> T:
    """`parse(json.load(path))`; ValueError naming `layout` when the file is not UTF-8 JSON or not that layout."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON: {err}") from err
    try:
        return parse(data)
    except KeyError as err:
        raise ValueError(f"{path} is not in the {layout} layout (missing {err})") from err
    except (TypeError, AttributeError, IndexError) as err:  # a part of the wrong type: a list for a dict, ...
        raise ValueError(f"{path} is not in the {layout} layout ({type(err).__name__}: {err})") from err
    except ValueError as err:  # the parser's own complaint: say which file
        raise ValueError(f"{path}: {err}") from err
