"""The pictures of the table: the envs' render modes (docs/environments.md, Pictures) and ``lama-dice show``.

:func:`picture` (``rgb_array``; from sprites drawn once with Pillow, imported on first use) and :func:`render_text`
(``ansi``); the ``human`` window is :mod:`lama_env.viewer`'s. No gym import.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import actions as A
from .constants import DISCARD, TAKE
from .roundend import DECISIONS, RoundEnd, ended, is_round_end, turns
from .rules import FACES, NUM_FACES, score_display, winners
from .safetext import safe_text

if TYPE_CHECKING:
    from .engine import LamaGame

WIDTH = 640  #: Frame width in pixels (every player count).
_HEADER_H, _TABLE_H, _ROW_H, _FOOTER_H = 40, 88, 100, 32

# ------------------------------------------------------------------ colours
_Color = tuple[int, int, int]
_HEADER_BG, _HEADER_FG, _HEADER_DIM = (38, 50, 56), (255, 255, 255), (176, 190, 197)
_TABLE_BG, _TABLE_FG, _ROW_FG, _ROW_DIM = (46, 110, 78), (214, 236, 220), (33, 33, 33), (117, 117, 117)
_ROW_BG, _ACT_BG, _QUIT_BG = (247, 244, 236), (255, 242, 194), (222, 222, 222)
_ACCENT, _GLOW, _WINNER, _BUST = (46, 125, 50), (255, 111, 0), (191, 144, 0), (198, 40, 40)
#: Card colour and label colour of each face (index order: L, 1..6), as in the terminal's colours:
#: gold with a brown label, red, magenta, blue, cyan, green, white.
_WHITE: _Color = (255, 255, 255)
_FACE_COLORS: tuple[tuple[_Color, _Color], ...] = (
    ((242, 193, 78), (93, 64, 55)), ((229, 83, 83), _WHITE), ((171, 92, 196), _WHITE), ((66, 117, 214), _WHITE),
    ((38, 166, 184), _WHITE), ((67, 160, 71), _WHITE), ((236, 236, 236), (55, 55, 55)))

# ------------------------------------------------------------------ layout (pixels)
_ROW_CARD, _ROW_X, _ROW_PITCH, _ROW_Y = (30, 42), 14, 38, 30  # llama-row cards: (w, h) without the outline margin
_DIE, _DICE_X, _DICE_PITCH, _DICE_Y = 46, 330, 56, 30
_CARD, _CARD_X, _CARD_PITCH, _CARD_Y = (38, 54), 184, 47, 6  # display cards
_PAD, _NAME_X, _NAME_W = 3, 30, 148  # _PAD: the outline margin around every card sprite
_POINTS_CX, _TOTAL_CX, _TURN_CX = 560, 612, 586
_TIMES = "\u00d7"  # the multiplication sign of the card counts
_ENDINGS = {"row_empty": "the llama row is empty", "all_quit": "everyone quit"}


def frame_shape(num_players: int) -> tuple[int, int, int]:
    """``(height, width, 3)`` of the pictures of a ``num_players`` game (constant for a player count)."""
    return (_HEADER_H + _TABLE_H + _ROW_H * num_players + _FOOTER_H, WIDTH, 3)


# ------------------------------------------------------------------ sprites (Pillow, drawn once)
@functools.cache
def _font(size: int, bold: bool = True) -> Any:
    """A Pillow font of ``size`` pixels: DejaVu Sans, matplotlib's (a dependency; found without importing it)."""
    from PIL import ImageFont

    spec = importlib.util.find_spec("matplotlib")
    assert spec is not None and spec.origin is not None
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf" / name), size)


def _fit(text: str, size: int, bold: bool, width: int) -> str:
    """``text`` (as :func:`~lama_env.safetext.safe_text`), cut short with an ellipsis to at most ``width`` pixels."""
    text = safe_text(text)
    font = _font(size, bold)
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "…") > width:
        text = text[:-1]
    return text + "…"


def start_line(name: str, width: int) -> str:
    """The header's ``start: NAME`` in ``width`` pixels: the whole name, else its seat (``P5``), never cut mid-word."""
    for text in (f"start: {name}", f"start: {name.split()[0] if name.split() else name}"):
        if _font(13, False).getlength(text) <= width:
            return text
    return _fit(text, 13, False, width)


