"""Who is using this browser session: the owner id that every Store call takes.

Every page calls `current_owner()` before touching the store and passes the result as `owner=`.

Modes (`WORKBENCH_AUTH`, else `mode` in auth.toml; default "off"):

- "off": each browser gets a random private workspace ("anon:<random>"). The id lives in
  st.session_state and in a signed cookie, so a reload (or another tab of the same browser) keeps
  it; another browser, or a private window, gets its own.
- "named": a sign-in form asks for a workspace name (and the passphrase, when auth.toml sets one);
  the owner is "ws:<name>". Anyone who knows the name (and passphrase) shares that workspace: it
  is a convenience for a lab, not an account system.
- "oidc": Streamlit's own st.login against the OpenID Connect provider configured in
  .streamlit/secrets.toml ([auth]; needs the Authlib package); the owner is "oidc:<email>".

The cookie carries the owner id with an HMAC signature (key: WORKBENCH_SECRET, else auth.toml's
cookie_secret, else a random key kept next to the database), so a user cannot edit it into
another owner's id.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import tomllib
from functools import lru_cache
from pathlib import Path

import streamlit as st

from core.paths import REPO_ROOT
from core.store import SHARED_OWNER
from ui import resources

OWNER = "owner_id"  # st.session_state key
COOKIE = "workbench_owner"
_COOKIE_SENT = "owner_cookie_sent"
_SIGNED_OUT = "owner_signed_out"
MODES = ("off", "named", "oidc")
COOKIE_DAYS = 365


# -- configuration --------------------------------------------------------------------------------
def auth_file() -> Path:
    return Path(os.environ.get("WORKBENCH_AUTH_FILE") or REPO_ROOT / "auth.toml")


@lru_cache(maxsize=4)
def _read_auth(path: str, mtime: float) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def auth_config() -> dict:
    path = auth_file()
    if not path.is_file():
        return {}
    try:
        return _read_auth(str(path), path.stat().st_mtime)
    except tomllib.TOMLDecodeError as err:
        st.error(f"{path.name} is not valid TOML ({err}); signing in is off until it is fixed.")
        return {}


def auth_mode() -> str:
    mode = (os.environ.get("WORKBENCH_AUTH") or auth_config().get("mode") or "off").strip().lower()
    if mode not in MODES:
        st.error(f"Unknown sign-in mode {mode!r} (use one of {', '.join(MODES)}); using 'off'.")
        return "off"
    return mode


def _secret_key() -> bytes:
    given = os.environ.get("WORKBENCH_SECRET") or auth_config().get("cookie_secret")
    if given:
        return str(given).encode()
    return _file_secret(str(resources.local_folder() / "owner_secret"))


@lru_cache(maxsize=4)
def _file_secret(path: str) -> bytes:
    """The secret in `path`, made on first use. Two sessions (or replicas) may ask at once: each
    writes a whole candidate beside it and links it into place, the first link wins and every
    reader sees a complete file, never a half-written or missing one."""
    p = Path(path)
    if not p.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, candidate = tempfile.mkstemp(dir=p.parent, prefix=".owner_secret.")  # mode 0o600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
            os.link(candidate, p)
        except FileExistsError:
            pass  # another session made it first: use theirs
        finally:
            os.unlink(candidate)
    return p.read_text().strip().encode()


# -- signed tokens -------------------------------------------------------------------------------
def sign(owner: str) -> str:
    body = base64.urlsafe_b64encode(owner.encode()).decode().rstrip("=")
    mac = hmac.new(_secret_key(), body.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{body}.{mac}"


def verify(token: str | None) -> str | None:
    """The owner id a token was signed for, or None when it is missing, malformed or forged."""
    if not token or token.count(".") != 1:
        return None
    body, mac = token.split(".")
    want = hmac.new(_secret_key(), body.encode(), hashlib.sha256).hexdigest()[:32]
    if not hmac.compare_digest(mac, want):
        return None
    try:
        owner = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return owner if owner and owner != SHARED_OWNER else None


def _set_cookie(owner: str | None) -> None:
    """Write (or, with None, clear) the owner cookie in the browser. Streamlit cannot set cookies
    from Python; a one-line script does, and the next session reads it via st.context.cookies."""
    value, age = (sign(owner), COOKIE_DAYS * 86400) if owner else ("", 0)
    script = f"document.cookie = {json.dumps(f'{COOKIE}={value}; path=/; max-age={age}; SameSite=Strict')};"
    with st.sidebar:
        st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


def _remember(owner: str) -> str:
    st.session_state[OWNER] = owner
    return owner


def _sync_cookie(owner: str | None) -> None:
    """Once per session and owner (and never in a run that ends in st.rerun, whose elements the
    browser may drop before the script runs): the cookie follows the session's owner."""
    if st.session_state.get(_COOKIE_SENT, "") != (owner or ""):
        _set_cookie(owner)
        st.session_state[_COOKIE_SENT] = owner or ""


