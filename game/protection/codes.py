"""What game protection can find: its codes, each declared once.

A round's findings (``game.vocabulary.FindingCode``) say what one
round got wrong; these say what many rounds show together about a player, a
dealer, a pair of them or a table, so they are a vocabulary of their own.
"""

from __future__ import annotations

from enum import StrEnum


class ProtectionCode(StrEnum):
    SUSPECTED_HOLE_CARDING = "suspected_hole_carding"  # plays as if seeing a dealer card
    SUSPECTED_COLLUSION = "suspected_collusion"  # plays as if seeing the other seats' cards
    SUSPECTED_SWEETHEART_DEALING = "suspected_sweetheart_dealing"  # a dealer's errors favour one player
    PAY_TABLE_MISMATCH = "pay_table_mismatch"  # a table pays another pay table than configured


PROTECTION_CODES: tuple[str, ...] = tuple(code.value for code in ProtectionCode)
