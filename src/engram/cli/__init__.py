"""The ``engram`` command line: a thin shell over the library (see :mod:`engram.cli.main`)."""
