"""A protocol regression for the gate tests: the fetch model with one fencing check dropped.

In Kafka a leader changes the ISR in ZooKeeper by a conditional write on the partition
state's zkVersion, so a leader deposed by a newer epoch cannot shrink the ISR any more
(kmc/model/fetch.py:true_leader). This variant lets any replica that believes it leads
write the ISR: a stale leader shrinks it and the controller elects a replica that misses
acknowledged records. It lives in tests only: it is what the gate must catch.
"""

from __future__ import annotations

from typing import Any

from kmc.model.fetch import Fetch


class UnfencedIsrFetch(Fetch):
    def true_leader(self, s: Any, X: Any, l: int) -> Any:
        return self.leads(s, X, l)  # no zkVersion (leader epoch) check on ISR writes
