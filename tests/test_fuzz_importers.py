"""Property-based fuzzing of every importer: the benchmark loaders (core/data), the D-SMART
memory's Turtle import and its saved-state reader. Malformed input raises the documented
ValueError (with a message) and nothing else; well-formed input round-trips."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.data.locomo import load_locomo
from core.data.longmemeval import load_longmemeval
from core.data.mtbench import load_mtbench
from core.methods.dsmart.memory import DynamicStructuredMemory
from core.methods.dsmart.dsm_method import pack_state, split_state
from tests.fuzz_helpers import json_values


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz-import")


def _write(folder, name: str, data) -> str:
    path = folder / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _loads_or_refuses(loader, path):
    """The loader's result, or None when it refused the file with a ValueError that says why."""
    try:
        return loader(path)
    except ValueError as err:
        assert str(err)
        return None


# -- benchmark loaders: any JSON, any bytes, and valid documents with one part replaced --------------
@given(json_values())
def test_loaders_refuse_any_json_with_value_error(scratch, data):
    for name, loader in (("l.json", load_locomo), ("m.json", load_longmemeval)):
        _loads_or_refuses(loader, _write(scratch, name, data))


@given(st.binary(max_size=200))
def test_loaders_refuse_any_bytes_with_value_error(scratch, data):
    for name, loader in (("l.json", load_locomo), ("m.json", load_longmemeval), ("t.jsonl", load_mtbench)):
        _loads_or_refuses(loader, _write(scratch, name, data))


@given(st.lists(st.one_of(json_values(), st.text(max_size=40)), max_size=5))
def test_mtbench_refuses_any_lines_with_value_error(scratch, lines):
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    _loads_or_refuses(load_mtbench, _write(scratch, "t.jsonl", text))


def _locomo_doc():
    turn = {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi", "blip_caption": "a cat"}
    conv = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1_date_time": "1 May", "session_1": [turn]}
    qa = [{"question": "Q", "answer": "A", "evidence": ["D1:1"], "category": 1}]
    return [{"sample_id": "c", "conversation": conv, "qa": qa}]


def _longmemeval_doc():
    return [{"question_id": "q", "question_type": "t", "question": "Q", "answer": "A", "question_date": "2023/05/30 (Tue) 23:40",
             "haystack_session_ids": ["s"], "haystack_dates": ["2023/05/30 (Tue) 23:40"], "answer_session_ids": ["s"],
             "haystack_sessions": [[{"role": "user", "content": "Hi", "has_answer": True}]]}]


def _paths(doc, prefix=()):
    """Every path to a value inside a JSON document."""
    yield prefix
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in children:
        yield from _paths(value, prefix + (key,))


def _replace(doc, path, value):
    if not path:
        return value
    copy = json.loads(json.dumps(doc))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copy


@st.composite
def mutated(draw, make):
    doc = make()
    path = draw(st.sampled_from(list(_paths(doc))))
    return _replace(doc, path, draw(json_values(max_leaves=4)))


@given(mutated(_locomo_doc))
def test_locomo_with_one_part_replaced_loads_or_says_why(scratch, doc):
    conversations = _loads_or_refuses(load_locomo, _write(scratch, "l.json", doc))
    for conv in conversations or []:
        known = conv.turn_ids()
        assert all(set(q.evidence) <= known for q in conv.questions)  # evidence only names real turns


@given(mutated(_longmemeval_doc))
def test_longmemeval_with_one_part_replaced_loads_or_says_why(scratch, doc):
    instances = _loads_or_refuses(load_longmemeval, _write(scratch, "m.json", doc))
    for inst in instances or []:
        assert set(inst.evidence_turn_ids) <= {t.turn_id for t in inst.dialogue.turns()}
        assert len(inst.session_ids) == len(inst.dialogue.sessions) or not inst.dialogue.turns()


def test_the_unmutated_documents_load():
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    assert load_locomo(_write(folder, "l.json", _locomo_doc()))[0].questions[0].evidence == ("D1:1",)
    assert load_longmemeval(_write(folder, "m.json", _longmemeval_doc()))[0].evidence_turn_ids == ("s:0",)


# -- the D-SMART memory: Turtle import and saved state -----------------------------------------------
TURTLE_BITS = ["@prefix ex: <http://example.org/> .", "ex:a ex:b ex:c .", "ex:a ex:n 3 .", '"x"', "<http://e/x>",
               "ex:a", ";", ",", ".", "[", "]", "(", ")", "a", "_:b", '"""', "@base <x> .", "^^", "@en", "\n"]


@given(st.one_of(st.text(max_size=80), st.lists(st.sampled_from(TURTLE_BITS), max_size=12).map(" ".join)))
def test_turtle_import_merges_or_refuses_and_changes_nothing(text):
    memory = DynamicStructuredMemory(nlp=object())  # the import never extracts
    memory.import_turtle("@prefix ex: <http://example.org/> . ex:seed ex:p ex:o .")
    before, history = set(memory.graph), memory.history
    try:
        record = memory.import_turtle(text)
    except ValueError as err:
        assert str(err).startswith("not valid Turtle")
        assert set(memory.graph) == before and memory.history == history
        return
    assert set(record.added) <= set(memory.graph)
    assert set(memory.graph) <= before | set(record.added)


@given(st.one_of(st.binary(max_size=120), json_values().map(lambda v: json.dumps(v).encode()),
                 st.builds(lambda extra: json.dumps({"format": "dsm-memory/1", **extra}).encode(),
                           st.dictionaries(st.sampled_from(["records", "graph"]), json_values(max_leaves=4)))))
def test_saved_memory_reader_refuses_garbage_with_value_error(data):
    memory = DynamicStructuredMemory(nlp=object())
    try:
        memory.load(data)
    except ValueError as err:
        assert str(err)
        assert memory.history == () and len(memory.graph) == 0  # a refused load changes nothing
        return


@given(st.binary(max_size=60), st.text(max_size=20), st.binary(max_size=40))
def test_method_state_header_round_trips_or_refuses(prefix, pending, memory_bytes):
    assert split_state(pack_state(memory_bytes, pending)) == (pending, memory_bytes)
    try:
        split_state(prefix)
    except ValueError as err:
        assert str(err)
