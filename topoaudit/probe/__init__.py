"""The live probe: NVML, ``nvidia-smi`` and sysfs -> a :class:`~topoaudit.probe.snapshot.Snapshot`.

This package is the only one that imports ``pynvml`` (in :mod:`topoaudit.probe.nvml`, loaded only when a
probe runs) or runs ``nvidia-smi`` (:mod:`topoaudit.probe.smi`). Reading a saved snapshot
(:mod:`topoaudit.probe.snapshot`) and turning it into a Machine (:mod:`topoaudit.probe.interpret`) needs neither.
"""
