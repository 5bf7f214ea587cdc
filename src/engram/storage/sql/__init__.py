"""The SQL both backends speak, written once: a dialect for what differs, a transaction
that runs statements in it, and the rows of every table the core reads and writes."""
