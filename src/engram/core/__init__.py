"""The domain of engram: scopes, working memory, facts, recall ranking, forks.

Pure Python (plus numpy for vectors): no database drivers, no web framework.
"""
