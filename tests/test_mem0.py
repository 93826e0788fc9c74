"""`mem0`: the real mem0ai library as a method, with a scripted LLM (the extraction replies are
scripted; mem0's own pipeline parses, embeds, stores and searches them)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import textwrap
from pathlib import Path

import pytest

from core.dialogue import Dialogue, Turn
from core.llm.fake import ScriptedLLM
from core.methods import METHODS, Toolkit, create_method
from core.methods.mem0.config import Mem0Config

REPO = Path(__file__).resolve().parent.parent
FACTS = {"pizza": "User loves pizza", "Paris": "User lives in Paris", "violin": "User plays the violin",
         "Tokyo": "User moved to Tokyo", "dog": "User has a dog named Rex"}


def new_messages(messages) -> str:
    """The '## New Messages' section of mem0's extraction prompt ("" for other requests)."""
    user = messages[-1].content
    return user.split("## New Messages", 1)[1].split("\n## ", 1)[0] if "## New Messages" in user else ""


def extractor(bad: str = "not json at all"):
    """Reply to mem0's extraction with the facts named in the new messages; `bad` when none is."""

    def rule(messages):
        new = new_messages(messages)
        if not new:
            return "An answer."
        found = [{"id": str(i), "text": text} for i, (key, text) in enumerate(FACTS.items()) if key in new]
        return json.dumps({"memory": found}) if found else bad

    return rule


def method(hashing_embedder, rule=None, **config):
    tools = Toolkit(llm=ScriptedLLM(rule or extractor()), embedder=hashing_embedder)
    return create_method("mem0", tools, Mem0Config(**config) if config else None)


def talk(m, pairs, dialogue=None):
    d = dialogue or Dialogue()
    for user, reply in pairs:
        m.observe(d.add(Turn("user", user)))
        m.observe(d.add(Turn("assistant", reply)))
    m.wait()
    return d


def test_registered_and_pinned():
    from importlib.metadata import version

    assert METHODS["mem0"] == "core.methods.mem0.method:Mem0Method"
    assert version("mem0ai") == "2.2.1"
    assert "mem0ai==2.2.1" in (REPO / "requirements.txt").read_text()


def test_rounds_become_memories_with_events_scores_and_trace(hashing_embedder):
    m = method(hashing_embedder)
    d = talk(m, [("I love pizza", "Nice!"), ("I live in Paris", "Lovely city.")])
    assert [[e["event"] for e in r.events] for r in m.records] == [["ADD"], ["ADD"]]
    assert [r.turn_ids for r in m.records] == [("S0:0", "S0:1"), ("S0:2", "S0:3")]
    assert all(r.llm_calls == 1 and r.prompt_tokens > 0 for r in m.records)
    reply = m.respond(d, "Which city does the user live in, Paris?")
    assert reply.evidence and reply.evidence[0].text == "User lives in Paris"
    assert reply.evidence[0].kind == "memory" and 0 < reply.evidence[0].score <= 1
    labels = [n.label for n in reply.trace.nodes]
    assert "ADD: User loves pizza" in labels and "ADD: User lives in Paris" in labels
    assert any(n.id == "search" for n in reply.trace.nodes)
    assert "User lives in Paris" in reply.trace.prompt[-2]["content"]  # the memories reach the reply's prompt, before the message
    # the next reply's trace shows only the rounds added since
    talk(m, [("I play the violin", "Great.")], d)
    later = m.respond(d, "violin?")
    adds = [n.label for n in later.trace.nodes if n.label.startswith("ADD")]
    assert adds == ["ADD: User plays the violin"]


