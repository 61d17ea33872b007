"""The ``pegasus`` command line: one module per command group."""
