"""The bounded YAML reader of training configs: :mod:`lama_env.reader`'s bounds, on PyYAML's ``SafeLoader``.

A key given twice in one mapping, nesting deeper than :data:`~lama_env.reader.MAX_DEPTH`, integers over
:data:`~lama_env.reader.MAX_INT`, floats that are not finite, and aliases that expand past :data:`MAX_NODES`
items or contain themselves are refused in one line (:class:`~lama_env.reader.InputError`)
(docs/agents-and-evaluation.md, Inputs and their limits).
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import Any

from lama_env.errors import clip
from lama_env.reader import MAX_DEPTH, MAX_INT, InputError, check_tree

__all__ = ["MAX_NODES", "read_yaml", "yaml_loader"]

#: The most items a YAML document may expand to through its aliases (a config has a few hundred).
MAX_NODES = 1_000_000


@cache
def yaml_loader() -> type:
    """PyYAML's ``SafeLoader`` within the bounds: depth, integers, finite floats, no duplicate key, ``1e6`` a number.

    ``1e6`` and ``3e-4`` are numbers, as in YAML 1.2 (PyYAML reads them as strings); keys a merge
    (``<<: *base``) brings in may be overridden.
    """
    import yaml
    from yaml.composer import ComposerError
    from yaml.constructor import ConstructorError

    class BoundedLoader(yaml.SafeLoader):
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > MAX_DEPTH:
                    raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                        self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node: Any) -> int:
            text = str(self.construct_scalar(node)).replace("_", "")
            if len(text) > 80:  # 2**63 in binary is 65 characters; longer is no integer we keep
                raise ConstructorError(None, None, f"an integer of {len(text):,} characters (integers are at "
                                                   "most 2**63 - 1)", node.start_mark)
            value = int(super().construct_yaml_int(node))
            if abs(value) > MAX_INT:
                raise ConstructorError(None, None, "an integer too large (integers are at most 2**63 - 1)",
                                       node.start_mark)
            return value

        def construct_yaml_float(self, node: Any) -> float:
            value = float(super().construct_yaml_float(node))
            if not math.isfinite(value):
                raise ConstructorError(None, None, f"{clip(node.value)} is not a finite number", node.start_mark)
            return value

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                seen: dict[Any, int] = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    try:
                        first = seen.get(key)
                    except TypeError:  # an unhashable key: PyYAML's own error follows
                        continue
                    if first is not None:
                        raise ConstructorError(
                            None, None, f"duplicate key {clip(key)} (first at line {first + 1}; a key may be "
                                        "given once per mapping)", key_node.start_mark)
                    seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)
    BoundedLoader.add_constructor("tag:yaml.org,2002:float", BoundedLoader.construct_yaml_float)
    BoundedLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
        list("-+0123456789"))
    return BoundedLoader


def read_yaml(text: str | bytes, what: str = "the input") -> Any:
    """The YAML value of ``text`` (``None`` for an empty document), read with :func:`yaml_loader`.

    Raises:
        InputError: not UTF-8, not YAML (with its line and column), or any of the bounds broken.
    """
    import yaml

    at = f"{what}: " if what else ""  # (none when what is empty: the caller names it)
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{at}not a UTF-8 text file") from None
    try:
        data = yaml.load(text, Loader=yaml_loader())  # a SafeLoader: plain data only
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(f"{at}invalid YAML{where}: {problem}") from None
    except RecursionError:
        raise InputError(f"{at}nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as e:  # a conversion PyYAML leaves unchecked (a timestamp out of range, ...)
        raise InputError(f"{at}invalid YAML: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return check_tree(data, what, MAX_NODES)
