"""Pure data: frozen dataclasses and the functions over them. No I/O, no pynvml/torch/rich/click."""