@functools.lru_cache(maxsize=4096)
def _text(text: str, size: int, fg: _Color, bg: _Color, bold: bool = True) -> np.ndarray:
    """``text`` drawn on ``bg`` (an opaque sprite, one line high; shown as :func:`~lama_env.safetext.safe_text`)."""
    from PIL import Image, ImageDraw

    text = safe_text(text)
    font = _font(size, bold)
    im = Image.new("RGB", (max(1, int(np.ceil(font.getlength(text))) + 1), int(sum(font.getmetrics()))), bg)
    ImageDraw.Draw(im).text((0, 0), text, font=font, fill=fg)
    return _frozen(np.asarray(im))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.uint8)
    a.setflags(write=False)
    return a


def _mix(a: _Color, b: _Color, t: float) -> _Color:
    """``a`` moved a fraction ``t`` of the way to ``b``."""
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


_SCALE = 4  # sprites are drawn this many times larger, then shrunk (smooth edges)


def _canvas(w: int, h: int, bg: _Color) -> tuple[Any, Any]:
    """A Pillow image of ``w`` x ``h`` pixels :data:`_SCALE` times larger, filled with ``bg``, and its pen."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (w * _SCALE, h * _SCALE), bg)
    return im, ImageDraw.Draw(im)


def _shrink(im: Any, size: tuple[int, int]) -> np.ndarray:
    from PIL import Image

    return _frozen(np.asarray(im.resize(size, Image.Resampling.LANCZOS)))


@functools.cache
def _card(face: int, style: str, bg: _Color, w: int, h: int) -> np.ndarray:
    """A card of ``face``, ``w`` x ``h`` plus the outline margin, on ``bg``; ``style``: card, glow, faded or slot."""
    s = _SCALE
    fill, ink = _FACE_COLORS[face]
    border = _mix(fill, (0, 0, 0), 0.25)
    if style == "faded":
        fill, ink, border = _mix(fill, bg, 0.6), _mix(ink, bg, 0.6), _mix(border, bg, 0.6)
    elif style == "slot":
        fill, ink, border = bg, _mix(bg, (0, 0, 0), 0.14), _mix(bg, (0, 0, 0), 0.14)
    big_w, big_h = (w + 2 * _PAD) * s, (h + 2 * _PAD) * s
    im, d = _canvas(w + 2 * _PAD, h + 2 * _PAD, bg)
    if style == "glow":
        d.rounded_rectangle((0, 0, big_w - 1, big_h - 1), radius=9 * s, fill=_GLOW)
    box = (_PAD * s, _PAD * s, big_w - 1 - _PAD * s, big_h - 1 - _PAD * s)
    d.rounded_rectangle(box, radius=6 * s, fill=fill, outline=border, width=2 * s)
    d.text((big_w / 2, big_h / 2), FACES[face], font=_font(int(h * 0.62) * s), fill=ink, anchor="mm")
    return _shrink(im, (w + 2 * _PAD, h + 2 * _PAD))


_PIPS = {1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)], 4: [(0, 0), (0, 2), (2, 0), (2, 2)],
         5: [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)], 6: [(0, 0), (0, 2), (1, 0), (1, 2), (2, 0), (2, 2)]}


@functools.cache
def _die(face: int | None, bg: _Color, size: int) -> np.ndarray:
    """A die showing ``face`` (pips; the llama as a gold die with an ``L``), or an empty place (None)."""
    s = _SCALE
    big = size * s
    im, d = _canvas(size, size, bg)
    fill = None if face is None else _FACE_COLORS[0][0] if face == 0 else (250, 250, 250)
    outline = _mix(bg, (255, 255, 255), 0.3) if face is None else (60, 60, 60)
    d.rounded_rectangle((s, s, big - 1 - s, big - 1 - s), radius=8 * s, fill=fill, outline=outline, width=2 * s)
    if face == 0:
        d.text((big / 2, big / 2), "L", font=_font(int(size * 0.62) * s), fill=_FACE_COLORS[0][1], anchor="mm")
    elif face is not None:
        r = size * 0.09 * s
        for row, col in _PIPS[face]:
            cx, cy = big * (0.27 + 0.23 * col), big * (0.27 + 0.23 * row)
            d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=(33, 33, 33))
    return _shrink(im, (size, size))


@functools.cache
def _marker(bg: _Color) -> np.ndarray:
    """The triangle that points at the player to act."""
    s = _SCALE
    im, d = _canvas(16, 20, bg)
    d.polygon([(1 * s, 1 * s), (15 * s, 10 * s), (1 * s, 19 * s)], fill=_ACCENT)
    return _shrink(im, (16, 20))


def _put(out: np.ndarray, sprite: np.ndarray, x: int, y: int) -> None:
    """Paste ``sprite`` with its top-left corner at ``(x, y)`` (clipped to ``out``)."""
    h, w = min(sprite.shape[0], out.shape[0] - y), min(sprite.shape[1], out.shape[1] - x)
    if h > 0 and w > 0 and x >= 0 and y >= 0:
        out[y:y + h, x:x + w] = sprite[:h, :w]


def _put_text(out: np.ndarray, text: str, x: int, y: int, size: int, fg: _Color, bg: _Color,
              bold: bool = True, align: str = "left") -> None:
    sprite = _text(text, size, fg, bg, bold)
    _put(out, sprite, x - {"center": sprite.shape[1] // 2, "right": sprite.shape[1]}.get(align, 0), y)


def _label(name: str) -> tuple[str, int]:
    """A seat's name for its row, and its font size: smaller for a long name, cut short if still too long."""
    if _font(17).getlength(name) <= _NAME_W:
        return name, 17
    return _fit(name, 14, True, _NAME_W), 14


