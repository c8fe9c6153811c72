"""The item-bank stage for one discipline: read and validate the whole bank file, then replace the discipline's
imported items in one transaction. A bad file raises ItemBankError before anything is written."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benchmark_platform.itembank.config import ItemBankConfig
from benchmark_platform.itembank.persist import store_bank_items
from benchmark_platform.itembank.read import BankFile, bank_path, read_item_bank
from benchmark_platform.store import Database


@dataclass(frozen=True)
class BankImport:
    file: str
    sha256: str
    file_items: int  # every imported row of the file (all disciplines)
    excluded_items: int  # rows of categories the spec leaves out on purpose (item_bank.excluded)
    items: int  # this discipline's
    removed: int  # this discipline's bank items no longer in the file
    by_source: dict[str, int]


@lru_cache(maxsize=4)
def _cached(config_json: str, spec: str | None, path: Path, mtime_ns: int, size: int) -> BankFile:
    """Partitions of one run read the same file: validate it once per content (path, mtime, size)."""
    return read_item_bank(ItemBankConfig.model_validate_json(config_json), path.parent, spec)


def load_bank(config: ItemBankConfig, base_dir: Path, spec: str | None = None) -> BankFile:
    """The validated bank; item ids are the spec's (`bank_item_prefix`), `<bank id>-<upstream id>` without one."""
    path = bank_path(config, base_dir)
    if not path.is_file():
        return read_item_bank(config, base_dir, spec)  # raises the named error
    stat = path.stat()
    absolute = config.model_copy(update={"path": path})
    return _cached(absolute.model_dump_json(), spec, path, stat.st_mtime_ns, stat.st_size)


def import_discipline(
    db: Database, spec_name: str, base_dir: Path, config: ItemBankConfig, discipline: str
) -> BankImport:
    bank = load_bank(config, base_dir, spec_name)
    mine = bank.for_discipline(discipline)
    counts = store_bank_items(db, spec_name, discipline, config, bank, mine)
    return BankImport(
        file=bank.path.name,
        sha256=bank.sha256,
        file_items=len(bank.items),
        excluded_items=len(bank.excluded),
        items=counts["items"],
        removed=counts["removed"],
        by_source=dict(sorted(Counter(item.stratum_key for item in mine).items())),
    )
