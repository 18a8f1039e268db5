"""Everything that lives as long as the process, in one place, and why each is safe here.

No cap or counter lives here: searches, turns and todo updates are counted in checkpointed
graph state, so a resume in another process, `max_concurrency=1` and concurrent threads
see the same numbers. What remains is either a cost saver (models, caches) whose loss only
costs time, or a marker that is only ever compared with itself in this process.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from collections import OrderedDict

# Stamped on each search reservation (see `search/budget.py`). A reservation stamped by
# another process was made by one that died (or stopped) before its search step ended, so
# its searches may have been sent: they stay counted and are never sent again unreserved.
PROCESS_ID = uuid.uuid4().hex

# Reservations whose search step started in this process. A step that runs again for the
# same reservation here (a cancelled run, resumed in the same notebook) would otherwise
# send searches the state already counts. Ids are random; the oldest are forgotten first.
_started: OrderedDict[str, None] = OrderedDict()
MAX_STARTED = 10_000


def start_reservation(reservation_id: str) -> bool:
    """Mark a reservation's search step as started; False when it had already started."""
    if reservation_id in _started:
        return False
    _started[reservation_id] = None
    while len(_started) > MAX_STARTED:
        _started.popitem(last=False)
    return True


# How many researchers of one orchestrator turn run at once (`max_researchers_per_turn`).
# Keyed by the turn's dispatch id; an entry goes when its last researcher lets go. Losing
# one (a new process after a crash) only changes how many run together, never a count.
_turn_slots: weakref.WeakValueDictionary[str, asyncio.Semaphore] = weakref.WeakValueDictionary()


def turn_slots(dispatch_id: str, size: int) -> asyncio.Semaphore:
    """The semaphore shared by the research tasks of one orchestrator turn."""
    slots = _turn_slots.get(dispatch_id)
    if slots is None:
        slots = asyncio.Semaphore(size)
        _turn_slots[dispatch_id] = slots
    return slots


# Also process-wide, each beside the code that uses it:
# - the relevance model (`search/relevance.py`): ~90 MB of weights mapped once, read-only
#   afterwards, by a daemon thread started when a run starts (`warm_up`), or by the first
#   search; its cache of recent vectors (`search/minilm.py`) is shared the same way;
# - the page extraction threads (`search/fetch.py`): a pool of its own, made on first use;
# - the per-thread search and page cache (`search/cache.py`): a hit saves a search or a
#   fetch and is never counted as one; a process that lost it searches again and counts it;
# - one semaphore per search provider (`search/chain.py`): how many searches run at once.
