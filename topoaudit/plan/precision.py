"""Bytes per parameter of every weight format the planner knows, each factor with where it comes from.

A factor is decimal GB per billion parameters, which is the same number as bytes per parameter.
Two kinds of factor live here:

* **exact** -- the format stores every weight at one width and its scales are negligible or counted
  exactly from the block layout (FP32, BF16, FP8, INT8, GGUF Q8_0).
* **typical** -- a whole checkpoint mixes widths: block scales, layers left unquantised (embeddings,
  the output head, routers, norms), or a GGUF "_M"/"_S" mix that keeps some tensors at higher precision.
  The factor is the typical whole-file average; a real checkpoint can differ by a few percent, so give
  ``--weights-gb`` when you know the file size.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.errors import ConfigError


@dataclass(frozen=True)
class Precision:
    """One weight format."""

    key: str  # canonical lower-case name, e.g. "int4", "q4_k_m"
    bytes_per_param: float  # == GB per billion parameters
    kind: str  # "exact" | "typical"
    basis: str  # how the factor was derived (shown in the plan's arithmetic)
    aliases: tuple[str, ...] = ()


# llama.cpp's tools/quantize/README.md table (Llama 2 7B, whole file, bits per weight) is the source of
# the GGUF mix averages; the block sizes come from ggml's k-quant layout (Q4_K 4.5 bpw, Q6_K 6.5625...).
_LLAMA_CPP = "llama.cpp tools/quantize README, whole-file bits per weight (Llama 2 7B)"

PRECISIONS: tuple[Precision, ...] = (
    Precision("fp32", 4.0, "exact", "32 bits per weight", ("float32", "f32")),
    Precision("bf16", 2.0, "exact", "16 bits per weight", ("bfloat16",)),
    Precision("fp16", 2.0, "exact", "16 bits per weight", ("float16", "f16", "half")),
    Precision(
        "fp8",
        1.0,
        "exact",
        "8 bits per weight; per-tensor/per-block scales are <1% (744B at FP8 = 744 GB)",
        ("e4m3", "e5m2", "fp8_e4m3", "w8a8-fp8"),
    ),
    Precision("int8", 1.0, "exact", "8 bits per weight; per-channel scales are <1%", ("w8a8", "w8a16")),
    Precision(
        "int4",
        0.55,
        "typical",
        "4 bits (0.5 B) + a 10% allowance for group scales (an FP16 scale and zero point per 128 "
        "weights add 0.03 B) and layers left at 16 bits (embeddings, output head) = 0.55 B per parameter",
        ("w4a16", "awq", "gptq", "4bit"),
    ),
    Precision(
        "mxfp4",
        0.55,
        "typical",
        "4-bit values + one 8-bit E8M0 scale per 32 = 4.25 bits (0.53 B), plus unquantised "
        "layers; sized like INT4 (0.55)",
        ("mx-fp4",),
    ),
    Precision(
        "nvfp4",
        0.62,
        "typical",
        "4-bit values + one FP8 scale per 16 = 4.5 bits (0.5625 B), plus layers kept in FP8/BF16; "
        "GLM-5.3 NVFP4 (753B, MIXED_PRECISION) is 464 GB = 0.616 GB per billion",
        ("nv-fp4",),
    ),
    Precision("q8_0", 1.0625, "exact", "GGUF Q8_0: 32 int8 + one fp16 scale = 8.5 bits per weight"),
    Precision("q6_k", 6.56 / 8, "typical", f"GGUF Q6_K: 6.56 bits per weight ({_LLAMA_CPP})"),
    Precision("q5_k_m", 5.68 / 8, "typical", f"GGUF Q5_K_M: 5.68 bits per weight ({_LLAMA_CPP})"),
    Precision("q5_k_s", 5.52 / 8, "typical", f"GGUF Q5_K_S: 5.52 bits per weight ({_LLAMA_CPP})"),
    Precision("q4_k_m", 4.84 / 8, "typical", f"GGUF Q4_K_M: 4.84 bits per weight ({_LLAMA_CPP})"),
    Precision("q4_k_s", 4.58 / 8, "typical", f"GGUF Q4_K_S: 4.58 bits per weight ({_LLAMA_CPP})"),
    Precision("q4_0", 4.5 / 8, "exact", "GGUF Q4_0: 32 4-bit + one fp16 scale = 4.5 bits per weight"),
    Precision("q3_k_l", 4.27 / 8, "typical", f"GGUF Q3_K_L: 4.27 bits per weight ({_LLAMA_CPP})"),
    Precision("q3_k_m", 3.91 / 8, "typical", f"GGUF Q3_K_M: 3.91 bits per weight ({_LLAMA_CPP})"),
    Precision("q3_k_s", 3.50 / 8, "typical", f"GGUF Q3_K_S: 3.50 bits per weight ({_LLAMA_CPP})"),
    Precision(
        "q2_k",
        3.35 / 8,
        "typical",
        f"GGUF Q2_K: 3.35 bits per weight, the 2.56-bit blocks mixed with Q4_K tensors ({_LLAMA_CPP})",
    ),
)

KV_PRECISIONS: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
"""Bytes per KV-cache element by cache precision (vLLM ``--kv-cache-dtype``: auto = the model's 16-bit)."""


def _norm(text: str) -> str:
    return text.strip().lower().replace("-", "_").replace(" ", "")


def find_precision(name: str) -> Precision:
    """The format for a name such as ``int4``, ``BF16``, ``nvfp4`` or ``Q4_K_M``; ConfigError if unknown."""
    wanted = _norm(name)
    for p in PRECISIONS:
        if wanted == p.key or wanted in (_norm(a) for a in p.aliases):
            return p
    raise ConfigError(
        f"unknown precision {name!r}",
        hint="known: " + ", ".join(p.key for p in PRECISIONS),
    )


def kv_bytes_per_element(name: str) -> float:
    """Bytes per KV-cache element for ``bf16``/``fp16``/``fp8``/``int8``/``fp32``/``int4``; ConfigError if unknown."""
    wanted = _norm(name)
    aliases = {"auto": "bf16", "float16": "fp16", "bfloat16": "bf16", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8"}
    wanted = aliases.get(wanted, wanted)
    if wanted not in KV_PRECISIONS:
        raise ConfigError(f"unknown KV-cache precision {name!r}", hint="known: " + ", ".join(sorted(KV_PRECISIONS)))
    return KV_PRECISIONS[wanted]