def _cookie_owner(prefix: str) -> str | None:
    if st.session_state.get(_SIGNED_OUT):  # the browser may still send the old cookie
        return None
    try:
        token = st.context.cookies.get(COOKIE)
    except (AttributeError, RuntimeError):  # no browser behind this run (AppTest)
        return None
    owner = verify(token)
    return owner if owner and owner.startswith(prefix) else None


# -- the modes ----------------------------------------------------------------------------------
def workspace_name(name: str) -> str:
    """Names are matched case- and space-insensitively: "Lab  A" and "lab a" are one workspace."""
    return re.sub(r"\s+", " ", name).strip().lower()[:64]


def _anonymous() -> str:
    return _remember(_cookie_owner("anon:") or f"anon:{secrets.token_urlsafe(16)}")


def _named() -> str:
    owner = _cookie_owner("ws:")
    if owner:
        return _remember(owner)
    st.title("Sign in to a workspace")
    st.caption("Conversations, memory and settings belong to a workspace. Anyone who knows a workspace's name"
               + (" and the passphrase" if auth_config().get("passphrase_sha256") else "") + " can open it.")
    with st.form("sign_in"):
        name = st.text_input("Workspace name", max_chars=64)
        phrase = st.text_input("Passphrase", type="password") if auth_config().get("passphrase_sha256") else ""
        go = st.form_submit_button("Open workspace")
    if go:
        want = str(auth_config().get("passphrase_sha256", ""))
        if not workspace_name(name):
            st.error("Type a workspace name.")
        elif want and not hmac.compare_digest(hashlib.sha256(phrase.encode()).hexdigest(), want.lower()):
            st.error("Wrong passphrase.")
        else:
            _remember(f"ws:{workspace_name(name)}")
            st.rerun()
    st.stop()


def _oidc() -> str:
    if not st.user.is_logged_in:
        st.title("Sign in")
        st.button("Log in", on_click=st.login, type="primary")
        st.stop()
    who = st.user.get("email") or st.user.get("sub")
    if not who:
        st.error("The identity provider returned neither an email nor a subject id.")
        st.stop()
    return _remember(f"oidc:{who}")


def current_owner() -> str:
    """This browser session's owner id (signing in first when a mode asks for it)."""
    owner = st.session_state.get(OWNER)
    if not owner:
        mode = auth_mode()
        if mode != "off" and st.session_state.get(_SIGNED_OUT):
            _sync_cookie(None)
        owner = _named() if mode == "named" else _oidc() if mode == "oidc" else _anonymous()
    _sync_cookie(owner)
    return owner


def describe(owner: str) -> str:
    kind, _, rest = owner.partition(":")
    if kind == "anon":
        return f"private to this browser (…{rest[-4:]})"
    return {"ws": "workspace", "oidc": "signed in as"}.get(kind, kind) + f" {rest}"


def sidebar(owner: str) -> None:
    """Who this is, and a way out. Pages call it once, after current_owner()."""
    with st.sidebar:
        st.caption(f"Workspace: {describe(owner)}")
        if owner.startswith(("ws:", "oidc:")) and st.button("Sign out", key="owner_sign_out"):
            st.session_state.pop(OWNER, None)
            st.session_state[_SIGNED_OUT] = True  # the next run clears the cookie and asks again
            if owner.startswith("oidc:"):
                st.logout()
            st.rerun()
