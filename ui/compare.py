"""Streamlit pieces of the Compare page: blind reply columns, the vote buttons, the rankings and
voting on the items of a scripted comparison (`python -m core compare`). The votes, rankings and
measures themselves live in core/votes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.votes.compare import parse_items, vote_fields
from core.votes.measures import agreements
from core.votes.model import ALL_BAD, BOTH_BAD, TIE, Vote, VoteError, column_labels, shown_order
from core.votes.ranking import MIN_METHOD_VOTES, Ranking, decisive_votes, rank, short_of_votes
from core.votes.store import VoteStore
from ui import resources
from ui.safe import literal

RANKING_BOOTSTRAP = 500  # resamples on the page (the command's default is 1000)
ITEMS_KEY = "cmp_items"  # session: the items of an uploaded compare.jsonl


@st.cache_resource(show_spinner=False)
def _vote_store(target: str) -> VoteStore:
    return VoteStore(target)


def vote_store() -> VoteStore:
    resources.default_store()  # a wrong or unreachable WORKBENCH_DB stops the page here, with one line
    return _vote_store(resources.database_path())


def header(label: str, method: str, revealed: bool) -> str:
    """A reply column's header: the blind label, and the method's name only once revealed."""
    return f"**{label}** · `{method}`" if revealed else f"**{label}**"


def choices(labels: list[str]) -> list[tuple[str, str]]:
    """(button text, what it stores as the winner: a label, "tie" or "bad") for n columns."""
    if len(labels) == 2:
        return [(f"{labels[0]} is better", labels[0]), (f"{labels[1]} is better", labels[1]), ("Tie", TIE), ("Both bad", "bad")]
    return [*((f"{x} is best", x) for x in labels), ("Tie", TIE), ("All bad", "bad")]


def _cast(store: VoteStore, conversation: str, turn: int, order: list[str], replies: list[str], measures: dict,
          owner: str, picked: str) -> None:
    labels = column_labels(len(order))
    winner = order[labels.index(picked)] if picked in labels else (TIE if picked == TIE else (BOTH_BAD if len(order) == 2 else ALL_BAD))
    try:
        store.vote(conversation, turn, order, winner, owner=owner, replies=replies, measures=measures)
    except (VoteError, PermissionError) as err:
        st.session_state["cmp_vote_error"] = str(err)


def vote_bar(store: VoteStore, conversation: str, turn: int, order: list[str], replies: list[str], measures: dict,
             owner: str, *, disabled: bool = False, shortcuts: bool = False) -> Vote | None:
    """The vote buttons of one turn (a click stores the vote at once; another click replaces it)
    and the current vote, if any. `shortcuts`: keys 1, 2, ... press the buttons (one turn's only)."""
    current = store.get(conversation, turn, owner=owner)
    labels = column_labels(len(order))
    buttons = choices(labels)
    cols = st.columns(len(buttons))
    for number, (col, (text, picked)) in enumerate(zip(cols, buttons), 1):
        col.button(text, key=f"cmp_vote_{conversation}_{turn}_{picked}", disabled=disabled, width="stretch",
                   shortcut=str(number) if shortcuts else None, help=f"key {number}" if shortcuts else None,
                   on_click=_cast, args=(store, conversation, turn, order, replies, measures, owner, picked))
    if "cmp_vote_error" in st.session_state:
        st.error(literal(st.session_state.pop("cmp_vote_error")))
    if current is not None:
        st.caption(f"Your vote: **{describe_vote(current, order)}**. Click another button to change it.")
    return current


def describe_vote(vote: Vote, order: list[str]) -> str:
    labels = dict(zip(order, column_labels(len(order))))
    if vote.winner == TIE:
        return "tie"
    if vote.bad:
        return "both bad" if len(vote.methods) == 2 else "all bad"
    return f"{labels.get(vote.winner, '?')} ({vote.winner}) is {'better' if len(vote.methods) == 2 else 'best'}"


def interval(low: float, high: float) -> str:
    """A strength's 95% interval as text; a bootstrap whose resamples were all alike (every vote the
    same outcome) has none to give."""
    if low != low or high != high:  # NaN: the method was only in bad votes
        return "—"
    return "none: every resample alike" if low == high else f"{low:+.2f} to {high:+.2f}"


def ranking_tables(ranking: Ranking) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(standings, row-against-column table) of a ranking: with enough votes (`short_of_votes` empty)
    the strengths with intervals and the win rates, else the counts and the votes between two
    methods. Cells are numbers or words, never None."""
    names = list(ranking.methods)
    if short_of_votes(ranking):
        table = pd.DataFrame([{"method": s.method, "decisive votes": decisive_votes(s), "wins": s.wins,
                               "losses": s.losses, "ties": s.ties, "bad": s.bad} for s in ranking.standings])
        return table, pd.DataFrame([list(row) for row in ranking.comparisons], index=names, columns=names)
    table = pd.DataFrame([{"method": s.method, "strength": round(s.strength, 2), "95% interval": interval(s.low, s.high),
                           "votes": s.votes, "wins": s.wins, "losses": s.losses, "ties": s.ties, "bad": s.bad}
                          for s in ranking.standings])
    rates = [["—" if i == j else "not compared" if r is None else f"{r:.2f}" for j, r in enumerate(row)]
             for i, row in enumerate(ranking.win_rate)]
    return table, pd.DataFrame(rates, index=names, columns=names)


@st.cache_data(show_spinner=False, max_entries=64)
def _ranking(outcomes: tuple):
    return rank(list(outcomes), bootstrap=RANKING_BOOTSTRAP, seed=0)


def ranking_panel(store: VoteStore, owner: str) -> None:
    """The rankings from the owner's votes and from everyone's who shares the database, with the
    measures' agreement with the owner's votes."""
    st.subheader("Rankings")
    st.caption("Bradley-Terry strength (log-odds, methods average 0; ties count half a win; 'bad' votes are counted, "
               f"not ranked) with a 95% bootstrap interval ({RANKING_BOOTSTRAP} resamples). Win rate: the row's share of "
               "its comparisons with the column.")
    mine = store.votes(owner=owner)
    scopes = {"Your votes": [(v.methods, v.winner) for v in mine], "Everyone's votes": store.outcomes_of_everyone()}
    for tab, (name, outcomes) in zip(st.tabs(list(scopes)), scopes.items()):
        with tab:
            if not outcomes:
                st.info("No votes yet: vote on a turn above and the ranking appears here.")
                continue
            ranking = _ranking(tuple(outcomes))
            table, matrix = ranking_tables(ranking)
            short = short_of_votes(ranking)
            st.caption(f"{len(outcomes)} votes")
            if short:
                st.info(f"Too few votes to rank yet: strengths with 95% intervals appear once every method has "
                        f"{MIN_METHOD_VOTES} decisive votes (won, lost or tied; 'bad' votes do not count). Now: "
                        + ", ".join(f"{literal(m)} {n}" for m, n in short) + ". The counts so far:")
            st.dataframe(table, hide_index=True, width="stretch")
            st.markdown("Votes comparing the row with the column" if short else "Win rate (row against column)")
            st.dataframe(matrix, width="stretch")
    found = [a for a in agreements(mine) if a.pairs]
    if found:
        st.markdown("**The measures against your votes**: how often the reply the measure scores higher is the one you chose "
                    "(50% = chance; Wilson 95% interval).")
        st.dataframe(pd.DataFrame([{"measure": a.measure, "agreement": a.rate, "95% low": a.low, "95% high": a.high,
                                    "pairs": a.pairs, "undecided": a.undecided} for a in found]),
                     hide_index=True, width="stretch")


def items_panel(store: VoteStore, owner: str) -> None:
    """Vote on the items of a scripted comparison: upload DIR/compare.jsonl, then judge its turns blind."""
    upload = st.file_uploader("A compare.jsonl written by `python -m core compare`", type=["jsonl"], key="cmp_upload")
    if upload is not None and st.session_state.get("cmp_upload_name") != upload.name + str(upload.size):
        try:
            st.session_state[ITEMS_KEY] = parse_items(upload.getvalue().decode("utf-8"), upload.name)
            st.session_state["cmp_upload_name"] = upload.name + str(upload.size)
        except (ValueError, UnicodeDecodeError) as err:
            st.error(literal(f"Not a compare file: {err}"))
            return
    items = st.session_state.get(ITEMS_KEY) or []
    if not items:
        st.info("Run `python -m core compare --methods base,rag --script FILE --out DIR` and upload DIR/compare.jsonl "
                "to vote on its turns here.")
        return
    index = st.number_input("Item", min_value=1, max_value=len(items), value=1, step=1, key="cmp_item") - 1
    item = items[int(index)]
    order = shown_order(item["methods"], item["compare"], int(item["item"]), owner)
    st.markdown(f"**User:** {literal(item['user'])}")
    current = store.get(item["compare"], int(item["item"]), owner=owner)
    revealed = current is not None
    for col, label, method in zip(st.columns(len(order)), column_labels(len(order)), order):
        with col:
            st.markdown(header(label, method, revealed))
            st.markdown(literal(item["replies"][method]["reply"]))
    fields = vote_fields(item, order)
    vote_bar(store, fields["conversation"], fields["turn"], order, fields["replies"], fields["measures"], owner)
    if revealed and item.get("expected"):
        st.caption(f"Expected answer: {literal(', '.join(item['expected']))}")
