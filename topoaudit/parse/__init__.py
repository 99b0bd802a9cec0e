"""Pure text -> dataclasses parsers for captured command output. No I/O beyond the text given."""
