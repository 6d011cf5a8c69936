"""`BoundedMemo`: never more than its limit, emptied when a new key meets a full memo."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitecache.bounded_memo import BoundedMemo
from sitecache.rest.http_hosts import HostDefaults


@given(limit=st.integers(1, 8), keys=st.lists(st.integers(0, 20), max_size=60))
def test_a_bounded_memo_never_holds_more_than_its_limit(limit: int, keys: list[int]) -> None:
    memo: BoundedMemo[int, str] = BoundedMemo(limit)
    for key in keys:
        assert memo.keep(key, f"value {key}") == f"value {key}"
        assert len(memo) <= limit
        assert memo[key] == f"value {key}"  # what was just kept is there


def test_a_new_key_in_a_full_memo_empties_it_first() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo.keep("a", 1)
    memo.keep("b", 2)
    memo.keep("c", 3)
    assert dict(memo) == {"c": 3}


def test_keeping_a_known_key_in_a_full_memo_replaces_only_it() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo.keep("a", 1)
    memo.keep("b", 2)
    memo.keep("a", 10)
    assert dict(memo) == {"a": 10, "b": 2}


def test_a_memo_without_room_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        BoundedMemo(0)


def test_the_rest_servers_host_memo_is_bounded() -> None:
    hosts = HostDefaults()
    for number in range(200):
        environ = {"wsgi.url_scheme": "http", "HTTP_HOST": f"h{number}.example", "PATH_INFO": "/"}
        host = hosts.lookup(environ)
        assert hosts.lookup(environ) is host  # one object per host while it is kept
    assert 0 < len(hosts._hosts) <= hosts._hosts.limit
