"""A `--db` value gives its secret only through an explicit call: printed any way, a URL's
password is masked; a file's location is path-like, a URL's is not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.core.store_url import StoreLocation, plain

URL = "postgresql://ann:s3cr%40t-pw@db.example:5432/study?sslpassword=k3y"


def test_a_store_location_is_not_a_str_and_prints_masked() -> None:
    location = StoreLocation(URL)
    assert not isinstance(location, str)
    percent = "%s" % (location,)  # noqa: UP031
    shown_ways = (str(location), f"{location}", f"{location:>80}", repr(location), percent)
    for shown in shown_ways:
        assert "s3cr" not in shown and "k3y" not in shown
        assert "db.example" in shown
    assert location.secret_text() == URL == plain(location)
    assert location.is_url and location.stem == "study"


def test_a_url_is_not_a_path() -> None:
    with pytest.raises(TypeError, match="not a file path") as caught:
        Path(StoreLocation(URL))
    assert "s3cr" not in str(caught.value)
    with pytest.raises(TypeError):
        os.fspath(StoreLocation(URL))


def test_a_file_location_is_path_like(tmp_path: Path) -> None:
    location = StoreLocation(tmp_path / "study.db")
    assert Path(location) == tmp_path / "study.db"
    assert str(location) == os.fspath(location) == plain(location)
    assert location.stem == "study" and not location.is_url
    assert StoreLocation(location) == location and len({location, StoreLocation(location)}) == 1


@given(st.text(min_size=1, max_size=12).filter(lambda s: ":" not in s and "@" not in s))
def test_any_password_stays_hidden(password: str) -> None:
    from urllib.parse import quote

    url = f"postgresql://user:{quote(password, safe='')}@host/db"
    location = StoreLocation(url)
    assert f"{location}" == str(location) == "postgresql://user:***@host/db"
    assert location.secret_text() == url
