"""Deliveries: what a chat host really injected into a model call (seed 004). Recall only
prepares cards (`injected: false`); the host reports what it actually sent, per chat window.

A report is all or nothing: every ref must name a memory of the space (an event of any
status, or a stored message), else nothing is recorded and the answer is a 422
`unknown_ref` listing the refs that name nothing. POST …/deliveries, the MCP tool
`report_delivery` and the chat gateway (which reports only cards it recalled) all come here.
"""

from __future__ import annotations

from chalicelib.domain.errors import Unprocessable
from chalicelib.domain.models import Delivery, DeliveryRequest
from chalicelib.domain.refs import EventRef, parse_ref
from chalicelib.ports import Services
from chalicelib.usecases.events import validate_refs
from chalicelib.usecases.forgetting import record_use


def unknown_refs(services: Services, space: str, refs: list[str]) -> list[str]:
    """The refs (well formed) that name no event or message of `space`, in their order."""
    parsed = {ref: parse_ref(ref) for ref in refs}
    event_ids = [p.id for p in parsed.values() if isinstance(p, EventRef)]
    keys = [(p.session, p.seq) for p in parsed.values() if not isinstance(p, EventRef)]
    events = {e.id for e in services.store.load_events(space, event_ids)} if event_ids else set()
    messages = ({(m.session, m.seq) for m in services.store.load_messages(space, keys)}
                if keys else set())
    return [ref for ref, p in parsed.items()
            if (p.id not in events if isinstance(p, EventRef) else tuple(p) not in messages)]


def record_deliveries(services: Services, space: str, request: DeliveryRequest) -> list[Delivery]:
    refs = validate_refs(request.ids)
    unknown = unknown_refs(services, space, refs)
    if unknown:
        raise Unprocessable(
            f"no such memory in space {space!r}: {', '.join(unknown)}; nothing was recorded "
            "(report the recalled_ids of a recall)", code="unknown_ref",
            details=[{"loc": f"ids.{refs.index(ref)}", "msg": "no such memory in this space",
                      "type": "unknown_ref", "ref": ref} for ref in unknown])
    at = request.at or services.clock()
    recorded = services.store.add_deliveries(space, request.window, refs, at)
    record_use(services, space, refs, at)  # real use keeps a memory from fading
    return recorded
