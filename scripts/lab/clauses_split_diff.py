"""One-off check that the split of clauses.py (issue 29) changes no triple: parse every turn once, run
the old Clauses (a copy of the file before the split, given as the first argument) and the new one on
the same parse, and count the turns whose triples differ.

Usage: .venv/bin/python scripts/lab/clauses_split_diff.py OLD_CLAUSES.py DATA.json [DATA.json ...]
"""
import sys, json, importlib.util
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from core.resources import load_spacy
from core.methods.dsmart.fragment import FragmentBuilder
from core.methods.dsmart.extract import plain
from core.methods.dsmart.clauses import Clauses as New
spec = importlib.util.spec_from_file_location("old_clauses", sys.argv[1]); old = importlib.util.module_from_spec(spec); spec.loader.exec_module(old)
Old = old.Clauses
nlp = load_spacy()
turns = []
for f in sys.argv[2:]:
    for it in json.load(open(f)):
        if it['question_type'] != 'knowledge-update': continue
        for s in it['haystack_sessions']:
            for t in s: turns.append((t['role'], plain(t['content'])))
turns = list(dict.fromkeys(turns))
diff = 0; total = 0
for (role, _), doc in zip(turns, nlp.pipe([t for _, t in turns], batch_size=64)):
    outs = []
    for C in (Old, New):
        b = FragmentBuilder(); C(b, role).sentences(doc); outs.append(set(b.graph))
    total += len(outs[1])
    if outs[0] != outs[1]:
        diff += 1
        if diff <= 5: print('DIFF', doc.text[:100], outs[0] ^ outs[1])
print(f"{len(turns)} distinct turns, {total} triples (new), {diff} turns differ")
