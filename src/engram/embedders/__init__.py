"""Embedders: the packaged local model, any OpenAI-compatible endpoint, a deterministic one;
and a reranker over any Cohere-style rerank endpoint."""
