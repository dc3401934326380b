"""Package data, not code: what a first start copies into a data dir (installed as ``ai_memory.data_template``)."""