# ------------------------------------------------------------------ words (shared with the web table)
_TAG_COLORS: dict[str, _Color] = {"winner": _WINNER, "went out": _ACCENT, "bust": _BUST, "to act": _ACCENT}


def status_text(game: LamaGame | RoundEnd, names: Sequence[str]) -> str:
    """The header line: whose decision it is (``"P1 to discard"``), or how the round or game ended."""
    phase = game.phase
    if phase in DECISIONS:
        return f"{names[game.current_player]} {DECISIONS[phase]}"
    end = ended(game) or {}
    if end.get("went_out") is not None:
        how = f"{names[end['went_out']]} went out"
    elif end.get("busted") is not None:
        how = f"{names[end['busted']]} went bust"
    else:
        how = _ENDINGS.get(str(end.get("ended_by")), str(end.get("ended_by")))
    if is_round_end(game):
        return f"Round over: {how}"
    if game.num_players == 1:
        return f"Game over: {game.totals[0]} points"
    won = winners(game.totals)
    who = " and ".join(names[w] for w in won)
    verb = "share the win" if len(won) > 1 else "win" if who == "You" else "wins"
    return f"Game over: {who} {verb}"


def seat_tag(game: LamaGame | RoundEnd, p: int) -> str:
    """A seat's tag: ``"to act"``, ``"quit"``, at a round's end ``"winner"``, ``"went out"``, ``"bust"``; or ``""``."""
    end = ended(game)
    if end is not None:
        if game.game_over and p in winners(game.totals) and game.num_players > 1:
            return "winner"
        if end["went_out"] == p:
            return "went out"
        if end["busted"] == p:
            return "bust"
    elif p == game.current_player:
        return "to act"
    return "quit" if game.quit[p] else ""


def palette() -> dict[str, Any]:
    """The picture's colours as ``#rrggbb`` strings for the web page: named ones, ``faces`` (``[card, label]``)."""
    hx = "#{:02x}{:02x}{:02x}".format
    named = {"header": _HEADER_BG, "header_text": _HEADER_FG, "header_dim": _HEADER_DIM, "table": _TABLE_BG,
             "table_text": _TABLE_FG, "row": _ROW_BG, "acting": _ACT_BG, "quit": _QUIT_BG, "text": _ROW_FG,
             "dim": _ROW_DIM, "accent": _ACCENT, "glow": _GLOW, "winner": _WINNER, "bust": _BUST}
    out: dict[str, Any] = {k: hx(*v) for k, v in named.items()}
    out["faces"] = [[hx(*card), hx(*ink)] for card, ink in _FACE_COLORS]
    return out