def test_a_memorys_relative_time_reaches_the_reply_anchored_to_its_rounds_day(hashing_embedder):
    said = {"dog": "User adopted a dog named Rex yesterday"}

    def rule(messages):
        return json.dumps({"memory": [{"id": "0", "text": said["dog"]}]}) if "dog" in new_messages(messages) else "Rex."

    for anchor, shown in ((True, "- User adopted a dog named Rex yesterday (7 May 2023)"),
                          (False, "- User adopted a dog named Rex yesterday\n")):
        m = method(hashing_embedder, rule, anchor_time=anchor)
        d = Dialogue()
        for role, text in (("user", "I adopted a dog yesterday"), ("assistant", "Congratulations!")):
            m.observe(d.add(Turn(role, text, date="8 May, 2023")))
        m.wait()
        assert shown in m.respond(d, "When did I adopt my dog?").trace.prompt[-2]["content"] + "\n"


@pytest.mark.parametrize("bad", ["not json at all", '["a list"]', '{"memory": ["a string, not an object"]}',
                                 '{"memory": "not a list"}'])
def test_malformed_extraction_is_counted_shown_and_never_a_crash(hashing_embedder, bad):
    m = method(hashing_embedder, extractor(bad))
    d = talk(m, [("I love pizza", "Nice!"), ("hmm", "ok"), ("so", "yes")])
    assert [r.invalid_json for r in m.records] == [0, 1, 1]
    assert m.stats()["invalid_json"] == 2 and m.stats()["memories_added"] == 1
    reply = m.respond(d, "pizza?")
    failed = [n for n in reply.trace.nodes if n.detail.get("event") == "INVALID"]
    assert len(failed) == 2 and all(n.label.startswith("extraction failed") for n in failed)


def test_a_prompt_over_the_window_is_not_sent_and_is_counted(hashing_embedder):
    class SmallWindow(ScriptedLLM):
        class options:  # noqa: N801 - like LlamaCppLLM.options
            n_ctx = 2048

    m = create_method("mem0", Toolkit(llm=SmallWindow(extractor()), embedder=hashing_embedder))
    talk(m, [("I love pizza", "Nice!")])
    (rec,) = m.records
    assert rec.too_long == 1 and rec.events == () and rec.llm_calls == 0
    assert "does not fit the model's 2048-token window" in rec.problems[0]


def test_one_conversation_never_sees_anothers_memories(hashing_embedder):
    alice, bob = method(hashing_embedder), method(hashing_embedder)
    da = talk(alice, [("I love pizza", "Nice!"), ("I live in Paris", "Lovely.")])
    db = talk(bob, [("I play the violin", "Great."), ("I have a dog", "Cute.")])
    for query in ["pizza", "Paris", "Where does the user live?", "What food does the user love?"]:
        assert not {e.text for e in bob.retrieve(db, query, 20)} & {"User loves pizza", "User lives in Paris"}
    for query in ["violin", "dog", "pet", "instrument"]:
        assert not {e.text for e in alice.retrieve(da, query, 20)} & {"User plays the violin", "User has a dog named Rex"}
    # and after a save and load, each state still holds only its own conversation
    restored = method(hashing_embedder)
    restored.load_state(bob.save_state(), bob.observed)
    assert {e.text for e in restored.search("pizza Paris violin dog", 20)} <= {"User plays the violin", "User has a dog named Rex"}


def test_save_load_round_trip_keeps_memories_history_and_queued_rounds(hashing_embedder):
    m = method(hashing_embedder)
    d = talk(m, [("I love pizza", "Nice!"), ("I live in Paris", "Lovely.")])
    m.observe(d.add(Turn("user", "I moved to Tokyo")))  # waits for its reply
    data = m.save_state()
    n = m.observed
    restored = method(hashing_embedder)
    restored.load_state(data, n)
    assert restored.observed == n
    before = sorted(e.text for e in m.search("pizza Paris", 10))
    assert sorted(e.text for e in restored.search("pizza Paris", 10)) == before == ["User lives in Paris", "User loves pizza"]
    hist = restored.memory.history(restored.search("pizza", 1)[0].source)
    assert hist and hist[0]["event"] == "ADD"
    restored.observe(d.add(Turn("assistant", "Big move!")))  # the pending user turn pairs with it
    restored.wait()
    assert restored.records[-1].turn_ids == ("S0:4", "S0:5")
    assert "User moved to Tokyo" in {e.text for e in restored.search("Tokyo", 10)}


