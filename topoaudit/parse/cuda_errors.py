"""The CUDA errors that show up in pasted failures, by the text ``cudaGetErrorString`` prints for them.

nccl-tests prints ``Test CUDA failure common.cu:941 'system not yet initialized'`` and NCCL before 2.19
prints ``Cuda failure 'invalid argument'``: the text without its number. The texts are the CUDA runtime's
(identical for the driver API in every capture seen); the numbers are ``cudaError_t`` / ``CUresult``.
"""

from __future__ import annotations

import re

CUDA_ERROR_TEXTS: dict[str, int] = {
    "invalid argument": 1,
    "out of memory": 2,
    "initialization error": 3,
    "CUDA driver version is insufficient for CUDA runtime version": 35,
    "CUDA driver is a stub library": 34,
    "CUDA-capable device(s) is/are busy or unavailable": 46,
    "no CUDA-capable device is detected": 100,
    "invalid device ordinal": 101,
    "invalid device context": 201,
    "uncorrectable ECC error encountered": 214,
    "peer access is not supported between these two devices": 217,
    "uncorrectable NVLink error detected during the execution": 220,
    "the operation cannot be performed in the present state": 401,
    "an illegal memory access was encountered": 700,
    "peer access is already enabled": 704,
    "peer access has not been enabled": 705,
    "unspecified launch failure": 719,
    "operation not permitted": 800,
    "operation not supported": 801,
    "system not yet initialized": 802,
    "system has unsupported display driver / cuda driver combination": 803,
    "unknown error": 999,
}
"""cudaGetErrorString text -> error number, for the errors users paste (CUDA 13.0 runtime texts)."""

_NUMBERED = re.compile(r"(?:CUDA error|Cuda failure)\s+(\d{1,4})\b", re.I)


def cuda_error_number(text: str) -> int | None:
    """The CUDA error a failure's text names: a printed number (``Cuda failure 802 '...'``), else its known text."""
    m = _NUMBERED.search(text)
    if m is not None:
        return int(m.group(1))
    lowered = text.lower()
    for known, number in CUDA_ERROR_TEXTS.items():
        if known.lower() in lowered:
            return number
    return None