# ------------------------------------------------------------------ the picture
class TablePicture:
    """Draws the table of ``num_players`` (1..6) games; pre-draws the background once.

    ``names``: a name per seat (default ``player_0``, ...; long ones cut short); ``highlight``: a seat whose
    name gets a ``*`` (a Gym env's learner).
    """

    def __init__(self, num_players: int, names: Sequence[str] | None = None, highlight: int | None = None) -> None:
        """Check the names and draw the background."""
        n = self.num_players = int(num_players)
        if names is None:
            names = [f"player_{p}" for p in range(n)]
        if len(names) != n:
            raise ValueError(f"names must give {n} names, got {len(names)}")
        self.names = tuple(safe_text(s) for s in names)
        self.highlight = highlight
        self.shape = frame_shape(n)
        self._labels = tuple(_label(s + (" *" if p == highlight else "")) for p, s in enumerate(self.names))
        self._short = tuple(_fit(s, 17, True, 170) for s in self.names)  # names in the header
        self._rows = {bg: self._row_background(bg) for bg in (_ROW_BG, _ACT_BG, _QUIT_BG)}
        base = np.empty(self.shape, dtype=np.uint8)
        base[:_HEADER_H] = _HEADER_BG
        base[_HEADER_H:_HEADER_H + _TABLE_H] = _TABLE_BG
        base[-_FOOTER_H:] = _HEADER_BG
        for text, x, align in (("llama row", _ROW_X, "left"), ("dice", _DICE_X, "left"), ("turn", _TURN_CX, "center")):
            _put_text(base, text, x, _HEADER_H + 7, 13, _TABLE_FG, _TABLE_BG, align=align)
        base[_HEADER_H + _TABLE_H:-_FOOTER_H] = np.tile(self._rows[_ROW_BG], (n, 1, 1))
        self._base = _frozen(base)

    @staticmethod
    def _row_background(bg: _Color) -> np.ndarray:
        row = np.empty((_ROW_H, WIDTH, 3), dtype=np.uint8)
        row[:] = bg
        row[-1] = _mix(bg, (0, 0, 0), 0.15)
        if bg == _ACT_BG:
            row[:-1, :5] = _ACCENT
        for cx, label in ((_POINTS_CX, "points"), (_TOTAL_CX, "total")):
            _put_text(row, label, cx, 14, 12, _ROW_DIM, bg, bold=False, align="center")
        return _frozen(row)

    def __call__(self, game: LamaGame | RoundEnd, dice: Sequence[Any] | None = None,
                 caption: str | None = None) -> np.ndarray:
        """The picture of ``game`` (read only) or of a :class:`~lama_env.roundend.RoundEnd`: a new ``uint8`` array.

        ``dice`` (face indices or names, just rolled) show when no roll is pending; ``caption`` is the bottom
        line (default: a note when one player is left).
        """
        n = self.num_players
        if game.num_players != n:
            raise ValueError(f"this picture is for {n} players, the game has {game.num_players}")
        out = self._base.copy()
        phase = game.phase
        over = game.game_over or is_round_end(game)  # the table of a round's end (a RoundEnd) or the game's
        cur = game.current_player
        pending = game.dice
        shown = pending if pending is not None else () if dice is None else dice
        shown = [FACES.index(f) if isinstance(f, str) else int(f) for f in shown]

        # header: round, status, start player; the table: llama row and dice; one row per seat; caption
        _put_text(out, f"Round {game.round_index + 1}", 12, 8, 20, _HEADER_FG, _HEADER_BG)
        status = _fit(status_text(game, self._short), 17, True, 380)
        _put_text(out, status, 128, 10, 17, _HEADER_FG, _HEADER_BG)
        room = WIDTH - 12 - 16 - 128 - int(_font(17, True).getlength(status))  # right of the status
        _put_text(out, start_line(self.names[game.start_player], max(room, 110)), WIDTH - 12, 13, 13,
                  _HEADER_DIM, _HEADER_BG, bold=False, align="right")

        row = game.row
        takeable = {a - A.TAKE_BASE for a in game.legal_actions()} if phase == TAKE else set()
        for f in range(NUM_FACES):
            style = ("glow" if f in takeable else "card") if row[f] else "slot"
            _put(out, _card(f, style, _TABLE_BG, *_ROW_CARD), _ROW_X + f * _ROW_PITCH, _HEADER_H + _ROW_Y)
        for i in range(3):
            face = shown[i] if i < len(shown) else None
            _put(out, _die(face, _TABLE_BG, _DIE), _DICE_X + i * _DICE_PITCH, _HEADER_H + _DICE_Y)
        _put_text(out, str(turns(game)), _TURN_CX, _HEADER_H + _DICE_Y + 6, 26, _HEADER_FG, _TABLE_BG,
                  align="center")

        end = ended(game)
        quit_ = game.quit
        cw, ch = _CARD
        for p in range(n):
            y = _HEADER_H + _TABLE_H + p * _ROW_H
            acting = not over and p == cur
            bg = _ACT_BG if acting else _QUIT_BG if quit_[p] and not over else _ROW_BG
            if bg != _ROW_BG:
                out[y:y + _ROW_H] = self._rows[bg]
            if acting:
                _put(out, _marker(bg), 9, y + 26)
            label, size = self._labels[p]
            _put_text(out, label, _NAME_X, y + 33 - size, size, _ROW_FG, bg)
            if tag := seat_tag(game, p):
                _put_text(out, tag, _NAME_X, y + 44, 14, _TAG_COLORS.get(tag, _ROW_DIM), bg)
            disp = game.displays[p]
            glow: Collection[int] = (() if not acting or pending is None or phase != DISCARD
                                     else {f for f in pending if disp[f]})
            faded = quit_[p] and not over
            for f in range(NUM_FACES):
                k = disp[f]
                x = _CARD_X + f * _CARD_PITCH
                style = "slot" if not k else "glow" if f in glow else "faded" if faded else "card"
                _put(out, _card(f, style, bg, cw, ch), x, y + _CARD_Y)
                if k:
                    _put_text(out, f"{_TIMES}{k}", x + cw // 2 + _PAD, y + _CARD_Y + ch + 2 * _PAD + 4, 14,
                              _ROW_DIM if faded else _ROW_FG, bg, align="center")
            pts = end["points"][p] if end is not None else score_display(disp)
            _put_text(out, str(pts), _POINTS_CX, y + 36, 26, _ROW_FG, bg, align="center")
            _put_text(out, str(game.totals[p]), _TOTAL_CX, y + 36, 26, _ROW_FG, bg, align="center")

        if caption is None and not over and n > 1 and quit_.count(False) == 1:
            caption = f"Only {self._short[cur]} is left: a roll that matches nothing is a bust."
        if caption:
            _put_text(out, _fit(caption, 14, False, WIDTH - 24), 12, self.shape[0] - _FOOTER_H + 7, 14,
                      _HEADER_FG, _HEADER_BG, bold=False)
        return out


