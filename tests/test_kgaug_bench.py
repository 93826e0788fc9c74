"""The opendialkg-triples and opendialkg-response benchmarks on a tiny file, figures by hand."""

from __future__ import annotations

import json

import pytest

from core.benchmarks.runner import BenchContext, load_benchmark, run_benchmark
from core.llm.fake import ScriptedLLM
from core.methods import Toolkit
from core.resources import HashingEmbedder
from tests.kgaug_helpers import dialogue_row, write_csv

WALKS = [
    # (query, gold walk, response)
    ("Could you recommend films directed by Sidney Lumet?", [("Sidney Lumet", "~directed_by", "Find Me Guilty")],
     "That is Sidney Lumet."),
    ("Who starred in Fast Five?", [("Fast Five", "starred_actors", "Vin Diesel")], "That is Vin Diesel."),
    ("Hello there", [("Drama", "~has_genre", "12 Angry Men")], "That is Drama."),
]


@pytest.fixture()
def data(tmp_path):
    other = [("Find Me Guilty", "starred_actors", "Vin Diesel"), ("Fast Five", "has_genre", "Action Film"),
             ("12 Angry Men", "directed_by", "Sidney Lumet")]
    rows = [dialogue_row([("user", q, None), ("assistant", r, walk)]) for q, walk, r in WALKS]
    rows.append(dialogue_row([("user", "Tell me more", None), ("assistant", "Sure.", other)]))  # adds facts to the graph
    rows.append(["{broken", "{}", "{}"])
    path = tmp_path / "tiny.csv"
    write_csv(path, rows)
    return path


def context(tmp_path, data, name, methods, **options):
    return BenchContext(name=name, data=data, out=tmp_path / name, methods=methods, limit=None, seed=0,
                        options={"split": "all", "no_shared_kg": True, "kg_cache": str(tmp_path / "kgcache"), **options},
                        progress=False)


def test_triples_benchmark_figures_by_hand(tmp_path, data):
    summary = run_benchmark(context(tmp_path, data, "opendialkg-triples", ["bm25"]))
    r = summary["results"]["bm25"]
    # turn 1: "Sidney Lumet" links, BM25 ranks (Find Me Guilty, directed_by, Sidney Lumet) first
    # ("directed"); turn 2: "Fast Five" links, the starred_actors triple first ("starred"); turns 3
    # ("Hello there") and 4 ("Tell me more") link nothing: no candidates
    items = [json.loads(line) for line in (tmp_path / "opendialkg-triples" / "items.jsonl").read_text().splitlines()]
    assert [it["methods"]["bm25"]["first_gold_rank"] for it in items] == [1, 1, None, None]
    assert r["turns"] == 4 and r["turns_with_entity"] == 2
    assert (r["recall@1"], r["recall@5"], r["mrr"], r["candidate_ceiling"]) == (0.5, 0.5, 0.5, 0.5)
    # linking: {Sidney Lumet} of 2 gold entities, {Fast Five} of 2, nothing of 2, nothing of 6
    assert r["linking_precision"] == 1.0 and r["linking_recall"] == pytest.approx(2 / 12)
    assert summary["data_rows"]["skipped_rows"] == 1
    assert summary["settings"]["kg"]["files"] == ["tiny.csv"]
    assert summary["timings"]["bm25"]["rank"]["n"] == 2


def test_response_benchmark_lexical_and_entity_f1(tmp_path, data):
    llm = ScriptedLLM(["That is Sidney Lumet."])
    ctx = context(tmp_path, data, "opendialkg-response", ["base", "bm25"], max_tokens=20, temperature=0.0)
    ctx.make_tools = lambda: Toolkit(llm=llm, embedder=HashingEmbedder())
    summary = run_benchmark(ctx)
    base, bm25 = summary["results"]["base"], summary["results"]["bm25"]
    # identical replies: the base and bm25 rows differ only in their prompts
    assert base["rouge_l"] == bm25["rouge_l"] and base["turns"] == 4
    # ROUGE-L: turn 1 identical (1.0); turns 2 and 3 share "that is" (of 4 and 4 words, of 4 and 3);
    # turn 4 ("Sure.") shares nothing
    assert base["rouge_l"] == pytest.approx((1.0 + 0.5 + 2 * (2 / 4) * (2 / 3) / (2 / 4 + 2 / 3) + 0.0) / 4)
    # entity F1 over turns with an entity on either side: 1 (Lumet = Lumet), 0 (vs Vin Diesel),
    # 0 (vs Drama), 0 (Lumet vs none)
    assert base["entity_f1"] == pytest.approx(1 / 4) and base["entity_turns"] == 4
    prompts = [m[-1].content for m in llm.requests]
    assert sum("Knowledge: (no knowledge given)" in p for p in prompts) == 4
    assert sum(p.startswith("Knowledge: (Find Me Guilty, directed_by, Sidney Lumet)\n") for p in prompts) == 1
    assert summary["settings"]["triton_c_rewrite"] == "symbolic"


def test_response_factscore_flag_fails_clearly_without_the_module(tmp_path, data, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_factscore(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "core.metrics" and fromlist and "factscore" in fromlist:
            raise ImportError("no factscore")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_factscore)
    ctx = context(tmp_path, data, "opendialkg-response", ["base"], factscore=True)
    ctx.make_tools = lambda: pytest.fail("must fail before loading any model")
    with pytest.raises(RuntimeError, match="needs core/metrics/factscore.py"):
        run_benchmark(ctx)


def test_response_factscore_verifier_that_cannot_run_fails_before_any_generation(tmp_path, data):
    llm = ScriptedLLM(["That is Sidney Lumet."])
    ctx = context(tmp_path, data, "opendialkg-response", ["base", "bm25"], factscore=True, verifier="judge")
    ctx.make_tools = lambda: Toolkit(llm=llm, embedder=HashingEmbedder())
    with pytest.raises(ValueError, match="judge verifier needs an OpenAI-compatible endpoint"):
        run_benchmark(ctx)
    assert llm.requests == []  # no response was generated and lost


def test_response_factscore_with_the_llm_verifier(tmp_path, data):
    llm = ScriptedLLM(["That is Sidney Lumet."])
    ctx = context(tmp_path, data, "opendialkg-response", ["base", "bm25"], factscore=True, verifier="llm",
                  max_tokens=20, temperature=0.0)
    ctx.make_tools = lambda: Toolkit(llm=llm, embedder=HashingEmbedder())
    summary = run_benchmark(ctx)
    for m in ("base", "bm25"):
        row = summary["results"][m]
        assert row["facts"] >= 1 and 0.0 <= row["factscore"] <= 1.0 and 0.0 <= row["neip"] <= 1.0
        assert row["factscore_ci95"][0] <= row["factscore"] <= row["factscore_ci95"][1]


def test_benchmarks_are_registered_with_their_options():
    from core.cli import build_parser

    assert load_benchmark("opendialkg-triples").DEFAULT_METHODS == "bm25,kaping,triton,triton-c"
    args = build_parser().parse_args(["bench", "opendialkg-triples", "--data", "x.csv", "--out", "o", "--split", "all"])
    assert args.split == "all"
    args = build_parser().parse_args(["bench", "opendialkg-response", "--data", "x.csv", "--out", "o", "--factscore"])
    assert args.factscore is True
