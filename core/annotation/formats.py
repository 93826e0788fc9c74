"""Files in and out of an annotation task.

In (`read_bytes`, `read_path`), detected from the content, one kind per row:

- HybriDialogue annotated facts (FineDialFact's `annotated_test_data.json` format: a JSON list of
  objects with `id`, `history`, `A`, `response`, `atomic_fact`, `evidence`, `factualLabel`, ...);
  the human `factualLabel` becomes the item's gold label;
- facts as JSONL or CSV: `item_id` (or `id`) and `fact` (or `atomic_fact`), optional `response`,
  `query`, `history`, `evidence`, `gold`, `source`; a row that also has `annotator` and `label` carries a
  label, and `adjudicated` the lead's final label (this is the export format, so an export imports back);
- labels only: `item_id`, `annotator`, `label` (Supports / Refutes / Not Enough Info) for items
  already in the task;
- a benchmark run folder (`summary.json` + `items.jsonl`): rows with a `fact` each, or a `facts` list;
  a row's `passages` (all passages given with the item) are preferred to its `evidence` (what the
  verifier read), its `human` label (hybridialogue-facts) is the gold label, and the rows of several
  methods (`method`) for the same item become one item.

Everything is parsed and checked before the store writes anything, so a bad row anywhere leaves the
task as it was. Messages name the row and the column.

Out (`export_rows`, `write_jsonl`, `write_csv`): one row per item per annotator (an item nobody
labelled gets one row with an empty annotator), with the lead's final label on every row of its item.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.annotation.facts import locate
from core.annotation.model import (
    ADJUDICATED,
    DEFAULT_LIMITS,
    Adjudication,
    AnnotationError,
    ImportBatch,
    Item,
    Label,
    Limits,
    Passage,
    check_annotator,
    check_text,
    normalize_label,
)

EXPORT_COLUMNS = (
    "item_id", "fact", "response", "query", "history", "evidence", "gold", "gold_evidence", "gold_claim", "source",
    "span", "item_version", "annotator", "label", "selected_evidence", "not_claim", "comment", "labelled_at", ADJUDICATED,
)
_JSON_COLUMNS = ("history", "evidence", "gold_evidence", "selected_evidence", "span")
_HYBRIDIALOGUE_KEYS = ("atomic_fact", "A", "response", "evidence")


# -- reading --------------------------------------------------------------------------------------
def read_path(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> ImportBatch:
    """A file, or a benchmark run folder (its items.jsonl)."""
    path = Path(path)
    if path.is_dir():
        items = path / "items.jsonl"
        if not items.is_file():
            raise AnnotationError(f"{path} is a folder without items.jsonl: not a benchmark run")
        path = items
    if not path.is_file():
        raise AnnotationError(f"no such file: {path}")
    _check_size(path.name, path.stat().st_size, limits)
    return read_bytes(path.name, path.read_bytes(), limits)


def read_bytes(name: str, data: bytes, limits: Limits = DEFAULT_LIMITS) -> ImportBatch:
    _check_size(name, len(data), limits)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise AnnotationError(f"{name} is not UTF-8 text (byte {err.start}): export it as UTF-8 JSON, JSONL or CSV") from None
    rows = _rows(name, text)
    if not rows:
        raise AnnotationError(f"{name} holds no rows")
    if len(rows) > limits.max_items * 20:  # labels may be many per item, but not unboundedly many
        raise AnnotationError(f"{name} has {len(rows):,} rows; the limit is {limits.max_items * 20:,}")
    return batch_from_rows(rows, source=name, limits=limits)


def _check_size(name: str, size: int, limits: Limits) -> None:
    if size > limits.max_bytes:
        raise AnnotationError(f"{name} is {size / 1e6:.1f} MB; the limit is {limits.max_bytes / 1e6:.1f} MB. "
                              "Split it and import the parts into the same task: imports merge.")


def _rows(name: str, text: str) -> list[dict]:
    head = text.lstrip()[:1]
    suffix = Path(name).suffix.lower()
    if suffix == ".csv" or (suffix not in (".json", ".jsonl") and head not in ("[", "{")):
        return _csv_rows(name, text)
    if head == "[":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as err:
            raise AnnotationError(f"{name} is not valid JSON (line {err.lineno}: {err.msg})") from None
        return _dict_rows(name, rows)
    rows = []
    for n, line in enumerate(text.split("\n"), start=1):  # not splitlines(): text may hold U+0085, U+2028
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise AnnotationError(f"{name} line {n} is not a JSON object ({err.msg}): expected JSON lines") from None
    return _dict_rows(name, rows)


def _dict_rows(name: str, rows: Any) -> list[dict]:
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise AnnotationError(f"{name}: expected a JSON list of objects or one JSON object per line")
    return rows


def _csv_rows(name: str, text: str) -> list[dict]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = [{k: _uncsv_text(v) for k, v in r.items()} for r in reader]
    except csv.Error as err:
        raise AnnotationError(f"{name} is not valid CSV ({err})") from None
    if not reader.fieldnames:
        raise AnnotationError(f"{name}: no header row")
    if any(None in r for r in rows):
        bad = next(i for i, r in enumerate(rows, start=2) if None in r)
        raise AnnotationError(f"{name} line {bad} has more cells than the header has columns")
    return rows


def batch_from_rows(rows: list[dict], source: str = "", limits: Limits = DEFAULT_LIMITS) -> ImportBatch:
    batch = ImportBatch(source=source)
    items: dict[str, tuple[int, Item]] = {}
    labels: dict[tuple[str, str], int] = {}
    finals: dict[str, tuple[int, str]] = {}
    for n, row in enumerate(rows, start=1):
        where = f"row {n}"
        for item, label, final in _parse_row(row, where, limits):
            if item is not None:
                _add_item(items, item, n, where, labelled=label is not None or "method" in row)
            if label is not None:
                key = (label.item_id, label.annotator)
                if key in labels:
                    raise AnnotationError(f"{where}: a second label by {label.annotator!r} for item {label.item_id!r} "
                                          f"(first at row {labels[key]}); one label per item and annotator")
                labels[key] = n
                batch.labels.append(label)
            if final is not None:
                item_id, value = final
                if item_id in finals and finals[item_id][1] != value:
                    raise AnnotationError(f"{where}: item {item_id!r} has two different {ADJUDICATED} labels "
                                          f"(rows {finals[item_id][0]} and {n})")
                finals[item_id] = (n, value)
    if len(items) > limits.max_items:
        raise AnnotationError(f"{source or 'the file'} has {len(items):,} items; the limit is {limits.max_items:,} per task")
    batch.items = [item for _, item in items.values()]
    batch.adjudications = [Adjudication(item_id, value, lead="import") for item_id, (_, value) in finals.items()]
    return batch


def _add_item(items: dict[str, tuple[int, Item]], item: Item, n: int, where: str, labelled: bool) -> None:
    """The export's rows repeat an item once per annotator (same content, each with a label), a
    run's once per method; any other repeated id is an error."""
    if item.item_id in items:
        first, seen = items[item.item_id]
        if not labelled or seen.content() != item.content():
            raise AnnotationError(f"{where}: duplicate item id {item.item_id!r} (first at row {first}); ids must be unique")
        return
    items[item.item_id] = (n, item)


