"""LoCoMo and LongMemEval loaders: quirks on hand-made files, counts on the shared files."""

from __future__ import annotations

import json

import pytest

from core.data.locomo import load_locomo, parse_evidence
from core.data.longmemeval import load_longmemeval, parse_date, session_of
from core.dialogue import ASSISTANT, USER


def tiny_locomo(tmp_path):
    conv = {
        "speaker_a": "Ann", "speaker_b": "Bob",
        "session_1_date_time": "1:00 pm on 1 May, 2023", "session_2_date_time": "2:00 pm on 9 May, 2023",
        "session_3_date_time": "a date without a session (conv-26 has such keys)",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bob!"},
                      {"speaker": "Bob", "dia_id": "D1:2", "text": "Look at this.", "blip_caption": "a photo of a cat"}],
        "session_2": [{"speaker": "Bob", "dia_id": "D2:1", "text": "I moved."},
                      {"speaker": "Ann", "dia_id": "D2:2", "text": "Where to?"}],
    }
    qa = [{"question": "Q1", "answer": 2022, "evidence": ["D1:2; D2:1"], "category": 2},
          {"question": "Q2", "evidence": ["D:2:2", "D", "D7:1"], "category": 5, "adversarial_answer": "a dog"}]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "conv-x", "conversation": conv, "qa": qa}]))
    return path


def test_locomo_quirks(tmp_path):
    (conv,) = load_locomo(tiny_locomo(tmp_path))
    turns = conv.dialogue.turns()
    assert [t.turn_id for t in turns] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert len(conv.dialogue.sessions) == 2  # the extra date key makes no session
    assert [t.role for t in turns] == [USER, ASSISTANT, ASSISTANT, USER]  # speaker_a plays the user
    assert turns[1].text == "Look at this. [shares an image: a photo of a cat]"
    assert turns[2].date == "2:00 pm on 9 May, 2023" and turns[2].speaker == "Bob"
    q1, q2 = conv.questions
    assert q1.answer == "2022" and q1.evidence == ("D1:2", "D2:1") and q1.category_name == "temporal"
    assert q2.answer == "" and q2.adversarial_answer == "a dog"
    assert q2.evidence == ("D2:2",)  # "D:2:2" repaired, "D" and the unknown "D7:1" dropped
    assert q2.raw_evidence == ("D:2:2", "D", "D7:1")


def test_parse_evidence_space_separated():
    assert parse_evidence(["D1:1 D1:2", "D1:2"], {"D1:1", "D1:2"}) == ("D1:1", "D1:2")


def test_locomo_rejects_other_layouts(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError):
        load_locomo(bad)


def test_longmemeval_orders_sessions_and_flags_evidence(tmp_path):
    raw = [{
        "question_id": "q1_abs", "question_type": "multi-session", "question": "How many?", "answer": 3,
        "question_date": "2023/05/30 (Tue) 23:40",
        "haystack_session_ids": ["late", "early"],
        "haystack_dates": ["2023/05/21 (Sun) 19:50", "2023/05/01 (Mon) 08:00"],
        "haystack_sessions": [[{"role": "user", "content": "B", "has_answer": True}, {"role": "assistant", "content": "ok"}],
                              [{"role": "user", "content": "A"}]],
        "answer_session_ids": ["late"],
    }]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(raw))
    (inst,) = load_longmemeval(path)
    assert inst.session_ids == ("early", "late")
    assert [t.turn_id for t in inst.dialogue.turns()] == ["early:0", "late:0", "late:1"]
    assert inst.evidence_turn_ids == ("late:0",) and inst.answer == "3" and inst.abstention
    assert session_of("answer_530960c1:12") == "answer_530960c1"
    assert parse_date("2023/05/30 (Tue) 23:40").hour == 23 and parse_date("garbage") is None


def test_locomo_dev_file(shared_data):
    path = shared_data / "locomo" / "locomo_dev.json"
    if not path.exists():
        pytest.skip(f"{path} not present")
    convs = load_locomo(path)
    assert len(convs) >= 1
    for conv in convs:
        known = conv.turn_ids()
        assert all(e in known for q in conv.questions for e in q.evidence)
        assert all(q.category in (1, 2, 3, 4, 5) for q in conv.questions)
    by_id = {c.sample_id: c for c in convs}
    if "conv-26" in by_id:
        conv = by_id["conv-26"]
        assert len(conv.dialogue.sessions) == 19  # 35 date keys, 19 sessions
        (q,) = [q for q in conv.questions if q.raw_evidence == ("D8:6; D9:17",)]
        assert q.evidence == ("D8:6", "D9:17")


def test_longmemeval_files(shared_data):
    folder = shared_data / "longmemeval"
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        pytest.skip(f"no LongMemEval files in {folder}")
    for path in files:
        insts = load_longmemeval(path)
        assert insts
        for inst in insts[:50]:
            turn_ids = {t.turn_id for t in inst.dialogue.turns()}
            assert set(inst.evidence_turn_ids) <= turn_ids
            assert set(inst.answer_session_ids) <= set(inst.session_ids)
            dates = [parse_date(s.date) for s in inst.dialogue.sessions]
            assert all(a <= b for a, b in zip(dates, dates[1:]) if a and b)
