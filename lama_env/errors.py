"""The project's user-facing error type: every error of bad input is a :class:`LamaDiceError`, printed on one line."""


import reprlib


class LamaDiceError(Exception):
    """Base class of errors whose message is meant for the user."""


QUOTE_LIMIT = 60  #: The most characters of user input an error message quotes (:func:`clip`).
MESSAGE_LIMIT = 1000  #: The most characters of a whole error message the command line prints (:func:`bounded`).


class _Repr(reprlib.Repr):
    """:class:`reprlib.Repr` that never turns a huge integer into text (Python refuses past 4300 digits)."""

    def repr_int(self, x: int, level: int) -> str:
        """``x`` as text, or its size in digits when it is longer than the quote limit."""
        if x.bit_length() > 4 * self.maxlong:  # about 1.2 digits per 4 bits: over maxlong digits
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)


def clip(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` on one line of about ``limit`` characters, never built in full (a cut one says its size)."""
    r = _Repr()
    r.maxlevel, r.maxstring, r.maxother, r.maxlong = 3, limit, limit, limit
    r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = r.maxdict = r.maxdeque = r.maxarray = 12
    text = r.repr(value).replace("\n", " ")
    if len(text) > limit:
        text = text[:limit] + "..."
    if isinstance(value, list | tuple | dict | set | frozenset) and len(value) > 12:
        text += f" ({len(value)} items)"
    elif isinstance(value, str) and len(value) > limit:
        text += f" ({len(value)} chars)"
    return text


def bounded(message: str, limit: int = MESSAGE_LIMIT) -> str:
    """``message`` on one line and at most about ``limit`` characters (what the command line prints)."""
    text = " ".join(message.split("\n"))
    if len(text) > limit:
        return f"{text[:limit]}... (message cut: {len(text)} chars)"
    return text


#: The version that retired the compatibility modes (issue 50: the NumPy-generator games, ``--streams``,
#: the suites ``lama-dice-suite/1`` and ``/2``, the env ``lama_dice_v0``) and the last version that had them.
RETIRED_IN, LAST_WITH = "0.2.0", "0.1.0"


class RetiredError(LamaDiceError):
    """A retired option, mode or version was asked for; the message (:func:`retired`) names what replaced it."""


def retired(what: str, instead: str, *, retired_in: str = RETIRED_IN, last: str = LAST_WITH) -> str:
    """The one line a retired thing answers: ``"X was retired in 0.2.0 (0.1.0 was the last version with it): ..."``."""
    return f"{what} was retired in {retired_in} ({last} was the last version with it): {instead}"


#: What replaced the NumPy streams (``--streams``, ``evaluate(streams=...)``, ``LamaGame(rng=Generator)``).
INSTEAD_OF_STREAMS = ("the compiled engine's streams are the only ones (game i of a seed is the same game on every "
                      "backend, with any chunk size and workers): drop it")
#: What replaced the suites ``lama-dice-suite/1`` and ``/2`` (``--suite 1``, ``--suite 2``).
INSTEAD_OF_SUITES = ("use lama-dice-suite/3 (--suite 3, the default: /2's tasks, seeds and game counts on the compiled "
                     "engine's streams); a saved /1 or /2 score card still shows on the Results page of "
                     "lama-dice serve --results DIR")
