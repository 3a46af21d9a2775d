"""A round's status as Django's choices, once: the stored column and the wire's answer name the
same statuses (the engine's vocabulary, ROUND_RECORD.md "Response") with the same labels."""

from __future__ import annotations

from django.db import models

from game.vocabulary import RoundStatus

RoundStatusChoices = models.TextChoices("Status", [(status.name, status.value) for status in RoundStatus])
