"""The NCCL topology file (``NCCL_TOPO_FILE``) this box should give NCCL: the PCIe switches above its GPUs and
NICs, their NUMA nodes and NVLinks, built from a probe or a saved report (:mod:`.build`) and written as NCCL's
XML (:mod:`.write`)."""
