"""The one YAML reader of the platform (spec, `!include`, anchors, workspace): PyYAML's SafeLoader plus limits.

PyYAML shares an aliased node instead of copying it, so a 665-byte file of nested aliases loads fast but every
later walk (validation, JSON, hashing) expands it to billions of nodes. Before anything is constructed, the document's
expanded size is counted over the node graph (memoised per node, so counting is linear in the file) and refused past
a small alias budget; duplicate mapping keys are refused (PyYAML keeps the later one silently); size and bracket
nesting are checked before parsing (the composer recurses once per level). Every refusal is one line naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from benchmark_platform.inputs import InputError, InputLimits, check_nesting

MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class YamlLimits:
    """Defaults fit every bundled file with a wide margin (the largest, wine's facts.yaml, is 32 KB)."""

    max_bytes: int = 8 * 2**20
    max_depth: int = 64
    # nodes that aliases add when expanded: a shared block of models or defaults reused a few times is far below it
    alias_budget: int = 20_000


YAML_LIMITS = YamlLimits()


class YamlError(InputError):
    """A YAML file refused by the limits or the parser; the message starts with the file."""


class SafeLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping key given twice (merge keys `<<` may be overridden, as YAML intends)."""

    budget: Budget

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"duplicate key {key!r} (first on line {seen[key]}); keep one",
                            key_node.start_mark,
                        )
                    seen[key] = key_node.start_mark.line + 1
                except TypeError:
                    continue  # an unhashable key: the base constructor reports it
        return super().construct_mapping(node, deep=deep)


class Budget:
    """Expanded nodes still allowed; shared by a file and everything it `!include`s."""

    def __init__(self, nodes: int, files: int = 256) -> None:
        self.left = nodes
        self.files = files  # `!include`s too are expansion (a file including another nine times, nested)

    def spend(self, where: str, nodes: int, limits: YamlLimits) -> None:
        self.left -= nodes
        if self.left < 0:
            raise YamlError(
                f"{where}: aliases expand beyond the budget of {limits.alias_budget:,} nodes (an alias bomb, or a "
                "reused block too big to copy): write the repeated parts out"
            )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _expanded(root: yaml.Node, where: str, limits: YamlLimits) -> tuple[int, int]:
    """(nodes of the document as written, nodes once every alias is expanded), without recursion; a structure that
    contains itself (`&a [*a]`) is refused."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            children = _children(node)
            size[key] = 1 + sum(size[id(c)] for c in children)
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            open_nodes.discard(key)
            if depth[key] > limits.max_depth:
                raise YamlError(f"{where}: nested {depth[key]} levels deep, over the limit of {limits.max_depth}")
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise YamlError(f"{where}: an alias refers to a block that contains it (line {node.start_mark.line + 1})")
        open_nodes.add(key)
        stack.append((node, True))
        stack += [(child, False) for child in _children(node) if id(child) not in size]
    return len(size), size[id(root)]


def load_text(
    text: str,
    where: str,
    loader: type[SafeLoader] = SafeLoader,
    limits: YamlLimits = YAML_LIMITS,
    budget: Budget | None = None,
    name: str | None = None,
) -> Any:
    """The document in `text` (`where` names it in errors; `name` is the loader's file name, for `!include`)."""
    if len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise YamlError(f"{where}: over the limit of {limits.max_bytes:,} bytes for a YAML file")
    if "\x00" in text:
        raise YamlError(f"{where}: a NUL character: this is not a text file")
    try:
        check_nesting(where, text, InputLimits(max_depth=limits.max_depth))
    except InputError as exc:
        raise YamlError(str(exc)) from None
    budget = budget or Budget(limits.alias_budget)
    budget.files -= 1
    if budget.files < 0:
        raise YamlError(f"{where}: too many files read for one document (`!include`s); merge some of them")
    instance = loader(text)
    if name is not None:
        instance.name = name
    instance.budget = budget
    try:
        node = instance.get_single_node()
        if node is None:
            return None
        written, expanded = _expanded(node, where, limits)
        budget.spend(where, expanded - written, limits)
        return instance.construct_document(node)
    except RecursionError:
        raise YamlError(f"{where}: nested too deeply to read") from None
    except yaml.YAMLError as exc:
        raise YamlError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    finally:
        instance.dispose()


def read_yaml(
    path: Path, loader: type[SafeLoader] = SafeLoader, limits: YamlLimits = YAML_LIMITS, budget: Budget | None = None
) -> Any:
    """The YAML document of a UTF-8 file, within the limits."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise YamlError(f"{path}: {exc.strerror or exc}") from None
    if size > limits.max_bytes:
        raise YamlError(f"{path}: {size:,} bytes, over the limit of {limits.max_bytes:,} bytes for a YAML file")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError(f"{path}: not UTF-8 (byte {exc.start}: {exc.reason}); save the file as UTF-8") from None
    except OSError as exc:
        raise YamlError(f"{path}: {exc.strerror or exc}") from None
    return load_text(text.removeprefix("\ufeff"), str(path), loader, limits, budget, name=str(path))
