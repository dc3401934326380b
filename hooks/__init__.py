"""Package data, not code: the POSIX shell hook client (installed as ``ai_memory.hooks``)."""
