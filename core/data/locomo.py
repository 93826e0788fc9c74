"""LoCoMo loader (Maharana et al., 2024): any file in the `locomo10.json` layout, by path.

Quirks handled here (see ../shared/data/locomo/SOURCE.md):
- categories are numbered 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial,
  which is not the order of the paper's text;
- category-5 items carry `adversarial_answer` (two carry `answer` too); some answers are ints;
- sessions are iterated over the `session_N` lists, never the date keys (conv-26 has extra dates);
- evidence ids can be malformed ("D8:6; D9:17", "D:11:26", "D", space-separated lists) or point
  at turns that do not exist: we split, repair the "D:11:26" form, and keep only ids of real turns
  (the raw strings stay in `raw_evidence`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.data.jsonfile import load_json_layout
from core.dialogue import ASSISTANT, USER, Dialogue, Turn

CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")


@dataclass(frozen=True)
class LocomoQuestion:
    qid: str  # "<sample_id>#<index in qa>"
    question: str
    answer: str  # "" when only an adversarial answer exists
    category: int
    evidence: tuple[str, ...]  # valid dia_ids of turns in the conversation
    raw_evidence: tuple[str, ...] = ()
    adversarial_answer: str = ""

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES.get(self.category, f"category-{self.category}")


@dataclass(frozen=True)
class LocomoConversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    dialogue: Dialogue
    questions: tuple[LocomoQuestion, ...]

    def turn_ids(self) -> set[str]:
        return {t.turn_id for t in self.dialogue.turns()}


def turn_text(raw: dict) -> str:
    """The turn's words; a shared image (not released) is stood in for by its BLIP caption."""
    text = str(raw.get("text", "")).strip()
    caption = str(raw.get("blip_caption", "") or "").strip()
    return f"{text} [shares an image: {caption}]".strip() if caption else text


def parse_evidence(raw: list, known: set[str]) -> tuple[str, ...]:
    """Valid, known dia_ids in order, without duplicates."""
    out: list[str] = []
    for entry in raw or []:
        for token in re.split(r"[;,\s]+", str(entry)):
            token = token.strip()
            repaired = re.sub(r"^D:(\d+):(\d+)$", r"D\1:\2", token)  # "D:11:26" -> "D11:26"
            if _DIA_ID.match(repaired) and repaired in known and repaired not in out:
                out.append(repaired)
    return tuple(out)


def _dialogue(sample_id: str, conv: dict) -> Dialogue:
    speaker_a = conv.get("speaker_a", "")
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_KEY.match(k)))
    dialogue = Dialogue(id=sample_id)
    for n in sessions:
        date = str(conv.get(f"session_{n}_date_time", ""))
        for raw in conv[f"session_{n}"]:
            speaker = str(raw.get("speaker", ""))
            # Two people talk; the first speaker plays "user" so rounds pair a turn with its reply.
            role = USER if speaker == speaker_a else ASSISTANT
            dialogue.add(Turn(role, turn_text(raw), str(raw["dia_id"]), n, speaker, date))
    return dialogue


def _question(sample_id: str, i: int, qa: dict, known: set[str]) -> LocomoQuestion:
    raw = tuple(str(e) for e in qa.get("evidence", []) or [])
    answer = qa.get("answer", "")
    return LocomoQuestion(
        qid=f"{sample_id}#{i}",
        question=str(qa["question"]),
        answer="" if answer is None else str(answer),
        category=int(qa["category"]),
        evidence=parse_evidence(list(raw), known),
        raw_evidence=raw,
        adversarial_answer=str(qa.get("adversarial_answer", "") or ""),
    )


def parse_locomo(data: list) -> list[LocomoConversation]:
    if not isinstance(data, list):
        raise ValueError("a LoCoMo file is a JSON list of conversations")
    out = []
    for sample in data:
        sample_id = str(sample["sample_id"])
        conv = sample["conversation"]
        dialogue = _dialogue(sample_id, conv)
        known = {t.turn_id for t in dialogue.turns()}
        questions = tuple(_question(sample_id, i, qa, known) for i, qa in enumerate(sample.get("qa", [])))
        out.append(LocomoConversation(sample_id, conv.get("speaker_a", ""), conv.get("speaker_b", ""), dialogue, questions))
    return out


def load_locomo(path: str | Path) -> list[LocomoConversation]:
    """Every conversation of a LoCoMo file, in file order."""
    return load_json_layout(path, parse_locomo, "LoCoMo")
