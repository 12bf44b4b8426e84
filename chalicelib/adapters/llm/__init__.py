"""LLM adapters: OpenAI-compatible (`openai_compat.py`) and Bedrock Converse (`bedrock.py`), on
the shared `base.JsonLLM`."""
