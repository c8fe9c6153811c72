"""generation stage core."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.generation.distractors import type_label
    from benchmark_platform.generation.model import COMPARISON_ASKS, asked_question, norm, value_type
    from benchmark_platform.generation.plan import expected_calls, generation_is_automatic
    from benchmark_platform.generation.run import generate_discipline
    from benchmark_platform.generation.strategies import PROMPTS_DIR
    from benchmark_platform.generation.templates import MULTI_VALUE, numeric
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "COMPARISON_ASKS",
    "MULTI_VALUE",
    "PROMPTS_DIR",
    "asked_question",
    "expected_calls",
    "generate_discipline",
    "generation_is_automatic",
    "norm",
    "numeric",
    "type_label",
    "value_type",
]
