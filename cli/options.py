"""The options several ``lama-dice`` commands share, each declared once here.

A command adds the ones it takes with these helpers, so that an option has the same
spelling, type, checks and meaning everywhere:

* ``--seed S`` (:func:`add_seed`): an integer 0..2**63 - 1 (:data:`lama_env.reader.MAX_SEED`);
* ``--workers W`` (:func:`add_workers`): processes, 0 = all cores; never changes a result;
* ``--json [OUT]`` (:func:`add_json`): write the command's JSON to OUT; ``-`` or no OUT:
  standard output (the table, if any, then goes to stderr);
* ``--no-progress`` (:func:`add_progress`);
* ``--streams`` (:func:`add_streams`), retired: a usage error naming its replacement (:func:`add_retired`);
* ``--rule KEY=VALUE`` (:func:`add_rules`, read with :func:`rules_from_args`): a
  :class:`lama_env.rules.RulesConfig` field, repeatable, on every command that plays games
  under rules of the user's choosing (``evaluate``, ``solve``, ``play``).

Bad values are refused by argparse with its usage line and one error line naming the option.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lama_env.rules import RulesConfig

__all__ = ["add_json", "add_progress", "add_retired", "add_rules", "add_seed", "add_streams", "add_workers", "at_least",
           "parse_rules", "rules_from_args"]


def at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer of at least ``low`` (and at most ``high``; else argparse's usage error).

    A whole number in scientific notation (``1e6``, ``2.5e5``) is that integer, as in the YAML configs.
    Text of more than 30 characters is refused before it is converted (no 4,300-digit integers).
    """

    def parse(text: str) -> int:
        if len(text.strip()) > 30:
            raise argparse.ArgumentTypeError(f"not an integer of at most 30 characters: {text[:40]!r}...")
        try:
            value = int(text)
        except ValueError:
            try:
                number = float(text)
            except ValueError:
                number = math.nan
            if not (math.isfinite(number) and number.is_integer()):
                raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
            value = int(number)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}" if high is None else f"integer {low}..{high}"
    return parse


def add_seed(p: argparse.ArgumentParser, default: int | None = 0, help: str | None = None) -> None:
    """``--seed S``: an integer 0..2**63 - 1 (``default``; None: a fresh seed, or the config's).

    The bound is :data:`lama_env.reader.MAX_SEED`, the one every seed keeps (play, evaluate, the envs).
    """
    from lama_env.reader import MAX_SEED

    shown = f"default {default}" if default is not None else "default: a fresh one"
    p.add_argument("--seed", type=at_least(0, MAX_SEED), default=default, metavar="S",
                   help=help or f"random seed, an integer 0..2**63 - 1 ({shown})")


def add_workers(p: argparse.ArgumentParser, what: str = "processes to play in") -> None:
    """``--workers W``: processes (default 1; 0 = all cores); the result does not depend on it."""
    p.add_argument("--workers", type=at_least(0), default=1, metavar="W",
                   help=f"{what} (default 1; 0 = all cores); does not change the result")


class _Retired(argparse.Action):
    """A retired option: using it is a usage error whose one line names its replacement (:func:`add_retired`)."""

    def __init__(self, option_strings: list[str], dest: str, instead: str = "", what: str = "", **kw: Any) -> None:
        self.instead, self.what = instead, what
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS, **kw)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from lama_env.errors import retired

        name = option_string or self.dest
        parser.error(retired(f"{name} ({self.what})" if self.what else name, self.instead))


def add_retired(p: argparse.ArgumentParser, option: str, instead: str, what: str = "") -> None:
    """A retired ``option`` (with or without a value): hidden from ``--help``; given, one line naming ``instead``.

    ``what``: what the option chose, said after its name (``"the python backend's NumPy streams"``).
    """
    p.add_argument(option, action=_Retired, instead=instead, what=what, default=argparse.SUPPRESS)


def add_streams(p: argparse.ArgumentParser) -> None:
    """``--streams`` (retired in 0.2.0): the python evaluation backend plays only the compiled engine's streams."""
    from lama_env.errors import INSTEAD_OF_STREAMS

    add_retired(p, "--streams", INSTEAD_OF_STREAMS, "the python backend's NumPy streams")


def add_json(p: argparse.ArgumentParser, what: str = "the results") -> None:
    """``--json [OUT]``: write ``what`` as JSON to OUT (``-`` or no OUT: standard output)."""
    p.add_argument("--json", metavar="OUT", nargs="?", const="-", default=None,
                   help=f"write {what} as JSON to OUT ('-' or no OUT: standard output; the table then goes "
                        "to stderr)")


def add_progress(p: argparse.ArgumentParser) -> None:
    """``--no-progress``: no progress bar or lines."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_rules(p: argparse.ArgumentParser) -> None:
    """``--rule KEY=VALUE`` (repeatable): a rules-config field (docs/RULES.md, "Rules configuration")."""
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rules-config field, repeatable, e.g. --rule end_threshold=20 --rule "
                        "triple_llama=also_match --rule must_discard=false (default: the printed rules)")


#: The longest ``--rule`` value read (characters): the longest, a custom ``dice``, takes about 200.
MAX_RULE_CHARS = 10_000


def parse_rules(items: list[str], base: dict[str, Any] | None = None) -> RulesConfig:
    """``["end_threshold=20", ...]`` -> ``RulesConfig(end_threshold=20)`` (values parsed as JSON when they can be).

    ``base``: fields set before the items (an item of the same key wins).

    Raises:
        lama_env.rules.RulesError: an item that is not ``KEY=VALUE``, an unknown rules field or a bad value,
            a value the bounded reader refuses (:mod:`lama_env.reader`: a huge integer, deep nesting, a
            duplicate key), in one line.
    """
    from lama_env.errors import clip
    from lama_env.reader import InputError, NotJsonError, read_json
    from lama_env.rules import RulesConfig, RulesError

    out: dict[str, Any] = dict(base or {})
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RulesError(f"--rule must be KEY=VALUE, got {clip(item)}")
        try:
            out[key.strip()] = read_json(value, f"--rule {clip(key.strip(), 40)}", max_chars=MAX_RULE_CHARS)
        except NotJsonError:
            out[key.strip()] = value
        except InputError as e:
            raise RulesError(str(e)) from None
    return RulesConfig.from_dict(out)


def rules_from_args(args: argparse.Namespace, base: dict[str, Any] | None = None) -> RulesConfig:
    """The rules of a command's ``--rule`` items (:func:`parse_rules`)."""
    return parse_rules(list(getattr(args, "rule", None) or []), base)
