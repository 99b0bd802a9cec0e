"""Maintenance commands for the repository (not part of the CLI)."""
