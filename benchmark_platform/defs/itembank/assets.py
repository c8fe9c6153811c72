"""Item bank: a discipline's existing items imported from the spec's bank file (JSONL, CSV or Parquet) into `items`,
each with its provenance (file sha256, row, upstream id). A bad file fails the run naming file, row and field, and
nothing is written."""

import dagster as dg

from benchmark_platform.defs.common import (
    SINGLE_RUN,
    DatabaseResource,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.inputs.versions import ITEM_BANK_FILE, settings_hash
from benchmark_platform.itembank import ItemBankError, import_discipline
from benchmark_platform.spec import BenchmarkSpec

BANK_ITEMS = "bank_items"


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    bank = spec.item_bank
    if bank is None:
        return dg.Definitions()

    @dg.asset(
        key=key(spec, BANK_ITEMS),
        partitions_def=discipline_partitions(spec),
        group_name="itembank",
        deps=[key(spec, ITEM_BANK_FILE)],
        code_version=f"item-bank-1-{bank.id}-{settings_hash(bank)}",
        # one run for a range: the data version (the bank file's hash) is the same for every discipline
        backfill_policy=SINGLE_RUN,
        pool=stage_pool(BANK_ITEMS),
        description=f"Items of the bank {bank.path} ({bank.licence}) whose category maps to the discipline, with "
        "their provenance; replaced as a whole per discipline.",
    )
    def bank_items(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            try:
                done = import_discipline(database.db, spec.name, spec.directory, bank, discipline)
            except ItemBankError as exc:
                staged = exc.in_stage(f"bank_items[{discipline}]")  # stage, file, row, field; nothing was written
                raise dg.Failure(str(staged)) from staged
            context.log.info(f"{discipline}: {done.items} items from {done.file} (sha256 {done.sha256[:12]})")
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(
                        items=done.items,
                        file_items=done.file_items,
                        excluded_items=done.excluded_items,  # categories left out on purpose, with no home
                        removed=done.removed,
                    ),
                    "file": done.file,
                    "file_sha256": done.sha256,
                    "licence": bank.licence,
                    "items_by_stratum_key": dg.MetadataValue.json(done.by_source),
                },
                data_version=dg.DataVersion(done.sha256[:16]),
            )

        return per_partition(context, one)

    return dg.Definitions(assets=[bank_items])
