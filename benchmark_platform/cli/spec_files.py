"""`spec check`'s file pass (it crosses stages, so it lives with the CLI, not in one stage's core): open and validate every file a spec names for its bank-side stages (issue 32): the item bank, the results imports,
each discipline's anchor files, and whether the anchors' lower quotas can be met by the bank. The same readers (and
so the same one-line errors) as `run`; no database, no Dagster. Each problem is one line naming the stage, the file
and the field; notes say what will happen without being errors (a discipline without anchors goes to manual review).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from benchmark_platform.anchors import has_anchor_files, load_anchor_set
from benchmark_platform.itembank import BankFile, load_bank
from benchmark_platform.spec import BenchmarkSpec


@dataclass
class FileCheck:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    opened: int = 0  # files read


def check_spec_files(spec: BenchmarkSpec) -> FileCheck:
    out = FileCheck()
    bank: BankFile | None = None
    if spec.item_bank is not None:
        out.opened += 1
        try:
            bank = load_bank(spec.item_bank, spec.directory, spec.name)
        except ValueError as exc:
            out.problems.append(f"bank_items: item_bank.path: {_line(exc)}")
    known = {item.item_id for item in bank.items} if bank else set()
    for i, entry in enumerate(spec.evaluation.imports):
        from benchmark_platform.evaluation import read_results_import  # polars: only for a spec with imports

        if entry.format == "answers_csv" and spec.item_bank is not None and bank is None:
            continue  # scored against the bank, whose error is already reported
        out.opened += 1
        try:
            frame = read_results_import(entry, spec.directory)
        except (ValueError, OSError) as exc:
            out.problems.append(f"evaluation_answers: evaluation.imports.{i}.path: {_line(exc)}")
            continue
        if entry.item_bank and bank is not None:
            unknown = sorted(set(frame["item_id"]) - known)
            if unknown:
                out.problems.append(
                    f"evaluation_answers: evaluation.imports.{i}.path: {spec.directory / entry.path}: "
                    f"{len(unknown)} item ids are not in the bank, e.g. {unknown[0]!r}"
                )
    items_by_discipline = Counter(item.discipline for item in bank.items) if bank else Counter()
    for discipline in spec.discipline_keys:
        folder = spec.anchors_dir / discipline
        if not has_anchor_files(folder):
            if spec.item_bank is not None and items_by_discipline[discipline]:
                out.notes.append(
                    f"{discipline}: no anchor files in {folder}: its selection goes to manual review and ships "
                    "nothing (derive anchors: python -m benchmark_platform.itembank.derived_anchors SPEC TOTAL)"
                )
            continue
        out.opened += 1
        try:
            anchors = load_anchor_set(folder)
        except ValueError as exc:
            out.problems.append(f"anchors: {_line(exc)}")
            continue
        if bank is None:
            continue
        mapping = anchors.stratum_map()
        counts = Counter(mapping.get(i.stratum_key) for i in bank.items if i.discipline == discipline)
        for stratum in anchors.strata:
            if counts[stratum.name] < stratum.lower:
                out.problems.append(
                    f"selected_items: {folder / 'strata.csv'}: stratum {stratum.name!r} field 'lower': needs at least "
                    f"L_h={stratum.lower} items but the bank has {counts[stratum.name]} of discipline {discipline!r} "
                    "in it (lower it, or map more of the bank's stratum keys to it in `keys`)"
                )
        if not items_by_discipline[discipline]:
            out.notes.append(f"{discipline}: no bank items map to it: nothing to select")
    return out


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())
