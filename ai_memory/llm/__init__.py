"""Optional LLM providers: settings, the two wire formats, and JSON answers checked against a schema.

Nothing here runs unless ``llm.provider`` is set. The layer above decides what to ask
(``coordination.consolidation``, ``retrieval.llm_rerank``); this one only talks to the model
and refuses any answer that is not the JSON it asked for.
"""
