"""The load test in small (`python -m core loadtest`, as the issue's bar runs it with 100 sessions):
6 websocket sessions through nginx to 2 Streamlit replicas on a temporary PostgreSQL, the stub LLM
pool, and all three faults (SIGKILL a replica, restart PostgreSQL, SIGKILL an LLM server). Checked:
no errors, every acknowledged message stored exactly once with its reply, the users of the killed
replica reconnected and saw their history, a newcomer on either replica lists nothing. Its speed
figures (p95 ratio) are reported, not asserted: speed goals live in benchmarks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ops.nginx import find_nginx
from ops.postgres import find_bin
from tests.page_fixtures import tiny_nli_folder  # noqa: F401 (fixture)

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(1000)
def test_six_sessions_two_replicas_with_faults_lose_and_duplicate_nothing(tmp_path, tiny_nli_folder):
    if find_bin() is None or find_nginx() is None:
        pytest.skip("PostgreSQL and nginx are needed (Debian: apt-get install postgresql nginx-light; .ci/run installs them)")
    out = tmp_path / "summary.json"
    proc = subprocess.Popen([sys.executable, "-m", "core", "loadtest", "--sessions", "6", "--replicas", "2", "--llm", "stub",
                             "--messages", "3", "--think", "5", "--faults", "--app-env", f"WORKBENCH_NLI_MODEL={tiny_nli_folder}",
                             "--out", str(out)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # its own process group: the servers it starts go with it
    try:
        log, _ = proc.communicate(timeout=840)  # ~60 s on an idle 2-core machine; minutes when it is shared
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)  # the runner stops its servers on SIGTERM
        try:
            log, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            log, _ = proc.communicate()
        pytest.fail(f"the load test did not finish in 14 minutes:\n{log[-3000:]}")
    assert out.exists(), log[-5000:]
    summary = json.loads(out.read_text())
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["acknowledged"] == 6 * 3 == summary["stored"]
    assert summary["lost"] == 0 and summary["duplicated"] == 0 and summary["messages_without_reply"] == 0
    killed = summary["faults"][0]["event"].removeprefix("SIGKILL app replica ")
    assert [e["event"].split(" (")[0] for e in summary["faults"]] == [
        f"SIGKILL app replica {killed}", f"app replica {killed} restarted", "PostgreSQL restarted", "SIGKILL LLM server 0"]
    assert killed in {"0", "1"} and summary["faults"][0]["sessions"] >= 1  # a replica with users on it
    assert "did not answer" in summary["faults"][2]["error_seen_while_down"]  # a clear error while it was down
    assert summary["reconnects"] >= 1 and summary["history_checks_passed"] >= 1  # the killed replica's users came back
    assert summary["isolation"]["ok"]
    assert summary["single_p95_s"] and summary["p95_s"] and summary["p95_ratio"]
    assert summary["queue_capacity"] == 7  # the stub answers any number at once: the queue holds none back
    assert summary["llm_routing"] == "app"  # the replicas placed every request themselves, past the killed server


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_heavy_owner_beside_light_users_with_the_fair_queue(tmp_path, tiny_nli_folder):
    """Issue 54's run in small, with the stub answering like a model (two at a time, slower for long
    prompts): the heavy owner's work is done, nothing is lost, and the figures are reported."""
    if find_bin() is None or find_nginx() is None:
        pytest.skip("PostgreSQL and nginx are needed (Debian: apt-get install postgresql nginx-light; .ci/run installs them)")
    out = tmp_path / "summary.json"
    proc = subprocess.run([sys.executable, "-m", "core", "loadtest", "--sessions", "2", "--heavy", "1", "--replicas", "1",
                           "--llm", "stub", "--llm-servers", "1", "--messages", "2", "--think", "3",
                           "--app-env", f"WORKBENCH_NLI_MODEL={tiny_nli_folder}", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=840)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["errors"] == 0, summary["error_samples"]
    assert summary["lost"] == 0 and summary["duplicated"] == 0 and summary["messages_without_reply"] == 0
    assert summary["heavy_requests_done"] >= 1 and summary["fair_queue"] is True
    assert summary["queue_capacity"] == 2  # one stub answering two at a time, as a llama.cpp server does
    assert summary["solo_first_text_p95_s"] and summary["light_first_text_p95_s"] and summary["fair_ratio"]
    # a light user alone, measured over as many replies as the light users send (two alone, one after another)
    assert summary["solo_users"] == 2 and len(summary["solo_first_text_s"]) == 2 * 2
    assert summary["acknowledged"] == 2 * 2 + summary["heavy_requests_done"]
    # the replicas' queue trace: every light reply request timed to its first piece
    assert summary["light_model_first_p95_s"] and len(summary["light_model_first_s"]) >= 2 * 2
    assert {r["who"] for r in summary["requests"]} >= {"user0", "user1", "heavy0"}
    # each light reply as stored, beside its first words on the page
    replies = summary["light_replies"]
    assert {r["who"] for r in replies} == {"solo0", "solo1", "user0", "user1"} and all(r["reply_chars"] > 0 for r in replies)
    assert {r["message"] for r in replies} >= {"Hi, my name is user0 and I live in Lisbon.", "I have a dog called Rex."}


@pytest.mark.parametrize("llm, heavy, servers, sessions, capacity", [
    ("stub", 0, 2, 100, 101),  # the light-run stub answers any number at once: never the bound
    ("stub", 1, 1, 5, 2),  # with heavy owners it answers two at a time, like a llama.cpp server
    ("llamacpp", 0, 2, 100, 4),  # two slots a server
    ("llamacpp", 1, 1, 5, 2),
])
def test_the_queue_capacity_is_what_the_llm_pool_serves_at_once(llm, heavy, servers, sessions, capacity):
    from argparse import Namespace

    from ops.loadtest import queue_capacity

    assert queue_capacity(Namespace(llm=llm, heavy=heavy, llm_servers=servers, sessions=sessions)) == capacity


@pytest.mark.parametrize("messages, heavy, each", [
    (None, 0, 3),  # the 100-session scale run: three messages a session, as its bar was set
    (None, 1, 5),  # beside heavy owners, the light users' whole script
    (2, 1, 2),  # an explicit count wins
])
def test_light_users_send_their_whole_script_beside_heavy_owners(messages, heavy, each):
    from argparse import Namespace

    from ops.loadtest import MESSAGES, messages_each

    assert len(MESSAGES) == 5
    assert messages_each(Namespace(messages=messages, heavy=heavy)) == each


def test_the_command_line_passes_the_message_count_only_when_given(monkeypatch):
    from core import cli

    seen = []
    monkeypatch.setattr(cli.os, "execv", lambda exe, argv: seen.append(argv))
    monkeypatch.setattr(cli.os, "chdir", lambda _path: None)
    for extra in ([], ["--messages", "4"]):
        args = cli.build_parser().parse_args(["loadtest", "--heavy", "1", *extra])
        args.func(args)
    assert "--messages" not in seen[0]
    assert seen[1][seen[1].index("--messages") + 1] == "4"


def _forward(kind: str, text: str = "", finished: int | None = None) -> bytes:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    if kind == "new_session":
        msg.new_session.name = "streamlit_app"
    elif kind == "markdown":
        msg.delta.new_element.markdown.body = text
    else:
        msg.script_finished = finished
    return msg.SerializeToString()


class _Socket:
    """A websocket that hands out recorded messages, one per recv, each after `gap_s`."""

    def __init__(self, messages: list[bytes], gap_s: float = 0.02) -> None:
        self.messages, self.gap_s = list(messages), gap_s

    def recv(self, timeout: float) -> bytes:
        import time

        time.sleep(self.gap_s)
        return self.messages.pop(0)


def test_a_new_conversations_first_words_are_timed_where_they_streamed_not_where_the_rerun_drew_them():
    """A message that starts a conversation: the reply streams in the first run, then st.rerun draws
    the page again (a new_session clears it). The first words and a queue line shown are read from the
    whole timeline, not from what the rerun left."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from ops.loadtest import QUEUE_MARK, first_text_s, shown_place
    from ops.st_client import StreamlitClient

    message = "Hi, my name is Ana. (ana message 1)"
    client = StreamlitClient.__new__(StreamlitClient)
    client.timeout_s, client.last = 10, None
    client.ws = _Socket([
        _forward("new_session"), _forward("markdown", message), _forward("markdown", f"{QUEUE_MARK}: next in line"),
        _forward("markdown", "Hello Ana!"), _forward("markdown", "Hello Ana! Nice to meet you."),
        _forward("finished", finished=ForwardMsg.FINISHED_EARLY_FOR_RERUN),
        *[_forward("new_session")] + [_forward("markdown", t) for t in ("Filler", message, "Hello Ana! Nice to meet you.")],
        _forward("finished", finished=ForwardMsg.FINISHED_SUCCESSFULLY)])
    run = client._collect()
    assert run.reruns == 1 and run.texts == ["Filler", message, "Hello Ana! Nice to meet you."]  # the page at the end
    first = first_text_s(run, message)
    assert first is not None and first < run.timeline[6][0]  # the streamed "Hello Ana!", before the rerun's drawing
    assert [text for _, _, text in run.timeline].index("Hello Ana!") == 2 and first == round(run.timeline[2][0], 3)
    assert shown_place(run) and not any(t.startswith(QUEUE_MARK) for t in run.texts)
