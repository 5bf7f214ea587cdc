"""Documents: text cut into chunks, each chunk a fact, re-ingested whole or not at all."""
