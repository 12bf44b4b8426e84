"""Deliveries: what a chat host really injected into a model call (seed 004). Recall only
prepares cards (`injected: false`); the host reports what it actually sent, per chat window."""

from __future__ import annotations

from chalicelib.domain.models import Delivery, DeliveryRequest
from chalicelib.ports import Services
from chalicelib.usecases.events import validate_refs
from chalicelib.usecases.forgetting import record_use


def record_deliveries(services: Services, space: str, request: DeliveryRequest) -> list[Delivery]:
    refs = validate_refs(request.ids)
    at = request.at or services.clock()
    recorded = services.store.add_deliveries(space, request.window, refs, at)
    record_use(services, space, refs, at)  # real use keeps a memory from fading
    return recorded
