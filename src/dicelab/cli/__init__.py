"""The ``dicelab`` command line (layer 3): thin Typer commands over library functions."""
