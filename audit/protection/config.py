"""Game protection's thresholds, from Django settings (``PROTECTION_*``), with the mathematics' defaults."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from game.protection.conformance import ConformanceSettings
from game.protection.fingerprints import SweetheartSettings
from game.protection.leak import LeakSettings


@dataclass(frozen=True, slots=True)
class ProtectionConfig:
    leak: LeakSettings
    sweetheart: SweetheartSettings
    conformance: ConformanceSettings
    history_days: int  # how far back a dealer's sweetheart test looks (the leak test goes on over the whole history)


def protection_config() -> ProtectionConfig:
    return ProtectionConfig(
        LeakSettings(alpha=float(settings.PROTECTION_LEAK_ALPHA)),
        SweetheartSettings(
            threshold=float(settings.PROTECTION_SWEETHEART_P_VALUE),
            min_favourable=int(settings.PROTECTION_SWEETHEART_MIN_ERRORS),
        ),
        ConformanceSettings(min_observations=int(settings.PROTECTION_PAY_TABLE_MIN_OBSERVATIONS)),
        history_days=int(settings.PROTECTION_HISTORY_DAYS),
    )
