"""What the user asked to be written: a report file (``-o``), a bundle (``--out``), a redacted report (``--redact``).

:mod:`.files` is the one atomic writer, :mod:`.bundle` the ticket-ready directory, :mod:`.redact` the report
with hostnames, serials, UUIDs and addresses replaced by stable tokens.
"""
