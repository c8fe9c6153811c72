"""The release's Croissant 1.0 manifest (JSON-LD, mlcommons.org/croissant) with the responsible-AI (RAI 1.0) fields.

One FileObject per open Parquet table (with its sha256) and one RecordSet per table whose fields read its columns.
"""

from __future__ import annotations

import polars as pl

from benchmark_platform.release.datasheet import ReleaseSummary

CROISSANT = "http://mlcommons.org/croissant/1.0"
CROISSANT_RAI = "http://mlcommons.org/croissant/RAI/1.0"

CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def _data_type(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "sc:Boolean"
    if dtype.is_integer():
        return "sc:Integer"
    if dtype.is_float():
        return "sc:Float"
    return "sc:Text"


def _id(name: str) -> str:
    return name.replace("/", "_")


def croissant(summary: ReleaseSummary, tables: dict[str, tuple[str, pl.DataFrame, str, str]]) -> dict[str, object]:
    """`tables`: table name -> (relative path, frame, sha256, description); tables with columns get a record set."""
    s = summary
    distribution, record_sets = [], []
    for name, (path, frame, sha256, description) in tables.items():
        file_id = f"file_{_id(name)}"
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": file_id,
                "name": file_id,
                "contentUrl": path,
                "encodingFormat": "application/x-parquet",
                "sha256": sha256,
            }
        )
        if not frame.columns:
            continue
        record_sets.append(
            {
                "@type": "cr:RecordSet",
                "@id": _id(name),
                "name": _id(name),
                "description": description,
                "field": [
                    {
                        "@type": "cr:Field",
                        "@id": f"{_id(name)}/{column}",
                        "name": f"{_id(name)}/{column}",
                        "dataType": _data_type(dtype),
                        "source": {"fileObject": {"@id": file_id}, "extract": {"column": column}},
                    }
                    for column, dtype in frame.schema.items()
                ],
            }
        )
    findings = s.table("audit_findings")
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": [CROISSANT, CROISSANT_RAI],
        "name": f"{s.spec_name}_{s.version.replace('.', '_')}",
        "description": f"{s.description.strip()} Canary: {s.canary}",
        "version": f"{s.version.removeprefix('v')}.0",
        "license": s.licence,
        "url": f"releases/{s.spec_name}/{s.version}/",
        "citeAs": f"{s.spec_name} benchmark {s.version}, built with benchmark_platform",
        "creator": {"@type": "sc:Organization", "name": "benchmark_platform"},
        "keywords": ["benchmark", "multiple choice", "question answering", s.spec_name],
        "isLiveDataset": False,
        "distribution": distribution,
        "recordSet": record_sets,
        # responsible-AI fields (Croissant RAI 1.0), filled from the release's own tables
        "rai:dataCollection": s.collection(),
        "rai:dataCollectionType": ["Web Scraping", "Secondary Data Analysis"],
        "rai:dataCollectionRawData": "Source documents are stored with URL, retrieval time and content hash; "
        "data/facts.parquet links every fact to its document by URL and sha256.",
        "rai:dataCollectionMissingData": "Disciplines or sources without usable facts yield no items; see the "
        "datasheet's per-discipline table.",
        "rai:dataPreprocessingProtocol": [
            "Extraction of atomic facts as spans of stored documents",
            "Removal of near-duplicate facts",
            "Per-discipline fact selection by the selection stage",
        ],
        "rai:dataAnnotationProtocol": (
            f"Labels are the facts' values; {findings['agent'].n_unique() if findings.height else 0} audit agents "
            "checked every item; the audit policy dropped items with a critical failure, relabelled difficulty and "
            "disclosed closed-book solvability (data/audit_findings.parquet, data/audit_actions.parquet)."
        ),
        "rai:dataAnnotationPlatform": "benchmark_platform audit stage (Dagster asset graph)",
        "rai:machineAnnotationTools": s.generators or ["none"],
        "rai:dataUseCases": [
            "Evaluating the factual domain knowledge of language models per discipline, difficulty "
            "and generation strategy."
        ],
        "rai:dataBiases": [note for note in s.limitations() if "template" in note or "uneven" in note]
        or ["Coverage follows the selected sources and may be uneven across disciplines."],
        "rai:dataLimitations": s.limitations(),
        "rai:dataSocialImpact": "Measures model knowledge of a specialist domain; errors in sources propagate into "
        "items, so results should not be read as expert certification.",
        "rai:personalSensitiveInformation": "No personal data beyond names of businesses or persons as published in "
        "the public sources.",
        "rai:dataReleaseMaintenancePlan": "Versions are kept side by side and never overwritten by a new version; "
        "each can be verified and rebuilt byte for byte from its manifest.",
    }
