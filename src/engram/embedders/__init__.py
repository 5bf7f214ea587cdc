"""Embedders: the packaged local model, any OpenAI-compatible endpoint, a deterministic one."""
