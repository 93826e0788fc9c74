"""AppTest of the Annotation page: import a file, label with the shortcut buttons, resume in a new
session, agreement and adjudication, export that imports back; bad input and other owners refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.annotation import AnnotationStore
from core.annotation.formats import read_bytes
from ui.annotation import BUTTON_KEYS, SHORTCUTS

REPO = Path(__file__).resolve().parent.parent
PAGE = str(REPO / "pages" / "5_Annotation.py")
SAMPLE = REPO / "tests" / "fixtures" / "annotation_hybridial_sample.json"
ALICE, BOB = "ws:lab", "ws:other-lab"


def page(owner: str, annotator: str = "", **state) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["owner_id"] = owner  # what the owner cookie restores in a browser
    if annotator:
        at.session_state["ann_annotator"] = annotator
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def text(at: AppTest) -> str:
    parts = []
    for kind in ("markdown", "caption", "info", "error", "warning", "success", "title", "subheader"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [h.proto.body for h in at.get("html")] + [p.proto.text for p in at.get("progress")]
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", "\n".join(parts))  # Markdown escapes (ui.safe.literal) undone


def import_sample(at: AppTest, data: bytes | None = None, name: str = "sample.json") -> AppTest:
    at.file_uploader(key="ann_upload").set_value((name, data or SAMPLE.read_bytes(), "application/json")).run()
    at.text_input(key="ann_new_name").set_value("study").run()
    return at.button(key="ann_import").click().run()


def to_view(at: AppTest, view: str) -> AppTest:
    return at.radio(key="ann_page_view").set_value(view).run()


def current_item(at: AppTest) -> str:
    found = re.search(r"id (hd-\d)", text(at))
    return found.group(1) if found else ""


@pytest.fixture()
def store(app_env) -> AnnotationStore:
    return AnnotationStore(app_env / "app.sqlite3")


def test_import_label_with_shortcuts_resume_and_export(store):
    at = page(ALICE)
    assert not at.exception
    assert [r.options for r in at.radio if r.key == "ann_page_view"] == [["Import / export"]]  # no task yet
    import_sample(at)
    assert not at.exception
    assert "6 items added" in text(at)
    task = store.find_task("study", owner=ALICE)
    assert task.items == 6

    # the empty annotator name is refused: no labelling buttons
    to_view(at, "Label")
    assert "Type your annotator name" in text(at) and not [b for b in at.button if b.key in BUTTON_KEYS.values()]
    at.sidebar.text_input(key="ann_annotator").set_value("<b>x</b>").run()
    assert "use letters, digits" in text(at)
    at.sidebar.text_input(key="ann_annotator").set_value("Ana").run()
    assert not at.exception

    # each shortcut button carries its key; Streamlit binds it in the browser
    for name, key in BUTTON_KEYS.items():
        assert at.button(key=key).proto.shortcut.lower() == SHORTCUTS[name]
    assert current_item(at) == "hd-1"
    assert "Gold label" not in text(at)  # not in adjudication mode
    at.pills(key=f"ann_ev:{task.id}:hd-1:").set_value([1, 3])  # passages 100 and 102
    at.button(key=BUTTON_KEYS["label:Supports"]).click().run()  # "1"
    assert current_item(at) == "hd-2"
    at.button(key=BUTTON_KEYS["next"]).click().run()  # "n": skip hd-2
    assert current_item(at) == "hd-3"
    # user text is shown as text: the fact's <script> is Markdown-escaped, the response's is HTML-escaped
    assert "<script>alert('fact')</script> It is safe." in text(at)
    html = next(h.proto.body for h in at.get("html") if "white-space" in h.proto.body)
    assert "&lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html and "<script>" not in html
    assert not any(h.proto.unsafe_allow_javascript for h in at.get("html"))
    at.button(key=BUTTON_KEYS["label:Refutes"]).click().run()  # "2"
    at.button(key=BUTTON_KEYS["back"]).click().run()  # "b": back to hd-3
    assert current_item(at) == "hd-3"
    assert "Your label: **Refutes**" in text(at)
    at.button(key=BUTTON_KEYS["label:Not Enough Info"]).click().run()  # "3": changed, history kept
    at.button(key=BUTTON_KEYS["evidence"]).click().run()  # "e": evidence hidden
    assert "evidence passages hidden" in text(at)
    labels = {lb.item_id: lb for lb in store.labels(task.id, owner=ALICE)}
    assert {k: v.label for k, v in labels.items()} == {"hd-1": "Supports", "hd-3": "Not Enough Info"}
    assert labels["hd-1"].evidence == ("100", "102")
    assert [h.label for h in store.history(task.id, "hd-3", owner=ALICE)] == ["Refutes", "Not Enough Info"]

    # a new session (a reload, a restart) resumes at the first item Ana has not labelled: hd-2
    again = page(ALICE, "ana")
    to_view(again, "Label")
    assert current_item(again) == "hd-2"
    assert "ana: 2 of 6 labelled" in text(again)

    # export: the prepared file imports back with the same labels
    to_view(at, "Import / export")
    at.radio(key="ann_export_format").set_value("csv").run()
    at.button(key="ann_prepare_export").click().run()
    task_id, fmt, data, rows = at.session_state["ann_export"]
    assert (task_id, fmt, rows) == (task.id, "csv", 6)
    back = read_bytes("export.csv", data.encode())
    assert {(lb.item_id, lb.annotator, lb.label) for lb in back.labels} == {("hd-1", "ana", "Supports"),
                                                                             ("hd-3", "ana", "Not Enough Info")}
    assert len(back.items) == 6


def test_two_annotators_agreement_and_adjudication(store):
    at = page(ALICE)
    import_sample(at)
    task = store.find_task("study", owner=ALICE)
    for who, labels in (("ana", ["Supports", "Refutes", "Refutes"]), ("ben", ["Supports", "Supports", "Refutes"])):
        for item, label in zip(("hd-1", "hd-2", "hd-4"), labels):
            store.label(task.id, item, who, label, owner=ALICE)

    ben = page(ALICE, "ben")
    to_view(ben, "Label")
    assert current_item(ben) == "hd-3"  # ben's first unlabelled
    ben.button(key=BUTTON_KEYS["back"]).click().run()  # hd-2, which ben labelled: ana's label is now visible
    assert current_item(ben) == "hd-2" and "ana: Refutes" in text(ben)
    ben.selectbox(key="ann_filter").set_value("disagreements").run()
    assert current_item(ben) == "hd-2" and "(1 of 1 shown)" in text(ben)

    to_view(ben, "Agreement")
    assert not ben.exception
    metrics = {m.label: m.value for m in ben.metric}
    # ana S R R vs ben S S R: p_o 2/3, marginals (1, 2) and (2, 1): p_e 4/9, kappa (2/9)/(5/9) = 0.4
    assert ben.dataframe[0].value["Cohen's kappa"].tolist() == pytest.approx([0.4])
    assert metrics["Observed agreement"] == "0.667" and metrics["Items with 2+ labels"] == "3 / 6"
    assert len(ben.get("plotly_chart")) == 1
    assert "Adjudication queue" not in text(ben)

    store.set_adjudication(task.id, True, owner=ALICE)
    lead = page(ALICE, "lead", ann_page_view="Agreement")
    assert not lead.exception
    assert "Adjudication queue" in text(lead) and "gold: **Refutes**" in text(lead)  # hd-2's gold label
    lead.button(key="ann_final:hd-2:Refutes").click().run()
    assert store.adjudications(task.id, owner=ALICE)["hd-2"].lead == "lead"
    assert "1 items where annotators disagree; 1 have a final label" in text(lead)
    label_view = page(ALICE, "ana", ann_page_view="Label")
    assert current_item(label_view) == "hd-3"  # ana's resume point
    assert "Gold label (adjudication mode): **Not Enough Info** · not a factual claim" in text(label_view)


def test_bad_imports_store_nothing_and_owners_are_apart(store):
    at = page(ALICE)
    import_sample(at, data=b'[{"sample_id": "x"}]', name="locomo.json")
    assert "nothing was stored: row 1: missing columns" in text(at)
    assert store.list_tasks(owner=ALICE) == []
    big = b'{"id": "a", "fact": "' + b"x" * (9 * 1024 * 1024) + b'"}\n'
    import_sample(at, data=big, name="big.jsonl")
    assert "the limit is 8.0 MB" in text(at)
    assert store.list_tasks(owner=ALICE) == []
    import_sample(at)
    task = store.find_task("study", owner=ALICE)
    assert task is not None

    bob = page(BOB, "bob")
    assert [r.options for r in bob.radio if r.key == "ann_page_view"] == [["Import / export"]]
    assert "study" not in text(bob)
    # a task id from Alice's address bar opens nothing for Bob
    guessed = AppTest.from_file(PAGE, default_timeout=60)
    guessed.session_state["owner_id"] = BOB
    guessed.query_params["task"] = task.id
    guessed.run()
    assert not guessed.exception and not guessed.sidebar.selectbox
    assert "hd-1" not in text(guessed)


def test_tasks_from_a_server_data_set_and_from_a_chat(store, monkeypatch):
    from core.dialogue import Reply, Turn
    from core.store import Store

    monkeypatch.setenv("WORKBENCH_ANNOTATION_DATA", str(SAMPLE.parent))
    at = page(ALICE)
    at.radio(key="ann_source").set_value("A data set on this server").run()
    options = at.selectbox(key="ann_server_file").options
    assert "fixtures/annotation_hybridial_sample.json" in options
    at.selectbox(key="ann_server_file").set_value(SAMPLE).run()
    at.button(key="ann_import").click().run()
    assert not at.exception and store.find_task("annotation_hybridial_sample", owner=ALICE).items == 6

    chats = Store(store.path)
    cid = chats.create_conversation("Lisbon chat", owner=ALICE)
    chats.add_turns(cid, [(Turn("user", "Where is Lisbon?"), None)], owner=ALICE)
    reply = "Lisbon is in Portugal and has about half a million people. It is the capital."
    chats.add_turns(cid, [(Turn("assistant", reply), Reply(reply, "base", "m"))], owner=ALICE)
    at.radio(key="ann_source").set_value("A chat of this workspace").run()
    at.button(key="ann_import").click().run()
    task = store.find_task("Lisbon chat", owner=ALICE)
    # FactScore's atomic facts (the coordinated predicates apart, the subject carried over), not sentences
    assert [i.fact for i in store.items(task.id, owner=ALICE)] == [
        "Lisbon is in Portugal.", "Lisbon has about half a million people.", "It is the capital."]
    assert "3 items added" in text(at)
    # Bob's chat list holds none of Alice's chats
    bob = page(BOB)
    bob.radio(key="ann_source").set_value("A chat of this workspace").run()
    assert "No chat in this workspace yet." in text(bob)


def test_adjudication_toggle_and_delete(store):
    at = page(ALICE)
    import_sample(at)
    task = store.find_task("study", owner=ALICE)
    store.label(task.id, "hd-1", "ana", "Supports", owner=ALICE)
    to_view(at, "Import / export")
    at.toggle(key=f"ann_adj:{task.id}").set_value(True).run()
    assert store.task(task.id, owner=ALICE).adjudication
    at.checkbox(key="ann_delete_sure").check().run()
    at.button(key="ann_delete").click().run()
    assert not at.exception and store.list_tasks(owner=ALICE) == []
    assert [r.options for r in at.radio if r.key == "ann_page_view"] == [["Import / export"]]


@pytest.mark.slow
def test_annotators_against_the_shipped_offline_verifier(store):
    """The agreement view's verifier panel with the shipped classifier (assets/models/factcheck)."""
    from sklearn.metrics import cohen_kappa_score

    from core.annotation.verify import verifier_labels
    from core.metrics.fact_classifier import DEFAULT_FACTCHECK_DIR
    from core.metrics.fact_verifiers import make_verifier

    if not (DEFAULT_FACTCHECK_DIR / "model.json").is_file():
        pytest.fail("assets/models/factcheck/model.json is missing: run `python -m core train-factcheck`")
    at = page(ALICE)
    import_sample(at)
    task = store.find_task("study", owner=ALICE)
    items = store.items(task.id, owner=ALICE)
    mine = {"ana": ["Supports", "Refutes", "Not Enough Info", "Supports"], "ben": ["Supports", "Supports", "Refutes", "Not Enough Info"]}
    for who, labels in mine.items():
        for item, label in zip(items, labels):
            store.label(task.id, item.item_id, who, label, owner=ALICE)

    view = page(ALICE, "ana", ann_page_view="Agreement")
    assert not view.exception and "Against the automatic verifier" in text(view)
    view.button(key="ann_verifier_go").click().run(timeout=180)
    assert not view.exception
    [table] = [d.value for d in view.dataframe if "kappa vs verifier nli" in d.value.columns]
    machine = verifier_labels(items, make_verifier("nli"))
    assert set(machine) == {i.item_id for i in items} and set(machine.values()) <= {"Supports", "Refutes", "Not Enough Info"}
    for who, labels in mine.items():
        row = table[table["annotator"] == who].iloc[0]
        ref = [machine[i.item_id] for i in items[: len(labels)]]
        assert row["items"] == len(labels)
        assert row["accuracy"] == pytest.approx(sum(a == b for a, b in zip(labels, ref)) / len(labels))
        expected = cohen_kappa_score(labels, ref, labels=["Supports", "Refutes", "Not Enough Info"])
        shown = row["kappa vs verifier nli"]
        assert float("nan" if shown is None else shown) == pytest.approx(expected, nan_ok=True)  # None: undefined
    assert len(view.get("plotly_chart")) == 2  # the pair's heatmap and one against the verifier


def test_the_first_line_says_what_to_do_next(store):
    """A newcomer is told where to start: make a task, then type a name, then the label keys."""
    def first_line(at: AppTest) -> str:
        return at.main.markdown[0].value

    at = page(ALICE)
    assert not at.exception
    assert first_line(at).startswith("**Start here:** make a task under **Import** below")
    import_sample(at)
    assert not at.exception and first_line(at).startswith("**Start here:** type your annotator name in the sidebar")
    at = page(ALICE, annotator="ana")
    line = first_line(at)
    assert line.startswith("**Next:** judge each fact under **Label**")
    for name, key in SHORTCUTS.items():  # the keys named are the keys the buttons answer to
        if name.startswith("label:"):
            assert f"**{name[6:]}** ({key})" in line
    assert f"**{SHORTCUTS['next']}** moves to the next fact" in line