def _parse_row(row: dict, where: str, limits: Limits) -> list[tuple[Item | None, Label | None, tuple[str, str] | None]]:
    if all(k in row for k in _HYBRIDIALOGUE_KEYS):
        return [(_hybridialogue_item(row, where, limits), None, None)]
    if isinstance(row.get("facts"), list):
        return [(_run_fact_item(row, fact, k, where, limits), None, None) for k, fact in enumerate(row["facts"])]
    has_fact = "fact" in row or "atomic_fact" in row
    has_label = bool(str(row.get("annotator") or "").strip())
    if not has_fact and not has_label:
        keys = ", ".join(sorted(map(str, row))[:12]) or "none"
        raise AnnotationError(f"{where}: missing columns: a fact row needs item_id (or id) and fact; a label row needs "
                              f"item_id, annotator and label (found: {keys})")
    item_id = _item_id(row, where, limits)
    item = _fact_item(row, item_id, where, limits) if has_fact else None
    label = _label(row, item_id, where, limits) if has_label else None
    final = str(row.get(ADJUDICATED) or "").strip()
    final_pair = (item_id, normalize_label(final, f"{where}, {ADJUDICATED}")) if final else None
    return [(item, label, final_pair)]


# -- one row -> an item or a label ------------------------------------------------------------------
def _first(row: dict, *keys: str) -> Any:
    for key in keys:
        if row.get(key) not in (None, ""):
            return row[key]
    return None


def _item_id(row: dict, where: str, limits: Limits) -> str:
    value = _first(row, "item_id", "id")
    if value is None:
        raise AnnotationError(f"{where}: missing column item_id (or id)")
    return check_text(value, "item_id", limits.max_id_chars, where, required=True).strip()