def test_a_reply_does_not_wait_for_adding_and_says_so(hashing_embedder):
    gate = threading.Event()

    def slow(messages):
        if new_messages(messages):
            gate.wait(30)
        return extractor()(messages)

    m = method(hashing_embedder, slow)
    d = Dialogue()
    m.observe(d.add(Turn("user", "I love pizza")))
    m.observe(d.add(Turn("assistant", "Nice!")))
    seen = []
    from core.methods import ReplyStream

    reply = m.respond_streaming(d, "pizza?", ReplyStream(sink=lambda piece: None, progress=seen.append))
    assert any("mem0 is still adding 1 round" in p.text for p in seen)
    assert any(n.id == "adding" for n in reply.trace.nodes)
    gate.set()
    m.wait()
    assert m.adding() == 0 and m.records[0].events[0]["memory"] == "User loves pizza"


def test_telemetry_is_off_and_nothing_runs_outside_localhost(tmp_path):
    """The whole path (import, add, search, save, load) in a fresh interpreter with every socket
    connection and name lookup outside localhost refused, and subprocesses refused (mem0 would
    run `pip` to download a spaCy model)."""
    script = tmp_path / "offline.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, socket, subprocess, sys
        sys.path.insert(0, {str(REPO)!r})
        os.environ["MEM0_TELEMETRY"] = "True"  # the method switches it off whatever the environment says
        attempts = []
        LOCAL = {{"localhost", "127.0.0.1", "::1", None, ""}}
        real_connect, real_gai = socket.socket.connect, socket.getaddrinfo
        def connect(self, address):
            host = address[0] if isinstance(address, tuple) else None
            if self.family != socket.AF_UNIX and host not in LOCAL:
                attempts.append(("connect", str(address)))
                raise OSError("network blocked by the test")
            return real_connect(self, address)
        def getaddrinfo(host, *args, **kwargs):
            if host not in LOCAL:
                attempts.append(("getaddrinfo", str(host)))
                raise socket.gaierror("network blocked by the test")
            return real_gai(host, *args, **kwargs)
        def popen(*args, **kwargs):
            attempts.append(("subprocess", str(args)[:200]))
            raise OSError("subprocesses blocked by the test")
        socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
        subprocess.Popen.__init__ = popen
        sys.path.insert(0, {str(REPO / "tests")!r})
        from test_mem0 import extractor, talk
        from core.llm.fake import ScriptedLLM
        from core.methods import Toolkit, create_method
        from core.resources import HashingEmbedder
        m = create_method("mem0", Toolkit(llm=ScriptedLLM(extractor()), embedder=HashingEmbedder(256)))
        d = talk(m, [("I love pizza", "Nice!"), ("I live in Paris", "Lovely.")])
        found = [e.text for e in m.retrieve(d, "pizza", 5)]
        m2 = create_method("mem0", Toolkit(llm=ScriptedLLM(extractor()), embedder=HashingEmbedder(256)))
        m2.load_state(m.save_state(), m.observed)
        from mem0.memory import main, telemetry
        print(json.dumps({{"attempts": attempts, "found": found, "telemetry": [telemetry.MEM0_TELEMETRY, main.MEM0_TELEMETRY],
                          "restored": [e.text for e in m2.search("Paris", 5)]}}))
    """))
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["attempts"] == []
    assert result["telemetry"] == [False, False]
    assert "User loves pizza" in result["found"] and "User lives in Paris" in result["restored"]
    assert not (tmp_path / ".mem0").exists()  # nothing written to the home folder either


def test_the_context_window_can_be_set_for_mems_long_prompt():
    from core.config import llm_settings_from

    assert llm_settings_from({"WORKBENCH_LLM_N_CTX": "12288"}).n_ctx == 12288
    assert llm_settings_from({}).n_ctx == 12288  # mem0 runs on the defaults
    with pytest.raises(ValueError, match="WORKBENCH_LLM_N_CTX"):
        llm_settings_from({"WORKBENCH_LLM_N_CTX": "big"})
