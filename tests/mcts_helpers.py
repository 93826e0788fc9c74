"""A tiny GenericsKB-format file and KB for the MCTS tests (hashing embedder, real spaCy)."""

from __future__ import annotations

from pathlib import Path

ROWS = [
    ("dog", "Dogs are loyal animals.", "1.0"),
    ("dog", "Dogs like to run in the park.", "0.9"),
    ("dog", "A dog needs a walk every day.", "0.9"),
    ("puppy", "Puppies are young dogs.", "1.0"),
    ("leash", "A leash keeps a dog close to its owner.", "0.8"),
    ("park", "Parks have trees and grass.", "1.0"),
    ("park", "People walk in the park on sunny days.", "0.8"),
    ("tree", "Trees produce oxygen.", "1.0"),
    ("grass", "Grass grows in the spring.", "0.9"),
    ("cat", "Cats are independent animals.", "1.0"),
    ("cat", "Cats sleep most of the day.", "0.9"),
    ("animal", "Animals need food and water.", "1.0"),
    ("food", "Food gives energy to the body.", "0.9"),
    ("water", "Water is a liquid.", "1.0"),
    ("energy", "Energy is needed for exercise.", "0.8"),
    ("exercise", "Exercise makes people healthy.", "0.9"),
    ("owner", "An owner feeds a pet.", "0.8"),
    ("pet", "A pet isa animal.", "1.0"),
    ("bird", "Birds have (part) wings.", "1.0"),
    ("wing", "Wings help birds fly.", "0.9"),
    ("taxi", "A taxi driver drives a car for money.", "0.9"),
    ("strike", "A strike happens when workers stop working.", "0.9"),
    ("worker", "Workers want fair pay.", "0.8"),
    ("government", "The government sets the price of fuel.", "0.7"),
    ("gasoline", "Gasoline is a fuel for cars.", "1.0"),
    ("car", "Cars need fuel to run.", "0.9"),
    ("price", "A high price makes people angry.", "0.7"),
    ("money", "Money buys food.", "0.8"),
    ("rain", "Rain makes the grass wet.", "0.9"),
    ("umbrella", "An umbrella keeps people dry in the rain.", "0.9"),
]


def write_kb(folder: Path, rows=ROWS, newline: str = "\r\n") -> Path:
    path = folder / "kb.txt"
    path.write_bytes(newline.join("\t".join(r) for r in rows).encode("utf-8") + newline.encode())
    return path


def tiny_kb(folder: Path, concepts_per_group: int = 4):
    from core.methods.mcts.config import KBSettings
    from core.methods.mcts.kb import load_or_build
    from core.resources import HashingEmbedder

    settings = KBSettings(concepts_per_group=concepts_per_group, cache_dir=str(folder / "cache"))
    return load_or_build(write_kb(folder), HashingEmbedder(128), settings), settings