def _hybridialogue_item(row: dict, where: str, limits: Limits) -> Item:
    item_id = _item_id(row, where, limits)
    where = f"{where} ({item_id})"
    passages = _passages(row.get("evidence"), where, limits)
    selected = {str(p.get("id")) for p in row.get("evidence") or [] if isinstance(p, dict) and p.get("selected")}
    selected |= {str(p.get("id")) for p in row.get("selectedEvidence") or [] if isinstance(p, dict)}
    claim = row.get("isFactualClaim")
    fact = check_text(row.get("atomic_fact"), "atomic_fact", limits.max_fact_chars, where, required=True)
    response = check_text(row.get("response"), "response", limits.max_text_chars, where)
    return Item(
        item_id=item_id, fact=fact, response=response,
        query=check_text(row.get("A"), "A (the query)", limits.max_text_chars, where),
        history=_history(row.get("history"), where, limits), evidence=passages,
        gold=normalize_label(row["factualLabel"], f"{where}, factualLabel") if row.get("factualLabel") else None,
        gold_evidence=tuple(p.id for p in passages if p.id in selected),
        gold_claim=None if not claim else str(claim).strip().lower() == "verifiable",
        source=check_text(row.get("type"), "type", limits.max_id_chars, where), span=locate(fact, response),
    )


def _fact_item(row: dict, item_id: str, where: str, limits: Limits) -> Item:
    fact = check_text(_first(row, "fact", "atomic_fact"), "fact", limits.max_fact_chars, where, required=True)
    response = check_text(row.get("response"), "response", limits.max_text_chars, where)
    gold = _first(row, "gold", "factualLabel", "human")
    column = "passages" if _first(row, "passages") is not None else "evidence"
    passages = _passages(_json_cell(row.get(column), where, column), where, limits)
    ids = {p.id for p in passages}
    gold_evidence = tuple(str(x) for x in _list_cell(row.get("gold_evidence"), where, "gold_evidence"))
    if not set(gold_evidence) <= ids:
        raise AnnotationError(f"{where}: gold_evidence names passages that are not in evidence")
    span = _span(_json_cell(row.get("span"), where, "span"), response)
    return Item(
        item_id=item_id, fact=fact, response=response,
        query=check_text(_first(row, "query", "A"), "query", limits.max_text_chars, where),
        history=_history(_json_cell(row.get("history"), where, "history"), where, limits), evidence=passages,
        gold=normalize_label(gold, f"{where}, gold") if gold is not None else None, gold_evidence=gold_evidence,
        gold_claim=_bool(_first(row, "gold_claim", "isFactualClaim"), where, "gold_claim"),
        source=check_text(_first(row, "source", "type", "method"), "source", limits.max_id_chars, where),
        span=span if span is not None else locate(fact, response),
    )


def _run_fact_item(row: dict, fact: Any, k: int, where: str, limits: Limits) -> Item:
    """A benchmark run's row holding a list of facts of one response."""
    if isinstance(fact, str):
        fact = {"fact": fact}
    if not isinstance(fact, dict):
        raise AnnotationError(f"{where}: facts[{k}] is neither text nor an object")
    base = _first(row, "item_id", "id") or ":".join(str(row[key]) for key in ("dialogue_id", "turn") if key in row)
    if not base:
        raise AnnotationError(f"{where}: missing column item_id, id or dialogue_id")
    merged = {**{key: v for key, v in row.items() if key != "facts"}, **fact, "item_id": f"{base}#{k}"}
    merged.setdefault("fact", _first(fact, "text", "atomic_fact"))
    merged.pop("annotator", None)
    return _fact_item(merged, merged["item_id"], f"{where}, facts[{k}]", limits)


def _label(row: dict, item_id: str, where: str, limits: Limits) -> Label:
    annotator = check_annotator(row.get("annotator"), limits)
    if _first(row, "label") is None:
        raise AnnotationError(f"{where}: missing column label (the annotator's Supports / Refutes / Not Enough Info)")
    created = row.get("labelled_at")
    try:
        created_at = float(created) if created not in (None, "") else 0.0
    except (TypeError, ValueError):
        raise AnnotationError(f"{where}: labelled_at {str(created)[:30]!r} is not a Unix time") from None
    return Label(
        item_id=item_id, annotator=annotator, label=normalize_label(row["label"], f"{where}, label"),
        evidence=tuple(str(x) for x in _list_cell(row.get("selected_evidence"), where, "selected_evidence")),
        not_claim=bool(_bool(row.get("not_claim"), where, "not_claim")),
        comment=check_text(row.get("comment"), "comment", limits.max_comment_chars, where), created_at=created_at,
    )


