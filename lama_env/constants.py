"""The game's tables and constants: the bottom floor of ``lama_env``, importing nothing of it.

Every module reads the game's numbers here; the modules that document them keep them importable
(docs/environments.md, The rules engine in Python). Face index 0 is the llama ``"L"``, index ``k`` the number ``k``.
"""

from __future__ import annotations

from itertools import product

# ------------------------------------------------------------------ faces, deck, dice, players (docs/RULES.md)
#: Face names in index order: ``FACES[0] == "L"``, ``FACES[k] == str(k)``.
FACES: tuple[str, ...] = ("L", "1", "2", "3", "4", "5", "6")
NUM_FACES = 7  #: Number of distinct faces.
LLAMA = 0  #: Index of the llama face.
FACE_INDEX: dict[str, int] = {f: i for i, f in enumerate(FACES)}  #: Map from face name to index.
#: Cards of each face in the 36-card deck (six llamas, five of each number).
DECK_COUNTS: tuple[int, ...] = (6, 5, 5, 5, 5, 5, 5)
#: The 36-card deck as face indices, in face order (the engines deal from it).
DECK: tuple[int, ...] = tuple(f for f, k in enumerate(DECK_COUNTS) for _ in range(k))
HAND_SIZE = 6  #: Cards dealt to each player at the start of a round.
MIN_PLAYERS, MAX_PLAYERS = 1, 6  #: Supported player counts (1 is the solo variant).
NUM_DICE, DIE_SIDES = 3, 6  #: Number of dice, and faces on each die.
#: The default dice of docs/RULES.md, as face names (die order matters).
DEFAULT_DICE: tuple[tuple[str, ...], ...] = (("1", "2", "3", "4", "L", "L"), ("3", "4", "5", "6", "L", "L"),
                                              ("1", "2", "5", "6", "L", "L"))
TRIPLE_LLAMA_MODES = ("chip_only", "also_match")  #: The values of :attr:`lama_env.rules.RulesConfig.triple_llama`.
#: The default cap of turns per round (:attr:`~lama_env.rules.RulesConfig.max_round_turns`): far above any real
#: round (of over 12,000 rounds of `random` and `always-roll` players the longest had 34 turns: docs/RULES.md).
DEFAULT_MAX_ROUND_TURNS = 1000
#: The largest ``end_threshold`` a rules config accepts (the compiled engines hold totals as 32-bit integers).
MAX_END_THRESHOLD = 1_000_000_000
MAX_ROUND_TURNS_LIMIT = 1_000_000  #: The largest cap of turns per round a rules config accepts.

# ------------------------------------------------------------------ the action space (lama_env.actions)
ROLL, QUIT, TAKE_BASE = 0, 1, 2
DISCARD_BASE = TAKE_BASE + NUM_FACES

#: Every discard multiset (counts per face), in action order: by size, then lexicographically.
DISCARDS: tuple[tuple[int, ...], ...] = tuple(sorted(
    (c for c in product(range(NUM_DICE + 1), repeat=NUM_FACES) if sum(c) <= NUM_DICE),
    key=lambda c: (sum(c), tuple(-x for x in c))))
#: Map from a counts tuple to its action index.
DISCARD_ACTION: dict[tuple[int, ...], int] = {c: DISCARD_BASE + i for i, c in enumerate(DISCARDS)}
NUM_ACTIONS = DISCARD_BASE + len(DISCARDS)  #: Size of the flat action space.

# ------------------------------------------------------------------ rounds and rolls (lama_env.transitions)
#: How a round can end (the ``ended_by`` field of a replay result); ``"turn_cap"``: the round reached
#: :attr:`~lama_env.rules.RulesConfig.max_round_turns` turns and was cut (:func:`lama_env.transitions.cut_round`).
ROUND_ENDINGS = ("went_out", "row_empty", "bust", "all_quit", "turn_cap")
WENT_OUT, ROW_EMPTY, BUST, ALL_QUIT, TURN_CAP = ROUND_ENDINGS

#: How a roll resolves (the first element of :func:`lama_env.transitions.apply_roll`'s result).
ROLL_TRIPLE_LLAMA = "triple_llama"  #: chip_only triple llama: a chip is returned, nothing else happens
ROLL_DISCARD = "discard"  #: a die matches the display: choose a discard
ROLL_TAKE = "take"  #: no match, not the last player, a die shows a row face: choose a take
ROLL_BUST = BUST  #: nothing matches: the whole row goes into the display and the round ends ("bust")

#: The llama row at the start of a round (one card of each face) and once it is used up.
FULL_ROW: tuple[int, ...] = (1,) * NUM_FACES
EMPTY_ROW: tuple[int, ...] = (0,) * NUM_FACES

# ------------------------------------------------------------------ formats
#: The format of a game record (:meth:`lama_env.engine.LamaGame.to_record`, :mod:`lama_env.record`).
RECORD_FORMAT = "lama-dice-record/1"

# ------------------------------------------------------------------ the compiled engine's codes (lama_env._kernel)
#: Phases of a game in the compiled record (the engine's Phase.TURN, DISCARD, TAKE; a round that ends is scored
#: by the step that ends it).
TURN, DISCARD, TAKE = 0, 1, 2
#: What the compiled step returns: the round goes on, the round ended (the game goes on), the game ended.
CONTINUES, ROUND_OVER, GAME_OVER = 0, 1, 2
LOG_ROUND, LOG_QUIT, LOG_ROLL, LOG_END = 0, 1, 2, 3  #: Log entry tags.
OUT_TRIPLE, OUT_DISCARD, OUT_TAKE, OUT_BUST = 0, 1, 2, 3  #: Roll outcomes in a ``LOG_ROLL`` entry.
#: ``ended_by`` codes: indices into :data:`ROUND_ENDINGS`.
END_WENT_OUT, END_ROW_EMPTY, END_BUST, END_ALL_QUIT, END_TURN_CAP = (
    ROUND_ENDINGS.index(e) for e in (WENT_OUT, ROW_EMPTY, BUST, ALL_QUIT, TURN_CAP))
#: Kinds of native policy: uniform over the legal actions; a turn decision by table over the display's faces, the
#: largest discard and a take by rank table.
KIND_RANDOM, KIND_TABLE = 0, 1
#: Log entries one step may add at most, beyond ``8 N``: a roll (7), a round's end (3 + 2N), a deal (2 + 6N).
LOG_ROOM = 16

# ------------------------------------------------------------------ the random streams (lama_env.streams)
# splitmix64 (counter-based): the Python draws (lama_env.streams) and the compiled ones (lama_env._kernel).
MASK64, GOLDEN, M1, M2 = (1 << 64) - 1, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
POLICY_SALT = 0xD1B54A32D192ED03
