"""Embedders: the packaged local model, any OpenAI-compatible endpoint, a deterministic one;
a reranker over any Cohere-style rerank endpoint, and a chat model over any OpenAI-compatible
chat endpoint."""
