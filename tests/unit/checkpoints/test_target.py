"""checkpoints.target: DEEP_RESEARCH_CHECKPOINTS read, checked, and named without its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from deep_research.checkpoints.target import (
    DEFAULT_SQLITE,
    VARIABLE,
    CheckpointsConfigError,
    Target,
    target_from,
)
from deep_research.config.names import ConfigError

PASSWORD = "s3cret-Pa55word"


@pytest.mark.parametrize("value", ["", "   "])
def test_unset_or_empty_is_the_local_sqlite_file(value: str) -> None:
    target = target_from({VARIABLE: value} if value else {})
    assert target == Target(sqlite=DEFAULT_SQLITE) and not target.shared
    assert target.describe() == "SQLite .deep_research/checkpoints.sqlite"
    moved = target_from({}, sqlite=Path("/x/c.sqlite"))
    assert moved.sqlite == Path("/x/c.sqlite")


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "POSTGRESQL"])
def test_a_postgres_url_is_named_without_its_password(scheme: str) -> None:
    dsn = f"{scheme}://research:{PASSWORD}@db.internal:6543/runs"
    target = target_from({VARIABLE: dsn})
    assert target.shared and target.dsn == dsn
    assert target.describe() == "PostgreSQL research@db.internal:6543/runs"
    assert target.password() == PASSWORD


def test_a_quoted_password_is_scrubbed_in_both_forms() -> None:
    target = target_from({VARIABLE: "postgresql://u:p%40ss%2Fw0rd@h/db"})
    assert target.password() == "p@ss/w0rd"
    text = target.scrub("failed for p@ss/w0rd and p%40ss%2Fw0rd")
    assert "p@ss/w0rd" not in text and "p%40ss%2Fw0rd" not in text


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("mysql://u:" + PASSWORD + "@h/db", "must be a postgresql://"),
        ("sqlite:///tmp/x.sqlite", "must be a postgresql://"),
        ("host=h dbname=d password=" + PASSWORD, "must be a postgresql://"),
        ("host=db password='hunter two' dbname=x", "must be a postgresql://"),
        ("host=db password='it\\'s two' dbname=x", "must be a postgresql://"),
        ("postgresql://u:" + PASSWORD + "@/db", "names no host"),
        ("postgresql://u:" + PASSWORD + "@h:5432", "names no database"),
        ("postgresql://u:" + PASSWORD + "@h:99999/db", "not a valid URL"),
    ],
)
def test_a_bad_value_is_a_config_error_that_does_not_quote_the_password(
    value: str, says: str
) -> None:
    with pytest.raises(CheckpointsConfigError, match=says) as caught:
        target_from({VARIABLE: value})
    assert isinstance(caught.value, ConfigError)  # the CLI's exit code 2
    assert VARIABLE in str(caught.value)
    assert PASSWORD not in str(caught.value)
    assert "two" not in str(caught.value)  # not a word of a quoted password


@pytest.mark.parametrize(
    "password", ["pa/ss-Zq9xWk", "123/45-Zq9xWk", "pa?ss-Zq9xWk", "pa#ss-Zq9xWk"]
)
def test_a_password_with_an_unencoded_separator_is_refused_without_a_piece_of_it(
    password: str,
) -> None:
    """urlsplit would read its start as the port or all of it as the database's name."""
    with pytest.raises(CheckpointsConfigError, match="percent-encode") as caught:
        target_from({VARIABLE: f"postgresql://u:{password}@h:5432/db"})
    pieces = {password[i : i + 3] for i in range(len(password) - 2)}
    assert [piece for piece in pieces if piece in str(caught.value)] == []


def test_a_targets_repr_holds_no_password() -> None:
    target = target_from({VARIABLE: f"postgresql://u:{PASSWORD}@h/db"})
    assert PASSWORD not in repr(target) and PASSWORD not in str(target)


def test_a_huge_hostile_value_is_quoted_short_and_without_control_codes() -> None:
    with pytest.raises(CheckpointsConfigError) as caught:
        target_from({VARIABLE: "\x1b[2J" + "x" * 100_000})
    assert "\x1b" not in str(caught.value) and len(str(caught.value)) < 300


def test_a_password_given_as_a_parameter_is_scrubbed_too() -> None:
    target = target_from({VARIABLE: f"postgresql://u@h/db?password={PASSWORD}&sslmode=disable"})
    assert target.describe() == "PostgreSQL u@h/db"
    assert target.password() == PASSWORD
    assert PASSWORD not in target.scrub(f"it said {PASSWORD} and password={PASSWORD}")


@pytest.mark.parametrize("password", ["e", "ex", "exp", "pi"])
def test_a_short_password_is_scrubbed_where_it_stands_and_no_word_is_shredded(
    password: str,
) -> None:
    target = target_from({VARIABLE: f"postgresql://u:{password}@127.0.0.1:5/db"})
    assert target.password() == password
    said = "connection timeout expired; pipe ended"
    assert target.scrub(said) == said
    echoed = f'postgresql://u:{password}@127.0.0.1:5/db: bad "{password}" (password={password})'
    scrubbed = target.scrub(echoed)
    assert password not in scrubbed.replace("postgresql", "").replace("password", "")
    assert scrubbed.count("[REDACTED]") == 3, scrubbed


def test_a_long_password_is_scrubbed_even_inside_other_text() -> None:
    target = target_from({VARIABLE: f"postgresql://u:{PASSWORD}@h/db"})
    assert target.scrub(f"timeout expired near x{PASSWORD}y") == (
        "timeout expired near x[REDACTED]y"
    )
