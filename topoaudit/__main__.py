"""`python -m topoaudit` runs the CLI."""

from topoaudit.cli import main

if __name__ == "__main__":
    main()
