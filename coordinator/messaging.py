"""Send one message to each site and gather what came back, whatever came back.

A reply is content, a sanitised error code, or nothing (the site did not answer in time).
Flower's own error replies carry exception text in ``reason``; only their numeric code is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from flwr.app import Message, RecordDict
from flwr.serverapp import Grid

from shared import wire


@dataclass(frozen=True)
class Reply:
    node_id: int
    content: RecordDict | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.content is not None


def exchange(
    grid: Grid,
    contents: dict[int, RecordDict],
    message_type: str,
    group: str,
    timeout: float,
) -> dict[int, Reply]:
    """Send ``contents[node]`` to every node; return one :class:`Reply` per node."""
    messages = [
        Message(content, dst_node_id=node, message_type=message_type, group_id=group)
        for node, content in contents.items()
    ]
    replies = {node: Reply(node, error="no_reply") for node in contents}
    for message in grid.send_and_receive(messages, timeout=timeout):
        node = message.metadata.src_node_id
        if node not in replies:
            continue
        if message.has_error():
            replies[node] = Reply(node, error=f"flower_error_{message.error.code}")
            continue
        code = wire.error_code(message.content)
        replies[node] = Reply(node, error=code) if code else Reply(node, content=message.content)
    return replies
