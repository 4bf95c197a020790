"""The command line: one module per command group, `main` gathers them."""
