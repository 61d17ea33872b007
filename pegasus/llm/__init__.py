"""The language model behind the write path: any OpenAI-compatible endpoint."""

from pegasus.llm.client import LLM, LLMConfig, Reply, ToolCall
from pegasus.model import Usage

__all__ = ["LLM", "LLMConfig", "Reply", "ToolCall", "Usage"]
