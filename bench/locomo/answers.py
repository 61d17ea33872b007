"""Answer accuracy as peers report it, with a live model only: the model answers
each question from the injected block alone, then judges its answer against the
gold one. Off (no figure) when no model is configured."""

from __future__ import annotations

from collections.abc import Callable

from pegasus.config import Settings
from pegasus.llm import LLM, LLMConfig

ANSWER = (
    "Answer the question in a few words using only the memory below. If the memory "
    "does not say, answer 'unknown'.\n\n{block}\n\nQuestion: {question}"
)
JUDGE = (
    "Question: {question}\nGold answer: {gold}\nGiven answer: {given}\n\n"
    "Is the given answer correct (the same fact; wording and date format may differ)? "
    "Reply with exactly CORRECT or WRONG."
)


def judge(settings: Settings) -> Callable:
    llm = LLM(LLMConfig.from_settings(settings))

    def correct(question, block: str) -> bool:
        given = llm.chat(
            [{"role": "user", "content": ANSWER.format(block=block or "(nothing)",
                                                        question=question.text)}]
        ).content.strip()  # fmt: skip
        verdict = llm.chat(
            [{"role": "user", "content": JUDGE.format(question=question.text,
                                                       gold=question.answer, given=given)}]
        ).content  # fmt: skip
        return verdict.strip().upper().startswith("CORRECT")

    return correct