# -- cells -------------------------------------------------------------------------------------------
def _json_cell(value: Any, where: str, column: str) -> Any:
    """CSV cells hold lists as JSON text; JSONL rows hold them as lists."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            raise AnnotationError(f"{where}: column {column} starts like JSON but is not valid JSON") from None
    return value


def _list_cell(value: Any, where: str, column: str) -> list:
    value = _json_cell(value, where, column)
    if value in (None, ""):
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(";") if v.strip()]
    if not isinstance(value, list):
        raise AnnotationError(f"{where}: column {column} must be a list")
    return value


def _bool(value: Any, where: str, column: str) -> bool | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "verifiable"):
        return True
    if text in ("false", "0", "no", "non-verifiable"):
        return False
    raise AnnotationError(f"{where}: column {column} is {str(value)[:30]!r}, not true/false")


def _span(value: Any, response: str) -> tuple[int, int] | None:
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) for v in value):
        start, end = value
        if 0 <= start < end <= len(response):
            return start, end
    return None


def _history(value: Any, where: str, limits: Limits) -> tuple[tuple[str, str], ...]:
    """[[speaker, text], ...], [{"speaker"|"role", "text"}], ["text", ...] or lines "Speaker: text"."""
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        value = [line.split(":", 1) if ":" in line[:40] else ["", line] for line in value.splitlines() if line.strip()]
    if not isinstance(value, list):
        raise AnnotationError(f"{where}: history must be a list of turns")
    if len(value) > limits.max_history_turns:
        raise AnnotationError(f"{where}: history has {len(value)} turns; the limit is {limits.max_history_turns}")
    turns = []
    for k, turn in enumerate(value):
        if isinstance(turn, dict):
            speaker, text = turn.get("speaker") or turn.get("role") or "", turn.get("text", "")
        elif isinstance(turn, (list, tuple)) and len(turn) == 2:
            speaker, text = turn
        elif isinstance(turn, str):
            speaker, text = ("A", "B")[k % 2], turn
        else:
            raise AnnotationError(f"{where}: history turn {k + 1} is neither [speaker, text] nor text")
        turns.append((check_text(speaker, "a history speaker", limits.max_id_chars, where).strip(),
                      check_text(text, f"history turn {k + 1}", limits.max_text_chars, where)))
    return tuple(turns)


def _passages(value: Any, where: str, limits: Limits) -> tuple[Passage, ...]:
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise AnnotationError(f"{where}: evidence must be a list of passages")
    if len(value) > limits.max_passages:
        raise AnnotationError(f"{where}: {len(value)} evidence passages; the limit is {limits.max_passages}")
    out = []
    for k, p in enumerate(value, start=1):
        if isinstance(p, str):
            p = {"text": p}
        if not isinstance(p, dict):
            raise AnnotationError(f"{where}: evidence passage {k} is neither text nor an object")
        pid = check_text(p.get("id") if p.get("id") not in (None, "") else f"p{k}", "a passage id", limits.max_id_chars, where)
        out.append(Passage(id=str(pid), text=check_text(p.get("text"), f"passage {k} text", limits.max_passage_chars, where),
                           title=check_text(p.get("title"), f"passage {k} title", limits.max_id_chars * 5, where),
                           section=check_text(p.get("section"), f"passage {k} section", limits.max_id_chars * 5, where)))
    if len({p.id for p in out}) < len(out):
        raise AnnotationError(f"{where}: two evidence passages share an id")
    return tuple(out)


# -- writing -----------------------------------------------------------------------------------------
def export_rows(items: Iterable[Item], labels: Iterable[Label], finals: dict[str, str]) -> list[dict]:
    by_item: dict[str, list[Label]] = {}
    for label in labels:
        by_item.setdefault(label.item_id, []).append(label)
    rows = []
    for item in items:
        content = item.content()
        base = {
            "item_id": item.item_id, "fact": item.fact, "response": item.response, "query": item.query,
            "history": content["history"], "evidence": content["evidence"], "gold": item.gold,
            "gold_evidence": content["gold_evidence"], "gold_claim": item.gold_claim, "source": item.source,
            "span": content["span"], "item_version": item.version, ADJUDICATED: finals.get(item.item_id),
        }
        empty = {"annotator": "", "label": None, "selected_evidence": [], "not_claim": None, "comment": "", "labelled_at": None}
        for label in sorted(by_item.get(item.item_id, []), key=lambda lb: lb.annotator) or [None]:
            row = dict(base, **empty) if label is None else dict(
                base, annotator=label.annotator, label=label.label, selected_evidence=list(label.evidence),
                not_claim=label.not_claim, comment=label.comment, labelled_at=label.created_at)
            rows.append({k: row[k] for k in EXPORT_COLUMNS})
    return rows


def write_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def write_csv(rows: list[dict]) -> str:
    """Lists as JSON text; None as an empty cell; booleans as true/false (read back by read_bytes)."""
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(EXPORT_COLUMNS))  # RFC 4180 \r\n: a lone \r in a cell gets quoted
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(k, v) for k, v in row.items()})
    return out.getvalue()


def _csv_cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column in _JSON_COLUMNS:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return _csv_text(str(value))


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): an annotator's
# comment "=HYPERLINK(...)" must open as text. Such a cell is written with a leading apostrophe (what
# spreadsheets themselves use to mean "text"), and so is a cell that already starts with one, so that
# reading strips exactly one apostrophe and every text comes back as it was.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def _csv_text(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _uncsv_text(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith(_FORMULA_START):
        return value[1:]
    return value
