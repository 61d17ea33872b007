"""Review: is a held entity the same as one of its candidates? The answer model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pegasus.prompts import prompt_text


class CandidateScore(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = ""


class ReviewAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    candidates: list[CandidateScore]


def system_prompt() -> str:
    return prompt_text("review")
