"""The native host's campaign requests (PROTOCOL.md "Campaigns"), registered without importing the label store:
the host's cold start stays short, and the store (numpy, SQLite) loads on the first campaign request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TYPES = ("campaign.next", "campaign.submit", "campaign.skip", "campaign.flag", "campaign.review",
         "campaign.adjudicate")


def handlers(error: Callable[[str, str, str | None], Exception]) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Request type -> handler; a label-store error is raised again as ``error(code, message, field)``."""

    def make(rtype: str) -> Callable[[dict[str, Any]], Any]:
        def handle(request: dict[str, Any]) -> Any:
            from ..annotation import campaigns
            from ..annotation.labels import LabelError

            try:
                return campaigns.HANDLERS[rtype](request)
            except LabelError as e:
                raise error(e.code, e.message, e.field) from e
        return handle

    return {rtype: make(rtype) for rtype in TYPES}
