"""LamaGame's members retired in 0.3.0 (and ``next_round`` in 0.2.0) answer with one line naming the replacement.

``lama_env.engine.RETIRED_MEMBERS`` lists them; reading one raises
:class:`lama_env.engine.RetiredMemberError`, a :class:`lama_env.errors.RetiredError` and an
``AttributeError`` (so ``hasattr`` is False), and the class keeps at most 30 public members.
The modules and names that moved from ``lama_env`` to ``lama_dice`` in 0.4.0 (``lama_env.moved.MOVED``) answer
the same way, with a ``MovedError`` (a ``RetiredError`` and an ``ImportError``).
"""

from __future__ import annotations

import importlib

import pytest
from conftest import play_random

from lama_env import actions as A
from lama_env.engine import RETIRED_MEMBERS, LamaGame, RetiredMemberError
from lama_env.errors import RetiredError
from lama_env.moved import MOVED, MovedError


def _games() -> list[LamaGame]:
    """A fresh game, one at a chance node in the middle of a round and one at its end."""
    mid = LamaGame(3, seed=2, chance="explicit")
    while mid.is_chance_node():
        mid.sample_chance()
    mid.step(A.ROLL)
    assert mid.is_chance_node()
    over = play_random(2, seed=5)
    assert over.game_over
    return [LamaGame(2, seed=0), mid, over]


@pytest.mark.parametrize("name", sorted(RETIRED_MEMBERS))
def test_each_retired_member_answers_one_line_naming_its_replacement(name):
    for g in _games():
        before = g.serialize()
        with pytest.raises(RetiredMemberError) as e:
            getattr(g, name)
        text = str(e.value)
        assert "\n" not in text and len(text) < 300, text
        assert text.startswith(f"LamaGame.{name}") and "retired in" in text, text
        assert text.endswith(RETIRED_MEMBERS[name]), text
        assert isinstance(e.value, RetiredError) and isinstance(e.value, AttributeError)
        assert not hasattr(g, name)
        assert g.serialize() == before  # asking changed nothing


def test_an_unknown_member_is_a_plain_attribute_error():
    g = LamaGame(2, seed=0)
    with pytest.raises(AttributeError, match="'LamaGame' object has no attribute 'no_such_member'") as e:
        g.no_such_member  # noqa: B018
    assert not isinstance(e.value, RetiredError)
    assert hasattr(g, "clone") and hasattr(g, "last_round") and hasattr(g, "displays")


def test_lama_game_has_at_most_30_public_members_and_none_retired():
    public = sorted(name for name in vars(LamaGame) if not name.startswith("_"))
    assert len(public) <= 30, public
    assert not set(public) & set(RETIRED_MEMBERS)



@pytest.mark.parametrize("old", sorted(MOVED))
def test_each_moved_module_or_name_answers_one_line_naming_its_new_import(old):
    """``import lama_env.animation``, ``from lama_env import atomic``, ``from lama_env.reader import read_yaml``."""
    module, _, name = old.rpartition(".")
    attempts = [lambda: getattr(importlib.import_module(module), name)]  # from MODULE import NAME
    if module == "lama_env":  # a whole module: import lama_env.NAME too
        attempts.append(lambda: importlib.import_module(old))
    for attempt in attempts:
        with pytest.raises(MovedError) as e:
            attempt()
        assert str(e.value) == f"{old} was retired in 0.4.0 (0.3.0 was the last version with it): {MOVED[old]}"
        assert isinstance(e.value, ImportError) and isinstance(e.value, RetiredError)
    words = MOVED[old].split()  # what it names imports (and holds the name)
    assert words[1].endswith(f".{name}") or words[-1] in vars(importlib.import_module(words[1]))
