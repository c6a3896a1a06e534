"""The three rules that came with `inbox_server_url` (reference §9.2), first released in SpecForge 0.2.0.

N1 checks the URL's shape; upstream's lenient URL parser is not copied
(reference §8, Q5): the scheme is matched case-insensitively, but the port
must be written, decimal, and 1-65535, no whitespace is allowed anywhere, and
every refusal is one message naming the value and the parts that are wrong.

N2's other half (a local deployment) cannot fire here, as for rule 47: a
`disaggregated` section under a local mode already fails
deployment-disaggregated-needs-mode. N3 and managed-single-node exclude each
other: with `managed_local`, a relay URL makes one of them fire at any
`nnodes`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from trainspec.spec.rules import Violation, rule
from trainspec.spec.wording import show

from .rules import DIS, DIS_AT, HIDDEN, SOURCES, data_mode

INBOX = f"{DIS}.inbox_server_url"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def origin_problems(url: str) -> list[str]:
    """What keeps `url` from being a bare HTTP origin `http://HOST:PORT`, part by part (empty when it is one)."""
    if any(char.isspace() for char in url):
        return ["it contains whitespace"]
    scheme = _SCHEME.match(url)
    if scheme is None or (scheme.group(1).lower() != "http" and not url[scheme.end() :].startswith("//")):
        return ["it does not start with http://"]  # in `localhost:8000`, localhost is the host, not a scheme
    if scheme.group(1).lower() != "http":
        return [f"the scheme is {show(scheme.group(1))}, not http"]
    rest = url[scheme.end() :]
    if not rest.startswith("//"):
        return [f'"{scheme.group(0)}" is not followed by "//"']
    rest = rest[2:]
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, rest = rest[:end], rest[end:]
    rest, hash_sign, fragment = rest.partition("#")
    path, question, query = rest.partition("?")
    problems = []
    if "@" in authority:
        problems.append("it has a user or password")
        authority = authority.rpartition("@")[2]
    problems += _host_port_problems(authority)
    if ";" in path:
        problems.append(f"it has path parameters ({show(path)})")
    elif path not in ("", "/"):
        problems.append(f"it has the path {show(path)}")
    if question:
        problems.append(f"it has the query {show(question + query)}")
    if hash_sign:
        problems.append(f"it has the fragment {show(hash_sign + fragment)}")
    return problems


def _host_port_problems(authority: str) -> list[str]:
    """What is wrong with `HOST:PORT` (an IPv6 host in brackets: `[HOST]:PORT`)."""
    if authority.startswith("["):
        inside, bracket, after = authority[1:].partition("]")
        if not bracket:
            return [f"the IPv6 host {show(authority)} has no closing bracket"]
        if after and not after.startswith(":"):
            return [f"{show(after)} follows the IPv6 host; write [HOST]:PORT"]
        host, has_port, port = inside, bool(after), after[1:]
    else:
        host, colon, port = authority.rpartition(":")
        has_port = bool(colon)
        if not has_port:
            host = authority
    problems = []
    if not host:
        problems.append("it has no host")
    elif ":" in host and not authority.startswith("["):
        problems.append(f"the host {show(host)} contains a colon (write an IPv6 address in brackets)")
    if not has_port or not port:
        problems.append("it has no port (write :PORT)")
    elif not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        problems.append(f"the port {show(port)} is not a number from 1 to 65535")
    return problems


@rule("inbox-server-url-origin", "error", INBOX)
def inbox_server_url_origin(url: str | None) -> Iterator[str]:
    """The inbox relay's address is a bare HTTP origin, `http://HOST:PORT`.

    The scheme is http (in any case), the host is not empty, the port is
    written and is a decimal number from 1 to 65535; no user or password, no
    path other than "/", no parameters, query or fragment, and no whitespace.
    """
    if url is None:
        return
    problems = origin_problems(url)
    if problems:
        yield f"{INBOX} = {show(url)} is not a bare HTTP origin like http://HOST:PORT: {'; '.join(problems)}"


@rule("inbox-server-url-online-only", "error", INBOX, *SOURCES)
def inbox_server_url_online_only(url: str | None, train: str, prompts: str, hidden: str) -> Iterator[Violation]:
    """The inbox relay serves the inboxes of online capture, which offline runs do not have."""
    if url is not None and data_mode(train, prompts, hidden) == "offline":
        yield Violation(
            f"{INBOX} = {show(url)} is only for online disaggregated runs, but data.hidden_states_path = "
            f"{show(hidden)} makes this run offline; remove it",
            related=((*DIS_AT, "inbox_server_url"), HIDDEN),
        )


@rule("inbox-server-url-multinode", "error", INBOX, "deployment.trainer.nnodes")
def inbox_server_url_multinode(url: str | None, nnodes: int) -> Iterator[str]:
    """The inbox relay carries the inboxes of trainer ranks on other nodes, so it needs 2 nodes or more (N3)."""
    if url is not None and nnodes < 2:
        yield (
            f"{INBOX} = {show(url)} relays inboxes between trainer nodes, but deployment.trainer.nnodes = "
            f"{nnodes}; it needs 2 nodes or more (remove it on one node)"
        )
