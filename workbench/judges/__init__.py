"""LLM judges: a client for OpenAI-compatible chat-completions servers and the default 0-3
prompt (umbrela.txt, in the manner of UMBRELA)."""