#: A shared :class:`TablePicture` for a player count, names (a tuple) and highlight (cached).
table_picture = functools.lru_cache(maxsize=32)(TablePicture)


def picture(game: LamaGame, names: Sequence[str] | None = None, *, dice: Sequence[Any] | None = None,
            highlight: int | None = None, caption: str | None = None) -> np.ndarray:
    """The picture of ``game`` (read only): a new ``uint8`` array of :func:`frame_shape` ``(game.num_players)``.

    ``names`` and ``highlight`` as for :class:`TablePicture`, ``dice`` and ``caption`` as for its call.
    """
    draw = table_picture(game.num_players, None if names is None else tuple(names), highlight)
    return draw(game, dice=dice, caption=caption)


# ------------------------------------------------------------------ the text table (ansi)
def render_text(game: LamaGame | RoundEnd, names: Sequence[str] | None = None, highlight: int | None = None) -> str:
    """The table in a few lines of text (the ``ansi`` render mode; docs/environments.md, Pictures).

    A line per seat: ``>`` marks the player to decide, ``*`` the ``highlight``; its display, points, total, tag.
    """
    n = game.num_players
    if names is None:
        names = [f"player_{p}" for p in range(n)]
    labels = [names[p] + ("*" if p == highlight else "") for p in range(n)]
    width = max(4, max(len(s) for s in labels))
    phase = game.phase
    end = ended(game)
    how = end["ended_by"] if end else None
    head = f"Round {game.round_index + 1} · start {names[game.start_player]} · "
    if phase in DECISIONS:
        head += f"{names[game.current_player]} {DECISIONS[phase]}"
        if game.dice is not None:
            head += f" (dice {' '.join(FACES[f] for f in game.dice)})"
    elif is_round_end(game):
        head += f"round over ({how})"
    else:
        head += f"game over ({how}); winners: {', '.join(names[p] for p in winners(game.totals))}"
    row = " ".join(FACES[f] if game.row[f] else "·" for f in range(NUM_FACES))
    cards = [" ".join(FACES[f] for f in range(NUM_FACES) for _ in range(d[f])) or "(empty)" for d in game.displays]
    cw = max(12, max(len(c) for c in cards))
    lines = [head, f"llama row: {row}", f"  {'seat':<{width}}  {'display':<{cw}}  points  total"]
    deciding = game.current_player if phase in DECISIONS else None
    for p in range(n):
        status = "  [quit]" if game.quit[p] else ""
        if end is not None and p in (end["went_out"], end["busted"]):
            status = "  [bust]" if end["busted"] == p else "  [went out]"
        pts = end["points"][p] if end is not None else score_display(game.displays[p])
        mark = ">" if p == deciding else " "
        lines.append(f"{mark} {labels[p]:<{width}}  {cards[p]:<{cw}}  {pts:>6}  {game.totals[p]:>5}{status}")
    return "\n".join(lines)


__all__ = ["WIDTH", "TablePicture", "frame_shape", "palette", "picture", "render_text", "seat_tag",
           "status_text", "table_picture"]
