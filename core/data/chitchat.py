"""Open-domain dialogues used by the MCTS knowledge-retrieval paper: DailyDialog (one dialogue a
line, utterances separated by `__eou__`, tokenised text) and EmpatheticDialogues (our re-assembled
JSON Lines: `{"conv_id", "emotion", "situation", "turns": [{"utterance_idx", "speaker_idx",
"utterance"}]}`). Any file of either format, by path; the format is recognised from the content.

DailyDialog's tokenisation is undone (" ’ " -> "'", no space before punctuation), as its SOURCE.md
suggests before text reaches an LLM or a metric. Speakers are "A" and "B" in DailyDialog, and
"Speaker" (who wrote the situation) and "Listener" in EmpatheticDialogues.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from core.dialogue import USER, Dialogue, Turn


class DialogueFormatError(ValueError):
    """The file is neither DailyDialog nor EmpatheticDialogues format."""


@dataclass(frozen=True)
class ChitChat:
    id: str
    utterances: tuple[str, ...]
    speakers: tuple[str, ...]
    meta: dict = field(default_factory=dict)  # emotion, situation (EmpatheticDialogues)

    def dialogue(self, upto: int | None = None) -> Dialogue:
        n = len(self.utterances) if upto is None else upto
        return Dialogue.from_turns([Turn(USER, u, f"{self.id}:{i}", 0, s)
                                    for i, (u, s) in enumerate(zip(self.utterances[:n], self.speakers[:n]))], id=self.id)

    def lines(self, upto: int | None = None) -> list[str]:
        n = len(self.utterances) if upto is None else upto
        return [f"{s}: {u}" for s, u in zip(self.speakers[:n], self.utterances[:n])]


_SPACE_BEFORE = re.compile(r"\s+([.,!?;:%)\]])")


def detokenise(text: str) -> str:
    text = text.replace(" ’ ", "'").replace("’", "'").replace(" ' ", "'")
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = re.sub(r"([(\[$])\s+", r"\1", text)
    return " ".join(text.split())


def load_dailydialog(path: str | Path) -> list[ChitChat]:
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if "__eou__" not in line:
            raise DialogueFormatError(f"{Path(path).name} line {number}: no __eou__ separator (not DailyDialog format)")
        utts = tuple(detokenise(u) for u in line.split("__eou__") if u.strip())
        out.append(ChitChat(f"dd{number}", utts, tuple("AB"[i % 2] for i in range(len(utts)))))
    return out


def load_empathetic(path: str | Path) -> list[ChitChat]:
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            turns = sorted(row["turns"], key=lambda t: int(t["utterance_idx"]))
            utts = tuple(" ".join(str(t["utterance"]).split()) for t in turns)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            raise DialogueFormatError(f"{Path(path).name} line {number}: not EmpatheticDialogues JSON ({err})") from None
        speakers = tuple("Speaker" if int(t["utterance_idx"]) % 2 else "Listener" for t in turns)
        out.append(ChitChat(str(row.get("conv_id", f"ed{number}")), utts, speakers,
                            {"emotion": row.get("emotion", ""), "situation": row.get("situation", "")}))
    return out


def load_chitchat(path: str | Path) -> list[ChitChat]:
    """DailyDialog or EmpatheticDialogues, recognised by the first non-empty line."""
    path = Path(path)
    with path.open(encoding="utf-8") as f:
        first = next((line for line in f if line.strip()), "")
    if first.lstrip().startswith("{"):
        return load_empathetic(path)
    if "__eou__" in first:
        return load_dailydialog(path)
    raise DialogueFormatError(f"{path.name}: neither DailyDialog (__eou__-separated lines) nor EmpatheticDialogues (JSON lines)")
