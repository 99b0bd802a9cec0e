"""Built-in policies (``--policy builtin:NAME``): one TOML file per common instance shape."""
