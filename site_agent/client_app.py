"""The site's Flower ClientApp: one handler per coordinator message, wired to plain functions.

Every handler answers with content; a failure becomes a sanitised error code (the traceback
stays in the site's own log and never travels).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from flwr.app import Context, Message, RecordDict
from flwr.clientapp import ClientApp

from shared import wire
from shared.library_noise import quiet_libraries
from site_agent.federation import handlers
from site_agent.federation.layout import SiteFailure, SiteLayout

log = logging.getLogger(__name__)
quiet_libraries()  # the Flower runtime starts this process, not the CLI

app = ClientApp()


def answer(message: Message, context: Context, work: Callable[[SiteLayout], RecordDict]) -> Message:
    """Run ``work`` for this site; reply with its content or with an error code only."""
    try:
        layout = SiteLayout.from_node_config(context.node_config)
        content = work(layout)
    except SiteFailure as failure:
        content = wire.error_content(failure.code)
    except Exception:
        log.exception("site handler failed")  # stays at the site
        content = wire.error_content("internal_error")
    return Message(content, reply_to=message)


@app.query("roll_call")
def roll_call(message: Message, context: Context) -> Message:
    return answer(message, context, handlers.roll_call)


@app.query("collect")
def collect(message: Message, context: Context) -> Message:
    return answer(message, context, lambda layout: handlers.collect(layout, message.content))


@app.train("fedavg")
def fedavg(message: Message, context: Context) -> Message:
    return answer(message, context, lambda layout: handlers.fedavg_train(layout, message.content))


@app.evaluate("cross_site")
def cross_site(message: Message, context: Context) -> Message:
    return answer(
        message,
        context,
        lambda layout: handlers.cross_site(layout, message.content, message.metadata.run_id),
    )
