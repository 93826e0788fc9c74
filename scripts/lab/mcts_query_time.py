"""Retrieval time of mcts-no-reasoner on the built GenericsKB KB: 10 DailyDialog test contexts (4 turns), median / p95."""
import json, os, sys, time
import numpy as np
sys.path.insert(0, '.')
from core.benchmarks.knowledge_retrieval import contexts
from core.methods.mcts.config import MCTSConfig
from core.methods.mcts.kb import load_or_build
from core.methods.mcts.retriever import KnowledgeSearch
from core.resources import load_embedder
emb = load_embedder()
t0 = time.perf_counter(); kb = load_or_build('../shared/data/genericskb/GenericsKB.txt', emb); load_s = time.perf_counter() - t0
items = contexts('../shared/data/dailydialog/dialogues_test.txt', 10, 4)
rows = {}
for name, cfg in (("mcts-no-reasoner", MCTSConfig(use_reasoner=False)),):
    s = KnowledgeSearch(kb, emb, cfg); s.run(items[0]["context"])
    ts = []
    for it in items:
        t1 = time.perf_counter(); s.run(it["context"]); ts.append(time.perf_counter() - t1)
    rows[name] = {"median_s": round(float(np.median(ts)), 3), "p95_s": round(float(np.percentile(ts, 95)), 3), "n": len(ts)}
out = {"date": time.strftime("%Y-%m-%dT%H:%M"), "command": "python scripts/lab/mcts_query_time.py (10 DailyDialog test contexts, 4 turns)", "kb_sentences": len(kb), "kb_concepts": len(kb.concepts),
       "load_s": round(load_s, 2), "query": rows, "load_average_1m": os.getloadavg()[0], "machine": "2 CPU cores shared, no GPU"}
print(json.dumps(out, indent=1)); open('results/mcts-kb-50k-query.json', 'w').write(json.dumps(out, indent=1) + "\n")
