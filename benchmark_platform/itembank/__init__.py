"""Item banks: existing items (JSONL, CSV or Parquet) imported into `items` per discipline, with provenance."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.itembank.read import BankFile, ItemBankError, csv_records, decode_text, parse_key
    from benchmark_platform.itembank.run import import_discipline, load_bank
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "BankFile",
    "ItemBankError",
    "csv_records",
    "decode_text",
    "import_discipline",
    "load_bank",
    "parse_key",
]
