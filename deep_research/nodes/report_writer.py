"""The report written from what the run has, at the turn cap or when the cost budget stops
planning: one call without tools, its findings cut to what the budget can still pay for."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from deep_research.llm import models, spending
from deep_research.llm.prices import price_of
from deep_research.runtime import prompts
from deep_research.text import limits

# Each round halves the findings; a refused call was never sent, so a retry costs nothing.
FIT_ROUNDS = 6


async def write_report(
    model: models.RoleModel, findings: Callable[[int], str], ledger: spending.Ledger, wishes: str
) -> AIMessage:
    """The report writer's reply, written as the reader wishes (`report_form.wishes`); with
    a budget, the findings shrink until the call fits."""
    system = SystemMessage(f"{prompts.render('report_writer')}\n\n{wishes}")
    chars = limits.FINDINGS_CHARS
    for _ in range(FIT_ROUNDS):
        try:
            return await model.ask([system, HumanMessage(findings(chars))], ledger=ledger)
        except spending.BudgetExceeded:
            chars //= 2
    try:
        return await model.ask([system, HumanMessage(findings(chars))], ledger=ledger)
    except spending.BudgetExceeded as stop:
        raise spending.BudgetExceeded(
            f"{stop} Not even the report fits in what is left, so the run stops here: "
            "raise the budget (--max-cost USD, or MAX_COST_USD) and resume the run."
        ) from None


# The findings the report's reserve pays for: a quarter of the most it can get. Keeping back
# the full 60,000 characters (counted at a token a byte, all a bound can assume) left a
# $0.30 budget on gpt-4.1 too little to research; `write_report` halves the findings until
# the call fits what is left, so with a quarter kept back a report is still written.
RESERVED_FINDINGS_CHARS = limits.FINDINGS_CHARS // 4


def report_reserve(model: models.RoleModel, wishes: str) -> int:
    """µUSD kept back at dispatch for the report: its prompt with a quarter of the findings,
    its reply at the completion limit."""
    system = f"{prompts.render('report_writer')}\n\n{wishes}"
    prompt = len(system.encode("utf-8", "surrogatepass")) + RESERVED_FINDINGS_CHARS + 64
    worst = (model.price or price_of(model.spec)).micros(prompt, model.max_tokens or 0)
    return worst or 0
