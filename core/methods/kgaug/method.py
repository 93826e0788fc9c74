"""Chat methods `kgaug` (Triton) and `kgaug-c` (Triton-C): knowledge-graph triples in the prompt.

respond(): (Triton-C: rewrite the dialogue) -> link the query's entities -> gather candidate
triples -> rank with the relevance model -> the top 5 go into the paper's Table 6
knowledge-enhanced prompt. The triples are the reply's evidence; the trace records every stage
(rewrite, linked entities, candidates, ranking) for the Chat page, which draws them as a graph.
"""

from __future__ import annotations

from core.dialogue import ASSISTANT, TRACE_KG, Dialogue, Reply, Trace, TraceNode, Turn
from core.llm.base import Message
from core.llm.prompts import render_prompt
from core.methods.kgaug.config import KGAugConfig
from core.methods.kgaug.pipeline import KGPipeline, KGRetrieval, Knowledge, load_knowledge, make_ranker
from core.methods.kgaug.rewrite import LLMRewriter
from core.methods.kgaug.triples import as_prompt_line
from core.methods.method import Method, Stopwatch, prompt_record, recent_turns


def context_pairs(turns: list[Turn]) -> list[tuple[str, str]]:
    return [("assistant" if t.role == ASSISTANT else "user", t.text) for t in turns]


def dialogue_lines(context: list[tuple[str, str]]) -> str:
    """The paper's dialogue context: one line per turn, user = Speaker A, assistant = Speaker B."""
    return "\n".join(f"Speaker {'A' if role == 'user' else 'B'}: {text}" for role, text in context) or "(start of the dialogue)"


def knowledge_lines(retrieval: KGRetrieval) -> str:
    return "\n".join(as_prompt_line(r.triple) for r in retrieval.ranked) or "(no knowledge found)"


class KGAugMethod(Method):
    name = "kgaug"
    label = "Triton: KG triples (OpenDialKG)"
    description = ("Links the query's entities to the OpenDialKG knowledge graph, ranks their triples with the trained "
                   "relevance cross-encoder and answers with the top 5 in the prompt (Table 6).")
    rewrite_default = "none"

    def __init__(self, tools, config: KGAugConfig | None = None) -> None:
        super().__init__(tools, config)
        self._pipeline: KGPipeline | None = None
        self.knowledge: Knowledge | None = None

    @classmethod
    def default_config(cls) -> KGAugConfig:
        return KGAugConfig(rewrite=cls.rewrite_default)

    # -- the pipeline, built on first use (loads the graph, the linker and the ranker) -----------
    def rewrite_mode(self) -> str:
        mode = self.config.rewrite
        if mode == "auto":
            return "llm" if self.tools.strong else "symbolic"
        return mode

    def pipeline(self) -> KGPipeline:
        if self._pipeline is None:
            cfg = self.config
            if self.knowledge is None:
                self.knowledge = load_knowledge(cfg.sources, cfg.linker, cfg.cache_dir, self.tools.spacy_model)
            ranker = make_ranker(cfg.ranker, self.tools.embedder, cfg.relevance_model, cfg.quantize, cfg.triton_model)
            mode = self.rewrite_mode()
            rewriter = None
            if mode == "symbolic":
                rewriter = self.knowledge.symbolic_rewriter()
            elif mode == "llm":
                rewriter = LLMRewriter(self.tools.llm, self.knowledge.symbolic_rewriter())
            self._pipeline = KGPipeline(self.knowledge, ranker, cfg.candidates, rewriter)
        return self._pipeline

    def retrieve(self, dialogue: Dialogue, query: str, k: int):
        pipeline = self.pipeline()
        context = context_pairs(recent_turns(dialogue, self.config.history_turns))
        return pipeline.run(context, query, k).evidence(pipeline.knowledge.kg)

    def respond(self, dialogue: Dialogue, query: str) -> Reply:
        cfg, gen = self.config, self.config.generation
        watch = Stopwatch()
        calls0 = self.tools.llm.calls
        with watch("load"):
            pipeline = self.pipeline()
        context = context_pairs(recent_turns(dialogue, cfg.history_turns))
        retrieval = pipeline.run(context, query, cfg.top_k)
        for stage, seconds in retrieval.timings.items():
            watch.timings[stage] = seconds
        with watch("build_prompt"):
            rewritten = retrieval.rewrite is not None and retrieval.rewrite.method == "llm"
            shown_context = list(zip([r for r, _ in context], retrieval.rewrite.context)) if rewritten else context
            prompt = render_prompt("kgaug_response", knowledge=knowledge_lines(retrieval),
                                   dialogue=dialogue_lines(shown_context), query=retrieval.used_query)
            messages = [Message("user", prompt)]
        text = self._generate(messages, watch, gen.temperature, gen.max_tokens)
        trace = Trace(TRACE_KG, nodes=trace_nodes(retrieval), prompt=prompt_record(messages))
        return self._reply(text, watch, calls0, messages, retrieval.evidence(pipeline.knowledge.kg), trace)


class KGAugCMethod(KGAugMethod):
    name = "kgaug-c"
    label = "Triton-C: rewrite + KG triples"
    description = ("Triton after a coreference rewrite of the dialogue: the paper's Table 6 rewrite prompt with a "
                   "strong LLM, a symbolic pronoun rewrite with a weak one (the reply's trace says which ran).")
    rewrite_default = "auto"


def trace_nodes(r: KGRetrieval) -> tuple[TraceNode, ...]:
    """One node per stage, as data: the Chat page draws the graph and the tables from them."""
    nodes = []
    if r.rewrite is not None:
        nodes.append(TraceNode("rewrite", f"Rewrite ({r.rewrite.method})", detail={
            "method": r.rewrite.method, "query": r.query, "rewritten": r.used_query,
            "replaced": [list(p) for p in r.rewrite.replaced], "reasoning": r.rewrite.reasoning}))
    nodes.append(TraceNode("link", f"Linked {len(r.linked)} entit{'y' if len(r.linked) == 1 else 'ies'}", detail={
        "entities": [{"name": e.name, "mention": e.mention, "method": e.method, "score": e.score,
                      "duplicates": len(e.variants)} for e in r.linked]}))
    hops = {h: sum(c.hop == h for c in r.candidates) for h in (1, 2)}
    nodes.append(TraceNode("candidates", f"{len(r.candidates)} candidate triples", parent="link",
                           detail={"count": len(r.candidates), "one_hop": hops[1], "two_hop": hops[2]}))
    nodes.append(TraceNode("rank", f"Top {len(r.ranked)} by {r.ranker}", parent="candidates", chosen=True, detail={
        "ranker": r.ranker, "note": r.note,
        "triples": [{"head": x.triple.head, "relation": x.triple.relation, "tail": x.triple.tail,
                     "score": round(x.score, 4)} for x in r.ranked]}))
    return tuple(nodes)
