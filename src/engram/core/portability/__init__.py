"""A scope's memory in portable records: export, import, importers."""
