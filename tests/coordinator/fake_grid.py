"""A Grid that calls the ClientApp in-process, one node per site, to test every round."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from flwr.app import Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid
from flwr.supercore.task_identity import TaskIdentity


class InProcessGrid(Grid):
    """Nodes are ``node_configs`` entries; ``stop_at[node] = message_type`` makes that node
    stop (no reply, gone from the node list) when it receives that message type."""

    def __init__(
        self,
        app: ClientApp,
        node_configs: dict[int, dict[str, Any]],
        stop_at: dict[int, str] | None = None,
    ) -> None:
        self.app = app
        self.node_configs = node_configs
        self.stop_at = stop_at or {}
        self.stopped: set[int] = set()
        self.sent: list[Message] = []
        self.replies: list[Message] = []  # every reply a node gave, in order
        self._replies: dict[str, Message] = {}
        # What the real flwr-serverapp process sets before ``main`` runs.
        TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = 1, 1, 1

    def set_run(self, run: Any) -> None:
        self._run = run

    @property
    def run(self) -> Any:
        return getattr(self, "_run", None)

    def create_message(
        self,
        content: RecordDict,
        message_type: str,
        dst_node_id: int,
        group_id: str,
        ttl: float | None = None,
    ) -> Message:
        return Message(
            content, dst_node_id=dst_node_id, message_type=message_type, group_id=group_id
        )

    def get_node_ids(self) -> Iterable[int]:
        return [n for n in self.node_configs if n not in self.stopped]

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        ids = []
        for message in messages:
            message_id = uuid.uuid4().hex
            message.metadata.__dict__["_message_id"] = message_id
            ids.append(message_id)
            self.sent.append(message)
            reply = self.reply_to(message)
            if reply is not None:
                self._replies[message_id] = reply
                self.replies.append(reply)
        return ids

    def reply_to(self, message: Message) -> Message | None:
        """The node's answer through the ClientApp; None from a stopped node."""
        node = message.metadata.dst_node_id
        if self.stop_at.get(node) == message.metadata.message_type:
            self.stopped.add(node)
        if node in self.stopped:
            return None
        return self.app(message, self.context(node))

    def context(self, node: int) -> Context:
        """What a SuperNode gives its ClientApp for one message."""
        return Context(
            run_id=1,
            node_id=node,
            node_config=self.node_configs[node],
            state=RecordDict(),
            run_config={},
        )

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        return [self._replies.pop(i) for i in message_ids if i in self._replies]

    def send_and_receive(
        self, messages: Iterable[Message], *, timeout: float | None = None
    ) -> Iterable[Message]:
        return self.pull_messages(self.push_messages(messages))
